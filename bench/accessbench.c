// SPDX-License-Identifier: MIT
/*
 * bench/accessbench.c - per-operation latency of the accesses an enforcer
 * sees, timed with clock_gettime around each one:
 *   accessbench open FILE N          open + read 4 KiB + close, N times
 *   accessbench opendistinct DIR N   the same on DIR/f0 .. DIR/f(N-1), once each
 *   accessbench exec BINARY N        vfork + execve + waitpid, N times
 *   accessbench execdistinct DIR N   DIR/x0 .. DIR/x(N-1), once each
 * Prints "median_us p99_us".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static int do_open(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int do_exec(const char *path)
{
	char *argv[] = { (char *)path, NULL };
	int st;
	pid_t p = vfork();

	if (p == 0) {
		execv(path, argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc == 4 ? atoi(argv[3]) : 0, failed = 0;
	double *t;
	char path[4096];

	if (n < 1) {
		fprintf(stderr, "usage: accessbench open|opendistinct|exec|execdistinct PATH N\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		const char *p = argv[2];
		double t0;
		int r;

		if (strcmp(argv[1], "opendistinct") == 0) {
			snprintf(path, sizeof(path), "%s/f%d", argv[2], i);
			p = path;
		} else if (strcmp(argv[1], "execdistinct") == 0) {
			snprintf(path, sizeof(path), "%s/x%d", argv[2], i);
			p = path;
		}
		t0 = now_us();
		r = strncmp(argv[1], "open", 4) == 0 ? do_open(p) : do_exec(p);
		t[i] = now_us() - t0;
		if (r < 0)
			failed++;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%.1f %.1f%s\n", t[n / 2], t[(n * 99) / 100], failed ? " FAILED" : "");
	return failed ? 1 : 0;
}
