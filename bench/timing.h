/* SPDX-License-Identifier: MIT */
/*
 * bench/timing.h - the clock and the sort the latency benches share
 * (accessbench.c, coldparts.c: each built alone by its script).
 */
#ifndef VIGIL_BENCH_TIMING_H
#define VIGIL_BENCH_TIMING_H

#include <time.h>

/* CLOCK_MONOTONIC in µs */
static inline double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* qsort() order of doubles, ascending */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
