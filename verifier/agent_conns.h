/* SPDX-License-Identifier: MIT */
/*
 * agent_conns.h - each agent's libcurl handle, and so its connection,
 * kept between rounds (agent_conns.c): an agent attested every interval
 * over TLS costs a full handshake per round otherwise.
 *
 * A handle belongs to one peer, an agent's URL up to "/v1/", for its whole
 * life: it only ever asks that peer (libcurl keeps at most one connection
 * in it, CURLOPT_MAXCONNECTS 1), so no connection carries two agents'
 * requests, and a byte an agent sends past its answer is read, if at all,
 * as its own next answer. A handle is taken out for an exchange and given
 * back after; two exchanges with one peer at once get two handles, and
 * one of them is closed when both are back.
 *
 * Bounded: at most @cap handles are kept. When they are, a handle given
 * back is not kept (the caller may hold it a while, as a thread's spare):
 * the agents kept stay kept, so a fleet larger than @cap has @cap of its
 * agents' rounds without a new connection, where closing the least
 * recently used would make every round of a cyclic schedule connect. One
 * left unused for @idle_ms (the agent was deleted, or moved to another
 * verifier) is closed by a later give, which makes room.
 * Thread-safe (a mutex, never held over a libcurl call).
 */
#ifndef VIGIL_VERIFIER_AGENT_CONNS_H
#define VIGIL_VERIFIER_AGENT_CONNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

struct vf_conns;

/* A handle taken out: ->c is the caller's until vf_conns_give. */
struct vf_conn {
	CURL *c;
	/* the rest is agent_conns.c's */
	struct vf_conn *hnext, *prev, *next;
	int64_t used_ms;
	size_t len;
	char peer[];
};

/* Return: 0, -ENOMEM, -EINVAL (@cap 0). */
int vf_conns_new(unsigned int cap, unsigned int idle_ms, struct vf_conns **ret);
/* Every kept handle closed. NULL is nothing. */
void vf_conns_free(struct vf_conns *p);

/*
 * The kept handle of peer @peer (@len bytes, not NUL-terminated), out of
 * the pool. Its options are as the last exchange left them: the caller
 * resets them (curl_easy_reset keeps the connection).
 * Return: the handle, NULL: none kept.
 */
struct vf_conn *vf_conns_take(struct vf_conns *p, const char *peer, size_t len);
/* Return: a new handle of peer @peer (curl_easy_init), NULL on no memory. */
struct vf_conn *vf_conn_new(const char *peer, size_t len);
/* Return: @e is peer @peer's. */
bool vf_conn_is(const struct vf_conn *e, const char *peer, size_t len);
/*
 * @e back, used at @now_ms (a monotonic clock): kept, or closed when
 * another handle of its peer already is. Handles idle too long are closed,
 * outside the lock.
 * Return: true (kept or closed), false: @cap handles are kept, @e is the
 * caller's still (to hold, or to close with vf_conn_close).
 */
bool vf_conns_give(struct vf_conns *p, struct vf_conn *e, int64_t now_ms);
/* A handle closed (curl_easy_cleanup) and freed. NULL is nothing. */
void vf_conn_close(struct vf_conn *e);

/* Handles kept now (idle), and handles not kept since the start: @cap reached. */
void vf_conns_count(struct vf_conns *p, unsigned int *kept, uint64_t *full);

#endif
