/* SPDX-License-Identifier: MIT */
/*
 * internal.h - helpers shared between libvigil's own files; not installed.
 */
#ifndef VIGIL_INTERNAL_H
#define VIGIL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* Fetch OpenSSL's digest for a kernel hash id. Return: NULL if none. */
EVP_MD *vg__md_fetch(unsigned int algo);

struct vg_keyring;
struct vg_digest;
struct vg_diag;

/* vg_sig_verify() for a header of the given version (3: sigv3). */
int vg__sig_verify_version(const struct vg_keyring *kr, const uint8_t *blob, size_t len,
			   const struct vg_digest *d, unsigned int version, struct vg_diag *diag);

static inline uint32_t vg__be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#define VG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
