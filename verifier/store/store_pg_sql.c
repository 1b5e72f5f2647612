// SPDX-License-Identifier: MIT
/*
 * store_pg_sql.c - the SQL of the PostgreSQL backend (store_pg.c, which
 * prepares and runs it): the schema (tables, migrations of a store made
 * by an older vigil, indexes), created by the first verifier under an
 * advisory lock, and the text of every prepared statement, made from the
 * column lists both backends share (store_row.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store_row.h"
#include "store_pg_sql.h"


const char *const store_pg_stmt_names[S__COUNT] = {
	"vg_agent_put", "vg_agent_get", "vg_agent_del", "vg_agent_list", "vg_agent_update",
	"vg_policy_put",
	"vg_policy_get", "vg_policy_del", "vg_verdict_add", "vg_verdict_list",
	"vg_lease_claim", "vg_lease_release", "vg_verifier_beat", "vg_verifier_list",
	"vg_agent_find_ek", "vg_agent_find_ak", "vg_agent_find_url", "vg_agent_due",
	"vg_agent_states", "vg_lease_take",
	"vg_push_reg_put", "vg_push_reg_take", "vg_push_chal_put", "vg_push_chal_take",
	"vg_push_why_not", "vg_push_done", "vg_push_cas_stale", "vg_push_cas_quiet",
	"vg_lease_drop",
};

/* agent_due's columns, in struct vg_store_due's order (store_pg.c's due_row) */
#define DUE_COLS "agents.id, state, (substring(url from 1 for 5) = 'push:'::bytea)::int::int8," \
	" registered_at," \
	" last_ok, last_seen, next_due, lease_until, lease_owner"

/* serialises schema creation between verifiers starting at once ("vigilsto") */
#define SCHEMA_LOCK "8532464671518848111"

const char store_pg_schema_present[] =
	"SELECT to_regclass('agents') IS NOT NULL AND to_regclass('policies') IS NOT NULL"
	" AND to_regclass('verdicts') IS NOT NULL AND to_regclass('verifiers') IS NOT NULL"
	" AND EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
	" AND table_name = 'agents' AND column_name = 'lease_until')"
	" AND to_regclass('agents_ek') IS NOT NULL"
	" AND to_regclass('push_state') IS NOT NULL AND to_regclass('push_regs') IS NOT NULL";

const char store_pg_schema[] =
	"BEGIN;"
	"SELECT pg_advisory_xact_lock(" SCHEMA_LOCK ");"
	"CREATE TABLE IF NOT EXISTS agents ("
	" id TEXT COLLATE \"C\" PRIMARY KEY, url BYTEA NOT NULL, policy TEXT COLLATE \"C\" NOT NULL,"
	" ek_pub BYTEA, ek_cert BYTEA, ak_pub BYTEA,"
	" state BIGINT NOT NULL, bank BIGINT NOT NULL, mask BIGINT NOT NULL,"
	" clock_valid BIGINT NOT NULL, clock BIGINT NOT NULL, reset_count BIGINT NOT NULL,"
	" restart_count BIGINT NOT NULL,"
	" log_entries BIGINT NOT NULL, log_offset BIGINT NOT NULL, log_pcr_algo BIGINT NOT NULL,"
	" log_pcr BYTEA, log_lag BIGINT NOT NULL,"
	" rounds BIGINT NOT NULL, reboots BIGINT NOT NULL, comm_errors BIGINT NOT NULL,"
	" registered_at BIGINT NOT NULL, last_ok BIGINT NOT NULL, last_seen BIGINT NOT NULL,"
	" last_fail TEXT NOT NULL, last_msg BYTEA NOT NULL,"
	" next_due BIGINT NOT NULL DEFAULT 0, lease_owner TEXT COLLATE \"C\" NOT NULL DEFAULT '',"
	" lease_until BIGINT NOT NULL DEFAULT 0, log_keys BYTEA, failure_count BIGINT NOT NULL DEFAULT 0,"
	" ek_key BYTEA, boot_next BYTEA);"
	/* a store made before the scheduling columns, before the keys learned, before failure_count */
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS next_due BIGINT NOT NULL DEFAULT 0;"
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS lease_owner TEXT COLLATE \"C\" NOT NULL DEFAULT '';"
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS lease_until BIGINT NOT NULL DEFAULT 0;"
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS log_keys BYTEA;"
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS failure_count BIGINT NOT NULL DEFAULT 0;"
	/* ... before ek_key (each agent's is made by its next write) */
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS ek_key BYTEA;"
	/* ... before the next boots' announcements (attest_announce.h) */
	"ALTER TABLE agents ADD COLUMN IF NOT EXISTS boot_next BYTEA;"
	"CREATE INDEX IF NOT EXISTS agents_due ON agents (next_due);"
	/* agent_find's lookups (a store made before them gets them) */
	"CREATE INDEX IF NOT EXISTS agents_ek ON agents (ek_key);"
	"CREATE INDEX IF NOT EXISTS agents_ak ON agents (ak_pub);"
	"CREATE INDEX IF NOT EXISTS agents_url ON agents (url);"
	"CREATE TABLE IF NOT EXISTS policies (name TEXT COLLATE \"C\" PRIMARY KEY, doc BYTEA NOT NULL);"
	"CREATE TABLE IF NOT EXISTS verdicts ("
	" seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, agent TEXT COLLATE \"C\" NOT NULL,"
	" time BIGINT NOT NULL, fail TEXT NOT NULL, entry BIGINT NOT NULL,"
	" path BYTEA NOT NULL, digest BYTEA NOT NULL, msg BYTEA NOT NULL);"
	"CREATE INDEX IF NOT EXISTS verdicts_agent ON verdicts (agent, seq);"
	"CREATE TABLE IF NOT EXISTS verifiers (id TEXT COLLATE \"C\" PRIMARY KEY, host BYTEA NOT NULL,"
	" pid BIGINT NOT NULL, started BIGINT NOT NULL, beat BIGINT NOT NULL,"
	" max_rounds BIGINT NOT NULL, running BIGINT NOT NULL, rounds BIGINT NOT NULL,"
	" late BIGINT NOT NULL);"
	/* push mode's state (store_pg_push.c; a store made before it gets it) */
	"CREATE TABLE IF NOT EXISTS push_state (id TEXT COLLATE \"C\" PRIMARY KEY,"
	" cred BYTEA NOT NULL DEFAULT '', nonce BYTEA NOT NULL DEFAULT '',"
	" bank BIGINT NOT NULL DEFAULT 0, mask BIGINT NOT NULL DEFAULT 0,"
	" issued_ms BIGINT NOT NULL DEFAULT 0, busy_until BIGINT NOT NULL DEFAULT 0,"
	" want_mask BIGINT NOT NULL DEFAULT 0, want_boot BIGINT NOT NULL DEFAULT 0,"
	" want_offset BIGINT NOT NULL DEFAULT 0, log_offset BIGINT NOT NULL DEFAULT 0,"
	" stale BIGINT NOT NULL DEFAULT 0, quiet_ms BIGINT NOT NULL DEFAULT 0,"
	" pushed_ms BIGINT NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS push_regs (id TEXT COLLATE \"C\" PRIMARY KEY,"
	" cred BYTEA NOT NULL, proof_hash BYTEA NOT NULL, reg_ms BIGINT NOT NULL, idn BYTEA NOT NULL);"
	"CREATE INDEX IF NOT EXISTS push_regs_ms ON push_regs (reg_ms);"
	"COMMIT";

#define ST_COLS "cred, nonce, bank, mask, issued_ms, busy_until, want_mask, want_boot," \
	" want_offset, log_offset, stale, quiet_ms, pushed_ms"

/* the push op's statements: one each, so that a take is atomic */
static void push_sql(char (*sql)[STORE_PG_SQL_MAX])
{
	snprintf(sql[S_PUSH_REG_PUT], STORE_PG_SQL_MAX,
		 "WITH gone AS (DELETE FROM push_regs WHERE (reg_ms < $6::int8 OR cred = $2::bytea)"
		 " AND id <> $1::text)"
		 " INSERT INTO push_regs (id, cred, proof_hash, reg_ms, idn)"
		 " SELECT $1::text, $2::bytea, $3::bytea, $4::int8, $5::bytea"
		 " WHERE (SELECT count(*) FROM push_regs WHERE id <> $1::text AND reg_ms >= $6::int8"
		 " AND cred <> $2::bytea) < $7::int8 ON CONFLICT (id) DO UPDATE SET cred = EXCLUDED.cred,"
		 " proof_hash = EXCLUDED.proof_hash, reg_ms = EXCLUDED.reg_ms, idn = EXCLUDED.idn");
	snprintf(sql[S_PUSH_REG_TAKE], STORE_PG_SQL_MAX,
		 "DELETE FROM push_regs WHERE id = $1::text AND cred = $2::bytea"
		 " RETURNING cred, proof_hash, reg_ms, idn");
	snprintf(sql[S_PUSH_CHAL_PUT], STORE_PG_SQL_MAX,
		 "INSERT INTO push_state AS s (id, cred, nonce, bank, mask, issued_ms)"
		 " SELECT $1::text, $2::bytea, $3::bytea, $4::int8, $5::int8, $6::int8"
		 " WHERE EXISTS (SELECT 1 FROM agents WHERE id = $1::text)"
		 " ON CONFLICT (id) DO UPDATE SET cred = EXCLUDED.cred, nonce = EXCLUDED.nonce,"
		 " bank = EXCLUDED.bank, mask = EXCLUDED.mask | s.want_mask,"
		 " issued_ms = EXCLUDED.issued_ms RETURNING " ST_COLS);
	snprintf(sql[S_PUSH_CHAL_TAKE], STORE_PG_SQL_MAX,
		 "UPDATE push_state SET nonce = ''::bytea, busy_until = $4::int8 WHERE id = $1::text"
		 " AND cred = $2::bytea AND nonce = $3::bytea AND length(nonce) > 0"
		 " AND issued_ms >= $5::int8 AND busy_until <= $6::int8 RETURNING " ST_COLS);
	snprintf(sql[S_PUSH_WHY_NOT], STORE_PG_SQL_MAX,
		 "SELECT (cred = $2::bytea AND nonce = $3::bytea AND length(nonce) > 0)::int::int8,"
		 " issued_ms, busy_until FROM push_state WHERE id = $1::text");
	snprintf(sql[S_PUSH_DONE], STORE_PG_SQL_MAX,
		 "UPDATE push_state SET"
		 " busy_until = CASE WHEN busy_until = $2::int8 THEN 0 ELSE busy_until END,"
		 " want_mask = CASE WHEN $3::int8 <> 0 THEN want_mask | $4::int8 ELSE want_mask END,"
		 " want_boot = CASE WHEN $3::int8 <> 0 THEN $5::int8 ELSE 0 END,"
		 " want_offset = CASE WHEN $3::int8 <> 0 THEN $6::int8 ELSE 0 END,"
		 " log_offset = CASE WHEN $3::int8 <> 0 THEN $7::int8 ELSE log_offset END,"
		 " pushed_ms = CASE WHEN $8::int8 <> 0 THEN $9::int8 ELSE pushed_ms END,"
		 " stale = CASE WHEN $8::int8 <> 0 THEN 0 ELSE stale END"
		 " WHERE id = $1::text RETURNING " ST_COLS);
	for (int c = 0; c < VG_STORE_PUSH_COL__COUNT; c++) {
		static const char *const col[VG_STORE_PUSH_COL__COUNT] = { "stale", "quiet_ms" };

		snprintf(sql[S_PUSH_CAS_STALE + c], STORE_PG_SQL_MAX,
			 "INSERT INTO push_state AS s (id, %s) SELECT $1::text, $2::int8"
			 " WHERE EXISTS (SELECT 1 FROM agents WHERE id = $1::text)"
			 " ON CONFLICT (id) DO UPDATE SET %s = $2::int8 WHERE s.%s = $3::int8"
			 " AND s.pushed_ms = $4::int8", col[c], col[c], col[c]);
	}
}

int store_pg_sql_build(char (*sql)[STORE_PG_SQL_MAX])
{
	char *s;
	int r = 0;

	s = sql[S_AGENT_PUT];
	snprintf(s, STORE_PG_SQL_MAX, "INSERT INTO agents (");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_agent_cols, STORE_AGENT_NCOLS, "%s");
	strcat(s, ") VALUES (");
	for (int i = 0; i < STORE_AGENT_NCOLS; i++)
		snprintf(s + strlen(s), STORE_PG_SQL_MAX - strlen(s), "%s$%d", i ? "," : "", i + 1);
	strcat(s, ") ON CONFLICT (id) DO UPDATE SET ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_agent_cols + 1, STORE_AGENT_NCOLS - 1,
			    "%s = EXCLUDED.%s");

	s = sql[S_AGENT_GET];
	snprintf(s, STORE_PG_SQL_MAX, "SELECT ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_agent_cols, STORE_AGENT_NCOLS, "%s");
	strcat(s, ", ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_sched_cols, STORE_SCHED_NCOLS, "%s");
	strcat(s, " FROM agents WHERE id = $1");

	s = sql[S_AGENT_LIST];
	snprintf(s, STORE_PG_SQL_MAX, "SELECT ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_agent_cols, STORE_AGENT_NCOLS, "%s");
	strcat(s, ", ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_sched_cols, STORE_SCHED_NCOLS, "%s");
	strcat(s, " FROM agents ORDER BY id COLLATE \"C\"");

	s = sql[S_AGENT_UPDATE];
	snprintf(s, STORE_PG_SQL_MAX, "UPDATE agents SET ");
	for (int i = 1; i < STORE_AGENT_NCOLS; i++)
		snprintf(s + strlen(s), STORE_PG_SQL_MAX - strlen(s), "%s%s = $%d", i > 1 ? ", " : "",
			 store_agent_cols[i].name, i + 1);
	strcat(s, " WHERE id = $1");
	for (int k = 0; k < STORE_GUARD_NCOLS; k++)
		snprintf(s + strlen(s), STORE_PG_SQL_MAX - strlen(s), " AND %s IS NOT DISTINCT FROM $%d",
			 store_agent_cols[store_agent_guard[k]].name, STORE_AGENT_NCOLS + 1 + k);
	if (strlen(s) + 1 >= STORE_PG_SQL_MAX)
		r = -1;

	snprintf(sql[S_AGENT_DEL], STORE_PG_SQL_MAX,
		 "WITH a AS (DELETE FROM agents WHERE id = $1 RETURNING id),"
		 " v AS (DELETE FROM verdicts WHERE agent IN (SELECT id FROM a)),"
		 " p AS (DELETE FROM push_state WHERE id IN (SELECT id FROM a)),"
		 " g AS (DELETE FROM push_regs WHERE id IN (SELECT id FROM a))"
		 " SELECT id FROM a");
	snprintf(sql[S_POLICY_PUT], STORE_PG_SQL_MAX,
		 "INSERT INTO policies (name, doc) VALUES ($1, $2)"
		 " ON CONFLICT (name) DO UPDATE SET doc = EXCLUDED.doc");
	snprintf(sql[S_POLICY_GET], STORE_PG_SQL_MAX, "SELECT doc FROM policies WHERE name = $1");
	snprintf(sql[S_POLICY_DEL], STORE_PG_SQL_MAX, "DELETE FROM policies WHERE name = $1");
	snprintf(sql[S_VERDICT_ADD], STORE_PG_SQL_MAX,
		 "INSERT INTO verdicts (agent, time, fail, entry, path, digest, msg)"
		 " VALUES ($1, $2, $3, $4, $5, $6, $7)");
	s = sql[S_VERDICT_LIST];
	snprintf(s, STORE_PG_SQL_MAX, "SELECT ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_verdict_cols, STORE_VERDICT_NCOLS, "%s");
	strcat(s, " FROM verdicts WHERE agent = $1 ORDER BY seq DESC LIMIT $2");
	/*
	 * the queue pattern: rows another verifier is claiming right now are
	 * skipped, not waited for; a row locked by it is re-checked on its new
	 * version (its lease) before it is taken
	 */
	snprintf(sql[S_LEASE_CLAIM], STORE_PG_SQL_MAX,
		 "UPDATE agents SET lease_owner = $1, lease_until = $2 + $3 WHERE id IN"
		 " (SELECT id FROM agents WHERE state <> 2 AND next_due <= $2 AND lease_until <= $2"
		 " AND substring(url from 1 for 5) <> 'push:'::bytea"
		 " ORDER BY next_due, id COLLATE \"C\" LIMIT $4 FOR UPDATE SKIP LOCKED)"
		 " RETURNING id, next_due");
	snprintf(sql[S_LEASE_RELEASE], STORE_PG_SQL_MAX,
		 "UPDATE agents SET lease_owner = '', lease_until = 0, next_due = $3"
		 " WHERE id = $1 AND lease_owner = $2");
	snprintf(sql[S_LEASE_DROP], STORE_PG_SQL_MAX,
		 "UPDATE agents SET lease_owner = '', lease_until = 0"
		 " WHERE id = $1 AND lease_owner = $2 AND lease_until = $3");
	s = sql[S_VERIFIER_BEAT];
	snprintf(s, STORE_PG_SQL_MAX, "WITH gone AS (DELETE FROM verifiers WHERE beat < $%d)"
		 " INSERT INTO verifiers (", STORE_VERIFIER_NCOLS + 1);
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_verifier_cols, STORE_VERIFIER_NCOLS, "%s");
	strcat(s, ") VALUES (");
	for (int i = 0; i < STORE_VERIFIER_NCOLS; i++)
		snprintf(s + strlen(s), STORE_PG_SQL_MAX - strlen(s), "%s$%d", i ? "," : "", i + 1);
	strcat(s, ") ON CONFLICT (id) DO UPDATE SET ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_verifier_cols + 1, STORE_VERIFIER_NCOLS - 1,
			    "%s = EXCLUDED.%s");
	s = sql[S_VERIFIER_LIST];
	snprintf(s, STORE_PG_SQL_MAX, "SELECT ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_verifier_cols, STORE_VERIFIER_NCOLS, "%s");
	strcat(s, " FROM verifiers ORDER BY id COLLATE \"C\"");
	/* agent_find: by ek_pub, ak_pub, url; an index each */
	for (int k = 0; k < VG_STORE_KEY__COUNT; k++) {
		static const char *const col[VG_STORE_KEY__COUNT] = { "ek_key", "ak_pub", "url" };

		s = sql[S_AGENT_FIND_EK + k];
		snprintf(s, STORE_PG_SQL_MAX, "SELECT ");
		r |= store_sql_list(s, STORE_PG_SQL_MAX, store_agent_cols, STORE_AGENT_NCOLS, "%s");
		strcat(s, ", ");
		r |= store_sql_list(s, STORE_PG_SQL_MAX, store_sched_cols, STORE_SCHED_NCOLS, "%s");
		snprintf(s + strlen(s), STORE_PG_SQL_MAX - strlen(s), " FROM agents WHERE %s = $1 "
			 "AND id <> $2 ORDER BY id COLLATE \"C\" LIMIT 1", col[k]);
	}
	/*
	 * agent_due: the pulled agents due by $1 (agents_due), then every
	 * pushing one (agents_url: "push:" <= url < "push;")
	 */
	snprintf(sql[S_AGENT_DUE], STORE_PG_SQL_MAX,
		 "(SELECT " DUE_COLS ", 0::int8, 0::int8, 0::int8 FROM agents WHERE next_due <= $1"
		 " AND state <> 2 AND substring(url from 1 for 5) <> 'push:'::bytea ORDER BY next_due)"
		 " UNION ALL (SELECT " DUE_COLS ", coalesce(p.stale, 0), coalesce(p.quiet_ms, 0),"
		 " coalesce(p.pushed_ms, 0) FROM agents LEFT JOIN push_state p ON p.id = agents.id"
		 " WHERE url >= 'push:'::bytea AND url < 'push;'::bytea)");
	snprintf(sql[S_AGENT_STATES], STORE_PG_SQL_MAX,
		 "SELECT state::int8, count(*)::int8 FROM agents GROUP BY state");
	/* lease_take's claim: lease_claim's, returning whole rows (agent_get's columns) */
	s = sql[S_LEASE_TAKE];
	snprintf(s, STORE_PG_SQL_MAX, "UPDATE agents SET lease_owner = $1, lease_until = $2 + $3"
		 " WHERE id IN (SELECT id FROM agents WHERE state <> 2 AND next_due <= $2"
		 " AND lease_until <= $2 AND substring(url from 1 for 5) <> 'push:'::bytea"
		 " ORDER BY next_due, id COLLATE \"C\" LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_agent_cols, STORE_AGENT_NCOLS, "%s");
	strcat(s, ", ");
	r |= store_sql_list(s, STORE_PG_SQL_MAX, store_sched_cols, STORE_SCHED_NCOLS, "%s");
	push_sql(sql);
	return r ? -ENAMETOOLONG : 0;
}
