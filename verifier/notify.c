// SPDX-License-Identifier: MIT
/*
 * notify.c - the notices a verdict sends out (--webhook: a JSON POST;
 * --on-fail: the hook process runs the command), from queues of their
 * own, so that nothing outside the verifier holds it up: a caller only
 * copies its line into a bounded queue (vf_notify: a mutex held for a
 * pointer's move, never a wait), after it committed the state the notice
 * tells. Each target (sink) has its queue and one thread that sends its
 * notices in order:
 *
 *   webhook  2xx: sent. No answer (connection, --agent-timeout), 5xx,
 *            408, 429: failed, retried with a backoff (1 s, doubling, at
 *            most VF_NOTIFY_BACKOFF_MAX_MS) while the notices behind it
 *            wait; given up once it has waited VF_NOTIFY_GIVE_UP_MS.
 *            Another answer (4xx, 3xx): the endpoint refused that notice,
 *            failed and not retried.
 *   hook     run once: exit 0 sent, else failed (a command is not run
 *            twice for one notice).
 *
 * A full queue (--notify-queue) drops the new notice: counted, and said
 * (the first drop, then at most every VF_NOTIFY_SAY_MS with the count).
 * At the stop the threads end their attempt (libcurl sees vf->stop; a
 * command is waited for a grace period, then left) and what is left is
 * dropped, counted and said. The counters (queued, sent,
 * failed attempts, dropped, and what waits now) are /metrics' (metrics.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_text.h"
#include "log.h"
#include "verifier.h"
#include "privsep.h"

#define VF_NOTIFY_BACKOFF_MS 1000
#define VF_NOTIFY_BACKOFF_MAX_MS 60000
#define VF_NOTIFY_GIVE_UP_MS (3600 * 1000)
#define VF_NOTIFY_SAY_MS 10000

struct notice {
	struct notice *next;
	char id[VG_API_ID_MAX];
	struct vg_store_verdict h;
	int64_t queued_ms;		/* wall ms it was queued */
	unsigned int tries;
};

struct vf_sink {
	const char *name;		/* "webhook", "hook" */
	struct verifier *vf;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a notice queued, or the stop */
	struct notice *head, *tail;
	size_t n, max;
	bool stop;
	pthread_t thread;
	bool started, exited;
	int64_t said_ms;		/* the last drop said */
	uint64_t unsaid;		/* drops since */
	struct vf_notify_counts c;	/* under lock */
};

static const char *const sink_names[VF_SINKS] = { "webhook", "hook" };

const char *vf_notify_sink_name(unsigned int s)
{
	return s < VF_SINKS ? sink_names[s] : NULL;
}

/* The webhook's JSON notice. Return: 2 sent, 1 failed (retry), 0 refused (no retry). */
static int webhook_send(struct verifier *vf, const struct notice *n, char *why, size_t cap)
{
	json_object *o = json_object_new_object();
	struct http_answer b;
	long code;

	json_object_object_add(o, "agent", json_object_new_string(n->id));
	json_object_object_add(o, "failure", json_object_new_string(vg_attest_fail_id(n->h.fail)));
	json_object_object_add(o, "message", vg_prog_json_text(n->h.msg));
	json_object_object_add(o, "entry", json_object_new_int64(n->h.entry));
	json_object_object_add(o, "path", vg_prog_json_text(n->h.path));
	json_object_object_add(o, "digest", vg_prog_json_text(n->h.digest));
	json_object_object_add(o, "time", json_object_new_int64(n->h.time));
	code = vf->fetch(vf, vf->webhook, json_object_to_json_string(o), false, 0, &b, why, cap);
	free(b.p);
	json_object_put(o);
	if (code >= 200 && code < 300)
		return 2;
	if (code > 0)
		snprintf(why, cap, "HTTP %ld", code);
	return code < 0 || code >= 500 || code == 408 || code == 429 ? 1 : 0;
}

/* The hook process runs --on-fail. Return: 2 exit 0, 0 anything else (never run twice). */
static int hook_send(const struct notice *n, char *why, size_t cap)
{
	int st = vg_privsep_hook_run(n->id, vg_attest_fail_id(n->h.fail), n->h.msg, n->h.path);

	if (st == 0)
		return 2;
	if (st < 0)
		snprintf(why, cap, "the hook process: %s", strerror(-st));
	else
		snprintf(why, cap, "wait status %d", st);
	return 0;
}

static int64_t backoff_ms(unsigned int tries)
{
	int64_t d = VF_NOTIFY_BACKOFF_MS;

	while (--tries > 0 && d < VF_NOTIFY_BACKOFF_MAX_MS)
		d *= 2;
	return d < VF_NOTIFY_BACKOFF_MAX_MS ? d : VF_NOTIFY_BACKOFF_MAX_MS;
}

/* Under s->lock: wait for the stop, or until @ms (wall) passed. */
static void wait_until(struct vf_sink *s, int64_t ms)
{
	struct timespec ts;
	int64_t now = vf_wall_ms();

	if (ms <= now)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (ms - now) / 1000;
	ts.tv_nsec += ((ms - now) % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	(void)pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

static void *sink_thread(void *arg)
{
	struct vf_sink *s = arg;
	struct verifier *vf = s->vf;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct notice *n;
		char why[400] = "";
		int64_t next = 0;
		int r;

		while (!s->stop && !s->head)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->stop)
			break;
		n = s->head;
		pthread_mutex_unlock(&s->lock);
		/* sent outside the lock: vf_notify never waits for it */
		r = s == vf->notify[VF_SINK_WEBHOOK] ? webhook_send(vf, n, why, sizeof(why)) :
						       hook_send(n, why, sizeof(why));
		n->tries++;
		pthread_mutex_lock(&s->lock);
		if (r == 2) {
			s->c.sent++;
		} else {
			s->c.failed++;
			if (vf->stop) {
				/* cut short by the stop: left for vf_notify_stop to drop */
				while (!s->stop)
					pthread_cond_wait(&s->cond, &s->lock);
				break;
			}
			if (r == 1 && vf_wall_ms() - n->queued_ms < VF_NOTIFY_GIVE_UP_MS) {
				next = vf_wall_ms() + backoff_ms(n->tries);
				if (n->tries == 1)
					vlog_warn("%s: notice of %s %s not delivered: %s; retried (with a "
						  "backoff, up to %d s)", s->name, n->id,
						  vg_attest_fail_id(n->h.fail), why,
						  VF_NOTIFY_BACKOFF_MAX_MS / 1000);
			} else {
				s->c.dropped++;
				vlog_warn("%s: notice of %s %s given up after %u attempt(s): %s",
					  s->name, n->id, vg_attest_fail_id(n->h.fail), n->tries, why);
			}
		}
		if (next) {
			while (!s->stop && vf_wall_ms() < next)
				wait_until(s, next);
			continue;	/* the same notice again */
		}
		s->head = n->next;
		if (!s->head)
			s->tail = NULL;
		s->n--;
		free(n);
	}
	s->exited = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int vf_notify_start(struct verifier *vf, unsigned int max)
{
	const bool want[VF_SINKS] = { vf->webhook != NULL, vf->on_fail != NULL };

	for (unsigned int i = 0; i < VF_SINKS; i++) {
		struct vf_sink *s;

		if (!want[i])
			continue;
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->name = sink_names[i];
		s->vf = vf;
		s->max = max ? max : VF_NOTIFY_QUEUE_DEFAULT;
		pthread_mutex_init(&s->lock, NULL);
		pthread_cond_init(&s->cond, NULL);
		vf->notify[i] = s;
		if (pthread_create(&s->thread, NULL, sink_thread, s) != 0)
			return -EAGAIN;
		s->started = true;
	}
	return 0;
}

void vf_notify(struct verifier *vf, const char *id, const struct vg_store_verdict *h)
{
	if (h->fail == VG_AF_REBOOT)
		return;
	for (unsigned int i = 0; i < VF_SINKS; i++) {
		struct vf_sink *s = vf->notify[i];
		struct notice *n;
		bool full;
		int64_t now;

		if (!s)
			continue;
		n = malloc(sizeof(*n));
		pthread_mutex_lock(&s->lock);
		full = !n || s->n >= s->max || s->stop;
		now = vf_wall_ms();
		if (full) {
			s->c.dropped++;
			s->unsaid++;
			if (now - s->said_ms >= VF_NOTIFY_SAY_MS || now < s->said_ms) {
				vlog_warn("%s: queue full (%zu notices, --notify-queue): %llu notice(s) "
					  "dropped, the last of %s %s", s->name, s->n,
					  (unsigned long long)s->unsaid, id, vg_attest_fail_id(h->fail));
				s->said_ms = now;
				s->unsaid = 0;
			}
			pthread_mutex_unlock(&s->lock);
			free(n);
			continue;
		}
		*n = (struct notice){ .queued_ms = now, .h = *h };
		snprintf(n->id, sizeof(n->id), "%s", id);
		if (s->tail)
			s->tail->next = n;
		else
			s->head = n;
		s->tail = n;
		s->n++;
		s->c.queued++;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
}

void vf_notify_counts(struct verifier *vf, unsigned int sink, struct vf_notify_counts *c)
{
	struct vf_sink *s = sink < VF_SINKS ? vf->notify[sink] : NULL;

	memset(c, 0, sizeof(*c));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*c = s->c;
	c->pending = s->n;
	pthread_mutex_unlock(&s->lock);
}

void vf_notify_stop(struct verifier *vf, unsigned int grace_ms)
{
	for (unsigned int i = 0; i < VF_SINKS; i++) {
		struct vf_sink *s = vf->notify[i];
		int64_t until = vf_wall_ms() + grace_ms;
		size_t left;

		if (!s)
			continue;
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_broadcast(&s->cond);
		/* a webhook's exchange ends at once (vf->stop); a command runs as long as it runs */
		while (s->started && !s->exited && vf_wall_ms() < until)
			wait_until(s, until);
		if (s->started && !s->exited) {
			vlog_warn("%s: still running at the stop: not waited for", s->name);
			pthread_detach(s->thread);
			pthread_mutex_unlock(&s->lock);
			vf->notify[i] = NULL;	/* left to the exit */
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		if (s->started)
			pthread_join(s->thread, NULL);
		left = s->n;
		s->c.dropped += left;
		while (s->head) {
			struct notice *n = s->head->next;

			free(s->head);
			s->head = n;
		}
		if (left)
			vlog_warn("%s: %zu notice(s) not sent at the stop", s->name, left);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
		vf->notify[i] = NULL;
	}
}
