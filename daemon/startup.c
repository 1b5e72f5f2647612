// SPDX-License-Identifier: MIT
/*
 * startup.c - what vigild checks and takes before it says it is ready,
 * each refusal naming the file and the problem (exit 2, never "ready"):
 *
 *   - the trusted keyrings, loaded here as the appraisers will load them
 *     (a bad one used to make every appraiser die at start, for ever);
 *   - the HMAC key, a passphrase key with its passphrase from
 *     --passphrase-file, $VIGIL_PASSPHRASE_FILE or the systemd credential
 *     vigil-passphrase ($CREDENTIALS_DIRECTORY); the derived key reaches
 *     the appraisers as any key does (pool.c's init message), the
 *     passphrase never leaves this file's stack buffer;
 *   - the measurement list's default (/run/vigil/binary_runtime_measurements
 *     when the policy measures and no --log is given) and its TPM: an
 *     explicit one (--tcti, tpm.tcti, $VIGIL_TCTI) must answer; without
 *     one the default device, or where it is absent a software bank, said
 *     plainly to be not attestable;
 *   - the directories the log and the audit trail go to;
 *   - the control socket's lock (SOCKET.lock, flock'ed, holding our pid):
 *     a second vigild never steals or unlinks the first one's socket;
 *   - the --watch paths: an overlay, eCryptfs or FUSE filesystem only alone;
 *   - /proc, where the pids fanotify reports are looked up: it must be of
 *     vigild's own pid namespace, or pid N there is another process.
 *
 * What it does not do: parse the policy (reload.c), spawn appraisers
 * (pool.c) or open the log (main.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "journal.h"
#include "monitor.h"
#include "setup.h"
#include "tcti.h"
#include "vigil/fileio.h"
#include "vigil/keyring.h"

#define VD_DEFAULT_LOG "/run/vigil/binary_runtime_measurements"
#define VD_DEFAULT_TPM_DEVICE "/dev/tpmrm0"
#define VD_PASS_MAX 1024

int vd_keyrings_check(struct vd *d)
{
	const char *const *paths = d->nkeyrings ? d->keyrings : (const char *const *)d->cfg.keyrings;
	size_t n = d->nkeyrings ? d->nkeyrings : d->cfg.nkeyrings;
	struct vg_keyring *kr = NULL;
	int r = 0;

	if (vg_keyring_new(&kr) < 0) {
		vlog_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct vg_diag dg = { 0 };
		size_t before = vg_keyring_count(kr);

		if (vg_keyring_add_file(kr, paths[i], &dg) < 0) {
			vlog_err("keyring %s: %s", paths[i], dg.msg);
			r = -1;
		} else if (vg_keyring_count(kr) == before) {
			vlog_err("keyring %s: no certificate or public key in it", paths[i]);
			r = -1;
		}
	}
	d->nkeys = vg_keyring_count(kr);
	vg_keyring_free(kr);
	return r;
}

struct pass_arg {
	struct vd *d;
	bool failed;
};

/* The first line of @file. Return: its length (> 0), or -1 after logging. */
static int pass_read(const char *file, const char *key, char *buf, size_t cap)
{
	uint8_t *data = NULL;
	size_t len = 0, n = 0;
	struct vg_diag dg = { 0 };

	if (vg_file_read(file, 64 * 1024, &data, &len, &dg) < 0) {
		vlog_err("HMAC key %s: passphrase file %s: %s", key, file, dg.msg);
		return -1;
	}
	while (n < len && data[n] != '\n')
		n++;
	if (n && data[n - 1] == '\r')
		n--;
	if (n >= cap || n == 0) {
		vlog_err("HMAC key %s: passphrase file %s: %s", key, file,
		       n ? "the passphrase is too long" : "empty passphrase");
		OPENSSL_clear_free(data, len);
		return -1;
	}
	memcpy(buf, data, n);
	OPENSSL_clear_free(data, len);
	return (int)n;
}

static int pass_cb(void *arg, const char *path, char *buf, size_t cap)
{
	struct pass_arg *a = arg;
	const char *file = a->d->passphrase_file, *cred = getenv("CREDENTIALS_DIRECTORY");
	char credfile[PATH_MAX];
	int n;

	if (!file || !*file)
		file = getenv("VIGIL_PASSPHRASE_FILE");
	if ((!file || !*file) && cred && *cred) {
		snprintf(credfile, sizeof(credfile), "%s/vigil-passphrase", cred);
		if (access(credfile, F_OK) == 0)
			file = credfile;
	}
	if (!file || !*file) {
		vlog_err("HMAC key %s is a passphrase key: give its passphrase with --passphrase-file "
		       "FILE, $VIGIL_PASSPHRASE_FILE, or the systemd credential vigil-passphrase "
		       "(LoadCredential=vigil-passphrase:FILE)", path);
		a->failed = true;
		return -ENOKEY;
	}
	n = pass_read(file, path, buf, cap < VD_PASS_MAX ? cap : VD_PASS_MAX);
	if (n < 0)
		a->failed = true;
	return n < 0 ? -ENOKEY : n;
}

/* The HMAC key file @hk (raw, passphrase, TPM-sealed) into @out. Return: 0, or -1 after logging. */
static int load_key(struct vd *d, const char *hk, struct vg_hmac_key *out)
{
	struct vg_diag dg = { 0 };
	struct pass_arg pa = { .d = d };
	struct vg_key_source src = { .tpm = d->tpm, .tcti = vg_prog_tcti(d->tcti),
				     .passphrase = pass_cb, .arg = &pa };
	enum vg_key_kind kind = VG_KEY_RAW;
	int r = vg_hmac_key_load(hk, &src, out, &kind, &dg);

	if (r < 0) {
		if (pa.failed)
			return -1;	/* said */
		if (r == -EKEYREJECTED && kind == VG_KEY_PASSPHRASE)
			vlog_err("HMAC key %s: wrong passphrase (the key file's check value differs)", hk);
		else if (strstr(dg.msg, hk))
			vlog_err("HMAC key %s", dg.msg);
		else
			vlog_err("HMAC key %s: %s", hk, dg.msg);
		return -1;
	}
	return 0;
}

int vd_keys_setup(struct vd *d)
{
	const char *hk = d->hmac_key_path ? d->hmac_key_path : d->cfg.hmac_key;

	for (size_t i = 0; i < d->nkeyrings; i++)
		vd_args_worker(d, "--keyring", d->keyrings[i]);
	if (!d->nkeyrings)
		for (size_t i = 0; i < d->cfg.nkeyrings; i++)
			vd_args_worker(d, "--keyring", d->cfg.keyrings[i]);
	for (size_t i = 8; i < d->cfg.evm.n; i++)
		vd_args_worker(d, "--evm-xattr", d->cfg.evm.x[i].name);
	if (d->cfg.uuid == VG_CONFIG_UUID_NONE)
		vd_args_worker(d, "--no-uuid", NULL);
	vd_args_worker(d, "--algo", vg_hash_name(d->algo));
	if (hk && load_key(d, hk, &d->key) < 0)
		return -1;
	/* --trust-key: the trust database's, when it is not vigild's HMAC key; never sent to appraisers */
	if (d->trust_key_path && load_key(d, d->trust_key_path, &d->trust_key) < 0)
		return -1;
	return 0;
}

/* Return: whether @p has a measure rule. */
static bool measures(const struct vg_policy *p)
{
	for (size_t i = 0; i < vg_policy_count(p); i++)
		if (vg_policy_rule(p, i)->action == VG_POL_MEASURE)
			return true;
	return false;
}

/* mkdir the default /run/vigil (root-owned, 0755) if absent. */
static void default_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			vlog_err("%s: %s", dir, strerror(errno));
	}
}

int vd_writable(const char *what, const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	if (access(dir, W_OK | X_OK) < 0) {
		vlog_err("%s %s: its directory %s %s", what, path, dir,
		       errno == ENOENT ? "does not exist" : errno == EROFS ? "is on a read-only filesystem"
		       : "is not writable");
		return -1;
	}
	/*
	 * vigild writes it as root: a link, which whoever may write in its
	 * directory could have put there, would have it append to any file
	 * (opened O_NOFOLLOW as well, against a link made after this check)
	 */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		vlog_err("%s %s: a symbolic link: name the file itself (vigild does not follow links "
		       "to the files it writes)", what, path);
		return -1;
	}
	if (access(path, F_OK) == 0 && access(path, W_OK) < 0) {
		vlog_err("%s %s: not writable: %s", what, path, strerror(errno));
		return -1;
	}
	return 0;
}

int vd_outputs_check(struct vd *d)
{
	if (!d->log_path && measures(d->policy)) {
		d->log_path = VD_DEFAULT_LOG;
		d->log_default = true;
		default_dir(d->log_path);
	}
	if (d->log_path && vd_writable("measurement log", d->log_path) < 0)
		return -1;
	if (d->audit_path && vd_writable("audit file", d->audit_path) < 0)
		return -1;
	return 0;
}

int vd_watch_check(struct vd *d)
{
	/*
	 * Each path must be there. A stacked or slow filesystem (an overlay,
	 * eCryptfs, FUSE: reading its events opens other files or asks a
	 * server) is no longer refused beside the others: it gets a reader of
	 * its own (side.c).
	 */
	for (size_t i = 0; i < d->nwatch; i++) {
		struct stat st;

		if (stat(d->watch[i], &st) < 0) {
			vlog_err("--watch %s: %s", d->watch[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* the initial pid namespace's inode number (PROC_PID_INIT_INO, include/linux/proc_ns.h) */
#define VD_PID_INIT_INO 0xEFFFFFFCU

int vd_proc_check(void)
{
	char buf[32];
	struct stat st;
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n < 0) {
		vlog_err("/proc/self: %s: vigild reads openers' credentials and programs in /proc; "
		       "mount a proc of its pid namespace there",
		       strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	/*
	 * A proc mounted in another pid namespace (the host's, bound into a
	 * container) numbers processes its own way: the opener fanotify calls
	 * pid 7 is not /proc/7, and a rule about uids or programs would judge
	 * someone else.
	 */
	if (strtol(buf, NULL, 10) != (long)getpid()) {
		vlog_err("/proc is of another pid namespace (/proc/self is %s, vigild is pid %ld): the "
		       "openers' pids would name other processes; mount a proc of vigild's own pid "
		       "namespace (unshare --mount-proc)",
		       buf, (long)getpid());
		return -1;
	}
	if (stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != VD_PID_INIT_INO)
		vlog(VLOG_WARNING,
			  "vigild runs in a pid namespace of its own: the kernel reports openers "
			  "outside it as pid 0, whose uid and program cannot be read; under rules "
			  "about the subject (uid, euid, gid, egid, subj_exe) or the loader their "
			  "accesses get the fail action (unknown-subject)");
	return 0;
}

/*
 * The TPM's library (libtss2-tcti-NAME.so.0) stays loaded for vigild's
 * life: tpm2-tss's loader unloads it when a context is finalised (after a
 * failure below the TPM) and loads it again later, opening ld.so.cache and
 * the library on a filesystem vigild may watch. Kept loaded, it is found
 * by name and no file is opened. Best effort: a TCTI it cannot name is
 * loaded as tpm2-tss loads it.
 */
static void preload_tcti(const char *tcti)
{
	char name[128], lib[160];
	size_t n = strcspn(tcti, ":");

	if (n == 0 || n >= sizeof(name))
		return;
	memcpy(name, tcti, n);
	name[n] = 0;
	snprintf(lib, sizeof(lib), "libtss2-tcti-%s.so.0", name);
	if (!dlopen(lib, RTLD_NOW | RTLD_NODELETE))
		(void)dlopen(name, RTLD_NOW | RTLD_NODELETE);
}

int vd_journal_setup(struct vd *d)
{
	const char *path = d->journal_path;
	int r;

	if (path && strcmp(path, "none") == 0)
		return 0;
	if (!path && !vlog_journal())
		return 0;	/* not under systemd, and not asked for */
	r = vjournal_open(path);
	if (r <= 0 && path) {
		vlog_err("--journal %s: %s", path, r == 0 ? "no journal listens there" : strerror(-r));
		return -1;
	}
	if (r <= 0) {
		vlog(VLOG_WARNING, "journal %s: %s: denials are in the audit trail only",
			  VJOURNAL_SOCKET, r == 0 ? "not there" : strerror(-r));
		return 0;
	}
	vlog_native(true);	/* the loop's own lines must not wait for the journal either */
	return 0;
}

int vd_tpm_setup(struct vd *d)
{
	const char *tcti = vg_prog_tcti(d->tcti);
	struct vg_diag dg = { 0 };

	if (d->no_tpm)
		return 0;
	setenv("TSS2_LOG", "all+none", 0);	/* errors are reported once, here */
	if (tcti) {
		if (vg_tpm_open(tcti, &d->tpm, &dg) < 0) {
			vlog_err("TPM %s (--tcti, tpm.tcti or $VIGIL_TCTI) cannot be reached: %s", tcti,
			       dg.msg);
			return -1;
		}
		preload_tcti(tcti);
		return 0;
	}
	if (!d->log_path)
		return 0;	/* a sealed HMAC key opens the default TPM on demand */
	if (access(VD_DEFAULT_TPM_DEVICE, F_OK) == 0) {
		if (vg_tpm_open(VG_TPM_TCTI_DEFAULT, &d->tpm, &dg) < 0) {
			vlog_err("TPM %s: %s (give --tcti, or --no-tpm for a software PCR bank, not "
			       "attestable)", VG_TPM_TCTI_DEFAULT, dg.msg);
			return -1;
		}
		preload_tcti(VG_TPM_TCTI_DEFAULT);
		return 0;
	}
	d->no_tpm = true;
	vlog(VLOG_WARNING, "WARNING: no TPM: %s is absent and no --tcti, tpm.tcti or $VIGIL_TCTI is given; "
	       "PCR extends go to a software bank (%s.pcrs): the measurement list %s is NOT attestable; "
	       "a software TPM runs as vigil-swtpm.service (tpm.tcti = %s; README.Debian, \"No TPM\")",
	       VD_DEFAULT_TPM_DEVICE, d->log_path, d->log_path, VG_SWTPM_TCTI);
	return 0;
}

/* The pid written in the lock file @fd, or 0. */
static long lock_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

int vd_lock_take(struct vd *d)
{
	const char *sock = d->control_path;
	char pid[24];

	if (strcmp(sock, VD_CTL_DEFAULT_SOCKET) == 0)
		default_dir(sock);
	snprintf(d->lock_path, sizeof(d->lock_path), "%s.lock", sock);
	for (int tries = 0; tries < 10; tries++) {
		struct stat a, b;
		int fd = open(d->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);

		if (fd < 0) {
			vlog_err("control socket %s: lock file %s: %s", sock, d->lock_path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			long other = lock_pid(fd);

			if (errno == EWOULDBLOCK && other > 0)
				vlog_err("control socket %s: another vigild (pid %ld) runs with it (its lock "
				       "%s is held): not starting", sock, other, d->lock_path);
			else if (errno == EWOULDBLOCK)
				vlog_err("control socket %s: another vigild runs with it (its lock %s is "
				       "held): not starting", sock, d->lock_path);
			else
				vlog_err("control socket %s: lock file %s: %s", sock, d->lock_path,
				       strerror(errno));
			close(fd);
			return -1;
		}
		/* the last holder may have unlinked it after we opened it: lock the file that is there */
		if (fstat(fd, &a) < 0 || stat(d->lock_path, &b) < 0 || a.st_ino != b.st_ino ||
		    a.st_dev != b.st_dev) {
			close(fd);
			continue;
		}
		if (!S_ISREG(a.st_mode)) {
			vlog_err("control socket %s: %s is not a regular file", sock, d->lock_path);
			close(fd);
			return -1;
		}
		snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
		if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) != (ssize_t)strlen(pid)) {
			vlog_err("control socket %s: lock file %s: %s", sock, d->lock_path, strerror(errno));
			unlink(d->lock_path);
			close(fd);
			return -1;
		}
		d->lock_fd = fd;
		return 0;
	}
	vlog_err("control socket %s: lock file %s keeps changing", sock, d->lock_path);
	return -1;
}

int vd_control_stale(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int s, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (vlog_err("control socket %s: %s", path, strerror(errno)), -1);
	if (!S_ISSOCK(st.st_mode)) {
		vlog_err("control socket %s: exists and is not a socket: not replacing it", path);
		return -1;
	}
	/* a vigild from before the lock file, or one that lost it, still answers there */
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	r = connect(s, (struct sockaddr *)&a, sizeof(a));
	close(s);
	if (r == 0) {
		vlog_err("control socket %s: another vigild answers there: not starting", path);
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		vlog_err("control socket %s: a dead vigild's socket: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void vd_lock_release(struct vd *d)
{
	if (d->ctl_bound)
		unlink(d->control_path);
	d->ctl_bound = false;
	if (d->lock_fd >= 0) {
		/* unlinked while still held: who opened it meanwhile sees another inode and retries */
		unlink(d->lock_path);
		close(d->lock_fd);
	}
	d->lock_fd = -1;
}
