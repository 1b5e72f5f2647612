// SPDX-License-Identifier: MIT
/*
 * test_journal.c - common/journal.c and common/utc.c: the native journal
 * datagram's bytes (text and binary fields, a long value cut with its
 * field kept whole, a field that no longer fits left out), a datagram
 * sent to and read from a socket of the test's own, a full socket that
 * drops and counts instead of waiting; UTC text against glibc's gmtime_r
 * over dates from 1900 to 9999 (leap years, the epoch, negative times),
 * and the clamps.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal.h"
#include "utc.h"

static void encode_text_and_binary_fields(void **state)
{
	const struct vjournal_field f[] = {
		{ "MESSAGE", "hello", (size_t)-1 },
		{ "VIGIL_PATH", "a\nb", (size_t)-1 },
	};
	const char want[] = "MESSAGE=hello\nVIGIL_PATH\n\x03\0\0\0\0\0\0\0a\nb\n";
	char buf[128];
	size_t n;

	(void)state;
	n = vjournal_encode(f, 2, buf, sizeof(buf));
	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(buf, want, n);
}

static void encode_cuts_a_long_value_and_drops_what_cannot_fit(void **state)
{
	char big[200], buf[64];
	struct vjournal_field f[] = {
		{ "A", "1", (size_t)-1 },
		{ "MESSAGE", big, sizeof(big) },
		{ "LAST", "x", (size_t)-1 },
	};
	size_t n;

	(void)state;
	memset(big, 'z', sizeof(big));
	n = vjournal_encode(f, 3, buf, sizeof(buf));
	assert_true(n <= sizeof(buf));
	assert_memory_equal(buf, "A=1\nMESSAGE=zzz", 15);
	assert_int_equal(buf[n - 1], '\n');	/* the cut field ends properly */
	assert_null(memmem(buf, n, "LAST", 4));	/* no room left for it */
}

static void send_whole_entries_and_drop_when_full(void **state)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test_journal.XXXXXX", buf[256];
	const struct vjournal_field f[] = { { "MESSAGE", "one", (size_t)-1 } };
	int s, sent = 0, r;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", dir);
	assert_int_equal(vjournal_open(a.sun_path), 0);	/* nobody there: not an error */
	assert_false(vjournal_enabled());
	assert_int_equal(vjournal_send(f, 1), -ENOTCONN);
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(vjournal_open(a.sun_path), 1);
	assert_int_equal(vjournal_send(f, 1), 0);
	n = recv(s, buf, sizeof(buf), 0);
	assert_int_equal(n, (ssize_t)strlen("MESSAGE=one\n"));
	assert_memory_equal(buf, "MESSAGE=one\n", (size_t)n);
	/* nobody reads: it fills, then drops, and never blocks */
	while ((r = vjournal_send(f, 1)) == 0 && sent < 100000)
		sent++;
	assert_int_equal(r, -EAGAIN);
	assert_true(vjournal_dropped() >= 1);
	assert_int_equal(vjournal_sent(), (uint64_t)sent + 1);
	vjournal_close();
	close(s);
	unlink(a.sun_path);
	rmdir(dir);
}

static void utc_matches_gmtime(void **state)
{
	char mine[VG_UTC_LEN], theirs[64];

	(void)state;
	for (int64_t t = -2208988800LL; t < 253402300799LL; t += 86400LL * 37 + 3671) {
		struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = 123456789 };
		time_t tt = (time_t)t;
		struct tm tm;

		assert_int_equal(vg_utc_format(&ts, mine, sizeof(mine)), VG_UTC_LEN - 1);
		assert_non_null(gmtime_r(&tt, &tm));
		strftime(theirs, sizeof(theirs), "%Y-%m-%dT%H:%M:%S.123456Z", &tm);
		assert_string_equal(mine, theirs);
	}
}

static void utc_known_values_and_limits(void **state)
{
	struct timespec ts = { 0, 0 };
	char buf[VG_UTC_LEN];

	(void)state;
	vg_utc_format(&ts, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000000Z");
	ts.tv_sec = 951782400;	/* a leap day of a year divisible by 400 */
	vg_utc_format(&ts, buf, sizeof(buf));
	assert_string_equal(buf, "2000-02-29T00:00:00.000000Z");
	ts.tv_sec = -1;
	vg_utc_format(&ts, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59.000000Z");
	ts.tv_sec = (time_t)400000000000LL;
	vg_utc_format(&ts, buf, sizeof(buf));
	assert_string_equal(buf, "9999-12-31T23:59:59.000000Z");
	assert_int_equal(vg_utc_format(&ts, buf, VG_UTC_LEN - 1), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_text_and_binary_fields),
		cmocka_unit_test(encode_cuts_a_long_value_and_drops_what_cannot_fit),
		cmocka_unit_test(send_whole_entries_and_drop_when_full),
		cmocka_unit_test(utc_matches_gmtime),
		cmocka_unit_test(utc_known_values_and_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
