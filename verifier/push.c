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
 * What is kept between a pushing agent's requests is the store's
 * (store.h: the push op; push_state and push_regs in the database): the
 * registration between its two steps (its identity, a SHA-256 of the
 * proof expected, never the proof), the challenge handed out, the lease
 * of a push being judged, what the last push lacked. Any verifier sharing
 * the store answers any request of a pushing agent; one killed between
 * two requests loses nothing. The staleness of pushing agents is
 * push_stale.c's. It does not authenticate (rest.c names the credential).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "log.h"
#include "push_internal.h"

#define PUSH_REGS_MAX 65536		/* registrations in progress in the store, all verifiers' */
#define PUSH_NONCE_LEN 20
#define PUSH_REGISTER_MS 60000		/* between the two steps of a registration */
/*
 * the lease of a push being judged: a verifier killed while judging holds
 * the agent's pushes (409) no longer than this; a push judged longer is
 * kept from overwriting a newer one by agent_update's compare-and-set
 */
#define PUSH_BUSY_MS VF_PUSH_NONCE_MS

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
	free(p->seen);
	pthread_mutex_destroy(&p->lock);
	free(p);
	vf->push = NULL;
}

bool vf_push_agent(const struct vg_store_agent *a)
{
	return strncmp(a->url, VF_PUSH_URL, strlen(VF_PUSH_URL)) == 0;
}

int push_store(struct verifier *vf, unsigned int verb, struct vg_store_push_req *rq,
	       struct vg_diag *d)
{
	int r;

	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_push(vf->store, verb, rq, d);
	vf_store_status(vf, r == -EIO || r == -ETIMEDOUT ? d->msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	return r;
}

/* SHA-256 of an ActivateCredential proof: what the store keeps of it. Return: 0, -1. */
static int proof_hash(const uint8_t proof[32], uint8_t out[32])
{
	unsigned int n = 0;

	return EVP_Digest(proof, 32, out, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -1;
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
	struct vg_store_push_req *rq = calloc(1, sizeof(*rq));
	struct vg_diag d = { 0 };
	uint8_t mac[32];
	char *ab = NULL, *ij = NULL;
	long n;
	int r;

	ans->code = 0;
	if (!idn || !act || !old || !rq) {
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
	/* the store keeps the identity and a hash of the proof: any verifier takes the second step */
	n = vg_api_identity_build(idn, &ij);
	if (n < 0 || (size_t)n >= sizeof(rq->reg.idn) || proof_hash(mac, rq->reg.proof_hash) < 0) {
		json_object_put(ans->body);
		vf_answer_error(ans, ST_INTERNAL, n < 0 ? "out of memory" :
				"verifier error: the identity is too large to keep");
		goto out;
	}
	snprintf(rq->reg.id, sizeof(rq->reg.id), "%s", id);
	snprintf(rq->reg.cred, sizeof(rq->reg.cred), "%s", cred);
	memcpy(rq->reg.idn, ij, (size_t)n);
	rq->reg.idn_len = (size_t)n;
	rq->reg.reg_ms = rq->now = vf_wall_ms();
	rq->age_ms = PUSH_REGISTER_MS;
	rq->max = PUSH_REGS_MAX;
	r = push_store(vf, VG_STORE_PUSH_REG_PUT, rq, &d);
	if (r < 0) {
		json_object_put(ans->body);
		if (r == -ENOSPC)
			vf_answer_error(ans, ST_UNAVAILABLE, "too many agents registering or pushing");
		else
			vf_answer_error(ans, ST_INTERNAL, d.msg);
		goto out;
	}
	ans->code = ST_ACCEPTED;
out:
	OPENSSL_cleanse(mac, sizeof(mac));
	free(ab);
	free(ij);
	free(idn);
	free(act);
	free(old);
	free(rq);
	return ans->code;
}

unsigned int vf_push_activate(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans)
{
	struct vg_api_identity *idn = NULL;
	struct vg_store_push_req *rq = calloc(1, sizeof(*rq));
	struct vg_diag d = { 0 }, pd = { 0 };
	uint8_t proof[32], h[32];
	char url[VG_API_URL_MAX];
	int pr = vg_api_proof_parse((const uint8_t *)body, len, proof, &pd), r;

	ans->code = 0;
	if (!rq)
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	snprintf(rq->reg.id, sizeof(rq->reg.id), "%s", id);
	snprintf(rq->reg.cred, sizeof(rq->reg.cred), "%s", cred);
	/* one try per challenge: taken by this verifier or another, once */
	r = strlen(id) < sizeof(rq->reg.id) && strlen(cred) < sizeof(rq->reg.cred) ?
	    push_store(vf, VG_STORE_PUSH_REG_TAKE, rq, &d) : -ENOENT;
	if (r == -ENOENT) {
		vf_answer_error(ans, ST_CONFLICT, "no registration of this agent in progress for this "
				"credential: POST /v1/push/ID/register first");
		goto out;
	}
	if (r < 0) {
		vf_answer_error(ans, ST_INTERNAL, d.msg);
		goto out;
	}
	if (vf_wall_ms() - rq->reg.reg_ms > PUSH_REGISTER_MS) {
		vf_answer_error(ans, ST_CONFLICT, "the registration expired: register again");
		goto out;
	}
	if (pr < 0 || proof_hash(proof, h) < 0 ||
	    CRYPTO_memcmp(h, rq->reg.proof_hash, sizeof(h)) != 0) {
		char err[VG_DIAG_MAX + 128];

		snprintf(err, sizeof(err), "the agent did not prove the AK is in the TPM of this EK "
			 "(ActivateCredential: %s)", pr < 0 ? pd.msg : "wrong answer");
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_CREDENTIAL, err);
		goto out;
	}
	idn = calloc(1, sizeof(*idn));
	if (!idn || vg_api_identity_parse((const uint8_t *)rq->reg.idn, rq->reg.idn_len, idn,
					  &d) < 0) {
		vf_answer_error(ans, ST_INTERNAL, idn ? "store: push registration: the identity "
				"kept does not parse" : "out of memory");
		goto out;
	}
	snprintf(url, sizeof(url), "%s%s", VF_PUSH_URL, cred);
	/* registered meanwhile (by an operator, another credential), its EK or this credential bound since: refused */
	if (vf_register_proven(vf, id, url, "", idn, cred, ans) == ST_CREATED)
		vlog_info("%s registered, pushing (%s)", id, cred);
out:
	OPENSSL_cleanse(proof, sizeof(proof));
	if (idn)
		OPENSSL_clear_free(idn, sizeof(*idn));
	OPENSSL_clear_free(rq, sizeof(*rq));
	return ans->code;
}

unsigned int vf_push_nonce(struct verifier *vf, const char *cred, const char *id,
			   struct vf_answer *ans)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	struct vg_api_challenge c = { 0 };
	struct vg_store_push_req *rq = calloc(1, sizeof(*rq));
	struct vg_diag d = { 0 };
	struct vf_bootc *bc;
	char *text = NULL;
	int r;

	ans->code = 0;
	if (!a || !rq) {
		free(a);
		free(rq);
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	}
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
	/*
	 * a new challenge replaces the one before: one nonce per agent at a
	 * time, in the store; the store adds what the last push lacked
	 */
	snprintf(rq->st.id, sizeof(rq->st.id), "%s", id);
	snprintf(rq->st.cred, sizeof(rq->st.cred), "%s", cred);
	memcpy(rq->st.nonce, c.q.nonce, PUSH_NONCE_LEN);
	rq->st.nonce_len = PUSH_NONCE_LEN;
	rq->st.bank = a->bank;
	rq->st.mask = a->mask;
	rq->st.issued_ms = vf_wall_ms();
	r = push_store(vf, VG_STORE_PUSH_CHAL_PUT, rq, &d);
	if (r == -ENOENT) {
		vf_answer_error(ans, ST_NOT_FOUND, "no such agent: register first "
				"(POST /v1/push/ID/register)");
		goto out;
	}
	if (r < 0) {
		vf_answer_error(ans, ST_INTERNAL, d.msg);
		goto out;
	}
	c.q.mask = rq->st.mask;
	c.log_offset = rq->st.want_offset ? rq->st.offset : a->st.log.offset;
	c.boot_log = rq->st.want_boot || (bc && !bc->fetched);
	if (vg_api_challenge_build(&c, &text) < 0 || !(ans->body = json_tokener_parse(text))) {
		vf_answer_error(ans, ST_INTERNAL, "out of memory");
		goto out;
	}
	ans->code = ST_OK;
out:
	free(text);
	free(a);
	OPENSSL_clear_free(rq, sizeof(*rq));
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
	struct vg_store_push_req *rq = calloc(1, sizeof(*rq));
	struct vg_diag d = { 0 };
	const char *refused = NULL;
	bool was_stale, stored = false;
	uint32_t mask;
	char msg[256];
	int r;

	ans->code = 0;
	if (!a || !rq) {
		free(a);
		free(rq);
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	}
	if (bound_agent(vf, cred, id, a, ans))
		goto out;
	r = vg_api_push_parse((const uint8_t *)body, len, vf->max_body, &p, &d);
	if (r < 0) {
		vf_answer_error(ans, r == -ENOMEM ? ST_INTERNAL : ST_BAD_REQUEST, d.msg);
		goto out;
	}
	/*
	 * the challenge: this agent's, this credential's, unused, recent, no
	 * push of it being judged; taken (one statement in the store, whichever
	 * verifier handed it out) whatever follows, the judging leased
	 */
	snprintf(rq->st.id, sizeof(rq->st.id), "%s", id);
	snprintf(rq->st.cred, sizeof(rq->st.cred), "%s", cred);
	rq->st.nonce_len = p.nonce_len <= sizeof(rq->st.nonce) ? p.nonce_len : 0;
	memcpy(rq->st.nonce, p.nonce, rq->st.nonce_len);
	rq->now = vf_wall_ms();
	rq->age_ms = VF_PUSH_NONCE_MS;
	rq->lease_ms = PUSH_BUSY_MS;
	r = rq->st.nonce_len ? push_store(vf, VG_STORE_PUSH_CHAL_TAKE, rq, &d) : -ENOENT;
	if (r == -ENOENT)
		refused = "nonce unknown or already used: ask for a new one (POST /v1/push/ID/nonce)";
	else if (r == -ETIME)
		refused = "nonce expired: ask for a new one";
	else if (r == -EBUSY)
		refused = "a push of this agent is being judged";
	if (refused) {
		vf_answer_error(ans, ST_CONFLICT, refused);
		goto out;
	}
	if (r < 0) {
		vf_answer_error(ans, ST_INTERNAL, d.msg);
		goto out;
	}
	chal.q.nonce_len = p.nonce_len;
	memcpy(chal.q.nonce, p.nonce, p.nonce_len);
	chal.q.bank = rq->st.bank;
	chal.q.mask = rq->st.mask;
	was_stale = rq->st.stale;
	src.p = &p;
	src.chal = &chal;
	mask = a->mask;		/* *a is the round's after it */
	r = vf_round_from(vf, a, &src.base, &stored);
	/* the lease ends; what it lacked for the next challenge, whichever verifier hands it out */
	rq->retry = src.base.retry;
	rq->judged = r >= -1;
	rq->st.want_mask = src.want_mask & ~mask;
	rq->st.want_boot = src.want_boot;
	rq->st.want_offset = src.want_offset;
	rq->st.offset = src.offset;
	rq->st.pushed_ms = rq->st.issued_ms;
	if (push_store(vf, VG_STORE_PUSH_DONE, rq, &d) < 0)
		vlog_warn("%s: push judged, not recorded (%s): its lease ends in %d ms", id,
			  d.msg[0] ? d.msg : "removed meanwhile", PUSH_BUSY_MS);
	else
		push_seen_update(vf, &rq->st);
	if (!src.base.retry && r >= -1 && was_stale)
		vlog_info("%s pushes again: no longer stale", id);
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
	if (!stored) {
		/* its outcome not stored (the row changed meanwhile): the status as it is */
		pthread_mutex_lock(&vf->lock);
		/* store round trip (store_client.c) */
		r = vg_store_agent_get(vf->store, id, a, &d);
		pthread_mutex_unlock(&vf->lock);
		if (r < 0) {
			vf_answer_error(ans, ST_INTERNAL, d.msg);
			goto out;
		}
	}
	ans->code = ST_OK;
	ans->body = vf_json_status(vf, a);
out:
	vg_api_push_release(&p);
	free(a);
	free(rq);
	return ans->code;
}
