// SPDX-License-Identifier: MIT
/*
 * test_attest_ear.c - the JWS and EAR encoding (attest_ear.h): the
 * published JWS examples (RFC 7515 A.2 RS256 and A.3 ES256 verified, RFC
 * 8037 A.4 EdDSA produced byte for byte: tests/vectors/jws), keys made
 * here for every algorithm signed and verified both ways, a changed byte
 * refused, and the claims of verdicts with none, one and many failures.
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
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "vigil/attest_ear.h"

static const char *vpath(const char *rel)
{
	static char buf[4096];
	const char *v = getenv("VECTORS");

	snprintf(buf, sizeof(buf), "%s/jws/%s", v ? v : "tests/vectors", rel);
	return buf;
}

static char *slurp(const char *rel, size_t *len)
{
	FILE *f = fopen(vpath(rel), "rb");
	char *b = malloc(1 << 16);

	assert_non_null(f);
	assert_non_null(b);
	*len = fread(b, 1, (1 << 16) - 1, f);
	b[*len] = 0;
	fclose(f);
	return b;
}

static EVP_PKEY *pem_key(const char *rel, bool priv)
{
	FILE *f = fopen(vpath(rel), "r");
	EVP_PKEY *k;

	assert_non_null(f);
	k = priv ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(k);
	return k;
}

static int sign_cb(void *arg, const uint8_t *in, size_t len, uint8_t *sig, size_t *siglen)
{
	EVP_PKEY *k = arg;
	int alg = vg_jws_alg_for_key(k, false, NULL);

	return vg_jws_sign_pkey(k, (unsigned int)alg, in, len, sig, siglen, NULL);
}

static void verify_rfc_examples(void **state)
{
	static const char *const names[] = { "rfc7515-a2-rs256", "rfc7515-a3-es256",
					     "rfc8037-a4-eddsa" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		char pub[64], tok[64], *jws, *pl = NULL;
		size_t n;
		EVP_PKEY *k;
		int r;

		snprintf(pub, sizeof(pub), "%s.pub.pem", names[i]);
		snprintf(tok, sizeof(tok), "%s.jws", names[i]);
		k = pem_key(pub, false);
		jws = slurp(tok, &n);
		r = vg_jws_verify_pkey(k, jws, n, &pl, NULL);
		assert_true(r > 0);
		assert_int_equal((size_t)r, strlen(pl));
		if (i < 2)
			assert_non_null(strstr(pl, "\"iss\":\"joe\""));
		else
			assert_string_equal(pl, "Example of Ed25519 signing");
		free(pl);
		/* one byte of the payload changed: refused */
		jws[strchr(jws, '.') - jws + 5] ^= 1;
		assert_int_equal(vg_jws_verify_pkey(k, jws, n, NULL, NULL), -EKEYREJECTED);
		free(jws);
		EVP_PKEY_free(k);
	}
}

static void sign_eddsa_known_answer(void **state)
{
	static const char msg[] = "Example of Ed25519 signing";
	EVP_PKEY *k = pem_key("rfc8037-a4-eddsa.key.pem", true);
	char *want, *got = NULL;
	size_t n;
	int r;

	(void)state;
	want = slurp("rfc8037-a4-eddsa.jws", &n);
	assert_int_equal(vg_jws_alg_for_key(k, false, NULL), VG_JWS_EDDSA);
	r = vg_jws_compact(VG_JWS_EDDSA, NULL, (const uint8_t *)msg, strlen(msg), sign_cb, k, &got,
			   NULL);
	assert_int_equal((size_t)r, n);
	assert_string_equal(got, want);
	free(got);
	free(want);
	EVP_PKEY_free(k);
}

static EVP_PKEY *gen(const char *type, const char *arg)
{
	EVP_PKEY *k;

	if (strcmp(type, "EC") == 0)
		k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", arg);
	else if (strcmp(type, "RSA") == 0)
		k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)atoi(arg));
	else
		k = EVP_PKEY_Q_keygen(NULL, NULL, type);
	assert_non_null(k);
	return k;
}

static void sign_and_verify_every_alg(void **state)
{
	static const struct { const char *type, *arg; int alg; size_t siglen; } keys[] = {
		{ "EC", "P-256", VG_JWS_ES256, 64 },
		{ "EC", "P-384", VG_JWS_ES384, 96 },
		{ "EC", "P-521", VG_JWS_ES512, 132 },
		{ "RSA", "2048", VG_JWS_PS256, 256 },
		{ "ED25519", NULL, VG_JWS_EDDSA, 64 },
	};
	static const char payload[] = "{\"a\":\"/b\"}";

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		EVP_PKEY *k = gen(keys[i].type, keys[i].arg);
		char *jws = NULL, *pl = NULL, *last;
		uint8_t sig[VG_JWS_SIG_MAX];
		int r;

		assert_int_equal(vg_jws_alg_for_key(k, false, NULL), keys[i].alg);
		r = vg_jws_compact((unsigned int)keys[i].alg, "JWT", (const uint8_t *)payload,
				   strlen(payload), sign_cb, k, &jws, NULL);
		assert_true(r > 0);
		last = strrchr(jws, '.') + 1;
		assert_int_equal(vg_b64url_decode(last, strlen(last), sig), (int)keys[i].siglen);
		assert_int_equal(vg_jws_verify_pkey(k, jws, (size_t)r, &pl, NULL),
				 (int)strlen(payload));
		assert_string_equal(pl, payload);
		free(pl);
		/* the signature changed: refused */
		*last = *last == 'A' ? 'B' : 'A';
		assert_int_equal(vg_jws_verify_pkey(k, jws, (size_t)r, NULL, NULL), -EKEYREJECTED);
		free(jws);
		if (keys[i].alg == VG_JWS_PS256) {
			/* RS256 on request, and the key refuses the other padding's label */
			assert_int_equal(vg_jws_alg_for_key(k, true, NULL), VG_JWS_RS256);
			r = vg_jws_compact(VG_JWS_RS256, NULL, (const uint8_t *)payload,
					   strlen(payload), sign_cb, k, &jws, NULL);
			assert_true(r > 0);
			/* signed PS256 (sign_cb), labelled RS256: does not verify */
			assert_int_equal(vg_jws_verify_pkey(k, jws, (size_t)r, NULL, NULL),
					 -EKEYREJECTED);
			free(jws);
		}
		/* an algorithm not the key's is not used */
		assert_int_equal(vg_jws_sign_pkey(k, keys[i].alg == VG_JWS_ES256 ? VG_JWS_EDDSA :
						  VG_JWS_ES256, (const uint8_t *)"x", 1, sig,
						  &(size_t){ 0 }, NULL), -EOPNOTSUPP);
		EVP_PKEY_free(k);
	}
}

static void alg_for_key_refuses_others(void **state)
{
	EVP_PKEY *k = gen("EC", "secp256k1");

	(void)state;
	assert_int_equal(vg_jws_alg_for_key(k, false, NULL), -EOPNOTSUPP);
	EVP_PKEY_free(k);
	k = gen("RSA", "1024");
	assert_int_equal(vg_jws_alg_for_key(k, false, NULL), -EOPNOTSUPP);
	EVP_PKEY_free(k);
}

static void b64url_round_trip(void **state)
{
	uint8_t in[5] = { 0xfb, 0xff, 0x00, 0x3e, 0x3f }, out[8];
	char s[16];

	(void)state;
	assert_int_equal(vg_b64url_encode(in, 5, s), 7);
	assert_string_equal(s, "-_8APj8");
	assert_int_equal(vg_b64url_decode(s, 7, out), 5);
	assert_memory_equal(in, out, 5);
	assert_int_equal(vg_b64url_decode("-_8APj8=", 8, out), -EBADMSG);
	assert_int_equal(vg_b64url_decode("AB", 2, out), -EBADMSG);	/* non-zero pad bits */
	assert_int_equal(vg_b64url_decode("A", 1, out), -EBADMSG);
}

static json_object *claims(const struct vg_ear *e)
{
	char *s = NULL;
	json_object *o;

	assert_true(vg_ear_claims(e, &s, NULL) > 0);
	assert_null(strstr(s, "\\/"));		/* '/' not escaped */
	o = json_tokener_parse(s);
	assert_non_null(o);
	free(s);
	return o;
}

static json_object *at(json_object *o, const char *path)
{
	char buf[256], *save, *t;

	snprintf(buf, sizeof(buf), "%s", path);
	for (t = strtok_r(buf, "|", &save); t && o; t = strtok_r(NULL, "|", &save))
		if (!json_object_object_get_ex(o, t, &o))
			return NULL;
	return o;
}

static const char *str_at(json_object *o, const char *path)
{
	json_object *v = at(o, path);

	return v ? json_object_get_string(v) : NULL;
}

static void claims_trusted(void **state)
{
	struct vg_attest_verdict v;
	struct vg_ear e = { .submod = "h1", .agent_id = "h1", .state = "trusted",
			    .developer = "vigil", .build = "vigil-verifier 1", .policy_id = "p",
			    .nonce = "abcdefgh", .iat = 1700000000, .identity = VG_EAR_ID_EK_CA,
			    .v = &v };
	json_object *o;

	(void)state;
	vg_attest_verdict_init(&v);
	o = claims(&e);
	assert_string_equal(str_at(o, "eat_profile"), VG_EAR_PROFILE);
	assert_int_equal(json_object_get_int64(at(o, "iat")), 1700000000);
	assert_string_equal(str_at(o, "eat_nonce"), "abcdefgh");
	assert_string_equal(str_at(o, "ear.verifier-id|build"), "vigil-verifier 1");
	assert_string_equal(str_at(o, "submods|h1|ear.status"), "affirming");
	assert_int_equal(json_object_get_int(at(o, "submods|h1|ear.trustworthiness-vector|"
						"instance-identity")), 2);
	assert_int_equal(json_object_get_int(at(o, "submods|h1|ear.trustworthiness-vector|"
						"executables")), 2);
	assert_null(at(o, "submods|h1|ear.trustworthiness-vector|hardware"));
	assert_string_equal(str_at(o, "submods|h1|ear.appraisal-policy-id"), "p");
	assert_int_equal(json_object_get_int(at(o, "submods|h1|vigil.failure-count")), 0);
	assert_int_equal(json_object_array_length(at(o, "submods|h1|vigil.failures")), 0);
	json_object_put(o);
	/* registered, not judged yet: none, with no vector */
	e.subject = VG_EAR_NOT_YET;
	e.nonce = NULL;
	o = claims(&e);
	assert_null(at(o, "eat_nonce"));
	assert_string_equal(str_at(o, "submods|h1|ear.status"), "none");
	assert_int_equal(json_object_object_length(at(o, "submods|h1|ear.trustworthiness-vector")),
			 0);
	json_object_put(o);
}

/*
 * instance-identity is claimed, and the status affirming, only for an AK
 * proven to an EK that chains to the EK CA (issue 39): an AK its agent's
 * registration proved to an EK no CA vouches for gets no claim and
 * warning; an AK nobody proved (the stateless endpoint's) no claim and
 * none. A failure is contraindicated whatever the basis.
 */
static void claims_identity_only_where_proven(void **state)
{
	static const struct {
		unsigned int id;
		const char *status;
		int identity;		/* 0: not claimed */
	} cases[] = {
		{ VG_EAR_ID_EK_CA, "affirming", 2 },
		{ VG_EAR_ID_EK, "warning", 0 },
		{ VG_EAR_ID_NONE, "none", 0 },
	};
	struct vg_attest_verdict v;
	struct vg_ear e = { .submod = "evidence", .iat = 1, .v = &v };
	json_object *o;

	(void)state;
	vg_attest_verdict_init(&v);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e.identity = cases[i].id;
		o = claims(&e);
		assert_string_equal(str_at(o, "submods|evidence|ear.status"), cases[i].status);
		if (cases[i].identity)
			assert_int_equal(json_object_get_int(at(o, "submods|evidence|"
				"ear.trustworthiness-vector|instance-identity")), cases[i].identity);
		else
			assert_null(at(o, "submods|evidence|ear.trustworthiness-vector|"
				       "instance-identity"));
		assert_int_equal(json_object_get_int(at(o, "submods|evidence|"
				"ear.trustworthiness-vector|executables")), 2);
		json_object_put(o);
	}
	/* zero, the default, is the least: nothing proven */
	e = (struct vg_ear){ .submod = "evidence", .iat = 1, .v = &v };
	o = claims(&e);
	assert_string_equal(str_at(o, "submods|evidence|ear.status"), "none");
	json_object_put(o);
	/* a failure: contraindicated, with or without a proven identity */
	vg_attest_fail(&v, VG_AF_DIGEST, "digest");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e.identity = cases[i].id;
		o = claims(&e);
		assert_string_equal(str_at(o, "submods|evidence|ear.status"), "contraindicated");
		json_object_put(o);
	}
	vg_attest_verdict_release(&v);
}

static void claims_many_failures(void **state)
{
	struct vg_attest_verdict v, f;
	struct vg_ear e = { .submod = "evidence", .iat = 1, .identity = VG_EAR_ID_EK_CA, .v = &v };
	json_object *o, *arr;

	(void)state;
	vg_attest_verdict_init(&v);
	vg_attest_verdict_init(&f);
	vg_attest_fail(&f, VG_AF_NOT_IN_POLICY, "not in policy");
	snprintf(f.path, sizeof(f.path), "/usr/bin/a");
	f.entry = 3;
	assert_int_equal(vg_attest_verdict_add(&v, &f), 1);
	vg_attest_verdict_init(&f);
	vg_attest_fail(&f, VG_AF_DIGEST, "digest");
	snprintf(f.path, sizeof(f.path), "/usr/bin/b");
	snprintf(f.digest, sizeof(f.digest), "sha256:00");
	f.entry = 4;
	assert_int_equal(vg_attest_verdict_add(&v, &f), 1);
	vg_attest_verdict_init(&f);
	vg_attest_fail(&f, VG_AF_VIOLATION, "violation");
	assert_int_equal(vg_attest_verdict_add(&v, &f), 1);
	o = claims(&e);
	assert_null(at(o, "submods|evidence|vigil.agent-id"));
	assert_string_equal(str_at(o, "submods|evidence|ear.status"), "contraindicated");
	/* not_in_policy 33, then digest 96: the worse tier wins */
	assert_int_equal(json_object_get_int(at(o, "submods|evidence|ear.trustworthiness-vector|"
						"executables")), 96);
	assert_int_equal(json_object_get_int(at(o, "submods|evidence|ear.trustworthiness-vector|"
						"file-system")), 96);
	assert_int_equal(json_object_get_int(at(o, "submods|evidence|ear.trustworthiness-vector|"
						"instance-identity")), 2);
	assert_int_equal(json_object_get_int(at(o, "submods|evidence|vigil.failure-count")), 3);
	arr = at(o, "submods|evidence|vigil.failures");
	assert_int_equal(json_object_array_length(arr), 3);
	assert_string_equal(str_at(json_object_array_get_idx(arr, 0), "id"), "policy.not_in_policy");
	assert_string_equal(str_at(json_object_array_get_idx(arr, 0), "path"), "/usr/bin/a");
	assert_int_equal(json_object_get_int(at(json_object_array_get_idx(arr, 1), "entry")), 4);
	assert_string_equal(str_at(json_object_array_get_idx(arr, 1), "digest"), "sha256:00");
	assert_null(at(json_object_array_get_idx(arr, 2), "entry"));
	json_object_put(o);
	vg_attest_verdict_release(&v);
	/* a quote failure: no instance-identity 2, but 99 */
	vg_attest_fail(&v, VG_AF_SIGNATURE, "bad signature");
	o = claims(&e);
	assert_int_equal(json_object_get_int(at(o, "submods|evidence|ear.trustworthiness-vector|"
						"instance-identity")), 99);
	assert_null(at(o, "submods|evidence|ear.trustworthiness-vector|executables"));
	json_object_put(o);
	/* a nonce vg_ear_nonce_ok refuses, and no submodule */
	e.nonce = "short";
	assert_int_equal(vg_ear_claims(&e, &(char *){ NULL }, NULL), -EINVAL);
	e.nonce = "has space in it";
	assert_int_equal(vg_ear_claims(&e, &(char *){ NULL }, NULL), -EINVAL);
	e.nonce = NULL;
	e.submod = NULL;
	assert_int_equal(vg_ear_claims(&e, &(char *){ NULL }, NULL), -EINVAL);
	vg_attest_verdict_release(&v);
}

static void claim_map_covers_every_failure(void **state)
{
	unsigned int c;
	int v;

	(void)state;
	for (unsigned int f = 0; f < VG_AF__COUNT; f++) {
		bool none = f == VG_AF_NONE || f == VG_AF_REBOOT || f == VG_AF_COMM ||
			    f == VG_AF_LATE || f == VG_AF_STALE;

		assert_int_equal(vg_ear_claim(f, &c, &v), !none);
		if (!none) {
			assert_true(c < VG_EAR__CLAIMS);
			assert_true(vg_ear_tier_of(v) >= VG_EAR_TIER_WARNING);
		}
	}
	assert_int_equal(vg_ear_tier_of(-1), VG_EAR_TIER_NONE);
	assert_int_equal(vg_ear_tier_of(1), VG_EAR_TIER_NONE);
	assert_int_equal(vg_ear_tier_of(2), VG_EAR_TIER_AFFIRMING);
	assert_int_equal(vg_ear_tier_of(32), VG_EAR_TIER_WARNING);
	assert_int_equal(vg_ear_tier_of(96), VG_EAR_TIER_CONTRAINDICATED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verify_rfc_examples),
		cmocka_unit_test(sign_eddsa_known_answer),
		cmocka_unit_test(sign_and_verify_every_alg),
		cmocka_unit_test(alg_for_key_refuses_others),
		cmocka_unit_test(b64url_round_trip),
		cmocka_unit_test(claims_trusted),
		cmocka_unit_test(claims_identity_only_where_proven),
		cmocka_unit_test(claims_many_failures),
		cmocka_unit_test(claim_map_covers_every_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
