// SPDX-License-Identifier: MIT
/*
 * scan_rules.c - attribute groups and per-path selection rules for
 * `vigil scan` (scan_rules.h): the attribute table (vigil's field names
 * and AIDE's letters and names), expressions, rule compilation with
 * regcomp() and the deepest-then-first match.
 *
 * Baseline rules (scan.baseline = trust|scan REGEX: which paths the
 * archive's trust database judges) are a rule set of their own inside a
 * set, matched the same way: "trust REGEX" a regular rule of every
 * attribute, "scan REGEX" one of none.
 *
 * It reads no file and prints nothing: config.c hands it one line at a
 * time with its file name and line number, for messages.
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vigil/scan_rules.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * AIDE's names for what vigil records under its own names (those are
 * vg_scan_field_name()'s and need no line here). A hash name selects the
 * content digest, in the database's algorithm.
 */
static const struct {
	const char *name;
	uint32_t bits;
} aliases[] = {
	{ "ftype", VG_SCAN_TYPE }, { "p", VG_SCAN_MODE }, { "i", VG_SCAN_INODE },
	{ "l", VG_SCAN_TARGET }, { "u", VG_SCAN_UID }, { "g", VG_SCAN_GID },
	{ "s", VG_SCAN_SIZE }, { "m", VG_SCAN_MTIME }, { "c", VG_SCAN_CTIME },
	{ "n", VG_SCAN_NLINK },
	{ "S", VG_SCAN_SIZE | VG_SCAN_GROWING }, { "growing", VG_SCAN_GROWING },
	{ "md5", VG_SCAN_CONTENT }, { "sha1", VG_SCAN_CONTENT }, { "sha256", VG_SCAN_CONTENT },
	{ "sha512", VG_SCAN_CONTENT }, { "rmd160", VG_SCAN_CONTENT }, { "tiger", VG_SCAN_CONTENT },
	{ "haval", VG_SCAN_CONTENT }, { "crc32", VG_SCAN_CONTENT }, { "crc32b", VG_SCAN_CONTENT },
	{ "gost", VG_SCAN_CONTENT }, { "whirlpool", VG_SCAN_CONTENT },
	{ "stribog256", VG_SCAN_CONTENT }, { "stribog512", VG_SCAN_CONTENT },
};

/* AIDE 0.18's default groups, with X (acl+selinux+xattrs+...) as xattrs. */
static const struct {
	const char *name;
	uint32_t bits;
} builtins[] = {
	{ "R", VG_SCAN_MODE | VG_SCAN_TYPE | VG_SCAN_INODE | VG_SCAN_TARGET | VG_SCAN_NLINK |
	       VG_SCAN_UID | VG_SCAN_GID | VG_SCAN_SIZE | VG_SCAN_MTIME | VG_SCAN_CTIME |
	       VG_SCAN_CONTENT | VG_SCAN_XATTRS },
	{ "L", VG_SCAN_MODE | VG_SCAN_TYPE | VG_SCAN_INODE | VG_SCAN_TARGET | VG_SCAN_NLINK |
	       VG_SCAN_UID | VG_SCAN_GID | VG_SCAN_XATTRS },
	{ ">", VG_SCAN_MODE | VG_SCAN_TYPE | VG_SCAN_TARGET | VG_SCAN_UID | VG_SCAN_GID |
	       VG_SCAN_INODE | VG_SCAN_NLINK | VG_SCAN_SIZE | VG_SCAN_GROWING | VG_SCAN_XATTRS },
	{ "H", VG_SCAN_CONTENT },
	{ "X", VG_SCAN_XATTRS },
	{ "E", 0 },
	{ "all", VG_SCAN_ALL },
};

/* AIDE attributes with no counterpart in a vigil record. */
static const char *const unsupported[] = {
	"a", "b", "acl", "selinux", "e2fsattrs", "caps", "I", "ANF", "ARF", "compressed",
};

struct group {
	char *name;
	uint32_t bits;
};

struct rule {
	enum vg_scan_sel sel;
	char *regex;		/* as written */
	char *expr;		/* as written, NULL for ! */
	uint32_t mask;
	size_t node_len;	/* length of the literal directory it starts with */
	char *node;		/* the literal text: node_len, lit_len bytes of it */
	size_t lit_len;		/* what every path it matches starts with */
	bool plain;		/* no special character: matched without regexec() */
	char *types;		/* as written, NULL: every type */
	uint32_t typemask;	/* 1 << (S_IFMT bits >> 12) of each type */
	unsigned int line;
	const char *file;	/* one of rules->files */
	regex_t rx;
};

struct vg_scan_rules {
	struct group *groups;
	size_t ngroups;
	struct rule *rules;
	size_t nrules;
	size_t *order;		/* rule indexes, deepest node first, then in file order */
	char **files;		/* the file names rules were read from */
	size_t nfiles;
	struct vg_scan_rules *baseline;	/* scan.baseline lines; NULL: none */
	bool trust;		/* a "trust" baseline line among them */
};

int vg_scan_rules_new(struct vg_scan_rules **ret)
{
	struct vg_scan_rules *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	*ret = r;
	return 0;
}

void vg_scan_rules_free(struct vg_scan_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ngroups; i++)
		free(r->groups[i].name);
	for (size_t i = 0; i < r->nrules; i++) {
		free(r->rules[i].regex);
		free(r->rules[i].expr);
		free(r->rules[i].node);
		free(r->rules[i].types);
		regfree(&r->rules[i].rx);
	}
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	vg_scan_rules_free(r->baseline);
	free(r->groups);
	free(r->rules);
	free(r->order);
	free(r->files);
	free(r);
}

size_t vg_scan_rules_count(const struct vg_scan_rules *r)
{
	return r ? r->nrules : 0;
}

bool vg_scan_rules_typed(const struct vg_scan_rules *r)
{
	for (size_t i = 0; r && i < r->nrules; i++)
		if (r->rules[i].typemask)
			return true;
	return false;
}

const char *vg_scan_attr_aide(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(unsupported); i++)
		if (strcmp(name, unsupported[i]) == 0)
			return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
		if (strcmp(name, builtins[i].name) == 0)
			return builtins[i].name;
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++) {
		if (strcmp(name, aliases[i].name) != 0)
			continue;
		if (aliases[i].bits == (VG_SCAN_SIZE | VG_SCAN_GROWING))
			return "size+growing";
		if (aliases[i].bits == VG_SCAN_GROWING)
			return "growing";
		return vg_scan_field_name(aliases[i].bits);
	}
	for (unsigned int b = 0; b < VG_SCAN__NFIELDS; b++)
		if (strcmp(name, vg_scan_field_name(1u << b)) == 0)
			return vg_scan_field_name(1u << b);
	return NULL;
}

/* Return: 0 and the bits of one name, -ENOENT, -EOPNOTSUPP. */
static int lookup(const struct vg_scan_rules *r, const char *name, uint32_t *bits)
{
	for (unsigned int b = 0; b < VG_SCAN__NFIELDS; b++) {
		if (strcmp(name, vg_scan_field_name(1u << b)) == 0) {
			*bits = 1u << b;
			return 0;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++) {
		if (strcmp(name, aliases[i].name) == 0) {
			*bits = aliases[i].bits;
			return 0;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(builtins); i++) {
		if (strcmp(name, builtins[i].name) == 0) {
			*bits = builtins[i].bits;
			return 0;
		}
	}
	for (size_t i = 0; r && i < r->ngroups; i++) {
		if (strcmp(name, r->groups[i].name) == 0) {
			*bits = r->groups[i].bits;
			return 0;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(unsupported); i++)
		if (strcmp(name, unsupported[i]) == 0)
			return -EOPNOTSUPP;
	return -ENOENT;
}

int vg_scan_rules_expr(const struct vg_scan_rules *r, const char *expr, uint32_t *ret_mask,
		       char *bad, size_t badcap)
{
	uint32_t mask = 0;
	const char *p = expr;
	bool first = true;

	if (badcap)
		bad[0] = 0;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return -EINVAL;
	while (*p) {
		char name[64];
		char op = '+';
		size_t n = 0;
		uint32_t bits;
		int e;

		if (*p == '+' || *p == '-') {
			op = *p++;
		} else if (!first) {
			return -EINVAL;
		}
		while (isspace((unsigned char)*p))
			p++;
		/* ">" is a group name of its own; others are letters, digits, '_' */
		if (*p == '>') {
			name[n++] = *p++;
		} else {
			while (*p && (isalnum((unsigned char)*p) || *p == '_') && n < sizeof(name) - 1)
				name[n++] = *p++;
		}
		name[n] = 0;
		while (isspace((unsigned char)*p))
			p++;
		if (!n || (*p && *p != '+' && *p != '-')) {
			if (badcap)
				snprintf(bad, badcap, "%s", n ? name : p);
			return -EINVAL;
		}
		e = lookup(r, name, &bits);
		if (e < 0) {
			if (badcap)
				snprintf(bad, badcap, "%s", name);
			return e;
		}
		if (op == '+')
			mask |= bits;
		else
			mask &= ~bits;
		first = false;
	}
	*ret_mask = mask;
	return 0;
}

static int expr_error(int e, const char *expr, const char *bad, const char *file,
		      unsigned int line, struct vg_diag *diag)
{
	if (e == -ENOENT)
		return vg_diag_set(diag, -EINVAL, "%s:%u: unknown attribute or group '%s'", file,
				   line, bad);
	if (e == -EOPNOTSUPP)
		return vg_diag_set(diag, -EINVAL,
				   "%s:%u: AIDE attribute '%s' has no counterpart in vigil's records "
				   "(xattrs covers ACLs, SELinux labels and capabilities)", file, line,
				   bad);
	return vg_diag_set(diag, -EINVAL, "%s:%u: malformed attribute expression '%s' "
			   "(ATTR+ATTR-ATTR...)", file, line, expr);
}

int vg_scan_rules_group(struct vg_scan_rules *r, const char *name, const char *expr,
			const char *file, unsigned int line, struct vg_diag *diag)
{
	char bad[64];
	uint32_t mask, dummy;
	struct group *ng;
	int e;

	if (!*name || strlen(name) > 63)
		return vg_diag_set(diag, -EINVAL, "%s:%u: a group needs a name", file, line);
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return vg_diag_set(diag, -EINVAL, "%s:%u: group name '%s': letters, digits "
					   "and '_' only", file, line, name);
	e = vg_scan_rules_expr(r, expr, &mask, bad, sizeof(bad));
	if (e < 0)
		return expr_error(e, expr, bad, file, line, diag);
	/* a group of the file may be defined again (as in aide.conf): later rules see the new one */
	for (size_t i = 0; i < r->ngroups; i++) {
		if (strcmp(name, r->groups[i].name) == 0) {
			r->groups[i].bits = mask;
			return 0;
		}
	}
	e = lookup(r, name, &dummy);
	if (e != -ENOENT)
		return vg_diag_set(diag, -EINVAL, "%s:%u: '%s' is an attribute or a built-in group",
				   file, line, name);
	ng = realloc(r->groups, (r->ngroups + 1) * sizeof(*ng));
	if (!ng)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	r->groups = ng;
	ng[r->ngroups].name = strdup(name);
	if (!ng[r->ngroups].name)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	ng[r->ngroups++].bits = mask;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The literal text @re starts with, into @out (as long as @re): up to its
 * first special character (a backslash-escaped punctuation character is
 * literal). @ret_lit: how much of it every matching path starts with (less
 * a character that a following ?, * or { may leave out; nothing when @re
 * has an alternative, '|'). @ret_plain: @re has no special character.
 * Return: the length of its node, the literal text cut back to the last
 * '/' (the whole of it, less trailing '/'s, when @re is plain).
 */
static size_t node_of(const char *re, char *out, size_t *ret_lit, bool *ret_plain)
{
	size_t n = 0, len, last = 0;
	const char *p = re;

	for (; *p; p++) {
		if (*p == '\\' && p[1] && ispunct((unsigned char)p[1])) {
			last = n;
			out[n++] = *++p;
			continue;
		}
		if (strchr(".[]()*+?{}|^$\\", *p))
			break;
		last = n;	/* before the last literal character */
		out[n++] = *p;
	}
	out[n] = 0;
	len = n;
	if (!*p) {
		while (len > 1 && out[len - 1] == '/')
			len--;
	} else {
		while (len > 0 && out[len - 1] != '/')
			len--;
		/* "/var/log/.*" -> "/var/log"; "/.*" -> "/" */
		if (len > 1)
			len--;
	}
	*ret_lit = strchr(re, '|') ? 0 : *p && strchr("?*{", *p) ? last : n;
	*ret_plain = !*p;
	return len;
}

/* AIDE's restriction letters (aide.conf(5), RESTRICTED RULES). */
static const struct {
	char letter;
	uint32_t fmt;
} type_letters[] = {
	{ 'f', S_IFREG }, { 'd', S_IFDIR }, { 'l', S_IFLNK }, { 'c', S_IFCHR },
	{ 'b', S_IFBLK }, { 'p', S_IFIFO }, { 's', S_IFSOCK },
};

#define TYPE_BIT(fmt) (1u << (((fmt) & S_IFMT) >> 12))

/* "f,d" -> a mask of TYPE_BIT()s; "0" -> 0 (every type). Return: 0, -EINVAL. */
static int parse_types(const char *t, size_t n, uint32_t *ret)
{
	uint32_t m = 0;

	if (n == 1 && t[0] == '0') {
		*ret = 0;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k;

		if (i % 2) {
			if (t[i] != ',')
				return -EINVAL;
			continue;
		}
		for (k = 0; k < sizeof(type_letters) / sizeof(type_letters[0]); k++)
			if (t[i] == type_letters[k].letter)
				break;
		if (k == sizeof(type_letters) / sizeof(type_letters[0]))
			return -EINVAL;
		m |= TYPE_BIT(type_letters[k].fmt);
	}
	if (!n || t[n - 1] == ',')
		return -EINVAL;
	*ret = m;
	return 0;
}

/* Return: the file name slot (shared by the rules of one file), or NULL. */
static const char *file_slot(struct vg_scan_rules *r, const char *file)
{
	char **nf;

	if (r->nfiles && strcmp(r->files[r->nfiles - 1], file) == 0)
		return r->files[r->nfiles - 1];
	nf = realloc(r->files, (r->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return NULL;
	r->files = nf;
	nf[r->nfiles] = strdup(file);
	return nf[r->nfiles] ? nf[r->nfiles++] : NULL;
}

int vg_scan_rules_add(struct vg_scan_rules *r, const char *spec, const char *file,
		      unsigned int line, struct vg_diag *diag)
{
	struct rule rule = { .sel = VG_SCAN_SEL_REGULAR, .line = line };
	const char *p = spec, *end, *expr, *types = NULL;
	char bad[64], *pat = NULL, *decoded = NULL;
	struct rule *nr;
	size_t *no, pos;
	size_t n, k = 0, plen, tlen;
	int e;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '=' || *p == '!')
		rule.sel = *p++ == '=' ? VG_SCAN_SEL_EQUALS : VG_SCAN_SEL_NEGATIVE;
	end = p + strcspn(p, " \t");
	n = (size_t)(end - p);
	if (n == 0 || *p != '/')
		return vg_diag_set(diag, -EINVAL, "%s:%u: a scan rule is [=|!]REGEX [GROUP], the "
				   "regular expression starting with '/'", file, line);
	expr = end + strspn(end, " \t");
	/* two words after the regular expression, or one after a ! rule's: TYPES first */
	tlen = strcspn(expr, " \t");
	if (*expr && (rule.sel == VG_SCAN_SEL_NEGATIVE || expr[tlen + strspn(expr + tlen, " \t")])) {
		types = expr;
		if (parse_types(types, tlen, &rule.typemask) < 0)
			return vg_diag_set(diag, -EINVAL, "%s:%u: '%.*s' is no list of file types "
					   "(f,d,l,c,b,p,s or 0)%s", file, line, (int)tlen, types,
					   rule.sel == VG_SCAN_SEL_NEGATIVE
					   ? "; a ! rule takes no attributes" : "");
		expr = types + tlen + strspn(types + tlen, " \t");
		if (expr[strcspn(expr, " \t")])
			return vg_diag_set(diag, -EINVAL, "%s:%u: after the regular expression: "
					   "[TYPES] and one attribute expression, without blanks",
					   file, line);
	}
	if (rule.sel == VG_SCAN_SEL_NEGATIVE && *expr)
		return vg_diag_set(diag, -EINVAL, "%s:%u: a ! rule takes no attributes ('%s')",
				   file, line, expr);
	if (rule.sel != VG_SCAN_SEL_NEGATIVE && !*expr)
		return vg_diag_set(diag, -EINVAL, "%s:%u: the rule needs a group or attributes "
				   "after the regular expression", file, line);
	if (*expr) {
		e = vg_scan_rules_expr(r, expr, &rule.mask, bad, sizeof(bad));
		if (e < 0)
			return expr_error(e, expr, bad, file, line, diag);
	}
	decoded = malloc(n + 1);
	if (!decoded)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (p[i] == '%' && i + 2 < n && (hi = hexval(p[i + 1])) >= 0 &&
		    (lo = hexval(p[i + 2])) >= 0 && (hi || lo)) {
			decoded[k++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			decoded[k++] = p[i];
		}
	}
	decoded[k] = 0;
	/*
	 * Anchored at both ends; regular and negative rules also match what is
	 * under a matching directory ("/" and "/etc/" everything after them).
	 */
	plen = k + 16;
	pat = malloc(plen);
	if (!pat) {
		free(decoded);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	if (rule.sel == VG_SCAN_SEL_EQUALS)
		snprintf(pat, plen, "^(%s)$", decoded);
	else if (decoded[k - 1] == '/')
		snprintf(pat, plen, "^(%s).*$", decoded);
	else
		snprintf(pat, plen, "^(%s)(/.*)?$", decoded);
	e = regcomp(&rule.rx, pat, REG_EXTENDED | REG_NOSUB);
	free(pat);
	if (e != 0) {
		char msg[128];

		regerror(e, &rule.rx, msg, sizeof(msg));
		e = vg_diag_set(diag, e == REG_ESPACE ? -ENOMEM : -EINVAL,
				"%s:%u: bad regular expression '%.*s': %s", file, line, (int)n, p,
				msg);
		free(decoded);
		return e;
	}
	rule.node = malloc(k + 1);
	if (rule.node)
		rule.node_len = node_of(decoded, rule.node, &rule.lit_len, &rule.plain);
	free(decoded);
	rule.regex = strndup(p, n);
	rule.expr = *expr ? strdup(expr) : NULL;
	rule.types = types ? strndup(types, tlen) : NULL;
	rule.file = file_slot(r, file);
	nr = rule.node && rule.regex && (!*expr || rule.expr) && (!types || rule.types) && rule.file
	     ? realloc(r->rules, (r->nrules + 1) * sizeof(*nr)) : NULL;
	if (!nr) {
		regfree(&rule.rx);
		free(rule.node);
		free(rule.regex);
		free(rule.expr);
		free(rule.types);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	r->rules = nr;
	no = realloc(r->order, (r->nrules + 1) * sizeof(*no));
	if (!no) {
		regfree(&rule.rx);
		free(rule.node);
		free(rule.regex);
		free(rule.expr);
		free(rule.types);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	r->order = no;
	/* after the rules whose node is as deep or deeper: stable */
	for (pos = r->nrules; pos > 0 && r->rules[no[pos - 1]].node_len < rule.node_len; pos--)
		no[pos] = no[pos - 1];
	no[pos] = r->nrules;
	nr[r->nrules++] = rule;
	return 0;
}

/* Whether a selecting rule's node lies strictly under directory @path. */
static bool deeper_selection(const struct vg_scan_rules *r, const char *path, size_t len)
{
	for (size_t i = 0; i < r->nrules; i++) {
		const struct rule *u = &r->rules[i];

		if (u->sel == VG_SCAN_SEL_NEGATIVE || u->node_len <= len)
			continue;
		if (strncmp(u->node, path, len) == 0 && (u->node[len] == '/' || len == 1))
			return true;
	}
	return false;
}

enum vg_scan_sel vg_scan_rules_match(const struct vg_scan_rules *r, const char *path,
				     size_t len, uint32_t mode, struct vg_scan_rule_info *ret)
{
	const struct rule *best = NULL;
	char buf[4096], *s = buf;

	memset(ret, 0, sizeof(*ret));
	ret->mask = VG_SCAN_ALL;
	if (!r || !r->nrules)
		return VG_SCAN_SEL_NONE;
	if (len >= sizeof(buf)) {
		s = malloc(len + 1);
		if (!s)	/* cannot match: compare everything, as without rules */
			return VG_SCAN_SEL_NONE;
	}
	memcpy(s, path, len);
	s[len] = 0;
	for (size_t i = 0; i < r->nrules && !best; i++) {
		const struct rule *u = &r->rules[r->order[i]];

		if (u->lit_len > len || memcmp(s, u->node, u->lit_len) != 0)
			continue;	/* cannot match */
		if (u->typemask && (!mode || !(u->typemask & TYPE_BIT(mode))))
			continue;	/* restricted to other types */
		if (u->plain) {
			/* the literal text; for regular and ! rules, what is under it too */
			if (len == u->lit_len ||
			    (u->sel != VG_SCAN_SEL_EQUALS &&
			     (s[u->lit_len] == '/' || u->node[u->lit_len - 1] == '/')))
				best = u;
		} else if (regexec(&u->rx, s, 0, NULL, 0) == 0) {
			best = u;
		}
	}
	if (best) {
		ret->sel = best->sel;
		ret->file = best->file;
		ret->line = best->line;
		ret->regex = best->regex;
		ret->expr = best->expr;
		ret->types = best->types;
		ret->mask = best->sel == VG_SCAN_SEL_NEGATIVE ? 0 : best->mask;
		ret->prune = best->sel == VG_SCAN_SEL_NEGATIVE && !deeper_selection(r, s, len);
	}
	if (s != buf)
		free(s);
	return ret->sel;
}

uint32_t vg_scan_rules_filter(uint32_t mask, const struct vg_scan_rec *then,
			      const struct vg_scan_rec *now, uint32_t what)
{
	uint32_t r = what & mask & VG_SCAN_ALL;

	if (mask & VG_SCAN_GROWING) {
		if ((r & VG_SCAN_SIZE) && now->size > then->size)
			r &= ~(uint32_t)VG_SCAN_SIZE;
		if ((r & VG_SCAN_MTIME) && now->mtime_ns > then->mtime_ns)
			r &= ~(uint32_t)VG_SCAN_MTIME;
		if ((r & VG_SCAN_CTIME) && now->ctime_ns > then->ctime_ns)
			r &= ~(uint32_t)VG_SCAN_CTIME;
	}
	return r;
}

int vg_scan_attrs_text(uint32_t mask, char *out, size_t cap)
{
	size_t n = 0;
	int w;

	if (!cap)
		return -ENOSPC;
	out[0] = 0;
	if (!(mask & (VG_SCAN_ALL | VG_SCAN_GROWING))) {
		w = snprintf(out, cap, "none");
		return (size_t)w < cap ? 0 : -ENOSPC;
	}
	for (unsigned int b = 0; b < VG_SCAN__NFIELDS; b++) {
		if (!(mask & (1u << b)))
			continue;
		w = snprintf(out + n, cap - n, "%s%s", n ? "+" : "", vg_scan_field_name(1u << b));
		if (w < 0 || (size_t)w >= cap - n)
			return -ENOSPC;
		n += (size_t)w;
	}
	if (mask & VG_SCAN_GROWING) {
		w = snprintf(out + n, cap - n, "%sgrowing", n ? "+" : "");
		if (w < 0 || (size_t)w >= cap - n)
			return -ENOSPC;
	}
	return 0;
}

int vg_scan_rules_baseline(struct vg_scan_rules *r, const char *spec, const char *file,
			   unsigned int line, struct vg_diag *diag)
{
	const char *p = spec + strspn(spec, " \t"), *re;
	size_t kl = strcspn(p, " \t"), rl;
	bool trust = kl == 5 && strncmp(p, "trust", 5) == 0;
	char *rule;
	int e;

	re = p + kl + strspn(p + kl, " \t");
	rl = strcspn(re, " \t");
	if ((!trust && !(kl == 4 && strncmp(p, "scan", 4) == 0)) || !rl || re[0] != '/' ||
	    re[rl + strspn(re + rl, " \t")])
		return vg_diag_set(diag, -EINVAL, "%s:%u: a baseline rule is \"trust REGEX\" (the "
				   "archive's trust database judges the packaged files there) or "
				   "\"scan REGEX\", the regular expression starting with '/'",
				   file, line);
	if (!r->baseline && vg_scan_rules_new(&r->baseline) < 0)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	/* a regular rule, matched as any: every attribute for trust, none (E) for scan */
	if (asprintf(&rule, "%.*s %s", (int)rl, re, trust ? "all" : "E") < 0)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	e = vg_scan_rules_add(r->baseline, rule, file, line, diag);
	free(rule);
	if (e == 0 && trust)
		r->trust = true;
	return e;
}

bool vg_scan_rules_has_trust(const struct vg_scan_rules *r)
{
	return r && r->trust;
}

enum vg_scan_baseline vg_scan_rules_baseline_of(const struct vg_scan_rules *r, const char *path,
						size_t len, struct vg_scan_rule_info *ret)
{
	struct vg_scan_rule_info ri;

	if (!ret)
		ret = &ri;
	if (!r || !r->trust) {
		memset(ret, 0, sizeof(*ret));
		return VG_SCAN_BASELINE_SCAN;
	}
	return vg_scan_rules_match(r->baseline, path, len, 0, ret) == VG_SCAN_SEL_REGULAR &&
			       ret->mask ?
		       VG_SCAN_BASELINE_TRUST :
		       VG_SCAN_BASELINE_SCAN;
}
