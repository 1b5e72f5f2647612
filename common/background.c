// SPDX-License-Identifier: MIT
/*
 * background.c - fork for --background, and release the parent when the
 * daemon is ready (background.h). The only state is the pipe's write end,
 * which the child holds until it is ready, and which closes by itself if
 * the child dies first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "background.h"

static int ready_fd = -1;

int vg_background_start(void)
{
	int p[2], st, nul;
	pid_t pid;
	char c;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid > 0) {
		close(p[1]);
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1 && c == 'R')
			_exit(0);
		/*
		 * Every copy of the write end closed without "ready": the
		 * daemon, or the process of it that was to say so, stopped.
		 * Its status is ours when it has one (a refused setting: 2).
		 */
		for (int i = 0; i < 200; i++) {
			if (waitpid(pid, &st, WNOHANG) == pid)
				_exit(WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 2);
			usleep(10000);
		}
		_exit(2);
	}
	close(p[0]);
	/* a forked child is never a group leader: setsid cannot fail */
	(void)setsid();
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul >= 0) {
		(void)dup2(nul, STDIN_FILENO);
		if (nul != STDIN_FILENO)
			close(nul);
	}
	ready_fd = p[1];
	return 0;
}

void vg_background_drop(void)
{
	if (ready_fd >= 0)
		close(ready_fd);
	ready_fd = -1;
}

void vg_background_ready(void)
{
	if (ready_fd < 0)
		return;
	(void)!write(ready_fd, "R", 1);
	close(ready_fd);
	ready_fd = -1;
}
