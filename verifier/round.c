// SPDX-License-Identifier: MIT
/*
 * round.c - one attestation round of one agent: a fresh nonce, the quote
 * (with PCRs 0-9 too when the agent serves a boot log or the policy pins
 * boot PCRs), verified and decoded once by the library, which also says
 * whether the agent rebooted and where the measurement list must start;
 * then the list from there, judged against the agent's policy
 * (vg_attest_evidence_judge commits the state only on success). The
 * verdict goes to the store, if the agent did not change meanwhile, and
 * then to the notice queues (notify.c: nothing is sent here). It does
 * not schedule rounds (scheduler.c).
 * Where the evidence comes from is the only thing a round does not
 * decide: a struct vf_source gives the nonce and the agent's answers,
 * fetched from its URL (pull, here) or taken from what it pushed
 * (push.c); everything after is one code path.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "log.h"
#include "verifier.h"

/* The agent's answer @code to a quote request that is not a quote. Return: -1 (comm), 1. */
static int quote_refused(long code, const struct http_answer *qb, const char *err,
			 struct vg_attest_verdict *v)
{
	char said[161];

	if (code < 0 || code >= 500) {
		if (code >= 500)
			http_said(qb, said, sizeof(said));
		vg_attest_fail(v, VG_AF_COMM, "quote: %s", code < 0 ? err : said);
		return -1;
	}
	http_said(qb, said, sizeof(said));
	if (code == 401 || code == 403) {
		/* our credential (--agent-token-file, client certificate): not evidence */
		vg_attest_fail(v, VG_AF_COMM, "quote: the agent refused our credential (HTTP %ld): %s",
			       code, said);
		return -1;
	}
	vg_attest_fail(v, VG_AF_MALFORMED, "quote answer is HTTP %ld, not a quote: %s", code, said);
	return 1;
}

/*
 * Fills @v on failure. *@requote (may be NULL) is set, with nothing
 * judged, when a boot log appeared for a quote that did not cover PCRs 0-9.
 * Return: 0 trusted, 1 not, -1 communication failure (@v msg).
 */
static int round_once(struct verifier *vf, struct vf_source *src, const struct vg_store_agent *a,
		      const struct vg_refpolicy *pol, const struct vg_trust_boot *archive,
		      struct vg_attest_state *st, bool *reboot, struct vg_attest_verdict *v,
		      bool *requote)
{
	struct vg_api_quote_req req = { .nonce_len = 20, .bank = a->bank, .mask = a->mask };
	struct vg_attest_request areq = { req.nonce, req.nonce_len, a->bank, a->mask };
	char path[320], q[256], err[512], said[161];
	struct vg_attest_evidence ev = { 0 };
	struct vg_attest_ak *ak = NULL;
	struct vg_api_quote *quote = malloc(sizeof(*quote));
	struct vg_attest_quoted *qd = malloc(sizeof(*qd));
	struct vg_diag d = { 0 };
	struct http_answer qb = { 0 }, lb = { 0 };
	struct vf_bootc *bc = vf_bootc_get(vf, a);
	uint32_t bootm;
	long code;
	int r = 1;

	if (!quote || !qd || !bc || src->nonce(src, req.nonce, req.nonce_len) < 0) {
		vg_attest_fail(v, VG_AF_COMM, "verifier error: no memory or randomness");
		r = -1;
		goto out;
	}
	bc->archive = archive;	/* this round's boot references (from_archive) */
	/* a boot log or pinned boot PCRs: quote PCRs 0-9 (or the pinned ones) as well */
	if (bc->fetched && bc->have && vf_bootc_stale(bc, pol))
		bc->fetched = false;	/* another measured_boot section: judge the log anew */
	if (!bc->fetched && vf_bootc_fetch(vf, src, a, pol, bc, v) < 0) {
		r = -1;
		goto out;
	}
	/* and PCR 14, whose MOK lists a measured_boot section judges (attest_boot.h) */
	bootm = vg_attest_boot_mask(pol);
	req.mask |= vg_refpolicy_boot_mask(pol) | (bc->have ? bootm : 0);
	areq.mask = req.mask;
	if (vg_api_quote_query_build(&req, q, sizeof(q)) < 0) {
		vg_attest_fail(v, VG_AF_COMM, "verifier error: quote query");
		r = -1;
		goto out;
	}
	snprintf(path, sizeof(path), "/v1/quote?%s", q);
	code = src->get(src, vf, a, path, 0, &qb, err, sizeof(err));
	if (code != 200) {
		r = quote_refused(code, &qb, err, v);
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
	if (vg_attest_ak_load(a->ak_pub, a->ak_pub_len, &ak, &d) < 0) {
		vg_attest_fail(v, VG_AF_AK, "registered AK: %s", d.msg);
		goto out;
	}
	/* the quote, verified and decoded once: which boot, where the list starts */
	r = vg_attest_evidence_quote(ak, &areq, &ev, st, qd, v);
	if (r)
		goto judged;
	if (vf_bootc_boot(vf, src, a, pol, bc, &qd->quote, v) < 0) {
		r = -1;
		goto out;
	}
	if (bc->have && bc->malformed) {
		vg_attest_fail(v, VG_AF_BOOT_MALFORMED, "%s", bc->msg);
		bc->fetched = false;
		r = 1;
		goto out;
	}
	if (bc->have && (areq.mask & bootm) != bootm && requote) {
		*requote = true;	/* a new boot brought a boot log: quote PCRs 0-9 (and 14) too */
		r = 0;
		goto out;
	}
	if (bc->have && (areq.mask & bootm) == bootm) {
		ev.boot = &bc->boot;
		ev.boot_events = bc->mbv;
	}
	ev.log_offset = qd->log_offset;
	if (a->mask & (1u << VG_ATTEST_PCR_IMA)) {
		snprintf(path, sizeof(path), "/v1/log?offset=%" PRIu64, ev.log_offset);
		code = src->get(src, vf, a, path, vf->max_log, &lb, err, sizeof(err));
		if (code != 200) {
			if (code > 0)
				http_said(&lb, said, sizeof(said));
			vg_attest_fail(v, VG_AF_COMM, "log: %s%s%s", code < 0 ? err : "HTTP error: ",
				       code < 0 ? "" : said, "");
			r = -1;
			goto out;
		}
		ev.log = lb.p ? lb.p : (const uint8_t *)"";
		ev.log_len = lb.len;
		ev.log_algo = VG_HASH_SHA1;
	}
	r = vg_attest_evidence_judge(pol, &areq, &ev, qd, st, v);
	if (r == 0)
		*reboot = qd->reboot;
judged:
	if (r < 0) {
		vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(-r));
		r = -1;
	}
	if (r == 1 && ((v->fail >= VG_AF_BOOT_MALFORMED && v->fail <= VG_AF_BOOT_AGG) ||
		       v->fail == VG_AF_BOOT_EVENT))
		bc->fetched = false;	/* look at the log again once reactivated */
out:
	vg_attest_ak_free(ak);
	free(quote);
	free(qd);
	free(qb.p);
	free(lb.p);
	return r;
}

static int round_evidence(struct verifier *vf, struct vf_source *src,
			  const struct vg_store_agent *a, const struct vg_refpolicy *pol,
			  const struct vg_trust_boot *archive, struct vg_attest_state *st,
			  bool *reboot, struct vg_attest_verdict *v)
{
	bool requote = false;
	int r = round_once(vf, src, a, pol, archive, st, reboot, v, &requote);

	if (requote && !src->retry)
		r = round_once(vf, src, a, pol, archive, st, reboot, v, NULL);
	return r;
}

/* ---- pull: the evidence fetched from the agent's URL ---- */

static int pull_nonce(struct vf_source *src, uint8_t *nonce, size_t len)
{
	(void)src;
	return RAND_bytes(nonce, (int)len) == 1 ? 0 : -1;
}

static long pull_get(struct vf_source *src, struct verifier *vf, const struct vg_store_agent *a,
		     const char *path, size_t max, struct http_answer *out, char *err, size_t errlen)
{
	char url[1024];
	long code;

	if ((size_t)snprintf(url, sizeof(url), "%s%s", a->url, path) >= sizeof(url)) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "verifier error: agent URL too long");
		return -1;
	}
	code = vf->fetch(vf, url, NULL, true, max, out, err, errlen);
	if (code < 0 && out->timed_out)
		src->timed_out = true;
	return code;
}

/* Append " (...)" to the string in @buf of @size bytes, as much as fits. */
static void append_count(char *buf, size_t size, uint64_t count, size_t listed)
{
	size_t l = strnlen(buf, size - 1);

	snprintf(buf + l, size - l, " (%" PRIu64 " failures in this round%s)", count,
		 count > listed ? ", the first ones in the history" : "");
}

/*
 * A failed round's verdict into @a and the history: every failure the
 * judgement listed (up to VG_ATTEST_FAILURES_MAX) is a line of its own,
 * the first one last so that the history, newest first, reads in log
 * order; the first is also the notice (*@note: once per round) and the
 * agent's last message, both saying how many failures the round had.
 * Return: 0, -1 (not recorded).
 */
static int record_failures(struct verifier *vf, struct vg_store_agent *a,
			   const struct vg_attest_verdict *v, struct vg_store_verdict *note)
{
	uint64_t count = vg_attest_verdict_count(v);
	size_t listed = vg_attest_verdict_listed(v);
	struct vg_attest_verdict head;
	struct vg_store_verdict h;

	snprintf(a->last_msg, sizeof(a->last_msg), "%s", v->msg);
	vlog_err("%s FAILED %s: %s", a->id, vg_attest_fail_id(v->fail), v->msg);
	if (count <= 1)
		return vf_history(vf, a->id, v, note);
	append_count(a->last_msg, sizeof(a->last_msg), count, listed);
	vlog_err("%s: %" PRIu64 " failures in this round, %zu listed in its history", a->id,
		 count, listed);
	for (size_t i = listed; i-- > 1;)
		if (vf_history(vf, a->id, vg_attest_verdict_nth(v, i), &h) < 0)
			return -1;
	vg_attest_verdict_init(&head);
	head.fail = v->fail;
	head.entry = v->entry;
	memcpy(head.path, v->path, sizeof(head.path));
	memcpy(head.digest, v->digest, sizeof(head.digest));
	memcpy(head.msg, v->msg, sizeof(head.msg));
	append_count(head.msg, sizeof(head.msg), count, listed);
	return vf_history(vf, a->id, &head, note);
}

/*
 * Under vf->lock: the round's outcome @r (@v, new state @st) into @a and
 * the store, unless the agent's row is no longer the one the round began
 * with (@cur: removed, re-registered, policy changed, judged by another
 * verifier).
 * Return: true when the state was committed with a history line the
 * hooks are told (*@note, for vf_notify once the lock is given up);
 * *@stored: @a is the row as stored now.
 */
static bool round_commit(struct verifier *vf, struct vg_store_agent *a, struct vg_store_agent *cur,
			 int r, const struct vg_attest_state *st, bool reboot,
			 const struct vg_attest_verdict *v, struct vg_store_verdict *note,
			 bool *stored)
{
	uint32_t old_reset = a->st.clock.reset_count;
	struct vg_diag d = { 0 };
	bool noted = false;
	int r2;

	/*
	 * a trusted verdict with nothing for the history (the steady state):
	 * written against the row the round began with, compare-and-set on
	 * its attestation state, without reading the row again; changed
	 * meanwhile (-ESTALE), it is read and judged as below
	 */
	if (r == 0 && !reboot && cur) {
		*cur = *a;
		a->last_seen = a->last_ok = vf_now();
		a->st = *st;
		a->state = VG_AGENT_TRUSTED;
		a->rounds++;
		a->comm_errors = 0;
		a->last_fail = VG_AF_NONE;
		a->last_msg[0] = 0;
		a->failure_count = 0;
		/* store round trip (store_client.c) */
		r2 = vg_store_agent_update(vf->store, cur, a, &d);
		if (r2 == 0) {
			vf_okc_set(vf, a->id, vf_wall_ms());
			vf_store_status(vf, NULL);
			*stored = true;
			return false;
		}
		*a = *cur;		/* as the round began: judged against the row as it is now */
		if (r2 != -ESTALE) {
			vf_store_status(vf, d.msg);
			return false;	/* the round's outcome is dropped: nothing recorded */
		}
	}
	/* store round trip (store_client.c) */
	r2 = cur ? vg_store_agent_get(vf->store, a->id, cur, &d) : -ENOMEM;
	if (r2 < 0 && r2 != -ENOENT)
		vf_store_status(vf, d.msg);	/* the round's outcome is dropped: nothing recorded */
	if (r2 < 0 ||
	    memcmp(cur->ak_pub, a->ak_pub, a->ak_pub_len) != 0 ||
	    strcmp(cur->policy, a->policy) != 0 || cur->state == VG_AGENT_FAILED ||
	    memcmp(&cur->st, &a->st, sizeof(*st)) != 0)
		return false;
	a->last_seen = vf_now();
	a->comm_errors = cur->comm_errors;	/* mark_silent may have counted this silence */
	if (r == 0) {
		vf_okc_set(vf, a->id, vf_wall_ms());
		a->st = *st;
		a->state = VG_AGENT_TRUSTED;
		a->rounds++;
		a->comm_errors = 0;
		a->last_ok = a->last_seen;
		a->last_fail = VG_AF_NONE;
		a->last_msg[0] = 0;
		a->failure_count = 0;
		if (reboot) {
			struct vg_attest_verdict rv;

			vg_attest_verdict_init(&rv);
			vg_attest_fail(&rv, VG_AF_REBOOT, "reboot: resetCount %" PRIu32 " -> %" PRIu32
				       ", the measurement list was verified again from entry 0",
				       old_reset, st->clock.reset_count);
			a->reboots++;
			if (vf_history(vf, a->id, &rv, note) < 0)
				return false;	/* judged again next round, recorded then */
		}
	} else if (r == 1) {
		a->state = VG_AGENT_FAILED;
		a->last_fail = v->fail;
		a->failure_count = vg_attest_verdict_count(v);
		if (record_failures(vf, a, v, note) < 0)
			return false;		/* judged again next round, recorded then */
		noted = true;
	} else {
		if (a->comm_errors++ == 0)
			noted = vf_history(vf, a->id, v, note) == 0;
		a->state = VG_AGENT_UNREACHABLE;
		a->last_fail = VG_AF_COMM;
		a->failure_count = 1;
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v->msg);
	}
	/*
	 * written only if the row is still @cur: of verifiers sharing the store
	 * that judged the same state, the first one's result stands (-ESTALE)
	 */
	/* store round trip (store_client.c) */
	r = vg_store_agent_update(vf->store, cur, a, &d);
	vf_store_status(vf, r < 0 && r != -ESTALE ? d.msg : NULL);
	*stored = r == 0;
	return r == 0 && noted;
}

/*
 * A round of agent @id in the caller's *@a: its row as the caller read it
 * (@have), else read here into it. *@stored: the outcome was stored, and
 * *@a is the row as stored.
 */
static int round_run(struct verifier *vf, const char *id, struct vg_store_agent *a, bool have,
		     struct vf_source *src, bool *stored)
{
	struct vg_store_agent *cur = NULL;
	struct vg_refpolicy *pol = NULL;
	struct vf_pcache *pc = NULL;
	struct vg_attest_verdict v;
	struct vg_attest_state st;
	struct vg_store_verdict note;
	struct vg_diag d = { 0 };
	bool reboot = false, noted;
	char err[512] = "";
	double t0;
	int r;

	vg_attest_verdict_init(&v);
	pthread_mutex_lock(&vf->lock);
	if (have) {
		r = 0;		/* read with its claim (vg_store_lease_take) or by the push route */
	} else {
		/* store round trip (store_client.c) */
		r = vg_store_agent_get(vf->store, id, a, &d);
		vf_store_status(vf, r < 0 && r != -ENOENT ? d.msg : NULL);
	}
	if (r == 0 && a->policy[0]) {
		pol = vf_policy_lookup(vf, a->policy, err, sizeof(err));
		if (!pol)
			r = -ENOENT;
		else
			pc = vf_policy_hold(vf, pol);
	}
	pthread_mutex_unlock(&vf->lock);
	if (r < 0 || a->state == VG_AGENT_FAILED) {
		if (r == -ENOENT && err[0])
			vlog_warn("%s: %s", id, err);
		r = -2;
		goto release;
	}
	/* the policy object stays valid while it is held */
	st = a->st;
	t0 = vf_metrics_clock();
	r = round_evidence(vf, src, a, pol, vf_pcache_boot(pc), &st, &reboot, &v);
	if (vf->stop || src->retry) {
		r = -2;			/* cut short by the shutdown, or evidence asked again: judged by nobody */
		goto release;
	}
	/* past the silence watch's deadline: reported as the watch reports it */
	if (r == -1 && src->timed_out)
		(void)vf_sched_timed_out(vf, id, &v);
	vf_metrics_round(&vf->metrics, r, v.fail, vf_metrics_clock() - t0);
	pthread_mutex_lock(&vf->lock);
	/* the agent may have been removed or changed meanwhile (operator, another verifier) */
	cur = malloc(sizeof(*cur));
	noted = round_commit(vf, a, cur, r, &st, reboot, &v, &note, stored);
	pthread_mutex_unlock(&vf->lock);
	if (noted)
		vf_notify(vf, id, &note);	/* queued: sent by notify.c's threads */
	free(cur);
release:
	vg_attest_verdict_release(&v);
	vf_policy_put(vf, pc);
	return r;
}

int vf_round_from(struct verifier *vf, struct vg_store_agent *a, struct vf_source *src,
		  bool *stored)
{
	*stored = false;
	return round_run(vf, a->id, a, true, src, stored);
}

void vf_round(struct verifier *vf, const char *id, struct vg_store_agent *row)
{
	struct vf_source pull = { .get = pull_get, .nonce = pull_nonce };
	struct vg_store_agent *a = row ? row : malloc(sizeof(*a));
	bool stored = false;

	if (!a)
		return;
	(void)round_run(vf, id, a, row != NULL, &pull, &stored);
	if (!row)
		free(a);
}
