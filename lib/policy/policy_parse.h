/* SPDX-License-Identifier: MIT */
/*
 * policy_parse.h - what the rule parser (policy_parse.c), the rule
 * validation (policy_validate.c) and the policy as a whole (policy.c)
 * share: the state of one rule being read, and how an error is reported
 * (a sentence and a column in struct vg_policy_error). Not installed.
 */
#ifndef VIGIL_POLICY_PARSE_H
#define VIGIL_POLICY_PARSE_H

#include <errno.h>
#include <stdint.h>

#include "vigil/policy.h"

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

/* Fill @ps->err (if any) with @col and the message. Return: @e. */
int vg__policy_perr(struct parse *ps, unsigned int col, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline int nomem(struct parse *ps, unsigned int col)
{
	return vg__policy_perr(ps, col, -ENOMEM, "out of memory");
}

static inline unsigned int bitno(uint32_t bit)
{
	return (unsigned int)__builtin_ctz(bit);
}

/*
 * One rule (policy_parse.c): @buf is its line from the first non-blank
 * byte, NUL-terminated and writable; @col0 the column of buf[0].
 * Return: 0, -EINVAL (with @err filled), -ENOMEM.
 */
int vg__policy_parse_rule(char *buf, unsigned int line, unsigned int col0, unsigned int flags,
			   struct vg_policy_rule *r, struct vg_policy_error *err);

/* ima_validate_rule() (policy_validate.c). Return: 0 or -EINVAL. */
int vg__policy_validate_kernel(struct parse *ps);
/* vigil's rules for its extensions (policy_validate.c). Return: 0 or -EINVAL. */
int vg__policy_validate_vigil(struct parse *ps);

#endif
