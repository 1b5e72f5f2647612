// SPDX-License-Identifier: MIT
/*
 * appraise.c - one file's appraisal as the kernel decides it, and writing
 * the labels. The order of checks and the cause strings follow
 * ima_appraise_measurement(), xattr_verify() and evm_verify_hmac(); the
 * comments name the kernel branch each step mirrors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "evm_internal.h"
#include "vigil/appraise.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"
#include "vigil/xattr_evm.h"
#include "vigil/xattr_ima.h"

#define SMALL_XATTR 2048

const char *vg_status_name(enum vg_status st)
{
	static const char *const names[] = {
		[VG_ST_PASS] = "pass", [VG_ST_PASS_IMMUTABLE] = "pass_immutable",
		[VG_ST_FAIL] = "fail", [VG_ST_FAIL_IMMUTABLE] = "fail_immutable",
		[VG_ST_NOLABEL] = "no_label", [VG_ST_NOXATTRS] = "no_xattrs",
		[VG_ST_UNKNOWN] = "unknown",
	};

	return (unsigned int)st < VG_ARRAY_SIZE(names) ? names[st] : "?";
}

/*
 * Read xattr @name into @small, or into a heap buffer returned in *@big.
 * Return: length, or -errno.
 */
static ssize_t get_xattr(int fd, const char *name, uint8_t *small, size_t cap, uint8_t **big)
{
	ssize_t n = fgetxattr(fd, name, small, cap);

	*big = NULL;
	while (n < 0 && errno == ERANGE) {
		n = fgetxattr(fd, name, NULL, 0);
		if (n < 0)
			break;
		free(*big);
		*big = malloc((size_t)n + 1);
		if (!*big)
			return -ENOMEM;
		n = fgetxattr(fd, name, *big, (size_t)n + 1);
	}
	return n < 0 ? -errno : n;
}

static int meta_for(struct vg_hasher *h, int fd, const struct stat *st,
		    const struct vg_evm_config *cfg, uint8_t type,
		    enum vg_uuid_mode mode, const uint8_t uuid[16], const struct vg_meta_override *ov,
		    struct vg_evm_meta *m, struct vg_diag *diag)
{
	bool need_uuid = cfg->fsuuid && type != VG_EVM_XATTR_PORTABLE_DIGSIG;
	bool from_fs = need_uuid && mode == VG_UUID_FROM_FS;
	int r = st ? vg__evm_meta_from_stat(h, fd, st, from_fs, m, diag) :
		     vg_evm_meta_from_fd(fd, from_fs, m, diag);

	if (r < 0) {
		if (r == -ENODATA)
			return vg_diag_set(diag, -EDESTADDRREQ,
					   "%s; give --uuid UUID, or --no-uuid for a kernel without EVM_ATTR_FSUUID",
					   diag ? diag->msg : "filesystem UUID unknown");
		return r;
	}
	if (need_uuid && mode == VG_UUID_GIVEN) {
		memcpy(m->uuid, uuid, 16);
		m->has_uuid = true;
	}
	if (ov->ino_set)
		m->ino = ov->ino;
	if (ov->gen_set)
		m->generation = ov->gen;
	return 0;
}

/*
 * evm_verify_hmac(): judge security.ima (value @ima) and the rest of the
 * protected metadata. Return: 0 with ret->evm_status set, or an
 * operational error.
 */
static int evm_check(struct vg_hasher *h, int fd, const struct stat *st,
		     const struct vg_appraise_opts *o, const uint8_t *ima, size_t ilen,
		     struct vg_appraise_result *ret, struct vg_diag *diag)
{
	const struct vg_evm_config *cfg = o->evm;
	bool loaded = o->hmac_key || o->evm_required, listed = false;
	uint8_t small[SMALL_XATTR], *big = NULL;
	const uint8_t *ev = small;
	struct vg_evm_xattrs local, *xs = h ? vg__evm_scratch_xattrs(h) : NULL;
	struct vg_evm_meta meta;
	struct vg_digest d;
	struct vg_evm_xattr ex;
	ssize_t elen = -ENODATA;
	bool imm;
	int r, present;

	ret->evm_status = VG_ST_UNKNOWN;
	if (vg_evm_config_index(cfg, VG_XATTR_IMA) < 0)
		return 0;	/* security.ima not protected: evm_verifyxattr says UNKNOWN */

	vg_evm_xattrs_init(&local);
	if (!xs)
		xs = &local;	/* no hasher, or its scratch could not be allocated */
	/* the kernel hashes the security.ima value it was handed */
	r = vg__evm_xattrs_scan(fd, cfg, xs, VG_XATTR_IMA, ima, ilen, &listed, diag);
	if (r == -EOPNOTSUPP)
		goto out_ok;
	if (r < 0)
		goto out;
	present = r;
	if (listed) {
		elen = get_xattr(fd, VG_XATTR_EVM, small, sizeof(small), &big);
		ev = big ? big : small;
	}
	if (elen == -ENODATA) {
		if (!loaded)
			goto out_ok;
		ret->evm_status = present > 0 ? VG_ST_NOLABEL : VG_ST_NOXATTRS;
		vg_diag_set(&ret->detail, -ENODATA, "no security.evm");
		goto out_ok;
	}
	if (elen == -EOPNOTSUPP)
		goto out_ok;
	if (elen < 0) {
		r = vg_diag_set(diag, (int)elen, "getxattr security.evm: %s", strerror((int)-elen));
		goto out;
	}
	if (elen == 0) {
		ret->evm_status = VG_ST_FAIL;
		vg_diag_set(&ret->detail, -EBADMSG, "security.evm is empty");
		goto out_ok;
	}

	if (ev[0] == VG_EVM_XATTR_HMAC && !o->hmac_key) {
		ret->hmac_unchecked = true;
		goto out_ok;
	}
	r = vg_evm_xattr_decode(ev, (size_t)elen, &ex, &ret->detail);
	if (r < 0) {
		/*
		 * evm_verify_hmac(): a signature too short for its header fails
		 * before the portable form is known; a portable one that does
		 * not decode fails as immutable.
		 */
		ret->evm_status = ev[0] == VG_EVM_XATTR_PORTABLE_DIGSIG &&
				  (size_t)elen > VG_SIG_V2_HDR_LEN ? VG_ST_FAIL_IMMUTABLE : VG_ST_FAIL;
		goto out_ok;
	}

	if (ex.type == VG_EVM_XATTR_HMAC) {
		r = meta_for(h, fd, st, cfg, ex.type, o->uuid_mode, o->uuid, &o->meta, &meta, diag);
		if (r < 0)
			goto out;
		r = vg__evm_digest(h, cfg, xs, &meta, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, o->hmac_key,
				   o->hmac_key_len, &d, &ret->detail);
		if (r == -ENODATA) {
			ret->evm_status = VG_ST_NOXATTRS;
		} else if (r < 0) {
			goto out;
		} else if (CRYPTO_memcmp(ex.hmac, d.bytes, 20) != 0) {
			ret->evm_status = VG_ST_FAIL;
			vg_diag_set(&ret->detail, -EKEYREJECTED,
				    "security.evm HMAC does not match the file's metadata");
		} else {
			ret->evm_status = VG_ST_PASS;
		}
		goto out_ok;
	}

	/* 03 or 05: the decoder admits nothing else */
	imm = ex.type == VG_EVM_XATTR_PORTABLE_DIGSIG;
	ret->keyid = ex.sig.keyid;
	r = meta_for(h, fd, st, cfg, ex.type, o->uuid_mode, o->uuid, &o->meta, &meta, diag);
	if (r < 0)
		goto out;
	r = vg_evm_digest(cfg, xs, &meta, ex.type, ex.sig.hash_algo, NULL, 0, &d, &ret->detail);
	if (r == -ENODATA) {
		ret->evm_status = VG_ST_NOXATTRS;
		goto out_ok;
	}
	if (r == -ENOMEM)
		goto out;
	if (r == 0)
		r = vg_sig_verify(o->evm_keys, ev, (size_t)elen, &d, &ret->detail);
	if (r == 0)
		ret->evm_status = imm ? VG_ST_PASS_IMMUTABLE : VG_ST_PASS;
	else
		ret->evm_status = imm ? VG_ST_FAIL_IMMUTABLE : VG_ST_FAIL;
	if (r == -ENOKEY)
		ret->cause = "unknown-key";
out_ok:
	r = 0;
out:
	vg_evm_xattrs_release(&local);
	free(big);
	return r;
}

static void fail(struct vg_appraise_result *ret, enum vg_status st, const char *cause)
{
	ret->status = st;
	if (!ret->cause)
		ret->cause = cause;
}

/* xattr_verify(): the value of security.ima against the content digest. */
static void ima_check(const struct vg_appraise_opts *o, const uint8_t *ima, size_t ilen,
		      const struct vg_ima_xattr *x, const struct vg_keyring *kr,
		      struct vg_appraise_result *ret)
{
	const struct vg_digest *d = &ret->digest;
	int r;

	switch (x->type) {
	case VG_IMA_XATTR_DIGEST:
	case VG_IMA_XATTR_DIGEST_NG:
		/* a hash satisfies "imasig" only under a portable EVM signature */
		if (o->require_sig && ret->evm_status != VG_ST_PASS_IMMUTABLE)
			return fail(ret, VG_ST_FAIL, "IMA-signature-required");
		if (x->digest_len < d->len || memcmp(x->digest, d->bytes, d->len) != 0) {
			vg_diag_set(&ret->detail, -EKEYREJECTED,
				    "content %s digest differs from security.ima", vg_hash_name(d->algo));
			return fail(ret, VG_ST_FAIL, "invalid-hash");
		}
		ret->status = VG_ST_PASS;
		return;
	case VG_EVM_IMA_XATTR_DIGSIG:
		if (x->sig.version >= 3)
			return fail(ret, VG_ST_FAIL, "invalid-signature-version");
		r = vg_sig_verify(kr, ima, ilen, d, &ret->detail);
		if (r == -EOPNOTSUPP)
			return fail(ret, VG_ST_UNKNOWN, "unsupported-signature");
		if (r == -ENOKEY)
			return fail(ret, VG_ST_FAIL, "unknown-key");
		if (r < 0)
			return fail(ret, VG_ST_FAIL, "invalid-signature");
		ret->status = VG_ST_PASS;
		return;
	case VG_IMA_VERITY_DIGSIG: {
		/* calc_file_id_hash() over the digest this rule collected */
		uint8_t id[2 + VG_HASH_MAX_DIGEST];
		struct vg_digest fid;

		if (x->sig.version != 3)
			return fail(ret, VG_ST_FAIL, "invalid-signature-version");
		id[0] = VG_IMA_VERITY_DIGSIG;
		id[1] = d->algo;
		memcpy(id + 2, d->bytes, d->len);
		if (vg_hash_buf(d->algo, id, 2 + (size_t)d->len, &fid, &ret->detail) < 0)
			return fail(ret, VG_ST_FAIL, "sigv3-hashing-error");
		r = vg__sig_verify_version(kr, ima, ilen, &fid, 3, &ret->detail);
		if (r == -ENOKEY)
			return fail(ret, VG_ST_FAIL, "unknown-key");
		if (r < 0)
			return fail(ret, VG_ST_FAIL, "invalid-verity-signature");
		ret->status = VG_ST_PASS;
		return;
	}
	}
}

int vg_appraise_fd(struct vg_hasher *h, int fd, const struct vg_appraise_opts *o,
		   struct vg_appraise_result *ret, struct vg_diag *diag)
{
	return vg_appraise_file(h, fd, NULL, o, ret, diag);
}

int vg_appraise_file(struct vg_hasher *h, int fd, const struct stat *st,
		     const struct vg_appraise_opts *o, struct vg_appraise_result *ret,
		     struct vg_diag *diag)
{
	uint8_t small[SMALL_XATTR], *big = NULL;
	const uint8_t *ima;
	struct vg_ima_xattr x;
	unsigned int algo;
	ssize_t ilen;
	int r, dr;

	memset(ret, 0, sizeof(*ret));
	ret->status = VG_ST_UNKNOWN;
	ret->evm_status = VG_ST_UNKNOWN;

	ilen = get_xattr(fd, VG_XATTR_IMA, small, sizeof(small), &big);
	ima = big ? big : small;
	if (ilen == -ENODATA || ilen == 0) {
		/* "If reading the xattr failed and there's no modsig" */
		ret->status = VG_ST_NOLABEL;
		ret->cause = o->require_sig ? "IMA-signature-required" : "missing-hash";
		vg_diag_set(&ret->detail, -ENODATA, "no security.ima");
		r = 0;
		goto out;
	}
	if (ilen == -EOPNOTSUPP) {
		ret->status = VG_ST_UNKNOWN;
		ret->cause = "xattrs-unsupported";
		vg_diag_set(&ret->detail, -EOPNOTSUPP, "filesystem has no extended attributes");
		r = 0;
		goto out;
	}
	if (ilen < 0) {
		r = vg_diag_set(diag, (int)ilen, "getxattr security.ima: %s", strerror((int)-ilen));
		goto out;
	}
	ret->ima_type = ima[0];

	r = evm_check(h, fd, st, o, ima, (size_t)ilen, ret, diag);
	if (r < 0)
		goto out;
	switch (ret->evm_status) {
	case VG_ST_PASS:
	case VG_ST_PASS_IMMUTABLE:
	case VG_ST_UNKNOWN:
		break;
	case VG_ST_NOXATTRS:
	case VG_ST_NOLABEL:
		fail(ret, ret->evm_status, "missing-HMAC");
		goto out;
	case VG_ST_FAIL_IMMUTABLE:
		fail(ret, VG_ST_FAIL_IMMUTABLE, "invalid-fail-immutable");
		goto out;
	case VG_ST_FAIL:
		fail(ret, VG_ST_FAIL, "invalid-HMAC");
		goto out;
	}
	ret->cause = NULL;	/* an EVM refinement only speaks for an EVM failure */

	dr = vg_ima_xattr_decode(ima, (size_t)ilen, &x, &ret->detail);
	if (dr == -EOPNOTSUPP && (ima[0] < 1 || ima[0] > 6)) {
		fail(ret, VG_ST_UNKNOWN, "unknown-ima-data");
		goto out;
	}
	if (dr < 0) {
		/* a malformed value cannot match anything the kernel computes */
		switch (ima[0]) {
		case VG_IMA_XATTR_DIGEST:
		case VG_IMA_XATTR_DIGEST_NG:
			fail(ret, VG_ST_FAIL, "invalid-hash");
			break;
		case VG_EVM_IMA_XATTR_DIGSIG:
			fail(ret, VG_ST_FAIL, "invalid-signature");
			break;
		case VG_IMA_VERITY_DIGSIG:
			fail(ret, VG_ST_FAIL, "invalid-verity-signature");
			break;
		default:
			fail(ret, VG_ST_UNKNOWN, "unknown-ima-data");
		}
		goto out;
	}
	if (x.type == VG_EVM_IMA_XATTR_DIGSIG || x.type == VG_IMA_VERITY_DIGSIG)
		ret->keyid = x.sig.keyid;

	algo = x.algo;
	if (!vg_hasher_md(h, algo) && vg__md_known(algo)) {
		r = vg_diag_set(diag, -ENOMEM, "out of memory fetching %s", vg_hash_name(algo));
		goto out;
	}
	if (!vg_hasher_md(h, algo)) {
		vg_diag_set(&ret->detail, -EOPNOTSUPP, "hash algorithm %s is not available",
			    vg_hash_name(algo));
		fail(ret, VG_ST_FAIL, "unsupported-hash-algo");
		goto out;
	}
	if (o->metadata_only) {
		/* EVM vouched for the metadata and the label; content unchecked */
		ret->status = VG_ST_PASS;
		goto out;
	}
	r = vg_hasher_file(h, fd, st, algo, &ret->digest, &ret->size, diag);
	if (r < 0)
		goto out;
	ret->content_hashed = true;

	ima_check(o, ima, (size_t)ilen, &x, o->ima_keys, ret);
	if (ret->status == VG_ST_PASS && o->allowed_algos &&
	    !(o->allowed_algos & (1u << algo)))
		fail(ret, VG_ST_FAIL, "denied-hash-algorithm");
out:
	if (ret->status == VG_ST_PASS)
		ret->cause = NULL;
	free(big);
	return r;
}

int vg_label_ima_fd(struct vg_hasher *h, int fd, unsigned int algo,
		    const struct vg_signer *signer, struct vg_digest *ret_digest,
		    struct vg_diag *diag)
{
	uint8_t val[VG_SIG_V2_HDR_LEN + VG_SIG_MAX];
	struct vg_digest d;
	int len, r;

	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
		return vg_diag_set(diag, -errno, "lseek: %s", strerror(errno));
	r = vg_hasher_fd(h, fd, algo, &d, NULL, diag);
	if (r < 0)
		return r;
	if (signer)
		len = vg_sig_sign(signer, VG_EVM_IMA_XATTR_DIGSIG, &d, val, sizeof(val), diag);
	else
		len = vg_ima_xattr_encode_digest(&d, val, sizeof(val));
	if (len < 0)
		return vg_diag_set(diag, len, "cannot encode security.ima");
	if (fsetxattr(fd, VG_XATTR_IMA, val, (size_t)len, 0) < 0)
		return vg_diag_set(diag, -errno, "setxattr security.ima: %s", strerror(errno));
	if (ret_digest)
		*ret_digest = d;
	return 0;
}

static int evm_value(struct vg_hasher *h, const struct vg_evm_label_opts *o,
		     const struct vg_evm_xattrs *xs, const struct vg_evm_meta *meta, uint8_t *out,
		     size_t cap, struct vg_diag *diag)
{
	struct vg_digest d;
	int r;

	if (o->type == VG_EVM_XATTR_HMAC) {
		r = vg__evm_digest(h, o->evm, xs, meta, o->type, VG_HASH_SHA1, o->hmac_key,
				   o->hmac_key_len, &d, diag);
		if (r < 0)
			return r;
		if (cap < VG_EVM_HMAC_LEN)
			return -ENOBUFS;
		out[0] = VG_EVM_XATTR_HMAC;
		memcpy(out + 1, d.bytes, 20);
		OPENSSL_cleanse(&d, sizeof(d));
		return VG_EVM_HMAC_LEN;
	}
	if (o->type != VG_EVM_IMA_XATTR_DIGSIG && o->type != VG_EVM_XATTR_PORTABLE_DIGSIG)
		return vg_diag_set(diag, -EINVAL, "security.evm type 0x%02x cannot be made", o->type);
	if (!o->signer)
		return vg_diag_set(diag, -ENOKEY, "an EVM signature needs a signing key");
	r = vg_evm_digest(o->evm, xs, meta, o->type, o->algo, NULL, 0, &d, diag);
	if (r < 0)
		return r;
	return vg_sig_sign(o->signer, o->type, &d, out, cap, diag);
}

int vg_evm_value(const struct vg_evm_label_opts *o, const struct vg_evm_xattrs *xs,
		 const struct vg_evm_meta *meta, uint8_t *out, size_t cap, struct vg_diag *diag)
{
	return evm_value(NULL, o, xs, meta, out, cap, diag);
}

static bool same_content_stamp(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* @name = @val unless the file's value (@cur, @cur_len; NULL: absent) is already that */
static int put_label(int fd, const char *name, const uint8_t *val, size_t len,
		     const uint8_t *cur, size_t cur_len, bool *written, struct vg_diag *diag)
{
	*written = false;
	if (cur && cur_len == len && memcmp(cur, val, len) == 0)
		return 0;
	if (fsetxattr(fd, name, val, len, 0) < 0)
		return vg_diag_set(diag, -errno, "setxattr %s: %s", name, strerror(errno));
	*written = true;
	return 0;
}

int vg_label_file(struct vg_hasher *h, int fd, const struct stat *st, unsigned int algo,
		  const struct vg_signer *signer, const struct vg_evm_label_opts *evm,
		  struct vg_label_result *res, struct vg_diag *diag)
{
	return vg_label_file_if(h, fd, st, algo, signer, evm, NULL, res, diag);
}

int vg_label_file_if(struct vg_hasher *h, int fd, const struct stat *st, unsigned int algo,
		     const struct vg_signer *signer, const struct vg_evm_label_opts *evm,
		     const struct vg_label_gate *gate, struct vg_label_result *res,
		     struct vg_diag *diag)
{
	uint8_t val[VG_SIG_V2_HDR_LEN + VG_SIG_MAX], ev[VG_SIG_V2_HDR_LEN + VG_SIG_MAX];
	uint8_t cur[VG_SIG_V2_HDR_LEN + VG_SIG_MAX];
	struct vg_evm_xattrs *xs = vg__evm_scratch_xattrs(h);
	const uint8_t *old = NULL;
	struct vg_evm_meta meta;
	struct vg_digest d;
	struct stat own, after;
	bool evm_listed = false;
	size_t old_len = 0;
	ssize_t got = -1;
	int len, r;

	memset(res, 0, sizeof(*res));
	if (!xs)
		return -ENOMEM;
	if (!st) {
		if (fstat(fd, &own) < 0)
			return vg_diag_set(diag, -errno, "fstat: %s", strerror(errno));
		st = &own;
	}
	if (evm) {
		/* what is there: the protected xattrs, the old security.ima among them */
		r = vg__evm_xattrs_scan(fd, evm->evm, xs, NULL, NULL, 0, &evm_listed, diag);
		if (r == -EOPNOTSUPP)
			return vg_diag_set(diag, r, "setxattr %s: %s", VG_XATTR_IMA, strerror(-r));
		if (r < 0)
			return r;
		old = vg_evm_xattrs_get(xs, evm->evm, VG_XATTR_IMA, &old_len);
	}
	r = vg_hasher_file(h, fd, st, algo, &d, NULL, diag);
	if (r < 0)
		return r;
	if (fstat(fd, &after) < 0)
		return vg_diag_set(diag, -errno, "fstat: %s", strerror(errno));
	if (!same_content_stamp(st, &after))
		return vg_diag_set(diag, -ESTALE, "the file changed while it was hashed");
	if (gate) {
		r = gate->check(gate->arg, &d);
		if (r < 0)
			return vg_diag_set(diag, r, "checking the digest: %s", strerror(-r));
		if (r == 0)
			return VG_LABEL_REFUSED;
	}
	if (signer)
		len = vg_sig_sign(signer, VG_EVM_IMA_XATTR_DIGSIG, &d, val, sizeof(val), diag);
	else
		len = vg_ima_xattr_encode_digest(&d, val, sizeof(val));
	if (len < 0)
		return vg_diag_set(diag, len, "cannot encode security.ima");
	r = put_label(fd, VG_XATTR_IMA, val, (size_t)len, old, old_len, &res->ima_written, diag);
	if (r < 0)
		return r;
	res->ima_done = true;
	if (!evm)
		return 0;

	r = vg_evm_xattrs_set(xs, evm->evm, VG_XATTR_IMA, val, (size_t)len);
	if (r < 0 && r != -ENOENT)
		return vg_diag_set(diag, r, "security.ima: %s", strerror(-r));
	r = meta_for(h, fd, &after, evm->evm, evm->type, evm->uuid_mode, evm->uuid, &evm->meta, &meta,
		     diag);
	if (r < 0)
		return r;
	len = evm_value(h, evm, xs, &meta, ev, sizeof(ev), diag);
	if (len < 0)
		return len;
	if (evm_listed)
		got = fgetxattr(fd, VG_XATTR_EVM, cur, sizeof(cur));
	r = put_label(fd, VG_XATTR_EVM, ev, (size_t)len, got >= 0 ? cur : NULL,
		      got >= 0 ? (size_t)got : 0, &res->evm_written, diag);
	OPENSSL_cleanse(ev, sizeof(ev));
	return r;
}

int vg_label_evm_fd(int fd, const struct vg_evm_label_opts *o, struct vg_diag *diag)
{
	uint8_t val[VG_SIG_V2_HDR_LEN + VG_SIG_MAX];
	struct vg_evm_xattrs xs;
	struct vg_evm_meta meta;
	int len, r;

	vg_evm_xattrs_init(&xs);
	r = meta_for(NULL, fd, NULL, o->evm, o->type, o->uuid_mode, o->uuid, &o->meta, &meta, diag);
	if (r < 0)
		goto out;
	r = vg_evm_xattrs_read(fd, o->evm, &xs, diag);
	if (r < 0)
		goto out;
	len = vg_evm_value(o, &xs, &meta, val, sizeof(val), diag);
	if (len < 0) {
		r = len;
		goto out;
	}
	r = 0;
	if (fsetxattr(fd, VG_XATTR_EVM, val, (size_t)len, 0) < 0)
		r = vg_diag_set(diag, -errno, "setxattr security.evm: %s", strerror(errno));
	OPENSSL_cleanse(val, sizeof(val));
out:
	vg_evm_xattrs_release(&xs);
	return r;
}
