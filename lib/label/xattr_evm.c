// SPDX-License-Identifier: MIT
/*
 * xattr_evm.c - security.evm codec: the shape checks evm_verify_hmac()
 * makes before it computes a digest. Deciding what a malformed value
 * means for the verdict (FAIL or FAIL_IMMUTABLE, an HMAC left unchecked
 * without a key) is appraise.c's job, not this file's.
 */
#include <errno.h>

#include "vigil/xattr_evm.h"
#include "vigil/xattr_ima.h"

int vg_evm_xattr_decode(const uint8_t *buf, size_t len, struct vg_evm_xattr *ret,
			struct vg_diag *diag)
{
	struct vg_evm_xattr x = { 0 };
	int r;

	if (len == 0)
		return vg_diag_set(diag, -EBADMSG, "security.evm is empty");
	x.type = buf[0];
	switch (x.type) {
	case VG_EVM_XATTR_HMAC:
		if (len != 21)
			return vg_diag_set(diag, -EBADMSG, "security.evm HMAC is %zu bytes, not 21",
					   len);
		x.hmac = buf + 1;
		break;
	case VG_EVM_IMA_XATTR_DIGSIG:
	case VG_EVM_XATTR_PORTABLE_DIGSIG:
		if (len <= VG_SIG_V2_HDR_LEN)
			return vg_diag_set(diag, -EBADMSG,
					   "security.evm signature truncated: %zu bytes", len);
		r = vg_sig_v2_decode(buf, len, &x.sig, diag);
		if (r < 0)
			return r;
		break;
	case VG_IMA_XATTR_DIGEST:
	case VG_IMA_XATTR_DIGEST_NG:
	case VG_IMA_VERITY_DIGSIG:
		return vg_diag_set(diag, -EBADMSG, "type 0x%02x is a security.ima type", x.type);
	default:
		return vg_diag_set(diag, -EOPNOTSUPP, "security.evm has unknown type 0x%02x",
				   x.type);
	}
	*ret = x;
	return 0;
}
