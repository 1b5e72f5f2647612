/* SPDX-License-Identifier: MIT */
/*
 * http_util.h - what vigil-verifier and vigil-agent share around their
 * libmicrohttpd servers: the listen address, PEM files, and the mutual
 * TLS check.
 */
#ifndef VIGIL_HTTP_UTIL_H
#define VIGIL_HTTP_UTIL_H

#include <stdbool.h>
#include <netinet/in.h>

#include <microhttpd.h>

/*
 * The request path as the client sent it (MHD_OPTION_URI_LOG_CALLBACK
 * sees it before MHD's own decoding, which turns "%00" into a NUL),
 * decoded strictly by vg_api_path_decode into @path; on a refusal @path
 * holds the reason instead. Return: 0, or vg_api_path_decode's -errno.
 */
int http_path_decode(const char *uri, char *path, size_t cap);

/* "ADDR:PORT" (IPv4, port 1-65535) into @sa. Return: 0, or -1 if malformed. */
int http_parse_listen(const char *s, struct sockaddr_in *sa);

#define HTTP_PEM_MAX (1u << 20)

/*
 * The whole of a text file (a PEM, at most HTTP_PEM_MAX bytes, no NUL).
 * Return: a string to free, or NULL with errno (ENODATA empty, EFBIG too
 * large, EINVAL a NUL byte or not a regular file: vg_file_read).
 */
char *http_slurp(const char *path);

/*
 * Mutual TLS: the peer sent a certificate and it chains to the CA the
 * daemon was given (GnuTLS verifies it during the handshake).
 */
bool http_client_cert_ok(struct MHD_Connection *c);

struct http_ca;

/* A set of PEM CA certificates to check a peer against. Return: 0, -EBADMSG (no certificate), -ENOMEM. */
int http_ca_new(const char *pem, struct http_ca **ret);
void http_ca_free(struct http_ca *ca);

/*
 * The peer's certificate chain (already verified by the handshake against
 * every trusted CA) chains to one of @ca: which CA, when the daemon trusts
 * several with different meanings (the verifier's admin and read CAs).
 */
bool http_client_cert_from(struct MHD_Connection *c, const struct http_ca *ca);
/*
 * The SHA-256 of the peer's (leaf) certificate as it sent it, into @out:
 * which certificate a connection presented, without parsing it.
 * Return: 0, -ENOENT (no TLS, no certificate), -EIO.
 */
int http_client_cert_hash(struct MHD_Connection *c, uint8_t out[32]);
/*
 * The subject DN (RFC 4514 text) of the client certificate of @c, into
 * @out. Call it only after the chain was verified. Return: 0, -ENOENT
 * (no certificate), -ENOSPC, -EBADMSG.
 */
int http_client_cert_dn(struct MHD_Connection *c, char *out, size_t cap);

#endif
