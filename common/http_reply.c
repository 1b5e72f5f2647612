// SPDX-License-Identifier: MIT
/*
 * http_reply.c - JSON, error and binary answers on a libmicrohttpd
 * connection (http_reply.h).
 */
#include <stdlib.h>
#include <string.h>

#include "http_reply.h"

/* the status of the last answer this thread queued (http_reply_take_status) */
static _Thread_local unsigned int last_status;

void http_reply_note_status(unsigned int code)
{
	last_status = code;
}

unsigned int http_reply_take_status(void)
{
	unsigned int code = last_status;

	last_status = 0;
	return code;
}

/* The CSP of every answer but the page's: nothing in it may load or run, nor be framed. */
#define CSP_NONE "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

void http_reply_harden(struct MHD_Response *r, const char *csp)
{
	MHD_add_response_header(r, "Content-Security-Policy", csp ? csp : CSP_NONE);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned int code, struct MHD_Response *r,
			     const char *type, const char *hname, const char *hval)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	/* a Content-Security-Policy given replaces the default one */
	if (hname && strcmp(hname, "Content-Security-Policy") == 0) {
		http_reply_harden(r, hval);
	} else {
		http_reply_harden(r, NULL);
		if (hname)
			MHD_add_response_header(r, hname, hval);
	}
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	if (ret == MHD_YES)
		http_reply_note_status(code);
	return ret;
}

enum MHD_Result http_reply_text(struct MHD_Connection *c, unsigned int code, const char *s)
{
	return queue(c, code, MHD_create_response_from_buffer(strlen(s), (void *)s,
							      MHD_RESPMEM_MUST_COPY),
		     "application/json", NULL, NULL);
}

enum MHD_Result http_reply_json(struct MHD_Connection *c, unsigned int code, json_object *o)
{
	const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	enum MHD_Result ret = s ? http_reply_text(c, code, s) : MHD_NO;

	json_object_put(o);
	return ret;
}

enum MHD_Result http_reply_error(struct MHD_Connection *c, unsigned int code, const char *msg)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, "error", json_object_new_string(msg));
	return http_reply_json(c, code, o);
}

enum MHD_Result http_reply_bytes(struct MHD_Connection *c, unsigned int code, uint8_t *buf,
				 size_t len, const char *hname, const char *hval)
{
	struct MHD_Response *r;

	if (buf)
		r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r)
		free(buf);
	return queue(c, code, r, "application/octet-stream", hname, hval);
}

enum MHD_Result http_reply_typed(struct MHD_Connection *c, unsigned int code, const char *type,
				 char *buf, size_t len)
{
	struct MHD_Response *r = buf ? MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE)
				     : NULL;

	if (!r)
		free(buf);
	return queue(c, code, r, type, NULL, NULL);
}

enum MHD_Result http_reply_static(struct MHD_Connection *c, const char *type, const uint8_t *buf,
				  size_t len, const char *csp)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)buf,
								 MHD_RESPMEM_PERSISTENT);

	return queue(c, MHD_HTTP_OK, r, type, "Content-Security-Policy", csp);
}
