// SPDX-License-Identifier: MIT
/*
 * evm.c - EVM protected-xattr configuration, inode metadata, and the EVM
 * digest/HMAC. One routine (emit_input) walks the input in the kernel's
 * order and feeds a sink; the digest, the HMAC and vg_evm_input() differ
 * only in the sink, so they cannot disagree.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <linux/fs.h>

#include <blkid/blkid.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "evm_internal.h"
#include "vigil/evm.h"
#include "vigil/xattr_ima.h"

#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
	uint8_t len;
	uint8_t uuid[16];
};
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct fsuuid2)
#endif

void vg_evm_config_default(struct vg_evm_config *cfg)
{
	static const struct {
		const char *name;
		bool enabled;
	} def[] = {
		{ "security.selinux", true },
		{ "security.SMACK64", true },
		{ "security.SMACK64EXEC", false },
		{ "security.SMACK64TRANSMUTE", false },
		{ "security.SMACK64MMAP", false },
		{ "security.apparmor", true },
		{ "security.ima", true },
		{ "security.capability", true },
	};

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < VG_ARRAY_SIZE(def); i++) {
		strcpy(cfg->x[i].name, def[i].name);
		cfg->x[i].enabled = def[i].enabled;
	}
	cfg->n = VG_ARRAY_SIZE(def);
	cfg->fsuuid = true;
	cfg->hmisc32 = sizeof(unsigned long) == 4;
}

int vg_evm_config_index(const struct vg_evm_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n; i++)
		if (strcmp(cfg->x[i].name, name) == 0)
			return (int)i;
	return -1;
}

int vg_evm_config_add(struct vg_evm_config *cfg, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(name, "security.", 9) != 0 || len == 9 || len > VG_EVM_NAME_MAX)
		return -EINVAL;
	if (vg_evm_config_index(cfg, name) >= 0)
		return -EEXIST;
	if (cfg->n == VG_EVM_MAX_XATTRS)
		return -ENOSPC;
	memcpy(cfg->x[cfg->n].name, name, len + 1);
	cfg->x[cfg->n].enabled = true;
	cfg->n++;
	return 0;
}

int vg_evm_config_enable(struct vg_evm_config *cfg, const char *name, bool enabled)
{
	int i = vg_evm_config_index(cfg, name);

	if (i < 0)
		return -ENOENT;
	cfg->x[i].enabled = enabled;
	return 0;
}

int vg_uuid_parse(const char *s, uint8_t uuid[16])
{
	char hex[33];
	size_t n = 0;

	if (strlen(s) != 36)
		return -EINVAL;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash != (s[i] == '-'))
			return -EINVAL;
		if (!dash)
			hex[n++] = s[i];
	}
	hex[n] = '\0';
	return vg_hex_decode(hex, uuid, 16) == 16 ? 0 : -EINVAL;
}

int vg_fs_uuid(int fd, uint8_t uuid[16], struct vg_diag *diag)
{
	struct fsuuid2 u = { 0 };
	struct stat st;
	char *dev, *val;
	int r;

	if (ioctl(fd, FS_IOC_GETFSUUID, &u) == 0 && u.len == 16) {
		memcpy(uuid, u.uuid, 16);
		return 0;
	}
	if (fstat(fd, &st) < 0)
		return vg_diag_set(diag, -errno, "fstat: %s", strerror(errno));
	dev = blkid_devno_to_devname(st.st_dev);
	if (!dev)
		return vg_diag_set(diag, -ENODATA,
				   "filesystem on device %u:%u has no UUID the kernel reports and no block device to read one from",
				   major(st.st_dev), minor(st.st_dev));
	val = blkid_get_tag_value(NULL, "UUID", dev);
	r = val ? vg_uuid_parse(val, uuid) : -ENODATA;
	if (r < 0)
		vg_diag_set(diag, -ENODATA, "no filesystem UUID readable from %s", dev);
	free(val);
	free(dev);
	return r < 0 ? -ENODATA : 0;
}

int vg__evm_meta_from_stat(struct vg_hasher *h, int fd, const struct stat *st, bool want_uuid,
			   struct vg_evm_meta *ret, struct vg_diag *diag)
{
	struct vg_evm_meta m = { 0 };
	unsigned int gen = 0;
	int r;

	m.ino = st->st_ino;
	m.uid = st->st_uid;
	m.gid = st->st_gid;
	m.mode = (uint16_t)st->st_mode;
	if (!h || !vg__hasher_nogen(h, st->st_dev)) {
		if (ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
			m.generation = gen;
			m.generation_known = true;
		} else if (h && (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL)) {
			vg__hasher_set_nogen(h, st->st_dev);
		}
	}
	if (want_uuid) {
		r = vg_fs_uuid(fd, m.uuid, diag);
		if (r < 0)
			return r;
		m.has_uuid = true;
	}
	*ret = m;
	return 0;
}

int vg_evm_meta_from_fd(int fd, bool want_uuid, struct vg_evm_meta *ret, struct vg_diag *diag)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return vg_diag_set(diag, -errno, "fstat: %s", strerror(errno));
	return vg__evm_meta_from_stat(NULL, fd, &st, want_uuid, ret, diag);
}

void vg_evm_xattrs_init(struct vg_evm_xattrs *xs)
{
	memset(xs, 0, sizeof(*xs));
	for (size_t i = 0; i < VG_EVM_MAX_XATTRS; i++)
		xs->len[i] = -1;
}

void vg_evm_xattrs_release(struct vg_evm_xattrs *xs)
{
	free(xs->buf);
	vg_evm_xattrs_init(xs);
}

static int reserve(struct vg_evm_xattrs *xs, size_t more)
{
	size_t cap = xs->cap ? xs->cap : 512;
	uint8_t *nb;

	if (xs->used + more <= xs->cap)
		return 0;
	while (cap < xs->used + more)
		cap *= 2;
	nb = realloc(xs->buf, cap);
	if (!nb)
		return -ENOMEM;
	xs->buf = nb;
	xs->cap = cap;
	return 0;
}

static bool name_listed(const char *list, size_t len, const char *name)
{
	for (size_t off = 0; off < len;) {
		const char *n = list + off;
		size_t l = strnlen(n, len - off);

		if (l == len - off)	/* not NUL-terminated: trust nothing */
			return true;
		if (strcmp(n, name) == 0)
			return true;
		off += l + 1;
	}
	return false;
}

int vg_evm_xattrs_read(int fd, const struct vg_evm_config *cfg, struct vg_evm_xattrs *xs,
		       struct vg_diag *diag)
{
	return vg__evm_xattrs_scan(fd, cfg, xs, NULL, NULL, 0, NULL, diag);
}

int vg__evm_xattrs_scan(int fd, const struct vg_evm_config *cfg, struct vg_evm_xattrs *xs,
			const char *name, const uint8_t *val, size_t len, bool *evm_listed,
			struct vg_diag *diag)
{
	char list[4096];
	ssize_t ll;
	int present = 0, given = name ? vg_evm_config_index(cfg, name) : -1;

	xs->used = 0;
	xs->n = cfg->n;
	/*
	 * One listxattr instead of a getxattr per protected name: most files
	 * carry two or three of them. A name missing from the list is absent,
	 * as it would be a moment later; a list too long for the buffer falls
	 * back to asking for every name.
	 */
	ll = flistxattr(fd, list, sizeof(list));
	if (ll < 0 && errno == EOPNOTSUPP)
		return vg_diag_set(diag, -EOPNOTSUPP, "filesystem has no extended attributes");
	if (evm_listed)
		*evm_listed = ll < 0 || name_listed(list, (size_t)ll, VG_XATTR_EVM);
	for (size_t i = 0; i < cfg->n; i++) {
		ssize_t got;

		if ((int)i == given)	/* the caller's value, set below */
			continue;
		xs->len[i] = -1;
		if (ll >= 0 && !name_listed(list, (size_t)ll, cfg->x[i].name))
			continue;
		for (;;) {
			size_t room;

			if (reserve(xs, 256) < 0)
				return -ENOMEM;
			room = xs->cap - xs->used;
			got = fgetxattr(fd, cfg->x[i].name, xs->buf + xs->used, room);
			if (got >= 0 || errno != ERANGE)
				break;
			/* Value larger than the room left: ask its size and retry. */
			got = fgetxattr(fd, cfg->x[i].name, NULL, 0);
			if (got < 0)
				break;
			if (reserve(xs, (size_t)got + 1) < 0)
				return -ENOMEM;
		}
		if (got < 0) {
			if (errno == ENODATA)
				continue;
			if (errno == EOPNOTSUPP)
				return vg_diag_set(diag, -EOPNOTSUPP, "filesystem has no extended attributes");
			return vg_diag_set(diag, -errno, "getxattr %s: %s", cfg->x[i].name,
					   strerror(errno));
		}
		xs->off[i] = xs->used;
		xs->len[i] = (int32_t)got;
		xs->used += (size_t)got;
		present++;
	}
	if (given >= 0) {
		xs->len[given] = -1;
		if (val) {
			int r = vg_evm_xattrs_set(xs, cfg, name, val, len);

			if (r < 0)
				return r;
			present++;
		}
	}
	return present;
}

int vg_evm_xattrs_set(struct vg_evm_xattrs *xs, const struct vg_evm_config *cfg,
		      const char *name, const uint8_t *val, size_t len)
{
	int i = vg_evm_config_index(cfg, name);

	if (i < 0)
		return -ENOENT;
	if (len > VG_XATTR_SIZE_MAX)
		return -E2BIG;
	xs->n = cfg->n;
	if (!val) {
		xs->len[i] = -1;
		return 0;
	}
	if (reserve(xs, len) < 0)
		return -ENOMEM;
	memcpy(xs->buf + xs->used, val, len);
	xs->off[i] = xs->used;
	xs->len[i] = (int32_t)len;
	xs->used += len;
	return 0;
}

const uint8_t *vg_evm_xattrs_get(const struct vg_evm_xattrs *xs, const struct vg_evm_config *cfg,
				 const char *name, size_t *len)
{
	int i = vg_evm_config_index(cfg, name);

	if (i < 0 || (size_t)i >= xs->n || xs->len[i] < 0)
		return NULL;
	*len = (size_t)xs->len[i];
	return xs->buf + xs->off[i];
}

/* Where the input goes: a digest, a MAC or a buffer. */
struct sink {
	EVP_MD_CTX *md;
	EVP_MAC_CTX *mac;
	uint8_t *out;
	size_t cap, len;
	bool failed;
};

static void put(struct sink *s, const void *p, size_t n)
{
	if (s->md && !EVP_DigestUpdate(s->md, p, n))
		s->failed = true;
	if (s->mac && !EVP_MAC_update(s->mac, p, n))
		s->failed = true;
	if (s->out && s->len < s->cap)
		memcpy(s->out + s->len, p, n < s->cap - s->len ? n : s->cap - s->len);
	s->len += n;
}

static void put_ne(struct sink *s, uint64_t v, size_t width)
{
	uint8_t b[8];

	/* native byte order, as the kernel hashes its struct */
	if (width == 8) {
		uint64_t x = v;

		memcpy(b, &x, 8);
	} else if (width == 4) {
		uint32_t x = (uint32_t)v;

		memcpy(b, &x, 4);
	} else {
		uint16_t x = (uint16_t)v;

		memcpy(b, &x, 2);
	}
	put(s, b, width);
}

static int emit_input(const struct vg_evm_config *cfg, const struct vg_evm_xattrs *xs,
		      const struct vg_evm_meta *meta, uint8_t type, struct sink *s,
		      struct vg_diag *diag)
{
	static const uint8_t pad[2];
	bool portable = type == VG_EVM_XATTR_PORTABLE_DIGSIG;
	bool any = false, ima = false;

	if (type != VG_EVM_XATTR_HMAC && type != VG_EVM_IMA_XATTR_DIGSIG && !portable)
		return vg_diag_set(diag, -EOPNOTSUPP, "security.evm type 0x%02x has no digest", type);
	if (!portable && cfg->fsuuid && !meta->has_uuid)
		return vg_diag_set(diag, -EDESTADDRREQ,
				   "the EVM digest includes the filesystem UUID, which is unknown");
	for (size_t i = 0; i < cfg->n && i < xs->n; i++) {
		if (!portable && !cfg->x[i].enabled)
			continue;
		if (xs->len[i] < 0)
			continue;
		put(s, xs->buf + xs->off[i], (size_t)xs->len[i]);
		any = true;
		if (strcmp(cfg->x[i].name, VG_XATTR_IMA) == 0)
			ima = true;
	}
	if (cfg->hmisc32) {
		put_ne(s, portable ? 0 : (uint32_t)meta->ino, 4);
		put_ne(s, portable ? 0 : meta->generation, 4);
	} else {
		put_ne(s, portable ? 0 : meta->ino, 8);
		put_ne(s, portable ? 0 : meta->generation, 4);
	}
	put_ne(s, meta->uid, 4);
	put_ne(s, meta->gid, 4);
	put_ne(s, meta->mode, 2);
	put(s, pad, 2);
	if (!portable && cfg->fsuuid)
		put(s, meta->uuid, 16);
	if (!any)
		return vg_diag_set(diag, -ENODATA, "no EVM-protected extended attribute is present");
	if (portable && !ima)
		return vg_diag_set(diag, -EPERM, "a portable EVM signature must cover security.ima");
	if (s->failed)
		return vg_diag_ssl(diag, -EIO, "EVM digest update");
	return 0;
}

int vg_evm_input(const struct vg_evm_config *cfg, const struct vg_evm_xattrs *xs,
		 const struct vg_evm_meta *meta, uint8_t type, uint8_t *out, size_t cap,
		 struct vg_diag *diag)
{
	struct sink s = { .out = out, .cap = cap };
	int r = emit_input(cfg, xs, meta, type, &s, diag);

	return r < 0 ? r : (int)s.len;
}

/*
 * The hasher's EVM scratch (vg__hasher_ext): an HMAC-SHA1 context keyed
 * once, restarted from its keyed inner state while the key stays the same,
 * and a reusable xattr buffer.
 */
struct evm_scratch {
	EVP_MAC_CTX *hmac;
	uint8_t hkey[VG_EVM_KEY_MAX];
	bool hkey_set;
	struct vg_evm_xattrs xs;
};

static void scratch_init(void *p)
{
	struct evm_scratch *sc = p;

	vg_evm_xattrs_init(&sc->xs);
}

static void scratch_release(void *p)
{
	struct evm_scratch *sc = p;

	EVP_MAC_CTX_free(sc->hmac);
	OPENSSL_cleanse(sc->hkey, sizeof(sc->hkey));
	vg_evm_xattrs_release(&sc->xs);
}

static struct evm_scratch *scratch_of(struct vg_hasher *h)
{
	return vg__hasher_ext(h, sizeof(struct evm_scratch), scratch_init, scratch_release);
}

struct vg_evm_xattrs *vg__evm_scratch_xattrs(struct vg_hasher *h)
{
	struct evm_scratch *sc = scratch_of(h);

	return sc ? &sc->xs : NULL;
}

/* the scratch's HMAC context, keyed with the 128-byte padded @key; NULL on failure */
static EVP_MAC_CTX *scratch_hmac(struct vg_hasher *h, const uint8_t key[VG_EVM_KEY_MAX])
{
	struct evm_scratch *sc = scratch_of(h);
	OSSL_PARAM params[2];
	EVP_MAC *mac;

	if (!sc)
		return NULL;
	if (sc->hmac && sc->hkey_set && CRYPTO_memcmp(sc->hkey, key, sizeof(sc->hkey)) == 0) {
		/* same key: restart from the keyed inner state, no re-keying */
		if (EVP_MAC_init(sc->hmac, NULL, 0, NULL))
			return sc->hmac;
	}
	sc->hkey_set = false;
	if (!sc->hmac) {
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		sc->hmac = mac ? EVP_MAC_CTX_new(mac) : NULL;
		EVP_MAC_free(mac);
		if (!sc->hmac)
			return NULL;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA1", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_init(sc->hmac, key, VG_EVM_KEY_MAX, params))
		return NULL;
	memcpy(sc->hkey, key, sizeof(sc->hkey));
	sc->hkey_set = true;
	return sc->hmac;
}

static int evm_hmac(struct vg_hasher *h, const struct vg_evm_config *cfg,
		    const struct vg_evm_xattrs *xs, const struct vg_evm_meta *meta,
		    const uint8_t *key, size_t keylen, struct vg_digest *ret, struct vg_diag *diag)
{
	uint8_t k[VG_EVM_KEY_MAX] = { 0 };
	EVP_MAC *mac = NULL;
	struct sink s = { 0 };
	OSSL_PARAM params[2];
	size_t outl = 0;
	int r;

	if (!key || keylen == 0 || keylen > VG_EVM_KEY_MAX)
		return vg_diag_set(diag, -ENOKEY, "an EVM HMAC needs a key of 1 to %d bytes",
				   VG_EVM_KEY_MAX);
	/* The kernel always keys with all 128 bytes: the key, zero-padded. */
	memcpy(k, key, keylen);
	if (h) {
		s.mac = scratch_hmac(h, k);
		if (!s.mac) {
			r = vg_diag_ssl(diag, -ENOMEM, "HMAC-SHA1 init");
			goto out;
		}
	} else {
		params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA1", 0);
		params[1] = OSSL_PARAM_construct_end();
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		s.mac = mac ? EVP_MAC_CTX_new(mac) : NULL;
		if (!s.mac || !EVP_MAC_init(s.mac, k, sizeof(k), params)) {
			r = vg_diag_ssl(diag, -ENOMEM, "HMAC-SHA1 init");
			goto out;
		}
	}
	r = emit_input(cfg, xs, meta, VG_EVM_XATTR_HMAC, &s, diag);
	if (r < 0)
		goto out;
	if (!EVP_MAC_final(s.mac, ret->bytes, &outl, sizeof(ret->bytes))) {
		r = vg_diag_ssl(diag, -EIO, "HMAC-SHA1 final");
		goto out;
	}
	ret->algo = VG_HASH_SHA1;
	ret->len = (uint8_t)outl;
out:
	OPENSSL_cleanse(k, sizeof(k));
	if (!h)
		EVP_MAC_CTX_free(s.mac);
	EVP_MAC_free(mac);
	return r;
}

int vg_evm_digest(const struct vg_evm_config *cfg, const struct vg_evm_xattrs *xs,
		  const struct vg_evm_meta *meta, uint8_t type, unsigned int algo,
		  const uint8_t *key, size_t keylen, struct vg_digest *ret,
		  struct vg_diag *diag)
{
	return vg__evm_digest(NULL, cfg, xs, meta, type, algo, key, keylen, ret, diag);
}

int vg__evm_digest(struct vg_hasher *h, const struct vg_evm_config *cfg,
		   const struct vg_evm_xattrs *xs, const struct vg_evm_meta *meta, uint8_t type,
		   unsigned int algo, const uint8_t *key, size_t keylen, struct vg_digest *ret,
		   struct vg_diag *diag)
{
	struct sink s = { 0 };
	EVP_MD *md;
	unsigned int n = 0;
	int r;

	if (type == VG_EVM_XATTR_HMAC)
		return evm_hmac(h, cfg, xs, meta, key, keylen, ret, diag);
	md = vg__md_fetch(algo);
	if (!md)
		return vg_diag_ssl(diag, -EOPNOTSUPP, "hash algorithm %s is not available",
				   vg_hash_name(algo) ? vg_hash_name(algo) : "(unknown)");
	s.md = EVP_MD_CTX_new();
	if (!s.md || !EVP_DigestInit_ex(s.md, md, NULL)) {
		r = vg_diag_ssl(diag, -ENOMEM, "digest init");
		goto out;
	}
	r = emit_input(cfg, xs, meta, type, &s, diag);
	if (r < 0)
		goto out;
	if (!EVP_DigestFinal_ex(s.md, ret->bytes, &n)) {
		r = vg_diag_ssl(diag, -EIO, "digest final");
		goto out;
	}
	ret->algo = (uint8_t)algo;
	ret->len = (uint8_t)n;
out:
	EVP_MD_CTX_free(s.md);
	EVP_MD_free(md);
	return r;
}
