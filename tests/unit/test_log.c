// SPDX-License-Identifier: MIT
/*
 * test_log.c - common/log.c: the bytes a diagnostic line becomes
 * (vlog_format) in the journal form (<N> prefix on every line, no program
 * name) and the plain form (PROGRAM: on every line), a message cut to the
 * buffer still ending in its newline; and vlog_init's $JOURNAL_STREAM
 * check against stderr's own dev:ino (t0098 runs the daemons).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

static void format_journal_has_priority_and_no_name(void **state)
{
	char buf[128];
	size_t n;

	(void)state;
	n = vlog_format(buf, sizeof(buf), true, VLOG_WARNING, "vigild", "disk full");
	assert_int_equal(n, strlen("<4>disk full\n"));
	assert_memory_equal(buf, "<4>disk full\n", n);
	n = vlog_format(buf, sizeof(buf), true, 42, "vigild", "x");
	assert_memory_equal(buf, "<6>x\n", n);	/* out of range: info */
}

static void format_plain_has_program_name(void **state)
{
	char buf[128];
	size_t n;

	(void)state;
	n = vlog_format(buf, sizeof(buf), false, VLOG_ERR, "vigil-agent", "no TPM");
	assert_memory_equal(buf, "vigil-agent: no TPM\n", n);
	assert_int_equal(n, strlen("vigil-agent: no TPM\n"));
}

static void format_prefixes_every_line(void **state)
{
	char buf[128];
	size_t n;

	(void)state;
	n = vlog_format(buf, sizeof(buf), true, VLOG_ERR, "p", "one\ntwo\n");
	assert_int_equal(n, strlen("<3>one\n<3>two\n"));
	assert_memory_equal(buf, "<3>one\n<3>two\n", n);
	n = vlog_format(buf, sizeof(buf), false, VLOG_ERR, "p", "a\nb");
	assert_memory_equal(buf, "p: a\np: b\n", n);
}

static void format_cut_message_ends_in_newline(void **state)
{
	char buf[16], msg[100];
	size_t n;

	(void)state;
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	n = vlog_format(buf, sizeof(buf), true, VLOG_INFO, "p", msg);
	assert_int_equal(n, sizeof(buf));
	assert_memory_equal(buf, "<6>xxxx", 7);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(vlog_format(buf, 1, true, VLOG_INFO, "p", "x"), 0);
}

static void init_checks_stderr_dev_ino(void **state)
{
	struct stat st;
	char js[64];

	(void)state;
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	snprintf(js, sizeof(js), "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	vlog_init("t");
	assert_true(vlog_journal());
	snprintf(js, sizeof(js), "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1);
	vlog_init("t");
	assert_false(vlog_journal());
	snprintf(js, sizeof(js), "%ju:%ju:", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	vlog_init("t");
	assert_false(vlog_journal());
	unsetenv("JOURNAL_STREAM");
	vlog_init("t");
	assert_false(vlog_journal());
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_journal_has_priority_and_no_name),
		cmocka_unit_test(format_plain_has_program_name),
		cmocka_unit_test(format_prefixes_every_line),
		cmocka_unit_test(format_cut_message_ends_in_newline),
		cmocka_unit_test(init_checks_stderr_dev_ino),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
