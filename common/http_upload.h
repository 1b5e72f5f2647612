/* SPDX-License-Identifier: MIT */
/*
 * http_upload.h - one request's state across libmicrohttpd's calls, for
 * vigil-agent and vigil-verifier: the path as the client sent it, decoded
 * strictly before MHD's own decoding can cut it at a "%00", and the body,
 * gathered up to a limit the caller gives.
 *
 * The state is created by MHD_OPTION_URI_LOG_CALLBACK (http_upload_begin,
 * so it exists before the first handler call) and freed by
 * MHD_OPTION_NOTIFY_COMPLETED (http_upload_end, which also re-arms the
 * request deadline of http_guard.h). Who may ask and what is answered are
 * the daemons' business.
 */
#ifndef VIGIL_HTTP_UPLOAD_H
#define VIGIL_HTTP_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "vigil/attest_api.h"

struct http_upload {
	char *buf;			/* the body so far, NUL-terminated; NULL if none */
	size_t len, cap;
	bool started;			/* the headers were seen */
	bool answered;			/* refused before the body (401, 403, 400, 413) */
	int path_err;			/* vg_api_path_decode of the URI as sent */
	char path[VG_API_PATH_MAX];	/* ... the path, or the reason it is refused */
};

/* MHD_OPTION_URI_LOG_CALLBACK: a new struct http_upload (becomes *con_cls), or NULL. */
void *http_upload_begin(void *cls, const char *uri, struct MHD_Connection *c);

/*
 * Append @n bytes of body to @u, which never holds more than @max.
 * Return: 0, -EFBIG past @max (the caller closes the connection), -ENOMEM.
 */
int http_upload_append(struct http_upload *u, const char *data, size_t n, size_t max);

/* MHD_OPTION_NOTIFY_COMPLETED: frees *con_cls and re-arms the connection's deadline. */
void http_upload_end(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe);

#endif
