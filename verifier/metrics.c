// SPDX-License-Identifier: MIT
/*
 * metrics.c - vigil-verifier's counters and their Prometheus text
 * (metrics.h); rest.c answers GET /metrics with it, to a credential of
 * role read or admin like every route. No HTTP here: the text is built
 * in memory. Metrics (every name starts with vigil_verifier_):
 *   rounds_total{result="pass"|"fail"|"unreachable"}   counter
 *   round_failures_total{failure=ID}   counter, every failure type id of
 *       vg_attest_fail_id (agent.comm for unreachable rounds)
 *   round_duration_seconds   histogram: quote, log and judgement of a round
 *   agents{state=...}   gauge, from the store
 *   http_requests_total{code="1xx".."5xx"}   counter: API answers by class
 *   api_connections_total   counter: API connections accepted (a kept-alive
 *       one carries many requests); api_connections gauge: open now
 *   agents_late   gauge: agents whose due round has not started within
 *       VF_LATE_SLACK_MS (scheduler.c), now
 *   late_rounds_total   counter: times an agent became late
 *   rounds_running, rounds_queued   gauges: rounds in the --max-rounds
 *       slots, due agents waiting for one
 *   store_requests_total   counter: requests to the store process (a
 *       round's: its claim with its row, its commit; the listing, the API)
 *   notices_{queued,sent,failed,dropped}_total{target="webhook"|"hook"}
 *       counters, notices_pending{target} gauge: the notice queues (notify.c)
 * A round the shutdown cut short is not counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "privsep.h"
#include "verifier.h"

static const double lat_le[VF_METRICS_LAT_N] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
};
static const char *const results[3] = { "pass", "fail", "unreachable" };

double vf_metrics_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vf_metrics_round(struct vf_metrics *m, int r, unsigned int fail, double seconds)
{
	int b = 0;

	atomic_fetch_add(&m->rounds[r == 0 ? 0 : r > 0 ? 1 : 2], 1);
	if (r < 0)
		fail = VG_AF_COMM;
	if (r != 0 && fail > VG_AF_NONE && fail < VG_AF__COUNT)
		atomic_fetch_add(&m->failures[fail], 1);
	if (seconds < 0)
		seconds = 0;
	while (b < VF_METRICS_LAT_N && seconds > lat_le[b])
		b++;
	atomic_fetch_add(&m->lat[b], 1);
	atomic_fetch_add(&m->lat_sum_us, (uint_fast64_t)(seconds * 1e6));
}

void vf_metrics_http(struct vf_metrics *m, unsigned int code)
{
	if (code)
		atomic_fetch_add(&m->http[code >= 100 && code < 600 ? code / 100 : 0], 1);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP vigil_verifier_%s %s\n# TYPE vigil_verifier_%s %s\n", name, help, name,
		type);
}

/* The notice queues (notify.c), per target: --webhook, --on-fail. */
static void notices(FILE *f, struct verifier *vf)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "notices_queued_total", "notices queued for a target (webhook, hook)" },
		{ "notices_sent_total", "notices delivered (webhook: 2xx; hook: exit 0)" },
		{ "notices_failed_total", "attempts that failed (a webhook's are retried with a backoff)" },
		{ "notices_dropped_total", "notices never sent: the queue full, given up, or left at the stop" },
		{ "notices_pending", "notices waiting in the queue now" },
	};
	struct vf_notify_counts c[VF_SINKS];

	for (unsigned int s = 0; s < VF_SINKS; s++)
		vf_notify_counts(vf, s, &c[s]);
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		family(f, fam[k].name, k == 4 ? "gauge" : "counter", fam[k].help);
		for (unsigned int s = 0; s < VF_SINKS; s++) {
			uint64_t v = k == 0 ? c[s].queued : k == 1 ? c[s].sent : k == 2 ? c[s].failed :
				     k == 3 ? c[s].dropped : c[s].pending;

			fprintf(f, "vigil_verifier_%s{target=\"%s\"} %" PRIu64 "\n", fam[k].name,
				vf_notify_sink_name(s), v);
		}
	}
}

int vf_metrics_text(struct verifier *vf, char **ret, size_t *ret_len, char *err, size_t cap)
{
	struct vf_metrics *m = &vf->metrics;
	uint64_t states[VG_STORE_STATES], acc = 0;
	unsigned int running, queued, late;
	struct vg_diag d = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c): counted in the database, no row read out */
	r = vg_store_agent_states(vf->store, states, &d);
	pthread_mutex_unlock(&vf->lock);
	if (r < 0) {
		snprintf(err, cap, "the store: %s", d.msg);
		return -EIO;
	}
	vf_sched_counts(vf, &running, &queued, &late);
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	family(f, "rounds_total", "counter", "attestation rounds judged, by result");
	for (int i = 0; i < 3; i++)
		fprintf(f, "vigil_verifier_rounds_total{result=\"%s\"} %" PRIuFAST64 "\n", results[i],
			atomic_load(&m->rounds[i]));
	family(f, "round_failures_total", "counter",
	       "rounds that did not pass, by failure type (agent.comm: unreachable)");
	for (unsigned int i = VG_AF_NONE + 1; i < VG_AF__COUNT; i++)
		if (i != VG_AF_REBOOT && i != VG_AF_LATE && i != VG_AF_STALE && vg_attest_fail_id(i))
			fprintf(f, "vigil_verifier_round_failures_total{failure=\"%s\"} %" PRIuFAST64
				"\n", vg_attest_fail_id(i), atomic_load(&m->failures[i]));
	family(f, "round_duration_seconds", "histogram",
	       "time of a round: quote, measurement list and judgement");
	for (int b = 0; b < VF_METRICS_LAT_N; b++) {
		acc += atomic_load(&m->lat[b]);
		fprintf(f, "vigil_verifier_round_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
			lat_le[b], acc);
	}
	acc += atomic_load(&m->lat[VF_METRICS_LAT_N]);
	fprintf(f, "vigil_verifier_round_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", acc);
	fprintf(f, "vigil_verifier_round_duration_seconds_sum %.6f\n",
		(double)atomic_load(&m->lat_sum_us) / 1e6);
	fprintf(f, "vigil_verifier_round_duration_seconds_count %" PRIu64 "\n", acc);
	family(f, "agents", "gauge", "registered agents by state");
	for (unsigned int s = 0; s <= VG_AGENT_UNREACHABLE; s++)
		fprintf(f, "vigil_verifier_agents{state=\"%s\"} %" PRIu64 "\n", vg_agent_state_name(s),
			states[s]);
	family(f, "agents_late", "gauge",
	       "agents whose due round has not started within a second of its due time");
	fprintf(f, "vigil_verifier_agents_late %u\n", late);
	family(f, "agents_stale", "gauge",
	       "pushing agents not heard from within their interval (state.stale)");
	fprintf(f, "vigil_verifier_agents_stale %u\n", vf_push_stale_count(vf));
	family(f, "late_rounds_total", "counter", "times an agent became late");
	fprintf(f, "vigil_verifier_late_rounds_total %" PRIuFAST64 "\n",
		atomic_load(&m->late_rounds));
	family(f, "rounds_running", "gauge", "rounds running (at most --max-rounds)");
	fprintf(f, "vigil_verifier_rounds_running %u\n", running);
	family(f, "rounds_queued", "gauge", "due agents waiting for a round slot");
	fprintf(f, "vigil_verifier_rounds_queued %u\n", queued);
	family(f, "store_requests_total", "counter",
	       "requests to the store process (claims, rows, commits, history, listings)");
	fprintf(f, "vigil_verifier_store_requests_total %" PRIu64 "\n",
		vg_privsep_store_requests(vf->store));
	{
		unsigned int kept;
		uint64_t full, made;

		vf_client_counts(&kept, &full, &made);
		family(f, "agent_connections", "gauge",
		       "agents' connections kept open between rounds (--agent-connections)");
		fprintf(f, "vigil_verifier_agent_connections %u\n", kept);
		family(f, "agent_connections_full_total", "counter",
		       "rounds whose agent's connection could not be kept: --agent-connections reached");
		fprintf(f, "vigil_verifier_agent_connections_full_total %" PRIu64 "\n", full);
		family(f, "agent_connects_total", "counter",
		       "connections made to agents (TCP, and TLS handshakes over HTTPS)");
		fprintf(f, "vigil_verifier_agent_connects_total %" PRIu64 "\n", made);
	}
	notices(f, vf);
	family(f, "http_requests_total", "counter", "API answers by status class");
	for (int c = 1; c <= 5; c++)
		fprintf(f, "vigil_verifier_http_requests_total{code=\"%dxx\"} %" PRIuFAST64 "\n", c,
			atomic_load(&m->http[c]));
	family(f, "api_connections_total", "counter",
	       "API connections accepted (TCP, with TLS a handshake each)");
	fprintf(f, "vigil_verifier_api_connections_total %" PRIuFAST64 "\n",
		atomic_load(&m->api_accepted));
	family(f, "api_connections", "gauge", "API connections open (at most --api-connections)");
	fprintf(f, "vigil_verifier_api_connections %" PRIuFAST64 "\n", atomic_load(&m->api_open));
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}
