/* SPDX-License-Identifier: MIT */
/*
 * tpm_attest.h - the agent's side of remote attestation on the TPM: the
 * endorsement key (TCG template L-1, RSA 2048) and its certificate from
 * NV, an attestation key under the EK (restricted signing, ECC P-256
 * ECDSA-SHA256 or RSA-2048 RSASSA-SHA256), TPM2_ActivateCredential, and
 * quotes with the PCR values they cover.
 *
 * A struct vg_atpm is its own ESYS context on one TCTI (tpm.h's struct
 * vg_tpm keeps its ESYS context private; one accessor there would let
 * both share a context). It keeps the EK and the AK loaded (2 of swtpm's
 * 3 object slots); after a TPM reset (handles gone) the next call loads
 * them again from the AK blob. Every session is flushed before return.
 *
 * Errors: -ENODEV (no TPM), -EBADMSG (blob malformed), -EACCES
 * (credential not for this TPM/AK: integrity check failed), -ENOSPC,
 * -ENOMEM, -EIO (other TPM error; the diag decodes the response code).
 */
#ifndef VIGIL_TPM_ATTEST_H
#define VIGIL_TPM_ATTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/pcrbank.h"

#define VG_ATPM_PUB_MAX 1024		/* marshalled TPM2B_PUBLIC */
#define VG_ATPM_BLOB_MAX 2048		/* AK: TPM2B_PUBLIC || TPM2B_PRIVATE */
#define VG_ATPM_CERT_MAX 4096
#define VG_ATPM_ATTEST_MAX 1024
#define VG_ATPM_SIG_MAX 1024

struct vg_atpm;

enum vg_atpm_ek_type {
	VG_ATPM_EK_RSA2048 = 0,		/* template L-1, certificate in NV 0x01c00002 */
	VG_ATPM_EK_ECC_P256,		/* L-2, 0x01c0000a */
	VG_ATPM_EK_ECC_P384,		/* H-3, 0x01c00016 (swtpm_setup's ECC EK) */
};

/* "rsa2048", "ecc-p256", "ecc-p384". Return: the type, -ENOENT. */
int vg_atpm_ek_type_by_name(const char *name);
/* Return: the type's name, NULL out of range. */
const char *vg_atpm_ek_type_name(unsigned int type);

/* @tcti NULL: VG_TPM_TCTI_DEFAULT (device:/dev/tpmrm0); the one TPM context of tpm.h. Return: 0, -ENODEV, -ENOMEM, -EIO. */
int vg_atpm_open(const char *tcti, struct vg_atpm **ret, struct vg_diag *diag);
void vg_atpm_close(struct vg_atpm *a);

/*
 * vg_atpm_set_ek_type - which EK the calls below use (default
 * VG_ATPM_EK_RSA2048); an AK loaded under another EK is dropped (an AK is
 * the EK's child: load one made under this EK). Return: 0, -EINVAL.
 */
int vg_atpm_set_ek_type(struct vg_atpm *a, unsigned int type);

/*
 * vg_atpm_ek - the EK (re-created from its template: the same key as the
 * one the EK certificate certifies) as marshalled TPM2B_PUBLIC, and the
 * certificate from its NV index (DER, trailing padding cut).
 * *@cert_len = 0 when the TPM has none.
 * Return: 0, -ENOSPC, -EIO.
 */
int vg_atpm_ek(struct vg_atpm *a, uint8_t *pub, size_t *pub_len, uint8_t *cert, size_t *cert_len,
	       struct vg_diag *diag);

/*
 * vg_atpm_ak_create - create an AK under the EK and load it.
 * @blob receives TPM2B_PUBLIC || TPM2B_PRIVATE (keep it: loading is
 * cheap, creating an RSA key takes up to seconds).
 * Return: 0, -ENOSPC, -EIO.
 */
int vg_atpm_ak_create(struct vg_atpm *a, bool rsa, uint8_t *blob, size_t *blob_len,
		      struct vg_diag *diag);

/* vg_atpm_ak_load - load an AK blob under the EK. Return: 0, -EBADMSG, -EIO. */
int vg_atpm_ak_load(struct vg_atpm *a, const uint8_t *blob, size_t len, struct vg_diag *diag);

/* The loaded AK's TPM2B_PUBLIC, marshalled. Return: 0, -ENOENT (no AK), -ENOSPC. */
int vg_atpm_ak_public(struct vg_atpm *a, uint8_t *pub, size_t *len);

/*
 * vg_atpm_activate - TPM2_ActivateCredential with the AK and the EK:
 * @id_object/@enc_secret as vg_attest_make_credential made them.
 * Return: secret length (in @out), -EACCES (not for this EK/AK), -EBADMSG,
 * -ENOSPC, -EIO.
 */
int vg_atpm_activate(struct vg_atpm *a, const uint8_t *id_object, size_t id_len,
		     const uint8_t *enc_secret, size_t es_len, uint8_t *out, size_t out_max,
		     struct vg_diag *diag);

/*
 * vg_atpm_quote - TPM2_Quote with the AK over @mask of bank @bank
 * (vg hash algo) with qualifyingData @nonce, and the PCR values it
 * covers (read around the quote, retried until they hash to its
 * pcrDigest: an extend may land between read and quote).
 * @attest: TPMS_ATTEST bytes; @sig: marshalled TPMT_SIGNATURE.
 * Return: 0, -EINVAL, -EAGAIN (PCRs kept moving), -ENOSPC, -EIO.
 */
int vg_atpm_quote(struct vg_atpm *a, const uint8_t *nonce, size_t nonce_len, unsigned int bank,
		  uint32_t mask, uint8_t *attest, size_t *attest_len, uint8_t *sig, size_t *sig_len,
		  struct vg_pcr_values *pv, struct vg_diag *diag);

#endif
