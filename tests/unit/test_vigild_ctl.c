// SPDX-License-Identifier: MIT
/*
 * test_vigild_ctl.c - vigild's control requests (common/vigild_ctl.h), the
 * bytes a root daemon reads from its socket: the old requests decode as
 * before; an announcement round-trips with every byte a path or a command
 * line may hold, at its longest; and the decoder refuses, field by field,
 * every announcement whose shape is not exactly the documented one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vigild_ctl.h"

static void old_requests_decode_as_before(void **state)
{
	struct vd_ctl_req q;

	(void)state;
	assert_int_equal(vd_ctl_req_decode("status\n", &q), 0);
	assert_int_equal(q.op, VD_CTL_STATUS);
	assert_int_equal(vd_ctl_req_decode("mode fix\r\n", &q), 0);
	assert_int_equal(q.op, VD_CTL_MODE);
	assert_int_equal(q.mode, VD_CTL_FIX);
	assert_int_equal(vd_ctl_req_decode("mode none", &q), -EINVAL);
	assert_int_equal(vd_ctl_req_decode("reload", &q), 0);
	assert_int_equal(vd_ctl_req_decode("announcer", &q), -EBADMSG);
	assert_int_equal(vd_ctl_req_decode("announce", &q), -EBADMSG);
	assert_false(vd_ctl_req_privileged("status\n"));
	assert_true(vd_ctl_req_privileged("announce cmdline"));
	assert_true(vd_ctl_req_privileged("announce"));
}

static struct vd_ctl_req *ann(enum vd_ctl_announce_kind kind, const char *log, const char *data,
			      size_t len)
{
	struct vd_ctl_req *q = calloc(1, sizeof(*q));

	assert_non_null(q);
	q->op = VD_CTL_ANNOUNCE;
	q->ann.kind = kind;
	q->ann.pcr = 10;
	for (int i = 0; i < 32; i++)
		q->ann.sha256[i] = (uint8_t)(i * 7 + 1);
	strcpy(q->ann.log, log);
	memcpy(q->ann.data, data, len);
	q->ann.data_len = len;
	return q;
}

static void round_trip(const struct vd_ctl_req *q)
{
	char *buf = malloc(VD_CTL_REQ_MAX);
	struct vd_ctl_req *r = calloc(1, sizeof(*r));
	int n;

	assert_non_null(buf);
	assert_non_null(r);
	n = vd_ctl_req_encode(q, buf, VD_CTL_REQ_MAX);
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_int_equal(buf[n - 1], '\n');
	assert_null(memchr(buf, '\n', (size_t)n - 1));
	assert_int_equal(vd_ctl_req_decode(buf, r), 0);
	assert_int_equal(r->op, VD_CTL_ANNOUNCE);
	assert_int_equal(r->ann.kind, q->ann.kind);
	assert_int_equal(r->ann.pcr, q->ann.pcr);
	assert_string_equal(r->ann.log, q->ann.log);
	assert_int_equal(r->ann.data_len, q->ann.data_len);
	assert_memory_equal(r->ann.data, q->ann.data, q->ann.data_len);
	if (q->ann.kind == VD_CTL_ANN_INITRD)
		assert_memory_equal(r->ann.sha256, q->ann.sha256, 32);
	free(buf);
	free(r);
}

static void announce_round_trips(void **state)
{
	char all[256], longest[VD_CTL_PATH_MAX];
	struct vd_ctl_req *q;

	(void)state;
	/* every byte but NUL, in a command line and in a path: newlines, spaces, quotes, 0xff */
	all[0] = '/';
	for (int i = 1; i < 256; i++)
		all[i] = (char)i;
	q = ann(VD_CTL_ANN_CMDLINE, "/run/vigil/binary_runtime_measurements", all, sizeof(all));
	round_trip(q);
	q->ann.kind = VD_CTL_ANN_INITRD;
	q->ann.pcr = 23;
	round_trip(q);
	q->ann.pcr = 0;
	round_trip(q);
	free(q);
	/* the longest of each: both paths of PATH_MAX - 1 bytes fit VD_CTL_REQ_MAX */
	memset(longest, 'a', sizeof(longest));
	longest[0] = '/';
	longest[sizeof(longest) - 1] = 0;
	q = ann(VD_CTL_ANN_INITRD, longest, longest, sizeof(longest) - 1);
	round_trip(q);
	free(q);
	memset(longest, 'b', 1024);
	q = ann(VD_CTL_ANN_CMDLINE, "/l", longest, 1024);
	round_trip(q);
	free(q);
}

static void announce_encode_refuses_what_vigild_would(void **state)
{
	char buf[512];
	char line[1025];
	struct vd_ctl_req *q;

	(void)state;
	q = ann(VD_CTL_ANN_INITRD, "/l", "initrd.img", 10);	/* relative */
	assert_int_equal(vd_ctl_req_encode(q, buf, sizeof(buf)), -EINVAL);
	free(q);
	memset(line, 'x', sizeof(line));
	q = ann(VD_CTL_ANN_CMDLINE, "/l", line, sizeof(line));	/* one byte too long */
	assert_int_equal(vd_ctl_req_encode(q, buf, sizeof(buf)), -EINVAL);
	free(q);
	q = ann(VD_CTL_ANN_CMDLINE, "l", "/v", 2);	/* the list, relative */
	assert_int_equal(vd_ctl_req_encode(q, buf, sizeof(buf)), -EINVAL);
	q->ann.log[0] = '/';
	q->ann.pcr = 24;
	assert_int_equal(vd_ctl_req_encode(q, buf, sizeof(buf)), -EINVAL);
	q->ann.pcr = 10;
	assert_int_equal(vd_ctl_req_encode(q, buf, 8), -ENOBUFS);
	free(q);
}

/* "/l" and "/v" in hex; a digest of 64 digits */
#define L "2f6c"
#define V "2f76"
#define D "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void announce_decode_refuses_every_other_shape(void **state)
{
	static const char *const bad[] = {
		"announce initrd " L " 10 sha256:" D " 76",	/* a relative path */
		"announce initrd " L " 10 sha256:" D,		/* no path */
		"announce initrd " L " 10 sha256:" D "0 " V,	/* 65 digits */
		"announce initrd " L " 10 sha256:" D " " V " " V,	/* a field too many */
		"announce initrd " L " 10 sha1:" D " " V,
		"announce initrd " L " 10 SHA256:" D " " V,
		"announce initrd " L " 10  sha256:" D " " V,	/* two spaces */
		"announce initrd " L " 10 sha256:" D " 2F76",	/* uppercase */
		"announce initrd 6c 10 sha256:" D " " V,	/* a relative list */
		"announce cmdline " L " 10 2f7",		/* odd */
		"announce cmdline " L " 10 2f00",		/* a NUL */
		"announce cmdline " L " 10 2fzz",
		"announce cmdline " L " 10 ",
		"announce cmdline " L " 10",
		"announce cmdline " L " 24 " V,
		"announce cmdline " L " 99 " V,
		"announce cmdline " L " 010 " V,
		"announce cmdline " L " -1 " V,
		"announce cmdline " L " +1 " V,
		"announce cmdline " L " 1x " V,
		"announce cmdline  " L " 10 " V,
		"announce cmdline 2f6c00 10 " V,		/* a NUL in the list */
		"announce cmdline " L " 10 " V " ",
		"announce kernel " L " 10 " V,
		"announce ima-buf " L " 10 " V,
		"announce  cmdline " L " 10 " V,
		"announce ",
	};
	struct vd_ctl_req *q = calloc(1, sizeof(*q));
	char *big;
	size_t n;

	(void)state;
	assert_non_null(q);
	assert_int_equal(vd_ctl_req_decode("announce cmdline " L " 10 " V "\n", q), 0);
	assert_int_equal(vd_ctl_req_decode("announce initrd " L " 9 sha256:" D " " V "\r\n", q), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("# %s\n", bad[i]);
		assert_int_equal(vd_ctl_req_decode(bad[i], q), -EPROTO);
	}
	/* a command line of 1025 bytes; a path of PATH_MAX bytes; a line past VD_CTL_REQ_MAX */
	big = malloc(2 * VD_CTL_REQ_MAX);
	assert_non_null(big);
	n = (size_t)sprintf(big, "announce cmdline " L " 10 ");
	for (int i = 0; i < 1025; i++)
		n += (size_t)sprintf(big + n, "61");
	assert_int_equal(vd_ctl_req_decode(big, q), -EPROTO);
	n = (size_t)sprintf(big, "announce initrd " L " 10 sha256:" D " 2f");
	for (int i = 1; i < VD_CTL_PATH_MAX; i++)
		n += (size_t)sprintf(big + n, "61");
	assert_int_equal(vd_ctl_req_decode(big, q), -EPROTO);
	memset(big, 'a', 2 * VD_CTL_REQ_MAX - 1);
	memcpy(big, "announce cmdline ", 17);
	big[2 * VD_CTL_REQ_MAX - 1] = 0;
	assert_int_equal(vd_ctl_req_decode(big, q), -EPROTO);
	free(big);
	free(q);
}

static void announce_answers_encode(void **state)
{
	json_object *o;
	const char *why = NULL;
	json_object *r = NULL;

	(void)state;
	o = vd_ctl_announce_result_encode(NULL, false, 7);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"announce\":\"committed\",\"entries\":7}");
	json_object_put(o);
	o = vd_ctl_announce_result_encode("only root may announce", false, 0);
	assert_int_equal(vd_ctl_answer_decode(json_object_to_json_string(o), &r, &why), -EPERM);
	assert_string_equal(why, "only root may announce");
	assert_string_equal(json_object_get_string(json_object_object_get(r, "announce")), "refused");
	json_object_put(r);
	json_object_put(o);
	o = vd_ctl_announce_result_encode("not vigild's measurement list", true, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "announce")),
			    "not-this-list");
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_requests_decode_as_before),
		cmocka_unit_test(announce_round_trips),
		cmocka_unit_test(announce_encode_refuses_what_vigild_would),
		cmocka_unit_test(announce_decode_refuses_every_other_shape),
		cmocka_unit_test(announce_answers_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
