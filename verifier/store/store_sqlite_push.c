// SPDX-License-Identifier: MIT
/*
 * store_sqlite_push.c - the push state (store.h: struct vg_store_push,
 * vg_store_push_reg, the push op) in SQLite: push_state, a row per pushing
 * agent, and push_regs, the registrations between their two steps. Every
 * take is one statement (UPDATE/DELETE ... RETURNING), so that of two
 * verifiers taking a nonce or a registration at once, one gets it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store_row.h"
#include "store_sqlite.h"

const char store_sq_push_schema[] =
	"CREATE TABLE IF NOT EXISTS push_state (id TEXT PRIMARY KEY, cred BLOB NOT NULL DEFAULT '',"
	" nonce BLOB NOT NULL DEFAULT '', bank INTEGER NOT NULL DEFAULT 0,"
	" mask INTEGER NOT NULL DEFAULT 0, issued_ms INTEGER NOT NULL DEFAULT 0,"
	" busy_until INTEGER NOT NULL DEFAULT 0, want_mask INTEGER NOT NULL DEFAULT 0,"
	" want_boot INTEGER NOT NULL DEFAULT 0, want_offset INTEGER NOT NULL DEFAULT 0,"
	" log_offset INTEGER NOT NULL DEFAULT 0, stale INTEGER NOT NULL DEFAULT 0,"
	" quiet_ms INTEGER NOT NULL DEFAULT 0, pushed_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS push_regs (id TEXT PRIMARY KEY, cred BLOB NOT NULL,"
	" proof_hash BLOB NOT NULL, reg_ms INTEGER NOT NULL, idn BLOB NOT NULL);"
	"CREATE INDEX IF NOT EXISTS push_regs_ms ON push_regs(reg_ms);";

#define ST_COLS "cred, nonce, bank, mask, issued_ms, busy_until, want_mask, want_boot," \
	" want_offset, log_offset, stale, quiet_ms, pushed_ms"
#define REG_COLS "cred, proof_hash, reg_ms, idn"

static int err(struct sq *q, struct vg_diag *diag, const char *what)
{
	return vg_diag_set(diag, -EIO, "store: push %s: %s", what, sqlite3_errmsg(q->db));
}

static int prep(struct sq *q, const char *sql, sqlite3_stmt **st, struct vg_diag *diag)
{
	return sqlite3_prepare_v2(q->db, sql, -1, st, NULL) == SQLITE_OK ? 0 : err(q, diag, "prepare");
}

static void bind_blob(sqlite3_stmt *st, int c, const void *p, size_t len)
{
	sqlite3_bind_blob(st, c, len ? p : "", (int)len, SQLITE_STATIC);
}

/* the current row's columns @first.. as @cols' values */
static void vals(sqlite3_stmt *st, int first, const struct store_col *cols, struct store_val *v,
		 int n)
{
	for (int i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		if (cols[i].type == STORE_INT) {
			v[i].i = sqlite3_column_int64(st, first + i);
			continue;
		}
		v[i].p = sqlite3_column_blob(st, first + i);
		v[i].len = v[i].p ? (size_t)sqlite3_column_bytes(st, first + i) : 0;
	}
}

/*
 * Step @st, which returns at most one push_state row (ST_COLS), into *@s
 * when it does. Return: 1 (a row), 0 (none), -EIO, -EBADMSG.
 */
static int step_state(struct sq *q, sqlite3_stmt *st, struct vg_store_push *s, const char *what,
		      struct vg_diag *diag)
{
	struct store_val v[STORE_PUSH_NCOLS];
	int r = sqlite3_step(st), got = 0;

	if (r == SQLITE_ROW) {
		vals(st, 0, store_push_cols, v, STORE_PUSH_NCOLS);
		got = store_push_decode(v, s) < 0 ? -EBADMSG : 1;
		r = sqlite3_step(st);
	}
	if (r != SQLITE_DONE)
		return err(q, diag, what);
	return got == -EBADMSG ? vg_diag_set(diag, got, "store: push %s: %s: bad row", what, s->id)
			       : got;
}

static int reg_put(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	const struct vg_store_push_reg *g = &rq->reg;
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return err(q, diag, "registration");
	/* the expired ones go, and this credential's of another id (ours is replaced) */
	r = prep(q, "DELETE FROM push_regs WHERE (reg_ms < ?1 OR cred = ?3) AND id <> ?2", &st, diag);
	if (r == 0) {
		sqlite3_bind_int64(st, 1, rq->now - rq->age_ms);
		sqlite3_bind_text(st, 2, g->id, -1, SQLITE_STATIC);
		bind_blob(st, 3, g->cred, strlen(g->cred));
		r = sqlite3_step(st) == SQLITE_DONE ? 0 : err(q, diag, "registration");
		sqlite3_finalize(st);
	}
	if (r == 0)
		r = prep(q, "INSERT INTO push_regs (id, " REG_COLS ") SELECT ?1, ?2, ?3, ?4, ?5"
			 " WHERE (SELECT count(*) FROM push_regs WHERE id <> ?1) < ?6"
			 " ON CONFLICT (id) DO UPDATE SET cred = excluded.cred,"
			 " proof_hash = excluded.proof_hash, reg_ms = excluded.reg_ms,"
			 " idn = excluded.idn", &st, diag);
	if (r == 0) {
		sqlite3_bind_text(st, 1, g->id, -1, SQLITE_STATIC);
		bind_blob(st, 2, g->cred, strlen(g->cred));
		bind_blob(st, 3, g->proof_hash, sizeof(g->proof_hash));
		sqlite3_bind_int64(st, 4, g->reg_ms);
		bind_blob(st, 5, g->idn, g->idn_len);
		sqlite3_bind_int64(st, 6, rq->max);
		if (sqlite3_step(st) != SQLITE_DONE)
			r = err(q, diag, "registration");
		else if (sqlite3_changes(q->db) != 1)
			r = -ENOSPC;
		sqlite3_finalize(st);
	}
	if (r == 0 && sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		r = err(q, diag, "registration");
	if (r < 0)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

static int reg_take(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct vg_store_push_reg *g = &rq->reg;
	struct store_val v[STORE_PUSH_REG_NCOLS];
	sqlite3_stmt *st;
	int r = prep(q, "DELETE FROM push_regs WHERE id = ?1 AND cred = ?2 RETURNING " REG_COLS,
		     &st, diag), got = 0;

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, g->id, -1, SQLITE_STATIC);
	bind_blob(st, 2, g->cred, strlen(g->cred));
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		vals(st, 0, store_push_reg_cols, v, STORE_PUSH_REG_NCOLS);
		got = store_push_reg_decode(v, g) < 0 ? -EBADMSG : 1;
		r = sqlite3_step(st);
	}
	r = r != SQLITE_DONE ? err(q, diag, "activation") :
	    got < 0 ? vg_diag_set(diag, got, "store: push registration %s: bad row", g->id) :
	    got ? 0 : -ENOENT;
	sqlite3_finalize(st);
	return r;
}

static int chal_put(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct vg_store_push *s = &rq->st;
	sqlite3_stmt *st;
	int r = prep(q, "INSERT INTO push_state (id, cred, nonce, bank, mask, issued_ms)"
		     " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM agents WHERE id = ?1)"
		     " ON CONFLICT (id) DO UPDATE SET cred = excluded.cred, nonce = excluded.nonce,"
		     " bank = excluded.bank, mask = excluded.mask | push_state.want_mask,"
		     " issued_ms = excluded.issued_ms RETURNING " ST_COLS, &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, s->id, -1, SQLITE_STATIC);
	bind_blob(st, 2, s->cred, strlen(s->cred));
	bind_blob(st, 3, s->nonce, s->nonce_len);
	sqlite3_bind_int64(st, 4, s->bank);
	sqlite3_bind_int64(st, 5, s->mask);
	sqlite3_bind_int64(st, 6, s->issued_ms);
	r = step_state(q, st, s, "challenge", diag);
	sqlite3_finalize(st);
	return r < 0 ? r : r ? 0 : -ENOENT;
}

/* why @s's nonce was not taken: -ENOENT, -ETIME, -EBUSY (or -EIO) */
static int why_not(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct vg_store_push *s = &rq->st;
	sqlite3_stmt *st;
	int r = prep(q, "SELECT cred = ?2 AND nonce = ?3 AND length(nonce) > 0, issued_ms, busy_until"
		     " FROM push_state WHERE id = ?1", &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, s->id, -1, SQLITE_STATIC);
	bind_blob(st, 2, s->cred, strlen(s->cred));
	bind_blob(st, 3, s->nonce, s->nonce_len);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		r = !sqlite3_column_int64(st, 0) ? -ENOENT :
		    sqlite3_column_int64(st, 1) < rq->now - rq->age_ms ? -ETIME :
		    sqlite3_column_int64(st, 2) > rq->now ? -EBUSY : -ENOENT;
	else
		r = r == SQLITE_DONE ? -ENOENT : err(q, diag, "evidence");
	sqlite3_finalize(st);
	return r;
}

static int chal_take(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct vg_store_push *s = &rq->st;
	sqlite3_stmt *st;
	int r = prep(q, "UPDATE push_state SET nonce = '', busy_until = ?4 WHERE id = ?1"
		     " AND cred = ?2 AND nonce = ?3 AND length(nonce) > 0 AND issued_ms >= ?5"
		     " AND busy_until <= ?6 RETURNING " ST_COLS, &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, s->id, -1, SQLITE_STATIC);
	bind_blob(st, 2, s->cred, strlen(s->cred));
	bind_blob(st, 3, s->nonce, s->nonce_len);
	sqlite3_bind_int64(st, 4, rq->now + rq->lease_ms);
	sqlite3_bind_int64(st, 5, rq->now - rq->age_ms);
	sqlite3_bind_int64(st, 6, rq->now);
	r = step_state(q, st, s, "evidence", diag);
	sqlite3_finalize(st);
	return r < 0 ? r : r ? 0 : why_not(q, rq, diag);
}

static int done(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct vg_store_push *s = &rq->st;
	sqlite3_stmt *st;
	int r = prep(q, "UPDATE push_state SET"
		     " busy_until = CASE WHEN busy_until = ?2 THEN 0 ELSE busy_until END,"
		     " want_mask = CASE WHEN ?3 THEN want_mask | ?4 ELSE want_mask END,"
		     " want_boot = CASE WHEN ?3 THEN ?5 ELSE 0 END,"
		     " want_offset = CASE WHEN ?3 THEN ?6 ELSE 0 END,"
		     " log_offset = CASE WHEN ?3 THEN ?7 ELSE log_offset END,"
		     " pushed_ms = CASE WHEN ?8 THEN ?9 ELSE pushed_ms END,"
		     " stale = CASE WHEN ?8 THEN 0 ELSE stale END"
		     " WHERE id = ?1 RETURNING " ST_COLS, &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, s->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, s->busy_until);
	sqlite3_bind_int64(st, 3, rq->retry);
	sqlite3_bind_int64(st, 4, s->want_mask);
	sqlite3_bind_int64(st, 5, s->want_boot);
	sqlite3_bind_int64(st, 6, s->want_offset);
	sqlite3_bind_int64(st, 7, (int64_t)s->offset);
	sqlite3_bind_int64(st, 8, !rq->retry && rq->judged);
	sqlite3_bind_int64(st, 9, s->pushed_ms);
	r = step_state(q, st, s, "judged", diag);
	sqlite3_finalize(st);
	return r < 0 ? r : r ? 0 : -ENOENT;
}

static int cas(struct sq *q, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	static const char *const sql[VG_STORE_PUSH_COL__COUNT] = {
#define CAS(col) "INSERT INTO push_state (id, " col ") SELECT ?1, ?2"			\
		" WHERE EXISTS (SELECT 1 FROM agents WHERE id = ?1) ON CONFLICT (id) DO UPDATE" \
		" SET " col " = ?2 WHERE push_state." col " = ?3 AND push_state.pushed_ms = ?4"
		CAS("stale"), CAS("quiet_ms"),
#undef CAS
	};
	sqlite3_stmt *st;
	int r = prep(q, sql[rq->col], &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, rq->st.id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, rq->value);
	sqlite3_bind_int64(st, 3, rq->expect);
	sqlite3_bind_int64(st, 4, rq->st.pushed_ms);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = err(q, diag, "state");
	else
		rq->changed = sqlite3_changes(q->db) == 1;
	sqlite3_finalize(st);
	return r;
}

int store_sq_push(void *ctx, unsigned int verb, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	switch (verb) {
	case VG_STORE_PUSH_REG_PUT:
		return reg_put(ctx, rq, diag);
	case VG_STORE_PUSH_REG_TAKE:
		return reg_take(ctx, rq, diag);
	case VG_STORE_PUSH_CHAL_PUT:
		return chal_put(ctx, rq, diag);
	case VG_STORE_PUSH_CHAL_TAKE:
		return chal_take(ctx, rq, diag);
	case VG_STORE_PUSH_DONE:
		return done(ctx, rq, diag);
	case VG_STORE_PUSH_CAS:
		return cas(ctx, rq, diag);
	default:
		return vg_diag_set(diag, -EINVAL, "store: push: verb %u", verb);
	}
}
