// SPDX-License-Identifier: MIT
/*
 * scheduler.c - when each agent is attested. Every agent not failed is
 * due --interval after its last round started (a new or reactivated one
 * at once, never before its last round ended). The main thread lists the
 * agents from the store (every interval, at least every second) and,
 * every 50 ms, puts the due ones into a queue, earliest due first (then
 * first queued): never by id, so the agent that has waited longest goes
 * next. At most --max-rounds slots run rounds (round.c), one per agent,
 * each on its own thread; a slot whose round ends takes the next queued
 * agent at once, so an agent that answers slowly (up to --agent-timeout)
 * holds one slot, and the agents queued behind it are reported, not
 * skipped: one whose due round has not started VF_LATE_SLACK_MS after it
 * was due is late (its status, the metrics, state.late in its history and
 * to the hooks, once) until its round ends. The main thread also watches
 * the rounds of trusted agents: one that has not answered within
 * --interval (+ VF_SILENT_SLACK_MS) of its last verification (of its
 * start, for a round that waited for a slot) makes its agent unreachable
 * at once, not at --agent-timeout; and it reloads the token list when
 * SIGHUP asked for it. A failed agent is not polled again until an
 * operator reactivates it or assigns a policy; an unreachable one is
 * retried every round. Lateness lives here, in memory: each verifier of
 * a shared store reports its own.
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
 * Per agent (one entry per id seen, freed only at exit): what the
 * scheduler knows of it. Under vf->sched.lock.
 */
struct vf_ent {
	struct vf_ent *next;
	struct verifier *vf;
	char id[VG_API_ID_MAX];
	int64_t ok_ms;		/* wall ms of this verifier's last trusted verdict, 0 none */
	int64_t store_ok_ms;	/* the store's last_ok (any verifier's), whole seconds, at listing */
	int64_t due_ms;		/* wall ms the next round is due */
	int64_t start_ms;	/* the running round's start */
	int64_t watch_ms;	/* the running round of a trusted agent: its last verification, 0 */
	int64_t silent_ms;	/* ... unreachable if it has not answered by then */
	int64_t late_ms;	/* the due time it is late against, 0 not late */
	uint64_t gen;		/* the listing it was last in */
	uint64_t seq;		/* queue order among equal due times */
	bool trusted;		/* at listing, or since a round of ours judged it so */
	bool active;		/* in the last listing: not failed, not removed */
	bool queued, running;
};

static struct vf_ent **ent_slot(struct verifier *vf, const char *id)
{
	uint64_t h = 1469598103934665603ull;
	struct vf_ent **pp;

	for (const char *s = id; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	for (pp = &vf->sched.tab[h % VF_SCHED_BUCKETS]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, id) == 0)
			break;
	return pp;
}

/* Under the lock. Return: @id's entry, made if new (due now), NULL on no memory. */
static struct vf_ent *ent_get(struct verifier *vf, const char *id, int64_t now)
{
	struct vf_ent **pp = ent_slot(vf, id);

	if (!*pp && (*pp = calloc(1, sizeof(**pp)))) {
		snprintf((*pp)->id, sizeof((*pp)->id), "%s", id);
		(*pp)->vf = vf;
		(*pp)->due_ms = now;
	}
	return *pp;
}

void vf_okc_set(struct verifier *vf, const char *id, int64_t ms)
{
	struct vf_ent *e;

	pthread_mutex_lock(&vf->sched.lock);
	e = ent_get(vf, id, ms);
	if (e) {
		e->ok_ms = ms;
		e->trusted = true;
	}
	pthread_mutex_unlock(&vf->sched.lock);
}

void vf_sched_free(struct verifier *vf)
{
	for (size_t i = 0; i < VF_SCHED_BUCKETS; i++)
		while (vf->sched.tab[i]) {
			struct vf_ent *n = vf->sched.tab[i]->next;

			free(vf->sched.tab[i]);
			vf->sched.tab[i] = n;
		}
	free(vf->sched.heap);
	vf->sched.heap = NULL;
}

/* ---- the queue: a binary min-heap of due agents, earliest due (then first queued) on top ---- */

static bool before(const struct vf_ent *a, const struct vf_ent *b)
{
	return a->due_ms != b->due_ms ? a->due_ms < b->due_ms : a->seq < b->seq;
}

/* Under the lock. Return: 0, -ENOMEM (not queued: tried again at the next tick). */
static int queue_push(struct verifier *vf, struct vf_ent *e)
{
	struct vf_ent **h = vf->sched.heap;
	size_t i = vf->sched.nheap;

	if (i == vf->sched.capheap) {
		size_t cap = i ? i * 2 : 64;

		h = realloc(h, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		vf->sched.heap = h;
		vf->sched.capheap = cap;
	}
	e->seq = vf->sched.seq++;
	e->queued = true;
	for (; i > 0 && before(e, h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = e;
	vf->sched.nheap++;
	return 0;
}

/* Under the lock. Return: the agent that has waited longest, NULL if none. */
static struct vf_ent *queue_pop(struct verifier *vf)
{
	struct vf_ent **h = vf->sched.heap, *top, *last;
	size_t i = 0, n;

	if (!vf->sched.nheap)
		return NULL;
	top = h[0];
	n = --vf->sched.nheap;
	last = h[n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(h[c + 1], h[c]))
			c++;
		if (!before(h[c], last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = last;
	top->queued = false;
	return top;
}

struct idlist {
	struct {
		char id[VG_API_ID_MAX];
		int64_t ok_ms;		/* the store's last_ok, ms */
		bool trusted;
	} *a;
	size_t n, cap;
};

static int collect(void *arg, const struct vg_store_agent *a)
{
	struct idlist *l = arg;

	if (a->state == VG_AGENT_FAILED || vf_push_agent(a))
		return 0;		/* push agents come to us (push.c) */
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *n = realloc(l->a, cap * sizeof(*l->a));

		if (!n)
			return -ENOMEM;
		l->a = n;
		l->cap = cap;
	}
	snprintf(l->a[l->n].id, sizeof(l->a[l->n].id), "%s", a->id);
	l->a[l->n].trusted = a->state == VG_AGENT_TRUSTED;
	l->a[l->n].ok_ms = (int64_t)a->last_ok * 1000;
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
	if (http_auth_load(vf->auth_path, VG_AUTH_ADMIN | VG_AUTH_READ | VG_AUTH_AGENT, &n, err,
			   sizeof(err)) < 0) {
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

/* Under the lock: @e's round starts now (its next one is due an interval later). */
static void round_begin(struct verifier *vf, struct vf_ent *e, int64_t now)
{
	int64_t ok = e->ok_ms > e->store_ok_ms ? e->ok_ms : e->store_ok_ms;

	e->running = true;
	e->start_ms = now;
	e->due_ms = now + (int64_t)vf->interval_ms;
	e->watch_ms = e->trusted ? ok : 0;
	/*
	 * an interval (+ slack) after the last verification, or after the start
	 * of a round that waited for a slot: the wait is ours, not the agent's
	 */
	e->silent_ms = (ok + (int64_t)vf->interval_ms > now ? ok + (int64_t)vf->interval_ms : now) +
		       VF_SILENT_SLACK_MS;
}

/*
 * Under the lock: @e's round ended. Lateness clears; the next round is
 * due an interval after this one started, or now if this one took
 * longer (never in the past: the time it ran is not waiting).
 */
static void round_end(struct verifier *vf, struct vf_ent *e, int64_t now)
{
	e->running = false;
	e->watch_ms = 0;
	if (e->due_ms < now)
		e->due_ms = now;
	if (e->late_ms) {
		e->late_ms = 0;
		vf->sched.late--;
	}
}

/* Under the lock: the next agent in the queue still to attest, NULL if none. */
static struct vf_ent *next_due(struct verifier *vf)
{
	struct vf_ent *e;

	while ((e = queue_pop(vf)))
		if (e->active && !e->running)
			return e;
	return NULL;
}

/*
 * A slot: rounds one after the other, first @arg's, then while the queue
 * holds due agents the one that has waited longest, so a slot that frees
 * is taken at once, not at the next tick.
 */
static void *round_thread(void *arg)
{
	struct vf_ent *e = arg;
	struct verifier *vf = e->vf;

	for (;;) {
		vf_round(vf, e->id);
		pthread_mutex_lock(&vf->sched.lock);
		round_end(vf, e, vf_wall_ms());
		e = vf->stop ? NULL : next_due(vf);
		if (!e) {
			vf->sched.running--;
			pthread_mutex_unlock(&vf->sched.lock);
			return NULL;
		}
		round_begin(vf, e, vf_wall_ms());
		pthread_mutex_unlock(&vf->sched.lock);
	}
}

/* Under the lock: a thread for @e's round. Return: 0, -errno (@e stays due). */
static int slot_start(struct verifier *vf, struct vf_ent *e, int64_t now)
{
	pthread_attr_t at;
	pthread_t t;
	int r;

	round_begin(vf, e, now);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, round_thread, e);
	pthread_attr_destroy(&at);
	if (r) {
		e->running = false;
		e->watch_ms = 0;
		e->due_ms = now;
		return -r;
	}
	vf->sched.running++;
	return 0;
}

/*
 * The agents of the store: new ones are due now, those gone (removed,
 * failed) leave the queue and are not late; the rest keep their due time.
 */
static void relist(struct verifier *vf)
{
	struct idlist l = { 0 };
	struct vg_diag sd = { 0 };
	int64_t now = vf_wall_ms();
	uint64_t gen;
	int r;

	pthread_mutex_lock(&vf->lock);
	r = vg_store_agent_list(vf->store, collect, &l, &sd);
	vf_store_status(vf, r < 0 ? sd.msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	if (r < 0) {
		free(l.a);
		return;			/* as they were: rounds go on, and say the store failed */
	}
	pthread_mutex_lock(&vf->sched.lock);
	gen = ++vf->sched.gen;
	for (size_t i = 0; i < l.n; i++) {
		struct vf_ent *e = ent_get(vf, l.a[i].id, now);

		if (!e)
			continue;
		if (!e->active && !e->running && !e->queued)
			e->due_ms = now;	/* new, reactivated: attested at once */
		e->active = true;
		e->gen = gen;
		e->trusted = l.a[i].trusted;
		e->store_ok_ms = l.a[i].ok_ms;
	}
	for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
		for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next)
			if (e->gen != gen && e->active) {
				e->active = false;
				if (e->late_ms) {
					e->late_ms = 0;
					vf->sched.late--;
				}
			}
	pthread_mutex_unlock(&vf->sched.lock);
	free(l.a);
}

/* What a tick found to act on outside the lock. */
struct found {
	char id[VG_API_ID_MAX];
	int64_t ms;			/* silent: last verification; late: the due time */
};

/* One more into *@f (a list that did not grow loses it: the next tick finds it again). */
static bool found_add(struct found **f, size_t *n, size_t *cap, const char *id, int64_t ms)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct found *g = realloc(*f, c * sizeof(*g));

		if (!g)
			return false;
		*f = g;
		*cap = c;
	}
	snprintf((*f)[*n].id, sizeof((*f)[*n].id), "%s", id);
	(*f)[(*n)++].ms = ms;
	return true;
}

struct late_arg {
	struct verifier *vf;
	struct found *f;
	size_t n;
	unsigned int running, queued;
};

/*
 * Late agents into their history (state.late) and to --webhook and
 * --on-fail, on a thread of their own: a slow hook does not hold up the
 * rounds. Counted as a round in flight, so that the store outlives it.
 */
static void *late_thread(void *arg)
{
	struct late_arg *la = arg;
	struct verifier *vf = la->vf;

	for (size_t i = 0; i < la->n && !vf->stop; i++) {
		struct vg_attest_verdict v;
		struct vg_store_verdict h;

		vg_attest_verdict_init(&v);
		vg_attest_fail(&v, VG_AF_LATE, "late: the round due %lld ms ago has not started "
			       "(%u running of --max-rounds %u, %u waiting; --interval %u ms)",
			       (long long)(vf_wall_ms() - la->f[i].ms), la->running, vf->max_rounds,
			       la->queued, vf->interval_ms);
		vlog_warn("%s %s", la->f[i].id, v.msg);
		pthread_mutex_lock(&vf->lock);
		vf_history(vf, la->f[i].id, &v, &h);
		pthread_mutex_unlock(&vf->lock);
		vf_notify(vf, la->f[i].id, &h);
	}
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.notifying--;
	pthread_mutex_unlock(&vf->sched.lock);
	free(la->f);
	free(la);
	return NULL;
}

static void late_report(struct verifier *vf, struct found *f, size_t n)
{
	struct late_arg *la = malloc(sizeof(*la));
	pthread_attr_t at;
	pthread_t t;

	if (!la) {
		free(f);
		return;
	}
	*la = (struct late_arg){ .vf = vf, .f = f, .n = n };
	pthread_mutex_lock(&vf->sched.lock);
	la->running = vf->sched.running;
	la->queued = (unsigned int)vf->sched.nheap;
	vf->sched.notifying++;
	pthread_mutex_unlock(&vf->sched.lock);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, late_thread, la) != 0) {
		pthread_mutex_lock(&vf->sched.lock);
		vf->sched.notifying--;
		pthread_mutex_unlock(&vf->sched.lock);
		vlog_warn("%zu agent(s) late, not reported: no thread", n);
		free(f);
		free(la);
	}
	pthread_attr_destroy(&at);
}

/*
 * Every 50 ms: due agents into the queue, free slots filled from it, and
 * what the lock is not held for: trusted agents whose round has not
 * answered within --interval (+ VF_SILENT_SLACK_MS) of their last
 * verification (unreachable), agents that became late (due +
 * VF_LATE_SLACK_MS passed and no round of theirs started since).
 */
static void tick(struct verifier *vf)
{
	struct found *silent = NULL, *late = NULL;
	size_t ns = 0, nl = 0, cs = 0, cl = 0;
	int64_t now = vf_wall_ms();

	pthread_mutex_lock(&vf->sched.lock);
	for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
		for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next) {
			if (!e->active)
				continue;
			if (!e->queued && !e->running && e->due_ms <= now)
				(void)queue_push(vf, e);
			if (e->running && e->watch_ms && now > e->silent_ms) {
				if (found_add(&silent, &ns, &cs, e->id, e->watch_ms))
					e->watch_ms = 0;	/* once per round */
			}
			if (!e->late_ms && now > e->due_ms + VF_LATE_SLACK_MS &&
			    found_add(&late, &nl, &cl, e->id, e->due_ms)) {
				e->late_ms = e->due_ms;
				vf->sched.late++;
				atomic_fetch_add(&vf->metrics.late_rounds, 1);
			}
		}
	while (!vf->stop && vf->sched.running < vf->max_rounds) {
		struct vf_ent *e = next_due(vf);

		if (!e)
			break;
		if (slot_start(vf, e, now) < 0)
			break;
	}
	pthread_mutex_unlock(&vf->sched.lock);
	for (size_t i = 0; i < ns; i++)
		mark_silent(vf, silent[i].id, silent[i].ms);
	free(silent);
	if (nl)
		late_report(vf, late, nl);
	else
		free(late);
}

void vf_schedule(struct verifier *vf)
{
	/* the store is listed every interval, at least every second (new agents) */
	int64_t every = vf->interval_ms < 1000 ? vf->interval_ms : 1000, last = 0;

	while (!vf->stop) {
		int64_t now = vf_wall_ms();

		if (now - last >= every || now < last) {
			relist(vf);
			last = now;
		}
		tick(vf);
		vf_push_watch(vf);
		if (vf->reload)
			auth_reload(vf);
		usleep(50000);
	}
}

size_t vf_rounds_in_flight(struct verifier *vf)
{
	size_t n;

	pthread_mutex_lock(&vf->sched.lock);
	n = vf->sched.running + vf->sched.notifying;
	pthread_mutex_unlock(&vf->sched.lock);
	return n;
}

void vf_sched_counts(struct verifier *vf, unsigned int *running, unsigned int *queued,
		     unsigned int *late)
{
	pthread_mutex_lock(&vf->sched.lock);
	*running = vf->sched.running;
	*queued = 0;
	for (size_t i = 0; i < vf->sched.nheap; i++)
		*queued += vf->sched.heap[i]->active && !vf->sched.heap[i]->running;
	*late = vf->sched.late;
	pthread_mutex_unlock(&vf->sched.lock);
}

int64_t vf_sched_late(struct verifier *vf, const char *id)
{
	struct vf_ent **pp;
	int64_t ms;

	pthread_mutex_lock(&vf->sched.lock);
	pp = ent_slot(vf, id);
	ms = *pp && (*pp)->active ? (*pp)->late_ms : 0;
	pthread_mutex_unlock(&vf->sched.lock);
	return ms;
}
