// SPDX-License-Identifier: MIT
/*
 * decide.c - vigild's decision on one access, in the order the kernel's
 * process_measurement() takes it: who asks (vigild itself, not a regular
 * file, no room), what the policy wants of it (the IMA classes, a loader's
 * open also as the exec), the result it needs (kept or fresh: appraisal or
 * hash, a size over --max-size), the measurement, the appraisal's verdict
 * (trust=archive for an unlabeled file), the access rules, the audit rule,
 * and the mode (permissive, fix, --fail-open) with what may be kept as a
 * kernel ignore mark. Pure (decide.h): every fact it lacks it asks for in
 * the verdict; the I/O is the caller's (events.c, verdict.c). It calls
 * nothing of the monitor but the policy matcher, which never allocates.
 */
#include <string.h>

#include "decide.h"

/* The fail action: the access goes on only with --fail-open or outside enforce mode. */
static void fail(const struct vd_facts *f, struct vd_verdict *v, const char *why, long rule)
{
	v->next = VD_NEXT_ANSWER;
	v->how = VD_HOW_FAIL;
	v->allow = f->fail_open || f->mode != MODE_ENFORCE;
	v->deny = false;
	v->reason = why;
	v->rule = rule;
	v->record = f->before ? "ran-before-ready" : v->allow ? "allow-on-failure" : "deny-on-failure";
}

static void quiet(struct vd_verdict *v, enum vd_how how)
{
	v->next = VD_NEXT_ANSWER;
	v->how = how;
	v->allow = true;
}

static bool decision_eq(const struct vg_decision *x, const struct vg_decision *y)
{
	if (x->measure != y->measure || x->appraise != y->appraise || x->audit != y->audit ||
	    x->hash != y->hash || x->flags != y->flags || x->pcr != y->pcr ||
	    x->template_name != y->template_name || x->allowed_algos != y->allowed_algos ||
	    x->trust_archive != y->trust_archive || x->verdict != y->verdict)
		return false;
	for (int c = 0; c < VG_CLASS__MAX; c++)
		if (x->rule[c] != y->rule[c])
			return false;
	return true;
}

/*
 * The policy's actions (IMA classes). An open by the dynamic loader
 * (`ld.so PROG`) is also the exec of the file (loader.c): who opens is
 * asked only when the merged decision differs from the open's alone, or
 * when access rules read the verdict. Return: false the opener must be
 * asked first (@v says so), or its lookup failed (@v: the fail action).
 */
static bool match(const struct vd_facts *f, struct vd_verdict *v)
{
	struct vg_access xa;
	struct vg_decision xd;

	if (f->dec) {
		v->dec = *f->dec;
		return true;
	}
	vg_policy_match(f->policy, f->acc, VG_CLASSES_IMA, &v->dec);
	if (f->acc->func == VG_FUNC_BPRM_CHECK || !f->policy_execs)
		return true;
	xa = *f->acc;
	xa.also_func = VG_FUNC_BPRM_CHECK;
	xa.also_mask = VG_MAY_EXEC;
	vg_policy_match(f->policy, &xa, VG_CLASSES_IMA, &xd);
	if (!f->policy_access && decision_eq(&v->dec, &xd))
		return true;
	switch (f->opener) {
	case VD_OPENER_UNASKED:
		v->next = VD_NEXT_LOADER;
		return false;
	case VD_OPENER_UNKNOWN:
		/* pid 0 (outside vigild's pid namespace): the subject cannot be told */
		fail(f, v, "unknown-subject", -1);
		return false;
	case VD_OPENER_LOADER:
		v->dec = xd;
		v->as_exec = true;
		return true;
	case VD_OPENER_OTHER:
		return true;
	}
	return true;
}

bool vd_result_fits(const struct result *r, const struct vg_decision *dec, bool need_appraise,
		    bool trust, unsigned int trust_algo)
{
	bool need_sig = dec->flags & VG_POLF_DIGSIG_REQUIRED;
	uint32_t need_algos = dec->allowed_algos;

	/* trust=archive compares the content digest of an unlabeled file in the database's algorithm */
	if (need_appraise && dec->trust_archive && trust && r->status == VG_ST_NOLABEL &&
	    r->digest.algo != trust_algo)
		return false;
	return !need_appraise || (r->sig_required == need_sig && r->allowed_algos == need_algos) ||
	       vd_result_satisfies(r, need_sig, need_algos);
}

static enum vg_integrity integrity_of(const struct result *r)
{
	if (!r || !r->appraised || r->err)
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

/*
 * Would an access of this inode as @func/@mask pass with nothing left to
 * do: no measurement, no audit, no access rule, and an appraisal that @r
 * has passed already, under requirements at least as strict (a
 * signature, the algorithms)? Then an ignore mark may hide that access.
 */
static bool needs_nothing_as(const struct vd_facts *f, const struct result *r, enum vg_func func,
			     uint32_t mask)
{
	struct vg_access xa = *f->acc;
	struct vg_decision xd;

	if (f->policy_access)
		return false;
	xa.func = func;
	xa.mask = mask;
	xa.also_func = VG_FUNC_NONE;
	xa.also_mask = 0;
	if (vg_policy_match(f->policy, &xa, VG_CLASSES_IMA, &xd) < 0 || xd.measure || xd.audit)
		return false;
	return !xd.appraise || vd_result_satisfies(r, xd.flags & VG_POLF_DIGSIG_REQUIRED, xd.allowed_algos);
}

/*
 * The accesses an ignore mark may hide once this one is allowed:
 *   - an exec: a loader's open of this inode is an exec of it too
 *     (loader.c), and a mark for opens would hide that open;
 *   - an open: the kernel follows an exec's permission event with an
 *     open's for the same file; a mark for opens set at the exec spares
 *     that second event.
 */
static uint32_t ignore_mask(const struct vd_facts *f)
{
	uint32_t mask = f->acc->func == VG_FUNC_BPRM_CHECK ? VD_EV_EXEC : VD_EV_OPEN;

	if (mask == VD_EV_EXEC && needs_nothing_as(f, f->res, VG_FUNC_FILE_CHECK, VG_MAY_READ))
		mask |= VD_EV_OPEN;
	/* the loader's open of this inode must still be seen, unless its exec needs nothing */
	if (!f->ignore_open_ok && (mask & VD_EV_OPEN) &&
	    !needs_nothing_as(f, f->res, VG_FUNC_BPRM_CHECK, VG_MAY_EXEC))
		mask &= ~VD_EV_OPEN;
	return mask;
}

void vd_decide(const struct vd_facts *f, struct vd_verdict *v)
{
	const struct result *r = f->res;
	bool need_result, archive = false;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->access_rule = -1;

	/* an event in the table whose appraisal or measurement could not be had */
	if (f->failed)
		return fail(f, v, f->failed, f->failed_rule);

	/* 1. who asks: vigild itself, a file the policy cannot judge, no room */
	if (f->own && !f->before)
		return quiet(v, VD_HOW_OWN);
	if (!f->unreadable && (f->irregular || !f->policy))
		return quiet(v, VD_HOW_PASS);
	if (f->full) {
		fail(f, v, "overflow", -1);
		v->how = VD_HOW_OVERFLOW;
		v->record = NULL;
		return;
	}
	if (f->unreadable)	/* a slow filesystem's server would not say what the file is */
		return fail(f, v, "unreadable", -1);
	if (!f->acc) {
		v->next = VD_NEXT_ACCESS;
		return;
	}
	/*
	 * Whose access this is cannot be told: the kernel reports an opener
	 * outside vigild's pid namespace as pid 0. Judged as anyone (uid 0,
	 * no program, not the loader), a rule about the subject could exempt
	 * it (dont_appraise uid=0, or an exec through ld.so under exec rules):
	 * the fail action instead, under no rule. The same for a program whose
	 * name in vigild's mount namespace cannot be told.
	 */
	if (f->subject_unknown)
		return fail(f, v, "unknown-subject", -1);

	/* 2. what the policy wants of it */
	if (!match(f, v))
		return;
	if (f->path_named < 0)	/* a path= rule cannot be judged: the file's name here is not known */
		return fail(f, v, "unknown-path", -1);
	if (!v->dec.appraise && !v->dec.measure && !v->dec.audit && !f->policy_access)
		return quiet(v, VD_HOW_NOTHING);

	/* 3. the result it needs: kept (if it fits) or fresh */
	need_result = v->dec.appraise || v->dec.measure;
	if (need_result && r && f->res_kept &&
	    !((r->appraised || !v->dec.appraise) && !r->err &&
	      vd_result_fits(r, &v->dec, v->dec.appraise, f->trust, f->trust_algo)))
		r = NULL;	/* made under weaker requirements, or an error: appraised afresh */
	if (need_result && !r) {
		v->cache_miss = true;
		if (f->max_size && (uint64_t)f->size > f->max_size) {
			fail(f, v, "file-too-large", v->dec.rule[VG_CLASS_APPRAISE]);
			v->too_large = true;
			return;
		}
		v->next = VD_NEXT_RESULT;
		v->pass_allows = v->dec.appraise && !v->dec.measure && !v->dec.audit && !f->policy_access &&
				 f->mode != MODE_FIX && f->acc->func != VG_FUNC_BPRM_CHECK &&
				 !f->side && !f->before;
		return;
	}
	v->cache_hit = need_result && f->res_kept;

	/* 4. the measurement: log, then PCR; a failure denies unless --fail-open */
	if (v->dec.measure && r) {
		if (f->measured == VD_MEAS_NONE) {
			v->next = VD_NEXT_MEASURE;
			return;
		}
		if (f->measured == VD_MEAS_FAILED && !f->fail_open) {
			v->deny = true;
			v->reason = "measurement-failed";
			v->rule = v->dec.rule[VG_CLASS_MEASURE];
		}
	}

	/* 5. the appraisal: a pass, or an unlabeled file its package's digest vouches for */
	if (!v->deny && v->dec.appraise) {
		if (!r || r->err) {
			v->deny = true;
			v->reason = "appraisal-error";
			v->rule = v->dec.rule[VG_CLASS_APPRAISE];
		} else if (!vd_status_pass(r->status) && v->dec.trust_archive &&
			   f->archive == VD_ARCHIVE_UNASKED) {
			v->next = VD_NEXT_ARCHIVE;
			return;
		} else if (!vd_status_pass(r->status) && v->dec.trust_archive && f->archive == VD_ARCHIVE_YES) {
			archive = true;
		} else if (!vd_status_pass(r->status)) {
			v->deny = true;
			v->reason = r->cause[0] ? r->cause : "unknown";
			v->rule = v->dec.rule[VG_CLASS_APPRAISE];
		}
	}

	/* 6. the access rules, on the appraisal's verdict */
	if (!v->deny && f->policy_access) {
		struct vg_access xa = *f->acc;
		struct vg_decision ad;

		if (v->as_exec) {
			xa.also_func = VG_FUNC_BPRM_CHECK;
			xa.also_mask = VG_MAY_EXEC;
		}
		xa.appraisal = integrity_of(r);
		if (vg_policy_match(f->policy, &xa, 1u << VG_CLASS_ACCESS, &ad) == 0) {
			if (ad.verdict == VG_VERDICT_DENY) {
				v->deny = true;
				v->reason = "access-rule";
				v->rule = ad.rule[VG_CLASS_ACCESS];
			} else if (ad.verdict == VG_VERDICT_AUDIT) {
				v->access_audit = true;
				v->access_rule = ad.rule[VG_CLASS_ACCESS];
			}
		}
	}
	v->archive = !v->deny && archive;
	v->audit = !v->deny && v->dec.audit;

	/* 7. the answer: the mode, and what a kernel ignore mark may keep */
	v->how = VD_HOW_JUDGED;
	if (f->before)
		v->record = v->deny ? "ran-before-ready" : NULL;
	else if (v->deny)
		v->record = f->mode == MODE_ENFORCE ? "deny" : "would-deny";
	v->allow = !v->deny || f->mode != MODE_ENFORCE;
	/* an allow by the archive depends on the path: no mark (a hard link elsewhere) */
	if (!v->deny && !archive && !v->dec.audit && f->marks && f->mode != MODE_FIX)
		v->ignore = ignore_mask(f);
}
