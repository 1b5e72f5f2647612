/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the kernel's hash algorithms and file digests.
 *
 * Algorithm ids are the kernel's `enum hash_algo`
 * (include/uapi/linux/hash_info.h) and names are those of
 * crypto/hash_info.c, the strings found in `d-ng` template fields and on the
 * `ima_hash=` command line. An id is usable when OpenSSL provides the
 * algorithm; the others are known (so that labels naming them decode) but
 * hashing with them fails with -EOPNOTSUPP.
 *
 * A struct vg_hasher holds what a thread reuses from file to file: fetched
 * EVP_MD objects, one EVP_MD_CTX and an aligned read buffer. It is not
 * shared between threads.
 */
#ifndef VIGIL_HASH_H
#define VIGIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"

enum vg_hash_algo {
	VG_HASH_MD4 = 0,
	VG_HASH_MD5 = 1,
	VG_HASH_SHA1 = 2,
	VG_HASH_RIPE_MD_160 = 3,
	VG_HASH_SHA256 = 4,
	VG_HASH_SHA384 = 5,
	VG_HASH_SHA512 = 6,
	VG_HASH_SHA224 = 7,
	VG_HASH_RIPE_MD_128 = 8,
	VG_HASH_RIPE_MD_256 = 9,
	VG_HASH_RIPE_MD_320 = 10,
	VG_HASH_WP_256 = 11,
	VG_HASH_WP_384 = 12,
	VG_HASH_WP_512 = 13,
	VG_HASH_TGR_128 = 14,
	VG_HASH_TGR_160 = 15,
	VG_HASH_TGR_192 = 16,
	VG_HASH_SM3_256 = 17,
	VG_HASH_STREEBOG_256 = 18,
	VG_HASH_STREEBOG_512 = 19,
	VG_HASH_SHA3_256 = 20,
	VG_HASH_SHA3_384 = 21,
	VG_HASH_SHA3_512 = 22,
	VG_HASH__LAST
};

#define VG_HASH_MAX_DIGEST 64

/* A digest and the algorithm that made it. */
struct vg_digest {
	uint8_t algo;			/* enum vg_hash_algo */
	uint8_t len;			/* vg_hash_size(algo) */
	uint8_t bytes[VG_HASH_MAX_DIGEST];
};

/* Return: kernel name ("sha256", "sm3", "sha3-256"), or NULL if @algo is out of range. */
const char *vg_hash_name(unsigned int algo);

/* Return: digest size in bytes, or 0 if @algo is out of range. */
size_t vg_hash_size(unsigned int algo);

/*
 * vg_hash_by_name - look an algorithm up by its kernel name.
 * Also accepts OpenSSL spellings that differ ("sm3-256" is not one; the
 * kernel's "sm3" is the only name for id 17).
 * Return: the id, or -ENOENT.
 */
int vg_hash_by_name(const char *name);

/* Return: true if OpenSSL here can compute @algo. */
bool vg_hash_available(unsigned int algo);

/*
 * vg_hash_buf - one-shot digest of a buffer.
 * Return: 0, -EOPNOTSUPP (algorithm not provided), -ENOMEM, -EIO (OpenSSL).
 */
int vg_hash_buf(unsigned int algo, const void *buf, size_t len,
		struct vg_digest *ret, struct vg_diag *diag);

/*
 * vg_hmac_sha256 - one-shot HMAC-SHA256 of @msg under @key into @out.
 * Return: 0, -ENOMEM (OpenSSL could not compute it; said in @diag).
 */
int vg_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len,
		   uint8_t out[32], struct vg_diag *diag);

struct vg_hasher;

/* Return: 0 or -ENOMEM. *@ret is set only on success. */
int vg_hasher_new(struct vg_hasher **ret);
void vg_hasher_free(struct vg_hasher *h);

/*
 * vg_hasher_fd - digest everything readable from @fd, from its current
 * offset to EOF, with large reads into the hasher's buffer and
 * POSIX_FADV_SEQUENTIAL. @nbytes, if not NULL, receives the byte count.
 * Return: 0, -EOPNOTSUPP, -ENOMEM, or the negative errno of a failed read.
 */
int vg_hasher_fd(struct vg_hasher *h, int fd, unsigned int algo,
		 struct vg_digest *ret, uint64_t *nbytes, struct vg_diag *diag);

/*
 * vg_hasher_file - digest the whole content of the file open on @fd, from
 * offset 0 whatever the fd's offset (pread; a pipe is read from where it
 * is). @st, if not NULL, is the fd's fstat(): a short read ending at
 * st_size is taken as the end, sparing the read that would return 0.
 * Return: as vg_hasher_fd().
 */
struct stat;
int vg_hasher_file(struct vg_hasher *h, int fd, const struct stat *st, unsigned int algo,
		   struct vg_digest *ret, uint64_t *nbytes, struct vg_diag *diag);

/*
 * vg_hasher_md - the fetched EVP_MD for @algo (const EVP_MD *), fetched
 * once per hasher. Return: NULL when OpenSSL lacks the algorithm.
 */
const void *vg_hasher_md(struct vg_hasher *h, unsigned int algo);

/* Hex helpers. vg_hex_encode writes 2*len+1 bytes. */
void vg_hex_encode(const uint8_t *in, size_t len, char *out);
/* Return: bytes decoded, or -EINVAL on odd length, bad digit or overflow of @cap. */
int vg_hex_decode(const char *in, uint8_t *out, size_t cap);
/* vg_hex_digit - the value 0..15 of hex digit @c (either case), or -1. */
int vg_hex_digit(int c);

#endif
