// SPDX-License-Identifier: MIT
/*
 * test_attest_api.c - the push-mode messages of attest_api.h: the
 * challenge the verifier hands out (the agent parses it) and the evidence
 * the agent pushes (the verifier parses it), and the push routes. The
 * other messages are covered by tests/fuzz/fuzz_http_api.c and the
 * end-to-end tests.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/hash.h"

#define NONCE "00112233445566778899aabbccddeeff00112233"

static int challenge(const char *s, struct vg_api_challenge *c, struct vg_diag *d)
{
	return vg_api_challenge_parse((const uint8_t *)s, strlen(s), c, d);
}

static void challenge_parse_round_trips(void **state)
{
	struct vg_api_challenge c, c2;
	char *s = NULL;

	(void)state;
	assert_int_equal(challenge("{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\","
				   "\"log_offset\":\"18446\",\"boot_log\":true,\"interval_ms\":2000}",
				   &c, NULL), 0);
	assert_int_equal(c.q.nonce_len, 20);
	assert_int_equal(c.q.nonce[1], 0x11);
	assert_int_equal(c.q.bank, VG_HASH_SHA256);
	assert_int_equal(c.q.mask, 0x400);
	assert_int_equal(c.log_offset, 18446);
	assert_true(c.boot_log);
	assert_int_equal(c.interval_ms, 2000);
	assert_true(vg_api_challenge_build(&c, &s) > 0);
	assert_int_equal(challenge(s, &c2, NULL), 0);
	assert_memory_equal(&c.q, &c2.q, sizeof(c.q));
	assert_true(c2.log_offset == c.log_offset && c2.boot_log && c2.interval_ms == 2000);
	free(s);
	/* boot_log and interval_ms may be absent */
	assert_int_equal(challenge("{\"nonce\":\"" NONCE "\",\"bank\":\"sha1\",\"mask\":\"1\","
				   "\"log_offset\":\"0\"}", &c, NULL), 0);
	assert_false(c.boot_log);
	assert_int_equal(c.interval_ms, 0);
}

static void challenge_parse_rejects_bad_fields(void **state)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"0011\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"md5\",\"mask\":\"400\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"0\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"1000000\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":\"-1\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":12}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":"
		"\"9223372036854775808\"}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":\"0\","
		"\"boot_log\":1}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":\"0\","
		"\"interval_ms\":-5}",
		"{\"nonce\":\"" NONCE "\",\"bank\":\"sha256\",\"mask\":\"400\",\"log_offset\":\"0\","
		"\"interval_ms\":\"5\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vg_api_challenge c;
		struct vg_diag d = { 0 };

		assert_int_equal(challenge(bad[i], &c, &d), -EBADMSG);
		assert_true(d.msg[0] != 0);
	}
}

static int push(const char *s, struct vg_api_push *p, struct vg_diag *d)
{
	return vg_api_push_parse((const uint8_t *)s, strlen(s), VG_API_MSG_MAX, p, d);
}

static void push_parse_round_trips(void **state)
{
	struct vg_api_push p, p2;
	char *s = NULL;

	(void)state;
	assert_int_equal(push("{\"nonce\":\"" NONCE "\",\"quote\":\"{\\\"attest\\\":1}\","
			      "\"log_offset\":\"7\",\"log\":\"AAECAw==\",\"boot_log\":\"\"}", &p, NULL),
			 0);
	assert_int_equal(p.nonce_len, 20);
	assert_string_equal(p.quote, "{\"attest\":1}");
	assert_int_equal(p.quote_len, 12);
	assert_int_equal(p.log_offset, 7);
	assert_true(p.have_log && p.log_len == 4 && p.log[3] == 3);
	assert_true(p.have_boot && p.boot_len == 0 && !p.boot_log);
	assert_true(vg_api_push_build(&p, &s) > 0);
	assert_int_equal(push(s, &p2, NULL), 0);
	assert_int_equal(p2.quote_len, p.quote_len);
	assert_memory_equal(p2.log, p.log, 4);
	assert_true(p2.have_boot && !p2.boot_len);
	vg_api_push_release(&p);
	vg_api_push_release(&p2);
	free(s);
	/* no list, no boot log: neither was sent */
	assert_int_equal(push("{\"nonce\":\"" NONCE "\",\"quote\":\"q\",\"log_offset\":\"0\"}", &p,
			      NULL), 0);
	assert_false(p.have_log || p.have_boot);
	vg_api_push_release(&p);
}

static void push_parse_rejects_bad_fields(void **state)
{
	static const char *const bad[] = {
		"{\"quote\":\"q\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"00\",\"quote\":\"q\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "zz\",\"quote\":\"q\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"quote\":5,\"log_offset\":\"0\"}",
		"{\"nonce\":\"" NONCE "\",\"quote\":\"q\"}",
		"{\"nonce\":\"" NONCE "\",\"quote\":\"q\",\"log_offset\":\"0\",\"log\":\"!!\"}",
		"{\"nonce\":\"" NONCE "\",\"quote\":\"q\",\"log_offset\":\"0\",\"boot_log\":7}",
		"{\"nonce\":\"" NONCE "\",\"quote\":\"q\",\"log_offset\":\"0\"} x",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vg_api_push p;
		struct vg_diag d = { 0 };

		assert_int_equal(push(bad[i], &p, &d), -EBADMSG);
		assert_true(d.msg[0] != 0);
	}
}

static void push_parse_bounds_the_body(void **state)
{
	const char *s = "{\"nonce\":\"" NONCE "\",\"quote\":\"q\",\"log_offset\":\"0\"}";
	struct vg_api_push p;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_api_push_parse((const uint8_t *)s, strlen(s), 16, &p, &d), -EBADMSG);
}

static void route_finds_push_endpoints(void **state)
{
	struct vg_api_route rt;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_api_route("POST", "/v1/push/h1/register", &rt, NULL), 0);
	assert_int_equal(rt.ep, VG_API_PUSH_REGISTER);
	assert_string_equal(rt.id, "h1");
	assert_int_equal(vg_api_route("POST", "/v1/push/h1/activate", &rt, NULL), 0);
	assert_int_equal(rt.ep, VG_API_PUSH_ACTIVATE);
	assert_int_equal(vg_api_route("POST", "/v1/push/h1/nonce", &rt, NULL), 0);
	assert_int_equal(rt.ep, VG_API_PUSH_NONCE);
	assert_int_equal(vg_api_route("POST", "/v1/push/h1/evidence", &rt, NULL), 0);
	assert_int_equal(rt.ep, VG_API_PUSH_EVIDENCE);
	assert_int_equal(vg_api_route("GET", "/v1/push/h1/nonce", &rt, &d), -EOPNOTSUPP);
	assert_int_equal(vg_api_route("POST", "/v1/push/h1/other", &rt, NULL), -ENOENT);
	assert_int_equal(vg_api_route("POST", "/v1/push/h1", &rt, NULL), -ENOENT);
	assert_int_equal(vg_api_route("POST", "/v1/push/h!1/nonce", &rt, NULL), -EBADMSG);
}

static void route_finds_agent_ear(void **state)
{
	struct vg_api_route rt;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_api_route("GET", "/v1/agents/h1/ear", &rt, NULL), 0);
	assert_int_equal(rt.ep, VG_API_AGENT_EAR);
	assert_int_equal(rt.role, VG_AUTH_READ);
	assert_string_equal(rt.id, "h1");
	assert_int_equal(vg_api_route("POST", "/v1/agents/h1/ear", &rt, &d), -EOPNOTSUPP);
	assert_int_equal(vg_api_route("GET", "/v1/agents/h1/ears", &rt, NULL), -ENOENT);
}

/* "ear" and "eat_nonce" beside "type" and "data": checked before the evidence itself */
static void evidence_parse_checks_ear_fields(void **state)
{
	static const struct { const char *body, *diag; } cases[] = {
		{ "{\"type\":\"tpm\",\"data\":{},\"ear\":\"yes\"}", "\"ear\"" },
		{ "{\"type\":\"tpm\",\"data\":{},\"ear\":true,\"eat_nonce\":\"short\"}", "eat_nonce" },
		{ "{\"type\":\"tpm\",\"data\":{},\"eat_nonce\":\"has a space\"}", "eat_nonce" },
		{ "{\"type\":\"tpm\",\"data\":{},\"eat_nonce\":7}", "eat_nonce" },
		/* good ones: the parse goes on to the evidence (no hash_alg here) */
		{ "{\"type\":\"tpm\",\"data\":{},\"ear\":true,\"eat_nonce\":\"n0nce-ok\"}", "hash_alg" },
		{ "{\"type\":\"tpm\",\"data\":{},\"ear\":false}", "hash_alg" },
	};
	struct vg_api_evidence *e = malloc(sizeof(*e));

	(void)state;
	assert_non_null(e);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_diag d = { 0 };

		assert_int_equal(vg_api_evidence_parse((const uint8_t *)cases[i].body,
						       strlen(cases[i].body), e, &d), -EBADMSG);
		assert_non_null(strstr(d.msg, cases[i].diag));
		vg_api_evidence_release(e);
	}
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(challenge_parse_round_trips),
		cmocka_unit_test(challenge_parse_rejects_bad_fields),
		cmocka_unit_test(push_parse_round_trips),
		cmocka_unit_test(push_parse_rejects_bad_fields),
		cmocka_unit_test(push_parse_bounds_the_body),
		cmocka_unit_test(route_finds_push_endpoints),
		cmocka_unit_test(route_finds_agent_ear),
		cmocka_unit_test(evidence_parse_checks_ear_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
