/* SPDX-License-Identifier: MIT */
/*
 * holder_internal.h - the holder's state, shared by its loop (holder.c)
 * and its hand-over across a service restart (handoff.c); hold.h says
 * how the holder works.
 */
#ifndef VIGILD_HOLDER_INTERNAL_H
#define VIGILD_HOLDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HOLD_BURST 20		/* monitors started after a death within HOLD_INTERVAL... */
#define HOLD_BASE_MAX 65536	/* the monitor's descriptors: below; the holder's events: above */
#define HOLD_PARK_MAX 200000	/* waiting events kept; beyond, denied */
#define HOLD_OWN 32		/* numbers just below the base, left free for the holder's own descriptors */

struct parked {
	int fd;
	int32_t pid;
	uint64_t mask;
};

struct holder {
	char **argv;
	int chan, chan_child;	/* SOCK_SEQPACKET: the monitor's channel (ours, its end) */
	int note, note_child;	/* SOCK_DGRAM: the monitor's sd_notify messages */
	int sigfd;
	int group;		/* the monitor's permission group: -1 until it gives it */
	int stats;		/* the monitors' counters (a memfd, hold.h); -1: none */
	int nul;		/* /dev/null: what fills the table below the base */
	bool spare[HOLD_OWN];	/* the top HOLD_OWN numbers below the base: a placeholder there, free for our own */
	bool fd_error;
	int base;		/* the monitor's RLIMIT_NOFILE; our events' descriptors are above */
	pid_t self, monitor;	/* monitor: 0 while none runs */
	bool monitor_reads;	/* it took the group (TAKE): we do not read it */
	bool ready, ever_ready;	/* this monitor said READY=1; one did */
	bool stopping;
	bool renewing;		/* SIGUSR1: the monitor is stopped and started again from the binary's path */
	const char *handoff;	/* --handoff: the socket a restart hands the group through */
	bool handing;		/* the service restarts: the monitor drains, then we bridge */
	char exe[4096];		/* that path (our own at start); "" : /proc/self/exe */
	double beat, watchdog;	/* its last WATCHDOG=1; the service manager's period (0: none) */
	double next_ping;
	double starts[HOLD_BURST];
	size_t nstarts;
	struct parked *pk;
	size_t npk, cap;
	bool handed;		/* the parked events are with the monitor, until its DONE */
	uint64_t restarts, denied, parked, allowed;
	char cgroup[512];	/* our own, when it is a service's (else empty) */
};

/* ---- hold_group.c ---- */
/* fill the descriptor table below the monitor's limit (hold.h). Return: 0, -EMFILE (said), -errno */
int vd_holder_fill(struct holder *h);
/* whether @s ends with @tail */
bool vd_holder_ends_with(const char *s, const char *tail);
/* the cgroup of @pid (cgroup v2: the line "0::PATH"), or "" */
void vd_holder_cgroup_of(pid_t pid, char *out, size_t n);
/* @fd (a descriptor of our own) moved onto a placeholder below the base; -1 when none is left */
int vd_holder_own_fd(struct holder *h, int fd);
/* the end of a descriptor of ours: a placeholder again where it was below the base */
void vd_holder_drop_fd(struct holder *h, int fd);
/* no monitor reads the group: we do (hold.h, step 3) */
void vd_holder_read_group(struct holder *h);
/* ---- handoff.c ---- */
/* the service restarts: fork the bridge, end; the bridge hands the group on (hold.h). Never returns */
void vd_holder_bridge(struct holder *h) __attribute__((noreturn));
/* at our start: the group from the bridge before, if one waits. Return: 1 taken, 0 none waits, -errno */
int vd_holder_take_over(struct holder *h);

#endif
