/* SPDX-License-Identifier: MIT */
/*
 * appraisers.h - the appraiser processes seen from the monitor: the
 * per-uid queues and the round-robin that hands leaders to appraisers
 * (dispatch.c), and the processes themselves: start, requests with the
 * event's descriptor, fixed-size replies, deadlines, deaths (pool.c).
 * The messages are vigild.h's; the state is monitor.h's (struct worker,
 * struct uqueue).
 */
#ifndef VIGILD_APPRAISERS_H
#define VIGILD_APPRAISERS_H

#include "monitor.h"

/* ---- dispatch.c ---- */

/*
 * vd_uq_claim - the queue of @uid: the one it holds, else a free one
 * (nothing pending, queued or hashing a large file), starting at its hash;
 * only when every queue is held by another uid (UQ_CAP users waiting at
 * once) does it share the one at its hash. Return: its index.
 */
unsigned int vd_uq_claim(struct vd *d, uid_t uid);
/* The queue event @e is counted in. */
static inline struct uqueue *vd_uq(struct vd *d, const struct ev *e)
{
	return &d->uq[e->uq];
}
/* Leader @i leaves its uid's queue. */
void vd_uq_remove(struct vd *d, int i);
/* Leader @i waits at the end of its uid's queue. */
void vd_uq_push(struct vd *d, int i);
/* Leader @e's appraiser no longer works for it (answered, overran, died). */
void vd_req_done(struct vd *d, struct ev *e);
/* Return: an appraiser that may take leader @e now, or -1. */
int vd_pick_worker(struct vd *d, const struct ev *e);
/* Send queued leaders to appraisers, one uid queue after the other. */
void vd_dispatch(struct vd *d);

/* ---- pool.c ---- */

/* Start appraiser @w. Return: 0 or -errno. */
int vd_pool_spawn(struct vd *d, int w);
/*
 * vd_pool_start - every appraiser, each waited for (its hello) and
 * started again up to VD_START_TRIES times. Before the marks only: it blocks.
 * Return: 0, or -1 after logging why (no appraiser is left running).
 */
int vd_pool_start(struct vd *d);
/*
 * A child @pid was reaped with @status: if an appraiser, it died
 * (vd_pool_died); the descriptors parked for it are closed.
 */
void vd_pool_reaped(struct vd *d, pid_t pid, int status);
/* A wait status in words: "exited with status 2", "killed by signal 31 (...)". */
void vd_pool_status_text(int status, char *buf, size_t cap);
/* Send leader @i to appraiser @w. Return: 0 or -errno (nothing sent). */
int vd_pool_send(struct vd *d, int w, int i);
/*
 * Appraiser @w is gone (or is killed here): its events get the fail
 * action, or with @requeue go back to their queues; it is replaced.
 */
void vd_pool_died(struct vd *d, int w, const char *why, bool requeue);
/* A reply (or the end) from appraiser @w. */
void vd_pool_reply(struct vd *d, int w);
/* Fail what is past its deadline; kill appraisers that overran. */
void vd_pool_timeouts(struct vd *d);

#endif
