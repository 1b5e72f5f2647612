// SPDX-License-Identifier: MIT
/* test_xattr_evm.c - the security.evm codec (vg_evm_xattr_decode). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/xattr_evm.h"
#include "vigil/xattr_ima.h"

static void decode_hmac_from_evmctl(void **state)
{
	uint8_t v[64];
	struct vg_evm_xattr x;
	int n = vec_xattr("evm-hmac.one.sha1", "security.evm", v, sizeof(v));

	(void)state;
	assert_int_equal(n, 21);
	assert_int_equal(vg_evm_xattr_decode(v, 21, &x, NULL), 0);
	assert_int_equal(x.type, VG_EVM_XATTR_HMAC);
	assert_ptr_equal(x.hmac, v + 1);
}

static void decode_rejects_hmac_of_wrong_length(void **state)
{
	uint8_t v[64];
	struct vg_evm_xattr x = { .type = 0xee };
	struct vg_diag d = { 0 };
	/* evmctl 1.4's default `hmac -a sha256` makes 33 bytes the kernel rejects */
	int n = vec_xattr("evm-hmac.one.sha256", "security.evm", v, sizeof(v));

	(void)state;
	assert_int_equal(n, 33);
	assert_int_equal(vg_evm_xattr_decode(v, 33, &x, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "not 21"));
	assert_int_equal(x.type, 0xee);		/* untouched on failure */
	for (size_t len = 1; len < 21; len++)
		assert_int_equal(vg_evm_xattr_decode(v, len, &x, NULL), -EBADMSG);
	assert_int_equal(vg_evm_xattr_decode(v, 22, &x, NULL), -EBADMSG);
}

static void decode_signatures_from_evmctl(void **state)
{
	static const char *const cases[] = {
		"evm-portable.one.rsa2048.sha256.imasig", "evm-portable.one.ecp256.sha256.imahash",
		"evm-sig-fixedmeta.one.rsa2048.sha256",
	};
	uint8_t v[1024];
	struct vg_evm_xattr x;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = vec_xattr(cases[i], "security.evm", v, sizeof(v));

		assert_true(n > VG_SIG_V2_HDR_LEN);
		assert_int_equal(vg_evm_xattr_decode(v, (size_t)n, &x, NULL), 0);
		assert_int_equal(x.type, v[0]);
		assert_int_equal(x.sig.version, 2);
		assert_int_equal(x.sig.hash_algo, VG_HASH_SHA256);
		assert_int_equal(x.sig.sig_size, n - VG_SIG_V2_HDR_LEN);
		assert_ptr_equal(x.sig.sig, v + VG_SIG_V2_HDR_LEN);
	}
}

static void decode_rejects_bad_signatures(void **state)
{
	uint8_t v[1024];
	struct vg_evm_xattr x;
	int n = vec_xattr("evm-portable.one.rsa2048.sha256.imasig", "security.evm", v, sizeof(v));

	(void)state;
	assert_true(n > VG_SIG_V2_HDR_LEN);
	for (size_t len = 1; len <= VG_SIG_V2_HDR_LEN; len++)
		assert_int_equal(vg_evm_xattr_decode(v, len, &x, NULL), -EBADMSG);
	assert_int_equal(vg_evm_xattr_decode(v, (size_t)n - 1, &x, NULL), -EBADMSG);
	v[2] = VG_HASH__LAST;
	assert_int_equal(vg_evm_xattr_decode(v, (size_t)n, &x, NULL), -EOPNOTSUPP);
}

static void decode_rejects_ima_and_unknown_types(void **state)
{
	uint8_t v[40] = { 0 };
	struct vg_evm_xattr x;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_evm_xattr_decode(v, 0, &x, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "empty"));
	v[0] = VG_IMA_XATTR_DIGEST;
	assert_int_equal(vg_evm_xattr_decode(v, 21, &x, NULL), -EBADMSG);
	v[0] = VG_IMA_XATTR_DIGEST_NG;
	assert_int_equal(vg_evm_xattr_decode(v, 34, &x, NULL), -EBADMSG);
	v[0] = VG_IMA_VERITY_DIGSIG;
	assert_int_equal(vg_evm_xattr_decode(v, 12, &x, NULL), -EBADMSG);
	for (unsigned int t = 7; t < 256; t++) {
		v[0] = (uint8_t)t;
		assert_int_equal(vg_evm_xattr_decode(v, 21, &x, NULL), -EOPNOTSUPP);
	}
	v[0] = 0;
	assert_int_equal(vg_evm_xattr_decode(v, 21, &x, &d), -EOPNOTSUPP);
	assert_non_null(strstr(d.msg, "unknown type 0x00"));
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_hmac_from_evmctl),
		cmocka_unit_test(decode_rejects_hmac_of_wrong_length),
		cmocka_unit_test(decode_signatures_from_evmctl),
		cmocka_unit_test(decode_rejects_bad_signatures),
		cmocka_unit_test(decode_rejects_ima_and_unknown_types),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
