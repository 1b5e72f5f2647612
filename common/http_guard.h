/* SPDX-License-Identifier: MIT */
/*
 * http_guard.h - limits libmicrohttpd does not have, for vigil-verifier and
 * vigil-agent: a whole-request deadline (MHD's own timeout is per idle
 * period, so a client sending a byte a second would hold a connection for
 * ever) and an early 413 from Content-Length.
 *
 * Every connection is armed with a deadline when it is accepted and again
 * after each answer (then with an idle allowance, if the daemon keeps
 * connections open between requests); the handler disarms it when the request is complete
 * (http_guard_busy), before any slow work. A reaper thread shuts down
 * (shutdown(2), not close: the fd stays MHD's) every connection past its
 * deadline; MHD then sees the end of the stream and frees it.
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
/* Stop the reaper (after MHD_stop_daemon). NULL-safe. */
void http_guard_stop(struct http_guard *g);
/* Connections shut down so far. */
uint64_t http_guard_dropped(const struct http_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION, with the guard as its closure. */
void http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);
/* The request is complete: no deadline while it is being answered. */
void http_guard_busy(struct MHD_Connection *c);
/*
 * From MHD_OPTION_NOTIFY_COMPLETED: the next request on this connection has
 * a new deadline, the idle allowance (http_guard_idle) and the timeout.
 */
void http_guard_rearm(struct MHD_Connection *c);
/*
 * A connection kept open between requests may wait @idle_s (0 at the start)
 * for its next one; once that request has begun (http_guard_begun: its
 * request line arrived) it has the timeout from then to arrive whole. A
 * new connection's first request has the timeout alone.
 */
void http_guard_idle(struct http_guard *g, unsigned int idle_s);
/* From MHD_OPTION_URI_LOG_CALLBACK: a request begun, its deadline the timeout from now. */
void http_guard_begun(struct MHD_Connection *c);

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
