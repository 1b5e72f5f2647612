/* SPDX-License-Identifier: MIT */
/*
 * xattr_ima.h - the security.ima value (enum evm_ima_xattr_type,
 * security/integrity/integrity.h).
 *
 *   01 digest            legacy: md5 (17 bytes, or 21 with 4 zero bytes)
 *                        or sha1 (21 bytes); the algorithm is inferred from
 *                        the length, as ima_get_hash_algo() does
 *   04 algo digest       digest-ng: every other algorithm
 *   03 02 algo keyid...  signature v2 over the file digest (sig.h)
 *   06 03 algo keyid...  sigv3 over an ima_file_id (fs-verity form)
 * 02 and 05 are security.evm types and are "unknown-ima-data" here.
 * Decoding borrows pointers into the caller's buffer.
 */
#ifndef VIGIL_XATTR_IMA_H
#define VIGIL_XATTR_IMA_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/sig.h"

#define VG_XATTR_IMA "security.ima"
#define VG_XATTR_EVM "security.evm"
#define VG_XATTR_SIZE_MAX 65536		/* XATTR_SIZE_MAX */

enum vg_xattr_type {
	VG_IMA_XATTR_DIGEST = 0x01,
	VG_EVM_XATTR_HMAC = 0x02,
	VG_EVM_IMA_XATTR_DIGSIG = 0x03,
	VG_IMA_XATTR_DIGEST_NG = 0x04,
	VG_EVM_XATTR_PORTABLE_DIGSIG = 0x05,
	VG_IMA_VERITY_DIGSIG = 0x06,
};

struct vg_ima_xattr {
	uint8_t type;
	uint8_t algo;			/* hash algorithm the value names */
	const uint8_t *digest;		/* 01/04: digest bytes (at least the algo's size) */
	size_t digest_len;		/* bytes present after the prefix (may exceed) */
	struct vg_sig_v2 sig;		/* 03/06 */
};

/*
 * vg_ima_xattr_decode - decode a security.ima value field by field.
 * Return: 0; -EBADMSG (empty, truncated, a length that names no algorithm,
 * sig_size mismatch, an EVM type); -EOPNOTSUPP (unknown type byte or
 * algorithm id).
 */
int vg_ima_xattr_decode(const uint8_t *buf, size_t len, struct vg_ima_xattr *ret,
			struct vg_diag *diag);

/*
 * vg_ima_xattr_encode_digest - the hash form the kernel's ima_fix_xattr()
 * and evmctl write: 01 || digest for md4, md5 and sha1, else
 * 04 || algo || digest.
 * Return: bytes written, -ENOBUFS, -EINVAL (digest length wrong for algo).
 */
int vg_ima_xattr_encode_digest(const struct vg_digest *d, uint8_t *out, size_t cap);

#endif
