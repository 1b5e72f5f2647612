/* SPDX-License-Identifier: MIT */
/*
 * internal.h - helpers shared between libvigil's own files; not installed.
 */
#ifndef VIGIL_INTERNAL_H
#define VIGIL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/evp.h>

/* Fetch OpenSSL's digest for a kernel hash id. Return: NULL if none. */
EVP_MD *vg__md_fetch(unsigned int algo);
/* Whether every OpenSSL 3 has the digest: then a failed fetch means -ENOMEM */
_Bool vg__md_known(unsigned int algo);

struct vg_keyring;
struct vg_digest;
struct vg_diag;

/* vg_sig_verify() for a header of the given version (3: sigv3). */
int vg__sig_verify_version(const struct vg_keyring *kr, const uint8_t *blob, size_t len,
			   const struct vg_digest *d, unsigned int version, struct vg_diag *diag);

/*
 * The hasher's EVM scratch (lib/hash.c): an HMAC-SHA1 context ready for
 * input, keyed with the 128-byte padded @key (re-keyed only when the key
 * changes; NULL on failure), and a reusable xattr buffer.
 */
struct vg_hasher;
struct vg_evm_xattrs;
EVP_MAC_CTX *vg__hasher_hmac(struct vg_hasher *h, const uint8_t key[128]);
struct vg_evm_xattrs *vg__hasher_xattrs(struct vg_hasher *h);
/*
 * Whether filesystem @dev was found to have no FS_IOC_GETVERSION (a
 * filesystem answers that for all its inodes alike): one failing ioctl
 * per filesystem and thread, not per file.
 */
_Bool vg__hasher_nogen(const struct vg_hasher *h, dev_t dev);
void vg__hasher_set_nogen(struct vg_hasher *h, dev_t dev);

/* lib/evm.c, for lib/appraise.c */
struct stat;
struct vg_evm_config;
struct vg_evm_meta;
/*
 * vg_evm_meta_from_fd() with the fd's fstat() already at hand; @h (may be
 * NULL) remembers filesystems without i_generation.
 */
int vg__evm_meta_from_stat(struct vg_hasher *h, int fd, const struct stat *st, _Bool want_uuid,
			   struct vg_evm_meta *ret, struct vg_diag *diag);
/*
 * vg_evm_xattrs_read(), except that protected xattr @name (if not NULL)
 * is not read: it takes the value @val (NULL: absent), as the kernel
 * hashes the value being set. *@evm_listed, if not NULL: whether the
 * file's xattr list names security.evm.
 */
int vg__evm_xattrs_scan(int fd, const struct vg_evm_config *cfg, struct vg_evm_xattrs *xs,
			const char *name, const uint8_t *val, size_t len, _Bool *evm_listed,
			struct vg_diag *diag);
/* vg_evm_digest(), with the hasher's cached HMAC context when @h is not NULL */
int vg__evm_digest(struct vg_hasher *h, const struct vg_evm_config *cfg,
		   const struct vg_evm_xattrs *xs, const struct vg_evm_meta *meta, uint8_t type,
		   unsigned int algo, const uint8_t *key, size_t keylen, struct vg_digest *ret,
		   struct vg_diag *diag);

static inline uint32_t vg__be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#define VG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
