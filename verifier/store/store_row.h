/* SPDX-License-Identifier: MIT */
/*
 * store_row.h - what the store backends (store_sqlite.c, store_pg.c)
 * share, so that they cannot drift: the column lists of the agents and
 * verdicts tables, and the encoding of a struct to the column values of a
 * row and back (store_row.c). A backend only moves column values between
 * its database API and a struct store_val array; it never touches a field
 * of struct vg_store_agent itself. store.c does not include this header:
 * it reaches the backends only through their open functions and ops.
 */
#ifndef VIGIL_STORE_ROW_H
#define VIGIL_STORE_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum store_type {
	STORE_TEXT,	/* bytes without NUL, decoded into a char[] (truncated, like snprintf) */
	STORE_BLOB,	/* bytes, decoded with a bounds check */
	STORE_INT,	/* int64 */
};

struct store_col {
	const char *name;
	enum store_type type;
};

/* One column value. TEXT/BLOB: @p, @len (not NUL-terminated; @p may be NULL when @len is 0). */
struct store_val {
	const void *p;
	size_t len;
	int64_t i;
};

#define STORE_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* vg_store_set_timeout()'s default */
#define STORE_TIMEOUT_MS 10000

#define STORE_AGENT_NCOLS 30
#define STORE_VERDICT_NCOLS 6		/* as read back: the agent id is not a column of the row */

extern const struct store_col store_agent_cols[STORE_AGENT_NCOLS];

/* agent_update's guard: the columns (indexes into store_agent_cols) that must be unchanged */
#define STORE_GUARD_NCOLS 13
extern const int store_agent_guard[STORE_GUARD_NCOLS];
extern const struct store_col store_verdict_cols[STORE_VERDICT_NCOLS];

/*
 * The scheduling columns of an agent's row (next_due, lease_owner,
 * lease_until): read after the STORE_AGENT_NCOLS others by agent_get and
 * agent_list, written only by the lease statements.
 */
#define STORE_SCHED_NCOLS 3
extern const struct store_col store_sched_cols[STORE_SCHED_NCOLS];
void store_sched_encode(const struct vg_store_agent *a, struct store_val v[STORE_SCHED_NCOLS]);
void store_sched_decode(const struct store_val v[STORE_SCHED_NCOLS], struct vg_store_agent *a);

/* The verifiers table: one row per verifier, its heartbeat. */
#define STORE_VERIFIER_NCOLS 9
extern const struct store_col store_verifier_cols[STORE_VERIFIER_NCOLS];
void store_verifier_encode(const struct vg_store_verifier *v,
			   struct store_val out[STORE_VERIFIER_NCOLS]);
void store_verifier_decode(const struct store_val in[STORE_VERIFIER_NCOLS],
			   struct vg_store_verifier *v);

/*
 * The push tables (struct vg_store_push, vg_store_push_reg): their
 * columns after the id, in this order in every SELECT and RETURNING.
 */
#define STORE_PUSH_NCOLS 13
extern const struct store_col store_push_cols[STORE_PUSH_NCOLS];
void store_push_encode(const struct vg_store_push *s, struct store_val out[STORE_PUSH_NCOLS]);
/* @s's fields but its id. Return: 0, -EBADMSG (a credential or nonce too long). */
int store_push_decode(const struct store_val in[STORE_PUSH_NCOLS], struct vg_store_push *s);
#define STORE_PUSH_REG_NCOLS 4
extern const struct store_col store_push_reg_cols[STORE_PUSH_REG_NCOLS];
void store_push_reg_encode(const struct vg_store_push_reg *g,
			   struct store_val out[STORE_PUSH_REG_NCOLS]);
/* Return: 0, -EBADMSG (a field too long, a hash not 32 bytes). */
int store_push_reg_decode(const struct store_val in[STORE_PUSH_REG_NCOLS],
			  struct vg_store_push_reg *g);

/* a verifier silent this long loses its heartbeat row (verifier_beat) */
#define STORE_VERIFIER_FORGET_MS (24 * 3600 * 1000LL)

/* Return: the stable id of failure @f ("ok" for VG_AF_NONE and unknown values). */
const char *store_fail_id(unsigned int f);
/* Return: the failure with id @p/@len, VG_AF_NONE when it is unknown. */
unsigned int store_fail_parse(const void *p, size_t len);

/* The column values of @a's row; pointers into @a and static strings. */
void store_agent_encode(const struct vg_store_agent *a, struct store_val v[STORE_AGENT_NCOLS]);
/* Fill @a (zeroed first) from a row. Return: 0, -EBADMSG (a BLOB too long, a PCR of the wrong size). */
int store_agent_decode(const struct store_val v[STORE_AGENT_NCOLS], struct vg_store_agent *a);
void store_verdict_encode(const struct vg_store_verdict *v,
			  struct store_val out[STORE_VERDICT_NCOLS]);
void store_verdict_decode(const struct store_val in[STORE_VERDICT_NCOLS], struct vg_store_verdict *v);

/*
 * store_sql_list - append the names of @cols to @buf (capacity @cap), each
 * as @fmt with the name for every %s (at most two), separated by ", ".
 * Return: 0, -ENAMETOOLONG.
 */
int store_sql_list(char *buf, size_t cap, const struct store_col *cols, size_t n, const char *fmt);

#endif
