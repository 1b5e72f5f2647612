/* SPDX-License-Identifier: MIT */
/*
 * utc.h - a wall-clock time as text, without the C library's time-zone
 * machinery. glibc's gmtime_r() initialises time zones on its first call
 * and reads $TZ's file or /etc/localtime for it: a file opened on
 * whichever filesystem holds it. vigild answers every open of a watched
 * filesystem itself, so an open made by the thread that answers would wait
 * for its own answer for ever (the first audit record hung a host watching
 * /). This is plain arithmetic on the seconds since the epoch.
 */
#ifndef VIGIL_COMMON_UTC_H
#define VIGIL_COMMON_UTC_H

#include <stddef.h>
#include <time.h>

#define VG_UTC_LEN 28	/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" and its NUL */

/*
 * vg_utc_format - @ts (CLOCK_REALTIME) as "2026-12-06T03:04:05.123456Z" in
 * @buf, years 0000 to 9999 (outside, clamped to them).
 * Return: its length, or 0 when @cap is under VG_UTC_LEN (@buf then holds "").
 */
size_t vg_utc_format(const struct timespec *ts, char *buf, size_t cap);

#endif
