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

#include <pthread.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "verifier.h"

/*
 * Each thread's libcurl handle, kept between its requests to one peer
 * (curl_easy_reset clears the options, not the connection): the quote,
 * the list and the boot log of a round go over one connection, kept
 * alive. A request to another peer (another agent: its URL up to
 * "/v1/"; a webhook: its URL) gets a new handle, so no connection and no
 * byte an agent sent past its answer is ever read for another agent, even
 * behind one host and port. TLS sessions are shared by every handle
 * (share below, per host and port), so a new connection to an agent
 * resumes its session instead of a full handshake. Freed when the thread
 * ends (vf_client_thread_end, or the key's destructor).
 */
struct handle {
	CURL *c;
	char peer[320];			/* the URL prefix it talked to ("" none yet) */
};

static pthread_key_t handle_key;
static bool handle_key_made;
static CURLSH *share;
static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;

static void share_lock_fn(CURL *c, curl_lock_data data, curl_lock_access a, void *arg)
{
	(void)c;
	(void)data;
	(void)a;
	(void)arg;
	pthread_mutex_lock(&share_lock);
}

static void share_unlock_fn(CURL *c, curl_lock_data data, void *arg)
{
	(void)c;
	(void)data;
	(void)arg;
	pthread_mutex_unlock(&share_lock);
}

static void handle_free(void *arg)
{
	struct handle *h = arg;

	curl_easy_cleanup(h->c);
	free(h);
}

int vf_client_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	share = curl_share_init();
	if (share && (curl_share_setopt(share, CURLSHOPT_LOCKFUNC, share_lock_fn) != CURLSHE_OK ||
		      curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, share_unlock_fn) != CURLSHE_OK ||
		      curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) !=
		      CURLSHE_OK)) {
		curl_share_cleanup(share);
		share = NULL;		/* no resumption: a full handshake per connection */
	}
	if (pthread_key_create(&handle_key, handle_free) != 0)
		return -EIO;
	handle_key_made = true;
	return 0;
}

/* The peer of @url: an agent's URL up to "/v1/", else the whole URL. */
static size_t peer_len(const char *url, bool agent)
{
	const char *v = agent ? strstr(url, "/v1/") : NULL;

	return v ? (size_t)(v - url) : strlen(url);
}

/*
 * Return: this thread's handle for @url, reset, made anew for another
 * peer; NULL on no memory. *@kept: the handle stays with the thread (else
 * the caller frees it: no thread key).
 */
static CURL *handle(const char *url, bool agent, bool *kept)
{
	struct handle *h = handle_key_made ? pthread_getspecific(handle_key) : NULL;
	size_t n = peer_len(url, agent);
	bool same;

	*kept = false;
	if (!handle_key_made)
		return curl_easy_init();
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h || pthread_setspecific(handle_key, h) != 0) {
			free(h);
			return curl_easy_init();
		}
	}
	same = h->c && n < sizeof(h->peer) && strlen(h->peer) == n && memcmp(h->peer, url, n) == 0;
	if (same) {
		curl_easy_reset(h->c);
	} else {
		curl_easy_cleanup(h->c);	/* its connection goes with it */
		h->c = curl_easy_init();
		snprintf(h->peer, sizeof(h->peer), "%.*s", (int)(n < sizeof(h->peer) ? n : 0), url);
	}
	if (h->c && share)
		curl_easy_setopt(h->c, CURLOPT_SHARE, share);
	*kept = h->c != NULL;
	return h->c;
}

void vf_client_thread_end(void)
{
	struct handle *h = handle_key_made ? pthread_getspecific(handle_key) : NULL;

	if (h) {
		pthread_setspecific(handle_key, NULL);
		handle_free(h);
	}
}

void vf_client_cleanup(void)
{
	vf_client_thread_end();		/* the calling thread's: the others' went with them */
	if (share)
		curl_share_cleanup(share);
	share = NULL;
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
	bool kept;
	CURL *c = handle(url, agent, &kept);
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
	if (!kept)
		curl_easy_cleanup(c);	/* no thread key: a handle per request */
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
