// SPDX-License-Identifier: MIT
/*
 * store_pg_conn.c - the PostgreSQL backend's connection: non-blocking,
 * every statement with a deadline (vg_store_set_timeout), prepared once
 * per connection and run with binary parameters and results in
 * single-row mode; a lost connection re-established (PQreset, statements
 * prepared again) once per call. What the statements are and what their
 * rows mean is store_pg.c's (and store_pg_sql.c's).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_pg_conn.h"

void store_pg_no_notices(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

int store_pg_conn_err(struct pg *q, struct vg_diag *diag, const char *what)
{
	char m[512];

	store_secrets_clean(&q->sec, PQerrorMessage(q->c), m, sizeof(m));
	return vg_diag_set(diag, -EIO, "store: %s: %s: %s", q->url, what, m);
}

/* Return: 0, or -EIO with @msg. */
int store_pg_prepare_all(struct pg *q, char *msg, size_t cap)
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
	return store_pg_prepare_all(q, msg, cap);
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

void store_pg_set_timeout(void *ctx, unsigned int ms)
{
	struct pg *q = ctx;

	q->timeout_ms = ms ? ms : 1;
}

void store_pg_bytes(struct params *p, const void *b, size_t len)
{
	p->vals[p->n] = b ? b : "";
	p->lens[p->n] = (int)len;
	p->fmts[p->n++] = 1;
}

void store_pg_int(struct params *p, int64_t v)
{
	uint64_t u = (uint64_t)v;

	for (int i = 0; i < 8; i++)
		p->ints[p->n][i] = (uint8_t)(u >> (56 - 8 * i));
	store_pg_bytes(p, p->ints[p->n], 8);
}

void store_pg_null(struct params *p)
{
	p->vals[p->n] = NULL;
	p->lens[p->n] = 0;
	p->fmts[p->n++] = 1;
}

void store_pg_vals(struct params *p, const struct store_col *cols, const struct store_val *v, int n)
{
	for (int i = 0; i < n; i++)
		if (cols[i].type == STORE_INT)
			store_pg_int(p, v[i].i);
		else
			store_pg_bytes(p, v[i].p, v[i].len);
}

/*
 * run - statement @stmt with @p; @fn (may be NULL) for each row. *@rows:
 * rows returned or affected. Reconnects and retries once on a lost
 * connection when no row was handed out yet.
 * Return: @fn's non-zero value, 0, or -EIO (diag: "store: @what: message").
 */
int store_pg_run(struct pg *q, int stmt, const struct params *p, store_pg_row_fn fn, void *arg, long *rows,
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
int store_pg_row(const PGresult *res, const struct store_col *cols, struct store_val *v, int n)
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