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
 * vg__hasher_ext - a higher layer's per-hasher scratch (lib/label keeps
 * EVM's keyed HMAC context and xattr buffer there, so a hasher per thread
 * is all a caller carries): @size zeroed bytes, @init()ed, allocated at the
 * first call and kept until vg_hasher_free(), which @release()s them first.
 * One user per hasher: later calls return the same block whatever @size.
 * Return: the block, or NULL when it cannot be allocated.
 */
struct vg_hasher;
void *vg__hasher_ext(struct vg_hasher *h, size_t size, void (*init)(void *ext),
		     void (*release)(void *ext));
/*
 * Whether filesystem @dev was found to have no FS_IOC_GETVERSION (a
 * filesystem answers that for all its inodes alike): one failing ioctl
 * per filesystem and thread, not per file.
 */
_Bool vg__hasher_nogen(const struct vg_hasher *h, dev_t dev);
void vg__hasher_set_nogen(struct vg_hasher *h, dev_t dev);

static inline uint32_t vg__be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#define VG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
