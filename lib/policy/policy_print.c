// SPDX-License-Identifier: MIT
/*
 * policy_print.c - the canonical text of a policy, printed from the token
 * table the parser reads (vg__policy_tokens), in the order of the
 * kernel's ima_policy_show() with one change: digest_type= before
 * appraise_type=, since the kernel's order does not parse back (its
 * parser refuses digest_type= after appraise_type=). Numbers are printed
 * unsigned (the kernel prints uids with %d), values as parsed; path
 * patterns escape blanks, controls and backslashes as \xHH / \\.
 * No comments survive: the canonical form is for comparing and reloading.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "policy_internal.h"
#include "vigil/hash.h"


struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t room = o->cap - o->len;

		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(struct out *o, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	put(o, tmp, n < 0 ? 0 : (size_t)n);
}

/* " key<sep>" from the token table */
static void key(struct out *o, enum vg__opt t)
{
	put(o, " ", 1);
	puts_(o, vg__policy_tokens[t].key);
	if (vg__policy_tokens[t].sep)
		puts_(o, vg__policy_tokens[t].sep);
}

static void put_pattern(struct out *o, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			puts_(o, "\\\\");
		else if (*p <= 0x20 || *p == 0x7f)
			putf(o, "\\x%02x", *p);
		else
			put(o, (const char *)p, 1);
	}
}

static void put_list(struct out *o, char **items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(o, "|", 1);
		puts_(o, items[i]);
	}
}

static void put_id(struct out *o, enum vg__opt eq, enum vg_policy_op op, uint32_t v)
{
	/* the _GT and _LT tokens follow _EQ at fixed distances in enum vg__opt */
	key(o, op == VG_POL_OP_GT ? eq + (OPT_UID_GT - OPT_UID_EQ) :
	       op == VG_POL_OP_LT ? eq + (OPT_UID_LT - OPT_UID_EQ) : eq);
	putf(o, "%u", v);
}

static void put_integrity(struct out *o, uint8_t set)
{
	bool first = true;

	for (int i = 0; i < VG_INTEGRITY__MAX; i++)
		if (set & (1u << i)) {
			if (!first)
				put(o, "|", 1);
			puts_(o, vg_policy_integrity_name((enum vg_integrity)i));
			first = false;
		}
}

const char *const vg__policy_ops[6] = {
	[VG_POL_OP_EQ] = "=", [VG_POL_OP_GT] = ">", [VG_POL_OP_LT] = "<",
	[VG_POL_OP_NE] = "!=", [VG_POL_OP_GE] = ">=", [VG_POL_OP_LE] = "<=",
};

/*
 * ima_policy_show()'s order, except that digest_type= comes before
 * appraise_type= (so that the text parses back), then appraise_flag= and
 * vigil's conditions.
 */
static void format_rule(struct out *o, const struct vg_policy_rule *r)
{
	uint32_t fl = r->flags;
	const char *an = vg_policy_action_name(r->action);

	puts_(o, an ? an : "?");
	if (fl & VG_POLF_FUNC) {
		key(o, OPT_FUNC);
		puts_(o, vg_policy_func_name(r->func));
	}
	if (fl & (VG_POLF_MASK | VG_POLF_INMASK)) {
		key(o, OPT_MASK);
		if (fl & VG_POLF_INMASK)
			put(o, "^", 1);
		for (size_t i = 0; i < VG_ARRAY_SIZE(vg__policy_masks); i++)
			if (r->mask == vg__policy_masks[i].bit)
				puts_(o, vg__policy_masks[i].name);
	}
	if (fl & VG_POLF_FSMAGIC) {
		key(o, OPT_FSMAGIC);
		putf(o, "0x%llx", (unsigned long long)r->fsmagic);
	}
	if (fl & VG_POLF_FSNAME) {
		key(o, OPT_FSNAME);
		puts_(o, r->fsname);
	}
	if (fl & VG_POLF_KEYRINGS) {
		key(o, OPT_KEYRINGS);
		put_list(o, r->keyrings, r->nkeyrings);
	}
	if (fl & VG_POLF_LABEL) {
		key(o, OPT_LABEL);
		put_list(o, r->labels, r->nlabels);
	}
	if (fl & VG_POLF_PCR) {
		key(o, OPT_PCR);
		putf(o, "%d", r->pcr);
	}
	if (fl & VG_POLF_FSUUID) {
		const uint8_t *u = r->fsuuid;

		key(o, OPT_FSUUID);
		putf(o, "%02x%02x%02x%02x-%02x%02x-%02x%02x-", u[0], u[1], u[2], u[3], u[4], u[5],
		     u[6], u[7]);
		putf(o, "%02x%02x-%02x%02x%02x%02x%02x%02x", u[8], u[9], u[10], u[11], u[12], u[13],
		     u[14], u[15]);
	}
	if (fl & VG_POLF_UID)
		put_id(o, OPT_UID_EQ, r->uid_op, r->uid);
	if (fl & VG_POLF_EUID)
		put_id(o, OPT_EUID_EQ, r->uid_op, r->uid);
	if (fl & VG_POLF_GID)
		put_id(o, OPT_GID_EQ, r->gid_op, r->gid);
	if (fl & VG_POLF_EGID)
		put_id(o, OPT_EGID_EQ, r->gid_op, r->gid);
	if (fl & VG_POLF_FOWNER)
		put_id(o, OPT_FOWNER_EQ, r->fowner_op, r->fowner);
	if (fl & VG_POLF_FGROUP)
		put_id(o, OPT_FGROUP_EQ, r->fgroup_op, r->fgroup);
	if (fl & VG_POLF_VALIDATE_ALGOS) {
		bool first = true;

		key(o, OPT_APPRAISE_ALGOS);
		for (unsigned int a = 0; a < VG_HASH__LAST; a++)
			if (r->allowed_algos & (1u << a)) {
				if (!first)
					put(o, ",", 1);
				puts_(o, vg_hash_name(a));
				first = false;
			}
	}
	for (int i = 0; i < VG_LSM__MAX; i++)
		if (r->lsm[i]) {
			key(o, (enum vg__opt)(OPT_OBJ_USER + i));
			puts_(o, r->lsm[i]);
		}
	if (r->template_name) {
		key(o, OPT_TEMPLATE);
		puts_(o, r->template_name);
	}
	if (fl & VG_POLF_VERITY_REQUIRED) {
		key(o, OPT_DIGEST_TYPE);
		puts_(o, "verity");
	}
	if (fl & VG_POLF_DIGSIG_REQUIRED) {
		key(o, OPT_APPRAISE_TYPE);
		puts_(o, (fl & VG_POLF_VERITY_REQUIRED) ? "sigv3" :
			 (fl & VG_POLF_MODSIG_ALLOWED) ? "imasig|modsig" : "imasig");
	}
	if (r->appraise_flag) {
		key(o, OPT_APPRAISE_FLAG);
		puts_(o, r->appraise_flag);
	}
	if (fl & VG_POLF_PERMIT_DIRECTIO)
		key(o, OPT_PERMIT_DIRECTIO);
	if (r->path) {
		key(o, OPT_PATH);
		put_pattern(o, r->path);
	}
	if (r->subj_exe) {
		key(o, OPT_SUBJ_EXE);
		put_pattern(o, r->subj_exe);
	}
	if (r->xflags & VG_POLX_SUBJ_APPRAISAL) {
		key(o, r->subj_appraisal_neg ? OPT_SUBJ_APPRAISAL_NE : OPT_SUBJ_APPRAISAL_EQ);
		put_integrity(o, r->subj_appraisal);
	}
	if (r->xflags & VG_POLX_APPRAISAL) {
		key(o, r->appraisal_neg ? OPT_APPRAISAL_NE : OPT_APPRAISAL_EQ);
		put_integrity(o, r->appraisal);
	}
	if (r->xflags & VG_POLX_TRUST_ARCHIVE) {
		key(o, OPT_TRUST);
		puts_(o, "archive");
	}
	for (size_t i = 0; i < r->nattrs; i++) {
		key(o, OPT_ATTR);
		puts_(o, r->attrs[i].name);
		puts_(o, vg__policy_ops[r->attrs[i].op]);
		puts_(o, r->attrs[i].value);
	}
}

size_t vg_policy_rule_format(const struct vg_policy_rule *r, char *buf, size_t cap)
{
	struct out o = { .buf = buf, .cap = cap };

	format_rule(&o, r);
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return o.len;
}

int vg_policy_format(const struct vg_policy *p, char **ret_text, size_t *ret_len)
{
	struct out o = { 0 };

	for (size_t i = 0; i < p->n; i++) {
		format_rule(&o, &p->rules[i]);
		put(&o, "\n", 1);
	}
	o.cap = o.len + 1;
	o.buf = malloc(o.cap);
	if (!o.buf)
		return -ENOMEM;
	o.len = 0;
	for (size_t i = 0; i < p->n; i++) {
		format_rule(&o, &p->rules[i]);
		put(&o, "\n", 1);
	}
	o.buf[o.len] = '\0';
	*ret_text = o.buf;
	if (ret_len)
		*ret_len = o.len;
	return 0;
}

bool vg_policy_equal(const struct vg_policy *a, const struct vg_policy *b)
{
	char *ta = NULL, *tb = NULL;
	bool eq;

	if (!a || !b)
		return a == b;
	if (a->n != b->n)
		return false;
	if (vg_policy_format(a, &ta, NULL) < 0 || vg_policy_format(b, &tb, NULL) < 0) {
		free(ta);
		return false;
	}
	eq = strcmp(ta, tb) == 0;
	free(ta);
	free(tb);
	return eq;
}
