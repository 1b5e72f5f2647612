// SPDX-License-Identifier: MIT
/*
 * enosys SYSCALL[,SYSCALL...] CMD [ARG...] - run CMD with those system
 * calls answered ENOSYS by a seccomp filter, as systemd's
 * RestrictSUIDSGID= answers openat2 (it cannot see the mode inside
 * struct open_how). For tests of a fallback: t0715 runs vigild so.
 * Exit: CMD's (exec), 2 usage, 127 the filter or exec failed.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	char *list, *save = NULL;

	if (argc < 3) {
		fputs("usage: enosys SYSCALL[,SYSCALL...] CMD [ARG...]\n", stderr);
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	list = strdup(argv[1]);
	if (!ctx || !list)
		return 127;
	for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		int nr = seccomp_syscall_resolve_name(s);

		if (nr == __NR_SCMP_ERROR || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) < 0) {
			fprintf(stderr, "enosys: %s: not a system call here\n", s);
			return 2;
		}
	}
	free(list);
	if (seccomp_load(ctx) < 0) {
		fputs("enosys: seccomp_load failed\n", stderr);
		return 127;
	}
	seccomp_release(ctx);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "enosys: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
