/* SPDX-License-Identifier: MIT */
/*
 * attest_sig.h - a policy file's detached signature with its key (OpenPGP
 * through GPGME, or ECDSA over SHA-256 with an EC public key), as
 * Keylime's tenant checks an allowlist's (attest_sig.c).
 */
#ifndef VIGIL_CLI_ATTEST_SIG_H
#define VIGIL_CLI_ATTEST_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * attest_sig_verify - @sig (@slen bytes) must be a good detached signature
 * of @body by the key in @key: an armored OpenPGP public key block (the
 * signature binary or armored) or a PEM EC public key (a DER ECDSA
 * signature over SHA-256 of @body). @why gets the reason on failure.
 * Return: 0 good; -EKEYREJECTED (not a good signature by that key),
 * -EBADMSG (key file not usable), -EOPNOTSUPP (a PEM key not EC), -EIO.
 */
int attest_sig_verify(const uint8_t *key, size_t klen, const uint8_t *sig, size_t slen,
		      const uint8_t *body, size_t blen, char *why, size_t wlen);

#endif
