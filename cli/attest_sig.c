// SPDX-License-Identifier: MIT
/*
 * attest_sig.c - a policy file's detached signature, as Keylime's tenant
 * checked an allowlist's (--allowlist-sig / --allowlist-sig-key; since
 * 7.x keylime/signing.py verify_signature): the key file's first line
 * says the kind.
 *
 *   "-----BEGIN PGP PUBLIC KEY BLOCK-----"  OpenPGP: the key is imported
 *       through GPGME into a temporary GNUPGHOME made here and removed
 *       after, holding nothing but that key file's keys; the signature
 *       (binary or armored) must be a good one by a key of that file:
 *       every signature in it good (GPG_ERR_NO_ERROR: not expired, not
 *       revoked, key present), and at least one. No OpenPGP parsing here.
 *   "-----BEGIN PUBLIC KEY-----"  an EC public key: the signature is a DER
 *       ECDSA signature over SHA-256 of the file's bytes (OpenSSL 3).
 *
 * Anything else is refused. This is the one home of GPGME in vigil.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpgme.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "attest_sig.h"

#define PGP_KEY "-----BEGIN PGP PUBLIC KEY BLOCK-----"
#define PEM_KEY "-----BEGIN PUBLIC KEY-----"

/* The key file's first line, as Keylime reads it (whitespace stripped). */
static bool first_line_is(const uint8_t *key, size_t len, const char *hdr)
{
	size_t i = 0, n = strlen(hdr);

	while (i < len && (key[i] == ' ' || key[i] == '\t' || key[i] == '\r'))
		i++;
	if (len - i < n || memcmp(key + i, hdr, n) != 0)
		return false;
	i += n;
	while (i < len && (key[i] == ' ' || key[i] == '\t' || key[i] == '\r'))
		i++;
	return i == len || key[i] == '\n';
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

static int pgp_verify(const uint8_t *key, size_t klen, const uint8_t *sig, size_t slen,
		      const uint8_t *body, size_t blen, char *why, size_t wlen)
{
	const char *tmp = getenv("TMPDIR");
	char home[4096];
	gpgme_ctx_t ctx = NULL;
	gpgme_data_t kd = NULL, sd = NULL, bd = NULL;
	gpgme_import_result_t ir;
	gpgme_verify_result_t vr;
	gpgme_error_t e;
	int r = -EIO, good = 0;

	if ((size_t)snprintf(home, sizeof(home), "%s/vigil-gpg.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    sizeof(home) || !mkdtemp(home)) {
		snprintf(why, wlen, "cannot make a temporary GNUPGHOME: %s", strerror(errno));
		return -EIO;
	}
	gpgme_check_version(NULL);
	e = gpgme_new(&ctx);
	if (!e)
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, NULL, home);
	if (!e)
		e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	if (!e)
		e = gpgme_data_new_from_mem(&kd, (const char *)key, klen, 0);
	if (!e)
		e = gpgme_op_import(ctx, kd);
	if (e) {
		snprintf(why, wlen, "GPGME: %s", gpgme_strerror(e));
		goto out;
	}
	ir = gpgme_op_import_result(ctx);
	if (!ir || ir->imported + ir->unchanged < 1) {
		snprintf(why, wlen, "the key file holds no OpenPGP public key GnuPG imports");
		r = -EBADMSG;
		goto out;
	}
	e = gpgme_data_new_from_mem(&sd, (const char *)sig, slen, 0);
	if (!e)
		e = gpgme_data_new_from_mem(&bd, (const char *)body, blen, 0);
	if (!e)
		e = gpgme_op_verify(ctx, sd, bd, NULL);
	if (e) {
		snprintf(why, wlen, "not an OpenPGP signature: %s", gpgme_strerror(e));
		r = -EKEYREJECTED;
		goto out;
	}
	vr = gpgme_op_verify_result(ctx);
	r = -EKEYREJECTED;
	snprintf(why, wlen, "no OpenPGP signature in it");
	for (gpgme_signature_t s = vr ? vr->signatures : NULL; s; s = s->next) {
		/* only the given key file's keys are in this home: a good one is theirs */
		if (gpg_err_code(s->status) != GPG_ERR_NO_ERROR) {
			snprintf(why, wlen, "OpenPGP signature by %s: %s", s->fpr ? s->fpr : "?",
				 gpgme_strerror(s->status));
			good = -1;
			break;
		}
		good++;
	}
	if (good > 0)
		r = 0;
out:
	gpgme_data_release(kd);
	gpgme_data_release(sd);
	gpgme_data_release(bd);
	gpgme_release(ctx);
	if (nftw(home, rm_one, 8, FTW_DEPTH | FTW_PHYS) < 0 && r == 0) {
		snprintf(why, wlen, "cannot remove the temporary GNUPGHOME %s", home);
		r = -EIO;
	}
	return r;
}

static int ec_verify(const uint8_t *key, size_t klen, const uint8_t *sig, size_t slen,
		     const uint8_t *body, size_t blen, char *why, size_t wlen)
{
	BIO *b = BIO_new_mem_buf(key, (int)klen);
	EVP_PKEY *pk = b ? PEM_read_bio_PUBKEY(b, NULL, NULL, NULL) : NULL;
	EVP_MD_CTX *mc = NULL;
	int r = -EKEYREJECTED;

	BIO_free(b);
	if (!pk) {
		snprintf(why, wlen, "the key file is not a PEM public key");
		r = -EBADMSG;
		goto out;
	}
	if (EVP_PKEY_get_base_id(pk) != EVP_PKEY_EC) {
		snprintf(why, wlen, "the key is not an EC key (Keylime's detached signatures are "
			 "ECDSA or OpenPGP)");
		r = -EOPNOTSUPP;
		goto out;
	}
	mc = EVP_MD_CTX_new();
	if (!mc || EVP_DigestVerifyInit(mc, NULL, EVP_sha256(), NULL, pk) != 1) {
		snprintf(why, wlen, "OpenSSL cannot verify with this key");
		r = -EIO;
		goto out;
	}
	if (EVP_DigestVerify(mc, sig, slen, body, blen) != 1)
		snprintf(why, wlen, "the ECDSA (SHA-256) signature does not verify with the key");
	else
		r = 0;
out:
	ERR_clear_error();
	EVP_MD_CTX_free(mc);
	EVP_PKEY_free(pk);
	return r;
}

int attest_sig_verify(const uint8_t *key, size_t klen, const uint8_t *sig, size_t slen,
		      const uint8_t *body, size_t blen, char *why, size_t wlen)
{
	if (klen > (64u << 20) || slen > (64u << 20)) {
		snprintf(why, wlen, "key or signature too large");
		return -EBADMSG;
	}
	if (slen == 0) {
		snprintf(why, wlen, "the signature file is empty");
		return -EKEYREJECTED;
	}
	if (first_line_is(key, klen, PGP_KEY))
		return pgp_verify(key, klen, sig, slen, body, blen, why, wlen);
	if (first_line_is(key, klen, PEM_KEY))
		return ec_verify(key, klen, sig, slen, body, blen, why, wlen);
	snprintf(why, wlen, "the key file starts with neither \"" PGP_KEY "\" nor \"" PEM_KEY "\"");
	return -EBADMSG;
}
