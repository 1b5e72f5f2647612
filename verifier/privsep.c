// SPDX-License-Identifier: MIT
/*
 * privsep.c - vigil-verifier's processes in one table (vf_procs, as
 * OpenBSD relayd's procs[]; started by common/proc.h, speaking
 * store_ipc.h's messages), and what keeps the network process from the
 * database: its sandbox (common/sandbox.h).
 *
 * The mechanism, in three parts:
 *  1. No credentials: the store process (store_proc.c) alone opened the
 *     database; our copy of the --db URL has its passwords overwritten and
 *     PGPASSWORD is wiped (vg_privsep_store_open), and Landlock below keeps
 *     ~/.pgpass and PGPASSFILE out of reach (they are not beneath a
 *     directory we may read).
 *  2. Landlock (filesystem): every filesystem right of the running ABI is
 *     handled (1..5: up to IOCTL_DEV; the scopes of ABI 6: abstract unix
 *     sockets and signals outside the domain), and only read/execute is
 *     allowed, beneath system directories (/usr, /etc for CA bundles and
 *     resolver files, /proc, ...) that do not contain the SQLite
 *     database's directory, plus /dev and the few files named on the
 *     command line that are read while running. So the SQLite file, its
 *     journal and its directory cannot be opened, nor anything written
 *     anywhere. TCP is not handled (net_any): the process connects to
 *     every agent's and webhook's port, which no list can name.
 *  3. seccomp: the role vf_net_role, an allow-list whose default kills
 *     the process; a socket is IPv4, IPv6 or netlink (the resolver's),
 *     socket(AF_UNIX, ...) fails with EACCES (PostgreSQL's
 *     unix socket cannot be connected without a new AF_UNIX socket, and
 *     Landlock does not govern connect(2) on a socket path; the
 *     socketpairs to the store and hook processes were made before and
 *     are connected already), io_uring_setup with ENOSYS (its SOCKET and
 *     CONNECT operations would pass beside the filter), clone3 with
 *     ENOSYS (glibc then uses clone, whose flags the filter sees: threads
 *     only, no new process).
 * A PostgreSQL server reached over TCP is NOT kept from us: what protects
 * it is part 1 only: we hold no password, client key or pgpass file, so
 * the server refuses us unless it trusts the host without a password
 * (pg_hba "trust" on TCP: the operator's to avoid).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "privsep.h"
#include "proc.h"
#include "sandbox.h"

#define PROCS_BUF (4 << 20)	/* a policy document crosses in few context switches */

/*
 * Every process of the verifier. The store, key and hook processes are
 * forked before the network process confines itself and are not
 * sandboxed: the store process must reach the database (a file or a
 * socket anywhere), the hook process runs the operator's command; each
 * parses only its store_ipc.h messages and ends at the first violation.
 */
const struct proc vf_procs[VF_PROC__COUNT] = {
	[VF_PROC_NET] = { .name = NULL, .role = &vf_net_role },
	[VF_PROC_KEY] = { "vigil-key", SOCK_STREAM, PROCS_BUF, SIGKILL, true, true, NULL },
	[VF_PROC_STORE] = { "vigil-store", SOCK_STREAM, PROCS_BUF, SIGKILL, true, true, NULL },
	[VF_PROC_HOOK] = { "vigil-hook", SOCK_STREAM, PROCS_BUF, SIGKILL, true, true, NULL },
};

/* the calls of an HTTP process (sandbox.h), and waiting for the store process at the end */
static const char *const net_calls[] = { "wait4", NULL };

const struct sandbox_role vf_net_role = {
	"vigil-verifier network process", sandbox_http_calls, net_calls, sandbox_http_rules,
	SANDBOX_HTTP_NRULES
};

/* the directory of an SQLite store URL (NULL for PostgreSQL) */
static const char *db_dir(const char *db, char *out, size_t cap)
{
	char path[PATH_MAX], *slash;

	if (strncmp(db, "postgresql:", 11) == 0 || strncmp(db, "postgres:", 9) == 0)
		return NULL;
	if (strncmp(db, "sqlite:", 7) == 0)
		db += 7;
	if (!realpath(db, path))
		return NULL;
	slash = strrchr(path, '/');
	if (slash)
		*slash = 0;
	snprintf(out, cap, "%s", path[0] ? path : "/");
	return out;
}

#ifdef VIGIL_VERIFIER_TEST_HOOKS
/*
 * Test-only (vigil-verifier-test, never installed): with VG_TEST_PROBE_DB
 * set, try to open that file; with VG_TEST_PROBE_SOCK, to connect to that
 * unix socket; with VG_TEST_PROBE_WRITE, to write in that directory; and
 * log what happened (tests/cli/t0510-verifier-privsep.sh, t0535).
 */
static void probe(void)
{
	const char *db = getenv("VG_TEST_PROBE_DB"), *sock = getenv("VG_TEST_PROBE_SOCK");

	sandbox_test_probe();
	if (db) {
		int fd = open(db, O_RDONLY | O_CLOEXEC);

		vlog_info("probe: open %s: %s", db, fd < 0 ? strerror(errno) : "opened");
		if (fd >= 0)
			close(fd);
	}
	if (sock) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = fd;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		if (fd >= 0)
			r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		vlog_info("probe: %s %s: %s", fd < 0 ? "socket" : "connect",
			sock, r < 0 ? strerror(errno) : "connected");
		if (fd >= 0)
			close(fd);
	}
}
#endif

int vg_privsep_sandbox(const char *db, const char *const *read, size_t n, struct vg_diag *diag)
{
	const char *files[16] = { 0 };
	char dir[PATH_MAX], msg[512];
	struct sandbox sb = {
		.name = "the network process", .single_thread = true, .landlock = true,
		.landlock_optional = true, .read_dirs = sandbox_system_dirs,
		.except = db_dir(db, dir, sizeof(dir)), .read_files = files, .dev = true,
		.self_exe = true, .net_any = true,
		.seccomp = vf_procs[VF_PROC_NET].role,
	};
	size_t k = 0;
	int r;

	for (size_t i = 0; i < n && k < sizeof(files) / sizeof(files[0]) - 1; i++)
		if (read[i])
			files[k++] = read[i];
	r = sandbox_enter(&sb, msg, sizeof(msg));
	if (r < 0)
		return vg_diag_set(diag, r, "%s", msg);
	if (r == 1)
		vlog_warn("WARNING: this kernel has no Landlock: the network "
			"process is kept from the database by seccomp (its unix socket) and by holding "
			"no credentials only, not from the SQLite file");
#ifdef VIGIL_VERIFIER_TEST_HOOKS
	probe();
#endif
	return r;
}
