// SPDX-License-Identifier: MIT
/*
 * test_sandbox.c - common/sandbox.h's seccomp role for an HTTP process
 * (sandbox_http_calls, sandbox_http_rules), entered for real in a child
 * per case (a filter cannot be left): what the network processes of the
 * verifier and the agent may still do, what is refused with an errno,
 * and what ends the process. Landlock and the change of user are
 * t0510's and t0535's (they need root and a daemon); this file needs
 * neither.
 */
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox.h"

static const struct sandbox_role role = {
	"test", sandbox_http_calls, NULL, sandbox_http_rules, SANDBOX_HTTP_NRULES
};

/* socket(@domain, SOCK_STREAM, 0) as a raw system call: -errno, or 0 (a socket made) */
static long raw_socket(uint64_t domain)
{
	long fd = syscall(SYS_socket, domain, (long)SOCK_STREAM, 0L);

	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

/*
 * In a child under the role, @what's result as the exit code (its errno,
 * 0 for success); Return: that code, or 256 + the signal that ended it.
 */
static int in_sandbox(long (*what)(uint64_t), uint64_t arg)
{
	struct sandbox sb = { .name = "test", .seccomp = &role };
	char msg[512];
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (sandbox_enter(&sb, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "%s\n", msg);
			_exit(100);
		}
		_exit((int)-what(arg));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 256 + WTERMSIG(st);
}

static void http_role_allows_inet_sockets(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(raw_socket, AF_INET), 0);
	assert_int_equal(in_sandbox(raw_socket, AF_INET6), 0);
}

static void http_role_refuses_a_unix_socket(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(raw_socket, AF_UNIX), EACCES);
}

/* the kernel reads an int: high bits set make AF_UNIX all the same */
static void http_role_refuses_a_unix_socket_with_high_bits(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(raw_socket, (1ULL << 32) | AF_UNIX), EACCES);
}

static void http_role_kills_at_another_family(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(raw_socket, AF_PACKET), 256 + SIGSYS);
}

static long raw_unlisted(uint64_t unused)
{
	(void)unused;
	return syscall(SYS_ptrace, 0L, 0L, 0L, 0L) < 0 ? -errno : 0;	/* PTRACE_TRACEME */
}

static long raw_io_uring(uint64_t unused)
{
	(void)unused;
	return syscall(SYS_io_uring_setup, 1L, 0L) < 0 ? -errno : 0;
}

static void http_role_refuses_io_uring_and_kills_the_unlisted(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(raw_io_uring, 0), ENOSYS);
	/* ptrace: a sanitizer build allows it for its reports */
	if (!sandbox_sanitizer_calls[0])
		assert_int_equal(in_sandbox(raw_unlisted, 0), 256 + SIGSYS);
}

static long raw_prctl(uint64_t option)
{
	return syscall(SYS_prctl, (long)option, (long)"test-name", 0L, 0L, 0L) < 0 ? -errno : 0;
}

/* libmicrohttpd names its threads (PR_SET_NAME); no other prctl is the role's */
static void http_role_allows_a_thread_name_only(void **state)
{
	(void)state;
	assert_int_equal(in_sandbox(raw_prctl, PR_SET_NAME), 0);
	if (!sandbox_sanitizer_calls[0])
		assert_int_equal(in_sandbox(raw_prctl, PR_SET_DUMPABLE), 256 + SIGSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(http_role_allows_inet_sockets),
		cmocka_unit_test(http_role_refuses_a_unix_socket),
		cmocka_unit_test(http_role_refuses_a_unix_socket_with_high_bits),
		cmocka_unit_test(http_role_kills_at_another_family),
		cmocka_unit_test(http_role_refuses_io_uring_and_kills_the_unlisted),
		cmocka_unit_test(http_role_allows_a_thread_name_only),
	};

	return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
