// SPDX-License-Identifier: MIT
/*
 * vigild_prom.c - vigild's status as Prometheus exposition text
 * (vigild_prom.h). Pure formatting: no sockets, no files of its own.
 * Every metric family gets its # HELP and # TYPE once, before its
 * samples; label values are escaped as the format says (\\, \", \n).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "vigild_prom.h"

/* the counters of the status answer that print as NAME_total, and their help */
static const struct {
	enum vd_ctl_counter c;
	const char *name, *help;
} counters[] = {
	{ VD_CTL_EVENTS, "events", "fanotify permission events received" },
	{ VD_CTL_OWN, "own_events", "events of vigild's own processes, allowed unseen" },
	{ VD_CTL_CACHE_HITS, "cache_hits", "decisions answered from the verdict cache" },
	{ VD_CTL_CACHE_MISSES, "cache_misses", "decisions that needed an appraisal" },
	{ VD_CTL_HASHED_BYTES, "hashed_bytes", "bytes hashed by the appraisers" },
	{ VD_CTL_TIMEOUTS, "timeouts", "appraisals that took longer than --timeout-ms" },
	{ VD_CTL_WORKER_RESTARTS, "appraiser_restarts",
	  "appraisers restarted after they died or were killed" },
	{ VD_CTL_APPRAISER_KILLS, "appraiser_kills", "appraisers killed for overrunning the deadline" },
	{ VD_CTL_APPRAISALS, "appraisals", "full appraisals (EVM and content) made by the appraisers" },
	{ VD_CTL_APPRAISER_ANSWERS, "appraiser_answers",
	  "allows written to the kernel by the appraiser itself, without the monitor's wake-up" },
	{ VD_CTL_WORKER_SPAWNS, "appraiser_spawns", "appraisers added beyond --workers for large files" },
	{ VD_CTL_OVERFLOWS, "overflows",
	  "events answered by the overflow policy (table full or queue overflow)" },
	{ VD_CTL_MEASURED, "measured", "files added to the measurement list" },
	{ VD_CTL_MEASURE_FAILURES, "measure_failures", "measurements that could not be recorded" },
	{ VD_CTL_FIXED, "fixed", "labels written in fix mode" },
	{ VD_CTL_ERRORS, "errors", "fanotify answers or measurements that failed" },
	{ VD_CTL_TOO_LARGE, "too_large", "files over --max-file-size" },
	{ VD_CTL_TRUSTED_ARCHIVE, "trusted_archive",
	  "files without security.ima allowed by the trust database (trust=archive)" },
	{ VD_CTL_IGNORE_MARKS, "ignore_marks", "kernel ignore marks placed" },
	{ VD_CTL_IGNORE_FLUSHES, "ignore_flushes", "kernel ignore marks flushed" },
	{ VD_CTL_LEASE_BREAKS, "lease_breaks", "read leases broken by a writer" },
	{ VD_CTL_LEASE_WRITERS, "lease_writers", "leases refused because the file was open for writing" },
	{ VD_CTL_LEASE_ERRORS, "lease_errors", "leases refused for another reason" },
	{ VD_CTL_OPEN_ERRORS, "open_errors",
	  "accesses the kernel refused because their file could not be opened for vigild without waiting" },
	{ VD_CTL_JOURNAL_SENT, "journal_sent", "denials and fail actions sent to the journal" },
	{ VD_CTL_RAN_BEFORE_READY_FAILED, "ran_before_ready_failed",
	  "programs of processes running before vigild started that failed their appraisal" },
	{ VD_CTL_JOURNAL_DROPPED, "journal_dropped",
	  "journal entries dropped because the journal was not reading (never waited for)" },
};

static const struct {
	enum vd_ctl_counter c;
	const char *name, *help;
} gauges[] = {
	{ VD_CTL_APPRAISERS, "appraisers", "appraiser processes" },
	{ VD_CTL_LEASES, "leases", "read leases held (cached verdicts)" },
	{ VD_CTL_TRUST_FILES, "trust_files", "files in the trust database vigild holds (trust=archive)" },
	{ VD_CTL_RAN_BEFORE_READY, "ran_before_ready", "processes that were running when vigild started" },
};

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP vigild_%s %s\n# TYPE vigild_%s %s\n", name, help, name, type);
}

/* a label value, escaped */
static void label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void decisions(FILE *f, const struct vd_ctl_status *s)
{
	const uint64_t *c = s->counters;
	uint64_t allow = c[VD_CTL_ALLOWED] > c[VD_CTL_WOULD_DENY] ?
			 c[VD_CTL_ALLOWED] - c[VD_CTL_WOULD_DENY] : 0;

	if (!s->has_counter[VD_CTL_ALLOWED] || !s->has_counter[VD_CTL_DENIED] ||
	    !s->has_counter[VD_CTL_WOULD_DENY])
		return;
	family(f, "decisions_total", "counter",
	       "answered events by verdict (would_deny: allowed only because the mode is not enforce)");
	fprintf(f, "vigild_decisions_total{verdict=\"allow\"} %" PRIu64 "\n", allow);
	fprintf(f, "vigild_decisions_total{verdict=\"deny\"} %" PRIu64 "\n", c[VD_CTL_DENIED]);
	fprintf(f, "vigild_decisions_total{verdict=\"would_deny\"} %" PRIu64 "\n",
		c[VD_CTL_WOULD_DENY]);
	family(f, "decision_reasons_total", "counter",
	       "denials, would-be denials and fail actions by reason");
	for (size_t i = 0; i < s->nreasons; i++) {
		fputs("vigild_decision_reasons_total{reason=\"", f);
		label(f, s->reasons[i].reason);
		fprintf(f, "\"} %" PRIu64 "\n", s->reasons[i].n);
	}
}

static void latency(FILE *f, const struct vd_ctl_status *s)
{
	uint64_t acc = 0;

	if (!s->has_latency)
		return;
	family(f, "decision_latency_seconds", "histogram",
	       "time from the event to the answer");
	for (int b = 0; b < VD_CTL_LAT_BUCKETS - 1; b++) {
		acc += s->latency[b];
		/* 2^b us in seconds: at most 6 decimals, printed exactly */
		fprintf(f, "vigild_decision_latency_seconds_bucket{le=\"%.6f\"} %" PRIu64 "\n",
			(double)(1ull << b) / 1e6, acc);
	}
	acc += s->latency[VD_CTL_LAT_BUCKETS - 1];
	fprintf(f, "vigild_decision_latency_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", acc);
	fprintf(f, "vigild_decision_latency_seconds_sum %.6f\n", s->latency_sum_us / 1e6);
	fprintf(f, "vigild_decision_latency_seconds_count %" PRIu64 "\n", acc);
}

int vd_ctl_prometheus(const struct vd_ctl_status *s, FILE *f)
{
	if (s->has_mode) {
		family(f, "mode", "gauge", "1 for the mode vigild is in");
		for (int m = 0; m < VD_CTL_NMODES; m++)
			fprintf(f, "vigild_mode{mode=\"%s\"} %d\n", vd_ctl_mode_names[m],
				strcmp(s->mode, vd_ctl_mode_names[m]) == 0);
	}
	if (s->has_rules) {
		family(f, "policy_rules", "gauge", "rules in the policy in force");
		fprintf(f, "vigild_policy_rules %" PRId64 "\n", s->policy_rules);
	}
	if (s->has_marks) {
		family(f, "marks", "gauge", "filesystems marked (--watch)");
		fprintf(f, "vigild_marks %zu\n", s->nmarks);
	}
	family(f, "pending", "gauge", "events waiting for an answer");
	fprintf(f, "vigild_pending %d\n", s->pending);
	family(f, "measurements", "gauge", "entries in the measurement list");
	fprintf(f, "vigild_measurements %" PRId64 "\n", s->measurements);
	if (s->has_counters) {
		decisions(f, s);
		for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
			char name[64];

			if (!s->has_counter[counters[i].c])
				continue;
			snprintf(name, sizeof(name), "%s_total", counters[i].name);
			family(f, name, "counter", counters[i].help);
			fprintf(f, "vigild_%s %" PRIu64 "\n", name, s->counters[counters[i].c]);
		}
		for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++) {
			if (!s->has_counter[gauges[i].c])
				continue;
			family(f, gauges[i].name, "gauge", gauges[i].help);
			fprintf(f, "vigild_%s %" PRIu64 "\n", gauges[i].name, s->counters[gauges[i].c]);
		}
	}
	latency(f, s);
	return ferror(f) ? -EIO : 0;
}
