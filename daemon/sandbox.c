// SPDX-License-Identifier: MIT
/*
 * sandbox.c - the appraiser's confinement, entered once, after its keyring
 * files are read, its HMAC key received and OpenSSL initialised, before
 * it reads a byte of any file it is sent:
 *
 *   1. the unprivileged appraiser user: setgroups, setresgid, setresuid,
 *      then checked (every id is the user's, no capability is left,
 *      setuid(0) fails);
 *   2. PR_SET_NO_NEW_PRIVS;
 *   3. Landlock with every right the running kernel knows (ABI 1 to 6:
 *      filesystem, TCP bind/connect, abstract unix sockets and signals
 *      outside the domain) and no rule allowing any: the appraiser works
 *      only on the descriptors it receives;
 *   4. a seccomp allow-list whose default is to kill the process. open
 *      and openat fail with EACCES instead (libblkid's fallback for a
 *      filesystem UUID tries to open the device; Landlock refuses it
 *      anyway). The list includes what the ASan/UBSan runtime calls to
 *      write a report (the symbolizer is not started: it would fork).
 *
 * Any failure is fatal: an appraiser that is not confined does not start.
 * Nothing here is used by the monitor.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "vigild.h"

/* Landlock ABI constants newer than Debian 12's <linux/landlock.h> (ABI 2) */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_FS_ABI1 ((1ULL << 13) - 1)		/* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)		/* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)		/* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)		/* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)		/* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)		/* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)		/* ABI 6 */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4 */
	uint64_t scoped;		/* ABI 6 */
};

int vd_sandbox_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

static int enter_landlock(void)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = LL_FS_ABI1 };
	size_t size = sizeof(attr.handled_access_fs);
	int abi = vd_sandbox_landlock_abi(), fd;

	if (abi == -ENOSYS || abi == -EOPNOTSUPP)
		return -EOPNOTSUPP;	/* a kernel without Landlock: the other layers stay */
	if (abi < 1)
		return abi < 0 ? abi : -EINVAL;
	if (abi >= 2)
		attr.handled_access_fs |= LL_FS_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= LL_FS_TRUNCATE;
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 5)
		attr.handled_access_fs |= LL_FS_IOCTL_DEV;
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_landlock_restrict_self, fd, 0) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	close(fd);
	return 0;
}

static int become(uid_t uid, gid_t gid)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct cap[2];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (uid == 0)
		return -EPERM;
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
		return -EPERM;
	if (getgroups(0, NULL) != 0 || setuid(0) == 0)
		return -EPERM;
	if (syscall(SYS_capget, &hdr, cap) < 0)
		return -errno;
	if (cap[0].effective | cap[0].permitted | cap[0].inheritable | cap[1].effective |
	    cap[1].permitted | cap[1].inheritable)
		return -EPERM;
	return 0;
}

/*
 * What an appraiser calls after confinement: its socket, the descriptors
 * it is sent, memory, OpenSSL (getrandom, futex), and the sanitizer
 * runtime writing a report and dying (sigaltstack, prctl, getpid, gettid,
 * tgkill, sched_yield, readlink, getrlimit, mmap/munmap/madvise); the
 * hasher advises sequential reads (fadvise64).
 */
static const char *const allowed[] = {
	"write", "writev", "lseek", "fadvise64", "close", "recvmsg",
	"sendmsg", "fstat", "newfstatat", "statx", "fstatfs", "fgetxattr", "flistxattr", "ioctl",
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise", "futex", "getrandom",
	"clock_gettime", "clock_getres", "gettimeofday", "nanosleep", "clock_nanosleep", "exit",
	"exit_group", "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack", "getpid",
	"gettid", "tgkill", "sched_yield", "sched_getaffinity", "prctl", "getrlimit", "prlimit64",
	"readlink", "readlinkat", "uname", "restart_syscall", "rseq", "getuid", "geteuid",
	"getgid", "getegid", "getppid", "poll", "ppoll", "statfs", "sysinfo", "getcpu",
};

/*
 * Allowed on every descriptor but the fanotify group's copy: reading it
 * would take events (and their descriptors, opened by root) from the
 * monitor, and fcntl could give it a second number (F_DUPFD) that escapes
 * this rule. The appraiser only writes its allows to it (vigild.h).
 */
static const char *const allowed_but_group[] = { "read", "readv", "pread64", "preadv", "fcntl" };

static const char *const refused[] = { "open", "openat", "openat2", "access", "faccessat",
				       "faccessat2" };

static int enter_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr != __NR_SCMP_ERROR)	/* not every architecture has every call */
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	for (size_t i = 0; r == 0 && i < sizeof(allowed_but_group) / sizeof(allowed_but_group[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed_but_group[i]);

		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					     SCMP_A0(SCMP_CMP_NE, VD_APPRAISER_GROUP_FD));
	}
	for (size_t i = 0; r == 0 && i < sizeof(refused) / sizeof(refused[0]); i++) {
		int nr = seccomp_syscall_resolve_name(refused[i]);

		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 0);
	}
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int vd_sandbox_enter(uid_t uid, gid_t gid, char *msg, size_t cap)
{
	int r = become(uid, gid);

	if (r < 0) {
		snprintf(msg, cap, "cannot become uid %u gid %u: %s", (unsigned int)uid,
			 (unsigned int)gid, strerror(-r));
		return r;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = -errno;
		snprintf(msg, cap, "PR_SET_NO_NEW_PRIVS: %s", strerror(-r));
		return r;
	}
	r = enter_landlock();
	if (r < 0 && r != -EOPNOTSUPP) {
		snprintf(msg, cap, "Landlock: %s%s", strerror(-r), r == -EPERM ?
			 " (the landlock_* system calls are refused: a container's system call filter may "
			 "forbid them, e.g. systemd-nspawn's: --system-call-filter='landlock_create_ruleset "
			 "landlock_add_rule landlock_restrict_self')" : "");
		return r;
	}
	r = enter_seccomp();
	if (r < 0) {
		snprintf(msg, cap, "seccomp: %s%s", strerror(-r), r == -EPERM || r == -EACCES ?
			 " (installing a filter is refused: a container's system call filter may forbid "
			 "seccomp(2), e.g. systemd-nspawn's: --system-call-filter=seccomp)" : "");
		return r;
	}
	return 0;
}
