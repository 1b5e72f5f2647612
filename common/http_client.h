/* SPDX-License-Identifier: MIT */
/*
 * http_client.h - the one outbound HTTP client of vigil's daemons (libcurl):
 * the verifier's requests to agents and webhooks (verifier/agent_client.c,
 * which keeps a handle per peer and thread alive between requests) and the
 * pushing agent's to its verifier (agent/agent_push.c). One exchange on a
 * handle the caller owns: the peer's TLS and credential, the deadlines, the
 * answer kept up to a bound, the failure said once, the same way for both;
 * and what a peer's error answer says, made printable for a log line.
 * The server side is http_*.c's (libmicrohttpd).
 */
#ifndef VIGIL_COMMON_HTTP_CLIENT_H
#define VIGIL_COMMON_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

/*
 * Our client certificate (and the chain after it in its file) and key,
 * read and parsed once (http_tls_ids_load) for a client that makes many
 * connections: libcurl's OpenSSL backend reads and parses the files again
 * for every connection it makes (about 0.5 ms of CPU here, more than the
 * rest of a round). Shared by threads (OpenSSL's reference counts).
 */
struct http_tls_ids;
/* Return: 0, -EBADMSG (the file named in @err does not parse, or the key is not the certificate's), -ENOMEM. */
int http_tls_ids_load(const char *cert, const char *key, struct http_tls_ids **ret, char *err,
		      size_t errlen);
void http_tls_ids_free(struct http_tls_ids *ids);

/* who the peer must be, and who we are to it; every field may be NULL or "" */
struct http_peer {
	const char *ca;		/* the CA file the peer's certificate must chain to */
	const char *cert, *key;	/* our client certificate (mutual TLS) */
	const struct http_tls_ids *ids;	/* the same parsed once (NULL: cert and key are read) */
	const char *token;	/* sent as "Authorization: Bearer TOKEN" */
};

/* an answer: NUL-terminated after len; max set by the caller (0: 64 KiB) */
struct http_answer {
	uint8_t *p;
	size_t len, cap;
	size_t max;
	bool too_big;		/* the peer sent more than max */
	bool timed_out;		/* no complete answer within the deadline */
};

/* the deadlines of one exchange, and what may cut it short */
struct http_limits {
	unsigned int timeout_s;		/* the whole exchange; the connection within min(it, 5 s) */
	const char *timeout_name;	/* what the timeout is called in the message ("--agent-timeout") */
	bool (*stop)(void *arg);	/* polled while waiting: true ends the exchange; NULL: never */
	void *stop_arg;
};

/*
 * http_request - POST @body as JSON (NULL: a GET) to @url on the libcurl
 * handle @c, as @peer (NULL: no TLS settings of ours, no token), within
 * @lim. The answer goes to @out (its max kept, the rest reset), http and
 * https only, no redirect followed.
 * Return: the HTTP status, or -1 with @err saying what happened: "URL:
 * answer larger than N bytes", "URL: timed out: no complete answer within
 * NAME (N s)", or libcurl's text (out->p freed, out->timed_out set).
 */
long http_request(CURL *c, const char *url, const char *body, const struct http_peer *peer,
		  const struct http_limits *lim, struct http_answer *out, char *err, size_t errlen);

/*
 * http_said - what a peer's answer says, for a log line: its "error" (else
 * "message") member when it is a JSON object, else its text; printable
 * ASCII, at most 160 characters, "no message" when empty.
 */
void http_said(const struct http_answer *b, char *out, size_t cap);

#endif
