// SPDX-License-Identifier: MIT
/*
 * verdict.c - the answer to an event once vd_decide (decide.c) has its
 * verdict: the facts the decision asks for on the way (the measurement
 * into the list, once per version under a lease; the trust database's
 * word on an unlabeled file), then the audit records, the counters, the
 * kernel's answer, the ignore mark for a clean inode-only allow, and the
 * event's slot released. The fail action for events whose appraisal
 * could not be had goes the same way (vd_fail_one, vd_fail_group). What
 * is allowed or denied is decide.c's alone: nothing here judges.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "appraisers.h"
#include "monitor.h"
#include "setup.h"

void vd_ev_release(struct vd *d, int i)
{
	struct ev *e = &d->ev[i];

	if (e->counted && vd_uq(d, e)->pending)
		vd_uq(d, e)->pending--;
	e->counted = false;
	if (vd_lease_owns(d, e)) {
		/*
		 * The lease keeps the descriptor, and closes it when it is
		 * dropped. Not one that must stay parked: then the lease goes
		 * now (its verdicts with it), and the number is parked.
		 */
		if (!e->answer_pid)
			e->fd = -1;
		else
			vd_lease_drop(d, vd_lease_get(d, e->key.dev, e->key.ino));
	}
	if (e->fd >= 0 && e->answer_pid)
		vd_pool_park(d, e->fd, e->answer_pid);	/* an appraiser could still answer it */
	else if (e->fd >= 0)
		close(e->fd);
	e->answer_pid = 0;
	e->answered = false;
	if (e->before)
		vd_before_released(d);
	e->before = false;
	if (e->mwait)
		d->nmwait--;
	e->mwait = 0;
	e->mstate = VD_MEAS_NONE;
	if (e->has_res)
		free(e->res.sig);
	e->has_res = false;
	free(e->path);
	free(e->path_here);
	free(e->subj_exe);
	free(e->exe_here);
	e->used = false;
	e->fd = -1;
	e->path = e->path_here = NULL;
	e->subj_exe = e->exe_here = NULL;
	d->npending--;
	while (d->ev_hi > 0 && !d->ev[d->ev_hi - 1].used)
		d->ev_hi--;
}

void vd_answer(struct vd *d, struct ev *e, bool allow)
{
	if (e->before)
		return;		/* it runs already: no kernel waits for this answer (before.c) */
	if (e->answered) {
		/*
		 * The appraiser wrote the allow (VD_ANSWER). The monitor asks for
		 * that only where its own decision is an allow exactly when the
		 * appraisal passes (vd_pool_send), and checks that the reply is a
		 * pass (vd_pool_reply). Should they still disagree, the allow is
		 * out and cannot be taken back: say so.
		 */
		if (!allow) {
			d->st.errors++;
			vlog_err("%s: the appraiser allowed an access the monitor denies", vd_ev_path(e));
		}
		d->st.appraiser_answers++;
		allow = true;
	} else if (e->answer_pid) {
		/*
		 * Its appraiser died or was killed before its reply: it may have
		 * written the allow already, and then the kernel has no such
		 * event any more (ENOENT).
		 */
		int r = vd_fan_answer(d->fan, e->answer_no, allow);

		if (r == -ENOENT) {
			d->st.appraiser_answers++;
			allow = true;
		} else if (r < 0) {
			d->st.errors++;
			vlog_err("fanotify response for fd %d failed: %s", e->fd, strerror(-r));
		}
	} else if (e->side) {
		int r = vd_fan_answer(e->side->group, e->fd, allow);

		if (r < 0) {
			d->st.errors++;
			vlog_err("fanotify response for fd %d (%s) failed: %s", e->fd, e->side->point, strerror(-r));
		}
	} else {
		vd_fan_respond(d, e->answer_no, allow);
	}
	if (e->parked)
		vd_held_answered(d, true);
	if (allow)
		d->st.allowed++;
	else
		d->st.denied++;
	vd_stats_latency(d, e->t0);
}

/* Event @i waits for measurement @seq, decided on @r meanwhile (kept: a cache slot may be reused). */
static void park(struct vd *d, int i, const struct result *r, uint64_t seq)
{
	struct ev *e = &d->ev[i];

	if (r != &e->res) {
		e->res = *r;
		e->res.sig = NULL;
		e->res.siglen = 0;
		if (r->siglen && (e->res.sig = malloc(r->siglen))) {
			memcpy(e->res.sig, r->sig, r->siglen);
			e->res.siglen = r->siglen;
		}
		e->has_res = true;
	}
	e->mwait = seq;
	e->leader = -1;		/* out of its group: it goes on alone */
	e->next_waiter = -1;
	d->nmwait++;
}

/*
 * Log, then PCR, by the list's writer (commit.c): the event waits for it
 * and the loop goes on. A version is measured once per lease into each
 * PCR; an event of a version whose measurement is on its way waits for
 * that one. "Measured" is remembered only under a lease: a file open for
 * writing is measured at every access, and after any writer (a shared
 * mapping changes content without changing the version) again.
 * Return: 1 measured (now or before); 0 it waits (parked: vd_finish is
 * called again when the writer is done); -1 it could not be measured (log
 * write or sync failed, disk full, TPM gone: in enforce mode the access is
 * denied, so that nothing runs that the log, and so the attestation, does
 * not show; the writer recovers by itself at a later measurement, mlog.h).
 */
static int measure(struct vd *d, int i, const struct result *r)
{
	struct ev *e = &d->ev[i];
	unsigned int pcr = e->dec.pcr >= 0 ? (unsigned int)e->dec.pcr : VG_POLICY_DEFAULT_PCR;
	bool sig = e->dec.template_name && strcmp(e->dec.template_name, "ima-sig") == 0;
	struct measured *m = &d->measured[vd_key_slot(&e->key)];
	bool keep = vd_lease_valid_for(d, e);
	uint64_t seq;

	if (e->mstate != VD_MEAS_NONE)
		return e->mstate == VD_MEAS_OK ? 1 : -1;
	if (!keep || !m->valid || !vd_key_eq(&m->key, &e->key) || m->lease_gen != e->lease_gen)
		*m = (struct measured){ .valid = keep, .key = e->key, .lease_gen = e->lease_gen };
	if (!d->mlog || (m->pcrs & (1u << pcr)))
		return 1;
	if (m->valid && (m->inflight & (1u << pcr))) {
		park(d, i, r, m->seq);
		return 0;
	}
	if (!r->digest.len || vd_commit_submit(d, i, pcr, r, sig, &seq) < 0) {
		d->st.errors++;
		d->st.measure_failures++;
		vlog_err("measurement of %s failed: %s", vd_ev_path(e),
		       r->digest.len ? "out of memory" : "no digest");
		return -1;
	}
	if (m->valid) {
		m->inflight |= 1u << pcr;
		m->seq = seq;
	}
	park(d, i, r, seq);
	return 0;
}

void vd_measure_waiters(struct vd *d)
{
	for (int i = 0; d->nmwait && i < d->ev_hi; i++) {
		struct ev *e = &d->ev[i];

		if (!e->used || !e->mwait || e->mwait > d->commit_done)
			continue;
		e->mwait = 0;
		d->nmwait--;
		vd_finish(d, i, &e->res);
	}
}

/* A verdict for this access only (a writer was, or came): never in the cache. */
struct result *vd_result_uncached(struct vd *d, const struct vkey *k)
{
	free(d->uncached.sig);
	memset(&d->uncached, 0, sizeof(d->uncached));
	d->uncached.key = *k;
	return &d->uncached;
}

void vd_facts_of(const struct vd *d, const struct ev *e, struct vd_facts *f)
{
	*f = (struct vd_facts){
		.policy = d->policy,
		.mode = d->mode,
		.fail_open = d->fail_open,
		.policy_access = d->policy_access,
		.policy_execs = d->loaders.policy_execs,
		.marks = d->ignore_ok && d->notif >= 0,
		.ignore_open_ok = d->ignore_open_ok,
		.trust = d->trust != NULL,
		.trust_algo = d->trust ? d->trust->algo : 0,
		.max_size = d->max_size,
		.opener = VD_OPENER_UNASKED,
		.path_named = 1,
		.archive = VD_ARCHIVE_UNASKED,
	};
	if (!e)
		return;
	f->before = e->before;
	f->side = e->side != NULL;
	f->size = e->key.size;
	f->acc = &e->acc;
	f->dec = &e->dec;
	f->measured = e->mstate;
}

/* Set the kernel ignore mark @v allows on @e's inode, under the lease its verdict was made in. */
static void ignore_inode(struct vd *d, const struct ev *e, uint32_t mask)
{
	struct lease *l = vd_lease_get(d, e->key.dev, e->key.ino);

	if (!mask || !e->leased || !l || l->gen != e->lease_gen)
		return;
	if (vd_fan_ignore(d, e->fd, mask) == 0) {
		l->ignored = true;
		d->st.ignore_marks++;
	}
}

void vd_verdict_apply(struct vd *d, int i, const struct vd_verdict *v, struct result *r,
		      const char *package)
{
	struct ev *e = &d->ev[i];
	uint32_t mark = v->ignore;

	if (v->how == VD_HOW_FAIL) {
		if (v->too_large)
			d->st.too_large++;
		if (e->before)
			d->st.before_failed++;
		else
			vd_stats_reason(d, v->reason);
		vd_audit(d, e, v->record, v->reason, v->rule);
		if (!e->before)
			vd_answer(d, e, v->allow);
		vd_ev_release(d, i);
		return;
	}
	if (v->how != VD_HOW_JUDGED) {	/* the policy wants nothing of it */
		vd_answer(d, e, true);
		vd_ev_release(d, i);
		return;
	}
	if (v->access_audit)
		vd_audit(d, e, "allow", "audit-access", v->access_rule);
	if (v->archive) {
		/* counted every time; recorded once per file version and lease (a cache hit is not news) */
		d->st.trusted_archive++;
		if (!r->archive_audited)
			vd_audit_package(d, e, "allow", "trusted-archive", v->dec.rule[VG_CLASS_APPRAISE],
					 package);
		r->archive_audited = true;
		if (r == &e->res) {	/* a copy, while it waited for its measurement: the cache's too */
			struct result *c = e->leased ? vd_cache_get(d, &e->key, e->lease_gen) : NULL;

			if (c)
				c->archive_audited = true;
		}
	}
	if (v->audit)
		vd_audit(d, e, "allow", "audit", v->dec.rule[VG_CLASS_AUDIT]);
	/*
	 * An allow kept as a kernel ignore mark. For an open, after the
	 * answer: the opener goes on meanwhile, and an open before the mark
	 * is a cache hit here. For an exec, before it: the mark then also
	 * spares the open event the kernel raises right after the exec's
	 * (decide.c, ignore_mask), a whole round trip.
	 */
	if (mark && (e->mask & VD_EV_EXEC)) {
		ignore_inode(d, e, mark);
		mark = 0;
	}
	if (e->before) {
		/* it runs already: not denied, said (before.c) */
		if (v->deny) {
			d->st.before_failed++;
			vd_audit(d, e, v->record, v->reason, v->rule);
		}
		ignore_inode(d, e, mark);
		vd_ev_release(d, i);
		return;
	}
	/*
	 * The record is written before the answer: once the access goes on (or
	 * fails), its audit line is there, and the subject is still alive to
	 * be named by /proc/PID/exe.
	 */
	if (v->deny) {
		if (v->allow)
			d->st.would_deny++;
		vd_stats_reason(d, v->reason);
		vd_audit(d, e, v->record, v->reason, v->rule);
	}
	vd_answer(d, e, v->allow);
	ignore_inode(d, e, mark);
	vd_ev_release(d, i);
}

int vd_judge(struct vd *d, int i, struct vd_facts *f, struct result *r, struct vd_verdict *v)
{
	struct ev *e = &d->ev[i];
	const char *package = NULL;

	f->res = r;
	for (;;) {
		vd_decide(f, v);
		switch (v->next) {
		case VD_NEXT_MEASURE: {
			int m = measure(d, i, r);

			if (m == 0)
				return 0;	/* vd_measure_waiters goes on */
			f->measured = m > 0 ? VD_MEAS_OK : VD_MEAS_FAILED;
			continue;
		}
		case VD_NEXT_ARCHIVE:
			/* no label: the archive's digest for this path? */
			f->archive = vd_ev_path(e) && e->path && vd_trust_judge(d, e, r, &package) > 0 ?
				VD_ARCHIVE_YES : VD_ARCHIVE_NO;
			continue;
		case VD_NEXT_ANSWER:
			vd_verdict_apply(d, i, v, r, package);
			return 0;
		case VD_NEXT_ACCESS:
		case VD_NEXT_LOADER:
		case VD_NEXT_RESULT:
			return 1;
		}
	}
}

void vd_finish(struct vd *d, int i, struct result *r)
{
	struct vd_verdict v;
	struct vd_facts f;

	vd_facts_of(d, &d->ev[i], &f);
	if (vd_judge(d, i, &f, r, &v))	/* not asked of an event whose result is in */
		vd_fail_one(d, i, "appraisal-error", d->ev[i].dec.rule[VG_CLASS_APPRAISE]);
}

void vd_finish_group(struct vd *d, int leader, struct result *r)
{
	int i = leader;

	while (i >= 0) {
		int next = d->ev[i].next_waiter;

		vd_finish(d, i, r);
		i = next;
	}
}

void vd_fail_one(struct vd *d, int i, const char *why, int rule)
{
	struct vd_verdict v;
	struct vd_facts f;

	vd_facts_of(d, &d->ev[i], &f);
	f.failed = why;
	f.failed_rule = rule;
	vd_decide(&f, &v);
	vd_verdict_apply(d, i, &v, NULL, NULL);
}

/* No answer in time, or the appraiser died: the fail action. */
void vd_fail_group(struct vd *d, int leader, const char *why)
{
	int i = leader;

	vd_uq_remove(d, leader);
	vd_req_done(d, &d->ev[leader]);
	while (i >= 0) {
		int next = d->ev[i].next_waiter;

		vd_fail_one(d, i, why, d->ev[i].dec.rule[VG_CLASS_APPRAISE]);
		i = next;
	}
}
