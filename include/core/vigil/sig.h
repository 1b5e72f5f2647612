/* SPDX-License-Identifier: MIT */
/*
 * sig.h - the kernel's signature v2 format, signing and verification.
 *
 * struct signature_v2_hdr (security/integrity/integrity.h), 9 bytes packed:
 *   type u8 (0x03 digsig, 0x05 portable EVM, 0x06 verity) | version u8 (2)
 *   | hash_algo u8 (enum hash_algo) | keyid __be32 | sig_size __be16
 *   | signature[sig_size]
 * The signed value is a raw digest: the file digest for security.ima, the
 * EVM digest for security.evm. RSA signatures are PKCS#1 v1.5 with the
 * DigestInfo of hash_algo (kernel encoding "pkcs1"); ECDSA signatures are
 * DER SEQUENCE{r, s} (encoding "x962").
 *
 * Decoding borrows: struct vg_sig_v2.sig points into the caller's buffer.
 */
#ifndef VIGIL_SIG_H
#define VIGIL_SIG_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"

#define VG_SIG_V2_HDR_LEN 9
#define VG_SIG_MAX 1024			/* RSA-8192; far above P-521 DER */

struct vg_keyring;
struct vg_signer;

struct vg_sig_v2 {
	uint8_t type;
	uint8_t version;
	uint8_t hash_algo;
	uint32_t keyid;
	uint16_t sig_size;
	const uint8_t *sig;		/* sig_size bytes, borrowed */
};

/*
 * vg_sig_v2_decode - decode a signature header field by field.
 * Checks what the kernel's asymmetric_verify() checks before it looks for
 * a key: more than 9 bytes, sig_size equal to the bytes that follow the
 * header, hash_algo a known id. The version is returned, not judged.
 * Return: 0, -EBADMSG (truncated, sig_size mismatch), -EOPNOTSUPP (hash
 * algorithm id out of range).
 */
int vg_sig_v2_decode(const uint8_t *buf, size_t len, struct vg_sig_v2 *ret,
		     struct vg_diag *diag);

/*
 * vg_sig_v2_encode - serialize @s into @out.
 * Return: bytes written, -ENOBUFS if @cap is too small, -EINVAL if
 * sig_size is 0.
 */
int vg_sig_v2_encode(const struct vg_sig_v2 *s, uint8_t *out, size_t cap);

/*
 * vg_sig_sign - make a complete v2 signature blob of @type over @d with
 * @signer's key and keyid.
 * Return: blob length, -EOPNOTSUPP (key type or digest not signable),
 * -ENOBUFS, -EIO (OpenSSL failure).
 */
int vg_sig_sign(const struct vg_signer *signer, uint8_t type,
		const struct vg_digest *d, uint8_t *out, size_t cap,
		struct vg_diag *diag);

/*
 * vg_sig_verify - verify a v2 signature blob over @d with the key in @kr
 * whose keyid the header names. @d must have been computed with the
 * header's hash_algo (-EINVAL otherwise).
 * Return: 0 valid; -EBADMSG malformed; -EOPNOTSUPP unknown version or
 * algorithm; -ENOKEY no key with that keyid; -EKEYREJECTED bad signature.
 */
int vg_sig_verify(const struct vg_keyring *kr, const uint8_t *blob, size_t len,
		  const struct vg_digest *d, struct vg_diag *diag);

#endif
