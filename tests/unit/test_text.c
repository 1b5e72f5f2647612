// SPDX-License-Identifier: MIT
/*
 * test_text.c - vigil/text.h: which strings are UTF-8 and clean, the
 * escaped form of each kind of byte (backslash, newline, other control
 * characters, every way a sequence can be invalid), truncation at a whole
 * character or escape, and vg_text_show's copy only where needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/text.h"

static const char *esc(const char *s)
{
	static char buf[256];

	vg_text_escape(s, buf, sizeof(buf));
	return buf;
}

static void test_valid(void **state)
{
	(void)state;
	assert_true(vg_text_is_utf8(""));
	assert_true(vg_text_is_utf8("/usr/bin/ls"));
	assert_true(vg_text_is_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92 \xf4\x8f\xbf\xbf"));
	assert_true(vg_text_is_utf8("tab\there"));	/* control characters are UTF-8 */
	assert_false(vg_text_is_clean("tab\there"));
	assert_false(vg_text_is_clean("bell\x07"));
	assert_false(vg_text_is_clean("del\x7f"));
	assert_true(vg_text_is_clean("a\\b \xc3\xa9"));
	static const char *const bad[] = {
		"\x80",			/* a continuation byte alone */
		"\xc0\x80",		/* overlong NUL */
		"\xc1\xbf",		/* overlong, 2 bytes */
		"\xe0\x80\x80",		/* overlong, 3 bytes */
		"\xed\xa0\x80",		/* a UTF-16 surrogate */
		"\xf0\x80\x80\x80",	/* overlong, 4 bytes */
		"\xf4\x90\x80\x80",	/* past U+10FFFF */
		"\xf5\x80\x80\x80",	/* no such lead byte */
		"\xff",
		"\xe2\x82",		/* truncated at the end */
		"\xe2\x82x",		/* truncated before ASCII */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(vg_text_is_utf8(bad[i]));
		assert_false(vg_text_is_clean(bad[i]));
	}
}

static void test_escape(void **state)
{
	(void)state;
	assert_string_equal(esc("/plain/path"), "/plain/path");
	assert_string_equal(esc("a\\b"), "a\\\\b");
	assert_string_equal(esc("a\nb"), "a\\nb");
	assert_string_equal(esc("\x1b[2J\t\x7f"), "\\x1b[2J\\x09\\x7f");
	assert_string_equal(esc("caf\xc3\xa9"), "caf\xc3\xa9");
	assert_string_equal(esc("b\xff\xfe"), "b\\xff\\xfe");
	assert_string_equal(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	assert_string_equal(esc("\xe2\x82x"), "\\xe2\\x82x");
	assert_string_equal(esc("\xc0\x80"), "\\xc0\\x80");
	assert_string_equal(esc("\xf0\x9f\x94\x92\x80"), "\xf0\x9f\x94\x92\\x80");
	/* the result is clean text: escaping it again only doubles backslashes */
	assert_true(vg_text_is_clean(esc("x\xff\x01\n\xe2\x82")));
}

static void test_truncate(void **state)
{
	char out[8];

	(void)state;
	/* "ab" + "\xff" (4) = 6 fits in 8 with the NUL; the next escape does not */
	assert_int_equal(vg_text_escape("ab\xff\xff", out, sizeof(out)), 6);
	assert_string_equal(out, "ab\\xff");
	/* a 4-byte character is not split either */
	assert_int_equal(vg_text_escape("abcd\xf0\x9f\x94\x92", out, sizeof(out)), 4);
	assert_string_equal(out, "abcd");
	assert_int_equal(vg_text_escape("abc", out, 1), 0);
	assert_string_equal(out, "");
	assert_int_equal(vg_text_escape("\\\\\\\\", out, 4), 2);
	assert_string_equal(out, "\\\\");
}

static void test_show(void **state)
{
	const char *ok = "/etc/passwd", *bad = "/tmp/\xff", *t;

	(void)state;
	assert_ptr_equal(vg_text_show(ok), ok);
	t = vg_text_show(bad);
	assert_non_null(t);
	assert_ptr_not_equal(t, bad);
	assert_string_equal(t, "/tmp/\\xff");
	free((char *)t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_show),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
