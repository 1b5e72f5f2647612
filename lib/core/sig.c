// SPDX-License-Identifier: MIT
/*
 * sig.c - signature v2 header codec, and signing/verification over a raw
 * digest with OpenSSL's EVP_PKEY_sign/verify (no re-hashing: the kernel
 * verifies a digest it computed itself).
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "internal.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"

int vg_sig_v2_decode(const uint8_t *buf, size_t len, struct vg_sig_v2 *ret,
		     struct vg_diag *diag)
{
	struct vg_sig_v2 s;

	if (len <= VG_SIG_V2_HDR_LEN)
		return vg_diag_set(diag, -EBADMSG,
				   "signature truncated: %zu bytes, header alone is %d",
				   len, VG_SIG_V2_HDR_LEN);
	s.type = buf[0];
	s.version = buf[1];
	s.hash_algo = buf[2];
	s.keyid = (uint32_t)buf[3] << 24 | (uint32_t)buf[4] << 16 |
		  (uint32_t)buf[5] << 8 | buf[6];
	s.sig_size = (uint16_t)(buf[7] << 8 | buf[8]);
	s.sig = buf + VG_SIG_V2_HDR_LEN;
	if (s.sig_size != len - VG_SIG_V2_HDR_LEN)
		return vg_diag_set(diag, -EBADMSG,
				   "signature sig_size %u does not match the %zu bytes after the header",
				   s.sig_size, len - VG_SIG_V2_HDR_LEN);
	if (s.hash_algo >= VG_HASH__LAST)
		return vg_diag_set(diag, -EOPNOTSUPP,
				   "signature names unknown hash algorithm id %u", s.hash_algo);
	*ret = s;
	return 0;
}

int vg_sig_v2_encode(const struct vg_sig_v2 *s, uint8_t *out, size_t cap)
{
	size_t n = VG_SIG_V2_HDR_LEN + s->sig_size;

	if (s->sig_size == 0)
		return -EINVAL;
	if (cap < n)
		return -ENOBUFS;
	out[0] = s->type;
	out[1] = s->version;
	out[2] = s->hash_algo;
	out[3] = (uint8_t)(s->keyid >> 24);
	out[4] = (uint8_t)(s->keyid >> 16);
	out[5] = (uint8_t)(s->keyid >> 8);
	out[6] = (uint8_t)s->keyid;
	out[7] = (uint8_t)(s->sig_size >> 8);
	out[8] = (uint8_t)s->sig_size;
	memmove(out + VG_SIG_V2_HDR_LEN, s->sig, s->sig_size);
	return (int)n;
}

/* Set up @ctx for a raw-digest operation the way the kernel verifies. */
static int setup_pkey_ctx(EVP_PKEY_CTX *ctx, const EVP_PKEY *pkey, unsigned int algo,
			  struct vg_diag *diag)
{
	EVP_MD *md;
	int r = 0;

	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA) {
		if (EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0)
			return vg_diag_ssl(diag, -EIO, "RSA padding");
	} else if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC) {
		return vg_diag_set(diag, -EOPNOTSUPP, "key type %s is not RSA or EC",
				   EVP_PKEY_get0_type_name(pkey));
	}
	md = vg__md_fetch(algo);
	if (!md)
		return vg_diag_ssl(diag, -EOPNOTSUPP, "no signature digest for hash algorithm %s",
				   vg_hash_name(algo) ? vg_hash_name(algo) : "(unknown)");
	if (EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0)
		r = vg_diag_ssl(diag, -EOPNOTSUPP, "signature digest %s for %s key",
				vg_hash_name(algo), EVP_PKEY_get0_type_name(pkey));
	EVP_MD_free(md);
	return r;
}

int vg_sig_sign(const struct vg_signer *signer, uint8_t type,
		const struct vg_digest *d, uint8_t *out, size_t cap,
		struct vg_diag *diag)
{
	EVP_PKEY *pkey = (EVP_PKEY *)vg_signer_pkey(signer);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	uint8_t sig[VG_SIG_MAX];
	size_t siglen = sizeof(sig);
	struct vg_sig_v2 s;
	int r;

	if (!ctx)
		return vg_diag_ssl(diag, -ENOMEM, "signing context");
	if (EVP_PKEY_sign_init(ctx) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "sign init");
		goto out;
	}
	r = setup_pkey_ctx(ctx, pkey, d->algo, diag);
	if (r < 0)
		goto out;
	if (EVP_PKEY_sign(ctx, sig, &siglen, d->bytes, d->len) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "sign");
		goto out;
	}
	s = (struct vg_sig_v2){ .type = type, .version = 2, .hash_algo = d->algo,
				.keyid = vg_signer_keyid(signer),
				.sig_size = (uint16_t)siglen, .sig = sig };
	r = vg_sig_v2_encode(&s, out, cap);
	if (r < 0)
		vg_diag_set(diag, r, "signature of %zu bytes does not fit", siglen);
out:
	EVP_PKEY_CTX_free(ctx);
	OPENSSL_cleanse(sig, sizeof(sig));
	return r;
}

int vg_sig_verify(const struct vg_keyring *kr, const uint8_t *blob, size_t len,
		  const struct vg_digest *d, struct vg_diag *diag)
{
	return vg__sig_verify_version(kr, blob, len, d, 2, diag);
}

int vg__sig_verify_version(const struct vg_keyring *kr, const uint8_t *blob, size_t len,
			   const struct vg_digest *d, unsigned int version, struct vg_diag *diag)
{
	struct vg_sig_v2 s;
	EVP_PKEY_CTX *ctx;
	const EVP_PKEY *pkey;
	int r = vg_sig_v2_decode(blob, len, &s, diag);

	if (r < 0)
		return r;
	if (s.version != version)
		return vg_diag_set(diag, -EOPNOTSUPP, "signature version %u is not %u", s.version,
				   version);
	if (d->algo != s.hash_algo)
		return vg_diag_set(diag, -EINVAL, "digest is %s, signature is over %s",
				   vg_hash_name(d->algo), vg_hash_name(s.hash_algo));
	pkey = kr ? vg_keyring_find(kr, s.keyid) : NULL;
	if (!pkey)
		return vg_diag_set(diag, -ENOKEY, "no trusted key with keyid %08x", s.keyid);
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, (EVP_PKEY *)pkey, NULL);
	if (!ctx)
		return vg_diag_ssl(diag, -ENOMEM, "verify context");
	if (EVP_PKEY_verify_init(ctx) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "verify init");
		goto out;
	}
	r = setup_pkey_ctx(ctx, pkey, s.hash_algo, diag);
	if (r < 0)
		goto out;
	if (EVP_PKEY_verify(ctx, s.sig, s.sig_size, d->bytes, d->len) != 1)
		r = vg_diag_ssl(diag, -EKEYREJECTED, "signature by key %08x does not verify",
				s.keyid);
out:
	EVP_PKEY_CTX_free(ctx);
	return r;
}
