// SPDX-License-Identifier: MIT
/*
 * test_verifier_register.c - vigil-verifier's registration (vf_register,
 * verifier/register.c) called directly, without HTTP: the agent is a
 * stand-in for vf->fetch that answers /v1/identity and /v1/activate from a
 * real TPM (a swtpm started for this run in $VIGIL_TESTDIR, as test_tpm),
 * the store a SQLite file. One success (201, the agent stored as
 * registered) and each refusal registration has: a malformed body (400),
 * an unreachable agent (502 agent.comm), a malformed identity, an id
 * registered with another EK (409), an EK registered under another id and
 * a push credential that registered another id (403, naming it), no EK
 * certificate under --ek-ca, an EK
 * certificate of another key, an AK that does not load, and a credential
 * the agent could not activate or proved wrongly (403, typed).
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
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <tss2/tss2_mu.h>

#include "vigil/tpm_attest.h"
#include "swtpm.h"
#include "verifier.h"

/* libcrypto's own allocations (tpm2-tss contexts) are not ours to check here */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libcrypto.so\n";
}

enum fake_mode {
	HONEST,
	UNREACHABLE,		/* no answer at all */
	GARBAGE_IDENTITY,	/* /v1/identity is not an identity */
	NO_CERT,		/* the identity has no EK certificate */
	OTHER_EK,		/* the EK public is not the certificate's key */
	BAD_AK,			/* the AK public does not load */
	ACTIVATE_FAILS,		/* /v1/activate: HTTP 500 */
	WRONG_PROOF,		/* /v1/activate: a proof of another secret */
};

static char dir[4096], tcti[4200];
static struct vg_atpm *tpm;
static struct vg_api_identity ident;	/* the TPM's EK, certificate and AK */
static enum fake_mode mode;
static char agent_id[VG_API_ID_MAX];	/* the id the fake proves for */

static long answer(struct http_answer *out, long code, char *json)
{
	out->p = (uint8_t *)json;
	out->len = json ? strlen(json) : 0;
	return code;
}

/* The agent, as vf->fetch sees it. */
static long fake_fetch(struct verifier *vf, const char *url, const char *body, bool agent,
		       size_t max, struct http_answer *out, char *err, size_t errlen)
{
	(void)vf;
	(void)max;
	assert_true(agent);
	memset(out, 0, sizeof(*out));
	if (mode == UNREACHABLE) {
		snprintf(err, errlen, "%s: Couldn't connect to server", url);
		return -1;
	}
	if (strstr(url, "/v1/identity")) {
		struct vg_api_identity id = ident;
		char *s = NULL;

		if (mode == GARBAGE_IDENTITY)
			return answer(out, 200, strdup("{\"ek_pub\": 7}"));
		if (mode == NO_CERT)
			id.ek_cert_len = 0;
		if (mode == OTHER_EK)
			id.ek_pub[id.ek_pub_len - 1] ^= 1;
		if (mode == BAD_AK)
			id.ak_pub[4] ^= 0xff;
		assert_true(vg_api_identity_build(&id, &s) > 0);
		return answer(out, 200, s);
	}
	if (strstr(url, "/v1/activate")) {
		struct vg_api_activate act;
		struct vg_diag d = { 0 };
		uint8_t secret[64], proof[32];
		unsigned int pl = 0;
		char *s = NULL;
		int n;

		if (mode == ACTIVATE_FAILS)
			return answer(out, 500, strdup("{\"error\": \"TPM says no\"}"));
		assert_int_equal(vg_api_activate_parse((const uint8_t *)body, strlen(body), &act, &d),
				 0);
		n = vg_atpm_activate(tpm, act.id_object, act.id_len, act.enc_secret, act.es_len, secret,
				     sizeof(secret), &d);
		assert_true(n > 0);
		if (mode == WRONG_PROOF)
			secret[0] ^= 1;
		HMAC(EVP_sha256(), secret, n, (const uint8_t *)agent_id, strlen(agent_id), proof, &pl);
		assert_int_equal(pl, 32);
		assert_true(vg_api_proof_build(proof, &s) > 0);
		return answer(out, 200, s);
	}
	return answer(out, 404, strdup("{}"));
}

static uint8_t rsa_blob[VG_ATPM_BLOB_MAX];	/* the AK under the RSA EK */
static size_t rsa_blob_len;

static int group_setup(void **state)
{
	uint8_t *blob = rsa_blob;
	size_t bl = sizeof(rsa_blob);

	(void)state;
	if (test_swtpm_start("/tmp/vigil-test-register", dir, sizeof(dir), tcti, sizeof(tcti)) < 0)
		return -1;
	if (vg_atpm_open(tcti, &tpm, NULL) < 0)
		return -1;
	ident.ek_pub_len = sizeof(ident.ek_pub);
	ident.ek_cert_len = sizeof(ident.ek_cert);
	ident.ak_pub_len = sizeof(ident.ak_pub);
	if (vg_atpm_ek(tpm, ident.ek_pub, &ident.ek_pub_len, ident.ek_cert, &ident.ek_cert_len,
		       NULL) < 0 ||
	    vg_atpm_ak_create(tpm, false, blob, &bl, NULL) < 0 ||
	    vg_atpm_ak_public(tpm, ident.ak_pub, &ident.ak_pub_len) < 0)
		return -1;
	rsa_blob_len = bl;
	return ident.ek_cert_len ? 0 : -1;	/* swtpm.sh provisions a certificate */
}

static int group_teardown(void **state)
{
	(void)state;
	vg_atpm_close(tpm);
	return test_swtpm_stop(dir);
}

/* A verifier with a fresh store and the fake agent. */
static int setup(void **state)
{
	static unsigned int n;
	struct verifier *vf = malloc(sizeof(*vf));
	char url[4200 + 64];

	if (!vf || vf_init(vf) < 0)
		return -1;
	vf->fetch = fake_fetch;
	snprintf(url, sizeof(url), "sqlite:%s/store-%u.db", dir, n++);
	if (vg_store_open(url, &vf->store, NULL) < 0)
		return -1;
	mode = HONEST;
	snprintf(agent_id, sizeof(agent_id), "host1");
	*state = vf;
	return 0;
}

static int teardown(void **state)
{
	struct verifier *vf = *state;

	vg_store_close(vf->store);
	free(vf);
	return 0;
}

static const char body_ok[] = "{\"id\": \"host1\", \"url\": \"http://127.0.0.1:9\", "
			      "\"policy\": \"\"}";

/* vf_register's answer: @code, and for a typed failure its id, or the agent's state. */
static void expect(struct verifier *vf, const char *body, unsigned int code, const char *key,
		   const char *want)
{
	struct vf_answer ans = { 0 };
	json_object *v;

	assert_int_equal(vf_register(vf, body, strlen(body), &ans), code);
	assert_int_equal(ans.code, code);
	assert_non_null(ans.body);
	assert_true(json_object_object_get_ex(ans.body, key, &v));
	if (want)
		assert_string_equal(json_object_get_string(v), want);
	json_object_put(ans.body);
}

static void register_stores_the_agent(void **state)
{
	struct verifier *vf = *state;
	struct vg_store_agent *a = malloc(sizeof(*a));

	assert_non_null(a);
	expect(vf, body_ok, 201, "state", "registered");
	assert_int_equal(vg_store_agent_get(vf->store, "host1", a, NULL), 0);
	assert_int_equal(a->state, VG_AGENT_REGISTERED);
	assert_string_equal(a->url, "http://127.0.0.1:9");
	assert_int_equal(a->bank, VG_HASH_SHA256);
	assert_int_equal(a->mask, 1u << VG_ATTEST_PCR_IMA);
	assert_memory_equal(a->ek_pub, ident.ek_pub, ident.ek_pub_len);
	assert_memory_equal(a->ak_pub, ident.ak_pub, ident.ak_pub_len);
	/* the same identity again: allowed (same EK) */
	expect(vf, body_ok, 201, "id", "host1");
	free(a);
}

/* The id is the agent's: learnt from its identity, or refused naming both ids. */
static void register_learns_or_checks_the_agents_id(void **state)
{
	struct verifier *vf = *state;
	struct vf_answer ans = { 0 };
	static const char no_id[] = "{\"url\": \"http://127.0.0.1:9\"}";
	static const char other[] = "{\"id\": \"web7\", \"url\": \"http://127.0.0.1:9\"}";
	json_object *v;

	/* an agent that does not say its id: an id is needed */
	expect(vf, no_id, 400, "error", NULL);
	snprintf(ident.id, sizeof(ident.id), "%s", agent_id);
	expect(vf, no_id, 201, "id", "host1");
	assert_int_equal(vf_register(vf, other, strlen(other), &ans), 409);
	assert_true(json_object_object_get_ex(ans.body, "error", &v));
	assert_non_null(strstr(json_object_get_string(v), "'web7'"));
	assert_non_null(strstr(json_object_get_string(v), "'host1'"));
	/* not a typed attestation failure (it used to be identity.credential) */
	assert_false(json_object_object_get_ex(ans.body, "failure", &v));
	json_object_put(ans.body);
	assert_int_equal(vg_store_agent_get(vf->store, "web7", &(struct vg_store_agent){ 0 }, NULL),
			 -ENOENT);
	ident.id[0] = 0;
}

static void register_rejects_malformed_body(void **state)
{
	expect(*state, "{\"id\": \"host1\"", 400, "error", NULL);
	expect(*state, "{\"id\": \"a b\", \"url\": \"http://x\"}", 400, "error", NULL);
}

static void register_unreachable_agent_is_bad_gateway(void **state)
{
	mode = UNREACHABLE;
	expect(*state, body_ok, 502, "failure", "agent.comm");
}

static void register_rejects_malformed_identity(void **state)
{
	mode = GARBAGE_IDENTITY;
	expect(*state, body_ok, 403, "failure", "quote.malformed");
}

static void register_rejects_another_ek_for_a_known_id(void **state)
{
	struct verifier *vf = *state;
	struct vg_store_agent *a = calloc(1, sizeof(*a));

	assert_non_null(a);
	snprintf(a->id, sizeof(a->id), "host1");
	snprintf(a->url, sizeof(a->url), "http://127.0.0.1:9");
	memcpy(a->ek_pub, ident.ek_pub, ident.ek_pub_len);
	a->ek_pub_len = ident.ek_pub_len;
	a->ek_pub[10] ^= 1;
	memcpy(a->ak_pub, ident.ak_pub, ident.ak_pub_len);
	a->ak_pub_len = ident.ak_pub_len;
	a->bank = VG_HASH_SHA256;
	a->mask = 1u << VG_ATTEST_PCR_IMA;
	vg_attest_logstate_init(&a->st.log, VG_HASH_SHA256);
	assert_int_equal(vg_store_agent_put(vf->store, a, NULL), 0);
	expect(vf, body_ok, 409, "failure", "identity.ek_changed");
	free(a);
}

/* an agent row with the TPM's EK (and AK), under @id, with @url */
static void put_with_this_ek(struct verifier *vf, const char *id, const char *url)
{
	struct vg_store_agent *a = calloc(1, sizeof(*a));

	assert_non_null(a);
	snprintf(a->id, sizeof(a->id), "%s", id);
	snprintf(a->url, sizeof(a->url), "%s", url);
	memcpy(a->ek_pub, ident.ek_pub, ident.ek_pub_len);
	a->ek_pub_len = ident.ek_pub_len;
	memcpy(a->ak_pub, ident.ak_pub, ident.ak_pub_len);
	a->ak_pub_len = ident.ak_pub_len;
	a->bank = VG_HASH_SHA256;
	a->mask = 1u << VG_ATTEST_PCR_IMA;
	vg_attest_logstate_init(&a->st.log, VG_HASH_SHA256);
	assert_int_equal(vg_store_agent_put(vf->store, a, NULL), 0);
	free(a);
}

/* one TPM is one agent: its EK under another id is refused, naming that id (issue 39) */
static void register_rejects_an_ek_registered_under_another_id(void **state)
{
	struct verifier *vf = *state;
	struct vg_store_agent *a = malloc(sizeof(*a));
	struct vf_answer ans = { 0 };
	json_object *m;

	assert_non_null(a);
	put_with_this_ek(vf, "web1", "http://127.0.0.1:8");
	assert_int_equal(vf_register(vf, body_ok, strlen(body_ok), &ans), 403);
	assert_true(json_object_object_get_ex(ans.body, "failure", &m));
	assert_string_equal(json_object_get_string(m), "identity.ek_bound");
	assert_true(json_object_object_get_ex(ans.body, "message", &m));
	assert_non_null(strstr(json_object_get_string(m), "registered as agent 'web1'"));
	json_object_put(ans.body);
	assert_int_equal(vg_store_agent_get(vf->store, "host1", a, NULL), -ENOENT);
	/* web1 itself registers again with it */
	snprintf(agent_id, sizeof(agent_id), "web1");
	expect(vf, "{\"id\": \"web1\", \"url\": \"http://127.0.0.1:8\", \"policy\": \"\"}", 201,
	       "state", "registered");
	/* once an operator removed web1, the TPM enrolls as host1 */
	assert_int_equal(vg_store_agent_del(vf->store, "web1", NULL), 0);
	snprintf(agent_id, sizeof(agent_id), "host1");
	expect(vf, body_ok, 201, "state", "registered");
	free(a);
}

/*
 * The EK is its key, not the bytes it came in: web1's row holds this TPM's
 * EK with another objectAttributes byte and another authPolicy (what a host
 * replaying its EK public with other attributes would have sent first); the
 * TPM's own encoding is still web1's EK (issue 39).
 */
static void register_rejects_an_ek_sent_in_another_encoding(void **state)
{
	struct verifier *vf = *state;
	struct vg_store_agent *a = calloc(1, sizeof(*a));
	struct vf_answer ans = { 0 };
	json_object *m;

	assert_non_null(a);
	put_with_this_ek(vf, "web1", "http://127.0.0.1:8");
	assert_int_equal(vg_store_agent_get(vf->store, "web1", a, NULL), 0);
	a->ek_pub[9] ^= 0x40;			/* objectAttributes, low byte */
	a->ek_pub[12] ^= 0x01;			/* the first byte of authPolicy */
	assert_int_equal(vg_store_agent_put(vf->store, a, NULL), 0);
	assert_int_equal(vf_register(vf, body_ok, strlen(body_ok), &ans), 403);
	assert_true(json_object_object_get_ex(ans.body, "failure", &m));
	assert_string_equal(json_object_get_string(m), "identity.ek_bound");
	json_object_put(ans.body);
	assert_int_equal(vg_store_agent_get(vf->store, "host1", a, NULL), -ENOENT);
	free(a);
}

/*
 * A push credential registers one id (the push routes call the same
 * functions: vf_register_challenge, vf_register_proven); "none" (no
 * authentication) binds nothing.
 */
static void push_credential_registers_one_id(void **state)
{
	struct verifier *vf = *state;
	struct vg_api_identity other = ident;
	struct vg_api_activate *act = malloc(sizeof(*act));
	struct vf_answer ans = { 0 };
	uint8_t mac[32];

	assert_non_null(act);
	put_with_this_ek(vf, "web1", "push:token:4d346600");
	other.ek_pub[other.ek_pub_len - 10] ^= 0x10;	/* another TPM: only the credential is shared */
	other.ek_cert_len = 0;
	assert_int_equal(vf_register_challenge(vf, "db1", &other, "token:4d346600", act, mac, &ans),
			 403);
	assert_non_null(strstr(json_object_get_string(json_object_object_get(ans.body, "error")),
			       "this credential registered agent 'web1'"));
	json_object_put(ans.body);
	ans = (struct vf_answer){ 0 };
	/* the check is made again with the write */
	assert_int_equal(vf_register_proven(vf, "db1", "push:token:4d346600", "", &other,
					    "token:4d346600", &ans), 403);
	json_object_put(ans.body);
	ans = (struct vf_answer){ 0 };
	/* another credential, or none at all, passes the binding (and makes its challenge) */
	assert_int_equal(vf_register_challenge(vf, "db1", &other, "token:5e457711", act, mac, &ans),
			 0);
	assert_int_equal(vf_register_challenge(vf, "db1", &other, "none", act, mac, &ans), 0);
	/* the same TPM under another credential: its EK is web1's */
	assert_int_equal(vf_register_challenge(vf, "db1", &ident, "token:5e457711", act, mac, &ans),
			 403);
	json_object_put(ans.body);
	ans = (struct vf_answer){ 0 };
	/* web1 registered meanwhile by someone: a push activation of it is refused */
	assert_int_equal(vf_register_proven(vf, "web1", "push:token:4d346600", "", &ident,
					    "token:4d346600", &ans), 409);
	json_object_put(ans.body);
	free(act);
}

static void register_ek_ca_requires_a_certificate(void **state)
{
	struct verifier *vf = *state;

	mode = NO_CERT;
	vf->ek_ca = "/nonexistent/ek-ca.pem";
	expect(vf, body_ok, 403, "failure", "identity.ek_cert");
	/* without --ek-ca a TPM without certificate may register */
	vf->ek_ca = NULL;
	expect(vf, body_ok, 201, "state", "registered");
}

static void register_rejects_certificate_of_another_key(void **state)
{
	mode = OTHER_EK;
	expect(*state, body_ok, 403, "failure", "identity.ek_cert");
}

static void register_rejects_unloadable_ak(void **state)
{
	mode = BAD_AK;
	expect(*state, body_ok, 403, "failure", "identity.ak");
}

static void register_rejects_failed_activation(void **state)
{
	struct verifier *vf = *state;
	struct vg_store_agent *a = malloc(sizeof(*a));

	assert_non_null(a);
	mode = ACTIVATE_FAILS;
	expect(vf, body_ok, 403, "failure", "identity.credential");
	mode = WRONG_PROOF;
	expect(vf, body_ok, 403, "failure", "identity.credential");
	/* a proof for another id */
	mode = HONEST;
	snprintf(agent_id, sizeof(agent_id), "host2");
	expect(vf, body_ok, 403, "failure", "identity.credential");
	/* nothing stored by a refusal */
	assert_int_equal(vg_store_agent_get(vf->store, "host1", a, NULL), -ENOENT);
	free(a);
}

/*
 * The ECC EKs: swtpm's own P-384 EK (template H-3, certificate in NV
 * 0x01c00016 from swtpm_setup, chained to its CA) and a P-256 EK
 * (template L-2, no certificate: accepted without --ek-ca): MakeCredential
 * in software (ECDH + KDFe), ActivateCredential by the TPM, the proof
 * checked, the agent stored. Then back to the RSA EK for the other cases.
 */
static void register_with_ecc_eks(void **state)
{
	struct verifier *vf = *state;
	struct vg_api_identity rsa = ident;
	struct vg_store_agent *a = malloc(sizeof(*a));
	uint8_t blob[VG_ATPM_BLOB_MAX];
	char ca[4200 + 16];
	static const struct {
		unsigned int type;
		bool cert;
	} eks[] = { { VG_ATPM_EK_ECC_P384, true }, { VG_ATPM_EK_ECC_P256, false } };

	assert_non_null(a);
	snprintf(ca, sizeof(ca), "%s/ek-ca.pem", dir);
	for (size_t i = 0; i < sizeof(eks) / sizeof(eks[0]); i++) {
		size_t bl = sizeof(blob);
		struct vg_diag d = { 0 };
		TPM2B_PUBLIC ek;
		size_t off = 0;

		assert_int_equal(vg_atpm_set_ek_type(tpm, eks[i].type), 0);
		ident.ek_pub_len = sizeof(ident.ek_pub);
		ident.ek_cert_len = sizeof(ident.ek_cert);
		ident.ak_pub_len = sizeof(ident.ak_pub);
		if (vg_atpm_ek(tpm, ident.ek_pub, &ident.ek_pub_len, ident.ek_cert,
			       &ident.ek_cert_len, &d) < 0)
			fail_msg("EK %u: %s", eks[i].type, d.msg);
		memset(&ek, 0, sizeof(ek));
		{
			TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(ident.ek_pub, ident.ek_pub_len,
								    &off, &ek);

			if (rc)
				fail_msg("unmarshal EK %u (%zu bytes): 0x%x", eks[i].type,
					 ident.ek_pub_len, rc);
		}
		assert_int_equal(ek.publicArea.type, TPM2_ALG_ECC);
		assert_int_equal(ek.publicArea.parameters.eccDetail.curveID,
				 eks[i].type == VG_ATPM_EK_ECC_P384 ? TPM2_ECC_NIST_P384
								    : TPM2_ECC_NIST_P256);
		assert_int_equal(ident.ek_cert_len != 0, eks[i].cert);
		if (vg_atpm_ak_create(tpm, false, blob, &bl, &d) < 0)
			fail_msg("AK under EK %u: %s", eks[i].type, d.msg);
		assert_int_equal(vg_atpm_ak_public(tpm, ident.ak_pub, &ident.ak_pub_len), 0);
		vf->ek_ca = eks[i].cert ? ca : NULL;
		expect(vf, body_ok, 201, "state", "registered");
		assert_int_equal(vg_store_agent_get(vf->store, "host1", a, NULL), 0);
		assert_memory_equal(a->ek_pub, ident.ek_pub, ident.ek_pub_len);
		/* a proof of another secret is still refused with an ECC EK */
		assert_int_equal(vg_store_agent_del(vf->store, "host1", NULL), 0);
		mode = WRONG_PROOF;
		expect(vf, body_ok, 403, "failure", "identity.credential");
		mode = HONEST;
	}
	vf->ek_ca = NULL;
	ident = rsa;
	assert_int_equal(vg_atpm_set_ek_type(tpm, VG_ATPM_EK_RSA2048), 0);
	assert_int_equal(vg_atpm_ak_load(tpm, rsa_blob, rsa_blob_len, NULL), 0);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(register_stores_the_agent, setup, teardown),
		cmocka_unit_test_setup_teardown(register_learns_or_checks_the_agents_id, setup,
						teardown),
		cmocka_unit_test_setup_teardown(register_rejects_malformed_body, setup, teardown),
		cmocka_unit_test_setup_teardown(register_unreachable_agent_is_bad_gateway, setup,
						teardown),
		cmocka_unit_test_setup_teardown(register_rejects_malformed_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(register_rejects_another_ek_for_a_known_id, setup,
						teardown),
		cmocka_unit_test_setup_teardown(register_rejects_an_ek_sent_in_another_encoding,
						setup, teardown),
		cmocka_unit_test_setup_teardown(register_rejects_an_ek_registered_under_another_id,
						setup, teardown),
		cmocka_unit_test_setup_teardown(push_credential_registers_one_id, setup, teardown),
		cmocka_unit_test_setup_teardown(register_ek_ca_requires_a_certificate, setup, teardown),
		cmocka_unit_test_setup_teardown(register_rejects_certificate_of_another_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(register_rejects_unloadable_ak, setup, teardown),
		cmocka_unit_test_setup_teardown(register_rejects_failed_activation, setup, teardown),
		cmocka_unit_test_setup_teardown(register_with_ecc_eks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
