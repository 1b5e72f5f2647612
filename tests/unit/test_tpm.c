// SPDX-License-Identifier: MIT
/*
 * test_tpm.c - the TPM module against a real swtpm (scripts/swtpm.sh,
 * started for this run in $VIGIL_TESTDIR and stopped by PID): PCR read and
 * extend against a software replay, the PolicyPCR digest against a TPM
 * trial session (tpm2_createpolicy), seal/unseal, refusal after an extend
 * naming the PCR, sealing to expected future values, corrupted and
 * mislabeled blobs, and that nothing leaks TPM slots (swtpm has 3); NV
 * counters: defined once, monotonic, an ordinary index refused.
 */
#include <errno.h>
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
#include "swtpm.h"
#include "vigil/hmac_key.h"
#include "vigil/tpm.h"

/*
 * OpenSSL 3.0's OSSL_LIB_CTX_new leaks what it allocated when a later
 * allocation inside it fails (seen with fast_unwind_on_malloc=0: every
 * leaked stack runs Esys_CreatePrimary/Esys_Load -> OSSL_LIB_CTX_new);
 * tpm2-tss 3.2.1 makes a library context per crypto operation, so the
 * allocation-failure test below meets it. libcrypto has no frame pointers,
 * so the fast unwinder stops inside it: suppress leaks allocated within
 * libcrypto, in this test only. libvigil's own allocations (failalloc's
 * wrapped malloc, never under libcrypto) are still checked; its OpenSSL use
 * is leak-checked by test_hmac_key and test_alloc.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libcrypto.so\n";
}

static char dir[4096];
static char tcti[4200];
static struct vg_tpm *tpm;

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int group_setup(void **state)
{
	(void)state;
	if (test_swtpm_start("/tmp/vigil-test-tpm", dir, sizeof(dir), tcti, sizeof(tcti)) < 0)
		return -1;
	setenv("TPM2TOOLS_TCTI", tcti, 1);
	return vg_tpm_open(tcti, &tpm, NULL);
}

static int group_teardown(void **state)
{
	(void)state;
	vg_tpm_close(tpm);
	return test_swtpm_stop(dir);
}

static void open_unreachable_tcti_is_enodev(void **state)
{
	struct vg_tpm *t = NULL;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_tpm_open("swtpm:path=/nonexistent/sock", &t, &d), -ENODEV);
	assert_non_null(strstr(d.msg, "/nonexistent/sock"));
	assert_null(t);
}

/* the library reads no environment (issue 18): $VIGIL_TCTI is the programs' */
static void open_ignores_environment(void **state)
{
	struct vg_tpm *t = NULL;
	struct vg_diag d = { 0 };

	(void)state;
	setenv("VIGIL_TCTI", tcti, 1);
	assert_int_equal(vg_tpm_open(NULL, &t, &d), -ENODEV);
	assert_non_null(strstr(d.msg, VG_TPM_TCTI_DEFAULT));
	assert_null(t);
	unsetenv("VIGIL_TCTI");
}

static void banks_are_sha1_and_sha256(void **state)
{
	(void)state;
	assert_int_equal(vg_tpm_banks(tpm), 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256);
	assert_int_equal(vg_tpm_pcr_ops.banks(tpm), vg_tpm_banks(tpm));
	assert_true(vg_tpm_pcr_ops.attestable);
}

static void extend_matches_software_replay(void **state)
{
	struct vg_digest d[3], before[2], after, want;
	uint8_t buf[2 * VG_HASH_MAX_DIGEST];
	unsigned int algos[2] = { VG_HASH_SHA1, VG_HASH_SHA256 };

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(vg_tpm_pcr_read(tpm, 16, algos[i], &before[i], NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA1, "a", 1, &d[0], NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "a", 1, &d[1], NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA384, "a", 1, &d[2], NULL), 0);	/* no such bank */
	assert_int_equal(vg_tpm_pcr_ops.extend(tpm, 16, d, 3, NULL), 0);
	for (int i = 0; i < 2; i++) {
		size_t n = vg_hash_size(algos[i]);

		memcpy(buf, before[i].bytes, n);
		memcpy(buf + n, d[i].bytes, n);
		assert_int_equal(vg_hash_buf(algos[i], buf, 2 * n, &want, NULL), 0);
		assert_int_equal(vg_tpm_pcr_ops.read(tpm, 16, algos[i], &after, NULL), 0);
		assert_int_equal(after.len, n);
		assert_memory_equal(after.bytes, want.bytes, n);
	}
	assert_int_equal(vg_tpm_pcr_read(tpm, 16, VG_HASH_SHA384, &after, NULL), -ENOENT);
	assert_int_equal(vg_tpm_pcr_read(tpm, 24, VG_HASH_SHA256, &after, NULL), -EINVAL);
	d[0].len = 19;
	assert_int_equal(vg_tpm_pcr_extend(tpm, 16, d, 1, NULL), -EINVAL);
}

/* swtpm without firmware: PCR 0-16 and 23 zero, 17-22 all ones; > 8 PCRs per read */
static void read_all_24_pcrs(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 0xffffff };
	uint8_t zero[32] = { 0 }, ones[32];

	(void)state;
	memset(ones, 0xff, sizeof(ones));
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	for (int i = 0; i < 24; i++)
		if (i != 16)
			assert_memory_equal(p.values[i], i >= 17 && i <= 22 ? ones : zero, 32);
}

/* The software PolicyPCR digest equals the TPM's (trial session via tpm2-tools). */
static void policy_digest_matches_tpm_trial(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 1u << 7 | 1u << 16 | 1u << 23 };
	uint8_t mine[32], theirs[32];
	char path[4200];
	FILE *f;

	(void)state;
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	assert_int_equal(vg_tpm_policy_pcr(&p, mine, NULL), 0);
	snprintf(path, sizeof(path), "%s/policy.bin", dir);
	assert_int_equal(run("tpm2_createpolicy --policy-pcr -l sha256:7,16,23 -L %s >/dev/null", path), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(theirs, 1, 32, f), 32);
	fclose(f);
	assert_memory_equal(mine, theirs, 32);
}

/* NV counters (nvcounter.c): defined once, unreadable until incremented, monotonic */
static void counter_define_read_increment(void **state)
{
	const uint32_t idx = 0x01000300;
	struct vg_diag d = { 0 };
	uint64_t v = 0, w = 0;

	(void)state;
	assert_int_equal(vg_tpm_counter_read(tpm, idx, &v, &d), -ENOENT);
	assert_int_equal(vg_tpm_counter_define(tpm, idx, NULL), 1);
	assert_int_equal(vg_tpm_counter_define(tpm, idx, NULL), 0);
	assert_int_equal(vg_tpm_counter_read(tpm, idx, &v, NULL), -ENODATA);
	assert_int_equal(vg_tpm_counter_increment(tpm, idx, NULL), 0);
	assert_int_equal(vg_tpm_counter_read(tpm, idx, &v, NULL), 0);
	assert_int_equal(vg_tpm_counter_increment(tpm, idx, NULL), 0);
	assert_int_equal(vg_tpm_counter_read(tpm, idx, &w, NULL), 0);
	assert_true(w == v + 1);
	assert_int_equal(vg_tpm_counter_define(tpm, 0x81000001, NULL), -EINVAL);
}

/* An ordinary index can be written with any value: never taken for a counter. */
static void counter_read_rejects_ordinary_index(void **state)
{
	struct vg_diag d = { 0 };
	uint64_t v;

	(void)state;
	assert_int_equal(run("tpm2_nvdefine -C o -s 8 -a 'authread|authwrite|ownerread' 0x01000301"
			     " >/dev/null && printf '\\0\\0\\0\\0\\0\\0\\0\\1' |"
			     " tpm2_nvwrite -C 0x01000301 -i - 0x01000301"), 0);
	assert_int_equal(vg_tpm_counter_read(tpm, 0x01000301, &v, &d), -EMEDIUMTYPE);
	assert_non_null(strstr(d.msg, "not a counter"));
	assert_int_equal(vg_tpm_counter_define(tpm, 0x01000301, NULL), -EMEDIUMTYPE);
	assert_int_equal(vg_tpm_counter_increment(tpm, 0x01000301, NULL), -EMEDIUMTYPE);
	assert_int_equal(run("tpm2_nvundefine -C o 0x01000301"), 0);
}

static void seal_unseal_refuse_after_extend(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 1u << 7 | 1u << 23 };
	uint8_t secret[32], out[64], blob[VG_TPM_BLOB_MAX];
	struct vg_digest d = { .algo = VG_HASH_SHA256, .len = 32 };
	struct vg_diag diag = { 0 };
	int n;

	(void)state;
	assert_int_equal(vg_tpm_random(tpm, secret, sizeof(secret), NULL), 0);
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	n = vg_tpm_seal(tpm, secret, sizeof(secret), &p, blob, sizeof(blob), NULL);
	assert_true(n > 0);
	/* many times: a leaked object or session would exhaust swtpm's 3 slots */
	for (int i = 0; i < 8; i++) {
		memset(out, 0, sizeof(out));
		assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &p, out, sizeof(out), NULL), 32);
		assert_memory_equal(out, secret, 32);
	}
	assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &p, out, 16, NULL), -ENOSPC);

	memset(d.bytes, 0x23, 32);
	assert_int_equal(vg_tpm_pcr_extend(tpm, 23, &d, 1, NULL), 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &p, out, sizeof(out), &diag),
				 -EACCES);
		assert_string_equal(diag.msg,
				    "the TPM refused to unseal: PCR 23 (sha256) differs from the sealed state");
	}
	/* still usable afterwards: nothing leaked by the refusals */
	{
		struct vg_tpm_pcrs now = { .bank = VG_HASH_SHA256, .mask = p.mask };

		assert_int_equal(vg_tpm_pcr_read_sel(tpm, &now, NULL), 0);
		n = vg_tpm_seal(tpm, secret, sizeof(secret), &now, blob, sizeof(blob), NULL);
		assert_true(n > 0);
		assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &now, out, sizeof(out), NULL), 32);
	}
	assert_int_equal(run("tpm2_pcrreset 23 >/dev/null 2>&1"), 0);
}

/* Seal to the values PCR 23 will have after an extend (an approved update). */
static void seal_to_future_values(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 1u << 23 }, now;
	struct vg_digest d = { .algo = VG_HASH_SHA256, .len = 32 }, want;
	uint8_t buf[64], blob[VG_TPM_BLOB_MAX], out[32], secret[32] = "the future is sealed, in 32 b.";
	struct vg_diag diag = { 0 };
	int n;

	(void)state;
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	now = p;
	memset(d.bytes, 0x42, 32);
	memcpy(buf, p.values[23], 32);
	memcpy(buf + 32, d.bytes, 32);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, buf, 64, &want, NULL), 0);
	memcpy(p.values[23], want.bytes, 32);
	n = vg_tpm_seal(tpm, secret, sizeof(secret), &p, blob, sizeof(blob), NULL);
	assert_true(n > 0);
	assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &p, out, sizeof(out), &diag), -EACCES);
	assert_non_null(strstr(diag.msg, "PCR 23 (sha256)"));
	assert_int_equal(vg_tpm_pcr_extend(tpm, 23, &d, 1, NULL), 0);
	assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &p, out, sizeof(out), NULL), 32);
	assert_memory_equal(out, secret, 32);
	(void)now;
	assert_int_equal(run("tpm2_pcrreset 23 >/dev/null 2>&1"), 0);
}

static void corrupted_and_mislabeled_blobs_are_rejected(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 1u << 23 }, q;
	uint8_t blob[VG_TPM_BLOB_MAX], b[VG_TPM_BLOB_MAX], out[64], secret[32] = { 1, 2, 3 };
	struct vg_diag diag = { 0 };
	int n, r;

	(void)state;
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	n = vg_tpm_seal(tpm, secret, sizeof(secret), &p, blob, sizeof(blob), NULL);
	assert_true(n > 0);
	assert_int_equal(vg_tpm_blob_check(blob, (size_t)n, &p, NULL), 0);
	/* every truncation */
	for (int len = 0; len < n; len++) {
		assert_int_equal(vg_tpm_blob_check(blob, (size_t)len, &p, NULL), -EBADMSG);
		assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)len, &p, out, sizeof(out), NULL),
				 -EBADMSG);
	}
	/* a flipped byte anywhere: never the secret, always a clean error */
	for (int i = 0; i < n; i += 7) {
		memcpy(b, blob, (size_t)n);
		b[i] ^= 0x01;
		r = vg_tpm_unseal(tpm, b, (size_t)n, &p, out, sizeof(out), &diag);
		assert_true(r == -EBADMSG || r == -EACCES || r == -EIO);
	}
	/* the file claims another binding than the object's policy */
	q = p;
	q.mask |= 1u << 22;
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &q, NULL), 0);
	assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &q, out, sizeof(out), &diag), -EBADMSG);
	assert_non_null(strstr(diag.msg, "policy"));
	q = p;
	q.values[23][0] ^= 1;
	assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &q, out, sizeof(out), NULL), -EBADMSG);
	/* and the TPM still works: nothing leaked */
	assert_int_equal(vg_tpm_unseal(tpm, blob, (size_t)n, &p, out, sizeof(out), NULL), 32);
}

static void hmac_key_seal_file_roundtrip(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 1u << 23 | 1u << 0 };
	struct vg_key_file kf, kf2;
	struct vg_hmac_key k, k2;
	struct vg_key_source src = { .tpm = tpm };
	struct vg_digest d = { .algo = VG_HASH_SHA256, .len = 32 };
	struct vg_diag diag = { 0 };
	enum vg_key_kind kind;
	char path[4200];

	(void)state;
	snprintf(path, sizeof(path), "%s/sealed.key", dir);
	assert_int_equal(vg_hmac_key_generate(tpm, 32, &k, NULL), 0);
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	assert_int_equal(vg_hmac_key_seal(tpm, &k, &p, &kf, NULL), 0);
	assert_int_equal(vg_key_file_write(path, &kf, NULL), 0);
	assert_int_equal(vg_key_file_read(path, &kf2, NULL), 0);
	assert_int_equal(kf2.kind, VG_KEY_TPM);
	assert_int_equal(vg_hmac_key_unseal(tpm, &kf2, &k2, NULL), 0);
	assert_memory_equal(k.key, k2.key, 32);
	/* through the generic loader: with an open TPM and by TCTI */
	assert_int_equal(vg_hmac_key_load(path, &src, &k2, &kind, NULL), 0);
	assert_int_equal(kind, VG_KEY_TPM);
	assert_memory_equal(k.key, k2.key, 32);
	src.tpm = NULL;
	src.tcti = tcti;
	assert_int_equal(vg_hmac_key_load(path, &src, &k2, &kind, NULL), 0);
	assert_memory_equal(k.key, k2.key, 32);
	memset(d.bytes, 1, 32);
	assert_int_equal(vg_tpm_pcr_extend(tpm, 23, &d, 1, NULL), 0);
	assert_int_equal(vg_hmac_key_load(path, &src, &k2, &kind, &diag), -EACCES);
	assert_non_null(strstr(diag.msg, "sealed.key: the TPM refused to unseal: PCR 23 (sha256)"));
	assert_int_equal(run("tpm2_pcrreset 23 >/dev/null 2>&1"), 0);
	vg_hmac_key_wipe(&k);
	vg_hmac_key_wipe(&k2);
}

/*
 * The N-th allocation failing (libvigil's and OpenSSL's, also inside ESYS):
 * clean errors, no leaked TPM slots, a usable context afterwards. A load
 * makes thousands of allocations (salted session, ECDH, KDFa) and each try
 * costs TPM round trips: every N up to 64, then a growing stride.
 */
static void load_survives_allocation_failures(void **state)
{
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 1u << 23 };
	struct vg_key_source src = { .tpm = tpm };
	struct vg_key_file kf;
	struct vg_hmac_key k, k2;
	char path[4200];
	long failures = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/alloc.key", dir);
	assert_int_equal(vg_hmac_key_generate(tpm, 32, &k, NULL), 0);
	assert_int_equal(vg_tpm_pcr_read_sel(tpm, &p, NULL), 0);
	assert_int_equal(vg_hmac_key_seal(tpm, &k, &p, &kf, NULL), 0);
	assert_int_equal(vg_key_file_write(path, &kf, NULL), 0);
	for (long n = 0;; n += n < 64 ? 1 : n / 16) {
		struct vg_diag d = { 0 };
		int rc;

		failalloc_arm(n);
		rc = vg_hmac_key_load(path, &src, &k2, NULL, &d);
		failalloc_disarm();
		if (!failalloc_hit()) {
			if (rc)
				fprintf(stderr, "# allocation %ld: rc %d: %s\n", n, rc, d.msg);
			assert_int_equal(rc, 0);
			assert_memory_equal(k.key, k2.key, 32);
			break;
		}
		failures++;
		if (rc != -ENOMEM && rc != -EIO)
			fprintf(stderr, "# allocation %ld: rc %d: %s\n", n, rc, d.msg);
		assert_true(rc == -ENOMEM || rc == -EIO);
	}
	assert_true(failures > 0);
	/* after all those failures the TPM still has its slots */
	for (int i = 0; i < 4; i++)
		assert_int_equal(vg_hmac_key_load(path, &src, &k2, NULL, NULL), 0);
	vg_hmac_key_wipe(&k);
	vg_hmac_key_wipe(&k2);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_unreachable_tcti_is_enodev),
		cmocka_unit_test(open_ignores_environment),
		cmocka_unit_test(banks_are_sha1_and_sha256),
		cmocka_unit_test(extend_matches_software_replay),
		cmocka_unit_test(read_all_24_pcrs),
		cmocka_unit_test(policy_digest_matches_tpm_trial),
		cmocka_unit_test(seal_unseal_refuse_after_extend),
		cmocka_unit_test(seal_to_future_values),
		cmocka_unit_test(corrupted_and_mislabeled_blobs_are_rejected),
		cmocka_unit_test(hmac_key_seal_file_roundtrip),
		cmocka_unit_test(load_survives_allocation_failures),
		cmocka_unit_test(counter_define_read_increment),
		cmocka_unit_test(counter_read_rejects_ordinary_index),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
