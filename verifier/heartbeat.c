// SPDX-License-Identifier: MIT
/*
 * heartbeat.c - each verifier's row in the store's verifiers table, written
 * every VF_BEAT_MS from the scheduler's loop (its id, host, pid, start,
 * rounds running and run, agents late: `vigil attest status --verifiers`),
 * and from the rows of all, whether this one is the one alive with the
 * smallest id, which reports late agents (scheduler.c), and how many are
 * alive (each one's share of the rounds). The rows are read before ours
 * is written: our row as another process wrote it since our last beat is a
 * second verifier under our id, and the younger of the two stops.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "verifier.h"

struct leader_arg {
	const char *me;
	int64_t now;
	bool first;			/* no verifier alive sorts before us */
	struct vg_store_verifier own;	/* our id's row as read, beat 0 when there is none */
	unsigned int alive;		/* the others alive */
};

static int leader_cb(void *arg, const struct vg_store_verifier *v)
{
	struct leader_arg *la = arg;

	if (strcmp(v->id, la->me) == 0) {
		la->own = *v;
	} else if (v->beat > la->now - VF_BEAT_ALIVE_MS) {
		la->alive++;
		if (strcmp(v->id, la->me) < 0)
			la->first = false;
	}
	return 0;
}

/* The rows, @la's counts and our id's row from them. Return: 0, -EIO with @diag. */
static int read_rows(struct verifier *vf, struct leader_arg *la, struct vg_diag *diag)
{
	la->first = true;
	la->own.beat = 0;
	la->alive = 0;
	/* store round trip (store_client.c), the rows streamed back */
	return vg_store_verifier_list(vf->store, leader_cb, la, diag) < 0 ? -EIO : 0;
}

/*
 * @o, our id's row read after a beat of ours (@v), written by another
 * process. Return: true if that process is the elder (started first; at
 * the same ms, the smaller host and pid) and we stop, false if we go on
 * and it stops when it reads our row. Said either way.
 */
static bool yield_id(struct verifier *vf, const struct vg_store_verifier *v,
		     const struct vg_store_verifier *o)
{
	int c = strcmp(o->host, v->host);
	bool elder = o->started != v->started ? o->started < v->started :
		     c ? c < 0 : o->pid < v->pid;

	if (elder) {
		vlog_err("--verifier-id %s: another verifier beats under this id (host %s, pid %"
			 PRId64 ", started %" PRId64 " ms before us): stopping; each verifier "
			 "sharing the store needs its own", vf->id, o->host, o->pid,
			 v->started - o->started);
		return true;
	}
	if (o->pid != vf->dup_pid) {	/* once per intruder */
		vf->dup_pid = o->pid;
		vlog_warn("--verifier-id %s: another verifier beats under this id (host %s, pid %"
			  PRId64 ", started %" PRId64 " ms after us): it stops, we go on", vf->id,
			  o->host, o->pid, o->started - v->started);
	}
	return false;
}

void vf_heartbeat(struct verifier *vf)
{
	struct vg_store_verifier v = { 0 };
	struct leader_arg la = { .me = vf->id, .now = vf_wall_ms() };
	struct vg_diag d = { 0 };
	int r;

	snprintf(v.id, sizeof(v.id), "%s", vf->id);
	snprintf(v.host, sizeof(v.host), "%s", vf->host);
	v.pid = getpid();
	v.started = vf->started_ms;
	v.beat = la.now;
	v.max_rounds = vf->max_rounds;
	pthread_mutex_lock(&vf->sched.lock);
	v.running = vf->sched.running;
	v.rounds = (int64_t)vf->sched.rounds;
	v.late = vf->sched.late;
	pthread_mutex_unlock(&vf->sched.lock);
	pthread_mutex_lock(&vf->lock);
	r = read_rows(vf, &la, &d);
	if (r == 0 && vf->beaten && la.own.beat &&
	    (la.own.pid != v.pid || la.own.started != v.started || strcmp(la.own.host, v.host)) &&
	    yield_id(vf, &v, &la.own)) {
		pthread_mutex_unlock(&vf->lock);
		vf->exit_code = 2;
		vf->stop = 1;
		return;
	}
	if (r == 0)
		/* store round trip (store_client.c) */
		r = vg_store_verifier_beat(vf->store, &v, &d);
	vf->beaten = vf->beaten || r == 0;
	vf_store_status(vf, r < 0 ? d.msg : NULL);
	pthread_mutex_unlock(&vf->lock);
	/* a store that does not answer: we report, rather twice than never */
	pthread_mutex_lock(&vf->sched.lock);
	vf->sched.leader = r < 0 || la.first;
	if (r == 0)
		vf->sched.peers = 1 + la.alive;
	pthread_mutex_unlock(&vf->sched.lock);
}

int vf_heartbeat_unique(struct verifier *vf, struct vg_diag *diag)
{
	struct leader_arg la = { .me = vf->id, .now = vf_wall_ms() };
	const struct timespec poll = { 0, 250 * 1000000L };
	int64_t first, age, until;

	if (read_rows(vf, &la, diag) < 0)
		return -EIO;
	if (!la.own.beat)
		return 0;
	/*
	 * a beat under our id that goes on is a verifier running; one that
	 * stays is a predecessor's. Watched until it is as old as a beat of a
	 * verifier counted dead (VF_BEAT_ALIVE_MS), not for one period only: a
	 * loaded verifier beats late, and is still the one running. A beat
	 * ahead of our clock (another host's) is watched VF_BEAT_ALIVE_MS at most
	 */
	first = la.own.beat;
	age = vf_wall_ms() - first;
	until = vf_mono_ms() + (age < 0 ? VF_BEAT_ALIVE_MS : VF_BEAT_ALIVE_MS - age);
	while (vf_mono_ms() < until) {
		struct timespec ts = poll;

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		if (read_rows(vf, &la, diag) < 0)
			return -EIO;
		if (la.own.beat != first)
			return vg_diag_set(diag, -EEXIST, "--verifier-id %s: a verifier running beats "
					   "under this id (host %s, pid %" PRId64 ", its last beat %"
					   PRId64 " ms ago): each verifier sharing the store needs its "
					   "own", vf->id, la.own.host, la.own.pid, vf_wall_ms() - la.own.beat);
	}
	vlog_info("--verifier-id %s: the last heartbeat under this id (host %s, pid %" PRId64
		  ") stopped %" PRId64 " ms ago: a predecessor's; its leases are given back",
		  vf->id, la.own.host, la.own.pid, vf_wall_ms() - first);
	return 0;
}
