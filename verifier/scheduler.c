// SPDX-License-Identifier: MIT
/*
 * scheduler.c - when each agent is attested. Every --interval the main
 * thread lists the agents not failed and starts a round (round.c) for
 * each on its own thread, at most VF_ROUNDS_MAX at once and one per agent:
 * an agent that answers slowly (up to --agent-timeout) or not at all
 * delays only itself. Between lists it watches the rounds of trusted
 * agents: one that has not answered within --interval (+
 * VF_SILENT_SLACK_MS) of its last verification makes its agent
 * unreachable at once, not at --agent-timeout. It also reloads the token
 * list when SIGHUP asked for it. A failed agent is not polled again until
 * an operator reactivates it or assigns a policy; an unreachable one is
 * retried every round.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "verifier.h"
#include "http_auth.h"

/*
 * Per agent: when a round last judged it trusted (wall ms), more precise
 * than the store's last_ok (seconds), for the watch. Entries are freed
 * only at exit (one per agent id seen).
 */
struct vf_okc {
	struct vf_okc *next;
	char id[VG_API_ID_MAX];
	int64_t ms;
};

static struct vf_okc **okc_slot(struct verifier *vf, const char *id)
{
	uint64_t h = 1469598103934665603ull;
	struct vf_okc **pp;

	for (const char *s = id; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	for (pp = &vf->okc_tab[h % VF_OKC_BUCKETS]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, id) == 0)
			break;
	return pp;
}

void vf_okc_set(struct verifier *vf, const char *id, int64_t ms)
{
	struct vf_okc **pp;

	pthread_mutex_lock(&vf->okc_lock);
	pp = okc_slot(vf, id);
	if (!*pp && (*pp = calloc(1, sizeof(**pp))))
		snprintf((*pp)->id, sizeof((*pp)->id), "%s", id);
	if (*pp)
		(*pp)->ms = ms;
	pthread_mutex_unlock(&vf->okc_lock);
}

/* Return: wall ms of the last trusted verdict of this verifier, 0 if none. */
static int64_t okc_get(struct verifier *vf, const char *id)
{
	struct vf_okc **pp;
	int64_t ms;

	pthread_mutex_lock(&vf->okc_lock);
	pp = okc_slot(vf, id);
	ms = *pp ? (*pp)->ms : 0;
	pthread_mutex_unlock(&vf->okc_lock);
	return ms;
}

void vf_okc_free(struct verifier *vf)
{
	for (size_t i = 0; i < VF_OKC_BUCKETS; i++)
		while (vf->okc_tab[i]) {
			struct vf_okc *n = vf->okc_tab[i]->next;

			free(vf->okc_tab[i]);
			vf->okc_tab[i] = n;
		}
}

struct idlist {
	struct verifier *vf;
	struct {
		char id[128];
		int64_t watch_ms;	/* trusted: last verified (wall ms), else 0 */
	} *a;
	size_t n, cap;
};

static int collect(void *arg, const struct vg_store_agent *a)
{
	struct idlist *l = arg;

	if (a->state == VG_AGENT_FAILED)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *n = realloc(l->a, cap * sizeof(*l->a));

		if (!n)
			return -ENOMEM;
		l->a = n;
		l->cap = cap;
	}
	memcpy(l->a[l->n].id, a->id, 128);
	l->a[l->n].watch_ms = 0;
	if (a->state == VG_AGENT_TRUSTED) {
		/* ours to the ms; else the store's (another verifier's), whole seconds */
		int64_t ms = okc_get(l->vf, a->id), st = (int64_t)a->last_ok * 1000;

		l->a[l->n].watch_ms = ms > st ? ms : st;
	}
	l->n++;
	return 0;
}

/*
 * Under no lock: a trusted agent whose round has not answered within
 * --interval (+ VF_SILENT_SLACK_MS) of its last verification is
 * unreachable now. The round goes on; if the agent answers after all, the
 * round's verdict replaces this one.
 */
static void mark_silent(struct verifier *vf, const char *id, int64_t since_ms)
{
	struct vg_store_agent *a = malloc(sizeof(*a)), *cur = malloc(sizeof(*cur));
	struct vg_attest_verdict v;
	struct vg_diag d = { 0 };
	int r;

	if (!a || !cur)
		goto out;
	pthread_mutex_lock(&vf->lock);
	r = vg_store_agent_get(vf->store, id, cur, &d);
	if (r == 0 && cur->state == VG_AGENT_TRUSTED) {
		*a = *cur;
		vg_attest_verdict_init(&v);
		vg_attest_fail(&v, VG_AF_COMM, "no answer within the interval: last verified %lld ms "
			       "ago (--interval %u ms)", (long long)(vf_wall_ms() - since_ms),
			       vf->interval_ms);
		a->state = VG_AGENT_UNREACHABLE;
		a->last_fail = VG_AF_COMM;
		a->last_seen = vf_now();
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
		if (a->comm_errors++ == 0)
			vf_record(vf, a, &v);
		r = vg_store_agent_update(vf->store, cur, a, &d);
		vf_store_status(vf, r < 0 && r != -ESTALE ? d.msg : NULL);
		if (r == 0)
			vlog_warn("%s unreachable: %s", id, v.msg);
	}
	pthread_mutex_unlock(&vf->lock);
out:
	free(a);
	free(cur);
}

struct round_arg {
	struct verifier *vf;
	char id[128];
};

static void *round_thread(void *arg)
{
	struct round_arg *ra = arg;
	struct verifier *vf = ra->vf;

	vf_round(vf, ra->id);
	pthread_mutex_lock(&vf->inflight.lock);
	for (size_t i = 0; i < vf->inflight.n; i++)
		if (strcmp(vf->inflight.ids[i], ra->id) == 0) {
			size_t last = vf->inflight.n - 1;

			memmove(vf->inflight.ids[i], vf->inflight.ids[last], sizeof(vf->inflight.ids[i]));
			vf->inflight.watch_ms[i] = vf->inflight.watch_ms[last];
			vf->inflight.n--;
			break;
		}
	pthread_mutex_unlock(&vf->inflight.lock);
	free(ra);
	return NULL;
}

/* Start a round for @id unless one is running (or VF_ROUNDS_MAX are: next time). */
static void dispatch(struct verifier *vf, const char *id, int64_t watch_ms)
{
	pthread_attr_t at;
	pthread_t t;
	struct round_arg *ra;
	bool busy = false;

	pthread_mutex_lock(&vf->inflight.lock);
	for (size_t i = 0; i < vf->inflight.n; i++)
		busy |= strcmp(vf->inflight.ids[i], id) == 0;
	if (busy || vf->inflight.n == VF_ROUNDS_MAX || !(ra = malloc(sizeof(*ra)))) {
		pthread_mutex_unlock(&vf->inflight.lock);
		return;
	}
	ra->vf = vf;
	snprintf(ra->id, sizeof(ra->id), "%s", id);
	vf->inflight.watch_ms[vf->inflight.n] = watch_ms;
	snprintf(vf->inflight.ids[vf->inflight.n++], sizeof(vf->inflight.ids[0]), "%s", id);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, round_thread, ra) != 0) {
		vf->inflight.n--;
		free(ra);
	}
	pthread_attr_destroy(&at);
	pthread_mutex_unlock(&vf->inflight.lock);
}

/*
 * SIGHUP: read the token list again (revocation without a restart). A
 * list that does not load (missing, mode, syntax) keeps the old one.
 */
static void auth_reload(struct verifier *vf)
{
	struct vg_auth *n = NULL, *old;
	char err[512];

	vf->reload = 0;
	if (vf->no_auth || !vf->auth_path)
		return;
	if (http_auth_load(vf->auth_path, VG_AUTH_ADMIN | VG_AUTH_READ, &n, err, sizeof(err)) < 0) {
		vlog_warn("SIGHUP: %s; the tokens listed before stay valid",
			err);
		return;
	}
	pthread_rwlock_wrlock(&vf->auth_lock);
	old = vf->auth;
	vf->auth = n;
	pthread_rwlock_unlock(&vf->auth_lock);
	vg_auth_free(old);
	vlog_info("SIGHUP: %zu token(s) from %s", vg_auth_count(n),
		vf->auth_path);
}

/* Rounds of trusted agents past --interval + VF_SILENT_SLACK_MS: their agents are unreachable. */
static void watch_rounds(struct verifier *vf)
{
	char ids[VF_ROUNDS_MAX][128];
	int64_t since[VF_ROUNDS_MAX], t = vf_wall_ms();
	size_t n = 0;

	pthread_mutex_lock(&vf->inflight.lock);
	for (size_t i = 0; i < vf->inflight.n; i++)
		if (vf->inflight.watch_ms[i] &&
		    t > vf->inflight.watch_ms[i] + (int64_t)vf->interval_ms + VF_SILENT_SLACK_MS) {
			memcpy(ids[n], vf->inflight.ids[i], sizeof(ids[n]));
			since[n++] = vf->inflight.watch_ms[i];
			vf->inflight.watch_ms[i] = 0;	/* once per round */
		}
	pthread_mutex_unlock(&vf->inflight.lock);
	for (size_t i = 0; i < n; i++)
		mark_silent(vf, ids[i], since[i]);
}

void vf_schedule(struct verifier *vf)
{
	while (!vf->stop) {
		struct idlist l = { .vf = vf };
		struct vg_diag sd = { 0 };
		struct timespec t0, t1;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		pthread_mutex_lock(&vf->lock);
		vf_store_status(vf, vg_store_agent_list(vf->store, collect, &l, &sd) < 0 ? sd.msg : NULL);
		pthread_mutex_unlock(&vf->lock);
		for (size_t i = 0; i < l.n && !vf->stop; i++)
			dispatch(vf, l.a[i].id, l.a[i].watch_ms);
		free(l.a);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		for (long left = (long)vf->interval_ms - ms; left > 0 && !vf->stop; left -= 50) {
			usleep(left > 50 ? 50000 : (useconds_t)left * 1000);
			watch_rounds(vf);
			if (vf->reload)
				auth_reload(vf);
		}
	}
}

size_t vf_rounds_in_flight(struct verifier *vf)
{
	size_t n;

	pthread_mutex_lock(&vf->inflight.lock);
	n = vf->inflight.n;
	pthread_mutex_unlock(&vf->inflight.lock);
	return n;
}
