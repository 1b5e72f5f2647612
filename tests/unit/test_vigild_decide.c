// SPDX-License-Identifier: MIT
/*
 * test_vigild_decide - vigild's decision (daemon/decide.c) alone, over a
 * table of cases: facts in, verdict out, no daemon, no file, no kernel.
 * Each case names a policy text and the facts that differ from an
 * exec of a regular file by root in enforce mode; the verdict is compared
 * field by field. A last test checks the function is pure: the same
 * facts twice give the same bytes, and the facts are not written.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decide.h"

/* what a case's result is */
enum res_kind { RES_NONE, RES_PASS, RES_PASS_SIG, RES_FAIL, RES_ERR, RES_NOLABEL, RES_NOLABEL_SHA1 };

struct dcase {
	const char *name;
	const char *policy;		/* NULL: no policy loaded */
	/* facts (zero: the default) */
	bool open;			/* an open (FILE_CHECK) instead of an exec */
	enum mode mode;
	bool fail_open, own, irregular, full, unreadable, before, side, subject_unknown;
	bool no_acc;			/* the access not looked at yet */
	bool policy_access, policy_execs, marks, ignore_open_ok, trust;
	int path_named;			/* 0 is taken as 1 (named); -1: unknown */
	enum vd_opener opener;
	uint32_t fowner;
	uint64_t max_size;
	off_t size;
	const char *failed;
	long failed_rule;
	enum res_kind res;
	bool res_kept;
	int measured;
	int archive;			/* 0 is taken as VD_ARCHIVE_UNASKED; 1 yes; 2 no */
	/* the verdict expected */
	enum vd_next next;
	enum vd_how how;
	bool allow, deny;
	const char *reason;
	long rule;			/* 0 is taken as -1 unless rule_set */
	bool rule_set;
	const char *record;
	bool as_exec, cache_hit, cache_miss, too_large, pass_allows, access_audit, audit, archive_yes;
	uint32_t ignore;
};

#define APPRAISE_EXEC "appraise func=BPRM_CHECK\n"
#define APPRAISE_OPEN "appraise func=FILE_CHECK\n"

static const struct dcase cases[] = {
	/* who asks */
	{ "own_process_allowed_unjudged", APPRAISE_EXEC, .own = true, .how = VD_HOW_OWN, .allow = true },
	{ "own_before_ready_is_judged", APPRAISE_EXEC, .own = true, .before = true,
	  .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "not_regular_passes", APPRAISE_EXEC, .irregular = true, .how = VD_HOW_PASS, .allow = true },
	{ "no_policy_passes", NULL, .how = VD_HOW_PASS, .allow = true },
	{ "table_full_enforce_denies", APPRAISE_EXEC, .full = true, .how = VD_HOW_OVERFLOW,
	  .reason = "overflow" },
	{ "table_full_fail_open_allows", APPRAISE_EXEC, .full = true, .fail_open = true,
	  .how = VD_HOW_OVERFLOW, .allow = true, .reason = "overflow" },
	{ "table_full_permissive_allows", APPRAISE_EXEC, .full = true, .mode = MODE_PERMISSIVE,
	  .how = VD_HOW_OVERFLOW, .allow = true, .reason = "overflow" },
	{ "unreadable_fails_even_without_policy", NULL, .unreadable = true, .how = VD_HOW_FAIL,
	  .reason = "unreadable", .record = "deny-on-failure" },
	{ "unreadable_fail_open", APPRAISE_EXEC, .unreadable = true, .fail_open = true, .how = VD_HOW_FAIL,
	  .allow = true, .reason = "unreadable", .record = "allow-on-failure" },
	{ "access_not_looked_at_asks", APPRAISE_EXEC, .no_acc = true, .next = VD_NEXT_ACCESS },
	{ "unknown_subject_fails_under_no_rule", "dont_appraise uid=0\n" APPRAISE_EXEC,
	  .subject_unknown = true, .how = VD_HOW_FAIL, .reason = "unknown-subject",
	  .record = "deny-on-failure" },
	{ "unknown_path_fails", "appraise func=BPRM_CHECK path=/usr/bin/x\n", .path_named = -1,
	  .how = VD_HOW_FAIL, .reason = "unknown-path", .record = "deny-on-failure" },
	{ "unknown_subject_permissive_allows", APPRAISE_EXEC, .subject_unknown = true,
	  .mode = MODE_PERMISSIVE, .how = VD_HOW_FAIL, .allow = true, .reason = "unknown-subject",
	  .record = "allow-on-failure" },

	/* what the policy wants */
	{ "open_under_exec_rules_wants_nothing", APPRAISE_EXEC, .open = true, .how = VD_HOW_NOTHING,
	  .allow = true },
	{ "dont_appraise_owner_wants_nothing", "dont_appraise fowner=0\n" APPRAISE_EXEC,
	  .how = VD_HOW_NOTHING, .allow = true },
	{ "dont_appraise_other_owner_appraises", "dont_appraise fowner=0\n" APPRAISE_EXEC, .fowner = 1000,
	  .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "exec_needs_its_appraisal", APPRAISE_EXEC, .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "open_appraisal_an_appraiser_may_answer", APPRAISE_OPEN, .open = true, .next = VD_NEXT_RESULT,
	  .cache_miss = true, .pass_allows = true },
	{ "side_open_answered_by_the_monitor", APPRAISE_OPEN, .open = true, .side = true,
	  .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "measured_open_answered_by_the_monitor", APPRAISE_OPEN "measure func=FILE_CHECK\n", .open = true,
	  .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "fix_mode_answered_by_the_monitor", APPRAISE_OPEN, .open = true, .mode = MODE_FIX,
	  .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "over_max_size_fails", APPRAISE_EXEC, .max_size = 100, .size = 101, .how = VD_HOW_FAIL,
	  .reason = "file-too-large", .rule = 0, .rule_set = true, .record = "deny-on-failure",
	  .cache_miss = true, .too_large = true },
	{ "at_max_size_is_appraised", APPRAISE_EXEC, .max_size = 100, .size = 100, .next = VD_NEXT_RESULT,
	  .cache_miss = true },

	/* the dynamic loader */
	{ "loader_asked_when_it_matters", APPRAISE_EXEC, .open = true, .policy_execs = true,
	  .next = VD_NEXT_LOADER },
	{ "loader_open_is_the_exec", APPRAISE_EXEC, .open = true, .policy_execs = true,
	  .opener = VD_OPENER_LOADER, .next = VD_NEXT_RESULT, .as_exec = true, .cache_miss = true,
	  .pass_allows = true },
	{ "other_opener_open_only", APPRAISE_EXEC, .open = true, .policy_execs = true,
	  .opener = VD_OPENER_OTHER, .how = VD_HOW_NOTHING, .allow = true },
	{ "opener_not_told_fails", APPRAISE_EXEC, .open = true, .policy_execs = true,
	  .opener = VD_OPENER_UNKNOWN, .how = VD_HOW_FAIL, .reason = "unknown-subject",
	  .record = "deny-on-failure" },
	{ "loader_asked_for_access_rules", "appraise\naudit_access func=FILE_CHECK\n", .open = true,
	  .policy_execs = true, .policy_access = true, .next = VD_NEXT_LOADER },
	{ "loader_not_asked_when_equal", "appraise\n", .open = true, .policy_execs = true,
	  .next = VD_NEXT_RESULT, .cache_miss = true, .pass_allows = true },

	/* the appraisal's verdict */
	{ "pass_allows", APPRAISE_EXEC, .res = RES_PASS, .how = VD_HOW_JUDGED, .allow = true },
	{ "pass_kept_as_exec_and_open_mark", APPRAISE_EXEC, .res = RES_PASS, .marks = true,
	  .how = VD_HOW_JUDGED, .allow = true, .ignore = VD_EV_EXEC | VD_EV_OPEN },
	{ "pass_open_mark_when_the_exec_needs_no_more", APPRAISE_EXEC APPRAISE_OPEN, .open = true,
	  .res = RES_PASS, .marks = true, .how = VD_HOW_JUDGED, .allow = true, .ignore = VD_EV_OPEN },
	{ "no_open_mark_when_the_exec_needs_a_signature",
	  "appraise func=BPRM_CHECK appraise_type=imasig\n" APPRAISE_OPEN, .open = true, .res = RES_PASS,
	  .marks = true, .how = VD_HOW_JUDGED, .allow = true },
	{ "pass_open_mark_when_no_exec_rule", APPRAISE_OPEN, .open = true, .res = RES_PASS, .marks = true,
	  .ignore_open_ok = true, .how = VD_HOW_JUDGED, .allow = true, .ignore = VD_EV_OPEN },
	{ "no_mark_in_fix_mode", APPRAISE_EXEC, .res = RES_PASS, .marks = true, .mode = MODE_FIX,
	  .how = VD_HOW_JUDGED, .allow = true },
	{ "failed_appraisal_denies", APPRAISE_EXEC, .res = RES_FAIL, .marks = true, .how = VD_HOW_JUDGED,
	  .deny = true, .reason = "invalid-hash", .rule = 0, .rule_set = true, .record = "deny" },
	{ "failed_appraisal_permissive_would_deny", APPRAISE_EXEC, .res = RES_FAIL, .mode = MODE_PERMISSIVE,
	  .how = VD_HOW_JUDGED, .allow = true, .deny = true, .reason = "invalid-hash", .rule = 0,
	  .rule_set = true, .record = "would-deny" },
	{ "failed_appraisal_fix_would_deny", APPRAISE_EXEC, .res = RES_FAIL, .mode = MODE_FIX,
	  .how = VD_HOW_JUDGED, .allow = true, .deny = true, .reason = "invalid-hash", .rule = 0,
	  .rule_set = true, .record = "would-deny" },
	{ "failed_appraisal_fail_open_still_denies", APPRAISE_EXEC, .res = RES_FAIL, .fail_open = true,
	  .how = VD_HOW_JUDGED, .deny = true, .reason = "invalid-hash", .rule = 0, .rule_set = true,
	  .record = "deny" },
	{ "appraisal_error_denies", "dont_appraise fowner=1\n" APPRAISE_EXEC, .res = RES_ERR,
	  .how = VD_HOW_JUDGED, .deny = true, .reason = "appraisal-error", .rule = 1, .rule_set = true,
	  .record = "deny" },
	{ "before_ready_failed_is_said_not_denied", APPRAISE_EXEC, .res = RES_FAIL, .before = true,
	  .how = VD_HOW_JUDGED, .deny = true, .reason = "invalid-hash", .rule = 0, .rule_set = true,
	  .record = "ran-before-ready" },
	{ "failed_appraiser_fail_action", APPRAISE_EXEC, .failed = "timeout", .failed_rule = 0,
	  .how = VD_HOW_FAIL, .reason = "timeout", .rule = 0, .rule_set = true,
	  .record = "deny-on-failure" },
	{ "failed_before_ready_said", APPRAISE_EXEC, .failed = "no-appraiser", .failed_rule = -1,
	  .before = true,
	  .how = VD_HOW_FAIL, .reason = "no-appraiser", .record = "ran-before-ready" },

	/* the cache */
	{ "kept_pass_hits", APPRAISE_EXEC, .res = RES_PASS, .res_kept = true, .how = VD_HOW_JUDGED,
	  .allow = true, .cache_hit = true },
	{ "kept_hash_pass_misses_a_signature_rule", "appraise func=BPRM_CHECK appraise_type=imasig\n",
	  .res = RES_PASS, .res_kept = true, .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "kept_signature_pass_fits_a_hash_rule", APPRAISE_EXEC, .res = RES_PASS_SIG, .res_kept = true,
	  .how = VD_HOW_JUDGED, .allow = true, .cache_hit = true },
	{ "kept_error_is_appraised_again", APPRAISE_EXEC, .res = RES_ERR, .res_kept = true,
	  .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "kept_fail_under_same_rule_hits", APPRAISE_EXEC, .res = RES_FAIL, .res_kept = true,
	  .how = VD_HOW_JUDGED, .deny = true, .reason = "invalid-hash", .rule = 0, .rule_set = true,
	  .record = "deny", .cache_hit = true },

	/* measurement */
	{ "measure_asks_for_the_list", "measure func=BPRM_CHECK\n", .res = RES_PASS,
	  .how = VD_HOW_JUDGED, .next = VD_NEXT_MEASURE },
	{ "measured_allows", "measure func=BPRM_CHECK\n", .res = RES_PASS, .measured = VD_MEAS_OK,
	  .how = VD_HOW_JUDGED, .allow = true },
	{ "measure_needs_a_hash", "measure func=BPRM_CHECK\n", .next = VD_NEXT_RESULT, .cache_miss = true },
	{ "measure_failed_denies", "measure func=BPRM_CHECK\n", .res = RES_PASS,
	  .measured = VD_MEAS_FAILED, .how = VD_HOW_JUDGED, .deny = true,
	  .reason = "measurement-failed", .rule = 0, .rule_set = true, .record = "deny" },
	{ "measure_failed_fail_open_allows", "measure func=BPRM_CHECK\n", .res = RES_PASS,
	  .measured = VD_MEAS_FAILED, .fail_open = true, .how = VD_HOW_JUDGED, .allow = true },
	{ "measure_failed_skips_the_appraisal", "measure func=BPRM_CHECK\n" APPRAISE_EXEC,
	  .res = RES_FAIL, .measured = VD_MEAS_FAILED, .how = VD_HOW_JUDGED, .deny = true,
	  .reason = "measurement-failed", .rule = 0, .rule_set = true, .record = "deny" },
	{ "measured_exec_mark_not_its_open", "measure func=BPRM_CHECK\n", .res = RES_PASS,
	  .measured = VD_MEAS_OK, .marks = true, .how = VD_HOW_JUDGED, .allow = true, .ignore = VD_EV_EXEC },

	/* trust=archive */
	{ "unlabeled_asks_the_archive", "appraise func=BPRM_CHECK trust=archive\n", .res = RES_NOLABEL,
	  .trust = true, .how = VD_HOW_JUDGED, .next = VD_NEXT_ARCHIVE },
	{ "archive_vouches_allows_without_mark", "appraise func=BPRM_CHECK trust=archive\n",
	  .res = RES_NOLABEL, .trust = true, .archive = 1, .marks = true, .how = VD_HOW_JUDGED,
	  .allow = true, .archive_yes = true },
	{ "archive_silent_denies", "appraise func=BPRM_CHECK trust=archive\n", .res = RES_NOLABEL,
	  .trust = true, .archive = 2, .how = VD_HOW_JUDGED, .deny = true, .reason = "missing-hash",
	  .rule = 0, .rule_set = true, .record = "deny" },
	{ "unlabeled_without_archive_rule_denies", APPRAISE_EXEC, .res = RES_NOLABEL, .trust = true,
	  .how = VD_HOW_JUDGED, .deny = true, .reason = "missing-hash", .rule = 0, .rule_set = true,
	  .record = "deny" },
	{ "kept_digest_in_other_algo_misses", "appraise func=BPRM_CHECK trust=archive\n",
	  .res = RES_NOLABEL_SHA1, .res_kept = true, .trust = true, .next = VD_NEXT_RESULT,
	  .cache_miss = true },

	/* access rules and audit */
	{ "access_deny_rule_denies", "deny func=BPRM_CHECK\n", .policy_access = true, .how = VD_HOW_JUDGED,
	  .deny = true, .reason = "access-rule", .rule = 0, .rule_set = true, .record = "deny" },
	{ "access_deny_on_failed_appraisal", APPRAISE_EXEC "deny func=BPRM_CHECK appraisal=fail\n",
	  .policy_access = true, .res = RES_PASS, .how = VD_HOW_JUDGED, .allow = true },
	{ "access_deny_on_failed_appraisal_denies", APPRAISE_EXEC "deny func=BPRM_CHECK appraisal=fail\n",
	  .policy_access = true, .mode = MODE_PERMISSIVE, .res = RES_FAIL, .how = VD_HOW_JUDGED,
	  .allow = true, .deny = true, .reason = "invalid-hash", .rule = 0, .rule_set = true,
	  .record = "would-deny" },
	{ "access_audit_rule_recorded", "audit_access func=BPRM_CHECK\n", .policy_access = true,
	  .how = VD_HOW_JUDGED, .allow = true, .access_audit = true },
	{ "audit_rule_recorded_without_mark", "audit func=BPRM_CHECK\n", .marks = true,
	  .how = VD_HOW_JUDGED, .allow = true, .audit = true },
	{ "audit_not_recorded_on_deny", "audit func=BPRM_CHECK\n" APPRAISE_EXEC, .res = RES_FAIL,
	  .how = VD_HOW_JUDGED, .deny = true, .reason = "invalid-hash", .rule = 1, .rule_set = true,
	  .record = "deny" },
};

static void fill_result(struct result *r, enum res_kind k)
{
	memset(r, 0, sizeof(*r));
	r->valid = true;
	r->appraised = true;
	r->digest.algo = VG_HASH_SHA256;
	r->digest.len = 32;
	switch (k) {
	case RES_NONE:
		break;
	case RES_PASS:
		r->status = VG_ST_PASS;
		break;
	case RES_PASS_SIG:
		r->status = VG_ST_PASS;
		r->sig_required = true;
		break;
	case RES_FAIL:
		r->status = VG_ST_FAIL;
		snprintf(r->cause, sizeof(r->cause), "invalid-hash");
		break;
	case RES_ERR:
		r->err = -EIO;
		snprintf(r->cause, sizeof(r->cause), "appraisal-error");
		break;
	case RES_NOLABEL:
		r->status = VG_ST_NOLABEL;
		snprintf(r->cause, sizeof(r->cause), "missing-hash");
		break;
	case RES_NOLABEL_SHA1:
		r->status = VG_ST_NOLABEL;
		r->digest.algo = VG_HASH_SHA1;
		snprintf(r->cause, sizeof(r->cause), "missing-hash");
		break;
	}
}

struct world {
	struct vg_policy *policy;
	struct vg_access acc;
	struct vg_decision dec;
	struct result res;
	struct vd_facts f;
};

static void facts_of_case(const struct dcase *c, struct world *w)
{
	w->policy = NULL;
	if (c->policy) {
		struct vg_policy_error e = { 0 };
		int r = vg_policy_parse(c->policy, strlen(c->policy), 0, &w->policy, &e);

		if (r)
			print_error("%s: policy %d:%d: %s\n", c->name, e.line, e.col, e.msg);
		assert_int_equal(r, 0);
	}
	memset(&w->acc, 0, sizeof(w->acc));
	w->acc.func = c->open ? VG_FUNC_FILE_CHECK : VG_FUNC_BPRM_CHECK;
	w->acc.mask = c->open ? VG_MAY_READ : VG_MAY_EXEC;
	w->acc.path = "/usr/bin/true";
	w->acc.fowner = c->fowner;
	fill_result(&w->res, c->res);
	w->f = (struct vd_facts){
		.policy = w->policy,
		.mode = c->mode,
		.fail_open = c->fail_open,
		.policy_access = c->policy_access,
		.policy_execs = c->policy_execs,
		.marks = c->marks,
		.ignore_open_ok = c->ignore_open_ok,
		.trust = c->trust,
		.trust_algo = VG_HASH_SHA256,
		.max_size = c->max_size,
		.own = c->own,
		.irregular = c->irregular,
		.full = c->full,
		.unreadable = c->unreadable,
		.before = c->before,
		.side = c->side,
		.subject_unknown = c->subject_unknown,
		.opener = c->opener,
		.path_named = c->path_named ? c->path_named : 1,
		.size = c->size,
		.acc = c->no_acc ? NULL : &w->acc,
		.failed = c->failed,
		.failed_rule = c->failed ? c->failed_rule : -1,
		.res = c->res == RES_NONE ? NULL : &w->res,
		.res_kept = c->res_kept,
		.measured = c->measured,
		.archive = c->archive == 1 ? VD_ARCHIVE_YES : c->archive == 2 ? VD_ARCHIVE_NO
									: VD_ARCHIVE_UNASKED,
	};
}

static int bad;	/* mismatches so far: every case is run, each mismatch said */

static void expect_str(const char *what, const char *name, const char *got, const char *want)
{
	if ((got == NULL) != (want == NULL) || (got && strcmp(got, want))) {
		print_error("%s: %s: got %s, want %s\n", name, what, got ? got : "(none)",
			    want ? want : "(none)");
		bad++;
	}
}

#define EXPECT(field, want)                                                                        \
	do {                                                                                       \
		if ((long)(v.field) != (long)(want)) {                                             \
			print_error("%s: " #field ": got %ld, want %ld\n", c->name, (long)(v.field),  \
				    (long)(want));                                                 \
			bad++;                                                                     \
		}                                                                                  \
	} while (0)

static void decide_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct dcase *c = &cases[k];
		struct world w;
		struct vd_verdict v;

		facts_of_case(c, &w);
		vd_decide(&w.f, &v);
		EXPECT(next, c->next);
		EXPECT(how, c->next == VD_NEXT_ANSWER ? c->how : VD_HOW_UNDECIDED);
		EXPECT(allow, c->next == VD_NEXT_ANSWER && c->allow);
		EXPECT(deny, c->deny);
		expect_str("reason", c->name, v.reason, c->reason);
		EXPECT(rule, c->rule_set ? c->rule : -1);
		expect_str("record", c->name, v.record, c->record);
		EXPECT(as_exec, c->as_exec);
		EXPECT(cache_hit, c->cache_hit);
		EXPECT(cache_miss, c->cache_miss);
		EXPECT(too_large, c->too_large);
		EXPECT(pass_allows, c->pass_allows);
		EXPECT(access_audit, c->access_audit);
		EXPECT(audit, c->audit);
		EXPECT(archive, c->archive_yes);
		EXPECT(ignore, c->ignore);
		vg_policy_unref(w.policy);
	}
	assert_int_equal(bad, 0);
}

/* A matched decision is taken as given: the policy is not matched again. */
static void decide_takes_a_given_match(void **state)
{
	struct world w;
	struct vd_verdict v;
	struct vg_decision dec = { .appraise = true, .pcr = 10, .rule = { -1, 7, -1, -1, -1 } };

	(void)state;
	facts_of_case(&(struct dcase){ .name = "given", .policy = "measure\n", .res = RES_FAIL }, &w);
	w.f.dec = &dec;
	vd_decide(&w.f, &v);
	assert_int_equal(v.next, VD_NEXT_ANSWER);
	assert_true(v.deny);
	assert_int_equal(v.rule, 7);
	assert_false(v.dec.measure);
	vg_policy_unref(w.policy);
}

/* The same facts give the same verdict, and vd_decide writes nothing of them. */
static void decide_is_pure(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct world w;
		struct vd_verdict a, b;
		struct vd_facts before;
		struct vg_access acc;
		struct result res;

		facts_of_case(&cases[k], &w);
		before = w.f;
		acc = w.acc;
		res = w.res;
		memset(&a, 0xa5, sizeof(a));
		memset(&b, 0x5a, sizeof(b));
		vd_decide(&w.f, &a);
		vd_decide(&w.f, &b);
		/* every byte written: the two differently poisoned verdicts are equal */
		assert_memory_equal(&a, &b, sizeof(a));
		assert_memory_equal(&before, &w.f, sizeof(before));
		assert_memory_equal(&acc, &w.acc, sizeof(acc));
		assert_memory_equal(&res, &w.res, sizeof(res));
		vg_policy_unref(w.policy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decide_table),
		cmocka_unit_test(decide_takes_a_given_match),
		cmocka_unit_test(decide_is_pure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
