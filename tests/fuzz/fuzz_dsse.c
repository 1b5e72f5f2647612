// SPDX-License-Identifier: MIT
/*
 * fuzz_dsse.c - DSSE envelopes (vg_dsse_open, vg_refpolicy_load_dsse)
 * trusting the key that signed Keylime's test policy (the seed), so that
 * mutations of a genuinely signed envelope reach the signature check.
 *
 * Properties: the return is 0 or a documented error; an accepted
 * envelope is re-verified here independently (json-c, base64 and PAE
 * rebuilt, EVP_DigestVerify with the same key) and must verify, and the
 * payload returned is the decoded "payload" field, byte for byte; an
 * envelope is never accepted with a key that did not sign it (a second,
 * unrelated key); nothing leaks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "fuzz.h"
#include "vigil/attest.h"
#include "vigil/dsse.h"

static struct vg_dsse_keys *trusted, *other;
static EVP_PKEY *trusted_key;

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(1 << 16);

	if (!f || !b)
		abort();
	*len = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	size_t n;
	uint8_t *b;
	BIO *bio;

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/attest/runtime-policy-pubkey.pub", v && *v ? v : VG_FUZZ_VECTORS);
	b = slurp(path, &n);
	if (vg_dsse_keys_new(&trusted) < 0 || vg_dsse_keys_add(trusted, b, n, NULL) != 1)
		abort();
	bio = BIO_new_mem_buf(b, (int)n);
	trusted_key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	free(b);
	b = slurp(fuzz_vectors_path("keys/ecp256.pub.pem"), &n);
	if (!trusted_key || vg_dsse_keys_new(&other) < 0 || vg_dsse_keys_add(other, b, n, NULL) != 1)
		abort();
	free(b);
	return 0;
}

static long b64(const char *s, uint8_t **out)
{
	size_t len = strlen(s), pad = len >= 1 && s[len - 1] == '=' ? (len >= 2 && s[len - 2] == '=' ? 2 : 1) : 0;
	int n;

	*out = malloc(len / 4 * 3 + 1);
	if (!*out || len % 4)
		return -1;
	n = EVP_DecodeBlock(*out, (const unsigned char *)s, (int)len);
	return n < 0 ? -1 : n - (long)pad;
}

/* Does some signature of @env verify with the trusted key over PAE(type, payload)? */
static bool independently_valid(const uint8_t *data, size_t size, const uint8_t *payload,
				size_t plen)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = json_tokener_parse_ex(tok, (const char *)data, (int)size), *t, *p, *sigs;
	bool ok = false;

	json_tokener_free(tok);
	if (!o || !json_object_object_get_ex(o, "payloadType", &t) ||
	    !json_object_object_get_ex(o, "payload", &p) ||
	    !json_object_object_get_ex(o, "signatures", &sigs))
		goto out;
	{
		const char *type = json_object_get_string(t);
		uint8_t *body = NULL;
		long bl = b64(json_object_get_string(p), &body);
		size_t cap = strlen(type) + (bl > 0 ? (size_t)bl : 0) + 64;
		uint8_t *pae = malloc(cap);
		int h;

		if (bl < 0 || !pae || (size_t)bl != plen || memcmp(body, payload, plen) != 0) {
			free(body);
			free(pae);
			goto out;
		}
		h = snprintf((char *)pae, cap, "DSSEv1 %zu %s %ld ", strlen(type), type, bl);
		memcpy(pae + h, body, (size_t)bl);
		for (size_t i = 0; i < json_object_array_length(sigs) && !ok; i++) {
			json_object *s = json_object_array_get_idx(sigs, i), *sv;
			uint8_t *sig = NULL;
			long sl;
			EVP_MD_CTX *c;

			if (!json_object_object_get_ex(s, "sig", &sv)) {
				continue;
			}
			sl = b64(json_object_get_string(sv), &sig);
			c = EVP_MD_CTX_new();
			ok = sl > 0 && c && EVP_DigestVerifyInit(c, NULL, EVP_sha256(), NULL, trusted_key) == 1 &&
			     EVP_DigestVerify(c, sig, (size_t)sl, pae, (size_t)h + (size_t)bl) == 1;
			EVP_MD_CTX_free(c);
			free(sig);
		}
		free(body);
		free(pae);
	}
out:
	json_object_put(o);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_diag d = { 0 };
	struct vg_refpolicy *p = NULL;
	uint8_t *payload = NULL;
	size_t plen = 0;
	int r;

	r = vg_dsse_open(trusted, data, size, NULL, &payload, &plen, &d);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EKEYREJECTED || r == -ENOMEM);
	if (r == 0) {
		FUZZ_CHECK(payload && payload[plen] == 0);
		FUZZ_CHECK(independently_valid(data, size, payload, plen));
	} else {
		FUZZ_CHECK(payload == NULL && (d.err == r || r == -ENOMEM));
	}
	free(payload);
	payload = NULL;
	FUZZ_CHECK(vg_dsse_open(other, data, size, NULL, &payload, &plen, NULL) != 0);
	free(payload);
	r = vg_refpolicy_load_dsse(trusted, data, size, &p, NULL);
	FUZZ_CHECK(r <= 0);
	vg_refpolicy_free(p);
	return 0;
}
