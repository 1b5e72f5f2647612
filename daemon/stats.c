// SPDX-License-Identifier: MIT
/*
 * stats.c - the monitor's counters that need code: denials by reason
 * (at most 32 distinct reasons), the decision latency in log2 buckets of
 * microseconds (and their sum, for the Prometheus histogram of
 * metrics.c) and its percentiles. The plain counters are fields of
 * struct stats, incremented where things happen.
 */
#include <stdio.h>
#include <string.h>

#include "monitor.h"

void vd_stats_reason(struct vd *d, const char *reason)
{
	unsigned int i;

	for (i = 0; i < d->st.nreasons; i++)
		if (strcmp(d->st.reasons[i].reason, reason) == 0)
			break;
	if (i == d->st.nreasons) {
		if (i == 32)
			return;
		snprintf(d->st.reasons[i].reason, sizeof(d->st.reasons[i].reason), "%s", reason);
		d->st.nreasons++;
	}
	d->st.reasons[i].n++;
}

double vd_stats_percentile(const struct stats *s, double p)
{
	uint64_t total = 0, acc = 0;

	for (int i = 0; i < 32; i++)
		total += s->lat[i];
	if (!total)
		return 0;
	for (int i = 0; i < 32; i++) {
		acc += s->lat[i];
		if ((double)acc >= p * (double)total)
			return (double)(1ull << i);	/* upper bound of the bucket, µs */
	}
	return 0;
}

void vd_stats_latency(struct vd *d, double t0)
{
	double us = (vd_now() - t0) * 1e6;
	int b = 0;

	while (b < 31 && (double)(1ull << b) < us)
		b++;
	d->st.lat[b]++;
	d->st.lat_sum_us += us;
}

void vd_stats_fill_latency(const struct stats *st, struct vd_ctl_status *s)
{
	_Static_assert(VD_CTL_LAT_BUCKETS == sizeof(st->lat) / sizeof(st->lat[0]),
		       "one histogram on the wire and in the daemon");
	s->has_latency = true;
	memcpy(s->latency, st->lat, sizeof(s->latency));
	s->latency_sum_us = st->lat_sum_us;
}
