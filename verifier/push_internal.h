/* SPDX-License-Identifier: MIT */
/*
 * push_internal.h - what push mode's files share: the routes (push.c) and
 * the staleness of pushing agents (push_stale.c). The state of a pushing
 * agent is the store's (store.h: struct vg_store_push, push_regs); this
 * verifier keeps only the last listing's view of it, for the status.
 */
#ifndef VIGIL_VERIFIER_PUSH_INTERNAL_H
#define VIGIL_VERIFIER_PUSH_INTERNAL_H

#include "verifier.h"

/* what the status needs of an agent's push state: the last listing's, or this verifier's last push */
struct push_seen {
	char id[VG_API_ID_MAX];
	int64_t quiet_ms, pushed_ms;
};

struct vf_push {
	pthread_mutex_t lock;
	struct push_seen *seen;		/* by id (strcmp), from the last listing */
	size_t n;
	unsigned int stale;		/* agents stale at the last watch */
};

/*
 * push_store - the store's push op @verb on @rq (store round trip,
 * store_client.c), under vf->lock. Return: vg_store_push's.
 */
int push_store(struct verifier *vf, unsigned int verb, struct vg_store_push_req *rq,
	       struct vg_diag *d);

/* A push of @id judged by this verifier: its state after (the store's row) for the status. */
void push_seen_update(struct verifier *vf, const struct vg_store_push *s);

#endif
