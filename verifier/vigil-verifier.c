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
 * The API is HTTP on the address given, or HTTPS with --api-cert/--api-key;
 * with --api-client-ca only operators holding a certificate from that CA
 * get an answer. Agents are reached over HTTP or HTTPS (--agent-ca), with
 * our client certificate for mutual TLS (--client-cert/--client-key).
 *
 * Threads: libmicrohttpd's one internal thread serves the API (and runs
 * registrations); the main thread runs the attestation loop. One mutex
 * guards the store and the policy cache. A failed agent is not polled
 * again until an operator reactivates it or assigns a policy (Keylime's
 * default); an unreachable one is retried every round.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
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
#include "vigil/store.h"

#define BODY_MAX (256u << 20)
#define HISTORY_MAX 100

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
	bool api_need_client_cert;	/* --api-client-ca: operators must present a certificate */
	unsigned int bank;
	uint32_t mask;
	unsigned int interval_ms;
	volatile sig_atomic_t stop;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char help[] =
	"usage: vigil-verifier --listen ADDR:PORT --db PATH [--interval MS] [--ek-ca FILE]\n"
	"                      [--webhook URL] [--on-fail CMD] [--bank ALGO] [--pcrs N,...]\n"
	"Attest vigil-agents at an interval; REST API for `vigil attest`.\n"
	"  -L, --listen ADDR:PORT  API address (e.g. 127.0.0.1:8881)\n"
	"  -d, --db URL            store: sqlite:PATH or PATH (PostgreSQL: not built)\n"
	"  -i, --interval MS       time between rounds per agent (default 2000)\n"
	"  -c, --ek-ca FILE        PEM roots/intermediates EK certificates must chain to;\n"
	"                          without it the certificate must still match the EK\n"
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
	"      --api-client-ca FILE  operators must present a certificate chaining to it\n";

static int64_t now(void)
{
	return (int64_t)time(NULL);
}

/* ---- HTTP client (to agents and webhooks) ---- */

struct buf {
	uint8_t *p;
	size_t len;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t add = size * n;
	uint8_t *nb;

	if (b->len + add > BODY_MAX)
		return 0;
	nb = realloc(b->p, b->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->len, p, add);
	b->p = nb;
	b->len += add;
	b->p[b->len] = 0;
	return add;
}

/* Return: HTTP status, or -1 on transport failure (@err says). @agent: use the agent TLS settings. */
static long fetch_tls(const char *url, const char *body, bool agent, struct buf *out, char *err,
		      size_t errlen);

static long fetch(const char *url, const char *body, struct buf *out, char *err, size_t errlen)
{
	return fetch_tls(url, body, true, out, err, errlen);
}

static long fetch_tls(const char *url, const char *body, bool agent, struct buf *out, char *err,
		      size_t errlen)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	long code = -1;
	CURLcode r;

	memset(out, 0, sizeof(*out));
	if (!c) {
		snprintf(err, errlen, "libcurl init");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (agent && g.agent_ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, g.agent_ca);
	if (agent && g.client_cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, g.client_cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, g.client_key);
	}
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	r = curl_easy_perform(c);
	if (r != CURLE_OK)
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

static json_object *parse(const struct buf *b)
{
	json_tokener *t;
	json_object *o;

	if (!b->p || b->len > INT32_MAX)
		return NULL;
	t = json_tokener_new();
	if (!t)
		return NULL;
	o = json_tokener_parse_ex(t, (const char *)b->p, (int)b->len);
	json_tokener_free(t);
	return o;
}

static long jb64(json_object *o, const char *key, uint8_t **ret)
{
	json_object *v;

	*ret = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return -EBADMSG;
	return vg_attest_b64_decode(json_object_get_string(v), ret);
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* ---- policies ---- */

/* Under g.lock. Return: the parsed policy (cached), NULL if none/unparsable (*@err). */
static struct vg_refpolicy *policy_lookup(const char *name, char *err, size_t errlen)
{
	struct vg_diag d = { 0 };
	struct pcache *c;
	char *doc;
	size_t len;
	int r;

	for (c = g.policies; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c->p;
	r = vg_store_policy_get(g.store, name, &doc, &len, &d);
	if (r < 0) {
		snprintf(err, errlen, "policy %s: %s", name, r == -ENOENT ? "not found" : d.msg);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		free(doc);
		return NULL;
	}
	r = vg_refpolicy_load((const uint8_t *)doc, len, &c->p, &d);
	free(doc);
	if (r < 0) {
		snprintf(err, errlen, "policy %s: %s", name, d.msg);
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
		if (fetch_tls(g.webhook, json_object_to_json_string(o), false, &b, err, sizeof(err)) < 0)
			fprintf(stderr, "vigil-verifier: webhook: %s\n", err);
		free(b.p);
		json_object_put(o);
	}
	if (g.on_fail) {
		pid_t pid = fork();

		if (pid == 0) {
			setenv("VIGIL_AGENT", a->id, 1);
			setenv("VIGIL_FAILURE", fid, 1);
			setenv("VIGIL_MESSAGE", v->msg, 1);
			setenv("VIGIL_PATH", v->path, 1);
			execl("/bin/sh", "sh", "-c", g.on_fail, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

static void record(struct vg_store_agent *a, const struct vg_attest_verdict *v)
{
	struct vg_store_verdict h = { .time = now(), .fail = v->fail, .entry = v->entry };
	struct vg_diag d = { 0 };

	snprintf(h.path, sizeof(h.path), "%s", v->path);
	snprintf(h.digest, sizeof(h.digest), "%s", v->digest);
	snprintf(h.msg, sizeof(h.msg), "%s", v->msg);
	if (vg_store_verdict_add(g.store, a->id, &h, &d) < 0)
		fprintf(stderr, "vigil-verifier: %s\n", d.msg);
	if (v->fail != VG_AF_REBOOT)
		notify(a, &h);
}

/* ---- one attestation round ---- */

/* Fills @v on failure. Return: 0 trusted, 1 not, -1 communication failure (@v msg). */
static int round_evidence(const struct vg_store_agent *a, const struct vg_refpolicy *pol,
			  struct vg_attest_state *st, bool *reboot, struct vg_attest_verdict *v)
{
	uint8_t nonce[20], *attest = NULL, *sig = NULL;
	char url[1024], nh[41], err[512];
	struct vg_attest_request req = { nonce, sizeof(nonce), a->bank, a->mask };
	struct vg_attest_evidence ev = { 0 };
	struct vg_attest_ak *ak = NULL;
	struct vg_tpms_attest uq;
	struct vg_diag d = { 0 };
	struct buf qb = { 0 }, lb = { 0 };
	json_object *o = NULL, *pcrs;
	long al, sl, code;
	int r = 1;

	if (RAND_bytes(nonce, sizeof(nonce)) != 1) {
		snprintf(v->msg, sizeof(v->msg), "no randomness");
		return -1;
	}
	vg_hex_encode(nonce, sizeof(nonce), nh);
	snprintf(url, sizeof(url), "%s/v1/quote?nonce=%s&bank=%s&mask=%" PRIx32, a->url, nh,
		 vg_hash_name(a->bank), a->mask);
	code = fetch(url, NULL, &qb, err, sizeof(err));
	if (code < 0 || code >= 500) {
		vg_attest_fail(v, VG_AF_COMM, "quote: %s", code < 0 ? err : (char *)qb.p);
		r = -1;
		goto out;
	}
	o = parse(&qb);
	al = jb64(o, "attest", &attest);
	sl = jb64(o, "sig", &sig);
	if (code != 200 || al <= 0 || sl <= 0 || !json_object_object_get_ex(o, "pcrs", &pcrs) ||
	    !json_object_is_type(pcrs, json_type_object)) {
		vg_attest_fail(v, VG_AF_MALFORMED, "quote answer (HTTP %ld) is not a quote", code);
		goto out;
	}
	ev.attest = attest;
	ev.attest_len = (size_t)al;
	ev.sig = sig;
	ev.sig_len = (size_t)sl;
	json_object_object_foreach(pcrs, k, val) {
		unsigned long i = strtoul(k, NULL, 10);
		struct vg_digest *dg;

		if (i >= 24 || !json_object_is_type(val, json_type_string))
			continue;
		dg = &ev.pcrs.v[a->bank][i];
		if (vg_hex_decode(json_object_get_string(val), dg->bytes, sizeof(dg->bytes)) !=
		    (int)vg_hash_size(a->bank))
			continue;
		dg->algo = (uint8_t)a->bank;
		dg->len = (uint8_t)vg_hash_size(a->bank);
		ev.pcrs.have[a->bank] |= 1u << i;
	}
	/* where the list must start: 0 after a reboot (the signature check decides later) */
	ev.log_offset = st->log.offset;
	if (vg_attest_quote_decode(attest, (size_t)al, &uq, NULL) == 0 && st->clock.valid &&
	    uq.reset_count > st->clock.reset_count)
		ev.log_offset = 0;
	if (a->mask & (1u << VG_ATTEST_PCR_IMA)) {
		snprintf(url, sizeof(url), "%s/v1/log?offset=%" PRIu64, a->url, ev.log_offset);
		code = fetch(url, NULL, &lb, err, sizeof(err));
		if (code != 200) {
			vg_attest_fail(v, VG_AF_COMM, "log: %s", code < 0 ? err : "HTTP error");
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
	r = vg_attest_evidence_check(ak, pol, &req, &ev, st, reboot, v);
	if (r < 0) {
		vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(-r));
		r = -1;
	}
out:
	vg_attest_ak_free(ak);
	json_object_put(o);
	free(attest);
	free(sig);
	free(qb.p);
	free(lb.p);
	return r;
}

static void attest_one(const char *id)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
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
	pthread_mutex_lock(&g.lock);
	/* the agent may have been removed or changed meanwhile */
	{
		struct vg_store_agent *cur = malloc(sizeof(*cur));

		if (!cur || vg_store_agent_get(g.store, id, cur, &d) < 0 ||
		    memcmp(cur->ak_pub, a->ak_pub, a->ak_pub_len) != 0 ||
		    strcmp(cur->policy, a->policy) != 0 || cur->state == VG_AGENT_FAILED ||
		    memcmp(&cur->st, &a->st, sizeof(st)) != 0) {
			free(cur);
			goto unlock;
		}
		free(cur);
	}
	a->last_seen = now();
	if (r == 0) {
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
			record(a, &rv);
		}
	} else if (r == 1) {
		a->state = VG_AGENT_FAILED;
		a->last_fail = v.fail;
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
		record(a, &v);
		fprintf(stderr, "vigil-verifier: %s FAILED %s: %s\n", a->id, vg_attest_fail_id(v.fail),
			v.msg);
	} else {
		if (a->comm_errors++ == 0)
			record(a, &v);
		a->state = VG_AGENT_UNREACHABLE;
		a->last_fail = VG_AF_COMM;
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
	}
	if (vg_store_agent_put(g.store, a, &d) < 0)
		fprintf(stderr, "vigil-verifier: %s\n", d.msg);
unlock:
	pthread_mutex_unlock(&g.lock);
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
	char (*ids)[128];
	size_t n, cap;
};

static int collect(void *arg, const struct vg_store_agent *a)
{
	struct idlist *l = arg;

	if (a->state == VG_AGENT_FAILED)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char (*n)[128] = realloc(l->ids, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->ids = n;
		l->cap = cap;
	}
	memcpy(l->ids[l->n++], a->id, 128);
	return 0;
}

static void loop(void)
{
	while (!g.stop) {
		struct idlist l = { 0 };
		struct timespec t0, t1;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		pthread_mutex_lock(&g.lock);
		vg_store_agent_list(g.store, collect, &l, NULL);
		pthread_mutex_unlock(&g.lock);
		for (size_t i = 0; i < l.n && !g.stop; i++)
			attest_one(l.ids[i]);
		free(l.ids);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		for (long left = (long)g.interval_ms - ms; left > 0 && !g.stop; left -= 50)
			usleep(left > 50 ? 50000 : (useconds_t)left * 1000);
	}
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

static bool id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n >= 128)
		return false;
	for (const char *c = id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return false;
	return true;
}

/* Registration: identity, EK certificate, AK, credential activation. */
static enum MHD_Result h_register(struct MHD_Connection *c, const char *body, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *req = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL, *idj = NULL;
	const char *id = jstr(req, "id"), *url = jstr(req, "url"), *pol = jstr(req, "policy");
	struct vg_store_agent *a = calloc(1, sizeof(*a)), *old = calloc(1, sizeof(*old));
	uint8_t *ek = NULL, *cert = NULL, *akp = NULL, secret[32], idobj[512], es[512], mac[32];
	size_t idl = sizeof(idobj), esl = sizeof(es), nl;
	long ekl, cl, akl, code;
	unsigned int ml = 0;
	struct vg_attest_verdict v;
	struct vg_attest_ak *ak = NULL;
	struct vg_diag d = { 0 };
	struct buf b = { 0 };
	enum MHD_Result ret;
	char u[1024], err[512], *s1 = NULL, *s2 = NULL, want[65];
	const uint8_t *name;
	const char *proof;
	int r;

	json_tokener_free(tok);
	vg_attest_verdict_init(&v);
	if (!a || !old) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		goto out;
	}
	if (!id || !url || !id_ok(id) || strlen(url) >= sizeof(a->url) ||
	    (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
	    (pol && strlen(pol) >= sizeof(a->policy))) {
		ret = error(c, MHD_HTTP_BAD_REQUEST, "register: id ([A-Za-z0-9._-]) and url (http://) needed");
		goto out;
	}
	snprintf(u, sizeof(u), "%s/v1/identity", url);
	code = fetch(u, NULL, &b, err, sizeof(err));
	if (code != 200) {
		ret = failure(c, MHD_HTTP_BAD_GATEWAY, VG_AF_COMM, code < 0 ? err : "identity: HTTP error");
		goto out;
	}
	idj = parse(&b);
	ekl = jb64(idj, "ek_pub", &ek);
	cl = jb64(idj, "ek_cert", &cert);
	akl = jb64(idj, "ak_pub", &akp);
	if (ekl <= 0 || cl < 0 || akl <= 0 || (size_t)ekl > sizeof(a->ek_pub) ||
	    (size_t)cl > sizeof(a->ek_cert) || (size_t)akl > sizeof(a->ak_pub)) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_MALFORMED, "identity answer malformed");
		goto out;
	}
	/* a known id keeps its EK */
	pthread_mutex_lock(&g.lock);
	r = vg_store_agent_get(g.store, id, old, &d);
	pthread_mutex_unlock(&g.lock);
	if (r == 0 && (old->ek_pub_len != (size_t)ekl || memcmp(old->ek_pub, ek, (size_t)ekl) != 0)) {
		ret = failure(c, MHD_HTTP_CONFLICT, VG_AF_EK_CHANGED, "agent id is registered with "
			      "another EK: remove it first");
		goto out;
	}
	if (cl == 0) {
		if (g.ek_ca) {
			ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_EK_CERT, "the TPM has no EK "
				      "certificate and --ek-ca requires one");
			goto out;
		}
	} else if (vg_attest_ek_check(ek, (size_t)ekl, cert, (size_t)cl, g.ek_ca, &v) != 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_EK_CERT, v.msg);
		goto out;
	}
	if (vg_attest_ak_load(akp, (size_t)akl, &ak, &d) < 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_AK, d.msg);
		goto out;
	}
	name = vg_attest_ak_name(ak, &nl);
	if (RAND_bytes(secret, sizeof(secret)) != 1 ||
	    vg_attest_make_credential(ek, (size_t)ekl, name, nl, secret, sizeof(secret), idobj, &idl,
				      es, &esl, &d) < 0) {
		ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_EK_CERT, d.msg[0] ? d.msg : "MakeCredential");
		goto out;
	}
	{
		json_object *ar = json_object_new_object(), *ans;

		vg_attest_b64_encode(idobj, idl, &s1);
		vg_attest_b64_encode(es, esl, &s2);
		json_object_object_add(ar, "id_object", json_object_new_string(s1 ? s1 : ""));
		json_object_object_add(ar, "enc_secret", json_object_new_string(s2 ? s2 : ""));
		snprintf(u, sizeof(u), "%s/v1/activate", url);
		free(b.p);
		code = fetch(u, json_object_to_json_string(ar), &b, err, sizeof(err));
		json_object_put(ar);
		ans = code == 200 ? parse(&b) : NULL;
		proof = jstr(ans, "proof");
		HMAC(EVP_sha256(), secret, sizeof(secret), (const uint8_t *)id, strlen(id), mac, &ml);
		OPENSSL_cleanse(secret, sizeof(secret));
		vg_hex_encode(mac, ml, want);
		if (!proof || strlen(proof) != strlen(want) ||
		    CRYPTO_memcmp(proof, want, strlen(want)) != 0) {
			snprintf(err, sizeof(err), "the agent did not prove the AK is in the TPM of "
				 "this EK (ActivateCredential: %s)",
				 proof ? "wrong answer" : (b.p ? (char *)b.p : "no answer"));
			json_object_put(ans);
			ret = failure(c, MHD_HTTP_FORBIDDEN, VG_AF_CREDENTIAL, err);
			goto out;
		}
		json_object_put(ans);
	}
	snprintf(a->id, sizeof(a->id), "%s", id);
	snprintf(a->url, sizeof(a->url), "%s", url);
	snprintf(a->policy, sizeof(a->policy), "%s", pol ? pol : "");
	memcpy(a->ek_pub, ek, (size_t)ekl);
	a->ek_pub_len = (size_t)ekl;
	memcpy(a->ek_cert, cert, (size_t)cl);
	a->ek_cert_len = (size_t)cl;
	memcpy(a->ak_pub, akp, (size_t)akl);
	a->ak_pub_len = (size_t)akl;
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
	json_object_put(req);
	json_object_put(idj);
	free(ek);
	free(cert);
	free(akp);
	free(s1);
	free(s2);
	free(b.p);
	free(a);
	free(old);
	return ret;
}

static enum MHD_Result h_agent(struct MHD_Connection *c, const char *method, const char *rest,
			       const char *body, size_t len)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	char id[128];
	const char *slash = strchr(rest, '/');
	const char *sub = slash ? slash + 1 : "";
	size_t il = slash ? (size_t)(slash - rest) : strlen(rest);
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	int r;

	if (!a)
		return MHD_NO;
	if (il == 0 || il >= sizeof(id)) {
		free(a);
		return error(c, MHD_HTTP_NOT_FOUND, "no such agent");
	}
	memcpy(id, rest, il);
	id[il] = 0;
	pthread_mutex_lock(&g.lock);
	r = vg_store_agent_get(g.store, id, a, &d);
	if (r == -ENOENT) {
		ret = error(c, MHD_HTTP_NOT_FOUND, "no such agent");
	} else if (r < 0) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
	} else if (strcmp(method, "GET") == 0 && !*sub) {
		ret = reply(c, MHD_HTTP_OK, agent_json(a));
	} else if (strcmp(method, "GET") == 0 && strcmp(sub, "history") == 0) {
		json_object *o = json_object_new_object(), *arr = json_object_new_array();

		vg_store_verdict_list(g.store, id, HISTORY_MAX, hist_cb, arr, &d);
		json_object_object_add(o, "id", json_object_new_string(id));
		json_object_object_add(o, "history", arr);
		ret = reply(c, MHD_HTTP_OK, o);
	} else if (strcmp(method, "DELETE") == 0 && !*sub) {
		vg_store_agent_del(g.store, id, &d);
		ret = reply(c, MHD_HTTP_OK, json_object_new_object());
	} else if (strcmp(method, "POST") == 0 && strcmp(sub, "reactivate") == 0) {
		a->state = VG_AGENT_REGISTERED;
		vg_store_agent_put(g.store, a, &d);
		ret = reply(c, MHD_HTTP_OK, agent_json(a));
	} else if (strcmp(method, "PUT") == 0 && strcmp(sub, "policy") == 0) {
		json_object *o = json_tokener_parse(body);
		const char *p = jstr(o, "policy");
		char err[512];

		if (!p || strlen(p) >= sizeof(a->policy) || (*p && !policy_lookup(p, err, sizeof(err)))) {
			ret = error(c, MHD_HTTP_BAD_REQUEST, p ? err : "policy: name needed");
		} else {
			snprintf(a->policy, sizeof(a->policy), "%s", p);
			a->state = VG_AGENT_REGISTERED;
			vg_attest_logstate_init(&a->st.log, a->bank);	/* judge the whole list */
			vg_store_agent_put(g.store, a, &d);
			ret = reply(c, MHD_HTTP_OK, agent_json(a));
		}
		json_object_put(o);
	} else {
		ret = error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
	}
	pthread_mutex_unlock(&g.lock);
	(void)len;
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

	if (!id_ok(name))
		return error(c, MHD_HTTP_BAD_REQUEST, "policy name: [A-Za-z0-9._-]");
	if (strcmp(method, "PUT") == 0) {
		if (vg_refpolicy_load((const uint8_t *)body, len, &p, &d) < 0)
			return error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		vg_refpolicy_free(p);
		pthread_mutex_lock(&g.lock);
		if (vg_store_policy_put(g.store, name, body, len, &d) < 0) {
			ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
		} else {
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
		} else {
			ret = error(c, MHD_HTTP_NOT_FOUND, err);
		}
		pthread_mutex_unlock(&g.lock);
		free(json);
		return ret;
	}
	return error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or PUT");
}

/* mutual TLS on the API: the operator's certificate chains to --api-client-ca */
static bool client_cert_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	unsigned int status = 0, n = 0;
	gnutls_session_t s;

	if (!ci || !ci->tls_session)
		return false;
	s = (gnutls_session_t)ci->tls_session;
	if (!gnutls_certificate_get_peers(s, &n) || n == 0)
		return false;
	return gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

struct upload {
	char *buf;
	size_t len;
	bool too_big;
};

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;
	const char *body;

	(void)cls;
	(void)version;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	if (*data_len) {
		if (u->len + *data_len > BODY_MAX) {
			u->too_big = true;
		} else {
			char *nb = realloc(u->buf, u->len + *data_len + 1);

			if (!nb)
				return MHD_NO;
			u->buf = nb;
			memcpy(u->buf + u->len, data, *data_len);
			u->len += *data_len;
			u->buf[u->len] = 0;
		}
		*data_len = 0;
		return MHD_YES;
	}
	if (u->too_big)
		return error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
	if (g.api_need_client_cert && !client_cert_ok(c))
		return error(c, MHD_HTTP_FORBIDDEN, "an operator certificate from the trusted CA is required");
	body = u->buf ? u->buf : "";
	if (strcmp(url, "/v1/agents") == 0 || strcmp(url, "/v1/agents/") == 0) {
		if (strcmp(method, "POST") == 0)
			return h_register(c, body, u->len);
		if (strcmp(method, "GET") == 0) {
			json_object *o = json_object_new_object(), *arr = json_object_new_array();

			pthread_mutex_lock(&g.lock);
			vg_store_agent_list(g.store, list_cb, arr, NULL);
			pthread_mutex_unlock(&g.lock);
			json_object_object_add(o, "agents", arr);
			return reply(c, MHD_HTTP_OK, o);
		}
		return error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST");
	}
	if (strncmp(url, "/v1/agents/", 11) == 0)
		return h_agent(c, method, url + 11, body, u->len);
	if (strncmp(url, "/v1/policies/", 13) == 0)
		return h_policy(c, method, url + 13, body, u->len);
	return error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
		 enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (u) {
		free(u->buf);
		free(u);
	}
	*con_cls = NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	g.stop = 1;
}

static int parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	unsigned long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	port = strtoul(colon + 1, NULL, 10);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (port == 0 || port > 65535 || inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -1;
	return 0;
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *listen = NULL, *db = NULL, *api_cert = NULL, *api_key = NULL, *api_ca = NULL;
	char *cert_pem = NULL, *key_pem = NULL, *ca_pem = NULL;
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	struct vg_diag dg = { 0 };
	struct sigaction act = { .sa_handler = on_signal };
	int c, b;

	g.bank = VG_HASH_SHA256;
	g.mask = 1u << VG_ATTEST_PCR_IMA;
	g.interval_ms = 2000;
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
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	if (!!g.client_cert != !!g.client_key || !!api_cert != !!api_key || (api_ca && !api_cert)) {
		fprintf(stderr, "vigil-verifier: --client-cert/--client-key and --api-cert/--api-key go "
			"together; --api-client-ca needs --api-cert\n");
		return 2;
	}
	if (api_cert && (!(cert_pem = slurp(api_cert)) || !(key_pem = slurp(api_key)) ||
			 (api_ca && !(ca_pem = slurp(api_ca))))) {
		fprintf(stderr, "vigil-verifier: cannot read the API certificate, key or CA\n");
		return 2;
	}
	g.api_need_client_cert = ca_pem != NULL;
	if (!listen || !db || parse_listen(listen, &sa) < 0 || !g.mask) {
		fprintf(stderr, "vigil-verifier: --listen ADDR:PORT and --db PATH are required\n");
		return 2;
	}
	if (vg_store_open(db, &g.store, &dg) < 0) {
		fprintf(stderr, "vigil-verifier: %s\n", dg.msg);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (cert_pem && ca_pem)
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_TLS,
				     0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				     MHD_OPTION_CONNECTION_TIMEOUT, 120u,
				     MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_HTTPS_MEM_KEY, key_pem,
				     MHD_OPTION_HTTPS_MEM_TRUST, ca_pem, MHD_OPTION_END);
	else if (cert_pem)
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_TLS,
				     0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				     MHD_OPTION_CONNECTION_TIMEOUT, 120u,
				     MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_HTTPS_MEM_KEY, key_pem,
				     MHD_OPTION_END);
	else
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
				     handler, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				     MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "vigil-verifier: cannot listen on %s\n", listen);
		return 2;
	}
	fprintf(stderr, "vigil-verifier: listening on %s, store %s\n", listen, db);
	loop();
	MHD_stop_daemon(d);
	while (g.policies) {
		struct pcache *n = g.policies->next;

		pcache_free(g.policies);
		g.policies = n;
	}
	vg_store_close(g.store);
	curl_global_cleanup();
	if (key_pem)
		OPENSSL_cleanse(key_pem, strlen(key_pem));
	free(cert_pem);
	free(key_pem);
	free(ca_pem);
	return 0;
}
