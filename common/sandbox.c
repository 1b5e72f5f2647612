// SPDX-License-Identifier: MIT
/*
 * sandbox.c - sandbox.h's four steps: become, no new privileges,
 * Landlock, seccomp. Debian 12's <linux/landlock.h> stops at ABI 2: the
 * later constants and the ruleset attribute's later fields are defined
 * here. It reads nothing but /proc/self/task (the thread count) and
 * /proc/self/exe (our own executable's name).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <limits.h>
#include <linux/capability.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "log.h"
#include "sandbox.h"

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_ABI1 ((1ULL << 13) - 1)		/* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)		/* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)		/* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)		/* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)		/* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)		/* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)		/* ABI 6 */

#define FS_READ (LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE)

struct ll_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4 */
	uint64_t scoped;		/* ABI 6 */
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port {
	uint64_t allowed_access;
	uint64_t port;
};

#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SANDBOX_SANITIZED 1
#endif
#endif
#ifndef SANDBOX_SANITIZED
#define SANDBOX_SANITIZED 0
#endif

const char *const sandbox_sanitizer_calls[] = {
#if SANDBOX_SANITIZED
	/* the report: our maps, our executable, the threads; the leak checker stops the world */
	"readlink", "readlinkat", "getrlimit", "prlimit64", "sigaltstack", "sched_yield",
	"ptrace", "clone", "clone3", "wait4", "waitid", "prctl", "getppid", "getdents64", "getdents",
	"openat", "open", "tgkill", "kill", "getpid", "gettid",
#endif
	NULL
};

const char *const sandbox_system_dirs[] = {
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt",
	"/proc", "/sys", "/run", NULL
};

const char *const sandbox_http_calls[] = {
	/* files: Landlock says which */
	"read", "write", "readv", "writev", "pread64", "lseek", "close", "openat", "newfstatat",
	"fstat", "statx", "fstatfs", "statfs", "readlink", "readlinkat", "getdents64", "access",
	"faccessat", "faccessat2", "fcntl", "dup", "dup3", "ioctl", "getcwd",
	/* memory, threads, time */
	"mmap", "munmap", "mremap", "mprotect", "madvise", "brk", "futex", "set_robust_list",
	"rseq", "sched_getaffinity", "sched_yield", "clock_gettime", "clock_getres",
	"gettimeofday", "nanosleep", "clock_nanosleep", "getrandom", "restart_syscall",
	/* signals, ids, limits, the end */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sigaltstack",
	"tgkill", "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid",
	"uname", "sysinfo", "getrlimit", "prlimit64", "exit", "exit_group",
	/* HTTP served and asked for (libmicrohttpd, libcurl, the resolver) */
	"poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "eventfd2", "pipe2", "socketpair", "bind", "listen", "accept",
	"accept4", "connect", "getsockname", "getpeername", "setsockopt", "getsockopt",
	"shutdown", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	NULL
};

const struct sandbox_rule sandbox_http_rules[SANDBOX_HTTP_NRULES] = {
	{ "socket", EACCES, 0, AF_UNIX, 0xffffffff, false },
	{ "socket", 0, 0, AF_INET, 0xffffffff, false },
	{ "socket", 0, 0, AF_INET6, 0xffffffff, false },
	{ "socket", 0, 0, AF_NETLINK, 0xffffffff, false },
	{ "io_uring_setup", ENOSYS, -1, 0, 0, false },
	{ "clone3", ENOSYS, -1, 0, 0, false },
	{ "clone", 0, 0, CLONE_THREAD, CLONE_THREAD, false },
	/* a thread's own name (libmicrohttpd's "MHD-worker"), nothing else of prctl */
	{ "prctl", 0, 0, PR_SET_NAME, 0xffffffff, false },
	{ "prctl", 0, 0, PR_GET_NAME, 0xffffffff, false },
};

int sandbox_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

/* ---- 1. become ---- */

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

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- 3. Landlock ---- */

/* Return: 0 (also when @path does not exist: nothing to allow), -errno */
static int allow_path(int rs, const char *path, uint64_t rights, uint64_t handled)
{
	struct ll_path_beneath pb = { 0 };
	int fd = open(path, O_PATH | O_CLOEXEC), r = 0;

	/*
	 * nothing there, or nothing this process may reach (a directory on the
	 * way it cannot search: its own executable below a 0700 directory once
	 * it is nobody): no rule, the access is refused without one
	 */
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -errno;
	pb.parent_fd = fd;
	pb.allowed_access = rights & handled;
	if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
		r = -errno;
		if (r == -EINVAL) {	/* a file, not a directory: file rights only */
			pb.allowed_access &= LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_EXECUTE |
					     LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
			r = syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0 ? -errno : 0;
		}
	}
	close(fd);
	return r;
}

static int allow_ports(int rs, const uint16_t *ports, uint64_t right)
{
	for (size_t i = 0; ports && ports[i]; i++) {
		struct ll_net_port np = { .allowed_access = right, .port = ports[i] };

		if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0) < 0)
			return -errno;
	}
	return 0;
}

/* is @dir (resolved) beneath @root (resolved here)? */
static bool beneath(const char *dir, const char *root)
{
	char r[PATH_MAX];
	size_t n;

	if (!dir || !dir[0] || !realpath(root, r))
		return false;
	n = strlen(r);
	return strncmp(dir, r, n) == 0 && (dir[n] == '/' || dir[n] == 0 || n == 1);
}

static int landlock_rules(const struct sandbox *sb, int rs, const struct ll_attr *a)
{
	char except[PATH_MAX] = "", self[PATH_MAX];
	ssize_t sl;
	int r = 0;

	if (sb->except && !realpath(sb->except, except))
		except[0] = 0;
	for (size_t i = 0; sb->read_dirs && sb->read_dirs[i] && !r; i++)
		if (!beneath(except, sb->read_dirs[i]))
			r = allow_path(rs, sb->read_dirs[i], FS_READ, a->handled_access_fs);
	if (!r && sb->dev && !beneath(except, "/dev"))
		r = allow_path(rs, "/dev", FS_READ | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV,
			       a->handled_access_fs);
	if (!r && sb->self_exe && (sl = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[sl] = 0;
		r = allow_path(rs, self, LL_FS_READ_FILE, a->handled_access_fs);
	}
	for (size_t i = 0; sb->read_files && sb->read_files[i] && !r; i++)
		r = allow_path(rs, sb->read_files[i], FS_READ, a->handled_access_fs);
	if (!r && a->handled_access_net) {
		r = allow_ports(rs, sb->bind_ports, LL_NET_BIND_TCP);
		if (!r)
			r = allow_ports(rs, sb->connect_ports, LL_NET_CONNECT_TCP);
	}
	return r;
}

/* Return: 0, 1 (no Landlock), -errno */
static int enter_landlock(const struct sandbox *sb)
{
	struct ll_attr a = { .handled_access_fs = LL_FS_ABI1 };
	size_t size = sizeof(a.handled_access_fs);
	int abi = sandbox_landlock_abi(), rs, r;

	if (abi == -ENOSYS || abi == -EOPNOTSUPP)
		return 1;
	if (abi < 1)
		return abi < 0 ? abi : -EINVAL;
	if (abi >= 2)
		a.handled_access_fs |= LL_FS_REFER;
	if (abi >= 3)
		a.handled_access_fs |= LL_FS_TRUNCATE;
	if (abi >= 4 && !sb->net_any) {
		a.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct ll_attr, scoped);
	}
	if (abi >= 5)
		a.handled_access_fs |= LL_FS_IOCTL_DEV;
	if (abi >= 6) {
		a.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(a);
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
	if (rs < 0)
		return -errno;
	r = landlock_rules(sb, rs, &a);
	if (!r && syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		r = -errno;
	close(rs);
	return r;
}

/* ---- 4. seccomp ---- */

static int add(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned int n,
	       const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name), r;

	if (nr == __NR_SCMP_ERROR)
		return 0;	/* not every architecture has every call */
	r = n ? seccomp_rule_add_array(ctx, action, nr, n, cmp) : seccomp_rule_add(ctx, action, nr, 0);
	return r == -EEXIST ? 0 : r;
}

static bool sanitizer_call(const char *name)
{
	for (size_t i = 0; sandbox_sanitizer_calls[i]; i++)
		if (!strcmp(sandbox_sanitizer_calls[i], name))
			return true;
	return false;
}

static int enter_seccomp(const struct sandbox_role *role)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < role->nrules; i++) {
		const struct sandbox_rule *u = &role->rules[i];
		struct scmp_arg_cmp c = { (unsigned int)u->arg,
					  u->ne ? SCMP_CMP_NE : u->mask ? SCMP_CMP_MASKED_EQ : SCMP_CMP_EQ,
					  u->mask && !u->ne ? u->mask : u->value,
					  u->mask && !u->ne ? u->value : 0 };

		/* a call the sanitizers need whole is allowed whole below */
		if (!u->err && sanitizer_call(u->name))
			continue;
		r = add(ctx, u->err ? SCMP_ACT_ERRNO((uint32_t)u->err) : SCMP_ACT_ALLOW, u->name,
			u->arg >= 0 ? 1 : 0, &c);
	}
	for (size_t i = 0; r == 0 && role->base && role->base[i]; i++)
		r = add(ctx, SCMP_ACT_ALLOW, role->base[i], 0, NULL);
	for (size_t i = 0; r == 0 && role->allow && role->allow[i]; i++)
		r = add(ctx, SCMP_ACT_ALLOW, role->allow[i], 0, NULL);
	for (size_t i = 0; r == 0 && sandbox_sanitizer_calls[i]; i++) {
		bool refused = false;

		/* a refusal of the role's stays (the appraiser's open: EACCES) */
		for (size_t k = 0; k < role->nrules; k++)
			refused |= role->rules[k].err && !strcmp(role->rules[k].name, sandbox_sanitizer_calls[i]);
		if (!refused)
			r = add(ctx, SCMP_ACT_ALLOW, sandbox_sanitizer_calls[i], 0, NULL);
	}
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int sandbox_enter(const struct sandbox *sb, char *msg, size_t cap)
{
	int r = 0, ll = 0;

	if (sb->single_thread && threads() != 1) {
		snprintf(msg, cap, "%s: sandbox: more than one thread already", sb->name);
		return -EBUSY;
	}
	if (sb->become && (r = become(sb->uid, sb->gid)) < 0) {
		snprintf(msg, cap, "cannot become uid %u gid %u: %s", (unsigned int)sb->uid,
			 (unsigned int)sb->gid, strerror(-r));
		return r;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = -errno;
		snprintf(msg, cap, "PR_SET_NO_NEW_PRIVS: %s", strerror(-r));
		return r;
	}
	if (sb->landlock) {
		ll = enter_landlock(sb);
		if (ll == 1 && !sb->landlock_optional) {
			snprintf(msg, cap, "%s: this kernel has no Landlock", sb->name);
			return -EOPNOTSUPP;
		}
		if (ll < 0) {
			snprintf(msg, cap, "Landlock: %s%s", strerror(-ll), ll == -EPERM ?
				 " (the landlock_* system calls are refused: a container's system call filter "
				 "may forbid them, e.g. systemd-nspawn's: --system-call-filter='landlock_create_ruleset "
				 "landlock_add_rule landlock_restrict_self')" : "");
			return ll;
		}
	}
	if (sb->probe)
		sb->probe();
	if (sb->seccomp && (r = enter_seccomp(sb->seccomp)) < 0) {
		snprintf(msg, cap, "seccomp: %s%s", strerror(-r), r == -EPERM || r == -EACCES ?
			 " (installing a filter is refused: a container's system call filter may forbid "
			 "seccomp(2), e.g. systemd-nspawn's: --system-call-filter=seccomp)" : "");
		return r;
	}
	return ll;
}

void sandbox_test_probe(void)
{
	const char *dir = getenv("VG_TEST_PROBE_WRITE");
	char path[PATH_MAX];
	int fd;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/probe.%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	vlog_info("probe: write %s: %s", dir, fd < 0 ? strerror(errno) : "written");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}
