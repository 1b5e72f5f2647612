// SPDX-License-Identifier: MIT
/*
 * scheduler.c - when each agent is attested, by which verifier. The store
 * is the queue: every agent not failed has a due time (next_due, wall ms;
 * a new or reactivated one is due at once) and, while a verifier attests
 * it, a lease (lease_owner, lease_until). Every 50 ms, and when a round of
 * ours ends, a verifier with a free slot (at most --max-rounds rounds, one
 * per agent, each on a thread of round_pool.c's) claims due agents not leased, the
 * earliest due first (vg_store_lease_take: the claim one statement; on PostgreSQL
 * FOR UPDATE SKIP LOCKED, so verifiers sharing a database each take other
 * agents and never wait for each other), attests them, and releases each
 * with its next due time: --interval after its round started, or at once
 * if the round took longer. Adding a verifier adds capacity with no
 * setting; a verifier that dies (SIGKILL, a lost host) leaves its leases
 * to expire --lease after they were taken, and the others take its agents.
 *
 * The main thread lists the agents due by the next listing (sched_list.c:
 * every interval, at least every VF_LIST_MS; the store's next_due index, a
 * few columns each) and so knows, of every verifier's
 * agents alike, which are due:
 * one whose due round has not started VF_LATE_SLACK_MS after it was due
 * (no verifier had a free slot) is late, shown in its status and the
 * metrics of every verifier, and reported (state.late in its history and
 * to the hooks, once per episode) by one of them, the one alive with the
 * smallest id. An agent claimed more than --interval + --lease after it
 * was due was attested by nobody meanwhile (no verifier was running): the
 * verifier that claims it reports state.stale first. Each verifier beats
 * every second into the store (verifier_beat: its id, host, load), which
 * `vigil attest status --verifiers` lists (heartbeat.c).
 *
 * The main thread also watches the rounds of ours of trusted agents: one
 * that has not answered within --interval (+ VF_SILENT_SLACK_MS) of its
 * last verification (of its start, for a round that waited for a slot)
 * makes its agent unreachable at once, not at --agent-timeout (a round
 * whose own request times out past that deadline says the same:
 * vf_sched_timed_out, whichever runs first); it hands the pushing
 * agents of the same listing to the push watch (push.c: which are
 * silent); and it reloads the token list when SIGHUP asked for it. A failed agent is not
 * claimed again until an operator reactivates it or assigns a policy; an
 * unreachable one is retried every round.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "verifier.h"
#include "scheduler_internal.h"

struct vf_ent **sched_ent_slot(struct verifier *vf, const char *id)
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

struct vf_ent *sched_ent_get(struct verifier *vf, const char *id, int64_t now)
{
	struct vf_ent **pp = sched_ent_slot(vf, id);

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
	e = sched_ent_get(vf, id, ms);
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

			free(vf->sched.tab[i]->row);
			free(vf->sched.tab[i]);
			vf->sched.tab[i] = n;
		}
}

/*
 * The failure of a watched round that has not answered by its deadline:
 * one text for the silence watch and for the round's own request timing
 * out past it. It says both when the agent was last verified (@since_ms)
 * and when the round that waits began (@start_ms): a round that began
 * late, the verifier's own delay, moves the deadline on.
 */
static void silent_fail(struct verifier *vf, struct vg_attest_verdict *v, int64_t since_ms,
			int64_t start_ms)
{
	int64_t now = vf_wall_ms();

	vg_attest_fail(v, VG_AF_COMM, "timed out: no answer within the interval: last verified "
		       "%lld ms ago, this round waiting %lld ms (--interval %u ms)",
		       (long long)(now - since_ms), (long long)(now - start_ms), vf->interval_ms);
}

/*
 * Under no lock: a trusted agent whose round has not answered within
 * --interval (+ VF_SILENT_SLACK_MS) of its last verification is
 * unreachable now (silent_fail). The round goes on; if the agent answers
 * after all, the round's verdict replaces this one; if its request times
 * out, the round says the same (vf_sched_timed_out).
 */
static void mark_silent(struct verifier *vf, const char *id, int64_t since_ms, int64_t start_ms)
{
	struct vg_store_agent *a = malloc(sizeof(*a)), *cur = malloc(sizeof(*cur));
	struct vg_attest_verdict v;
	struct vg_store_verdict note;
	struct vg_diag d = { 0 };
	bool noted = false;
	int r;

	if (!a || !cur)
		goto out;
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, cur, &d);
	if (r == 0 && cur->state == VG_AGENT_TRUSTED) {
		*a = *cur;
		vg_attest_verdict_init(&v);
		silent_fail(vf, &v, since_ms, start_ms);
		a->state = VG_AGENT_UNREACHABLE;
		a->last_fail = VG_AF_COMM;
		a->last_seen = vf_now();
		snprintf(a->last_msg, sizeof(a->last_msg), "%s", v.msg);
		if (a->comm_errors++ == 0)
			noted = vf_history(vf, id, &v, &note) == 0;
		/* store round trip (store_client.c) */
		r = vg_store_agent_update(vf->store, cur, a, &d);
		vf_store_status(vf, r < 0 && r != -ESTALE ? d.msg : NULL);
		noted = noted && r == 0;
		if (r == 0)
			vlog_warn("%s unreachable: %s", id, v.msg);
	}
	pthread_mutex_unlock(&vf->lock);
	if (noted)
		vf_notify(vf, id, &note);
out:
	free(a);
	free(cur);
}

/* Under the lock: @e's round starts now (its next one is due an interval later). */
static void round_begin(struct verifier *vf, struct vf_ent *e, int64_t now)
{
	int64_t ok = e->ok_ms > e->store_ok_ms ? e->ok_ms : e->store_ok_ms;

	e->running = true;
	e->elsewhere = false;
	e->unreleased = false;	/* claimed again: the old lease was given back or expired */
	e->start_ms = now;
	e->watch_ms = e->trusted ? ok : 0;
	e->watched_ms = e->watch_ms;
	/*
	 * an interval (+ slack) after the last verification, or after the start
	 * of a round that waited for a slot: the wait is ours, not the agent's
	 */
	e->silent_ms = (ok + (int64_t)vf->interval_ms > now ? ok + (int64_t)vf->interval_ms : now) +
		       VF_SILENT_SLACK_MS;
	if (e->late_ms) {
		e->late_ms = 0;
		vf->sched.late--;
	}
}

/*
 * Under the lock: @e's round ended. Return: its next due time, an
 * interval after this round started, or now if this one took longer
 * (never in the past: the time it ran is not waiting).
 */
static int64_t round_end(struct verifier *vf, struct vf_ent *e, int64_t now)
{
	int64_t due = e->start_ms + (int64_t)vf->interval_ms;

	e->running = false;
	e->watch_ms = e->watched_ms = 0;
	e->due_ms = due < now ? now : due;
	vf->sched.rounds++;
	return e->due_ms;
}

/* What a tick or a claim found to act on outside the lock. */
struct found {
	char id[VG_API_ID_MAX];
	int64_t ms;			/* silent: last verification; late, stale: the due time */
	int64_t start_ms;		/* silent: the start of the round that waits */
};

struct found_list {
	struct found *f;
	size_t n, cap;
};

/* One more into @l (a list that did not grow loses it: the next tick finds it again). */
static bool found_add(struct found_list *l, const char *id, int64_t ms)
{
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 8;
		struct found *g = realloc(l->f, c * sizeof(*g));

		if (!g)
			return false;
		l->f = g;
		l->cap = c;
	}
	snprintf(l->f[l->n].id, sizeof(l->f[l->n].id), "%s", id);
	l->f[l->n].start_ms = 0;
	l->f[l->n++].ms = ms;
	return true;
}

struct report_arg {
	struct verifier *vf;
	struct found_list l;
	unsigned int fail;		/* VG_AF_LATE, VG_AF_STALE */
	unsigned int running, due;
};

/*
 * Late or stale agents into their history and to --webhook and
 * --on-fail, on a thread of their own: a slow hook does not hold up the
 * rounds. Counted as a round in flight, so that the store outlives it.
 */
static void *report_thread(void *arg)
{
	struct report_arg *ra = arg;
	struct verifier *vf = ra->vf;

	for (size_t i = 0; i < ra->l.n && !vf->stop; i++) {
		struct vg_attest_verdict v;
		struct vg_store_verdict h;
		long long ago = (long long)(vf_wall_ms() - ra->l.f[i].ms);

		vg_attest_verdict_init(&v);
		if (ra->fail == VG_AF_LATE)
			vg_attest_fail(&v, VG_AF_LATE, "late: the round due %lld ms ago has not started "
				       "(here %u running of --max-rounds %u; %u due, --interval %u ms)",
				       ago, ra->running, vf->max_rounds, ra->due, vf->interval_ms);
		else
			vg_attest_fail(&v, VG_AF_STALE, "stale: no round for %lld ms since it was "
				       "due (--interval %u ms, --lease %u ms): no verifier attested it",
				       ago, vf->interval_ms, vf->lease_ms);
		vlog_warn("%s %s", ra->l.f[i].id, v.msg);
		pthread_mutex_lock(&vf->lock);
		vf_history(vf, ra->l.f[i].id, &v, &h);
		pthread_mutex_unlock(&vf->lock);
		vf_notify(vf, ra->l.f[i].id, &h);
	}
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.notifying--;
	pthread_mutex_unlock(&vf->sched.lock);
	free(ra->l.f);
	free(ra);
	return NULL;
}

/* @l (taken) reported as @fail on a thread of its own. */
static void report(struct verifier *vf, struct found_list *l, unsigned int fail)
{
	struct report_arg *ra;
	pthread_attr_t at;
	pthread_t t;

	if (!l->n) {
		free(l->f);
		return;
	}
	ra = malloc(sizeof(*ra));
	if (!ra) {
		free(l->f);
		return;
	}
	*ra = (struct report_arg){ .vf = vf, .l = *l, .fail = fail };
	pthread_mutex_lock(&vf->sched.lock);
	ra->running = vf->sched.running;
	ra->due = vf->sched.due;
	vf->sched.notifying++;
	pthread_mutex_unlock(&vf->sched.lock);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, report_thread, ra) != 0) {
		pthread_mutex_lock(&vf->sched.lock);
		vf->sched.notifying--;
		pthread_mutex_unlock(&vf->sched.lock);
		vlog_warn("%zu agent(s) %s, not reported: no thread", l->n, vg_attest_fail_id(fail));
		free(l->f);
		free(ra);
	}
	pthread_attr_destroy(&at);
}

struct claim_arg {
	struct vg_store_agent **rows;	/* each malloc'd */
	size_t n, cap;
};

static int claimed(void *arg, const struct vg_store_agent *a)
{
	struct claim_arg *c = arg;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		void *n = realloc(c->rows, cap * sizeof(*c->rows));

		if (!n)
			return -ENOMEM;
		c->rows = n;
		c->cap = cap;
	}
	c->rows[c->n] = malloc(sizeof(*a));
	if (!c->rows[c->n])
		return -ENOMEM;	/* leased until the lease ends, then claimed again */
	*c->rows[c->n++] = *a;
	return 0;
}

static void slot_task(void *arg);

/* Under the lock: @e's round, on a thread of the pool (round_pool.c). Return: 0, -errno. */
static int slot_start(struct verifier *vf, struct vf_ent *e, int64_t now)
{
	int r;

	round_begin(vf, e, now);
	r = vf_pool_run(&vf->sched.pool, slot_task, e);
	if (r) {
		e->running = false;
		e->watch_ms = e->watched_ms = 0;
		return r;
	}
	vf->sched.running++;
	return 0;
}

/*
 * Claim up to @max due agents from the store (under vf->lock, not the
 * scheduler's), their rows read with the claim (vg_store_lease_take: one
 * store round trip, and the round reads no row of its own). @done (NULL:
 * none): the agent whose round of ours just ended, released in the same
 * round trip with its next due time @done_due; *@released -1 when that
 * release may not have been taken (the store did not answer), else 0.
 * @first: the slot of the calling round thread, which takes the first
 * claimed agent itself (false from the main thread: every one gets a
 * thread). Agents claimed more than --interval + --lease after they were
 * due are reported stale. Return: the agent the caller's slot takes
 * (NULL: none; the others have their threads).
 */
static struct vf_ent *claim(struct verifier *vf, unsigned int max, bool first, const char *done,
			    int64_t done_due, int *released)
{
	struct claim_arg c = { 0 };
	struct found_list stale = { 0 };
	struct vg_diag d = { 0 };
	struct vf_ent *mine = NULL;
	int64_t now = vf_wall_ms(), y;
	int n;

	/* more than our share: what is due since VF_YIELD_MS only, for the same lease */
	pthread_mutex_lock(&vf->sched.lock);
	y = vf->sched.yield ? VF_YIELD_MS : 0;
	pthread_mutex_unlock(&vf->sched.lock);
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c), the claimed rows streamed back */
	n = vg_store_lease_take(vf->store, done, done_due, vf->id, now - y, vf->lease_ms + y, max,
				claimed, &c, &d);
	vf_store_status(vf, n < 0 ? d.msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	if (released)
		*released = n < 0 && n != -ENOMEM ? -1 : 0;
	pthread_mutex_lock(&vf->sched.lock);
	now = vf_wall_ms();
	for (size_t i = 0; i < c.n; i++) {
		struct vg_store_agent *row = c.rows[i];
		struct vf_ent *e = sched_ent_get(vf, row->id, now);

		if (e && e->running) {
			e->lease_until = row->lease_until;
			free(row);	/* our round outlived our lease: it releases it */
			continue;
		}
		if (!e) {
			/* no memory: given back, due now */
			pthread_mutex_unlock(&vf->sched.lock);
			pthread_mutex_lock(&vf->lock);
			/* store round trip (store_client.c) */
			(void)vg_store_lease_release(vf->store, row->id, vf->id, now, &d);
			pthread_mutex_unlock(&vf->lock);
			pthread_mutex_lock(&vf->sched.lock);
			free(row);
			continue;
		}
		if (!e->active)
			e->seen_ms = now;
		e->active = true;
		if (e->trusted && row->next_due &&
		    now - row->next_due > (int64_t)vf->interval_ms + (int64_t)vf->lease_ms)
			(void)found_add(&stale, e->id, row->next_due);
		if (row->next_due)
			e->due_ms = row->next_due;
		e->lease_until = row->lease_until;
		free(e->row);
		e->row = row;
		if (first && !mine) {
			round_begin(vf, e, now);
			mine = e;
		} else if (slot_start(vf, e, now) < 0) {
			/* no thread: given back, due now, for whoever has one */
			e->row = NULL;
			free(row);
			pthread_mutex_unlock(&vf->sched.lock);
			pthread_mutex_lock(&vf->lock);
			/* store round trip (store_client.c) */
			(void)vg_store_lease_release(vf->store, e->id, vf->id, now, &d);
			pthread_mutex_unlock(&vf->lock);
			pthread_mutex_lock(&vf->sched.lock);
		}
	}
	if (n >= 0 && (unsigned int)n < max) {
		/*
		 * what we thought due and could not claim is another verifier's (or
		 * failed); what we let wait (yield) we try again next tick
		 */
		for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
			for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next)
				if (!e->running && e->due_ms <= now - y)
					e->elsewhere = true;
		vf->sched.due = 0;
	} else if (n > 0) {
		vf->sched.due -= vf->sched.due < (unsigned int)n ? vf->sched.due : (unsigned int)n;
	}
	pthread_mutex_unlock(&vf->sched.lock);
	free(c.rows);
	report(vf, &stale, VG_AF_STALE);
	return mine;
}

/*
 * Under no lock: our lease of @id ends; its next round is due at @due.
 * Return: 0 (released, or not ours any more), -1 (the store did not
 * answer: the lease stays ours until it expires, --lease after it was
 * taken, unless released later: retry_releases).
 */
static int release(struct verifier *vf, const char *id, int64_t due)
{
	struct vg_diag d = { 0 };
	int r;

	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_lease_release(vf->store, id, vf->id, due, &d);
	vf_store_status(vf, r < 0 && r != -ESTALE ? d.msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	return r < 0 && r != -ESTALE && r != -ENOENT ? -1 : 0;
}

/*
 * From the main thread: the releases the store did not take (it was down
 * when a round ended) are tried again, so that an agent is attested again
 * as soon as the store answers, not only when the lease expires.
 */
static void retry_releases(struct verifier *vf)
{
	struct found_list l = { 0 };

	pthread_mutex_lock(&vf->sched.lock);
	for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
		for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next)
			if (e->unreleased && !e->running)
				(void)found_add(&l, e->id, e->release_due);
	pthread_mutex_unlock(&vf->sched.lock);
	for (size_t i = 0; i < l.n && !vf->stop; i++) {
		struct vf_ent *e;

		if (release(vf, l.f[i].id, l.f[i].ms) < 0)
			break;		/* the store still does not answer: next tick */
		pthread_mutex_lock(&vf->sched.lock);
		e = *sched_ent_slot(vf, l.f[i].id);
		if (e && !e->running)
			e->unreleased = false;
		pthread_mutex_unlock(&vf->sched.lock);
	}
	free(l.f);
}

/*
 * A slot: rounds one after the other, first @arg's, then, while agents are
 * due, one more claimed at once, so a slot that frees is taken without
 * waiting for the next tick.
 */
static void slot_task(void *arg)
{
	struct vf_ent *e = arg;
	struct verifier *vf = e->vf;

	for (;;) {
		struct vg_store_agent *row;
		struct vf_ent *ended = e;
		char id[VG_API_ID_MAX];
		int64_t due;
		bool more;
		int released;

		pthread_mutex_lock(&vf->sched.lock);
		row = e->row;
		e->row = NULL;
		pthread_mutex_unlock(&vf->sched.lock);
		vf_round(vf, e->id, row);
		free(row);
		pthread_mutex_lock(&vf->sched.lock);
		due = round_end(vf, e, vf_wall_ms());
		snprintf(id, sizeof(id), "%s", e->id);
		more = !vf->stop && vf->sched.due > 0;
		pthread_mutex_unlock(&vf->sched.lock);
		/*
		 * released and the next one claimed in one store round trip; a
		 * round cut short by our stop judged nothing: due now, for another
		 * verifier
		 */
		e = claim(vf, more ? 1 : 0, true, id, vf->stop ? vf_wall_ms() : due, &released);
		if (released < 0) {
			pthread_mutex_lock(&vf->sched.lock);
			ended->unreleased = true;
			ended->release_due = due;
			pthread_mutex_unlock(&vf->sched.lock);
		}
		if (!e) {
			pthread_mutex_lock(&vf->sched.lock);
			vf->sched.running--;
			pthread_mutex_unlock(&vf->sched.lock);
			return;
		}
	}
}

/*
 * Every 50 ms: free slots filled with claimed agents, and what the lock
 * is not held for: trusted agents whose round of ours has not answered
 * within --interval (+ VF_SILENT_SLACK_MS) of their last verification
 * (unreachable), agents that became late (due + VF_LATE_SLACK_MS passed
 * and no round of theirs started since, by any verifier).
 */
static void tick(struct verifier *vf, bool listed)
{
	struct found_list silent = { 0 }, late = { 0 };
	int64_t now = vf_wall_ms();
	unsigned int free_slots = 0, due = 0, active = 0, ours = 0, peers;
	bool leader;

	pthread_mutex_lock(&vf->sched.lock);
	for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
		for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next) {
			if (!e->active)
				continue;
			active++;
			ours += e->start_ms > now - (int64_t)vf->interval_ms * 3 / 2;
			due += !e->running && !e->elsewhere && e->due_ms <= now;
			if (e->running && e->watch_ms && now > e->silent_ms) {
				if (found_add(&silent, e->id, e->watch_ms)) {
					silent.f[silent.n - 1].start_ms = e->start_ms;
					e->watch_ms = 0;	/* once per round */
				}
			}
		}
	vf->sched.due = due;
	/* several verifiers: one that ran more than its share lets the others claim first */
	peers = vf->sched.peers ? vf->sched.peers : 1;
	vf->sched.yield = peers > 1 && ours > (active + peers - 1) / peers;
	if (!vf->stop && vf->sched.running < vf->max_rounds && (listed || due))
		free_slots = vf->max_rounds - vf->sched.running;
	pthread_mutex_unlock(&vf->sched.lock);
	if (free_slots)
		(void)claim(vf, free_slots, false, NULL, 0, NULL);
	/* late: what is still due after the claim, since more than the slack */
	pthread_mutex_lock(&vf->sched.lock);
	leader = vf->sched.leader;
	now = vf_wall_ms();
	for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
		for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next) {
			/*
			 * due since it was due, or since it is known (registered, reactivated:
			 * a stored due time from before, or one of whole seconds, is not ours)
			 */
			int64_t since = e->due_ms > e->seen_ms ? e->due_ms : e->seen_ms;

			if (!e->active || e->running || e->late_ms || e->elsewhere ||
			    now <= since + VF_LATE_SLACK_MS)
				continue;
			/* every verifier counts it; one tells */
			if (leader && !found_add(&late, e->id, since))
				continue;
			e->late_ms = since;
			vf->sched.late++;
			if (leader)
				atomic_fetch_add(&vf->metrics.late_rounds, 1);
		}
	pthread_mutex_unlock(&vf->sched.lock);
	for (size_t i = 0; i < silent.n; i++)
		mark_silent(vf, silent.f[i].id, silent.f[i].ms, silent.f[i].start_ms);
	free(silent.f);
	report(vf, &late, VG_AF_LATE);
}

void vf_schedule(struct verifier *vf)
{
	/*
	 * the store's due agents are listed every interval, at least every
	 * VF_LIST_MS (new agents, the push watch), with what falls due before
	 * the next listing: an agent is seen before it is due
	 */
	int64_t every = vf->interval_ms < VF_LIST_MS ? vf->interval_ms : VF_LIST_MS, last = 0,
		beaten = 0;

	pthread_mutex_lock(&vf->sched.pool.lock);
	vf->sched.pool.max = vf->max_rounds;	/* parsed since vf_init */
	pthread_mutex_unlock(&vf->sched.pool.lock);
	while (!vf->stop) {
		int64_t now = vf_wall_ms();
		bool listed = false;

		if (now - beaten >= VF_BEAT_MS || now < beaten) {
			vf_heartbeat(vf);
			beaten = now;
		}
		if (now - last >= every || now < last) {
			vf_sched_relist(vf, now + every + VF_LIST_AHEAD_MS);
			last = now;
			listed = true;
		}
		retry_releases(vf);
		tick(vf, listed);
		if (vf->reload)
			vf_reload_tokens(vf);
		vf_trust_check(vf, now);	/* --trust-db replaced: loaded again (trust_reload.c) */
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
	*queued = vf->sched.due;
	*late = vf->sched.late;
	pthread_mutex_unlock(&vf->sched.lock);
}

int64_t vf_sched_late(struct verifier *vf, const char *id)
{
	struct vf_ent **pp;
	int64_t ms;

	pthread_mutex_lock(&vf->sched.lock);
	pp = sched_ent_slot(vf, id);
	ms = *pp && (*pp)->active ? (*pp)->late_ms : 0;
	pthread_mutex_unlock(&vf->sched.lock);
	return ms;
}

bool vf_sched_timed_out(struct verifier *vf, const char *id, struct vg_attest_verdict *v)
{
	int64_t since = 0, start = 0;
	struct vf_ent **pp;

	pthread_mutex_lock(&vf->sched.lock);
	pp = sched_ent_slot(vf, id);
	if (*pp && (*pp)->running && (*pp)->watched_ms && vf_wall_ms() > (*pp)->silent_ms) {
		since = (*pp)->watched_ms;
		start = (*pp)->start_ms;
		(*pp)->watch_ms = 0;	/* reported by the round: the watch need not */
	}
	pthread_mutex_unlock(&vf->sched.lock);
	if (!since)
		return false;
	silent_fail(vf, v, since, start);
	return true;
}
