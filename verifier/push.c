// SPDX-License-Identifier: MIT
/*
 * push.c - push mode (docs/attest-push.md): an agent the verifier cannot
 * reach opens every connection itself. Four routes, each a function of
 * the request that returns the answer (rest.c sends it):
 *
 *   register  its identity; register.c's checks (the id's EK kept, the
 *             EK one id's, the credential one id's, EK certificate
 *             against --ek-ca, AK) and MakeCredential, answered with the
 *             activation request (202); an agent already registered with
 *             this AK gets its status (200)
 *   activate  the proof of ActivateCredential: stored as registered (the
 *             same checks again with the write), its url "push:" + the
 *             credential that registered it, to which it is bound from
 *             then on: the only id that credential may push for
 *   nonce     a challenge: a fresh nonce (single use, VF_PUSH_NONCE_MS,
 *             bound to the agent id and its credential), the bank and
 *             PCRs to quote, the list offset the verifier has judged to,
 *             whether to send the boot log, the interval
 *   evidence  quote + list increment + boot log, judged by round.c's
 *             round (vf_round_from) with a source that serves what was
 *             pushed instead of fetching it: the checks, failure ids,
 *             history and hooks are a pulled round's. When the round asks
 *             for what was not sent (another offset after a reboot, the
 *             boot log, PCRs 0-9), nothing is judged or stored: 409, and
 *             the next challenge asks for it.
 *
 * Also the staleness of push agents (from the scheduler's listing of the
 * store, scheduler.c's relist, every VF_LIST_MS): one not heard from within
 * --interval + VF_STALE_SLACK_MS is stale (its status, the metrics;
 * state.stale in its history and to the hooks once per episode). What it
 * keeps is in this verifier's memory (challenges, registrations between
 * their two steps, stale episodes): a pushing agent talks to one verifier.
 * It does not authenticate (rest.c names the credential).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "log.h"
#include "verifier.h"

#define PUSH_BUCKETS 256
#define PUSH_ENTS_MAX 65536		/* ids with a challenge or registration in memory */
#define PUSH_NONCE_LEN 20
#define PUSH_REGISTER_MS 60000		/* between the two steps of a registration */

enum {
	ST_OK = 200,
	ST_CREATED = 201,
	ST_ACCEPTED = 202,
	ST_BAD_REQUEST = 400,
	ST_FORBIDDEN = 403,
	ST_NOT_FOUND = 404,
	ST_CONFLICT = 409,
	ST_INTERNAL = 500,
	ST_UNAVAILABLE = 503,
};

/* Per agent id, under push->lock. */
struct push_ent {
	struct push_ent *next;
	char id[VG_API_ID_MAX];
	/* the challenge handed out, until used or replaced */
	bool issued;
	struct vg_api_challenge chal;
	int64_t issued_ms;
	char cred[VF_PUSH_CRED_MAX];
	bool busy;			/* a push of it is being judged */
	/* what the last push lacked: the next challenge asks for it */
	uint32_t want_mask;
	bool want_boot, want_offset;
	uint64_t offset;
	/* a registration between its two steps */
	struct vg_api_identity *idn;
	uint8_t mac[32];
	int64_t reg_ms;
	char reg_cred[VF_PUSH_CRED_MAX];
	/* stale: reported once per episode */
	bool stale;
	int64_t quiet_ms;		/* last seen failed: silence before it (and its reactivation) is not counted */
	int64_t pushed_ms;		/* the last push judged: when its challenge was asked for */
};

struct vf_push {
	pthread_mutex_t lock;
	struct push_ent *tab[PUSH_BUCKETS];
	size_t n;
	unsigned int stale;		/* agents stale at the last watch */
};

int vf_push_init(struct verifier *vf)
{
	struct vf_push *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		return -ENOMEM;
	}
	vf->push = p;
	return 0;
}

void vf_push_free(struct verifier *vf)
{
	struct vf_push *p = vf->push;

	if (!p)
		return;
	for (size_t i = 0; i < PUSH_BUCKETS; i++)
		while (p->tab[i]) {
			struct push_ent *n = p->tab[i]->next;

			if (p->tab[i]->idn)
				OPENSSL_clear_free(p->tab[i]->idn, sizeof(*p->tab[i]->idn));
			OPENSSL_cleanse(p->tab[i]->mac, sizeof(p->tab[i]->mac));
			free(p->tab[i]);
			p->tab[i] = n;
		}
	pthread_mutex_destroy(&p->lock);
	free(p);
	vf->push = NULL;
}

bool vf_push_agent(const struct vg_store_agent *a)
{
	return strncmp(a->url, VF_PUSH_URL, strlen(VF_PUSH_URL)) == 0;
}

/* Under the lock. Return: @id's entry, made if new and @make, NULL (none, no room). */
static struct push_ent *ent(struct vf_push *p, const char *id, bool make)
{
	uint64_t h = 1469598103934665603ull;
	struct push_ent **pp;

	for (const char *s = id; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	for (pp = &p->tab[h % PUSH_BUCKETS]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, id) == 0)
			return *pp;
	if (!make || p->n >= PUSH_ENTS_MAX || !(*pp = calloc(1, sizeof(**pp))))
		return NULL;
	snprintf((*pp)->id, sizeof((*pp)->id), "%s", id);
	p->n++;
	return *pp;
}

/*
 * The stored agent @id, pushing with credential @cred: into *@a.
 * Return: 0, or the HTTP status of the refusal (@ans).
 */
static unsigned int bound_agent(struct verifier *vf, const char *cred, const char *id,
				struct vg_store_agent *a, struct vf_answer *ans)
{
	struct vg_diag d = { 0 };
	int r;

	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, a, &d);
	vf_store_status(vf, r < 0 && r != -ENOENT ? d.msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	if (r == -ENOENT)
		return vf_answer_error(ans, ST_NOT_FOUND, "no such agent: register first "
				       "(POST /v1/push/ID/register)");
	if (r < 0)
		return vf_answer_error(ans, ST_INTERNAL, d.msg);
	/* bound to the credential that registered it: no agent pushes as another */
	if (!vf_push_agent(a) || strcmp(a->url + strlen(VF_PUSH_URL), cred) != 0)
		return vf_answer_error(ans, ST_FORBIDDEN, vf_push_agent(a) ?
				       "this agent id was registered with another credential" :
				       "this agent id is polled by the verifier, not pushed");
	return 0;
}

unsigned int vf_push_register(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans)
{
	struct vg_api_identity *idn = calloc(1, sizeof(*idn));
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct vg_store_agent *old = calloc(1, sizeof(*old));
	struct vg_diag d = { 0 };
	struct push_ent *e;
	uint8_t mac[32];
	char *ab = NULL;
	int r;

	ans->code = 0;
	if (!idn || !act || !old) {
		vf_answer_error(ans, ST_INTERNAL, "out of memory");
		goto out;
	}
	if (vg_api_identity_parse((const uint8_t *)body, len, idn, &d) < 0) {
		vf_answer_failure(ans, d.err == -ENOMEM ? ST_INTERNAL : ST_BAD_REQUEST,
				  VG_AF_MALFORMED, d.msg);
		goto out;
	}
	if (idn->id[0] && strcmp(idn->id, id) != 0) {
		vf_answer_error(ans, ST_CONFLICT, "the identity names another agent id than the path");
		goto out;
	}
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, old, &d);
	pthread_mutex_unlock(&vf->lock);
	if (r < 0 && r != -ENOENT) {
		vf_answer_error(ans, ST_INTERNAL, d.msg);
		goto out;
	}
	if (r == 0) {
		/* known: the same agent starting again, or nobody's business */
		if (bound_agent(vf, cred, id, old, ans))
			goto out;
		if (old->ak_pub_len != idn->ak_pub_len ||
		    memcmp(old->ak_pub, idn->ak_pub, idn->ak_pub_len) != 0 ||
		    old->ek_pub_len != idn->ek_pub_len ||
		    memcmp(old->ek_pub, idn->ek_pub, idn->ek_pub_len) != 0) {
			/* a new AK would start it over from entry 0, failed or not: the operator's call */
			vf_answer_failure(ans, ST_CONFLICT, VG_AF_AK, "agent id is registered with "
					  "another AK or EK: an operator must remove it first");
			goto out;
		}
		ans->code = ST_OK;
		ans->body = vf_json_status(vf, old);
		goto out;
	}
	if (vf_register_challenge(vf, id, idn, cred, act, mac, ans))
		goto out;
	if (vg_api_activate_build(act, &ab) < 0 || !(ans->body = json_tokener_parse(ab))) {
		vf_answer_error(ans, ST_INTERNAL, "out of memory");
		goto out;
	}
	pthread_mutex_lock(&vf->push->lock);
	e = ent(vf->push, id, true);
	if (e) {
		if (e->idn)
			OPENSSL_clear_free(e->idn, sizeof(*e->idn));
		e->idn = idn;
		idn = NULL;
		memcpy(e->mac, mac, sizeof(mac));
		e->reg_ms = vf_wall_ms();
		snprintf(e->reg_cred, sizeof(e->reg_cred), "%s", cred);
	}
	pthread_mutex_unlock(&vf->push->lock);
	if (!e) {
		json_object_put(ans->body);
		vf_answer_error(ans, ST_UNAVAILABLE, "too many agents registering or pushing");
		goto out;
	}
	ans->code = ST_ACCEPTED;
out:
	OPENSSL_cleanse(mac, sizeof(mac));
	free(ab);
	free(idn);
	free(act);
	free(old);
	return ans->code;
}

unsigned int vf_push_activate(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans)
{
	struct vg_api_identity *idn = NULL;
	struct vg_diag d = { 0 };
	struct push_ent *e;
	uint8_t proof[32], mac[32];
	char url[VG_API_URL_MAX];
	bool ok = false;
	int pr = vg_api_proof_parse((const uint8_t *)body, len, proof, &d);

	ans->code = 0;
	pthread_mutex_lock(&vf->push->lock);
	e = ent(vf->push, id, false);
	if (e && e->idn && strcmp(e->reg_cred, cred) == 0) {
		/* one try per challenge */
		idn = e->idn;
		e->idn = NULL;
		memcpy(mac, e->mac, sizeof(mac));
		OPENSSL_cleanse(e->mac, sizeof(e->mac));
		ok = vf_wall_ms() - e->reg_ms <= PUSH_REGISTER_MS;
	}
	pthread_mutex_unlock(&vf->push->lock);
	if (!idn) {
		vf_answer_error(ans, ST_CONFLICT, "no registration of this agent in progress for this "
				"credential: POST /v1/push/ID/register first");
		goto out;
	}
	if (!ok) {
		vf_answer_error(ans, ST_CONFLICT, "the registration expired: register again");
		goto out;
	}
	if (pr < 0 || CRYPTO_memcmp(proof, mac, sizeof(mac)) != 0) {
		char err[VG_DIAG_MAX + 128];

		snprintf(err, sizeof(err), "the agent did not prove the AK is in the TPM of this EK "
			 "(ActivateCredential: %s)", pr < 0 ? d.msg : "wrong answer");
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_CREDENTIAL, err);
		goto out;
	}
	snprintf(url, sizeof(url), "%s%s", VF_PUSH_URL, cred);
	/* registered meanwhile (by an operator, another credential), its EK or this credential bound since: refused */
	if (vf_register_proven(vf, id, url, "", idn, cred, ans) == ST_CREATED)
		vlog_info("%s registered, pushing (%s)", id, cred);
out:
	OPENSSL_cleanse(mac, sizeof(mac));
	if (idn)
		OPENSSL_clear_free(idn, sizeof(*idn));
	return ans->code;
}

unsigned int vf_push_nonce(struct verifier *vf, const char *cred, const char *id,
			   struct vf_answer *ans)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	struct vg_api_challenge c = { 0 };
	struct vf_bootc *bc;
	struct push_ent *e;
	char *text = NULL;

	ans->code = 0;
	if (!a)
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	if (bound_agent(vf, cred, id, a, ans))
		goto out;
	if (a->state == VG_AGENT_FAILED) {
		vf_answer_error(ans, ST_CONFLICT, "failed: not attested again until an operator "
				"reactivates it");
		goto out;
	}
	bc = vf_bootc_get(vf, a);
	c.q.nonce_len = PUSH_NONCE_LEN;
	c.q.bank = a->bank;
	c.interval_ms = vf->interval_ms;
	if (RAND_bytes(c.q.nonce, PUSH_NONCE_LEN) != 1) {
		vf_answer_error(ans, ST_INTERNAL, "no randomness");
		goto out;
	}
	pthread_mutex_lock(&vf->push->lock);
	e = ent(vf->push, id, true);
	if (e) {
		c.q.mask = a->mask | e->want_mask;
		c.log_offset = e->want_offset ? e->offset : a->st.log.offset;
		c.boot_log = e->want_boot || (bc && !bc->fetched);
		/* a new challenge replaces the one before: one nonce per agent at a time */
		e->chal = c;
		e->issued = true;
		e->issued_ms = vf_wall_ms();
		snprintf(e->cred, sizeof(e->cred), "%s", cred);
	}
	pthread_mutex_unlock(&vf->push->lock);
	if (!e) {
		vf_answer_error(ans, ST_UNAVAILABLE, "too many agents registering or pushing");
		goto out;
	}
	if (vg_api_challenge_build(&c, &text) < 0 || !(ans->body = json_tokener_parse(text))) {
		vf_answer_error(ans, ST_INTERNAL, "out of memory");
		goto out;
	}
	ans->code = ST_OK;
out:
	free(text);
	free(a);
	return ans->code;
}

/* ---- the round's source: what was pushed, served as the agent would have ---- */

struct push_src {
	struct vf_source base;		/* first: round.c sees only this */
	const struct vg_api_push *p;
	const struct vg_api_challenge *chal;
	/* what the round asked for and was not sent */
	uint32_t want_mask;
	bool want_boot, want_offset;
	uint64_t offset;
	char why[160];
};

static int push_nonce(struct vf_source *src, uint8_t *nonce, size_t len)
{
	struct push_src *s = (struct push_src *)src;

	if (len != s->chal->q.nonce_len)
		return -1;
	memcpy(nonce, s->chal->q.nonce, len);
	return 0;
}

/* @n bytes of @b as an answer (a copy, NUL-terminated as vf_fetch's). Return: 200, -1. */
static long serve(const uint8_t *b, size_t n, size_t max, struct http_answer *out, char *err,
		  size_t errlen)
{
	if (n > (max ? max : VG_API_MSG_MAX)) {
		snprintf(err, errlen, "pushed evidence: answer larger than %zu bytes",
			 max ? max : (size_t)VG_API_MSG_MAX);
		return -1;
	}
	out->p = malloc(n + 1);
	if (!out->p) {
		snprintf(err, errlen, "verifier error: out of memory");
		return -1;
	}
	if (n)
		memcpy(out->p, b, n);
	out->p[n] = 0;
	out->len = out->cap = n;
	return 200;
}

static long push_get(struct vf_source *src, struct verifier *vf, const struct vg_store_agent *a,
		     const char *path, size_t max, struct http_answer *out, char *err, size_t errlen)
{
	struct push_src *s = (struct push_src *)src;
	const struct vg_api_push *p = s->p;
	char q[256];

	(void)vf;
	(void)a;
	memset(out, 0, sizeof(*out));
	if (strncmp(path, "/v1/quote?", 10) == 0) {
		const char *m = strstr(path, "&mask=");

		/* the quote answers the challenge: nonce, bank and mask as handed out */
		if (vg_api_quote_query_build(&s->chal->q, q, sizeof(q)) > 0 &&
		    strcmp(path + 10, q) == 0)
			return serve((const uint8_t *)p->quote, p->quote_len, max, out, err, errlen);
		s->want_mask = m ? (uint32_t)strtoul(m + 6, NULL, 16) : 0;
		snprintf(s->why, sizeof(s->why), "quote PCRs mask %" PRIx32, s->want_mask);
	} else if (strncmp(path, "/v1/log?offset=", 15) == 0) {
		uint64_t off = strtoull(path + 15, NULL, 10);

		if (p->have_log && off == p->log_offset)
			return serve(p->log, p->log_len, max, out, err, errlen);
		s->want_offset = true;
		s->offset = off;
		snprintf(s->why, sizeof(s->why), "the measurement list from byte %" PRIu64, off);
	} else if (strcmp(path, "/v1/bootlog") == 0) {
		if (p->have_boot && p->boot_len)
			return serve(p->boot_log, p->boot_len, max, out, err, errlen);
		if (p->have_boot)
			return 404;	/* the host has none, as GET /v1/bootlog says */
		s->want_boot = true;
		snprintf(s->why, sizeof(s->why), "the boot event log");
	} else {
		snprintf(err, errlen, "verifier error: %s is not pushed", path);
		return -1;
	}
	src->retry = true;
	snprintf(err, errlen, "send again with %s", s->why);
	return -1;
}

unsigned int vf_push_evidence(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	struct vg_api_push p = { 0 };
	struct vg_api_challenge chal = { 0 };
	struct push_src src = { .base = { .get = push_get, .nonce = push_nonce } };
	struct vg_diag d = { 0 };
	struct push_ent *e;
	const char *refused = NULL;
	char msg[256];
	int r;

	ans->code = 0;
	if (!a)
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	if (bound_agent(vf, cred, id, a, ans))
		goto out;
	r = vg_api_push_parse((const uint8_t *)body, len, vf->max_body, &p, &d);
	if (r < 0) {
		vf_answer_error(ans, r == -ENOMEM ? ST_INTERNAL : ST_BAD_REQUEST, d.msg);
		goto out;
	}
	/* the challenge: this agent's, this credential's, unused, recent; taken whatever follows */
	pthread_mutex_lock(&vf->push->lock);
	e = ent(vf->push, id, false);
	if (!e || !e->issued || strcmp(e->cred, cred) != 0 ||
	    p.nonce_len != e->chal.q.nonce_len ||
	    CRYPTO_memcmp(p.nonce, e->chal.q.nonce, p.nonce_len) != 0)
		refused = "nonce unknown or already used: ask for a new one (POST /v1/push/ID/nonce)";
	else if (vf_wall_ms() - e->issued_ms > VF_PUSH_NONCE_MS)
		refused = "nonce expired: ask for a new one";
	else if (e->busy)
		refused = "a push of this agent is being judged";
	if (e && !refused) {
		e->issued = false;
		e->busy = true;
		chal = e->chal;
	}
	pthread_mutex_unlock(&vf->push->lock);
	if (refused) {
		vf_answer_error(ans, ST_CONFLICT, refused);
		goto out;
	}
	src.p = &p;
	src.chal = &chal;
	r = vf_round_from(vf, id, &src.base);
	pthread_mutex_lock(&vf->push->lock);
	e->busy = false;
	if (src.base.retry) {
		e->want_mask |= src.want_mask & ~a->mask;
		e->want_boot = src.want_boot;
		e->want_offset = src.want_offset;
		e->offset = src.offset;
	} else {
		e->want_boot = e->want_offset = false;
		if (r >= -1)
			e->pushed_ms = e->issued_ms;
		if (r >= -1 && e->stale) {
			e->stale = false;
			vlog_info("%s pushes again: no longer stale", id);
		}
	}
	pthread_mutex_unlock(&vf->push->lock);
	if (src.base.retry) {
		snprintf(msg, sizeof(msg), "not judged: %s (ask for a new nonce)", src.why);
		vf_answer_error(ans, ST_CONFLICT, msg);
		json_object_object_add(ans->body, "retry", json_object_new_boolean(1));
		goto out;
	}
	if (r == -2) {
		vf_answer_error(ans, ST_CONFLICT, "not judged (the agent failed, was removed, or the "
				"verifier is stopping)");
		goto out;
	}
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, a, &d);
	pthread_mutex_unlock(&vf->lock);
	if (r < 0) {
		vf_answer_error(ans, ST_INTERNAL, d.msg);
		goto out;
	}
	ans->code = ST_OK;
	ans->body = vf_json_status(vf, a);
out:
	vg_api_push_release(&p);
	free(a);
	return ans->code;
}

/* ---- stale ---- */

/*
 * Return: ms since @a (a push agent) last pushed evidence that was judged
 * (from when it asked that push's challenge: the time the verifier takes
 * to judge is not the agent's silence), or was registered, or was last
 * seen failed (a failed agent is not
 * attested, its silence until reactivated is not counted), when that is
 * more than its interval + slack; 0 not stale. Takes push->lock (after
 * vf->lock when the caller holds it).
 */
static int64_t stale_ms(struct verifier *vf, const char *id, unsigned int state,
			int64_t last_seen, int64_t registered_at, int64_t now)
{
	int64_t heard = (last_seen > registered_at ? last_seen : registered_at) * 1000, silent;
	struct push_ent *e;

	pthread_mutex_lock(&vf->push->lock);
	e = ent(vf->push, id, state == VG_AGENT_FAILED);
	if (e && state == VG_AGENT_FAILED)
		e->quiet_ms = now;
	if (e && e->quiet_ms > heard)
		heard = e->quiet_ms;
	if (e && e->pushed_ms > heard)
		heard = e->pushed_ms;	/* the agent's cycle started then: the judging is ours */
	pthread_mutex_unlock(&vf->push->lock);
	if (state == VG_AGENT_FAILED)
		return 0;
	silent = now - heard;
	return silent > (int64_t)vf->interval_ms + VF_STALE_SLACK_MS ? silent : 0;
}

json_object *vf_json_status(struct verifier *vf, const struct vg_store_agent *a)
{
	json_object *o = vf_json_agent(a, vf_sched_late(vf, a->id));
	int64_t s;

	if (!o)
		return NULL;
	json_object_object_add(o, "mode", json_object_new_string(vf_push_agent(a) ? "push" :
								  "pull"));
	s = vf_push_agent(a) ? stale_ms(vf, a->id, a->state, a->last_seen, a->registered_at,
					vf_wall_ms()) : 0;
	json_object_object_add(o, "stale", json_object_new_boolean(s != 0));
	json_object_object_add(o, "silent_ms", json_object_new_int64(s));
	return o;
}

struct stale_list {
	struct verifier *vf;
	int64_t now;
	struct {
		char id[VG_API_ID_MAX];
		int64_t ms;
	} *a;
	size_t n, cap;
	unsigned int stale;
	bool oom;
};

static int stale_add(struct stale_list *l, const struct vg_store_due *a)
{
	int64_t s;

	s = stale_ms(l->vf, a->id, a->state, a->last_seen, a->registered_at, l->now);
	if (!s)
		return 0;
	l->stale++;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		void *n = realloc(l->a, cap * sizeof(*l->a));

		if (!n) {
			l->oom = true;
			return 0;
		}
		l->a = n;
		l->cap = cap;
	}
	snprintf(l->a[l->n].id, sizeof(l->a[l->n].id), "%s", a->id);
	l->a[l->n++].ms = s;
	return 0;
}

/*
 * The agents that became stale into their history (state.stale) and to
 * --webhook and --on-fail, on a thread of their own as the late reports
 * are (scheduler.c): a slow hook does not hold up the scheduler. Counted
 * with them (vf->sched.notifying), so that the store outlives it.
 */
static void *stale_thread(void *arg)
{
	struct stale_list *l = arg;
	struct verifier *vf = l->vf;

	for (size_t i = 0; i < l->n && !vf->stop; i++) {
		struct vg_attest_verdict v;
		struct vg_store_verdict h;
		int r;

		if (!l->a[i].ms)
			continue;
		vg_attest_verdict_init(&v);
		vg_attest_fail(&v, VG_AF_STALE, "stale: no evidence pushed for %lld ms (--interval %u "
			       "ms): the agent is silent", (long long)l->a[i].ms, vf->interval_ms);
		vlog_warn("%s %s", l->a[i].id, v.msg);
		pthread_mutex_lock(&vf->lock);
		r = vf_history(vf, l->a[i].id, &v, &h);
		pthread_mutex_unlock(&vf->lock);
		if (r == 0)
			vf_notify(vf, l->a[i].id, &h);
	}
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.notifying--;
	pthread_mutex_unlock(&vf->sched.lock);
	free(l->a);
	free(l);
	return NULL;
}

static void stale_report(struct verifier *vf, struct stale_list *l)
{
	struct stale_list *c;
	pthread_attr_t at;
	pthread_t t;
	size_t news = 0;

	for (size_t i = 0; i < l->n; i++)
		news += l->a[i].ms != 0;
	if (!news || !(c = malloc(sizeof(*c)))) {
		free(l->a);
		return;
	}
	*c = *l;
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.notifying++;
	pthread_mutex_unlock(&vf->sched.lock);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, stale_thread, c) != 0) {
		pthread_mutex_lock(&vf->sched.lock);
		vf->sched.notifying--;
		pthread_mutex_unlock(&vf->sched.lock);
		vlog_warn("%zu agent(s) stale, not reported: no thread", news);
		free(c->a);
		free(c);
	}
	pthread_attr_destroy(&at);
}

void vf_push_watch(struct verifier *vf, const struct vg_store_due *push, size_t n)
{
	struct stale_list l = { .vf = vf, .now = vf_wall_ms() };

	for (size_t i = 0; i < n; i++)
		(void)stale_add(&l, &push[i]);
	if (l.oom) {
		free(l.a);
		return;			/* tried at the next listing */
	}
	pthread_mutex_lock(&vf->push->lock);
	vf->push->stale = l.stale;
	/* those that were stale and are not any more start a new episode when they go silent */
	for (size_t b = 0; b < PUSH_BUCKETS; b++)
		for (struct push_ent *e = vf->push->tab[b]; e; e = e->next) {
			bool now_stale = false;

			for (size_t i = 0; i < l.n && !now_stale; i++)
				now_stale = strcmp(l.a[i].id, e->id) == 0;
			if (!now_stale)
				e->stale = false;
		}
	for (size_t i = 0; i < l.n; i++) {
		struct push_ent *e = ent(vf->push, l.a[i].id, true);

		if (!e || e->stale) {
			l.a[i].ms = 0;		/* reported in this episode already */
			continue;
		}
		e->stale = true;
	}
	pthread_mutex_unlock(&vf->push->lock);
	stale_report(vf, &l);
}

unsigned int vf_push_stale_count(struct verifier *vf)
{
	unsigned int n;

	pthread_mutex_lock(&vf->push->lock);
	n = vf->push->stale;
	pthread_mutex_unlock(&vf->push->lock);
	return n;
}
