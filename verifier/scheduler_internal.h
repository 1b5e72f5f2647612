/* SPDX-License-Identifier: MIT */
/*
 * scheduler_internal.h - what scheduler.c (claims, rounds, late agents,
 * the silence watch) and sched_list.c (what the store says is due) share:
 * the scheduler's entry per agent, under vf->sched.lock.
 */
#ifndef VIGIL_VERIFIER_SCHEDULER_INTERNAL_H
#define VIGIL_VERIFIER_SCHEDULER_INTERNAL_H

#include "verifier.h"

#define VF_LIST_MS 500		/* the due agents listed at least this often */
#define VF_ORPHAN_MS 1000	/* a lease of ours no round of ours holds, this old: given back */
#define VF_LIST_AHEAD_MS 100	/* ... with those due this long after the next listing */

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
	int64_t due_ms;		/* wall ms the next round is due (the store's, or our release's) */
	int64_t start_ms;	/* our running round's start */
	int64_t watch_ms;	/* our running round of a trusted agent: its last verification, 0
				 * (also once the watch reported it) */
	int64_t watched_ms;	/* ... the same, kept until the round ends */
	int64_t silent_ms;	/* ... unreachable if it has not answered by then */
	int64_t late_ms;	/* the due time it is late against, 0 not late */
	int64_t seen_ms;	/* wall ms it became active (new, reactivated, due again): not late
				 * before */
	uint64_t gen;		/* the listing it was last in */
	bool trusted;		/* at listing, or since a round of ours judged it so */
	bool active;		/* in the last listing: due soon, not failed, not removed */
	bool running;		/* a round of ours */
	bool elsewhere;		/* leased by another verifier at listing, or not claimable since */
	bool unreleased;	/* our round ended and the store did not take its release */
	int64_t release_due;	/* ... the next due time to release it with */
	int64_t lease_until;	/* the store's end of the lease our last claim of it took: a
				 * store that still has it once our round released it lost
				 * that release (sched_list.c) */
	struct vg_store_agent *row;	/* claimed, its round not begun: its row as the claim read it */
};

/* Under the lock. Return: where @id's entry is (or goes) in vf->sched.tab. */
struct vf_ent **sched_ent_slot(struct verifier *vf, const char *id);
/* Under the lock. Return: @id's entry, made if new (due now), NULL on no memory. */
struct vf_ent *sched_ent_get(struct verifier *vf, const char *id, int64_t now);
/*
 * sched_list.c, from the scheduler's loop: the agents due by @before (wall
 * ms) as the store has them, into their entries; those not listed are not
 * late; the pushing agents to the push watch (push.c).
 */
void vf_sched_relist(struct verifier *vf, int64_t before);

#endif
