// SPDX-License-Identifier: MIT
/*
 * test_alloc.c - appraisal and labeling with the N-th allocation failing,
 * for every N until a run needs no failed allocation: each run must end
 * in success or a clean negative errno, and (under ASan) leak nothing.
 * Runs on a private tmpfs ($VIGIL_TESTDIR).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/appraise.h"
#include "vigil/keyring.h"

static int make_file(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/alloc.bin", getenv("VIGIL_TESTDIR"));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "some content", 12), 12);
	return fd;
}

static void appraise_survives_allocation_failures(void **state)
{
	struct vg_hasher *h;
	struct vg_keyring *kr;
	struct vg_signer *s;
	struct vg_evm_config cfg;
	uint8_t key[32] = { 9 };
	struct vg_evm_label_opts lo = { .evm = &cfg, .type = 0x02, .hmac_key = key,
					.hmac_key_len = sizeof(key) };
	struct vg_appraise_opts o = { .evm = &cfg, .hmac_key = key, .hmac_key_len = sizeof(key),
				      .default_algo = VG_HASH_SHA256 };
	int fd = make_file();
	long failures = 0;

	(void)state;
	vg_evm_config_default(&cfg);
	assert_int_equal(vg_hasher_new(&h), 0);
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/ecp256.cert.pem"), NULL), 1);
	assert_int_equal(vg_signer_load(vec_path("keys/ecp256.key.pem"), &s, NULL), 0);
	o.ima_keys = o.evm_keys = kr;
	assert_int_equal(vg_label_ima_fd(h, fd, VG_HASH_SHA256, s, NULL, NULL), 0);
	assert_int_equal(vg_label_evm_fd(fd, &lo, NULL), 0);

	for (long n = 0;; n++) {
		struct vg_appraise_result r;
		int rc;

		failalloc_arm(n);
		rc = vg_appraise_fd(h, fd, &o, &r, NULL);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(rc, 0);
			assert_int_equal(r.status, VG_ST_PASS);
			break;
		}
		failures++;
		/* either a clean error, or a verdict that is not a false pass */
		if (rc == 0)
			assert_int_not_equal(r.status, VG_ST_PASS);
		else
			assert_true(rc == -ENOMEM || rc == -EIO);
	}
	assert_true(failures > 0);

	for (long n = 0;; n++) {
		int rc;

		failalloc_arm(n);
		rc = vg_label_evm_fd(fd, &lo, NULL);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(rc, 0);
			break;
		}
		assert_true(rc == -ENOMEM || rc == -EIO);
	}
	close(fd);
	vg_signer_free(s);
	vg_keyring_free(kr);
	vg_hasher_free(h);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(appraise_survives_allocation_failures),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
