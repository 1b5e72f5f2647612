// SPDX-License-Identifier: MIT
/*
 * store_pg_push.c - the push state (store.h: the push op) in PostgreSQL:
 * the tables and statements are store_pg_sql.c's (push_state, push_regs).
 * Every take is one statement (UPDATE/DELETE ... RETURNING): of two
 * verifiers taking a nonce or a registration at once, the second waits for
 * the first's row lock and finds it taken.
 */
#include <errno.h>
#include <string.h>

#include "store_pg_conn.h"

struct row_arg {
	struct vg_store_push_req *rq;
	bool reg;			/* a push_regs row, else push_state */
	int r;				/* 0, -EBADMSG */
	int64_t why[3];			/* S_PUSH_WHY_NOT's */
};

static int state_row(void *arg, const PGresult *res)
{
	struct row_arg *a = arg;
	struct store_val v[STORE_PUSH_NCOLS];

	if (a->reg)
		a->r = store_pg_row(res, store_push_reg_cols, v, STORE_PUSH_REG_NCOLS) < 0 ||
		       store_push_reg_decode(v, &a->rq->reg) < 0 ? -EBADMSG : 0;
	else
		a->r = store_pg_row(res, store_push_cols, v, STORE_PUSH_NCOLS) < 0 ||
		       store_push_decode(v, &a->rq->st) < 0 ? -EBADMSG : 0;
	return 0;
}

static int why_row(void *arg, const PGresult *res)
{
	static const struct store_col cols[3] = {
		{ "ours", STORE_INT }, { "issued_ms", STORE_INT }, { "busy_until", STORE_INT },
	};
	struct row_arg *a = arg;
	struct store_val v[3];

	a->r = store_pg_row(res, cols, v, 3) < 0 ? -EBADMSG : 0;
	for (int i = 0; i < 3; i++)
		a->why[i] = v[i].i;
	return 0;
}

/*
 * Run @stmt; its row, if any, into @rq. Return: 1 (a row), 0 (none: for a
 * write, *@n rows changed), -EIO, -EBADMSG.
 */
static int run(struct pg *q, int stmt, const struct params *p, struct row_arg *a, long *n,
	       const char *what, struct vg_diag *diag)
{
	int r;

	*n = 0;
	a->r = 0;
	r = store_pg_run(q, stmt, p, stmt == S_PUSH_WHY_NOT ? why_row : state_row, a, n, what,
			 diag);
	if (r < 0)
		return r;
	if (a->r < 0)
		return vg_diag_set(diag, a->r, "store: push %s: a row that does not decode", what);
	return 0;
}

static void put_state(struct params *p, const struct vg_store_push *s)
{
	store_pg_bytes(p, s->id, strlen(s->id));
	store_pg_bytes(p, s->cred, strlen(s->cred));
	store_pg_bytes(p, s->nonce, s->nonce_len);
}

int store_pg_push(void *ctx, unsigned int verb, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct vg_store_push *s = &rq->st;
	struct vg_store_push_reg *g = &rq->reg;
	struct row_arg a = { .rq = rq };
	struct params p = { 0 };
	long n;
	int r;

	switch (verb) {
	case VG_STORE_PUSH_REG_PUT:
		store_pg_bytes(&p, g->id, strlen(g->id));
		store_pg_bytes(&p, g->cred, strlen(g->cred));
		store_pg_bytes(&p, g->proof_hash, sizeof(g->proof_hash));
		store_pg_int(&p, g->reg_ms);
		store_pg_bytes(&p, g->idn, g->idn_len);
		store_pg_int(&p, rq->now - rq->age_ms);
		store_pg_int(&p, rq->max);
		r = run(ctx, S_PUSH_REG_PUT, &p, &a, &n, "registration", diag);
		return r < 0 ? r : n == 1 ? 0 : -ENOSPC;
	case VG_STORE_PUSH_REG_TAKE:
		a.reg = true;
		store_pg_bytes(&p, g->id, strlen(g->id));
		store_pg_bytes(&p, g->cred, strlen(g->cred));
		r = run(ctx, S_PUSH_REG_TAKE, &p, &a, &n, "activation", diag);
		return r < 0 ? r : n == 1 ? 0 : -ENOENT;
	case VG_STORE_PUSH_CHAL_PUT:
		put_state(&p, s);
		store_pg_int(&p, s->bank);
		store_pg_int(&p, s->mask);
		store_pg_int(&p, s->issued_ms);
		r = run(ctx, S_PUSH_CHAL_PUT, &p, &a, &n, "challenge", diag);
		return r < 0 ? r : n == 1 ? 0 : -ENOENT;
	case VG_STORE_PUSH_CHAL_TAKE:
		put_state(&p, s);
		store_pg_int(&p, rq->now + rq->lease_ms);
		store_pg_int(&p, rq->now - rq->age_ms);
		store_pg_int(&p, rq->now);
		r = run(ctx, S_PUSH_CHAL_TAKE, &p, &a, &n, "evidence", diag);
		if (r < 0 || n == 1)
			return r < 0 ? r : 0;
		/* not taken: why (the message only; nothing changes) */
		p.n = 3;
		r = run(ctx, S_PUSH_WHY_NOT, &p, &a, &n, "evidence", diag);
		if (r < 0)
			return r;
		return n != 1 || !a.why[0] ? -ENOENT : a.why[1] < rq->now - rq->age_ms ? -ETIME :
		       a.why[2] > rq->now ? -EBUSY : -ENOENT;
	case VG_STORE_PUSH_DONE:
		store_pg_bytes(&p, s->id, strlen(s->id));
		store_pg_int(&p, s->busy_until);
		store_pg_int(&p, rq->retry);
		store_pg_int(&p, s->want_mask);
		store_pg_int(&p, s->want_boot);
		store_pg_int(&p, s->want_offset);
		store_pg_int(&p, (int64_t)s->offset);
		store_pg_int(&p, !rq->retry && rq->judged);
		store_pg_int(&p, s->pushed_ms);
		r = run(ctx, S_PUSH_DONE, &p, &a, &n, "judged", diag);
		return r < 0 ? r : n == 1 ? 0 : -ENOENT;
	case VG_STORE_PUSH_CAS:
		store_pg_bytes(&p, s->id, strlen(s->id));
		store_pg_int(&p, rq->value);
		store_pg_int(&p, rq->expect);
		store_pg_int(&p, s->pushed_ms);
		r = run(ctx, S_PUSH_CAS_STALE + (int)rq->col, &p, &a, &n, "state", diag);
		rq->changed = r == 0 && n == 1;
		return r;
	default:
		return vg_diag_set(diag, -EINVAL, "store: push: verb %u", verb);
	}
}
