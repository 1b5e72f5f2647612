// SPDX-License-Identifier: MIT
/*
 * test_store.c - the SQLite backend of store.h: agents round-trip every
 * field, policies and verdict history, deletes, a reopen keeps the state.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vigil/store.h"

static char dir[64];
static char db[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vigil-store.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/v.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
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

static void agents_policies_verdicts_roundtrip(void **state)
{
	struct vg_store *s;
	struct vg_store_agent a, b;
	struct vg_store_verdict v = { .time = 1234, .fail = VG_AF_DIGEST, .entry = 7 }, got = { 0 };
	struct vg_diag d = { 0 };
	char *doc;
	size_t len;
	int n = 0;

	(void)state;
	assert_int_equal(vg_store_open(db, &s, &d), 0);
	memset(&a, 0, sizeof(a));
	strcpy(a.id, "agent-1");
	strcpy(a.url, "http://127.0.0.1:1");
	strcpy(a.policy, "p");
	a.ek_pub_len = 3;
	memcpy(a.ek_pub, "\x01\x02\x03", 3);
	a.ak_pub_len = 2;
	memcpy(a.ak_pub, "\xaa\xbb", 2);
	a.state = VG_AGENT_TRUSTED;
	a.bank = VG_HASH_SHA256;
	a.mask = 1u << 10;
	a.st.clock = (struct vg_attest_clock){ true, 0x1234567890ull, 5, 6 };
	vg_attest_logstate_init(&a.st.log, VG_HASH_SHA256);
	a.st.log.entries = 42;
	a.st.log.offset = 4242;
	a.st.log.pcr.bytes[31] = 0x99;
	a.rounds = 9;
	a.last_fail = VG_AF_NONCE;
	strcpy(a.last_msg, "hello");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_get(s, "agent-1", &b, &d), 0);
	assert_memory_equal(&a.st, &b.st, sizeof(a.st));
	assert_int_equal(b.ek_pub_len, 3);
	assert_int_equal(b.last_fail, VG_AF_NONCE);
	assert_string_equal(b.last_msg, "hello");
	assert_int_equal(vg_store_agent_get(s, "nope", &b, &d), -ENOENT);
	strcpy(a.id, "agent-2");
	assert_int_equal(vg_store_agent_put(s, &a, &d), 0);
	assert_int_equal(vg_store_agent_list(s, count_cb, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(vg_store_policy_put(s, "p", "{}", 2, &d), 0);
	assert_int_equal(vg_store_policy_get(s, "p", &doc, &len, &d), 0);
	assert_string_equal(doc, "{}");
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
	assert_int_equal(vg_store_open(db, &s, &d), 0);
	assert_int_equal(vg_store_agent_get(s, "agent-2", &b, &d), 0);
	assert_int_equal(b.st.log.entries, 42);
	assert_int_equal(vg_store_agent_del(s, "agent-2", &d), 0);
	assert_int_equal(vg_store_agent_del(s, "agent-2", &d), -ENOENT);
	assert_int_equal(vg_store_policy_del(s, "p", &d), 0);
	vg_store_close(s);
	assert_int_equal(vg_store_open("postgresql://x/y", &s, &d), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agents_policies_verdicts_roundtrip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
