// SPDX-License-Identifier: MIT
/*
 * dispatch.c - fair dispatch of appraisals: events that wait for an
 * appraiser sit in a FIFO per opener uid (one of UQ_CAP queues, held by
 * that uid alone while it has events in it) and
 * are sent round-robin across the queues. A large file takes an idle
 * appraiser for itself, one per queue at a time, and never the last one
 * not hashing a large file; when all that may take it are busy with
 * other users' large files, one more appraiser is started (MAX_WORKERS).
 */
#include "appraisers.h"
#include "monitor.h"

static bool uq_free(const struct uqueue *q)
{
	return q->pending == 0 && q->head < 0 && q->large_inflight == 0;
}

unsigned int vd_uq_claim(struct vd *d, uid_t uid)
{
	unsigned int h = (uint32_t)uid % UQ_CAP;

	for (unsigned int i = 0; i < UQ_CAP; i++)
		if (d->uq[i].uid == uid && !uq_free(&d->uq[i]))
			return i;
	for (unsigned int n = 0; n < UQ_CAP; n++) {
		unsigned int i = (h + n) % UQ_CAP;

		if (uq_free(&d->uq[i])) {
			d->uq[i].uid = uid;
			return i;
		}
	}
	return h;
}

/* Leader @i leaves its uid's queue. */
void vd_uq_remove(struct vd *d, int i)
{
	struct ev *e = &d->ev[i];
	struct uqueue *q = vd_uq(d, e);
	int prev = -1;

	if (!e->queued)
		return;
	for (int j = q->head; j >= 0; prev = j, j = d->ev[j].qnext)
		if (j == i) {
			if (prev < 0)
				q->head = e->qnext;
			else
				d->ev[prev].qnext = e->qnext;
			if (q->tail == i)
				q->tail = prev;
			break;
		}
	e->queued = false;
	e->qnext = -1;
}

void vd_uq_push(struct vd *d, int i)
{
	struct ev *e = &d->ev[i];
	struct uqueue *q = vd_uq(d, e);

	e->qnext = -1;
	e->queued = true;
	if (q->tail >= 0)
		d->ev[q->tail].qnext = i;
	else
		q->head = i;
	q->tail = i;
}

/* Leader @e's appraiser no longer works for it (answered, overran, died). */
void vd_req_done(struct vd *d, struct ev *e)
{
	struct worker *w;

	if (e->worker < 0)
		return;
	w = &d->w[e->worker];
	if (w->inflight)
		w->inflight--;
	if (e->large) {
		struct uqueue *q = vd_uq(d, e);

		w->large = false;
		if (q->large_inflight)
			q->large_inflight--;
	}
	e->worker = -1;
}

/*
 * An appraiser for leader @e, or -1 (it waits in its queue). A large file
 * takes an idle appraiser for itself, one per uid queue at a time, and
 * never the last appraiser not hashing a large file: small files always
 * have one, whoever floods the others with huge ones.
 */
int vd_pick_worker(struct vd *d, const struct ev *e)
{
	unsigned int live = 0, nlarge = 0;
	int best = -1;

	for (unsigned int i = 0; i < d->nworkers; i++)
		if (!d->w[i].dead) {
			live++;
			nlarge += d->w[i].large;
		}
	if (e->large) {
		if (vd_uq(d, e)->large_inflight || (live > 1 && nlarge + 1 >= live))
			return -1;
		for (unsigned int i = 0; i < d->nworkers; i++)
			if (!d->w[i].dead && !d->w[i].inflight)
				return (int)i;
		return -1;
	}
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (!d->w[i].dead && !d->w[i].large && d->w[i].inflight < WORKER_DEPTH &&
		    (best < 0 || d->w[i].inflight < d->w[best].inflight))
			best = (int)i;
	return best;
}

void vd_dispatch(struct vd *d)
{
	bool progress = true;

	while (progress) {
		progress = false;
		for (unsigned int n = 0; n < UQ_CAP; n++) {
			unsigned int b = (d->rr + n) % UQ_CAP;
			int i = d->uq[b].head, w;

			if (i < 0)
				continue;
			w = vd_pick_worker(d, &d->ev[i]);
			if (w < 0 && d->ev[i].large && !d->uq[b].large_inflight && d->nworkers < MAX_WORKERS &&
			    !d->stopping) {
				/*
				 * Every appraiser that may take a large file is busy with
				 * other users' large files: one more appraiser (up to
				 * MAX_WORKERS), so a user's large file does not wait on
				 * another user's deadline.
				 */
				if (vd_pool_spawn(d, (int)d->nworkers) == 0) {
					d->nworkers++;
					d->st.worker_spawns++;
					w = vd_pick_worker(d, &d->ev[i]);
				}
			}
			if (w < 0)
				continue;
			vd_uq_remove(d, i);
			d->rr = (b + 1) % UQ_CAP;
			if (vd_pool_send(d, w, i) < 0)
				vd_fail_group(d, i, "no-appraiser");
			progress = true;
			break;
		}
	}
}
