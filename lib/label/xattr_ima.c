// SPDX-License-Identifier: MIT
/*
 * xattr_ima.c - security.ima codec. Mirrors the kernel's reading rules
 * (ima_get_hash_algo(), xattr_verify()) so that what decodes here is what
 * the kernel would accept as well-formed.
 */
#include <errno.h>
#include <string.h>

#include "vigil/xattr_ima.h"

int vg_ima_xattr_decode(const uint8_t *buf, size_t len, struct vg_ima_xattr *ret,
			struct vg_diag *diag)
{
	struct vg_ima_xattr x = { 0 };
	int r;

	if (len == 0)
		return vg_diag_set(diag, -EBADMSG, "security.ima is empty");
	x.type = buf[0];
	switch (x.type) {
	case VG_IMA_XATTR_DIGEST:
		if (len == 21) {
			static const uint8_t zero[4];

			x.algo = memcmp(buf + 17, zero, 4) == 0 ? VG_HASH_MD5 : VG_HASH_SHA1;
		} else if (len == 17) {
			x.algo = VG_HASH_MD5;
		} else {
			return vg_diag_set(diag, -EBADMSG,
					   "legacy digest of %zu bytes names no algorithm (17 md5, 21 sha1)",
					   len - 1);
		}
		x.digest = buf + 1;
		x.digest_len = len - 1;
		break;
	case VG_IMA_XATTR_DIGEST_NG:
		if (len < 2)
			return vg_diag_set(diag, -EBADMSG, "digest-ng value has no algorithm byte");
		x.algo = buf[1];
		if (x.algo >= VG_HASH__LAST)
			return vg_diag_set(diag, -EOPNOTSUPP, "digest-ng names unknown algorithm id %u",
					   x.algo);
		x.digest = buf + 2;
		x.digest_len = len - 2;
		if (x.digest_len < vg_hash_size(x.algo))
			return vg_diag_set(diag, -EBADMSG,
					   "digest-ng %s digest truncated: %zu of %zu bytes",
					   vg_hash_name(x.algo), x.digest_len, vg_hash_size(x.algo));
		break;
	case VG_EVM_IMA_XATTR_DIGSIG:
	case VG_IMA_VERITY_DIGSIG:
		r = vg_sig_v2_decode(buf, len, &x.sig, diag);
		if (r < 0)
			return r;
		x.algo = x.sig.hash_algo;
		break;
	case VG_EVM_XATTR_HMAC:
	case VG_EVM_XATTR_PORTABLE_DIGSIG:
		return vg_diag_set(diag, -EBADMSG, "type 0x%02x is a security.evm type", x.type);
	default:
		return vg_diag_set(diag, -EOPNOTSUPP, "unknown security.ima type 0x%02x", x.type);
	}
	*ret = x;
	return 0;
}

int vg_ima_xattr_encode_digest(const struct vg_digest *d, uint8_t *out, size_t cap)
{
	size_t pre = d->algo <= VG_HASH_SHA1 ? 1 : 2;

	if (d->algo >= VG_HASH__LAST || d->len != vg_hash_size(d->algo))
		return -EINVAL;
	if (cap < pre + d->len)
		return -ENOBUFS;
	if (pre == 1) {
		out[0] = VG_IMA_XATTR_DIGEST;
	} else {
		out[0] = VG_IMA_XATTR_DIGEST_NG;
		out[1] = d->algo;
	}
	memcpy(out + pre, d->bytes, d->len);
	return (int)(pre + d->len);
}
