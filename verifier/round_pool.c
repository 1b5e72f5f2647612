// SPDX-License-Identifier: MIT
/*
 * round_pool.c - the threads rounds run on: at most --max-rounds of
 * them, made when there is work and no idle thread, kept afterwards
 * (idle, on a condition variable) until the verifier stops. A round
 * used to start a thread of its own and end it: clone3, a new stack
 * faulted in, then madvise'd and unmapped at its exit with TLB
 * shootdowns, ~15% of the verifier's CPU at 1,000 agents (docs/fleet.md).
 *
 * A task is a function and its argument; the pool runs them in the
 * order given, one per thread at a time. It knows nothing of agents or
 * rounds: the scheduler (scheduler.c) decides what a task is and keeps
 * the number outstanding within --max-rounds itself, so a task never
 * waits for a thread that another, waiting, task would have to free.
 * A thread keeps its libcurl handle (agent_client.c: its connections,
 * kept alive) from one round to the next, and frees it before it ends.
 */
#include <errno.h>
#include <stdlib.h>

#include "verifier.h"

struct vf_task {
	struct vf_task *next;
	void (*fn)(void *arg);
	void *arg;
};

int vf_pool_init(struct vf_pool *p, unsigned int max)
{
	int r;

	*p = (struct vf_pool){ .max = max ? max : 1 };
	r = pthread_mutex_init(&p->lock, NULL);
	if (!r && (r = pthread_cond_init(&p->work, NULL)) != 0)
		pthread_mutex_destroy(&p->lock);
	if (!r && (r = pthread_cond_init(&p->gone, NULL)) != 0) {
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->lock);
	}
	p->ready = !r;
	return -r;
}

static void *pool_thread(void *arg)
{
	struct vf_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct vf_task *t;

		while (!p->head && !p->stop) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
		}
		if (!p->head) {
			pthread_mutex_unlock(&p->lock);
			vf_client_thread_end();	/* its libcurl handle, before the stop goes on */
			pthread_mutex_lock(&p->lock);
			break;		/* stopping, nothing left to run */
		}
		t = p->head;
		p->head = t->next;
		if (!p->head)
			p->tail = NULL;
		p->queued--;
		pthread_mutex_unlock(&p->lock);
		t->fn(t->arg);
		free(t);
		pthread_mutex_lock(&p->lock);
		p->tasks++;
	}
	p->threads--;
	pthread_cond_broadcast(&p->gone);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int vf_pool_run(struct vf_pool *p, void (*fn)(void *arg), void *arg)
{
	struct vf_task *t = malloc(sizeof(*t));
	int r = 0;

	if (!t)
		return -ENOMEM;
	*t = (struct vf_task){ .fn = fn, .arg = arg };
	pthread_mutex_lock(&p->lock);
	if (p->stop) {
		pthread_mutex_unlock(&p->lock);
		free(t);
		return -ESHUTDOWN;
	}
	if (p->queued + 1 > p->idle && p->threads < p->max) {
		pthread_attr_t at;
		pthread_t th;

		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&th, &at, pool_thread, p);
		pthread_attr_destroy(&at);
		if (r == 0) {
			p->threads++;
			p->made++;
		} else if (p->threads > 0) {
			r = 0;		/* no new thread: one of those there takes it in turn */
		}
	}
	if (r) {
		pthread_mutex_unlock(&p->lock);
		free(t);
		return -r;
	}
	if (p->tail)
		p->tail->next = t;
	else
		p->head = t;
	p->tail = t;
	p->queued++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void vf_pool_counts(struct vf_pool *p, unsigned int *threads, uint64_t *made)
{
	pthread_mutex_lock(&p->lock);
	*threads = p->threads;
	*made = p->made;
	pthread_mutex_unlock(&p->lock);
}

bool vf_pool_stop(struct vf_pool *p, unsigned int wait_ms)
{
	struct timespec until;
	bool done;

	if (!p->ready)
		return true;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	while (p->threads && pthread_cond_timedwait(&p->gone, &p->lock, &until) == 0)
		;
	done = p->threads == 0;
	pthread_mutex_unlock(&p->lock);
	return done;
}
