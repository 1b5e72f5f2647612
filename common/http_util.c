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
#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "vigil/attest_api.h"
#include "vigil/diag.h"
#include "vigil/fileio.h"

#include "http_util.h"

int http_path_decode(const char *uri, char *path, size_t cap)
{
	struct vg_diag d = { 0 };
	int r = vg_api_path_decode(uri, path, cap, &d);

	if (r < 0)
		snprintf(path, cap, "%s", d.msg);
	return r;
}

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
	uint8_t *buf = NULL;
	size_t n = 0;
	int r = vg_file_read(path, HTTP_PEM_MAX, &buf, &n, NULL);

	if (r == 0 && (n == 0 || memchr(buf, 0, n)))
		r = n == 0 ? -ENODATA : -EINVAL;
	if (r < 0) {
		free(buf);
		errno = -r;
		return NULL;
	}
	return (char *)buf;		/* vg_file_read ends it with a NUL */
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

struct http_ca {
	gnutls_x509_trust_list_t tl;
};

int http_ca_new(const char *pem, struct http_ca **ret)
{
	struct http_ca *ca = calloc(1, sizeof(*ca));
	gnutls_datum_t d = { (unsigned char *)pem, (unsigned int)strlen(pem) };

	if (!ca)
		return -ENOMEM;
	if (gnutls_x509_trust_list_init(&ca->tl, 0) < 0) {
		free(ca);
		return -ENOMEM;
	}
	if (gnutls_x509_trust_list_add_trust_mem(ca->tl, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0) <= 0) {
		http_ca_free(ca);
		return -EBADMSG;
	}
	*ret = ca;
	return 0;
}

void http_ca_free(struct http_ca *ca)
{
	if (!ca)
		return;
	gnutls_x509_trust_list_deinit(ca->tl, 1);
	free(ca);
}

bool http_client_cert_from(struct MHD_Connection *c, const struct http_ca *ca)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_x509_crt_t crts[16] = { 0 };
	const gnutls_datum_t *peers;
	unsigned int n = 0, status = 1, k = 0;

	if (!ca || !ci || !ci->tls_session)
		return false;
	peers = gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n);
	if (!peers || n == 0)
		return false;
	if (n > 16)
		n = 16;
	for (; k < n; k++)
		if (gnutls_x509_crt_init(&crts[k]) < 0 ||
		    gnutls_x509_crt_import(crts[k], &peers[k], GNUTLS_X509_FMT_DER) < 0) {
			if (k < n && crts[k])
				gnutls_x509_crt_deinit(crts[k]);
			break;
		}
	if (k == n && gnutls_x509_trust_list_verify_crt(ca->tl, crts, n, 0, &status, NULL) < 0)
		status = 1;
	for (unsigned int i = 0; i < k; i++)
		gnutls_x509_crt_deinit(crts[i]);
	return k == n && status == 0;
}

int http_client_cert_hash(struct MHD_Connection *c, uint8_t out[32])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const gnutls_datum_t *peers;
	unsigned int n = 0;

	if (!ci || !ci->tls_session)
		return -ENOENT;
	peers = gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n);
	if (!peers || n == 0)
		return -ENOENT;
	return gnutls_hash_fast(GNUTLS_DIG_SHA256, peers[0].data, peers[0].size, out) < 0 ? -EIO : 0;
}

int http_client_cert_dn(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const gnutls_datum_t *peers;
	gnutls_x509_crt_t crt;
	unsigned int n = 0;
	size_t len = cap;
	int r;

	if (!ci || !ci->tls_session)
		return -ENOENT;
	peers = gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n);
	if (!peers || n == 0)
		return -ENOENT;
	if (gnutls_x509_crt_init(&crt) < 0)
		return -ENOMEM;
	r = gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER);
	if (r >= 0)
		r = gnutls_x509_crt_get_dn(crt, out, &len);
	gnutls_x509_crt_deinit(crt);
	if (r == GNUTLS_E_SHORT_MEMORY_BUFFER)
		return -ENOSPC;
	return r < 0 ? -EBADMSG : 0;
}
