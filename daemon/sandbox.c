// SPDX-License-Identifier: MIT
/*
 * sandbox.c - the appraiser's confinement, on common/sandbox.h's one
 * builder, entered once, after its keyring files are read, its HMAC key
 * received and OpenSSL initialised, before it reads a byte of any file it
 * is sent:
 *
 *   1. the unprivileged appraiser user (every id the user's, no
 *      capability left, setuid(0) refused), while it is one thread;
 *   2. PR_SET_NO_NEW_PRIVS;
 *   3. Landlock with every right the running kernel knows and no rule
 *      allowing any: no path, no TCP port, no abstract unix socket or
 *      signal outside its domain. The appraiser works only on the
 *      descriptors it receives. A kernel without Landlock: the other
 *      layers stay;
 *   4. the role below: a libseccomp allow-list whose default kills the
 *      process. open and openat fail with EACCES instead (libblkid's
 *      fallback for a filesystem UUID tries to open the device; Landlock
 *      refuses it anyway); reading or fcntl of the fanotify group's copy
 *      kills (vigild.h). A sanitizer build adds its runtime's calls
 *      (common/sandbox.c), the refusals kept.
 *
 * Any failure is fatal: an appraiser that is not confined does not start.
 * Nothing here is used by the monitor.
 */
#include <errno.h>

#include "sandbox.h"
#include "vigild.h"

/*
 * What an appraiser calls after confinement: its socket, the descriptors
 * it is sent, memory, OpenSSL (getrandom, futex), and a report written on
 * the way out (sigaltstack, prctl, getpid, gettid, tgkill, sched_yield,
 * readlink, getrlimit); the hasher advises sequential reads (fadvise64).
 */
static const char *const appraiser_calls[] = {
	"write", "writev", "lseek", "fadvise64", "close", "recvmsg",
	"sendmsg", "fstat", "newfstatat", "statx", "fstatfs", "fgetxattr", "flistxattr", "ioctl",
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise", "futex", "getrandom",
	"clock_gettime", "clock_getres", "gettimeofday", "nanosleep", "clock_nanosleep", "exit",
	"exit_group", "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack", "getpid",
	"gettid", "tgkill", "sched_yield", "sched_getaffinity", "prctl", "getrlimit", "prlimit64",
	"readlink", "readlinkat", "uname", "restart_syscall", "rseq", "getuid", "geteuid",
	"getgid", "getegid", "getppid", "poll", "ppoll", "statfs", "sysinfo", "getcpu",
	NULL
};

#define BUT_GROUP(call) { call, 0, 0, VD_APPRAISER_GROUP_FD, 0, true }
#define REFUSED(call) { call, EACCES, -1, 0, 0, false }

static const struct sandbox_rule appraiser_rules[] = {
	/*
	 * Allowed on every descriptor but the fanotify group's copy: reading
	 * it would take events (and their descriptors, opened by root) from
	 * the monitor, and fcntl could give it a second number (F_DUPFD) that
	 * escapes this rule. The appraiser only writes its allows to it.
	 */
	BUT_GROUP("read"), BUT_GROUP("readv"), BUT_GROUP("pread64"), BUT_GROUP("preadv"),
	BUT_GROUP("fcntl"),
	REFUSED("open"), REFUSED("openat"), REFUSED("openat2"), REFUSED("access"),
	REFUSED("faccessat"), REFUSED("faccessat2"),
};

static const struct sandbox_role appraiser_role = {
	.name = "appraiser",
	.allow = appraiser_calls,
	.rules = appraiser_rules,
	.nrules = sizeof(appraiser_rules) / sizeof(appraiser_rules[0]),
};

int vd_sandbox_enter(uid_t uid, gid_t gid, char *msg, size_t cap)
{
	const struct sandbox sb = {
		.name = "vigild appraiser",
		.become = true,
		.uid = uid,
		.gid = gid,
		.single_thread = true,
		.landlock = true,
		.landlock_optional = true,
		.seccomp = &appraiser_role,
#ifdef VIGILD_TEST_HOOKS
		/* vigild-test: the Landlock state, for tests/cli/t0707 (its role refuses open) */
		.probe = sandbox_test_probe,
#endif
	};
	int r = sandbox_enter(&sb, msg, cap);

	return r < 0 ? r : 0;
}
