// SPDX-License-Identifier: MIT
/*
 * fleet_sim_push.c - vigil-fleet-sim's agents in push mode (--push URL):
 * each does what vigil-agent --push does (agent/agent_push.c,
 * docs/attest-push.md): POST its identity to /v1/push/ID/register, the
 * ActivateCredential proof to .../activate, then every interval (the
 * challenge's interval_ms, from the start of its previous push) a
 * challenge from .../nonce, the quote over it and the list from the
 * challenge's offset to .../evidence; a 409 with "retry" asks a new
 * challenge at once (up to three times), a 404 registers again.
 *
 * Not a thread per agent: --push-threads workers take the agent due first
 * from one heap ordered by due time (a worker at a time per agent). A
 * push is one libcurl handle, its exchanges over one connection kept
 * alive (as vigil-agent's, closed after the push; --push-keepalive keeps
 * each agent's handle and connection between its pushes, each agent from
 * its own 127/8 source address); each agent has its own TLS session cache (a curl share), so a
 * verifier that resumes sessions is offered the agent's last one.
 * Each agent presents its own client certificate (CN = its id, from the
 * CA written to --push-client-ca-out: the verifier's --push-client-ca),
 * as a fleet of real agents would: a push credential registers one id.
 *
 * Counted for the stop line: pushes judged (200), 409s, other failures,
 * new connections and TLS handshakes (full, resumed) on the agents' side.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "http_client.h"

#include "fleet_sim.h"

#define PUSH_TIMEOUT_S 30		/* one exchange, as agent_push.c */
#define PUSH_RETRY_MS 2000
#define PUSH_RETRIES 3
#define ANSWER_MAX (1u << 20)

struct agent_tls {
	CURLSH *share;			/* this agent's TLS sessions */
	CURL *c;			/* --push-keepalive: its handle, and connection, kept */
};

static struct {
	struct sim *s;
	const struct fsim_push_opts *o;
	pthread_t *th;
	unsigned int nth;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	size_t *heap, nheap;		/* agent indices, the one due first on top */
	bool stop;
	struct agent_tls *tls;
	int ex_index;			/* an SSL's "counted" mark */
	atomic_ulong registered, judged, conflicts, failed, conns, full, resumed;
} P;

/* ---- the heap of agents by due time ---- */

static bool before(size_t a, size_t b)
{
	return P.s->ag[P.heap[a]].due < P.s->ag[P.heap[b]].due;
}

static void swap(size_t a, size_t b)
{
	size_t t = P.heap[a];

	P.heap[a] = P.heap[b];
	P.heap[b] = t;
}

static void heap_add(size_t i)
{
	size_t k = P.nheap++;

	P.heap[k] = i;
	for (; k && before(k, (k - 1) / 2); k = (k - 1) / 2)
		swap(k, (k - 1) / 2);
}

static size_t heap_take(void)
{
	size_t top = P.heap[0], k = 0;

	P.heap[0] = P.heap[--P.nheap];
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;

		if (l < P.nheap && before(l, m))
			m = l;
		if (r < P.nheap && before(r, m))
			m = r;
		if (m == k)
			break;
		swap(k, m);
		k = m;
	}
	return top;
}

/* ---- TLS: the handshakes counted, once per connection ---- */

static void on_info(const SSL *ssl, int where, int ret)
{
	(void)ret;
	if (!(where & SSL_CB_HANDSHAKE_DONE) || SSL_get_ex_data(ssl, P.ex_index))
		return;
	SSL_set_ex_data((SSL *)ssl, P.ex_index, (void *)1);
	atomic_fetch_add(SSL_session_reused((SSL *)ssl) ? &P.resumed : &P.full, 1);
}

static CURLcode on_ssl_ctx(CURL *c, void *ctx, void *arg)
{
	(void)c, (void)arg;
	SSL_CTX_set_info_callback(ctx, on_info);
	return CURLE_OK;
}

/* ---- one agent's exchanges ---- */

static long post(CURL *c, struct sagent *a, const char *what, const char *body,
		 struct http_answer *out, char *err, size_t errlen)
{
	const struct http_peer peer = { .ca = P.o->ca };
	const struct http_limits lim = { .timeout_s = PUSH_TIMEOUT_S, .timeout_name = "the push's deadline" };
	char url[1024];
	long code, nc = 0;

	out->max = ANSWER_MAX;
	snprintf(url, sizeof(url), "%s/v1/push/%s/%s", P.o->url, a->id, what);
	code = http_request(c, url, body ? body : "", &peer, &lim, out, err, errlen);
	if (curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &nc) == CURLE_OK && nc > 0)
		atomic_fetch_add(&P.conns, (unsigned long)nc);
	return code;
}

static void say(struct sagent *a, const char *what, long code, const char *err,
		const struct http_answer *b)
{
	char msg[200];

	if (code > 0)
		http_said(b, msg, sizeof(msg));
	fprintf(stderr, "vigil-fleet-sim: %s: push: %s: %s%s\n", a->id, what,
		code < 0 ? err : "refused: ", code < 0 ? "" : msg);
}

/* Return: 0 registered, -1 (said). */
static int push_register(CURL *c, struct sagent *a)
{
	struct http_answer b = { 0 }, b2 = { 0 };
	char *idt = NULL, *proof = NULL, err[512];
	long code;
	int r = -1;

	if (fsim_identity(a, &idt) < 0)
		goto out;
	code = post(c, a, "register", idt, &b, err, sizeof(err));
	if (code == 200) {
		r = 0;
		goto out;
	}
	if (code != 202) {
		say(a, "register", code, err, &b);
		goto out;
	}
	if (fsim_activate(a, (const char *)b.p, b.len, &proof, err, sizeof(err)) < 0) {
		fprintf(stderr, "vigil-fleet-sim: %s: push: activate: %s\n", a->id, err);
		goto out;
	}
	code = post(c, a, "activate", proof, &b2, err, sizeof(err));
	if (code != 201) {
		say(a, "activate", code, err, &b2);
		goto out;
	}
	r = 0;
out:
	free(idt);
	free(proof);
	free(b.p);
	free(b2.p);
	return r;
}

/* One push. Return: 0 judged, 1 retry now, -1 (said). */
static int push_once(CURL *c, struct sagent *a)
{
	struct http_answer b = { 0 }, b2 = { 0 };
	struct vg_api_challenge ch;
	struct vg_api_push p = { 0 };
	struct vg_diag d = { 0 };
	char *ev = NULL, err[512], line[160];
	bool tampered = false;
	uint64_t size;
	int64_t t0 = fsim_mono_ms();
	long code;
	int r = -1;

	code = post(c, a, "nonce", NULL, &b, err, sizeof(err));
	if (code != 200) {
		say(a, "nonce", code, err, &b);
		if (code == 404)
			a->registered = false;
		goto out;
	}
	if (vg_api_challenge_parse(b.p, b.len, &ch, &d) < 0) {
		fprintf(stderr, "vigil-fleet-sim: %s: push: challenge: %s\n", a->id, d.msg);
		goto out;
	}
	if (ch.interval_ms)
		a->interval_ms = ch.interval_ms;
	memcpy(p.nonce, ch.q.nonce, ch.q.nonce_len);
	p.nonce_len = ch.q.nonce_len;
	if (fsim_quote(P.s, a, &ch.q, &p.quote, &tampered) < 0) {
		fprintf(stderr, "vigil-fleet-sim: %s: push: quote failed\n", a->id);
		goto out;
	}
	p.quote_len = strlen(p.quote);
	fsim_qlog_write(P.s, a->id, "push", tampered);
	p.log_offset = ch.log_offset;
	if (fsim_log(P.s, a, ch.log_offset, &p.log, &p.log_len, &size) < 0)
		goto out;
	p.have_log = true;
	p.have_boot = ch.boot_log;	/* empty: the host has none */
	if (vg_api_push_build(&p, &ev) < 0)
		goto out;
	code = post(c, a, "evidence", ev, &b2, err, sizeof(err));
	if (P.o->log) {
		snprintf(line, sizeof(line), "%s %" PRId64 " %ld %" PRId64 "\n", a->id, fsim_wall_ms(),
			 code, fsim_mono_ms() - t0);
		fputs(line, P.o->log);
	}
	if (code == 200) {
		atomic_fetch_add(&P.judged, 1);
		r = 0;
		goto out;
	}
	if (code == 409)
		atomic_fetch_add(&P.conflicts, 1);
	if (code == 409 && b2.p && strstr((const char *)b2.p, "\"retry\":true")) {
		r = 1;
		goto out;
	}
	say(a, "evidence", code, err, &b2);
out:
	if (r < 0)
		atomic_fetch_add(&P.failed, 1);
	vg_api_push_release(&p);
	free(ev);
	free(b.p);
	free(b2.p);
	return r;
}

/* What agent @i does when due: register if it must, push; its next due time. */
static void work(size_t i)
{
	struct sagent *a = &P.s->ag[i];
	int64_t start = fsim_mono_ms();
	uint32_t wait = PUSH_RETRY_MS;
	CURL *c = P.tls[i].c ? P.tls[i].c : curl_easy_init();
	char src[80];

	if (!c)
		goto out;
	if (P.o->keepalive) {
		/* its own source address in 127/8: a verifier's per-address connection limit counts agents */
		snprintf(src, sizeof(src), "host!127.%zu.%zu.%zu", 1 + i / 65536, (i / 256) % 256, i % 256);
		curl_easy_setopt(c, CURLOPT_INTERFACE, src);
	}
	if (P.tls[i].share)
		curl_easy_setopt(c, CURLOPT_SHARE, P.tls[i].share);
	curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
	if (a->push_cert) {
		struct curl_blob cb = { a->push_cert, strlen(a->push_cert), CURL_BLOB_NOCOPY };
		struct curl_blob kb = { a->push_key, strlen(a->push_key), CURL_BLOB_NOCOPY };

		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &kb);
		curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (!a->registered && push_register(c, a) == 0) {
		a->registered = true;
		atomic_fetch_add(&P.registered, 1);
	}
	if (a->registered) {
		int r = 1;

		for (int k = 0; k < PUSH_RETRIES && r == 1; k++)
			r = push_once(c, a);
		wait = r == 0 ? a->interval_ms : (a->interval_ms < PUSH_RETRY_MS ? a->interval_ms : PUSH_RETRY_MS);
	}
	if (P.o->keepalive)
		P.tls[i].c = c;		/* reset at the next push (http_request sets what it needs) */
	else
		curl_easy_cleanup(c);
out:
	a->due = start + wait;	/* an interval from the start of this push: the verifier's clock */
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&P.lock);
	while (!P.stop) {
		int64_t now = fsim_mono_ms(), due;
		size_t i;

		if (!P.nheap) {
			pthread_cond_wait(&P.cv, &P.lock);
			continue;
		}
		due = P.s->ag[P.heap[0]].due;
		if (due > now) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += (due - now) / 1000;
			ts.tv_nsec += ((due - now) % 1000) * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&P.cv, &P.lock, &ts);
			continue;
		}
		i = heap_take();
		pthread_mutex_unlock(&P.lock);
		work(i);
		pthread_mutex_lock(&P.lock);
		heap_add(i);
		pthread_cond_signal(&P.cv);
	}
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

/* ---- the agents' client certificates ---- */

static char *pem_of(int (*w)(BIO *, void *), void *obj)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p = NULL, *out = NULL;
	long n;

	if (b && w(b, obj) == 1 && (n = BIO_get_mem_data(b, &p)) > 0 && (out = malloc((size_t)n + 1))) {
		memcpy(out, p, (size_t)n);
		out[n] = 0;
	}
	BIO_free(b);
	return out;
}

static int w_cert(BIO *b, void *x)
{
	return PEM_write_bio_X509(b, x);
}

static int w_key(BIO *b, void *k)
{
	return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

/* A client certificate for @cn (P-256), signed by @ca. Return: 0, -EIO. */
static int client_cert(const struct fsim_ca *ca, const char *cn, uint64_t serial, char **ret_cert,
		       char **ret_key)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *x = X509_new();
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	int r = -EIO;

	if (!k || !x || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 30L * 86400) ||
	    !X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
					(const unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) || !X509_set_pubkey(x, k))
		goto out;
	X509V3_set_ctx(&v3, ca->cert, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_ext_key_usage, "clientAuth");
	if (!ext || !X509_add_ext(x, ext, -1)) {
		X509_EXTENSION_free(ext);
		goto out;
	}
	X509_EXTENSION_free(ext);
	if (!X509_sign(x, ca->key, EVP_sha256()))
		goto out;
	*ret_cert = pem_of(w_cert, x);
	*ret_key = pem_of(w_key, k);
	r = *ret_cert && *ret_key ? 0 : -EIO;
out:
	X509_free(x);
	EVP_PKEY_free(k);
	return r;
}

int fsim_push_certs(struct sim *s, const struct fsim_push_opts *o)
{
	struct fsim_ca ca;

	if (fsim_ca_new(&ca, o->client_ca_out) < 0)
		return -EIO;
	for (size_t i = 0; i < s->n; i++)
		if (client_cert(&ca, s->ag[i].id, 1 + i, &s->ag[i].push_cert, &s->ag[i].push_key) < 0) {
			fsim_ca_release(&ca);
			return -EIO;
		}
	fsim_ca_release(&ca);
	return 0;
}

int fsim_push_start(struct sim *s, const struct fsim_push_opts *o)
{
	pthread_condattr_t ca;
	int64_t now = fsim_mono_ms();

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	P.s = s;
	P.o = o;
	P.ex_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	P.heap = calloc(s->n, sizeof(*P.heap));
	P.tls = calloc(s->n, sizeof(*P.tls));
	P.th = calloc(o->threads, sizeof(*P.th));
	if (!P.heap || !P.tls || !P.th)
		return -ENOMEM;
	pthread_mutex_init(&P.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&P.cv, &ca);
	for (size_t i = 0; i < s->n; i++) {
		s->ag[i].due = now;
		s->ag[i].interval_ms = PUSH_RETRY_MS;
		P.tls[i].share = curl_share_init();
		if (P.tls[i].share)
			curl_share_setopt(P.tls[i].share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
		heap_add(i);
	}
	for (P.nth = 0; P.nth < o->threads; P.nth++)
		if (pthread_create(&P.th[P.nth], NULL, worker, NULL) != 0)
			break;
	return P.nth ? 0 : -EAGAIN;
}

void fsim_push_stop(FILE *out)
{
	pthread_mutex_lock(&P.lock);
	P.stop = true;
	pthread_cond_broadcast(&P.cv);
	pthread_mutex_unlock(&P.lock);
	for (unsigned int i = 0; i < P.nth; i++)
		pthread_join(P.th[i], NULL);
	fsim_push_stats(out);
	for (size_t i = 0; P.s && i < P.s->n; i++) {
		curl_easy_cleanup(P.tls[i].c);
		if (P.tls[i].share)
			curl_share_cleanup(P.tls[i].share);
		free(P.s->ag[i].push_cert);
		free(P.s->ag[i].push_key);
	}
	free(P.tls);
	free(P.heap);
	free(P.th);
	curl_global_cleanup();
}

void fsim_push_stats(FILE *out)
{
	fprintf(out, "vigil-fleet-sim: push: registered %lu judged %lu conflicts_409 %lu failed %lu "
		"connections %lu tls_full %lu tls_resumed %lu\n", atomic_load(&P.registered),
		atomic_load(&P.judged), atomic_load(&P.conflicts), atomic_load(&P.failed),
		atomic_load(&P.conns), atomic_load(&P.full), atomic_load(&P.resumed));
	fflush(out);
}
