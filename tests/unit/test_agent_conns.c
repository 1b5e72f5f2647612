// SPDX-License-Identifier: MIT
/*
 * test_agent_conns.c - vigil-verifier's pool of agents' handles
 * (verifier/agent_conns.h): one handle per peer, never another peer's;
 * at most its cap kept, the ones kept staying kept when it is full; a
 * second handle of a peer closed when both are back; an idle one closed
 * by a later give, making room. No network: a handle is a libcurl easy
 * handle that has asked nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent_conns.h"

#define PEER(s) (s), strlen(s)

static struct vf_conn *get(struct vf_conns *p, const char *peer)
{
	struct vf_conn *e = vf_conns_take(p, PEER(peer));

	return e ? e : vf_conn_new(PEER(peer));
}

static void test_one_per_peer(void **state)
{
	struct vf_conns *p;
	struct vf_conn *a, *b, *a2;
	unsigned int kept;
	uint64_t full;

	(void)state;
	assert_int_equal(vf_conns_new(4, 60000, &p), 0);
	assert_null(vf_conns_take(p, PEER("https://a:1")));
	a = get(p, "https://a:1");
	b = get(p, "https://a:1/x");	/* another peer: a prefix is not the same peer */
	assert_true(vf_conn_is(a, PEER("https://a:1")));
	assert_false(vf_conn_is(a, PEER("https://a:1/x")));
	assert_true(vf_conns_give(p, a, 1000));
	assert_true(vf_conns_give(p, b, 1000));
	/* each peer finds its own handle, and only its own */
	a2 = vf_conns_take(p, PEER("https://a:1"));
	assert_ptr_equal(a2, a);
	assert_null(vf_conns_take(p, PEER("https://a:1")));
	assert_null(vf_conns_take(p, PEER("https://a:")));
	assert_ptr_equal(vf_conns_take(p, PEER("https://a:1/x")), b);
	/* two exchanges with one peer at once: two handles, one kept after */
	a2 = vf_conn_new(PEER("https://a:1"));
	assert_true(vf_conns_give(p, a, 2000));
	assert_true(vf_conns_give(p, a2, 2000));	/* closed: a is kept */
	assert_true(vf_conns_give(p, b, 2000));
	vf_conns_count(p, &kept, &full);
	assert_int_equal(kept, 2);
	assert_int_equal(full, 0);
	assert_ptr_equal(vf_conns_take(p, PEER("https://a:1")), a);
	vf_conn_close(a);
	vf_conns_free(p);
}

static void test_full_keeps_the_kept(void **state)
{
	struct vf_conns *p;
	struct vf_conn *e[6];
	char peer[6][32];
	unsigned int kept;
	uint64_t full;

	(void)state;
	assert_int_equal(vf_conns_new(3, 60000, &p), 0);
	/* a cyclic schedule of 6 agents over a pool of 3, twice */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 6; i++) {
			snprintf(peer[i], sizeof(peer[i]), "http://h:%d/a/%d", 9000 + i, i);
			e[i] = get(p, peer[i]);
			if (round == 1 && i < 3)
				assert_non_null(e[i]->c);
			if (!vf_conns_give(p, e[i], 1000 + round * 10 + i)) {
				assert_true(i >= 3);	/* the first three stay kept */
				vf_conn_close(e[i]);
			} else {
				assert_true(i < 3);
			}
		}
	vf_conns_count(p, &kept, &full);
	assert_int_equal(kept, 3);
	assert_int_equal(full, 6);
	for (int i = 0; i < 3; i++) {
		struct vf_conn *t = vf_conns_take(p, PEER(peer[i]));

		assert_non_null(t);
		assert_true(vf_conns_give(p, t, 2000));
	}
	vf_conns_free(p);
}

static void test_idle_closed_makes_room(void **state)
{
	struct vf_conns *p;
	struct vf_conn *a, *b, *c;
	unsigned int kept;
	uint64_t full;

	(void)state;
	assert_int_equal(vf_conns_new(2, 10000, &p), 0);
	a = get(p, "http://a:1");
	b = get(p, "http://b:1");
	assert_true(vf_conns_give(p, a, 1000));
	assert_true(vf_conns_give(p, b, 8000));
	c = get(p, "http://c:1");
	/* at 10999 nothing has been idle 10 s: full */
	assert_false(vf_conns_give(p, c, 10999));
	/* at 11000 a has: closed, c kept in its place; b stays */
	assert_true(vf_conns_give(p, c, 11000));
	assert_null(vf_conns_take(p, PEER("http://a:1")));
	vf_conns_count(p, &kept, &full);
	assert_int_equal(kept, 2);
	assert_int_equal(full, 1);
	assert_ptr_equal(vf_conns_take(p, PEER("http://b:1")), b);
	assert_ptr_equal(vf_conns_take(p, PEER("http://c:1")), c);
	vf_conn_close(b);
	vf_conn_close(c);
	vf_conns_free(p);
}

static void test_refusals(void **state)
{
	struct vf_conns *p = (void *)1;

	(void)state;
	assert_int_equal(vf_conns_new(0, 1000, &p), -EINVAL);
	assert_null(p);
	vf_conns_free(NULL);
	vf_conn_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_per_peer),
		cmocka_unit_test(test_full_keeps_the_kept),
		cmocka_unit_test(test_idle_closed_makes_room),
		cmocka_unit_test(test_refusals),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
