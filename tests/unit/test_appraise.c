// SPDX-License-Identifier: MIT
/*
 * test_appraise.c - the appraisal decision, branch by branch of
 * ima_appraise_measurement() / xattr_verify() / evm_verify_hmac().
 * Runs on a private tmpfs ($VIGIL_TESTDIR, see privns.sh).
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
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/appraise.h"
#include "vigil/keyring.h"
#include "vigil/xattr_ima.h"

struct fx {
	struct vg_hasher *h;
	struct vg_keyring *kr;
	struct vg_signer *rsa, *ec;
	struct vg_evm_config cfg;
	uint8_t key[32];
	char path[4096];
	int fd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *dir = getenv("VIGIL_TESTDIR");
	static int seq;

	if (!f || !dir)
		return -1;
	assert_int_equal(vg_hasher_new(&f->h), 0);
	assert_int_equal(vg_keyring_new(&f->kr), 0);
	assert_int_equal(vg_keyring_add_file(f->kr, vec_path("keys/rsa2048.cert.pem"), NULL), 1);
	assert_int_equal(vg_keyring_add_file(f->kr, vec_path("keys/ecp256.cert.der"), NULL), 1);
	assert_int_equal(vg_signer_load(vec_path("keys/rsa2048.key.pem"), &f->rsa, NULL), 0);
	assert_int_equal(vg_signer_load(vec_path("keys/ecp256.key.pem"), &f->ec, NULL), 0);
	vg_evm_config_default(&f->cfg);
	memset(f->key, 0x42, sizeof(f->key));
	snprintf(f->path, sizeof(f->path), "%s/f%d", dir, seq++);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(f->fd >= 0);
	assert_int_equal(write(f->fd, "hello vigil\n", 12), 12);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	close(f->fd);
	unlink(f->path);
	vg_signer_free(f->rsa);
	vg_signer_free(f->ec);
	vg_keyring_free(f->kr);
	vg_hasher_free(f->h);
	free(f);
	return 0;
}

static struct vg_appraise_opts opts(struct fx *f, bool hmac)
{
	return (struct vg_appraise_opts){
		.evm = &f->cfg, .ima_keys = f->kr, .evm_keys = f->kr,
		.hmac_key = hmac ? f->key : NULL, .hmac_key_len = hmac ? sizeof(f->key) : 0,
		.default_algo = VG_HASH_SHA256,
	};
}

static struct vg_appraise_result run(struct fx *f, const struct vg_appraise_opts *o)
{
	struct vg_appraise_result r;
	struct vg_diag d = { 0 };

	assert_int_equal(vg_appraise_fd(f->h, f->fd, o, &r, &d), 0);
	return r;
}

static void expect(struct fx *f, const struct vg_appraise_opts *o, enum vg_status st,
		   const char *cause)
{
	struct vg_appraise_result r = run(f, o);

	if (!cause) {
		if (r.status != VG_ST_PASS)
			fail_msg("expected pass, got %s (%s): %s", vg_status_name(r.status),
				 r.cause ? r.cause : "-", r.detail.msg);
		assert_null(r.cause);
		return;
	}
	if (r.status != st || !r.cause || strcmp(r.cause, cause) != 0)
		fail_msg("expected %s (%s), got %s (%s): %s", vg_status_name(st), cause,
			 vg_status_name(r.status), r.cause ? r.cause : "-", r.detail.msg);
}

static void label_hash(struct fx *f, unsigned int algo)
{
	assert_int_equal(vg_label_ima_fd(f->h, f->fd, algo, NULL, NULL, NULL), 0);
}

static void label_evm(struct fx *f, uint8_t type, struct vg_signer *s)
{
	struct vg_evm_label_opts o = { .evm = &f->cfg, .type = type, .algo = VG_HASH_SHA256,
				       .signer = s, .hmac_key = f->key,
				       .hmac_key_len = sizeof(f->key) };
	struct vg_diag d = { 0 };

	if (vg_label_evm_fd(f->fd, &o, &d) < 0)
		fail_msg("label evm: %s", d.msg);
}

static void append(struct fx *f, const char *s)
{
	assert_true(pwrite(f->fd, s, strlen(s), 1000) > 0);
}

static void no_label_is_missing_hash(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);

	expect(f, &o, VG_ST_NOLABEL, "missing-hash");
	o.require_sig = true;
	expect(f, &o, VG_ST_NOLABEL, "IMA-signature-required");
}

static void hash_labels_pass_and_detect_content(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);
	static const unsigned int algos[] = { VG_HASH_SHA1, VG_HASH_SHA256, VG_HASH_SHA512,
					      VG_HASH_SM3_256, VG_HASH_SHA3_384, VG_HASH_MD5 };

	(void)state;
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		struct vg_appraise_result r;

		label_hash(f, algos[i]);
		r = run(f, &o);
		assert_int_equal(r.status, VG_ST_PASS);
		assert_int_equal(r.digest.algo, algos[i]);
		assert_int_equal(r.evm_status, VG_ST_UNKNOWN);
	}
	append(f, "x");
	expect(f, &o, VG_ST_FAIL, "invalid-hash");
	/* appraise_algos= */
	label_hash(f, VG_HASH_SHA1);
	o.allowed_algos = 1u << VG_HASH_SHA256;
	expect(f, &o, VG_ST_FAIL, "denied-hash-algorithm");
	label_hash(f, VG_HASH_SHA256);
	expect(f, &o, VG_ST_PASS, NULL);
}

static void hash_does_not_satisfy_imasig(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);

	label_hash(f, VG_HASH_SHA256);
	o.require_sig = true;
	expect(f, &o, VG_ST_FAIL, "IMA-signature-required");
	/* ... unless a portable EVM signature covers it */
	label_evm(f, VG_EVM_XATTR_PORTABLE_DIGSIG, f->rsa);
	expect(f, &o, VG_ST_PASS, NULL);
}

static void signatures_pass_and_fail(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);
	struct vg_keyring *other;

	assert_int_equal(vg_label_ima_fd(f->h, f->fd, VG_HASH_SHA256, f->rsa, NULL, NULL), 0);
	o.require_sig = true;
	expect(f, &o, VG_ST_PASS, NULL);
	assert_int_equal(vg_label_ima_fd(f->h, f->fd, VG_HASH_SHA384, f->ec, NULL, NULL), 0);
	expect(f, &o, VG_ST_PASS, NULL);
	append(f, "y");
	expect(f, &o, VG_ST_FAIL, "invalid-signature");
	assert_int_equal(vg_keyring_new(&other), 0);
	o.ima_keys = other;
	expect(f, &o, VG_ST_FAIL, "unknown-key");
	vg_keyring_free(other);
}

static void set_ima(struct fx *f, const uint8_t *v, size_t len)
{
	assert_int_equal(fsetxattr(f->fd, VG_XATTR_IMA, v, len, 0), 0);
}

static void malformed_values(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);
	uint8_t v[300];
	ssize_t n;

	set_ima(f, (const uint8_t *)"\x07\x04\x00", 3);
	expect(f, &o, VG_ST_UNKNOWN, "unknown-ima-data");
	set_ima(f, (const uint8_t *)"\x02\x00\x00", 3);
	expect(f, &o, VG_ST_UNKNOWN, "unknown-ima-data");
	set_ima(f, (const uint8_t *)"\x04\x04\x00", 3);
	expect(f, &o, VG_ST_FAIL, "invalid-hash");
	set_ima(f, (const uint8_t *)"\x01\x00\x00", 3);
	expect(f, &o, VG_ST_FAIL, "invalid-hash");

	assert_int_equal(vg_label_ima_fd(f->h, f->fd, VG_HASH_SHA256, f->rsa, NULL, NULL), 0);
	n = fgetxattr(f->fd, VG_XATTR_IMA, v, sizeof(v));
	assert_int_equal(n, 9 + 256);
	v[8] ^= 1;		/* sig_size */
	set_ima(f, v, (size_t)n);
	expect(f, &o, VG_ST_FAIL, "invalid-signature");
	v[8] ^= 1;
	v[1] = 3;		/* version 3 in a type-03 value */
	set_ima(f, v, (size_t)n);
	expect(f, &o, VG_ST_FAIL, "invalid-signature-version");
	v[0] = 0x06;		/* sigv3 verity form, body over another digest */
	set_ima(f, v, (size_t)n);
	expect(f, &o, VG_ST_FAIL, "invalid-verity-signature");
	v[1] = 2;
	set_ima(f, v, (size_t)n);
	expect(f, &o, VG_ST_FAIL, "invalid-signature-version");
}

static void hmac_binds_metadata(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, true);
	struct vg_appraise_result r;

	label_hash(f, VG_HASH_SHA256);
	expect(f, &o, VG_ST_NOLABEL, "missing-HMAC");
	label_evm(f, VG_EVM_XATTR_HMAC, NULL);
	r = run(f, &o);
	assert_int_equal(r.status, VG_ST_PASS);
	assert_int_equal(r.evm_status, VG_ST_PASS);
	/* without a key the HMAC is not checked, and says so */
	{
		struct vg_appraise_opts nk = opts(f, false);

		r = run(f, &nk);
		assert_int_equal(r.status, VG_ST_PASS);
		assert_true(r.hmac_unchecked);
	}
	assert_int_equal(fchmod(f->fd, 0600), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	assert_int_equal(fchmod(f->fd, 0644), 0);
	expect(f, &o, VG_ST_PASS, NULL);
	assert_int_equal(fchown(f->fd, 1, (gid_t)-1), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	assert_int_equal(fchown(f->fd, 0, 7), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	assert_int_equal(fchown(f->fd, 0, 0), 0);
	expect(f, &o, VG_ST_PASS, NULL);
	/* another protected xattr appears */
	assert_int_equal(fsetxattr(f->fd, "security.capability",
				   "\x01\x00\x00\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 20, 0), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	assert_int_equal(fremovexattr(f->fd, "security.capability"), 0);
	/* the inode number is bound */
	o.meta.ino_set = true;
	o.meta.ino = 4242;
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	o.meta.ino_set = false;
	/* and the UUID */
	o.uuid_mode = VG_UUID_GIVEN;
	memset(o.uuid, 0x11, 16);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	o.uuid_mode = VG_UUID_FROM_FS;
	/* wrong key */
	f->key[0] ^= 1;
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	f->key[0] ^= 1;
	/* a truncated HMAC */
	assert_int_equal(fsetxattr(f->fd, VG_XATTR_EVM, "\x02\x01\x02", 3, 0), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	/* the content is IMA's business: HMAC still fine, hash fails */
	label_evm(f, VG_EVM_XATTR_HMAC, NULL);
	append(f, "z");
	expect(f, &o, VG_ST_FAIL, "invalid-hash");
}

static void extra_protected_xattr(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, true);

	assert_int_equal(vg_evm_config_add(&f->cfg, "security.vigil.revision"), 0);
	assert_int_equal(fsetxattr(f->fd, "security.vigil.revision", "7", 1, 0), 0);
	label_hash(f, VG_HASH_SHA256);
	label_evm(f, VG_EVM_XATTR_HMAC, NULL);
	expect(f, &o, VG_ST_PASS, NULL);
	assert_int_equal(fsetxattr(f->fd, "security.vigil.revision", "6", 1, 0), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	/* a name that is not protected does not matter */
	assert_int_equal(fsetxattr(f->fd, "security.vigil.revision", "7", 1, 0), 0);
	assert_int_equal(fsetxattr(f->fd, "security.other", "q", 1, 0), 0);
	expect(f, &o, VG_ST_PASS, NULL);
}

static void portable_and_bound_signatures(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);
	struct vg_appraise_result r;

	assert_int_equal(vg_label_ima_fd(f->h, f->fd, VG_HASH_SHA256, f->ec, NULL, NULL), 0);
	label_evm(f, VG_EVM_XATTR_PORTABLE_DIGSIG, f->rsa);
	r = run(f, &o);
	assert_int_equal(r.status, VG_ST_PASS);
	assert_int_equal(r.evm_status, VG_ST_PASS_IMMUTABLE);
	/* portable: inode not bound */
	o.meta.ino_set = true;
	o.meta.ino = 77;
	expect(f, &o, VG_ST_PASS, NULL);
	o.meta.ino_set = false;
	assert_int_equal(fchmod(f->fd, 0755), 0);
	expect(f, &o, VG_ST_FAIL_IMMUTABLE, "invalid-fail-immutable");
	assert_int_equal(fchmod(f->fd, 0644), 0);
	/* 03: bound to the inode */
	label_evm(f, VG_EVM_IMA_XATTR_DIGSIG, f->ec);
	r = run(f, &o);
	assert_int_equal(r.evm_status, VG_ST_PASS);
	o.meta.ino_set = true;
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	o.meta.ino_set = false;
	/* unknown EVM key */
	{
		struct vg_keyring *none;

		assert_int_equal(vg_keyring_new(&none), 0);
		o.evm_keys = none;
		expect(f, &o, VG_ST_FAIL, "unknown-key");
		o.evm_keys = f->kr;
		vg_keyring_free(none);
	}
	/* unknown security.evm type, and a header without signature */
	assert_int_equal(fsetxattr(f->fd, VG_XATTR_EVM, "\x09\x01", 2, 0), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	assert_int_equal(fsetxattr(f->fd, VG_XATTR_EVM, "\x05\x02\x04\x00\x00\x00\x00\x00\x00", 9, 0), 0);
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
	/* a portable header past 9 bytes that does not decode fails as immutable */
	assert_int_equal(fsetxattr(f->fd, VG_XATTR_EVM, "\x05\x02\x04\x00\x00\x00\x00\x00\x05\x01", 10, 0), 0);
	expect(f, &o, VG_ST_FAIL_IMMUTABLE, "invalid-fail-immutable");
	/* an HMAC of evmctl's 33-byte form is not judged without a key (IMA decides) */
	{
		uint8_t h33[33] = { 0x02 };

		assert_int_equal(fsetxattr(f->fd, VG_XATTR_EVM, h33, sizeof(h33), 0), 0);
		r = run(f, &o);
		assert_int_equal(r.status, VG_ST_PASS);
		assert_true(r.hmac_unchecked);
	}
}

static void evm_required_without_hmac_key(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, false);

	label_hash(f, VG_HASH_SHA256);
	expect(f, &o, VG_ST_PASS, NULL);
	o.evm_required = true;
	expect(f, &o, VG_ST_NOLABEL, "missing-HMAC");
	/* security.ima not protected: EVM has no say (evm_verifyxattr UNKNOWN) */
	assert_int_equal(vg_evm_config_enable(&f->cfg, "security.ima", false), 0);
	{
		struct vg_evm_config c;

		c = f->cfg;
		c.n = 0;
		o.evm = &c;
		expect(f, &o, VG_ST_PASS, NULL);
		o.evm = &f->cfg;
	}
}

static void uuid_mode_given_matches_fs(void **state)
{
	struct fx *f = *state;
	struct vg_appraise_opts o = opts(f, true);
	uint8_t uuid[16];

	assert_int_equal(vg_fs_uuid(f->fd, uuid, NULL), 0);
	label_hash(f, VG_HASH_SHA256);
	label_evm(f, VG_EVM_XATTR_HMAC, NULL);
	o.uuid_mode = VG_UUID_GIVEN;
	memcpy(o.uuid, uuid, 16);
	expect(f, &o, VG_ST_PASS, NULL);
	/* --no-uuid: a different HMAC */
	f->cfg.fsuuid = false;
	expect(f, &o, VG_ST_FAIL, "invalid-HMAC");
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(no_label_is_missing_hash, setup, teardown),
		cmocka_unit_test_setup_teardown(hash_labels_pass_and_detect_content, setup, teardown),
		cmocka_unit_test_setup_teardown(hash_does_not_satisfy_imasig, setup, teardown),
		cmocka_unit_test_setup_teardown(signatures_pass_and_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_values, setup, teardown),
		cmocka_unit_test_setup_teardown(hmac_binds_metadata, setup, teardown),
		cmocka_unit_test_setup_teardown(extra_protected_xattr, setup, teardown),
		cmocka_unit_test_setup_teardown(portable_and_bound_signatures, setup, teardown),
		cmocka_unit_test_setup_teardown(evm_required_without_hmac_key, setup, teardown),
		cmocka_unit_test_setup_teardown(uuid_mode_given_matches_fs, setup, teardown),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
