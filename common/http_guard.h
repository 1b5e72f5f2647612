/* SPDX-License-Identifier: MIT */
/*
 * http_guard.h - limits libmicrohttpd does not have, for vigil-verifier and
 * vigil-agent: a whole-request deadline (MHD's own timeout is per idle
 * period, so a client sending a byte a second would hold a connection for
 * ever) and an early 413 from Content-Length.
 *
 * Every connection is armed with a deadline when it is accepted (its first
 * request must arrive whole within the timeout); after each answer it is
 * idle and armed with the idle deadline (http_guard_set_idle; the same
 * timeout unless set), and when its next request line is in
 * (http_guard_request) the request has the timeout from then. The handler
 * disarms it when the request is complete (http_guard_busy), before any
 * slow work. A reaper thread shuts down (shutdown(2), not close: the fd
 * stays MHD's) every connection past its deadline; MHD then sees the end
 * of the stream and frees it. The daemon's MHD_OPTION_CONNECTION_TIMEOUT
 * must be the idle timeout (http_guard_idle_s): the guard gives a
 * connection the request timeout as its own while it is in a request
 * (MHD walks such connections on every event: only a few are), and the
 * daemon's back after the answer.
 */
#ifndef VIGIL_HTTP_GUARD_H
#define VIGIL_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

struct http_guard;

/* Return: 0, -ENOMEM, -errno of pthread_create. @timeout_s >= 1. */
int http_guard_start(unsigned int timeout_s, struct http_guard **ret);
/*
 * An idle kept-alive connection (between an answer and the next request
 * line) is closed after @idle_s >= 1 seconds instead of the request
 * timeout. Before the daemon starts.
 */
void http_guard_set_idle(struct http_guard *g, unsigned int idle_s);
/* The idle timeout, in seconds (the request timeout unless set): MHD_OPTION_CONNECTION_TIMEOUT's. */
unsigned int http_guard_idle_s(const struct http_guard *g);
/* Stop the reaper (after MHD_stop_daemon). NULL-safe. */
void http_guard_stop(struct http_guard *g);
/* Connections shut down so far. */
uint64_t http_guard_dropped(const struct http_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION, with the guard as its closure. */
void http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);
/* The request is complete: no deadline while it is being answered. */
void http_guard_busy(struct MHD_Connection *c);
/* From MHD_OPTION_NOTIFY_COMPLETED: the connection is idle, with the idle deadline. */
void http_guard_rearm(struct MHD_Connection *c);
/* From MHD_OPTION_URI_LOG_CALLBACK: a request line is in; an idle connection's request has the timeout from now. */
void http_guard_request(struct MHD_Connection *c);

/*
 * What a daemon decides once per connection rather than per request: the
 * role of the client certificate its TLS handshake verified (checked
 * against the daemon's CAs: several chain verifications). @cert is the
 * SHA-256 of that certificate (http_client_cert_hash), so a connection
 * whose peer certificate changed is decided again. Its fields are the
 * caller's; only the thread serving the connection touches it.
 */
struct http_conn_memo {
	bool set;
	uint8_t cert[32];
	int role;
	char text[256];
};

/* Return: @c's memo, NULL for a connection the guard does not track (no memory at accept). */
struct http_conn_memo *http_guard_memo(struct MHD_Connection *c);

/*
 * http_guard_body_too_big - the request's Content-Length (if any) is
 * larger than @max, or malformed. Return: true (answer 413 now, before
 * reading the body).
 */
bool http_guard_body_too_big(struct MHD_Connection *c, size_t max);

#endif
