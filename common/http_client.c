// SPDX-License-Identifier: MIT
/*
 * http_client.c - one outbound HTTP exchange on a caller's libcurl handle,
 * and a peer's error answer made printable (http_client.h). Who keeps
 * handles alive, and for how long, is the caller's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "http_client.h"

#define HTTP_ANSWER_DEFAULT (64u * 1024)
#define HTTP_SAID_MAX 161	/* 160 characters and the NUL */

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct http_answer *b = arg;
	size_t add = size * n, want;
	uint8_t *nb;

	if (add > b->max || b->len > b->max - add) {
		b->too_big = true;
		return 0;
	}
	want = b->len + add + 1;
	if (want > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < want)
			cap *= 2;
		nb = realloc(b->p, cap);
		if (!nb)
			return 0;
		b->p = nb;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, add);
	b->len += add;
	b->p[b->len] = 0;
	return add;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const struct http_limits *lim = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return lim->stop(lim->stop_arg) ? 1 : 0;
}

struct http_tls_ids {
	X509 *cert;
	STACK_OF(X509) *chain;		/* the certificates after it in its file */
	EVP_PKEY *key;
};

void http_tls_ids_free(struct http_tls_ids *ids)
{
	if (!ids)
		return;
	X509_free(ids->cert);
	sk_X509_pop_free(ids->chain, X509_free);
	EVP_PKEY_free(ids->key);
	free(ids);
}

int http_tls_ids_load(const char *cert, const char *key, struct http_tls_ids **ret, char *err,
		      size_t errlen)
{
	struct http_tls_ids *ids = calloc(1, sizeof(*ids));
	BIO *b = NULL;
	X509 *x;
	int r = -EBADMSG;

	*ret = NULL;
	if (!ids || !(ids->chain = sk_X509_new_null())) {
		free(ids);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b = BIO_new_file(cert, "r");
	ids->cert = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	if (!ids->cert) {
		snprintf(err, errlen, "%s: no PEM certificate", cert);
		goto out;
	}
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)))
		if (!sk_X509_push(ids->chain, x)) {
			X509_free(x);
			snprintf(err, errlen, "out of memory");
			r = -ENOMEM;
			goto out;
		}
	BIO_free(b);
	b = BIO_new_file(key, "r");
	ids->key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	if (!ids->key) {
		snprintf(err, errlen, "%s: no PEM private key", key);
		goto out;
	}
	if (X509_check_private_key(ids->cert, ids->key) != 1) {
		snprintf(err, errlen, "%s: not the key of the certificate in %s", key, cert);
		goto out;
	}
	*ret = ids;
	ids = NULL;
	r = 0;
out:
	ERR_clear_error();
	BIO_free(b);
	http_tls_ids_free(ids);
	return r;
}

/* CURLOPT_SSL_CTX_FUNCTION: our certificate, its chain and key into a connection's context */
static CURLcode use_ids(CURL *c, void *ssl_ctx, void *arg)
{
	const struct http_tls_ids *ids = arg;
	SSL_CTX *ctx = ssl_ctx;

	(void)c;
	if (SSL_CTX_use_certificate(ctx, ids->cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ids->key) != 1)
		return CURLE_SSL_CERTPROBLEM;
	for (int i = 0; i < sk_X509_num(ids->chain); i++)
		if (SSL_CTX_add1_chain_cert(ctx, sk_X509_value(ids->chain, i)) != 1)
			return CURLE_SSL_CERTPROBLEM;
	return CURLE_OK;
}

long http_request(CURL *c, const char *url, const char *body, const struct http_peer *peer,
		  const struct http_limits *lim, struct http_answer *out, char *err, size_t errlen)
{
	struct curl_slist *h = NULL;
	struct http_peer files;
	size_t max = out->max ? out->max : HTTP_ANSWER_DEFAULT;
	long code = -1;
	CURLcode r;

	memset(out, 0, sizeof(*out));
	out->max = max;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)lim->timeout_s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(lim->timeout_s < 5 ? lim->timeout_s : 5));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (lim->stop) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)lim);
	}
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (peer && peer->ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, peer->ca);
	/* a libcurl without OpenSSL's context callback reads the files */
	if (peer && peer->ids &&
	    (curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, use_ids) != CURLE_OK ||
	     curl_easy_setopt(c, CURLOPT_SSL_CTX_DATA, (void *)peer->ids) != CURLE_OK)) {
		curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, NULL);
		files = *peer;
		files.ids = NULL;
		peer = &files;
	}
	if (peer && peer->cert && !peer->ids) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, peer->cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, peer->key);
	}
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json");
	if (peer && peer->token && peer->token[0]) {
		size_t n = strlen(peer->token) + 32;
		char *ah = malloc(n);

		if (ah) {
			snprintf(ah, n, "Authorization: Bearer %s", peer->token);
			h = curl_slist_append(h, ah);
			OPENSSL_clear_free(ah, n);
		}
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	else
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	r = curl_easy_perform(c);
	if (r != CURLE_OK && (out->too_big || r == CURLE_FILESIZE_EXCEEDED))
		snprintf(err, errlen, "%s: answer larger than %zu bytes", url, max);
	else if (r == CURLE_OPERATION_TIMEDOUT)
		/* one text whichever deadline (connect, the whole exchange) it was */
		snprintf(err, errlen, "%s: timed out: no complete answer within %s (%u s)", url,
			 lim->timeout_name ? lim->timeout_name : "the deadline", lim->timeout_s);
	else if (r != CURLE_OK)
		snprintf(err, errlen, "%s: %s", url, curl_easy_strerror(r));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	/* the handle may be kept: it must not point at what is freed here */
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	if (code < 0) {
		free(out->p);
		memset(out, 0, sizeof(*out));
		out->max = max;
		out->timed_out = r == CURLE_OPERATION_TIMEDOUT;
	}
	return code;
}

void http_said(const struct http_answer *b, char *out, size_t cap)
{
	const char *s = b->p ? (const char *)b->p : "";
	size_t n = b->len, k = 0;
	json_object *o = NULL, *e;
	json_tokener *t = b->len && b->len <= 65536 ? json_tokener_new() : NULL;

	if (t) {
		o = json_tokener_parse_ex(t, s, (int)b->len);
		json_tokener_free(t);
	}
	if (o && json_object_is_type(o, json_type_object) &&
	    ((json_object_object_get_ex(o, "error", &e) && json_object_is_type(e, json_type_string)) ||
	     (json_object_object_get_ex(o, "message", &e) && json_object_is_type(e, json_type_string)))) {
		s = json_object_get_string(e);
		n = strlen(s);
	}
	if (cap > HTTP_SAID_MAX)
		cap = HTTP_SAID_MAX;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (cap)
		out[k] = 0;
	if (!k && cap > 10)
		snprintf(out, cap, "no message");
	json_object_put(o);
}
