// SPDX-License-Identifier: MIT
/*
 * agent_client.c - the verifier's HTTP client, to agents (their identity,
 * credential activation, quotes, measurement lists, boot logs) and to the
 * webhook: the only user of libcurl in vigil-verifier. Every exchange is
 * bounded (vf->agent_timeout in all, at most the size the caller allows,
 * no redirect) and ends at once on shutdown. It parses nothing: what a
 * peer sends is handed back as bytes (attest_api.h parses it), except the
 * short message of an error answer (vf_peer_said).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "verifier.h"

int vf_client_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void vf_client_cleanup(void)
{
	curl_global_cleanup();
}

/* libcurl's progress callback: a shutdown ends every exchange at once. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const struct verifier *vf = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return vf->stop ? 1 : 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct vf_buf *b = arg;
	size_t add = size * n;
	uint8_t *nb;

	if (add > b->max || b->len > b->max - add) {
		b->too_big = true;
		return 0;
	}
	if (vf_grow(&b->p, &b->cap, b->len, add) < 0)
		return 0;
	nb = b->p;
	memcpy(nb + b->len, p, add);
	b->len += add;
	b->p[b->len] = 0;
	return add;
}

long vf_fetch(struct verifier *vf, const char *url, const char *body, bool agent, size_t max,
	      struct vf_buf *out, char *err, size_t errlen)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	long code = -1;
	CURLcode r;

	memset(out, 0, sizeof(*out));
	out->max = max ? max : VG_API_MSG_MAX;
	if (!c) {
		snprintf(err, errlen, "libcurl init");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)vf->agent_timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
			 (long)(vf->agent_timeout < 5 ? vf->agent_timeout : 5));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, vf);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)out->max);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (agent && vf->agent_ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, vf->agent_ca);
	if (agent && vf->client_cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, vf->client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, vf->client_key);
	}
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json");
	if (agent && vf->agent_token[0]) {
		char ah[sizeof(vf->agent_token) + 32];

		snprintf(ah, sizeof(ah), "Authorization: Bearer %s", vf->agent_token);
		h = curl_slist_append(h, ah);
		OPENSSL_cleanse(ah, sizeof(ah));
	}
	if (h)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	r = curl_easy_perform(c);
	if (r != CURLE_OK && (out->too_big || r == CURLE_FILESIZE_EXCEEDED))
		snprintf(err, errlen, "%s: answer larger than %zu bytes", url, out->max);
	else if (r == CURLE_OPERATION_TIMEDOUT)
		/* one text whichever deadline (connect, the whole exchange) it was */
		snprintf(err, errlen, "%s: timed out: no complete answer within --agent-timeout "
			 "(%u s)", url, vf->agent_timeout);
	else if (r != CURLE_OK)
		snprintf(err, errlen, "%s: %s", url, curl_easy_strerror(r));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (code < 0) {
		free(out->p);
		memset(out, 0, sizeof(*out));
		out->timed_out = r == CURLE_OPERATION_TIMEDOUT;
	}
	return code;
}

void vf_peer_said(const struct vf_buf *b, char *out, size_t cap)
{
	const char *s = b->p ? (const char *)b->p : "";
	size_t n = b->len, k = 0;
	json_object *o = NULL, *e;
	json_tokener *t = b->len && b->len <= VG_API_MSG_MAX ? json_tokener_new() : NULL;

	if (t) {
		o = json_tokener_parse_ex(t, s, (int)b->len);
		json_tokener_free(t);
	}
	if (o && json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "error", &e) && json_object_is_type(e, json_type_string)) {
		s = json_object_get_string(e);
		n = strlen(s);
	}
	if (cap > 161)
		cap = 161;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[k] = 0;
	if (!k && cap > 10)
		snprintf(out, cap, "no message");
	json_object_put(o);
}
