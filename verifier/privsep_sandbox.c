// SPDX-License-Identifier: MIT
/*
 * privsep_sandbox.c - what keeps the network process from the database.
 *
 * The mechanism, in three parts:
 *  1. No credentials: the store process (store_proc.c) alone opened the
 *     database; our copy of the --db URL has its passwords overwritten and
 *     PGPASSWORD is wiped (vg_privsep_store_open), and Landlock below keeps
 *     ~/.pgpass and PGPASSFILE out of reach (they are not beneath a
 *     directory we may read).
 *  2. Landlock (filesystem): every access right the running kernel knows
 *     is handled (ABI 1..7: up to LANDLOCK_ACCESS_FS_IOCTL_DEV; the
 *     scopes of ABI 6: abstract unix sockets and signals outside the
 *     domain), and only read/execute is allowed, beneath system
 *     directories (/usr, /etc for CA bundles and resolver files, /proc,
 *     ...) that do not contain the SQLite database's directory, plus
 *     /dev and the few files named on the command line that are read
 *     while running. So the SQLite file, its journal and its directory
 *     cannot be opened, nor anything written anywhere.
 *  3. seccomp (a BPF filter, no libseccomp needed): socket(AF_UNIX, ...)
 *     fails with EACCES, and io_uring_setup with ENOSYS (its SOCKET and
 *     CONNECT operations would pass beside the filter). PostgreSQL's unix
 *     socket cannot be connected without a new AF_UNIX socket, and
 *     Landlock does not govern connect(2) on a socket path; the
 *     socketpairs to the store and hook processes were made before and
 *     are connected already. Other architectures than the one built for
 *     (x32 included) are killed.
 * A PostgreSQL server reached over TCP is NOT kept from us: Landlock's
 * network rules (ABI 4, Linux 6.7) would have to allow connect to any
 * agent's or webhook's port, and the server may share one with them.
 * What protects it then is part 1 only: we hold no password, client key
 * or pgpass file, so the server refuses us unless it trusts the host
 * without a password (pg_hba "trust" on TCP: the operator's to avoid).
 *
 * Debian 12's <linux/landlock.h> stops at ABI 2: the later constants and
 * the ruleset attribute's later fields are defined here.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "log.h"
#include "privsep.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)			/* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)		/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)		/* ABI 5 */
#endif
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)		/* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* struct landlock_ruleset_attr as of ABI 6 (the kernel takes a prefix of it) */
struct ll_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4: not handled (see above) */
	uint64_t scoped;		/* ABI 6 */
};

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | \
		 LANDLOCK_ACCESS_FS_EXECUTE)

static const char *const read_dirs[] = {
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt",
	"/proc", "/sys", "/run",
};

static uint64_t fs_rights(int abi)
{
	uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;	/* ABI 1: bits 0..12 */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

/* Return: 0 (also when @path does not exist: nothing to allow), -errno */
static int allow(int rs, const char *path, uint64_t rights, uint64_t handled)
{
	struct landlock_path_beneath_attr pb = { 0 };
	int fd = open(path, O_PATH | O_CLOEXEC), r = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	pb.parent_fd = fd;
	pb.allowed_access = rights & handled;
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* the directory of an SQLite store URL ("" for PostgreSQL), resolved */
static void db_dir(const char *db, char *out, size_t cap)
{
	char path[PATH_MAX], *slash;

	out[0] = 0;
	if (strncmp(db, "postgresql:", 11) == 0 || strncmp(db, "postgres:", 9) == 0)
		return;
	if (strncmp(db, "sqlite:", 7) == 0)
		db += 7;
	if (!realpath(db, path))
		return;
	slash = strrchr(path, '/');
	if (slash)
		*slash = 0;
	snprintf(out, cap, "%s", path[0] ? path : "/");
}

static bool beneath(const char *dir, const char *root)
{
	char r[PATH_MAX];
	size_t n;

	if (!realpath(root, r))
		return false;
	n = strlen(r);
	return strncmp(dir, r, n) == 0 && (dir[n] == '/' || dir[n] == 0 || n == 1);
}

static int landlock(const char *db, const char *const *read, size_t n, struct vg_diag *diag)
{
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	struct ll_attr a = { 0 };
	char dir[PATH_MAX], self[PATH_MAX];
	size_t size = sizeof(a.handled_access_fs);
	int rs, r = 0;
	ssize_t sl;

	if (abi < 1) {
		vlog_warn("WARNING: this kernel has no Landlock: the network "
			"process is kept from the database by seccomp (its unix socket) and by holding "
			"no credentials only, not from the SQLite file");
		return 1;
	}
	a.handled_access_fs = fs_rights(abi);
	if (abi >= 6) {
		a.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(a);
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
	if (rs < 0)
		return vg_diag_set(diag, -errno, "landlock_create_ruleset: %s", strerror(errno));
	db_dir(db, dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(read_dirs) / sizeof(read_dirs[0]) && !r; i++)
		if (!(dir[0] && beneath(dir, read_dirs[i])))
			r = allow(rs, read_dirs[i], FS_READ, a.handled_access_fs);
	/* /dev/null, /dev/urandom, a tty: read, write, ioctl; nothing created */
	if (!r && !(dir[0] && beneath(dir, "/dev")))
		r = allow(rs, "/dev", FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |
			  LANDLOCK_ACCESS_FS_IOCTL_DEV, a.handled_access_fs);
	/* our own executable: a sanitizer's symbolizer reads it */
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!r && sl > 0) {
		self[sl] = 0;
		r = allow(rs, self, LANDLOCK_ACCESS_FS_READ_FILE, a.handled_access_fs);
	}
	for (size_t i = 0; i < n && !r; i++)
		if (read[i])
			r = allow(rs, read[i], LANDLOCK_ACCESS_FS_READ_FILE, a.handled_access_fs);
	if (!r && syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		r = -errno;
	close(rs);
	if (r < 0)
		return vg_diag_set(diag, r, "landlock: %s", strerror(-r));
	return 0;
}

#if defined(__x86_64__)
#define SC_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SC_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp filter names this architecture's AUDIT_ARCH: add it"
#endif

static int seccomp_unix(struct vg_diag *diag)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SC_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),	/* x32 */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* socket(domain, ...): the low 32 bits of the first argument */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return vg_diag_set(diag, -EPERM, "seccomp: %s", strerror(errno));
	return 0;
}

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d)); )
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

#ifdef VIGIL_VERIFIER_TEST_HOOKS
/*
 * Test-only (vigil-verifier-test, never installed): with VG_TEST_PROBE_DB
 * set, try to open that file; with VG_TEST_PROBE_SOCK, to connect to that
 * unix socket; and log what happened (tests/cli/t0510-verifier-privsep.sh).
 */
static void probe(void)
{
	const char *db = getenv("VG_TEST_PROBE_DB"), *sock = getenv("VG_TEST_PROBE_SOCK");

	if (db) {
		int fd = open(db, O_RDONLY | O_CLOEXEC);

		fprintf(stderr, "vigil-verifier: probe: open %s: %s\n", db, fd < 0 ? strerror(errno) : "opened");
		if (fd >= 0)
			close(fd);
	}
	if (sock) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = fd;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		if (fd >= 0)
			r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		fprintf(stderr, "vigil-verifier: probe: %s %s: %s\n", fd < 0 ? "socket" : "connect",
			sock, r < 0 ? strerror(errno) : "connected");
		if (fd >= 0)
			close(fd);
	}
}
#endif

int vg_privsep_sandbox(const char *db, const char *const *read, size_t n, struct vg_diag *diag)
{
	int r;

	if (threads() != 1)
		return vg_diag_set(diag, -EBUSY, "sandbox: more than one thread already");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return vg_diag_set(diag, -errno, "no_new_privs: %s", strerror(errno));
	r = landlock(db, read, n, diag);
	if (r < 0)
		return r;
	if (seccomp_unix(diag) < 0)
		return -EPERM;
#ifdef VIGIL_VERIFIER_TEST_HOOKS
	probe();
#endif
	return r;
}
