// SPDX-License-Identifier: MIT
/*
 * text.c - bytes made safe to show (vigil/text.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/text.h"

/* Return: the length of the valid UTF-8 sequence of 2 to 4 bytes at @p, or 0. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	uint32_t cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* the NUL at the end stops here too */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Return: whether @s is valid UTF-8, and without control characters unless @controls. */
static bool scan(const char *s, bool controls)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = *p < 0x80 ? 1 : utf8_len(p);

		if (!n || (!controls && is_control(*p)))
			return false;
		p += n;
	}
	return true;
}

bool vg_text_is_utf8(const char *s)
{
	return scan(s, true);
}

bool vg_text_is_clean(const char *s)
{
	return scan(s, false);
}

size_t vg_text_escape(const char *s, char *out, size_t cap)
{
	size_t len = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		char esc[5];
		const char *piece = esc;
		size_t n = 1, k;

		if (*p == '\\') {
			piece = "\\\\";
		} else if (*p == '\n') {
			piece = "\\n";
		} else if (is_control(*p) || (*p >= 0x80 && !(n = utf8_len(p)))) {
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
			n = 1;
		} else {
			piece = (const char *)p;	/* a character as it is: n bytes */
		}
		k = piece == (const char *)p ? n : strlen(piece);
		if (len + k >= cap)
			break;
		memcpy(out + len, piece, k);
		len += k;
		p += n;
	}
	out[len] = 0;
	return len;
}

const char *vg_text_show(const char *s)
{
	size_t cap;
	char *out;

	if (vg_text_is_utf8(s))
		return s;
	cap = VG_TEXT_ESCAPED_MAX(strlen(s));
	out = malloc(cap);
	if (out)
		vg_text_escape(s, out, cap);
	return out;
}
