// SPDX-License-Identifier: MIT
/*
 * control.c - the monitor's control socket (`vigil status`): a unix
 * stream socket, mode 0600, one request and one answer per connection,
 * encoded and decoded by common/vigild_ctl.c. Mode changes and reloads
 * are started here; what a reload does is reload.c's, which also answers
 * the reload's clients once it has a result; an announcement of the next
 * boot is announce.c's, answered by the list's writer (commit.c). A
 * request is read within VD_CTL_READ_MS in all, however slowly it comes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "appraisers.h"
#include "journal.h"
#include "monitor.h"
#include "setup.h"
#include "vigild_ctl.h"

json_object *vd_control_status(struct vd *d)
{
	json_object *o;
	struct vd_ctl_status s = {
		.policy_rules = (int64_t)vg_policy_count(d->policy),
		.nmarks = d->nmarks < VD_CTL_MAX_MARKS ? d->nmarks : VD_CTL_MAX_MARKS,
		.pending = (int)d->npending,
		.measurements = (int64_t)d->measurements,
		.nreasons = d->st.nreasons,
		.p50_us = vd_stats_percentile(&d->st, 0.5),
		.p99_us = vd_stats_percentile(&d->st, 0.99),
	};
	uint64_t *c = s.counters;

	snprintf(s.mode, sizeof(s.mode), "%s", vd_ctl_mode_names[d->mode]);
	memcpy(s.policy_sha256, d->policy_digest, sizeof(s.policy_sha256));
	for (size_t i = 0; i < s.nmarks; i++)
		s.marks[i] = d->marks[i].point;
	c[VD_CTL_EVENTS] = d->st.events;
	c[VD_CTL_ALLOWED] = d->st.allowed;
	c[VD_CTL_DENIED] = d->st.denied;
	c[VD_CTL_WOULD_DENY] = d->st.would_deny;
	c[VD_CTL_OWN] = d->st.own;
	c[VD_CTL_CACHE_HITS] = d->st.cache_hits;
	c[VD_CTL_CACHE_MISSES] = d->st.cache_misses;
	c[VD_CTL_HASHED_BYTES] = d->st.hashed_bytes;
	c[VD_CTL_TIMEOUTS] = d->st.timeouts;
	c[VD_CTL_WORKER_RESTARTS] = d->st.worker_restarts;
	c[VD_CTL_OVERFLOWS] = d->st.overflows;
	c[VD_CTL_MEASURED] = d->st.measured;
	c[VD_CTL_FIXED] = d->st.fixed;
	c[VD_CTL_ERRORS] = d->st.errors;
	c[VD_CTL_IGNORE_MARKS] = d->st.ignore_marks;
	c[VD_CTL_IGNORE_FLUSHES] = d->st.ignore_flushes;
	c[VD_CTL_MEASURE_FAILURES] = d->st.measure_failures;
	c[VD_CTL_LEASE_BREAKS] = d->st.lease_breaks;
	c[VD_CTL_LEASE_WRITERS] = d->st.lease_writers;
	c[VD_CTL_LEASE_ERRORS] = d->st.lease_errors;
	c[VD_CTL_TOO_LARGE] = d->st.too_large;
	c[VD_CTL_APPRAISER_KILLS] = d->st.appraiser_kills;
	c[VD_CTL_WORKER_SPAWNS] = d->st.worker_spawns;
	c[VD_CTL_APPRAISERS] = d->nworkers;
	c[VD_CTL_LEASES] = d->nleases;
	c[VD_CTL_TRUSTED_ARCHIVE] = d->st.trusted_archive;
	c[VD_CTL_TRUST_FILES] = d->trust ? vg_trust_index_count(d->trust->idx) : 0;
	c[VD_CTL_APPRAISER_ANSWERS] = d->st.appraiser_answers;
	c[VD_CTL_APPRAISALS] = d->st.appraisals;
	c[VD_CTL_OPEN_ERRORS] = d->st.open_errors;
	c[VD_CTL_JOURNAL_SENT] = vjournal_sent();
	c[VD_CTL_JOURNAL_DROPPED] = vjournal_dropped();
	c[VD_CTL_RAN_BEFORE_READY] = atomic_load(&d->before_procs);
	c[VD_CTL_RAN_BEFORE_READY_FAILED] = d->st.before_failed;
	s.trust_db = d->trust ? vd_trust_db_path(d) : NULL;
	for (unsigned int i = 0; i < d->st.nreasons; i++) {
		memcpy(s.reasons[i].reason, d->st.reasons[i].reason, sizeof(s.reasons[i].reason));
		s.reasons[i].n = d->st.reasons[i].n;
	}
	vd_stats_fill_latency(&d->st, &s);
	o = vd_ctl_status_encode(&s, vd_policy_unenforced_json(d->policy));
	if (o) {
		json_object *w = json_object_new_array();

		for (size_t i = 0; i < d->nmarks; i++) {
			const struct vd_mark *m = &d->marks[i];
			json_object *x = json_object_new_object();
			int st = m->side ? atomic_load(&m->side->state) : VD_SIDE_MARKED;

			json_object_object_add(x, "path", json_object_new_string(m->point));
			json_object_object_add(x, "fstype", json_object_new_string(m->fstype));
			json_object_object_add(x, "class", json_object_new_string(vd_fsclass_name(m->cls)));
			json_object_object_add(x, "reader", json_object_new_string(m->side ? "own" : "main"));
			json_object_object_add(x, "marked", json_object_new_boolean(st == VD_SIDE_MARKED));
			json_object_array_add(w, x);
		}
		json_object_object_add(o, "watched", w);
		json_object_object_add(o, "watch_mounts",
				       d->watch_mounts ? json_object_new_string(d->watch_mounts) : NULL);
		json_object_object_add(o, "mount_events", json_object_new_string(
			d->mnt_events ? "fanotify" : "mountinfo"));
		json_object_object_add(o, "gaps", vd_gaps_json(d));
	}
	return o;
}

#define VD_CTL_READ_MS 200

/* One request line into @buf (@cap), within VD_CTL_READ_MS. Return: its length (0: none). */
static size_t read_request(int c, char *buf, size_t cap)
{
	double until = vd_now() + VD_CTL_READ_MS / 1000.0;
	size_t n = 0;

	while (n < cap - 1) {
		struct pollfd p = { .fd = c, .events = POLLIN };
		int left = (int)((until - vd_now()) * 1000.0);
		ssize_t k;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		k = read(c, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(buf + n - (size_t)k, '\n', (size_t)k))
			break;
	}
	buf[n] = 0;
	return n;
}

/* The answer to @req from @who on @c, or NULL: @c is kept, to be answered later. */
static json_object *answer(struct vd *d, int c, const char *req, struct vd_ctl_req *q,
			   const struct ucred *who)
{
	int r;

	/* root's requests: refused before a byte more of them is looked at */
	if (vd_ctl_req_privileged(req) && who->uid != 0)
		return vd_announce(d, c, NULL, who->uid, who->pid);
	r = vd_ctl_req_decode(req, q);
	if (r == -EINVAL)
		return vd_ctl_error_encode("unknown mode");
	if (r == -EPROTO) {
		vlog(VLOG_WARNING, "announcement from pid %d refused: not well formed",
			  (int)who->pid);
		return vd_ctl_announce_result_encode("announcement not well formed", false, 0);
	}
	if (r < 0)
		return vd_ctl_error_encode("unknown request");
	if (q->op == VD_CTL_STATUS)
		return vd_control_status(d);
	if (q->op == VD_CTL_ANNOUNCE)	/* NULL: answered by the list's writer, once committed */
		return vd_announce(d, c, &q->ann, who->uid, who->pid);
	if (q->op == VD_CTL_MODE) {
		bool restart = (q->mode == VD_CTL_FIX) != (d->mode == MODE_FIX);

		d->mode = (enum mode)q->mode;
		vd_cache_clear(d);
		vd_fan_flush(d);
		vlog(VLOG_INFO, "mode %s", vd_ctl_mode_names[q->mode]);
		if (restart)	/* fix mode changes what the appraisers may do */
			for (unsigned int w = 0; w < d->nworkers; w++)
				vd_pool_died(d, (int)w, "restarted for the new mode", false);
		return vd_ctl_mode_encode(q->mode);
	}
	if (d->nreload_waiters == VD_RELOAD_WAITERS)
		return vd_ctl_error_encode("too many reloads waiting");
	/* answered with the result, when the reload thread is done (reload.c) */
	vd_reload_start(d);
	if (d->reloading) {
		d->reload_waiters[d->nreload_waiters++] = c;
		return NULL;
	}
	return vd_ctl_error_encode("cannot start a reload thread");
}

void vd_control(struct vd *d)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	struct ucred who = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t wl = sizeof(who);
	struct vd_ctl_req *q;
	char *req;
	json_object *o = NULL;
	int c = accept4(d->ctl, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* who connected, as the kernel says; a peer it cannot name is refused what is root's */
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &who, &wl) < 0 || wl != sizeof(who))
		who.uid = (uid_t)-1;
	req = malloc(VD_CTL_REQ_MAX + 1);
	q = malloc(sizeof(*q));
	if (req && q && read_request(c, req, VD_CTL_REQ_MAX + 1)) {
		o = answer(d, c, req, q, &who);
		if (!o) {
			free(req);
			free(q);
			return;
		}
		(void)vd_ctl_answer_write(c, o);
		json_object_put(o);
	}
	free(req);
	free(q);
	close(c);
}

int vd_control_setup(struct vd *d)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *path = d->control_path;

	if (strlen(path) >= sizeof(a.sun_path)) {
		vlog_err("control socket path too long: %s", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	d->ctl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->ctl < 0)
		return -1;
	/* under our lock (startup.c): what is there is a dead vigild's socket, or not a socket */
	if (vd_control_stale(path) < 0)
		return -1;
	if (bind(d->ctl, (struct sockaddr *)&a, sizeof(a)) < 0) {
		vlog_err("control socket %s: %s", path, strerror(errno));
		return -1;
	}
	d->ctl_bound = true;
	if (chmod(path, 0600) < 0 || listen(d->ctl, 8) < 0) {
		vlog_err("control socket %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
