/* SPDX-License-Identifier: MIT */
/*
 * proc.h - a daemon's processes, declared in one table per program (as
 * OpenBSD relayd's procs[]) and started by one helper: each entry says
 * what the process is called, how it talks to its parent (a socketpair
 * of the entry's type, speaking the program's ipc.h protocol), what it
 * keeps of its parent, how it ends, and the role of the sandbox it
 * enters (sandbox.h: its system calls; its paths are the program's to
 * fill in when it knows them). The table is the program's
 * (verifier/privsep.h, agent/agent.h); this file knows no program.
 */
#ifndef VIGIL_COMMON_PROC_H
#define VIGIL_COMMON_PROC_H

#include <stdbool.h>
#include <sys/types.h>

struct sandbox_role;

struct proc {
	const char *name;	/* its comm (PR_SET_NAME), as ps shows it; NULL: the parent's */
	int sock;		/* SOCK_STREAM or SOCK_SEQPACKET: the pair to its parent */
	int buf;		/* the pair's buffers, bytes (0: the system's) */
	int deathsig;		/* what it gets when its parent dies (0: nothing) */
	bool close_fds;		/* it keeps nothing of its parent's but stdio and its socket */
	bool ignore_signals;	/* INT, TERM, HUP, PIPE ignored: its parent ends it by closing */
	const struct sandbox_role *role;	/* the system calls of the sandbox it enters once set
					 * up (sandbox.h); NULL: none, and the table says why */
};

/*
 * proc_start - the socketpair and the fork of @p, stdio flushed first.
 * In the parent: Return: the child's pid, *@fd our end. In the child:
 * Return: 0, *@fd its end, the child set up as @p says (name, death
 * signal, descriptors, signals); it enters its sandbox itself, when it
 * has opened what it needs. Return: -errno (socketpair, fork; nothing
 * left open).
 */
pid_t proc_start(const struct proc *p, int *fd);

#endif
