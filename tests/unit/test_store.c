// SPDX-License-Identifier: MIT
/*
 * test_store.c - store.h: one test body per case, run against the SQLite
 * backend always and against PostgreSQL when VIGIL_TEST_PG names a running
 * server (a libpq URL of a database we may CREATE DATABASE from;
 * tests/unit/with-pg.sh starts a throwaway cluster and sets it). Each case
 * gets a fresh database: a new file, or a new PostgreSQL database dropped
 * afterwards. Then, with PostgreSQL only: the same random operation
 * sequence on both backends gives the same results, two verifiers
 * creating the schema at once both succeed, a connection killed by the
 * server is re-established transparently. And, without a server: a URL
 * that cannot connect fails with -EIO and a message naming the URL with
 * its password scrubbed.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "store.h"

struct backend {
	bool pg;
	char dir[64];		/* sqlite: the directory of the file */
	char dbname[64];	/* pg: the database created for this case */
	char url[1024];
};

static struct backend be_sqlite = { .pg = false }, be_pg = { .pg = true };
static struct backend be_diff = { .pg = true };		/* the differential test's PG half */

/* ---- fresh databases ---- */

static PGconn *admin(void)
{
	const char *u = getenv("VIGIL_TEST_PG");
	PGconn *c;

	if (!u || !*u)
		return NULL;
	c = PQconnectdb(u);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("VIGIL_TEST_PG: %s", PQerrorMessage(c));
	return c;
}

static void admin_exec(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
}

static int setup(void **state)
{
	struct backend *b = *state;
	static int seq;

	b->url[0] = 0;
	if (!b->pg) {
		snprintf(b->dir, sizeof(b->dir), "/tmp/vigil-store.XXXXXX");
		if (!mkdtemp(b->dir))
			return -1;
		snprintf(b->url, sizeof(b->url), "%s/v.db", b->dir);
		return 0;
	}
	{
		PGconn *c = admin();
		char sql[256];

		if (!c)
			return 0;	/* the test skips */
		snprintf(b->dbname, sizeof(b->dbname), "vigil_test_%d_%d", (int)getpid(), seq++);
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", b->dbname);
		admin_exec(c, sql);
		/* the same server, user and socket as VIGIL_TEST_PG, our database */
		snprintf(b->url, sizeof(b->url), "postgresql:///%s?host=%s&port=%s&user=%s", b->dbname,
			 PQhost(c), PQport(c), PQuser(c));
		PQfinish(c);
	}
	return 0;
}

static int teardown(void **state)
{
	struct backend *b = *state;
	char cmd[256];

	if (!b->pg) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
		return system(cmd) == 0 ? 0 : -1;
	}
	if (b->url[0]) {
		PGconn *c = admin();

		snprintf(cmd, sizeof(cmd), "DROP DATABASE IF EXISTS %s WITH (FORCE)", b->dbname);
		admin_exec(c, cmd);
		PQfinish(c);
	}
	return 0;
}

static struct vg_store *open_or_skip(struct backend *b)
{
	struct vg_store *s = NULL;
	struct vg_diag d = { 0 };

	if (!b->url[0])
		skip();		/* PostgreSQL case without VIGIL_TEST_PG */
	if (vg_store_open(b->url, &s, &d) < 0)
		fail_msg("open %s: %s", b->url, d.msg);
	return s;
}

/* ---- the cases both backends run ---- */

static void sample_agent(struct vg_store_agent *a, const char *id)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->id, sizeof(a->id), "%s", id);
	strcpy(a->url, "http://127.0.0.1:1");
	strcpy(a->policy, "p");
	a->ek_pub_len = 3;
	memcpy(a->ek_pub, "\x01\x02\x03", 3);
	a->ak_pub_len = 2;
	memcpy(a->ak_pub, "\xaa\xbb", 2);
	a->state = VG_AGENT_TRUSTED;
	a->bank = VG_HASH_SHA256;
	a->mask = 1u << 10;
	a->st.clock = (struct vg_attest_clock){ true, 0x1234567890ull, 5, 6 };
	vg_attest_logstate_init(&a->st.log, VG_HASH_SHA256);
	a->st.log.entries = 42;
	a->st.log.offset = 4242;
	a->st.log.pcr.bytes[31] = 0x99;
	/* a key learned from the log: one record, u16 length + bytes */
	assert_int_equal(vg_attest_learned_set(&a->st.log.keys, (const uint8_t *)"\0\3abc", 5), 0);
	a->rounds = 9;
	a->last_fail = VG_AF_NONCE;
	strcpy(a->last_msg, "hello");
}

static struct vg_store_agent *agent_at(struct vg_store *s, const char *id)
{
	static struct vg_store_agent a;
	struct vg_diag d = { 0 };

	assert_int_equal(vg_store_agent_get(s, id, &a, &d), 0);
	return &a;
}

static int count_cb(void *arg, const struct vg_store_agent *a)
{
	(void)a;
	(*(int *)arg)++;
	return 0;
}

static int verdict_cb(void *arg, const struct vg_store_verdict *v)
{
	struct vg_store_verdict *out = arg;

	if (out->time == 0)
		*out = *v;
	return 0;
}

static void store_roundtrips_agents_policies_verdicts(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a, b;
	struct vg_store_verdict v = { .time = 1234, .fail = VG_AF_DIGEST, .entry = 7 }, got = { 0 };
	struct vg_diag d = { 0 };
	char *doc;
	size_t len;
	int n = 0;

	sample_agent(&a, "agent-1");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_get(s, "agent-1", &b, &d), 0);
	assert_memory_equal(&a, &b, sizeof(a));		/* every field, every byte */
	assert_int_equal(vg_store_agent_get(s, "nope", &b, &d), -ENOENT);
	strcpy(a.id, "agent-2");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	/* a put of a known id replaces it */
	a.rounds = 10;
	a.state = VG_AGENT_FAILED;
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_get(s, "agent-2", &b, &d), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(vg_store_agent_list(s, count_cb, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(vg_store_policy_put(s, "p", "{}", 2, &d), 0);
	assert_int_equal(vg_store_policy_get(s, "p", &doc, &len, &d), 0);
	assert_string_equal(doc, "{}");
	free(doc);
	assert_int_equal(vg_store_policy_put(s, "p", "{\"a\":1}", 7, &d), 0);
	assert_int_equal(vg_store_policy_get(s, "p", &doc, &len, &d), 0);
	assert_int_equal(len, 7);
	assert_string_equal(doc, "{\"a\":1}");
	free(doc);
	assert_int_equal(vg_store_policy_get(s, "q", &doc, &len, &d), -ENOENT);
	strcpy(v.path, "/usr/bin/x");
	assert_int_equal(vg_store_verdict_add(s, "agent-1", &v, &d), 0);
	v.time = 2000;
	v.fail = VG_AF_REBOOT;
	assert_int_equal(vg_store_verdict_add(s, "agent-1", &v, &d), 0);
	assert_int_equal(vg_store_verdict_list(s, "agent-1", 10, verdict_cb, &got, &d), 0);
	assert_int_equal(got.time, 2000);		/* newest first */
	assert_int_equal(got.fail, VG_AF_REBOOT);
	vg_store_close(s);

	/* reopen: still there; delete */
	s = open_or_skip(*state);
	assert_int_equal(vg_store_agent_get(s, "agent-2", &b, &d), 0);
	assert_int_equal(b.st.log.entries, 42);
	assert_int_equal(b.st.log.keys.len, 5);
	assert_memory_equal(b.st.log.keys.buf, "\0\3abc", 5);
	assert_int_equal(b.rounds, 10);
	assert_int_equal(vg_store_agent_del(s, "agent-2", &d), 0);
	assert_int_equal(vg_store_agent_del(s, "agent-2", &d), -ENOENT);
	assert_int_equal(vg_store_policy_del(s, "p", &d), 0);
	assert_int_equal(vg_store_policy_del(s, "p", &d), -ENOENT);
	vg_store_close(s);
}

/* a TPM2B_PUBLIC of an RSA key (the vectors' AK stands for an EK here) into @a's ek_pub */
static void real_ek(struct vg_store_agent *a)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	FILE *f;

	snprintf(path, sizeof(path), "%s/attest/ak.pub", v ? v : "tests/vectors");
	f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	a->ek_pub_len = fread(a->ek_pub, 1, sizeof(a->ek_pub), f);
	fclose(f);
	assert_true(a->ek_pub_len > 200);
}

/* agent_find: by EK, AK or URL, the first other agent by id; -ENOENT when only @except has it */
static void store_finds_agents_by_key(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a, b, c, got;
	struct vg_diag d = { 0 };
	uint8_t other[sizeof(a.ek_pub)];

	sample_agent(&a, "web1");
	real_ek(&a);
	sample_agent(&b, "db1");	/* the same EK as web1 (a store made before the check) */
	real_ek(&b);
	b.ak_pub[0] = 0xcc;
	strcpy(b.url, "push:token:4d346600");
	sample_agent(&c, "zz9");
	real_ek(&c);
	c.ek_pub[c.ek_pub_len - 1] ^= 0x02;	/* another modulus: another EK */
	c.ak_pub_len = 3;
	memcpy(c.ak_pub, "\xaa\xbb\x00", 3);	/* web1's AK and one byte more: not equal */
	strcpy(c.url, "push:token:4d34660");	/* a prefix of db1's */
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_put(s, &b, &d), 0);
	assert_int_equal(vg_store_agent_put(s, &c, &d), 0);
	/* the EK of web1 and db1: the first by id, or the other one */
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, a.ek_pub, a.ek_pub_len, "", &got,
					     &d), 0);
	assert_string_equal(got.id, "db1");
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, a.ek_pub, a.ek_pub_len, "db1",
					     &got, &d), 0);
	assert_string_equal(got.id, "web1");
	assert_int_equal(got.ak_pub_len, 2);
	assert_string_equal(got.url, "http://127.0.0.1:1");
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, c.ek_pub, c.ek_pub_len, "zz9", &got,
					     &d), -ENOENT);
	/*
	 * the EK of web1 sent with other object attributes, another authPolicy
	 * size (and none): the same key, the same EK; bytes that are no key: none
	 */
	memcpy(other, a.ek_pub, a.ek_pub_len);
	other[9] ^= 0x40;		/* objectAttributes, low byte: noDA */
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, other, a.ek_pub_len, "db1", &got,
					     &d), 0);
	assert_string_equal(got.id, "web1");
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, a.ek_pub, 3, "", &got, &d),
			 -ENOENT);
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, (const uint8_t *)"\x01\x02\x03", 3,
					     "", &got, &d), -ENOENT);
	/* AKs compared whole */
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_AK, a.ak_pub, a.ak_pub_len, "", &got,
					     &d), 0);
	assert_string_equal(got.id, "web1");
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_AK, c.ak_pub, 3, "", &got, &d), 0);
	assert_string_equal(got.id, "zz9");
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_AK, (const uint8_t *)"\xaa", 1, "",
					     &got, &d), -ENOENT);
	/* URLs: a push credential's, exactly */
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_URL, (const uint8_t *)b.url,
					     strlen(b.url), "", &got, &d), 0);
	assert_string_equal(got.id, "db1");
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_URL, (const uint8_t *)b.url,
					     strlen(b.url), "db1", &got, &d), -ENOENT);
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_URL, (const uint8_t *)"push:token:4d",
					     13, "", &got, &d), -ENOENT);
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY__COUNT, a.ek_pub, 3, "", &got, &d),
			 -EINVAL);
	vg_store_close(s);
}

/*
 * A row stored before ek_key (the column there and empty, as the migration
 * leaves it): agent_find by EK cannot see it until the store is opened
 * again, which makes its key.
 */
static void store_makes_the_ek_keys_it_lacks(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b);
	struct vg_store_agent a, got;
	struct vg_diag d = { 0 };
	char cmd[sizeof(b->url) + 128];

	sample_agent(&a, "web1");
	real_ek(&a);
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(agent_at(s, "web1")->ek_key_len, 32);
	vg_store_close(s);
	if (b->pg) {
		PGconn *pc = PQconnectdb(b->url);

		assert_int_equal(PQstatus(pc), CONNECTION_OK);
		admin_exec(pc, "UPDATE agents SET ek_key = NULL");
		PQfinish(pc);
	} else {
		snprintf(cmd, sizeof(cmd), "sqlite3 '%s' 'UPDATE agents SET ek_key = NULL'", b->url);
		assert_int_equal(system(cmd), 0);
	}
	/* the backend alone (vg_store_open's backfill not run): not found by its EK */
	assert_int_equal(b->pg ? vg_store_pg_open(b->url, &s, &d) : vg_store_sqlite_open(b->url, &s, &d),
			 0);
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, a.ek_pub, a.ek_pub_len, "", &got,
					     &d), -ENOENT);
	vg_store_close(s);
	s = open_or_skip(b);
	assert_int_equal(agent_at(s, "web1")->ek_key_len, 32);
	assert_int_equal(vg_store_agent_find(s, VG_STORE_KEY_EK, a.ek_pub, a.ek_pub_len, "", &got,
					     &d), 0);
	assert_string_equal(got.id, "web1");
	vg_store_close(s);
}

static void store_keeps_bytes_and_limits(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a, b;
	struct vg_store_verdict v, got = { 0 };
	struct vg_diag d = { 0 };
	static const char doc[] = "{\"x\": \"\xff\xfe\"}\0tail";
	char *gd;
	size_t len;

	sample_agent(&a, "agent.limits_1");
	memset(a.url, 'u', sizeof(a.url) - 1);
	memcpy(a.url, "http://\xff\xfe\x80/", 11);
	memset(a.last_msg, 0xe9, sizeof(a.last_msg) - 1);	/* Latin-1 é: not UTF-8 */
	memset(a.ek_cert, 0x5a, sizeof(a.ek_cert));
	a.ek_cert_len = sizeof(a.ek_cert);
	a.ek_pub_len = sizeof(a.ek_pub);
	memset(a.ek_pub, 0, sizeof(a.ek_pub));
	a.st.clock.clock = UINT64_MAX;
	a.st.clock.reset_count = UINT32_MAX;
	a.st.clock.restart_count = 0x80000000u;
	a.st.log.entries = UINT64_MAX - 1;
	a.st.log.offset = (uint64_t)INT64_MAX + 5;
	a.mask = UINT32_MAX;
	a.registered_at = INT64_MIN;
	a.last_ok = -1;
	a.last_seen = INT64_MAX;
	a.comm_errors = UINT32_MAX;
	a.last_fail = VG_AF_COMM;
	a.failure_count = INT64_MAX;
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_get(s, a.id, &b, &d), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* an unknown failure value is stored as "ok" */
	a.last_fail = 9999;
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_get(s, a.id, &b, &d), 0);
	assert_int_equal(b.last_fail, VG_AF_NONE);

	memset(&v, 0, sizeof(v));
	v.time = -5;
	v.fail = VG_AF_NOT_IN_POLICY;
	v.entry = -1;
	memset(v.path, 0xff, sizeof(v.path) - 1);
	memcpy(v.path, "/tmp/\xc3\x28", 7);			/* invalid UTF-8 sequence */
	strcpy(v.digest, "sha256:\xff");
	memset(v.msg, 'm', sizeof(v.msg) - 1);
	v.msg[3] = (char)0x80;
	assert_int_equal(vg_store_verdict_add(s, a.id, &v, &d), 0);
	assert_int_equal(vg_store_verdict_list(s, a.id, 1, verdict_cb, &got, &d), 0);
	assert_memory_equal(&v, &got, sizeof(v));

	assert_int_equal(vg_store_policy_put(s, "bin", doc, sizeof(doc), &d), 0);
	assert_int_equal(vg_store_policy_get(s, "bin", &gd, &len, &d), 0);
	assert_int_equal(len, sizeof(doc));
	assert_memory_equal(gd, doc, sizeof(doc));
	assert_int_equal(gd[len], 0);
	free(gd);
	assert_int_equal(vg_store_policy_put(s, "empty", "", 0, &d), 0);
	assert_int_equal(vg_store_policy_get(s, "empty", &gd, &len, &d), 0);
	assert_int_equal(len, 0);
	assert_string_equal(gd, "");
	free(gd);
	vg_store_close(s);
}

/* two verifiers judged the same state: only the first result is kept */
static void store_update_is_compare_and_set(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a, old, mine, theirs, got;
	struct vg_diag d = { 0 };

	sample_agent(&a, "host1");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	old = a;
	theirs = a;
	theirs.rounds++;
	theirs.st.log.entries += 3;
	theirs.st.log.offset += 300;
	assert_int_equal(vg_store_agent_update(s, &old, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_get(s, "host1", &got, &d), 0);
	assert_memory_equal(&got, &theirs, sizeof(got));
	/* the slower one, from the same old state: refused, the row stays theirs */
	mine = a;
	mine.rounds++;
	mine.st.log.entries += 1;
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), -ESTALE);
	assert_int_equal(vg_store_agent_get(s, "host1", &got, &d), 0);
	assert_memory_equal(&got, &theirs, sizeof(got));
	/* each guarded field counts: state, clock, PCR, policy, AK */
	old = theirs;
	theirs.state = VG_AGENT_FAILED;
	assert_int_equal(vg_store_agent_put(s, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), -ESTALE);
	theirs = old;
	theirs.st.clock.clock++;
	assert_int_equal(vg_store_agent_put(s, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), -ESTALE);
	theirs = old;
	theirs.st.log.pcr.bytes[0] ^= 1;
	assert_int_equal(vg_store_agent_put(s, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), -ESTALE);
	theirs = old;
	strcpy(theirs.policy, "other");
	assert_int_equal(vg_store_agent_put(s, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), -ESTALE);
	theirs = old;
	theirs.ak_pub[0] ^= 1;
	assert_int_equal(vg_store_agent_put(s, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), -ESTALE);
	/* an unguarded field (last_seen, a message) does not block */
	theirs = old;
	theirs.last_seen = 12345;
	strcpy(theirs.last_msg, "seen");
	assert_int_equal(vg_store_agent_put(s, &theirs, &d), 0);
	assert_int_equal(vg_store_agent_update(s, &old, &mine, &d), 0);
	assert_int_equal(vg_store_agent_get(s, "host1", &got, &d), 0);
	assert_memory_equal(&got, &mine, sizeof(got));
	/* removed meanwhile: not written back */
	assert_int_equal(vg_store_agent_del(s, "host1", &d), 0);
	assert_int_equal(vg_store_agent_update(s, &mine, &mine, &d), -ESTALE);
	assert_int_equal(vg_store_agent_get(s, "host1", &got, &d), -ENOENT);
	vg_store_close(s);
}

struct ids {
	char list[16][128];
	int n, stop_after;
};

static int ids_cb(void *arg, const struct vg_store_agent *a)
{
	struct ids *l = arg;

	snprintf(l->list[l->n++], sizeof(l->list[0]), "%s", a->id);
	return l->n == l->stop_after ? 7 : 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(x, y);
}

/* bytewise order whatever the database's collation (the test cluster's is ICU en-US) */
static void store_lists_agents_in_bytewise_order(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	static const char *const ids[] = { "b", "B", "a", "_z", "-y", "A1", "a0", "a.b", "Z" };
	const size_t n = sizeof(ids) / sizeof(ids[0]);
	char want[16][128];
	struct vg_store_agent a;
	struct ids got = { .stop_after = -1 };
	struct vg_diag d = { 0 };

	for (size_t i = 0; i < n; i++) {
		sample_agent(&a, ids[i]);
		assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
		snprintf(want[i], sizeof(want[0]), "%s", ids[i]);
	}
	qsort(want, n, sizeof(want[0]), cmp_str);
	assert_int_equal(vg_store_agent_list(s, ids_cb, &got, &d), 0);
	assert_int_equal(got.n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got.list[i], want[i]);
	/* a callback's non-zero return stops the listing and is returned */
	memset(&got, 0, sizeof(got));
	got.stop_after = 2;
	assert_int_equal(vg_store_agent_list(s, ids_cb, &got, &d), 7);
	assert_int_equal(got.n, 2);
	/* and the handle still works */
	assert_int_equal(vg_store_agent_get(s, "Z", &a, &d), 0);
	vg_store_close(s);
}

struct times {
	int64_t t[16];
	int n;
};

static int times_cb(void *arg, const struct vg_store_verdict *v)
{
	struct times *l = arg;

	if (l->n < 16)
		l->t[l->n] = v->time;
	l->n++;
	return 0;
}

static void store_history_newest_first_limited_deleted_with_agent(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_verdict v;
	struct vg_store_agent a;
	struct times t;
	struct vg_diag d = { 0 };

	sample_agent(&a, "one");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	sample_agent(&a, "two");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	for (int i = 1; i <= 5; i++) {
		memset(&v, 0, sizeof(v));
		v.time = 100 + i;
		v.fail = VG_AF_COMM;
		assert_int_equal(vg_store_verdict_add(s, "one", &v, &d), 0);
		v.time = 200 + i;
		if (i <= 2)
			assert_int_equal(vg_store_verdict_add(s, "two", &v, &d), 0);
	}
	v.time = 999;		/* equal times keep insertion order */
	assert_int_equal(vg_store_verdict_add(s, "one", &v, &d), 0);
	v.time = 105;
	assert_int_equal(vg_store_verdict_add(s, "one", &v, &d), 0);
	/* history of an id with no agent row is kept too */
	assert_int_equal(vg_store_verdict_add(s, "ghost", &v, &d), 0);

	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "one", 3, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.t[0], 105);
	assert_int_equal(t.t[1], 999);
	assert_int_equal(t.t[2], 105);
	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "one", SIZE_MAX, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 7);
	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "one", 0, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 0);
	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "nobody", 10, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 0);

	/* removing an agent removes its history, only its */
	assert_int_equal(vg_store_agent_del(s, "one", &d), 0);
	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "one", 100, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 0);
	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "two", 100, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.t[0], 202);
	/* no agent row: -ENOENT, and its history stays */
	assert_int_equal(vg_store_agent_del(s, "ghost", &d), -ENOENT);
	memset(&t, 0, sizeof(t));
	assert_int_equal(vg_store_verdict_list(s, "ghost", 100, times_cb, &t, &d), 0);
	assert_int_equal(t.n, 1);
	vg_store_close(s);
}

/* ---- URLs ---- */

static void url_scrub_hides_every_password(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "postgresql://vigil:hunter2@db.example:5432/fleet",
		  "postgresql://vigil:***@db.example:5432/fleet" },
		{ "postgres://u:p%40ss@h/d?sslmode=require", "postgres://u:***@h/d?sslmode=require" },
		{ "postgresql://u@h/d?password=s3cr3t&sslmode=verify-full",
		  "postgresql://u@h/d?password=***&sslmode=verify-full" },
		{ "postgresql://a:b@h/d?x=1&password=c", "postgresql://a:***@h/d?x=1&password=***" },
		{ "postgresql:///fleet?host=/run/postgresql", "postgresql:///fleet?host=/run/postgresql" },
		{ "postgresql://u:@h/d", "postgresql://u:***@h/d" },
		{ "postgresql://h/d#password=x", "postgresql://h/d#password=x" },
		{ "host=db password=hunter2 dbname=x", "host=db password=*** dbname=x" },
		{ "host=db password = 'hu nt\\'er' dbname=x", "host=db password = *** dbname=x" },
		{ "sqlite:/var/lib/vigil/verifier.db", "sqlite:/var/lib/vigil/verifier.db" },
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = vg_store_url_scrub(cases[i].in, out, sizeof(out));

		assert_string_equal(out, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
	}
	/* truncation like snprintf */
	assert_int_equal(vg_store_url_scrub("postgresql://u:pw@h/d", out, 12), 22);
	assert_string_equal(out, "postgresql:");
}

static void open_refused_names_url_without_password(void **state)
{
	struct vg_store *s = NULL;
	struct vg_diag d = { 0 };

	(void)state;
	/* port 1 on loopback: refused at once */
	assert_int_equal(vg_store_open("postgresql://vigil:hunter2@127.0.0.1:1/fleet?connect_timeout=3",
				       &s, &d), -EIO);
	assert_null(s);
	assert_non_null(strstr(d.msg, "postgresql://vigil:***@127.0.0.1:1/fleet"));
	assert_non_null(strstr(d.msg, "refused"));
	assert_null(strstr(d.msg, "hunter2"));
	memset(&d, 0, sizeof(d));
	assert_int_equal(vg_store_open("postgres://u@127.0.0.1:1/x?password=s3cr3tpw", &s, &d), -EIO);
	assert_null(strstr(d.msg, "s3cr3tpw"));
	assert_non_null(strstr(d.msg, "password=***"));
	/* libpq quotes a malformed URI part back: still no password */
	memset(&d, 0, sizeof(d));
	assert_int_equal(vg_store_open("postgresql://u:ab%zzcd@127.0.0.1:1/x", &s, &d), -EIO);
	assert_null(strstr(d.msg, "ab%zzcd"));
	memset(&d, 0, sizeof(d));
	assert_int_equal(vg_store_open("postgresql:fleet", &s, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "postgresql:fleet"));
}

/* ---- PostgreSQL only ---- */

/* ---- leases and heartbeats (scheduler.c's queue) ---- */

struct claims {
	char id[8][128];
	int64_t due[8];
	int n;
};

static int claim_cb(void *arg, const char *id, int64_t due)
{
	struct claims *c = arg;

	assert_true(c->n < 8);
	snprintf(c->id[c->n], sizeof(c->id[0]), "%s", id);
	c->due[c->n++] = due;
	return 0;
}

static void store_leases_claim_release_expire(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a, cur, upd;
	struct vg_diag d = { 0 };
	struct claims c = { 0 };

	for (int i = 0; i < 4; i++) {
		char id[8];

		snprintf(id, sizeof(id), "a%d", i);
		sample_agent(&a, id);
		a.state = i == 3 ? VG_AGENT_FAILED : VG_AGENT_TRUSTED;
		assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	}
	/* new: due at once (0), no lease */
	assert_int_equal(agent_at(s, "a0")->next_due, 0);
	assert_string_equal(agent_at(s, "a0")->lease_owner, "");
	/* two of the three not failed, by due time then id */
	assert_int_equal(vg_store_lease_claim(s, "v1", 1000, 500, 2, claim_cb, &c, &d), 2);
	assert_string_equal(c.id[0], "a0");
	assert_string_equal(c.id[1], "a1");
	assert_string_equal(agent_at(s, "a1")->lease_owner, "v1");
	assert_int_equal(agent_at(s, "a1")->lease_until, 1500);
	/* the rest: a2 only (a3 failed), whatever the count asked */
	c.n = 0;
	assert_int_equal(vg_store_lease_claim(s, "v2", 1001, 500, 8, claim_cb, &c, &d), 1);
	assert_string_equal(c.id[0], "a2");
	c.n = 0;
	assert_int_equal(vg_store_lease_claim(s, "v2", 1002, 500, 8, claim_cb, &c, &d), 0);
	/* the owner releases: due later, not claimable before */
	assert_int_equal(vg_store_lease_release(s, "a0", "v1", 3000, &d), 0);
	assert_int_equal(agent_at(s, "a0")->next_due, 3000);
	assert_string_equal(agent_at(s, "a0")->lease_owner, "");
	/* not the owner: nothing changes */
	assert_int_equal(vg_store_lease_release(s, "a1", "v2", 9, &d), -ESTALE);
	assert_int_equal(vg_store_lease_release(s, "nobody", "v1", 9, &d), -ESTALE);
	assert_int_equal(agent_at(s, "a1")->lease_until, 1500);
	/* agent_update (a round's verdict) leaves the schedule alone */
	cur = *agent_at(s, "a1");
	upd = cur;
	upd.rounds++;
	upd.next_due = 77;
	upd.lease_until = 0;
	assert_int_equal(vg_store_agent_update(s, &cur, &upd, &d), 0);
	assert_int_equal(agent_at(s, "a1")->lease_until, 1500);
	assert_int_equal(agent_at(s, "a1")->next_due, 0);
	/* v1 died: its lease of a1 expires at 1500 and another takes it, with its due time */
	c.n = 0;
	assert_int_equal(vg_store_lease_claim(s, "v2", 1499, 500, 8, claim_cb, &c, &d), 0);
	assert_int_equal(vg_store_lease_claim(s, "v2", 1500, 500, 8, claim_cb, &c, &d), 1);
	assert_string_equal(c.id[0], "a1");
	assert_int_equal(c.due[0], 0);
	assert_string_equal(agent_at(s, "a1")->lease_owner, "v2");
	/* the late release of the dead owner does not touch the new lease */
	assert_int_equal(vg_store_lease_release(s, "a1", "v1", 5, &d), -ESTALE);
	assert_string_equal(agent_at(s, "a1")->lease_owner, "v2");
	/* a0 due at 3000, the others later */
	assert_int_equal(vg_store_lease_release(s, "a1", "v2", 5000, &d), 0);
	assert_int_equal(vg_store_lease_release(s, "a2", "v2", 5000, &d), 0);
	c.n = 0;
	assert_int_equal(vg_store_lease_claim(s, "v1", 2999, 500, 8, claim_cb, &c, &d), 0);
	assert_int_equal(vg_store_lease_claim(s, "v1", 3000, 500, 8, claim_cb, &c, &d), 1);
	assert_int_equal(c.due[0], 3000);
	/* a lease the store kept though its release was answered: dropped, that one only */
	assert_int_equal(vg_store_lease_drop(s, "a0", "v1", 3499, &d), -ESTALE);
	assert_int_equal(vg_store_lease_drop(s, "a0", "v2", 3500, &d), -ESTALE);
	assert_int_equal(vg_store_lease_drop(s, "nobody", "v1", 3500, &d), -ESTALE);
	assert_string_equal(agent_at(s, "a0")->lease_owner, "v1");
	assert_int_equal(agent_at(s, "a0")->lease_until, 3500);
	assert_int_equal(vg_store_lease_drop(s, "a0", "v1", 3500, &d), 0);
	assert_string_equal(agent_at(s, "a0")->lease_owner, "");
	assert_int_equal(agent_at(s, "a0")->lease_until, 0);
	assert_int_equal(agent_at(s, "a0")->next_due, 3000);	/* as due as it was */
	assert_int_equal(vg_store_lease_drop(s, "a0", "v1", 3500, &d), -ESTALE);
	c.n = 0;
	assert_int_equal(vg_store_lease_claim(s, "v2", 3001, 500, 8, claim_cb, &c, &d), 1);
	assert_string_equal(c.id[0], "a0");
	vg_store_close(s);
}

struct dues {
	struct vg_store_due a[8];
	int n;
};

static int due_cb(void *arg, const struct vg_store_due *a)
{
	struct dues *l = arg;

	assert_true(l->n < 8);
	l->a[l->n++] = *a;
	return 0;
}

/* agent_due: the pulled agents due by a time (not failed), then every pushing one */
/* vg_store_lease_take's rows, as the scheduler keeps them */
struct taken_rows {
	struct vg_store_agent a[4];
	int n;
	int stop_at;			/* the callback says stop at this row (0: never) */
};

static int take_cb(void *arg, const struct vg_store_agent *a)
{
	struct taken_rows *t = arg;

	if (t->stop_at && t->n + 1 == t->stop_at)
		return -ENOMEM;
	assert_true(t->n < 4);
	t->a[t->n++] = *a;
	return 0;
}

static void store_lease_take_releases_then_claims_with_rows(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a;
	struct vg_diag d = { 0 };
	struct taken_rows t = { 0 };

	for (int i = 0; i < 3; i++) {
		char id[8];

		snprintf(id, sizeof(id), "t%d", i);
		sample_agent(&a, id);
		a.rounds = 10 + (uint64_t)i;
		assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	}
	/* nothing to release: t0 and t1 claimed, each with its whole row */
	assert_int_equal(vg_store_lease_take(s, NULL, 0, "v1", 1000, 500, 2, take_cb, &t, &d), 2);
	for (int i = 0; i < 2; i++) {
		const struct vg_store_agent *st = agent_at(s, t.a[i].id);

		assert_true(strcmp(t.a[i].id, "t0") == 0 || strcmp(t.a[i].id, "t1") == 0);
		assert_int_equal(t.a[i].rounds, st->rounds);
		assert_int_equal(t.a[i].ek_cert_len, st->ek_cert_len);
		assert_memory_equal(t.a[i].ek_cert, st->ek_cert, st->ek_cert_len);
		assert_string_equal(t.a[i].lease_owner, "v1");
		assert_int_equal(t.a[i].lease_until, 1500);
	}
	assert_string_not_equal(t.a[0].id, t.a[1].id);
	/* t0 released due at 1100 and, at 1200, t2 then t0 claimed in the same call */
	t.n = 0;
	assert_int_equal(vg_store_lease_take(s, "t0", 1100, "v1", 1200, 500, 4, take_cb, &t, &d), 2);
	{
		/* in no particular order (an UPDATE's RETURNING) */
		int t0 = strcmp(t.a[0].id, "t0") == 0 ? 0 : 1;

		assert_string_equal(t.a[t0].id, "t0");
		assert_string_equal(t.a[1 - t0].id, "t2");
		assert_int_equal(t.a[t0].next_due, 1100);
		assert_int_equal(t.a[t0].lease_until, 1700);
	}
	/* a release of what is not ours any more is no error; max 0 claims nothing */
	t.n = 0;
	assert_int_equal(vg_store_lease_take(s, "t1", 5000, "v2", 1300, 500, 0, take_cb, &t, &d), 0);
	assert_int_equal(agent_at(s, "t1")->lease_until, 1500);
	assert_int_equal(vg_store_lease_take(s, "t1", 5000, "v1", 1300, 500, 0, take_cb, &t, &d), 0);
	assert_int_equal(agent_at(s, "t1")->next_due, 5000);
	assert_string_equal(agent_at(s, "t1")->lease_owner, "");
	/* the callback stops at its first row: its error, nothing handed over */
	t.n = 0;
	t.stop_at = 1;
	assert_int_equal(vg_store_lease_take(s, NULL, 0, "v1", 9000, 500, 4, take_cb, &t, &d), -ENOMEM);
	assert_int_equal(t.n, 0);
	vg_store_close(s);
}

static void store_counts_agents_by_state(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	static const unsigned int st[6] = { VG_AGENT_TRUSTED, VG_AGENT_TRUSTED, VG_AGENT_FAILED,
					    VG_AGENT_UNREACHABLE, VG_AGENT_TRUSTED, VG_AGENT_REGISTERED };
	uint64_t n[VG_STORE_STATES];
	struct vg_store_agent a;
	struct vg_diag d = { 0 };

	assert_int_equal(vg_store_agent_states(s, n, &d), 0);
	for (int i = 0; i < VG_STORE_STATES; i++)
		assert_int_equal(n[i], 0);
	for (int i = 0; i < 6; i++) {
		char id[8];

		snprintf(id, sizeof(id), "s%d", i);
		sample_agent(&a, id);
		a.state = st[i];
		assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	}
	assert_int_equal(vg_store_agent_states(s, n, &d), 0);
	assert_int_equal(n[VG_AGENT_TRUSTED], 3);
	assert_int_equal(n[VG_AGENT_FAILED], 1);
	assert_int_equal(n[VG_AGENT_UNREACHABLE], 1);
	assert_int_equal(n[VG_AGENT_REGISTERED], 1);
	assert_int_equal(vg_store_agent_del(s, "s0", &d), 0);
	assert_int_equal(vg_store_agent_states(s, n, &d), 0);
	assert_int_equal(n[VG_AGENT_TRUSTED], 2);
	vg_store_close(s);
}

static void store_due_lists_what_the_scheduler_needs(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	static const char *const ids[5] = { "p0", "p1", "p2", "q0", "q1" };
	struct vg_store_agent a;
	struct vg_diag d = { 0 };
	struct claims c = { 0 };
	struct dues l = { 0 };

	for (int i = 0; i < 5; i++) {
		sample_agent(&a, ids[i]);
		a.state = i == 2 || i == 4 ? VG_AGENT_FAILED : VG_AGENT_TRUSTED;
		if (ids[i][0] == 'q')
			snprintf(a.url, sizeof(a.url), "push:token:%d", i);
		a.registered_at = 10 + i;
		a.last_ok = 20 + i;
		a.last_seen = 30 + i;
		assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	}
	/* p0 and p1 claimed (p2 failed, q* push), p1 released due at 5000; p0 leased */
	assert_int_equal(vg_store_lease_claim(s, "v1", 1000, 500, 8, claim_cb, &c, &d), 2);
	assert_int_equal(vg_store_lease_release(s, "p1", "v1", 5000, &d), 0);
	assert_int_equal(vg_store_agent_due(s, 4999, due_cb, &l, &d), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.a[0].id, "p0");
	assert_false(l.a[0].push);
	assert_int_equal(l.a[0].state, VG_AGENT_TRUSTED);
	assert_int_equal(l.a[0].next_due, 0);
	assert_int_equal(l.a[0].lease_until, 1500);
	assert_string_equal(l.a[0].lease_owner, "v1");
	assert_int_equal(l.a[0].registered_at, 10);
	assert_int_equal(l.a[0].last_ok, 20);
	assert_int_equal(l.a[0].last_seen, 30);
	/* the pushing ones, failed too */
	assert_true(l.a[1].push && l.a[2].push);
	assert_string_equal(strcmp(l.a[1].id, "q0") == 0 ? l.a[2].id : l.a[1].id, "q1");
	for (int i = 1; i < 3; i++)
		assert_int_equal(l.a[i].state, strcmp(l.a[i].id, "q1") == 0 ? VG_AGENT_FAILED :
				 VG_AGENT_TRUSTED);
	/* at 5000 p1 too, after p0 (by due time) */
	l.n = 0;
	assert_int_equal(vg_store_agent_due(s, 5000, due_cb, &l, &d), 0);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.a[0].id, "p0");
	assert_string_equal(l.a[1].id, "p1");
	assert_int_equal(l.a[1].next_due, 5000);
	assert_int_equal(l.a[1].lease_until, 0);
	assert_string_equal(l.a[1].lease_owner, "");
	vg_store_close(s);
}

static int vrf_cb(void *arg, const struct vg_store_verifier *v)
{
	struct vg_store_verifier *out = arg;

	for (int i = 0; i < 4; i++)
		if (!out[i].id[0]) {
			out[i] = *v;
			return 0;
		}
	return -1;
}


/* ---- push mode's state (the push op) ---- */

static struct vg_store_push_req *push_req(const char *id, const char *cred)
{
	static struct vg_store_push_req rq;

	memset(&rq, 0, sizeof(rq));
	snprintf(rq.st.id, sizeof(rq.st.id), "%s", id);
	snprintf(rq.st.cred, sizeof(rq.st.cred), "%s", cred);
	snprintf(rq.reg.id, sizeof(rq.reg.id), "%s", id);
	snprintf(rq.reg.cred, sizeof(rq.reg.cred), "%s", cred);
	return &rq;
}

static int push_op(struct vg_store *s, unsigned int verb, struct vg_store_push_req *rq)
{
	struct vg_diag d = { 0 };
	int r = vg_store_push(s, verb, rq, &d);

	if (r < 0 && r != -ENOENT && r != -ETIME && r != -EBUSY && r != -ENOSPC)
		fail_msg("push op %u: %d %s", verb, r, d.msg);
	return r;
}

/* a challenge @nonce (one byte repeated) of @id by @cred at @at */
static int push_chal(struct vg_store *s, const char *id, const char *cred, uint8_t nonce,
		     int64_t at)
{
	struct vg_store_push_req *rq = push_req(id, cred);

	memset(rq->st.nonce, nonce, 20);
	rq->st.nonce_len = 20;
	rq->st.bank = VG_HASH_SHA256;
	rq->st.mask = 1u << 10;
	rq->st.issued_ms = at;
	return push_op(s, VG_STORE_PUSH_CHAL_PUT, rq);
}

/* take challenge @nonce of @id by @cred at @now (30 s old at most, leased 5 s) */
static int push_take(struct vg_store *s, const char *id, const char *cred, uint8_t nonce,
		     int64_t now)
{
	struct vg_store_push_req *rq = push_req(id, cred);

	memset(rq->st.nonce, nonce, 20);
	rq->st.nonce_len = 20;
	rq->now = now;
	rq->age_ms = 30000;
	rq->lease_ms = 5000;
	return push_op(s, VG_STORE_PUSH_CHAL_TAKE, rq);
}

static void put_push_agent(struct vg_store *s, const char *id, const char *cred)
{
	struct vg_store_agent a;
	struct vg_diag d = { 0 };

	sample_agent(&a, id);
	snprintf(a.url, sizeof(a.url), "push:%s", cred);
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
}

/* two handles on one store: two verifiers */
static void store_push_nonce_taken_once_by_any_verifier(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b), *s2 = open_or_skip(b);
	struct vg_store_push_req *rq;

	/* no challenge for an agent that is not there */
	assert_int_equal(push_chal(s, "nobody", "token:a", 1, 1000), -ENOENT);
	put_push_agent(s, "a1", "token:a");
	assert_int_equal(push_chal(s, "a1", "token:a", 1, 1000), 0);
	/* another credential, another nonce, expired: refused, nothing taken */
	assert_int_equal(push_take(s2, "a1", "token:b", 1, 2000), -ENOENT);
	assert_int_equal(push_take(s2, "a1", "token:a", 2, 2000), -ENOENT);
	assert_int_equal(push_take(s2, "a1", "token:a", 1, 1000 + 30001), -ETIME);
	/* taken by the other verifier, once */
	assert_int_equal(push_take(s2, "a1", "token:a", 1, 2000), 0);
	assert_int_equal(push_take(s2, "a1", "token:a", 1, 2001), -ENOENT);
	assert_int_equal(push_take(s, "a1", "token:a", 1, 2001), -ENOENT);
	/* the next challenge while the first push is judged (leased until 7000): busy */
	assert_int_equal(push_chal(s, "a1", "token:a", 3, 2500), 0);
	assert_int_equal(push_take(s, "a1", "token:a", 3, 3000), -EBUSY);
	/* the judging verifier died: the lease ends */
	assert_int_equal(push_take(s, "a1", "token:a", 3, 7000), 0);
	/* judged, lacking PCR 0 and the boot log: the next challenge, by either, asks for them */
	rq = push_req("a1", "");
	rq->st.busy_until = 12000;
	rq->retry = true;
	rq->st.want_mask = 1;
	rq->st.want_boot = true;
	rq->st.want_offset = true;
	rq->st.offset = 77;
	assert_int_equal(push_op(s, VG_STORE_PUSH_DONE, rq), 0);
	assert_int_equal(rq->st.busy_until, 0);
	{
		struct vg_store_push_req *c = push_req("a1", "token:a");

		memset(c->st.nonce, 5, 20);
		c->st.nonce_len = 20;
		c->st.mask = 1u << 10;
		c->st.issued_ms = 8100;
		assert_int_equal(push_op(s2, VG_STORE_PUSH_CHAL_PUT, c), 0);
		assert_int_equal(c->st.mask, (1u << 10) | 1);
		assert_true(c->st.want_boot && c->st.want_offset);
		assert_int_equal(c->st.offset, 77);
	}
	assert_int_equal(push_take(s, "a1", "token:a", 5, 8200), 0);
	/* judged: wants cleared but the PCRs, when its challenge was asked kept */
	rq = push_req("a1", "");
	rq->st.busy_until = 13200;
	rq->judged = true;
	rq->st.pushed_ms = 8100;
	assert_int_equal(push_op(s, VG_STORE_PUSH_DONE, rq), 0);
	assert_false(rq->st.want_boot || rq->st.want_offset);
	assert_int_equal(rq->st.want_mask, 1);
	assert_int_equal(rq->st.pushed_ms, 8100);
	assert_int_equal(push_chal(s, "a1", "token:a", 6, 8300), 0);
	assert_int_equal(push_take(s2, "a1", "token:a", 6, 8400), 0);
	vg_store_close(s);
	vg_store_close(s2);
}

static void reg_fill(struct vg_store_push_req *rq, int64_t at, uint8_t h)
{
	memset(rq->reg.proof_hash, h, sizeof(rq->reg.proof_hash));
	rq->reg.reg_ms = at;
	rq->reg.idn_len = (size_t)snprintf(rq->reg.idn, sizeof(rq->reg.idn),
					   "{\"ek_pub\":\"%02x\"}", h);
	rq->now = at;
	rq->age_ms = 60000;
	rq->max = 2;
}

static void store_push_registration_taken_once_bounded(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b), *s2 = open_or_skip(b);
	struct vg_store_push_req *rq;

	reg_fill(rq = push_req("r1", "token:a"), 1000, 0x11);
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_PUT, rq), 0);
	reg_fill(rq = push_req("r2", "token:b"), 1000, 0x22);
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_PUT, rq), 0);
	/* two in progress: a third is refused, one registering again replaces its own */
	reg_fill(rq = push_req("r3", "token:c"), 2000, 0x33);
	assert_int_equal(push_op(s2, VG_STORE_PUSH_REG_PUT, rq), -ENOSPC);
	reg_fill(rq = push_req("r1", "token:a"), 2000, 0x44);
	assert_int_equal(push_op(s2, VG_STORE_PUSH_REG_PUT, rq), 0);
	/* taken by the other verifier, by its credential only, once */
	rq = push_req("r1", "token:b");
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_TAKE, rq), -ENOENT);
	rq = push_req("r1", "token:a");
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_TAKE, rq), 0);
	assert_int_equal(rq->reg.reg_ms, 2000);
	assert_int_equal(rq->reg.proof_hash[31], 0x44);
	assert_string_equal(rq->reg.idn, "{\"ek_pub\":\"44\"}");
	assert_int_equal(rq->reg.idn_len, strlen("{\"ek_pub\":\"44\"}"));
	rq = push_req("r1", "token:a");
	assert_int_equal(push_op(s2, VG_STORE_PUSH_REG_TAKE, rq), -ENOENT);
	/* r2's expires: a registration a minute later removes it and fits */
	reg_fill(rq = push_req("r3", "token:c"), 1000 + 60001, 0x33);
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_PUT, rq), 0);
	reg_fill(rq = push_req("r4", "token:d"), 1000 + 60001, 0x55);
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_PUT, rq), 0);
	rq = push_req("r2", "token:b");
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_TAKE, rq), -ENOENT);
	/* a credential registers one id: its registration of another replaces the first */
	reg_fill(rq = push_req("r5", "token:c"), 1000 + 60002, 0x66);
	assert_int_equal(push_op(s2, VG_STORE_PUSH_REG_PUT, rq), 0);
	rq = push_req("r3", "token:c");
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_TAKE, rq), -ENOENT);
	rq = push_req("r5", "token:c");
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_TAKE, rq), 0);
	vg_store_close(s);
	vg_store_close(s2);
}

static int push_due_cb(void *arg, const struct vg_store_due *a)
{
	struct vg_store_due *out = arg;

	if (strcmp(a->id, "a1") == 0)
		*out = *a;
	return 0;
}

/* the stale flag: set by one compare-and-set per episode; listed; gone with the agent */
static void store_push_state_listed_and_removed_with_agent(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b), *s2 = open_or_skip(b);
	struct vg_store_push_req *rq;
	struct vg_store_due due = { 0 };
	struct vg_diag d = { 0 };

	put_push_agent(s, "a1", "token:a");
	/* no row yet: one is made by the first verifier's set, the second's finds it set */
	rq = push_req("a1", "");
	rq->col = VG_STORE_PUSH_COL_STALE;
	rq->expect = 0;
	rq->value = 1;
	assert_int_equal(push_op(s, VG_STORE_PUSH_CAS, rq), 0);
	assert_true(rq->changed);
	assert_int_equal(push_op(s2, VG_STORE_PUSH_CAS, rq), 0);
	assert_false(rq->changed);
	assert_int_equal(vg_store_agent_due(s2, 0, push_due_cb, &due, &d), 0);
	assert_string_equal(due.id, "a1");
	assert_true(due.stale);
	/* a push judged meanwhile: a set made on the listing before it changes nothing */
	assert_int_equal(push_chal(s, "a1", "token:a", 1, 1000), 0);
	assert_int_equal(push_take(s, "a1", "token:a", 1, 1100), 0);
	rq = push_req("a1", "");
	rq->st.busy_until = 6100;
	rq->judged = true;
	rq->st.pushed_ms = 1000;
	assert_int_equal(push_op(s, VG_STORE_PUSH_DONE, rq), 0);
	assert_false(rq->st.stale);
	rq = push_req("a1", "");
	rq->col = VG_STORE_PUSH_COL_STALE;
	rq->value = 1;
	rq->st.pushed_ms = 0;		/* as listed before the push */
	assert_int_equal(push_op(s2, VG_STORE_PUSH_CAS, rq), 0);
	assert_false(rq->changed);
	rq = push_req("a1", "");
	rq->col = VG_STORE_PUSH_COL_QUIET;
	rq->value = VG_STORE_PUSH_QUIET_FAILED;
	rq->st.pushed_ms = 1000;
	assert_int_equal(push_op(s2, VG_STORE_PUSH_CAS, rq), 0);
	assert_true(rq->changed);
	memset(&due, 0, sizeof(due));
	assert_int_equal(vg_store_agent_due(s, 0, push_due_cb, &due, &d), 0);
	assert_false(due.stale);
	assert_int_equal(due.pushed_ms, 1000);
	assert_int_equal(due.quiet_ms, VG_STORE_PUSH_QUIET_FAILED);
	/* removed: its challenge and registration with it */
	assert_int_equal(push_chal(s, "a1", "token:a", 2, 2000), 0);
	reg_fill(rq = push_req("a1", "token:a"), 2000, 0x11);
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_PUT, rq), 0);
	assert_int_equal(vg_store_agent_del(s2, "a1", &d), 0);
	rq = push_req("a1", "token:a");
	assert_int_equal(push_op(s, VG_STORE_PUSH_REG_TAKE, rq), -ENOENT);
	put_push_agent(s, "a1", "token:a");
	assert_int_equal(push_take(s, "a1", "token:a", 2, 2100), -ENOENT);
	memset(&due, 0, sizeof(due));
	assert_int_equal(vg_store_agent_due(s, 0, push_due_cb, &due, &d), 0);
	assert_false(due.stale);
	assert_int_equal(due.pushed_ms, 0);
	assert_int_equal(due.quiet_ms, 0);
	/* and a set on a removed agent makes no row */
	assert_int_equal(vg_store_agent_del(s2, "a1", &d), 0);
	rq = push_req("a1", "");
	rq->col = VG_STORE_PUSH_COL_STALE;
	rq->value = 1;
	assert_int_equal(push_op(s2, VG_STORE_PUSH_CAS, rq), 0);
	assert_false(rq->changed);
	vg_store_close(s);
	vg_store_close(s2);
}

/* a store made before the push tables (main's binary): they are made on open */
static void store_without_push_tables_gains_them(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b);
	static const char drop[] = "DROP TABLE push_state; DROP TABLE push_regs;";

	put_push_agent(s, "a1", "token:a");
	vg_store_close(s);
	if (b->pg) {
		PGconn *pc = PQconnectdb(b->url);

		assert_int_equal(PQstatus(pc), CONNECTION_OK);
		admin_exec(pc, drop);
		PQfinish(pc);
	} else {
		char cmd[sizeof(b->url) + sizeof(drop) + 32];

		snprintf(cmd, sizeof(cmd), "sqlite3 '%s' \"%s\"", b->url, drop);
		assert_int_equal(system(cmd), 0);
	}
	s = open_or_skip(b);
	assert_int_equal(push_chal(s, "a1", "token:a", 1, 1000), 0);
	assert_int_equal(push_take(s, "a1", "token:a", 1, 1100), 0);
	vg_store_close(s);
}

static void store_verifier_heartbeats(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_verifier v = { .pid = 42, .started = 100, .beat = 1000, .max_rounds = 16 },
				 got[4];
	struct vg_diag d = { 0 };
	int64_t day = 24 * 3600 * 1000LL;

	snprintf(v.id, sizeof(v.id), "vb");
	snprintf(v.host, sizeof(v.host), "host-\xc3\xa9");
	assert_int_equal(vg_store_verifier_beat(s, &v, &d), 0);
	snprintf(v.id, sizeof(v.id), "va");
	v.rounds = 7;
	assert_int_equal(vg_store_verifier_beat(s, &v, &d), 0);
	v.beat = 2000;
	v.running = 3;
	v.late = 1;
	assert_int_equal(vg_store_verifier_beat(s, &v, &d), 0);	/* replaced, not added */
	memset(got, 0, sizeof(got));
	assert_int_equal(vg_store_verifier_list(s, vrf_cb, got, &d), 0);
	assert_string_equal(got[0].id, "va");
	assert_int_equal(got[0].beat, 2000);
	assert_int_equal(got[0].running, 3);
	assert_int_equal(got[0].rounds, 7);
	assert_int_equal(got[0].late, 1);
	assert_int_equal(got[0].pid, 42);
	assert_string_equal(got[1].id, "vb");
	assert_string_equal(got[1].host, "host-\xc3\xa9");
	assert_int_equal(got[1].max_rounds, 16);
	assert_null(got[2].id[0] ? got[2].id : NULL);
	/* a verifier silent for a day goes when another beats */
	v.beat = 1000 + day + 1;
	assert_int_equal(vg_store_verifier_beat(s, &v, &d), 0);
	memset(got, 0, sizeof(got));
	assert_int_equal(vg_store_verifier_list(s, vrf_cb, got, &d), 0);
	assert_string_equal(got[0].id, "va");
	assert_int_equal(got[1].id[0], 0);
	vg_store_close(s);
}

static int pipe_cb(void *arg, const char *id, int64_t due)
{
	(void)due;
	return dprintf(*(int *)arg, "%s\n", id) < 0 ? -EIO : 0;
}

/*
 * Four verifiers (processes, connections) claim from 200 due agents at
 * once, a few at a time: each agent goes to exactly one (SKIP LOCKED), and
 * all are claimed.
 */
static void pg_concurrent_claims_take_each_agent_once(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b);
	struct vg_store_agent a;
	struct vg_diag d = { 0 };
	int fds[2], seen[200] = { 0 };
	char line[64];
	FILE *f;

	for (int i = 0; i < 200; i++) {
		char id[16];

		snprintf(id, sizeof(id), "h%03d", i);
		sample_agent(&a, id);
		assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	}
	vg_store_close(s);
	assert_int_equal(pipe(fds), 0);
	for (int k = 0; k < 4; k++) {
		if (fork() == 0) {
			struct vg_store *c = NULL;
			char who[8];
			int n;

			close(fds[0]);
			snprintf(who, sizeof(who), "v%d", k);
			if (vg_store_open(b->url, &c, &d) < 0)
				_exit(1);
			do
				n = vg_store_lease_claim(c, who, 1000, 60000, 3, pipe_cb, &fds[1], &d);
			while (n > 0);
			vg_store_close(c);
			_exit(n < 0 ? 2 : 0);
		}
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int i = atoi(line + 1);

		assert_true(i >= 0 && i < 200);
		seen[i]++;
	}
	fclose(f);
	for (int k = 0; k < 4; k++) {
		int st;

		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (int i = 0; i < 200; i++)
		assert_int_equal(seen[i], 1);
}

/*
 * A store made before leases (no scheduling columns, no verifiers table,
 * no failure_count) gains them; with @sched, one made after leases and
 * before failure_count. An agent stored before reads failure_count 0.
 */
static void old_schema(struct backend *b, bool sched)
{
	struct vg_store *s;
	struct vg_store_agent a;
	struct vg_diag d = { 0 };
	struct claims c = { 0 };
	static const char old[] =
		"CREATE TABLE agents (id TEXT PRIMARY KEY, url TEXT NOT NULL, policy TEXT NOT NULL,"
		" ek_pub BLOB, ek_cert BLOB, ak_pub BLOB, state INTEGER NOT NULL, bank INTEGER NOT NULL,"
		" mask INTEGER NOT NULL, clock_valid INTEGER NOT NULL, clock INTEGER NOT NULL,"
		" reset_count INTEGER NOT NULL, restart_count INTEGER NOT NULL,"
		" log_entries INTEGER NOT NULL, log_offset INTEGER NOT NULL,"
		" log_pcr_algo INTEGER NOT NULL, log_pcr BLOB, log_lag INTEGER NOT NULL,"
		" rounds INTEGER NOT NULL, reboots INTEGER NOT NULL, comm_errors INTEGER NOT NULL,"
		" registered_at INTEGER NOT NULL, last_ok INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
		" last_fail TEXT NOT NULL, last_msg TEXT NOT NULL);";

	static const char sq_sched[] =
		"ALTER TABLE agents ADD COLUMN next_due INTEGER NOT NULL DEFAULT 0;"
		"ALTER TABLE agents ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE agents ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;";
	static const char pg_sched[] =
		"ALTER TABLE agents ADD COLUMN next_due BIGINT NOT NULL DEFAULT 0;"
		"ALTER TABLE agents ADD COLUMN lease_owner TEXT COLLATE \"C\" NOT NULL DEFAULT '';"
		"ALTER TABLE agents ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;";
	/* one agent written as the old verifier did */
	static const char row[] =
		"INSERT INTO agents (id, url, policy, state, bank, mask, clock_valid, clock,"
		" reset_count, restart_count, log_entries, log_offset, log_pcr_algo, log_pcr, log_lag,"
		" rounds, reboots, comm_errors, registered_at, last_ok, last_seen, last_fail, last_msg)"
		" VALUES ('before', 'http://x', '', 2, 0, 0, 0, 0, 0, 0, 0, 0, 4, zeroblob(32), 0, 0, 0,"
		" 0, 0, 0, 0, 'policy.digest', 'm');";
	struct vg_store_agent up;

	if (b->pg) {
		/* the agents table as store_pg.c made it before leases */
		static const char pgold[] =
			"CREATE TABLE agents (id TEXT COLLATE \"C\" PRIMARY KEY, url BYTEA NOT NULL,"
			" policy TEXT COLLATE \"C\" NOT NULL, ek_pub BYTEA, ek_cert BYTEA, ak_pub BYTEA,"
			" state BIGINT NOT NULL, bank BIGINT NOT NULL, mask BIGINT NOT NULL,"
			" clock_valid BIGINT NOT NULL, clock BIGINT NOT NULL, reset_count BIGINT NOT NULL,"
			" restart_count BIGINT NOT NULL, log_entries BIGINT NOT NULL,"
			" log_offset BIGINT NOT NULL, log_pcr_algo BIGINT NOT NULL, log_pcr BYTEA,"
			" log_lag BIGINT NOT NULL, rounds BIGINT NOT NULL, reboots BIGINT NOT NULL,"
			" comm_errors BIGINT NOT NULL, registered_at BIGINT NOT NULL,"
			" last_ok BIGINT NOT NULL, last_seen BIGINT NOT NULL, last_fail TEXT NOT NULL,"
			" last_msg BYTEA NOT NULL)";
		PGconn *pc = PQconnectdb(b->url);

		assert_int_equal(PQstatus(pc), CONNECTION_OK);
		admin_exec(pc, pgold);
		if (sched)
			admin_exec(pc, pg_sched);
		admin_exec(pc, "INSERT INTO agents (id, url, policy, state, bank, mask, clock_valid,"
			   " clock, reset_count, restart_count, log_entries, log_offset, log_pcr_algo,"
			   " log_pcr, log_lag, rounds, reboots, comm_errors, registered_at, last_ok,"
			   " last_seen, last_fail, last_msg) VALUES ('before', 'http://x', '', 2, 0, 0,"
			   " 0, 0, 0, 0, 0, 0, 4, decode(repeat('00', 32), 'hex'), 0, 0, 0, 0, 0, 0, 0,"
			   " 'policy.digest', 'm')");
		PQfinish(pc);
	} else {
		char cmd[sizeof(old) + sizeof(sq_sched) + sizeof(row) + sizeof(b->url) + 32];

		snprintf(cmd, sizeof(cmd), "sqlite3 '%s' \"%s%s%s\"", b->url, old,
			 sched ? sq_sched : "", row);
		assert_int_equal(system(cmd), 0);
	}
	s = open_or_skip(b);
	sample_agent(&a, "old1");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_lease_claim(s, "v1", 5, 10, 4, claim_cb, &c, &d), 1);
	assert_string_equal(agent_at(s, "old1")->lease_owner, "v1");
	assert_int_equal(agent_at(s, "before")->failure_count, 0);
	assert_int_equal(agent_at(s, "before")->last_fail, VG_AF_DIGEST);
	/* the new column is written and read, by put and by update */
	a.failure_count = 3;
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(agent_at(s, "old1")->failure_count, 3);
	up = a;
	up.failure_count = 70;
	assert_int_equal(vg_store_agent_update(s, &a, &up, &d), 0);
	assert_int_equal(agent_at(s, "old1")->failure_count, 70);
	vg_store_close(s);
}

static void store_old_schema_gains_the_schedule(void **state)
{
	struct backend *b = *state;

	if (!b->url[0])
		skip();
	old_schema(b, false);
}

static void store_schema_with_leases_gains_failure_count(void **state)
{
	struct backend *b = *state;

	if (!b->url[0])
		skip();
	old_schema(b, true);
}

/* the same random operations on both backends give the same results */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

static void rnd_text(char *s, size_t cap)
{
	size_t n = rnd((uint32_t)cap);

	for (size_t i = 0; i < n; i++)
		s[i] = (char)(1 + rnd(255));		/* any byte but NUL */
	s[n] = 0;
}

struct dump {
	char buf[1 << 20];
	size_t len;
};

static void dump_add(struct dump *d, const void *p, size_t n)
{
	if (d->len + n <= sizeof(d->buf)) {
		memcpy(d->buf + d->len, p, n);
		d->len += n;
	}
}

static int dump_agent(void *arg, const struct vg_store_agent *a)
{
	dump_add(arg, a, sizeof(*a));
	return 0;
}

static int dump_verdict(void *arg, const struct vg_store_verdict *v)
{
	dump_add(arg, v, sizeof(*v));
	return 0;
}

static void store_backends_agree_on_random_operations(void **state)
{
	struct vg_store *s[2];
	static const char *const names[] = { "h1", "h2", "H1", "x_3", "-", "a.b" };
	struct vg_diag d = { 0 };
	char bytes[256];

	(void)state;
	for (int i = 0; i < 256; i++)
		bytes[i] = (char)(255 - i);
	s[1] = open_or_skip(&be_diff);
	s[0] = open_or_skip(&be_sqlite);
	for (int op = 0; op < 400; op++) {
		uint32_t kind = rnd(10);
		const char *id = names[rnd(6)];
		struct vg_store_agent a;
		struct vg_store_verdict v;
		static struct dump out[2];
		int r[2];

		memset(&a, 0, sizeof(a));
		memset(&v, 0, sizeof(v));
		if (kind == 0 || kind == 1) {
			sample_agent(&a, id);
			rnd_text(a.url, sizeof(a.url));
			for (int i = 0; i < 4; i++)	/* names: the verifier allows [A-Za-z0-9._-] */
				a.policy[i] = "aZ9._-"[rnd(6)];
			rnd_text(a.last_msg, sizeof(a.last_msg));
			a.ek_cert_len = rnd(sizeof(a.ek_cert) + 1);
			for (size_t i = 0; i < a.ek_cert_len; i++)
				a.ek_cert[i] = (uint8_t)rnd(256);
			a.state = rnd(4);
			a.last_fail = rnd(VG_AF__COUNT + 2);
			a.failure_count = rnd(200);
			a.rounds = ((uint64_t)rnd(UINT32_MAX) << 32) | rnd(UINT32_MAX);
			a.st.clock.clock = ((uint64_t)rnd(UINT32_MAX) << 32) | rnd(UINT32_MAX);
		} else if (kind == 5 || kind == 6) {
			v.time = (int64_t)rnd(1000) - 500;
			v.fail = rnd(VG_AF__COUNT);
			v.entry = (int64_t)rnd(100) - 1;
			rnd_text(v.path, sizeof(v.path));
			rnd_text(v.digest, sizeof(v.digest));
			rnd_text(v.msg, sizeof(v.msg));
		}
		for (int k = 0; k < 2; k++) {
			struct vg_store_agent got;
			char *doc = NULL;
			size_t len = 0;

			memset(&out[k], 0, sizeof(out[k]));
			memset(&got, 0, sizeof(got));
			if (kind == 9) {	/* compare-and-set from the current row, or a stale one */
				struct vg_store_agent cur;

				if (vg_store_agent_get(s[k], id, &cur, &d) < 0 || rnd_state % 3 == 0)
					sample_agent(&cur, id);
				got = cur;
				got.rounds++;
				got.st.log.entries += op;
				r[k] = vg_store_agent_update(s[k], &cur, &got, &d);
				continue;
			}
			switch (kind) {
			case 0: case 1: r[k] = vg_store_agent_put(s[k], &a, &d); break;
			case 2:
				r[k] = vg_store_agent_get(s[k], id, &got, &d);
				dump_agent(&out[k], &got);
				break;
			case 3: r[k] = vg_store_agent_del(s[k], id, &d); break;
			case 4: r[k] = vg_store_agent_list(s[k], dump_agent, &out[k], &d); break;
			case 5: r[k] = vg_store_verdict_add(s[k], id, &v, &d); break;
			case 6:
				r[k] = vg_store_verdict_list(s[k], id, rnd_state % 4 ? 5 : SIZE_MAX,
							     dump_verdict, &out[k], &d);
				break;
			case 7:
				r[k] = vg_store_policy_put(s[k], id, bytes + op % 7, (size_t)op % 200, &d);
				break;
			default:
				r[k] = op % 3 ? vg_store_policy_get(s[k], id, &doc, &len, &d)
					      : vg_store_policy_del(s[k], id, &d);
				dump_add(&out[k], &len, sizeof(len));
				if (doc)
					dump_add(&out[k], doc, len + 1);
				free(doc);
				break;
			}
		}
		if (r[0] != r[1] || out[0].len != out[1].len ||
		    memcmp(out[0].buf, out[1].buf, out[0].len) != 0)
			fail_msg("operation %d (kind %u, id %s): sqlite %d, postgresql %d, %zu/%zu bytes "
				 "of results differ (%s)", op, kind, id, r[0], r[1], out[0].len, out[1].len,
				 d.msg);
	}
	vg_store_close(s[0]);
	vg_store_close(s[1]);
}

/* two (here four) verifiers starting at once on an empty database */
static void pg_schema_created_once_by_concurrent_opens(void **state)
{
	struct backend *b = *state;
	int go[2], ok = 0;
	pid_t pids[4];

	if (!b->url[0])
		skip();
	assert_int_equal(pipe(go), 0);
	for (int i = 0; i < 4; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct vg_store *s;
			struct vg_store_agent a;
			char c;
			int r;

			close(go[1]);
			if (read(go[0], &c, 1) != 0)	/* EOF: everybody goes */
				_exit(3);
			r = vg_store_open(b->url, &s, NULL);
			if (r == 0) {
				char id[16];

				snprintf(id, sizeof(id), "agent-%d", i);
				sample_agent(&a, id);
				r = vg_store_agent_put(s, &a, NULL);
				vg_store_close(s);
			}
			_exit(r == 0 ? 0 : 1);
		}
	}
	close(go[0]);
	usleep(100000);
	close(go[1]);
	for (int i = 0; i < 4; i++) {
		int st;

		waitpid(pids[i], &st, 0);
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	assert_int_equal(ok, 4);
	{
		struct vg_store *s = open_or_skip(b);
		int n = 0;

		assert_int_equal(vg_store_agent_list(s, count_cb, &n, NULL), 0);
		assert_int_equal(n, 4);
		vg_store_close(s);
	}
}

static void kill_connections(const struct backend *b)
{
	PGconn *c = admin();
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
		 "WHERE datname = '%s' AND pid <> pg_backend_pid()", b->dbname);
	admin_exec(c, sql);
	PQfinish(c);
	usleep(100000);
}

/* the server drops our connection (restart, failover, idle kill): the next call reconnects */
static void pg_reconnects_after_the_server_drops_the_connection(void **state)
{
	struct vg_store *s = open_or_skip(*state);
	struct vg_store_agent a, b;
	struct vg_diag d = { 0 };
	int n = 0;

	sample_agent(&a, "agent-1");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	kill_connections(*state);
	assert_int_equal(vg_store_agent_get(s, "agent-1", &b, &d), 0);	/* prepared again too */
	assert_memory_equal(&a, &b, sizeof(a));
	kill_connections(*state);
	a.rounds = 77;
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	kill_connections(*state);
	assert_int_equal(vg_store_agent_list(s, count_cb, &n, &d), 0);
	assert_int_equal(n, 1);
	assert_int_equal(vg_store_agent_get(s, "agent-1", &b, &d), 0);
	assert_int_equal(b.rounds, 77);
	vg_store_close(s);
}

/* the database is gone for good: -EIO naming the operation, and the handle recovers when it is back */
static void pg_fails_with_eio_while_database_is_gone(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b);
	struct vg_store_agent a;
	struct vg_diag d = { 0 };
	PGconn *c;
	char sql[256];

	sample_agent(&a, "agent-1");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	/* refuse new connections to the database, then drop ours */
	c = admin();
	snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS false", b->dbname);
	admin_exec(c, sql);
	kill_connections(b);
	assert_int_equal(vg_store_agent_get(s, "agent-1", &a, &d), -EIO);
	assert_non_null(strstr(d.msg, "agent get"));
	assert_non_null(strstr(d.msg, "not currently accepting connections"));
	memset(&d, 0, sizeof(d));
	assert_int_equal(vg_store_agent_put(s, &a, &d), -EIO);
	assert_non_null(strstr(d.msg, "agent put"));
	snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS true", b->dbname);
	admin_exec(c, sql);
	PQfinish(c);
	assert_int_equal(vg_store_agent_get(s, "agent-1", &a, &d), 0);
	vg_store_close(s);
}

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The server accepts but never answers (our backend stopped, as a hung
 * server or a lock held for ever would look): -ETIMEDOUT at the deadline,
 * and the next call has a connection of its own.
 */
static void pg_times_out_when_the_server_hangs(void **state)
{
	struct backend *b = *state;
	struct vg_store *s = open_or_skip(b);
	struct vg_store_agent a, got;
	struct vg_diag d = { 0 }, d2 = { 0 };
	PGconn *c = admin();
	int64_t t0, waited;
	char sql[256];
	PGresult *res;
	int r1, r2;
	pid_t pid;

	sample_agent(&a, "agent-1");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	snprintf(sql, sizeof(sql), "SELECT pid FROM pg_stat_activity WHERE datname = '%s' "
		 "AND pid <> pg_backend_pid()", b->dbname);
	res = PQexec(c, sql);
	assert_int_equal(PQntuples(res), 1);
	pid = (pid_t)atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	vg_store_set_timeout(s, 300);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	t0 = mono_ms();
	r1 = vg_store_agent_get(s, "agent-1", &got, &d);
	waited = mono_ms() - t0;
	r2 = vg_store_agent_get(s, "agent-1", &got, &d2);	/* the old backend still stopped */
	kill(pid, SIGCONT);
	PQfinish(c);
	assert_int_equal(r1, -ETIMEDOUT);
	assert_true(waited >= 290 && waited < 3000);
	assert_non_null(strstr(d.msg, "agent get: the database did not answer within 300 ms"));
	assert_int_equal(r2, 0);
	assert_memory_equal(&a, &got, sizeof(a));
	vg_store_close(s);
}

#define BOTH(f) \
	{ "sqlite: " #f, f, setup, teardown, &be_sqlite }, \
	{ "postgresql: " #f, f, setup, teardown, &be_pg }
#define PG(f) { "postgresql: " #f, f, setup, teardown, &be_pg }

static int diff_setup(void **state)
{
	void *s = &be_sqlite;

	*state = &be_diff;	/* in place of &be_pg: only there for the filter in main() */
	if (setup(state) < 0)
		return -1;
	return setup(&s);
}

static int diff_teardown(void **state)
{
	void *s = &be_sqlite;

	teardown(&s);
	*state = &be_diff;
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(store_roundtrips_agents_policies_verdicts),
		BOTH(store_keeps_bytes_and_limits),
		BOTH(store_finds_agents_by_key),
		BOTH(store_makes_the_ek_keys_it_lacks),
		BOTH(store_lists_agents_in_bytewise_order),
		BOTH(store_history_newest_first_limited_deleted_with_agent),
		BOTH(store_update_is_compare_and_set),
		BOTH(store_leases_claim_release_expire),
		BOTH(store_due_lists_what_the_scheduler_needs),
		BOTH(store_lease_take_releases_then_claims_with_rows),
		BOTH(store_counts_agents_by_state),
		BOTH(store_verifier_heartbeats),
		BOTH(store_push_nonce_taken_once_by_any_verifier),
		BOTH(store_push_registration_taken_once_bounded),
		BOTH(store_push_state_listed_and_removed_with_agent),
		BOTH(store_without_push_tables_gains_them),
		BOTH(store_old_schema_gains_the_schedule),
		BOTH(store_schema_with_leases_gains_failure_count),
		PG(pg_concurrent_claims_take_each_agent_once),
		cmocka_unit_test(url_scrub_hides_every_password),
		cmocka_unit_test(open_refused_names_url_without_password),
		{ "postgresql: store_backends_agree_on_random_operations",
		  store_backends_agree_on_random_operations, diff_setup, diff_teardown, &be_pg },
		PG(pg_schema_created_once_by_concurrent_opens),
		PG(pg_reconnects_after_the_server_drops_the_connection),
		PG(pg_fails_with_eio_while_database_is_gone),
		PG(pg_times_out_when_the_server_hangs),
	};
	struct CMUnitTest run[sizeof(tests) / sizeof(tests[0])];
	size_t n = 0;
	const char *pg = getenv("VIGIL_TEST_PG");

	/* without a server the PostgreSQL cases are left out (test_store_pg runs them) */
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if ((pg && *pg) || tests[i].initial_state != &be_pg)
			run[n++] = tests[i];
	if (!pg || !*pg)
		printf("# VIGIL_TEST_PG unset: SQLite only (the test_store_pg test runs the "
		       "PostgreSQL cases)\n");
	return _cmocka_run_group_tests("test_store", run, n, NULL, NULL);
}
