// SPDX-License-Identifier: MIT
/*
 * test_auth.c - bearer tokens and their lists (auth.h): format, the hash a
 * list keeps, strict parsing with the line named, the check of an
 * Authorization header (roles, wrong secret, altered list), the file
 * reader's mode checks; and the strict path decoder of the API
 * (vg_api_path_decode), which both daemons route on; the verifier's route
 * table (vg_api_routes), which says who may call what.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "failalloc.h"
#include "vigil/attest_api.h"
#include "vigil/auth.h"

static const unsigned int VROLES = VG_AUTH_ADMIN | VG_AUTH_READ;

static void new_token(char tok[VG_AUTH_TOKEN_LEN + 1], char id[VG_AUTH_ID_LEN + 1])
{
	assert_int_equal(vg_auth_token_new(tok, id), 0);
	assert_int_equal(strlen(tok), VG_AUTH_TOKEN_LEN);
}

static void token_new_is_well_formed_and_fresh(void **state)
{
	char a[VG_AUTH_TOKEN_LEN + 1], b[VG_AUTH_TOKEN_LEN + 1], id[VG_AUTH_ID_LEN + 1];
	char pid[VG_AUTH_ID_LEN + 1];

	(void)state;
	new_token(a, id);
	new_token(b, NULL);
	assert_memory_equal(a, "vg1.", 4);
	assert_int_equal(vg_auth_token_parse(a, strlen(a), pid, NULL), 0);
	assert_string_equal(pid, id);
	assert_memory_equal(a + 4, id, VG_AUTH_ID_LEN);
	assert_string_not_equal(a, b);
}

static void token_parse_rejects_malformed(void **state)
{
	char t[VG_AUTH_TOKEN_LEN + 1], bad[VG_AUTH_TOKEN_LEN + 2];
	struct vg_diag d = { 0 };

	(void)state;
	new_token(t, NULL);
	assert_int_equal(vg_auth_token_parse(t, strlen(t) - 1, NULL, &d), -EBADMSG);
	memcpy(bad, t, sizeof(t));
	bad[5] = 'A';				/* uppercase hex */
	assert_int_equal(vg_auth_token_parse(bad, strlen(bad), NULL, &d), -EBADMSG);
	memcpy(bad, t, sizeof(t));
	bad[2] = '2';				/* vg2 */
	assert_int_equal(vg_auth_token_parse(bad, strlen(bad), NULL, &d), -EBADMSG);
	memcpy(bad, t, sizeof(t));
	bad[VG_AUTH_TOKEN_LEN - 1] = 'g';
	assert_int_equal(vg_auth_token_parse(bad, strlen(bad), NULL, &d), -EBADMSG);
	/* the diag never repeats the secret */
	assert_null(strstr(d.msg, t + 13));
}

static void token_line_is_sha256_of_the_token(void **state)
{
	char t[VG_AUTH_TOKEN_LEN + 1], id[VG_AUTH_ID_LEN + 1], line[160], want[160], hex[65];
	uint8_t h[32];
	unsigned int n;

	(void)state;
	new_token(t, id);
	assert_int_equal(EVP_Digest(t, strlen(t), h, &n, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", h[i]);
	snprintf(want, sizeof(want), "read %s %s\n", id, hex);
	assert_int_equal(vg_auth_token_line(t, VG_AUTH_READ, line, sizeof(line)), (int)strlen(want));
	assert_string_equal(line, want);
	assert_null(strstr(line, t + 13));	/* no secret in the list */
	assert_int_equal(vg_auth_token_line("vg1.x", VG_AUTH_READ, line, sizeof(line)), -EBADMSG);
	assert_int_equal(vg_auth_token_line(t, 64, line, sizeof(line)), -EBADMSG);
}

/* A list with @admin and @read tokens (and a comment, a blank line, CRLF). */
static struct vg_auth *two(const char *admin, const char *read)
{
	char buf[512], l1[160], l2[160];
	struct vg_auth *a = NULL;
	struct vg_diag d = { 0 };

	assert_true(vg_auth_token_line(admin, VG_AUTH_ADMIN, l1, sizeof(l1)) > 0);
	assert_true(vg_auth_token_line(read, VG_AUTH_READ, l2, sizeof(l2)) > 0);
	l2[strlen(l2) - 1] = 0;
	snprintf(buf, sizeof(buf), "# tokens\n\n%s%s\r\n", l1, l2);
	assert_int_equal(vg_auth_load((const uint8_t *)buf, strlen(buf), VROLES, &a, &d), 0);
	assert_int_equal(vg_auth_count(a), 2);
	return a;
}

static void check_roles_and_refusals(void **state)
{
	char ad[VG_AUTH_TOKEN_LEN + 1], rd[VG_AUTH_TOKEN_LEN + 1], other[VG_AUTH_TOKEN_LEN + 1];
	char hdr[128], id[VG_AUTH_ID_LEN + 1];
	struct vg_auth *a;

	(void)state;
	new_token(ad, NULL);
	new_token(rd, NULL);
	new_token(other, NULL);
	a = two(ad, rd);
	snprintf(hdr, sizeof(hdr), "Bearer %s", ad);
	assert_int_equal(vg_auth_check(a, hdr, id), VG_AUTH_ADMIN);
	assert_memory_equal(id, ad + 4, VG_AUTH_ID_LEN);
	snprintf(hdr, sizeof(hdr), "bearer  %s ", rd);
	assert_int_equal(vg_auth_check(a, hdr, NULL), VG_AUTH_READ);
	snprintf(hdr, sizeof(hdr), "Bearer %s", other);
	assert_int_equal(vg_auth_check(a, hdr, NULL), -EKEYREJECTED);
	/* the admin token's id with another secret */
	memcpy(other + 4, ad + 4, VG_AUTH_ID_LEN);
	snprintf(hdr, sizeof(hdr), "Bearer %s", other);
	assert_int_equal(vg_auth_check(a, hdr, NULL), -EKEYREJECTED);
	assert_int_equal(vg_auth_check(a, NULL, NULL), -ENOKEY);
	assert_int_equal(vg_auth_check(a, "Basic YWRtaW46YWRtaW4=", NULL), -ENOKEY);
	assert_int_equal(vg_auth_check(a, "Bearer ", NULL), -EBADMSG);
	snprintf(hdr, sizeof(hdr), "Bearer %s\n", ad);
	assert_int_equal(vg_auth_check(a, hdr, NULL), -EBADMSG);
	assert_int_equal(vg_auth_check(NULL, "Bearer x", NULL), -EBADMSG);
	vg_auth_free(a);
}

static void altered_list_refuses_the_token(void **state)
{
	char t[VG_AUTH_TOKEN_LEN + 1], line[160], hdr[128];
	struct vg_auth *a;
	int n;

	(void)state;
	new_token(t, NULL);
	n = vg_auth_token_line(t, VG_AUTH_ADMIN, line, sizeof(line));
	line[n - 2] = line[n - 2] == '0' ? '1' : '0';	/* last hex digit of the hash */
	assert_int_equal(vg_auth_load((const uint8_t *)line, (size_t)n, VROLES, &a, NULL), 0);
	snprintf(hdr, sizeof(hdr), "Bearer %s", t);
	assert_int_equal(vg_auth_check(a, hdr, NULL), -EKEYREJECTED);
	vg_auth_free(a);
}

static void load_names_the_bad_line(void **state)
{
	static const struct {
		const char *text, *msg;
		unsigned int roles;
		int err;
	} cases[] = {
		{ "admin 0123456 " "0000000000000000000000000000000000000000000000000000000000000000\n",
		  "line 1: the id", 0, -EBADMSG },
		{ "# x\nadmin 01234567 00\n", "line 2: the hash", 0, -EBADMSG },
		{ "root 01234567 0000000000000000000000000000000000000000000000000000000000000000\n",
		  "line 1: role 'root'", 0, -EBADMSG },
		{ "verifier 01234567 0000000000000000000000000000000000000000000000000000000000000000\n",
		  "line 1: role 'verifier'", 0, -EBADMSG },
		{ "admin 01234567\n", "line 1: expected ROLE ID SHA256HEX", 0, -EBADMSG },
		{ "admin 01234567 0000000000000000000000000000000000000000000000000000000000000000 x\n",
		  "line 1: expected", 0, -EBADMSG },
		{ "read 01234567 0000000000000000000000000000000000000000000000000000000000000000\n"
		  "admin 01234567 1111111111111111111111111111111111111111111111111111111111111111\n",
		  "line 2: id 01234567 is listed twice", 0, -EBADMSG },
		{ "admin 01234567 0000000000000000000000000000000000000000000000000000000000000000\n",
		  NULL, VG_AUTH_VERIFIER, -EBADMSG },
		/* a pushing agent's token: the verifier's list only when it takes role agent */
		{ "agent 01234567 0000000000000000000000000000000000000000000000000000000000000000\n",
		  "line 1: role 'agent'", 0, -EBADMSG },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_auth *a = NULL;
		struct vg_diag d = { 0 };
		int r = vg_auth_load((const uint8_t *)cases[i].text, strlen(cases[i].text),
				     cases[i].roles ? cases[i].roles : VROLES, &a, &d);

		assert_int_equal(r, cases[i].err);
		assert_null(a);
		if (cases[i].msg && !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: '%s' does not say '%s'", i, d.msg, cases[i].msg);
	}
	{
		struct vg_auth *a = NULL;

		assert_int_equal(vg_auth_load((const uint8_t *)"a\0b", 3, VROLES, &a, NULL), -EBADMSG);
		assert_int_equal(vg_auth_load((const uint8_t *)"", 0, VROLES, &a, NULL), 0);
		assert_int_equal(vg_auth_count(a), 0);
		vg_auth_free(a);
	}
}

static void read_file_checks_mode(void **state)
{
	char dir[] = "/tmp/vg-auth-XXXXXX", path[64], t[VG_AUTH_TOKEN_LEN + 1], got[VG_AUTH_TOKEN_LEN + 1];
	struct vg_diag d = { 0 };
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tok", dir);
	new_token(t, NULL);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
	assert_int_equal(write(fd, "\n", 1), 1);
	close(fd);
	assert_int_equal(vg_auth_token_read(path, got, &d), 0);
	assert_string_equal(got, t);
	chmod(path, 0640);
	assert_int_equal(vg_auth_token_read(path, got, &d), -EPERM);
	assert_non_null(strstr(d.msg, "mode 0640"));
	chmod(path, 0600);
	assert_int_equal(vg_auth_token_read(dir, got, &d), -EINVAL);	/* a directory */
	assert_int_equal(vg_auth_token_read("/dev/null", got, &d), -EINVAL);
	unlink(path);
	assert_int_equal(vg_auth_token_read(path, got, &d), -ENOENT);
	rmdir(dir);
}

static void path_decode_is_strict(void **state)
{
	static const struct {
		const char *in, *out;
		int err;
	} cases[] = {
		{ "/v1/agents/h1", "/v1/agents/h1", 0 },
		{ "/v1/agents/h1?x=%00", "/v1/agents/h1", 0 },	/* the query is not the path */
		{ "/v1/agents/host%31", "/v1/agents/host1", 0 },
		{ "/v1/agents/a%2db", "/v1/agents/a-b", 0 },
		{ "/v1/agents/h1%00x", NULL, -EBADMSG },
		{ "/v1/agents/h1%0a", NULL, -EBADMSG },
		{ "/v1/agents/h1%7F", NULL, -EBADMSG },
		{ "/v1/agents/h1%2Fhistory", NULL, -EBADMSG },
		{ "/v1/agents/h1%2fhistory", NULL, -EBADMSG },
		{ "/v1/agents/h1%", NULL, -EBADMSG },
		{ "/v1/agents/h1%4", NULL, -EBADMSG },
		{ "/v1/agents/h1%zz", NULL, -EBADMSG },
		{ "/v1/agents/h1\tx", NULL, -EBADMSG },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = vg_api_path_decode(cases[i].in, out, sizeof(out), NULL);

		if (cases[i].err) {
			if (r != cases[i].err)
				fail_msg("case %zu (%s): %d", i, cases[i].in, r);
		} else {
			assert_int_equal(r, (int)strlen(cases[i].out));
			assert_string_equal(out, cases[i].out);
		}
	}
	assert_int_equal(vg_api_path_decode("/v1/agents/abcdef", out, 8, NULL), -ENAMETOOLONG);
}

/*
 * The route table (vg_api_routes) is what the router and the verifier's
 * authorisation use: each entry routes to its endpoint with its role, a
 * method it does not list is 405 naming those it does, every endpoint is
 * in it, and only the page's static files need no credential.
 */
static void route_table_gives_methods_and_roles(void **state)
{
	size_t n;
	const struct vg_api_route_def *t = vg_api_routes(&n);
	bool seen[VG_API_PUSH_EVIDENCE + 1] = { false };

	(void)state;
	assert_true(n >= 19);
	for (size_t i = 0; i < n; i++) {
		char path[256], *p;
		struct vg_api_route rt;
		struct vg_diag d = { 0 };

		snprintf(path, sizeof(path), "%s", t[i].path);
		if ((p = strstr(path, "{id}")) || (p = strstr(path, "{name}"))) {
			char tail[256];

			snprintf(tail, sizeof(tail), "%s", strchr(p, '}') + 1);
			snprintf(p, sizeof(path) - (size_t)(p - path), "h1%s", tail);
		}
		assert_int_equal(vg_api_route(t[i].method, path, &rt, &d), 0);
		assert_int_equal(rt.ep, t[i].ep);
		assert_int_equal(rt.role, t[i].role);
		assert_string_equal(rt.id, strstr(t[i].path, "{") ? "h1" : "");
		seen[t[i].ep] = true;
		assert_int_equal(vg_api_route("PATCH", path, &rt, &d), -EOPNOTSUPP);
		assert_non_null(strstr(d.msg, t[i].method));
		/*
		 * no data without a credential; nothing changes state with read;
		 * the push routes, and they only, are an agent's
		 */
		if (t[i].role == 0)
			assert_true(strncmp(t[i].path, "/ui/", 4) == 0 && strcmp(t[i].method, "GET") == 0);
		assert_int_equal(t[i].role == VG_AUTH_AGENT, strncmp(t[i].path, "/v1/push/", 9) == 0);
		if (strcmp(t[i].method, "GET") && strcmp(t[i].path, "/v1/verify/evidence") &&
		    t[i].role != VG_AUTH_AGENT)
			assert_int_equal(t[i].role, VG_AUTH_ADMIN);
	}
	for (int ep = VG_API_AGENTS; ep <= VG_API_PUSH_EVIDENCE; ep++)
		assert_true(seen[ep]);
	{
		struct vg_api_route rt;

		assert_int_equal(vg_api_route("GET", "/ui/index.html", &rt, NULL), -ENOENT);
		assert_int_equal(vg_api_route("GET", "/ui", &rt, NULL), -ENOENT);
		assert_int_equal(vg_api_route("GET", "/metrics/", &rt, NULL), -ENOENT);
	}
}

static void load_allocation_failures(void **state)
{
	char text[4096] = "", line[160], t[VG_AUTH_TOKEN_LEN + 1];
	int failures = 0;

	(void)state;
	for (int i = 0; i < 20; i++) {
		new_token(t, NULL);
		assert_true(vg_auth_token_line(t, VG_AUTH_READ, line, sizeof(line)) > 0);
		strcat(text, line);
	}
	for (long n = 0;; n++) {
		struct vg_auth *a = NULL;
		int r;

		failalloc_arm(n);
		r = vg_auth_load((const uint8_t *)text, strlen(text), VROLES, &a, NULL);
		failalloc_disarm();
		if (r == 0) {
			assert_int_equal(vg_auth_count(a), 20);
			vg_auth_free(a);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_null(a);
		failures++;
	}
	assert_true(failures > 0);
}

static void agent_role_is_its_own(void **state)
{
	char tok[VG_AUTH_TOKEN_LEN + 1], line[128], hdr[VG_AUTH_TOKEN_LEN + 16];
	struct vg_auth *a = NULL;
	int n;

	(void)state;
	assert_string_equal(vg_auth_role_name(VG_AUTH_AGENT), "agent");
	assert_int_equal(vg_auth_token_new(tok, NULL), 0);
	n = vg_auth_token_line(tok, VG_AUTH_AGENT, line, sizeof(line));
	assert_true(n > 0 && strncmp(line, "agent ", 6) == 0);
	assert_int_equal(vg_auth_load((const uint8_t *)line, (size_t)n,
				      VROLES | VG_AUTH_AGENT, &a, NULL), 0);
	snprintf(hdr, sizeof(hdr), "Bearer %s", tok);
	/* an agent's token is an agent's, never admin or read */
	assert_int_equal(vg_auth_check(a, hdr, NULL), VG_AUTH_AGENT);
	vg_auth_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token_new_is_well_formed_and_fresh),
		cmocka_unit_test(agent_role_is_its_own),
		cmocka_unit_test(token_parse_rejects_malformed),
		cmocka_unit_test(token_line_is_sha256_of_the_token),
		cmocka_unit_test(check_roles_and_refusals),
		cmocka_unit_test(altered_list_refuses_the_token),
		cmocka_unit_test(load_names_the_bad_line),
		cmocka_unit_test(read_file_checks_mode),
		cmocka_unit_test(path_decode_is_strict),
		cmocka_unit_test(route_table_gives_methods_and_roles),
		cmocka_unit_test(load_allocation_failures),
	};

	failalloc_install();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

