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
 * The connection is non-blocking and every statement has a deadline
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

#include "store_row.h"
#include "store_secret.h"

#include "store_pg_sql.h"

struct pg {
	PGconn *c;
	bool prepared;			/* the statements exist on this connection */
	char url[512];			/* scrubbed, for messages */
	struct store_secrets sec;	/* passwords of the URL: never in a message */
	char sql[S__COUNT][STORE_PG_SQL_MAX];
	struct vg_store_agent row;	/* agent_list's row */
	unsigned int timeout_ms;	/* per statement */
};

static void no_notices(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static int conn_err(struct pg *q, struct vg_diag *diag, const char *what)
{
	char m[512];

	store_secrets_clean(&q->sec, PQerrorMessage(q->c), m, sizeof(m));
	return vg_diag_set(diag, -EIO, "store: %s: %s: %s", q->url, what, m);
}

/* Return: 0, or -EIO with @msg. */
static int prepare_all(struct pg *q, char *msg, size_t cap)
{
	PGresult *res = PQexec(q->c, "DEALLOCATE ALL");

	PQclear(res);
	for (int i = 0; i < S__COUNT; i++) {
		res = PQprepare(q->c, store_pg_stmt_names[i], q->sql[i], 0, NULL);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			const char *pm = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
			char m[400];

			store_secrets_clean(&q->sec, pm ? pm : PQerrorMessage(q->c), m, sizeof(m));
			snprintf(msg, cap, "prepare %s: %s", store_pg_stmt_names[i], m);
			PQclear(res);
			return -EIO;
		}
		PQclear(res);
	}
	q->prepared = true;
	return 0;
}

/* Return: 0, or -EIO with @msg. */
static int reconnect(struct pg *q, char *msg, size_t cap)
{
	q->prepared = false;
	PQreset(q->c);
	if (PQstatus(q->c) != CONNECTION_OK || PQsetnonblocking(q->c, 1) != 0) {
		store_secrets_clean(&q->sec, PQerrorMessage(q->c), msg, cap);
		return -EIO;
	}
	return prepare_all(q, msg, cap);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Wait for @events on the connection until @deadline. Return: 0, -ETIMEDOUT, -EIO. */
static int wait_conn(struct pg *q, short events, int64_t deadline)
{
	struct pollfd p = { .fd = PQsocket(q->c), .events = events };

	for (;;) {
		int64_t left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -EIO;
	}
}

/*
 * Send what libpq holds and wait until a result can be read without
 * blocking. Return: 0 (PQgetResult will not block; it may carry an
 * error), -ETIMEDOUT.
 */
static int pump(struct pg *q, int64_t deadline)
{
	int f;

	while ((f = PQflush(q->c)) == 1) {
		if (wait_conn(q, POLLIN | POLLOUT, deadline) == -ETIMEDOUT)
			return -ETIMEDOUT;
		if (!PQconsumeInput(q->c))
			return 0;
	}
	if (f < 0)
		return 0;
	while (PQisBusy(q->c)) {
		if (wait_conn(q, POLLIN, deadline) == -ETIMEDOUT)
			return -ETIMEDOUT;
		if (!PQconsumeInput(q->c))
			return 0;
	}
	return 0;
}

static void pg_set_timeout(void *ctx, unsigned int ms)
{
	struct pg *q = ctx;

	q->timeout_ms = ms ? ms : 1;
}

/* called for each row; non-zero stops the calls (the rest is drained) and is returned */
typedef int (*row_fn)(void *arg, const PGresult *res);

#define PARAMS_MAX (STORE_AGENT_NCOLS + STORE_GUARD_NCOLS)

struct params {
	int n;
	const char *vals[PARAMS_MAX];
	int lens[PARAMS_MAX];
	int fmts[PARAMS_MAX];
	uint8_t ints[PARAMS_MAX][8];
};

static void p_bytes(struct params *p, const void *b, size_t len)
{
	p->vals[p->n] = b ? b : "";
	p->lens[p->n] = (int)len;
	p->fmts[p->n++] = 1;
}

static void p_int(struct params *p, int64_t v)
{
	uint64_t u = (uint64_t)v;

	for (int i = 0; i < 8; i++)
		p->ints[p->n][i] = (uint8_t)(u >> (56 - 8 * i));
	p_bytes(p, p->ints[p->n], 8);
}

static void p_null(struct params *p)
{
	p->vals[p->n] = NULL;
	p->lens[p->n] = 0;
	p->fmts[p->n++] = 1;
}

static void p_vals(struct params *p, const struct store_col *cols, const struct store_val *v, int n)
{
	for (int i = 0; i < n; i++)
		if (cols[i].type == STORE_INT)
			p_int(p, v[i].i);
		else
			p_bytes(p, v[i].p, v[i].len);
}

/*
 * run - statement @stmt with @p; @fn (may be NULL) for each row. *@rows:
 * rows returned or affected. Reconnects and retries once on a lost
 * connection when no row was handed out yet.
 * Return: @fn's non-zero value, 0, or -EIO (diag: "store: @what: message").
 */
static int run(struct pg *q, int stmt, const struct params *p, row_fn fn, void *arg, long *rows,
	       const char *what, struct vg_diag *diag)
{
	bool retried = false;
	char msg[512];

	for (;;) {
		long n = 0, affected = 0;
		int64_t deadline = now_ms() + q->timeout_ms;
		bool failed = false;
		PGresult *res;
		int ret = 0;

		msg[0] = 0;
		if (PQstatus(q->c) != CONNECTION_OK || !q->prepared) {
			/* lost during an earlier call: this call's one reconnection */
			retried = true;
			if (reconnect(q, msg, sizeof(msg)) < 0)
				return vg_diag_set(diag, -EIO, "store: %s: no connection to the database: %s",
						   what, msg);
		}
		if (!PQsendQueryPrepared(q->c, store_pg_stmt_names[stmt], p ? p->n : 0, p ? p->vals : NULL,
					 p ? p->lens : NULL, p ? p->fmts : NULL, 1)) {
			store_secrets_clean(&q->sec, PQerrorMessage(q->c), msg, sizeof(msg));
			failed = true;
		} else {
			PQsetSingleRowMode(q->c);
			for (;;) {
				if (pump(q, deadline) == -ETIMEDOUT) {
					/* the statement is still pending there: this connection is done */
					q->prepared = false;
					return vg_diag_set(diag, -ETIMEDOUT, "store: %s: the database did "
							   "not answer within %u ms", what,
							   q->timeout_ms);
				}
				res = PQgetResult(q->c);
				if (!res)
					break;
				switch (PQresultStatus(res)) {
				case PGRES_SINGLE_TUPLE:
					n++;
					if (!ret && fn)
						ret = fn(arg, res);
					break;
				case PGRES_TUPLES_OK:
					break;
				case PGRES_COMMAND_OK:
					affected = strtol(PQcmdTuples(res), NULL, 10);
					break;
				default:
					if (!failed) {
						const char *pm = PQresultErrorField(res,
									PG_DIAG_MESSAGE_PRIMARY);

						store_secrets_clean(&q->sec, pm ? pm : PQerrorMessage(q->c), msg, sizeof(msg));
						failed = true;
					}
					break;
				}
				PQclear(res);
			}
		}
		if (!failed) {
			if (rows)
				*rows = n ? n : affected;
			return ret;
		}
		if (PQstatus(q->c) != CONNECTION_BAD || retried || n > 0)
			return vg_diag_set(diag, -EIO, "store: %s: %s", what, msg);
		retried = true;
		{
			char rm[256];

			/* what reconnecting says comes first: the diag holds 255 bytes */
			if (reconnect(q, rm, sizeof(rm)) < 0)
				return vg_diag_set(diag, -EIO, "store: %s: connection lost, reconnecting "
						   "failed: %s (%s)", what, rm, msg);
		}
	}
}

/* the values of the row of @res, checked against @cols. Return: 0, -EBADMSG. */
static int row_vals(const PGresult *res, const struct store_col *cols, struct store_val *v, int n)
{
	if (PQnfields(res) != n)
		return -EBADMSG;
	for (int i = 0; i < n; i++) {
		const uint8_t *b = (const uint8_t *)PQgetvalue(res, 0, i);
		int len = PQgetlength(res, 0, i);

		memset(&v[i], 0, sizeof(v[i]));
		if (PQgetisnull(res, 0, i))
			continue;
		if (cols[i].type != STORE_INT) {
			v[i].p = b;
			v[i].len = (size_t)len;
			continue;
		}
		if (len != 8)
			return -EBADMSG;
		for (int k = 0; k < 8; k++)
			v[i].i = (int64_t)((uint64_t)v[i].i << 8 | b[k]);
	}
	return 0;
}

static int pg_agent_put(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct store_val v[STORE_AGENT_NCOLS];
	struct params p = { 0 };
	int r;

	store_agent_encode(a, v);
	p_vals(&p, store_agent_cols, v, STORE_AGENT_NCOLS);
	r = run(ctx, S_AGENT_PUT, &p, NULL, NULL, NULL, "agent put", diag);
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
	p_vals(&p, store_agent_cols, v, STORE_AGENT_NCOLS);
	for (int k = 0; k < STORE_GUARD_NCOLS; k++)
		p_vals(&p, &store_agent_cols[store_agent_guard[k]], &ov[store_agent_guard[k]], 1);
	r = run(ctx, S_AGENT_UPDATE, &p, NULL, NULL, &n, "agent update", diag);
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
	if (row_vals(res, cols, v, STORE_AGENT_NCOLS + STORE_SCHED_NCOLS) < 0 ||
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

	p_bytes(&p, id, strlen(id));
	r = run(ctx, S_AGENT_GET, &p, get_row, &g, &n, "agent get", diag);
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

	p_bytes(&p, val, len);
	p_bytes(&p, except, strlen(except));
	r = run(ctx, S_AGENT_FIND_EK + (int)key, &p, get_row, &g, &n, "agent find", diag);
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

	p_bytes(&p, id, strlen(id));
	r = run(ctx, S_AGENT_DEL, &p, NULL, NULL, &n, "agent delete", diag);
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

	return run(ctx, S_AGENT_LIST, NULL, list_row, &l, NULL, "agent list", diag);
}

static int pg_policy_put(void *ctx, const char *name, const char *doc, size_t len,
			 struct vg_diag *diag)
{
	struct params p = { 0 };
	int r;

	if (len > INT32_MAX)
		return vg_diag_set(diag, -EIO, "store: policy %s: too large", name);
	p_bytes(&p, name, strlen(name));
	p_bytes(&p, doc, len);
	r = run(ctx, S_POLICY_PUT, &p, NULL, NULL, NULL, "policy put", diag);
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

	p_bytes(&p, name, strlen(name));
	r = run(ctx, S_POLICY_GET, &p, doc_row, &d, &n, "policy get", diag);
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

	p_bytes(&p, name, strlen(name));
	r = run(ctx, S_POLICY_DEL, &p, NULL, NULL, &n, "policy delete", diag);
	return r < 0 ? r : n == 0 ? -ENOENT : 0;
}

static int pg_verdict_add(void *ctx, const char *id, const struct vg_store_verdict *v,
			  struct vg_diag *diag)
{
	struct store_val vals[STORE_VERDICT_NCOLS];
	struct params p = { 0 };
	int r;

	p_bytes(&p, id, strlen(id));
	store_verdict_encode(v, vals);
	p_vals(&p, store_verdict_cols, vals, STORE_VERDICT_NCOLS);
	r = run(ctx, S_VERDICT_ADD, &p, NULL, NULL, NULL, "verdict add", diag);
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

	if (row_vals(res, store_verdict_cols, vals, STORE_VERDICT_NCOLS) < 0)
		memset(vals, 0, sizeof(vals));	/* SQLite reads a mistyped column as 0 / "" */
	store_verdict_decode(vals, &v);
	return l->cb(l->arg, &v);
}

static int pg_verdict_list(void *ctx, const char *id, size_t max, vg_store_verdict_cb cb,
			   void *arg, struct vg_diag *diag)
{
	struct vlist_arg l = { cb, arg };
	struct params p = { 0 };

	p_bytes(&p, id, strlen(id));
	if (max > INT64_MAX)
		p_null(&p);		/* LIMIT NULL: all, as SQLite's negative LIMIT */
	else
		p_int(&p, (int64_t)max);
	return run(ctx, S_VERDICT_LIST, &p, verdict_row, &l, NULL, "verdict list", diag);
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
	if (c->ret || row_vals(res, cols, v, 2) < 0 || v[0].len >= sizeof(id))
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

	p_bytes(&p, owner, strlen(owner));
	p_int(&p, now);
	p_int(&p, lease_ms);
	p_int(&p, max);
	r = run(ctx, S_LEASE_CLAIM, &p, claim_row, &c, &n, "lease claim", diag);
	if (r < 0)
		return r;
	return c.ret < 0 ? c.ret : (int)n;
}

static int pg_lease_release(void *ctx, const char *id, const char *owner, int64_t next_due,
			    struct vg_diag *diag)
{
	struct params p = { 0 };
	long n = 0;
	int r;

	p_bytes(&p, id, strlen(id));
	p_bytes(&p, owner, strlen(owner));
	p_int(&p, next_due);
	r = run(ctx, S_LEASE_RELEASE, &p, NULL, NULL, &n, "lease release", diag);
	return r < 0 ? r : n == 1 ? 0 : -ESTALE;
}

static int pg_verifier_beat(void *ctx, const struct vg_store_verifier *v, struct vg_diag *diag)
{
	struct store_val vals[STORE_VERIFIER_NCOLS];
	struct params p = { 0 };
	int r;

	store_verifier_encode(v, vals);
	p_vals(&p, store_verifier_cols, vals, STORE_VERIFIER_NCOLS);
	p_int(&p, v->beat - STORE_VERIFIER_FORGET_MS);
	r = run(ctx, S_VERIFIER_BEAT, &p, NULL, NULL, NULL, "verifier beat", diag);
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

	if (row_vals(res, store_verifier_cols, vals, STORE_VERIFIER_NCOLS) < 0)
		return 0;
	store_verifier_decode(vals, &v);
	return l->cb(l->arg, &v);
}

static int pg_verifier_list(void *ctx, vg_store_verifier_cb cb, void *arg, struct vg_diag *diag)
{
	struct vrf_arg l = { cb, arg };

	return run(ctx, S_VERIFIER_LIST, NULL, verifier_row, &l, NULL, "verifier list", diag);
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
	.lease_release = pg_lease_release,
	.verifier_beat = pg_verifier_beat,
	.verifier_list = pg_verifier_list,
	.close = pg_close,
	.set_timeout = pg_set_timeout,
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
		r = conn_err(q, diag, "connect");
		goto fail;
	}
	PQsetNoticeProcessor(q->c, no_notices, NULL);
	q->timeout_ms = STORE_TIMEOUT_MS;
	if (create_schema(q, msg, sizeof(msg)) < 0) {
		r = vg_diag_set(diag, -EIO, "store: %s: schema: %s", q->url, msg);
		goto fail;
	}
	if (prepare_all(q, msg, sizeof(msg)) < 0) {
		r = vg_diag_set(diag, -EIO, "store: %s: %s", q->url, msg);
		goto fail;
	}
	if (PQsetnonblocking(q->c, 1) != 0) {
		r = conn_err(q, diag, "non-blocking mode");
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
