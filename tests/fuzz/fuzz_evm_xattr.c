// SPDX-License-Identifier: MIT
/*
 * fuzz_evm_xattr.c - security.evm values (vg_evm_xattr_decode, the shape
 * checks lib/appraise.c makes before computing an EVM digest).
 *
 * Properties: the decoder agrees with a model of evm_verify_hmac()'s
 * checks; an HMAC is exactly 21 bytes and borrowed from the input; a
 * signature (03, 05) re-encodes to exactly the input.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/xattr_evm.h"
#include "vigil/xattr_ima.h"

static int model(const uint8_t *data, size_t size)
{
	if (size == 0)
		return -EBADMSG;
	switch (data[0]) {
	case VG_EVM_XATTR_HMAC:
		return size == 21 ? 0 : -EBADMSG;
	case VG_EVM_IMA_XATTR_DIGSIG:
	case VG_EVM_XATTR_PORTABLE_DIGSIG:
		if (size <= VG_SIG_V2_HDR_LEN ||
		    (size_t)(data[7] << 8 | data[8]) != size - VG_SIG_V2_HDR_LEN)
			return -EBADMSG;
		return data[2] < VG_HASH__LAST ? 0 : -EOPNOTSUPP;
	case VG_IMA_XATTR_DIGEST:
	case VG_IMA_XATTR_DIGEST_NG:
	case VG_IMA_VERITY_DIGSIG:
		return -EBADMSG;
	default:
		return -EOPNOTSUPP;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[VG_SIG_V2_HDR_LEN + 65535];
	struct vg_diag diag = { 0 };
	struct vg_evm_xattr x;
	int r = vg_evm_xattr_decode(data, size, &x, &diag);

	FUZZ_CHECK(r == model(data, size));
	if (r < 0) {
		FUZZ_CHECK(diag.err == r && diag.msg[0]);
		return 0;
	}
	FUZZ_CHECK(x.type == data[0]);
	if (x.type == VG_EVM_XATTR_HMAC) {
		FUZZ_CHECK(x.hmac == data + 1);
		return 0;
	}
	FUZZ_CHECK(x.sig.type == x.type && x.sig.sig == data + VG_SIG_V2_HDR_LEN);
	FUZZ_CHECK(vg_sig_v2_encode(&x.sig, out, sizeof(out)) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
	return 0;
}
