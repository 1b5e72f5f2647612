/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - vigil-verifier's counters for GET /metrics (Prometheus
 * text exposition format 0.0.4): attestation rounds by result and
 * failure type, their duration, API answers by status class, rounds
 * that started late; agents by state are read from the store when asked,
 * rounds running and queued and agents late now from the scheduler. Counters are atomics,
 * counted where things happen (round.c, rest.c) without a lock.
 */
#ifndef VIGIL_VERIFIER_METRICS_H
#define VIGIL_VERIFIER_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"

/* round duration buckets (upper bounds, seconds), then +Inf */
#define VF_METRICS_LAT_N 12

struct vf_metrics {
	atomic_uint_fast64_t rounds[3];			/* pass, fail, unreachable */
	atomic_uint_fast64_t failures[VG_AF__COUNT];	/* by enum vg_attest_fail */
	atomic_uint_fast64_t lat[VF_METRICS_LAT_N + 1];	/* not cumulative; the last: +Inf */
	atomic_uint_fast64_t lat_sum_us;
	atomic_uint_fast64_t http[6];			/* [code / 100], [0]: other */
	atomic_uint_fast64_t late_rounds;		/* agents that became late (scheduler.c) */
	atomic_uint_fast64_t api_accepted;		/* API connections accepted (rest.c) */
	atomic_uint_fast64_t api_open;			/* ... open now */
};

struct verifier;

/* Return: a monotonic clock in seconds, for round durations. */
double vf_metrics_clock(void);

/*
 * vf_metrics_round - count one judged round: @r as round_evidence
 * returned it (0 trusted, 1 failed with @fail, < 0 unreachable), which
 * took @seconds.
 */
void vf_metrics_round(struct vf_metrics *m, int r, unsigned int fail, double seconds);

/* vf_metrics_http - count one answer with status @code (0: none, not counted). */
void vf_metrics_http(struct vf_metrics *m, unsigned int code);

/*
 * vf_metrics_text - the exposition text (malloc'd in *@ret, *@ret_len
 * bytes), with the agents by state read from the store under vf->lock.
 * Return: 0; -ENOMEM; -EIO the store did not answer (@err says why).
 */
int vf_metrics_text(struct verifier *vf, char **ret, size_t *ret_len, char *err, size_t cap);

/* the Content-Type of the text */
#define VF_METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
