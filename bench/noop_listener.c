// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * bench/noop_listener.c - the floor for a fanotify enforcer: a single
 * thread that answers every OPEN_PERM / OPEN_EXEC_PERM event on the
 * filesystem of PATH with FAN_ALLOW, without looking at it.
 *   noop_listener PATH        (prints "ready" when the mark is set)
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[8192] __attribute__((aligned(8)));
	int fd;

	if (argc != 2)
		return 2;
	fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				    FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM, AT_FDCWD, argv[1]) < 0) {
		perror("fanotify");
		return 2;
	}
	fprintf(stderr, "ready\n");
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		struct fanotify_event_metadata *m = (void *)buf;

		if (n <= 0)
			return 0;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			struct fanotify_response r = { .fd = m->fd, .response = FAN_ALLOW };

			if (m->fd < 0)
				continue;
			if (write(fd, &r, sizeof(r)) < 0)
				return 1;
			close(m->fd);
		}
	}
}
