// SPDX-License-Identifier: MIT
/*
 * attest_keys.c - keys learned from a measurement list's keyring entries,
 * as Keylime learns them (keylime/ima/ima.py _validate_ima_buf,
 * file_signatures.py get_pubkey): an ima-buf entry whose buffer is a
 * certificate or public key, allowed by the policy, makes that key verify
 * the ima-sig entries after it. This file holds what a buffer is (a key,
 * not a key, a key of an unusable type), the bounded set of learned
 * buffers kept in the log state (struct vg_attest_learned) and the keyring
 * made of them for a round. Whether an entry's key may be learned is the
 * policy's (attest_policy.c); when, the list's (attest_log.c).
 *
 * Not here: private keys in a buffer (Keylime also takes those; vigil
 * treats such a buffer as no key, so its entry is judged as a plain
 * ima-buf entry: never more trust).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "internal.h"
#include "attest_policy.h"
#include "vigil/attest.h"
#include "vigil/keyring.h"

static int key_kind(EVP_PKEY *k)
{
	int id = k ? EVP_PKEY_get_base_id(k) : EVP_PKEY_NONE;

	if (!k)
		return 0;
	return id == EVP_PKEY_RSA || id == EVP_PKEY_EC ? 1 : -EOPNOTSUPP;
}

int vg__attest_buf_key(const uint8_t *buf, size_t len)
{
	const uint8_t *q = buf;
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	BIO *b;
	int r = 0;

	if (!len || len > INT_MAX)
		return 0;
	/* Keylime's order: DER certificate, PEM certificate, DER key, PEM key */
	x = d2i_X509(NULL, &q, (long)len);
	if (x && q != buf + len) {
		X509_free(x);
		x = NULL;
	}
	if (!x && (b = BIO_new_mem_buf(buf, (int)len))) {
		x = PEM_read_bio_X509(b, NULL, NULL, NULL);
		BIO_free(b);
	}
	if (x) {
		r = key_kind(X509_get0_pubkey(x));
		X509_free(x);
		vg_ssl_clear();
		return r;
	}
	q = buf;
	k = d2i_PUBKEY(NULL, &q, (long)len);
	if (!k && (b = BIO_new_mem_buf(buf, (int)len))) {
		k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
		BIO_free(b);
	}
	r = key_kind(k);
	EVP_PKEY_free(k);
	vg_ssl_clear();
	return r;
}

/* Walk the records of @k: @cb per record, stop on its non-zero. Return: 0, -EBADMSG, cb's. */
static int each(const uint8_t *buf, size_t len,
		int (*cb)(void *arg, const uint8_t *b, size_t n), void *arg)
{
	size_t off = 0;

	while (off < len) {
		size_t n;
		int r;

		if (len - off < 2)
			return -EBADMSG;
		n = (size_t)buf[off] << 8 | buf[off + 1];
		off += 2;
		if (!n || n > len - off)
			return -EBADMSG;
		if (cb && (r = cb(arg, buf + off, n)) != 0)
			return r;
		off += n;
	}
	return 0;
}

static int count_one(void *arg, const uint8_t *b, size_t n)
{
	(void)b;
	(void)n;
	(*(size_t *)arg)++;
	return 0;
}

size_t vg_attest_learned_count(const struct vg_attest_learned *k)
{
	size_t n = 0;

	if (k->len > sizeof(k->buf) || each(k->buf, k->len, count_one, &n) < 0)
		return 0;
	return n;
}

int vg_attest_learned_set(struct vg_attest_learned *k, const uint8_t *buf, size_t len)
{
	memset(k, 0, sizeof(*k));
	if (len > sizeof(k->buf) || each(buf, len, NULL, NULL) < 0)
		return -EBADMSG;
	if (len)
		memcpy(k->buf, buf, len);
	k->len = (uint32_t)len;
	return 0;
}

struct same {
	const uint8_t *b;
	size_t n;
};

static int is_same(void *arg, const uint8_t *b, size_t n)
{
	const struct same *s = arg;

	return n == s->n && memcmp(b, s->b, n) == 0;
}

int vg__attest_learned_add(struct vg_attest_learned *k, const uint8_t *buf, size_t len)
{
	struct same s = { buf, len };

	if (each(k->buf, k->len, is_same, &s) == 1)
		return 0;
	if (len == 0 || len > 0xffff || len + 2 > sizeof(k->buf) - k->len)
		return -ENOSPC;
	k->buf[k->len] = (uint8_t)(len >> 8);
	k->buf[k->len + 1] = (uint8_t)len;
	memcpy(k->buf + k->len + 2, buf, len);
	k->len += (uint32_t)(len + 2);
	return 1;
}

static int add_one(void *arg, const uint8_t *b, size_t n)
{
	/* a record that no longer parses (it did when learned) is skipped, not trusted */
	(void)vg_keyring_add_mem(arg, b, n, "learned from the log", NULL);
	return 0;
}

int vg__attest_learned_keyring(const struct vg_attest_learned *k, struct vg_keyring **ret)
{
	struct vg_keyring *kr;
	int r;

	if (vg_keyring_new(&kr) < 0)
		return -ENOMEM;
	r = k->len <= sizeof(k->buf) ? each(k->buf, k->len, add_one, kr) : -EBADMSG;
	if (r < 0) {
		vg_keyring_free(kr);
		return r;
	}
	*ret = kr;
	return 0;
}
