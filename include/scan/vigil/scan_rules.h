/* SPDX-License-Identifier: MIT */
/*
 * scan_rules.h - which attributes `vigil scan` compares for which path:
 * AIDE-style named attribute groups and selection rules (docs/config.md,
 * "Scan rules").
 *
 * A group is an attribute expression, ATTR(+ATTR|-ATTR)..., where ATTR is
 * one of vg_scan_field_name()'s names, an AIDE letter or name that maps to
 * one (p u g s m c i n l ftype sha256 ...), a built-in group (R L > H X E
 * all) or a group defined before. A rule is "REGEX EXPR" (regular: the path
 * and everything under it), "=REGEX EXPR" (equals: the path only) or
 * "!REGEX" (negative: neither recorded nor reported, nor, where no deeper
 * rule could select something below, walked). REGEX is a POSIX extended
 * regular expression matched against the whole path. As AIDE's restricted
 * rules, "REGEX TYPES EXPR" and "!REGEX TYPES" apply only to entries of
 * the file types TYPES (f,d,l,c,b,p,s; 0: every type).
 *
 * Precedence is AIDE 0.18's: deepest match, then first match. Every rule
 * has a node, the literal directory its regular expression starts with
 * ("/var/log/.*" and "/var/log" are in /var/log, "/" in /); of the rules
 * that match a path, the one with the longest node decides, and among
 * those, the first in the file. No rules at all, or no rule matching a
 * path: every attribute is compared (what `vigil scan` always did).
 *
 * This module does not read files (config.c does) and keeps no global
 * state; a rule set is read-only once built, so matching is thread-safe.
 */
#ifndef VIGIL_SCAN_RULES_H
#define VIGIL_SCAN_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/scan.h"

/* Not a field: with it, a size, mtime or ctime that grew is no change. */
#define VG_SCAN_GROWING (1u << 31)
/* Every field vg_scan_compare() knows. */
#define VG_SCAN_ALL ((1u << VG_SCAN__NFIELDS) - 1)

enum vg_scan_sel {
	VG_SCAN_SEL_NONE,	/* no rule matched: every attribute */
	VG_SCAN_SEL_REGULAR,	/* REGEX EXPR */
	VG_SCAN_SEL_EQUALS,	/* =REGEX EXPR */
	VG_SCAN_SEL_NEGATIVE,	/* !REGEX */
};

/* The rule deciding for one path (vg_scan_rules_match). */
struct vg_scan_rule_info {
	enum vg_scan_sel sel;
	const char *file;	/* where the rule was read; NULL for SEL_NONE */
	unsigned int line;
	const char *regex;	/* as written, without = or ! */
	const char *expr;	/* the attribute expression as written; NULL for ! and NONE */
	const char *types;	/* the file types it is restricted to, as written; or NULL */
	uint32_t mask;		/* VG_SCAN_* fields and VG_SCAN_GROWING compared */
	bool prune;		/* SEL_NEGATIVE directory: nothing below can be selected */
};

struct vg_scan_rules;

/* Return: 0, or -ENOMEM. */
int vg_scan_rules_new(struct vg_scan_rules **ret);
/* NULL-safe. */
void vg_scan_rules_free(struct vg_scan_rules *r);

/*
 * vg_scan_rules_group - define group @name (letters, digits, '_') as
 * @expr, read from @file line @line (for messages and --explain).
 * Return: 0; -EINVAL with diag "FILE:LINE: problem" (bad name, a name
 * already taken, an unknown attribute or group); -ENOMEM.
 */
int vg_scan_rules_group(struct vg_scan_rules *r, const char *name, const char *expr,
			const char *file, unsigned int line, struct vg_diag *diag);

/*
 * vg_scan_rules_add - add the rule @spec ("[=]REGEX [TYPES] EXPR" or
 * "!REGEX [TYPES]"; REGEX may spell a byte as %XX, as in aide.conf; EXPR
 * is one word). Return: 0; -EINVAL with diag "FILE:LINE: problem" (bad
 * regular expression, unknown attribute, group or file type, a ! rule
 * with attributes, a selection without); -ENOMEM.
 */
int vg_scan_rules_add(struct vg_scan_rules *r, const char *spec, const char *file,
		      unsigned int line, struct vg_diag *diag);

/* Return: the number of selection rules (groups not counted). */
size_t vg_scan_rules_count(const struct vg_scan_rules *r);

/* Return: whether a rule of @r is restricted to file types. */
bool vg_scan_rules_typed(const struct vg_scan_rules *r);

/*
 * vg_scan_rules_expr - the mask of the attribute expression @expr with
 * the groups of @r (NULL: built-in groups only).
 * Return: 0; -ENOENT (an unknown name, copied to @bad), -EOPNOTSUPP (an
 * AIDE attribute vigil does not record, copied to @bad), -EINVAL (empty
 * or malformed).
 */
int vg_scan_rules_expr(const struct vg_scan_rules *r, const char *expr, uint32_t *ret_mask,
		       char *bad, size_t badcap);

/*
 * vg_scan_rules_match - the rule that decides for @path, an entry whose
 * st_mode is @mode (0: type unknown, restricted rules not considered);
 * @r may be NULL: no rules. @ret is always filled. Return: its ->sel.
 */
enum vg_scan_sel vg_scan_rules_match(const struct vg_scan_rules *r, const char *path,
				     size_t len, uint32_t mode, struct vg_scan_rule_info *ret);

/*
 * vg_scan_rules_filter - of @what (vg_scan_compare(@then, @now)), the
 * changes @mask selects: with VG_SCAN_GROWING, a size, mtime or ctime
 * that grew is not one. Return: a mask of VG_SCAN_* fields.
 */
uint32_t vg_scan_rules_filter(uint32_t mask, const struct vg_scan_rec *then,
			      const struct vg_scan_rec *now, uint32_t what);

/*
 * vg_scan_attrs_text - @mask as "type+content+...+growing" ("none" for
 * 0) into @out. Return: 0, or -ENOSPC.
 */
int vg_scan_attrs_text(uint32_t mask, char *out, size_t cap);

/*
 * vg_scan_attr_aide - vigil's name for the AIDE attribute or built-in
 * group @name ("p" -> "mode", "sha256" -> "content", "R" -> "R").
 * Return: the name; NULL when vigil records nothing like it (a b acl
 * selinux e2fsattrs caps I ANF ARF compressed) or it is unknown.
 */
const char *vg_scan_attr_aide(const char *name);

/* which database judges a path (scan.baseline) */
enum vg_scan_baseline {
	VG_SCAN_BASELINE_SCAN,	/* the scan's own database */
	VG_SCAN_BASELINE_TRUST,	/* the archive's trust database, for the files a package ships */
};

/*
 * vg_scan_rules_baseline - add the baseline rule @spec, "trust REGEX" or
 * "scan REGEX" (REGEX as a regular rule's: the path and what is under it;
 * deepest, then first, decides among baseline rules only).
 * Return: 0; -EINVAL with diag "FILE:LINE: problem"; -ENOMEM.
 */
int vg_scan_rules_baseline(struct vg_scan_rules *r, const char *spec, const char *file,
			   unsigned int line, struct vg_diag *diag);

/* Return: whether a "trust" baseline rule is in @r (NULL: no). */
bool vg_scan_rules_has_trust(const struct vg_scan_rules *r);

/*
 * vg_scan_rules_baseline_of - the baseline of @path: TRUST when a "trust"
 * rule decides for it, SCAN otherwise (no baseline rule, a "scan" rule).
 * @ret (may be NULL) gets the deciding rule (sel NONE: none decided).
 */
enum vg_scan_baseline vg_scan_rules_baseline_of(const struct vg_scan_rules *r, const char *path,
						size_t len, struct vg_scan_rule_info *ret);

#endif
