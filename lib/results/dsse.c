// SPDX-License-Identifier: MIT
/*
 * dsse.c - DSSE envelopes (dsse.h): decode, PAE, signature check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "internal.h"
#include "vigil/attest.h"
#include "vigil/dsse.h"

#define DSSE_MAX_ENVELOPE (64u << 20)	/* a runtime policy of ~500k paths */
#define DSSE_MAX_SIGS 16

struct vg_dsse_keys {
	EVP_PKEY *key[VG_DSSE_MAX_KEYS];
	size_t n;
};

int vg_dsse_keys_new(struct vg_dsse_keys **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void vg_dsse_keys_free(struct vg_dsse_keys *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		EVP_PKEY_free(k->key[i]);
	free(k);
}

/* One DER blob: a SubjectPublicKeyInfo or a certificate. */
static EVP_PKEY *key_from_der(const uint8_t *der, size_t len, bool cert)
{
	const unsigned char *p = der;
	EVP_PKEY *key = NULL;
	X509 *x;

	if (!cert) {
		key = d2i_PUBKEY(NULL, &p, (long)len);
		if (key && p == der + len)
			return key;
		EVP_PKEY_free(key);
		return NULL;
	}
	x = d2i_X509(NULL, &p, (long)len);
	if (x && p == der + len)
		key = X509_get_pubkey(x);
	X509_free(x);
	return key;
}

int vg_dsse_keys_add(struct vg_dsse_keys *k, const uint8_t *buf, size_t len,
		     struct vg_diag *diag)
{
	EVP_PKEY *got[VG_DSSE_MAX_KEYS];
	size_t n = 0;
	int r = 0;

	if (len > INT32_MAX)
		return vg_diag_set(diag, -EBADMSG, "key file too large");
	if (len >= 11 && memcmp(buf, "-----BEGIN ", 11) == 0) {
		BIO *b = BIO_new_mem_buf(buf, (int)len);

		if (!b)
			return -ENOMEM;
		for (;;) {
			char *name = NULL, *hdr = NULL;
			unsigned char *der = NULL;
			long dl = 0;
			EVP_PKEY *key = NULL;

			if (!PEM_read_bio(b, &name, &hdr, &der, &dl))
				break;
			if (strcmp(name, "PUBLIC KEY") == 0)
				key = key_from_der(der, (size_t)dl, false);
			else if (strcmp(name, "CERTIFICATE") == 0)
				key = key_from_der(der, (size_t)dl, true);
			else
				r = vg_diag_set(diag, -EBADMSG, "PEM block \"%s\" is not a public key or certificate",
						name);
			if (r == 0 && !key)
				r = vg_diag_set(diag, -EBADMSG, "PEM block %zu (%s) does not decode", n + 1,
						name);
			if (r == 0 && n + k->n >= VG_DSSE_MAX_KEYS)
				r = vg_diag_set(diag, -ENOSPC, "more than %d DSSE keys",
						VG_DSSE_MAX_KEYS);
			OPENSSL_free(name);
			OPENSSL_free(hdr);
			OPENSSL_free(der);
			if (r < 0) {
				EVP_PKEY_free(key);
				break;
			}
			got[n++] = key;
		}
		BIO_free(b);
		vg_ssl_clear();
	} else {
		EVP_PKEY *key = key_from_der(buf, len, false);

		if (!key)
			key = key_from_der(buf, len, true);
		vg_ssl_clear();
		if (!key)
			r = vg_diag_set(diag, -EBADMSG, "not a PEM or DER public key or certificate");
		else if (k->n >= VG_DSSE_MAX_KEYS)
			r = vg_diag_set(diag, -ENOSPC, "more than %d DSSE keys", VG_DSSE_MAX_KEYS);
		if (key && r == 0)
			got[n++] = key;
		else
			EVP_PKEY_free(key);
	}
	if (r == 0 && n == 0)
		r = vg_diag_set(diag, -EBADMSG, "no public key or certificate found");
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			EVP_PKEY_free(got[i]);
		return r;
	}
	memcpy(k->key + k->n, got, n * sizeof(got[0]));
	k->n += n;
	return (int)n;
}

/* Standard base64 (padding required, no whitespace) → malloc'd bytes. */
static long b64(const char *s, uint8_t **ret)
{
	size_t len = strlen(s), pad = 0;
	uint8_t *out;
	int n;

	*ret = NULL;
	if (len % 4 || len > DSSE_MAX_ENVELOPE)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  c == '+' || c == '/';

		if (c == '=' && i >= len - 2) {
			pad++;
			continue;
		}
		if (!ok || pad)
			return -EBADMSG;
	}
	out = malloc(len / 4 * 3 + 1);
	if (!out)
		return -ENOMEM;
	n = len ? EVP_DecodeBlock(out, (const unsigned char *)s, (int)len) : 0;
	if (n < 0 || (size_t)n < pad) {
		free(out);
		return -EBADMSG;
	}
	n -= (int)pad;	/* EVP_DecodeBlock counts the padding as zero bytes */
	out[n] = 0;
	*ret = out;
	return n;
}

/* PAE(type, body), malloc'd. */
static uint8_t *pae(const char *type, const uint8_t *body, size_t blen, size_t *ret_len)
{
	size_t tl = strlen(type), cap = tl + blen + 64;
	uint8_t *p = malloc(cap);
	int h;

	if (!p)
		return NULL;
	h = snprintf((char *)p, cap, "DSSEv1 %zu %s %zu ", tl, type, blen);
	if (h < 0 || (size_t)h + blen > cap) {
		free(p);
		return NULL;
	}
	memcpy(p + h, body, blen);
	*ret_len = (size_t)h + blen;
	return p;
}

static bool verifies(EVP_PKEY *key, const uint8_t *msg, size_t mlen, const uint8_t *sig,
		     size_t slen)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c && EVP_DigestVerifyInit(c, NULL, EVP_sha256(), NULL, key) == 1 &&
		  EVP_DigestVerify(c, sig, slen, msg, mlen) == 1;

	EVP_MD_CTX_free(c);
	vg_ssl_clear();
	return ok;
}

static const char *str_field(json_object *o, const char *name)
{
	json_object *v;

	if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *parse(const uint8_t *buf, size_t len)
{
	json_tokener *tok;
	json_object *o;

	if (len > DSSE_MAX_ENVELOPE)
		return NULL;
	tok = json_tokener_new();
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	/* one JSON value and nothing but blanks after it */
	if (o && json_tokener_get_error(tok) == json_tokener_success) {
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t') {
				json_object_put(o);
				o = NULL;
				break;
			}
	} else {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

int vg_dsse_is_envelope(const uint8_t *buf, size_t len)
{
	json_object *o = parse(buf, len);
	int r = o && json_object_is_type(o, json_type_object) && str_field(o, "payloadType");

	json_object_put(o);
	return r;
}

int vg_dsse_open(const struct vg_dsse_keys *k, const uint8_t *env, size_t len,
		 const char *const *types, uint8_t **payload, size_t *payload_len,
		 struct vg_diag *diag)
{
	json_object *o = parse(env, len), *sigs;
	const char *ptype, *pl;
	uint8_t *body = NULL, *msg = NULL;
	size_t mlen = 0, nsigs;
	long blen;
	int r;

	*payload = NULL;
	if (!o || !json_object_is_type(o, json_type_object)) {
		r = vg_diag_set(diag, -EBADMSG, "DSSE: not a JSON object");
		goto out;
	}
	ptype = str_field(o, "payloadType");
	pl = str_field(o, "payload");
	if (!ptype || !pl) {
		r = vg_diag_set(diag, -EBADMSG, "DSSE: no %s string", ptype ? "payload" : "payloadType");
		goto out;
	}
	for (size_t i = 0; types && types[i]; i++) {
		if (strcmp(ptype, types[i]) == 0)
			break;
		if (!types[i + 1]) {
			r = vg_diag_set(diag, -EBADMSG, "DSSE: payloadType \"%.64s\" is not \"%s\"%s",
					ptype, types[0], i ? " or another accepted type" : "");
			goto out;
		}
	}
	if (!json_object_object_get_ex(o, "signatures", &sigs) ||
	    !json_object_is_type(sigs, json_type_array) ||
	    (nsigs = json_object_array_length(sigs)) == 0) {
		r = vg_diag_set(diag, -EKEYREJECTED, "DSSE: the envelope is not signed");
		goto out;
	}
	if (nsigs > DSSE_MAX_SIGS) {
		r = vg_diag_set(diag, -EBADMSG, "DSSE: more than %d signatures", DSSE_MAX_SIGS);
		goto out;
	}
	blen = b64(pl, &body);
	if (blen < 0) {
		r = vg_diag_set(diag, (int)blen, "DSSE: payload is not base64");
		goto out;
	}
	msg = pae(ptype, body, (size_t)blen, &mlen);
	if (!msg) {
		r = -ENOMEM;
		goto out;
	}
	r = -EKEYREJECTED;
	for (size_t i = 0; i < nsigs && r < 0; i++) {
		const char *s = str_field(json_object_array_get_idx(sigs, i), "sig");
		uint8_t *sig;
		long sl;

		if (!s) {
			r = vg_diag_set(diag, -EBADMSG, "DSSE: signature %zu has no \"sig\" string", i);
			goto out;
		}
		sl = b64(s, &sig);
		if (sl == -ENOMEM) {
			r = -ENOMEM;
			goto out;
		}
		if (sl < 0)	/* a signature that does not decode verifies nothing */
			continue;
		for (size_t j = 0; j < k->n && r < 0; j++) {
			if (verifies(k->key[j], msg, mlen, sig, (size_t)sl))
				r = 0;
		}
		free(sig);
	}
	if (r < 0) {
		r = vg_diag_set(diag, -EKEYREJECTED,
				"DSSE: no signature verifies with a trusted key (%zu signatures, %zu keys)",
				nsigs, k->n);
		goto out;
	}
	*payload = body;
	*payload_len = (size_t)blen;
	body = NULL;
out:
	free(msg);
	free(body);
	json_object_put(o);
	return r;
}

int vg_refpolicy_load_dsse(const struct vg_dsse_keys *k, const uint8_t *buf, size_t len,
			   struct vg_refpolicy **ret, struct vg_diag *diag)
{
	static const char *const types[] = { VG_DSSE_KEYLIME_TYPE, VG_DSSE_VIGIL_TYPE, NULL };
	uint8_t *body;
	size_t blen;
	int r;

	if (!vg_dsse_is_envelope(buf, len))
		return vg_diag_set(diag, -EKEYREJECTED, "the policy is not signed (not a DSSE envelope)");
	r = vg_dsse_open(k, buf, len, types, &body, &blen, diag);
	if (r < 0)
		return r;
	r = vg_refpolicy_load(body, blen, ret, diag);
	free(body);
	return r;
}
