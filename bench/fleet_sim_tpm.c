// SPDX-License-Identifier: MIT
/*
 * fleet_sim_tpm.c - the software TPM of vigil-fleet-sim's agents
 * (fleet_sim_tpm.h): the key pool, the EK CA, the EK and AK as
 * TPM2B_PUBLIC, the EK certificate, ActivateCredential and Quote. The
 * quote's layout is bench/verifier_bench.c's (TPM 2.0 Part 2 §10.12),
 * generalised to any sha256 PCR selection; ActivateCredential undoes
 * lib/attest/attest_cred.c's MakeCredential step by step (TPM 2.0 Part 1
 * §24), with the same KDFa (SP 800-108 counter mode, OpenSSL's KBKDF).
 * It holds no global state; nothing here talks to a network.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <tss2/tss2_mu.h>

#include "fleet_sim_tpm.h"

/* ---- the key pool ---- */

struct fsim_keypool {
	size_t nprimes;
	BIGNUM **p;
	atomic_size_t next;		/* the next prime to make (threads) */
	atomic_int failed;
};

static void *prime_worker(void *arg)
{
	struct fsim_keypool *kp = arg;
	BN_CTX *ctx = BN_CTX_new();
	size_t i;

	while (ctx && (i = atomic_fetch_add(&kp->next, 1)) < kp->nprimes) {
		BIGNUM *p = BN_new();

		/* top two bits set (OpenSSL's probable_prime): p*q has 2048 bits exactly */
		while (p && BN_generate_prime_ex2(p, 1024, 0, NULL, NULL, NULL, ctx) == 1) {
			/* e = 65537 must be invertible mod p - 1 */
			if (BN_sub_word(p, 1) && BN_mod_word(p, 65537) != 0 && BN_add_word(p, 1))
				break;
			BN_add_word(p, 1);
		}
		if (!p || BN_num_bits(p) != 1024) {
			atomic_store(&kp->failed, 1);
			BN_free(p);
			break;
		}
		kp->p[i] = p;
	}
	if (!ctx)
		atomic_store(&kp->failed, 1);
	BN_CTX_free(ctx);
	return NULL;
}

int fsim_keypool_new(size_t nkeys, unsigned int threads, struct fsim_keypool **ret)
{
	struct fsim_keypool *kp = calloc(1, sizeof(*kp));
	pthread_t th[16];
	unsigned int nt = threads < 1 ? 1 : threads > 16 ? 16 : threads, started = 0;
	size_t n = 2;

	if (!kp)
		return -ENOMEM;
	while (n * (n - 1) / 2 < nkeys)
		n++;
	kp->nprimes = n;
	kp->p = calloc(n, sizeof(*kp->p));
	if (!kp->p) {
		free(kp);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < nt; i++)
		if (pthread_create(&th[started], NULL, prime_worker, kp) == 0)
			started++;
	if (!started)
		prime_worker(kp);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (atomic_load(&kp->failed)) {
		fsim_keypool_free(kp);
		return -EIO;
	}
	*ret = kp;
	return 0;
}

void fsim_keypool_free(struct fsim_keypool *kp)
{
	if (!kp)
		return;
	for (size_t i = 0; i < kp->nprimes; i++)
		BN_clear_free(kp->p[i]);
	free(kp->p);
	free(kp);
}

/* The RSA key of primes @p, @q with e = 65537 and its CRT parameters. */
static EVP_PKEY *rsa_from_primes(const BIGNUM *p, const BIGNUM *q)
{
	BN_CTX *ctx = BN_CTX_new();
	BIGNUM *n = BN_new(), *e = BN_new(), *d = BN_secure_new(), *p1 = BN_new(), *q1 = BN_new();
	BIGNUM *phi = BN_secure_new(), *dp = BN_secure_new(), *dq = BN_secure_new();
	BIGNUM *qi = BN_secure_new();
	OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
	OSSL_PARAM *prm = NULL;
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	EVP_PKEY *k = NULL;

	if (!ctx || !n || !e || !d || !p1 || !q1 || !phi || !dp || !dq || !qi || !b || !pc)
		goto out;
	if (!BN_set_word(e, 65537) || !BN_mul(n, p, q, ctx) || BN_num_bits(n) != 2048 ||
	    !BN_sub(p1, p, BN_value_one()) || !BN_sub(q1, q, BN_value_one()) ||
	    !BN_mul(phi, p1, q1, ctx) || !BN_mod_inverse(d, e, phi, ctx) ||
	    !BN_mod(dp, d, p1, ctx) || !BN_mod(dq, d, q1, ctx) || !BN_mod_inverse(qi, q, p, ctx))
		goto out;
	if (!OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, n) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, e) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_D, d) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_FACTOR1, p) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_FACTOR2, q) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_EXPONENT1, dp) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_EXPONENT2, dq) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, qi))
		goto out;
	prm = OSSL_PARAM_BLD_to_param(b);
	if (!prm || EVP_PKEY_fromdata_init(pc) <= 0 ||
	    EVP_PKEY_fromdata(pc, &k, EVP_PKEY_KEYPAIR, prm) <= 0)
		k = NULL;
out:
	OSSL_PARAM_free(prm);
	OSSL_PARAM_BLD_free(b);
	EVP_PKEY_CTX_free(pc);
	BN_free(n);
	BN_free(e);
	BN_clear_free(d);
	BN_free(p1);
	BN_free(q1);
	BN_clear_free(phi);
	BN_clear_free(dp);
	BN_clear_free(dq);
	BN_clear_free(qi);
	BN_CTX_free(ctx);
	return k;
}

int fsim_keypool_key(const struct fsim_keypool *kp, size_t i, EVP_PKEY **ret)
{
	/* pair number i = j(j-1)/2 + k, 0 <= k < j */
	size_t j = (size_t)((1.0 + sqrt(1.0 + 8.0 * (double)i)) / 2.0), k;
	EVP_PKEY *key;

	while (j * (j - 1) / 2 > i)
		j--;
	while ((j + 1) * j / 2 <= i)
		j++;
	k = i - j * (j - 1) / 2;
	if (j >= kp->nprimes)
		return -EIO;
	key = rsa_from_primes(kp->p[j], kp->p[k]);
	if (!key)
		return -EIO;
	*ret = key;
	return 0;
}

/* ---- the CA and the EK certificate ---- */

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *ex;
	int ok;

	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	ex = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (!ex)
		return -1;
	ok = X509_add_ext(x, ex, -1);
	X509_EXTENSION_free(ex);
	return ok ? 0 : -1;
}

/* A v3 certificate for @pub, @subject_cn, serial @serial, valid from a day ago for 10 years. */
static X509 *cert_new(EVP_PKEY *pub, const char *subject_cn, uint64_t serial)
{
	X509 *x = X509_new();
	X509_NAME *nm = X509_NAME_new();

	if (!x || !nm || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -86400) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 3650) ||
	    !X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)subject_cn,
					-1, -1, 0) ||
	    !X509_set_subject_name(x, nm) || !X509_set_pubkey(x, pub)) {
		X509_free(x);
		x = NULL;
	}
	X509_NAME_free(nm);
	return x;
}

int fsim_ca_new(struct fsim_ca *ca, const char *pem_path)
{
	FILE *f;
	int ok;

	memset(ca, 0, sizeof(*ca));
	ca->key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	ca->cert = ca->key ? cert_new(ca->key, "vigil-fleet-sim EK CA", 1) : NULL;
	if (!ca->cert || !X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) ||
	    add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") < 0 ||
	    !X509_sign(ca->cert, ca->key, EVP_sha256()))
		goto fail;
	f = fopen(pem_path, "wx");
	if (!f)
		goto fail;
	ok = PEM_write_X509(f, ca->cert);
	if (fclose(f) != 0 || !ok)
		goto fail;
	return 0;
fail:
	fsim_ca_release(ca);
	return -EIO;
}

void fsim_ca_release(struct fsim_ca *ca)
{
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	memset(ca, 0, sizeof(*ca));
}

/* ---- the TPM ---- */

/* TCG EK template L-1 (RSA 2048, AES-128-CFB), as lib/agent/tpm_attest.c creates it. */
static const uint8_t ek_policy[32] = {
	0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
	0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};

/* The RSA public area of @k into @p, @n's 256 bytes in unique. */
static int rsa_unique(EVP_PKEY *k, TPMT_PUBLIC *p)
{
	BIGNUM *n = NULL;

	if (!EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n) || BN_num_bytes(n) != 256) {
		BN_free(n);
		return -1;
	}
	p->unique.rsa.size = 256;
	BN_bn2binpad(n, p->unique.rsa.buffer, 256);
	BN_free(n);
	return 0;
}

static int marshal(const TPM2B_PUBLIC *p, uint8_t *buf, size_t *len)
{
	size_t off = 0;

	if (Tss2_MU_TPM2B_PUBLIC_Marshal(p, buf, FSIM_PUB_MAX, &off) != TSS2_RC_SUCCESS)
		return -1;
	*len = off;
	return 0;
}

int fsim_tpm_init(struct fsim_tpm *t, EVP_PKEY *ek, EVP_PKEY *ak, const struct fsim_ca *ca,
		  uint64_t serial)
{
	TPM2B_PUBLIC e = { 0 }, a = { 0 };
	struct vg_attest_ak *loaded = NULL;
	const uint8_t *name;
	uint8_t *der = NULL;
	X509 *x = NULL;
	char cn[64];
	int dl;

	memset(t, 0, sizeof(*t));
	t->ek = ek;
	t->ak = ak;
	t->reset_count = 1;
	e.publicArea.type = TPM2_ALG_RSA;
	e.publicArea.nameAlg = TPM2_ALG_SHA256;
	e.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
					TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	e.publicArea.authPolicy.size = 32;
	memcpy(e.publicArea.authPolicy.buffer, ek_policy, 32);
	e.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
	e.publicArea.parameters.rsaDetail.symmetric.keyBits.aes = 128;
	e.publicArea.parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
	e.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
	e.publicArea.parameters.rsaDetail.keyBits = 2048;
	/* the AK as agent_tpm.c's TPM creates it: restricted RSASSA-SHA256 signing */
	a.publicArea.type = TPM2_ALG_RSA;
	a.publicArea.nameAlg = TPM2_ALG_SHA256;
	a.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
					TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	a.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
	a.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
	a.publicArea.parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
	a.publicArea.parameters.rsaDetail.keyBits = 2048;
	if (rsa_unique(ek, &e.publicArea) < 0 || rsa_unique(ak, &a.publicArea) < 0 ||
	    marshal(&e, t->ek_pub, &t->ek_pub_len) < 0 || marshal(&a, t->ak_pub, &t->ak_pub_len) < 0)
		goto fail;
	/* the AK's name as the verifier computes it */
	if (vg_attest_ak_load(t->ak_pub, t->ak_pub_len, &loaded, NULL) < 0)
		goto fail;
	name = vg_attest_ak_name(loaded, &t->ak_name_len);
	memcpy(t->ak_name, name, t->ak_name_len);
	vg_attest_ak_free(loaded);
	/* the EK certificate, as a manufacturer's CA issues it */
	snprintf(cn, sizeof(cn), "vigil-fleet-sim EK %llu", (unsigned long long)serial);
	x = cert_new(ek, cn, serial);
	if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    add_ext(x, ca->cert, NID_key_usage, "critical,keyEncipherment") < 0 ||
	    !X509_sign(x, ca->key, EVP_sha256()))
		goto fail;
	dl = i2d_X509(x, &der);
	if (dl <= 0 || (size_t)dl > sizeof(t->ek_cert)) {
		OPENSSL_free(der);
		goto fail;
	}
	memcpy(t->ek_cert, der, (size_t)dl);
	t->ek_cert_len = (size_t)dl;
	OPENSSL_free(der);
	X509_free(x);
	return 0;
fail:
	X509_free(x);
	t->ek = t->ak = NULL;
	return -EIO;
}

void fsim_tpm_release(struct fsim_tpm *t)
{
	EVP_PKEY_free(t->ek);
	EVP_PKEY_free(t->ak);
	t->ek = t->ak = NULL;
}

/* KDFa with sha256, as attest_cred.c's kdfa: KBKDF counter mode, HMAC, label as salt. */
static int kdfa(const uint8_t *key, size_t klen, const char *label, const uint8_t *ctx,
		size_t clen, uint8_t *out, size_t olen)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "KBKDF", NULL);
	EVP_KDF_CTX *kc = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM p[7], *q = p;
	int r = -EIO;

	if (!kc)
		goto out;
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, (char *)"COUNTER", 0);
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MAC, (char *)"HMAC", 0);
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, klen);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)label, strlen(label));
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)ctx, clen);
	*q = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kc, out, olen, p) == 1)
		r = 0;
out:
	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	return r;
}

int fsim_tpm_activate(const struct fsim_tpm *t, const uint8_t *id_object, size_t id_len,
		      const uint8_t *enc_secret, size_t es_len, uint8_t *out, size_t out_max)
{
	static const uint8_t iv[16];
	uint8_t seed[512], symkey[16], hmackey[32], mac[32], plain[2 + 64];
	uint8_t buf[2 + 64 + VG_ATTEST_NAME_MAX];
	size_t seedl = sizeof(seed), hl, el;
	unsigned int ml = 0;
	unsigned char *label = OPENSSL_malloc(9);
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_pkey(NULL, t->ek, NULL);
	EVP_CIPHER_CTX *cc = NULL;
	int r = -EIO, n1 = 0, n2 = 0, sl;

	if (!label || !pc) {
		r = -ENOMEM;
		goto out;
	}
	/* id_object: TPM2B outer HMAC || encIdentity */
	if (id_len < 2) {
		r = -EBADMSG;
		goto out;
	}
	hl = (size_t)id_object[0] << 8 | id_object[1];
	if (hl != 32 || id_len < 2 + hl + 2 || id_len - 2 - hl > 2 + 64) {
		r = -EBADMSG;
		goto out;
	}
	el = id_len - 2 - hl;
	/* seed = RSA-OAEP-SHA256 decryption with label "IDENTITY\0" */
	memcpy(label, "IDENTITY", 9);
	if (EVP_PKEY_decrypt_init(pc) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md_name(pc, "SHA256", NULL) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md_name(pc, "SHA256", NULL) <= 0 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(pc, label, 9) <= 0)
		goto out;
	label = NULL;		/* owned by pc */
	if (EVP_PKEY_decrypt(pc, seed, &seedl, enc_secret, es_len) <= 0 || seedl != 32) {
		r = -EACCES;
		goto out;
	}
	/* integrity first: HMAC(KDFa(seed, "INTEGRITY"), encIdentity || name) */
	if (kdfa(seed, seedl, "INTEGRITY", NULL, 0, hmackey, sizeof(hmackey)) < 0 ||
	    kdfa(seed, seedl, "STORAGE", t->ak_name, t->ak_name_len, symkey, sizeof(symkey)) < 0)
		goto out;
	memcpy(buf, id_object + 2 + hl, el);
	memcpy(buf + el, t->ak_name, t->ak_name_len);
	if (!HMAC(EVP_sha256(), hmackey, sizeof(hmackey), buf, el + t->ak_name_len, mac, &ml) ||
	    ml != 32)
		goto out;
	if (CRYPTO_memcmp(mac, id_object + 2, 32) != 0) {
		r = -EACCES;
		goto out;
	}
	cc = EVP_CIPHER_CTX_new();
	if (!cc || EVP_DecryptInit_ex2(cc, EVP_aes_128_cfb(), symkey, iv, NULL) != 1 ||
	    EVP_DecryptUpdate(cc, plain, &n1, id_object + 2 + hl, (int)el) != 1 ||
	    EVP_DecryptFinal_ex(cc, plain + n1, &n2) != 1)
		goto out;
	if (n1 + n2 < 2) {
		r = -EBADMSG;
		goto out;
	}
	sl = plain[0] << 8 | plain[1];
	if (sl != n1 + n2 - 2) {
		r = -EBADMSG;
		goto out;
	}
	if ((size_t)sl > out_max) {
		r = -ENOSPC;
		goto out;
	}
	memcpy(out, plain + 2, (size_t)sl);
	r = sl;
out:
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(symkey, sizeof(symkey));
	OPENSSL_cleanse(hmackey, sizeof(hmackey));
	OPENSSL_cleanse(plain, sizeof(plain));
	OPENSSL_free(label);
	EVP_CIPHER_CTX_free(cc);
	EVP_PKEY_CTX_free(pc);
	return r;
}

static void put(uint8_t **p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

int fsim_tpm_quote(const struct fsim_tpm *t, const uint8_t *nonce, size_t nonce_len,
		   uint32_t mask, const uint8_t pcrs[24][32], uint64_t clock, uint8_t *attest,
		   size_t *attest_len, uint8_t *sig, size_t *sig_len)
{
	uint8_t dig[32], der[512], *p = attest;
	size_t dl = sizeof(der), need = 4 + 2 + 2 + t->ak_name_len + 2 + nonce_len + 17 + 8 +
		    4 + 2 + 1 + 3 + 2 + 32;
	EVP_MD_CTX *md;
	int r = -EIO;

	if (*attest_len < need || *sig_len < 6 + 256 || nonce_len > VG_ATTEST_NONCE_MAX)
		return -ENOSPC;
	/* pcrDigest: sha256 over the selected PCRs' values, lowest first */
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		goto out;
	for (unsigned int i = 0; i < 24; i++)
		if ((mask & (1u << i)) && EVP_DigestUpdate(md, pcrs[i], 32) != 1)
			goto out;
	if (EVP_DigestFinal_ex(md, dig, NULL) != 1)
		goto out;
	/* TPMS_ATTEST of type TPM_ST_ATTEST_QUOTE */
	put(&p, TPM2_GENERATED_VALUE, 4);
	put(&p, TPM2_ST_ATTEST_QUOTE, 2);
	put(&p, t->ak_name_len, 2);
	memcpy(p, t->ak_name, t->ak_name_len);
	p += t->ak_name_len;
	put(&p, nonce_len, 2);
	memcpy(p, nonce, nonce_len);
	p += nonce_len;
	put(&p, clock, 8);			/* clockInfo: clock, */
	put(&p, t->reset_count, 4);		/* resetCount, */
	put(&p, 0, 4);				/* restartCount, */
	put(&p, 1, 1);				/* safe */
	put(&p, 0x2019102300163636ull, 8);	/* firmwareVersion */
	put(&p, 1, 4);				/* TPML_PCR_SELECTION: one bank */
	put(&p, TPM2_ALG_SHA256, 2);
	put(&p, 3, 1);
	put(&p, mask & 0xff, 1);
	put(&p, (mask >> 8) & 0xff, 1);
	put(&p, (mask >> 16) & 0xff, 1);
	put(&p, 32, 2);
	memcpy(p, dig, 32);
	p += 32;
	*attest_len = (size_t)(p - attest);
	EVP_MD_CTX_reset(md);
	/* TPMT_SIGNATURE: RSASSA, sha256, TPM2B of the PKCS#1 v1.5 signature */
	if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, t->ak) <= 0 ||
	    EVP_DigestSign(md, der, &dl, attest, *attest_len) <= 0 || dl != 256)
		goto out;
	p = sig;
	put(&p, TPM2_ALG_RSASSA, 2);
	put(&p, TPM2_ALG_SHA256, 2);
	put(&p, dl, 2);
	memcpy(p, der, dl);
	p += dl;
	*sig_len = (size_t)(p - sig);
	r = 0;
out:
	EVP_MD_CTX_free(md);
	return r;
}
