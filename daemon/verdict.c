// SPDX-License-Identifier: MIT
/*
 * verdict.c - deciding and answering an event once its result (appraisal
 * or hash, fresh or cached) is known: measurement into the log (once per
 * version under a lease), the appraisal verdict, access rules, audit,
 * the kernel ignore mark for a clean inode-only allow, and the answer.
 * The fail action for events whose appraisal could not be had is here
 * too (vd_fail_group).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor.h"

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
			vd_log("%s: the appraiser allowed an access the monitor denies", vd_ev_path(e));
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
			vd_log("fanotify response for fd %d failed: %s", e->fd, strerror(-r));
		}
	} else if (e->side) {
		int r = vd_fan_answer(e->side->group, e->fd, allow);

		if (r < 0) {
			d->st.errors++;
			vd_log("fanotify response for fd %d (%s) failed: %s", e->fd, e->side->point, strerror(-r));
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
		vd_log("measurement of %s failed: %s", vd_ev_path(e),
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

void vd_measured_result(struct vd *d, uint64_t seq, int ev, uint16_t gen, unsigned int pcr,
			const struct vkey *k, uint32_t lease_gen, bool ok)
{
	struct measured *m = &d->measured[vd_key_slot(k)];
	struct ev *e = &d->ev[ev];

	d->commit_done = seq;
	if (m->valid && vd_key_eq(&m->key, k) && m->lease_gen == lease_gen) {
		m->inflight &= ~(1u << pcr);
		if (ok)
			m->pcrs |= 1u << pcr;
	}
	if (e->used && e->gen == gen && e->mwait == seq)
		e->mstate = ok ? VD_MEAS_OK : VD_MEAS_FAILED;
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

static enum vg_integrity integrity_of(const struct result *r)
{
	if (!r->appraised || r->err)
		return VG_INTEGRITY_UNKNOWN;
	switch (r->status) {
	case VG_ST_PASS:
	case VG_ST_PASS_IMMUTABLE:
		return VG_INTEGRITY_PASS;
	case VG_ST_NOLABEL:
	case VG_ST_NOXATTRS:
		return VG_INTEGRITY_NOLABEL;
	case VG_ST_FAIL:
	case VG_ST_FAIL_IMMUTABLE:
		return VG_INTEGRITY_FAIL;
	default:
		return VG_INTEGRITY_UNKNOWN;
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

/*
 * Would an access of this inode as @func/@mask pass with nothing left to
 * do: no measurement, no audit, no access rule, and an appraisal that @r
 * has passed already, under requirements at least as strict (a
 * signature, the algorithms)? Then an ignore mark may hide that access.
 *   - An exec: a loader's open of this inode is an exec of it too
 *     (loader.c), and a mark for opens would hide that open.
 *   - An open: the kernel follows an exec's permission event with an
 *     open's for the same file; a mark for opens set at the exec spares
 *     that second event.
 */
static bool needs_nothing_as(struct vd *d, const struct ev *e, const struct result *r,
			     enum vg_func func, uint32_t mask)
{
	struct vg_access xa = e->acc;
	struct vg_decision xd;

	if (d->policy_access)
		return false;
	xa.func = func;
	xa.mask = mask;
	xa.also_func = VG_FUNC_NONE;
	xa.also_mask = 0;
	if (vg_policy_match(d->policy, &xa, VG_CLASSES_IMA, &xd) < 0 || xd.measure || xd.audit)
		return false;
	return !xd.appraise || vd_result_satisfies(r, xd.flags & VG_POLF_DIGSIG_REQUIRED, xd.allowed_algos);
}

static void ignore_inode(struct vd *d, const struct ev *e, const struct result *r)
{
	uint32_t mask = (uint32_t)e->mask & (VD_EV_OPEN | VD_EV_EXEC);
	struct lease *l = vd_lease_get(d, e->key.dev, e->key.ino);

	if (mask == VD_EV_EXEC && needs_nothing_as(d, e, r, VG_FUNC_FILE_CHECK, VG_MAY_READ))
		mask |= VD_EV_OPEN;
	/* the loader's open of this inode must still be seen, unless its exec needs nothing */
	if (!d->ignore_open_ok && (mask & VD_EV_OPEN) &&
	    !needs_nothing_as(d, e, r, VG_FUNC_BPRM_CHECK, VG_MAY_EXEC))
		mask &= ~VD_EV_OPEN;
	if (!mask || !e->leased || !l || l->gen != e->lease_gen)
		return;
	if (vd_fan_ignore(d, e->fd, mask) == 0) {
		l->ignored = true;
		d->st.ignore_marks++;
	}
}

/* Decide event @i with the appraisal/hash result @r, answer it, release it. */
void vd_finish(struct vd *d, int i, struct result *r)
{
	struct ev *e = &d->ev[i];
	const char *reason = NULL, *package = NULL;
	long rule = -1;
	bool deny = false, archive = false;

	if (e->dec.measure && r) {
		int m = measure(d, i, r);

		if (m == 0)
			return;		/* vd_measure_waiters goes on */
		if (m < 0 && !d->fail_open) {
			deny = true;
			reason = "measurement-failed";
			rule = e->dec.rule[VG_CLASS_MEASURE];
		}
	}
	if (!deny && e->need_appraise) {
		if (!r || r->err) {
			deny = true;
			reason = "appraisal-error";
			rule = e->dec.rule[VG_CLASS_APPRAISE];
		} else if (!vd_status_pass(r->status) && e->dec.trust_archive && vd_ev_path(e) && e->path && vd_trust_judge(d, e, r, &package) > 0) {
			archive = true;	/* no label, and the archive's digest for this path */
		} else if (!vd_status_pass(r->status)) {
			deny = true;
			reason = r->cause[0] ? r->cause : "unknown";
			rule = e->dec.rule[VG_CLASS_APPRAISE];
		}
	}
	if (!deny && d->policy_access) {
		struct vg_decision ad;

		e->acc.appraisal = r ? integrity_of(r) : VG_INTEGRITY_UNKNOWN;
		if (vg_policy_match(d->policy, &e->acc, 1u << VG_CLASS_ACCESS, &ad) == 0) {
			if (ad.verdict == VG_VERDICT_DENY) {
				deny = true;
				reason = "access-rule";
				rule = ad.rule[VG_CLASS_ACCESS];
			} else if (ad.verdict == VG_VERDICT_AUDIT) {
				vd_audit(d, e, "allow", "audit-access", ad.rule[VG_CLASS_ACCESS]);
			}
		}
	}
	if (!deny && archive) {
		/* counted every time; recorded once per file version and lease (a cache hit is not news) */
		d->st.trusted_archive++;
		if (!r->archive_audited)
			vd_audit_package(d, e, "allow", "trusted-archive", e->dec.rule[VG_CLASS_APPRAISE],
					 package);
		r->archive_audited = true;
		if (r == &e->res) {	/* a copy, while it waited for its measurement: the cache's too */
			struct result *c = e->leased ? vd_cache_get(d, &e->key, e->lease_gen) : NULL;

			if (c)
				c->archive_audited = true;
		}
	}
	if (!deny && e->dec.audit)
		vd_audit(d, e, "allow", "audit", e->dec.rule[VG_CLASS_AUDIT]);
	/*
	 * An allow kept as a kernel ignore mark (an allow by the archive
	 * depends on the path: no mark, a hard link elsewhere). For an open,
	 * after the answer: the opener goes on meanwhile, and an open before
	 * the mark is a cache hit here. For an exec, before it: the mark then
	 * also spares the open event the kernel raises right after the exec's
	 * (needs_nothing_as), a whole round trip.
	 */
	bool mark = !deny && !archive && !e->dec.audit && d->ignore_ok && d->notif >= 0 && d->mode != MODE_FIX;

	if (mark && (e->mask & VD_EV_EXEC)) {
		ignore_inode(d, e, r);
		mark = false;
	}
	if (e->before) {
		/* it runs already: not denied, said (before.c) */
		if (deny) {
			d->st.before_failed++;
			vd_audit(d, e, "ran-before-ready", reason, rule);
		}
		if (mark)
			ignore_inode(d, e, r);
		vd_ev_release(d, i);
		return;
	}
	/*
	 * The record is written before the answer: once the access goes on (or
	 * fails), its audit line is there, and the subject is still alive to
	 * be named by /proc/PID/exe.
	 */
	if (deny && d->mode == MODE_ENFORCE) {
		vd_stats_reason(d, reason);
		vd_audit(d, e, "deny", reason, rule);
		vd_answer(d, e, false);
	} else {
		if (deny) {
			d->st.would_deny++;
			vd_stats_reason(d, reason);
			vd_audit(d, e, "would-deny", reason, rule);
		}
		vd_answer(d, e, true);
	}
	if (mark)
		ignore_inode(d, e, r);
	vd_ev_release(d, i);
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
	bool allow = d->fail_open || d->mode != MODE_ENFORCE;

	if (d->ev[i].before) {
		d->st.before_failed++;
		vd_audit(d, &d->ev[i], "ran-before-ready", why, rule);
		vd_ev_release(d, i);
		return;
	}
	vd_stats_reason(d, why);
	vd_audit(d, &d->ev[i], allow ? "allow-on-failure" : "deny-on-failure", why, rule);
	vd_answer(d, &d->ev[i], allow);
	vd_ev_release(d, i);
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
