// SPDX-License-Identifier: MIT
/*
 * fuzz_text.c - vigil/text.h over any bytes: the file names and log fields
 * an attacker chooses, on their way into reports, JSON and terminals.
 *
 * The input is a string up to its first NUL; the byte after that NUL, if
 * any, picks a small output capacity. Properties: the escaped form is
 * clean text (valid UTF-8, no control character) and reads back to the
 * input byte for byte; a clean input without a backslash is its own
 * escaped form; clean implies UTF-8; an escape cut short by its capacity
 * is a prefix of the whole one, cut at a whole character or escape;
 * vg_text_show is the input itself exactly when it is UTF-8, else its
 * escaped form.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/text.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undo vg_text_escape into @out (room for strlen(@e) + 1). Return: false if @e is not its form. */
static bool unescape(const char *e, char *out)
{
	while (*e) {
		if (*e != '\\') {
			*out++ = *e++;
			continue;
		}
		if (e[1] == '\\' || e[1] == 'n') {
			*out++ = e[1] == 'n' ? '\n' : '\\';
			e += 2;
		} else if (e[1] == 'x' && hexval(e[2]) >= 0 && hexval(e[3]) >= 0) {
			*out++ = (char)(hexval(e[2]) << 4 | hexval(e[3]));
			e += 4;
		} else {
			return false;
		}
	}
	*out = 0;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *full = NULL, *back = NULL, small[24];
	size_t len, cap, n, k;
	const char *shown;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	full = malloc(VG_TEXT_ESCAPED_MAX(len));
	back = malloc(VG_TEXT_ESCAPED_MAX(len));
	if (!full || !back)
		goto out;

	n = vg_text_escape(s, full, VG_TEXT_ESCAPED_MAX(len));
	FUZZ_CHECK(n == strlen(full) && n <= 4 * len);
	FUZZ_CHECK(vg_text_is_clean(full));
	FUZZ_CHECK(unescape(full, back) && strcmp(back, s) == 0);
	FUZZ_CHECK(!vg_text_is_clean(s) || vg_text_is_utf8(s));
	if (vg_text_is_clean(s) && !strchr(s, '\\'))
		FUZZ_CHECK(strcmp(full, s) == 0);

	cap = len + 1 < size ? 1 + data[len + 1] % sizeof(small) : sizeof(small);
	k = vg_text_escape(s, small, cap);
	FUZZ_CHECK(k < cap && k == strlen(small) && k <= n);
	FUZZ_CHECK(memcmp(small, full, k) == 0);
	FUZZ_CHECK(vg_text_is_clean(small));
	FUZZ_CHECK(k == n || k + 4 >= cap);	/* nothing left out that would have fit */

	shown = vg_text_show(s);
	FUZZ_CHECK(shown != NULL);
	if (vg_text_is_utf8(s)) {
		FUZZ_CHECK(shown == s);
	} else {
		FUZZ_CHECK(shown != s && strcmp(shown, full) == 0);
		free((char *)shown);
	}
out:
	free(back);
	free(full);
	free(s);
	return 0;
}
