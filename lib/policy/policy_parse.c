// SPDX-License-Identifier: MIT
/*
 * policy_parse.c - one rule of the policy language, token by token:
 * ima_parse_rule() of security/integrity/ima/ima_policy.c, step for step.
 *
 * The same tokens (vg__policy_tokens, policy_token.c, that the printer
 * uses too), the same duplicate checks (including the kernel's quirks:
 * uid= and euid= share one value, fsname= and pcr= may repeat, the last
 * one counting), kstrtoul()'s number syntax, template= only after
 * `measure`, digest_type= only before appraise_type=. What the kernel
 * answers with a bare -EINVAL gets a sentence and a column here. Once a
 * rule's tokens are read, policy_validate.c checks how they go together.
 *
 * Departures, each deliberate: LSM labels are kept, not resolved (no LSM
 * here), so obj_type=unknown_t parses where a first kernel load would
 * refuse it; appraise_algos= takes every algorithm the kernel names,
 * whether or not a given kernel's crypto has it; appraise_flag= is kept
 * (the kernel accepts and forgets it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "policy_internal.h"
#include "policy_parse.h"
#include "vigil/evm.h"
#include "vigil/hash.h"
#include "vigil/policy.h"
#include "vigil/ima_template.h"

int vg__policy_perr(struct parse *ps, unsigned int col, int e, const char *fmt, ...)
{
	va_list ap;

	if (ps->err) {
		ps->err->err = e;
		ps->err->line = ps->line;
		ps->err->col = col;
		va_start(ap, fmt);
		vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
		va_end(ap);
	}
	return e;
}

static void setflag(struct parse *ps, uint32_t bit, unsigned int col)
{
	ps->r->flags |= bit;
	ps->flagcol[bitno(bit)] = col;
}

static void setx(struct parse *ps, uint32_t bit, unsigned int col)
{
	ps->r->xflags |= bit;
	ps->xcol[bitno(bit)] = col;
}

/* The value, shown safely in a message (at most 64 bytes). */
static const char *shown(const char *v, char buf[80])
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)v; *p && n < 64; p++)
		buf[n++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
	if (strlen(v) > 64) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

/* ima_alloc_rule_opt_list(): items split at '|', none empty. */
static int opt_list(struct parse *ps, const char *v, unsigned int col, const char *key,
		    char ***ret, size_t *ret_n)
{
	size_t n = 1;
	char **items;

	for (const char *p = v; *p; p++)
		n += *p == '|';
	items = calloc(n, sizeof(*items));
	if (!items)
		return nomem(ps, col);
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(v, "|");

		if (len == 0) {
			for (size_t j = 0; j < i; j++)
				free(items[j]);
			free(items);
			return vg__policy_perr(ps, col, -EINVAL, "%s= has an empty item", key);
		}
		items[i] = strndup(v, len);
		if (!items[i]) {
			for (size_t j = 0; j < i; j++)
				free(items[j]);
			free(items);
			return nomem(ps, col);
		}
		v += len + (v[len] == '|');
	}
	*ret = items;
	*ret_n = n;
	return 0;
}

/* make_kuid() in the initial namespace: 0 .. 2^32-2 (-1 is INVALID_UID). */
static int parse_id(struct parse *ps, const char *key, const char *sep, const char *v,
		    unsigned int col, uint32_t *ret)
{
	uint64_t n;
	char b[80];

	if (vg__policy_strtou64(v, strlen(v), 10, &n) < 0 || n >= UINT32_MAX)
		return vg__policy_perr(ps, col, -EINVAL, "%s%s'%s': not a decimal id (0 to 4294967294)",
				       key, sep, shown(v, b));
	*ret = (uint32_t)n;
	return 0;
}

/* path=, subj_exe=: \\ and \xHH escapes, absolute, a well-formed glob. */
static int parse_pattern(struct parse *ps, const char *key, const char *v, unsigned int col,
			 char **ret)
{
	size_t len = strlen(v), n = 0;
	char *out = malloc(len + 1);
	char b[80];

	if (!out)
		return nomem(ps, col);
	for (size_t i = 0; i < len; i++) {
		if (v[i] != '\\') {
			out[n++] = v[i];
			continue;
		}
		if (i + 1 < len && v[i + 1] == '\\') {
			out[n++] = '\\';
			i++;
			continue;
		}
		if (i + 3 < len && v[i + 1] == 'x') {
			uint8_t byte;
			char hex[3] = { v[i + 2], v[i + 3], 0 };

			if (vg_hex_decode(hex, &byte, 1) == 1 && byte) {
				out[n++] = (char)byte;
				i += 3;
				continue;
			}
		}
		free(out);
		return vg__policy_perr(ps, col + (unsigned int)strlen(key) + 1 + (unsigned int)i, -EINVAL,
				       "%s=: bad escape (write \\\\ or \\xHH, HH not 00)", key);
	}
	out[n] = '\0';
	if (out[0] != '/') {
		free(out);
		return vg__policy_perr(ps, col, -EINVAL, "%s='%s': not an absolute path pattern", key,
				       shown(v, b));
	}
	if (vg__glob_valid(out) < 0) {
		free(out);
		return vg__policy_perr(ps, col, -EINVAL, "%s='%s': '[' without a closing ']'", key,
				       shown(v, b));
	}
	*ret = out;
	return 0;
}

static int parse_integrity_set(struct parse *ps, const char *key, const char *v,
			       unsigned int col, uint8_t *ret)
{
	uint8_t set = 0;
	char b[80];

	while (1) {
		size_t len = strcspn(v, "|");
		int i = -1;

		for (int k = 0; k < VG_INTEGRITY__MAX; k++)
			if (strlen(vg_policy_integrity_name(k)) == len &&
			    memcmp(vg_policy_integrity_name(k), v, len) == 0)
				i = k;
		if (i < 0) {
			char item[80];

			snprintf(item, sizeof(item), "%.*s", (int)(len > 64 ? 64 : len), v);
			return vg__policy_perr(ps, col, -EINVAL,
					       "%s: unknown status '%s' (pass, fail, nolabel, unknown)", key,
					       shown(item, b));
		}
		set |= (uint8_t)(1u << i);
		if (!v[len])
			break;
		v += len + 1;
	}
	*ret = set;
	return 0;
}

static int parse_attr(struct parse *ps, const char *v, unsigned int col)
{
	struct vg_policy_rule *r = ps->r;
	struct vg_policy_attr_cond c = { 0 }, *grown;
	size_t nlen = strcspn(v, "<>=!");
	const char *o = v + nlen, *val;
	char b[80];

	if (nlen <= 9 || strncmp(v, "security.", 9) != 0)
		return vg__policy_perr(ps, col, -EINVAL,
				       "attr=: the attribute must be an EVM-protectable security.* xattr (attr=security.NAME OP VALUE)");
	for (size_t i = 9; i < nlen; i++) {
		char ch = v[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '.' || ch == '_' || ch == '-'))
			return vg__policy_perr(ps, col, -EINVAL, "attr=: bad character in the attribute name");
	}
	if (strncmp(o, ">=", 2) == 0)
		c.op = VG_POL_OP_GE, val = o + 2;
	else if (strncmp(o, "<=", 2) == 0)
		c.op = VG_POL_OP_LE, val = o + 2;
	else if (strncmp(o, "!=", 2) == 0)
		c.op = VG_POL_OP_NE, val = o + 2;
	else if (*o == '>')
		c.op = VG_POL_OP_GT, val = o + 1;
	else if (*o == '<')
		c.op = VG_POL_OP_LT, val = o + 1;
	else if (*o == '=')
		c.op = VG_POL_OP_EQ, val = o + 1;
	else
		return vg__policy_perr(ps, col, -EINVAL,
				       "attr=%s: no comparison (=, !=, <, <=, >, >=) after the name", shown(v, b));
	if (!*val || strpbrk(val, "<>=!"))
		return vg__policy_perr(ps, col, -EINVAL, "attr=%s: one value after the comparison",
				       shown(v, b));
	if (vg__policy_strtou64(val, strlen(val), 10, &c.num) == 0 && val[0] != '+')
		c.numeric = true;
	else if (vg__policy_level(val, strlen(val), &c.num) == 0)
		c.numeric = true;
	if (!c.numeric && c.op != VG_POL_OP_EQ && c.op != VG_POL_OP_NE)
		return vg__policy_perr(ps, col, -EINVAL,
				       "attr=%s: '%s' is no number or level (untrusted, low, medium, high, system); only = and != compare text",
				       shown(v, b), val);
	c.name = strndup(v, nlen);
	c.value = strdup(val);
	grown = c.name && c.value ? realloc(r->attrs, (r->nattrs + 1) * sizeof(*r->attrs)) : NULL;
	if (!grown) {
		free(c.name);
		free(c.value);
		return nomem(ps, col);
	}
	r->attrs = grown;
	r->attrs[r->nattrs++] = c;
	setx(ps, VG_POLX_ATTR, col);
	return 0;
}

static int parse_algos(struct parse *ps, const char *v, unsigned int col, uint32_t *ret)
{
	uint32_t set = 0;
	char b[80];

	while (1) {
		size_t len = strcspn(v, ",");
		char name[32];
		int a = -1;

		if (len < sizeof(name)) {
			memcpy(name, v, len);
			name[len] = '\0';
			a = vg_hash_by_name(name);
			/* match_string(hash_algo_name, ...): the kernel's spelling only */
			if (a >= 0 && strcmp(vg_hash_name((unsigned int)a), name) != 0)
				a = -1;
		}
		if (a < 0) {
			char item[80];

			snprintf(item, sizeof(item), "%.*s", (int)(len > 64 ? 64 : len), v);
			return vg__policy_perr(ps, col, -EINVAL, "appraise_algos=: unknown hash algorithm '%s'",
					       shown(item, b));
		}
		set |= 1u << a;
		if (!v[len])
			break;
		v += len + 1;
	}
	*ret = set;
	return 0;
}

static int lookup_template(const char *v)
{
	for (size_t i = 0; i < VG_IMA_TEMPLATES; i++)
		if (strcmp(vg_ima_templates[i].name, v) == 0 || strcmp(vg_ima_templates[i].fmt, v) == 0)
			return (int)i;
	return -1;
}

/* One token of a rule: what ima_parse_rule()'s switch does with it. */
static int parse_token(struct parse *ps, enum vg__opt t, const char *v, unsigned int col)
{
	struct vg_policy_rule *r = ps->r;
	const struct vg__token *tk = &vg__policy_tokens[t];
	char b[80];
	int e;

	if (tk->ext && (ps->flags & VG_POLICY_KERNEL))
		return vg__policy_perr(ps, col, -EINVAL,
				       "'%s%s' is a vigil extension, not in the kernel's grammar",
				       tk->key, tk->sep ? tk->sep : "");
	switch (t) {
	case OPT_MEASURE: case OPT_DONT_MEASURE: case OPT_APPRAISE: case OPT_DONT_APPRAISE:
	case OPT_AUDIT: case OPT_HASH: case OPT_DONT_HASH:
	case OPT_ALLOW: case OPT_DENY: case OPT_AUDIT_ACCESS: {
		unsigned int a = vg__policy_token_action(t);

		if (r->action)
			return vg__policy_perr(ps, col, -EINVAL, "a rule has one action: '%s' after '%s'",
					       tk->key, vg_policy_action_name(r->action));
		r->action = a;
		ps->actcol = col;
		return 0;
	}
	case OPT_FUNC:
		if (r->func)
			return vg__policy_perr(ps, col, -EINVAL, "func= given twice");
		e = vg_policy_func_by_name(v);
		if (e < 0)
			return vg__policy_perr(ps, col, -EINVAL, "func=%s: unknown hook", shown(v, b));
		r->func = (enum vg_func)e;
		r->func_col = col;
		setflag(ps, VG_POLF_FUNC, col);
		return 0;
	case OPT_MASK: {
		const char *m = v[0] == '^' ? v + 1 : v;

		if (r->mask)
			return vg__policy_perr(ps, col, -EINVAL, "mask= given twice");
		for (size_t i = 0; i < VG_ARRAY_SIZE(vg__policy_masks); i++)
			if (strcmp(vg__policy_masks[i].name, m) == 0) {
				r->mask = vg__policy_masks[i].bit;
				setflag(ps, v[0] == '^' ? VG_POLF_INMASK : VG_POLF_MASK, col);
				return 0;
			}
		return vg__policy_perr(ps, col, -EINVAL,
				       "mask=%s: unknown (MAY_EXEC, MAY_WRITE, MAY_READ, MAY_APPEND, each optionally after ^)",
				       shown(v, b));
	}
	case OPT_FSMAGIC:
		/* `if (entry->fsmagic)`: a first fsmagic=0 does not count */
		if (r->fsmagic)
			return vg__policy_perr(ps, col, -EINVAL, "fsmagic= given twice");
		if (vg__policy_strtou64(v, strlen(v), 16, &r->fsmagic) < 0)
			return vg__policy_perr(ps, col, -EINVAL, "fsmagic=%s: not a hexadecimal number",
					       shown(v, b));
		setflag(ps, VG_POLF_FSMAGIC, col);
		return 0;
	case OPT_FSNAME:
		/* no duplicate check in the kernel: the last one counts */
		free(r->fsname);
		r->fsname = strdup(v);
		if (!r->fsname)
			return nomem(ps, col);
		setflag(ps, VG_POLF_FSNAME, col);
		return 0;
	case OPT_KEYRINGS:
		if (r->keyrings)
			return vg__policy_perr(ps, col, -EINVAL, "keyrings= given twice");
		e = opt_list(ps, v, col, "keyrings", &r->keyrings, &r->nkeyrings);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_KEYRINGS, col);
		return 0;
	case OPT_LABEL:
		if (r->labels)
			return vg__policy_perr(ps, col, -EINVAL, "label= given twice");
		e = opt_list(ps, v, col, "label", &r->labels, &r->nlabels);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_LABEL, col);
		return 0;
	case OPT_FSUUID: {
		static const uint8_t null_uuid[16];

		if (memcmp(r->fsuuid, null_uuid, 16) != 0)
			return vg__policy_perr(ps, col, -EINVAL, "fsuuid= given twice");
		if (vg_uuid_parse(v, r->fsuuid) < 0)
			return vg__policy_perr(ps, col, -EINVAL,
					       "fsuuid=%s: not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
					       shown(v, b));
		setflag(ps, VG_POLF_FSUUID, col);
		return 0;
	}
	case OPT_UID_EQ: case OPT_UID_GT: case OPT_UID_LT:
	case OPT_EUID_EQ: case OPT_EUID_GT: case OPT_EUID_LT: {
		bool e_id = t == OPT_EUID_EQ || t == OPT_EUID_GT || t == OPT_EUID_LT;

		r->uid_op = (t == OPT_UID_GT || t == OPT_EUID_GT) ? VG_POL_OP_GT :
			    (t == OPT_UID_LT || t == OPT_EUID_LT) ? VG_POL_OP_LT : VG_POL_OP_EQ;
		if (r->flags & (VG_POLF_UID | VG_POLF_EUID))
			return vg__policy_perr(ps, col, -EINVAL,
					       "%s: a rule has one of uid=, euid= (the kernel keeps one value for both)",
					       tk->key);
		e = parse_id(ps, tk->key, tk->sep, v, col, &r->uid);
		if (e < 0)
			return e;
		setflag(ps, e_id ? VG_POLF_EUID : VG_POLF_UID, col);
		return 0;
	}
	case OPT_GID_EQ: case OPT_GID_GT: case OPT_GID_LT:
	case OPT_EGID_EQ: case OPT_EGID_GT: case OPT_EGID_LT: {
		bool e_id = t == OPT_EGID_EQ || t == OPT_EGID_GT || t == OPT_EGID_LT;

		r->gid_op = (t == OPT_GID_GT || t == OPT_EGID_GT) ? VG_POL_OP_GT :
			    (t == OPT_GID_LT || t == OPT_EGID_LT) ? VG_POL_OP_LT : VG_POL_OP_EQ;
		if (r->flags & (VG_POLF_GID | VG_POLF_EGID))
			return vg__policy_perr(ps, col, -EINVAL,
					       "%s: a rule has one of gid=, egid= (the kernel keeps one value for both)",
					       tk->key);
		e = parse_id(ps, tk->key, tk->sep, v, col, &r->gid);
		if (e < 0)
			return e;
		setflag(ps, e_id ? VG_POLF_EGID : VG_POLF_GID, col);
		return 0;
	}
	case OPT_FOWNER_EQ: case OPT_FOWNER_GT: case OPT_FOWNER_LT:
		r->fowner_op = t == OPT_FOWNER_GT ? VG_POL_OP_GT :
			       t == OPT_FOWNER_LT ? VG_POL_OP_LT : VG_POL_OP_EQ;
		if (r->flags & VG_POLF_FOWNER)
			return vg__policy_perr(ps, col, -EINVAL, "fowner given twice");
		e = parse_id(ps, tk->key, tk->sep, v, col, &r->fowner);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_FOWNER, col);
		return 0;
	case OPT_FGROUP_EQ: case OPT_FGROUP_GT: case OPT_FGROUP_LT:
		r->fgroup_op = t == OPT_FGROUP_GT ? VG_POL_OP_GT :
			       t == OPT_FGROUP_LT ? VG_POL_OP_LT : VG_POL_OP_EQ;
		if (r->flags & VG_POLF_FGROUP)
			return vg__policy_perr(ps, col, -EINVAL, "fgroup given twice");
		e = parse_id(ps, tk->key, tk->sep, v, col, &r->fgroup);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_FGROUP, col);
		return 0;
	case OPT_OBJ_USER: case OPT_OBJ_ROLE: case OPT_OBJ_TYPE:
	case OPT_SUBJ_USER: case OPT_SUBJ_ROLE: case OPT_SUBJ_TYPE: {
		unsigned int i = (unsigned int)(t - OPT_OBJ_USER);

		if (r->lsm[i])
			return vg__policy_perr(ps, col, -EINVAL, "%s= given twice", tk->key);
		r->lsm[i] = strdup(v);
		if (!r->lsm[i])
			return nomem(ps, col);
		ps->lsmcol[i] = col;
		return 0;
	}
	case OPT_DIGEST_TYPE:
		if (r->flags & VG_POLF_DIGSIG_REQUIRED)
			return vg__policy_perr(ps, col, -EINVAL, "digest_type= must come before appraise_type=");
		if (strcmp(v, "verity") != 0)
			return vg__policy_perr(ps, col, -EINVAL, "digest_type=%s: unknown (verity)", shown(v, b));
		setflag(ps, VG_POLF_VERITY_REQUIRED, col);
		return 0;
	case OPT_APPRAISE_TYPE: {
		bool verity = r->flags & VG_POLF_VERITY_REQUIRED;

		if (strcmp(v, "imasig") == 0 || strcmp(v, "imasig|modsig") == 0) {
			if (verity)
				return vg__policy_perr(ps, col, -EINVAL,
						       "appraise_type=%s does not go with digest_type=verity (that takes sigv3)",
						       v);
			if (v[6])
				setflag(ps, VG_POLF_MODSIG_ALLOWED, col);
		} else if (strcmp(v, "sigv3") == 0) {
			if (!verity)
				return vg__policy_perr(ps, col, -EINVAL,
						       "appraise_type=sigv3 needs digest_type=verity before it");
		} else {
			return vg__policy_perr(ps, col, -EINVAL,
					       "appraise_type=%s: unknown (imasig, imasig|modsig, sigv3)", shown(v, b));
		}
		setflag(ps, VG_POLF_DIGSIG_REQUIRED, col);
		setflag(ps, VG_POLF_CHECK_BLACKLIST, col);
		return 0;
	}
	case OPT_APPRAISE_FLAG:
		free(r->appraise_flag);
		r->appraise_flag = strdup(v);
		if (!r->appraise_flag)
			return nomem(ps, col);
		ps->aflagcol = col;
		return 0;
	case OPT_APPRAISE_ALGOS:
		if (r->allowed_algos)
			return vg__policy_perr(ps, col, -EINVAL, "appraise_algos= given twice");
		e = parse_algos(ps, v, col, &r->allowed_algos);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_VALIDATE_ALGOS, col);
		return 0;
	case OPT_PERMIT_DIRECTIO:
		setflag(ps, VG_POLF_PERMIT_DIRECTIO, col);
		return 0;
	case OPT_PCR: {
		/* kstrtoint() then INVALID_PCR(): 0 .. 63 (bits of measured_pcrs) */
		uint64_t n;
		const char *d = v[0] == '-' ? v + 1 : v;

		/* kstrtoll(): a '-' is followed by digits only ("-0" is 0) */
		if ((d != v && d[0] == '+') || vg__policy_strtou64(d, strlen(d), 10, &n) < 0 ||
		    (d != v && n != 0) || n > 63)
			return vg__policy_perr(ps, col, -EINVAL, "pcr=%s: not a PCR index (0 to 63)", shown(v, b));
		r->pcr = (int)n;
		setflag(ps, VG_POLF_PCR, col);
		return 0;
	}
	case OPT_TEMPLATE: {
		int i;

		if (r->action != VG_POL_MEASURE)
			return vg__policy_perr(ps, col, -EINVAL, "template= is only valid after the action measure");
		i = lookup_template(v);
		if (i < 0)
			return vg__policy_perr(ps, col, -EINVAL,
					       "template=%s: not a defined template (ima, ima-ng, ima-sig, ima-ngv2, ima-sigv2, ima-buf, ima-modsig, evm-sig)",
					       shown(v, b));
		if (r->template_name)
			return vg__policy_perr(ps, col, -EINVAL, "template= given twice");
		r->template_name = vg_ima_templates[i].name;
		ps->tmplcol = col;
		return 0;
	}
	case OPT_PATH:
	case OPT_SUBJ_EXE: {
		char **dst = t == OPT_PATH ? &r->path : &r->subj_exe;

		if (*dst)
			return vg__policy_perr(ps, col, -EINVAL, "%s= given twice", tk->key);
		e = parse_pattern(ps, tk->key, v, col, dst);
		if (e < 0)
			return e;
		setx(ps, t == OPT_PATH ? VG_POLX_PATH : VG_POLX_SUBJ_EXE, col);
		return 0;
	}
	case OPT_APPRAISAL_EQ: case OPT_APPRAISAL_NE:
		if (r->xflags & VG_POLX_APPRAISAL)
			return vg__policy_perr(ps, col, -EINVAL, "appraisal given twice");
		e = parse_integrity_set(ps, "appraisal", v, col, &r->appraisal);
		if (e < 0)
			return e;
		r->appraisal_neg = t == OPT_APPRAISAL_NE;
		setx(ps, VG_POLX_APPRAISAL, col);
		return 0;
	case OPT_SUBJ_APPRAISAL_EQ: case OPT_SUBJ_APPRAISAL_NE:
		if (r->xflags & VG_POLX_SUBJ_APPRAISAL)
			return vg__policy_perr(ps, col, -EINVAL, "subj_appraisal given twice");
		e = parse_integrity_set(ps, "subj_appraisal", v, col, &r->subj_appraisal);
		if (e < 0)
			return e;
		r->subj_appraisal_neg = t == OPT_SUBJ_APPRAISAL_NE;
		setx(ps, VG_POLX_SUBJ_APPRAISAL, col);
		return 0;
	case OPT_ATTR:
		return parse_attr(ps, v, col);
	case OPT_TRUST:
		if (r->xflags & VG_POLX_TRUST_ARCHIVE)
			return vg__policy_perr(ps, col, -EINVAL, "trust= given twice");
		if (strcmp(v, "archive") != 0)
			return vg__policy_perr(ps, col, -EINVAL, "trust=%s: unknown (archive)", shown(v, b));
		setx(ps, VG_POLX_TRUST_ARCHIVE, col);
		return 0;
	case OPT__MAX:
		break;
	}
	return vg__policy_perr(ps, col, -EINVAL, "internal: token %d", (int)t);
}

/* match_token(): a bare word matches itself; "key<sep>%s" needs a non-empty value. */
static int match_token(const char *tok, const char **ret_val, bool *ret_empty)
{
	*ret_empty = false;
	for (int t = 0; t < OPT__MAX; t++) {
		size_t kl = strlen(vg__policy_tokens[t].key), sl;

		if (!vg__policy_tokens[t].sep) {
			if (strcmp(tok, vg__policy_tokens[t].key) == 0)
				return t;
			continue;
		}
		sl = strlen(vg__policy_tokens[t].sep);
		if (strncmp(tok, vg__policy_tokens[t].key, kl) != 0 || strncmp(tok + kl, vg__policy_tokens[t].sep, sl) != 0)
			continue;
		if (!tok[kl + sl]) {
			*ret_empty = true;
			return t;
		}
		*ret_val = tok + kl + sl;
		return t;
	}
	return -1;
}


/*
 * One rule: @buf is its line from the first non-blank byte, NUL-terminated
 * and writable; @col0 the column of buf[0].
 */
int vg__policy_parse_rule(char *buf, unsigned int line, unsigned int col0, unsigned int flags,
			   struct vg_policy_rule *r, struct vg_policy_error *err)
{
	struct parse ps = { .r = r, .err = err, .flags = flags, .line = line, .rule_col = col0 };
	char *s = buf;
	int e;

	memset(r, 0, sizeof(*r));
	r->line = line;
	r->col = col0;
	while (s) {
		char *tok = s, *next = NULL;
		size_t n = strcspn(s, " \t");
		unsigned int col = col0 + (unsigned int)(tok - buf);
		const char *val = NULL;
		bool empty;
		char b[80];
		int t;

		if (s[n]) {
			s[n] = '\0';
			next = s + n + 1;
		}
		s = next;
		if (*tok == '#')	/* suffixed comment */
			break;
		if (!*tok)
			continue;
		t = match_token(tok, &val, &empty);
		if (t < 0)
			e = vg__policy_perr(&ps, col, -EINVAL, "unknown keyword '%s'", shown(tok, b));
		else if (empty)
			e = vg__policy_perr(&ps, col, -EINVAL, "%s%s needs a value", vg__policy_tokens[t].key,
					    vg__policy_tokens[t].sep);
		else
			e = parse_token(&ps, (enum vg__opt)t, val, col);
		if (e == -EINVAL && err && tok[0] && tok[strlen(tok) - 1] == '\r') {
			size_t ml = strlen(err->msg);

			snprintf(err->msg + ml, sizeof(err->msg) - ml,
				 " (a carriage return: the kernel splits lines at \\n only)");
		}
		if (e < 0)
			return e;
	}
	if (!r->action)
		return vg__policy_perr(&ps, col0, -EINVAL,
				       "no action (measure, dont_measure, appraise, dont_appraise, audit, hash, dont_hash%s)",
				       (flags & VG_POLICY_KERNEL) ? "" : ", allow, deny, audit_access");
	if (vg_policy_action_class(r->action) != VG_CLASS_ACCESS) {
		e = vg__policy_validate_kernel(&ps);
		if (e < 0)
			return e;
	}
	e = vg__policy_validate_vigil(&ps);
	if (e == 0) {
		struct vg__policy_cols c = { ps.flagcol, ps.xcol, ps.lsmcol, ps.tmplcol, ps.actcol };

		vg__policy_unenforced(r, &c);
	}
	return e;
}
