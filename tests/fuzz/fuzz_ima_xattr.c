// SPDX-License-Identifier: MIT
/*
 * fuzz_ima_xattr.c - security.ima values (vg_ima_xattr_decode).
 *
 * Properties, beyond "no crash, no leak, no undefined behaviour":
 *  - a failure is -EBADMSG or -EOPNOTSUPP with the same code in the diag;
 *  - borrowed pointers stay inside the input;
 *  - digests round-trip: vg_ima_xattr_encode_digest(decode(x)) is x when x
 *    is in the form the kernel writes (01 for algo <= sha1, else 04, and
 *    exactly the digest), a prefix of x when x carries trailing bytes, and
 *    decodes back to the same digest bytes. The only algorithm changes
 *    allowed are the kernel's own ambiguities of the 01 form (md4 reads
 *    back as md5; a sha1 ending in four zero bytes reads back as md5);
 *  - signatures (03, 06) re-encode to exactly x.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/xattr_ima.h"

static void check_digest(const uint8_t *data, size_t size, const struct vg_ima_xattr *x)
{
	uint8_t out[2 + VG_HASH_MAX_DIGEST];
	struct vg_digest dg = { .algo = x->algo, .len = (uint8_t)vg_hash_size(x->algo) };
	struct vg_ima_xattr y;
	size_t pre = x->type == VG_IMA_XATTR_DIGEST ? 1 : 2;
	int n;

	FUZZ_CHECK(dg.len > 0 && x->digest == data + pre && x->digest_len == size - pre);
	FUZZ_CHECK(x->digest_len >= dg.len);
	memcpy(dg.bytes, x->digest, dg.len);
	n = vg_ima_xattr_encode_digest(&dg, out, sizeof(out));
	FUZZ_CHECK(n > 0);
	if ((x->type == VG_IMA_XATTR_DIGEST) == (x->algo <= VG_HASH_SHA1)) {
		FUZZ_CHECK((size_t)n <= size && memcmp(out, data, (size_t)n) == 0);
		FUZZ_CHECK(((size_t)n == size) == (x->digest_len == dg.len));
	} else {
		/* 04 naming md4/md5/sha1: the kernel would have written 01 */
		FUZZ_CHECK(out[0] == VG_IMA_XATTR_DIGEST && memcmp(out + 1, x->digest, dg.len) == 0);
	}
	FUZZ_CHECK(vg_ima_xattr_encode_digest(&dg, out, (size_t)n - 1) == -ENOBUFS);

	FUZZ_CHECK(vg_ima_xattr_decode(out, (size_t)n, &y, NULL) == 0);
	FUZZ_CHECK(y.digest_len == dg.len && memcmp(y.digest, dg.bytes, dg.len) == 0);
	if (y.algo != x->algo) {
		static const uint8_t zero[4];

		FUZZ_CHECK(y.algo == VG_HASH_MD5);
		FUZZ_CHECK(x->algo == VG_HASH_MD4 ||
			   (x->algo == VG_HASH_SHA1 && memcmp(dg.bytes + 16, zero, 4) == 0));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_diag diag = { 0 };
	struct vg_ima_xattr x;
	uint8_t out[VG_SIG_V2_HDR_LEN + 65535];
	int r = vg_ima_xattr_decode(data, size, &x, &diag);

	if (r < 0) {
		FUZZ_CHECK(r == -EBADMSG || r == -EOPNOTSUPP);
		FUZZ_CHECK(diag.err == r && memchr(diag.msg, '\0', sizeof(diag.msg)) && diag.msg[0]);
		return 0;
	}
	FUZZ_CHECK(size > 0 && x.type == data[0] && x.algo < VG_HASH__LAST);
	switch (x.type) {
	case VG_IMA_XATTR_DIGEST:
	case VG_IMA_XATTR_DIGEST_NG:
		check_digest(data, size, &x);
		break;
	case VG_EVM_IMA_XATTR_DIGSIG:
	case VG_IMA_VERITY_DIGSIG:
		FUZZ_CHECK(x.sig.type == x.type && x.algo == x.sig.hash_algo);
		FUZZ_CHECK(x.sig.sig == data + VG_SIG_V2_HDR_LEN &&
			   x.sig.sig_size == size - VG_SIG_V2_HDR_LEN);
		FUZZ_CHECK(vg_sig_v2_encode(&x.sig, out, sizeof(out)) == (int)size);
		FUZZ_CHECK(memcmp(out, data, size) == 0);
		break;
	default:
		FUZZ_CHECK(!"decoded a type that is not a security.ima type");
	}
	return 0;
}
