/* SPDX-License-Identifier: MIT */
/*
 * trust_internal.h - what the trust files share. Not installed.
 */
#ifndef VIGIL_TRUST_INTERNAL_H
#define VIGIL_TRUST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"

/* SHA-256 of @len bytes. Return: 0 or -ENOMEM. */
int vg__trust_sha256(const void *p, size_t len, uint8_t out[32]);

/*
 * vg__trust_gpgv - gpgv (@gpgv) on the @len bytes @data with the @nkr
 * keyrings (binary or ASCII-armored files) and, if @nfpr, only signatures
 * by those fingerprints accepted (trust_gpgv.c). Return: 0 and the signed
 * text in *@ret_out (NUL-terminated, *@ret_len bytes); -EKEYREJECTED
 * (diag: gpgv's reason); -ENOENT (gpgv or a keyring missing); -EINVAL;
 * -ENOMEM; -errno.
 */
int vg__trust_gpgv(const char *gpgv, const char *const *keyrings, size_t nkr,
		   const char *const *fprs, size_t nfpr, const uint8_t *data, size_t len,
		   char **ret_out, size_t *ret_len, struct vg_diag *diag);


#endif
