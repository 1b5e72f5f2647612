// SPDX-License-Identifier: MIT
/*
 * commit.c - the measurement list written off the loop.
 *
 * A commit writes the list, fdatasyncs it and extends the TPM's PCRs
 * (mlog.h). Every one of those can wait on something outside vigild: the
 * disk, the TPM, and a TPM that is a process (swtpm) keeping its state on
 * a watched filesystem, whose open of that state waits for vigild's
 * answer. Made on the loop, such a wait was a deadlock (the loop waited
 * for the TPM, the TPM for the loop). So the loop never commits: it hands
 * each measurement to this thread and leaves the event pending; the
 * thread appends every measurement queued meanwhile, commits them at once
 * (one sync for all: group commit), and hands the results back through an
 * eventfd in the loop's epoll set. Whatever the thread itself opens (a
 * TPM library reloaded after a failure, ld.so.cache) is vigild's own
 * access, which the loop answers as it answers every other. The access
 * waits until its measurement is in the list: nothing runs that the list
 * does not show.
 *
 * Results come back in the order the measurements were queued (one
 * thread, one queue): the loop keeps the sequence number of the last one
 * done (d->commit_done) and every event waiting for a measurement of the
 * same file version another event started (vd_finish) goes on once that
 * number is reached. Announcements of the next boot (announce.c) take
 * the same queue, each with the control connection its answer goes to.
 * The thread owns d->mlog (and through it the TPM or
 * the software bank) while it runs; the loop reads only the counts the
 * results carry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "monitor.h"
#include "vigil/attest_announce.h"

enum vd_mreq_kind { VD_MREQ_FILE, VD_MREQ_INITRD, VD_MREQ_CMDLINE };

struct vd_mreq {
	struct vd_mreq *next;
	enum vd_mreq_kind kind;
	int client;		/* an announcement's control connection, else -1 */
	uint64_t seq;
	int ev;			/* the event that asked, and its generation */
	uint16_t gen;
	unsigned int pcr;
	struct vkey key;	/* the file version, for d->measured */
	uint32_t lease_gen;
	struct vg_digest digest;
	char *path;		/* a file's path, an initrd's, a command line */
	size_t path_len;
	uint8_t *sig;
	size_t siglen;
	/* the result */
	int err;		/* 0: in the list and extended */
	bool recovered;		/* the writer had failed before and works again */
	uint64_t entries;	/* entries in the list after this commit */
	char msg[sizeof(((struct vg_diag *)0)->msg)];
};

static void mreq_free(struct vd_mreq *q)
{
	if (q->client >= 0)
		close(q->client);	/* vigild stops: the client learns it has no answer */
	free(q->path);
	free(q->sig);
	free(q);
}

/* Take everything queued; append it; commit once; hand the lot back. */
static void commit_batch(struct vd *d, struct vd_mreq *batch)
{
	struct vd_mreq *q;
	struct vg_diag dg = { 0 };
	bool was_failed = vg_mlog_failed(d->mlog);
	int n = 0, r;

	for (q = batch; q; q = q->next) {
		struct vg_diag ag = { 0 };

		if (q->kind == VD_MREQ_INITRD)
			q->err = vg_attest_announce_initrd(d->mlog, q->pcr, q->path, q->digest.bytes, &ag);
		else if (q->kind == VD_MREQ_CMDLINE)
			q->err = vg_attest_announce_cmdline(d->mlog, q->pcr, q->path, q->path_len, &ag);
		else
			q->err = vg_mlog_append_file(d->mlog, q->pcr, &q->digest, q->path, q->sig,
						     q->siglen, &ag);
		if (q->err < 0)
			snprintf(q->msg, sizeof(q->msg), "%s", ag.msg[0] ? ag.msg : strerror(-q->err));
		else
			n++;
	}
	r = n ? vg_mlog_commit(d->mlog, &dg) : 0;
	for (q = batch; q; q = q->next) {
		if (!q->err && r < 0) {
			q->err = r;
			snprintf(q->msg, sizeof(q->msg), "%s", dg.msg[0] ? dg.msg : strerror(-r));
		}
		q->recovered = was_failed && !q->err;
		q->entries = vg_mlog_entries(d->mlog);
	}
}

static void *commit_main(void *arg)
{
	struct vd *d = arg;

	pthread_mutex_lock(&d->commit_lock);
	for (;;) {
		struct vd_mreq *batch, *last;
		uint64_t one = 1;

		while (!d->commit_head && !d->commit_stop)
			pthread_cond_wait(&d->commit_cond, &d->commit_lock);
		if (!d->commit_head)
			break;
		batch = d->commit_head;
		d->commit_head = d->commit_tail = NULL;
		pthread_mutex_unlock(&d->commit_lock);
		commit_batch(d, batch);
		pthread_mutex_lock(&d->commit_lock);
		for (last = batch; last->next; last = last->next)
			;
		if (d->done_tail)
			d->done_tail->next = batch;
		else
			d->done_head = batch;
		d->done_tail = last;
		if (write(d->commit_fd, &one, sizeof(one)) < 0) {
			/* the counter is far from full: nothing to do, the loop polls anyway */
		}
	}
	pthread_mutex_unlock(&d->commit_lock);
	return NULL;
}

int vd_commit_start(struct vd *d)
{
	int r;

	d->commit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->commit_fd < 0) {
		vlog_err("eventfd: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_init(&d->commit_lock, NULL);
	pthread_cond_init(&d->commit_cond, NULL);
	r = pthread_create(&d->commit_tid, NULL, commit_main, d);
	if (r) {
		vlog_err("cannot start the measurement list's writer: %s", strerror(r));
		return -1;
	}
	d->committing = true;
	return 0;
}

void vd_commit_stop(struct vd *d)
{
	struct vd_mreq *q;

	if (!d->committing)
		return;
	struct timespec until;

	pthread_mutex_lock(&d->commit_lock);
	d->commit_stop = true;
	pthread_cond_signal(&d->commit_cond);
	pthread_mutex_unlock(&d->commit_lock);
	/* a TPM that never answers keeps it: it is left behind, with what it holds */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (pthread_timedjoin_np(d->commit_tid, NULL, &until) != 0) {
		vlog_err("the measurement list's writer is still waiting (on the TPM?): left behind");
		d->left_behind = true;
		d->committing = false;
		return;
	}
	d->committing = false;
	while ((q = d->done_head)) {
		d->done_head = q->next;
		mreq_free(q);
	}
	d->done_tail = NULL;
	close(d->commit_fd);
	d->commit_fd = -1;
}

static void enqueue(struct vd *d, struct vd_mreq *q)
{
	pthread_mutex_lock(&d->commit_lock);
	if (d->commit_tail)
		d->commit_tail->next = q;
	else
		d->commit_head = q;
	d->commit_tail = q;
	pthread_cond_signal(&d->commit_cond);
	pthread_mutex_unlock(&d->commit_lock);
}

int vd_commit_submit(struct vd *d, int i, unsigned int pcr, const struct result *r, bool sig,
		     uint64_t *ret_seq)
{
	struct ev *e = &d->ev[i];
	struct vd_mreq *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->client = -1;
	q->path = strdup(vd_ev_path(e));
	if (sig && r->siglen) {
		q->sig = malloc(r->siglen);
		if (q->sig) {
			memcpy(q->sig, r->sig, r->siglen);
			q->siglen = r->siglen;
		}
	}
	if (!q->path || (sig && r->siglen && !q->sig)) {
		mreq_free(q);
		return -ENOMEM;
	}
	q->seq = ++d->commit_seq;
	q->ev = i;
	q->gen = e->gen;
	q->pcr = pcr;
	q->key = e->key;
	q->lease_gen = e->lease_gen;
	q->digest = r->digest;
	enqueue(d, q);
	*ret_seq = q->seq;
	return 0;
}

int vd_commit_submit_announce(struct vd *d, const struct vd_ctl_announce *a, int client)
{
	struct vd_mreq *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->client = -1;
	q->path = malloc(a->data_len + 1);
	if (!q->path) {
		mreq_free(q);
		return -ENOMEM;
	}
	memcpy(q->path, a->data, a->data_len);
	q->path[a->data_len] = 0;
	q->path_len = a->data_len;
	q->kind = a->kind == VD_CTL_ANN_INITRD ? VD_MREQ_INITRD : VD_MREQ_CMDLINE;
	memcpy(q->digest.bytes, a->sha256, sizeof(a->sha256));
	q->pcr = a->pcr;
	q->ev = -1;
	q->client = client;
	q->seq = ++d->commit_seq;
	enqueue(d, q);
	return 0;
}

/* An announcement's result: its client answered (and the connection closed) */
static void announce_done(struct vd *d, struct vd_mreq *q)
{
	json_object *o = vd_ctl_announce_result_encode(q->err ? q->msg : NULL, false, q->entries);

	d->commit_done = q->seq;
	d->nannounce_waiters--;
	if (q->err)
		vlog_err("announcement of the next boot's %s failed: %s",
		       q->kind == VD_MREQ_INITRD ? "initrd" : "command line", q->msg);
	else
		vlog(VLOG_INFO, "announced the next boot's %s %s", q->kind == VD_MREQ_INITRD ?
			  "initrd" : "command line", q->path);
	if (o)
		(void)vd_ctl_answer_write(q->client, o);
	json_object_put(o);
}

/* Measurement @seq of event @ev (@gen) into @pcr of version @k was made (@ok) or not: recorded. */
static void measured_result(struct vd *d, uint64_t seq, int ev, uint16_t gen, unsigned int pcr,
			    const struct vkey *k, uint32_t lease_gen, bool ok)
{
	struct measured *m = &d->measured[vd_key_slot(k)];
	struct ev *e = &d->ev[ev];

	d->commit_done = seq;
	if (m->valid && vd_key_eq(&m->key, k) && m->lease_gen == lease_gen) {
		m->inflight &= ~(1u << pcr);
		if (ok)
			m->pcrs |= 1u << pcr;
	}
	if (e->used && e->gen == gen && e->mwait == seq)
		e->mstate = ok ? VD_MEAS_OK : VD_MEAS_FAILED;
}

void vd_commit_done(struct vd *d)
{
	struct vd_mreq *q;
	uint64_t n;

	if (read(d->commit_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		vlog_err("eventfd: %s", strerror(errno));
	pthread_mutex_lock(&d->commit_lock);
	q = d->done_head;
	d->done_head = d->done_tail = NULL;
	pthread_mutex_unlock(&d->commit_lock);
	while (q) {
		struct vd_mreq *next = q->next;

		d->measurements = q->entries;
		if (q->kind != VD_MREQ_FILE) {
			announce_done(d, q);
			mreq_free(q);
			q = next;
			continue;
		}
		if (q->err) {
			d->st.errors++;
			d->st.measure_failures++;
			vlog_err("measurement of %s failed: %s", q->path, q->msg);
		} else {
			d->st.measured++;
			if (q->recovered)
				vlog(VLOG_INFO, "measurement log %s recovered: measuring again",
					  d->log_path);
		}
		measured_result(d, q->seq, q->ev, q->gen, q->pcr, &q->key, q->lease_gen, q->err == 0);
		mreq_free(q);
		q = next;
	}
}
