// SPDX-License-Identifier: MIT
/*
 * http_guard.c - whole-request deadlines and early body-size refusal for
 * libmicrohttpd daemons (http_guard.h). One mutex guards the list of
 * connections; MHD calls the CLOSED notification before it closes a
 * socket, so every fd in the list is still the connection's own when the
 * reaper shuts it down.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "http_guard.h"

struct conn {
	struct conn *prev, *next;
	struct http_guard *g;
	int fd;
	bool armed;
	int64_t deadline;		/* CLOCK_MONOTONIC ms */
	struct http_conn_memo memo;	/* http_guard_memo: the serving thread's */
};

struct http_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t reaper;
	struct conn *head;
	int64_t timeout_ms;
	int64_t idle_ms;		/* http_guard_idle: a kept connection's wait for its next request */
	uint64_t dropped;
	bool stop;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void *reap(void *arg)
{
	struct http_guard *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		struct timespec t;
		int64_t now = now_ms();

		for (struct conn *c = g->head; c; c = c->next)
			if (c->armed && now >= c->deadline) {
				shutdown(c->fd, SHUT_RDWR);
				c->armed = false;
				g->dropped++;
			}
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 200 * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &t);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int http_guard_start(unsigned int timeout_s, struct http_guard **ret)
{
	struct http_guard *g = calloc(1, sizeof(*g));
	int r;

	if (!g)
		return -ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	g->timeout_ms = (int64_t)(timeout_s ? timeout_s : 1) * 1000;
	r = pthread_create(&g->reaper, NULL, reap, g);
	if (r) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		free(g);
		return -r;
	}
	*ret = g;
	return 0;
}

void http_guard_stop(struct http_guard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->reaper, NULL);
	while (g->head) {
		struct conn *c = g->head;

		g->head = c->next;
		free(c);
	}
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

uint64_t http_guard_dropped(const struct http_guard *g)
{
	return g ? g->dropped : 0;
}

void http_guard_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct http_guard *g = cls;
	struct conn *c;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);

		*socket_context = NULL;
		c = ci ? calloc(1, sizeof(*c)) : NULL;
		if (!c)
			return;		/* unguarded: MHD's idle timeout still applies */
		c->g = g;
		c->fd = ci->connect_fd;
		pthread_mutex_lock(&g->lock);
		c->armed = true;
		c->deadline = now_ms() + g->timeout_ms;
		c->next = g->head;
		if (g->head)
			g->head->prev = c;
		g->head = c;
		pthread_mutex_unlock(&g->lock);
		*socket_context = c;
		return;
	}
	c = *socket_context;
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&g->lock);
	free(c);
	*socket_context = NULL;
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void http_guard_busy(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&c->g->lock);
	c->armed = false;
	pthread_mutex_unlock(&c->g->lock);
}

struct http_conn_memo *http_guard_memo(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	return c ? &c->memo : NULL;
}

void http_guard_rearm(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&c->g->lock);
	c->armed = true;
	c->deadline = now_ms() + c->g->idle_ms + c->g->timeout_ms;
	pthread_mutex_unlock(&c->g->lock);
}

void http_guard_idle(struct http_guard *g, unsigned int idle_s)
{
	pthread_mutex_lock(&g->lock);
	g->idle_ms = (int64_t)idle_s * 1000;
	pthread_mutex_unlock(&g->lock);
}

void http_guard_begun(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);
	int64_t d;

	if (!c)
		return;
	pthread_mutex_lock(&c->g->lock);
	d = now_ms() + c->g->timeout_ms;
	if (c->armed && d < c->deadline)
		c->deadline = d;
	pthread_mutex_unlock(&c->g->lock);
}

bool http_guard_body_too_big(struct MHD_Connection *mc, size_t max)
{
	const char *cl = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	uint64_t v = 0;

	if (!cl)
		return false;
	if (!*cl)
		return true;
	for (const char *p = cl; *p; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
			return true;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return v > max;
}
