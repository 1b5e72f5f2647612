// SPDX-License-Identifier: MIT
/*
 * utc.c - a time as ISO 8601 UTC text by arithmetic (utc.h). The day
 * count becomes a civil date with the proleptic Gregorian algorithm of
 * Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms" (eras
 * of 400 years, March-based years so that the leap day is last).
 */
#include <stdint.h>
#include <stdio.h>

#include "utc.h"

static void civil_from_days(int64_t z, int64_t *y, unsigned int *m, unsigned int *d)
{
	int64_t era, yoe, doy, mp;

	z += 719468;	/* days from 0000-03-01 to 1970-01-01 */
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;				/* [0, 146096] */
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;	/* [0, 399] */
	doy = z - era * 146097 - (365 * yoe + yoe / 4 - yoe / 100);	/* [0, 365] */
	mp = (5 * doy + 2) / 153;			/* [0, 11], March first */
	*d = (unsigned int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

size_t vg_utc_format(const struct timespec *ts, char *buf, size_t cap)
{
	/* 0000-01-01 and 9999-12-31T23:59:59 in seconds since the epoch */
	const int64_t lo = -62167219200LL, hi = 253402300799LL;
	int64_t s = (int64_t)ts->tv_sec, days, sod, y;
	long us = ts->tv_nsec / 1000;
	unsigned int m, d;
	int n;

	if (cap < VG_UTC_LEN) {
		if (cap)
			buf[0] = 0;
		return 0;
	}
	if (s < lo)
		s = lo;
	if (s > hi)
		s = hi;
	if (us < 0 || us > 999999)
		us = 0;
	days = s >= 0 ? s / 86400 : (s - 86399) / 86400;
	sod = s - days * 86400;
	civil_from_days(days, &y, &m, &d);
	n = snprintf(buf, cap, "%04lld-%02u-%02uT%02u:%02u:%02u.%06ldZ", (long long)y, m, d,
		     (unsigned int)(sod / 3600), (unsigned int)(sod / 60 % 60), (unsigned int)(sod % 60), us);
	return n > 0 ? (size_t)n : 0;
}
