// SPDX-License-Identifier: MIT
/*
 * keyring.c - trusted keys by keyid, signing keys, and keyid computation.
 *
 * Files are read whole (they are small), then parsed: PEM blocks one by
 * one (certificates and public keys may be mixed), else one DER object,
 * tried as certificate first, then as SubjectPublicKeyInfo.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "internal.h"
#include "vigil/fileio.h"
#include "vigil/keyring.h"

#define KEYFILE_MAX (16u << 20)

struct entry {
	struct vg_keyinfo info;
	EVP_PKEY *pkey;
	char type[16];
};

struct vg_keyring {
	struct entry *v;
	size_t n, cap;
	char **sources;		/* owned copies of paths */
	size_t nsources;
};

struct vg_signer {
	EVP_PKEY *pkey;
	uint32_t keyid;
};

int vg_keyid_of_pkey(const void *pkey, uint32_t *ret)
{
	X509_PUBKEY *xpk = NULL;
	const unsigned char *bits;
	unsigned char md[20];
	int len, r = -EIO;

	if (X509_PUBKEY_set(&xpk, (EVP_PKEY *)pkey) != 1)
		goto out;
	if (X509_PUBKEY_get0_param(NULL, &bits, &len, NULL, xpk) != 1)
		goto out;
	if (!EVP_Digest(bits, (size_t)len, md, NULL, EVP_sha1(), NULL))
		goto out;
	*ret = vg__be32(md + 16);
	r = 0;
out:
	X509_PUBKEY_free(xpk);
	vg_ssl_clear();
	return r;
}

static void key_type_name(const EVP_PKEY *pkey, char *out, size_t cap)
{
	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA) {
		snprintf(out, cap, "rsa%d", EVP_PKEY_get_bits(pkey));
	} else if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC) {
		char g[32] = "";
		size_t gl = 0;

		EVP_PKEY_get_utf8_string_param(pkey, "group", g, sizeof(g), &gl);
		if (strcmp(g, "prime256v1") == 0)
			snprintf(out, cap, "ecp256");
		else if (strcmp(g, "secp384r1") == 0)
			snprintf(out, cap, "ecp384");
		else if (strcmp(g, "secp521r1") == 0)
			snprintf(out, cap, "ecp521");
		else
			snprintf(out, cap, "ec-%.12s", g);
	} else {
		snprintf(out, cap, "%.15s", EVP_PKEY_get0_type_name(pkey));
	}
}

/* By base id: EVP_PKEY_is_a() may allocate, and fail as "unsupported". */
static bool supported(const EVP_PKEY *pkey)
{
	int id = EVP_PKEY_get_base_id(pkey);

	return id == EVP_PKEY_RSA || id == EVP_PKEY_EC;
}

int vg_keyring_new(struct vg_keyring **ret)
{
	struct vg_keyring *kr = calloc(1, sizeof(*kr));

	if (!kr)
		return -ENOMEM;
	*ret = kr;
	return 0;
}

void vg_keyring_free(struct vg_keyring *kr)
{
	if (!kr)
		return;
	for (size_t i = 0; i < kr->n; i++)
		EVP_PKEY_free(kr->v[i].pkey);
	for (size_t i = 0; i < kr->nsources; i++)
		free(kr->sources[i]);
	free(kr->sources);
	free(kr->v);
	free(kr);
}

size_t vg_keyring_count(const struct vg_keyring *kr)
{
	return kr->n;
}

const struct vg_keyinfo *vg_keyring_info(const struct vg_keyring *kr, size_t i)
{
	return i < kr->n ? &kr->v[i].info : NULL;
}

const void *vg_keyring_find(const struct vg_keyring *kr, uint32_t keyid)
{
	for (size_t i = 0; i < kr->n; i++)
		if (kr->v[i].info.keyid == keyid)
			return kr->v[i].pkey;
	return NULL;
}

/* Takes ownership of @pkey on success. */
static int add_key(struct vg_keyring *kr, EVP_PKEY *pkey, X509 *cert, const char *source,
		   struct vg_diag *diag)
{
	struct entry e = { .pkey = pkey };
	const ASN1_OCTET_STRING *skid = cert ? X509_get0_subject_key_id(cert) : NULL;

	if (!supported(pkey))
		return vg_diag_set(diag, -EOPNOTSUPP, "%s: key type %s is not RSA or EC",
				   source, EVP_PKEY_get0_type_name(pkey));
	if (skid && ASN1_STRING_length(skid) >= 4) {
		e.info.keyid = vg__be32(ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4);
	} else if (vg_keyid_of_pkey(pkey, &e.info.keyid) < 0) {
		return vg_diag_set(diag, -EIO, "%s: cannot compute keyid", source);
	}
	e.info.from_cert = cert != NULL;
	e.info.skid_missing = cert && !skid;
	e.info.source = source;
	if (kr->n == kr->cap) {
		size_t cap = kr->cap ? 2 * kr->cap : 4;
		struct entry *v = realloc(kr->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		kr->v = v;
		kr->cap = cap;
	}
	kr->v[kr->n] = e;
	key_type_name(pkey, kr->v[kr->n].type, sizeof(kr->v[kr->n].type));
	kr->v[kr->n].info.type = kr->v[kr->n].type;
	kr->n++;
	return 0;
}

/* Fix up info pointers after realloc moved entries. */
static void fix_type_ptrs(struct vg_keyring *kr)
{
	for (size_t i = 0; i < kr->n; i++)
		kr->v[i].info.type = kr->v[i].type;
}

/* Any readable file, a pipe too (vg_fd_read_all), below KEYFILE_MAX. */
static int read_file(const char *path, uint8_t **ret, size_t *ret_len, struct vg_diag *diag)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
	r = vg_fd_read_all(fd, KEYFILE_MAX - 1, ret, ret_len);
	close(fd);
	if (r == -EFBIG)
		return vg_diag_set(diag, r, "%s: larger than 16 MiB", path);
	if (r < 0 && r != -ENOMEM)
		return vg_diag_set(diag, r, "%s: read: %s", path, strerror(-r));
	return r;
}

static bool looks_pem(const uint8_t *buf, size_t len)
{
	static const char tag[] = "-----BEGIN ";

	for (size_t i = 0; i + sizeof(tag) - 1 <= len; i++)
		if (memcmp(buf + i, tag, sizeof(tag) - 1) == 0)
			return true;
	return false;
}

/*
 * Why PEM_read_bio() stopped: the end of the input ("no start line") is
 * fine; anything else (a block that does not decode, an allocation that
 * failed) must not pass for the end, or keys would be dropped silently.
 */
static int pem_stop_reason(struct vg_diag *diag, const char *src, int keys)
{
	unsigned long e = ERR_peek_last_error();

	if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
		return 0;
	/* OpenSSL 3.0 says nothing when some allocations fail */
	if (!e || ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE ||
	    ERR_GET_REASON(ERR_peek_error()) == ERR_R_MALLOC_FAILURE) {
		vg_ssl_clear();
		return -ENOMEM;
	}
	return vg_diag_ssl(diag, -EBADMSG, "%s: PEM data after %d key(s) does not decode", src, keys);
}

static int add_pem(struct vg_keyring *kr, const uint8_t *buf, size_t len, const char *src,
		   struct vg_diag *diag)
{
	BIO *bio = BIO_new_mem_buf(buf, (int)len);
	char *name = NULL, *header = NULL;
	unsigned char *data = NULL;
	long dlen;
	size_t before = kr->n;
	int r = 0;

	if (!bio)
		return -ENOMEM;
	vg_ssl_clear();		/* pem_stop_reason() reads the queue */
	while (PEM_read_bio(bio, &name, &header, &data, &dlen) == 1) {
		const unsigned char *p = data;

		if (strcmp(name, "CERTIFICATE") == 0 || strcmp(name, "X509 CERTIFICATE") == 0) {
			X509 *x = d2i_X509(NULL, &p, dlen);
			EVP_PKEY *pk = x ? X509_get_pubkey(x) : NULL;

			if (!pk) {
				r = vg_diag_ssl(diag, -EBADMSG, "%s: certificate %d does not parse",
						src, (int)(kr->n - before) + 1);
			} else {
				r = add_key(kr, pk, x, src, diag);
				if (r < 0)
					EVP_PKEY_free(pk);
			}
			X509_free(x);
		} else if (strcmp(name, "PUBLIC KEY") == 0) {
			EVP_PKEY *pk = d2i_PUBKEY(NULL, &p, dlen);

			if (!pk) {
				r = vg_diag_ssl(diag, -EBADMSG, "%s: public key %d does not parse",
						src, (int)(kr->n - before) + 1);
			} else {
				r = add_key(kr, pk, NULL, src, diag);
				if (r < 0)
					EVP_PKEY_free(pk);
			}
		}
		/* other blocks (private keys, parameters) are skipped */
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(data);
		name = header = NULL;
		data = NULL;
		if (r < 0)
			break;
	}
	if (r == 0)
		r = pem_stop_reason(diag, src, (int)(kr->n - before));
	BIO_free(bio);
	vg_ssl_clear();
	return r < 0 ? r : (int)(kr->n - before);
}

int vg_keyring_add_mem(struct vg_keyring *kr, const uint8_t *buf, size_t len, const char *source,
		       struct vg_diag *diag)
{
	size_t before = kr->n;
	char *src, **ns;
	int r;

	if (len > KEYFILE_MAX)
		return vg_diag_set(diag, -EFBIG, "%s: larger than 16 MiB", source);
	src = strdup(source);
	ns = src ? realloc(kr->sources, (kr->nsources + 1) * sizeof(*ns)) : NULL;
	if (!ns) {
		free(src);
		return -ENOMEM;
	}
	kr->sources = ns;
	kr->sources[kr->nsources++] = src;

	if (looks_pem(buf, len)) {
		r = add_pem(kr, buf, len, src, diag);
	} else {
		const unsigned char *p = buf;
		X509 *x = d2i_X509(NULL, &p, (long)len);

		if (x && p == buf + len) {
			EVP_PKEY *pk = X509_get_pubkey(x);

			r = pk ? add_key(kr, pk, x, src, diag)
			       : vg_diag_ssl(diag, -EBADMSG, "%s: certificate key", src);
			if (r < 0)
				EVP_PKEY_free(pk);
		} else {
			EVP_PKEY *pk;

			p = buf;
			pk = d2i_PUBKEY(NULL, &p, (long)len);
			if (pk && p == buf + len) {
				r = add_key(kr, pk, NULL, src, diag);
				if (r < 0)
					EVP_PKEY_free(pk);
			} else {
				EVP_PKEY_free(pk);
				r = vg_diag_set(diag, -EBADMSG,
						"%s: neither a DER certificate nor a public key", src);
			}
		}
		X509_free(x);
		vg_ssl_clear();
	}
	fix_type_ptrs(kr);
	if (r < 0) {
		/* all or nothing: a bundle that fails to load adds no key */
		while (kr->n > before)
			EVP_PKEY_free(kr->v[--kr->n].pkey);
		return r;
	}
	if (kr->n == before)
		return vg_diag_set(diag, -EBADMSG, "%s: no certificate or public key found", src);
	return (int)(kr->n - before);
}

int vg_keyring_add_file(struct vg_keyring *kr, const char *path, struct vg_diag *diag)
{
	uint8_t *buf;
	size_t len;
	int r = read_file(path, &buf, &len, diag);

	if (r < 0)
		return r;
	r = vg_keyring_add_mem(kr, buf, len, path, diag);
	free(buf);
	return r;
}

int vg_signer_load(const char *path, struct vg_signer **ret, struct vg_diag *diag)
{
	struct vg_signer *s;
	uint8_t *buf;
	size_t len;
	BIO *bio;
	EVP_PKEY *pkey;
	X509 *cert;
	int r = read_file(path, &buf, &len, diag);

	if (r < 0)
		return r;
	bio = BIO_new_mem_buf(buf, (int)len);
	if (!bio) {
		free(buf);
		return -ENOMEM;
	}
	/* No password callback: an encrypted key is an error, not a prompt. */
	pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *)"");
	if (!pkey) {
		BIO_free(bio);
		free(buf);
		return vg_diag_ssl(diag, -EBADMSG, "%s: no unencrypted PEM private key", path);
	}
	if (!supported(pkey)) {
		r = vg_diag_set(diag, -EOPNOTSUPP, "%s: key type %s is not RSA or EC", path,
				EVP_PKEY_get0_type_name(pkey));
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		r = -ENOMEM;
		goto fail;
	}
	s->pkey = pkey;
	BIO_free(bio);
	bio = BIO_new_mem_buf(buf, (int)len);
	cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
	{
		const ASN1_OCTET_STRING *skid = cert ? X509_get0_subject_key_id(cert) : NULL;

		if (skid && ASN1_STRING_length(skid) >= 4)
			s->keyid = vg__be32(ASN1_STRING_get0_data(skid) +
					    ASN1_STRING_length(skid) - 4);
		else
			r = vg_keyid_of_pkey(pkey, &s->keyid);
	}
	X509_free(cert);
	BIO_free(bio);
	OPENSSL_cleanse(buf, len);
	free(buf);
	vg_ssl_clear();
	if (r < 0) {
		vg_signer_free(s);
		return vg_diag_set(diag, r, "%s: cannot compute keyid", path);
	}
	*ret = s;
	return 0;
fail:
	EVP_PKEY_free(pkey);
	BIO_free(bio);
	OPENSSL_cleanse(buf, len);
	free(buf);
	return r;
}

void vg_signer_free(struct vg_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->pkey);
	free(s);
}

uint32_t vg_signer_keyid(const struct vg_signer *s)
{
	return s->keyid;
}

void vg_signer_set_keyid(struct vg_signer *s, uint32_t keyid)
{
	s->keyid = keyid;
}

const void *vg_signer_pkey(const struct vg_signer *s)
{
	return s->pkey;
}
