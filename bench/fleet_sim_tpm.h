/* SPDX-License-Identifier: MIT */
/*
 * fleet_sim_tpm.h - the software TPM of one simulated agent of
 * vigil-fleet-sim (bench/fleet_sim.c): an RSA-2048 EK as TCG template L-1
 * lays it out, with an X.509 certificate from the simulator's CA; an
 * RSA-2048 RSASSA-SHA256 AK in a TPM2B_PUBLIC with a TPM AK's attributes;
 * TPM2_ActivateCredential done in OpenSSL (the inverse of
 * vg_attest_make_credential: RSA-OAEP "IDENTITY", KDFa, the outer HMAC,
 * AES-128-CFB); and TPM2_Quote of sha256 PCRs laid out byte for byte as a
 * TPM does. The verifier cannot tell these from a TPM's.
 *
 * Not a TPM: no hierarchy, no sessions, no NV. The keys come from a pool
 * of 1024-bit primes (fsim_keypool), two of them per key: every agent's
 * keys are its own RSA-2048 pairs (distinct moduli and exponents), made
 * in seconds for 10,000 agents where 20,000 independent keys take this
 * machine an hour; keys that share a prime would be broken by a GCD across
 * them, which no verifier does. --independent-keys makes each with
 * EVP_PKEY_Q_keygen.
 */
#ifndef VIGIL_FLEET_SIM_TPM_H
#define VIGIL_FLEET_SIM_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "vigil/attest.h"

#define FSIM_PUB_MAX 1024
#define FSIM_CERT_MAX 2048

struct fsim_keypool;

/* @nkeys keys from the smallest pool of primes that has that many pairs; @threads make it. Return: 0, -ENOMEM, -EIO. */
int fsim_keypool_new(size_t nkeys, unsigned int threads, struct fsim_keypool **ret);
/* Key @i (0 .. nkeys-1) of the pool, a new EVP_PKEY with its CRT parameters. Return: 0, -EIO. */
int fsim_keypool_key(const struct fsim_keypool *kp, size_t i, EVP_PKEY **ret);
void fsim_keypool_free(struct fsim_keypool *kp);

struct fsim_ca {
	EVP_PKEY *key;			/* P-256 */
	X509 *cert;
};

/* A self-signed CA (P-256, basicConstraints CA), its certificate written to @pem_path. Return: 0, -EIO. */
int fsim_ca_new(struct fsim_ca *ca, const char *pem_path);
void fsim_ca_release(struct fsim_ca *ca);

struct fsim_tpm {
	EVP_PKEY *ek, *ak;
	uint8_t ek_pub[FSIM_PUB_MAX], ak_pub[FSIM_PUB_MAX], ek_cert[FSIM_CERT_MAX];
	size_t ek_pub_len, ak_pub_len, ek_cert_len;
	uint8_t ak_name[VG_ATTEST_NAME_MAX];
	size_t ak_name_len;
	uint32_t reset_count;
};

/*
 * fsim_tpm_init - @t with the keys @ek and @ak (taken), the EK certificate
 * for @serial signed by @ca. Return: 0, -EIO.
 */
int fsim_tpm_init(struct fsim_tpm *t, EVP_PKEY *ek, EVP_PKEY *ak, const struct fsim_ca *ca,
		  uint64_t serial);
void fsim_tpm_release(struct fsim_tpm *t);

/*
 * fsim_tpm_activate - TPM2_ActivateCredential: the secret that
 * @id_object/@enc_secret carry for this TPM's EK and AK, into @out.
 * Return: the secret's length; -EACCES (not for this EK and AK: the
 * integrity HMAC or the OAEP decryption fails), -EBADMSG, -ENOSPC, -EIO.
 */
int fsim_tpm_activate(const struct fsim_tpm *t, const uint8_t *id_object, size_t id_len,
		      const uint8_t *enc_secret, size_t es_len, uint8_t *out, size_t out_max);

/*
 * fsim_tpm_quote - TPM2_Quote by the AK over @mask of the sha256 bank,
 * whose values are @pcrs[0..23], with qualifyingData @nonce and TPM clock
 * @clock: TPMS_ATTEST into @attest, TPMT_SIGNATURE (RSASSA-SHA256) into @sig.
 * Return: 0, -ENOSPC, -EIO.
 */
int fsim_tpm_quote(const struct fsim_tpm *t, const uint8_t *nonce, size_t nonce_len,
		   uint32_t mask, const uint8_t pcrs[24][32], uint64_t clock, uint8_t *attest,
		   size_t *attest_len, uint8_t *sig, size_t *sig_len);

#endif
