/* SPDX-License-Identifier: MIT */
/*
 * store_pg_conn.h - the PostgreSQL backend's connection (store_pg_conn.c)
 * for its operations (store_pg.c): one statement run with its deadline,
 * reconnecting once; parameters and result rows in binary.
 */
#ifndef VIGIL_STORE_PG_CONN_H
#define VIGIL_STORE_PG_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

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

/* called for each row; non-zero stops the calls (the rest is drained) and is returned */
typedef int (*store_pg_row_fn)(void *arg, const PGresult *res);

#define PARAMS_MAX (STORE_AGENT_NCOLS + STORE_GUARD_NCOLS)

struct params {
	int n;
	const char *vals[PARAMS_MAX];
	int lens[PARAMS_MAX];
	int fmts[PARAMS_MAX];
	uint8_t ints[PARAMS_MAX][8];
};

/* libpq's notices are not ours to print */
void store_pg_no_notices(void *arg, const char *msg);
/* Return: -EIO, the diag naming @what, the URL (scrubbed) and libpq's message. */
int store_pg_conn_err(struct pg *q, struct vg_diag *diag, const char *what);
/* Every statement prepared on the connection. Return: 0, or -EIO with @msg. */
int store_pg_prepare_all(struct pg *q, char *msg, size_t cap);
/* store.h's set_timeout */
void store_pg_set_timeout(void *ctx, unsigned int ms);
/* One more parameter: bytes, a BIGINT, NULL, a row's columns. */
void store_pg_bytes(struct params *p, const void *b, size_t len);
void store_pg_int(struct params *p, int64_t v);
void store_pg_null(struct params *p);
void store_pg_vals(struct params *p, const struct store_col *cols, const struct store_val *v,
		   int n);
/*
 * store_pg_run - statement @stmt with @p; @fn (may be NULL) for each row.
 * *@rows: rows returned or affected. Reconnects and retries once on a lost
 * connection when no row was handed out yet.
 * Return: @fn's non-zero value, 0, or -EIO (diag: "store: @what: message").
 */
int store_pg_run(struct pg *q, int stmt, const struct params *p, store_pg_row_fn fn, void *arg,
		 long *rows, const char *what, struct vg_diag *diag);
/* store.h's push op (store_pg_push.c) */
int store_pg_push(void *ctx, unsigned int verb, struct vg_store_push_req *rq, struct vg_diag *diag);
/* the values of the row of @res, checked against @cols. Return: 0, -EBADMSG. */
int store_pg_row(const PGresult *res, const struct store_col *cols, struct store_val *v, int n);

#endif
