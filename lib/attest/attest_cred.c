// SPDX-License-Identifier: MIT
/*
 * attest_cred.c - registration of an agent's TPM: its EK checked against
 * the EK certificate and a CA bundle, and TPM2_MakeCredential (TPM 2.0
 * Part 1 §24) done in OpenSSL, so that only the TPM holding that EK can
 * recover the secret bound to the AK's name.
 *
 * Nothing here talks to a TPM or a network; every input is untrusted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <tss2/tss2_mu.h>

#include "internal.h"
#include "attest_tpm.h"
#include "vigil/attest.h"

int vg_attest_key_id(const uint8_t *pub, size_t len, uint8_t id[32], struct vg_diag *diag)
{
	TPM2B_PUBLIC tp;
	EVP_PKEY *pk = NULL;
	uint8_t *der = NULL;
	int n, r;

	r = vg__attest_decode_public(pub, len, &tp, "key", diag);
	if (r == 0)
		r = vg__attest_public_pkey(&tp.publicArea, &pk, diag);
	if (r < 0)
		return r == -ENOMEM ? r : -EBADMSG;	/* @diag says what */
	n = i2d_PUBKEY(pk, &der);
	EVP_PKEY_free(pk);
	if (n <= 0) {
		vg_ssl_clear();
		return vg_diag_set(diag, -ENOMEM, "key: DER encoding");
	}
	r = EVP_Digest(der, (size_t)n, id, NULL, EVP_sha256(), NULL) == 1 ? 0 : -ENOMEM;
	OPENSSL_free(der);
	return r;
}

int vg_attest_ek_check(const uint8_t *ek_pub, size_t ek_len, const uint8_t *cert, size_t cert_len,
		       const char *ca_file, struct vg_attest_verdict *v)
{
	struct vg_diag d = { 0 };
	TPM2B_PUBLIC pub;
	EVP_PKEY *pk = NULL;
	X509 *x = NULL;
	X509_STORE *st = NULL;
	X509_STORE_CTX *ctx = NULL;
	const uint8_t *p = cert;
	int r;

	if (vg__attest_decode_public(ek_pub, ek_len, &pub, "EK", &d) < 0 ||
	    vg__attest_public_pkey(&pub.publicArea, &pk, &d) < 0) {
		r = vg_attest_fail(v, VG_AF_EK_CERT, "%s", d.msg);
		goto out;
	}
	if (!(pub.publicArea.objectAttributes & TPMA_OBJECT_RESTRICTED) ||
	    !(pub.publicArea.objectAttributes & TPMA_OBJECT_DECRYPT) ||
	    !(pub.publicArea.objectAttributes & TPMA_OBJECT_FIXEDTPM)) {
		r = vg_attest_fail(v, VG_AF_EK_CERT, "EK is not a restricted fixedTPM decryption key");
		goto out;
	}
	x = d2i_X509(NULL, &p, (long)cert_len);
	if (!x) {
		vg_ssl_clear();
		r = vg_attest_fail(v, VG_AF_EK_CERT, "EK certificate is not DER X.509");
		goto out;
	}
	if (EVP_PKEY_eq(X509_get0_pubkey(x), pk) != 1) {
		vg_ssl_clear();
		r = vg_attest_fail(v, VG_AF_EK_CERT, "EK certificate is for another key than the EK");
		goto out;
	}
	if (ca_file) {
		st = X509_STORE_new();
		ctx = X509_STORE_CTX_new();
		if (!st || !ctx) {
			r = -ENOMEM;
			goto out;
		}
		if (X509_STORE_load_file(st, ca_file) != 1) {
			vg_ssl_clear();
			r = vg_attest_fail(v, VG_AF_EK_CERT, "cannot load EK CA store %s", ca_file);
			goto out;
		}
		if (X509_STORE_CTX_init(ctx, st, x, NULL) != 1) {
			r = -ENOMEM;
			goto out;
		}
		if (X509_verify_cert(ctx) != 1) {
			r = vg_attest_fail(v, VG_AF_EK_CERT, "EK certificate does not chain to %s: %s",
					   ca_file, X509_verify_cert_error_string(
						   X509_STORE_CTX_get_error(ctx)));
			vg_ssl_clear();
			goto out;
		}
	}
	r = 0;
out:
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(x);
	EVP_PKEY_free(pk);
	return r;
}

/* KDFa (TPM 2.0 Part 1 §11.4.10.2) = SP 800-108 counter mode HMAC = OpenSSL KBKDF. */
static int kdfa(const char *md, const uint8_t *key, size_t klen, const char *label,
		const uint8_t *ctx, size_t clen, uint8_t *out, size_t olen)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "KBKDF", NULL);
	EVP_KDF_CTX *kc = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM p[7], *q = p;
	int r = -EIO;

	if (!kc)
		goto out;
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, (char *)"COUNTER", 0);
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MAC, (char *)"HMAC", 0);
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, klen);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)label, strlen(label));
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)ctx, clen);
	*q = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kc, out, olen, p) == 1)
		r = 0;
out:
	vg_ssl_clear();
	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	return r;
}

/*
 * KDFe (TPM 2.0 Part 1, 11.4.10.3; SP 800-56A's concatenation KDF): the
 * hash of counter (from 1, big-endian) || Z || label with its NUL ||
 * PartyUInfo || PartyVInfo, as many times as @olen needs.
 */
static int kdfe(const char *md, const uint8_t *z, size_t zlen, const char *label,
		const uint8_t *u, size_t ulen, const uint8_t *v, size_t vlen, uint8_t *out,
		size_t olen)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	const EVP_MD *m = EVP_get_digestbyname(md);
	uint8_t h[EVP_MAX_MD_SIZE];
	unsigned int hl = 0;
	int r = -EIO;

	if (!c || !m)
		goto out;
	for (uint32_t i = 1, done = 0; done < olen; i++) {
		uint8_t ctr[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8),
				   (uint8_t)i };

		if (EVP_DigestInit_ex(c, m, NULL) != 1 || EVP_DigestUpdate(c, ctr, 4) != 1 ||
		    EVP_DigestUpdate(c, z, zlen) != 1 ||
		    EVP_DigestUpdate(c, label, strlen(label) + 1) != 1 ||
		    EVP_DigestUpdate(c, u, ulen) != 1 || EVP_DigestUpdate(c, v, vlen) != 1 ||
		    EVP_DigestFinal_ex(c, h, &hl) != 1)
			goto out;
		memcpy(out + done, h, olen - done < hl ? olen - done : hl);
		done += olen - done < hl ? (uint32_t)(olen - done) : hl;
	}
	r = 0;
out:
	OPENSSL_cleanse(h, sizeof(h));
	EVP_MD_CTX_free(c);
	vg_ssl_clear();
	return r;
}

/*
 * The seed of an ECC EK's credential: ECDH of a fresh key on the EK's
 * curve with the EK, KDFe(nameAlg, Z.x, "IDENTITY", ephemeral.x, EK.x);
 * @es receives the ephemeral point as a marshalled TPMS_ECC_POINT.
 */
static int ecc_seed(const TPMT_PUBLIC *p, EVP_PKEY *pk, const char *mdn, uint8_t *seed,
		    size_t mdlen, uint8_t *es, size_t *es_len, struct vg_diag *diag)
{
	const char *group = p->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256 ? "prime256v1" :
			    p->parameters.eccDetail.curveID == TPM2_ECC_NIST_P384 ? "secp384r1" :
										    NULL;
	size_t fl = p->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256 ? 32 : 48;
	uint8_t pt[1 + 2 * 48], z[48];
	size_t ptl = sizeof(pt), zl = sizeof(z);
	EVP_PKEY *eph = NULL;
	EVP_PKEY_CTX *dc = NULL;
	int r = -EIO;

	if (!group)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK curve 0x%04x",
				   p->parameters.eccDetail.curveID);
	if (*es_len < 2 + fl + 2 + fl)
		return vg_diag_set(diag, -ENOSPC, "MakeCredential: output buffers too small");
	eph = EVP_PKEY_Q_keygen(NULL, NULL, "EC", group);
	dc = eph ? EVP_PKEY_CTX_new_from_pkey(NULL, eph, NULL) : NULL;
	if (!dc || EVP_PKEY_derive_init(dc) <= 0 || EVP_PKEY_derive_set_peer(dc, pk) <= 0 ||
	    EVP_PKEY_derive(dc, z, &zl) <= 0 || zl != fl ||
	    EVP_PKEY_get_octet_string_param(eph, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pt, ptl,
					    &ptl) != 1 || ptl != 1 + 2 * fl || pt[0] != 4) {
		r = vg_diag_ssl(diag, -EIO, "MakeCredential: ECDH");
		goto out;
	}
	if (kdfe(mdn, z, fl, "IDENTITY", pt + 1, fl, p->unique.ecc.x.buffer, p->unique.ecc.x.size,
		 seed, mdlen) < 0) {
		r = vg_diag_set(diag, -EIO, "MakeCredential: KDFe");
		goto out;
	}
	es[0] = (uint8_t)(fl >> 8);
	es[1] = (uint8_t)fl;
	memcpy(es + 2, pt + 1, fl);
	es[2 + fl] = (uint8_t)(fl >> 8);
	es[3 + fl] = (uint8_t)fl;
	memcpy(es + 4 + fl, pt + 1 + fl, fl);
	*es_len = 4 + 2 * fl;
	r = 0;
out:
	OPENSSL_cleanse(z, sizeof(z));
	EVP_PKEY_CTX_free(dc);
	EVP_PKEY_free(eph);
	return r;
}

/* The seed of an RSA EK's credential, RSA-OAEP(nameAlg, label "IDENTITY\0") into @es. */
static int rsa_seed(EVP_PKEY *pk, const char *mdn, uint8_t *seed, size_t mdlen, uint8_t *es,
		    size_t *es_len, struct vg_diag *diag)
{
	unsigned char *label = OPENSSL_malloc(9);
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	size_t outl = *es_len;
	int r = -EIO;

	if (!pc || !label) {
		r = -ENOMEM;
		goto out;
	}
	if (RAND_bytes(seed, (int)mdlen) != 1)
		goto out;
	memcpy(label, "IDENTITY", 9);
	if (EVP_PKEY_encrypt_init(pc) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md_name(pc, mdn, NULL) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md_name(pc, mdn, NULL) <= 0 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(pc, label, 9) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "MakeCredential: OAEP setup");
		goto out;
	}
	label = NULL;		/* owned by pc now */
	if (EVP_PKEY_encrypt(pc, es, &outl, seed, mdlen) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "MakeCredential: OAEP");
		goto out;
	}
	*es_len = outl;
	r = 0;
out:
	OPENSSL_free(label);
	EVP_PKEY_CTX_free(pc);
	return r;
}

int vg_attest_make_credential(const uint8_t *ek_pub, size_t ek_len, const uint8_t *name,
			      size_t name_len, const uint8_t *secret, size_t secret_len,
			      uint8_t *id_object, size_t *id_len, uint8_t *enc_secret,
			      size_t *es_len, struct vg_diag *diag)
{
	static const uint8_t iv[16];
	TPM2B_PUBLIC pub;
	const TPMT_PUBLIC *p = &pub.publicArea;
	const TPMT_SYM_DEF_OBJECT *sym;
	const char *mdn;
	EVP_PKEY *pk = NULL;
	EVP_CIPHER_CTX *cc = NULL;
	uint8_t seed[64], symkey[32], hmackey[64], plain[2 + 64], enc[2 + 64];
	unsigned int hlen = 0, keybits;
	size_t mdlen;
	int r, n1 = 0, n2 = 0;

	r = vg__attest_decode_public(ek_pub, ek_len, &pub, "EK", diag);
	if (r < 0)
		return r;
	if (p->type == TPM2_ALG_RSA)
		sym = &p->parameters.rsaDetail.symmetric;
	else if (p->type == TPM2_ALG_ECC)
		sym = &p->parameters.eccDetail.symmetric;
	else
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK type 0x%04x (RSA or ECC)",
				   p->type);
	mdn = vg__attest_md_name(p->nameAlg);
	if (!mdn || p->nameAlg == TPM2_ALG_SHA1)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK nameAlg 0x%04x", p->nameAlg);
	mdlen = vg_hash_size((unsigned int)vg_attest_vg_algo(p->nameAlg));
	if (sym->algorithm != TPM2_ALG_AES || sym->mode.aes != TPM2_ALG_CFB)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK symmetric scheme not AES-CFB");
	keybits = sym->keyBits.aes;
	if (keybits != 128 && keybits != 256)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: AES-%u", keybits);
	if (secret_len == 0 || secret_len > 64 || name_len == 0 || name_len > VG_ATTEST_NAME_MAX)
		return vg_diag_set(diag, -EBADMSG, "MakeCredential: secret or name size");
	if (*id_len < 2 + mdlen + 2 + secret_len ||
	    (p->type == TPM2_ALG_RSA && *es_len < p->unique.rsa.size))
		return vg_diag_set(diag, -ENOSPC, "MakeCredential: output buffers too small");
	r = vg__attest_public_pkey(p, &pk, diag);
	if (r < 0)
		return r;
	r = p->type == TPM2_ALG_RSA ? rsa_seed(pk, mdn, seed, mdlen, enc_secret, es_len, diag)
				    : ecc_seed(p, pk, mdn, seed, mdlen, enc_secret, es_len, diag);
	if (r < 0)
		goto out;
	r = -EIO;
	/* encIdentity = AES-CFB(KDFa(seed, "STORAGE", name), IV 0, TPM2B_DIGEST(secret)) */
	if (kdfa(mdn, seed, mdlen, "STORAGE", name, name_len, symkey, keybits / 8) < 0 ||
	    kdfa(mdn, seed, mdlen, "INTEGRITY", NULL, 0, hmackey, mdlen) < 0) {
		r = vg_diag_set(diag, -EIO, "MakeCredential: KDFa");
		goto out;
	}
	plain[0] = (uint8_t)(secret_len >> 8);
	plain[1] = (uint8_t)secret_len;
	memcpy(plain + 2, secret, secret_len);
	cc = EVP_CIPHER_CTX_new();
	if (!cc) {
		r = -ENOMEM;
		goto out;
	}
	if (EVP_EncryptInit_ex2(cc, keybits == 128 ? EVP_aes_128_cfb() : EVP_aes_256_cfb(), symkey,
				iv, NULL) != 1 ||
	    EVP_EncryptUpdate(cc, enc, &n1, plain, (int)(2 + secret_len)) != 1 ||
	    EVP_EncryptFinal_ex(cc, enc + n1, &n2) != 1) {
		r = vg_diag_ssl(diag, -EIO, "MakeCredential: AES-CFB");
		goto out;
	}
	/* outerHMAC = HMAC(KDFa(seed, "INTEGRITY"), encIdentity || name) */
	{
		uint8_t buf[2 + 64 + VG_ATTEST_NAME_MAX];
		size_t el = (size_t)(n1 + n2);

		memcpy(buf, enc, el);
		memcpy(buf + el, name, name_len);
		if (!HMAC(EVP_get_digestbyname(mdn), hmackey, (int)mdlen, buf, el + name_len,
			  id_object + 2, &hlen)) {
			r = vg_diag_ssl(diag, -EIO, "MakeCredential: HMAC");
			goto out;
		}
		id_object[0] = (uint8_t)(hlen >> 8);
		id_object[1] = (uint8_t)hlen;
		memcpy(id_object + 2 + hlen, enc, el);
		*id_len = 2 + hlen + el;
	}
	r = 0;
out:
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(symkey, sizeof(symkey));
	OPENSSL_cleanse(hmackey, sizeof(hmackey));
	OPENSSL_cleanse(plain, sizeof(plain));
	EVP_CIPHER_CTX_free(cc);
	EVP_PKEY_free(pk);
	return r;
}
