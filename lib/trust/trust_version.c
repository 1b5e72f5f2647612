// SPDX-License-Identifier: MIT
/*
 * trust_version.c - the order of Debian version strings, as dpkg orders
 * them (deb-version(7)): [epoch:]upstream[-revision]; the epoch compared
 * as a number, then the upstream version, then the revision, each by
 * alternating runs of non-digits (letters before other characters, '~'
 * before anything, even the end) and digits (as numbers).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/trust.h"

/* the weight of one character in a non-digit run; the end weighs 0 */
static int order(int c)
{
	if (isdigit(c))
		return 0;
	if (isalpha(c))
		return c;
	if (c == '~')
		return -1;
	if (c)
		return c + 256;
	return 0;
}

/* compare the [a, ae) and [b, be) parts (upstream or revision) */
static int part_cmp(const char *a, const char *ae, const char *b, const char *be)
{
	while (a < ae || b < be) {
		int first = 0;

		while ((a < ae && !isdigit((unsigned char)*a)) ||
		       (b < be && !isdigit((unsigned char)*b))) {
			int ac = a < ae ? order((unsigned char)*a) : 0;
			int bc = b < be ? order((unsigned char)*b) : 0;

			if (ac != bc)
				return ac < bc ? -1 : 1;
			a++;
			b++;
		}
		while (a < ae && *a == '0')
			a++;
		while (b < be && *b == '0')
			b++;
		while (a < ae && b < be && isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			if (!first)
				first = *a - *b;
			a++;
			b++;
		}
		if (a < ae && isdigit((unsigned char)*a))
			return 1;
		if (b < be && isdigit((unsigned char)*b))
			return -1;
		if (first)
			return first < 0 ? -1 : 1;
	}
	return 0;
}

struct ver {
	unsigned long long epoch;
	const char *up, *up_end, *rev, *rev_end;
};

static void split(const char *s, struct ver *v)
{
	const char *colon = strchr(s, ':'), *hyphen;

	v->epoch = 0;
	if (colon) {
		v->epoch = strtoull(s, NULL, 10);
		s = colon + 1;
	}
	hyphen = strrchr(s, '-');
	v->up = s;
	v->up_end = hyphen ? hyphen : s + strlen(s);
	v->rev = hyphen ? hyphen + 1 : v->up_end;
	v->rev_end = hyphen ? s + strlen(s) : v->up_end;
}

int vg_trust_version_cmp(const char *a, const char *b)
{
	struct ver x, y;
	int r;

	split(a, &x);
	split(b, &y);
	if (x.epoch != y.epoch)
		return x.epoch < y.epoch ? -1 : 1;
	r = part_cmp(x.up, x.up_end, y.up, y.up_end);
	if (r)
		return r;
	return part_cmp(x.rev, x.rev_end, y.rev, y.rev_end);
}
