// SPDX-License-Identifier: MIT
/*
 * store_sqlite.c - the SQLite backend of store.h.
 *
 * One database file, WAL journal, four tables; the row encoding and the
 * column lists are the ones the PostgreSQL backend uses (store.c,
 * store_row.h). Failure types are stored as their stable ids
 * ("policy.digest"), not as numbers, so history survives enum changes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_row.h"
#include "store_sqlite.h"

static const char schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=NORMAL;"
	"CREATE TABLE IF NOT EXISTS agents ("
	" id TEXT PRIMARY KEY, url TEXT NOT NULL, policy TEXT NOT NULL,"
	" ek_pub BLOB, ek_cert BLOB, ak_pub BLOB,"
	" state INTEGER NOT NULL, bank INTEGER NOT NULL, mask INTEGER NOT NULL,"
	" clock_valid INTEGER NOT NULL, clock INTEGER NOT NULL, reset_count INTEGER NOT NULL,"
	" restart_count INTEGER NOT NULL,"
	" log_entries INTEGER NOT NULL, log_offset INTEGER NOT NULL, log_pcr_algo INTEGER NOT NULL,"
	" log_pcr BLOB, log_lag INTEGER NOT NULL,"
	" rounds INTEGER NOT NULL, reboots INTEGER NOT NULL, comm_errors INTEGER NOT NULL,"
	" registered_at INTEGER NOT NULL, last_ok INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	" last_fail TEXT NOT NULL, last_msg TEXT NOT NULL,"
	" next_due INTEGER NOT NULL DEFAULT 0, lease_owner TEXT NOT NULL DEFAULT '',"
	" lease_until INTEGER NOT NULL DEFAULT 0, log_keys BLOB, failure_count INTEGER NOT NULL DEFAULT 0,"
	" ek_key BLOB, boot_next BLOB);"
	"CREATE TABLE IF NOT EXISTS policies (name TEXT PRIMARY KEY, doc TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS verdicts (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" agent TEXT NOT NULL, time INTEGER NOT NULL, fail TEXT NOT NULL, entry INTEGER NOT NULL,"
	" path TEXT NOT NULL, digest TEXT NOT NULL, msg TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS verdicts_agent ON verdicts(agent, seq);"
	"CREATE TABLE IF NOT EXISTS verifiers (id TEXT PRIMARY KEY, host TEXT NOT NULL,"
	" pid INTEGER NOT NULL, started INTEGER NOT NULL, beat INTEGER NOT NULL,"
	" max_rounds INTEGER NOT NULL, running INTEGER NOT NULL, rounds INTEGER NOT NULL,"
	" late INTEGER NOT NULL);";

/* a store made before the scheduling columns: they are added (as the schema above has them) */
static const char migrate_sched[] =
	"ALTER TABLE agents ADD COLUMN next_due INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE agents ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE agents ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;";

/* a store made before keys were learned from the log (attest.h: struct vg_attest_learned) */
static const char migrate_keys[] = "ALTER TABLE agents ADD COLUMN log_keys BLOB;";
/* a store made before failure_count: added, 0 for every agent until its next round */
static const char migrate_fc[] =
	"ALTER TABLE agents ADD COLUMN failure_count INTEGER NOT NULL DEFAULT 0;";
/* a store made before ek_key: added, made for each agent by its next write (store.c) */
static const char migrate_ek[] = "ALTER TABLE agents ADD COLUMN ek_key BLOB;";
/* a store made before the next boots' announcements (attest_announce.h): none kept yet */
static const char migrate_boot_next[] = "ALTER TABLE agents ADD COLUMN boot_next BLOB;";

/*
 * after the columns exist: the lease claim's order without a scan and a
 * sort of every row; agent_find's lookups by key
 */
static const char sched_index[] =
	"CREATE INDEX IF NOT EXISTS agents_due ON agents(next_due);"
	"CREATE INDEX IF NOT EXISTS agents_ek ON agents(ek_key);"
	"CREATE INDEX IF NOT EXISTS agents_ak ON agents(ak_pub);"
	"CREATE INDEX IF NOT EXISTS agents_url ON agents(url);";

static void sq_set_timeout(void *ctx, unsigned int ms)
{
	struct sq *q = ctx;

	sqlite3_busy_timeout(q->db, ms > INT32_MAX ? INT32_MAX : (int)ms);
}

static int db_err(struct sq *q, struct vg_diag *diag, const char *what)
{
	return vg_diag_set(diag, -EIO, "store: %s: %s", what, sqlite3_errmsg(q->db));
}

static int prep(struct sq *q, const char *sql, sqlite3_stmt **st, struct vg_diag *diag)
{
	if (sqlite3_prepare_v2(q->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(q, diag, "prepare");
	return 0;
}

/* A cached statement, reset and unbound. Return: 0 or -EIO. */
static int cached(struct sq *q, sqlite3_stmt **slot, const char *sql, struct vg_diag *diag)
{
	if (*slot) {
		sqlite3_reset(*slot);
		sqlite3_clear_bindings(*slot);
		return 0;
	}
	return prep(q, sql, slot, diag);
}

static void bind_vals(sqlite3_stmt *st, const struct store_col *cols, const struct store_val *v,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = (int)i + 1;

		switch (cols[i].type) {
		case STORE_TEXT:
			sqlite3_bind_text(st, c, v[i].p ? v[i].p : "", (int)v[i].len, SQLITE_STATIC);
			break;
		case STORE_BLOB:
			sqlite3_bind_blob(st, c, v[i].p ? v[i].p : "", (int)v[i].len, SQLITE_STATIC);
			break;
		case STORE_INT:
			sqlite3_bind_int64(st, c, v[i].i);
			break;
		}
	}
}

/* the values of the current row's columns @first.. (valid until the next step) */
static void row_vals(sqlite3_stmt *st, int first, const struct store_col *cols, struct store_val *v,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = first + (int)i;

		memset(&v[i], 0, sizeof(v[i]));
		if (cols[i].type == STORE_INT) {
			v[i].i = sqlite3_column_int64(st, c);
			continue;
		}
		v[i].p = cols[i].type == STORE_TEXT ? (const void *)sqlite3_column_text(st, c)
						    : sqlite3_column_blob(st, c);
		v[i].len = (size_t)sqlite3_column_bytes(st, c);
		if (!v[i].p)
			v[i].len = 0;
	}
}

static int sq_agent_put(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct sq *q = ctx;
	struct store_val v[STORE_AGENT_NCOLS];
	char sql[1024] = "INSERT OR REPLACE INTO agents (";
	int r;

	if (!q->put) {
		store_sql_list(sql, sizeof(sql), store_agent_cols, STORE_AGENT_NCOLS, "%s");
		strcat(sql, ") VALUES (");
		for (int i = 0; i < STORE_AGENT_NCOLS; i++)
			strcat(sql, i ? ",?" : "?");
		strcat(sql, ")");
	}
	r = cached(q, &q->put, sql, diag);
	if (r < 0)
		return r;
	store_agent_encode(a, v);
	bind_vals(q->put, store_agent_cols, v, STORE_AGENT_NCOLS);
	r = sqlite3_step(q->put) == SQLITE_DONE ? 0 : db_err(q, diag, "agent put");
	sqlite3_reset(q->put);
	return r;
}

static int sq_agent_update(void *ctx, const struct vg_store_agent *old,
			   const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct sq *q = ctx;
	struct store_val v[STORE_AGENT_NCOLS], ov[STORE_AGENT_NCOLS];
	char sql[2048] = "UPDATE agents SET ";
	int r;

	if (!q->update) {
		for (int i = 1; i < STORE_AGENT_NCOLS; i++)
			snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), "%s%s = ?%d",
				 i > 1 ? ", " : "", store_agent_cols[i].name, i + 1);
		strcat(sql, " WHERE id = ?1");
		for (int k = 0; k < STORE_GUARD_NCOLS; k++)
			snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), " AND %s IS ?%d",
				 store_agent_cols[store_agent_guard[k]].name, STORE_AGENT_NCOLS + 1 + k);
	}
	r = cached(q, &q->update, sql, diag);
	if (r < 0)
		return r;
	store_agent_encode(a, v);
	store_agent_encode(old, ov);
	bind_vals(q->update, store_agent_cols, v, STORE_AGENT_NCOLS);
	for (int k = 0; k < STORE_GUARD_NCOLS; k++) {
		int c = store_agent_guard[k], n = STORE_AGENT_NCOLS + 1 + k;

		if (store_agent_cols[c].type == STORE_INT)
			sqlite3_bind_int64(q->update, n, ov[c].i);
		else if (store_agent_cols[c].type == STORE_TEXT)
			sqlite3_bind_text(q->update, n, ov[c].p, (int)ov[c].len, SQLITE_STATIC);
		else
			sqlite3_bind_blob(q->update, n, ov[c].p, (int)ov[c].len, SQLITE_STATIC);
	}
	if (sqlite3_step(q->update) != SQLITE_DONE)
		r = db_err(q, diag, "agent update");
	else
		r = sqlite3_changes(q->db) == 1 ? 0 : -ESTALE;
	sqlite3_reset(q->update);
	return r;
}

static int row_agent(sqlite3_stmt *st, struct vg_store_agent *a)
{
	struct store_val v[STORE_AGENT_NCOLS], sv[STORE_SCHED_NCOLS];

	row_vals(st, 0, store_agent_cols, v, STORE_AGENT_NCOLS);
	if (store_agent_decode(v, a) < 0)
		return -EBADMSG;
	row_vals(st, STORE_AGENT_NCOLS, store_sched_cols, sv, STORE_SCHED_NCOLS);
	store_sched_decode(sv, a);
	return 0;
}

static void select_agents(char *sql, size_t cap, const char *tail)
{
	snprintf(sql, cap, "SELECT ");
	store_sql_list(sql, cap, store_agent_cols, STORE_AGENT_NCOLS, "%s");
	strcat(sql, ", ");
	store_sql_list(sql, cap, store_sched_cols, STORE_SCHED_NCOLS, "%s");
	snprintf(sql + strlen(sql), cap - strlen(sql), " FROM agents %s", tail);
}

static int sq_agent_get(void *ctx, const char *id, struct vg_store_agent *ret,
			struct vg_diag *diag)
{
	struct sq *q = ctx;
	char sql[1024];
	sqlite3_stmt *st;
	int r;

	if (!q->get)
		select_agents(sql, sizeof(sql), "WHERE id = ?");
	r = cached(q, &q->get, sql, diag);
	if (r < 0)
		return r;
	st = q->get;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		r = row_agent(st, ret) < 0 ? vg_diag_set(diag, -EBADMSG, "store: agent %s: bad row", id)
					  : 0;
	else if (r == SQLITE_DONE)
		r = -ENOENT;
	else
		r = db_err(q, diag, "agent get");
	sqlite3_reset(st);
	return r;
}

/* Return: rows changed, or -EIO. */
static int exec_id_n(struct sq *q, const char *sql, const char *id, struct vg_diag *diag)
{
	sqlite3_stmt *st;
	int r = prep(q, sql, &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	r = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(q->db) : db_err(q, diag, "delete");
	sqlite3_finalize(st);
	return r;
}

/* Return: 0, -ENOENT (no row), -EIO. */
static int exec_id(struct sq *q, const char *sql, const char *id, struct vg_diag *diag)
{
	int r = exec_id_n(q, sql, id, diag);

	return r < 0 ? r : r == 0 ? -ENOENT : 0;
}

/*
 * the deletes in one transaction: no agent without its history, no history
 * or push state of a removed agent
 */
static int sq_agent_del(void *ctx, const char *id, struct vg_diag *diag)
{
	struct sq *q = ctx;
	int r;

	if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(q, diag, "agent delete");
	r = exec_id(q, "DELETE FROM agents WHERE id = ?", id, diag);
	if (r == 0)
		r = exec_id_n(q, "DELETE FROM verdicts WHERE agent = ?", id, diag);
	if (r >= 0)
		r = exec_id_n(q, "DELETE FROM push_state WHERE id = ?", id, diag);
	if (r >= 0)
		r = exec_id_n(q, "DELETE FROM push_regs WHERE id = ?", id, diag);
	if (r >= 0 && sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		r = db_err(q, diag, "agent delete");
	if (r < 0) {
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
	return 0;
}

static int sq_agent_find(void *ctx, unsigned int key, const uint8_t *val, size_t len,
			 const char *except, struct vg_store_agent *ret, struct vg_diag *diag)
{
	static const char *const where[VG_STORE_KEY__COUNT] = {
		"WHERE ek_key = ?1 AND id <> ?2 ORDER BY id LIMIT 1",
		"WHERE ak_pub = ?1 AND id <> ?2 ORDER BY id LIMIT 1",
		"WHERE url = ?1 AND id <> ?2 ORDER BY id LIMIT 1",
	};
	struct sq *q = ctx;
	char sql[1024];
	sqlite3_stmt *st;
	int r;

	select_agents(sql, sizeof(sql), where[key]);
	r = prep(q, sql, &st, diag);
	if (r < 0)
		return r;
	/* as the row was written: url TEXT, the keys BLOB (SQLite compares them by type first) */
	if (key == VG_STORE_KEY_URL)
		sqlite3_bind_text(st, 1, len ? (const char *)val : "", (int)len, SQLITE_STATIC);
	else
		sqlite3_bind_blob(st, 1, len ? val : (const uint8_t *)"", (int)len, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, except, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		r = row_agent(st, ret) < 0 ? vg_diag_set(diag, -EBADMSG, "store: agent find: bad row")
					  : 0;
	else if (r == SQLITE_DONE)
		r = -ENOENT;
	else
		r = db_err(q, diag, "agent find");
	sqlite3_finalize(st);
	return r;
}

static int sq_agent_list(void *ctx, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	struct sq *q = ctx;
	char sql[1024];
	sqlite3_stmt *st;
	struct vg_store_agent *a = malloc(sizeof(*a));
	int r, ret = 0;

	if (!a)
		return -ENOMEM;
	select_agents(sql, sizeof(sql), "ORDER BY id");
	r = prep(q, sql, &st, diag);
	if (r < 0) {
		free(a);
		return r;
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (row_agent(st, a) < 0)
			continue;	/* a row that does not decode is skipped, not fatal */
		ret = cb(arg, a);
		if (ret)
			break;
	}
	if (!ret && r != SQLITE_DONE)
		ret = db_err(q, diag, "agent list");
	sqlite3_finalize(st);
	free(a);
	return ret;
}

static int sq_policy_put(void *ctx, const char *name, const char *doc, size_t len,
			 struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	int r = prep(q, "INSERT OR REPLACE INTO policies (name, doc) VALUES (?, ?)", &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, doc, (int)len, SQLITE_STATIC);
	r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "policy put");
	sqlite3_finalize(st);
	return r;
}

static int sq_policy_get(void *ctx, const char *name, char **ret, size_t *len,
			 struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	int r = prep(q, "SELECT doc FROM policies WHERE name = ?", &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		int n = sqlite3_column_bytes(st, 0);
		char *s = malloc((size_t)n + 1);

		if (!s) {
			r = -ENOMEM;
		} else {
			memcpy(s, sqlite3_column_text(st, 0), (size_t)n);
			s[n] = 0;
			*ret = s;
			*len = (size_t)n;
			r = 0;
		}
	} else if (r == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_err(q, diag, "policy get");
	}
	sqlite3_finalize(st);
	return r;
}

static int sq_policy_del(void *ctx, const char *name, struct vg_diag *diag)
{
	return exec_id(ctx, "DELETE FROM policies WHERE name = ?", name, diag);
}

static int sq_verdict_add(void *ctx, const char *id, const struct vg_store_verdict *v,
			  struct vg_diag *diag)
{
	struct sq *q = ctx;
	struct store_val vals[STORE_VERDICT_NCOLS];
	sqlite3_stmt *st;
	int r = prep(q, "INSERT INTO verdicts (agent, time, fail, entry, path, digest, msg) "
		     "VALUES (?,?,?,?,?,?,?)", &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	store_verdict_encode(v, vals);
	for (int i = 0; i < STORE_VERDICT_NCOLS; i++)
		if (store_verdict_cols[i].type == STORE_INT)
			sqlite3_bind_int64(st, i + 2, vals[i].i);
		else
			sqlite3_bind_text(st, i + 2, vals[i].p, (int)vals[i].len, SQLITE_STATIC);
	r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "verdict add");
	sqlite3_finalize(st);
	return r;
}

static int sq_verdict_list(void *ctx, const char *id, size_t max, vg_store_verdict_cb cb,
			   void *arg, struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	struct store_val vals[STORE_VERDICT_NCOLS];
	struct vg_store_verdict v;
	int r = prep(q, "SELECT time, fail, entry, path, digest, msg FROM verdicts WHERE agent = ? "
		     "ORDER BY seq DESC LIMIT ?", &st, diag), ret = 0;

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)max);	/* > INT64_MAX: negative, no limit */
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		row_vals(st, 0, store_verdict_cols, vals, STORE_VERDICT_NCOLS);
		store_verdict_decode(vals, &v);
		ret = cb(arg, &v);
		if (ret)
			break;
	}
	if (!ret && r != SQLITE_DONE)
		ret = db_err(q, diag, "verdict list");
	sqlite3_finalize(st);
	return ret;
}

/* agent_due's columns, in struct vg_store_due's order */
#define SQ_DUE_COLS "agents.id, state, substr(url, 1, 5) = 'push:', registered_at, last_ok," \
	" last_seen, next_due, lease_until, lease_owner"

static int sq_lease_claim(void *ctx, const char *owner, int64_t now, int64_t lease_ms,
			  unsigned int max, vg_store_lease_cb cb, void *arg, struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	int r, n = 0, ret = 0;

	/* one statement: claimed and returned in one write transaction */
	r = prep(q, "UPDATE agents SET lease_owner = ?1, lease_until = ?2 + ?3 WHERE id IN"
		 " (SELECT id FROM agents WHERE state <> 2 AND next_due <= ?2 AND lease_until <= ?2"
		 " AND substr(url, 1, 5) <> 'push:' ORDER BY next_due, id LIMIT ?4)"
		 " RETURNING id, next_due", &st, diag);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_int64(st, 3, lease_ms);
	sqlite3_bind_int64(st, 4, max);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *id = sqlite3_column_text(st, 0);

		n++;
		if (!ret && id)
			ret = cb(arg, (const char *)id, sqlite3_column_int64(st, 1));
	}
	if (r != SQLITE_DONE)
		ret = db_err(q, diag, "lease claim");
	sqlite3_finalize(st);
	return ret < 0 ? ret : n;
}

static int sq_agent_states(void *ctx, uint64_t n[VG_STORE_STATES], struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	int r = prep(q, "SELECT state, count(*) FROM agents GROUP BY state", &st, diag);

	if (r < 0)
		return r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 state = sqlite3_column_int64(st, 0);

		if (state >= 0 && state < VG_STORE_STATES)
			n[state] = (uint64_t)sqlite3_column_int64(st, 1);
	}
	r = r == SQLITE_DONE ? 0 : db_err(q, diag, "agent states");
	sqlite3_finalize(st);
	return r;
}

static int sq_agent_due(void *ctx, int64_t before, vg_store_due_cb cb, void *arg,
			struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	int r, ret = 0;

	/*
	 * the pulled agents due by ?1 (agents_due), then every pushing one
	 * (agents_url) with its push state
	 */
	r = prep(q, "SELECT * FROM (SELECT " SQ_DUE_COLS ", 0, 0, 0 FROM agents WHERE next_due <= ?1"
		 " AND state <> 2 AND substr(url, 1, 5) <> 'push:' ORDER BY next_due)"
		 " UNION ALL SELECT " SQ_DUE_COLS ", coalesce(p.stale, 0), coalesce(p.quiet_ms, 0),"
		 " coalesce(p.pushed_ms, 0) FROM agents LEFT JOIN push_state p ON p.id = agents.id"
		 " WHERE url >= 'push:' AND url < 'push;'", &st, diag);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, before);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *id = sqlite3_column_text(st, 0), *owner;
		struct vg_store_due a;

		if (ret || !id || (size_t)sqlite3_column_bytes(st, 0) >= sizeof(a.id) ||
		    (size_t)sqlite3_column_bytes(st, 8) >= sizeof(a.lease_owner))
			continue;
		snprintf(a.id, sizeof(a.id), "%s", (const char *)id);
		a.state = (unsigned int)sqlite3_column_int64(st, 1);
		a.push = sqlite3_column_int64(st, 2) != 0;
		a.registered_at = sqlite3_column_int64(st, 3);
		a.last_ok = sqlite3_column_int64(st, 4);
		a.last_seen = sqlite3_column_int64(st, 5);
		a.next_due = sqlite3_column_int64(st, 6);
		a.lease_until = sqlite3_column_int64(st, 7);
		owner = sqlite3_column_text(st, 8);
		snprintf(a.lease_owner, sizeof(a.lease_owner), "%s", owner ? (const char *)owner : "");
		a.stale = sqlite3_column_int64(st, 9) != 0;
		a.quiet_ms = sqlite3_column_int64(st, 10);
		a.pushed_ms = sqlite3_column_int64(st, 11);
		ret = cb(arg, &a);
	}
	if (r != SQLITE_DONE)
		ret = db_err(q, diag, "agent due");
	sqlite3_finalize(st);
	return ret;
}

/*
 * A lease of @owner on @id ends: @sql (?1 id, ?2 owner, ?3 @v). Return: 0,
 * -ESTALE (no such lease), -EIO.
 */
static int lease_end(struct sq *q, const char *sql, const char *id, const char *owner, int64_t v,
		     const char *what, struct vg_diag *diag)
{
	sqlite3_stmt *st;
	int r = prep(q, sql, &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, v);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_err(q, diag, what);
	else
		r = sqlite3_changes(q->db) == 1 ? 0 : -ESTALE;
	sqlite3_finalize(st);
	return r;
}

/* the due time kept: a lease under @owner that no round of its holds (sched_list.c) */
static int sq_lease_drop(void *ctx, const char *id, const char *owner, int64_t lease_until,
			 struct vg_diag *diag)
{
	return lease_end(ctx, "UPDATE agents SET lease_owner = '', lease_until = 0"
			 " WHERE id = ?1 AND lease_owner = ?2 AND lease_until = ?3", id, owner,
			 lease_until, "lease drop", diag);
}

static int sq_lease_release(void *ctx, const char *id, const char *owner, int64_t next_due,
			    struct vg_diag *diag)
{
	return lease_end(ctx, "UPDATE agents SET lease_owner = '', lease_until = 0, next_due = ?3"
			 " WHERE id = ?1 AND lease_owner = ?2", id, owner, next_due, "lease release",
			 diag);
}

static int sq_verifier_beat(void *ctx, const struct vg_store_verifier *v, struct vg_diag *diag)
{
	struct sq *q = ctx;
	struct store_val vals[STORE_VERIFIER_NCOLS];
	sqlite3_stmt *st;
	int r;

	if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(q, diag, "verifier beat");
	r = prep(q, "DELETE FROM verifiers WHERE beat < ?", &st, diag);
	if (r == 0) {
		sqlite3_bind_int64(st, 1, v->beat - STORE_VERIFIER_FORGET_MS);
		r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "verifier beat");
		sqlite3_finalize(st);
	}
	if (r == 0)
		r = prep(q, "INSERT OR REPLACE INTO verifiers (id, host, pid, started, beat, max_rounds,"
			 " running, rounds, late) VALUES (?,?,?,?,?,?,?,?,?)", &st, diag);
	if (r == 0) {
		store_verifier_encode(v, vals);
		bind_vals(st, store_verifier_cols, vals, STORE_VERIFIER_NCOLS);
		r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "verifier beat");
		sqlite3_finalize(st);
	}
	if (r == 0 && sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		r = db_err(q, diag, "verifier beat");
	if (r < 0)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

static int sq_verifier_list(void *ctx, vg_store_verifier_cb cb, void *arg, struct vg_diag *diag)
{
	struct sq *q = ctx;
	struct store_val vals[STORE_VERIFIER_NCOLS];
	struct vg_store_verifier v;
	sqlite3_stmt *st;
	int r = prep(q, "SELECT id, host, pid, started, beat, max_rounds, running, rounds, late"
		     " FROM verifiers ORDER BY id", &st, diag), ret = 0;

	if (r < 0)
		return r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		row_vals(st, 0, store_verifier_cols, vals, STORE_VERIFIER_NCOLS);
		store_verifier_decode(vals, &v);
		ret = cb(arg, &v);
		if (ret)
			break;
	}
	if (!ret && r != SQLITE_DONE)
		ret = db_err(q, diag, "verifier list");
	sqlite3_finalize(st);
	return ret;
}

static void sq_close(void *ctx)
{
	struct sq *q = ctx;

	sqlite3_finalize(q->put);
	sqlite3_finalize(q->get);
	sqlite3_finalize(q->update);
	sqlite3_close(q->db);
	free(q);
}

static const struct vg_store_ops sqlite_ops = {
	.agent_put = sq_agent_put,
	.agent_get = sq_agent_get,
	.agent_find = sq_agent_find,
	.agent_del = sq_agent_del,
	.agent_list = sq_agent_list,
	.agent_update = sq_agent_update,
	.policy_put = sq_policy_put,
	.policy_get = sq_policy_get,
	.policy_del = sq_policy_del,
	.verdict_add = sq_verdict_add,
	.verdict_list = sq_verdict_list,
	.lease_claim = sq_lease_claim,
	.agent_due = sq_agent_due,
	.agent_states = sq_agent_states,
	.lease_release = sq_lease_release,
	.lease_drop = sq_lease_drop,
	.verifier_beat = sq_verifier_beat,
	.verifier_list = sq_verifier_list,
	.push = store_sq_push,
	.close = sq_close,
	.set_timeout = sq_set_timeout,
};

/* Return: the agents table has column @name (a store made before it has not). */
static bool has_col(struct sq *q, const char *name)
{
	sqlite3_stmt *st;
	bool found = false;

	if (sqlite3_prepare_v2(q->db, "SELECT 1 FROM pragma_table_info('agents') WHERE name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int vg_store_sqlite_open(const char *path, struct vg_store **ret, struct vg_diag *diag)
{
	struct vg_store *s = calloc(1, sizeof(*s));
	struct sq *q = calloc(1, sizeof(*q));
	char *err = NULL;

	if (!s || !q) {
		free(s);
		free(q);
		return -ENOMEM;
	}
	if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		vg_diag_set(diag, -EIO, "store: %s: %s", path, q->db ? sqlite3_errmsg(q->db) : "?");
		sqlite3_close(q->db);
		free(q);
		free(s);
		return -EIO;
	}
	sqlite3_busy_timeout(q->db, STORE_TIMEOUT_MS);
	if (sqlite3_exec(q->db, schema, NULL, NULL, &err) != SQLITE_OK) {
		vg_diag_set(diag, -EIO, "store: %s: schema: %s", path, err ? err : "?");
		sqlite3_free(err);
		sqlite3_close(q->db);
		free(q);
		free(s);
		return -EIO;
	}
	if ((!has_col(q, "lease_until") &&
	     sqlite3_exec(q->db, migrate_sched, NULL, NULL, &err) != SQLITE_OK) ||
	    (!has_col(q, "log_keys") &&
	     sqlite3_exec(q->db, migrate_keys, NULL, NULL, &err) != SQLITE_OK) ||
	    (!has_col(q, "failure_count") &&
	     sqlite3_exec(q->db, migrate_fc, NULL, NULL, &err) != SQLITE_OK) ||
	    (!has_col(q, "ek_key") &&
	     sqlite3_exec(q->db, migrate_ek, NULL, NULL, &err) != SQLITE_OK) ||
	    (!has_col(q, "boot_next") &&
	     sqlite3_exec(q->db, migrate_boot_next, NULL, NULL, &err) != SQLITE_OK) ||
	    sqlite3_exec(q->db, sched_index, NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(q->db, store_sq_push_schema, NULL, NULL, &err) != SQLITE_OK) {
		vg_diag_set(diag, -EIO, "store: %s: adding the new columns: %s", path,
			    err ? err : "?");
		sqlite3_free(err);
		sqlite3_close(q->db);
		free(q);
		free(s);
		return -EIO;
	}
	s->ops = &sqlite_ops;
	s->ctx = q;
	*ret = s;
	return 0;
}
