// SPDX-License-Identifier: MIT
/*
 * push_stale.c - the staleness of pushing agents (docs/attest-push.md),
 * from the scheduler's listing of the store (sched_list.c, every
 * VF_LIST_MS), which gives each pushing agent's push state with it: one
 * not heard from within --interval + VF_STALE_SLACK_MS is stale (its
 * status, the metrics; state.stale in its history and to the hooks once
 * per episode). The episode is the store's: the verifier whose
 * compare-and-set turns the agent's stale flag on reports it, the others
 * see it on and do not; the flag goes off when the agent pushes again
 * (push.c) or is no longer stale (failed, reactivated meanwhile).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "push_internal.h"

static int seen_cmp(const void *a, const void *b)
{
	return strcmp(((const struct push_seen *)a)->id, ((const struct push_seen *)b)->id);
}

/* Under push->lock. Return: @id's entry of the last listing, NULL. */
static struct push_seen *seen_find(struct vf_push *p, const char *id)
{
	struct push_seen k;

	if (!p->n || strlen(id) >= sizeof(k.id))
		return NULL;
	snprintf(k.id, sizeof(k.id), "%s", id);
	return bsearch(&k, p->seen, p->n, sizeof(*p->seen), seen_cmp);
}

void push_seen_update(struct verifier *vf, const struct vg_store_push *s)
{
	struct push_seen *e;

	pthread_mutex_lock(&vf->push->lock);
	e = seen_find(vf->push, s->id);
	if (e) {
		e->quiet_ms = s->quiet_ms;
		e->pushed_ms = s->pushed_ms;
	}
	pthread_mutex_unlock(&vf->push->lock);
}

/*
 * Return: ms since an agent (pushing) last pushed evidence that was judged
 * (from when it asked that push's challenge, @pushed_ms: the time the
 * verifier takes to judge is not the agent's silence), or was registered,
 * or was reactivated after it failed (@quiet_ms: a failed agent is not
 * attested, its silence until reactivated is not counted; seen
 * reactivated by a listing and not recorded yet: not silent), when that is
 * more than its interval + slack; 0 not stale.
 */
static int64_t stale_ms(struct verifier *vf, unsigned int state, int64_t last_seen,
			int64_t registered_at, int64_t quiet_ms, int64_t pushed_ms, int64_t now)
{
	int64_t heard = (last_seen > registered_at ? last_seen : registered_at) * 1000, silent;

	if (state == VG_AGENT_FAILED)
		return 0;
	if (quiet_ms == VG_STORE_PUSH_QUIET_FAILED || quiet_ms > heard)
		heard = quiet_ms == VG_STORE_PUSH_QUIET_FAILED ? now : quiet_ms;
	if (pushed_ms > heard)
		heard = pushed_ms;	/* the agent's cycle started then: the judging is ours */
	silent = now - heard;
	return silent > (int64_t)vf->interval_ms + VF_STALE_SLACK_MS ? silent : 0;
}

json_object *vf_json_status(struct verifier *vf, const struct vg_store_agent *a)
{
	json_object *o = vf_json_agent(a, vf_sched_late(vf, a->id));
	int64_t s = 0, quiet = 0, pushed = 0;

	if (!o)
		return NULL;
	json_object_object_add(o, "mode", json_object_new_string(vf_push_agent(a) ? "push" :
								  "pull"));
	if (vf_push_agent(a)) {
		struct push_seen *e;

		/* no store call: the caller may hold vf->lock, or be in a listing's callback */
		pthread_mutex_lock(&vf->push->lock);
		e = seen_find(vf->push, a->id);
		if (e) {
			quiet = e->quiet_ms;
			pushed = e->pushed_ms;
		}
		pthread_mutex_unlock(&vf->push->lock);
		s = stale_ms(vf, a->state, a->last_seen, a->registered_at, quiet, pushed,
			     vf_wall_ms());
	}
	json_object_object_add(o, "stale", json_object_new_boolean(s != 0));
	json_object_object_add(o, "silent_ms", json_object_new_int64(s));
	return o;
}

struct stale_list {
	struct verifier *vf;
	struct {
		char id[VG_API_ID_MAX];
		int64_t ms;
	} *a;
	size_t n;
};

/*
 * The agents that became stale into their history (state.stale) and to
 * --webhook and --on-fail, on a thread of their own as the late reports
 * are (scheduler.c): a slow hook does not hold up the scheduler. Counted
 * with them (vf->sched.notifying), so that the store outlives it.
 */
static void *stale_thread(void *arg)
{
	struct stale_list *l = arg;
	struct verifier *vf = l->vf;

	for (size_t i = 0; i < l->n && !vf->stop; i++) {
		struct vg_attest_verdict v;
		struct vg_store_verdict h;
		int r;

		vg_attest_verdict_init(&v);
		vg_attest_fail(&v, VG_AF_STALE, "stale: no evidence pushed for %lld ms (--interval %u "
			       "ms): the agent is silent", (long long)l->a[i].ms, vf->interval_ms);
		vlog_warn("%s %s", l->a[i].id, v.msg);
		pthread_mutex_lock(&vf->lock);
		r = vf_history(vf, l->a[i].id, &v, &h);
		pthread_mutex_unlock(&vf->lock);
		if (r == 0)
			vf_notify(vf, l->a[i].id, &h);
	}
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.notifying--;
	pthread_mutex_unlock(&vf->sched.lock);
	free(l->a);
	free(l);
	return NULL;
}

static void stale_report(struct verifier *vf, struct stale_list *l)
{
	struct stale_list *c;
	pthread_attr_t at;
	pthread_t t;

	if (!l->n || !(c = malloc(sizeof(*c)))) {
		free(l->a);
		return;
	}
	*c = *l;
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.notifying++;
	pthread_mutex_unlock(&vf->sched.lock);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, stale_thread, c) != 0) {
		pthread_mutex_lock(&vf->sched.lock);
		vf->sched.notifying--;
		pthread_mutex_unlock(&vf->sched.lock);
		vlog_warn("%zu agent(s) stale, not reported: no thread", c->n);
		free(c->a);
		free(c);
	}
	pthread_attr_destroy(&at);
}

/*
 * Column @col of @a's push state from @expect to @value in the store, if
 * it is still that (and its last push too). Return: whether it was set.
 */
static bool cas(struct verifier *vf, const struct vg_store_due *a, unsigned int col,
		int64_t expect, int64_t value)
{
	struct vg_store_push_req *rq = calloc(1, sizeof(*rq));
	struct vg_diag d = { 0 };
	bool set;

	if (!rq)
		return false;
	snprintf(rq->st.id, sizeof(rq->st.id), "%s", a->id);
	rq->st.pushed_ms = a->pushed_ms;
	rq->col = col;
	rq->expect = expect;
	rq->value = value;
	if (push_store(vf, VG_STORE_PUSH_CAS, rq, &d) < 0)
		vlog_warn("%s: push state not recorded: %s", a->id, d.msg);
	set = rq->changed;
	free(rq);
	return set;
}

void vf_push_watch(struct verifier *vf, const struct vg_store_due *push, size_t n)
{
	struct stale_list l = { .vf = vf };
	struct push_seen *seen = n ? calloc(n, sizeof(*seen)) : NULL;
	int64_t now = vf_wall_ms();
	unsigned int stale = 0;

	if (n && (!seen || !(l.a = calloc(n, sizeof(*l.a))))) {
		free(seen);
		return;			/* tried at the next listing */
	}
	for (size_t i = 0; i < n; i++) {
		const struct vg_store_due *a = &push[i];
		int64_t quiet = a->quiet_ms, s;

		/*
		 * failed: its silence until reactivated is not counted. Written
		 * when that changes only: seen failed, then seen reactivated
		 * (from then on: up to one listing later than the reactivation)
		 */
		if (a->state == VG_AGENT_FAILED && quiet != VG_STORE_PUSH_QUIET_FAILED &&
		    cas(vf, a, VG_STORE_PUSH_COL_QUIET, quiet, VG_STORE_PUSH_QUIET_FAILED))
			quiet = VG_STORE_PUSH_QUIET_FAILED;
		else if (a->state != VG_AGENT_FAILED && quiet == VG_STORE_PUSH_QUIET_FAILED &&
			 cas(vf, a, VG_STORE_PUSH_COL_QUIET, quiet, now))
			quiet = now;
		snprintf(seen[i].id, sizeof(seen[i].id), "%s", a->id);
		seen[i].quiet_ms = quiet;
		seen[i].pushed_ms = a->pushed_ms;
		s = stale_ms(vf, a->state, a->last_seen, a->registered_at, quiet, a->pushed_ms, now);
		stale += s != 0;
		/* one episode, one report: by the verifier that turns the flag on */
		if (s && !a->stale && cas(vf, a, VG_STORE_PUSH_COL_STALE, 0, 1)) {
			snprintf(l.a[l.n].id, sizeof(l.a[l.n].id), "%s", a->id);
			l.a[l.n++].ms = s;
		} else if (!s && a->stale) {
			/* not stale any more: a new episode when it goes silent again */
			(void)cas(vf, a, VG_STORE_PUSH_COL_STALE, 1, 0);
		}
	}
	if (n)
		qsort(seen, n, sizeof(*seen), seen_cmp);
	pthread_mutex_lock(&vf->push->lock);
	vf->push->stale = stale;
	free(vf->push->seen);
	vf->push->seen = seen;
	vf->push->n = n;
	pthread_mutex_unlock(&vf->push->lock);
	stale_report(vf, &l);
}

unsigned int vf_push_stale_count(struct verifier *vf)
{
	unsigned int n;

	pthread_mutex_lock(&vf->push->lock);
	n = vf->push->stale;
	pthread_mutex_unlock(&vf->push->lock);
	return n;
}
