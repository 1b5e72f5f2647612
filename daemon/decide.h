/* SPDX-License-Identifier: MIT */
/*
 * decide.h - vigild's decision on one access, as one pure function: the
 * facts in, the verdict out (decide.c). No I/O, no clock, no global, no
 * allocation: what the decision needs from the system (whether the opener
 * is a dynamic loader, the file's appraisal, its measurement, the trust
 * database's word on its digest) it asks for in the verdict (@next), and
 * the caller calls it again with that fact filled in. The kernel's
 * process_measurement() (security/integrity/ima/ima_main.c) is the model:
 * the whole decision in one place.
 *
 *   intake (events.c)   fanotify event ─► facts: fstat, who opens, the
 *                       policy's view of the access, the cache
 *   decision (decide.c) facts ─► verdict, or the next fact it needs
 *   the next fact       loader.c (vd_loader_is), an appraiser (pool.c,
 *                       dispatch.c), the list's writer (commit.c), the
 *                       trust index (trust.c)
 *   answer (verdict.c)  verdict ─► audit lines, counters, the kernel's
 *                       answer, an ignore mark, the slot released
 *
 * This header knows no struct vd: tests/unit/test_vigild_decide.c drives
 * vd_decide() alone over a table of cases.
 */
#ifndef VIGILD_DECIDE_H
#define VIGILD_DECIDE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vigil/hash.h"
#include "vigil/policy.h"
#include "vigild.h"
#include "vigild_ctl.h"

enum mode { MODE_ENFORCE = VD_CTL_ENFORCE, MODE_PERMISSIVE = VD_CTL_PERMISSIVE, MODE_FIX = VD_CTL_FIX };

/* what an event is, in fanotify.c's words to the rest */
#define VD_EV_OPEN 0x1u		/* FAN_OPEN_PERM */
#define VD_EV_EXEC 0x2u		/* FAN_OPEN_EXEC_PERM */

/* a file version: what a verdict is kept for */
struct vkey {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime, ctime;
};

/* a file version's appraisal (or hash): fresh from an appraiser, or kept (cache.c) */
struct result {
	bool valid, appraised;
	bool sig_required;	/* appraised with appraise_type=imasig */
	bool archive_audited;	/* an allow by the trust database was recorded for this version */
	uint32_t allowed_algos;	/* ... and with this appraise_algos= (0: any) */
	uint32_t lease_gen;	/* valid while this lease generation is held */
	struct vkey key;
	int err;
	uint32_t status;
	char cause[40];
	struct vg_digest digest;
	uint16_t siglen;
	uint8_t *sig;
};

/* @r passed its appraisal. */
static inline bool vd_result_passes(const struct result *r)
{
	return r && r->appraised && !r->err && vd_status_pass(r->status);
}

/*
 * @r passed under requirements at least as strict as these: a signature
 * if one is needed, algorithms within @need_algos (0: any).
 */
static inline bool vd_result_satisfies(const struct result *r, bool need_sig, uint32_t need_algos)
{
	return vd_result_passes(r) && (r->sig_required || !need_sig) &&
	       (!need_algos || (r->allowed_algos && !(r->allowed_algos & ~need_algos)));
}

/* an event's measurement: not asked yet, or what the list's writer said */
enum { VD_MEAS_NONE, VD_MEAS_OK, VD_MEAS_FAILED };

/* whether the opener is a dynamic loader (loader.c): asked only when it changes the decision */
enum vd_opener { VD_OPENER_UNASKED, VD_OPENER_OTHER, VD_OPENER_LOADER, VD_OPENER_UNKNOWN };

/* the trust database's word on an unlabeled file's digest (trust.c) */
enum { VD_ARCHIVE_UNASKED = -1, VD_ARCHIVE_NO = 0, VD_ARCHIVE_YES = 1 };

struct vd_facts {
	/* vigild's settings */
	const struct vg_policy *policy;	/* NULL: none loaded, every access is allowed */
	enum mode mode;
	bool fail_open;			/* --fail-open */
	bool policy_access;		/* the policy has access rules (allow, deny, audit_access) */
	bool policy_execs;		/* a rule can match an exec: a loader's open may be one */
	bool marks;			/* an allow may be kept as a kernel ignore mark (an inode-only
					 * policy, the FAN_ATTRIB channel, not fix mode) */
	bool ignore_open_ok;		/* ... for opens too: no rule can match an exec */
	bool trust;			/* a trust database is loaded (trust=archive) */
	unsigned int trust_algo;	/* ... and the algorithm its digests are in */
	uint64_t max_size;		/* --max-size, 0: none */

	/* the event */
	bool own;			/* from vigild itself or one of its appraisers */
	bool irregular;			/* not a regular file */
	bool full;			/* no room in the event table */
	bool unreadable;		/* what the file is could not be had (fstat) */
	bool before;			/* a program running before ready: no kernel waits */
	bool side;			/* read from a side's group (side.c): answered there */
	bool subject_unknown;		/* whose access this is, or its program's name, cannot be told */
	enum vd_opener opener;
	int path_named;			/* < 0: a path= rule needs the file's name here, unknown */
	off_t size;
	const struct vg_access *acc;	/* the access as the policy sees it; NULL: not looked at yet */
	const struct vg_decision *dec;	/* the policy's actions once matched; NULL: match now */
	const char *failed;		/* an event in the table whose appraisal or measurement could
					 * not be had (timeout, no-appraiser, overflow, ...): the fail
					 * action for this reason, before anything else */
	long failed_rule;		/* ... under this rule (-1: none) */

	/* what was found for it */
	const struct result *res;	/* the appraisal or hash; NULL: none yet */
	bool res_kept;			/* @res was kept from before (the cache, an empty new file):
					 * it counts only if it fits this access */
	int measured;			/* VD_MEAS_*: the measurement into the list */
	int archive;			/* VD_ARCHIVE_*: the trust database on @res's digest */
};

/* what the caller does next */
enum vd_next {
	VD_NEXT_ANSWER,			/* decided: answer as @how says */
	VD_NEXT_ACCESS,			/* look at the access (facts.acc and the subject's), again */
	VD_NEXT_LOADER,			/* ask whether the opener is a loader (facts.opener), again */
	VD_NEXT_RESULT,			/* appraise or hash the file (facts.res), again */
	VD_NEXT_MEASURE,		/* measure it into the list (facts.measured), again */
	VD_NEXT_ARCHIVE,		/* look its digest up in the trust index (facts.archive), again */
};

/* how the access is answered */
enum vd_how {
	VD_HOW_UNDECIDED,		/* @next is not VD_NEXT_ANSWER */
	VD_HOW_OWN,			/* vigild's own access: allowed, counted apart */
	VD_HOW_PASS,			/* nothing to judge (not a regular file, no policy): allowed */
	VD_HOW_OVERFLOW,		/* no room: the fail action, unrecorded */
	VD_HOW_NOTHING,			/* the policy wants nothing of it: allowed, nothing recorded */
	VD_HOW_JUDGED,			/* judged on its result: @deny, the records below */
	VD_HOW_FAIL,			/* the fail action for @reason, recorded as @record */
};

struct vd_verdict {
	enum vd_next next;
	enum vd_how how;
	bool allow;			/* the kernel's answer (a program that ran before ready gets none) */
	bool deny;			/* judged: the policy denies (in enforce mode the answer) */
	const char *reason;		/* why it is denied or failed */
	long rule;			/* ... by this rule (-1: none) */
	const char *record;		/* the audit line's action for @reason (deny, would-deny,
					 * allow-on-failure, deny-on-failure, ran-before-ready), or NULL */
	struct vg_decision dec;		/* the policy's actions (IMA classes) */
	bool as_exec;			/* a loader's open: also the exec of the file (acc.also_func) */
	bool cache_hit, cache_miss;	/* @res was kept and fits / no fitting result */
	bool too_large;			/* failed: over --max-size */
	bool pass_allows;		/* with a result to come: the verdict is an allow exactly when
					 * the appraisal passes (an appraiser may answer it, pool.c) */
	bool access_audit;		/* an audit_access rule matched: recorded as an allow */
	long access_rule;
	bool audit;			/* the policy audits it (dec.rule[VG_CLASS_AUDIT]) */
	bool archive;			/* allowed by the trust database (unlabeled, its package's digest) */
	uint32_t ignore;		/* VD_EV_*: a kernel ignore mark may hide these accesses now */
};

/*
 * vd_decide - the decision on the access @f describes, into @v (all of it
 * written). Pure: the same facts give the same verdict, and nothing is
 * read but @f and what it points to.
 */
void vd_decide(const struct vd_facts *f, struct vd_verdict *v);

/*
 * vd_result_fits - may the verdict @r, made for another access of the
 * same version, stand for the access @dec (of a policy appraising with
 * @need_appraise)? Only if it was at least as strict and passed, or was
 * made under the same requirements; trust=archive also wants an unlabeled
 * file's digest in the trust database's algorithm (@trust, @trust_algo).
 */
bool vd_result_fits(const struct result *r, const struct vg_decision *dec, bool need_appraise,
		    bool trust, unsigned int trust_algo);

#endif
