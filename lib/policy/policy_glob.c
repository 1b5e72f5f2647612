// SPDX-License-Identifier: MIT
/*
 * policy_glob.c - the path patterns of path= and subj_exe=: '*' any run of
 * bytes but '/', '**' any run, '?' one byte but '/', [set] one byte of the
 * set (never '/'), a trailing '/' everything below that directory. The
 * parser checks a pattern with vg__glob_valid(), the matcher matches with
 * vg__glob_match(); both stand on this file, which calls neither.
 *
 * Nothing here allocates: patterns are matched with a bounded dynamic
 * programme on the stack, paths longer than PATH_MAX never match.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "policy_internal.h"

/*
 * One pattern element at @p: literal byte, '?', '[...]', '*' or '**'.
 * Return: the element's length in the pattern, 0 at the end, -1 for an
 * unclosed class.
 */
static int elem_len(const char *p)
{
	if (!*p)
		return 0;
	if (p[0] == '*')
		return p[1] == '*' ? 2 : 1;
	if (p[0] == '[') {
		size_t i = 1;

		if (p[i] == '!' || p[i] == '^')
			i++;
		if (p[i] == ']')
			i++;
		while (p[i] && p[i] != ']')
			i++;
		return p[i] == ']' ? (int)i + 1 : -1;
	}
	return 1;
}

int vg__glob_valid(const char *pat)
{
	int n;

	while ((n = elem_len(pat)) > 0)
		pat += n;
	return n < 0 ? -EINVAL : 0;
}

static bool class_match(const char *p, int len, unsigned char c)
{
	int i = 1, end = len - 1;	/* p[end] is the closing ']' */
	bool neg = false, hit = false;

	if (p[i] == '!' || p[i] == '^') {
		neg = true;
		i++;
	}
	while (i < end) {
		unsigned char lo = (unsigned char)p[i], hi = lo;

		if (i + 2 < end && p[i + 1] == '-') {
			hi = (unsigned char)p[i + 2];
			i += 3;
		} else {
			i++;
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	return hit != neg;
}

/*
 * A pattern ending in '/' matches everything below that directory; '*'
 * any run of bytes but '/', '**' any run, '?' one byte but '/', [set] one
 * byte of the set (never '/'). row[j]: the pattern so far matches the
 * first j bytes of the path.
 */
bool vg__glob_match(const char *pat, const char *path)
{
	bool a[PATH_MAX + 1], b[PATH_MAX + 1], *cur = a, *nxt = b;
	size_t n = strlen(path), plen = strlen(pat);
	bool prefix = plen && pat[plen - 1] == '/';
	int el;

	if (n > PATH_MAX)
		return false;
	if (!strpbrk(pat, "*?["))	/* the common case: a literal path or directory */
		return prefix ? strncmp(path, pat, plen) == 0 : strcmp(path, pat) == 0;
	memset(cur, 0, (n + 1) * sizeof(bool));
	cur[0] = true;
	for (const char *p = pat; (el = elem_len(p)) > 0; p += el) {
		bool *t;

		if (p[0] == '*') {
			nxt[0] = cur[0];
			for (size_t j = 1; j <= n; j++)
				nxt[j] = cur[j] || (nxt[j - 1] && (el == 2 || path[j - 1] != '/'));
		} else {
			nxt[0] = false;
			for (size_t j = 1; j <= n; j++) {
				unsigned char c = (unsigned char)path[j - 1];
				bool ok = p[0] == '?' ? c != '/' :
					  p[0] == '[' ? c != '/' && class_match(p, el, c) :
					  c == (unsigned char)p[0];

				nxt[j] = cur[j - 1] && ok;
			}
		}
		t = cur;
		cur = nxt;
		nxt = t;
	}
	if (el < 0)
		return false;
	if (prefix)	/* an implied trailing '**' */
		for (size_t j = 1; j <= n; j++)
			cur[j] = cur[j] || cur[j - 1];
	return cur[n];
}
