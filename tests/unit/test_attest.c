// SPDX-License-Identifier: MIT
/*
 * test_attest.c - the verifier core (attest.h) against real evidence: a
 * hardware TPM quote with its 780-entry IMA log (keylime-perf-tests), a
 * tpm2-tools quote from Keylime's test data, and the logs/policies of
 * Keylime's test_ima_verification.py with Keylime's verdicts.
 * Vectors: tests/vectors/attest (SOURCES.md).
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
#include <sys/stat.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>

#include "failalloc.h"
#include "vigil/attest.h"
#include "vigil/imalog.h"

static uint8_t *slurp(const char *rel, size_t *len)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	struct stat st;
	uint8_t *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/attest/%s", v ? v : "tests/vectors", rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("cannot open %s", path);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	buf[st.st_size] = 0;
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static size_t b64(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s);
	int r;

	assert_true(n / 4 * 3 <= cap);
	r = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
	assert_true(r >= 0);
	if (n && s[n - 1] == '=')
		r--;
	if (n > 1 && s[n - 2] == '=')
		r--;
	return (size_t)r;
}

struct hw {
	uint8_t ak[1024], attest[1024], sig[1024], pcrs[16384];
	size_t ak_len, attest_len, sig_len, pcrs_len;
	char nonce[64];
};

static void hw_load(struct hw *h)
{
	size_t len;
	char *txt = (char *)slurp("keylime-perf-tests__hw_quote_pcr0-16.json", &len);
	json_object *o = json_tokener_parse(txt), *f;

	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "ak_tpm_b64_TPM2B_PUBLIC", &f));
	h->ak_len = b64(json_object_get_string(f), h->ak, sizeof(h->ak));
	assert_true(json_object_object_get_ex(o, "tpms_attest_b64", &f));
	h->attest_len = b64(json_object_get_string(f), h->attest, sizeof(h->attest));
	assert_true(json_object_object_get_ex(o, "tpmt_signature_b64", &f));
	h->sig_len = b64(json_object_get_string(f), h->sig, sizeof(h->sig));
	assert_true(json_object_object_get_ex(o, "pcrs_tpm2tools_serialized_b64", &f));
	h->pcrs_len = b64(json_object_get_string(f), h->pcrs, sizeof(h->pcrs));
	assert_true(json_object_object_get_ex(o, "qualifying_data_ascii", &f));
	snprintf(h->nonce, sizeof(h->nonce), "%s", json_object_get_string(f));
	json_object_put(o);
	free(txt);
}

static void hw_quote_verifies_and_tampering_is_typed(void **state)
{
	struct hw h;
	struct vg_attest_ak *ak;
	struct vg_pcr_values pv;
	struct vg_attest_verdict v;
	struct vg_tpms_attest q;
	struct vg_diag d = { 0 };
	struct vg_attest_request req;
	uint16_t sa, ha;

	(void)state;
	hw_load(&h);
	assert_int_equal(vg_attest_ak_load(h.ak, h.ak_len, &ak, &d), 0);
	vg_attest_ak_scheme(ak, &sa, &ha);
	assert_int_equal(sa, 0x0014);
	assert_int_equal(ha, 0x000b);
	memset(&pv, 0, sizeof(pv));
	assert_int_equal(vg_attest_pcrs_tpm2tools(h.pcrs, h.pcrs_len, &pv, &d), 17);
	req = (struct vg_attest_request){ (const uint8_t *)h.nonce, strlen(h.nonce), VG_HASH_SHA256,
					  0x1ffff };
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_quote_verify(ak, h.attest, h.attest_len, h.sig, h.sig_len, &req,
						&pv, &q, &v), 0);
	assert_int_equal(q.safe, 1);

	/* wrong nonce */
	req.nonce = (const uint8_t *)"Sb7tNlqsd32uI1ZPWtDx";
	assert_int_equal(vg_attest_quote_verify(ak, h.attest, h.attest_len, h.sig, h.sig_len, &req,
						&pv, NULL, &v), 1);
	assert_int_equal(v.fail, VG_AF_NONCE);
	req.nonce = (const uint8_t *)h.nonce;
	/* other selection asked for */
	req.mask = 0x1fbff;
	assert_int_equal(vg_attest_quote_verify(ak, h.attest, h.attest_len, h.sig, h.sig_len, &req,
						&pv, NULL, &v), 1);
	assert_int_equal(v.fail, VG_AF_PCR_SELECTION);
	req.mask = 0x1ffff;
	/* one PCR value changed */
	pv.v[VG_HASH_SHA256][10].bytes[0] ^= 1;
	assert_int_equal(vg_attest_quote_verify(ak, h.attest, h.attest_len, h.sig, h.sig_len, &req,
						&pv, NULL, &v), 1);
	assert_int_equal(v.fail, VG_AF_PCR_DIGEST);
	pv.v[VG_HASH_SHA256][10].bytes[0] ^= 1;
	/* one byte of the signed structure (the clock) */
	h.attest[40] ^= 1;
	assert_int_equal(vg_attest_quote_verify(ak, h.attest, h.attest_len, h.sig, h.sig_len, &req,
						&pv, NULL, &v), 1);
	assert_int_equal(v.fail, VG_AF_SIGNATURE);
	assert_string_equal(vg_attest_fail_id(v.fail), "quote.signature");
	h.attest[40] ^= 1;
	vg_attest_ak_free(ak);
}

/* Real TPM: the 780-entry log replays (sha256 bank) to the quoted PCR 10. */
static void hw_log_replays_to_quoted_pcr10(void **state)
{
	struct hw h;
	struct vg_pcr_values pv;
	struct vg_imalog_buf bin = { 0 };
	struct vg_attest_logstate st;
	struct vg_attest_verdict v;
	struct vg_diag d = { 0 };
	unsigned int algo;
	size_t len;
	char *txt = (char *)slurp("perf_ima_log.txt", &len);
	long n;

	(void)state;
	hw_load(&h);
	memset(&pv, 0, sizeof(pv));
	assert_int_equal(vg_attest_pcrs_tpm2tools(h.pcrs, h.pcrs_len, &pv, &d), 17);
	n = vg_imalog_from_ascii(txt, len, &bin, &algo, &d);
	assert_int_equal(n, 780);
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_log_check(NULL, bin.data, bin.len, algo, 10,
					     &pv.v[VG_HASH_SHA256][10], &st, &v), 0);
	assert_int_equal(st.entries, 780);
	assert_int_equal(st.offset, bin.len);
	assert_int_equal(st.lag, 0);

	/* incremental: first 500 entries with an intermediate "quote", then the rest */
	{
		struct vg_imalog_parser p;
		struct vg_imalog_entry e;
		struct vg_imalog_replay *rp;
		struct vg_digest mid;
		size_t off500 = 0;

		vg_imalog_parser_init(&p, bin.data, bin.len, algo);
		assert_int_equal(vg_imalog_replay_new(1u << VG_HASH_SHA256, 0, &rp, NULL), 0);
		for (int i = 0; i < 500; i++) {
			assert_int_equal(vg_imalog_parser_next(&p, &e, NULL), 1);
			assert_int_equal(vg_imalog_replay_entry(rp, &e, (uint64_t)i, NULL), 0);
		}
		off500 = p.off;
		assert_int_equal(vg_imalog_replay_get(rp, 10, VG_HASH_SHA256, &mid), 0);
		vg_imalog_replay_free(rp);
		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		/* the agent sends 600 entries but the quote covers 500: lag 100 */
		{
			struct vg_imalog_parser p2;

			vg_imalog_parser_init(&p2, bin.data, bin.len, algo);
			for (int i = 0; i < 600; i++)
				assert_int_equal(vg_imalog_parser_next(&p2, &e, NULL), 1);
			assert_int_equal(vg_attest_log_check(NULL, bin.data, p2.off, algo, 10, &mid, &st,
							     &v), 0);
		}
		assert_int_equal(st.entries, 500);
		assert_int_equal(st.offset, off500);
		assert_int_equal(st.lag, 100);
		/* a next round whose quote still lags 100+ behind: progress failure */
		assert_int_equal(vg_attest_log_check(NULL, bin.data + off500, bin.len - off500, algo,
						     10, &mid, &st, &v), 1);
		assert_int_equal(v.fail, VG_AF_LOG_PROGRESS);
		/* the rest reaches the final quote */
		assert_int_equal(vg_attest_log_check(NULL, bin.data + off500, bin.len - off500, algo,
						     10, &pv.v[VG_HASH_SHA256][10], &st, &v), 0);
		assert_int_equal(st.entries, 780);
	}

	/* truncated: the last entry missing */
	{
		struct vg_imalog_parser p;
		struct vg_imalog_entry e;

		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		vg_imalog_parser_init(&p, bin.data, bin.len, algo);
		for (int i = 0; i < 779; i++)
			assert_int_equal(vg_imalog_parser_next(&p, &e, NULL), 1);
		assert_int_equal(vg_attest_log_check(NULL, bin.data, p.off, algo, 10,
						     &pv.v[VG_HASH_SHA256][10], &st, &v), 1);
		assert_int_equal(v.fail, VG_AF_LOG_PCR);
		assert_int_equal(st.entries, 0);
	}
	/* one byte of one entry's file digest altered */
	{
		struct vg_imalog_parser p;
		struct vg_imalog_entry e;

		vg_imalog_parser_init(&p, bin.data, bin.len, algo);
		for (int i = 0; i < 300; i++)
			assert_int_equal(vg_imalog_parser_next(&p, &e, NULL), 1);
		((uint8_t *)e.f[0].data)[e.f[0].len - 1] ^= 1;
		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		assert_int_equal(vg_attest_log_check(NULL, bin.data, bin.len, algo, 10,
						     &pv.v[VG_HASH_SHA256][10], &st, &v), 1);
		assert_int_equal(v.fail, VG_AF_LOG_ENTRY);
		assert_int_equal(v.entry, 299);
	}
	vg_imalog_buf_release(&bin);
	free(txt);
}

/* tpm2-tools quote from Keylime's test data: sha256 PCRs 15, 16, 22; nonce = rand.out bytes. */
static void keylime_tpm2tools_quote_verifies(void **state)
{
	size_t al, ql, sl, pl, nl;
	uint8_t *ak = slurp("ak.pub", &al), *q = slurp("quote.out", &ql);
	uint8_t *s = slurp("quotesig.out", &sl), *p = slurp("quotepcr.out", &pl);
	uint8_t *n = slurp("rand.out", &nl);
	struct vg_attest_ak *k;
	struct vg_pcr_values pv;
	struct vg_attest_verdict v;
	struct vg_diag d = { 0 };
	struct vg_attest_request req = { n, nl, VG_HASH_SHA256, 1u << 15 | 1u << 16 | 1u << 22 };

	(void)state;
	assert_int_equal(vg_attest_ak_load(ak, al, &k, &d), 0);
	memset(&pv, 0, sizeof(pv));
	assert_int_equal(vg_attest_pcrs_tpm2tools(p, pl, &pv, &d), 3);
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_quote_verify(k, q, ql, s, sl, &req, &pv, NULL, &v), 0);
	n[0] ^= 1;
	assert_int_equal(vg_attest_quote_verify(k, q, ql, s, sl, &req, &pv, NULL, &v), 1);
	assert_int_equal(v.fail, VG_AF_NONCE);
	vg_attest_ak_free(k);
	free(ak);
	free(q);
	free(s);
	free(p);
	free(n);
}

/*
 * vg_attest_key_id: the SHA-256 of the key's DER SubjectPublicKeyInfo (that
 * of akpub.pem, the same key, by openssl pkey -outform DER | sha256sum),
 * the same whatever attributes or authPolicy the TPM2B_PUBLIC says; another
 * modulus another id; what is no key refused.
 */
static void key_id_is_the_key_not_its_encoding(void **state)
{
	static const uint8_t want[32] = {
		0x4b, 0xbc, 0x3c, 0x7e, 0x98, 0x7a, 0x04, 0x37, 0x60, 0x56, 0x5a, 0x98, 0xb6, 0x8a,
		0x7a, 0xa4, 0x73, 0xa9, 0x16, 0x3d, 0x02, 0x6b, 0x8b, 0x53, 0xef, 0x9c, 0x96, 0xb4,
		0x39, 0xf9, 0x42, 0x6c,
	};
	size_t len;
	uint8_t *pub = slurp("ak.pub", &len), id[32], id2[32];
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_attest_key_id(pub, len, id, &d), 0);
	assert_memory_equal(id, want, 32);
	pub[9] ^= 0x40;			/* objectAttributes */
	pub[7] ^= 0x01;
	assert_int_equal(vg_attest_key_id(pub, len, id2, &d), 0);
	assert_memory_equal(id2, want, 32);
	pub[len - 1] ^= 0x02;		/* the modulus */
	assert_int_equal(vg_attest_key_id(pub, len, id2, &d), 0);
	assert_memory_not_equal(id2, want, 32);
	assert_int_equal(vg_attest_key_id(pub, len - 1, id2, &d), -EBADMSG);
	assert_int_equal(vg_attest_key_id((const uint8_t *)"\x00\x01\x02", 3, id2, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "key"));
	free(pub);
}

static void decoders_reject_every_truncation(void **state)
{
	struct hw h;
	struct vg_tpms_attest q;
	struct vg_tpmt_signature s;
	struct vg_attest_ak *ak;

	(void)state;
	hw_load(&h);
	assert_int_equal(vg_attest_quote_decode(h.attest, h.attest_len, &q, NULL), 0);
	for (size_t i = 0; i < h.attest_len; i++)
		assert_int_equal(vg_attest_quote_decode(h.attest, i, &q, NULL), -EBADMSG);
	assert_int_equal(vg_attest_sig_decode(h.sig, h.sig_len, &s, NULL), 0);
	for (size_t i = 0; i < h.sig_len; i++)
		assert_true(vg_attest_sig_decode(h.sig, i, &s, NULL) < 0);
	for (size_t i = 0; i < h.ak_len; i++)
		assert_true(vg_attest_ak_load(h.ak, i, &ak, NULL) < 0);
	h.attest[h.attest_len] = 0;
	assert_int_equal(vg_attest_quote_decode(h.attest, h.attest_len + 1, &q, NULL), -EBADMSG);
}

static void clock_rules(void **state)
{
	struct vg_attest_clock c = { 0 };
	struct vg_tpms_attest q = { .clock = 1000, .reset_count = 2, .restart_count = 0, .safe = 1 };
	struct vg_attest_verdict v;
	bool reboot;

	(void)state;
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_clock_check(&c, &q, &reboot, &v), 0);
	assert_false(reboot);
	assert_int_equal(vg_attest_clock_check(&c, &q, &reboot, &v), 1);	/* same clock */
	assert_int_equal(v.fail, VG_AF_CLOCK);
	q.clock = 2000;
	assert_int_equal(vg_attest_clock_check(&c, &q, &reboot, &v), 0);
	q.clock = 10;
	q.reset_count = 3;
	assert_int_equal(vg_attest_clock_check(&c, &q, &reboot, &v), 0);
	assert_true(reboot);
	q.reset_count = 2;
	q.clock = 99999;
	assert_int_equal(vg_attest_clock_check(&c, &q, &reboot, &v), 1);
	assert_int_equal(v.fail, VG_AF_CLOCK);
	q.reset_count = 3;
	q.safe = 0;
	assert_int_equal(vg_attest_clock_check(&c, &q, &reboot, &v), 1);
	assert_int_equal(v.fail, VG_AF_UNSAFE);
}

/* Keylime policy on a Keylime log: returns the verdict's failure type. */
static unsigned int judge(const char *log, const char *policy_file, const char *policy_text,
			  struct vg_attest_verdict *v)
{
	size_t ll, pl = 0;
	char *lt = (char *)slurp(log, &ll);
	uint8_t *pt = policy_file ? slurp(policy_file, &pl) : (uint8_t *)strdup(policy_text);
	struct vg_imalog_buf bin = { 0 };
	struct vg_refpolicy *p;
	struct vg_attest_logstate st;
	struct vg_diag d = { 0 };
	unsigned int algo;
	int r;

	if (!policy_file)
		pl = strlen(policy_text);
	if (vg_refpolicy_load(pt, pl, &p, &d) < 0)
		fail_msg("policy: %s", d.msg);
	assert_true(vg_imalog_from_ascii(lt, ll, &bin, &algo, &d) > 0);
	vg_attest_logstate_init(&st, VG_HASH_SHA1);
	vg_attest_verdict_init(v);
	r = vg_attest_log_check(p, bin.data, bin.len, algo, 10, NULL, &st, v);
	assert_true(r == 0 || r == 1);
	/* the callers read the first failure: the others' list goes */
	free(v->more);
	v->more = NULL;
	v->nmore = 0;
	vg_refpolicy_free(p);
	vg_imalog_buf_release(&bin);
	free(lt);
	free(pt);
	return r ? v->fail : VG_AF_NONE;
}

/* keylime test/test_ima_verification.py: test_validate_ima, _wrong, _excludes, _signatures */
static void keylime_verdicts_agree(void **state)
{
	struct vg_attest_verdict v;

	(void)state;
	assert_int_equal(judge("keylime__test_ima_verification__MEASUREMENTS.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_TEST.json", NULL, &v),
			 VG_AF_NONE);
	/* WRONG has no boot_aggregate and other digests: Keylime fails on the first entry */
	assert_int_equal(judge("keylime__test_ima_verification__MEASUREMENTS.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json", NULL, &v),
			 VG_AF_BOOT_AGGREGATE);
	assert_int_equal(v.entry, 0);
	/* excludes (the EXCLUDES list as regexes) with no digests at all */
	{
		size_t n;
		char *ex = (char *)slurp("keylime__test_ima_verification__EXCLUDES.json", &n);
		char pol[2048];

		snprintf(pol, sizeof(pol), "{\"digests\": {}, \"excludes\": %s}", ex);
		assert_int_equal(judge("keylime__test_ima_verification__MEASUREMENTS.ima", NULL, pol,
				       &v), VG_AF_NONE);
		free(ex);
	}
	/* a digest changed in the policy: the file and the digest are named */
	{
		size_t n;
		char *pt = (char *)slurp("keylime__test_ima_verification__RUNTIME_POLICY_TEST.json", &n);
		char *at = strstr(pt, "f1125b94");

		assert_non_null(at);
		at[0] = '0';
		assert_int_equal(judge("keylime__test_ima_verification__MEASUREMENTS.ima", NULL, pt,
				       &v), VG_AF_DIGEST);
		assert_int_equal(v.entry, 1);
		assert_string_equal(v.path,
				    "/lib/modules/5.4.48-openpower1/kernel/drivers/usb/common/usb-common.ko");
		assert_string_equal(v.digest, "sha256:f1125b940480d20ad841d26d5ea253edc0704b5ec1548c891edf212cb1a9365e");
		/* path removed from the policy */
		at = strstr(pt, "\"/usr/bin/dd\"");
		free(pt);
	}
	/* RSA and EC (secp256k1) ima-sig signatures against the policy's verification keys */
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_WITH_VERIFICATION_KEYS.json",
			       NULL, &v), VG_AF_NONE);
	assert_int_equal(judge("keylime__test_ima_verification__BAD_SIGNATURES.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_WITH_VERIFICATION_KEYS.json",
			       NULL, &v), VG_AF_LOG_ENTRY);	/* Keylime: ima_hash + invalid */
	/* without keys the signed files are not in the policy */
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json", NULL, &v),
			 VG_AF_DIGEST);
	/* ima-buf keyring entry: its digest is in "keyrings" of the test policy */
	assert_int_equal(judge("keylime__test_ima_verification__KEYRINGS.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_TEST.json", NULL, &v),
			 VG_AF_NONE);
	assert_int_equal(judge("keylime__test_ima_verification__KEYRINGS.ima",
			       "keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json", NULL, &v),
			 VG_AF_NOT_IN_POLICY);
}

/*
 * A Keylime policy text: RUNTIME_POLICY_WITH_VERIFICATION_KEYS's keys
 * (@nkeys of them: 1 the RSA key only, 2 RSA and EC) with @digests_from's
 * digests; @vigil: marked as vigil's own format (strict ima-sig).
 */
static char *keylime_policy_with_keys(const char *digests_from, int nkeys, bool vigil)
{
	size_t n;
	char *kt = (char *)slurp("keylime__test_ima_verification__RUNTIME_POLICY_WITH_VERIFICATION_KEYS.json", &n);
	char *dt = (char *)slurp(digests_from, &n);
	json_object *k = json_tokener_parse(kt), *d = json_tokener_parse(dt), *dg, *vk, *vko, *pk;
	char *out;

	assert_non_null(k);
	assert_non_null(d);
	assert_true(json_object_object_get_ex(d, "digests", &dg));
	json_object_object_add(k, "digests", json_object_get(dg));
	if (nkeys == 1) {
		assert_true(json_object_object_get_ex(k, "verification-keys", &vk));
		vko = json_tokener_parse(json_object_get_string(vk));
		assert_true(json_object_object_get_ex(vko, "pubkeys", &pk));
		json_object_array_del_idx(pk, 1, 1);
		json_object_object_add(k, "verification-keys",
				       json_object_new_string(json_object_to_json_string(vko)));
		json_object_put(vko);
	}
	if (vigil)
		json_object_object_add(k, "vigil_refpolicy", json_object_new_int(1));
	out = strdup(json_object_to_json_string(k));
	json_object_put(k);
	json_object_put(d);
	free(kt);
	free(dt);
	return out;
}

/*
 * ima-sig as Keylime reads it (keylime/ima/ima.py _validate_ima_sig, test
 * test_ima_verification.py test_mixed_verfication, test_signature_verification
 * at keylime @9b1f6e6): a signature that verifies with a policy key passes
 * even when the policy lists the path with other digests; one that does not
 * falls back to the digest list. vigil's own policies read it strictly.
 */
static void keylime_ima_sig_semantics(void **state)
{
	struct vg_attest_verdict v;
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	char *t, *exp = NULL;

	(void)state;
	/* test_mixed_verfication: signatures, RUNTIME_POLICY_WRONG, both keys -> Keylime passes */
	t = keylime_policy_with_keys("keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json", 2,
				     false);
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima", NULL, t, &v),
			 VG_AF_NONE);
	/* exported as vigil JSON it keeps Keylime's reading */
	assert_int_equal(vg_refpolicy_load((const uint8_t *)t, strlen(t), &p, &d), 0);
	assert_true(vg_refpolicy_to_json(p, &exp) > 0);
	assert_true(strstr(exp, "\"ima_sig\":\"keylime\"") || strstr(exp, "\"ima_sig\": \"keylime\""));
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima", NULL, exp, &v),
			 VG_AF_NONE);
	vg_refpolicy_free(p);
	free(exp);
	free(t);
	/* the same as vigil's own policy: strict, the listed digests rule */
	t = keylime_policy_with_keys("keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json", 2,
				     true);
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima", NULL, t, &v),
			 VG_AF_DIGEST);
	assert_string_equal(v.path, "/usr/bin/dd");
	free(t);
	/* the RSA key only: zmore's EC signature does not verify; Keylime falls back to the
	   digest list, which has zmore's digest (RUNTIME_POLICY_TEST) -> passes */
	t = keylime_policy_with_keys("keylime__test_ima_verification__RUNTIME_POLICY_TEST.json", 1,
				     false);
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima", NULL, t, &v),
			 VG_AF_NONE);
	free(t);
	/* ... with the wrong digests it fails as the digest list says (runtime_policy_hash) */
	t = keylime_policy_with_keys("keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json", 1,
				     false);
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima", NULL, t, &v),
			 VG_AF_DIGEST);
	assert_string_equal(v.path, "/usr/bin/zmore");
	free(t);
	/* strict: the signature that does not verify is the failure */
	t = keylime_policy_with_keys("keylime__test_ima_verification__RUNTIME_POLICY_TEST.json", 1,
				     true);
	assert_int_equal(judge("keylime__test_ima_verification__SIGNATURES.ima", NULL, t, &v),
			 VG_AF_SIG_INVALID);
	assert_string_equal(v.path, "/usr/bin/zmore");
	free(t);
	/* vigil's "ima_sig" takes "strict" or "keylime" only */
	t = strdup("{\"vigil_refpolicy\": 1, \"digests\": {}, \"ima_sig\": \"lax\"}");
	assert_int_equal(vg_refpolicy_load((const uint8_t *)t, strlen(t), &p, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "ima_sig"));
	free(t);
}

/* keylime-tests' expected keylime_create_policy outputs judge their own input logs. */
static void keylime_generated_policies_accept_their_logs(void **state)
{
	struct vg_attest_verdict v;

	(void)state;
	/* log 1 has an ima-sig line without its signature column: Keylime's parser rejects it too */
	{
		size_t ll;
		char *lt = (char *)slurp("kt_test2_ascii_runtime_measurements-1", &ll);
		struct vg_imalog_buf bin = { 0 };
		unsigned int algo;

		assert_int_equal(vg_imalog_from_ascii(lt, ll, &bin, &algo, NULL), -EBADMSG);
		vg_imalog_buf_release(&bin);
		free(lt);
	}
	/* output3 (--ima-buf) lacks the keyrings: Keylime fails on .builtin_trusted_keys */
	assert_int_equal(judge("kt_test2_ascii_runtime_measurements-2", "kt_test2_output3.json", NULL,
			       &v), VG_AF_NOT_IN_POLICY);
	assert_int_equal(v.entry, 7);
	assert_string_equal(v.path, ".builtin_trusted_keys");
	/* output4 ignores .builtin_trusted_keys but not .ima */
	assert_int_equal(judge("kt_test2_ascii_runtime_measurements-2", "kt_test2_output4.json", NULL,
			       &v), VG_AF_NOT_IN_POLICY);
	assert_int_equal(v.entry, 10);
	/* output6 (--keyrings --ima-buf, .builtin_trusted_keys ignored) accepts the whole log */
	assert_int_equal(judge("kt_test2_ascii_runtime_measurements-2", "kt_test2_output6.json", NULL,
			       &v), VG_AF_NONE);
	/* output1 (from log 1) does not know log 2's files */
	assert_int_equal(judge("kt_test2_ascii_runtime_measurements-2", "kt_test2_output1.json", NULL,
			       &v), VG_AF_NOT_IN_POLICY);
}

static void policy_formats_roundtrip(void **state)
{
	size_t n;
	uint8_t *plain = slurp("runtime-policy-test.json", &n);
	uint8_t *signed_ = NULL;
	struct vg_refpolicy *a, *b, *c;
	struct vg_diag d = { 0 };
	char *ja, *jb, *jc;
	size_t sn;

	(void)state;
	assert_int_equal(vg_refpolicy_load(plain, n, &a, &d), 0);
	signed_ = slurp("runtime-policy-test-signed.json", &sn);
	assert_int_equal(vg_refpolicy_load(signed_, sn, &b, &d), 0);
	assert_true(vg_refpolicy_to_json(a, &ja) > 0);
	assert_true(vg_refpolicy_to_json(b, &jb) > 0);
	assert_string_equal(ja, jb);		/* the DSSE payload is the same policy */
	assert_true(vg_refpolicy_paths(a) > 3);
	/* vigil's JSON reads back to itself */
	assert_int_equal(vg_refpolicy_load((uint8_t *)ja, strlen(ja), &c, &d), 0);
	assert_true(vg_refpolicy_to_json(c, &jc) > 0);
	assert_string_equal(ja, jc);
	/* flat allowlist */
	{
		const char *flat = "# comment\n"
				   "e4cb9f5709c88376b5fc3743cd88e76b9aae8f3d992d845678de5215edb31216  boot_aggregate\n"
				   "d33d5d13792292e202dbf69a6f1b07bc8a02f01424db8489ba7bb7d43c0290ef /usr/bin/dd\n";
		struct vg_refpolicy *f;

		assert_int_equal(vg_refpolicy_load((const uint8_t *)flat, strlen(flat), &f, &d), 0);
		assert_int_equal(vg_refpolicy_paths(f), 2);
		vg_refpolicy_free(f);
		assert_int_equal(vg_refpolicy_load((const uint8_t *)"zz /x\n", 6, &f, &d), -EBADMSG);
		assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"digests\": [1]}", 16, &f, &d),
				 -EBADMSG);
		assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"excludes\": [\"(\"]}", 19, &f,
						   &d), -EBADMSG);
		assert_int_equal(vg_refpolicy_load((const uint8_t *)"{} x", 4, &f, &d), -EBADMSG);
	}
	free(ja);
	free(jb);
	free(jc);
	vg_refpolicy_free(a);
	vg_refpolicy_free(b);
	vg_refpolicy_free(c);
	free(plain);
	free(signed_);
}

/*
 * Excludes that glibc's regcomp() would expand without bound are refused
 * with the reason (fuzz_refpolicy: thirty stacked '+' took 2 GB); real
 * ones compile.
 */
static void excludes_have_bounded_cost(void **state)
{
	static const char *const ok[] = {
		"^/tmp/.*", "^/(proc|sys|dev|run)(/.*)?$", "/var/log/[^/]+\\.log$",
		"^/usr/lib/python3\\.[0-9]+/.*\\.pyc$", "a{2,5}b{255}c{3,}", "[[:alpha:]]+[]x*+]*",
		"(a{100}){100}", "\\+\\*\\{", "^$", "boot_aggregate",
	};
	static const struct {
		const char *re, *why;
	} bad[] = {
		{ "m*0++++++++++++++++++++++++++++++", "a quantifier on a quantifier" },
		{ "a**", "a quantifier on a quantifier" },
		{ "a{2}{3}", "a quantifier on a quantifier" },
		{ "((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+", "too large once" },
		{ "((a{100}){100}){100}", "too large once" },
		{ "a{256}", "above 255" },
		{ "a{1,300}", "above 255" },
		{ "(a)\\1", "a back-reference" },
	};
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	char deep[80], *longre;

	(void)state;
	assert_int_equal(vg_refpolicy_new(&p), 0);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (vg_refpolicy_exclude(p, ok[i], &d) != 0)
			fail_msg("%s: %s", ok[i], d.msg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&d, 0, sizeof(d));
		assert_int_equal(vg_refpolicy_exclude(p, bad[i].re, &d), -EINVAL);
		if (!strstr(d.msg, bad[i].why) || !strstr(d.msg, "is refused"))
			fail_msg("%s: %s", bad[i].re, d.msg);
	}
	memset(deep, '(', 33);
	deep[33] = 'a';
	memset(deep + 34, ')', 33);
	deep[67] = 0;
	assert_int_equal(vg_refpolicy_exclude(p, deep, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "deeper than 32"));
	longre = malloc(4098);
	assert_non_null(longre);
	memset(longre, 'a', 4097);
	longre[4097] = 0;
	assert_int_equal(vg_refpolicy_exclude(p, longre, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "longer than 4096"));
	free(longre);
	vg_refpolicy_free(p);
}

/* A policy built from the rust-keylime 826-entry log accepts it; a removed path is named. */
static void policy_from_log_accepts_it(void **state)
{
	size_t ll;
	char *lt = (char *)slurp("rust_ascii_runtime_measurements", &ll);
	struct vg_imalog_buf bin = { 0 };
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_refpolicy *p;
	struct vg_attest_logstate st;
	struct vg_attest_verdict v;
	unsigned int algo;
	uint64_t n = 0;

	(void)state;
	assert_int_equal(vg_imalog_from_ascii(lt, ll, &bin, &algo, NULL), 826);
	assert_int_equal(vg_refpolicy_new(&p), 0);
	vg_imalog_parser_init(&ps, bin.data, bin.len, algo);
	while (vg_imalog_parser_next(&ps, &e, NULL) == 1) {
		struct vg_digest dg;
		const uint8_t *b;
		size_t bl;
		char path[4096];
		size_t pl = e.f[1].len;

		if (n++ == 500)		/* leave one file out */
			continue;
		assert_int_equal(vg_imalog_field_digest(&e.f[0], &algo, &b, &bl, NULL), 0);
		dg.algo = (uint8_t)algo;
		dg.len = (uint8_t)bl;
		memcpy(dg.bytes, b, bl);
		if (pl && e.f[1].data[pl - 1] == 0)
			pl--;
		memcpy(path, e.f[1].data, pl);
		path[pl] = 0;
		assert_int_equal(vg_refpolicy_allow(p, path, &dg), 0);
	}
	vg_attest_logstate_init(&st, VG_HASH_SHA1);
	vg_attest_verdict_init(&v);
	algo = VG_HASH_SHA1;
	assert_int_equal(vg_attest_log_check(p, bin.data, bin.len, algo, 10, NULL, &st, &v), 1);
	assert_true(v.fail == VG_AF_NOT_IN_POLICY || v.fail == VG_AF_DIGEST);
	assert_true(v.entry <= 500);
	vg_refpolicy_free(p);
	vg_imalog_buf_release(&bin);
	free(lt);
}

/*
 * Paths with many digests go through the per-path index (attest_policy_index.c):
 * each path of a real log gets 40 decoys around its digest (some given as
 * "any algorithm of this length"), every digest added twice: the whole log
 * passes, as with one digest per path; without the real digests, the
 * first entry fails.
 */
static void indexed_paths_match_like_small_ones(void **state)
{
	size_t ll;
	char *lt = (char *)slurp("rust_ascii_runtime_measurements", &ll);
	struct vg_imalog_buf bin = { 0 };
	struct vg_refpolicy *p[2];
	unsigned int algo;

	(void)state;
	assert_int_equal(vg_imalog_from_ascii(lt, ll, &bin, &algo, NULL), 826);
	for (int k = 0; k < 2; k++) {
		struct vg_imalog_parser ps;
		struct vg_imalog_entry e;
		struct vg_attest_logstate st;
		struct vg_attest_verdict v;
		uint64_t n = 0;

		assert_int_equal(vg_refpolicy_new(&p[k]), 0);
		vg_imalog_parser_init(&ps, bin.data, bin.len, algo);
		while (vg_imalog_parser_next(&ps, &e, NULL) == 1) {
			struct vg_digest dg, decoy;
			const uint8_t *b;
			size_t bl, pl = e.f[1].len;
			char path[4096];
			unsigned int a;

			assert_int_equal(vg_imalog_field_digest(&e.f[0], &a, &b, &bl, NULL), 0);
			dg.algo = (uint8_t)(n++ % 3 == 0 ? VG_HASH__LAST : a);
			dg.len = (uint8_t)bl;
			memcpy(dg.bytes, b, bl);
			if (pl && e.f[1].data[pl - 1] == 0)
				pl--;
			memcpy(path, e.f[1].data, pl);
			path[pl] = 0;
			for (int i = 0; i < 40; i++) {
				decoy = dg;
				decoy.bytes[i % bl] ^= (uint8_t)(1 + i / (int)bl);
				assert_int_equal(vg_refpolicy_allow(p[k], path, &decoy), 0);
				if (i == 20 && k == 0)
					assert_int_equal(vg_refpolicy_allow(p[k], path, &dg), 0);
				assert_int_equal(vg_refpolicy_allow(p[k], path, &decoy), 0);
			}
			if (k == 0)
				assert_int_equal(vg_refpolicy_allow(p[k], path, &dg), 0);
		}
		vg_attest_logstate_init(&st, VG_HASH_SHA1);
		vg_attest_verdict_init(&v);
		assert_int_equal(vg_attest_log_check(p[k], bin.data, bin.len, VG_HASH_SHA1, 10, NULL,
						     &st, &v), k == 0 ? 0 : 1);
		if (k == 1) {
			assert_int_equal(v.entry, 0);	/* boot_aggregate: decoys only */
			vg_attest_verdict_release(&v);
		} else {
			char *json;

			/* every digest once: 41 per path entry of the log, boot_aggregate aside */
			assert_true(vg_refpolicy_to_json(p[k], &json) > 0);
			free(json);
		}
		vg_refpolicy_free(p[k]);
	}
	vg_imalog_buf_release(&bin);
	free(lt);
}

/*
 * Every allocation of a policy load + log check, and of an AK load + quote
 * verification, fails in turn: each fails cleanly (an error or a typed
 * verdict), never passes what a full run refuses, and leaks nothing (ASan).
 */
static void survives_allocation_failures(void **state)
{
	size_t pl, ll;
	uint8_t *pt = slurp("keylime__test_ima_verification__RUNTIME_POLICY_TEST.json", &pl);
	char *lt = (char *)slurp("keylime__test_ima_verification__MEASUREMENTS.ima", &ll);
	struct vg_imalog_buf bin = { 0 };
	struct vg_pcr_values pv;
	struct hw h;
	unsigned int algo;
	long fails = 0;

	(void)state;
	hw_load(&h);
	memset(&pv, 0, sizeof(pv));
	assert_int_equal(vg_attest_pcrs_tpm2tools(h.pcrs, h.pcrs_len, &pv, NULL), 17);
	assert_true(vg_imalog_from_ascii(lt, ll, &bin, &algo, NULL) > 0);
	for (long n = 0;; n++) {
		struct vg_refpolicy *p = NULL;
		struct vg_attest_logstate st;
		struct vg_attest_verdict v;
		int r1, r2 = -1;

		vg_attest_logstate_init(&st, VG_HASH_SHA1);
		vg_attest_verdict_init(&v);
		failalloc_arm(n);
		r1 = vg_refpolicy_load(pt, pl, &p, NULL);
		if (r1 == 0)
			r2 = vg_attest_log_check(p, bin.data, bin.len, algo, 10, NULL, &st, &v);
		failalloc_disarm();
		if (r1 < 0)
			assert_null(p);
		vg_refpolicy_free(p);
		if (!failalloc_hit()) {
			assert_int_equal(r1, 0);
			assert_int_equal(r2, 0);
			break;
		}
		fails++;
		/* an error of any kind, never a crash or a leak */
		assert_true(r1 <= 0 && r2 <= 1);
	}
	for (long n = 0;; n++) {
		struct vg_attest_ak *ak = NULL;
		struct vg_attest_verdict v;
		struct vg_attest_request req = { (const uint8_t *)h.nonce, strlen(h.nonce),
						 VG_HASH_SHA256, 0x1ffff };
		int r1, r3 = -1;

		vg_attest_verdict_init(&v);
		failalloc_arm(n);
		r1 = vg_attest_ak_load(h.ak, h.ak_len, &ak, NULL);
		if (r1 == 0)
			r3 = vg_attest_quote_verify(ak, h.attest, h.attest_len, h.sig, h.sig_len, &req,
						    &pv, NULL, &v);
		failalloc_disarm();
		vg_attest_ak_free(ak);
		if (!failalloc_hit()) {
			assert_int_equal(r1, 0);
			assert_int_equal(r3, 0);
			break;
		}
		fails++;
		assert_true(r1 <= 0 && r3 <= 1);
	}
	assert_true(fails > 10);
	vg_imalog_buf_release(&bin);
	free(pt);
	free(lt);
}

/*
 * A policy with no digests fails every entry of a list: all of them are
 * counted, the first VG_ATTEST_FAILURES_MAX listed in log order, each
 * with its own entry; the state does not move. An allocation failure for
 * the list is an error, with nothing left to free.
 */
static void log_check_lists_every_failure(void **state)
{
	size_t len;
	char *txt = (char *)slurp("perf_ima_log.txt", &len);
	struct vg_imalog_buf bin = { 0 };
	struct vg_refpolicy *p;
	struct vg_attest_logstate st;
	struct vg_attest_verdict v;
	unsigned int algo;
	long n;

	(void)state;
	n = vg_imalog_from_ascii(txt, len, &bin, &algo, NULL);
	assert_int_equal(n, 780);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"digests\": {}}", 15, &p, NULL), 0);
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_log_check(p, bin.data, bin.len, algo, 10, NULL, &st, &v), 1);
	assert_int_equal(vg_attest_verdict_count(&v), 780);
	assert_int_equal(vg_attest_verdict_listed(&v), VG_ATTEST_FAILURES_MAX);
	assert_int_equal(st.entries, 0);
	assert_int_equal(v.fail, VG_AF_BOOT_AGGREGATE);
	for (size_t i = 0; i < VG_ATTEST_FAILURES_MAX; i++) {
		const struct vg_attest_verdict *f = vg_attest_verdict_nth(&v, i);

		assert_non_null(f);
		assert_int_equal(f->entry, (int64_t)i);
		assert_int_equal(f->fail, i ? VG_AF_NOT_IN_POLICY : VG_AF_BOOT_AGGREGATE);
		assert_true(f->path[0] && strncmp(f->digest, "sha256:", 7) == 0);
	}
	assert_null(vg_attest_verdict_nth(&v, VG_ATTEST_FAILURES_MAX));
	/* a second check drops the first one's failures: here a log of one entry */
	{
		struct vg_imalog_parser ps;
		struct vg_imalog_entry e;

		vg_imalog_parser_init(&ps, bin.data, bin.len, algo);
		assert_int_equal(vg_imalog_parser_next(&ps, &e, NULL), 1);
		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		assert_int_equal(vg_attest_log_check(p, bin.data, ps.off, algo, 10, NULL, &st, &v), 1);
		assert_int_equal(vg_attest_verdict_count(&v), 1);
		assert_int_equal(vg_attest_verdict_listed(&v), 1);
		assert_null(v.more);	/* one failure: nothing allocated */
	}
	vg_attest_verdict_release(&v);
	assert_int_equal(v.fail, VG_AF_NONE);
	assert_int_equal(vg_attest_verdict_count(&v), 0);
	/* the list's allocation fails: an error, the verdict empty */
	for (long k = 0;; k++) {
		int r;

		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		vg_attest_verdict_init(&v);
		failalloc_arm(k);
		r = vg_attest_log_check(p, bin.data, bin.len, algo, 10, NULL, &st, &v);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(r, 1);
			vg_attest_verdict_release(&v);
			break;
		}
		assert_true(r < 0);	/* -ENOMEM, or OpenSSL's fetch failing: -EOPNOTSUPP */
		assert_int_equal(v.fail, VG_AF_NONE);
		assert_null(v.more);
	}
	vg_refpolicy_free(p);
	vg_imalog_buf_release(&bin);
	free(txt);
}

/*
 * Digests of algorithms vigil does not know are kept (uncheckable) and
 * exported again; a known algorithm with a wrong length, or an unknown
 * one in boot_pcrs, is still malformed.
 */
static void policy_keeps_uncheckable_digests(void **state)
{
	static const char doc[] =
		"{\"digests\": {\"/a\": [\"sm3_256:dca3d0b348447a494da13278a2451683e43314a2d2add09f9ee8e028676018dd\"],"
		" \"/b\": [\"frob:0011223344556677889900112233445566778899001122334455667788\","
		" \"sha256:e4cb9f5709c88376b5fc3743cd88e76b9aae8f3d992d845678de5215edb31216\"]}}";
	struct vg_refpolicy *p, *q;
	struct vg_diag d = { 0 };
	char *j1, *j2;

	(void)state;
	assert_int_equal(vg_refpolicy_load((const uint8_t *)doc, strlen(doc), &p, &d), 0);
	assert_int_equal(vg_refpolicy_paths(p), 2);
	assert_true(vg_refpolicy_to_json(p, &j1) > 0);
	assert_non_null(strstr(j1, "\"sm3_256:dca3d0b3"));
	assert_non_null(strstr(j1, "\"frob:00112233"));
	assert_int_equal(vg_refpolicy_load((const uint8_t *)j1, strlen(j1), &q, &d), 0);
	assert_true(vg_refpolicy_to_json(q, &j2) > 0);
	assert_string_equal(j1, j2);
	free(j1);
	free(j2);
	vg_refpolicy_free(p);
	vg_refpolicy_free(q);
	/* still malformed: a known name with another length, odd names, unknown pins */
	assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"digests\": {\"/a\": [\"sha256:00112233445566778899aabbccddeeff00112233\"]}}",
					   72, &p, &d), -EBADMSG);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"digests\": {\"/a\": [\"Fr0b:0011\"]}}",
					   34, &p, &d), -EBADMSG);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"digests\": {\"/a\": [\":0011\"]}}",
					   30, &p, &d), -EBADMSG);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)"{\"boot_pcrs\": {\"0\": \"frob:0011223344556677889900112233445566778899\"}}",
					   69, &p, &d), -EBADMSG);
}

static void fail_ids_are_unique(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < VG_AF__COUNT; i++) {
		assert_non_null(vg_attest_fail_id(i));
		assert_int_equal(vg_attest_fail_by_id(vg_attest_fail_id(i)), (int)i);
	}
	assert_null(vg_attest_fail_id(VG_AF__COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hw_quote_verifies_and_tampering_is_typed),
		cmocka_unit_test(hw_log_replays_to_quoted_pcr10),
		cmocka_unit_test(keylime_tpm2tools_quote_verifies),
		cmocka_unit_test(key_id_is_the_key_not_its_encoding),
		cmocka_unit_test(decoders_reject_every_truncation),
		cmocka_unit_test(clock_rules),
		cmocka_unit_test(keylime_verdicts_agree),
		cmocka_unit_test(keylime_ima_sig_semantics),
		cmocka_unit_test(keylime_generated_policies_accept_their_logs),
		cmocka_unit_test(policy_formats_roundtrip),
		cmocka_unit_test(excludes_have_bounded_cost),
		cmocka_unit_test(policy_from_log_accepts_it),
		cmocka_unit_test(indexed_paths_match_like_small_ones),
		cmocka_unit_test(fail_ids_are_unique),
		cmocka_unit_test(survives_allocation_failures),
		cmocka_unit_test(log_check_lists_every_failure),
		cmocka_unit_test(policy_keeps_uncheckable_digests),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
