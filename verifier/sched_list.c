// SPDX-License-Identifier: MIT
/*
 * sched_list.c - what the scheduler learns from the store: the agents due
 * by the next listing (vg_store_agent_due: the store's next_due index, a
 * few columns each, not the whole table and not whole rows), their due
 * times and leases as the store has them (any verifier's), every
 * VF_LIST_MS (scheduler.c). An agent not listed is not due yet (or
 * failed, or removed) and so not late. The pushing agents of the same
 * listing go to the push watch (push.c). Claims, rounds and what is late
 * are scheduler.c's. A lease under our id that no round of ours holds is
 * given back here, so that the agent is attested again now, not when the
 * lease ends: the one our last round of it released if the store still
 * has it (a database that lost acknowledged writes: a crash with
 * synchronous_commit off, a failover to an asynchronous standby), and any
 * other once VF_ORPHAN_MS old (a claim the database took but never
 * answered: a statement that timed out here and committed there, a
 * statement retried after a lost connection; a process before us with
 * the same --verifier-id).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler_internal.h"
#include "log.h"

struct listed {
	struct {
		char id[VG_API_ID_MAX];
		int64_t ok_ms;		/* the store's last_ok, ms */
		int64_t due;		/* next_due */
		int64_t lease_until;
		bool trusted;
		bool elsewhere;		/* leased now, by another verifier or by us */
		bool ours;		/* ... by us */
		bool lost;		/* ... by us, and no round of ours holds it: given back */
	} *a;
	size_t n, cap;
	struct vg_store_due *push;	/* the pushing agents, for the push watch (push.c) */
	size_t npush, pcap;
	int64_t now;
	const char *me;		/* our --verifier-id */
};

static int collect(void *arg, const struct vg_store_due *a)
{
	struct listed *l = arg;

	if (a->push) {
		/* push agents come to us (push.c): their silence is watched there */
		if (l->npush == l->pcap) {
			size_t cap = l->pcap ? l->pcap * 2 : 16;
			void *n = realloc(l->push, cap * sizeof(*l->push));

			if (!n)
				return -ENOMEM;
			l->push = n;
			l->pcap = cap;
		}
		l->push[l->npush++] = *a;
		return 0;
	}
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
	l->a[l->n].ok_ms = a->last_ok * 1000;
	/* a new agent is due since it registered (never 0: late would not know since when) */
	l->a[l->n].due = a->next_due ? a->next_due : a->registered_at * 1000;
	/* leased now: running elsewhere, or under our own id from before a restart */
	l->a[l->n].elsewhere = a->lease_until > l->now;
	l->a[l->n].ours = l->a[l->n].elsewhere && strcmp(a->lease_owner, l->me) == 0;
	l->a[l->n].lease_until = a->lease_until;
	l->a[l->n].lost = false;
	l->n++;
	return 0;
}

/*
 * The leases of @l under our id that no round of ours holds (lost): that
 * lease (its end time), and only that one, ends now (vg_store_lease_drop:
 * a lease taken again since, by us or another verifier, is not touched),
 * and the agent is claimable at once, as due as the store has it.
 */
static void give_back(struct verifier *vf, struct listed *l)
{
	struct vg_diag d = { 0 };
	unsigned int n = 0;

	for (size_t i = 0; i < l->n && !vf->stop; i++) {
		struct vf_ent *e;
		int r;

		if (!l->a[i].lost)
			continue;
		pthread_mutex_lock(&vf->lock);
		/* store round trip (store_client.c) */
		r = vg_store_lease_drop(vf->store, l->a[i].id, vf->id, l->a[i].lease_until, &d);
		vf_store_status(vf, r < 0 && r != -ESTALE ? d.msg : NULL);
		pthread_mutex_unlock(&vf->lock);
		if (r < 0 && r != -ESTALE)
			break;		/* the store does not answer: the next listing */
		if (r < 0)
			continue;
		n++;
		pthread_mutex_lock(&vf->sched.lock);
		e = *sched_ent_slot(vf, l->a[i].id);
		if (e && !e->running)
			e->elsewhere = false;
		pthread_mutex_unlock(&vf->sched.lock);
	}
	if (n)
		vlog_warn("store: %u lease%s under our id that no round of ours holds (a release or "
			  "a claim the database lost or never answered): given back", n,
			  n == 1 ? "" : "s");
}

void vf_sched_relist(struct verifier *vf, int64_t before)
{
	struct listed l = { .now = vf_wall_ms(), .me = vf->id };
	struct vg_diag sd = { 0 };
	int64_t now = l.now;
	uint64_t gen;
	int r;

	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c): the due agents' few columns streamed back */
	r = vg_store_agent_due(vf->store, before, collect, &l, &sd);
	vf_store_status(vf, r < 0 ? sd.msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	if (r < 0) {
		free(l.a);
		free(l.push);
		return;			/* as they were: rounds go on, and say the store failed */
	}
	pthread_mutex_lock(&vf->sched.lock);
	gen = ++vf->sched.gen;
	for (size_t i = 0; i < l.n; i++) {
		struct vf_ent *e = sched_ent_get(vf, l.a[i].id, now);

		if (!e)
			continue;
		if (!e->active)
			e->seen_ms = now;	/* new, back from failed, or due again: due since then */
		e->active = true;
		e->gen = gen;
		e->trusted = l.a[i].trusted;
		e->store_ok_ms = l.a[i].ok_ms;
		if (e->running)
			continue;
		e->due_ms = l.a[i].due;
		e->elsewhere = l.a[i].elsewhere;
		/*
		 * ours, no round of ours holds it, and no release of it waits for
		 * retry_releases: the lease our last round of it released, or one
		 * taken VF_ORPHAN_MS ago or more (a claim of ours is marked running
		 * as soon as the store answers it)
		 */
		l.a[i].lost = l.a[i].ours && !e->unreleased &&
			      (e->lease_until == l.a[i].lease_until ||
			       l.a[i].lease_until - (int64_t)vf->lease_ms <= now - VF_ORPHAN_MS);
		if (e->elsewhere && !l.a[i].lost && e->late_ms) {
			e->late_ms = 0;		/* another verifier's round started */
			vf->sched.late--;
		}
	}
	for (size_t b = 0; b < VF_SCHED_BUCKETS; b++)
		for (struct vf_ent *e = vf->sched.tab[b]; e; e = e->next)
			if (e->gen != gen && e->active && !e->running) {
				e->active = false;
				if (e->late_ms) {
					e->late_ms = 0;
					vf->sched.late--;
				}
			}
	pthread_mutex_unlock(&vf->sched.lock);
	give_back(vf, &l);
	free(l.a);
	vf_push_watch(vf, l.push, l.npush);
	free(l.push);
}
