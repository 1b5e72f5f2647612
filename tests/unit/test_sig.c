// SPDX-License-Identifier: MIT
/* test_sig.c - keyrings, keyids, signature v2 sign and verify. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"
#include "vigil/xattr_ima.h"

static const struct { const char *name; uint32_t keyid; } keys[] = {
	{ "rsa2048", 0xf532730b }, { "ecp256", 0xa8f6ddf0 }, { "rsa4096", 0x7d279e7f },
};

static void keyring_loads_pem_der_and_pubkeys(void **state)
{
	static const char *const forms[] = { "cert.pem", "cert.der", "pub.pem" };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		for (size_t f = 0; f < 3; f++) {
			struct vg_keyring *kr;
			char rel[64];

			snprintf(rel, sizeof(rel), "keys/%s.%s", keys[k].name, forms[f]);
			assert_int_equal(vg_keyring_new(&kr), 0);
			assert_int_equal(vg_keyring_add_file(kr, vec_path(rel), NULL), 1);
			assert_int_equal(vg_keyring_count(kr), 1);
			assert_int_equal(vg_keyring_info(kr, 0)->keyid, keys[k].keyid);
			assert_int_equal(vg_keyring_info(kr, 0)->from_cert, f < 2);
			assert_non_null(vg_keyring_find(kr, keys[k].keyid));
			assert_null(vg_keyring_find(kr, keys[k].keyid ^ 1));
			vg_keyring_free(kr);
		}
	}
}

static void keyring_reports_type_names(void **state)
{
	struct vg_keyring *kr;

	(void)state;
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/rsa2048.cert.pem"), NULL), 1);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/ecp256.cert.pem"), NULL), 1);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/rsa4096.pub.pem"), NULL), 1);
	assert_string_equal(vg_keyring_info(kr, 0)->type, "rsa2048");
	assert_string_equal(vg_keyring_info(kr, 1)->type, "ecp256");
	assert_string_equal(vg_keyring_info(kr, 2)->type, "rsa4096");
	assert_null(vg_keyring_info(kr, 3));
	vg_keyring_free(kr);
}

static void keyring_rejects_bad_files(void **state)
{
	struct vg_keyring *kr;
	struct vg_diag d = { 0 };
	char path[] = "/tmp/vigil-kr-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not a key at all\n", 17), 17);
	close(fd);
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_file(kr, "/nonexistent/vigil.pem", &d), -ENOENT);
	assert_non_null(strstr(d.msg, "/nonexistent/vigil.pem"));
	assert_int_equal(vg_keyring_add_file(kr, path, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, path));
	/* a PEM file with only a private key holds no trusted key */
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/rsa2048.key.pem"), &d), -EBADMSG);
	assert_int_equal(vg_keyring_count(kr), 0);
	vg_keyring_free(kr);
	unlink(path);
}

static void keyid_of_pkey_matches_evmctl(void **state)
{
	(void)state;
	for (size_t k = 0; k < 3; k++) {
		struct vg_signer *s;
		char rel[64];

		snprintf(rel, sizeof(rel), "keys/%s.key.pem", keys[k].name);
		assert_int_equal(vg_signer_load(vec_path(rel), &s, NULL), 0);
		assert_int_equal(vg_signer_keyid(s), keys[k].keyid);
		vg_signer_free(s);
	}
}

static void signer_rejects_non_keys(void **state)
{
	struct vg_signer *s = NULL;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_signer_load(vec_path("keys/rsa2048.cert.pem"), &s, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "private key"));
	assert_int_equal(vg_signer_load("/nonexistent", &s, &d), -ENOENT);
	assert_null(s);
}

/* Verify evmctl's own signature of one.bin. */
static void verify_evmctl_signature(void **state)
{
	uint8_t data[16], sig[1024];
	struct vg_keyring *kr;
	struct vg_digest d;
	long n = vec_file("data/one.bin", data, sizeof(data));
	int len;

	(void)state;
	assert_int_equal(n, 1);
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/rsa2048.cert.der"), NULL), 1);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/ecp256.cert.der"), NULL), 1);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/rsa4096.cert.der"), NULL), 1);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, data, 1, &d, NULL), 0);
	len = vec_xattr("ima-sig.one.rsa2048.sha256", "security.ima", sig, sizeof(sig));
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), 0);
	len = vec_xattr("ima-sig.one.ecp256.sha256", "security.ima", sig, sizeof(sig));
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA512, data, 1, &d, NULL), 0);
	len = vec_xattr("ima-sig.one.rsa4096.sha512", "security.ima", sig, sizeof(sig));
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), 0);
	/* one flipped digest bit */
	d.bytes[0] ^= 1;
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), -EKEYREJECTED);
	vg_keyring_free(kr);
}

static void verify_rejects_bad_inputs(void **state)
{
	uint8_t data[16], sig[1024];
	struct vg_keyring *kr, *empty;
	struct vg_digest d;
	struct vg_diag diag = { 0 };
	int len;

	(void)state;
	assert_int_equal(vec_file("data/one.bin", data, sizeof(data)), 1);
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_new(&empty), 0);
	assert_int_equal(vg_keyring_add_file(kr, vec_path("keys/rsa2048.cert.pem"), NULL), 1);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, data, 1, &d, NULL), 0);
	len = vec_xattr("ima-sig.one.rsa2048.sha256", "security.ima", sig, sizeof(sig));

	assert_int_equal(vg_sig_verify(empty, sig, (size_t)len, &d, &diag), -ENOKEY);
	assert_non_null(strstr(diag.msg, "f532730b"));
	assert_int_equal(vg_sig_verify(NULL, sig, (size_t)len, &d, NULL), -ENOKEY);
	/* last signature byte */
	sig[len - 1] ^= 1;
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), -EKEYREJECTED);
	sig[len - 1] ^= 1;
	/* version 1 is the old digsig format: not verified here */
	sig[1] = 1;
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), -EOPNOTSUPP);
	sig[1] = 2;
	/* digest of another algorithm than the header names */
	assert_int_equal(vg_hash_buf(VG_HASH_SHA1, data, 1, &d, NULL), 0);
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len, &d, NULL), -EINVAL);
	/* truncated */
	assert_int_equal(vg_sig_verify(kr, sig, (size_t)len - 1, &d, NULL), -EBADMSG);
	vg_keyring_free(kr);
	vg_keyring_free(empty);
}

/* Sign with a key generated here, verify through a keyring file. */
static void sign_verify_round_trip(const char *keytype, const char *param, unsigned int algo)
{
	EVP_PKEY *pk = strcmp(keytype, "RSA") == 0
		? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
		: EVP_PKEY_Q_keygen(NULL, NULL, "EC", param);
	char kpath[] = "/tmp/vigil-key-XXXXXX", ppath[] = "/tmp/vigil-pub-XXXXXX";
	int kfd = mkstemp(kpath), pfd = mkstemp(ppath);
	FILE *kf = fdopen(kfd, "w"), *pf = fdopen(pfd, "w");
	struct vg_signer *s;
	struct vg_keyring *kr;
	struct vg_digest d;
	uint8_t blob[VG_SIG_V2_HDR_LEN + VG_SIG_MAX];
	int len;

	assert_non_null(pk);
	assert_true(PEM_write_PrivateKey(kf, pk, NULL, NULL, 0, NULL, NULL));
	assert_true(PEM_write_PUBKEY(pf, pk));
	fclose(kf);
	fclose(pf);
	EVP_PKEY_free(pk);

	assert_int_equal(vg_signer_load(kpath, &s, NULL), 0);
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_file(kr, ppath, NULL), 1);
	assert_int_equal(vg_keyring_info(kr, 0)->keyid, vg_signer_keyid(s));
	assert_int_equal(vg_hash_buf(algo, "vigil", 5, &d, NULL), 0);
	len = vg_sig_sign(s, VG_EVM_IMA_XATTR_DIGSIG, &d, blob, sizeof(blob), NULL);
	assert_true(len > VG_SIG_V2_HDR_LEN);
	assert_int_equal(blob[0], 0x03);
	assert_int_equal(blob[1], 2);
	assert_int_equal(blob[2], algo);
	assert_int_equal(vg_sig_verify(kr, blob, (size_t)len, &d, NULL), 0);
	d.bytes[d.len - 1] ^= 0x80;
	assert_int_equal(vg_sig_verify(kr, blob, (size_t)len, &d, NULL), -EKEYREJECTED);
	/* no room */
	assert_int_equal(vg_sig_sign(s, 0x03, &d, blob, 20, NULL), -ENOBUFS);
	vg_keyring_free(kr);
	vg_signer_free(s);
	unlink(kpath);
	unlink(ppath);
}

static void sign_verify_rsa_sha256(void **state) { (void)state; sign_verify_round_trip("RSA", NULL, VG_HASH_SHA256); }
static void sign_verify_rsa_sha1(void **state) { (void)state; sign_verify_round_trip("RSA", NULL, VG_HASH_SHA1); }
static void sign_verify_p256_sha256(void **state) { (void)state; sign_verify_round_trip("EC", "P-256", VG_HASH_SHA256); }
static void sign_verify_p384_sha384(void **state) { (void)state; sign_verify_round_trip("EC", "P-384", VG_HASH_SHA384); }
static void sign_verify_p256_sha3(void **state) { (void)state; sign_verify_round_trip("EC", "P-256", VG_HASH_SHA3_256); }

/* RSA PKCS#1 v1.5 is deterministic: our bytes equal evmctl's. */
static void sign_rsa_equals_evmctl(void **state)
{
	uint8_t data[16], want[1024], blob[1024];
	struct vg_signer *s;
	struct vg_digest d;
	int len, wlen;

	(void)state;
	assert_int_equal(vec_file("data/one.bin", data, sizeof(data)), 1);
	assert_int_equal(vg_signer_load(vec_path("keys/rsa2048.key.pem"), &s, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, data, 1, &d, NULL), 0);
	len = vg_sig_sign(s, VG_EVM_IMA_XATTR_DIGSIG, &d, blob, sizeof(blob), NULL);
	wlen = vec_xattr("ima-sig.one.rsa2048.sha256", "security.ima", want, sizeof(want));
	assert_int_equal(len, wlen);
	assert_memory_equal(blob, want, (size_t)len);
	vg_signer_free(s);
}

static void keyring_load_fails_cleanly_without_memory(void **state)
{
	(void)state;
	for (long n = 0;; n++) {
		struct vg_keyring *kr = NULL;
		int r;

		failalloc_arm(n);
		r = vg_keyring_new(&kr);
		if (r == 0)
			r = vg_keyring_add_file(kr, vec_path("keys/rsa2048.cert.pem"), NULL);
		failalloc_disarm();
		/* a success despite a failed allocation must still be right */
		if (r == 1)
			assert_int_equal(vg_keyring_info(kr, 0)->keyid, 0xf532730b);
		vg_keyring_free(kr);
		if (!failalloc_hit()) {
			assert_int_equal(r, 1);
			break;
		}
		/* OpenSSL reports its own allocation failures as parse errors */
		if (r != 1 && r != -ENOMEM && r != -EBADMSG && r != -EIO)
			fail_msg("allocation %ld failing gave %d", n, r);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(keyring_loads_pem_der_and_pubkeys),
		cmocka_unit_test(keyring_reports_type_names),
		cmocka_unit_test(keyring_rejects_bad_files),
		cmocka_unit_test(keyid_of_pkey_matches_evmctl),
		cmocka_unit_test(signer_rejects_non_keys),
		cmocka_unit_test(verify_evmctl_signature),
		cmocka_unit_test(verify_rejects_bad_inputs),
		cmocka_unit_test(sign_verify_rsa_sha256),
		cmocka_unit_test(sign_verify_rsa_sha1),
		cmocka_unit_test(sign_verify_p256_sha256),
		cmocka_unit_test(sign_verify_p384_sha384),
		cmocka_unit_test(sign_verify_p256_sha3),
		cmocka_unit_test(sign_rsa_equals_evmctl),
		cmocka_unit_test(keyring_load_fails_cleanly_without_memory),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
