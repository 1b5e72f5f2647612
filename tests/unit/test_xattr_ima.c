// SPDX-License-Identifier: MIT
/* test_xattr_ima.c - security.ima and signature v2 header codecs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/xattr_ima.h"

static void decode_legacy_sha1_md5(void **state)
{
	uint8_t v[21] = { 0x01 };
	struct vg_ima_xattr x;

	(void)state;
	memset(v + 1, 0xab, 20);
	assert_int_equal(vg_ima_xattr_decode(v, 21, &x, NULL), 0);
	assert_int_equal(x.type, VG_IMA_XATTR_DIGEST);
	assert_int_equal(x.algo, VG_HASH_SHA1);
	assert_ptr_equal(x.digest, v + 1);
	assert_int_equal(x.digest_len, 20);
	/* md5 in the old 20-byte slot: last 4 bytes zero (ima_get_hash_algo) */
	memset(v + 17, 0, 4);
	assert_int_equal(vg_ima_xattr_decode(v, 21, &x, NULL), 0);
	assert_int_equal(x.algo, VG_HASH_MD5);
	assert_int_equal(vg_ima_xattr_decode(v, 17, &x, NULL), 0);
	assert_int_equal(x.algo, VG_HASH_MD5);
}

static void decode_rejects_legacy_bad_length(void **state)
{
	uint8_t v[40] = { 0x01 };
	struct vg_ima_xattr x;
	struct vg_diag d = { 0 };

	(void)state;
	for (size_t len = 1; len < sizeof(v); len++) {
		if (len == 17 || len == 21)
			continue;
		assert_int_equal(vg_ima_xattr_decode(v, len, &x, &d), -EBADMSG);
	}
	assert_non_null(strstr(d.msg, "legacy digest"));
}

static void decode_digest_ng(void **state)
{
	uint8_t v[2 + 64 + 3] = { 0x04, VG_HASH_SHA256 };
	struct vg_ima_xattr x;

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, 34, &x, NULL), 0);
	assert_int_equal(x.algo, VG_HASH_SHA256);
	assert_int_equal(x.digest_len, 32);
	/* trailing bytes are tolerated, as in xattr_verify() */
	assert_int_equal(vg_ima_xattr_decode(v, 37, &x, NULL), 0);
	assert_int_equal(x.digest_len, 35);
	v[1] = VG_HASH_SHA512;
	assert_int_equal(vg_ima_xattr_decode(v, 66, &x, NULL), 0);
	assert_int_equal(x.algo, VG_HASH_SHA512);
}

static void decode_rejects_truncated_digest_ng(void **state)
{
	uint8_t v[34] = { 0x04, VG_HASH_SHA256 };
	struct vg_ima_xattr x;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, 1, &x, &d), -EBADMSG);
	assert_int_equal(vg_ima_xattr_decode(v, 2, &x, &d), -EBADMSG);
	assert_int_equal(vg_ima_xattr_decode(v, 33, &x, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "truncated"));
}

static void decode_rejects_unknown_algorithm(void **state)
{
	uint8_t v[66] = { 0x04, 23 };
	struct vg_ima_xattr x;

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EOPNOTSUPP);
	v[1] = 0xff;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EOPNOTSUPP);
}

static void decode_signature_from_evmctl(void **state)
{
	uint8_t v[1024];
	struct vg_ima_xattr x;
	int len = vec_xattr("ima-sig.one.rsa2048.sha256", "security.ima", v, sizeof(v));

	(void)state;
	assert_int_equal(len, 9 + 256);
	assert_int_equal(vg_ima_xattr_decode(v, (size_t)len, &x, NULL), 0);
	assert_int_equal(x.type, VG_EVM_IMA_XATTR_DIGSIG);
	assert_int_equal(x.sig.version, 2);
	assert_int_equal(x.sig.hash_algo, VG_HASH_SHA256);
	assert_int_equal(x.algo, VG_HASH_SHA256);
	assert_int_equal(x.sig.keyid, 0xf532730b);
	assert_int_equal(x.sig.sig_size, 256);
	assert_ptr_equal(x.sig.sig, v + 9);

	len = vec_xattr("ima-sig.one.ecp256.sha256", "security.ima", v, sizeof(v));
	assert_true(len > 9);
	assert_int_equal(vg_ima_xattr_decode(v, (size_t)len, &x, NULL), 0);
	assert_int_equal(x.sig.keyid, 0xa8f6ddf0);
	assert_int_equal(x.sig.sig_size, (unsigned int)len - 9);
}

static void decode_rejects_truncated_v2_header(void **state)
{
	static const uint8_t v[] = { 0x03, 0x02, 0x04, 0xf5, 0x32, 0x73, 0x0b, 0x00, 0x01, 0xaa };
	struct vg_ima_xattr x;
	struct vg_diag d = { 0 };

	(void)state;
	for (size_t len = 1; len <= 9; len++)
		assert_int_equal(vg_ima_xattr_decode(v, len, &x, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "truncated"));
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), 0);
}

static void decode_rejects_wrong_sig_size(void **state)
{
	uint8_t v[9 + 16] = { 0x03, 0x02, 0x04, 1, 2, 3, 4, 0x00, 16 };
	struct vg_ima_xattr x;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), 0);
	v[8] = 15;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "sig_size"));
	v[8] = 17;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EBADMSG);
	v[7] = 1;
	v[8] = 16;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EBADMSG);
}

static void decode_rejects_unknown_sig_algorithm(void **state)
{
	uint8_t v[9 + 4] = { 0x03, 0x02, 23, 1, 2, 3, 4, 0x00, 4 };
	struct vg_ima_xattr x;

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EOPNOTSUPP);
}

static void decode_recognises_verity_sigv3(void **state)
{
	uint8_t v[9 + 8] = { 0x06, 0x03, 0x04, 0xde, 0xad, 0xbe, 0xef, 0x00, 8 };
	struct vg_ima_xattr x;

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), 0);
	assert_int_equal(x.type, VG_IMA_VERITY_DIGSIG);
	assert_int_equal(x.sig.version, 3);
	assert_int_equal(x.sig.keyid, 0xdeadbeef);
}

static void decode_rejects_evm_and_unknown_types(void **state)
{
	uint8_t v[21] = { 0 };
	struct vg_ima_xattr x;

	(void)state;
	assert_int_equal(vg_ima_xattr_decode(v, 0, &x, NULL), -EBADMSG);
	v[0] = VG_EVM_XATTR_HMAC;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EBADMSG);
	v[0] = VG_EVM_XATTR_PORTABLE_DIGSIG;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EBADMSG);
	for (unsigned int t = 7; t < 256; t++) {
		v[0] = (uint8_t)t;
		assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EOPNOTSUPP);
	}
	v[0] = 0;
	assert_int_equal(vg_ima_xattr_decode(v, sizeof(v), &x, NULL), -EOPNOTSUPP);
}

/* The forms ima_fix_xattr() and evmctl ima_hash write. */
static void encode_digest_forms(void **state)
{
	uint8_t out[80], want[80];
	struct vg_digest d;
	int len;

	(void)state;
	assert_int_equal(vg_hash_buf(VG_HASH_SHA1, "", 0, &d, NULL), 0);
	len = vg_ima_xattr_encode_digest(&d, out, sizeof(out));
	assert_int_equal(len, 21);
	assert_int_equal(vec_xattr("ima-hash.empty.sha1", "security.ima", want, sizeof(want)), 21);
	assert_memory_equal(out, want, 21);

	assert_int_equal(vg_hash_buf(VG_HASH_SHA512, "", 0, &d, NULL), 0);
	len = vg_ima_xattr_encode_digest(&d, out, sizeof(out));
	assert_int_equal(len, 66);
	assert_int_equal(vec_xattr("ima-hash.empty.sha512", "security.ima", want, sizeof(want)), 66);
	assert_memory_equal(out, want, 66);

	assert_int_equal(vg_hash_buf(VG_HASH_MD5, "", 0, &d, NULL), 0);
	assert_int_equal(vg_ima_xattr_encode_digest(&d, out, sizeof(out)), 17);
	assert_int_equal(out[0], 0x01);

	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "", 0, &d, NULL), 0);
	assert_int_equal(vg_ima_xattr_encode_digest(&d, out, 33), -ENOBUFS);
	assert_int_equal(vg_ima_xattr_encode_digest(&d, out, 34), 34);
	assert_int_equal(out[0], 0x04);
	assert_int_equal(out[1], VG_HASH_SHA256);
	d.len = 20;
	assert_int_equal(vg_ima_xattr_encode_digest(&d, out, sizeof(out)), -EINVAL);
}

static void sig_v2_encode_decode_round_trip(void **state)
{
	uint8_t body[72], out[100];
	struct vg_sig_v2 s = { .type = 0x05, .version = 2, .hash_algo = VG_HASH_SHA384,
			       .keyid = 0x01020304, .sig_size = sizeof(body), .sig = body };
	struct vg_sig_v2 t;

	(void)state;
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)i;
	assert_int_equal(vg_sig_v2_encode(&s, out, 80), -ENOBUFS);
	assert_int_equal(vg_sig_v2_encode(&s, out, sizeof(out)), 81);
	assert_memory_equal(out, "\x05\x02\x05\x01\x02\x03\x04\x00\x48", 9);
	assert_int_equal(vg_sig_v2_decode(out, 81, &t, NULL), 0);
	assert_int_equal(t.type, 5);
	assert_int_equal(t.keyid, 0x01020304);
	assert_int_equal(t.sig_size, 72);
	assert_memory_equal(t.sig, body, 72);
	s.sig_size = 0;
	assert_int_equal(vg_sig_v2_encode(&s, out, sizeof(out)), -EINVAL);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_legacy_sha1_md5),
		cmocka_unit_test(decode_rejects_legacy_bad_length),
		cmocka_unit_test(decode_digest_ng),
		cmocka_unit_test(decode_rejects_truncated_digest_ng),
		cmocka_unit_test(decode_rejects_unknown_algorithm),
		cmocka_unit_test(decode_signature_from_evmctl),
		cmocka_unit_test(decode_rejects_truncated_v2_header),
		cmocka_unit_test(decode_rejects_wrong_sig_size),
		cmocka_unit_test(decode_rejects_unknown_sig_algorithm),
		cmocka_unit_test(decode_recognises_verity_sigv3),
		cmocka_unit_test(decode_rejects_evm_and_unknown_types),
		cmocka_unit_test(encode_digest_forms),
		cmocka_unit_test(sig_v2_encode_decode_round_trip),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
