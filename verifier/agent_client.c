// SPDX-License-Identifier: MIT
/*
 * agent_client.c - the verifier's HTTP client, to agents (their identity,
 * credential activation, quotes, measurement lists, boot logs) and to the
 * webhook: the only user of libcurl in vigil-verifier. Every exchange is
 * bounded (vf->agent_timeout in all, at most the size the caller allows,
 * no redirect) and ends at once on shutdown. It parses nothing: what a
 * peer sends is handed back as bytes (attest_api.h parses it). The
 * exchange itself is common/http_client.c's, as the pushing agent's is;
 * this file keeps each agent's handle, and so its connection, alive
 * between rounds (agent_conns.c), and a handle per thread for webhooks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <stdatomic.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "agent_conns.h"
#include "verifier.h"

/*
 * An agent's handle is its own (agent_conns.h): kept between rounds, at
 * most --agent-connections of them, so a round over TLS makes no
 * handshake, it finds its connection open (the agent's server keeps it
 * while idle: vigil-agent's --idle-timeout). The quote, the list and the
 * boot log of a round go over that one connection: an agent's handle the
 * pool had no room for stays with the thread until its next one.
 *
 * A webhook is asked on the thread's own handle, kept for all its
 * requests (curl_easy_reset clears the options, not the connection, the
 * TLS session cache or the CA store libcurl caches in the handle). The
 * first request to another URL makes a new connection
 * (CURLOPT_FRESH_CONNECT) and the handle keeps one connection
 * (CURLOPT_MAXCONNECTS 1). TLS sessions are shared by every handle (share
 * below, per host and port), so a new connection resumes its session
 * where the peer's server offers it. Freed when the thread ends
 * (vf_client_thread_end, or the key's destructor).
 */
struct handle {
	CURL *c;
	char peer[320];			/* the URL prefix it talked to ("" none yet) */
	struct vf_conn *spare;		/* an agent's handle not kept: the pool was full */
};

static pthread_key_t handle_key;
static bool handle_key_made;
static struct http_tls_ids *ids;	/* --client-cert and --client-key, parsed once */
static CURLSH *share;
static struct vf_conns *conns;		/* agents' handles */
static atomic_uint_fast64_t connects;	/* connections made to agents */
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
	vf_conn_close(h->spare);
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
	/* idle two intervals and a whole exchange: deleted, or attested by another verifier */
	r = vf_conns_new(vf->agent_conns, 2 * vf->interval_ms + 1000 * vf->agent_timeout, &conns);
	if (r < 0) {
		snprintf(err, errlen, "--agent-connections %u: %s", vf->agent_conns, strerror(-r));
		return r;
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

/* Return: this thread's record (made now if need be), NULL: none (no key, no memory). */
static struct handle *slot(void)
{
	struct handle *h = handle_key_made ? pthread_getspecific(handle_key) : NULL;

	if (h || !handle_key_made)
		return h;
	h = calloc(1, sizeof(*h));
	if (h && pthread_setspecific(handle_key, h) != 0) {
		free(h);
		h = NULL;
	}
	return h;
}

/*
 * Return: this thread's handle for webhook @url, reset, made anew for
 * another URL; NULL on no memory. *@kept: the handle stays with the
 * thread (else the caller frees it: no thread key).
 */
static CURL *handle(const char *url, bool *kept)
{
	struct handle *h = slot();
	size_t n = peer_len(url, false);
	bool same;

	*kept = false;
	if (!h)
		return curl_easy_init();
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
	vf_conns_free(conns);
	conns = NULL;
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

/* An agent's exchange, on its own handle (agent_conns.h; without the pool, the thread's spare). */
static long agent_fetch(struct verifier *vf, const char *url, const char *body,
			struct http_answer *out, char *err, size_t errlen)
{
	const struct http_peer peer = { .ca = vf->agent_ca, .cert = vf->client_cert,
					.key = vf->client_key, .ids = ids, .token = vf->agent_token };
	const struct http_limits lim = { .timeout_s = vf->agent_timeout, .timeout_name = "--agent-timeout",
					 .stop = stopping, .stop_arg = vf };
	struct handle *h = slot();
	size_t n = peer_len(url, true);
	struct vf_conn *e = conns ? vf_conns_take(conns, url, n) : NULL;
	long code, made = 0;

	if (!e && h && vf_conn_is(h->spare, url, n)) {
		e = h->spare;		/* the pool was full: this round's handle, kept by the thread */
		h->spare = NULL;
	}
	if (!e)
		e = vf_conn_new(url, n);
	if (!e) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "libcurl init: out of memory");
		return -1;
	}
	curl_easy_reset(e->c);
	curl_easy_setopt(e->c, CURLOPT_MAXCONNECTS, 1L);
	/* made anew at least that often: the agent's certificate is verified again */
	curl_easy_setopt(e->c, CURLOPT_MAXLIFETIME_CONN, (long)VF_AGENT_CONN_LIFE_S);
	if (share)
		curl_easy_setopt(e->c, CURLOPT_SHARE, share);
	code = http_request(e->c, url, body, &peer, &lim, out, err, errlen);
	if (curl_easy_getinfo(e->c, CURLINFO_NUM_CONNECTS, &made) == CURLE_OK && made > 0)
		atomic_fetch_add(&connects, (uint_fast64_t)made);
	if (!conns || !vf_conns_give(conns, e, vf_mono_ms())) {
		/* not kept: the thread holds it for the rest of the round, as its spare */
		if (h) {
			vf_conn_close(h->spare);
			h->spare = e;
		} else {
			vf_conn_close(e);
		}
	}
	return code;
}

long vf_fetch(struct verifier *vf, const char *url, const char *body, bool agent, size_t max,
	      struct http_answer *out, char *err, size_t errlen)
{
	const struct http_limits lim = { .timeout_s = vf->agent_timeout, .timeout_name = "--agent-timeout",
					 .stop = stopping, .stop_arg = vf };
	bool kept;
	CURL *c;
	long code;

	out->max = max ? max : VG_API_MSG_MAX;
	if (agent)
		return agent_fetch(vf, url, body, out, err, errlen);
	c = handle(url, &kept);
	if (!c) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "libcurl init");
		return -1;
	}
	/* a webhook is not an agent: none of the agents' TLS settings or token */
	code = http_request(c, url, body, NULL, &lim, out, err, errlen);
	if (!kept)
		curl_easy_cleanup(c);	/* no thread key: a handle per request */
	return code;
}

void vf_client_counts(unsigned int *kept, uint64_t *full, uint64_t *made)
{
	*kept = 0;
	*full = 0;
	if (conns)
		vf_conns_count(conns, kept, full);
	*made = atomic_load(&connects);
}
