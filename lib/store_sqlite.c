// SPDX-License-Identifier: MIT
/*
 * store_sqlite.c - the SQLite backend of store.h, and the backend-neutral
 * wrappers.
 *
 * One database file, WAL journal, three tables (the same DDL works on
 * PostgreSQL with BLOB → BYTEA and AUTOINCREMENT → GENERATED ... AS
 * IDENTITY). Failure types are stored as their stable ids
 * ("policy.digest"), not as numbers, so history survives enum changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "vigil/store.h"

static const char *const state_names[] = { "registered", "trusted", "failed", "unreachable" };

const char *vg_agent_state_name(unsigned int s)
{
	return s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : NULL;
}

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
	" last_fail TEXT NOT NULL, last_msg TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS policies (name TEXT PRIMARY KEY, doc TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS verdicts (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" agent TEXT NOT NULL, time INTEGER NOT NULL, fail TEXT NOT NULL, entry INTEGER NOT NULL,"
	" path TEXT NOT NULL, digest TEXT NOT NULL, msg TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS verdicts_agent ON verdicts(agent, seq);";

static const char agent_cols[] =
	"id, url, policy, ek_pub, ek_cert, ak_pub, state, bank, mask, clock_valid, clock,"
	" reset_count, restart_count, log_entries, log_offset, log_pcr_algo, log_pcr, log_lag,"
	" rounds, reboots, comm_errors, registered_at, last_ok, last_seen, last_fail, last_msg";

struct sq {
	sqlite3 *db;
	sqlite3_stmt *put, *get;	/* the per-round statements, prepared once */
};

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

static int sq_agent_put(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct sq *q = ctx;
	char sql[1024];
	sqlite3_stmt *st;
	int i = 1, r;

	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO agents (%s) VALUES (?,?,?,?,?,?,?,?,?,?,"
		 "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", agent_cols);
	r = cached(q, &q->put, sql, diag);
	if (r < 0)
		return r;
	st = q->put;
	sqlite3_bind_text(st, i++, a->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, a->url, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, a->policy, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, i++, a->ek_pub, (int)a->ek_pub_len, SQLITE_STATIC);
	sqlite3_bind_blob(st, i++, a->ek_cert, (int)a->ek_cert_len, SQLITE_STATIC);
	sqlite3_bind_blob(st, i++, a->ak_pub, (int)a->ak_pub_len, SQLITE_STATIC);
	sqlite3_bind_int(st, i++, (int)a->state);
	sqlite3_bind_int(st, i++, (int)a->bank);
	sqlite3_bind_int64(st, i++, a->mask);
	sqlite3_bind_int(st, i++, a->st.clock.valid);
	sqlite3_bind_int64(st, i++, (int64_t)a->st.clock.clock);
	sqlite3_bind_int64(st, i++, a->st.clock.reset_count);
	sqlite3_bind_int64(st, i++, a->st.clock.restart_count);
	sqlite3_bind_int64(st, i++, (int64_t)a->st.log.entries);
	sqlite3_bind_int64(st, i++, (int64_t)a->st.log.offset);
	sqlite3_bind_int(st, i++, a->st.log.pcr.algo);
	sqlite3_bind_blob(st, i++, a->st.log.pcr.bytes, a->st.log.pcr.len, SQLITE_STATIC);
	sqlite3_bind_int64(st, i++, (int64_t)a->st.log.lag);
	sqlite3_bind_int64(st, i++, (int64_t)a->rounds);
	sqlite3_bind_int64(st, i++, (int64_t)a->reboots);
	sqlite3_bind_int64(st, i++, a->comm_errors);
	sqlite3_bind_int64(st, i++, a->registered_at);
	sqlite3_bind_int64(st, i++, a->last_ok);
	sqlite3_bind_int64(st, i++, a->last_seen);
	sqlite3_bind_text(st, i++, vg_attest_fail_id(a->last_fail) ? vg_attest_fail_id(a->last_fail)
				   : "ok", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, a->last_msg, -1, SQLITE_STATIC);
	r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "agent put");
	sqlite3_reset(st);
	return r;
}

static int blob(sqlite3_stmt *st, int col, uint8_t *out, size_t cap, size_t *len)
{
	int n = sqlite3_column_bytes(st, col);
	const void *p = sqlite3_column_blob(st, col);

	if (n < 0 || (size_t)n > cap)
		return -EBADMSG;
	if (n)
		memcpy(out, p, (size_t)n);
	*len = (size_t)n;
	return 0;
}

static void text(sqlite3_stmt *st, int col, char *out, size_t cap)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	snprintf(out, cap, "%s", t ? (const char *)t : "");
}

static int row_agent(sqlite3_stmt *st, struct vg_store_agent *a)
{
	int i = 0, f;
	size_t pl;
	char fid[64];

	memset(a, 0, sizeof(*a));
	text(st, i++, a->id, sizeof(a->id));
	text(st, i++, a->url, sizeof(a->url));
	text(st, i++, a->policy, sizeof(a->policy));
	if (blob(st, i++, a->ek_pub, sizeof(a->ek_pub), &a->ek_pub_len) < 0 ||
	    blob(st, i++, a->ek_cert, sizeof(a->ek_cert), &a->ek_cert_len) < 0 ||
	    blob(st, i++, a->ak_pub, sizeof(a->ak_pub), &a->ak_pub_len) < 0)
		return -EBADMSG;
	a->state = (unsigned int)sqlite3_column_int(st, i++);
	a->bank = (unsigned int)sqlite3_column_int(st, i++);
	a->mask = (uint32_t)sqlite3_column_int64(st, i++);
	a->st.clock.valid = sqlite3_column_int(st, i++) != 0;
	a->st.clock.clock = (uint64_t)sqlite3_column_int64(st, i++);
	a->st.clock.reset_count = (uint32_t)sqlite3_column_int64(st, i++);
	a->st.clock.restart_count = (uint32_t)sqlite3_column_int64(st, i++);
	a->st.log.entries = (uint64_t)sqlite3_column_int64(st, i++);
	a->st.log.offset = (uint64_t)sqlite3_column_int64(st, i++);
	a->st.log.pcr.algo = (uint8_t)sqlite3_column_int(st, i++);
	if (blob(st, i++, a->st.log.pcr.bytes, sizeof(a->st.log.pcr.bytes), &pl) < 0 ||
	    pl != vg_hash_size(a->st.log.pcr.algo))
		return -EBADMSG;
	a->st.log.pcr.len = (uint8_t)pl;
	a->st.log.lag = (uint64_t)sqlite3_column_int64(st, i++);
	a->rounds = (uint64_t)sqlite3_column_int64(st, i++);
	a->reboots = (uint64_t)sqlite3_column_int64(st, i++);
	a->comm_errors = (uint32_t)sqlite3_column_int64(st, i++);
	a->registered_at = sqlite3_column_int64(st, i++);
	a->last_ok = sqlite3_column_int64(st, i++);
	a->last_seen = sqlite3_column_int64(st, i++);
	text(st, i++, fid, sizeof(fid));
	f = vg_attest_fail_by_id(fid);
	a->last_fail = f < 0 ? VG_AF_NONE : (unsigned int)f;
	text(st, i++, a->last_msg, sizeof(a->last_msg));
	return 0;
}

static int sq_agent_get(void *ctx, const char *id, struct vg_store_agent *ret,
			struct vg_diag *diag)
{
	struct sq *q = ctx;
	char sql[1024];
	sqlite3_stmt *st;
	int r;

	snprintf(sql, sizeof(sql), "SELECT %s FROM agents WHERE id = ?", agent_cols);
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

static int exec_id(struct sq *q, const char *sql, const char *id, struct vg_diag *diag)
{
	sqlite3_stmt *st;
	int r = prep(q, sql, &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "delete");
	sqlite3_finalize(st);
	if (r == 0 && sqlite3_changes(q->db) == 0)
		r = -ENOENT;
	return r;
}

static int sq_agent_del(void *ctx, const char *id, struct vg_diag *diag)
{
	struct sq *q = ctx;
	int r = exec_id(q, "DELETE FROM agents WHERE id = ?", id, diag);

	if (r == 0)
		exec_id(q, "DELETE FROM verdicts WHERE agent = ?", id, NULL);
	return r;
}

static int sq_agent_list(void *ctx, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	struct sq *q = ctx;
	char sql[1024];
	sqlite3_stmt *st;
	struct vg_store_agent *a = malloc(sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	snprintf(sql, sizeof(sql), "SELECT %s FROM agents ORDER BY id", agent_cols);
	r = prep(q, sql, &st, diag);
	if (r < 0) {
		free(a);
		return r;
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (row_agent(st, a) < 0)
			continue;
		r = cb(arg, a);
		if (r)
			break;
	}
	if (r == SQLITE_DONE)
		r = 0;
	else if (r == SQLITE_ROW)
		r = db_err(q, diag, "agent list");
	sqlite3_finalize(st);
	free(a);
	return r;
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
	sqlite3_stmt *st;
	const char *fid = vg_attest_fail_id(v->fail);
	int r = prep(q, "INSERT INTO verdicts (agent, time, fail, entry, path, digest, msg) "
		     "VALUES (?,?,?,?,?,?,?)", &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, v->time);
	sqlite3_bind_text(st, 3, fid ? fid : "ok", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, v->entry);
	sqlite3_bind_text(st, 5, v->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, v->digest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, v->msg, -1, SQLITE_STATIC);
	r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(q, diag, "verdict add");
	sqlite3_finalize(st);
	return r;
}

static int sq_verdict_list(void *ctx, const char *id, size_t max, vg_store_verdict_cb cb,
			   void *arg, struct vg_diag *diag)
{
	struct sq *q = ctx;
	sqlite3_stmt *st;
	struct vg_store_verdict v;
	int r = prep(q, "SELECT time, fail, entry, path, digest, msg FROM verdicts WHERE agent = ? "
		     "ORDER BY seq DESC LIMIT ?", &st, diag);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)max);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		char fid[64];
		int f;

		memset(&v, 0, sizeof(v));
		v.time = sqlite3_column_int64(st, 0);
		text(st, 1, fid, sizeof(fid));
		f = vg_attest_fail_by_id(fid);
		v.fail = f < 0 ? VG_AF_NONE : (unsigned int)f;
		v.entry = sqlite3_column_int64(st, 2);
		text(st, 3, v.path, sizeof(v.path));
		text(st, 4, v.digest, sizeof(v.digest));
		text(st, 5, v.msg, sizeof(v.msg));
		r = cb(arg, &v);
		if (r)
			break;
	}
	if (r == SQLITE_DONE)
		r = 0;
	else if (r == SQLITE_ROW)
		r = db_err(q, diag, "verdict list");
	sqlite3_finalize(st);
	return r;
}

static void sq_close(void *ctx)
{
	struct sq *q = ctx;

	sqlite3_finalize(q->put);
	sqlite3_finalize(q->get);
	sqlite3_close(q->db);
	free(q);
}

static const struct vg_store_ops sqlite_ops = {
	.agent_put = sq_agent_put,
	.agent_get = sq_agent_get,
	.agent_del = sq_agent_del,
	.agent_list = sq_agent_list,
	.policy_put = sq_policy_put,
	.policy_get = sq_policy_get,
	.policy_del = sq_policy_del,
	.verdict_add = sq_verdict_add,
	.verdict_list = sq_verdict_list,
	.close = sq_close,
};

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
	sqlite3_busy_timeout(q->db, 5000);
	if (sqlite3_exec(q->db, schema, NULL, NULL, &err) != SQLITE_OK) {
		vg_diag_set(diag, -EIO, "store: %s: schema: %s", path, err ? err : "?");
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

int vg_store_open(const char *url, struct vg_store **ret, struct vg_diag *diag)
{
	if (strncmp(url, "sqlite:", 7) == 0)
		return vg_store_sqlite_open(url + 7, ret, diag);
	if (strncmp(url, "postgresql:", 11) == 0 || strncmp(url, "postgres:", 9) == 0)
		return vg_diag_set(diag, -EOPNOTSUPP, "store: the PostgreSQL backend is not built");
	return vg_store_sqlite_open(url, ret, diag);
}

void vg_store_close(struct vg_store *s)
{
	if (!s)
		return;
	s->ops->close(s->ctx);
	free(s);
}

int vg_store_agent_put(struct vg_store *s, const struct vg_store_agent *a, struct vg_diag *diag)
{
	return s->ops->agent_put(s->ctx, a, diag);
}

int vg_store_agent_get(struct vg_store *s, const char *id, struct vg_store_agent *ret,
		       struct vg_diag *diag)
{
	return s->ops->agent_get(s->ctx, id, ret, diag);
}

int vg_store_agent_del(struct vg_store *s, const char *id, struct vg_diag *diag)
{
	return s->ops->agent_del(s->ctx, id, diag);
}

int vg_store_agent_list(struct vg_store *s, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	return s->ops->agent_list(s->ctx, cb, arg, diag);
}

int vg_store_policy_put(struct vg_store *s, const char *name, const char *doc, size_t len,
			struct vg_diag *diag)
{
	return s->ops->policy_put(s->ctx, name, doc, len, diag);
}

int vg_store_policy_get(struct vg_store *s, const char *name, char **ret, size_t *len,
			struct vg_diag *diag)
{
	return s->ops->policy_get(s->ctx, name, ret, len, diag);
}

int vg_store_policy_del(struct vg_store *s, const char *name, struct vg_diag *diag)
{
	return s->ops->policy_del(s->ctx, name, diag);
}

int vg_store_verdict_add(struct vg_store *s, const char *id, const struct vg_store_verdict *v,
			 struct vg_diag *diag)
{
	return s->ops->verdict_add(s->ctx, id, v, diag);
}

int vg_store_verdict_list(struct vg_store *s, const char *id, size_t max, vg_store_verdict_cb cb,
			  void *arg, struct vg_diag *diag)
{
	return s->ops->verdict_list(s->ctx, id, max, cb, arg, diag);
}
