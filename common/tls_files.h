/* SPDX-License-Identifier: MIT */
/*
 * tls_files.h - the PEM files a daemon is given (certificates, CA
 * bundles, private keys) parsed at start, so that garbage is refused
 * before the daemon says it is ready, naming the file and what is wrong
 * with it, instead of failing at the first handshake or registration.
 * Used by vigil-agent and vigil-verifier; the files are read again where
 * they are used (libmicrohttpd, libcurl, the EK chain check).
 */
#ifndef VIGIL_TLS_FILES_H
#define VIGIL_TLS_FILES_H

#include <stddef.h>

/*
 * tls_certs_check - @path holds at least one PEM certificate (a CA
 * bundle, or a certificate chain), and nothing that fails to parse.
 * Return: the number of certificates, or -errno with @why (the reason,
 * without @path): unreadable, no certificate, a malformed one.
 */
int tls_certs_check(const char *path, char *why, size_t cap);

/*
 * tls_key_check - @key_path holds an unencrypted PEM private key and,
 * with @cert_path, it is the key of that certificate (the first in it).
 * Return: 0, or -errno with @why.
 */
int tls_key_check(const char *key_path, const char *cert_path, char *why, size_t cap);

#endif
