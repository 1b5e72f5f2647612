// SPDX-License-Identifier: MIT
/*
 * agent_client.c - the verifier's HTTP client, to agents (their identity,
 * credential activation, quotes, measurement lists, boot logs) and to the
 * webhook: the only user of libcurl in vigil-verifier. Every exchange is
 * bounded (vf->agent_timeout in all, at most the size the caller allows,
 * no redirect) and ends at once on shutdown. It parses nothing: what a
 * peer sends is handed back as bytes (attest_api.h parses it). The
 * exchange itself is common/http_client.c's, as the pushing agent's is;
 * this file keeps a handle per peer and thread alive between requests.
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
 * Each thread's libcurl handle, kept for all its requests (curl_easy_reset
 * clears the options, not the connection, the TLS session cache or the CA
 * store libcurl caches in the handle: the CA file is read once per thread,
 * not once per connection). The quote, the list and the boot log of a
 * round go over one connection, kept alive. The first request to another
 * peer (another agent: its URL up to "/v1/"; a webhook: its URL) makes a
 * new connection (CURLOPT_FRESH_CONNECT), and the handle keeps one
 * connection (CURLOPT_MAXCONNECTS 1: the previous peer's is closed), so no
 * connection and no byte an agent sent past its answer is ever read for
 * another agent, even behind one host and port. TLS sessions are shared
 * by every handle (share below, per host and port), so a new connection to
 * an agent resumes its session where the agent's server offers it. Freed
 * when the thread ends (vf_client_thread_end, or the key's destructor).
 */
struct handle {
	CURL *c;
	char peer[320];			/* the URL prefix it talked to ("" none yet) */
};

static pthread_key_t handle_key;
static bool handle_key_made;
static struct http_tls_ids *ids;	/* --client-cert and --client-key, parsed once */
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

int vf_client_init(const struct verifier *vf, char *err, size_t errlen)
{
	int r;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "libcurl: global init failed");
		return -EIO;
	}
	if (vf->client_cert && vf->client_key &&
	    (r = http_tls_ids_load(vf->client_cert, vf->client_key, &ids, err, errlen)) < 0)
		return r;
	share = curl_share_init();
	if (share && (curl_share_setopt(share, CURLSHOPT_LOCKFUNC, share_lock_fn) != CURLSHE_OK ||
		      curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, share_unlock_fn) != CURLSHE_OK ||
		      curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) !=
		      CURLSHE_OK)) {
		curl_share_cleanup(share);
		share = NULL;		/* no resumption: a full handshake per connection */
	}
	if (pthread_key_create(&handle_key, handle_free) != 0) {
		snprintf(err, errlen, "no thread key");
		return -EIO;
	}
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
	if (h->c)
		curl_easy_reset(h->c);
	else
		h->c = curl_easy_init();
	if (!h->c)
		return NULL;
	if (!same) {
		snprintf(h->peer, sizeof(h->peer), "%.*s", (int)(n < sizeof(h->peer) ? n : 0), url);
		/* never the previous peer's connection, whatever host and port it had */
		curl_easy_setopt(h->c, CURLOPT_FRESH_CONNECT, 1L);
	}
	curl_easy_setopt(h->c, CURLOPT_MAXCONNECTS, 1L);
	if (share)
		curl_easy_setopt(h->c, CURLOPT_SHARE, share);
	*kept = true;
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
	http_tls_ids_free(ids);
	ids = NULL;
	curl_global_cleanup();
}

/* a shutdown ends every exchange at once (libcurl's progress callback asks) */
static bool stopping(void *arg)
{
	const struct verifier *vf = arg;

	return vf->stop;
}

long vf_fetch(struct verifier *vf, const char *url, const char *body, bool agent, size_t max,
	      struct http_answer *out, char *err, size_t errlen)
{
	const struct http_peer peer = { .ca = vf->agent_ca, .cert = vf->client_cert,
					.key = vf->client_key, .ids = ids, .token = vf->agent_token };
	const struct http_limits lim = { .timeout_s = vf->agent_timeout, .timeout_name = "--agent-timeout",
					 .stop = stopping, .stop_arg = vf };
	bool kept;
	CURL *c = handle(url, agent, &kept);
	long code;

	out->max = max ? max : VG_API_MSG_MAX;
	if (!c) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "libcurl init");
		return -1;
	}
	/* a webhook is not an agent: none of the agents' TLS settings or token */
	code = http_request(c, url, body, agent ? &peer : NULL, &lim, out, err, errlen);
	if (!kept)
		curl_easy_cleanup(c);	/* no thread key: a handle per request */
	return code;
}
