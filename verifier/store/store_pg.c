// SPDX-License-Identifier: MIT
/*
 * store_pg.c - the PostgreSQL backend of store.h, on libpq.
 *
 * The same three tables as the SQLite backend, with the same columns and
 * the same row encoding (store.c): identifiers (agent ids, policy names)
 * and our own failure ids are TEXT COLLATE "C", so that agents list in
 * bytewise order as in SQLite whatever the database's locale; every other
 * string (URLs, paths, digests, messages, policy documents) is BYTEA,
 * because a file name on the attested host need not be UTF-8 and a
 * failure naming it must still be recorded. Integers are BIGINT, the
 * history's sequence a GENERATED ALWAYS AS IDENTITY column.
 *
 * Every statement is prepared once per connection (PQprepare) and run with
 * PQexecPrepared-style binary parameters and results (PQsendQueryPrepared
 * in single-row mode, so listing a fleet's agents does not hold every row
 * in memory). Every write is one statement, hence one transaction; an
 * agent and its history are deleted by one statement. agent_put is an
 * INSERT ... ON CONFLICT DO UPDATE, so verifiers sharing the database
 * never see a half-written agent.
 *
 * A lost connection is re-established (PQreset, statements prepared
 * again) once per call and the statement retried once, unless rows were
 * already handed to the caller; otherwise the call fails with -EIO and
 * the server's (or libpq's) message. No message carries the password.
 *
 * The connection (store_pg_conn.c) is non-blocking and every statement has a deadline
 * (vg_store_set_timeout): a server that accepts but never answers (hung,
 * stopped, a lock held for ever) fails the call with -ETIMEDOUT instead of
 * holding the verifier; the connection, with its statement still pending,
 * is dropped and the next call makes a new one.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>
#include <openssl/crypto.h>

#include "store_pg_conn.h"

static int pg_agent_put(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct store_val v[STORE_AGENT_NCOLS];
	struct params p = { 0 };
	int r;

	store_agent_encode(a, v);
	store_pg_vals(&p, store_agent_cols, v, STORE_AGENT_NCOLS);
	r = store_pg_run(ctx, S_AGENT_PUT, &p, NULL, NULL, NULL, "agent put", diag);
	return r < 0 ? r : 0;
}

static int pg_agent_update(void *ctx, const struct vg_store_agent *old,
			   const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct store_val v[STORE_AGENT_NCOLS], ov[STORE_AGENT_NCOLS];
	struct params p = { 0 };
	long n = 0;
	int r;

	store_agent_encode(a, v);
	store_agent_encode(old, ov);
	store_pg_vals(&p, store_agent_cols, v, STORE_AGENT_NCOLS);
	for (int k = 0; k < STORE_GUARD_NCOLS; k++)
		store_pg_vals(&p, &store_agent_cols[store_agent_guard[k]], &ov[store_agent_guard[k]], 1);
	r = store_pg_run(ctx, S_AGENT_UPDATE, &p, NULL, NULL, &n, "agent update", diag);
	return r < 0 ? r : n == 1 ? 0 : -ESTALE;
}

struct get_arg {
	struct vg_store_agent *a;
	int r;				/* 0 or -EBADMSG */
};

/* an agent's row and its scheduling columns. Return: 0, -EBADMSG. */
static int agent_row(const PGresult *res, struct vg_store_agent *a)
{
	struct store_val v[STORE_AGENT_NCOLS + STORE_SCHED_NCOLS];
	struct store_col cols[STORE_AGENT_NCOLS + STORE_SCHED_NCOLS];

	memcpy(cols, store_agent_cols, sizeof(store_agent_cols));
	memcpy(cols + STORE_AGENT_NCOLS, store_sched_cols, sizeof(store_sched_cols));
	if (store_pg_row(res, cols, v, STORE_AGENT_NCOLS + STORE_SCHED_NCOLS) < 0 ||
	    store_agent_decode(v, a) < 0)
		return -EBADMSG;
	store_sched_decode(v + STORE_AGENT_NCOLS, a);
	return 0;
}

static int get_row(void *arg, const PGresult *res)
{
	struct get_arg *g = arg;

	g->r = agent_row(res, g->a);
	return 0;
}

static int pg_agent_get(void *ctx, const char *id, struct vg_store_agent *ret, struct vg_diag *diag)
{
	struct get_arg g = { ret, 0 };
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, id, strlen(id));
	r = store_pg_run(ctx, S_AGENT_GET, &p, get_row, &g, &n, "agent get", diag);
	if (r < 0)
		return r;
	if (n == 0)
		return -ENOENT;
	return g.r < 0 ? vg_diag_set(diag, -EBADMSG, "store: agent %s: bad row", id) : 0;
}

static int pg_agent_find(void *ctx, unsigned int key, const uint8_t *val, size_t len,
			 const char *except, struct vg_store_agent *ret, struct vg_diag *diag)
{
	struct get_arg g = { ret, 0 };
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, val, len);
	store_pg_bytes(&p, except, strlen(except));
	r = store_pg_run(ctx, S_AGENT_FIND_EK + (int)key, &p, get_row, &g, &n, "agent find", diag);
	if (r < 0)
		return r;
	if (n == 0)
		return -ENOENT;
	return g.r < 0 ? vg_diag_set(diag, -EBADMSG, "store: agent find: bad row") : 0;
}

static int pg_agent_del(void *ctx, const char *id, struct vg_diag *diag)
{
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, id, strlen(id));
	r = store_pg_run(ctx, S_AGENT_DEL, &p, NULL, NULL, &n, "agent delete", diag);
	return r < 0 ? r : n == 0 ? -ENOENT : 0;
}

struct list_arg {
	struct pg *q;
	vg_store_agent_cb cb;
	void *arg;
};

static int list_row(void *arg, const PGresult *res)
{
	struct list_arg *l = arg;

	if (agent_row(res, &l->q->row) < 0)
		return 0;	/* a row that does not decode is skipped, not fatal (as in SQLite) */
	return l->cb(l->arg, &l->q->row);
}

static int pg_agent_list(void *ctx, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	struct list_arg l = { ctx, cb, arg };

	return store_pg_run(ctx, S_AGENT_LIST, NULL, list_row, &l, NULL, "agent list", diag);
}

static int pg_policy_put(void *ctx, const char *name, const char *doc, size_t len,
			 struct vg_diag *diag)
{
	struct params p = { 0 };
	int r;

	if (len > INT32_MAX)
		return vg_diag_set(diag, -EIO, "store: policy %s: too large", name);
	store_pg_bytes(&p, name, strlen(name));
	store_pg_bytes(&p, doc, len);
	r = store_pg_run(ctx, S_POLICY_PUT, &p, NULL, NULL, NULL, "policy put", diag);
	return r < 0 ? r : 0;
}

struct doc_arg {
	char *s;
	size_t len;
};

static int doc_row(void *arg, const PGresult *res)
{
	struct doc_arg *d = arg;
	size_t n;

	if (PQnfields(res) != 1 || d->s)
		return 0;
	n = (size_t)PQgetlength(res, 0, 0);
	d->s = malloc(n + 1);
	if (!d->s)
		return -ENOMEM;
	memcpy(d->s, PQgetvalue(res, 0, 0), n);
	d->s[n] = 0;
	d->len = n;
	return 0;
}

static int pg_policy_get(void *ctx, const char *name, char **ret, size_t *len,
			 struct vg_diag *diag)
{
	struct doc_arg d = { 0 };
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, name, strlen(name));
	r = store_pg_run(ctx, S_POLICY_GET, &p, doc_row, &d, &n, "policy get", diag);
	if (r < 0) {
		free(d.s);
		return r;
	}
	if (n == 0 || !d.s)
		return -ENOENT;
	*ret = d.s;
	*len = d.len;
	return 0;
}

static int pg_policy_del(void *ctx, const char *name, struct vg_diag *diag)
{
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, name, strlen(name));
	r = store_pg_run(ctx, S_POLICY_DEL, &p, NULL, NULL, &n, "policy delete", diag);
	return r < 0 ? r : n == 0 ? -ENOENT : 0;
}

static int pg_verdict_add(void *ctx, const char *id, const struct vg_store_verdict *v,
			  struct vg_diag *diag)
{
	struct store_val vals[STORE_VERDICT_NCOLS];
	struct params p = { 0 };
	int r;

	store_pg_bytes(&p, id, strlen(id));
	store_verdict_encode(v, vals);
	store_pg_vals(&p, store_verdict_cols, vals, STORE_VERDICT_NCOLS);
	r = store_pg_run(ctx, S_VERDICT_ADD, &p, NULL, NULL, NULL, "verdict add", diag);
	return r < 0 ? r : 0;
}

struct vlist_arg {
	vg_store_verdict_cb cb;
	void *arg;
};

static int verdict_row(void *arg, const PGresult *res)
{
	struct vlist_arg *l = arg;
	struct store_val vals[STORE_VERDICT_NCOLS];
	struct vg_store_verdict v;

	if (store_pg_row(res, store_verdict_cols, vals, STORE_VERDICT_NCOLS) < 0)
		memset(vals, 0, sizeof(vals));	/* SQLite reads a mistyped column as 0 / "" */
	store_verdict_decode(vals, &v);
	return l->cb(l->arg, &v);
}

static int pg_verdict_list(void *ctx, const char *id, size_t max, vg_store_verdict_cb cb,
			   void *arg, struct vg_diag *diag)
{
	struct vlist_arg l = { cb, arg };
	struct params p = { 0 };

	store_pg_bytes(&p, id, strlen(id));
	if (max > INT64_MAX)
		store_pg_null(&p);		/* LIMIT NULL: all, as SQLite's negative LIMIT */
	else
		store_pg_int(&p, (int64_t)max);
	return store_pg_run(ctx, S_VERDICT_LIST, &p, verdict_row, &l, NULL, "verdict list", diag);
}

struct due_arg {
	vg_store_due_cb cb;
	void *arg;
	int ret;
};

static int due_row(void *arg, const PGresult *res)
{
	static const struct store_col cols[12] = {
		{ "id", STORE_TEXT }, { "state", STORE_INT }, { "push", STORE_INT },
		{ "registered_at", STORE_INT }, { "last_ok", STORE_INT }, { "last_seen", STORE_INT },
		{ "next_due", STORE_INT }, { "lease_until", STORE_INT }, { "lease_owner", STORE_TEXT },
		{ "stale", STORE_INT }, { "quiet_ms", STORE_INT }, { "pushed_ms", STORE_INT },
	};
	struct due_arg *c = arg;
	struct store_val v[12];
	struct vg_store_due a;

	if (c->ret)
		return 0;
	if (store_pg_row(res, cols, v, 12) < 0 || v[0].len >= sizeof(a.id) ||
	    v[8].len >= sizeof(a.lease_owner))
		return -EBADMSG;
	memcpy(a.id, v[0].p, v[0].len);
	a.id[v[0].len] = 0;
	if (v[8].len)
		memcpy(a.lease_owner, v[8].p, v[8].len);
	a.lease_owner[v[8].len] = 0;
	a.state = (unsigned int)v[1].i;
	a.push = v[2].i != 0;
	a.registered_at = v[3].i;
	a.last_ok = v[4].i;
	a.last_seen = v[5].i;
	a.next_due = v[6].i;
	a.lease_until = v[7].i;
	a.stale = v[9].i != 0;
	a.quiet_ms = v[10].i;
	a.pushed_ms = v[11].i;
	c->ret = c->cb(c->arg, &a);
	return 0;
}

static int pg_agent_due(void *ctx, int64_t before, vg_store_due_cb cb, void *arg,
			struct vg_diag *diag)
{
	struct due_arg c = { cb, arg, 0 };
	struct params p = { 0 };
	int r;

	store_pg_int(&p, before);
	r = store_pg_run(ctx, S_AGENT_DUE, &p, due_row, &c, NULL, "agent due", diag);
	if (r == -EBADMSG)
		return vg_diag_set(diag, r, "store: agent due: a row that does not decode");
	return r < 0 ? r : c.ret;
}

static int states_row(void *arg, const PGresult *res)
{
	static const struct store_col cols[2] = { { "state", STORE_INT }, { "count", STORE_INT } };
	uint64_t *n = arg;
	struct store_val v[2];

	if (store_pg_row(res, cols, v, 2) < 0)
		return -EBADMSG;
	if (v[0].i >= 0 && v[0].i < VG_STORE_STATES)
		n[v[0].i] = (uint64_t)v[1].i;
	return 0;
}

static int pg_agent_states(void *ctx, uint64_t n[VG_STORE_STATES], struct vg_diag *diag)
{
	int r = store_pg_run(ctx, S_AGENT_STATES, NULL, states_row, n, NULL, "agent states", diag);

	if (r == -EBADMSG)
		return vg_diag_set(diag, r, "store: agent states: a row that does not decode");
	return r < 0 ? r : 0;
}

struct claim_arg {
	vg_store_lease_cb cb;
	void *arg;
	int ret;
};

static int claim_row(void *arg, const PGresult *res)
{
	static const struct store_col cols[2] = { { "id", STORE_TEXT }, { "next_due", STORE_INT } };
	struct claim_arg *c = arg;
	struct store_val v[2];
	char id[sizeof(((struct vg_store_agent *)0)->id)];

	/* every row is claimed already: each is handed over, whatever the callback said */
	if (c->ret || store_pg_row(res, cols, v, 2) < 0 || v[0].len >= sizeof(id))
		return 0;
	memcpy(id, v[0].p, v[0].len);
	id[v[0].len] = 0;
	c->ret = c->cb(c->arg, id, v[1].i);
	return 0;
}

static int pg_lease_claim(void *ctx, const char *owner, int64_t now, int64_t lease_ms,
			  unsigned int max, vg_store_lease_cb cb, void *arg, struct vg_diag *diag)
{
	struct claim_arg c = { cb, arg, 0 };
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, owner, strlen(owner));
	store_pg_int(&p, now);
	store_pg_int(&p, lease_ms);
	store_pg_int(&p, max);
	r = store_pg_run(ctx, S_LEASE_CLAIM, &p, claim_row, &c, &n, "lease claim", diag);
	if (r < 0)
		return r;
	return c.ret < 0 ? c.ret : (int)n;
}

/*
 * A lease of @owner on @id ends: @stmt (S_LEASE_RELEASE: @v the next due
 * time; S_LEASE_DROP: @v the lease's end, the due time kept). Return: 0,
 * -ESTALE (no such lease), -EIO.
 */
static int lease_end(void *ctx, int stmt, const char *id, const char *owner, int64_t v,
		     const char *what, struct vg_diag *diag)
{
	struct params p = { 0 };
	long n = 0;
	int r;

	store_pg_bytes(&p, id, strlen(id));
	store_pg_bytes(&p, owner, strlen(owner));
	store_pg_int(&p, v);
	r = store_pg_run(ctx, stmt, &p, NULL, NULL, &n, what, diag);
	return r < 0 ? r : n == 1 ? 0 : -ESTALE;
}

static int pg_lease_release(void *ctx, const char *id, const char *owner, int64_t next_due,
			    struct vg_diag *diag)
{
	return lease_end(ctx, S_LEASE_RELEASE, id, owner, next_due, "lease release", diag);
}

static int pg_lease_drop(void *ctx, const char *id, const char *owner, int64_t lease_until,
			 struct vg_diag *diag)
{
	return lease_end(ctx, S_LEASE_DROP, id, owner, lease_until, "lease drop", diag);
}

struct take_arg {
	vg_store_agent_cb cb;
	void *arg;
	struct vg_store_agent *a;
	int ret, n;
};

static int take_row(void *arg, const PGresult *res)
{
	struct take_arg *t = arg;

	/* claimed already: a row not handed over stays leased until its lease ends */
	if (t->ret)
		return 0;
	if (agent_row(res, t->a) < 0) {
		t->ret = -EBADMSG;
		return 0;
	}
	t->ret = t->cb(t->arg, t->a);
	t->n += !t->ret;
	return 0;
}

static int pg_lease_take(void *ctx, const char *done, int64_t next_due, const char *owner,
			 int64_t now, int64_t lease_ms, unsigned int max, vg_store_agent_cb cb,
			 void *arg, struct vg_diag *diag)
{
	struct take_arg t = { cb, arg, NULL, 0, 0 };
	struct params p = { 0 };
	int r;

	if (done && done[0]) {
		r = pg_lease_release(ctx, done, owner, next_due, diag);
		if (r < 0 && r != -ESTALE)
			return r;
	}
	if (!max)
		return 0;
	t.a = malloc(sizeof(*t.a));
	if (!t.a)
		return vg_diag_set(diag, -ENOMEM, "store: lease take: out of memory");
	store_pg_bytes(&p, owner, strlen(owner));
	store_pg_int(&p, now);
	store_pg_int(&p, lease_ms);
	store_pg_int(&p, max);
	/* the claim returns the claimed rows: no agent_get each */
	r = store_pg_run(ctx, S_LEASE_TAKE, &p, take_row, &t, NULL, "lease take", diag);
	free(t.a);
	if (r < 0)
		return r;
	if (t.ret == -EBADMSG)
		return vg_diag_set(diag, -EBADMSG, "store: lease take: a row that does not decode");
	return t.ret ? t.ret : t.n;
}

static int pg_verifier_beat(void *ctx, const struct vg_store_verifier *v, struct vg_diag *diag)
{
	struct store_val vals[STORE_VERIFIER_NCOLS];
	struct params p = { 0 };
	int r;

	store_verifier_encode(v, vals);
	store_pg_vals(&p, store_verifier_cols, vals, STORE_VERIFIER_NCOLS);
	store_pg_int(&p, v->beat - STORE_VERIFIER_FORGET_MS);
	r = store_pg_run(ctx, S_VERIFIER_BEAT, &p, NULL, NULL, NULL, "verifier beat", diag);
	return r < 0 ? r : 0;
}

struct vrf_arg {
	vg_store_verifier_cb cb;
	void *arg;
};

static int verifier_row(void *arg, const PGresult *res)
{
	struct vrf_arg *l = arg;
	struct store_val vals[STORE_VERIFIER_NCOLS];
	struct vg_store_verifier v;

	if (store_pg_row(res, store_verifier_cols, vals, STORE_VERIFIER_NCOLS) < 0)
		return 0;
	store_verifier_decode(vals, &v);
	return l->cb(l->arg, &v);
}

static int pg_verifier_list(void *ctx, vg_store_verifier_cb cb, void *arg, struct vg_diag *diag)
{
	struct vrf_arg l = { cb, arg };

	return store_pg_run(ctx, S_VERIFIER_LIST, NULL, verifier_row, &l, NULL, "verifier list", diag);
}

static void pg_close(void *ctx)
{
	struct pg *q = ctx;

	PQfinish(q->c);
	OPENSSL_cleanse(&q->sec, sizeof(q->sec));
	free(q);
}

static const struct vg_store_ops pg_ops = {
	.agent_put = pg_agent_put,
	.agent_get = pg_agent_get,
	.agent_find = pg_agent_find,
	.agent_del = pg_agent_del,
	.agent_list = pg_agent_list,
	.agent_update = pg_agent_update,
	.policy_put = pg_policy_put,
	.policy_get = pg_policy_get,
	.policy_del = pg_policy_del,
	.verdict_add = pg_verdict_add,
	.verdict_list = pg_verdict_list,
	.lease_claim = pg_lease_claim,
	.agent_due = pg_agent_due,
	.agent_states = pg_agent_states,
	.lease_take = pg_lease_take,
	.lease_release = pg_lease_release,
	.lease_drop = pg_lease_drop,
	.verifier_beat = pg_verifier_beat,
	.verifier_list = pg_verifier_list,
	.push = store_pg_push,
	.close = pg_close,
	.set_timeout = store_pg_set_timeout,
};

/* Return: 0, or -EIO with @msg. */
static int create_schema(struct pg *q, char *msg, size_t cap)
{
	PGresult *res = PQexec(q->c, store_pg_schema_present);
	bool present = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		       strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	int r = 0;

	PQclear(res);
	if (present)
		return 0;	/* nothing to create: a role without CREATE rights can use it */
	res = PQexec(q->c, store_pg_schema);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		const char *pm = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

		store_secrets_clean(&q->sec, pm ? pm : PQerrorMessage(q->c), msg, cap);
		r = -EIO;
	}
	PQclear(res);
	if (r < 0)
		PQclear(PQexec(q->c, "ROLLBACK"));
	return r;
}

int vg_store_pg_open(const char *url, struct vg_store **ret, struct vg_diag *diag)
{
	static const char *const kw[] = { "connect_timeout", "fallback_application_name", "dbname",
					  NULL };
	const char *vals[] = { "10", "vigil", url, NULL };
	struct vg_store *s = calloc(1, sizeof(*s));
	struct pg *q = calloc(1, sizeof(*q));
	char msg[512];
	int r;

	if (!s || !q) {
		free(s);
		free(q);
		return -ENOMEM;
	}
	vg_store_url_scrub(url, q->url, sizeof(q->url));
	store_secrets_remember(&q->sec, url);
	if (strncmp(url, "postgresql://", 13) != 0 && strncmp(url, "postgres://", 11) != 0 &&
	    !strchr(url, '=')) {
		r = vg_diag_set(diag, -EINVAL, "store: %s: not a postgresql:// URL or a libpq "
				"conninfo string", q->url);
		goto fail;
	}
	r = store_pg_sql_build(q->sql);
	if (r < 0) {
		vg_diag_set(diag, r, "store: statements too long");
		goto fail;
	}
	/* later keywords override: the URL's own connect_timeout wins over ours */
	q->c = PQconnectdbParams(kw, vals, 1);
	if (!q->c) {
		r = -ENOMEM;
		goto fail;
	}
	if (PQstatus(q->c) != CONNECTION_OK) {
		r = store_pg_conn_err(q, diag, "connect");
		goto fail;
	}
	PQsetNoticeProcessor(q->c, store_pg_no_notices, NULL);
	q->timeout_ms = STORE_TIMEOUT_MS;
	if (create_schema(q, msg, sizeof(msg)) < 0) {
		r = vg_diag_set(diag, -EIO, "store: %s: schema: %s", q->url, msg);
		goto fail;
	}
	if (store_pg_prepare_all(q, msg, sizeof(msg)) < 0) {
		r = vg_diag_set(diag, -EIO, "store: %s: %s", q->url, msg);
		goto fail;
	}
	if (PQsetnonblocking(q->c, 1) != 0) {
		r = store_pg_conn_err(q, diag, "non-blocking mode");
		goto fail;
	}
	s->ops = &pg_ops;
	s->ctx = q;
	*ret = s;
	return 0;
fail:
	PQfinish(q->c);
	OPENSSL_cleanse(&q->sec, sizeof(q->sec));
	free(q);
	free(s);
	return r;
}
