// SPDX-License-Identifier: MIT
/*
 * worker.c - vigild's appraiser process (see vigild.h).
 *
 * Started by the monitor as `vigild --appraiser FD [options]`: it loads the
 * trusted keyring named in its options (as root: key files may be 0600),
 * receives the HMAC key in the first message, then confines itself for
 * good (sandbox.c: the unprivileged appraiser user, no capability, no new
 * privileges, Landlock, seccomp) and answers requests until its socket
 * closes. Content and xattrs are read through the received descriptor
 * only. Descriptor 4 is the monitor's fanotify group, to which it only
 * writes the allow for a clean pass when the request says it may
 * (VD_ANSWER). It never writes a file: in fix mode it returns the labels to
 * write, and the monitor writes them.
 *
 * Built with -DVIGILD_TEST_HOOKS (the test-only vigild-test, never
 * installed), a file beginning with "VIGILD-TEST-" followed by SOCKET,
 * GROUP (a read of the fanotify group), LIE (an allow for a file that
 * fails), EXECVE, UBSAN or ASAN makes the appraiser misbehave that way, so that
 * the tests can show the sandbox and the sanitizer report at work; and
 * with $VIGILD_TEST_APPRAISER_FAIL naming a file that exists, the
 * appraiser exits at start (the crash-loop limit, t0720).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "log.h"
#include "vigil/appraise.h"
#include "vigil/evm.h"
#include "vigil/keyring.h"
#include "vigil/xattr_ima.h"
#include "vigild.h"

struct appraiser {
	struct vg_appraise_opts o;
	struct vg_evm_config cfg;
	struct vg_keyring *kr;
	struct vg_hasher *h;
	uint8_t key[128];
	size_t keylen;
	bool uuid_given, have_ids;
	uid_t uid;
	gid_t gid;
	unsigned int algo;
	struct {
		bool valid;
		dev_t dev;
		int err;
		uint8_t uuid[16];
	} uuids[8];
};

static void die(const char *what)
{
	vlog_err("%s", what);
	exit(2);
}

static int uuid_for(struct appraiser *a, int fd, dev_t dev, uint8_t uuid[16])
{
	size_t i, free_slot = 0;

	for (i = 0; i < 8; i++) {
		if (a->uuids[i].valid && a->uuids[i].dev == dev) {
			memcpy(uuid, a->uuids[i].uuid, 16);
			return a->uuids[i].err;
		}
		if (!a->uuids[i].valid)
			free_slot = i;
	}
	i = free_slot;
	a->uuids[i].valid = true;
	a->uuids[i].dev = dev;
	a->uuids[i].err = vg_fs_uuid(fd, a->uuids[i].uuid, NULL);
	memcpy(uuid, a->uuids[i].uuid, 16);
	return a->uuids[i].err;
}

static bool fixable(const struct vg_appraise_result *r)
{
	if (!r->cause || r->ima_type == 3 || r->ima_type == 6)
		return false;	/* never overwrite a signature */
	return strcmp(r->cause, "missing-hash") == 0 || strcmp(r->cause, "invalid-hash") == 0 ||
	       strcmp(r->cause, "missing-HMAC") == 0 || strcmp(r->cause, "invalid-HMAC") == 0;
}

/*
 * The labels fix mode writes, computed here and written by the monitor:
 * security.ima in the hash form, and with an HMAC key security.evm (02)
 * over the file's protected xattrs with that security.ima in them.
 */
static int fix_values(struct appraiser *a, int fd, const struct vg_appraise_opts *o,
		      struct vd_rep *p, struct vg_diag *d)
{
	struct vg_evm_label_opts eo = {
		.evm = &a->cfg,
		.type = VG_EVM_XATTR_HMAC,
		.hmac_key = a->key,
		.hmac_key_len = a->keylen,
	};
	bool need_uuid = a->cfg.fsuuid;
	struct vg_evm_xattrs xs;
	struct vg_evm_meta meta;
	struct vg_digest dg;
	int len, r;

	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
		return vg_diag_set(d, -errno, "lseek: %s", strerror(errno));
	r = vg_hasher_fd(a->h, fd, a->algo, &dg, NULL, d);
	if (r < 0)
		return r;
	len = vg_ima_xattr_encode_digest(&dg, p->fix_ima, sizeof(p->fix_ima));
	if (len < 0)
		return vg_diag_set(d, len, "cannot encode security.ima");
	if (!a->keylen) {
		p->fix_ima_len = (uint8_t)len;
		return 0;
	}
	r = vg_evm_meta_from_fd(fd, need_uuid && o->uuid_mode == VG_UUID_FROM_FS, &meta, d);
	if (r == -ENODATA) {
		char why[sizeof(d->msg)];

		snprintf(why, sizeof(why), "%s", d->msg);
		return vg_diag_set(d, -EDESTADDRREQ, "%s; give --uuid UUID, or --no-uuid for a kernel "
				   "without EVM_ATTR_FSUUID", why);
	}
	if (r < 0)
		return r;
	if (need_uuid && o->uuid_mode == VG_UUID_GIVEN) {
		memcpy(meta.uuid, o->uuid, 16);
		meta.has_uuid = true;
	}
	vg_evm_xattrs_init(&xs);
	r = vg_evm_xattrs_read(fd, &a->cfg, &xs, d);
	if (r >= 0)
		r = vg_evm_xattrs_set(&xs, &a->cfg, VG_XATTR_IMA, p->fix_ima, (size_t)len);
	if (r >= 0)
		r = vg_evm_value(&eo, &xs, &meta, p->fix_evm, sizeof(p->fix_evm), d);
	vg_evm_xattrs_release(&xs);
	if (r < 0)
		return r;
	p->fix_ima_len = (uint8_t)len;
	p->fix_evm_len = (uint8_t)r;
	return 0;
}

#ifdef VIGILD_TEST_HOOKS
/*
 * Test-only misbehaviour (see the top of this file); never in the shipped
 * vigild. Return: true for LIE, an appraiser that writes an allow it was
 * not given (what a compromised one could do, and the monitor must see).
 */
static bool test_hook(int fd)
{
	char magic[20] = { 0 };

	if (pread(fd, magic, sizeof(magic) - 1, 0) < 12 || strncmp(magic, "VIGILD-TEST-", 12) != 0)
		return false;
	if (strncmp(magic + 12, "LIE", 3) == 0)
		return true;
	if (strncmp(magic + 12, "SOCKET", 6) == 0) {
		(void)socket(AF_INET, SOCK_STREAM, 0);
	} else if (strncmp(magic + 12, "GROUP", 5) == 0) {
		char ev[4096];

		if (read(VD_APPRAISER_GROUP_FD, ev, sizeof(ev)) > 0)	/* take the monitor's events */
			vlog_err("test hook: read the group");
	} else if (strncmp(magic + 12, "EXECVE", 6) == 0) {
		char *argv[] = { (char *)"true", NULL };

		(void)execve("/bin/true", argv, argv + 1);
	} else if (strncmp(magic + 12, "UBSAN", 5) == 0) {
		volatile int big = 0x7fffffff, one = 1;

		vlog_err("test hook: %d", big + one);	/* signed overflow */
	} else if (strncmp(magic + 12, "ASAN", 4) == 0) {
		char *volatile heap = malloc(8);
		volatile char c = heap[8];	/* heap-buffer-overflow */

		vlog_err("test hook: %d", c);
		free(heap);
	}
	return false;
}
#endif

/* Return: true when the test hook LIE asks for a false allow (never in the shipped vigild). */
static bool handle(struct appraiser *a, const struct vd_req *q, int fd, struct vd_rep *p)
{
	struct vg_appraise_opts o = a->o;
	struct vg_appraise_result res;
	struct vg_diag d = { 0 };
	struct stat st = {
		.st_dev = (dev_t)q->dev,
		.st_ino = (ino_t)q->ino,
		.st_mode = (mode_t)q->mode,
		.st_uid = (uid_t)q->uid,
		.st_gid = (gid_t)q->gid,
		.st_size = (off_t)q->size,
	};
	uint8_t ima[1100];
	ssize_t n;
	int r;

	bool lie = false;

	memset(p, 0, sizeof(*p));
	p->magic = VD_MAGIC_REP;
	p->id = q->id;
#ifdef VIGILD_TEST_HOOKS
	lie = test_hook(fd);
#endif
	if (!a->uuid_given && a->cfg.fsuuid && uuid_for(a, fd, st.st_dev, o.uuid) == 0)
		o.uuid_mode = VG_UUID_GIVEN;
	if (q->flags & VD_APPRAISE) {
		o.require_sig = q->flags & VD_REQUIRE_SIG;
		o.allowed_algos = q->allowed_algos;
		r = vg_appraise_file(a->h, fd, &st, &o, &res, &d);
		if (r == 0 && res.status != VG_ST_PASS && (q->flags & VD_FIX) && fixable(&res)) {
			r = fix_values(a, fd, &o, p, &d);
			if (r == 0)
				return lie;	/* the monitor writes them and asks again */
		}
		if (r < 0) {
			p->err = r;
			snprintf(p->detail, sizeof(p->detail), "%s", d.msg);
			return lie;
		}
		p->appraised = 1;
		p->status = res.status;
		if (res.cause)
			snprintf(p->cause, sizeof(p->cause), "%s", res.cause);
		if (res.status != VG_ST_PASS)
			snprintf(p->detail, sizeof(p->detail), "%s", res.detail.msg);
		if (res.content_hashed) {
			p->digest_algo = res.digest.algo;
			p->digest_len = res.digest.len;
			memcpy(p->digest, res.digest.bytes, res.digest.len);
			p->size = res.size;
		}
	}
	if (!p->digest_len) {	/* measurement only, or appraisal stopped before hashing */
		struct vg_digest dg;

		if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
			p->err = -errno;
			snprintf(p->detail, sizeof(p->detail), "lseek: %s", strerror(errno));
			return lie;
		}
		r = vg_hasher_fd(a->h, fd, q->algo, &dg, &p->size, &d);
		if (r < 0) {
			p->err = r;
			snprintf(p->detail, sizeof(p->detail), "%s", d.msg);
			return lie;
		}
		p->digest_algo = dg.algo;
		p->digest_len = dg.len;
		memcpy(p->digest, dg.bytes, dg.len);
	}
	/*
	 * The signature, for an ima-sig measurement: read when there is one
	 * (an appraisal saw its type) or when nothing was appraised. A hash
	 * label needs no second read.
	 */
	n = p->appraised && res.ima_type != 3 ? 0 : fgetxattr(fd, VG_XATTR_IMA, ima, sizeof(ima));
	if (n > 0 && ima[0] == 3 && (size_t)n <= sizeof(p->sig)) {
		p->siglen = (uint16_t)n;
		memcpy(p->sig, ima, (size_t)n);
	}
	return lie;
}

static int recv_req(int sock, struct vd_req *q, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = q, .iov_len = sizeof(*q) };
	struct msghdr m = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do {
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*q) || q->magic != VD_MAGIC_REQ)
		return -EBADMSG;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EBADMSG;
	memcpy(fd, CMSG_DATA(c), sizeof(int));
	return 1;
}

int vd_worker_main(int sock, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keyring", required_argument, NULL, 'k' },
		{ "evm-xattr", required_argument, NULL, 'x' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "no-uuid", no_argument, NULL, 'N' },
		{ "algo", required_argument, NULL, 'a' },
		{ "fix", no_argument, NULL, 'F' },
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'g' },
		{ 0 },
	};
	struct appraiser *a = calloc(1, sizeof(*a));
	pid_t monitor = getppid();
	struct vd_init init;
	struct vg_diag d = { 0 };
	int c;

	vlog_init("vigild appraiser");	/* "vigild appraiser: MESSAGE", or the journal's prefix */
	if (!a || vg_keyring_new(&a->kr) < 0 || vg_hasher_new(&a->h) < 0)
		die("out of memory");
	vg_evm_config_default(&a->cfg);
	a->algo = VG_HASH_SHA256;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (vg_keyring_add_file(a->kr, optarg, &d) < 0) {
				vlog_err("keyring %s", d.msg);
				exit(2);
			}
			break;
		case 'x':
			c = vg_evm_config_add(&a->cfg, optarg);
			if (c == -EEXIST)
				c = vg_evm_config_enable(&a->cfg, optarg, true);
			if (c < 0)
				die("bad --evm-xattr");
			break;
		case 'U':
			if (vg_uuid_parse(optarg, a->o.uuid) < 0)
				die("bad --uuid");
			a->o.uuid_mode = VG_UUID_GIVEN;
			a->uuid_given = true;
			break;
		case 'N':
			a->cfg.fsuuid = false;
			break;
		case 'a':
			if (vg_hash_by_name(optarg) < 0)
				die("bad --algo");
			a->algo = (unsigned int)vg_hash_by_name(optarg);
			break;
		case 'F':	/* fix mode: the monitor sends VD_FIX; nothing to hold here */
			break;
		case 'u':
			a->uid = (uid_t)strtoul(optarg, NULL, 10);
			a->have_ids = true;
			break;
		case 'g':
			a->gid = (gid_t)strtoul(optarg, NULL, 10);
			break;
		default:
			die("bad option");
		}
	}
	if (read(sock, &init, sizeof(init)) != (ssize_t)sizeof(init) || init.magic != VD_MAGIC_INIT ||
	    init.keylen > sizeof(a->key))
		die("bad init message");
	memcpy(a->key, init.key, init.keylen);
	a->keylen = init.keylen;
	OPENSSL_cleanse(&init, sizeof(init));
	a->o.evm = &a->cfg;
	a->o.ima_keys = a->kr;
	a->o.evm_keys = a->kr;
	a->o.default_algo = a->algo;
	if (a->keylen) {
		a->o.hmac_key = a->key;
		a->o.hmac_key_len = a->keylen;
	}
	if (!a->have_ids)
		die("no --uid: the monitor names the appraiser user");
	if (sock != VD_APPRAISER_SOCK_FD || fcntl(VD_APPRAISER_GROUP_FD, F_GETFD) < 0)
		die("started without the monitor's descriptors (socket 3, group 4)");
#ifdef VIGILD_TEST_HOOKS
	{
		const char *f = getenv("VIGILD_TEST_APPRAISER_FAIL");

		if (f && *f && access(f, F_OK) == 0)
			die("test hook: failing at start");
	}
#endif
	{
		char msg[512];
		struct vd_hello hello = { .magic = VD_MAGIC_HELLO, .pid = (uint32_t)getpid() };

		if (vd_sandbox_enter(a->uid, a->gid, msg, sizeof(msg)) < 0)
			die(msg);
		/*
		 * Die with the monitor: this process holds a copy of the group,
		 * and the kernel allows the pending accesses (rather than leave
		 * every opener waiting) only once its last descriptor is closed.
		 * Set after the change of user, which clears it.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != monitor)
			die("the monitor is gone");
		if (write(sock, &hello, sizeof(hello)) != (ssize_t)sizeof(hello))
			die("cannot greet the monitor");
	}
	for (;;) {
		struct vd_req q;
		struct vd_rep p;
		int fd, r = recv_req(sock, &q, &fd);

		if (r <= 0) {
			if (fd >= 0)
				close(fd);
			break;
		}
		/* the test hook LIE: an allow for a file that did not pass */
		bool lie = handle(a, &q, fd, &p);
		bool pass = !p.err && p.appraised && !p.fix_ima_len && vd_status_pass(p.status);

		/*
		 * A clean pass the monitor let this process answer: the allow
		 * goes to the kernel now, and the opener goes on without waiting
		 * for the monitor to wake up (vigild.h, VD_ANSWER).
		 */
		if ((q.flags & VD_ANSWER) && q.answer_fd >= 0 && (pass || lie) &&
		    vd_fan_answer(VD_APPRAISER_GROUP_FD, q.answer_fd, true) == 0)
			p.answered = 1;
		ssize_t sent = write(sock, &p, sizeof(p));

		close(fd);	/* after the reply: the monitor hears first */
		if (sent != (ssize_t)sizeof(p))
			break;
	}
	OPENSSL_cleanse(a->key, sizeof(a->key));
	vg_hasher_free(a->h);
	vg_keyring_free(a->kr);
	free(a);
	return 0;
}
