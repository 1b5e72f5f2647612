/* SPDX-License-Identifier: MIT */
/*
 * store_secret.h - a store URL's passwords, remembered so that no message
 * of the database library carries one (store_secret.c). Not thread-safe;
 * wipe with OPENSSL_cleanse when done.
 */
#ifndef VIGIL_STORE_SECRET_H
#define VIGIL_STORE_SECRET_H

#include <stddef.h>

#define STORE_SECRETS_MAX 8

struct store_secrets {
	char s[STORE_SECRETS_MAX][256];	/* raw and %-decoded */
	size_t n;
};

/* Remember every password of @url (vg_store_url_secrets), raw and decoded. */
void store_secrets_remember(struct store_secrets *q, const char *url);

/*
 * store_secrets_clean - @in (NULL: "") on one line (newlines become "; "),
 * every remembered password replaced by "***", truncated to @cap - 1 bytes.
 */
void store_secrets_clean(const struct store_secrets *q, const char *in, char *out, size_t cap);

#endif
