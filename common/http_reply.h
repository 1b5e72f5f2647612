/* SPDX-License-Identifier: MIT */
/*
 * http_reply.h - the answers vigil-agent and vigil-verifier queue on a
 * libmicrohttpd connection: a JSON object, a JSON text already built, the
 * {"error": ...} refusal, a binary body, a static file; each with the
 * hardening headers of http_reply_harden. Each returns what
 * MHD_queue_response returned (MHD_NO when the answer could not even be
 * built: MHD then closes the connection).
 *
 * It does not decide codes or wording: the handlers do.
 */
#ifndef VIGIL_HTTP_REPLY_H
#define VIGIL_HTTP_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <microhttpd.h>

/* @o (consumed, even on failure) as application/json, printed plain without "\/" escapes. */
enum MHD_Result http_reply_json(struct MHD_Connection *c, unsigned int code, json_object *o);

/* The JSON text @s (copied) as application/json. */
enum MHD_Result http_reply_text(struct MHD_Connection *c, unsigned int code, const char *s);

/* {"error": @msg} with @code. */
enum MHD_Result http_reply_error(struct MHD_Connection *c, unsigned int code, const char *msg);

/*
 * @len bytes of @buf (malloc'd and taken: MHD frees it; NULL when @len is
 * 0) as application/octet-stream, with one more header @hname: @hval when
 * @hname is not NULL.
 */
enum MHD_Result http_reply_bytes(struct MHD_Connection *c, unsigned int code, uint8_t *buf,
				 size_t len, const char *hname, const char *hval);

/*
 * The headers every answer gets, so that no answer can be sniffed into
 * something else, framed, cached or leak its URL: Content-Security-Policy
 * @csp (NULL: nothing may load or run), X-Content-Type-Options: nosniff,
 * X-Frame-Options: DENY, Referrer-Policy: no-referrer, Cache-Control:
 * no-store. The reply functions here add them; others call this.
 */
void http_reply_harden(struct MHD_Response *r, const char *csp);

/*
 * 200 with @len bytes of @buf (static: never freed nor copied) as @type,
 * under Content-Security-Policy @csp instead of the default one.
 */
enum MHD_Result http_reply_static(struct MHD_Connection *c, const char *type, const uint8_t *buf,
				  size_t len, const char *csp);

/* @len bytes of @buf (malloc'd and taken; NULL: MHD_NO) as Content-Type @type. */
enum MHD_Result http_reply_typed(struct MHD_Connection *c, unsigned int code, const char *type,
				 char *buf, size_t len);

/*
 * The status of the last answer queued on this thread by the functions
 * here or http_auth_refuse (which notes it), then 0: a daemon's handler
 * reads it after each call to count answers by status (the verifier's
 * /metrics). http_reply_note_status is for other code that queues.
 */
unsigned int http_reply_take_status(void);
void http_reply_note_status(unsigned int code);

#endif
