/* SPDX-License-Identifier: MIT */
/*
 * attest_tpm.h - what the quote verification (attest.c), the TPM wire
 * decoding (attest_wire.c) and the registration checks (attest_cred.c)
 * share: the TPM algorithm names and a TPM2B_PUBLIC made into a key.
 * Not installed.
 */
#ifndef VIGIL_ATTEST_TPM_H
#define VIGIL_ATTEST_TPM_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "vigil/diag.h"

/* OpenSSL's name of the TPM hash @alg, or NULL (attest_wire.c). */
const char *vg__attest_md_name(uint16_t alg);

/*
 * The whole of @buf as one TPM2B_PUBLIC, its size field held to the
 * structure; @what names the key in the diag (attest_wire.c).
 * Return: 0 or -EBADMSG.
 */
int vg__attest_decode_public(const uint8_t *buf, size_t len, TPM2B_PUBLIC *pub, const char *what,
			     struct vg_diag *diag);

/* The RSA or ECC public key of @p (attest.c). Return: 0, -EBADMSG, -EOPNOTSUPP, -ENOMEM. */
int vg__attest_public_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret, struct vg_diag *diag);

#endif
