// SPDX-License-Identifier: MIT
/*
 * hmac_key.c - EVM HMAC key files: raw keys, passphrase keys (scrypt) and
 * TPM-sealed keys (the format is in hmac_key.h). Reads of raw keys go
 * straight into the caller's key struct so no copy of the secret is left
 * elsewhere; derived and unsealed keys pass through wiped stack buffers
 * only. Key files are decoded field by field with bounds checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "vigil/fileio.h"
#include "vigil/hmac_key.h"
#include "vigil/outfile.h"
#include "internal.h"

int vg_hmac_key_load_raw(const char *path, struct vg_hmac_key *ret, struct vg_diag *diag)
{
	struct vg_hmac_key k = { 0 };
	uint8_t extra;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
	do
		n = read(fd, k.key, sizeof(k.key));
	while (n < 0 && errno == EINTR);
	if (n >= 0 && (size_t)n == sizeof(k.key) && read(fd, &extra, 1) > 0)
		n = (ssize_t)sizeof(k.key) + 1;
	if (n < 0) {
		int e = errno;

		close(fd);
		return vg_diag_set(diag, -e, "%s: read: %s", path, strerror(e));
	}
	close(fd);
	if (n < VG_HMAC_KEY_MIN || (size_t)n > sizeof(k.key)) {
		OPENSSL_cleanse(&k, sizeof(k));
		return vg_diag_set(diag, -EINVAL, "%s: an EVM HMAC key is %d to %d bytes, this file has %s%zd",
				   path, VG_HMAC_KEY_MIN, VG_EVM_KEY_MAX,
				   (size_t)n > sizeof(k.key) ? "more than " : "",
				   (size_t)n > sizeof(k.key) ? (ssize_t)sizeof(k.key) : n);
	}
	k.len = (size_t)n;
	*ret = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

void vg_hmac_key_wipe(struct vg_hmac_key *k)
{
	if (k)
		OPENSSL_cleanse(k, sizeof(*k));
}

#define KEY_VERSION 1
#define SEC_SCRYPT 1
#define SEC_TPM 2
#define HDR_LEN 10
static const char check_label[] = "vigil key check";

const char *vg_key_kind_name(enum vg_key_kind kind)
{
	switch (kind) {
	case VG_KEY_PASSPHRASE:
		return "passphrase";
	case VG_KEY_TPM:
		return "tpm";
	default:
		return "raw";
	}
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int decode_scrypt(const uint8_t *v, size_t len, struct vg_key_file *kf,
			 struct vg_diag *diag)
{
	struct vg_key_kdf *k = &kf->kdf;

	if (len < 10)
		return vg_diag_set(diag, -EBADMSG, "passphrase section: %zu bytes, truncated", len);
	k->log_n = v[0];
	k->r = vg__be32(v + 1);
	k->p = vg__be32(v + 5);
	k->salt_len = v[9];
	if (k->log_n < VG_KEY_SCRYPT_LOGN_MIN || k->log_n > VG_KEY_SCRYPT_LOGN_MAX)
		return vg_diag_set(diag, -EBADMSG, "passphrase section: scrypt N = 2^%u outside 2^%d..2^%d",
				   k->log_n, VG_KEY_SCRYPT_LOGN_MIN, VG_KEY_SCRYPT_LOGN_MAX);
	if (k->r < 1 || k->r > 32 || k->p < 1 || k->p > 16 ||
	    128ull * k->r << k->log_n > VG_KEY_SCRYPT_MAXMEM)
		return vg_diag_set(diag, -EBADMSG,
				   "passphrase section: scrypt r = %u, p = %u out of bounds (r 1..32, p 1..16, 128*r*N <= 1 GiB)",
				   k->r, k->p);
	if (k->salt_len < 16 || k->salt_len > sizeof(k->salt))
		return vg_diag_set(diag, -EBADMSG, "passphrase section: salt of %u bytes (16..64)",
				   k->salt_len);
	if (len != 10u + k->salt_len + sizeof(k->check))
		return vg_diag_set(diag, -EBADMSG, "passphrase section: %zu bytes, expected %zu", len,
				   10u + k->salt_len + sizeof(k->check));
	memcpy(k->salt, v + 10, k->salt_len);
	memcpy(k->check, v + 10 + k->salt_len, sizeof(k->check));
	return 0;
}

static int decode_tpm(const uint8_t *v, size_t len, struct vg_key_file *kf, struct vg_diag *diag)
{
	struct vg_tpm_pcrs *p = &kf->pcrs;
	uint16_t alg;
	size_t dlen, off = 6;
	int algo = -1;

	if (len < 6)
		return vg_diag_set(diag, -EBADMSG, "TPM section: %zu bytes, truncated", len);
	alg = be16(v);
	for (unsigned int a = 0; a < VG_HASH__LAST; a++)
		if (vg_tpm_alg(a) == alg)
			algo = (int)a;
	if (algo < 0)
		return vg_diag_set(diag, -EBADMSG, "TPM section: unknown PCR bank 0x%04x", alg);
	p->bank = (unsigned int)algo;
	p->mask = vg__be32(v + 2);
	if (!p->mask || p->mask >> VG_PCR_COUNT)
		return vg_diag_set(diag, -EBADMSG, "TPM section: PCR mask 0x%08x empty or beyond PCR 23",
				   p->mask);
	dlen = vg_hash_size(p->bank);
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		if (!(p->mask & (1u << i)))
			continue;
		if (len - off < dlen)
			return vg_diag_set(diag, -EBADMSG, "TPM section: PCR %u value truncated", i);
		memcpy(p->values[i], v + off, dlen);
		off += dlen;
	}
	if (len - off < 4 || len - off > sizeof(kf->blob))
		return vg_diag_set(diag, -EBADMSG, "TPM section: sealed object of %zu bytes (4..%zu)",
				   len - off, sizeof(kf->blob));
	kf->blob_len = len - off;
	memcpy(kf->blob, v + off, kf->blob_len);
	return 0;
}

int vg_key_file_decode(const uint8_t *buf, size_t len, struct vg_key_file *ret,
		       struct vg_diag *diag)
{
	struct vg_key_file *kf;
	size_t off = HDR_LEN, slen;
	int r;

	if (len < 8 || memcmp(buf, VG_KEY_MAGIC, 8) != 0) {
		if (len < VG_HMAC_KEY_MIN || len > VG_EVM_KEY_MAX)
			return vg_diag_set(diag, -EINVAL,
					   "a raw EVM HMAC key is %d to %d bytes, this file has %zu",
					   VG_HMAC_KEY_MIN, VG_EVM_KEY_MAX, len);
		memset(ret, 0, offsetof(struct vg_key_file, blob));
		ret->kind = VG_KEY_RAW;
		ret->key_len = len;
		ret->blob_len = 0;
		return 0;
	}
	if (len < HDR_LEN)
		return vg_diag_set(diag, -EBADMSG, "key file header truncated (%zu bytes)", len);
	if (buf[8] != KEY_VERSION)
		return vg_diag_set(diag, -EOPNOTSUPP, "key file version %u (this vigil reads %d)",
				   buf[8], KEY_VERSION);
	kf = calloc(1, sizeof(*kf));
	if (!kf)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	kf->key_len = buf[9];
	if (kf->key_len < VG_HMAC_KEY_MIN || kf->key_len > VG_EVM_KEY_MAX) {
		r = vg_diag_set(diag, -EBADMSG, "key file: key length %zu outside %d..%d",
				kf->key_len, VG_HMAC_KEY_MIN, VG_EVM_KEY_MAX);
		goto out;
	}
	if (len - off < 3) {
		r = vg_diag_set(diag, -EBADMSG, "key file: no section after the header");
		goto out;
	}
	slen = be16(buf + off + 1);
	if (len - off - 3 < slen) {
		r = vg_diag_set(diag, -EBADMSG, "key file: section of %zu bytes, %zu present",
				slen, len - off - 3);
		goto out;
	}
	if (len - off - 3 != slen) {
		r = vg_diag_set(diag, -EBADMSG, "key file: %zu bytes after its section",
				len - off - 3 - slen);
		goto out;
	}
	switch (buf[off]) {
	case SEC_SCRYPT:
		kf->kind = VG_KEY_PASSPHRASE;
		r = decode_scrypt(buf + off + 3, slen, kf, diag);
		break;
	case SEC_TPM:
		kf->kind = VG_KEY_TPM;
		r = decode_tpm(buf + off + 3, slen, kf, diag);
		break;
	default:
		r = vg_diag_set(diag, -EOPNOTSUPP, "key file: unknown section type %u", buf[off]);
		break;
	}
	if (r == 0)
		memcpy(ret, kf, sizeof(*kf));
out:
	free(kf);
	return r;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

int vg_key_file_encode(const struct vg_key_file *kf, uint8_t *buf, size_t cap,
		       struct vg_diag *diag)
{
	size_t off = HDR_LEN + 3, slen;

	if (kf->key_len < VG_HMAC_KEY_MIN || kf->key_len > VG_EVM_KEY_MAX)
		return vg_diag_set(diag, -EINVAL, "key length %zu", kf->key_len);
	if (kf->kind == VG_KEY_PASSPHRASE)
		slen = 10u + kf->kdf.salt_len + sizeof(kf->kdf.check);
	else if (kf->kind == VG_KEY_TPM)
		slen = 6 + (size_t)__builtin_popcount(kf->pcrs.mask) * vg_hash_size(kf->pcrs.bank) +
		       kf->blob_len;
	else
		return vg_diag_set(diag, -EINVAL, "raw keys are not written by vigil");
	if (slen > UINT16_MAX || off + slen > cap)
		return vg_diag_set(diag, -ENOSPC, "key file of %zu bytes", off + slen);
	memcpy(buf, VG_KEY_MAGIC, 8);
	buf[8] = KEY_VERSION;
	buf[9] = (uint8_t)kf->key_len;
	buf[HDR_LEN] = kf->kind == VG_KEY_PASSPHRASE ? SEC_SCRYPT : SEC_TPM;
	put16(buf + HDR_LEN + 1, (uint32_t)slen);
	if (kf->kind == VG_KEY_PASSPHRASE) {
		buf[off] = kf->kdf.log_n;
		put32(buf + off + 1, kf->kdf.r);
		put32(buf + off + 5, kf->kdf.p);
		buf[off + 9] = kf->kdf.salt_len;
		memcpy(buf + off + 10, kf->kdf.salt, kf->kdf.salt_len);
		memcpy(buf + off + 10 + kf->kdf.salt_len, kf->kdf.check, sizeof(kf->kdf.check));
	} else {
		size_t dlen = vg_hash_size(kf->pcrs.bank);
		size_t o = off + 6;

		put16(buf + off, vg_tpm_alg(kf->pcrs.bank));
		put32(buf + off + 2, kf->pcrs.mask);
		for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
			if (kf->pcrs.mask & (1u << i)) {
				memcpy(buf + o, kf->pcrs.values[i], dlen);
				o += dlen;
			}
		memcpy(buf + o, kf->blob, kf->blob_len);
	}
	return (int)(off + slen);
}

/* "PATH: " before the diag's message, truncating its end if need be. */
static void diag_prefix(struct vg_diag *d, const char *path)
{
	size_t pl = strlen(path) + 2, ml;

	if (!d || pl >= sizeof(d->msg))
		return;
	ml = strnlen(d->msg, sizeof(d->msg) - 1);
	if (ml > sizeof(d->msg) - 1 - pl)
		ml = sizeof(d->msg) - 1 - pl;
	memmove(d->msg + pl, d->msg, ml);
	memcpy(d->msg, path, pl - 2);
	memcpy(d->msg + pl - 2, ": ", 2);
	d->msg[pl + ml] = 0;
}

int vg_key_file_read(const char *path, struct vg_key_file *ret, struct vg_diag *diag)
{
	uint8_t *buf;
	size_t len = 0;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
	/* any readable file, a pipe too; a key file fits the first buffer, so it is never moved */
	r = vg_fd_read_all(fd, VG_KEY_FILE_MAX, &buf, &len);
	close(fd);
	if (r == -ENOMEM)
		return vg_diag_set(diag, r, "out of memory");
	if (r == -EFBIG)
		return vg_diag_set(diag, -EBADMSG, "%s: larger than any key file (%d bytes)", path,
				   VG_KEY_FILE_MAX);
	if (r < 0)
		return vg_diag_set(diag, r, "%s: read: %s", path, strerror(-r));
	r = vg_key_file_decode(buf, len, ret, diag);
	if (r < 0)
		diag_prefix(diag, path);
	/* a raw file's bytes are the key */
	OPENSSL_cleanse(buf, len + 1);
	free(buf);
	return r;
}

int vg_key_file_write(const char *path, const struct vg_key_file *kf, struct vg_diag *diag)
{
	uint8_t buf[VG_KEY_FILE_MAX];
	struct vg_diag d = { 0 };
	int n = vg_key_file_encode(kf, buf, sizeof(buf), diag), r;

	if (n < 0)
		return n;
	/* a key file is read back by path: a regular file, never a device */
	r = vg_outfile_put(path, buf, (size_t)n, 0600, 0, &d);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (r < 0)
		return vg_diag_set(diag, r, "%s: %s", path, d.msg);
	return 0;
}

int vg_hmac_key_generate(struct vg_tpm *tpm, size_t len, struct vg_hmac_key *ret,
			 struct vg_diag *diag)
{
	struct vg_hmac_key k = { .len = len };
	uint8_t t[VG_EVM_KEY_MAX];
	int r;

	if (len < VG_HMAC_KEY_MIN || len > VG_EVM_KEY_MAX)
		return vg_diag_set(diag, -EINVAL, "an EVM HMAC key is %d to %d bytes",
				   VG_HMAC_KEY_MIN, VG_EVM_KEY_MAX);
	if (RAND_priv_bytes(k.key, (int)len) != 1)
		return vg_diag_ssl(diag, -EIO, "random key");
	if (tpm) {
		r = vg_tpm_random(tpm, t, len, diag);
		if (r < 0) {
			OPENSSL_cleanse(&k, sizeof(k));
			return r;
		}
		for (size_t i = 0; i < len; i++)
			k.key[i] ^= t[i];
		OPENSSL_cleanse(t, sizeof(t));
	}
	*ret = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

/* scrypt(@pass) into @out (@len bytes), and its check value. */
static int scrypt(const struct vg_key_kdf *k, const char *pass, size_t pass_len, uint8_t *out,
		  size_t len, uint8_t check[32], struct vg_diag *diag)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "SCRYPT", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	uint64_t n = 1ull << k->log_n, maxmem = VG_KEY_SCRYPT_MAXMEM + (64u << 20);
	uint32_t r = k->r, p = k->p;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, (void *)pass, pass_len),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)k->salt, k->salt_len),
		OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
		OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
		OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p),
		OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem),
		OSSL_PARAM_construct_end(),
	};
	size_t mlen = 32;
	int ret = 0;

	if (!ctx) {
		ret = vg_diag_ssl(diag, -ENOMEM, "scrypt");
		goto out;
	}
	if (EVP_KDF_derive(ctx, out, len, params) != 1) {
		ret = vg_diag_ssl(diag, -EIO, "scrypt");
		goto out;
	}
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, out, len,
		       (const unsigned char *)check_label, sizeof(check_label) - 1, check, 32, &mlen)) {
		OPENSSL_cleanse(out, len);
		ret = vg_diag_ssl(diag, -EIO, "key check value");
	}
out:
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	return ret;
}

int vg_hmac_key_passphrase_new(const char *pass, size_t pass_len, unsigned int log_n,
			       size_t len, struct vg_key_file *kf, struct vg_hmac_key *ret,
			       struct vg_diag *diag)
{
	struct vg_hmac_key k = { .len = len };
	struct vg_key_kdf kdf = { .log_n = (uint8_t)log_n, .r = 8, .p = 1, .salt_len = 32 };
	int r;

	if (log_n < VG_KEY_SCRYPT_LOGN_MIN || log_n > VG_KEY_SCRYPT_LOGN_MAX || 128ull * 8 << log_n > VG_KEY_SCRYPT_MAXMEM)
		return vg_diag_set(diag, -EINVAL, "scrypt N = 2^%u: choose 2^%d..2^%d", log_n,
				   VG_KEY_SCRYPT_LOGN_MIN, 20);
	if (len < VG_HMAC_KEY_MIN || len > VG_EVM_KEY_MAX)
		return vg_diag_set(diag, -EINVAL, "an EVM HMAC key is %d to %d bytes",
				   VG_HMAC_KEY_MIN, VG_EVM_KEY_MAX);
	if (!pass_len)
		return vg_diag_set(diag, -EINVAL, "empty passphrase");
	if (RAND_bytes(kdf.salt, kdf.salt_len) != 1)
		return vg_diag_ssl(diag, -EIO, "random salt");
	r = scrypt(&kdf, pass, pass_len, k.key, len, kdf.check, diag);
	if (r < 0)
		return r;
	memset(kf, 0, offsetof(struct vg_key_file, blob));
	kf->kind = VG_KEY_PASSPHRASE;
	kf->key_len = len;
	kf->kdf = kdf;
	kf->blob_len = 0;
	*ret = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

int vg_hmac_key_derive(const struct vg_key_file *kf, const char *pass, size_t pass_len,
		       struct vg_hmac_key *ret, struct vg_diag *diag)
{
	struct vg_hmac_key k = { .len = kf->key_len };
	uint8_t check[32];
	int r;

	if (kf->kind != VG_KEY_PASSPHRASE)
		return vg_diag_set(diag, -EINVAL, "not a passphrase key");
	r = scrypt(&kf->kdf, pass, pass_len, k.key, k.len, check, diag);
	if (r < 0)
		return r;
	if (CRYPTO_memcmp(check, kf->kdf.check, sizeof(check)) != 0) {
		OPENSSL_cleanse(&k, sizeof(k));
		return vg_diag_set(diag, -EKEYREJECTED, "wrong passphrase");
	}
	*ret = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

int vg_hmac_key_seal(struct vg_tpm *tpm, const struct vg_hmac_key *key,
		     const struct vg_tpm_pcrs *p, struct vg_key_file *kf, struct vg_diag *diag)
{
	int n;

	if (key->len < VG_HMAC_KEY_MIN || key->len > VG_EVM_KEY_MAX)
		return vg_diag_set(diag, -EINVAL, "key length %zu", key->len);
	n = vg_tpm_seal(tpm, key->key, key->len, p, kf->blob, sizeof(kf->blob), diag);
	if (n < 0)
		return n;
	kf->kind = VG_KEY_TPM;
	kf->key_len = key->len;
	memset(&kf->kdf, 0, sizeof(kf->kdf));
	kf->pcrs = *p;
	kf->blob_len = (size_t)n;
	return 0;
}

int vg_hmac_key_unseal(struct vg_tpm *tpm, const struct vg_key_file *kf,
		       struct vg_hmac_key *ret, struct vg_diag *diag)
{
	struct vg_hmac_key k = { 0 };
	int n;

	if (kf->kind != VG_KEY_TPM)
		return vg_diag_set(diag, -EINVAL, "not a TPM-sealed key");
	n = vg_tpm_unseal(tpm, kf->blob, kf->blob_len, &kf->pcrs, k.key, sizeof(k.key), diag);
	if (n < 0)
		return n;
	if ((size_t)n != kf->key_len) {
		OPENSSL_cleanse(&k, sizeof(k));
		return vg_diag_set(diag, -EINVAL, "unsealed %d bytes, the key file says %zu", n,
				   kf->key_len);
	}
	k.len = (size_t)n;
	*ret = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

int vg_hmac_key_load(const char *path, const struct vg_key_source *src,
		     struct vg_hmac_key *ret, enum vg_key_kind *kind_ret, struct vg_diag *diag)
{
	static const struct vg_key_source none = { 0 };
	struct vg_key_file *kf = malloc(sizeof(*kf));
	struct vg_tpm *tpm = NULL;
	char pass[1024];
	int r, n;

	if (!src)
		src = &none;
	if (!kf)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	r = vg_key_file_read(path, kf, diag);
	if (r < 0)
		goto out;
	if (kind_ret)
		*kind_ret = kf->kind;
	switch (kf->kind) {
	case VG_KEY_RAW:
		r = vg_hmac_key_load_raw(path, ret, diag);
		break;
	case VG_KEY_PASSPHRASE:
		if (!src->passphrase) {
			r = vg_diag_set(diag, -ENOKEY, "%s: a passphrase key, and no passphrase given", path);
			break;
		}
		n = src->passphrase(src->arg, path, pass, sizeof(pass));
		if (n < 0) {
			r = vg_diag_set(diag, n == -ENOKEY ? -ENOKEY : n,
					"%s: a passphrase key, and no passphrase could be read", path);
			break;
		}
		r = vg_hmac_key_derive(kf, pass, (size_t)n, ret, diag);
		break;
	case VG_KEY_TPM:
		tpm = src->tpm;
		if (!tpm) {
			r = vg_tpm_open(src->tcti, &tpm, diag);
			if (r < 0)
				break;
		}
		r = vg_hmac_key_unseal(tpm, kf, ret, diag);
		if (!src->tpm)
			vg_tpm_close(tpm);
		break;
	}
	if (r < 0 && diag && kf->kind != VG_KEY_RAW && strncmp(diag->msg, path, strlen(path)) != 0)
		diag_prefix(diag, path);
out:
	OPENSSL_cleanse(pass, sizeof(pass));
	free(kf);
	return r;
}
