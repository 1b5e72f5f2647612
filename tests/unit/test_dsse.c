// SPDX-License-Identifier: MIT
/*
 * test_dsse.c - DSSE-signed reference policies: Keylime's own signed
 * policy and its corrupted twin (tests/vectors/attest), envelopes signed
 * here with OpenSSL (RSA and ECDSA), and every way an envelope can be
 * wrong.
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
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "failalloc.h"
#include "vigil/attest.h"
#include "vigil/dsse.h"

static const char *vpath(const char *dir, const char *rel)
{
	static char buf[4096];
	const char *v = getenv("VECTORS");

	snprintf(buf, sizeof(buf), "%s/%s/%s", v ? v : "tests/vectors", dir, rel);
	return buf;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(1 << 22);

	assert_non_null(f);
	assert_non_null(b);
	*len = fread(b, 1, (1 << 22) - 1, f);
	b[*len] = 0;
	fclose(f);
	return b;
}

static struct vg_dsse_keys *keys_from(const char *dir, const char *rel)
{
	struct vg_dsse_keys *k;
	size_t n;
	uint8_t *b = slurp(vpath(dir, rel), &n);

	assert_int_equal(vg_dsse_keys_new(&k), 0);
	assert_int_equal(vg_dsse_keys_add(k, b, n, NULL), 1);
	free(b);
	return k;
}

static char *b64(const uint8_t *in, size_t len)
{
	char *out = malloc(len / 3 * 4 + 8);

	assert_non_null(out);
	EVP_EncodeBlock((unsigned char *)out, in, (int)len);
	return out;
}

/* An envelope over @body signed (PAE, SHA-256) with the PEM private key @keyfile. */
static char *sign_envelope(const char *type, const char *body, const char *keyfile)
{
	FILE *f = fopen(vpath("evmctl/keys", keyfile), "r");
	EVP_PKEY *key;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	char pae[8192], *pb, *sb, *env;
	uint8_t sig[1024];
	size_t sl = sizeof(sig);
	int n;

	assert_non_null(f);
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(key);
	n = snprintf(pae, sizeof(pae), "DSSEv1 %zu %s %zu %s", strlen(type), type, strlen(body), body);
	assert_true(EVP_DigestSignInit(c, NULL, EVP_sha256(), NULL, key) == 1);
	assert_true(EVP_DigestSign(c, sig, &sl, (uint8_t *)pae, (size_t)n) == 1);
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(key);
	pb = b64((const uint8_t *)body, strlen(body));
	sb = b64(sig, sl);
	env = malloc(strlen(pb) + strlen(sb) + strlen(type) + 128);
	assert_non_null(env);
	sprintf(env, "{\"payloadType\": \"%s\", \"payload\": \"%s\", \"signatures\": [{\"keyid\": \"x\", \"sig\": \"%s\"}]}",
		type, pb, sb);
	free(pb);
	free(sb);
	return env;
}

static int open_env(const struct vg_dsse_keys *k, const char *env, char **out)
{
	uint8_t *p = NULL;
	size_t n = 0;
	struct vg_diag d = { 0 };
	int r = vg_dsse_open(k, (const uint8_t *)env, strlen(env), NULL, &p, &n, &d);

	if (out)
		*out = (char *)p;
	else
		free(p);
	return r;
}

/* Keylime's signed policy verifies with its key; its twin and other keys do not. */
static void keylime_signed_policy(void **state)
{
	struct vg_dsse_keys *k = keys_from("attest", "runtime-policy-pubkey.pub");
	struct vg_dsse_keys *other = keys_from("evmctl/keys", "ecp256.pub.pem");
	struct vg_refpolicy *signed_p = NULL, *plain = NULL;
	struct vg_diag d = { 0 };
	size_t n, pn;
	uint8_t *env = slurp(vpath("attest", "runtime-policy-test-signed.json"), &n);
	uint8_t *bad, *pl = slurp(vpath("attest", "runtime-policy-test.json"), &pn);

	(void)state;
	if (vg_refpolicy_load_dsse(k, env, n, &signed_p, &d) < 0)
		fail_msg("signed policy: %s", d.msg);
	assert_int_equal(vg_refpolicy_load(pl, pn, &plain, NULL), 0);
	assert_true(vg_refpolicy_paths(signed_p) > 0);
	assert_int_equal(vg_refpolicy_paths(signed_p), vg_refpolicy_paths(plain));
	vg_refpolicy_free(signed_p);
	vg_refpolicy_free(plain);

	assert_int_equal(vg_refpolicy_load_dsse(other, env, n, &signed_p, &d), -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "no signature verifies"));
	free(env);
	env = slurp(vpath("attest", "runtime-policy-test-signed-bad.json"), &n);
	assert_int_equal(vg_refpolicy_load_dsse(k, env, n, &signed_p, NULL), -EKEYREJECTED);
	free(env);

	/* the unsigned policy is not an envelope: refused as unsigned */
	assert_int_equal(vg_refpolicy_load_dsse(k, pl, pn, &signed_p, &d), -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "not signed"));
	assert_false(vg_dsse_is_envelope(pl, pn));

	/* one byte of the payload changed */
	env = slurp(vpath("attest", "runtime-policy-test-signed.json"), &n);
	bad = (uint8_t *)strstr((char *)env, "\"payload\": \"") + 20;
	*bad = *bad == 'A' ? 'B' : 'A';
	assert_int_equal(vg_refpolicy_load_dsse(k, env, n, &signed_p, NULL), -EKEYREJECTED);
	free(env);
	free(pl);
	vg_dsse_keys_free(k);
	vg_dsse_keys_free(other);
}

/* Envelopes signed here: RSA and ECDSA, keys from PEM and DER certificates. */
static void rsa_and_ecdsa(void **state)
{
	static const char body[] = "{\"digests\": {\"/usr/bin/true\": [\"sha256:00\"]}}";
	struct vg_dsse_keys *rsa = keys_from("evmctl/keys", "rsa2048.cert.pem");
	struct vg_dsse_keys *ec = keys_from("evmctl/keys", "ecp256.cert.der");
	char *e1 = sign_envelope(VG_DSSE_VIGIL_TYPE, body, "rsa2048.key.pem");
	char *e2 = sign_envelope(VG_DSSE_VIGIL_TYPE, body, "ecp256.key.pem");
	char *e3 = sign_envelope("text/plain", body, "ecp256.key.pem");
	static const char *const policy_types[] = { VG_DSSE_KEYLIME_TYPE, VG_DSSE_VIGIL_TYPE, NULL };
	char *out = NULL;
	uint8_t *p;
	size_t n;

	(void)state;
	assert_int_equal(open_env(rsa, e1, &out), 0);
	assert_string_equal(out, body);
	free(out);
	assert_int_equal(open_env(ec, e2, &out), 0);
	assert_string_equal(out, body);
	free(out);
	assert_int_equal(open_env(ec, e1, NULL), -EKEYREJECTED);
	assert_int_equal(open_env(rsa, e2, NULL), -EKEYREJECTED);
	/* both keys trusted: either signature does */
	{
		size_t kn;
		uint8_t *kb = slurp(vpath("evmctl/keys", "ecp256.cert.pem"), &kn);

		assert_int_equal(vg_dsse_keys_add(rsa, kb, kn, NULL), 1);
		free(kb);
	}
	assert_int_equal(open_env(rsa, e2, NULL), 0);
	/* the type is signed: a policy loader refuses other types */
	assert_int_equal(open_env(ec, e3, NULL), 0);
	assert_int_equal(vg_dsse_open(ec, (uint8_t *)e3, strlen(e3), policy_types, &p, &n, NULL),
			 -EBADMSG);
	{
		char *t = strstr(e2, VG_DSSE_VIGIL_TYPE);

		memcpy(t, "application/vnd.keylime+json", 28);	/* another type, same signature */
		memmove(t + 28, t + strlen(VG_DSSE_VIGIL_TYPE), strlen(t + strlen(VG_DSSE_VIGIL_TYPE)) + 1);
		assert_int_equal(open_env(ec, e2, NULL), -EKEYREJECTED);
	}
	free(e1);
	free(e2);
	free(e3);
	vg_dsse_keys_free(rsa);
	vg_dsse_keys_free(ec);
}

static void malformed_envelopes(void **state)
{
	static const char *const bad[] = {
		"", "[]", "{", "{\"payloadType\": 1, \"payload\": \"\", \"signatures\": []}",
		"{\"payloadType\": \"t\"}",
		"{\"payloadType\": \"t\", \"payload\": \"e30=\", \"signatures\": [{\"sig\": 5}]}",
		"{\"payloadType\": \"t\", \"payload\": \"e30\", \"signatures\": [{\"sig\": \"AAAA\"}]}",
		"{\"payloadType\": \"t\", \"payload\": \"e3 0=\", \"signatures\": [{\"sig\": \"AAAA\"}]}",
		"{\"payloadType\": \"t\", \"payload\": \"e30=\", \"signatures\": [{\"sig\": \"AAAA\"}]} x",
	};
	static const char *const unsigned_[] = {
		"{\"payloadType\": \"t\", \"payload\": \"e30=\"}",
		"{\"payloadType\": \"t\", \"payload\": \"e30=\", \"signatures\": []}",
		"{\"payloadType\": \"t\", \"payload\": \"e30=\", \"signatures\": [{\"sig\": \"AA=A\"}]}",
		"{\"payloadType\": \"t\", \"payload\": \"e30=\", \"signatures\": [{\"sig\": \"AAAA\"}]}",
	};
	struct vg_dsse_keys *k = keys_from("evmctl/keys", "ecp256.pub.pem");

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (open_env(k, bad[i], NULL) != -EBADMSG)
			fail_msg("case %zu not refused as malformed: %s", i, bad[i]);
	for (size_t i = 0; i < sizeof(unsigned_) / sizeof(unsigned_[0]); i++)
		if (open_env(k, unsigned_[i], NULL) != -EKEYREJECTED)
			fail_msg("case %zu not refused as unsigned: %s", i, unsigned_[i]);
	vg_dsse_keys_free(k);
}

/* Key files: all or nothing; private keys and junk refused; a limit. */
static void key_files(void **state)
{
	struct vg_dsse_keys *k;
	size_t n, cn;
	uint8_t *priv = slurp(vpath("evmctl/keys", "ecp256.key.pem"), &n);
	uint8_t *cert = slurp(vpath("evmctl/keys", "ecp256.cert.pem"), &cn);
	uint8_t *two = malloc(cn + n + 1);
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_dsse_keys_new(&k), 0);
	assert_int_equal(vg_dsse_keys_add(k, priv, n, &d), -EBADMSG);
	assert_int_equal(vg_dsse_keys_add(k, (const uint8_t *)"junk", 4, NULL), -EBADMSG);
	memcpy(two, cert, cn);
	memcpy(two + cn, priv, n);
	assert_int_equal(vg_dsse_keys_add(k, two, cn + n, NULL), -EBADMSG);
	for (int i = 0; i < VG_DSSE_MAX_KEYS; i++)
		assert_int_equal(vg_dsse_keys_add(k, cert, cn, NULL), 1);
	assert_int_equal(vg_dsse_keys_add(k, cert, cn, NULL), -ENOSPC);
	free(two);
	free(priv);
	free(cert);
	vg_dsse_keys_free(k);
}

static void allocation_failures(void **state)
{
	size_t n, kn;
	uint8_t *env = slurp(vpath("attest", "runtime-policy-test-signed.json"), &n);
	uint8_t *kb = slurp(vpath("attest", "runtime-policy-pubkey.pub"), &kn);
	long failures = 0;

	(void)state;
	for (long i = 0;; i++) {
		struct vg_dsse_keys *k = NULL;
		struct vg_refpolicy *p = NULL;
		int r;

		failalloc_arm(i);
		r = vg_dsse_keys_new(&k);
		if (r == 0)
			r = vg_dsse_keys_add(k, kb, kn, NULL);
		if (r >= 0)
			r = vg_refpolicy_load_dsse(k, env, n, &p, NULL);
		failalloc_disarm();
		vg_refpolicy_free(p);
		vg_dsse_keys_free(k);
		if (!failalloc_hit()) {
			assert_int_equal(r, 0);
			break;
		}
		failures++;
		/* a clean error; never a policy loaded from an unverified envelope */
		if (r >= 0)
			fail_msg("allocation %ld failed, yet the load returned %d", i, r);
	}
	assert_true(failures > 0);
	free(env);
	free(kb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keylime_signed_policy),
		cmocka_unit_test(rsa_and_ecdsa),
		cmocka_unit_test(malformed_envelopes),
		cmocka_unit_test(key_files),
		cmocka_unit_test(allocation_failures),
	};

	failalloc_install();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
