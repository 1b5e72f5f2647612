/* SPDX-License-Identifier: MIT */
/*
 * vigild_prom.h - vigild's status in the Prometheus text exposition
 * format 0.0.4, written from the decoded control answer (vigild_ctl.h),
 * so that `vigil status --prometheus` and vigild's --metrics-file (a
 * node_exporter textfile) print the same metrics from the same numbers.
 *
 * Metrics (every name starts with vigild_):
 *   decisions_total{verdict="allow"|"deny"|"would_deny"}  counter; the
 *       three add up to every answered event (would_deny: allowed only
 *       because the mode is not enforce)
 *   decision_reasons_total{reason}  counter: denials, would-be denials and
 *       fail actions by reason (the daemon keeps at most 32 reasons)
 *   decision_latency_seconds  histogram, log2 buckets from 1 us
 *   cache_hits_total, cache_misses_total, appraiser_restarts_total and
 *       the daemon's other counters as NAME_total (one table, below)
 *   appraisers, leases, pending, measurements, policy_rules, marks:
 *       gauges; mode{mode} = 1 for the current mode
 * Only what the answer holds is printed (an older daemon's answer
 * without the histogram prints no histogram).
 */
#ifndef VIGILD_PROM_H
#define VIGILD_PROM_H

#include <stdio.h>

#include "vigild_ctl.h"

/*
 * vd_ctl_prometheus - @s as exposition text on @f.
 * Return: 0, or -EIO when @f reports a write error.
 */
int vd_ctl_prometheus(const struct vd_ctl_status *s, FILE *f);

#endif
