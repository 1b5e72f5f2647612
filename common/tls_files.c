// SPDX-License-Identifier: MIT
/*
 * tls_files.c - PEM certificates and keys checked at start (tls_files.h)
 * with OpenSSL, the library the rest of vigil parses certificates with.
 * A key is never decrypted here: an encrypted key cannot be served by
 * the daemons and is refused as such.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "tls_files.h"

static int no_pass(char *buf, int size, int rw, void *u)
{
	(void)buf, (void)size, (void)rw, (void)u;
	return -1;
}

static void ossl_why(char *why, size_t cap, const char *what)
{
	unsigned long e = ERR_peek_last_error();
	char buf[256] = "";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(why, cap, "%s%s%s", what, *buf ? ": " : "", buf);
	ERR_clear_error();
}

int tls_certs_check(const char *path, char *why, size_t cap)
{
	BIO *b = BIO_new_file(path, "r");
	X509 *x;
	int n = 0;

	if (!b) {
		snprintf(why, cap, "cannot be read: %s", strerror(errno ? errno : EIO));
		ERR_clear_error();
		return -EIO;
	}
	while ((x = PEM_read_bio_X509(b, NULL, no_pass, NULL))) {
		X509_free(x);
		n++;
	}
	/* the loop ends at the end of the file (no start line), or at a bad certificate */
	if (ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE || !n) {
		ossl_why(why, cap, n ? "a malformed PEM certificate after the first"
				     : "no PEM certificate in it");
		BIO_free(b);
		return -EBADMSG;
	}
	ERR_clear_error();
	BIO_free(b);
	return n;
}

int tls_key_check(const char *key_path, const char *cert_path, char *why, size_t cap)
{
	BIO *b = BIO_new_file(key_path, "r");
	EVP_PKEY *k;
	X509 *x = NULL;
	int r = 0;

	if (!b) {
		snprintf(why, cap, "cannot be read: %s", strerror(errno ? errno : EIO));
		ERR_clear_error();
		return -EIO;
	}
	k = PEM_read_bio_PrivateKey(b, NULL, no_pass, NULL);
	BIO_free(b);
	if (!k) {
		ossl_why(why, cap, "not an unencrypted PEM private key");
		return -EBADMSG;
	}
	if (cert_path) {
		b = BIO_new_file(cert_path, "r");
		x = b ? PEM_read_bio_X509(b, NULL, no_pass, NULL) : NULL;
		BIO_free(b);
		if (x && X509_check_private_key(x, k) != 1) {
			snprintf(why, cap, "not the private key of the certificate %s", cert_path);
			r = -EKEYREJECTED;
		}
		ERR_clear_error();
	}
	X509_free(x);
	EVP_PKEY_free(k);
	return r;
}
