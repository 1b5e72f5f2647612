/* SPDX-License-Identifier: MIT */
/*
 * store_sqlite.h - what the SQLite backend's files share: its handle
 * (store_sqlite.c opens it), the push tables' schema and op
 * (store_sqlite_push.c).
 */
#ifndef VIGIL_STORE_SQLITE_H
#define VIGIL_STORE_SQLITE_H

#include <sqlite3.h>

#include "store.h"

struct sq {
	sqlite3 *db;
	sqlite3_stmt *put, *get, *update;	/* the per-round statements, prepared once */
};

/* the push tables (a store made before them gets them on its next open) */
extern const char store_sq_push_schema[];

/* store.h's push op */
int store_sq_push(void *ctx, unsigned int verb, struct vg_store_push_req *rq, struct vg_diag *diag);

#endif
