// SPDX-License-Identifier: MIT
/*
 * test_keyring.c - loading trusted keys from bytes (vg_keyring_add_mem),
 * the entry point for certificates that arrive from elsewhere.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/keyring.h"

static size_t slurp(const char *rel, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(vec_path(rel), "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	assert_true(n > 0 && n < cap);
	return n;
}

static void add_mem_pem_der_and_bundles(void **state)
{
	static uint8_t buf[16384];
	struct vg_keyring *kr;
	char src[32] = "from the network";
	size_t n;

	(void)state;
	assert_int_equal(vg_keyring_new(&kr), 0);
	n = slurp("keys/rsa2048.cert.der", buf, sizeof(buf));
	assert_int_equal(vg_keyring_add_mem(kr, buf, n, src, NULL), 1);
	memset(src, 'x', sizeof(src) - 1);	/* the source name is copied */
	assert_string_equal(vg_keyring_info(kr, 0)->source, "from the network");
	assert_int_equal(vg_keyring_info(kr, 0)->keyid, 0xf532730b);
	assert_true(vg_keyring_info(kr, 0)->from_cert);

	n = slurp("keys/ecp256.cert.pem", buf, sizeof(buf));
	n += slurp("keys/rsa4096.pub.pem", buf + n, sizeof(buf) - n);
	assert_int_equal(vg_keyring_add_mem(kr, buf, n, "bundle", NULL), 2);
	assert_int_equal(vg_keyring_count(kr), 3);
	assert_non_null(vg_keyring_find(kr, 0xa8f6ddf0));
	assert_non_null(vg_keyring_find(kr, 0x7d279e7f));
	assert_string_equal(vg_keyring_info(kr, 1)->type, "ecp256");
	assert_string_equal(vg_keyring_info(kr, 2)->type, "rsa4096");
	vg_keyring_free(kr);
}

static void add_mem_rejects_garbage(void **state)
{
	static uint8_t buf[16384];
	struct vg_keyring *kr;
	struct vg_diag d = { 0 };
	size_t n;

	(void)state;
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_mem(kr, (const uint8_t *)"", 0, "empty", &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "empty"));
	assert_int_equal(vg_keyring_add_mem(kr, (const uint8_t *)"\x30\x82\x01", 3, "der", &d),
			 -EBADMSG);
	/* a private key only: no public key in it for the keyring */
	n = slurp("keys/ecp256.key.pem", buf, sizeof(buf));
	assert_int_equal(vg_keyring_add_mem(kr, buf, n, "key", &d), -EBADMSG);
	/* a good certificate, then a block that does not decode: all or nothing */
	n = slurp("keys/ecp256.cert.pem", buf, sizeof(buf));
	memcpy(buf + n, "-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n", 57);
	assert_int_equal(vg_keyring_add_mem(kr, buf, n + 57, "bundle", &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "after 1 key(s)"));
	assert_int_equal(vg_keyring_count(kr), 0);
	/* a DER certificate with a byte cut off */
	n = slurp("keys/rsa2048.cert.der", buf, sizeof(buf));
	assert_int_equal(vg_keyring_add_mem(kr, buf, n - 1, "cut", &d), -EBADMSG);
	assert_int_equal(vg_keyring_count(kr), 0);
	vg_keyring_free(kr);
}

static void add_mem_survives_allocation_failures(void **state)
{
	static uint8_t buf[16384];
	size_t n = slurp("keys/ecp256.cert.pem", buf, sizeof(buf));

	(void)state;
	n += slurp("keys/rsa2048.pub.pem", buf + n, sizeof(buf) - n);
	for (long k = 0;; k++) {
		struct vg_keyring *kr;
		int r;

		assert_int_equal(vg_keyring_new(&kr), 0);
		failalloc_arm(k);
		r = vg_keyring_add_mem(kr, buf, n, "bundle", NULL);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(r, 2);
			vg_keyring_free(kr);
			break;
		}
		/*
		 * A clean error (OpenSSL reports some allocation failures as
		 * parse errors), or, when OpenSSL recovered, every key: never
		 * a keyring with keys silently missing.
		 */
		if (r >= 0) {
			assert_true(r == 2 && vg_keyring_count(kr) == 2);
		} else {
			assert_true(r == -ENOMEM || r == -EBADMSG || r == -EIO);
			assert_int_equal(vg_keyring_count(kr), 0);
		}
		vg_keyring_free(kr);	/* and nothing leaks (ASan) */
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_mem_pem_der_and_bundles),
		cmocka_unit_test(add_mem_rejects_garbage),
		cmocka_unit_test(add_mem_survives_allocation_failures),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
