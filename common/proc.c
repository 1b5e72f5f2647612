// SPDX-License-Identifier: MIT
/*
 * proc.c - proc.h's one way to start a process of a daemon: a socketpair
 * (ipc.h), a fork, and in the child what its table entry says.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "ipc.h"
#include "proc.h"

pid_t proc_start(const struct proc *p, int *fd)
{
	pid_t parent = getpid(), pid;
	int sv[2], r;

	r = ipc_socketpair(p->sock, p->buf, sv);
	if (r < 0)
		return r;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid > 0) {
		close(sv[1]);
		*fd = sv[0];
		return pid;
	}
	close(sv[0]);
	*fd = sv[1];
	if (p->name)
		prctl(PR_SET_NAME, p->name);
	if (p->deathsig) {
		prctl(PR_SET_PDEATHSIG, p->deathsig);
		if (getppid() != parent)
			_exit(0);	/* the parent died before the signal was armed */
	}
	if (p->close_fds) {
		/* nothing of the parent's but stdio and our socket */
		close_range(3, (unsigned int)*fd - 1, 0);
		close_range((unsigned int)*fd + 1, ~0u, 0);
	}
	if (p->ignore_signals) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
	}
	return 0;
}
