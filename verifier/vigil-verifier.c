// SPDX-License-Identifier: MIT
/*
 * vigil-verifier - registers agents (EK certificate, MakeCredential /
 * ActivateCredential), attests each of them at an interval (fresh nonce,
 * quote, incremental measurement list, reference policy: libvigil's
 * attest.h), keeps everything in a store (store.h, SQLite by default),
 * acts on failures (webhook POST, command hook) and serves a REST API to
 * operators (`vigil attest` is its client):
 *
 *   POST   /v1/agents {id, url, policy}      register (201; 403 typed failure; 409 EK changed)
 *   GET    /v1/agents                        {agents: [...]}
 *   GET    /v1/agents/ID                     status
 *   GET    /v1/agents/ID/history             {history: [...]} newest first
 *   DELETE /v1/agents/ID
 *   POST   /v1/agents/ID/reactivate          poll a failed agent again
 *   PUT    /v1/agents/ID/policy {policy}     assign a policy, re-verify from entry 0
 *   PUT    /v1/policies/NAME  (document)     vigil JSON, Keylime runtime policy, allowlist
 *   GET    /v1/policies/NAME                 as vigil JSON
 *
 * The API is HTTP on the address given, or HTTPS with --api-cert/--api-key.
 * Every route needs a credential (docs/api-auth.md), checked from the
 * headers before the body is read: a bearer token whose sha256 is listed
 * in --auth-tokens (admin: every route; read: GETs), or a client
 * certificate from --api-client-ca (admin); no scheme, no start, unless
 * --insecure-no-auth. Routes are found on the path as sent, decoded
 * strictly (vg_api_path_decode). Agents are reached over HTTP or HTTPS
 * (--agent-ca), with our token (--agent-token-file) or our client
 * certificate for mutual TLS (--client-cert/--client-key).
 *
 * Threads: a pool of four libmicrohttpd threads serves the API (and runs
 * registrations); the main thread schedules the rounds, each on its own
 * thread (at most 16 at once, one per agent), so a slow or hostile agent
 * delays only itself. One mutex guards the store and the policy cache.
 * Hostile peers are bounded: API requests must arrive whole within
 * --api-timeout (http_guard.c), bodies above --max-body get 413 before
 * they are read, connections per address are limited; every exchange with
 * an agent ends within --agent-timeout, answers above 1 MiB (the log:
 * --max-log) are cut, redirects are not followed, and what an agent sends
 * is parsed by attest_api.h. A failed agent is not polled
 * again until an operator reactivates it or assigns a policy (Keylime's
 * default); an unreachable one is retried every round.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "vigil/attest.h"
#include "vigil/dsse.h"
#include "vigil/attest_api.h"
#include "vigil/attest_boot.h"
#include "privsep.h"
#include "store.h"
#include "vigil/auth.h"
#include "http_auth.h"
#include "http_guard.h"
#include "http_util.h"

#define HISTORY_MAX 100
#define VERIFIER_TOKENS "/etc/vigil/verifier-tokens"
/* policy uploads parsed at once: the other API threads stay free for status */
#define POLICY_CHECKS_MAX 2
/* on SIGTERM, how long requests and rounds in flight may take before we go without them */
#define STOP_GRACE_MS 1000
/* a trusted agent whose round has not answered this long past --interval is unreachable */
#define SILENT_SLACK_MS 1000

struct pcache {
	struct pcache *next;
	char name[128];
	struct vg_refpolicy *p;
	unsigned int refs;		/* rounds using it right now */
	bool retired;			/* replaced: freed when refs drops to 0 */
};

static struct {
	pthread_mutex_t lock;
	struct vg_store *store;
	struct pcache *policies;
	const char *ek_ca;
	const char *webhook;
	const char *on_fail;
	const char *agent_ca;		/* CA of agents' TLS server certificates */
	const char *client_cert, *client_key;	/* ours, for mutual TLS with agents */
	bool api_client_ca;		/* client certificates are asked for (either CA below) */
	struct http_ca *admin_ca;	/* --api-client-ca: a certificate from it is admin */
	struct http_ca *read_ca;	/* --api-read-client-ca: ... read */
	struct vg_auth *auth;		/* --auth-tokens: bearer tokens (hashes) and their roles */
	pthread_rwlock_t auth_lock;	/* ... replaced on SIGHUP */
	const char *auth_path;		/* the list read at start, again on SIGHUP */
	volatile sig_atomic_t reload;
	bool no_auth;			/* --insecure-no-auth: every client is admin (tests only) */
	char agent_token[VG_AUTH_TOKEN_LEN + 1];	/* --agent-token-file: ours, for agents */
	struct vg_dsse_keys *policy_keys;	/* --policy-key: policies must be DSSE-signed */
	unsigned int bank;
	uint32_t mask;
	unsigned int interval_ms;
	unsigned int agent_timeout;	/* s: whole exchange with an agent or webhook */
	size_t max_log;			/* bytes of one measurement-list answer */
	size_t max_body;		/* bytes of an API request body */
	volatile sig_atomic_t stop;
	atomic_int api_busy;		/* API requests being answered (not those still arriving) */
	atomic_int policy_checks;	/* policy uploads being parsed, at most POLICY_CHECKS_MAX */
	uint64_t policy_gen;		/* under lock: policies uploaded so far */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .auth_lock = PTHREAD_RWLOCK_INITIALIZER };

static const char help[] =
	"usage: vigil-verifier --listen ADDR:PORT --db URL [--interval MS] [--ek-ca FILE]\n"
	"                      [--webhook URL] [--on-fail CMD] [--bank ALGO] [--pcrs N,...]\n"
	"Attest vigil-agents at an interval; REST API for `vigil attest`.\n"
	"  -L, --listen ADDR:PORT  API address (e.g. 127.0.0.1:8881)\n"
	"  -d, --db URL            store: sqlite:PATH or PATH (SQLite), or a PostgreSQL URL\n"
	"                          postgresql://[USER[:PASSWORD]@][HOST][:PORT]/DB[?PARAM=V&...]\n"
	"                          (any libpq parameter: host=/run/postgresql, sslmode=...;\n"
	"                          password also from PGPASSFILE/~/.pgpass); verifiers may share\n"
	"                          one database (docs/verifier-postgresql.md)\n"
	"  -i, --interval MS       time between rounds per agent (default 2000)\n"
	"  -c, --ek-ca FILE        PEM roots/intermediates EK certificates must chain to;\n"
	"                          without it the certificate must still match the EK\n"
	"      --policy-key PEM    accept only reference policies in a DSSE envelope signed\n"
	"                          by this key (public key or certificate; repeatable),\n"
	"                          checked on upload and again whenever one is loaded\n"
	"  -w, --webhook URL       POST a JSON notice there on every failure\n"
	"  -x, --on-fail CMD       run CMD (sh -c) on every failure, with VIGIL_AGENT,\n"
	"                          VIGIL_FAILURE, VIGIL_MESSAGE, VIGIL_PATH in the environment\n"
	"  -b, --bank ALGO         PCR bank to quote (default sha256)\n"
	"  -p, --pcrs LIST         PCRs to quote (default 10)\n"
	"      --agent-ca FILE     PEM CA that agents' HTTPS certificates chain to\n"
	"      --client-cert FILE  our PEM client certificate for agents (mutual TLS)\n"
	"      --client-key FILE   and its key\n"
	"      --api-cert FILE     serve the REST API over HTTPS with this PEM certificate\n"
	"      --api-key FILE      and its key\n"
	"      --api-client-ca FILE  a client certificate chaining to it is an admin credential\n"
	"      --api-read-client-ca FILE  one chaining to this CA is a read credential\n"
	"Credentials (docs/api-auth.md): every API route needs one\n"
	"      --auth-tokens FILE  bearer tokens as ROLE ID SHA256 lines, role admin or read\n"
	"                          (default /etc/vigil/verifier-tokens); mode 600\n"
	"      --create-token ROLE OUT  make a token (admin or read; verifier: for agents'\n"
	"                          lists, with an explicit --auth-tokens), write it to OUT\n"
	"                          (a new file, 0600), list its hash in --auth-tokens; exit\n"
	"      --agent-token-file FILE  the token we present to agents (role verifier there)\n"
	"      --insecure-no-auth  no credentials at all (tests only): anyone may change state\n"
	"Limits (hostile peers):\n"
	"      --api-timeout S     a request must arrive whole within S seconds (default 10)\n"
	"      --api-max-conn N    connections per client address (default 64)\n"
	"      --max-body BYTES    largest API request body, e.g. a policy (default 32M)\n"
	"      --agent-timeout S   whole exchange with an agent or the webhook (default 30)\n"
	"      --db-timeout S      one database call: SQLite's busy wait, PostgreSQL's answer\n"
	"                          (default 10; a hung server fails the call, not the verifier)\n"
	"      --max-log BYTES     largest measurement-list answer of one round (default 64M)\n";

static int64_t now(void)
{
	return (int64_t)time(NULL);
}

static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- HTTP client (to agents and webhooks) ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	size_t max;			/* 0: VG_API_MSG_MAX */
	bool too_big;
};

/* Room for @add more bytes and a NUL, growing geometrically. Return: 0, -ENOMEM. */
static int grow(uint8_t **p, size_t *cap, size_t len, size_t add)
{
	size_t want = len + add + 1, nc = *cap ? *cap : 4096;
	uint8_t *nb;

	if (want <= *cap)
		return 0;
	while (nc < want)
		nc = nc > SIZE_MAX / 2 ? want : nc * 2;
	nb = realloc(*p, nc);
	if (!nb)
		return -ENOMEM;
	*p = nb;
	*cap = nc;
	return 0;
}

/* libcurl's progress callback: a shutdown ends every exchange at once. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)arg;
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return g.stop ? 1 : 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t add = size * n;
	uint8_t *nb;

	if (add > b->max || b->len > b->max - add) {
		b->too_big = true;
		return 0;
	}
	if (grow(&b->p, &b->cap, b->len, add) < 0)
		return 0;
	nb = b->p;
	memcpy(nb + b->len, p, add);
	b->len += add;
	b->p[b->len] = 0;
	return add;
}

/*
 * Return: HTTP status, or -1 on transport failure (@err says). @agent: use
 * the agent TLS settings. At most @max bytes of answer (0: VG_API_MSG_MAX),
 * g.agent_timeout seconds in all; redirects are not followed (an answer
 * comes from the registered URL or not at all).
 */
static long fetch_tls(const char *url, const char *body, bool agent, size_t max, struct buf *out,
		      char *err, size_t errlen);

static long fetch(const char *url, const char *body, size_t max, struct buf *out, char *err,
		  size_t errlen)
{
	return fetch_tls(url, body, true, max, out, err, errlen);
}

static long fetch_tls(const char *url, const char *body, bool agent, size_t max, struct buf *out,
		      char *err, size_t errlen)
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
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)g.agent_timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(g.agent_timeout < 5 ? g.agent_timeout : 5));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)out->max);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (agent && g.agent_ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, g.agent_ca);
	if (agent && g.client_cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, g.client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, g.client_key);
	}
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json");
	if (agent && g.agent_token[0]) {
		char ah[sizeof(g.agent_token) + 32];

		snprintf(ah, sizeof(ah), "Authorization: Bearer %s", g.agent_token);
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
	else if (r != CURLE_OK)
		snprintf(err, errlen, "%s: %s", url, curl_easy_strerror(r));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (code < 0) {
		free(out->p);
		memset(out, 0, sizeof(*out));
	}
	return code;
}

/*
 * What a peer's error answer says, for a message: its "error" string if
 * it is JSON, else its first bytes; printable ASCII only, at most 160.
 */
static void peer_said(const struct buf *b, char *out, size_t cap)
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

/* ---- policies ---- */

/* A policy document: DSSE-signed by a --policy-key when any is given. */
static int load_policy(const uint8_t *doc, size_t len, struct vg_refpolicy **ret,
		       struct vg_diag *d)
{
	if (g.policy_keys)
		return vg_refpolicy_load_dsse(g.policy_keys, doc, len, ret, d);
	return vg_refpolicy_load(doc, len, ret, d);
}

/* Policies are parsed one at a time, outside g.lock (lock order: this, then g.lock). */
static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

static struct pcache *pcache_find(const char *name)
{
	for (struct pcache *c = g.policies; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/*
 * Called and returns under g.lock, which it drops while a policy not yet
 * cached is parsed (a large one takes seconds: the API and the other
 * rounds go on meanwhile; one parse at a time, so a burst of rounds does
 * not parse the same document twenty times). Anything read under g.lock
 * before the call may have changed when it returns.
 * Return: the parsed policy (cached), NULL if none/unparsable (*@err).
 */
static struct vg_refpolicy *policy_lookup(const char *name, char *err, size_t errlen)
{
	struct vg_diag d = { 0 };
	struct pcache *c = pcache_find(name);
	uint64_t gen;
	char *doc = NULL;
	size_t len;
	int r;

	if (c)
		return c->p;
	pthread_mutex_unlock(&g.lock);
	pthread_mutex_lock(&parse_lock);
	pthread_mutex_lock(&g.lock);
again:
	c = pcache_find(name);		/* parsed by another thread meanwhile */
	if (c) {
		pthread_mutex_unlock(&parse_lock);
		return c->p;
	}
	gen = g.policy_gen;
	r = vg_store_policy_get(g.store, name, &doc, &len, &d);
	if (r < 0) {
		pthread_mutex_unlock(&parse_lock);
		snprintf(err, errlen, "policy %s: %s", name, r == -ENOENT ? "not found" : d.msg);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	pthread_mutex_unlock(&g.lock);
	r = c ? load_policy((const uint8_t *)doc, len, &c->p, &d) : -ENOMEM;
	free(doc);
	pthread_mutex_lock(&g.lock);
	if (r == 0 && gen != g.policy_gen) {
		/* a policy was uploaded while we parsed: this document may be the old one */
		vg_refpolicy_free(c->p);
		free(c);
		goto again;
	}
	pthread_mutex_unlock(&parse_lock);
	if (r < 0) {
		snprintf(err, errlen, "policy %s: %s", name, c ? d.msg : "out of memory");
		free(c);
		return NULL;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->next = g.policies;
	g.policies = c;
	return c->p;
}

static void pcache_free(struct pcache *c)
{
	vg_refpolicy_free(c->p);
	free(c);
}

/* Under g.lock: drop a replaced policy from the cache (freed once unused). */
static void policy_forget(const char *name)
{
	for (struct pcache **pp = &g.policies; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct pcache *c = *pp;

			*pp = c->next;
			c->retired = true;
			if (!c->refs)
				pcache_free(c);
			return;
		}
}

/* Under g.lock: the cache entry of @p, for reference counting. */
static struct pcache *pcache_of(const struct vg_refpolicy *p)
{
	for (struct pcache *c = g.policies; c; c = c->next)
		if (c->p == p)
			return c;
	return NULL;
}

/* ---- failure actions ---- */

static void notify(const struct vg_store_agent *a, const struct vg_store_verdict *v)
{
	const char *fid = vg_attest_fail_id(v->fail);

	if (g.webhook) {
		json_object *o = json_object_new_object();
		struct buf b;
		char err[256];

		json_object_object_add(o, "agent", json_object_new_string(a->id));
		json_object_object_add(o, "failure", json_object_new_string(fid));
		json_object_object_add(o, "message", json_object_new_string(v->msg));
		json_object_object_add(o, "entry", json_object_new_int64(v->entry));
		json_object_object_add(o, "path", json_object_new_string(v->path));
		json_object_object_add(o, "digest", json_object_new_string(v->digest));
		json_object_object_add(o, "time", json_object_new_int64(v->time));
		if (fetch_tls(g.webhook, json_object_to_json_string(o), false, 0, &b, err,
			      sizeof(err)) < 0)
			fprintf(stderr, "vigil-verifier: webhook: %s\n", err);
		free(b.p);
		json_object_put(o);
	}
	if (g.on_fail)
		vg_privsep_hook_run(a->id, fid, v->msg, v->path);	/* privsep_hook.c */
}

/* Return: 0, or -1 when the history could not be written (the caller keeps the old state). */
static int record(struct vg_store_agent *a, const struct vg_attest_verdict *v)
{
	int r = 0;

	struct vg_store_verdict h = { .time = now(), .fail = v->fail, .entry = v->entry };
	struct vg_diag d = { 0 };

	snprintf(h.path, sizeof(h.path), "%s", v->path);
	snprintf(h.digest, sizeof(h.digest), "%s", v->digest);
	snprintf(h.msg, sizeof(h.msg), "%s", v->msg);
	if (vg_store_verdict_add(g.store, a->id, &h, &d) < 0) {
		fprintf(stderr, "vigil-verifier: %s: %s %s not recorded: %s\n", a->id,
			vg_attest_fail_id(v->fail), v->fail == VG_AF_REBOOT ? "event" : "failure", d.msg);
		r = -1;
	}
	if (v->fail != VG_AF_REBOOT)
		notify(a, &h);
	return r;
}

/*
 * Under g.lock: say when the store starts failing (once per distinct
 * message) and when it answers again. @msg NULL: the call succeeded.
 */
static void store_status(const char *msg)
{
	static char last[256];

	if (msg && strcmp(msg, last) != 0) {
		fprintf(stderr, "vigil-verifier: store error: %s (agents are not attested, and no "
			"state changes, until the store answers)\n", msg);
		snprintf(last, sizeof(last), "%s", msg);
	} else if (!msg && last[0]) {
		fprintf(stderr, "vigil-verifier: store: answering again\n");
		last[0] = 0;
	}
}

/* ---- boot event logs: fetched and replayed once per boot ---- */

/*
 * Per agent: whether it serves a boot log
 * and that log's replay (attest_boot.h), for the boot identified by the
 * quote's resetCount/restartCount and the registered AK. A round costs a
 * comparison of ten digests; the log is fetched again on a new boot, or
 * after a boot.* failure (so that a reactivated agent is looked at anew).
 * Not persisted: a restarted verifier fetches each log once more. The table
 * is locked; an entry is used only by its agent's round (one at a time) and
 * never freed, so it needs no lock of its own.
 */
struct bootc {
	struct bootc *next;
	char id[VG_API_ID_MAX];
	uint8_t ak[32];			/* SHA-256 of the registered AK public */
	bool fetched;			/* asked for since the entry was made or reset */
	bool keyed;			/* reset/restart say which boot it is */
	bool have;			/* the agent serves a boot log (not 404) */
	bool malformed;			/* ... that does not decode: msg */
	uint32_t reset, restart;
	struct vg_attest_boot boot;
	char msg[512];
};

#define BOOTC_BUCKETS 1024
static struct bootc *bootc_tab[BOOTC_BUCKETS];
static pthread_mutex_t bootc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Return: the entry of @a (made if new), NULL on no memory. */
static struct bootc *bootc_get(const struct vg_store_agent *a)
{
	struct vg_digest h;
	uint64_t fnv = 1469598103934665603ull;
	struct bootc **pp, *c;

	if (vg_hash_buf(VG_HASH_SHA256, a->ak_pub, a->ak_pub_len, &h, NULL) < 0)
		return NULL;
	for (const char *s = a->id; *s; s++)
		fnv = (fnv ^ (uint8_t)*s) * 1099511628211ull;
	pthread_mutex_lock(&bootc_lock);
	pp = &bootc_tab[fnv % BOOTC_BUCKETS];
	for (c = *pp; c; c = c->next)
		if (strcmp(c->id, a->id) == 0)
			break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (c) {
			snprintf(c->id, sizeof(c->id), "%s", a->id);
			c->next = *pp;
			*pp = c;
		}
	}
	pthread_mutex_unlock(&bootc_lock);
	if (!c)
		return NULL;
	if (memcmp(c->ak, h.bytes, sizeof(c->ak)) != 0) {	/* new or re-registered */
		c->fetched = c->keyed = false;
		memcpy(c->ak, h.bytes, sizeof(c->ak));
	}
	return c;
}

/* GET /v1/bootlog into @c. Return: 0, -1 (communication: @v). */
static int bootc_fetch(const struct vg_store_agent *a, struct bootc *c, struct vg_attest_verdict *v)
{
	struct vg_attest_verdict bv;
	char url[1024], err[512], said[161];
	struct buf b = { 0 };
	long code;
	int r;

	snprintf(url, sizeof(url), "%s/v1/bootlog", a->url);
	code = fetch(url, NULL, g.max_log, &b, err, sizeof(err));
	if (code != 200 && code != 404) {
		if (code > 0)
			peer_said(&b, said, sizeof(said));
		vg_attest_fail(v, VG_AF_COMM, "boot log: %s%s", code < 0 ? err : "HTTP error: ",
			       code < 0 ? "" : said);
		free(b.p);
		return -1;
	}
	c->fetched = true;
	c->keyed = false;
	c->have = code == 200;
	c->malformed = false;
	if (c->have) {
		vg_attest_verdict_init(&bv);
		r = vg_attest_boot_load(b.p ? b.p : (const uint8_t *)"", b.len, a->bank, &c->boot, &bv);
		if (r < 0) {
			free(b.p);
			c->fetched = false;
			vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(-r));
			return -1;
		}
		if (r == 1) {
			c->malformed = true;
			snprintf(c->msg, sizeof(c->msg), "%s", bv.msg);
		}
	}
	free(b.p);
	return 0;
}

/*
 * Per agent: when a round last judged it trusted (wall ms), more precise
 * than the store's last_ok (seconds), for watch_rounds. Entries are never
 * freed (one per agent id seen, as bootc).
 */
struct okc {
	struct okc *next;
	char id[VG_API_ID_MAX];
	int64_t ms;
};

#define OKC_BUCKETS 1024
static struct okc *okc_tab[OKC_BUCKETS];
static pthread_mutex_t okc_lock = PTHREAD_MUTEX_INITIALIZER;

static struct okc **okc_slot(const char *id)
{
	uint64_t h = 1469598103934665603ull;
	struct okc **pp;

	for (const char *s = id; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	for (pp = &okc_tab[h % OKC_BUCKETS]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, id) == 0)
			break;
	return pp;
}

static void okc_set(const char *id, int64_t ms)
{
	struct okc **pp;

	pthread_mutex_lock(&okc_lock);
	pp = okc_slot(id);
	if (!*pp && (*pp = calloc(1, sizeof(**pp))))
		snprintf((*pp)->id, sizeof((*pp)->id), "%s", id);
	if (*pp)
		(*pp)->ms = ms;
	pthread_mutex_unlock(&okc_lock);
}

/* Return: wall ms of the last trusted verdict of this verifier, 0 if none. */
static int64_t okc_get(const char *id)
{
	struct okc **pp;
	int64_t ms;

	pthread_mutex_lock(&okc_lock);
	pp = okc_slot(id);
	ms = *pp ? (*pp)->ms : 0;
	pthread_mutex_unlock(&okc_lock);
	return ms;
}

static void okc_free(void)
{
	for (size_t i = 0; i < OKC_BUCKETS; i++)
		while (okc_tab[i]) {
			struct okc *n = okc_tab[i]->next;

			free(okc_tab[i]);
			okc_tab[i] = n;
		}
}

/* ---- one attestation round ---- */

/*
 * Fills @v on failure. *@requote (may be NULL) is set, with nothing
 * judged, when a boot log appeared for a quote that did not cover PCRs 0-9.
 * Return: 0 trusted, 1 not, -1 communication failure (@v msg).
 */
static int round_once(const struct vg_store_agent *a, const struct vg_refpolicy *pol,
		      struct vg_attest_state *st, bool *reboot, struct vg_attest_verdict *v,
		      bool *requote)
{
	struct vg_api_quote_req req = { .nonce_len = 20, .bank = a->bank, .mask = a->mask };
	struct vg_attest_request areq = { req.nonce, req.nonce_len, a->bank, a->mask };
	char url[1024], q[256], err[512], said[161];
	struct vg_attest_evidence ev = { 0 };
	struct vg_attest_ak *ak = NULL;
	struct vg_api_quote *quote = malloc(sizeof(*quote));
	struct vg_tpms_attest uq;
	struct vg_diag d = { 0 };
	struct buf qb = { 0 }, lb = { 0 };
	struct bootc *bc = bootc_get(a);
	long code;
	int r = 1;

	if (!quote || !bc || RAND_bytes(req.nonce, (int)req.nonce_len) != 1) {
		free(quote);
		vg_attest_fail(v, VG_AF_COMM, "verifier error: no memory or randomness");
		return -1;
	}
	/* a boot log or pinned boot PCRs: quote PCRs 0-9 (or the pinned ones) as well */
	if (!bc->fetched && bootc_fetch(a, bc, v) < 0) {
		free(quote);
		return -1;
	}
	req.mask |= vg_refpolicy_boot_mask(pol) | (bc->have ? VG_ATTEST_BOOT_MASK : 0);
	areq.mask = req.mask;
	if (vg_api_quote_query_build(&req, q, sizeof(q)) < 0 ||
	    (size_t)snprintf(url, sizeof(url), "%s/v1/quote?%s", a->url, q) >= sizeof(url)) {
		vg_attest_fail(v, VG_AF_COMM, "verifier error: agent URL too long");
		r = -1;
		goto out;
	}
	code = fetch(url, NULL, 0, &qb, err, sizeof(err));
	if (code < 0 || code >= 500) {
		if (code >= 500)
			peer_said(&qb, said, sizeof(said));
		vg_attest_fail(v, VG_AF_COMM, "quote: %s", code < 0 ? err : said);
		r = -1;
		goto out;
	}
	if (code == 401 || code == 403) {
		/* our credential (--agent-token-file, client certificate): not evidence */
		peer_said(&qb, said, sizeof(said));
		vg_attest_fail(v, VG_AF_COMM, "quote: the agent refused our credential (HTTP %ld): %s",
			       code, said);
		r = -1;
		goto out;
	}
	if (code != 200) {
		peer_said(&qb, said, sizeof(said));
		vg_attest_fail(v, VG_AF_MALFORMED, "quote answer is HTTP %ld, not a quote: %s", code,
			       said);
		goto out;
	}
	if (vg_api_quote_parse(qb.p, qb.len, a->bank, quote, &d) < 0) {
		vg_attest_fail(v, VG_AF_MALFORMED, "%s", d.msg);
		goto out;
	}
	ev.attest = quote->attest;
	ev.attest_len = quote->attest_len;
	ev.sig = quote->sig;
	ev.sig_len = quote->sig_len;
	vg_api_quote_pcrs(quote, &ev.pcrs);
	/* where the list must start: 0 after a reboot (the signature check decides later) */
	ev.log_offset = st->log.offset;
	if (vg_attest_quote_decode(ev.attest, ev.attest_len, &uq, NULL) == 0) {
		if (st->clock.valid && uq.reset_count > st->clock.reset_count)
			ev.log_offset = 0;
		/* another boot (or resume): its log, replayed once */
		if (bc->keyed && (uq.reset_count != bc->reset || uq.restart_count != bc->restart) &&
		    bootc_fetch(a, bc, v) < 0) {
			r = -1;
			goto out;
		}
		if (!bc->keyed) {
			bc->keyed = true;
			bc->reset = uq.reset_count;
			bc->restart = uq.restart_count;
		}
	}
	if (bc->have && bc->malformed) {
		vg_attest_fail(v, VG_AF_BOOT_MALFORMED, "%s", bc->msg);
		bc->fetched = false;
		goto out;
	}
	if (bc->have && (areq.mask & VG_ATTEST_BOOT_MASK) != VG_ATTEST_BOOT_MASK && requote) {
		*requote = true;	/* a new boot brought a boot log: quote PCRs 0-9 too */
		r = 0;
		goto out;
	}
	if (bc->have && (areq.mask & VG_ATTEST_BOOT_MASK) == VG_ATTEST_BOOT_MASK)
		ev.boot = &bc->boot;
	if (a->mask & (1u << VG_ATTEST_PCR_IMA)) {
		snprintf(url, sizeof(url), "%s/v1/log?offset=%" PRIu64, a->url, ev.log_offset);
		code = fetch(url, NULL, g.max_log, &lb, err, sizeof(err));
		if (code != 200) {
			if (code > 0)
				peer_said(&lb, said, sizeof(said));
			vg_attest_fail(v, VG_AF_COMM, "log: %s%s%s", code < 0 ? err : "HTTP error: ",
				       code < 0 ? "" : said, "");
			r = -1;
			goto out;
		}
		ev.log = lb.p ? lb.p : (const uint8_t *)"";
		ev.log_len = lb.len;
		ev.log_algo = VG_HASH_SHA1;
	}
	if (vg_attest_ak_load(a->ak_pub, a->ak_pub_len, &ak, &d) < 0) {
		vg_attest_fail(v, VG_AF_AK, "registered AK: %s", d.msg);
		goto out;
	}
	r = vg_attest_evidence_check(ak, pol, &areq, &ev, st, reboot, v);
	if (r < 0) {
		vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(-r));
		r = -1;
	}
	if (r == 1 && v->fail >= VG_AF_BOOT_MALFORMED && v->fail <= VG_AF_BOOT_AGG)
		bc->fetched = false;	/* look at the log again once reactivated */
out:
	vg_attest_ak_free(ak);
	free(quote);
	free(qb.p);
	free(lb.p);
	return r;
}

static int round_evidence(const struct vg_store_agent *a, const struct vg_refpolicy *pol,
			  struct vg_attest_state *st, bool *reboot, struct vg_attest_verdict *v)
{
	bool requote = false;
	int r = round_once(a, pol, st, reboot, v, &requote);

	if (requote)
		r = round_once(a, pol, st, reboot, v, NULL);
	return r;
}

static void attest_one(const char *id)
{
	struct vg_store_agent *a = malloc(sizeof(*a)), *cur = NULL;
	struct vg_refpolicy *pol = NULL;
	struct pcache *pc = NULL;
	struct vg_attest_verdict v;
	struct vg_attest_state st;
	struct vg_diag d = { 0 };
	uint32_t old_reset;
	bool reboot = false;
	char err[512] = "";
	int r;

	if (!a)
		return;
	pthread_mutex_lock(&g.lock);
	r = vg_store_agent_get(g.store, id, a, &d);
	store_status(r < 0 && r != -ENOENT ? d.msg : NULL);
	if (r == 0 && a->policy[0]) {
		pol = policy_lookup(a->policy, err, sizeof(err));
		if (!pol)
			r = -ENOENT;
		else
			pc = pcache_of(pol);
		if (pc)
			pc->refs++;
	}
	pthread_mutex_unlock(&g.lock);
	if (r < 0 || a->state == VG_AGENT_FAILED) {
		if (r == -ENOENT && err[0])
			fprintf(stderr, "vigil-verifier: %s: %s\n", id, err);
		goto release;
	}
	/* the policy object stays valid while pc->refs > 0 */
	st = a->st;
	old_reset = st.clock.reset_count;
	vg_attest_verdict_init(&v);
	r = round_evidence(a, pol, &st, &reboot, &v);
	if (g.stop)
		goto release;		/* cut short by the shutdown: judged by nobody */
	pthread_mutex_lock(&g.lock);
	/* the agent may have been removed or changed meanwhile (operator, another verifier) */
	{
		int r2;

		cur = malloc(sizeof(*cur));
		r2 = cur ? vg_store_agent_get(g.store, id, cur, &d) : -ENOMEM;
		if (r2 < 0 && r2 != -ENOENT)
			store_status(d.msg);	/* the round's outcome is dropped: nothing recorded */
		if (r2 < 0 ||
		    memcmp(cur->ak_pub, a->ak_pub, a->ak_pub_len) != 0 ||
		    strcmp(cur->policy, a->policy) != 0 || cur->state == VG_AGENT_FAILED ||
		    memcmp(&cur->st, &a->st, sizeof(st)) != 0)
			goto unlock;
	}
	a->last_seen = now();
	a->comm_errors = cur->comm_errors;	/* mark_silent may have counted this silence */
	if (r == 0) {
		okc_set(a->id, wall_ms());
		a->st = st;
		a->state = VG_AGENT_TRUSTED;
		a->rounds++;
		a->comm_errors = 0;
		a->last_ok = a->last_seen;
		a->last_fail = VG_AF_NONE;
		a->last_msg[0] = 0;
		if (reboot) {
			struct vg_attest_verdict rv;

			vg_attest_verdict_init(&rv);
			vg_attest_fail(&rv, VG_AF_REBOOT, "reboot: resetCount %" PRIu32 " -> %" PRIu32
				       ", the measurement list was verified again from entry 0",
				       old_reset, st.clock.reset_count);
			a->reboots++;
			if (record(a, &rv) < 0)
				goto unlock;	/* judged again next round, recorded then */
		}
	} else if (r == 1) {
		a->state = VG_AGENT_FAILED;
		a->last_fail = v.fail;
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
		fprintf(stderr, "vigil-verifier: %s FAILED %s: %s\n", a->id, vg_attest_fail_id(v.fail),
			v.msg);
		if (record(a, &v) < 0)
			goto unlock;	/* judged again next round, recorded then */
	} else {
		if (a->comm_errors++ == 0)
			record(a, &v);
		a->state = VG_AGENT_UNREACHABLE;
		a->last_fail = VG_AF_COMM;
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
	}
	/*
	 * written only if the row is still @cur: of verifiers sharing the store
	 * that judged the same state, the first one's result stands (-ESTALE)
	 */
	r = vg_store_agent_update(g.store, cur, a, &d);
	store_status(r < 0 && r != -ESTALE ? d.msg : NULL);
unlock:
	pthread_mutex_unlock(&g.lock);
	free(cur);
release:
	if (pc) {
		pthread_mutex_lock(&g.lock);
		if (--pc->refs == 0 && pc->retired)
			pcache_free(pc);
		pthread_mutex_unlock(&g.lock);
	}
	free(a);
}

struct idlist {
	struct {
		char id[128];
		int64_t watch_ms;	/* trusted: last verified (wall ms), else 0 */
	} *a;
	size_t n, cap;
};

static int collect(void *arg, const struct vg_store_agent *a)
{
	struct idlist *l = arg;

	if (a->state == VG_AGENT_FAILED)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *n = realloc(l->a, cap * sizeof(*l->a));

		if (!n)
			return -ENOMEM;
		l->a = n;
		l->cap = cap;
	}
	memcpy(l->a[l->n].id, a->id, 128);
	l->a[l->n].watch_ms = 0;
	if (a->state == VG_AGENT_TRUSTED) {
		/* ours to the ms; else the store's (another verifier's), whole seconds */
		int64_t ms = okc_get(a->id), st = (int64_t)a->last_ok * 1000;

		l->a[l->n].watch_ms = ms > st ? ms : st;
	}
	l->n++;
	return 0;
}

/*
 * Under no lock: a trusted agent whose round has not answered within
 * --interval (+ SILENT_SLACK_MS) of its last verification is unreachable
 * now, not at --agent-timeout: a host that stops answering must not look
 * trusted for longer than the interval promises. The round goes on; if
 * the agent answers after all, the round's verdict replaces this one.
 */
static void mark_silent(const char *id, int64_t since_ms)
{
	struct vg_store_agent *a = malloc(sizeof(*a)), *cur = malloc(sizeof(*cur));
	struct vg_attest_verdict v;
	struct vg_diag d = { 0 };
	int r;

	if (!a || !cur)
		goto out;
	pthread_mutex_lock(&g.lock);
	r = vg_store_agent_get(g.store, id, cur, &d);
	if (r == 0 && cur->state == VG_AGENT_TRUSTED) {
		*a = *cur;
		vg_attest_verdict_init(&v);
		vg_attest_fail(&v, VG_AF_COMM, "no answer within the interval: last verified %lld ms "
			       "ago (--interval %u ms)", (long long)(wall_ms() - since_ms),
			       g.interval_ms);
		a->state = VG_AGENT_UNREACHABLE;
		a->last_fail = VG_AF_COMM;
		a->last_seen = now();
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
		if (a->comm_errors++ == 0)
			record(a, &v);
		r = vg_store_agent_update(g.store, cur, a, &d);
		store_status(r < 0 && r != -ESTALE ? d.msg : NULL);
		if (r == 0)
			fprintf(stderr, "vigil-verifier: %s unreachable: %s\n", id, v.msg);
	}
	pthread_mutex_unlock(&g.lock);
out:
	free(a);
	free(cur);
}

/*
 * Rounds run on their own threads, at most ROUNDS_MAX at once and one per
 * agent: an agent that answers slowly (up to --agent-timeout) or not at
 * all delays only itself, not the others' rounds.
 */
#define ROUNDS_MAX 16

static struct {
	pthread_mutex_t lock;
	char ids[ROUNDS_MAX][128];
	int64_t watch_ms[ROUNDS_MAX];	/* of a trusted agent: last verified (wall ms); 0 none */
	size_t n;
} inflight = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *round_thread(void *arg)
{
	char *id = arg;

	attest_one(id);
	pthread_mutex_lock(&inflight.lock);
	for (size_t i = 0; i < inflight.n; i++)
		if (strcmp(inflight.ids[i], id) == 0) {
			memmove(inflight.ids[i], inflight.ids[inflight.n - 1], sizeof(inflight.ids[i]));
			inflight.watch_ms[i] = inflight.watch_ms[inflight.n - 1];
			inflight.n--;
			break;
		}
	pthread_mutex_unlock(&inflight.lock);
	free(id);
	return NULL;
}

/* Start a round for @id unless one is running (or ROUNDS_MAX are: next time). */
static void dispatch(const char *id, int64_t watch_ms)
{
	pthread_attr_t at;
	pthread_t t;
	char *copy;
	bool busy = false;

	pthread_mutex_lock(&inflight.lock);
	for (size_t i = 0; i < inflight.n; i++)
		busy |= strcmp(inflight.ids[i], id) == 0;
	if (busy || inflight.n == ROUNDS_MAX || !(copy = strdup(id))) {
		pthread_mutex_unlock(&inflight.lock);
		return;
	}
	inflight.watch_ms[inflight.n] = watch_ms;
	snprintf(inflight.ids[inflight.n++], sizeof(inflight.ids[0]), "%s", id);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, round_thread, copy) != 0) {
		inflight.n--;
		free(copy);
	}
	pthread_attr_destroy(&at);
	pthread_mutex_unlock(&inflight.lock);
}

/*
 * SIGHUP: read the token list again (revocation without a restart). A
 * list that does not load (missing, mode, syntax) keeps the old one.
 */
static void auth_reload(void)
{
	struct vg_auth *n = NULL, *old;
	char err[512];

	g.reload = 0;
	if (g.no_auth || !g.auth_path)
		return;
	if (http_auth_load(g.auth_path, VG_AUTH_ADMIN | VG_AUTH_READ, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "vigil-verifier: SIGHUP: %s; the tokens listed before stay valid\n",
			err);
		return;
	}
	pthread_rwlock_wrlock(&g.auth_lock);
	old = g.auth;
	g.auth = n;
	pthread_rwlock_unlock(&g.auth_lock);
	vg_auth_free(old);
	fprintf(stderr, "vigil-verifier: SIGHUP: %zu token(s) from %s\n", vg_auth_count(n),
		g.auth_path);
}

/* Rounds of trusted agents past --interval + SILENT_SLACK_MS: their agents are unreachable. */
static void watch_rounds(void)
{
	char ids[ROUNDS_MAX][128];
	int64_t since[ROUNDS_MAX], t = wall_ms();
	size_t n = 0;

	pthread_mutex_lock(&inflight.lock);
	for (size_t i = 0; i < inflight.n; i++)
		if (inflight.watch_ms[i] &&
		    t > inflight.watch_ms[i] + (int64_t)g.interval_ms + SILENT_SLACK_MS) {
			memcpy(ids[n], inflight.ids[i], sizeof(ids[n]));
			since[n++] = inflight.watch_ms[i];
			inflight.watch_ms[i] = 0;	/* once per round */
		}
	pthread_mutex_unlock(&inflight.lock);
	for (size_t i = 0; i < n; i++)
		mark_silent(ids[i], since[i]);
}

static void loop(void)
{
	while (!g.stop) {
		struct idlist l = { 0 };
		struct vg_diag sd = { 0 };
		struct timespec t0, t1;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		pthread_mutex_lock(&g.lock);
		store_status(vg_store_agent_list(g.store, collect, &l, &sd) < 0 ? sd.msg : NULL);
		pthread_mutex_unlock(&g.lock);
		for (size_t i = 0; i < l.n && !g.stop; i++)
			dispatch(l.a[i].id, l.a[i].watch_ms);
		free(l.a);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		for (long left = (long)g.interval_ms - ms; left > 0 && !g.stop; left -= 50) {
			usleep(left > 50 ? 50000 : (useconds_t)left * 1000);
			watch_rounds();
			if (g.reload)
				auth_reload();
		}
	}
}

static size_t rounds_in_flight(void)
{
	size_t n;

	pthread_mutex_lock(&inflight.lock);
	n = inflight.n;
	pthread_mutex_unlock(&inflight.lock);
	return n;
}

/* ---- REST API ---- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), (void *)s,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	json_object_put(o);
	return ret;
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned int code, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(msg));
	return reply(c, code, o);
}

static enum MHD_Result failure(struct MHD_Connection *c, unsigned int code, unsigned int fail,
			       const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "failure", json_object_new_string(vg_attest_fail_id(fail)));
	json_object_object_add(o, "message", json_object_new_string(msg));
	return reply(c, code, o);
}

/* "auth": "disabled" in every status answer when there is no authentication. */
static json_object *auth_mark(json_object *o)
{
	if (g.no_auth && o)
		json_object_object_add(o, "auth", json_object_new_string("disabled"));
	return o;
}

static json_object *agent_json(const struct vg_store_agent *a)
{
	json_object *o = json_object_new_object();
	size_t nl;
	char name[2 * VG_ATTEST_NAME_MAX + 1] = "";
	struct vg_attest_ak *ak;

	if (vg_attest_ak_load(a->ak_pub, a->ak_pub_len, &ak, NULL) == 0) {
		const uint8_t *n = vg_attest_ak_name(ak, &nl);

		vg_hex_encode(n, nl, name);
		vg_attest_ak_free(ak);
	}
	json_object_object_add(o, "id", json_object_new_string(a->id));
	json_object_object_add(o, "url", json_object_new_string(a->url));
	json_object_object_add(o, "state", json_object_new_string(vg_agent_state_name(a->state)));
	json_object_object_add(o, "policy", json_object_new_string(a->policy));
	json_object_object_add(o, "ak_name", json_object_new_string(name));
	json_object_object_add(o, "rounds", json_object_new_int64((int64_t)a->rounds));
	json_object_object_add(o, "reboots", json_object_new_int64((int64_t)a->reboots));
	json_object_object_add(o, "log_entries", json_object_new_int64((int64_t)a->st.log.entries));
	json_object_object_add(o, "log_offset", json_object_new_int64((int64_t)a->st.log.offset));
	json_object_object_add(o, "reset_count", json_object_new_int64(a->st.clock.reset_count));
	json_object_object_add(o, "registered_at", json_object_new_int64(a->registered_at));
	json_object_object_add(o, "last_ok", json_object_new_int64(a->last_ok));
	json_object_object_add(o, "last_seen", json_object_new_int64(a->last_seen));
	json_object_object_add(o, "last_failure",
			       json_object_new_string(vg_attest_fail_id(a->last_fail)));
	json_object_object_add(o, "last_message", json_object_new_string(a->last_msg));
	return o;
}

static int list_cb(void *arg, const struct vg_store_agent *a)
{
	json_object_array_add(arg, agent_json(a));
	return 0;
}

static int hist_cb(void *arg, const struct vg_store_verdict *v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "time", json_object_new_int64(v->time));
	json_object_object_add(o, "failure", json_object_new_string(vg_attest_fail_id(v->fail)));
	json_object_object_add(o, "entry", json_object_new_int64(v->entry));
	json_object_object_add(o, "path", json_object_new_string(v->path));
	json_object_object_add(o, "digest", json_object_new_string(v->digest));
	json_object_object_add(o, "message", json_object_new_string(v->msg));
	json_object_array_add(arg, o);
	return 0;
}

/* Registration: identity, EK certificate, AK, credential activation. */
static enum MHD_Result h_register(struct MHD_Connection *c, const char *body, size_t len)
{
	struct vg_store_agent *a = calloc(1, sizeof(*a)), *old = calloc(1, sizeof(*old));
	struct vg_api_identity *idn = calloc(1, sizeof(*idn));
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct vg_api_register rq;
	uint8_t secret[32], mac[32], proof[32];
	size_t idl = sizeof(act->id_object), esl = sizeof(act->enc_secret), nl;
	long code;
	unsigned int ml = 0;
	struct vg_attest_verdict v;
	struct vg_attest_ak *ak = NULL;
	struct vg_diag d = { 0 };
	struct buf b = { 0 };
	enum MHD_Result ret;
	char u[1024], err[512], said[161], *ab = NULL;
	const uint8_t *name;
	int r;

	vg_attest_verdict_init(&v);
	if (!a || !old || !idn || !act) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		goto out;
	}
	if (vg_api_register_parse((const uint8_t *)body, len, &rq, &d) < 0) {
		ret = error(c, d.err == -ENOMEM ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_BAD_REQUEST,
			    d.msg);
		goto out;
	}
	snprintf(u, sizeof(u), "%s/v1/identity", rq.url);
	code = fetch(u, NULL, 0, &b, err, sizeof(err));
	if (code != 200) {
		if (code > 0) {
			peer_said(&b, said, sizeof(said));
			snprintf(err, sizeof(err), "identity: HTTP %ld: %s", code, said);
		}
		ret = failure(c, MHD_HTTP_BAD_GATEWAY, VG_AF_COMM, err);
		goto out;
	}
	if (vg_api_identity_parse(b.p, b.len, idn, &d) < 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_MALFORMED, d.msg);
		goto out;
	}
	/* a known id keeps its EK */
	pthread_mutex_lock(&g.lock);
	r = vg_store_agent_get(g.store, rq.id, old, &d);
	pthread_mutex_unlock(&g.lock);
	if (r == 0 && (old->ek_pub_len != idn->ek_pub_len ||
		       memcmp(old->ek_pub, idn->ek_pub, idn->ek_pub_len) != 0)) {
		ret = failure(c, MHD_HTTP_CONFLICT, VG_AF_EK_CHANGED, "agent id is registered with "
			      "another EK: remove it first");
		goto out;
	}
	if (idn->ek_cert_len == 0) {
		if (g.ek_ca) {
			ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_EK_CERT, "the TPM has no EK "
				      "certificate and --ek-ca requires one");
			goto out;
		}
	} else if (vg_attest_ek_check(idn->ek_pub, idn->ek_pub_len, idn->ek_cert, idn->ek_cert_len,
				      g.ek_ca, &v) != 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_EK_CERT, v.msg);
		goto out;
	}
	if (vg_attest_ak_load(idn->ak_pub, idn->ak_pub_len, &ak, &d) < 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_AK, d.msg);
		goto out;
	}
	name = vg_attest_ak_name(ak, &nl);
	if (RAND_bytes(secret, sizeof(secret)) != 1 ||
	    vg_attest_make_credential(idn->ek_pub, idn->ek_pub_len, name, nl, secret, sizeof(secret),
				      act->id_object, &idl, act->enc_secret, &esl, &d) < 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_EK_CERT, d.msg[0] ? d.msg : "MakeCredential");
		goto out;
	}
	act->id_len = idl;
	act->es_len = esl;
	if (vg_api_activate_build(act, &ab) < 0) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		goto out;
	}
	snprintf(u, sizeof(u), "%s/v1/activate", rq.url);
	free(b.p);
	code = fetch(u, ab, 0, &b, err, sizeof(err));
	HMAC(EVP_sha256(), secret, sizeof(secret), (const uint8_t *)rq.id, strlen(rq.id), mac, &ml);
	OPENSSL_cleanse(secret, sizeof(secret));
	if (code != 200 || vg_api_proof_parse(b.p, b.len, proof, &d) < 0 || ml != sizeof(mac) ||
	    CRYPTO_memcmp(proof, mac, sizeof(mac)) != 0) {
		if (code < 0)
			snprintf(said, sizeof(said), "%.150s", err);
		else if (code != 200)
			peer_said(&b, said, sizeof(said));
		else
			snprintf(said, sizeof(said), "%.150s", d.msg[0] ? d.msg : "wrong answer");
		snprintf(err, sizeof(err), "the agent did not prove the AK is in the TPM of this EK "
			 "(ActivateCredential: %s)", said);
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_CREDENTIAL, err);
		goto out;
	}
	snprintf(a->id, sizeof(a->id), "%s", rq.id);
	snprintf(a->url, sizeof(a->url), "%s", rq.url);
	snprintf(a->policy, sizeof(a->policy), "%s", rq.policy);
	memcpy(a->ek_pub, idn->ek_pub, idn->ek_pub_len);
	a->ek_pub_len = idn->ek_pub_len;
	memcpy(a->ek_cert, idn->ek_cert, idn->ek_cert_len);
	a->ek_cert_len = idn->ek_cert_len;
	memcpy(a->ak_pub, idn->ak_pub, idn->ak_pub_len);
	a->ak_pub_len = idn->ak_pub_len;
	a->state = VG_AGENT_REGISTERED;
	a->bank = g.bank;
	a->mask = g.mask;
	vg_attest_logstate_init(&a->st.log, g.bank);
	a->registered_at = now();
	pthread_mutex_lock(&g.lock);
	r = vg_store_agent_put(g.store, a, &d);
	pthread_mutex_unlock(&g.lock);
	if (r < 0) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
		goto out;
	}
	ret = reply(c, MHD_HTTP_CREATED, agent_json(a));
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	vg_attest_ak_free(ak);
	free(ab);
	free(b.p);
	free(a);
	free(old);
	free(idn);
	free(act);
	return ret;
}

static enum MHD_Result h_agent(struct MHD_Connection *c, const char *method,
			       const struct vg_api_route *rt, const char *body, size_t len)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	const char *id = rt->id;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char pname[VG_API_ID_MAX] = "", err[512];
	int r;

	if (!a)
		return MHD_NO;
	/* the body is parsed before the lock is taken */
	if (rt->ep == VG_API_AGENT_POLICY &&
	    vg_api_policy_assign_parse((const uint8_t *)body, len, pname, &d) < 0) {
		free(a);
		return error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	}
	pthread_mutex_lock(&g.lock);
	/* first: policy_lookup may drop the lock while it parses (the agent is read after) */
	if (*pname && !policy_lookup(pname, err, sizeof(err))) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return error(c, MHD_HTTP_BAD_REQUEST, err);
	}
	r = vg_store_agent_get(g.store, id, a, &d);
	if (r == -ENOENT) {
		ret = error(c, MHD_HTTP_NOT_FOUND, "no such agent");
	} else if (r < 0) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
	} else if (rt->ep == VG_API_AGENT && strcmp(method, "GET") == 0) {
		ret = reply(c, MHD_HTTP_OK, auth_mark(agent_json(a)));
	} else if (rt->ep == VG_API_AGENT_HISTORY) {
		json_object *o = json_object_new_object(), *arr = json_object_new_array();

		r = vg_store_verdict_list(g.store, id, HISTORY_MAX, hist_cb, arr, &d);
		json_object_object_add(o, "id", json_object_new_string(id));
		json_object_object_add(o, "history", arr);
		auth_mark(o);
		if (r < 0) {
			json_object_put(o);
			ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
		} else {
			ret = reply(c, MHD_HTTP_OK, o);
		}
	} else if (rt->ep == VG_API_AGENT) {	/* DELETE */
		ret = vg_store_agent_del(g.store, id, &d) < 0
			? error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg)
			: reply(c, MHD_HTTP_OK, json_object_new_object());
	} else if (rt->ep == VG_API_AGENT_REACTIVATE) {
		a->state = VG_AGENT_REGISTERED;
		ret = vg_store_agent_put(g.store, a, &d) < 0
			? error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg)
			: reply(c, MHD_HTTP_OK, agent_json(a));
	} else {					/* VG_API_AGENT_POLICY */
		snprintf(a->policy, sizeof(a->policy), "%s", pname);
		a->state = VG_AGENT_REGISTERED;
		vg_attest_logstate_init(&a->st.log, a->bank);	/* judge the whole list */
		ret = vg_store_agent_put(g.store, a, &d) < 0
			? error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg)
			: reply(c, MHD_HTTP_OK, agent_json(a));
	}
	pthread_mutex_unlock(&g.lock);
	free(a);
	return ret;
}

static enum MHD_Result h_policy(struct MHD_Connection *c, const char *method, const char *name,
				const char *body, size_t len)
{
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char err[512];

	if (strcmp(method, "PUT") == 0) {
		int r;

		/* linear in the upload (attest_policy.c), and at most two at once */
		if (atomic_fetch_add(&g.policy_checks, 1) >= POLICY_CHECKS_MAX) {
			atomic_fetch_sub(&g.policy_checks, 1);
			return error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "two policy uploads are being "
				     "checked already: retry");
		}
		r = load_policy((const uint8_t *)body, len, &p, &d);
		atomic_fetch_sub(&g.policy_checks, 1);
		if (r < 0)
			return error(c, r == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_BAD_REQUEST,
				     d.msg);
		vg_refpolicy_free(p);
		pthread_mutex_lock(&g.lock);
		if (vg_store_policy_put(g.store, name, body, len, &d) < 0) {
			ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
		} else {
			g.policy_gen++;
			policy_forget(name);
			ret = reply(c, MHD_HTTP_OK, json_object_new_object());
		}
		pthread_mutex_unlock(&g.lock);
		return ret;
	}
	if (strcmp(method, "GET") == 0) {
		char *json = NULL;

		pthread_mutex_lock(&g.lock);
		p = policy_lookup(name, err, sizeof(err));
		if (p && vg_refpolicy_to_json(p, &json) > 0) {
			json_object *o = json_tokener_parse(json);

			ret = o ? reply(c, MHD_HTTP_OK, o) : error(c, 500, "policy serialisation");
			err[0] = 0;
		} else {
			ret = error(c, MHD_HTTP_NOT_FOUND, err);
		}
		pthread_mutex_unlock(&g.lock);
		free(json);
		return ret;
	}
	return error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or PUT");
}

struct upload {
	char *buf;
	size_t len, cap;
	bool started;			/* the headers were seen */
	bool answered;			/* refused before the body (401, 403, 400, 413) */
	int path_err;			/* vg_api_path_decode of the URI as sent */
	char path[VG_API_PATH_MAX];	/* ... or its message */
};

/*
 * MHD_OPTION_URI_LOG_CALLBACK: the URI as the client sent it, before
 * MHD's own decoding (which turns "%00" into a NUL that ends the string).
 * Its return value is the request's *con_cls.
 */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct upload *u = calloc(1, sizeof(*u));

	(void)cls;
	(void)c;
	if (u)
		u->path_err = http_path_decode(uri, u->path, sizeof(u->path));
	return u;
}

/*
 * Who may do this: a GET needs read, anything else admin. A client
 * certificate from --api-client-ca is admin; else a bearer token.
 * Return: MHD_YES (allowed: *@ok set) or the queued refusal.
 */
static enum MHD_Result authorize(struct MHD_Connection *c, const char *method, bool *ok)
{
	unsigned int need = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ?
			    VG_AUTH_READ : VG_AUTH_ADMIN;
	char id[VG_AUTH_ID_LEN + 1];
	int role;

	*ok = false;
	if (g.no_auth) {
		*ok = true;
		return MHD_YES;
	}
	role = 0;
	if (g.api_client_ca && http_client_cert_ok(c)) {
		/* the handshake trusted both CAs: which one says the role */
		if (http_client_cert_from(c, g.admin_ca))
			role = VG_AUTH_ADMIN;
		else if (http_client_cert_from(c, g.read_ca))
			role = VG_AUTH_READ;
	}
	if (!role) {
		pthread_rwlock_rdlock(&g.auth_lock);
		role = http_auth_role(c, g.auth, id);
		pthread_rwlock_unlock(&g.auth_lock);
	}
	if (role == -ENOKEY)
		return http_auth_refuse(c, MHD_HTTP_UNAUTHORIZED, "vigil-verifier",
					"a credential is required: Authorization: Bearer TOKEN "
					"(vigil attest --token-file) or a client certificate");
	if (role < 0) {
		fprintf(stderr, "vigil-verifier: refused %s%s\n", role == -EBADMSG ? "a malformed token" :
			"token ", role == -EBADMSG ? "" : id);
		return http_auth_refuse(c, MHD_HTTP_UNAUTHORIZED, "vigil-verifier",
					"the bearer token is not valid here");
	}
	/* admin implies read */
	if (need == VG_AUTH_ADMIN && role != VG_AUTH_ADMIN)
		return http_auth_refuse(c, MHD_HTTP_FORBIDDEN, "vigil-verifier",
					"this credential may read, not change state (an admin "
					"token is needed)");
	*ok = true;
	return MHD_YES;
}

static enum MHD_Result answer(struct MHD_Connection *c, const char *method, struct upload *u);

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)url;			/* MHD's decoding: u->path is ours, strict */
	if (!u)
		return MHD_NO;
	if (!u->started) {
		bool ok;
		enum MHD_Result ar;

		u->started = true;
		/* all refused before a byte of the body is read (curl's Expect: 100-continue waits) */
		ar = authorize(c, method, &ok);
		if (!ok) {
			u->answered = true;
			return ar;
		}
		if (u->path_err < 0) {
			u->answered = true;
			return error(c, MHD_HTTP_BAD_REQUEST, u->path);
		}
		if (http_guard_body_too_big(c, g.max_body)) {
			u->answered = true;
			return error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
		}
		/* told to retry before its body is read, too (answer() checks again) */
		if (strcmp(method, "PUT") == 0 && strncmp(u->path, "/v1/policies/", 13) == 0 &&
		    atomic_load(&g.policy_checks) >= POLICY_CHECKS_MAX) {
			u->answered = true;
			return error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "two policy uploads are being "
				     "checked already: retry");
		}
		return MHD_YES;
	}
	if (*data_len) {
		if (u->answered || *data_len > g.max_body - u->len)
			return MHD_NO;		/* chunked past the limit: the connection is closed */
		if (grow((uint8_t **)&u->buf, &u->cap, u->len, *data_len) < 0)
			return MHD_NO;
		memcpy(u->buf + u->len, data, *data_len);
		u->len += *data_len;
		u->buf[u->len] = 0;
		*data_len = 0;
		return MHD_YES;
	}
	http_guard_busy(c);
	if (u->answered)
		return MHD_YES;			/* refusal already queued */
	/* counted, so that a shutdown knows whether it would wait on someone */
	atomic_fetch_add(&g.api_busy, 1);
	ret = answer(c, method, u);
	atomic_fetch_sub(&g.api_busy, 1);
	return ret;
}

static enum MHD_Result answer(struct MHD_Connection *c, const char *method, struct upload *u)
{
	struct vg_api_route rt;
	struct vg_diag d = { 0 };
	const char *body;
	int r;

	body = u->buf ? u->buf : "";
	r = vg_api_route(method, u->path, &rt, &d);
	if (r == -ENOENT)
		return error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
	if (r == -EBADMSG)
		return error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	if (r < 0)
		return error(c, MHD_HTTP_METHOD_NOT_ALLOWED, d.msg);
	if (rt.ep == VG_API_AGENTS) {
		if (strcmp(method, "POST") == 0)
			return h_register(c, body, u->len);
		json_object *o = json_object_new_object(), *arr = json_object_new_array();
		struct vg_diag ld = { 0 };
		int lr;

		pthread_mutex_lock(&g.lock);
		lr = vg_store_agent_list(g.store, list_cb, arr, &ld);
		pthread_mutex_unlock(&g.lock);
		json_object_object_add(o, "agents", arr);
		auth_mark(o);
		if (lr < 0) {
			json_object_put(o);
			return error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, ld.msg);
		}
		return reply(c, MHD_HTTP_OK, o);
	}
	if (rt.ep == VG_API_POLICY)
		return h_policy(c, method, rt.id, body, u->len);
	return h_agent(c, method, &rt, body, u->len);
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
		 enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls;
	(void)toe;
	if (u) {
		free(u->buf);
		free(u);
	}
	*con_cls = NULL;
	http_guard_rearm(c);
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		g.reload = 1;
	else
		g.stop = 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "db", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "ek-ca", required_argument, NULL, 'c' },
		{ "webhook", required_argument, NULL, 'w' },
		{ "on-fail", required_argument, NULL, 'x' },
		{ "bank", required_argument, NULL, 'b' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "agent-ca", required_argument, NULL, 'A' },
		{ "client-cert", required_argument, NULL, 'C' },
		{ "client-key", required_argument, NULL, 'K' },
		{ "api-cert", required_argument, NULL, 'P' },
		{ "api-key", required_argument, NULL, 'Q' },
		{ "api-client-ca", required_argument, NULL, 'R' },
		{ "api-read-client-ca", required_argument, NULL, 'r' },
		{ "api-timeout", required_argument, NULL, 'T' },
		{ "api-max-conn", required_argument, NULL, 'N' },
		{ "max-body", required_argument, NULL, 'M' },
		{ "agent-timeout", required_argument, NULL, 'U' },
		{ "db-timeout", required_argument, NULL, 'D' },
		{ "max-log", required_argument, NULL, 'G' },
		{ "policy-key", required_argument, NULL, 'Y' },
		{ "auth-tokens", required_argument, NULL, 'a' },
		{ "create-token", required_argument, NULL, 'k' },
		{ "agent-token-file", required_argument, NULL, 'g' },
		{ "insecure-no-auth", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *listen = NULL, *db = NULL, *api_cert = NULL, *api_key = NULL, *api_ca = NULL;
	const char *tokens = NULL, *create_role = NULL, *agent_token_file = NULL, *read_ca = NULL;
	char *cert_pem = NULL, *key_pem = NULL, *ca_pem = NULL;
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	struct http_guard *guard = NULL;
	struct vg_diag dg = { 0 };
	struct sigaction act = { .sa_handler = on_signal };
	unsigned int api_timeout = 10, api_max_conn = 64, db_timeout = 10;
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	int c, b;

	g.bank = VG_HASH_SHA256;
	g.mask = 1u << VG_ATTEST_PCR_IMA;
	g.interval_ms = 2000;
	g.agent_timeout = 30;
	g.max_log = 64u << 20;
	g.max_body = 32u << 20;
	while ((c = getopt_long(argc, argv, "L:d:i:c:w:x:b:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': listen = optarg; break;
		case 'd': db = optarg; break;
		case 'i': g.interval_ms = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'c': g.ek_ca = optarg; break;
		case 'w': g.webhook = optarg; break;
		case 'x': g.on_fail = optarg; break;
		case 'b':
			b = vg_hash_by_name(optarg);
			if (b < 0 || !vg_attest_tpm_alg((unsigned int)b)) {
				fprintf(stderr, "vigil-verifier: --bank %s: unknown\n", optarg);
				return 2;
			}
			g.bank = (unsigned int)b;
			break;
		case 'p': {
			char *s = optarg, *end;

			g.mask = 0;
			while (*s) {
				unsigned long n = strtoul(s, &end, 10);

				if (end == s || n >= 24) {
					fprintf(stderr, "vigil-verifier: --pcrs %s\n", optarg);
					return 2;
				}
				g.mask |= 1u << n;
				s = *end == ',' ? end + 1 : end;
			}
			break;
		}
		case 'A': g.agent_ca = optarg; break;
		case 'C': g.client_cert = optarg; break;
		case 'K': g.client_key = optarg; break;
		case 'P': api_cert = optarg; break;
		case 'Q': api_key = optarg; break;
		case 'R': api_ca = optarg; break;
		case 'r': read_ca = optarg; break;
		case 'T':
		case 'N':
		case 'U':
		case 'D':
		case 'M':
		case 'G': {
			char *end;
			unsigned long long n = strtoull(optarg, &end, 10);

			if (*end == 'K' || *end == 'k')
				n <<= 10, end++;
			else if (*end == 'M' || *end == 'm')
				n <<= 20, end++;
			if (end == optarg || *end || *optarg == '-' || n == 0 ||
			    (c != 'M' && c != 'G' && n > 86400) || n > (1ull << 32)) {
				fprintf(stderr, "vigil-verifier: %s: a positive number is needed\n", optarg);
				return 2;
			}
			if (c == 'T')
				api_timeout = (unsigned int)n;
			else if (c == 'N')
				api_max_conn = (unsigned int)n;
			else if (c == 'U')
				g.agent_timeout = (unsigned int)n;
			else if (c == 'D')
				db_timeout = (unsigned int)n;
			else if (c == 'M')
				g.max_body = (size_t)n;
			else
				g.max_log = (size_t)n;
			break;
		}
		case 'Y': {
			struct vg_diag kd = { 0 };
			char *pem = http_slurp(optarg);
			int kr;

			if (!g.policy_keys && vg_dsse_keys_new(&g.policy_keys) < 0)
				return 2;
			kr = pem ? vg_dsse_keys_add(g.policy_keys, (const uint8_t *)pem, strlen(pem), &kd) :
				   vg_diag_set(&kd, -errno, "%s", errno == EFBIG ? "larger than 1 MiB" :
							  errno == EINVAL ? "not text (a NUL byte)" :
							  strerror(errno));
			free(pem);
			if (kr < 0) {
				fprintf(stderr, "vigil-verifier: %s: %s\n", optarg, kd.msg);
				return 2;
			}
			break;
		}
		case 'a': tokens = optarg; break;
		case 'k': create_role = optarg; break;
		case 'g': agent_token_file = optarg; break;
		case 'I': g.no_auth = true; break;
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	if (create_role) {
		/* vigil-verifier --create-token ROLE OUT [--auth-tokens FILE]: no daemon */
		if (optind != argc - 1) {
			fprintf(stderr, "vigil-verifier: --create-token ROLE OUT: one OUT file\n");
			return 2;
		}
		if (strcmp(create_role, "verifier") == 0 && !tokens) {
			fprintf(stderr, "vigil-verifier: --create-token verifier: name the agents' token "
				"list with --auth-tokens FILE (not the verifier's own)\n");
			return 2;
		}
		return http_auth_create_token("vigil-verifier", create_role,
					      VG_AUTH_ADMIN | VG_AUTH_READ | VG_AUTH_VERIFIER,
					      argv[optind], tokens ? tokens : VERIFIER_TOKENS);
	}
	if (optind != argc) {
		fprintf(stderr, "vigil-verifier: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (g.no_auth && (tokens || api_ca || read_ca)) {
		fprintf(stderr, "vigil-verifier: --insecure-no-auth excludes --auth-tokens and "
			"--api-client-ca\n");
		return 2;
	}
	if (!g.no_auth) {
		char err[512];
		int ar = http_auth_load(tokens ? tokens : VERIFIER_TOKENS, VG_AUTH_ADMIN | VG_AUTH_READ,
					&g.auth, err, sizeof(err));

		if (ar < 0 && (ar != -ENOENT || tokens || !(api_ca || read_ca))) {
			fprintf(stderr, "vigil-verifier: %s\n", err);
			if (ar == -ENOENT)
				fprintf(stderr, "vigil-verifier: every API route needs a credential: "
					"create the first admin token with\n"
					"  vigil-verifier --create-token admin FILE [--auth-tokens %s]\n"
					"or give --api-client-ca (client certificates); for tests only, "
					"--insecure-no-auth\n", tokens ? tokens : VERIFIER_TOKENS);
			return 2;
		}
		g.auth_path = tokens ? tokens : VERIFIER_TOKENS;
		if (!api_ca && !read_ca && !vg_auth_count(g.auth)) {
			fprintf(stderr, "vigil-verifier: %s lists no token and there is no "
				"--api-client-ca: nobody could use the API\n",
				tokens ? tokens : VERIFIER_TOKENS);
			vg_auth_free(g.auth);
			return 2;
		}
	}
	if (agent_token_file) {
		struct vg_diag td = { 0 };

		if (vg_auth_token_read(agent_token_file, g.agent_token, &td) < 0) {
			fprintf(stderr, "vigil-verifier: %s: %s\n", agent_token_file, td.msg);
			vg_auth_free(g.auth);
			return 2;
		}
	}
	if (!!g.client_cert != !!g.client_key || !!api_cert != !!api_key ||
	    ((api_ca || read_ca) && !api_cert)) {
		fprintf(stderr, "vigil-verifier: --client-cert/--client-key and --api-cert/--api-key go "
			"together; --api-client-ca and --api-read-client-ca need --api-cert\n");
		return 2;
	}
	if (api_cert && (!(cert_pem = http_slurp(api_cert)) || !(key_pem = http_slurp(api_key)) ||
			 (api_ca && !(ca_pem = http_slurp(api_ca))))) {
		fprintf(stderr, "vigil-verifier: cannot read the API certificate, key or CA\n");
		return 2;
	}
	if (read_ca) {
		/* the handshake trusts both CAs; http_client_cert_from tells them apart */
		char *rp = http_slurp(read_ca), *both;
		int r = rp ? 0 : -EBADMSG;

		if (!r && ca_pem && (r = http_ca_new(ca_pem, &g.admin_ca)) == 0) {
			both = malloc(strlen(ca_pem) + strlen(rp) + 2);
			if (both)
				sprintf(both, "%s\n%s", ca_pem, rp);
			free(ca_pem);
			ca_pem = both;
			r = both ? 0 : -ENOMEM;
		} else if (!r) {
			ca_pem = strdup(rp);
			r = ca_pem ? 0 : -ENOMEM;
		}
		if (!r)
			r = http_ca_new(rp, &g.read_ca);
		free(rp);
		if (r < 0) {
			fprintf(stderr, "vigil-verifier: %s: cannot read a PEM CA certificate from it\n",
				read_ca);
			return 2;
		}
	} else if (ca_pem && http_ca_new(ca_pem, &g.admin_ca) < 0) {
		fprintf(stderr, "vigil-verifier: %s: cannot read a PEM CA certificate from it\n", api_ca);
		return 2;
	}
	g.api_client_ca = ca_pem != NULL;
	if (!listen || !db || http_parse_listen(listen, &sa) < 0 || !g.mask) {
		fprintf(stderr, "vigil-verifier: --listen ADDR:PORT and --db URL are required\n");
		return 2;
	}
	if (key_pem && vg_privsep_key_start(key_pem, cert_pem, (char *)db, &dg) < 0) {
		fprintf(stderr, "vigil-verifier: %s\n", dg.msg);
		return 2;
	}
	if (vg_privsep_store_open((char *)db, &g.store, &dg) < 0) {	/* privsep.h */
		fprintf(stderr, "vigil-verifier: %s\n", dg.msg);
		return 2;
	}
	vg_store_set_timeout(g.store, db_timeout * 1000);
	if ((g.on_fail && vg_privsep_hook_start(g.on_fail, &dg) < 0) ||
	    vg_privsep_sandbox(db, (const char *[]){ g.ek_ca, g.agent_ca, g.client_cert,
			       g.client_key, g.auth_path }, 5, &dg) < 0) {
		fprintf(stderr, "vigil-verifier: %s\n", dg.msg);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGHUP, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_guard_start(api_timeout, &guard) < 0) {
		fprintf(stderr, "vigil-verifier: cannot start the request reaper\n");
		return 2;
	}
	if (cert_pem)
		flags |= MHD_USE_TLS;
	/*
	 * Four threads: a registration waiting on a slow agent does not hold up
	 * the API. Connections: --api-max-conn per client address, 1024 in all;
	 * idle ones closed after --api-timeout, and incomplete requests by the
	 * guard at the same deadline; 16 KiB of headers.
	 */
	{
		struct MHD_OptionItem tls[] = {
			{ MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)vg_privsep_key_cert },	/* keyproc.c */
			{ ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, ca_pem },
			{ MHD_OPTION_END, 0, NULL },
		};

		if (!cert_pem)
			tls[0].option = MHD_OPTION_END;
		d = MHD_start_daemon(flags, 0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				     MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL,
				     MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, guard,
				     MHD_OPTION_THREAD_POOL_SIZE, 4u,
				     MHD_OPTION_CONNECTION_TIMEOUT, api_timeout,
				     MHD_OPTION_CONNECTION_LIMIT, 1024u,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, api_max_conn,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16u << 10),
				     MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	}
	if (!d) {
		fprintf(stderr, "vigil-verifier: cannot listen on %s\n", listen);
		return 2;
	}
	{
		char safe[512];

		vg_store_url_scrub(db, safe, sizeof(safe));
		fprintf(stderr, "vigil-verifier: listening on %s, store %s\n", listen, safe);
		if (g.no_auth)
			fprintf(stderr, "vigil-verifier: WARNING: --insecure-no-auth: the API has NO "
				"AUTHENTICATION; anyone who reaches %s can delete agents, clear their "
				"policies and turn a failed host back to trusted (tests only)\n", listen);
		else
			fprintf(stderr, "vigil-verifier: API credentials: %zu token(s)%s%s\n",
				vg_auth_count(g.auth), g.admin_ca ?
				", client certificates from --api-client-ca (admin)" : "",
				g.read_ca ? ", from --api-read-client-ca (read)" : "");
	}
	loop();
	/*
	 * Rounds end at once (libcurl's progress callback sees g.stop), so do
	 * registrations waiting on an agent; an answer being computed (a large
	 * policy parsed) gets STOP_GRACE_MS. Past that we go without it:
	 * nothing half-written survives (the store's transactions), and
	 * MHD_stop_daemon would wait for the handler.
	 */
	for (int w = 0; w < STOP_GRACE_MS / 20 &&
	     (atomic_load(&g.api_busy) || rounds_in_flight()); w++)
		usleep(20000);
	if (atomic_load(&g.api_busy) || rounds_in_flight()) {
		fprintf(stderr, "vigil-verifier: stopping with %d request(s) and %zu round(s) still "
			"running\n", atomic_load(&g.api_busy), rounds_in_flight());
		_exit(0);
	}
	MHD_stop_daemon(d);
	http_guard_stop(guard);
	while (g.policies) {
		struct pcache *n = g.policies->next;

		pcache_free(g.policies);
		g.policies = n;
	}
	vg_store_close(g.store);
	vg_dsse_keys_free(g.policy_keys);
	vg_auth_free(g.auth);
	http_ca_free(g.admin_ca);
	http_ca_free(g.read_ca);
	okc_free();
	OPENSSL_cleanse(g.agent_token, sizeof(g.agent_token));
	curl_global_cleanup();
	if (key_pem)
		OPENSSL_cleanse(key_pem, strlen(key_pem));
	free(cert_pem);
	free(key_pem);
	free(ca_pem);
	return 0;
}
