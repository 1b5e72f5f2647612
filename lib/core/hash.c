// SPDX-License-Identifier: MIT
/*
 * hash.c - the kernel's hash algorithm table, one-shot digests, and the
 * per-thread file hasher.
 *
 * The file hasher is the hot path of labeling and appraisal: it reads in
 * 1 MiB chunks into one reused aligned buffer (page-cache copies are then
 * ~7% of SHA-NI time) and tells the kernel the access is sequential only
 * once a file proves larger than one chunk, so small files cost no extra
 * system call. EVP_MD objects are fetched once per hasher: OpenSSL 3's
 * implicit fetch per digest costs ~3% on a tree of small files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "internal.h"
#include "vigil/hash.h"

#define HASHER_BUF (1u << 20)

struct algo_info {
	const char *name;	/* kernel crypto/hash_info.c */
	const char *ossl;	/* OpenSSL fetch name, NULL: none */
	uint8_t size;
	bool always;		/* in every OpenSSL 3 default provider */
};

static const struct algo_info algos[VG_HASH__LAST] = {
	[VG_HASH_MD4] = { "md4", "MD4", 16 },
	[VG_HASH_MD5] = { "md5", "MD5", 16, true },
	[VG_HASH_SHA1] = { "sha1", "SHA1", 20, true },
	[VG_HASH_RIPE_MD_160] = { "rmd160", "RIPEMD160", 20 },
	[VG_HASH_SHA256] = { "sha256", "SHA256", 32, true },
	[VG_HASH_SHA384] = { "sha384", "SHA384", 48, true },
	[VG_HASH_SHA512] = { "sha512", "SHA512", 64, true },
	[VG_HASH_SHA224] = { "sha224", "SHA224", 28, true },
	[VG_HASH_RIPE_MD_128] = { "rmd128", NULL, 16 },
	[VG_HASH_RIPE_MD_256] = { "rmd256", NULL, 32 },
	[VG_HASH_RIPE_MD_320] = { "rmd320", NULL, 40 },
	[VG_HASH_WP_256] = { "wp256", NULL, 32 },
	[VG_HASH_WP_384] = { "wp384", NULL, 48 },
	[VG_HASH_WP_512] = { "wp512", "WHIRLPOOL", 64 },
	[VG_HASH_TGR_128] = { "tgr128", NULL, 16 },
	[VG_HASH_TGR_160] = { "tgr160", NULL, 20 },
	[VG_HASH_TGR_192] = { "tgr192", NULL, 24 },
	[VG_HASH_SM3_256] = { "sm3", "SM3", 32 },
	[VG_HASH_STREEBOG_256] = { "streebog256", NULL, 32 },
	[VG_HASH_STREEBOG_512] = { "streebog512", NULL, 64 },
	[VG_HASH_SHA3_256] = { "sha3-256", "SHA3-256", 32, true },
	[VG_HASH_SHA3_384] = { "sha3-384", "SHA3-384", 48, true },
	[VG_HASH_SHA3_512] = { "sha3-512", "SHA3-512", 64, true },
};

const char *vg_hash_name(unsigned int algo)
{
	return algo < VG_HASH__LAST ? algos[algo].name : NULL;
}

size_t vg_hash_size(unsigned int algo)
{
	return algo < VG_HASH__LAST ? algos[algo].size : 0;
}

int vg_hash_by_name(const char *name)
{
	for (unsigned int i = 0; i < VG_HASH__LAST; i++)
		if (strcmp(name, algos[i].name) == 0)
			return (int)i;
	return -ENOENT;
}

EVP_MD *vg__md_fetch(unsigned int algo)
{
	if (algo >= VG_HASH__LAST || !algos[algo].ossl)
		return NULL;
	return EVP_MD_fetch(NULL, algos[algo].ossl, NULL);
}

bool vg__md_known(unsigned int algo)
{
	return algo < VG_HASH__LAST && algos[algo].always;
}

bool vg_hash_available(unsigned int algo)
{
	EVP_MD *md = vg__md_fetch(algo);

	vg_ssl_clear();
	EVP_MD_free(md);
	return md != NULL;
}

int vg_hash_buf(unsigned int algo, const void *buf, size_t len,
		struct vg_digest *ret, struct vg_diag *diag)
{
	EVP_MD *md = vg__md_fetch(algo);
	unsigned int n = 0;
	int r = 0;

	if (!md)
		return vg_diag_ssl(diag, -EOPNOTSUPP, "hash algorithm %s is not available",
				   vg_hash_name(algo) ? vg_hash_name(algo) : "(unknown)");
	if (!EVP_Digest(buf, len, ret->bytes, &n, md, NULL))
		r = vg_diag_ssl(diag, -EIO, "digest %s", algos[algo].name);
	else {
		ret->algo = (uint8_t)algo;
		ret->len = (uint8_t)n;
	}
	EVP_MD_free(md);
	return r;
}

int vg_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len,
		   uint8_t out[32], struct vg_diag *diag)
{
	size_t outlen = 0;
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	int r = 0;

	if (!ctx || !EVP_MAC_init(ctx, key, keylen, params) || !EVP_MAC_update(ctx, msg, len) ||
	    !EVP_MAC_final(ctx, out, &outlen, 32))
		r = vg_diag_ssl(diag, -ENOMEM, "HMAC-SHA256");
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return r;
}

struct vg_hasher {
	EVP_MD *md[VG_HASH__LAST];
	bool tried[VG_HASH__LAST];
	EVP_MD_CTX *ctx;
	uint8_t *buf;
	/* a higher layer's scratch (lib/label: EVM's keyed HMAC, xattr buffer) */
	void *ext;
	void (*ext_release)(void *ext);
	/* the last filesystem found without FS_IOC_GETVERSION (tmpfs, ...) */
	dev_t nogen_dev;
	bool nogen_set;
};

int vg_hasher_new(struct vg_hasher **ret)
{
	struct vg_hasher *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->ctx = EVP_MD_CTX_new();
	h->buf = aligned_alloc(4096, HASHER_BUF);
	if (!h->ctx || !h->buf) {
		vg_hasher_free(h);
		vg_ssl_clear();
		return -ENOMEM;
	}
	*ret = h;
	return 0;
}

void vg_hasher_free(struct vg_hasher *h)
{
	if (!h)
		return;
	for (unsigned int i = 0; i < VG_HASH__LAST; i++)
		EVP_MD_free(h->md[i]);
	EVP_MD_CTX_free(h->ctx);
	if (h->ext) {
		h->ext_release(h->ext);
		free(h->ext);
	}
	free(h->buf);
	free(h);
}

void *vg__hasher_ext(struct vg_hasher *h, size_t size, void (*init)(void *ext),
		     void (*release)(void *ext))
{
	if (!h->ext) {
		h->ext = calloc(1, size);
		if (!h->ext)
			return NULL;
		init(h->ext);
		h->ext_release = release;
	}
	return h->ext;
}

bool vg__hasher_nogen(const struct vg_hasher *h, dev_t dev)
{
	return h->nogen_set && h->nogen_dev == dev;
}

void vg__hasher_set_nogen(struct vg_hasher *h, dev_t dev)
{
	h->nogen_dev = dev;
	h->nogen_set = true;
}

const void *vg_hasher_md(struct vg_hasher *h, unsigned int algo)
{
	if (algo >= VG_HASH__LAST)
		return NULL;
	if (!h->tried[algo]) {
		h->md[algo] = vg__md_fetch(algo);
		/* a fetch that failed for memory is tried again next time */
		h->tried[algo] = h->md[algo] || !vg__md_known(algo);
		vg_ssl_clear();
	}
	return h->md[algo];
}

/*
 * The one hashing loop: @from_start reads with pread from offset 0 (a
 * pipe falls back to read from where it is), else read from the current
 * offset; @st, if given, lets a short read ending at st_size end it.
 */
static int hash_fd(struct vg_hasher *h, int fd, const struct stat *st, bool from_start,
		   unsigned int algo, struct vg_digest *ret, uint64_t *nbytes,
		   struct vg_diag *diag)
{
	const EVP_MD *md = vg_hasher_md(h, algo);
	uint64_t total = 0;
	unsigned int n = 0;
	bool advised = false, seekable = from_start;

	if (!md && vg__md_known(algo))
		return vg_diag_set(diag, -ENOMEM, "out of memory fetching %s", vg_hash_name(algo));
	if (!md)
		return vg_diag_set(diag, -EOPNOTSUPP, "hash algorithm %s is not available",
				   vg_hash_name(algo) ? vg_hash_name(algo) : "(unknown)");
	if (!EVP_DigestInit_ex(h->ctx, md, NULL))
		return vg_diag_ssl(diag, -ENOMEM, "digest init");
	for (;;) {
		ssize_t got = seekable ? pread(fd, h->buf, HASHER_BUF, (off_t)total) :
					 read(fd, h->buf, HASHER_BUF);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ESPIPE && seekable && total == 0) {
				seekable = false;	/* a pipe: from where it is */
				continue;
			}
			return vg_diag_set(diag, -errno, "read: %s", strerror(errno));
		}
		if (got == 0)
			break;
		if (!EVP_DigestUpdate(h->ctx, h->buf, (size_t)got))
			return vg_diag_ssl(diag, -EIO, "digest update");
		total += (uint64_t)got;
		/*
		 * A short read that ends exactly at the size fstat() gave is
		 * the end of the file: the read that would return 0 is spared.
		 * (A file that grew returns more; one whose st_size means
		 * nothing, as in procfs, never ends there.)
		 */
		if (st && seekable && (size_t)got < HASHER_BUF && st->st_size > 0 &&
		    total == (uint64_t)st->st_size)
			break;
		if (!advised && (size_t)got == HASHER_BUF) {
			/* Large file: let readahead run ahead of the hash. */
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
			advised = true;
		}
	}
	if (!EVP_DigestFinal_ex(h->ctx, ret->bytes, &n))
		return vg_diag_ssl(diag, -EIO, "digest final");
	ret->algo = (uint8_t)algo;
	ret->len = (uint8_t)n;
	if (nbytes)
		*nbytes = total;
	return 0;
}

int vg_hasher_fd(struct vg_hasher *h, int fd, unsigned int algo,
		 struct vg_digest *ret, uint64_t *nbytes, struct vg_diag *diag)
{
	return hash_fd(h, fd, NULL, false, algo, ret, nbytes, diag);
}

int vg_hasher_file(struct vg_hasher *h, int fd, const struct stat *st, unsigned int algo,
		   struct vg_digest *ret, uint64_t *nbytes, struct vg_diag *diag)
{
	return hash_fd(h, fd, st, true, algo, ret, nbytes, diag);
}

void vg_hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hx[in[i] >> 4];
		out[2 * i + 1] = hx[in[i] & 15];
	}
	out[2 * len] = '\0';
}

int vg_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int vg_hex_decode(const char *in, uint8_t *out, size_t cap)
{
	size_t len = strlen(in);

	if (len % 2 || len / 2 > cap)
		return -EINVAL;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = vg_hex_digit(in[2 * i]), lo = vg_hex_digit(in[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(len / 2);
}
