// SPDX-License-Identifier: MIT
/*
 * agent_conns.c - agents' libcurl handles kept between rounds, by peer
 * (agent_conns.h): a hash table of the idle ones and a list from the most
 * to the least recently used.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sys/random.h>

#include "agent_conns.h"

struct vf_conns {
	pthread_mutex_t lock;
	unsigned int cap, n;
	unsigned int idle_ms;
	uint64_t seed;
	uint64_t full;			/* handles not kept: cap reached */
	size_t mask;			/* buckets - 1, a power of two less one */
	struct vf_conn **b;
	struct vf_conn *head, *tail;	/* most recently given first */
};

/* FNV-1a over the peer, from a random start: the table's order is nobody's to choose */
static size_t bucket(const struct vf_conns *p, const char *peer, size_t len)
{
	uint64_t h = 14695981039346656037ull ^ p->seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)peer[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29)) & p->mask;
}

int vf_conns_new(unsigned int cap, unsigned int idle_ms, struct vf_conns **ret)
{
	struct vf_conns *p;
	size_t nb = 64;

	*ret = NULL;
	if (!cap)
		return -EINVAL;
	while (nb < cap / 2)
		nb *= 2;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->b = calloc(nb, sizeof(*p->b)))) {
		free(p);
		return -ENOMEM;
	}
	if (getrandom(&p->seed, sizeof(p->seed), GRND_NONBLOCK) != (ssize_t)sizeof(p->seed))
		p->seed = (uint64_t)(uintptr_t)p;
	p->cap = cap;
	p->idle_ms = idle_ms;
	p->mask = nb - 1;
	pthread_mutex_init(&p->lock, NULL);
	*ret = p;
	return 0;
}

void vf_conn_close(struct vf_conn *e)
{
	if (!e)
		return;
	curl_easy_cleanup(e->c);
	free(e);
}

void vf_conns_free(struct vf_conns *p)
{
	struct vf_conn *e, *next;

	if (!p)
		return;
	for (e = p->head; e; e = next) {
		next = e->next;
		vf_conn_close(e);
	}
	pthread_mutex_destroy(&p->lock);
	free(p->b);
	free(p);
}

/* Under the lock: @e out of its bucket and the list. */
static void unlink_conn(struct vf_conns *p, struct vf_conn *e)
{
	struct vf_conn **pp = &p->b[bucket(p, e->peer, e->len)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	if (e->prev)
		e->prev->next = e->next;
	else
		p->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		p->tail = e->prev;
	e->hnext = e->prev = e->next = NULL;
	p->n--;
}

bool vf_conn_is(const struct vf_conn *e, const char *peer, size_t len)
{
	return e && e->len == len && memcmp(e->peer, peer, len) == 0;
}

/* Under the lock: the kept handle of @peer, NULL: none. */
static struct vf_conn *find(const struct vf_conns *p, const char *peer, size_t len)
{
	struct vf_conn *e = p->b[bucket(p, peer, len)];

	while (e && !vf_conn_is(e, peer, len))
		e = e->hnext;
	return e;
}

struct vf_conn *vf_conns_take(struct vf_conns *p, const char *peer, size_t len)
{
	struct vf_conn *e;

	pthread_mutex_lock(&p->lock);
	e = find(p, peer, len);
	if (e)
		unlink_conn(p, e);
	pthread_mutex_unlock(&p->lock);
	return e;
}

struct vf_conn *vf_conn_new(const char *peer, size_t len)
{
	struct vf_conn *e = calloc(1, sizeof(*e) + len + 1);

	if (!e)
		return NULL;
	e->c = curl_easy_init();
	if (!e->c) {
		free(e);
		return NULL;
	}
	memcpy(e->peer, peer, len);
	e->len = len;
	return e;
}

bool vf_conns_give(struct vf_conns *p, struct vf_conn *e, int64_t now_ms)
{
	struct vf_conn *gone = NULL, *o, **pp;
	bool kept = true;

	pthread_mutex_lock(&p->lock);
	/* at most two idle too long, the least recently used first: room */
	for (int i = 0; i < 2 && p->tail && now_ms - p->tail->used_ms >= (int64_t)p->idle_ms; i++) {
		o = p->tail;
		unlink_conn(p, o);
		o->next = gone;
		gone = o;
	}
	if (find(p, e->peer, e->len)) {
		/* its peer's other handle came back first: one is enough */
		e->next = gone;
		gone = e;
	} else if (p->n >= p->cap) {
		p->full++;
		kept = false;
	} else {
		pp = &p->b[bucket(p, e->peer, e->len)];
		e->used_ms = now_ms;
		e->hnext = *pp;
		*pp = e;
		e->prev = NULL;
		e->next = p->head;
		if (p->head)
			p->head->prev = e;
		else
			p->tail = e;
		p->head = e;
		p->n++;
	}
	pthread_mutex_unlock(&p->lock);
	while (gone) {
		o = gone->next;
		vf_conn_close(gone);
		gone = o;
	}
	return kept;
}

void vf_conns_count(struct vf_conns *p, unsigned int *kept, uint64_t *full)
{
	pthread_mutex_lock(&p->lock);
	*kept = p->n;
	*full = p->full;
	pthread_mutex_unlock(&p->lock);
}
