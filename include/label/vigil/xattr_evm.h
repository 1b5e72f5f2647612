/* SPDX-License-Identifier: MIT */
/*
 * xattr_evm.h - the security.evm value (struct evm_xattr and the
 * signature forms of security/integrity/integrity.h), decoded as the
 * kernel's evm_verify_hmac() reads it before computing anything:
 *
 *   02 hmac[20]              HMAC-SHA1: exactly 21 bytes
 *   03 02 algo keyid...      signature v2 over the inode-bound EVM digest
 *   05 02 algo keyid...      portable signature v2 (no inode, no UUID)
 *
 * Any other type byte is not a security.evm value. The decoder is pure
 * (bytes in, fields out, pointers borrowed from the caller's buffer); it
 * judges the shape only, never a key or a digest.
 */
#ifndef VIGIL_XATTR_EVM_H
#define VIGIL_XATTR_EVM_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/sig.h"

struct vg_evm_xattr {
	uint8_t type;			/* 02, 03 or 05 */
	const uint8_t *hmac;		/* 02: 20 bytes */
	struct vg_sig_v2 sig;		/* 03/05 */
};

/*
 * vg_evm_xattr_decode - decode a security.evm value field by field.
 * Return: 0; -EBADMSG (empty; an HMAC that is not 21 bytes; a signature of
 * 9 bytes or fewer, or whose sig_size does not match; a security.ima-only
 * type); -EOPNOTSUPP (unknown type byte, or a signature naming an unknown
 * hash algorithm id). *@ret is written only on success.
 */
int vg_evm_xattr_decode(const uint8_t *buf, size_t len, struct vg_evm_xattr *ret,
			struct vg_diag *diag);

#endif
