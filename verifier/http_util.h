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

/* "ADDR:PORT" (IPv4, port 1-65535) into @sa. Return: 0, or -1 if malformed. */
int http_parse_listen(const char *s, struct sockaddr_in *sa);

/* The whole of a text file (a PEM). Return: a string to free, or NULL (missing or empty). */
char *http_slurp(const char *path);

/*
 * Mutual TLS: the peer sent a certificate and it chains to the CA the
 * daemon was given (GnuTLS verifies it during the handshake).
 */
bool http_client_cert_ok(struct MHD_Connection *c);

#endif
