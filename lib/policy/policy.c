// SPDX-License-Identifier: MIT
/*
 * policy.c - parsing and printing the policy language, and the kernel's
 * built-in policies.
 *
 * The parser is ima_parse_rule() and ima_validate_rule() of
 * security/integrity/ima/ima_policy.c, step for step: the same tokens (one
 * table, below, that the printer uses too), the same duplicate checks
 * (including the kernel's quirks: uid= and euid= share one value, fsname=
 * and pcr= may repeat, the last one counting), kstrtoul()'s number syntax,
 * template= only after `measure`, digest_type= only before
 * appraise_type=, the same per-func restrictions. What the kernel answers
 * with a bare -EINVAL gets a sentence and a column here.
 *
 * Departures, each deliberate: a NUL byte is an error (the kernel would
 * cut the write there); LSM labels are kept, not resolved (no LSM here),
 * so obj_type=unknown_t parses where a first kernel load would refuse it;
 * appraise_algos= takes every algorithm the kernel names, whether or not
 * a given kernel's crypto has it; appraise_flag= is kept and printed
 * (the kernel accepts and forgets it). The printer puts digest_type=
 * before appraise_type=, because the kernel's own order
 * (ima_policy_show) does not parse back.
 *
 * Matching lives in policy_match.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "policy_internal.h"
#include "vigil/evm.h"
#include "vigil/hash.h"
#include "vigil/policy.h"

/*
 * The token table (the kernel's policy_tokens, in the order of its enum
 * policy_opt; vigil's at the end): keyword, and the text between keyword
 * and value. The parser matches against it and the printer prints from it.
 */
const struct vg__token vg__policy_tokens[OPT__MAX] = {
	[OPT_MEASURE] = { "measure", NULL, false },
	[OPT_DONT_MEASURE] = { "dont_measure", NULL, false },
	[OPT_APPRAISE] = { "appraise", NULL, false },
	[OPT_DONT_APPRAISE] = { "dont_appraise", NULL, false },
	[OPT_AUDIT] = { "audit", NULL, false },
	[OPT_HASH] = { "hash", NULL, false },
	[OPT_DONT_HASH] = { "dont_hash", NULL, false },
	[OPT_OBJ_USER] = { "obj_user", "=", false },
	[OPT_OBJ_ROLE] = { "obj_role", "=", false },
	[OPT_OBJ_TYPE] = { "obj_type", "=", false },
	[OPT_SUBJ_USER] = { "subj_user", "=", false },
	[OPT_SUBJ_ROLE] = { "subj_role", "=", false },
	[OPT_SUBJ_TYPE] = { "subj_type", "=", false },
	[OPT_FUNC] = { "func", "=", false },
	[OPT_MASK] = { "mask", "=", false },
	[OPT_FSMAGIC] = { "fsmagic", "=", false },
	[OPT_FSNAME] = { "fsname", "=", false },
	[OPT_FSUUID] = { "fsuuid", "=", false },
	[OPT_UID_EQ] = { "uid", "=", false },
	[OPT_EUID_EQ] = { "euid", "=", false },
	[OPT_GID_EQ] = { "gid", "=", false },
	[OPT_EGID_EQ] = { "egid", "=", false },
	[OPT_FOWNER_EQ] = { "fowner", "=", false },
	[OPT_FGROUP_EQ] = { "fgroup", "=", false },
	[OPT_UID_GT] = { "uid", ">", false },
	[OPT_EUID_GT] = { "euid", ">", false },
	[OPT_GID_GT] = { "gid", ">", false },
	[OPT_EGID_GT] = { "egid", ">", false },
	[OPT_FOWNER_GT] = { "fowner", ">", false },
	[OPT_FGROUP_GT] = { "fgroup", ">", false },
	[OPT_UID_LT] = { "uid", "<", false },
	[OPT_EUID_LT] = { "euid", "<", false },
	[OPT_GID_LT] = { "gid", "<", false },
	[OPT_EGID_LT] = { "egid", "<", false },
	[OPT_FOWNER_LT] = { "fowner", "<", false },
	[OPT_FGROUP_LT] = { "fgroup", "<", false },
	[OPT_DIGEST_TYPE] = { "digest_type", "=", false },
	[OPT_APPRAISE_TYPE] = { "appraise_type", "=", false },
	[OPT_APPRAISE_FLAG] = { "appraise_flag", "=", false },
	[OPT_APPRAISE_ALGOS] = { "appraise_algos", "=", false },
	[OPT_PERMIT_DIRECTIO] = { "permit_directio", NULL, false },
	[OPT_PCR] = { "pcr", "=", false },
	[OPT_TEMPLATE] = { "template", "=", false },
	[OPT_KEYRINGS] = { "keyrings", "=", false },
	[OPT_LABEL] = { "label", "=", false },
	[OPT_ALLOW] = { "allow", NULL, true },
	[OPT_DENY] = { "deny", NULL, true },
	[OPT_AUDIT_ACCESS] = { "audit_access", NULL, true },
	[OPT_PATH] = { "path", "=", true },
	[OPT_SUBJ_EXE] = { "subj_exe", "=", true },
	[OPT_SUBJ_APPRAISAL_EQ] = { "subj_appraisal", "=", true },
	[OPT_SUBJ_APPRAISAL_NE] = { "subj_appraisal", "!=", true },
	[OPT_APPRAISAL_EQ] = { "appraisal", "=", true },
	[OPT_APPRAISAL_NE] = { "appraisal", "!=", true },
	[OPT_ATTR] = { "attr", "=", true },
};

static const struct {
	enum vg__opt opt;
	unsigned int action;
} action_tokens[] = {
	{ OPT_MEASURE, VG_POL_MEASURE }, { OPT_DONT_MEASURE, VG_POL_DONT_MEASURE },
	{ OPT_APPRAISE, VG_POL_APPRAISE }, { OPT_DONT_APPRAISE, VG_POL_DONT_APPRAISE },
	{ OPT_AUDIT, VG_POL_AUDIT }, { OPT_HASH, VG_POL_HASH }, { OPT_DONT_HASH, VG_POL_DONT_HASH },
	{ OPT_ALLOW, VG_POL_ALLOW }, { OPT_DENY, VG_POL_DENY },
	{ OPT_AUDIT_ACCESS, VG_POL_AUDIT_ACCESS },
};

/* func_vg__policy_tokens[] (the __ima_hooks names), and the aliases ima_parse_rule() takes. */
static const char *const func_names[VG_FUNC__MAX] = {
	[VG_FUNC_NONE] = "NONE",
	[VG_FUNC_FILE_CHECK] = "FILE_CHECK",
	[VG_FUNC_MMAP_CHECK] = "MMAP_CHECK",
	[VG_FUNC_MMAP_CHECK_REQPROT] = "MMAP_CHECK_REQPROT",
	[VG_FUNC_BPRM_CHECK] = "BPRM_CHECK",
	[VG_FUNC_CREDS_CHECK] = "CREDS_CHECK",
	[VG_FUNC_POST_SETATTR] = "POST_SETATTR",
	[VG_FUNC_MODULE_CHECK] = "MODULE_CHECK",
	[VG_FUNC_FIRMWARE_CHECK] = "FIRMWARE_CHECK",
	[VG_FUNC_KEXEC_KERNEL_CHECK] = "KEXEC_KERNEL_CHECK",
	[VG_FUNC_KEXEC_INITRAMFS_CHECK] = "KEXEC_INITRAMFS_CHECK",
	[VG_FUNC_POLICY_CHECK] = "POLICY_CHECK",
	[VG_FUNC_KEXEC_CMDLINE] = "KEXEC_CMDLINE",
	[VG_FUNC_KEY_CHECK] = "KEY_CHECK",
	[VG_FUNC_CRITICAL_DATA] = "CRITICAL_DATA",
	[VG_FUNC_SETXATTR_CHECK] = "SETXATTR_CHECK",
};

static const struct {
	const char *name;
	enum vg_func func;
} func_parse[] = {
	{ "FILE_CHECK", VG_FUNC_FILE_CHECK },
	{ "PATH_CHECK", VG_FUNC_FILE_CHECK },	/* backwards compat */
	{ "MODULE_CHECK", VG_FUNC_MODULE_CHECK },
	{ "FIRMWARE_CHECK", VG_FUNC_FIRMWARE_CHECK },
	{ "FILE_MMAP", VG_FUNC_MMAP_CHECK },
	{ "MMAP_CHECK", VG_FUNC_MMAP_CHECK },
	{ "MMAP_CHECK_REQPROT", VG_FUNC_MMAP_CHECK_REQPROT },
	{ "BPRM_CHECK", VG_FUNC_BPRM_CHECK },
	{ "CREDS_CHECK", VG_FUNC_CREDS_CHECK },
	{ "KEXEC_KERNEL_CHECK", VG_FUNC_KEXEC_KERNEL_CHECK },
	{ "KEXEC_INITRAMFS_CHECK", VG_FUNC_KEXEC_INITRAMFS_CHECK },
	{ "POLICY_CHECK", VG_FUNC_POLICY_CHECK },
	{ "KEXEC_CMDLINE", VG_FUNC_KEXEC_CMDLINE },
	{ "KEY_CHECK", VG_FUNC_KEY_CHECK },	/* CONFIG_IMA_MEASURE_ASYMMETRIC_KEYS */
	{ "CRITICAL_DATA", VG_FUNC_CRITICAL_DATA },
	{ "SETXATTR_CHECK", VG_FUNC_SETXATTR_CHECK },
};

const struct vg__mask_name vg__policy_masks[4] = {
	{ "MAY_EXEC", VG_MAY_EXEC }, { "MAY_WRITE", VG_MAY_WRITE },
	{ "MAY_READ", VG_MAY_READ }, { "MAY_APPEND", VG_MAY_APPEND },
};

/* builtin_templates[] of ima_template.c: name and format. */
static const struct {
	const char *name, *fmt;
} templates[] = {
	{ "ima", "d|n" },
	{ "ima-ng", "d-ng|n-ng" },
	{ "ima-sig", "d-ng|n-ng|sig" },
	{ "ima-ngv2", "d-ngv2|n-ng" },
	{ "ima-sigv2", "d-ngv2|n-ng|sig" },
	{ "ima-buf", "d-ng|n-ng|buf" },
	{ "ima-modsig", "d-ng|n-ng|sig|d-modsig|modsig" },
	{ "evm-sig", "d-ng|n-ng|evmsig|xattrnames|xattrlengths|xattrvalues|iuid|igid|imode" },
};

static const char *const integrity_names[VG_INTEGRITY__MAX] = {
	[VG_INTEGRITY_UNKNOWN] = "unknown",
	[VG_INTEGRITY_PASS] = "pass",
	[VG_INTEGRITY_FAIL] = "fail",
	[VG_INTEGRITY_NOLABEL] = "nolabel",
};

/* Level names for attr= values (security.vigil.integrity). */
static const char *const level_names[] = { "untrusted", "low", "medium", "high", "system" };

const char *vg_policy_func_name(enum vg_func f)
{
	return (unsigned int)f < VG_FUNC__MAX ? func_names[f] : NULL;
}

int vg_policy_func_by_name(const char *name)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(func_parse); i++)
		if (strcmp(func_parse[i].name, name) == 0)
			return (int)func_parse[i].func;
	return -ENOENT;
}

const char *vg_policy_action_name(unsigned int action)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(action_tokens); i++)
		if (action_tokens[i].action == action)
			return vg__policy_tokens[action_tokens[i].opt].key;
	return NULL;
}

const char *vg_policy_integrity_name(enum vg_integrity i)
{
	return (unsigned int)i < VG_INTEGRITY__MAX ? integrity_names[i] : NULL;
}

int vg_policy_integrity_by_name(const char *name)
{
	for (int i = 0; i < VG_INTEGRITY__MAX; i++)
		if (strcmp(integrity_names[i], name) == 0)
			return i;
	return -ENOENT;
}

int vg_policy_action_class(unsigned int action)
{
	switch (action) {
	case VG_POL_MEASURE:
	case VG_POL_DONT_MEASURE:
		return VG_CLASS_MEASURE;
	case VG_POL_APPRAISE:
	case VG_POL_DONT_APPRAISE:
		return VG_CLASS_APPRAISE;
	case VG_POL_AUDIT:
		return VG_CLASS_AUDIT;
	case VG_POL_HASH:
	case VG_POL_DONT_HASH:
		return VG_CLASS_HASH;
	case VG_POL_ALLOW:
	case VG_POL_DENY:
	case VG_POL_AUDIT_ACCESS:
		return VG_CLASS_ACCESS;
	}
	return -1;
}

int vg__policy_level(const char *s, size_t len, uint64_t *ret)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(level_names); i++)
		if (strlen(level_names[i]) == len && memcmp(level_names[i], s, len) == 0) {
			*ret = i;
			return 0;
		}
	return -ENOENT;
}

/*
 * kstrtoull(): optional '+', for base 16 an optional 0x/0X, at least one
 * digit, nothing after, no overflow. Return: 0, -EINVAL, -ERANGE.
 */
int vg__policy_strtou64(const char *s, size_t len, unsigned int base, uint64_t *ret)
{
	size_t i = 0;
	uint64_t v = 0;

	if (i < len && s[i] == '+')
		i++;
	if (base == 16 && i + 1 < len && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	if (i >= len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned int d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*ret = v;
	return 0;
}

/* ---- parsing ---- */

struct parse {
	struct vg_policy_rule *r;
	struct vg_policy_error *err;
	unsigned int flags;
	unsigned int line;
	unsigned int rule_col;
	unsigned int flagcol[32];	/* column of the token that set each VG_POLF_ bit */
	unsigned int xcol[8];		/* ... each VG_POLX_ bit */
	unsigned int lsmcol[VG_LSM__MAX];
	unsigned int tmplcol, aflagcol, actcol;
};

static int perr(struct parse *ps, unsigned int col, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct parse *ps, unsigned int col, int e, const char *fmt, ...)
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

static int nomem(struct parse *ps, unsigned int col)
{
	return perr(ps, col, -ENOMEM, "out of memory");
}

static unsigned int bitno(uint32_t bit)
{
	return (unsigned int)__builtin_ctz(bit);
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
			return perr(ps, col, -EINVAL, "%s= has an empty item", key);
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
		return perr(ps, col, -EINVAL, "%s%s'%s': not a decimal id (0 to 4294967294)",
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
		return perr(ps, col + (unsigned int)strlen(key) + 1 + (unsigned int)i, -EINVAL,
			    "%s=: bad escape (write \\\\ or \\xHH, HH not 00)", key);
	}
	out[n] = '\0';
	if (out[0] != '/') {
		free(out);
		return perr(ps, col, -EINVAL, "%s='%s': not an absolute path pattern", key,
			    shown(v, b));
	}
	if (vg__glob_valid(out) < 0) {
		free(out);
		return perr(ps, col, -EINVAL, "%s='%s': '[' without a closing ']'", key,
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
			if (strlen(integrity_names[k]) == len && memcmp(integrity_names[k], v, len) == 0)
				i = k;
		if (i < 0) {
			char item[80];

			snprintf(item, sizeof(item), "%.*s", (int)(len > 64 ? 64 : len), v);
			return perr(ps, col, -EINVAL,
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
		return perr(ps, col, -EINVAL,
			    "attr=: the attribute must be an EVM-protectable security.* xattr (attr=security.NAME OP VALUE)");
	for (size_t i = 9; i < nlen; i++) {
		char ch = v[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '.' || ch == '_' || ch == '-'))
			return perr(ps, col, -EINVAL, "attr=: bad character in the attribute name");
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
		return perr(ps, col, -EINVAL,
			    "attr=%s: no comparison (=, !=, <, <=, >, >=) after the name", shown(v, b));
	if (!*val || strpbrk(val, "<>=!"))
		return perr(ps, col, -EINVAL, "attr=%s: one value after the comparison",
			    shown(v, b));
	if (vg__policy_strtou64(val, strlen(val), 10, &c.num) == 0 && val[0] != '+')
		c.numeric = true;
	else if (vg__policy_level(val, strlen(val), &c.num) == 0)
		c.numeric = true;
	if (!c.numeric && c.op != VG_POL_OP_EQ && c.op != VG_POL_OP_NE)
		return perr(ps, col, -EINVAL,
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
			return perr(ps, col, -EINVAL, "appraise_algos=: unknown hash algorithm '%s'",
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
	for (size_t i = 0; i < VG_ARRAY_SIZE(templates); i++)
		if (strcmp(templates[i].name, v) == 0 || strcmp(templates[i].fmt, v) == 0)
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
		return perr(ps, col, -EINVAL, "'%s%s' is a vigil extension, not in the kernel's grammar",
			    tk->key, tk->sep ? tk->sep : "");
	switch (t) {
	case OPT_MEASURE: case OPT_DONT_MEASURE: case OPT_APPRAISE: case OPT_DONT_APPRAISE:
	case OPT_AUDIT: case OPT_HASH: case OPT_DONT_HASH:
	case OPT_ALLOW: case OPT_DENY: case OPT_AUDIT_ACCESS: {
		unsigned int a = 0;

		for (size_t i = 0; i < VG_ARRAY_SIZE(action_tokens); i++)
			if (action_tokens[i].opt == t)
				a = action_tokens[i].action;
		if (r->action)
			return perr(ps, col, -EINVAL, "a rule has one action: '%s' after '%s'",
				    tk->key, vg_policy_action_name(r->action));
		r->action = a;
		ps->actcol = col;
		return 0;
	}
	case OPT_FUNC:
		if (r->func)
			return perr(ps, col, -EINVAL, "func= given twice");
		e = vg_policy_func_by_name(v);
		if (e < 0)
			return perr(ps, col, -EINVAL, "func=%s: unknown hook", shown(v, b));
		r->func = (enum vg_func)e;
		r->func_col = col;
		setflag(ps, VG_POLF_FUNC, col);
		return 0;
	case OPT_MASK: {
		const char *m = v[0] == '^' ? v + 1 : v;

		if (r->mask)
			return perr(ps, col, -EINVAL, "mask= given twice");
		for (size_t i = 0; i < VG_ARRAY_SIZE(vg__policy_masks); i++)
			if (strcmp(vg__policy_masks[i].name, m) == 0) {
				r->mask = vg__policy_masks[i].bit;
				setflag(ps, v[0] == '^' ? VG_POLF_INMASK : VG_POLF_MASK, col);
				return 0;
			}
		return perr(ps, col, -EINVAL,
			    "mask=%s: unknown (MAY_EXEC, MAY_WRITE, MAY_READ, MAY_APPEND, each optionally after ^)",
			    shown(v, b));
	}
	case OPT_FSMAGIC:
		/* `if (entry->fsmagic)`: a first fsmagic=0 does not count */
		if (r->fsmagic)
			return perr(ps, col, -EINVAL, "fsmagic= given twice");
		if (vg__policy_strtou64(v, strlen(v), 16, &r->fsmagic) < 0)
			return perr(ps, col, -EINVAL, "fsmagic=%s: not a hexadecimal number",
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
			return perr(ps, col, -EINVAL, "keyrings= given twice");
		e = opt_list(ps, v, col, "keyrings", &r->keyrings, &r->nkeyrings);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_KEYRINGS, col);
		return 0;
	case OPT_LABEL:
		if (r->labels)
			return perr(ps, col, -EINVAL, "label= given twice");
		e = opt_list(ps, v, col, "label", &r->labels, &r->nlabels);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_LABEL, col);
		return 0;
	case OPT_FSUUID: {
		static const uint8_t null_uuid[16];

		if (memcmp(r->fsuuid, null_uuid, 16) != 0)
			return perr(ps, col, -EINVAL, "fsuuid= given twice");
		if (vg_uuid_parse(v, r->fsuuid) < 0)
			return perr(ps, col, -EINVAL,
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
			return perr(ps, col, -EINVAL,
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
			return perr(ps, col, -EINVAL,
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
			return perr(ps, col, -EINVAL, "fowner given twice");
		e = parse_id(ps, tk->key, tk->sep, v, col, &r->fowner);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_FOWNER, col);
		return 0;
	case OPT_FGROUP_EQ: case OPT_FGROUP_GT: case OPT_FGROUP_LT:
		r->fgroup_op = t == OPT_FGROUP_GT ? VG_POL_OP_GT :
			       t == OPT_FGROUP_LT ? VG_POL_OP_LT : VG_POL_OP_EQ;
		if (r->flags & VG_POLF_FGROUP)
			return perr(ps, col, -EINVAL, "fgroup given twice");
		e = parse_id(ps, tk->key, tk->sep, v, col, &r->fgroup);
		if (e < 0)
			return e;
		setflag(ps, VG_POLF_FGROUP, col);
		return 0;
	case OPT_OBJ_USER: case OPT_OBJ_ROLE: case OPT_OBJ_TYPE:
	case OPT_SUBJ_USER: case OPT_SUBJ_ROLE: case OPT_SUBJ_TYPE: {
		unsigned int i = (unsigned int)(t - OPT_OBJ_USER);

		if (r->lsm[i])
			return perr(ps, col, -EINVAL, "%s= given twice", tk->key);
		r->lsm[i] = strdup(v);
		if (!r->lsm[i])
			return nomem(ps, col);
		ps->lsmcol[i] = col;
		return 0;
	}
	case OPT_DIGEST_TYPE:
		if (r->flags & VG_POLF_DIGSIG_REQUIRED)
			return perr(ps, col, -EINVAL, "digest_type= must come before appraise_type=");
		if (strcmp(v, "verity") != 0)
			return perr(ps, col, -EINVAL, "digest_type=%s: unknown (verity)", shown(v, b));
		setflag(ps, VG_POLF_VERITY_REQUIRED, col);
		return 0;
	case OPT_APPRAISE_TYPE: {
		bool verity = r->flags & VG_POLF_VERITY_REQUIRED;

		if (strcmp(v, "imasig") == 0 || strcmp(v, "imasig|modsig") == 0) {
			if (verity)
				return perr(ps, col, -EINVAL,
					    "appraise_type=%s does not go with digest_type=verity (that takes sigv3)",
					    v);
			if (v[6])
				setflag(ps, VG_POLF_MODSIG_ALLOWED, col);
		} else if (strcmp(v, "sigv3") == 0) {
			if (!verity)
				return perr(ps, col, -EINVAL,
					    "appraise_type=sigv3 needs digest_type=verity before it");
		} else {
			return perr(ps, col, -EINVAL,
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
			return perr(ps, col, -EINVAL, "appraise_algos= given twice");
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
			return perr(ps, col, -EINVAL, "pcr=%s: not a PCR index (0 to 63)", shown(v, b));
		r->pcr = (int)n;
		setflag(ps, VG_POLF_PCR, col);
		return 0;
	}
	case OPT_TEMPLATE: {
		int i;

		if (r->action != VG_POL_MEASURE)
			return perr(ps, col, -EINVAL, "template= is only valid after the action measure");
		i = lookup_template(v);
		if (i < 0)
			return perr(ps, col, -EINVAL,
				    "template=%s: not a defined template (ima, ima-ng, ima-sig, ima-ngv2, ima-sigv2, ima-buf, ima-modsig, evm-sig)",
				    shown(v, b));
		if (r->template_name)
			return perr(ps, col, -EINVAL, "template= given twice");
		r->template_name = templates[i].name;
		ps->tmplcol = col;
		return 0;
	}
	case OPT_PATH:
	case OPT_SUBJ_EXE: {
		char **dst = t == OPT_PATH ? &r->path : &r->subj_exe;

		if (*dst)
			return perr(ps, col, -EINVAL, "%s= given twice", tk->key);
		e = parse_pattern(ps, tk->key, v, col, dst);
		if (e < 0)
			return e;
		setx(ps, t == OPT_PATH ? VG_POLX_PATH : VG_POLX_SUBJ_EXE, col);
		return 0;
	}
	case OPT_APPRAISAL_EQ: case OPT_APPRAISAL_NE:
		if (r->xflags & VG_POLX_APPRAISAL)
			return perr(ps, col, -EINVAL, "appraisal given twice");
		e = parse_integrity_set(ps, "appraisal", v, col, &r->appraisal);
		if (e < 0)
			return e;
		r->appraisal_neg = t == OPT_APPRAISAL_NE;
		setx(ps, VG_POLX_APPRAISAL, col);
		return 0;
	case OPT_SUBJ_APPRAISAL_EQ: case OPT_SUBJ_APPRAISAL_NE:
		if (r->xflags & VG_POLX_SUBJ_APPRAISAL)
			return perr(ps, col, -EINVAL, "subj_appraisal given twice");
		e = parse_integrity_set(ps, "subj_appraisal", v, col, &r->subj_appraisal);
		if (e < 0)
			return e;
		r->subj_appraisal_neg = t == OPT_SUBJ_APPRAISAL_NE;
		setx(ps, VG_POLX_SUBJ_APPRAISAL, col);
		return 0;
	case OPT_ATTR:
		return parse_attr(ps, v, col);
	case OPT__MAX:
		break;
	}
	return perr(ps, col, -EINVAL, "internal: token %d", (int)t);
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

static const char *flag_key(uint32_t bit)
{
	switch (bit) {
	case VG_POLF_FUNC: return "func=";
	case VG_POLF_MASK: case VG_POLF_INMASK: return "mask=";
	case VG_POLF_FSMAGIC: return "fsmagic=";
	case VG_POLF_UID: return "uid";
	case VG_POLF_FOWNER: return "fowner";
	case VG_POLF_FSUUID: return "fsuuid=";
	case VG_POLF_EUID: return "euid";
	case VG_POLF_PCR: return "pcr=";
	case VG_POLF_FSNAME: return "fsname=";
	case VG_POLF_KEYRINGS: return "keyrings=";
	case VG_POLF_LABEL: return "label=";
	case VG_POLF_VALIDATE_ALGOS: return "appraise_algos=";
	case VG_POLF_GID: return "gid";
	case VG_POLF_EGID: return "egid";
	case VG_POLF_FGROUP: return "fgroup";
	case VG_POLF_DIGSIG_REQUIRED: case VG_POLF_CHECK_BLACKLIST: return "appraise_type=";
	case VG_POLF_PERMIT_DIRECTIO: return "permit_directio";
	case VG_POLF_MODSIG_ALLOWED: return "appraise_type=imasig|modsig";
	case VG_POLF_VERITY_REQUIRED: return "digest_type=verity";
	}
	return "?";
}

static bool has_lsm(const struct vg_policy_rule *r)
{
	for (int i = 0; i < VG_LSM__MAX; i++)
		if (r->lsm[i])
			return true;
	return false;
}

static unsigned int first_lsm_col(const struct parse *ps, const char **key)
{
	static const char *const k[VG_LSM__MAX] = { "obj_user=", "obj_role=", "obj_type=",
						    "subj_user=", "subj_role=", "subj_type=" };

	for (int i = 0; i < VG_LSM__MAX; i++)
		if (ps->r->lsm[i]) {
			*key = k[i];
			return ps->lsmcol[i];
		}
	*key = "";
	return ps->rule_col;
}

/* The first (lowest) bit of @bad, reported at its token. */
static int bad_flag(struct parse *ps, uint32_t bad, const char *fmt_func)
{
	uint32_t bit = bad & -bad;
	const char *fn = vg_policy_func_name(ps->r->func);

	if (ps->r->func == VG_FUNC_NONE) {
		if (bit == VG_POLF_KEYRINGS)
			return perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "keyrings= needs func=KEY_CHECK");
		if (bit == VG_POLF_LABEL)
			return perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "label= needs func=CRITICAL_DATA");
		if (bit == VG_POLF_MODSIG_ALLOWED)
			return perr(ps, ps->flagcol[bitno(bit)], -EINVAL,
				    "appraise_type=imasig|modsig needs func=MODULE_CHECK, KEXEC_KERNEL_CHECK or KEXEC_INITRAMFS_CHECK");
	}
	return perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "%s does not go with %s%s", flag_key(bit),
		    fmt_func, ps->r->func ? fn : "a rule without func=");
}

/* ima_validate_rule(), with the reason in words. */
static int validate_kernel(struct parse *ps)
{
	struct vg_policy_rule *r = ps->r;
	uint32_t allowed, fl = r->flags;
	const char *key;
	unsigned int col;

	if (r->action != VG_POL_MEASURE && (fl & VG_POLF_PCR))
		return perr(ps, ps->flagcol[bitno(VG_POLF_PCR)], -EINVAL,
			    "pcr= is only valid with the action measure");
	if (r->action != VG_POL_APPRAISE && (fl & (VG_POLF_DIGSIG_REQUIRED | VG_POLF_MODSIG_ALLOWED |
						   VG_POLF_CHECK_BLACKLIST | VG_POLF_VALIDATE_ALGOS))) {
		uint32_t bit = (fl & VG_POLF_DIGSIG_REQUIRED) ? VG_POLF_DIGSIG_REQUIRED : VG_POLF_VALIDATE_ALGOS;

		return perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "%s is only valid with the action appraise",
			    flag_key(bit));
	}
	switch (r->func) {
	case VG_FUNC_NONE: case VG_FUNC_FILE_CHECK: case VG_FUNC_MMAP_CHECK:
	case VG_FUNC_MMAP_CHECK_REQPROT: case VG_FUNC_BPRM_CHECK: case VG_FUNC_CREDS_CHECK:
	case VG_FUNC_POST_SETATTR: case VG_FUNC_FIRMWARE_CHECK: case VG_FUNC_POLICY_CHECK:
		allowed = VG_POLF_FUNC | VG_POLF_MASK | VG_POLF_FSMAGIC | VG_POLF_UID | VG_POLF_FOWNER |
			  VG_POLF_FSUUID | VG_POLF_INMASK | VG_POLF_EUID | VG_POLF_PCR | VG_POLF_FSNAME |
			  VG_POLF_GID | VG_POLF_EGID | VG_POLF_FGROUP | VG_POLF_DIGSIG_REQUIRED |
			  VG_POLF_PERMIT_DIRECTIO | VG_POLF_VALIDATE_ALGOS | VG_POLF_CHECK_BLACKLIST |
			  VG_POLF_VERITY_REQUIRED;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC_MODULE_CHECK: case VG_FUNC_KEXEC_KERNEL_CHECK: case VG_FUNC_KEXEC_INITRAMFS_CHECK:
		allowed = VG_POLF_FUNC | VG_POLF_MASK | VG_POLF_FSMAGIC | VG_POLF_UID | VG_POLF_FOWNER |
			  VG_POLF_FSUUID | VG_POLF_INMASK | VG_POLF_EUID | VG_POLF_PCR | VG_POLF_FSNAME |
			  VG_POLF_GID | VG_POLF_EGID | VG_POLF_FGROUP | VG_POLF_DIGSIG_REQUIRED |
			  VG_POLF_PERMIT_DIRECTIO | VG_POLF_MODSIG_ALLOWED | VG_POLF_CHECK_BLACKLIST |
			  VG_POLF_VALIDATE_ALGOS;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC_KEXEC_CMDLINE:
		if (r->action & ~(VG_POL_MEASURE | VG_POL_DONT_MEASURE))
			return perr(ps, ps->actcol, -EINVAL,
				    "func=KEXEC_CMDLINE is only valid with measure or dont_measure");
		allowed = VG_POLF_FUNC | VG_POLF_FSMAGIC | VG_POLF_UID | VG_POLF_FOWNER | VG_POLF_FSUUID |
			  VG_POLF_EUID | VG_POLF_PCR | VG_POLF_FSNAME | VG_POLF_GID | VG_POLF_EGID |
			  VG_POLF_FGROUP;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC_KEY_CHECK:
	case VG_FUNC_CRITICAL_DATA: {
		const char *fn = vg_policy_func_name(r->func);

		if (r->action & ~(VG_POL_MEASURE | VG_POL_DONT_MEASURE))
			return perr(ps, ps->actcol, -EINVAL,
				    "func=%s is only valid with measure or dont_measure", fn);
		allowed = VG_POLF_FUNC | VG_POLF_UID | VG_POLF_GID | VG_POLF_PCR |
			  (r->func == VG_FUNC_KEY_CHECK ? VG_POLF_KEYRINGS : VG_POLF_LABEL);
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		if (has_lsm(r)) {
			col = first_lsm_col(ps, &key);
			return perr(ps, col, -EINVAL, "%s does not go with func=%s", key, fn);
		}
		break;
	}
	case VG_FUNC_SETXATTR_CHECK:
		if (r->action != VG_POL_APPRAISE)
			return perr(ps, ps->actcol, -EINVAL, "func=SETXATTR_CHECK is only valid with appraise");
		if (!(fl & VG_POLF_VALIDATE_ALGOS))
			return perr(ps, ps->flagcol[bitno(VG_POLF_FUNC)], -EINVAL,
				    "func=SETXATTR_CHECK needs appraise_algos=");
		allowed = VG_POLF_FUNC | VG_POLF_VALIDATE_ALGOS;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC__MAX:
		return perr(ps, ps->rule_col, -EINVAL, "internal: func");
	}
	/* fs-verity appraisal needs a signature (sigv3) */
	if (r->action == VG_POL_APPRAISE && (fl & VG_POLF_VERITY_REQUIRED) &&
	    !(fl & VG_POLF_DIGSIG_REQUIRED))
		return perr(ps, ps->flagcol[bitno(VG_POLF_VERITY_REQUIRED)], -EINVAL,
			    "appraise digest_type=verity needs appraise_type=sigv3");
	return 0;
}

static bool func_is_file_access(enum vg_func f)
{
	return f != VG_FUNC_KEXEC_CMDLINE && f != VG_FUNC_KEY_CHECK && f != VG_FUNC_CRITICAL_DATA &&
	       f != VG_FUNC_SETXATTR_CHECK;
}

static unsigned int first_x(const struct parse *ps, uint32_t bits, const char **key)
{
	static const char *const k[] = { "path=", "subj_exe=", "appraisal", "subj_appraisal", "attr=" };

	for (unsigned int i = 0; i < VG_ARRAY_SIZE(k); i++)
		if (bits & (1u << i)) {
			*key = k[i];
			return ps->xcol[i];
		}
	*key = "";
	return ps->rule_col;
}

/* vigil's rules for its extensions. */
static int validate_vigil(struct parse *ps)
{
	struct vg_policy_rule *r = ps->r;
	bool access = vg_policy_action_class(r->action) == VG_CLASS_ACCESS;
	const char *key;
	unsigned int col;

	if (access) {
		uint32_t opts = r->flags & (VG_POLF_PCR | VG_POLF_KEYRINGS | VG_POLF_LABEL |
					    VG_POLF_VALIDATE_ALGOS | VG_POLF_OPTIONS);

		if (opts)
			return perr(ps, ps->flagcol[bitno(opts & -opts)], -EINVAL,
				    "%s does not go with an access rule (allow, deny, audit_access)",
				    flag_key(opts & -opts));
		if (r->appraise_flag)
			return perr(ps, ps->aflagcol, -EINVAL,
				    "appraise_flag= does not go with an access rule (allow, deny, audit_access)");
		if (!func_is_file_access(r->func))
			return perr(ps, ps->flagcol[bitno(VG_POLF_FUNC)], -EINVAL,
				    "func=%s is no file access: not valid in an access rule",
				    vg_policy_func_name(r->func));
		return 0;
	}
	if (r->xflags & (VG_POLX_APPRAISAL | VG_POLX_ATTR)) {
		col = first_x(ps, r->xflags & (VG_POLX_APPRAISAL | VG_POLX_ATTR), &key);
		return perr(ps, col, -EINVAL,
			    "%s is only valid in an access rule (allow, deny, audit_access)", key);
	}
	if (r->xflags && !func_is_file_access(r->func)) {
		col = first_x(ps, r->xflags, &key);
		return perr(ps, col, -EINVAL, "%s does not go with func=%s", key,
			    vg_policy_func_name(r->func));
	}
	return 0;
}

void vg__policy_rule_release(struct vg_policy_rule *r)
{
	free(r->fsname);
	for (int i = 0; i < VG_LSM__MAX; i++)
		free(r->lsm[i]);
	for (size_t i = 0; i < r->nkeyrings; i++)
		free(r->keyrings[i]);
	free(r->keyrings);
	for (size_t i = 0; i < r->nlabels; i++)
		free(r->labels[i]);
	free(r->labels);
	free(r->appraise_flag);
	free(r->path);
	free(r->subj_exe);
	for (size_t i = 0; i < r->nattrs; i++) {
		free(r->attrs[i].name);
		free(r->attrs[i].value);
	}
	free(r->attrs);
	memset(r, 0, sizeof(*r));
}

/*
 * One rule: @buf is its line from the first non-blank byte, NUL-terminated
 * and writable; @col0 the column of buf[0].
 */
static int parse_rule(char *buf, unsigned int line, unsigned int col0, unsigned int flags,
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
			e = perr(&ps, col, -EINVAL, "unknown keyword '%s'", shown(tok, b));
		else if (empty)
			e = perr(&ps, col, -EINVAL, "%s%s needs a value", vg__policy_tokens[t].key,
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
		return perr(&ps, col0, -EINVAL,
			    "no action (measure, dont_measure, appraise, dont_appraise, audit, hash, dont_hash%s)",
			    (flags & VG_POLICY_KERNEL) ? "" : ", allow, deny, audit_access");
	if (vg_policy_action_class(r->action) != VG_CLASS_ACCESS) {
		e = validate_kernel(&ps);
		if (e < 0)
			return e;
	}
	e = validate_vigil(&ps);
	if (e == 0) {
		struct vg__policy_cols c = { ps.flagcol, ps.xcol, ps.lsmcol, ps.tmplcol, ps.actcol };

		vg__policy_unenforced(r, &c);
	}
	return e;
}

static void policy_free(struct vg_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		vg__policy_rule_release(&p->rules[i]);
	free(p->rules);
	free(p);
}

static unsigned int rule_uses(const struct vg_policy_rule *r)
{
	unsigned int u = 0;

	if (r->xflags & VG_POLX_PATH)
		u |= VG_POLICY_USES_PATH;
	if (r->xflags & VG_POLX_SUBJ_EXE)
		u |= VG_POLICY_USES_SUBJ_EXE;
	if (r->xflags & VG_POLX_APPRAISAL)
		u |= VG_POLICY_USES_APPRAISAL;
	if (r->xflags & VG_POLX_SUBJ_APPRAISAL)
		u |= VG_POLICY_USES_SUBJ_APPRAISAL;
	if (r->xflags & VG_POLX_ATTR)
		u |= VG_POLICY_USES_ATTR;
	if (r->flags & VG_POLF_FSUUID)
		u |= VG_POLICY_USES_FSUUID;
	if (r->flags & VG_POLF_FSNAME)
		u |= VG_POLICY_USES_FSNAME;
	if (r->lsm[VG_LSM_OBJ_USER] || r->lsm[VG_LSM_OBJ_ROLE] || r->lsm[VG_LSM_OBJ_TYPE])
		u |= VG_POLICY_USES_OBJ_LSM;
	if (r->lsm[VG_LSM_SUBJ_USER] || r->lsm[VG_LSM_SUBJ_ROLE] || r->lsm[VG_LSM_SUBJ_TYPE])
		u |= VG_POLICY_USES_SUBJ_LSM;
	if (vg_policy_action_class(r->action) == VG_CLASS_ACCESS)
		u |= VG_POLICY_USES_ACCESS_RULES;
	if (r->xflags || vg_policy_action_class(r->action) == VG_CLASS_ACCESS)
		u |= VG_POLICY_USES_EXTENSIONS;
	return u;
}

int vg_policy_parse(const char *text, size_t len, unsigned int flags,
		    struct vg_policy **ret, struct vg_policy_error *err)
{
	struct vg_policy *p;
	size_t pos = 0, cap = 0;
	unsigned int line = 0;
	char *buf = NULL;
	int e = 0;

	if (!ret || (!text && len))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto enomem;
	atomic_init(&p->refs, 1);
	while (pos < len) {
		const char *l = text + pos, *nl = memchr(l, '\n', len - pos), *z;
		size_t ll = nl ? (size_t)(nl - l) : len - pos, skip;
		struct vg_policy_rule *grown;

		pos += ll + (nl != NULL);
		line++;
		z = memchr(l, '\0', ll);
		if (z) {
			struct parse ps = { .err = err, .line = line };

			e = perr(&ps, (unsigned int)(z - l) + 1, -EINVAL, "NUL byte in the policy text");
			goto fail;
		}
		/* the text need not be NUL-terminated: stay within the line */
		for (skip = 0; skip < ll && (l[skip] == ' ' || l[skip] == '\t'); skip++)
			;
		if (skip == ll || l[skip] == '#')
			continue;
		if (p->n == cap) {
			size_t ncap = cap ? cap * 2 : 16;

			grown = realloc(p->rules, ncap * sizeof(*p->rules));
			if (!grown)
				goto enomem;
			p->rules = grown;
			cap = ncap;
		}
		free(buf);
		buf = strndup(l + skip, ll - skip);
		if (!buf)
			goto enomem;
		e = parse_rule(buf, line, (unsigned int)skip + 1, flags, &p->rules[p->n], err);
		if (e < 0) {
			vg__policy_rule_release(&p->rules[p->n]);
			goto fail;
		}
		p->uses |= rule_uses(&p->rules[p->n]);
		/* ima_update_policy_flags(): classes with a "do" rule, SETXATTR_CHECK aside */
		if (p->rules[p->n].func != VG_FUNC_SETXATTR_CHECK) {
			switch (p->rules[p->n].action) {
			case VG_POL_MEASURE: p->do_classes |= 1u << VG_CLASS_MEASURE; break;
			case VG_POL_APPRAISE: p->do_classes |= 1u << VG_CLASS_APPRAISE; break;
			case VG_POL_AUDIT: p->do_classes |= 1u << VG_CLASS_AUDIT; break;
			case VG_POL_HASH: p->do_classes |= 1u << VG_CLASS_HASH; break;
			}
		}
		p->n++;
	}
	free(buf);
	if (p->n == 0 && !(flags & VG_POLICY_ALLOW_EMPTY)) {
		struct parse ps = { .err = err };

		policy_free(p);
		return perr(&ps, 0, -ENODATA, "no rules (the kernel refuses an empty policy)");
	}
	*ret = p;
	return 0;
enomem:
	{
		struct parse ps = { .err = err, .line = line };

		e = nomem(&ps, 0);
	}
fail:
	free(buf);
	policy_free(p);
	return e;
}

int vg_policy_load_file(const char *path, unsigned int flags, struct vg_policy **ret,
			struct vg_policy_error *err)
{
	struct parse ps = { .err = err };
	char *text = NULL, *grown;
	size_t len = 0, cap = 0;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		return perr(&ps, 0, e, "%s", strerror(-e));
	}
	while (1) {
		ssize_t n;

		if (len == cap) {
			if (cap >= (64u << 20)) {
				e = perr(&ps, 0, -EFBIG, "policy larger than 64 MiB");
				goto out;
			}
			cap = cap ? cap * 2 : 65536;
			grown = realloc(text, cap);
			if (!grown) {
				e = nomem(&ps, 0);
				goto out;
			}
			text = grown;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = -errno;
			perr(&ps, 0, e, "%s", strerror(-e));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	e = vg_policy_parse(text, len, flags, ret, err);
out:
	free(text);
	close(fd);
	return e;
}

struct vg_policy *vg_policy_ref(struct vg_policy *p)
{
	if (p)
		atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void vg_policy_unref(struct vg_policy *p)
{
	if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
		policy_free(p);
}

size_t vg_policy_count(const struct vg_policy *p)
{
	return p ? p->n : 0;
}

const struct vg_policy_rule *vg_policy_rule(const struct vg_policy *p, size_t i)
{
	return p && i < p->n ? &p->rules[i] : NULL;
}

unsigned int vg_policy_uses(const struct vg_policy *p)
{
	return p ? p->uses : 0;
}
