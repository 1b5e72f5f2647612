// SPDX-License-Identifier: MIT
/*
 * policy_match.c - which rules decide an access: ima_match_policy() and
 * ima_match_rules() of security/integrity/ima/ima_policy.c, plus vigil's
 * conditions (path and executable patterns, appraisal status, attributes).
 *
 * Kernel behaviour kept on purpose: a rule's gid= is not checked for
 * KEY_CHECK and CRITICAL_DATA (ima_match_rule_data() looks at uid= only);
 * euid=/egid= also accept the saved and real ids of a task with
 * CAP_SETUID/CAP_SETGID; an appraise rule that matches clears a hash
 * decision made before it (`action &= ~IMA_HASH`); the option flags of
 * every matching rule accumulate; classes that no "do" rule of the policy
 * could decide are not scanned (ima_policy_flag).
 *
 * LSM conditions compare the caller's context strings: for SELinux
 * ("user:role:type[:level]") obj_user/obj_role/obj_type match the first
 * three fields of the file's context, subj_* those of the task's; a
 * context without ':' is a Smack label, matched whole by *_user only.
 *
 * An access that is two hooks at once (vg_access.also_func: an open by
 * the dynamic loader is FILE_CHECK and the exec of the program) is
 * matched as two hook calls and the decisions are merged (merge()).
 *
 * Nothing here allocates; path patterns are matched by policy_glob.c.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "internal.h"
#include "policy_internal.h"

/* ---- conditions ---- */

static bool id_op(enum vg_policy_op op, uint32_t have, uint32_t rule)
{
	switch (op) {
	case VG_POL_OP_GT:
		return have > rule;
	case VG_POL_OP_LT:
		return have < rule;
	default:
		return have == rule;
	}
}

/* An LSM context split once per match: SELinux user, role, type; or a Smack label. */
struct lsm_ctx {
	const char *f[3];
	size_t len[3];
};

static void lsm_split(const char *ctx, struct lsm_ctx *c)
{
	memset(c, 0, sizeof(*c));
	if (!ctx)
		return;
	if (!strchr(ctx, ':')) {	/* Smack: the whole label is the "user" */
		c->f[0] = ctx;
		c->len[0] = strlen(ctx);
		return;
	}
	for (int i = 0; i < 3 && ctx; i++) {
		c->f[i] = ctx;
		c->len[i] = strcspn(ctx, ":");
		ctx = ctx[c->len[i]] ? ctx + c->len[i] + 1 : NULL;
	}
}

static bool lsm_field(const struct lsm_ctx *c, unsigned int idx, const char *want)
{
	return c->f[idx] && strncmp(c->f[idx], want, c->len[idx]) == 0 && want[c->len[idx]] == '\0';
}

static bool integrity_in(uint8_t set, bool neg, enum vg_integrity st)
{
	bool in = (unsigned int)st < VG_INTEGRITY__MAX && (set & (1u << st));

	return in != neg;
}

/* An attribute value as a number: decimal or level name, NULs and one '\n' trimmed. */
static bool attr_number(const uint8_t *v, size_t len, uint64_t *ret)
{
	while (len && v[len - 1] == '\0')
		len--;
	if (len && v[len - 1] == '\n')
		len--;
	if (!len || v[0] == '+')
		return false;
	return vg__policy_strtou64((const char *)v, len, 10, ret) == 0 ||
	       vg__policy_level((const char *)v, len, ret) == 0;
}

static bool attr_holds(const struct vg_policy_attr_cond *c, const struct vg_access *a)
{
	const struct vg_access_attr *x = NULL;

	for (size_t i = 0; i < a->nattrs && !x; i++)
		if (a->attrs[i].name && strcmp(a->attrs[i].name, c->name) == 0)
			x = &a->attrs[i];
	/* an attribute that EVM did not vouch for is not there */
	if (!x || !x->protected || (!x->value && x->len))
		return false;
	if (c->numeric) {
		uint64_t v;

		if (!attr_number(x->value, x->len, &v))
			return false;
		switch (c->op) {
		case VG_POL_OP_EQ: return v == c->num;
		case VG_POL_OP_NE: return v != c->num;
		case VG_POL_OP_GT: return v > c->num;
		case VG_POL_OP_LT: return v < c->num;
		case VG_POL_OP_GE: return v >= c->num;
		case VG_POL_OP_LE: return v <= c->num;
		}
		return false;
	} else {
		size_t len = x->len, vl = strlen(c->value);

		while (len && x->value[len - 1] == '\0')
			len--;
		if (len && x->value[len - 1] == '\n')
			len--;
		bool eq = len == vl && memcmp(x->value, c->value, vl) == 0;

		return c->op == VG_POL_OP_NE ? !eq : eq;
	}
}

#define FAIL(what) do { if (ret_why) *ret_why = (what); return false; } while (0)

/* ima_match_rule_data(): KEY_CHECK keyrings=, CRITICAL_DATA label=; uid= only. */
static bool match_data(const struct vg_policy_rule *r, const struct vg_access *a,
		       const char **ret_why)
{
	char **items;
	size_t n;

	if ((r->flags & VG_POLF_UID) && !id_op(r->uid_op, a->uid, r->uid))
		FAIL("uid");
	if (r->func == VG_FUNC_KEY_CHECK) {
		items = r->keyrings;
		n = r->nkeyrings;
	} else {
		items = r->labels;
		n = r->nlabels;
	}
	if (!items)
		return true;
	if (!a->func_data)
		FAIL(r->func == VG_FUNC_KEY_CHECK ? "keyrings" : "label");
	for (size_t i = 0; i < n; i++)
		if (strcmp(items[i], a->func_data) == 0)
			return true;
	FAIL(r->func == VG_FUNC_KEY_CHECK ? "keyrings" : "label");
}

static bool rule_matches(const struct vg_policy_rule *r, const struct vg_access *a,
			 const struct lsm_ctx *obj, const struct lsm_ctx *subj, const char **ret_why)
{
	static const uint8_t null_uuid[16];
	static const char *const lsm_keys[VG_LSM__MAX] = {
		"obj_user", "obj_role", "obj_type", "subj_user", "subj_role", "subj_type",
	};
	bool setattr = a->func == VG_FUNC_POST_SETATTR;
	uint32_t fl = r->flags;

	if ((fl & VG_POLF_FUNC) && r->func != a->func && !setattr)
		FAIL("func");
	if (a->func == VG_FUNC_KEY_CHECK || a->func == VG_FUNC_CRITICAL_DATA) {
		if (r->func != a->func)
			FAIL("func");
		return match_data(r, a, ret_why);
	}
	if ((fl & VG_POLF_MASK) && r->mask != a->mask && !setattr)
		FAIL("mask");
	if ((fl & VG_POLF_INMASK) && !(r->mask & a->mask) && !setattr)
		FAIL("mask");
	if ((fl & VG_POLF_FSMAGIC) && r->fsmagic != a->fsmagic)
		FAIL("fsmagic");
	if ((fl & VG_POLF_FSNAME) && (!a->fsname || strcmp(r->fsname, a->fsname) != 0))
		FAIL("fsname");
	if ((fl & VG_POLF_FSUUID) &&
	    memcmp(r->fsuuid, a->fsuuid_set ? a->fsuuid : null_uuid, 16) != 0)
		FAIL("fsuuid");
	if ((fl & VG_POLF_UID) && !id_op(r->uid_op, a->uid, r->uid))
		FAIL("uid");
	if (fl & VG_POLF_EUID) {
		if (a->cap_setuid) {
			if (!id_op(r->uid_op, a->euid, r->uid) && !id_op(r->uid_op, a->suid, r->uid) &&
			    !id_op(r->uid_op, a->uid, r->uid))
				FAIL("euid");
		} else if (!id_op(r->uid_op, a->euid, r->uid)) {
			FAIL("euid");
		}
	}
	if ((fl & VG_POLF_GID) && !id_op(r->gid_op, a->gid, r->gid))
		FAIL("gid");
	if (fl & VG_POLF_EGID) {
		if (a->cap_setgid) {
			if (!id_op(r->gid_op, a->egid, r->gid) && !id_op(r->gid_op, a->sgid, r->gid) &&
			    !id_op(r->gid_op, a->gid, r->gid))
				FAIL("egid");
		} else if (!id_op(r->gid_op, a->egid, r->gid)) {
			FAIL("egid");
		}
	}
	if ((fl & VG_POLF_FOWNER) && !id_op(r->fowner_op, a->fowner, r->fowner))
		FAIL("fowner");
	if ((fl & VG_POLF_FGROUP) && !id_op(r->fgroup_op, a->fgroup, r->fgroup))
		FAIL("fgroup");
	for (unsigned int i = 0; i < VG_LSM__MAX; i++) {
		if (r->lsm[i] && !lsm_field(i < VG_LSM_SUBJ_USER ? obj : subj, i % 3, r->lsm[i]))
			FAIL(lsm_keys[i]);
	}
	/* vigil */
	if (r->path && (!a->path || !vg__glob_match(r->path, a->path)))
		FAIL("path");
	if (r->subj_exe && (!a->subj_exe || !vg__glob_match(r->subj_exe, a->subj_exe)))
		FAIL("subj_exe");
	if ((r->xflags & VG_POLX_SUBJ_APPRAISAL) &&
	    !integrity_in(r->subj_appraisal, r->subj_appraisal_neg, a->subj_appraisal))
		FAIL("subj_appraisal");
	if ((r->xflags & VG_POLX_APPRAISAL) &&
	    !integrity_in(r->appraisal, r->appraisal_neg, a->appraisal))
		FAIL("appraisal");
	for (size_t i = 0; i < r->nattrs; i++)
		if (!attr_holds(&r->attrs[i], a))
			FAIL("attr");
	return true;
}

bool vg_policy_rule_matches(const struct vg_policy_rule *r, const struct vg_access *a,
			    const char **ret_why)
{
	struct lsm_ctx obj, subj;

	lsm_split(a->obj_ctx, &obj);
	lsm_split(a->subj_ctx, &subj);
	return rule_matches(r, a, &obj, &subj, ret_why);
}

/* One hook call: ima_match_policy(). */
static void match_one(const struct vg_policy *p, const struct vg_access *a, unsigned int classes,
		      struct vg_decision *ret)
{
	struct lsm_ctx obj, subj;
	unsigned int want;

	memset(ret, 0, sizeof(*ret));
	ret->pcr = VG_POLICY_DEFAULT_PCR;
	ret->verdict = VG_VERDICT_ALLOW;
	for (int c = 0; c < VG_CLASS__MAX; c++)
		ret->rule[c] = -1;
	lsm_split(a->obj_ctx, &obj);
	lsm_split(a->subj_ctx, &subj);
	/* ima_get_action(): flags &= ima_policy_flag */
	want = (classes & VG_CLASSES_IMA & p->do_classes) | (classes & (1u << VG_CLASS_ACCESS));
	for (size_t i = 0; i < p->n && want; i++) {
		const struct vg_policy_rule *r = &p->rules[i];
		int c = vg_policy_action_class(r->action);

		if (c < 0 || !(want & (1u << c)))
			continue;
		if (!rule_matches(r, a, &obj, &subj, NULL))
			continue;
		ret->flags |= r->flags & VG_POLF_OPTIONS;
		switch (r->action) {
		case VG_POL_MEASURE:
			ret->measure = true;
			break;
		case VG_POL_APPRAISE:
			ret->appraise = true;
			ret->hash = false;	/* action &= ~IMA_HASH */
			if (r->flags & VG_POLF_VALIDATE_ALGOS)
				ret->allowed_algos = r->allowed_algos;
			ret->trust_archive = r->xflags & VG_POLX_TRUST_ARCHIVE;
			break;
		case VG_POL_AUDIT:
			ret->audit = true;
			break;
		case VG_POL_HASH:
			ret->hash = true;
			break;
		case VG_POL_DENY:
			ret->verdict = VG_VERDICT_DENY;
			break;
		case VG_POL_AUDIT_ACCESS:
			ret->verdict = VG_VERDICT_AUDIT;
			break;
		default:	/* dont_*, allow */
			break;
		}
		ret->rule[c] = (long)i;
		want &= ~(1u << c);
		if (r->flags & VG_POLF_PCR)
			ret->pcr = r->pcr;
		if (r->template_name)
			ret->template_name = r->template_name;
	}
}

static int verdict_rank(enum vg_verdict v)
{
	return v == VG_VERDICT_DENY ? 2 : v == VG_VERDICT_AUDIT ? 1 : 0;
}

/*
 * Merge @x, the decision of the access's second hook (vg_access.also_func),
 * into @d: what the kernel does when one operation calls two hooks, each
 * deciding on its own. One measurement is made: @x's PCR and template
 * when @x measures (the exec), else @d's.
 */
static void merge(struct vg_decision *d, const struct vg_decision *x)
{
	bool *dv[] = { &d->measure, &d->appraise, &d->audit, &d->hash };
	const bool xv[] = { x->measure, x->appraise, x->audit, x->hash };

	/* an unlabeled file passes by the archive only if both appraisals allow it */
	if (x->appraise)
		d->trust_archive = d->appraise ? d->trust_archive && x->trust_archive : x->trust_archive;
	for (int c = VG_CLASS_MEASURE; c <= VG_CLASS_HASH; c++) {
		if (xv[c] && !*dv[c])
			d->rule[c] = x->rule[c];
		else if (!*dv[c] && d->rule[c] < 0)
			d->rule[c] = x->rule[c];
		*dv[c] = *dv[c] || xv[c];
	}
	if (x->measure) {
		d->rule[VG_CLASS_MEASURE] = x->rule[VG_CLASS_MEASURE];
		d->pcr = x->pcr;
		d->template_name = x->template_name;
	}
	if (x->appraise && x->allowed_algos)
		d->allowed_algos = d->allowed_algos ? d->allowed_algos & x->allowed_algos : x->allowed_algos;
	d->flags |= x->flags;
	if (verdict_rank(x->verdict) > verdict_rank(d->verdict) ||
	    (d->rule[VG_CLASS_ACCESS] < 0 && x->verdict == d->verdict)) {
		d->verdict = x->verdict;
		d->rule[VG_CLASS_ACCESS] = x->rule[VG_CLASS_ACCESS];
	}
}

int vg_policy_match(const struct vg_policy *p, const struct vg_access *a, unsigned int classes,
		    struct vg_decision *ret)
{
	struct vg_access b;
	struct vg_decision x;

	if (!p || !a || !ret)
		return -EINVAL;
	match_one(p, a, classes, ret);
	if (a->also_func == VG_FUNC_NONE)
		return 0;
	b = *a;
	b.func = a->also_func;
	b.mask = a->also_mask;
	b.also_func = VG_FUNC_NONE;
	match_one(p, &b, classes, &x);
	merge(ret, &x);
	return 0;
}
