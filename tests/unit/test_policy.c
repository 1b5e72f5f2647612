// SPDX-License-Identifier: MIT
/*
 * test_policy.c - the policy language: every keyword and comparison form,
 * the kernel's quirks, error messages with positions, the built-in
 * policies, round trips over every test policy and Keylime's real ones,
 * and a table of accesses matched as the kernel's ima_match_policy()
 * would (per-class first match), plus vigil's access rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vigil/hash.h"
#include "vigil/policy.h"

static const char *vpath(const char *rel)
{
	static char buf[4096];
	const char *v = getenv("VECTORS");

	snprintf(buf, sizeof(buf), "%s/policy/%s", v ? v : "tests/vectors", rel);
	return buf;
}

static struct vg_policy *parse_ok(const char *text, unsigned int flags)
{
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };
	int r = vg_policy_parse(text, strlen(text), flags, &p, &e);

	if (r != 0)
		print_error("parse failed: %d:%d: %s\n", e.line, e.col, e.msg);
	assert_int_equal(r, 0);
	return p;
}

static struct vg_policy *load_ok(const char *rel)
{
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };
	int r = vg_policy_load_file(vpath(rel), 0, &p, &e);

	if (r != 0)
		print_error("%s: %d:%d: %s\n", rel, e.line, e.col, e.msg);
	assert_int_equal(r, 0);
	return p;
}

static char *canon(const struct vg_policy *p)
{
	char *t = NULL;

	assert_int_equal(vg_policy_format(p, &t, NULL), 0);
	return t;
}

static void assert_str_eq_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* Every field of two parsed rules, not only their printed form. */
static void assert_rule_equal(const struct vg_policy_rule *a, const struct vg_policy_rule *b)
{
	assert_int_equal(a->action, b->action);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->xflags, b->xflags);
	assert_int_equal(a->func, b->func);
	assert_int_equal(a->mask, b->mask);
	assert_true(a->fsmagic == b->fsmagic);
	assert_str_eq_or_null(a->fsname, b->fsname);
	assert_memory_equal(a->fsuuid, b->fsuuid, 16);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_int_equal(a->fowner, b->fowner);
	assert_int_equal(a->fgroup, b->fgroup);
	assert_int_equal(a->uid_op, b->uid_op);
	assert_int_equal(a->gid_op, b->gid_op);
	assert_int_equal(a->fowner_op, b->fowner_op);
	assert_int_equal(a->fgroup_op, b->fgroup_op);
	assert_int_equal(a->pcr, b->pcr);
	assert_int_equal(a->allowed_algos, b->allowed_algos);
	for (int i = 0; i < VG_LSM__MAX; i++)
		assert_str_eq_or_null(a->lsm[i], b->lsm[i]);
	assert_int_equal(a->nkeyrings, b->nkeyrings);
	for (size_t i = 0; i < a->nkeyrings; i++)
		assert_string_equal(a->keyrings[i], b->keyrings[i]);
	assert_int_equal(a->nlabels, b->nlabels);
	for (size_t i = 0; i < a->nlabels; i++)
		assert_string_equal(a->labels[i], b->labels[i]);
	assert_str_eq_or_null(a->template_name, b->template_name);
	assert_str_eq_or_null(a->appraise_flag, b->appraise_flag);
	assert_str_eq_or_null(a->path, b->path);
	assert_str_eq_or_null(a->subj_exe, b->subj_exe);
	assert_int_equal(a->appraisal, b->appraisal);
	assert_int_equal(a->appraisal_neg, b->appraisal_neg);
	assert_int_equal(a->subj_appraisal, b->subj_appraisal);
	assert_int_equal(a->subj_appraisal_neg, b->subj_appraisal_neg);
	assert_int_equal(a->nattrs, b->nattrs);
	for (size_t i = 0; i < a->nattrs; i++) {
		assert_string_equal(a->attrs[i].name, b->attrs[i].name);
		assert_int_equal(a->attrs[i].op, b->attrs[i].op);
		assert_int_equal(a->attrs[i].numeric, b->attrs[i].numeric);
		assert_true(a->attrs[i].num == b->attrs[i].num);
		assert_string_equal(a->attrs[i].value, b->attrs[i].value);
	}
}

/* parse(print(parse(x))) == parse(x), field by field, and the canonical form is a fixpoint. */
static void assert_round_trip(const struct vg_policy *p, unsigned int flags)
{
	char *t1 = canon(p), *t2;
	struct vg_policy *q = parse_ok(t1, flags);

	assert_true(vg_policy_equal(p, q));
	assert_int_equal(vg_policy_count(p), vg_policy_count(q));
	assert_int_equal(vg_policy_uses(p), vg_policy_uses(q));
	for (size_t i = 0; i < vg_policy_count(p); i++)
		assert_rule_equal(vg_policy_rule(p, i), vg_policy_rule(q, i));
	t2 = canon(q);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	vg_policy_unref(q);
}

/* ---- keywords and forms ---- */

/* One rule per keyword and form, with its canonical text. */
static const struct {
	const char *in, *out;
} canon_cases[] = {
	{ "measure", "measure" },
	{ "dont_measure", "dont_measure" },
	{ "appraise", "appraise" },
	{ "dont_appraise", "dont_appraise" },
	{ "audit", "audit" },
	{ "hash", "hash" },
	{ "dont_hash", "dont_hash" },
	{ "measure func=FILE_CHECK", "measure func=FILE_CHECK" },
	{ "measure func=PATH_CHECK", "measure func=FILE_CHECK" },
	{ "measure func=FILE_MMAP", "measure func=MMAP_CHECK" },
	{ "measure func=MMAP_CHECK", "measure func=MMAP_CHECK" },
	{ "measure func=MMAP_CHECK_REQPROT", "measure func=MMAP_CHECK_REQPROT" },
	{ "measure func=BPRM_CHECK", "measure func=BPRM_CHECK" },
	{ "measure func=CREDS_CHECK", "measure func=CREDS_CHECK" },
	{ "measure func=MODULE_CHECK", "measure func=MODULE_CHECK" },
	{ "measure func=FIRMWARE_CHECK", "measure func=FIRMWARE_CHECK" },
	{ "measure func=KEXEC_KERNEL_CHECK", "measure func=KEXEC_KERNEL_CHECK" },
	{ "measure func=KEXEC_INITRAMFS_CHECK", "measure func=KEXEC_INITRAMFS_CHECK" },
	{ "measure func=POLICY_CHECK", "measure func=POLICY_CHECK" },
	{ "measure func=KEXEC_CMDLINE", "measure func=KEXEC_CMDLINE" },
	{ "measure func=KEY_CHECK", "measure func=KEY_CHECK" },
	{ "measure func=CRITICAL_DATA", "measure func=CRITICAL_DATA" },
	{ "appraise func=SETXATTR_CHECK appraise_algos=sha256", "appraise func=SETXATTR_CHECK appraise_algos=sha256" },
	{ "measure mask=MAY_EXEC", "measure mask=MAY_EXEC" },
	{ "measure mask=MAY_WRITE", "measure mask=MAY_WRITE" },
	{ "measure mask=MAY_READ", "measure mask=MAY_READ" },
	{ "measure mask=MAY_APPEND", "measure mask=MAY_APPEND" },
	{ "measure mask=^MAY_EXEC", "measure mask=^MAY_EXEC" },
	{ "measure mask=^MAY_WRITE", "measure mask=^MAY_WRITE" },
	{ "measure mask=^MAY_READ", "measure mask=^MAY_READ" },
	{ "measure mask=^MAY_APPEND", "measure mask=^MAY_APPEND" },
	{ "dont_measure fsmagic=0x01021994", "dont_measure fsmagic=0x1021994" },
	{ "dont_measure fsmagic=9FA0", "dont_measure fsmagic=0x9fa0" },
	{ "dont_measure fsmagic=+0X9fa0", "dont_measure fsmagic=0x9fa0" },
	{ "dont_measure fsmagic=0xffffffffffffffff", "dont_measure fsmagic=0xffffffffffffffff" },
	{ "dont_measure fsname=tmpfs", "dont_measure fsname=tmpfs" },
	{ "dont_measure fsname=a fsname=b", "dont_measure fsname=b" },	/* last wins */
	{ "measure fsuuid=6A1F4E2C-3B5D-4C7E-9F80-112233445566", "measure fsuuid=6a1f4e2c-3b5d-4c7e-9f80-112233445566" },
	{ "measure uid=0", "measure uid=0" },
	{ "measure uid=+007", "measure uid=7" },
	{ "measure uid>999", "measure uid>999" },
	{ "measure uid<1000", "measure uid<1000" },
	{ "measure euid=0", "measure euid=0" },
	{ "measure euid>0", "measure euid>0" },
	{ "measure euid<10", "measure euid<10" },
	{ "measure gid=5", "measure gid=5" },
	{ "measure gid>5", "measure gid>5" },
	{ "measure gid<5", "measure gid<5" },
	{ "measure egid=6", "measure egid=6" },
	{ "measure egid>6", "measure egid>6" },
	{ "measure egid<6", "measure egid<6" },
	{ "appraise fowner=0", "appraise fowner=0" },
	{ "appraise fowner>0", "appraise fowner>0" },
	{ "appraise fowner<4294967294", "appraise fowner<4294967294" },
	{ "appraise fgroup=0", "appraise fgroup=0" },
	{ "appraise fgroup>9", "appraise fgroup>9" },
	{ "appraise fgroup<9", "appraise fgroup<9" },
	{ "measure obj_user=system_u", "measure obj_user=system_u" },
	{ "measure obj_role=object_r", "measure obj_role=object_r" },
	{ "measure obj_type=etc_t", "measure obj_type=etc_t" },
	{ "measure subj_user=_", "measure subj_user=_" },
	{ "measure subj_role=system_r", "measure subj_role=system_r" },
	{ "measure subj_type=init_t", "measure subj_type=init_t" },
	{ "measure subj_type=a obj_user=b", "measure obj_user=b subj_type=a" },
	{ "measure pcr=11", "measure pcr=11" },
	{ "measure pcr=1 pcr=2", "measure pcr=2" },	/* no duplicate check */
	{ "measure pcr=-0", "measure pcr=0" },
	{ "measure pcr=63", "measure pcr=63" },
	{ "measure template=ima-sig", "measure template=ima-sig" },
	{ "measure template=d-ng|n-ng|sig", "measure template=ima-sig" },	/* by format */
	{ "measure template=ima", "measure template=ima" },
	{ "measure template=evm-sig", "measure template=evm-sig" },
	{ "appraise appraise_type=imasig", "appraise appraise_type=imasig" },
	{ "appraise func=MODULE_CHECK appraise_type=imasig|modsig", "appraise func=MODULE_CHECK appraise_type=imasig|modsig" },
	{ "appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3", "appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3" },
	{ "measure digest_type=verity", "measure digest_type=verity" },
	{ "appraise appraise_flag=check_blacklist", "appraise appraise_flag=check_blacklist" },
	{ "appraise appraise_algos=sha512,sha1,sm3,sha3-256", "appraise appraise_algos=sha1,sha512,sm3,sha3-256" },
	{ "appraise permit_directio", "appraise permit_directio" },
	{ "dont_measure permit_directio", "dont_measure permit_directio" },
	{ "measure func=KEY_CHECK keyrings=.ima|.evm", "measure func=KEY_CHECK keyrings=.ima|.evm" },
	{ "measure func=CRITICAL_DATA label=selinux|kernel_info", "measure func=CRITICAL_DATA label=selinux|kernel_info" },
	{ "measure func=KEY_CHECK uid=0 gid=0 pcr=12", "measure func=KEY_CHECK pcr=12 uid=0 gid=0" },
	{ "\t  measure   func=BPRM_CHECK\t# trailing comment", "measure func=BPRM_CHECK" },
	{ "measure #func=BPRM_CHECK", "measure" },
	/* vigil */
	{ "allow", "allow" },
	{ "deny", "deny" },
	{ "audit_access", "audit_access" },
	{ "deny path=/usr/bin/*", "deny path=/usr/bin/*" },
	{ "deny path=/opt/my\\x20app/**", "deny path=/opt/my\\x20app/**" },
	{ "deny path=/a\\\\b", "deny path=/a\\\\b" },
	{ "deny path=/etc/", "deny path=/etc/" },
	{ "deny path=/x/[!a-c]?", "deny path=/x/[!a-c]?" },
	{ "measure path=/usr/ func=BPRM_CHECK", "measure func=BPRM_CHECK path=/usr/" },
	{ "deny subj_exe=/usr/bin/python3*", "deny subj_exe=/usr/bin/python3*" },
	{ "deny appraisal=fail", "deny appraisal=fail" },
	{ "deny appraisal!=pass", "deny appraisal!=pass" },
	{ "deny appraisal=nolabel|fail|unknown", "deny appraisal=unknown|fail|nolabel" },
	{ "deny subj_appraisal=pass", "deny subj_appraisal=pass" },
	{ "measure subj_appraisal!=pass", "measure subj_appraisal!=pass" },
	{ "deny attr=security.vigil.integrity>=high", "deny attr=security.vigil.integrity>=high" },
	{ "deny attr=security.vigil.revision<7", "deny attr=security.vigil.revision<7" },
	{ "deny attr=security.vigil.revision<=7", "deny attr=security.vigil.revision<=7" },
	{ "deny attr=security.vigil.revision>7", "deny attr=security.vigil.revision>7" },
	{ "deny attr=security.vigil.revision=7", "deny attr=security.vigil.revision=7" },
	{ "deny attr=security.vigil.origin!=debian", "deny attr=security.vigil.origin!=debian" },
	{ "deny attr=security.a=1 attr=security.b=2", "deny attr=security.a=1 attr=security.b=2" },
	{ "deny func=FILE_CHECK mask=^MAY_WRITE uid=0 appraisal=fail path=/etc/**",
	  "deny func=FILE_CHECK mask=^MAY_WRITE uid=0 path=/etc/** appraisal=fail" },
	{ "appraise func=BPRM_CHECK trust=archive", "appraise func=BPRM_CHECK trust=archive" },
	{ "appraise trust=archive path=/usr/** appraise_algos=sha256 func=FILE_CHECK",
	  "appraise func=FILE_CHECK appraise_algos=sha256 path=/usr/** trust=archive" },
};

static void parse_every_keyword_canonical(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++) {
		struct vg_policy *p = parse_ok(canon_cases[i].in, 0);
		char buf[512];

		assert_int_equal(vg_policy_count(p), 1);
		vg_policy_rule_format(vg_policy_rule(p, 0), buf, sizeof(buf));
		if (strcmp(buf, canon_cases[i].out) != 0)
			print_error("case %zu: '%s' printed as '%s'\n", i, canon_cases[i].in, buf);
		assert_string_equal(buf, canon_cases[i].out);
		assert_round_trip(p, 0);
		vg_policy_unref(p);
	}
}

static void parse_keeps_the_kernel_fields(void **state)
{
	struct vg_policy *p = parse_ok(
		"measure func=FILE_CHECK mask=^MAY_READ euid>999 fowner<5 fsmagic=0x9fa0 pcr=12 template=ima-ng\n"
		"appraise func=MODULE_CHECK appraise_type=imasig|modsig appraise_algos=sha256\n"
		"deny path=/usr/bin/* attr=security.vigil.integrity>=medium appraisal!=pass\n", 0);
	const struct vg_policy_rule *r = vg_policy_rule(p, 0);

	(void)state;
	assert_int_equal(r->line, 1);
	assert_int_equal(r->action, VG_POL_MEASURE);
	assert_int_equal(r->func, VG_FUNC_FILE_CHECK);
	assert_int_equal(r->mask, VG_MAY_READ);
	assert_int_equal(r->flags, VG_POLF_FUNC | VG_POLF_INMASK | VG_POLF_EUID | VG_POLF_FOWNER |
				   VG_POLF_FSMAGIC | VG_POLF_PCR);
	assert_int_equal(r->uid, 999);
	assert_int_equal(r->uid_op, VG_POL_OP_GT);
	assert_int_equal(r->fowner, 5);
	assert_int_equal(r->fowner_op, VG_POL_OP_LT);
	assert_true(r->fsmagic == 0x9fa0);
	assert_int_equal(r->pcr, 12);
	assert_string_equal(r->template_name, "ima-ng");
	r = vg_policy_rule(p, 1);
	assert_int_equal(r->flags, VG_POLF_FUNC | VG_POLF_DIGSIG_REQUIRED | VG_POLF_MODSIG_ALLOWED |
				   VG_POLF_CHECK_BLACKLIST | VG_POLF_VALIDATE_ALGOS);
	assert_int_equal(r->allowed_algos, 1u << VG_HASH_SHA256);
	r = vg_policy_rule(p, 2);
	assert_int_equal(r->line, 3);
	assert_int_equal(r->action, VG_POL_DENY);
	assert_string_equal(r->path, "/usr/bin/*");
	assert_int_equal(r->nattrs, 1);
	assert_string_equal(r->attrs[0].name, "security.vigil.integrity");
	assert_int_equal(r->attrs[0].op, VG_POL_OP_GE);
	assert_true(r->attrs[0].numeric);
	assert_true(r->attrs[0].num == 2);
	assert_true(r->appraisal_neg);
	assert_int_equal(r->appraisal, 1u << VG_INTEGRITY_PASS);
	assert_null(vg_policy_rule(p, 3));
	assert_int_equal(vg_policy_uses(p) & (VG_POLICY_USES_PATH | VG_POLICY_USES_ATTR |
					      VG_POLICY_USES_APPRAISAL | VG_POLICY_USES_EXTENSIONS),
			 VG_POLICY_USES_PATH | VG_POLICY_USES_ATTR | VG_POLICY_USES_APPRAISAL |
			 VG_POLICY_USES_EXTENSIONS);
	vg_policy_unref(p);
}

/* ---- errors, with positions, exactly ---- */

static const struct {
	const char *text;
	unsigned int flags;
	int err;
	unsigned int line, col;
	const char *msg;
} bad_cases[] = {
	{ "measure appraise", 0, -EINVAL, 1, 9, "a rule has one action: 'appraise' after 'measure'" },
	{ "func=BPRM_CHECK", 0, -EINVAL, 1, 1,
	  "no action (measure, dont_measure, appraise, dont_appraise, audit, hash, dont_hash, allow, deny, audit_access)" },
	{ "func=BPRM_CHECK", VG_POLICY_KERNEL, -EINVAL, 1, 1,
	  "no action (measure, dont_measure, appraise, dont_appraise, audit, hash, dont_hash)" },
	{ "measure func=FOO", 0, -EINVAL, 1, 9, "func=FOO: unknown hook" },
	{ "measure func=POST_SETATTR", 0, -EINVAL, 1, 9, "func=POST_SETATTR: unknown hook" },
	{ "measure func=BPRM_CHECK func=FILE_CHECK", 0, -EINVAL, 1, 25, "func= given twice" },
	{ "measure mask=MAY_FOO", 0, -EINVAL, 1, 9,
	  "mask=MAY_FOO: unknown (MAY_EXEC, MAY_WRITE, MAY_READ, MAY_APPEND, each optionally after ^)" },
	{ "measure mask=MAY_READ|MAY_EXEC", 0, -EINVAL, 1, 9,
	  "mask=MAY_READ|MAY_EXEC: unknown (MAY_EXEC, MAY_WRITE, MAY_READ, MAY_APPEND, each optionally after ^)" },
	{ "measure mask=MAY_READ mask=^MAY_EXEC", 0, -EINVAL, 1, 23, "mask= given twice" },
	{ "dont_measure fsmagic=0xzz", 0, -EINVAL, 1, 14, "fsmagic=0xzz: not a hexadecimal number" },
	{ "dont_measure fsmagic=0x", 0, -EINVAL, 1, 14, "fsmagic=0x: not a hexadecimal number" },
	{ "dont_measure fsmagic=0x10000000000000000", 0, -EINVAL, 1, 14,
	  "fsmagic=0x10000000000000000: not a hexadecimal number" },
	{ "dont_measure fsmagic=1 fsmagic=2", 0, -EINVAL, 1, 24, "fsmagic= given twice" },
	{ "measure uid=0 euid=0", 0, -EINVAL, 1, 15,
	  "euid: a rule has one of uid=, euid= (the kernel keeps one value for both)" },
	{ "measure gid=0 egid>0", 0, -EINVAL, 1, 15,
	  "egid: a rule has one of gid=, egid= (the kernel keeps one value for both)" },
	{ "measure uid=-1", 0, -EINVAL, 1, 9, "uid='-1': not a decimal id (0 to 4294967294)" },
	{ "measure uid=4294967295", 0, -EINVAL, 1, 9, "uid='4294967295': not a decimal id (0 to 4294967294)" },
	{ "measure euid>0x10", 0, -EINVAL, 1, 9, "euid>'0x10': not a decimal id (0 to 4294967294)" },
	{ "appraise fowner=1 fowner>2", 0, -EINVAL, 1, 19, "fowner given twice" },
	{ "appraise fgroup<1 fgroup=2", 0, -EINVAL, 1, 19, "fgroup given twice" },
	{ "measure fsuuid=nope", 0, -EINVAL, 1, 9, "fsuuid=nope: not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)" },
	{ "measure fsuuid=6a1f4e2c-3b5d-4c7e-9f80-112233445566 fsuuid=6a1f4e2c-3b5d-4c7e-9f80-112233445566",
	  0, -EINVAL, 1, 53, "fsuuid= given twice" },
	{ "measure pcr=64", 0, -EINVAL, 1, 9, "pcr=64: not a PCR index (0 to 63)" },
	{ "measure pcr=-1", 0, -EINVAL, 1, 9, "pcr=-1: not a PCR index (0 to 63)" },
	{ "appraise pcr=11", 0, -EINVAL, 1, 10, "pcr= is only valid with the action measure" },
	{ "template=ima-ng measure", 0, -EINVAL, 1, 1, "template= is only valid after the action measure" },
	{ "dont_measure template=ima-ng", 0, -EINVAL, 1, 14, "template= is only valid after the action measure" },
	{ "measure template=foo", 0, -EINVAL, 1, 9,
	  "template=foo: not a defined template (ima, ima-ng, ima-sig, ima-ngv2, ima-sigv2, ima-buf, ima-modsig, evm-sig)" },
	{ "measure template=ima template=ima-ng", 0, -EINVAL, 1, 22, "template= given twice" },
	{ "measure appraise_type=imasig", 0, -EINVAL, 1, 9, "appraise_type= is only valid with the action appraise" },
	{ "hash appraise_algos=sha256", 0, -EINVAL, 1, 6, "appraise_algos= is only valid with the action appraise" },
	{ "appraise appraise_type=sigv3", 0, -EINVAL, 1, 10, "appraise_type=sigv3 needs digest_type=verity before it" },
	{ "appraise appraise_type=imasig digest_type=verity", 0, -EINVAL, 1, 31,
	  "digest_type= must come before appraise_type=" },
	{ "appraise digest_type=verity appraise_type=imasig", 0, -EINVAL, 1, 29,
	  "appraise_type=imasig does not go with digest_type=verity (that takes sigv3)" },
	{ "appraise appraise_type=rsa", 0, -EINVAL, 1, 10, "appraise_type=rsa: unknown (imasig, imasig|modsig, sigv3)" },
	{ "measure digest_type=ima", 0, -EINVAL, 1, 9, "digest_type=ima: unknown (verity)" },
	{ "appraise func=BPRM_CHECK digest_type=verity", 0, -EINVAL, 1, 26,
	  "appraise digest_type=verity needs appraise_type=sigv3" },
	{ "appraise appraise_type=imasig|modsig", 0, -EINVAL, 1, 10,
	  "appraise_type=imasig|modsig needs func=MODULE_CHECK, KEXEC_KERNEL_CHECK or KEXEC_INITRAMFS_CHECK" },
	{ "appraise func=BPRM_CHECK appraise_type=imasig|modsig", 0, -EINVAL, 1, 26,
	  "appraise_type=imasig|modsig does not go with func=BPRM_CHECK" },
	{ "measure func=MODULE_CHECK digest_type=verity", 0, -EINVAL, 1, 27,
	  "digest_type=verity does not go with func=MODULE_CHECK" },
	{ "measure keyrings=.ima", 0, -EINVAL, 1, 9, "keyrings= needs func=KEY_CHECK" },
	{ "measure label=selinux", 0, -EINVAL, 1, 9, "label= needs func=CRITICAL_DATA" },
	{ "measure func=KEY_CHECK mask=MAY_READ", 0, -EINVAL, 1, 24, "mask= does not go with func=KEY_CHECK" },
	{ "measure func=KEY_CHECK label=x", 0, -EINVAL, 1, 24, "label= does not go with func=KEY_CHECK" },
	{ "appraise func=KEY_CHECK", 0, -EINVAL, 1, 1, "func=KEY_CHECK is only valid with measure or dont_measure" },
	{ "measure func=KEY_CHECK keyrings=.ima|", 0, -EINVAL, 1, 24, "keyrings= has an empty item" },
	{ "measure func=KEY_CHECK keyrings=a keyrings=b", 0, -EINVAL, 1, 35, "keyrings= given twice" },
	{ "measure func=CRITICAL_DATA obj_type=foo_t", 0, -EINVAL, 1, 28, "obj_type= does not go with func=CRITICAL_DATA" },
	{ "measure func=KEXEC_CMDLINE mask=MAY_READ", 0, -EINVAL, 1, 28, "mask= does not go with func=KEXEC_CMDLINE" },
	{ "hash func=KEXEC_CMDLINE", 0, -EINVAL, 1, 1, "func=KEXEC_CMDLINE is only valid with measure or dont_measure" },
	{ "appraise func=SETXATTR_CHECK", 0, -EINVAL, 1, 10, "func=SETXATTR_CHECK needs appraise_algos=" },
	{ "measure func=SETXATTR_CHECK", 0, -EINVAL, 1, 1, "func=SETXATTR_CHECK is only valid with appraise" },
	{ "appraise func=SETXATTR_CHECK appraise_algos=sha256 fowner=0", 0, -EINVAL, 1, 52,
	  "fowner does not go with func=SETXATTR_CHECK" },
	{ "appraise appraise_algos=sha256,md9", 0, -EINVAL, 1, 10, "appraise_algos=: unknown hash algorithm 'md9'" },
	{ "appraise appraise_algos=sha256,,sha1", 0, -EINVAL, 1, 10, "appraise_algos=: unknown hash algorithm ''" },
	{ "appraise appraise_algos=SHA256", 0, -EINVAL, 1, 10, "appraise_algos=: unknown hash algorithm 'SHA256'" },
	{ "appraise appraise_algos=sha1 appraise_algos=sha256", 0, -EINVAL, 1, 30, "appraise_algos= given twice" },
	{ "measure frobnicate", 0, -EINVAL, 1, 9, "unknown keyword 'frobnicate'" },
	{ "measure func=", 0, -EINVAL, 1, 9, "func= needs a value" },
	{ "measure\r", 0, -EINVAL, 1, 1,
	  "unknown keyword 'measure?' (a carriage return: the kernel splits lines at \\n only)" },
	{ "measure obj_type=a obj_type=b", 0, -EINVAL, 1, 20, "obj_type= given twice" },
	{ "measure#x", 0, -EINVAL, 1, 1, "unknown keyword 'measure#x'" },
	{ "/etc/ima/policy", 0, -EINVAL, 1, 1, "unknown keyword '/etc/ima/policy'" },
	{ "", 0, -ENODATA, 0, 0, "no rules (the kernel refuses an empty policy)" },
	{ "# only a comment\n\n   \n", 0, -ENODATA, 0, 0, "no rules (the kernel refuses an empty policy)" },
	{ "measure\n\n  bogus\n", 0, -EINVAL, 3, 3, "unknown keyword 'bogus'" },
	{ " \t measure  \t frob", 0, -EINVAL, 1, 15, "unknown keyword 'frob'" },
	{ "measure\nmeasure func=BPRM_CHECK\nappraise fowner=x\n", 0, -EINVAL, 3, 10,
	  "fowner='x': not a decimal id (0 to 4294967294)" },
	/* vigil's extensions */
	{ "deny func=BPRM_CHECK", VG_POLICY_KERNEL, -EINVAL, 1, 1, "'deny' is a vigil extension, not in the kernel's grammar" },
	{ "measure path=/x", VG_POLICY_KERNEL, -EINVAL, 1, 9, "'path=' is a vigil extension, not in the kernel's grammar" },
	{ "measure appraisal!=pass", VG_POLICY_KERNEL, -EINVAL, 1, 9,
	  "'appraisal!=' is a vigil extension, not in the kernel's grammar" },
	{ "deny path=usr/bin", 0, -EINVAL, 1, 6, "path='usr/bin': not an absolute path pattern" },
	{ "deny path=/a[b", 0, -EINVAL, 1, 6, "path='/a[b': '[' without a closing ']'" },
	{ "deny path=/a\\q", 0, -EINVAL, 1, 13, "path=: bad escape (write \\\\ or \\xHH, HH not 00)" },
	{ "deny path=/a\\x00", 0, -EINVAL, 1, 13, "path=: bad escape (write \\\\ or \\xHH, HH not 00)" },
	{ "deny path=/a path=/b", 0, -EINVAL, 1, 14, "path= given twice" },
	{ "deny subj_exe=bash", 0, -EINVAL, 1, 6, "subj_exe='bash': not an absolute path pattern" },
	{ "measure appraisal=pass", 0, -EINVAL, 1, 9,
	  "appraisal is only valid in an access rule (allow, deny, audit_access)" },
	{ "appraise attr=security.vigil.revision>1", 0, -EINVAL, 1, 10,
	  "attr= is only valid in an access rule (allow, deny, audit_access)" },
	{ "deny appraisal=good", 0, -EINVAL, 1, 6, "appraisal: unknown status 'good' (pass, fail, nolabel, unknown)" },
	{ "deny appraisal=pass appraisal=fail", 0, -EINVAL, 1, 21, "appraisal given twice" },
	{ "deny subj_appraisal=pass|", 0, -EINVAL, 1, 6,
	  "subj_appraisal: unknown status '' (pass, fail, nolabel, unknown)" },
	{ "deny attr=user.x>=1", 0, -EINVAL, 1, 6,
	  "attr=: the attribute must be an EVM-protectable security.* xattr (attr=security.NAME OP VALUE)" },
	{ "deny attr=security.>=1", 0, -EINVAL, 1, 6,
	  "attr=: the attribute must be an EVM-protectable security.* xattr (attr=security.NAME OP VALUE)" },
	{ "deny attr=security.x", 0, -EINVAL, 1, 6, "attr=security.x: no comparison (=, !=, <, <=, >, >=) after the name" },
	{ "deny attr=security.x>=", 0, -EINVAL, 1, 6, "attr=security.x>=: one value after the comparison" },
	{ "deny attr=security.x/y=1", 0, -EINVAL, 1, 6, "attr=: bad character in the attribute name" },
	{ "deny attr=security.vigil.origin>=debian", 0, -EINVAL, 1, 6,
	  "attr=security.vigil.origin>=debian: 'debian' is no number or level (untrusted, low, medium, high, system); only = and != compare text" },
	{ "deny pcr=11", 0, -EINVAL, 1, 6, "pcr= does not go with an access rule (allow, deny, audit_access)" },
	{ "allow permit_directio", 0, -EINVAL, 1, 7, "permit_directio does not go with an access rule (allow, deny, audit_access)" },
	{ "deny appraise_flag=x", 0, -EINVAL, 1, 6,
	  "appraise_flag= does not go with an access rule (allow, deny, audit_access)" },
	{ "deny func=KEY_CHECK", 0, -EINVAL, 1, 6, "func=KEY_CHECK is no file access: not valid in an access rule" },
	{ "measure func=KEY_CHECK path=/x", 0, -EINVAL, 1, 24, "path= does not go with func=KEY_CHECK" },
	{ "deny template=ima-ng", 0, -EINVAL, 1, 6, "template= is only valid after the action measure" },
	{ "appraise func=BPRM_CHECK trust=archive", VG_POLICY_KERNEL, -EINVAL, 1, 26,
	  "'trust=' is a vigil extension, not in the kernel's grammar" },
	{ "measure func=BPRM_CHECK trust=archive", 0, -EINVAL, 1, 25,
	  "trust=archive is only valid after the action appraise" },
	{ "dont_appraise trust=archive", 0, -EINVAL, 1, 15, "trust=archive is only valid after the action appraise" },
	{ "deny trust=archive", 0, -EINVAL, 1, 6, "trust=archive is only valid after the action appraise" },
	{ "appraise trust=pgp", 0, -EINVAL, 1, 10, "trust=pgp: unknown (archive)" },
	{ "appraise trust=archive trust=archive", 0, -EINVAL, 1, 24, "trust= given twice" },
	{ "appraise func=BPRM_CHECK trust=archive appraise_type=imasig", 0, -EINVAL, 1, 26,
	  "trust=archive does not go with appraise_type=imasig: that rule requires a signature label, "
	  "trust=archive allows files without one (write two rules)" },
	{ "appraise func=SETXATTR_CHECK appraise_algos=sha256 trust=archive", 0, -EINVAL, 1, 52,
	  "trust=archive does not go with func=SETXATTR_CHECK" },
};

static void parse_rejects_with_position(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct vg_policy *p = NULL;
		struct vg_policy_error e = { 0 };
		int r = vg_policy_parse(bad_cases[i].text, strlen(bad_cases[i].text), bad_cases[i].flags,
					&p, &e);

		if (r != bad_cases[i].err || e.line != bad_cases[i].line || e.col != bad_cases[i].col ||
		    strcmp(e.msg, bad_cases[i].msg) != 0)
			print_error("case %zu '%s': got %d %u:%u '%s'\n", i, bad_cases[i].text, r, e.line,
				    e.col, e.msg);
		assert_int_equal(r, bad_cases[i].err);
		assert_null(p);
		assert_int_equal(e.err, r);
		assert_int_equal(e.line, bad_cases[i].line);
		assert_int_equal(e.col, bad_cases[i].col);
		assert_string_equal(e.msg, bad_cases[i].msg);
	}
}

static void parse_one_bad_rule_rejects_all(void **state)
{
	static const char text[] = "measure func=BPRM_CHECK\nmeasure bogus\nmeasure func=FILE_CHECK\n";
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };

	(void)state;
	assert_int_equal(vg_policy_parse(text, strlen(text), 0, &p, &e), -EINVAL);
	assert_null(p);
	assert_int_equal(e.line, 2);
}

static void parse_rejects_nul_and_takes_unterminated_text(void **state)
{
	static const char text[] = "measure func=BPRM_CHECK\nmeasure\0 func=FILE_CHECK\n";
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };

	(void)state;
	assert_int_equal(vg_policy_parse(text, sizeof(text) - 1, 0, &p, &e), -EINVAL);
	assert_int_equal(e.line, 2);
	assert_int_equal(e.col, 8);
	assert_string_equal(e.msg, "NUL byte in the policy text");
	/* only the first 15 bytes: "measure func=BP" */
	assert_int_equal(vg_policy_parse(text, 15, 0, &p, &e), -EINVAL);
	assert_string_equal(e.msg, "func=BP: unknown hook");
	assert_int_equal(vg_policy_parse(text, 23, 0, &p, NULL), 0);
	assert_int_equal(vg_policy_count(p), 1);
	vg_policy_unref(p);
	assert_int_equal(vg_policy_parse(NULL, 0, VG_POLICY_ALLOW_EMPTY, &p, &e), 0);
	assert_int_equal(vg_policy_count(p), 0);
	vg_policy_unref(p);
	assert_int_equal(vg_policy_parse(NULL, 1, 0, &p, &e), -EINVAL);
	/* exactly sized heap copies, no NUL after them (ASan sees any overread) */
	static const char *const tails[] = { "measure\n  \t", "measure\n#", "measure func=BPRM_CHECK", " measure" };

	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t n = strlen(tails[i]);
		char *h = malloc(n);

		assert_non_null(h);
		memcpy(h, tails[i], n);
		assert_int_equal(vg_policy_parse(h, n, 0, &p, &e), 0);
		assert_int_equal(vg_policy_count(p), 1);
		vg_policy_unref(p);
		free(h);
	}
}

/* ---- real and documented policies ---- */

static void kernel_doc_examples_parse(void **state)
{
	struct vg_policy *p = load_ok("kernel-doc-examples.policy");
	struct vg_policy *q = NULL;
	struct vg_policy_error e = { 0 };

	(void)state;
	assert_int_equal(vg_policy_count(p), 42);
	assert_round_trip(p, VG_POLICY_KERNEL);
	vg_policy_unref(p);
	/* a kernel refuses this example too: ima-sigv3 is not a template */
	assert_int_equal(vg_policy_load_file(vpath("kernel-doc-ima-sigv3.policy"), 0, &q, &e), -EINVAL);
	assert_int_equal(e.line, 4);
	assert_int_equal(e.col, 44);
	assert_string_equal(e.msg,
			    "template=ima-sigv3: not a defined template (ima, ima-ng, ima-sig, ima-ngv2, ima-sigv2, ima-buf, ima-modsig, evm-sig)");
}

static void keylime_policies_round_trip(void **state)
{
	static const struct {
		const char *file;
		size_t rules;
	} files[] = {
		{ "keylime/ima-policy-default", 27 },
		{ "keylime/ima-policy-keylime", 15 },
		{ "keylime/ima-policy-keylime-etc", 16 },
		{ "keylime/demo-ima-policy", 0 },
		{ "keylime/rust-keylime-ima-policy", 0 },
		{ "ibac-example.policy", 11 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct vg_policy *p = load_ok(files[i].file);

		if (files[i].rules)
			assert_int_equal(vg_policy_count(p), files[i].rules);
		assert_true(vg_policy_count(p) > 0);
		assert_round_trip(p, strstr(files[i].file, "ibac") ? 0 : VG_POLICY_KERNEL);
		vg_policy_unref(p);
	}
}

static void load_file_reports_errno(void **state)
{
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };

	(void)state;
	assert_int_equal(vg_policy_load_file("/nonexistent/policy", 0, &p, &e), -ENOENT);
	assert_int_equal(e.line, 0);
	assert_string_equal(e.msg, "No such file or directory");
	assert_null(p);
}

/* ---- built-in policies ---- */

static void builtin_policies(void **state)
{
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };
	char *t;

	(void)state;
	assert_int_equal(vg_policy_builtin("tcb", &p, &e), 0);
	assert_int_equal(vg_policy_count(p), 13 + 7);
	t = canon(p);
	assert_non_null(strstr(t, "dont_measure func=FILE_CHECK fsmagic=0x1021994\n"));
	assert_non_null(strstr(t, "measure func=FILE_CHECK mask=^MAY_READ euid=0\n"
				  "measure func=FILE_CHECK mask=^MAY_READ uid=0\n"));
	free(t);
	assert_round_trip(p, VG_POLICY_KERNEL);
	vg_policy_unref(p);

	assert_int_equal(vg_policy_builtin("appraise_tcb", &p, &e), 0);
	assert_int_equal(vg_policy_count(p), 15);
	assert_int_equal(vg_policy_rule(p, 14)->action, VG_POL_APPRAISE);
	assert_int_equal(vg_policy_rule(p, 14)->flags, VG_POLF_FOWNER);
	vg_policy_unref(p);

	/* order is the kernel's, not the caller's */
	assert_int_equal(vg_policy_builtin("critical_data|appraise_tcb|secure_boot|tcb", &p, &e), 0);
	assert_int_equal(vg_policy_count(p), 20 + 4 + 15 + 1);
	assert_int_equal(vg_policy_rule(p, 0)->action, VG_POL_DONT_MEASURE);
	assert_int_equal(vg_policy_rule(p, 20)->func, VG_FUNC_MODULE_CHECK);
	assert_int_equal(vg_policy_rule(p, 39)->func, VG_FUNC_CRITICAL_DATA);
	vg_policy_unref(p);

	assert_int_equal(vg_policy_builtin("ima_tcb", &p, &e), 0);
	assert_int_equal(vg_policy_count(p), 13 + 5);
	assert_int_equal(vg_policy_rule(p, 15)->flags, VG_POLF_FUNC | VG_POLF_MASK | VG_POLF_UID);
	vg_policy_unref(p);

	assert_int_equal(vg_policy_builtin("tcb fail", &p, &e), -ENOENT);
	assert_string_equal(e.msg,
			    "no built-in policy 'fail' (tcb, ima_tcb, appraise_tcb, secure_boot, critical_data)");
	assert_int_equal(vg_policy_builtin("tcb|ima_tcb", &p, &e), -EINVAL);
	assert_int_equal(vg_policy_builtin("", &p, &e), -ENOENT);
	assert_non_null(vg_policy_builtin_text("secure_boot"));
	assert_null(vg_policy_builtin_text("nope"));
}

/* ---- matching ---- */

enum { P_TCB, P_APPRAISE_TCB, P_ORDER, P_IBAC, P_KEYLIME, P_DOC, P__MAX };

static const char order_policy[] =
	"dont_measure fsmagic=0x9fa0\n"						/* 1 */
	"measure func=BPRM_CHECK mask=MAY_EXEC\n"				/* 2 */
	"measure func=BPRM_CHECK pcr=11 template=ima-sig\n"			/* 3 */
	"audit func=BPRM_CHECK uid=0\n"						/* 4 */
	"dont_appraise fowner>999\n"						/* 5 */
	"appraise func=BPRM_CHECK appraise_type=imasig appraise_algos=sha256,sha512\n"	/* 6 */
	"appraise fowner=0 permit_directio\n"					/* 7 */
	"hash func=FILE_CHECK mask=^MAY_WRITE\n"				/* 8 */
	"dont_hash fsmagic=0x1021994\n"						/* 9 */
	"measure func=FILE_CHECK mask=^MAY_READ euid=0 pcr=12 template=ima-ng\n"	/* 10 */
	"measure func=MMAP_CHECK mask=MAY_EXEC fsuuid=6a1f4e2c-3b5d-4c7e-9f80-112233445566\n"	/* 11 */
	"measure func=FILE_CHECK gid>100 fgroup<50\n"				/* 12 */
	"measure func=FILE_CHECK egid=7\n"					/* 13 */
	"measure func=FILE_CHECK fsname=ext4 uid<1000\n"			/* 14 */
	"measure func=KEY_CHECK keyrings=.ima|.evm uid=0 gid=5\n"		/* 15 */
	"measure func=CRITICAL_DATA label=selinux\n"				/* 16 */
	"dont_measure subj_user=system_u func=FILE_CHECK\n"			/* 17 */
	"measure obj_type=etc_t func=FILE_CHECK\n"				/* 18 */
	"measure func=FILE_CHECK mask=MAY_APPEND subj_appraisal!=pass path=/var/log/**\n"	/* 19 */
	"measure func=MODULE_CHECK\n";						/* 20 */

static struct vg_policy *pols[P__MAX];

static int setup_policies(void **state)
{
	struct vg_policy_error e = { 0 };

	(void)state;
	if (vg_policy_builtin("tcb", &pols[P_TCB], &e) < 0 ||
	    vg_policy_builtin("appraise_tcb", &pols[P_APPRAISE_TCB], &e) < 0 ||
	    vg_policy_parse(order_policy, strlen(order_policy), 0, &pols[P_ORDER], &e) < 0 ||
	    vg_policy_load_file(vpath("ibac-example.policy"), 0, &pols[P_IBAC], &e) < 0 ||
	    vg_policy_load_file(vpath("keylime/ima-policy-default"), 0, &pols[P_KEYLIME], &e) < 0 ||
	    vg_policy_load_file(vpath("kernel-doc-examples.policy"), 0, &pols[P_DOC], &e) < 0) {
		print_error("setup: %u:%u: %s\n", e.line, e.col, e.msg);
		return -1;
	}
	return 0;
}

static int teardown_policies(void **state)
{
	(void)state;
	for (int i = 0; i < P__MAX; i++)
		vg_policy_unref(pols[i]);
	return 0;
}

#define EXT4 0xef53
#define PROC 0x9fa0
#define TMPFS 0x01021994
#define U(...) { __VA_ARGS__ }

static const struct vg_access_attr rev7[] = {
	{ "security.vigil.revision", (const uint8_t *)"7", 1, true },
};
static const struct vg_access_attr rev6[] = {
	{ "security.vigil.revision", (const uint8_t *)"6\n", 2, true },
};
static const struct vg_access_attr rev9_unprotected[] = {
	{ "security.vigil.revision", (const uint8_t *)"9", 1, false },
};
static const struct vg_access_attr integ_medium[] = {
	{ "security.vigil.integrity", (const uint8_t *)"medium", 7, true },	/* with its NUL */
};
static const struct vg_access_attr integ_high[] = {
	{ "security.vigil.integrity", (const uint8_t *)"3", 1, true },
};

/* m a u h: measure appraise audit hash (1/0); mline/aline: the deciding rules' lines */
static const struct match_case {
	int pol;
	struct vg_access a;
	int m, ap, au, h;
	enum vg_verdict v;
	unsigned int mline, aline;
	int pcr;
	const char *tmpl;
	uint32_t flags;
} match_cases[] = {
	/* the built-in tcb policy */
	{ P_TCB, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4), 1, 0, 0, 0, 0, 15, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4), 1, 0, 0, 0, 0, 14, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 1000, .euid = 1000), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ | VG_MAY_WRITE, .fsmagic = EXT4), 1, 0, 0, 0, 0, 16, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 0, .euid = 1000), 1, 0, 0, 0, 0, 17, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 1000, .euid = 0), 1, 0, 0, 0, 0, 16, 0, 10, NULL, 0 },
	/* euid=0 with CAP_SETUID also matches the saved uid */
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5, .euid = 5, .suid = 0, .cap_setuid = true), 1, 0, 0, 0, 0, 16, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE, .fsmagic = EXT4), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = PROC), 0, 0, 0, 0, 0, 1, 0, 10, NULL, 0 },
	/* tmpfs is excluded for FILE_CHECK only */
	{ P_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = TMPFS), 0, 0, 0, 0, 0, 4, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = TMPFS), 1, 0, 0, 0, 0, 15, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = PROC), 0, 0, 0, 0, 0, 1, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_MODULE_CHECK, .fsmagic = EXT4, .uid = 1000), 1, 0, 0, 0, 0, 18, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_POLICY_CHECK, .fsmagic = EXT4), 1, 0, 0, 0, 0, 20, 0, 10, NULL, 0 },
	{ P_TCB, U(.func = VG_FUNC_KEXEC_KERNEL_CHECK, .fsmagic = EXT4), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* the built-in appraise_tcb policy */
	{ P_APPRAISE_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .fowner = 0), 0, 1, 0, 0, 0, 0, 15, 10, NULL, 0 },
	{ P_APPRAISE_TCB, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .fowner = 1000), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_APPRAISE_TCB, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = 0x858458f6, .fowner = 0), 0, 0, 0, 0, 0, 0, 5, 10, NULL, 0 },
	{ P_APPRAISE_TCB, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = TMPFS, .fowner = 0), 0, 0, 0, 0, 0, 0, 4, 10, NULL, 0 },
	/* per-class first match */
	{ P_ORDER, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .uid = 0, .fowner = 0), 1, 1, 1, 0, 0, 2, 6, 10, NULL,
	  VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_ORDER, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 7, .fowner = 0), 1, 1, 0, 0, 0, 3, 6, 11, "ima-sig",
	  VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_ORDER, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = PROC, .uid = 0, .fowner = 0), 0, 1, 1, 0, 0, 1, 6, 10, NULL,
	  VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	/* dont_appraise fowner>999 wins over the later appraise rules */
	{ P_ORDER, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .uid = 0, .fowner = 1000), 1, 0, 1, 0, 0, 2, 5, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 0, .gid = 1, .fgroup = 99), 0, 1, 0, 0, 0, 0, 7, 10, NULL,
	  VG_POLF_PERMIT_DIRECTIO },
	/* appraise (line 7) before hash (line 8): both hold */
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 0, .gid = 1, .fgroup = 99), 0, 1, 0, 1, 0, 0, 7, 10, NULL,
	  VG_POLF_PERMIT_DIRECTIO },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500, .gid = 1, .fgroup = 99), 0, 0, 0, 1, 0, 0, 0, 10, NULL, 0 },
	/* hash (line 8) comes before dont_hash tmpfs (line 9): the first decides */
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE, .fsmagic = TMPFS, .uid = 5000, .euid = 5000, .fowner = 500, .gid = 1, .fgroup = 99), 0, 0, 0, 1, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = TMPFS, .uid = 5000, .euid = 5000, .fowner = 500, .gid = 1, .fgroup = 99), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ | VG_MAY_WRITE, .fsmagic = EXT4, .euid = 0, .uid = 5000, .fowner = 500, .fgroup = 99), 1, 0, 0, 1, 0, 10, 0, 12, "ima-ng", 0 },
	{ P_ORDER, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .fsuuid_set = true,
		     .fsuuid = { 0x6a, 0x1f, 0x4e, 0x2c, 0x3b, 0x5d, 0x4c, 0x7e, 0x9f, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66 }, .fowner = 500), 1, 0, 0, 0, 0, 11, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .fowner = 500), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .gid = 101, .fgroup = 49, .fowner = 500), 1, 0, 0, 0, 0, 12, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .gid = 100, .fgroup = 49, .fowner = 500), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* egid=7 with CAP_SETGID: the real gid counts too */
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .gid = 7, .egid = 8, .cap_setgid = true, .fowner = 500), 1, 0, 0, 0, 0, 13, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .gid = 7, .egid = 8, .fowner = 500), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .fsname = "ext4", .uid = 999, .euid = 999, .fowner = 500), 1, 0, 0, 0, 0, 14, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .fsname = "xfs", .uid = 999, .euid = 999, .fowner = 500), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* KEY_CHECK: keyrings and uid checked, gid= not (ima_match_rule_data) */
	{ P_ORDER, U(.func = VG_FUNC_KEY_CHECK, .func_data = ".ima", .uid = 0, .gid = 99), 1, 0, 0, 0, 0, 15, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_KEY_CHECK, .func_data = ".builtin_trusted_keys", .uid = 0), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_KEY_CHECK, .func_data = ".evm", .uid = 1), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_CRITICAL_DATA, .func_data = "selinux"), 1, 0, 0, 0, 0, 16, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_CRITICAL_DATA, .func_data = "kernel_info"), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* LSM: the first three fields of an SELinux context */
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500,
		     .subj_ctx = "system_u:system_r:init_t:s0", .obj_ctx = "system_u:object_r:etc_t:s0"), 0, 0, 0, 0, 0, 17, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500,
		     .subj_ctx = "unconfined_u:unconfined_r:unconfined_t:s0", .obj_ctx = "system_u:object_r:etc_t:s0"), 1, 0, 0, 0, 0, 18, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500,
		     .obj_ctx = "system_u:object_r:etc_runtime_t:s0"), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* no LSM context given: LSM rules do not match */
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* vigil conditions on a measure rule */
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_APPEND, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500,
		     .path = "/var/log/app/x.log", .subj_appraisal = VG_INTEGRITY_FAIL), 1, 0, 0, 0, 0, 19, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_APPEND, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500,
		     .path = "/var/log/app/x.log", .subj_appraisal = VG_INTEGRITY_PASS), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_ORDER, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_APPEND, .fsmagic = EXT4, .uid = 5000, .euid = 5000, .fowner = 500,
		     .path = "/var/lib/x", .subj_appraisal = VG_INTEGRITY_FAIL), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	/* IBAC */
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/sbin/sshd", .appraisal = VG_INTEGRITY_PASS,
		    .attrs = rev7, .nattrs = 1), 1, 1, 0, 0, VG_VERDICT_ALLOW, 3, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/sbin/sshd", .appraisal = VG_INTEGRITY_PASS,
		    .attrs = rev6, .nattrs = 1), 1, 1, 0, 0, VG_VERDICT_DENY, 3, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/sbin/sshd", .appraisal = VG_INTEGRITY_PASS,
		    .attrs = rev9_unprotected, .nattrs = 1), 1, 1, 0, 0, VG_VERDICT_DENY, 3, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/sbin/sshd", .appraisal = VG_INTEGRITY_PASS),
	  1, 1, 0, 0, VG_VERDICT_DENY, 3, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/bin/ls", .appraisal = VG_INTEGRITY_PASS),
	  1, 1, 0, 0, VG_VERDICT_ALLOW, 3, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/bin/ls", .appraisal = VG_INTEGRITY_NOLABEL),
	  1, 1, 0, 0, VG_VERDICT_DENY, 3, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = PROC, .path = "/proc/self/exe"),
	  0, 1, 0, 0, VG_VERDICT_DENY, 2, 5, 10, NULL, VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST },
	{ P_IBAC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE, .fsmagic = EXT4, .path = "/etc/passwd", .uid = 0, .fowner = 0,
		    .appraisal = VG_INTEGRITY_FAIL), 0, 1, 0, 0, VG_VERDICT_DENY, 0, 6, 10, NULL, 0 },
	{ P_IBAC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE, .fsmagic = EXT4, .path = "/etc/passwd", .uid = 1000, .fowner = 0,
		    .appraisal = VG_INTEGRITY_FAIL, .subj_appraisal = VG_INTEGRITY_PASS), 0, 1, 0, 0, VG_VERDICT_ALLOW, 0, 6, 10, NULL, 0 },
	{ P_IBAC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .path = "/etc/passwd", .uid = 1000, .fowner = 0,
		    .appraisal = VG_INTEGRITY_PASS, .subj_appraisal = VG_INTEGRITY_UNKNOWN), 0, 1, 0, 0, VG_VERDICT_AUDIT, 0, 6, 10, NULL, 0 },
	{ P_IBAC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .path = "/etc/passwd", .uid = 1000, .fowner = 0,
		    .appraisal = VG_INTEGRITY_PASS, .subj_appraisal = VG_INTEGRITY_PASS), 0, 1, 0, 0, VG_VERDICT_ALLOW, 0, 6, 10, NULL, 0 },
	{ P_IBAC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .path = "/etcetera", .uid = 1000, .fowner = 7),
	  0, 0, 0, 0, VG_VERDICT_ALLOW, 0, 0, 10, NULL, 0 },
	{ P_IBAC, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/lib/libc.so.6", .attrs = integ_medium, .nattrs = 1),
	  1, 0, 0, 0, VG_VERDICT_DENY, 4, 0, 10, NULL, 0 },
	{ P_IBAC, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .path = "/usr/lib/libc.so.6", .attrs = integ_high, .nattrs = 1),
	  1, 0, 0, 0, VG_VERDICT_ALLOW, 4, 0, 10, NULL, 0 },
	/* Keylime's default policy */
	{ P_KEYLIME, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .fowner = 0), 1, 1, 0, 0, 0, 33, 38, 10, NULL, 0 },
	{ P_KEYLIME, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = TMPFS, .fowner = 0), 0, 0, 0, 0, 0, 11, 12, 10, NULL, 0 },
	{ P_KEYLIME, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = 0x858458f6, .uid = 0, .fowner = 0), 1, 0, 0, 0, 0, 35, 14, 10, NULL, 0 },
	{ P_KEYLIME, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ | VG_MAY_WRITE, .fsmagic = EXT4, .uid = 0, .fowner = 1), 0, 0, 0, 0, 0, 0, 0, 10, NULL, 0 },
	{ P_KEYLIME, U(.func = VG_FUNC_MMAP_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .fowner = 1), 1, 0, 0, 0, 0, 34, 0, 10, NULL, 0 },
	/* the kernel documentation's examples */
	{ P_DOC, U(.func = VG_FUNC_KEXEC_KERNEL_CHECK, .fsmagic = EXT4, .fowner = 0), 1, 1, 0, 0, 0, 57, 43, 4, NULL, 0 },
	{ P_DOC, U(.func = VG_FUNC_KEXEC_INITRAMFS_CHECK, .fsmagic = EXT4, .fowner = 5), 1, 0, 0, 0, 0, 58, 0, 5, NULL, 0 },
	{ P_DOC, U(.func = VG_FUNC_KEXEC_KERNEL_CHECK, .fsmagic = EXT4, .fowner = 5), 1, 1, 0, 0, 0, 57, 61, 4, NULL,
	  VG_POLF_DIGSIG_REQUIRED | VG_POLF_MODSIG_ALLOWED | VG_POLF_CHECK_BLACKLIST },
	{ P_DOC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ, .fsmagic = EXT4, .fowner = 5, .uid = 1000, .euid = 1000,
		 .subj_ctx = "_"), 1, 0, 0, 0, 0, 54, 0, 10, NULL, 0 },
	{ P_DOC, U(.func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ | VG_MAY_WRITE, .fsmagic = EXT4, .fowner = 5), 1, 0, 0, 0, 0, 71, 0, 10, "ima-ngv2",
	  VG_POLF_VERITY_REQUIRED },
	{ P_DOC, U(.func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4, .fowner = 5), 1, 1, 0, 0, 0, 38, 74, 10, NULL,
	  VG_POLF_DIGSIG_REQUIRED | VG_POLF_CHECK_BLACKLIST | VG_POLF_VERITY_REQUIRED },
	{ P_DOC, U(.func = VG_FUNC_KEY_CHECK, .func_data = ".anything"), 1, 0, 0, 0, 0, 64, 0, 10, NULL, 0 },
};

static unsigned int line_of(const struct vg_policy *p, long i)
{
	return i < 0 ? 0 : vg_policy_rule(p, (size_t)i)->line;
}

static void match_table(void **state)
{
	size_t n = sizeof(match_cases) / sizeof(match_cases[0]);

	(void)state;
	assert_true(n >= 50);
	for (size_t i = 0; i < n; i++) {
		const struct match_case *c = &match_cases[i];
		const struct vg_policy *p = pols[c->pol];
		struct vg_decision d;
		bool ok;

		assert_int_equal(vg_policy_match(p, &c->a, VG_CLASSES_ALL, &d), 0);
		ok = d.measure == c->m && d.appraise == c->ap && d.audit == c->au && d.hash == c->h &&
		     d.verdict == c->v && line_of(p, d.rule[VG_CLASS_MEASURE]) == c->mline &&
		     line_of(p, d.rule[VG_CLASS_APPRAISE]) == c->aline && d.pcr == c->pcr &&
		     d.flags == c->flags &&
		     ((!d.template_name && !c->tmpl) ||
		      (d.template_name && c->tmpl && strcmp(d.template_name, c->tmpl) == 0));
		if (!ok)
			print_error("case %zu: m%d a%d u%d h%d v%d mline %u aline %u pcr %d tmpl %s flags %#x\n", i,
				    d.measure, d.appraise, d.audit, d.hash, d.verdict,
				    line_of(p, d.rule[VG_CLASS_MEASURE]), line_of(p, d.rule[VG_CLASS_APPRAISE]),
				    d.pcr, d.template_name ? d.template_name : "-", d.flags);
		assert_true(ok);
	}
}

static void round_trip_match_policies(void **state)
{
	(void)state;
	for (int i = 0; i < P__MAX; i++)
		assert_round_trip(pols[i], 0);
}

static void match_asks_only_for_classes_requested(void **state)
{
	struct vg_access a = { .func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .fsmagic = EXT4,
			       .path = "/usr/bin/ls", .appraisal = VG_INTEGRITY_FAIL };
	struct vg_decision d;

	(void)state;
	assert_int_equal(vg_policy_match(pols[P_IBAC], &a, VG_CLASSES_IMA, &d), 0);
	assert_true(d.measure && d.appraise);
	assert_int_equal(d.verdict, VG_VERDICT_ALLOW);
	assert_int_equal(d.rule[VG_CLASS_ACCESS], -1);
	assert_int_equal(vg_policy_match(pols[P_IBAC], &a, 1u << VG_CLASS_ACCESS, &d), 0);
	assert_false(d.measure || d.appraise);
	assert_int_equal(d.verdict, VG_VERDICT_DENY);
	assert_int_equal(line_of(pols[P_IBAC], d.rule[VG_CLASS_ACCESS]), 13);
	assert_int_equal(vg_policy_match(NULL, &a, VG_CLASSES_ALL, &d), -EINVAL);
}

/* a class no "do" rule can decide is not scanned (ima_policy_flag) */
static void match_skips_classes_without_do_rules(void **state)
{
	struct vg_policy *p = parse_ok("dont_appraise permit_directio\nmeasure\n", 0);
	struct vg_access a = { .func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ };
	struct vg_decision d;

	(void)state;
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_ALL, &d), 0);
	assert_true(d.measure);
	assert_int_equal(d.rule[VG_CLASS_APPRAISE], -1);
	assert_int_equal(d.flags, 0);
	vg_policy_unref(p);
	p = parse_ok("dont_appraise permit_directio\nappraise\n", 0);
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_ALL, &d), 0);
	assert_false(d.appraise);
	assert_int_equal(d.rule[VG_CLASS_APPRAISE], 0);
	assert_int_equal(d.flags, VG_POLF_PERMIT_DIRECTIO);
	vg_policy_unref(p);
}

/* a hash decided after the appraise rule stays (the kernel clears only what came before) */
static void match_hash_after_appraise_stays(void **state)
{
	struct vg_policy *p = parse_ok("appraise\nhash\n", 0);
	struct vg_access a = { .func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_WRITE };
	struct vg_decision d;

	(void)state;
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_ALL, &d), 0);
	assert_true(d.appraise && d.hash);
	vg_policy_unref(p);
	p = parse_ok("hash\nappraise\n", 0);
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_ALL, &d), 0);
	assert_true(d.appraise);
	assert_false(d.hash);
	assert_int_equal(d.rule[VG_CLASS_HASH], 0);
	vg_policy_unref(p);
}

static void rule_matches_names_the_failing_condition(void **state)
{
	struct vg_policy *p = parse_ok("measure func=FILE_CHECK mask=^MAY_READ uid=0 path=/etc/*\n", 0);
	const struct vg_policy_rule *r = vg_policy_rule(p, 0);
	struct vg_access a = { .func = VG_FUNC_BPRM_CHECK };
	const char *why = NULL;

	(void)state;
	assert_false(vg_policy_rule_matches(r, &a, &why));
	assert_string_equal(why, "func");
	a.func = VG_FUNC_FILE_CHECK;
	a.mask = VG_MAY_WRITE;
	assert_false(vg_policy_rule_matches(r, &a, &why));
	assert_string_equal(why, "mask");
	a.mask = VG_MAY_READ;
	a.uid = 1;
	assert_false(vg_policy_rule_matches(r, &a, &why));
	assert_string_equal(why, "uid");
	a.uid = 0;
	assert_false(vg_policy_rule_matches(r, &a, &why));
	assert_string_equal(why, "path");
	a.path = "/etc/x/y";
	assert_false(vg_policy_rule_matches(r, &a, &why));
	a.path = "/etc/passwd";
	assert_true(vg_policy_rule_matches(r, &a, &why));
	vg_policy_unref(p);
}

static void path_patterns(void **state)
{
	static const struct {
		const char *pat, *path;
		bool match;
	} cases[] = {
		{ "/usr/bin/ls", "/usr/bin/ls", true },
		{ "/usr/bin/ls", "/usr/bin/lsx", false },
		{ "/usr/bin/*", "/usr/bin/ls", true },
		{ "/usr/bin/*", "/usr/bin/", true },
		{ "/usr/bin/*", "/usr/bin/x/y", false },
		{ "/usr/**", "/usr/bin/x/y", true },
		{ "/usr/**/lib*.so", "/usr/lib/x86_64/libc.so", true },
		{ "/usr/**/lib*.so", "/usr/libc.so", false },
		{ "/usr/", "/usr/bin/ls", true },
		{ "/usr/", "/usr", false },
		{ "/usr/", "/usrx/a", false },
		{ "/a?c", "/abc", true },
		{ "/a?c", "/a/c", false },
		{ "/[a-c]x", "/bx", true },
		{ "/[!a-c]x", "/bx", false },
		{ "/[^a-c]x", "/dx", true },
		{ "/[]]", "/]", true },
		{ "/[*]", "/*", true },
		{ "/[*]", "/a", false },
		{ "/*.conf", "/a.conf", true },
		{ "/*a*a*a*a*a*b", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false },
		{ "/opt/my app/*", "/opt/my app/run", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_policy_rule r = { .action = VG_POL_DENY, .path = (char *)cases[i].pat,
					    .xflags = VG_POLX_PATH };
		struct vg_access a = { .path = cases[i].path };

		if (vg_policy_rule_matches(&r, &a, NULL) != cases[i].match)
			print_error("case %zu: %s ~ %s\n", i, cases[i].pat, cases[i].path);
		assert_true(vg_policy_rule_matches(&r, &a, NULL) == cases[i].match);
	}
}

static void attr_comparisons(void **state)
{
	static const struct {
		const char *cond, *value;
		bool match;
	} cases[] = {
		{ "security.vigil.revision>=7", "7", true },
		{ "security.vigil.revision>=7", "12", true },
		{ "security.vigil.revision>=7", "6", false },
		{ "security.vigil.revision>7", "7", false },
		{ "security.vigil.revision<7", "6", true },
		{ "security.vigil.revision<=7", "7", true },
		{ "security.vigil.revision=7", "7\n", true },
		{ "security.vigil.revision!=7", "8", true },
		{ "security.vigil.revision>=7", "seven", false },
		{ "security.vigil.revision>=7", "", false },
		{ "security.vigil.integrity>=high", "high", true },
		{ "security.vigil.integrity>=high", "system", true },
		{ "security.vigil.integrity>=high", "medium", false },
		{ "security.vigil.integrity>=high", "3", true },
		{ "security.vigil.integrity<low", "untrusted", true },
		{ "security.vigil.origin=debian", "debian", true },
		{ "security.vigil.origin=debian", "debian2", false },
		{ "security.vigil.origin!=debian", "fedora", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[128];
		struct vg_policy *p;
		struct vg_access_attr x = { NULL, (const uint8_t *)cases[i].value, strlen(cases[i].value), true };
		struct vg_access a = { .attrs = &x, .nattrs = 1 };
		size_t nl = strcspn(cases[i].cond, "<>=!");
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)nl, cases[i].cond);
		x.name = name;
		snprintf(text, sizeof(text), "deny attr=%s", cases[i].cond);
		p = parse_ok(text, 0);
		if (vg_policy_rule_matches(vg_policy_rule(p, 0), &a, NULL) != cases[i].match)
			print_error("case %zu: %s with '%s'\n", i, cases[i].cond, cases[i].value);
		assert_true(vg_policy_rule_matches(vg_policy_rule(p, 0), &a, NULL) == cases[i].match);
		x.protected = false;	/* EVM did not vouch for it: never holds */
		assert_false(vg_policy_rule_matches(vg_policy_rule(p, 0), &a, NULL));
		vg_policy_unref(p);
	}
}

/* Each condition vigild cannot observe is named, at its column; the rest is enforced. */
static void check_enforceable_names_each_unobservable_condition(void **state)
{
	static const struct {
		const char *rule;
		unsigned int col;	/* 0: enforced */
		const char *why;	/* prefix */
	} cases[] = {
		{ "appraise func=BPRM_CHECK", 0, NULL },
		{ "measure func=FILE_CHECK mask=^MAY_READ uid=0", 0, NULL },
		{ "measure func=FILE_CHECK mask=MAY_READ fowner=0 fsmagic=0xef53 pcr=11 template=ima-sig", 0, NULL },
		{ "appraise fowner=0", 0, NULL },
		{ "dont_measure fsmagic=0x9fa0", 0, NULL },
		{ "deny func=BPRM_CHECK appraisal!=pass path=/usr/** subj_exe=/bin/*", 0, NULL },
		{ "dont_hash", 0, NULL },
		{ "measure func=BPRM_CHECK mask=MAY_EXEC", 0, NULL },
		{ "appraise func=MMAP_CHECK", 10, "func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC)" },
		{ "measure func=FILE_MMAP mask=MAY_EXEC", 9, "func=MMAP_CHECK:" },
		{ "appraise  func=MMAP_CHECK_REQPROT", 11, "func=MMAP_CHECK_REQPROT:" },
		{ "measure func=MODULE_CHECK", 9, "func=MODULE_CHECK: a hook inside the kernel" },
		{ "measure func=CREDS_CHECK", 9, "func=CREDS_CHECK:" },
		{ "measure func=KEY_CHECK keyrings=.ima", 9, "func=KEY_CHECK:" },
		{ "deny func=FILE_CHECK mask=^MAY_WRITE", 22, "mask=^MAY_WRITE: a permission event does not carry the open flags" },
		{ "appraise func=FILE_CHECK mask=MAY_WRITE", 26, "mask=MAY_WRITE:" },
		{ "measure mask=MAY_APPEND func=FILE_CHECK", 9, "mask=MAY_APPEND:" },
		{ "measure func=FILE_CHECK mask=^MAY_APPEND", 25, "mask=^MAY_APPEND:" },
		{ "measure mask=MAY_EXEC", 9, "mask=MAY_EXEC without func=" },
		{ "measure mask=^MAY_EXEC", 9, "mask=^MAY_EXEC without func=" },
		{ "dont_measure obj_type=var_log_t", 14, "obj_type=: vigild does not read LSM contexts" },
		{ "measure func=BPRM_CHECK subj_role=r", 25, "subj_role=:" },
		{ "measure fsname=tmpfs", 0, NULL },
		{ "measure fsuuid=12345678-1234-1234-1234-123456789abc", 0, NULL },
		{ "appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3", 26, "digest_type=verity:" },
		{ "measure func=BPRM_CHECK template=ima-ngv2", 25, "template=: vigild writes ima-ng and ima-sig" },
		{ "audit_access func=FILE_CHECK subj_appraisal!=pass", 30, "subj_appraisal:" },
		{ "deny func=BPRM_CHECK attr=security.vigil.integrity<high", 22, "attr=:" },
		{ "hash func=FILE_CHECK", 1, "hash: vigild does not update security.ima" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_policy *p = parse_ok(cases[i].rule, 0);
		const struct vg_policy_rule *r = vg_policy_rule(p, 0);
		struct vg_policy_error e = { 0 };
		int rc = vg_policy_check_enforceable(p, &e);

		if (!cases[i].col) {
			if (r->unenforced)
				print_error("'%s': %s\n", cases[i].rule, r->unenforced);
			assert_null(r->unenforced);
			assert_int_equal(rc, 0);
			assert_int_equal(vg_policy_unenforced_count(p), 0);
		} else {
			assert_non_null(r->unenforced);
			if (strncmp(r->unenforced, cases[i].why, strlen(cases[i].why)) != 0 ||
			    r->unenforced_col != cases[i].col)
				print_error("'%s': col %u: %s\n", cases[i].rule, r->unenforced_col,
					    r->unenforced);
			assert_int_equal(strncmp(r->unenforced, cases[i].why, strlen(cases[i].why)), 0);
			assert_int_equal(r->unenforced_col, cases[i].col);
			assert_int_equal(rc, -EOPNOTSUPP);
			assert_int_equal(e.err, -EOPNOTSUPP);
			assert_int_equal(e.line, 1);
			assert_int_equal(e.col, cases[i].col);
			assert_string_equal(e.msg, r->unenforced);
			assert_int_equal(vg_policy_unenforced_count(p), 1);
		}
		vg_policy_unref(p);
	}
}

/* The kernel's tcb is refused for its MMAP_CHECK and kernel-hook rules; appraise_tcb is enforced. */
static void check_enforceable_builtins(void **state)
{
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };

	(void)state;
	assert_int_equal(vg_policy_builtin("tcb", &p, NULL), 0);
	assert_int_equal(vg_policy_check_enforceable(p, &e), -EOPNOTSUPP);
	assert_int_equal(e.line, 14);
	assert_int_equal(vg_policy_unenforced_count(p), 4);
	vg_policy_unref(p);
	assert_int_equal(vg_policy_builtin("appraise_tcb", &p, NULL), 0);
	assert_int_equal(vg_policy_check_enforceable(p, NULL), 0);
	vg_policy_unref(p);
}

/* An open by the loader is decided as an open and as an exec, merged. */
static void match_also_func_merges_two_hooks(void **state)
{
	struct vg_policy *p = parse_ok("dont_appraise func=FILE_CHECK\n"
				       "appraise func=BPRM_CHECK appraise_type=imasig\n"
				       "measure func=FILE_CHECK mask=MAY_READ pcr=11\n"
				       "measure func=BPRM_CHECK pcr=12\n"
				       "audit_access func=FILE_CHECK\n"
				       "deny func=BPRM_CHECK appraisal!=pass\n", 0);
	struct vg_access a = { .func = VG_FUNC_FILE_CHECK, .mask = VG_MAY_READ };
	struct vg_decision d;

	(void)state;
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_ALL, &d), 0);
	assert_false(d.appraise);
	assert_true(d.measure);
	assert_int_equal(d.pcr, 11);
	assert_int_equal(d.verdict, VG_VERDICT_AUDIT);
	a.also_func = VG_FUNC_BPRM_CHECK;
	a.also_mask = VG_MAY_EXEC;
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_ALL, &d), 0);
	assert_true(d.appraise);	/* the exec's rule, though dont_appraise decided the open */
	assert_int_equal(d.rule[VG_CLASS_APPRAISE], 1);
	assert_true(d.flags & VG_POLF_DIGSIG_REQUIRED);
	assert_true(d.measure);
	assert_int_equal(d.pcr, 12);	/* the exec's measurement */
	assert_int_equal(d.rule[VG_CLASS_MEASURE], 3);
	assert_int_equal(d.verdict, VG_VERDICT_DENY);	/* deny over audit */
	assert_int_equal(d.rule[VG_CLASS_ACCESS], 5);
	a.appraisal = VG_INTEGRITY_PASS;
	assert_int_equal(vg_policy_match(p, &a, 1u << VG_CLASS_ACCESS, &d), 0);
	assert_int_equal(d.verdict, VG_VERDICT_AUDIT);
	assert_int_equal(d.rule[VG_CLASS_ACCESS], 4);
	vg_policy_unref(p);
}

static void names_round_trip(void **state)
{
	(void)state;
	for (int f = VG_FUNC_FILE_CHECK; f < VG_FUNC__MAX; f++) {
		if (f == VG_FUNC_POST_SETATTR)
			continue;
		assert_int_equal(vg_policy_func_by_name(vg_policy_func_name((enum vg_func)f)), f);
	}
	assert_int_equal(vg_policy_func_by_name("POST_SETATTR"), -ENOENT);
	assert_null(vg_policy_func_name(VG_FUNC__MAX));
	assert_true(vg_policy_func_observable(VG_FUNC_BPRM_CHECK));
	assert_true(vg_policy_func_observable(VG_FUNC_FILE_CHECK));
	assert_false(vg_policy_func_observable(VG_FUNC_MMAP_CHECK));
	assert_false(vg_policy_func_observable(VG_FUNC_MODULE_CHECK));
	assert_false(vg_policy_func_observable(VG_FUNC_KEY_CHECK));
	for (int i = 0; i < VG_INTEGRITY__MAX; i++)
		assert_int_equal(vg_policy_integrity_by_name(vg_policy_integrity_name((enum vg_integrity)i)), i);
	assert_string_equal(vg_policy_action_name(VG_POL_AUDIT_ACCESS), "audit_access");
	assert_int_equal(vg_policy_action_class(VG_POL_DONT_HASH), VG_CLASS_HASH);
	assert_int_equal(vg_policy_action_class(0), -1);
}

static void format_truncates_like_snprintf(void **state)
{
	struct vg_policy *p = parse_ok("measure func=BPRM_CHECK mask=MAY_EXEC", 0);
	char buf[12];

	(void)state;
	assert_int_equal(vg_policy_rule_format(vg_policy_rule(p, 0), buf, sizeof(buf)), 37);
	assert_string_equal(buf, "measure fun");
	assert_int_equal(vg_policy_rule_format(vg_policy_rule(p, 0), NULL, 0), 37);
	vg_policy_unref(p);
}

/* trust=archive: in the decision of the appraise rule that decided, and in vg_policy_uses */
static void match_trust_archive(void **state)
{
	const char *text = "appraise func=BPRM_CHECK trust=archive\n"
			   "appraise func=FILE_CHECK\n";
	struct vg_policy *p = parse_ok(text, 0);
	struct vg_access a = { .func = VG_FUNC_BPRM_CHECK, .mask = VG_MAY_EXEC, .path = "/usr/bin/x" };
	struct vg_decision d;

	(void)state;
	assert_true(vg_policy_uses(p) & VG_POLICY_USES_TRUST_ARCHIVE);
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_IMA, &d), 0);
	assert_true(d.appraise && d.trust_archive);
	a.func = VG_FUNC_FILE_CHECK;
	a.mask = VG_MAY_READ;
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_IMA, &d), 0);
	assert_true(d.appraise && !d.trust_archive);
	/* a loader's open is both: the open's rule has no trust=archive, so neither has */
	a.also_func = VG_FUNC_BPRM_CHECK;
	a.also_mask = VG_MAY_EXEC;
	assert_int_equal(vg_policy_match(p, &a, VG_CLASSES_IMA, &d), 0);
	assert_true(d.appraise && !d.trust_archive);
	vg_policy_unref(p);
	p = parse_ok("appraise func=FILE_CHECK\n", 0);
	assert_false(vg_policy_uses(p) & VG_POLICY_USES_TRUST_ARCHIVE);
	vg_policy_unref(p);
}

static void references_keep_the_policy(void **state)
{
	struct vg_policy *p = parse_ok("measure\n", 0);
	struct vg_policy *q = vg_policy_ref(p);

	(void)state;
	assert_ptr_equal(p, q);
	vg_policy_unref(p);
	assert_int_equal(vg_policy_count(q), 1);	/* still alive (ASan would see) */
	vg_policy_unref(q);
	vg_policy_unref(NULL);
	assert_null(vg_policy_ref(NULL));
}

static void parse_survives_allocation_failures(void **state)
{
	static const char text[] =
		"measure func=KEY_CHECK keyrings=.ima|.evm\n"
		"dont_measure fsname=tmpfs obj_type=tmp_t subj_user=u\n"
		"appraise appraise_flag=x appraise_algos=sha256\n"
		"deny path=/usr/** subj_exe=/bin/* attr=security.vigil.revision>=3 attr=security.a=b\n"
		"measure func=CRITICAL_DATA label=a|b\n";
	long failures = 0;

	(void)state;
	for (long n = 0;; n++) {
		struct vg_policy *p = NULL;
		struct vg_policy_error e = { 0 };
		int r;

		failalloc_arm(n);
		r = vg_policy_parse(text, strlen(text), 0, &p, &e);
		failalloc_disarm();
		if (r == 0) {
			char *t = NULL;
			bool hit = failalloc_hit();

			assert_int_equal(vg_policy_count(p), 5);
			failalloc_arm(0);
			assert_int_equal(vg_policy_format(p, &t, NULL), -ENOMEM);
			failalloc_disarm();
			vg_policy_unref(p);
			if (!hit)
				break;
		} else {
			assert_int_equal(r, -ENOMEM);
			assert_string_equal(e.msg, "out of memory");
			failures++;
		}
		assert_true(n < 1000);
	}
	assert_true(failures > 10);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_every_keyword_canonical),
		cmocka_unit_test(parse_keeps_the_kernel_fields),
		cmocka_unit_test(parse_rejects_with_position),
		cmocka_unit_test(parse_one_bad_rule_rejects_all),
		cmocka_unit_test(parse_rejects_nul_and_takes_unterminated_text),
		cmocka_unit_test(kernel_doc_examples_parse),
		cmocka_unit_test(keylime_policies_round_trip),
		cmocka_unit_test(load_file_reports_errno),
		cmocka_unit_test(builtin_policies),
		cmocka_unit_test(match_table),
		cmocka_unit_test(round_trip_match_policies),
		cmocka_unit_test(match_asks_only_for_classes_requested),
		cmocka_unit_test(match_skips_classes_without_do_rules),
		cmocka_unit_test(match_hash_after_appraise_stays),
		cmocka_unit_test(rule_matches_names_the_failing_condition),
		cmocka_unit_test(path_patterns),
		cmocka_unit_test(attr_comparisons),
		cmocka_unit_test(check_enforceable_names_each_unobservable_condition),
		cmocka_unit_test(check_enforceable_builtins),
		cmocka_unit_test(match_also_func_merges_two_hooks),
		cmocka_unit_test(names_round_trip),
		cmocka_unit_test(format_truncates_like_snprintf),
		cmocka_unit_test(match_trust_archive),
		cmocka_unit_test(references_keep_the_policy),
		cmocka_unit_test(parse_survives_allocation_failures),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, setup_policies, teardown_policies);
}
