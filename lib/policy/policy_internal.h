/* SPDX-License-Identifier: MIT */
/*
 * policy_internal.h - what the files of the policy subsystem share; not
 * installed. The low pieces (the token table and names, number syntax,
 * levels: policy_token.c; path patterns: policy_glob.c) are called by the
 * parser and the matcher alike, and call neither.
 */
#ifndef VIGIL_POLICY_INTERNAL_H
#define VIGIL_POLICY_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/policy.h"

struct vg_policy {
	atomic_ulong refs;
	size_t n;
	struct vg_policy_rule *rules;	/* immutable after vg_policy_parse() */
	unsigned int uses;		/* VG_POLICY_USES_* */
	unsigned int do_classes;	/* ima_policy_flag: classes with a "do" rule */
};

/* Token table shared by the parser and the printer (policy_token.c). */
enum vg__opt {
	OPT_MEASURE, OPT_DONT_MEASURE, OPT_APPRAISE, OPT_DONT_APPRAISE,
	OPT_AUDIT, OPT_HASH, OPT_DONT_HASH,
	OPT_OBJ_USER, OPT_OBJ_ROLE, OPT_OBJ_TYPE,
	OPT_SUBJ_USER, OPT_SUBJ_ROLE, OPT_SUBJ_TYPE,
	OPT_FUNC, OPT_MASK, OPT_FSMAGIC, OPT_FSNAME, OPT_FSUUID,
	OPT_UID_EQ, OPT_EUID_EQ, OPT_GID_EQ, OPT_EGID_EQ, OPT_FOWNER_EQ, OPT_FGROUP_EQ,
	OPT_UID_GT, OPT_EUID_GT, OPT_GID_GT, OPT_EGID_GT, OPT_FOWNER_GT, OPT_FGROUP_GT,
	OPT_UID_LT, OPT_EUID_LT, OPT_GID_LT, OPT_EGID_LT, OPT_FOWNER_LT, OPT_FGROUP_LT,
	OPT_DIGEST_TYPE, OPT_APPRAISE_TYPE, OPT_APPRAISE_FLAG, OPT_APPRAISE_ALGOS,
	OPT_PERMIT_DIRECTIO, OPT_PCR, OPT_TEMPLATE, OPT_KEYRINGS, OPT_LABEL,
	/* vigil */
	OPT_ALLOW, OPT_DENY, OPT_AUDIT_ACCESS,
	OPT_PATH, OPT_SUBJ_EXE,
	OPT_SUBJ_APPRAISAL_EQ, OPT_SUBJ_APPRAISAL_NE,
	OPT_APPRAISAL_EQ, OPT_APPRAISAL_NE,
	OPT_ATTR,
	OPT_TRUST,
	OPT__MAX
};

struct vg__token {
	const char *key;
	const char *sep;	/* "=", ">", "<", "!="; NULL for a bare word */
	bool ext;		/* vigil extension */
};
extern const struct vg__token vg__policy_tokens[OPT__MAX];

struct vg__mask_name {
	const char *name;
	unsigned int bit;
};
extern const struct vg__mask_name vg__policy_masks[4];
extern const char *const vg__policy_ops[6];	/* by enum vg_policy_op */

/* The action a bare-word token sets, 0 for another token (policy_token.c). */
unsigned int vg__policy_token_action(enum vg__opt t);

/* Free what @r holds and zero it (policy.c). */
void vg__policy_rule_release(struct vg_policy_rule *r);
/* kstrtoull() syntax (policy_token.c). Return: 0, -EINVAL, -ERANGE. */
int vg__policy_strtou64(const char *s, size_t len, unsigned int base, uint64_t *ret);
/* attr= level names (untrusted 0 .. system 4). Return: 0 or -ENOENT. */
int vg__policy_level(const char *s, size_t len, uint64_t *ret);

/* The columns of a rule's tokens, as the parser saw them (policy_parse.c). */
struct vg__policy_cols {
	const unsigned int *flagcol;	/* by VG_POLF_ bit number */
	const unsigned int *xcol;	/* by VG_POLX_ bit number */
	const unsigned int *lsmcol;	/* by enum vg_policy_lsm */
	unsigned int tmplcol, actcol;
};
/* Set r->unenforced and r->unenforced_col (policy_enforce.c). */
void vg__policy_unenforced(struct vg_policy_rule *r, const struct vg__policy_cols *c);

/* path patterns (policy_glob.c). Return: 0, or -EINVAL for an unclosed '['. */
int vg__glob_valid(const char *pat);
bool vg__glob_match(const char *pat, const char *path);

#endif
