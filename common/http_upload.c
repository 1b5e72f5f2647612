// SPDX-License-Identifier: MIT
/*
 * http_upload.c - a request's path and body across libmicrohttpd's calls
 * (http_upload.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_guard.h"
#include "http_upload.h"
#include "http_util.h"

void *http_upload_begin(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct http_upload *u = calloc(1, sizeof(*u));

	(void)cls;
	http_guard_begun(c);	/* a kept connection's next request: the timeout from now */
	if (u)
		u->path_err = http_path_decode(uri, u->path, sizeof(u->path));
	return u;
}

int http_upload_append(struct http_upload *u, const char *data, size_t n, size_t max)
{
	size_t want, nc;
	char *nb;

	if (u->len > max || n > max - u->len)
		return -EFBIG;
	want = u->len + n + 1;
	if (want > u->cap) {
		nc = u->cap ? u->cap : 4096;
		while (nc < want)
			nc = nc > SIZE_MAX / 2 ? want : nc * 2;
		nb = realloc(u->buf, nc);
		if (!nb)
			return -ENOMEM;
		u->buf = nb;
		u->cap = nc;
	}
	memcpy(u->buf + u->len, data, n);
	u->len += n;
	u->buf[u->len] = 0;
	return 0;
}

void http_upload_end(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe)
{
	struct http_upload *u = *con_cls;

	(void)cls;
	(void)toe;
	if (u) {
		free(u->buf);
		free(u);
	}
	*con_cls = NULL;
	http_guard_rearm(c);
}
