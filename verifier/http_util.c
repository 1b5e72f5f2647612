// SPDX-License-Identifier: MIT
/*
 * http_util.c - listen address, PEM files and the mutual-TLS check for the
 * two HTTP daemons (http_util.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <arpa/inet.h>

#include <gnutls/gnutls.h>

#include "http_util.h"

int http_parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	unsigned long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	port = strtoul(colon + 1, NULL, 10);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (port == 0 || port > 65535 || inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -1;
	return 0;
}

char *http_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = f ? malloc(HTTP_PEM_MAX + 1) : NULL;
	size_t n = 0;

	if (!buf) {
		if (f)
			fclose(f);
		return NULL;
	}
	/* one byte past the limit tells a file that is too large (or endless) */
	while (n <= HTTP_PEM_MAX) {
		size_t got = fread(buf + n, 1, HTTP_PEM_MAX + 1 - n, f);

		if (got == 0)
			break;
		n += got;
	}
	if (ferror(f) || n == 0 || n > HTTP_PEM_MAX || memchr(buf, 0, n)) {
		int e = ferror(f) ? EIO : n == 0 ? ENODATA : n > HTTP_PEM_MAX ? EFBIG : EINVAL;

		fclose(f);
		free(buf);
		errno = e;
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

bool http_client_cert_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	unsigned int status = 0, n = 0;
	gnutls_session_t s;

	if (!ci || !ci->tls_session)
		return false;
	s = (gnutls_session_t)ci->tls_session;
	if (!gnutls_certificate_get_peers(s, &n) || n == 0)
		return false;
	return gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0;
}
