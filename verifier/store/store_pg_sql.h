/* SPDX-License-Identifier: MIT */
/*
 * store_pg_sql.h - the SQL of the PostgreSQL backend (store_pg_sql.c):
 * its prepared statements, by number and name, and its schema.
 */
#ifndef VIGIL_STORE_PG_SQL_H
#define VIGIL_STORE_PG_SQL_H

#include "store.h"

/* the longest statement text */
#define STORE_PG_SQL_MAX 2048

enum {
	S_AGENT_PUT,
	S_AGENT_GET,
	S_AGENT_DEL,
	S_AGENT_LIST,
	S_AGENT_UPDATE,
	S_POLICY_PUT,
	S_POLICY_GET,
	S_POLICY_DEL,
	S_VERDICT_ADD,
	S_VERDICT_LIST,
	S_LEASE_CLAIM,
	S_LEASE_RELEASE,
	S_VERIFIER_BEAT,
	S_VERIFIER_LIST,
	S_AGENT_FIND_EK,	/* then _AK and _URL: in enum vg_store_key's order */
	S_AGENT_FIND_AK,
	S_AGENT_FIND_URL,
	S_AGENT_DUE,
	S_AGENT_STATES,
	S_LEASE_TAKE,
	S_PUSH_REG_PUT,		/* the push op's (store_pg_push.c) */
	S_PUSH_REG_TAKE,
	S_PUSH_CHAL_PUT,
	S_PUSH_CHAL_TAKE,
	S_PUSH_WHY_NOT,
	S_PUSH_DONE,
	S_PUSH_CAS_STALE,	/* then _QUIET: in VG_STORE_PUSH_COL_*'s order */
	S_PUSH_CAS_QUIET,
	S_LEASE_DROP,
	S__COUNT
};

extern const char *const store_pg_stmt_names[S__COUNT];
/* a query answering "t" when the schema needs nothing: tables, columns and indexes there */
extern const char store_pg_schema_present[];
/* the schema and its migrations, one transaction under an advisory lock */
extern const char store_pg_schema[];

/* The text of every statement into @sql. Return: 0, -ENAMETOOLONG. */
int store_pg_sql_build(char (*sql)[STORE_PG_SQL_MAX]);

#endif
