// SPDX-License-Identifier: MIT
/*
 * test_hmac_key.c - key files without a TPM: raw keys, the vigil key file
 * codec (every truncation and every bad field rejected), passphrase keys
 * (scrypt against OpenSSL's own command line, wrong passphrase refused,
 * allocation failures clean). TPM-sealed keys are in test_tpm.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/hmac_key.h"

static const char pass[] = "correct horse battery staple";

static void tmpname(char *buf, size_t cap, const char *name)
{
	const char *d = getenv("VIGIL_TESTDIR");

	snprintf(buf, cap, "%s/%s", d ? d : "/tmp", name);
}

static void raw_key_still_loads(void **state)
{
	struct vg_hmac_key k;
	struct vg_key_file kf;
	enum vg_key_kind kind = VG_KEY_TPM;

	(void)state;
	assert_int_equal(vg_hmac_key_load_raw(vec_path("keys/evm-key-plain.bin"), &k, NULL), 0);
	assert_int_equal(k.len, 32);
	assert_int_equal(vg_key_file_read(vec_path("keys/evm-key-plain.bin"), &kf, NULL), 0);
	assert_int_equal(kf.kind, VG_KEY_RAW);
	assert_int_equal(kf.key_len, 32);
	{
		struct vg_hmac_key k2;

		assert_int_equal(vg_hmac_key_load(vec_path("keys/evm-key-plain.bin"), NULL, &k2,
						  &kind, NULL), 0);
		assert_int_equal(kind, VG_KEY_RAW);
		assert_memory_equal(k.key, k2.key, 32);
		vg_hmac_key_wipe(&k2);
	}
	vg_hmac_key_wipe(&k);
}

static void decode_rejects_short_raw_key(void **state)
{
	uint8_t buf[31] = { 1 };
	struct vg_key_file kf;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_key_file_decode(buf, sizeof(buf), &kf, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "32 to 128"));
}

static void make_pass_file(struct vg_key_file *kf, struct vg_hmac_key *k, unsigned int logn)
{
	assert_int_equal(vg_hmac_key_passphrase_new(pass, strlen(pass), logn, 32, kf, k, NULL), 0);
}

static void passphrase_roundtrip_and_wrong_passphrase(void **state)
{
	struct vg_key_file kf, kf2;
	struct vg_hmac_key k, k2;
	struct vg_diag d = { 0 };
	uint8_t buf[VG_KEY_FILE_MAX];
	int n;

	(void)state;
	make_pass_file(&kf, &k, 12);
	n = vg_key_file_encode(&kf, buf, sizeof(buf), NULL);
	assert_true(n > 0);
	assert_memory_equal(buf, "VIGILKEY", 8);
	/* the key itself is nowhere in the file */
	for (int i = 0; i + 8 <= n; i++)
		assert_memory_not_equal(buf + i, k.key, 8);
	assert_int_equal(vg_key_file_decode(buf, (size_t)n, &kf2, NULL), 0);
	assert_int_equal(kf2.kind, VG_KEY_PASSPHRASE);
	assert_int_equal(kf2.kdf.log_n, 12);
	assert_int_equal(kf2.kdf.r, 8);
	assert_int_equal(kf2.kdf.p, 1);
	assert_int_equal(vg_hmac_key_derive(&kf2, pass, strlen(pass), &k2, NULL), 0);
	assert_int_equal(k2.len, 32);
	assert_memory_equal(k.key, k2.key, 32);
	assert_int_equal(vg_hmac_key_derive(&kf2, "Correct horse battery staple", strlen(pass), &k2, &d),
			 -EKEYREJECTED);
	assert_string_equal(d.msg, "wrong passphrase");
	assert_null(strstr(d.msg, pass));
	vg_hmac_key_wipe(&k);
	vg_hmac_key_wipe(&k2);
}

/* The derived key is plain scrypt: compare with `openssl kdf` (OpenSSL 3 CLI). */
static void passphrase_key_is_scrypt(void **state)
{
	struct vg_key_file kf;
	struct vg_hmac_key k;
	char cmd[1024], salt[129], want[65], got[128] = "";
	FILE *f;

	(void)state;
	make_pass_file(&kf, &k, 10);
	vg_hex_encode(kf.kdf.salt, kf.kdf.salt_len, salt);
	vg_hex_encode(k.key, 32, want);
	snprintf(cmd, sizeof(cmd),
		 "openssl kdf -keylen 32 -kdfopt 'pass:%s' -kdfopt hexsalt:%s -kdfopt n:1024 "
		 "-kdfopt r:8 -kdfopt p:1 SCRYPT 2>&1 | tr -d ':\\n' | tr A-F a-f", pass, salt);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	pclose(f);
	assert_string_equal(got, want);
	vg_hmac_key_wipe(&k);
}

static void decode_rejects_every_truncation(void **state)
{
	struct vg_key_file kf, kf2;
	struct vg_hmac_key k;
	uint8_t buf[VG_KEY_FILE_MAX];
	int n;

	(void)state;
	make_pass_file(&kf, &k, 10);
	n = vg_key_file_encode(&kf, buf, sizeof(buf), NULL);
	for (int len = 8; len < n; len++) {
		struct vg_diag d = { 0 };

		assert_int_equal(vg_key_file_decode(buf, (size_t)len, &kf2, &d), -EBADMSG);
		assert_true(d.msg[0] != 0);
	}
	/* one byte more is trailing garbage */
	buf[n] = 0;
	assert_int_equal(vg_key_file_decode(buf, (size_t)n + 1, &kf2, NULL), -EBADMSG);
	vg_hmac_key_wipe(&k);
}

static void decode_rejects_bad_fields(void **state)
{
	struct vg_key_file kf, kf2;
	struct vg_hmac_key k;
	uint8_t buf[VG_KEY_FILE_MAX], b[VG_KEY_FILE_MAX];
	struct {
		size_t off;
		uint8_t val;
		int err;
		const char *what;
	} cases[] = {
		{ 8, 2, -EOPNOTSUPP, "version" },
		{ 9, 31, -EBADMSG, "key length" },
		{ 9, 129, -EBADMSG, "key length" },
		{ 10, 9, -EOPNOTSUPP, "section type" },
		{ 13, 9, -EBADMSG, "scrypt N" },	/* log_n below 10 */
		{ 13, 30, -EBADMSG, "scrypt N" },
		{ 17, 0, -EBADMSG, "scrypt r" },	/* r = 0 */
		{ 16, 1, -EBADMSG, "scrypt r" },	/* r = 2^8 + 8 */
		{ 21, 17, -EBADMSG, "scrypt p" },	/* p = 17 */
		{ 22, 15, -EBADMSG, "salt" },		/* salt length */
		{ 22, 65, -EBADMSG, "salt" },
	};
	int n;

	(void)state;
	make_pass_file(&kf, &k, 10);
	n = vg_key_file_encode(&kf, buf, sizeof(buf), NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_diag d = { 0 };

		memcpy(b, buf, (size_t)n);
		b[cases[i].off] = cases[i].val;
		assert_int_equal(vg_key_file_decode(b, (size_t)n, &kf2, &d), cases[i].err);
		assert_true(d.msg[0] != 0);
	}
	/* a changed salt or check value decodes, and the passphrase is then "wrong" */
	memcpy(b, buf, (size_t)n);
	b[23] ^= 1;
	assert_int_equal(vg_key_file_decode(b, (size_t)n, &kf2, NULL), 0);
	assert_int_equal(vg_hmac_key_derive(&kf2, pass, strlen(pass), &k, NULL), -EKEYREJECTED);
	vg_hmac_key_wipe(&k);
}

static void tpm_section_decode_bounds(void **state)
{
	struct vg_key_file kf = { .kind = VG_KEY_TPM, .key_len = 32,
				  .pcrs = { .bank = VG_HASH_SHA256, .mask = 1u << 23 | 1u << 7 },
				  .blob_len = 100 };
	struct vg_key_file kf2;
	uint8_t buf[VG_KEY_FILE_MAX], b[VG_KEY_FILE_MAX];
	int n;

	(void)state;
	memset(kf.pcrs.values[7], 7, 32);
	memset(kf.pcrs.values[23], 23, 32);
	memset(kf.blob, 0xb1, 100);
	n = vg_key_file_encode(&kf, buf, sizeof(buf), NULL);
	assert_int_equal(n, 13 + 6 + 64 + 100);
	assert_int_equal(vg_key_file_decode(buf, (size_t)n, &kf2, NULL), 0);
	assert_int_equal(kf2.kind, VG_KEY_TPM);
	assert_int_equal(kf2.pcrs.bank, VG_HASH_SHA256);
	assert_int_equal(kf2.pcrs.mask, kf.pcrs.mask);
	assert_memory_equal(kf2.pcrs.values[7], kf.pcrs.values[7], 32);
	assert_memory_equal(kf2.pcrs.values[23], kf.pcrs.values[23], 32);
	assert_int_equal(kf2.blob_len, 100);
	assert_memory_equal(kf2.blob, kf.blob, 100);
	for (int len = 8; len < n; len++)
		assert_int_equal(vg_key_file_decode(buf, (size_t)len, &kf2, NULL), -EBADMSG);
	memcpy(b, buf, (size_t)n);
	b[14] = 0x42;		/* unknown bank */
	assert_int_equal(vg_key_file_decode(b, (size_t)n, &kf2, NULL), -EBADMSG);
	memcpy(b, buf, (size_t)n);
	b[15] = 1;		/* PCR 24 selected */
	assert_int_equal(vg_key_file_decode(b, (size_t)n, &kf2, NULL), -EBADMSG);
	memcpy(b, buf, (size_t)n);
	memset(b + 15, 0, 4);	/* nothing selected */
	assert_int_equal(vg_key_file_decode(b, (size_t)n, &kf2, NULL), -EBADMSG);
	/* 100 bytes of 0xb1 are no sealed object */
	assert_int_equal(vg_tpm_blob_check(kf.blob, kf.blob_len, &kf.pcrs, NULL), -EBADMSG);
	for (size_t len = 0; len < 64; len++) {
		uint8_t z[64] = { 0 };

		assert_int_equal(vg_tpm_blob_check(z, len, &kf.pcrs, NULL), -EBADMSG);
	}
}

static int pass_cb(void *arg, const char *path, char *buf, size_t cap)
{
	const char *p = arg;

	(void)path;
	if (!p)
		return -ENOKEY;
	assert_true(strlen(p) <= cap);
	memcpy(buf, p, strlen(p));
	return (int)strlen(p);
}

static void write_and_load_passphrase_file(void **state)
{
	struct vg_key_file kf;
	struct vg_hmac_key k, k2;
	struct vg_key_source src = { .passphrase = pass_cb, .arg = (void *)pass };
	struct vg_diag d = { 0 };
	enum vg_key_kind kind;
	struct stat st;
	char path[4096];

	(void)state;
	tmpname(path, sizeof(path), "pass.key");
	make_pass_file(&kf, &k, 10);
	assert_int_equal(vg_key_file_write(path, &kf, NULL), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(vg_hmac_key_load(path, &src, &k2, &kind, NULL), 0);
	assert_int_equal(kind, VG_KEY_PASSPHRASE);
	assert_memory_equal(k.key, k2.key, 32);
	src.arg = (void *)"nope";
	assert_int_equal(vg_hmac_key_load(path, &src, &k2, &kind, &d), -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "pass.key: wrong passphrase"));
	src.arg = NULL;
	assert_int_equal(vg_hmac_key_load(path, &src, &k2, &kind, &d), -ENOKEY);
	assert_int_equal(vg_hmac_key_load(path, NULL, &k2, &kind, &d), -ENOKEY);
	/* a key file cannot be written over a directory; nothing is left behind */
	tmpname(path, sizeof(path), "");
	assert_true(vg_key_file_write(path, &kf, NULL) < 0);
	unlink(path);
	vg_hmac_key_wipe(&k);
	vg_hmac_key_wipe(&k2);
}

static void derive_survives_allocation_failures(void **state)
{
	struct vg_key_file kf;
	struct vg_hmac_key k, k2;
	long failures = 0;

	(void)state;
	make_pass_file(&kf, &k, 10);
	for (long n = 0;; n++) {
		int rc;

		failalloc_arm(n);
		rc = vg_hmac_key_derive(&kf, pass, strlen(pass), &k2, NULL);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(rc, 0);
			assert_memory_equal(k.key, k2.key, 32);
			break;
		}
		failures++;
		assert_true(rc == -ENOMEM || rc == -EIO);
	}
	assert_true(failures > 0);
	vg_hmac_key_wipe(&k);
	vg_hmac_key_wipe(&k2);
}

static void generate_is_random(void **state)
{
	struct vg_hmac_key a, b;

	(void)state;
	assert_int_equal(vg_hmac_key_generate(NULL, 32, &a, NULL), 0);
	assert_int_equal(vg_hmac_key_generate(NULL, 32, &b, NULL), 0);
	assert_int_equal(a.len, 32);
	assert_memory_not_equal(a.key, b.key, 32);
	assert_int_equal(vg_hmac_key_generate(NULL, 31, &a, NULL), -EINVAL);
	assert_int_equal(vg_hmac_key_passphrase_new(pass, strlen(pass), 9, 32, &(struct vg_key_file){ 0 },
						    &a, NULL), -EINVAL);
	assert_int_equal(vg_hmac_key_passphrase_new("", 0, 12, 32, &(struct vg_key_file){ 0 }, &a, NULL),
			 -EINVAL);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(raw_key_still_loads),
		cmocka_unit_test(decode_rejects_short_raw_key),
		cmocka_unit_test(passphrase_roundtrip_and_wrong_passphrase),
		cmocka_unit_test(passphrase_key_is_scrypt),
		cmocka_unit_test(decode_rejects_every_truncation),
		cmocka_unit_test(decode_rejects_bad_fields),
		cmocka_unit_test(tpm_section_decode_bounds),
		cmocka_unit_test(write_and_load_passphrase_file),
		cmocka_unit_test(derive_survives_allocation_failures),
		cmocka_unit_test(generate_is_random),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
