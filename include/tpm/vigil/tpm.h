/* SPDX-License-Identifier: MIT */
/*
 * tpm.h - the TPM 2.0, through tpm2-tss ESAPI: the one place in vigil that
 * talks to a TPM.
 *
 * A struct vg_tpm is one ESYS context on one TCTI (swtpm:path=..., swtpm:
 * host=...,port=..., device:/dev/tpmrm0, tabrmd:...). It is not shared
 * between threads. Every transient object and session it creates is
 * flushed before the call returns, on success and on failure, so it also
 * works without a resource manager (swtpm, /dev/tpm0: 3 object slots).
 *
 * What is here: PCR read and extend (any allocated bank), the PCR store
 * interface of pcr.h, and sealing a short secret under PolicyPCR to an SRK
 * re-derived from a fixed template (ECC P-256 in the owner hierarchy).
 * NV monotonic counters are nvcounter.c.
 * Later additions (EK/AK, quote, ActivateCredential) take the same
 * struct vg_tpm and follow the same rules.
 *
 * tpm2-tss logs TPM errors to stderr itself, governed by $TSS2_LOG; a
 * program that wants silence sets TSS2_LOG=all+none before vg_tpm_open().
 * libvigil reports every error through struct vg_diag only, with the TPM
 * response code decoded into words (Tss2_RC_Decode).
 *
 * Errors: -ENODEV (no TPM behind the TCTI), -EACCES (a policy check
 * failed: the PCRs differ from the sealed state), -EBADMSG (malformed
 * blob), -EOPNOTSUPP (bank not allocated), -ENOMEM, -EIO (other TPM error).
 */
#ifndef VIGIL_TPM_H
#define VIGIL_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/pcr.h"

/* The production TCTI, used when the caller names none (programs read $VIGIL_TCTI). */
#define VG_TPM_TCTI_DEFAULT "device:/dev/tpmrm0"

/* Largest sealed object (TPM2B_PUBLIC + TPM2B_PRIVATE, marshalled) accepted. */
#define VG_TPM_BLOB_MAX 2048
/* Largest secret that can be sealed (TPM2B_SENSITIVE_DATA on most TPMs). */
#define VG_TPM_SEAL_MAX 128

struct vg_tpm;

/* A PCR selection in one bank, with the values bound (or to be bound). */
struct vg_tpm_pcrs {
	unsigned int bank;			/* enum vg_hash_algo: sha1, sha256, ... */
	uint32_t mask;				/* bit i = PCR i, i < VG_PCR_COUNT */
	uint8_t values[VG_PCR_COUNT][VG_HASH_MAX_DIGEST];	/* by PCR index */
};

/*
 * vg_tpm_open - connect to a TPM and send TPM2_Startup(CLEAR) (a TPM that
 * is already started is fine).
 * @tcti: TCTI configuration string; NULL or "" means VG_TPM_TCTI_DEFAULT
 *        (the library reads no environment: $VIGIL_TCTI is the programs').
 * Return: 0 and *@ret; -ENODEV (TCTI cannot be loaded or reached), -ENOMEM,
 *         -EIO.
 */
int vg_tpm_open(const char *tcti, struct vg_tpm **ret, struct vg_diag *diag);

/* Close the context and the TCTI. NULL-safe. */
void vg_tpm_close(struct vg_tpm *tpm);

/* Return: bitmask of allocated PCR banks, bit (1 << enum vg_hash_algo). */
uint32_t vg_tpm_banks(struct vg_tpm *tpm);

/*
 * vg_tpm_pcr_read - read PCR @pcr of bank @algo.
 * Return: 0; -EINVAL (pcr >= 24); -ENOENT (bank not allocated); -EIO.
 */
int vg_tpm_pcr_read(struct vg_tpm *tpm, unsigned int pcr, unsigned int algo,
		    struct vg_digest *ret, struct vg_diag *diag);

/*
 * vg_tpm_pcr_read_sel - read every PCR of @p->mask in bank @p->bank into
 * @p->values (PCR_Read returns at most 8 digests per call: this loops).
 * Return: 0; -EINVAL; -ENOENT (bank not allocated); -EIO.
 */
int vg_tpm_pcr_read_sel(struct vg_tpm *tpm, struct vg_tpm_pcrs *p, struct vg_diag *diag);

/*
 * vg_tpm_pcr_extend - extend PCR @pcr with @n digests in one TPM2_PCR_Extend,
 * one per bank; digests for banks the TPM has not allocated are dropped.
 * Return: 0; -EINVAL (pcr >= 24, bad digest size); -EIO.
 */
int vg_tpm_pcr_extend(struct vg_tpm *tpm, unsigned int pcr, const struct vg_digest *d,
		      size_t n, struct vg_diag *diag);

/*
 * vg_tpm_reset_count - clockInfo.resetCount (TPM2_ReadClock): incremented
 * by every TPM Reset (Startup(CLEAR) after a power cycle or a Shutdown(CLEAR)),
 * which also resets the PCRs; zeroed only by TPM2_Clear.
 * Return: 0 and *@ret; -EIO.
 */
int vg_tpm_reset_count(struct vg_tpm *tpm, uint32_t *ret, struct vg_diag *diag);

/* pcr.h store over a TPM: ctx is a struct vg_tpm *; attestable; reset_count. */
extern const struct vg_pcr_ops vg_tpm_pcr_ops;

/*
 * vg_tpm_policy_pcr - the PolicyPCR digest (sha256 session) over @p's
 * selection and values, computed in software exactly as the TPM does:
 * SHA-256(0^32 || TPM_CC_PolicyPCR || TPML_PCR_SELECTION || H(values)).
 * Return: 0; -EINVAL (empty selection, unknown bank); -EIO.
 */
int vg_tpm_policy_pcr(const struct vg_tpm_pcrs *p, uint8_t ret[32], struct vg_diag *diag);

/*
 * vg_tpm_seal - seal @secret (1..VG_TPM_SEAL_MAX bytes) in a keyed-hash
 * object under the SRK, openable only by PolicyPCR over @p's selection
 * with @p's values (the caller reads current values with
 * vg_tpm_pcr_read_sel or supplies expected future ones). The secret
 * travels encrypted (salted session, decrypt attribute).
 * @blob receives the marshalled TPM2B_PUBLIC || TPM2B_PRIVATE.
 * Return: length written to @blob (<= @blob_max); -EINVAL; -ENOSPC; -EIO.
 */
int vg_tpm_seal(struct vg_tpm *tpm, const uint8_t *secret, size_t len,
		const struct vg_tpm_pcrs *p, uint8_t *blob, size_t blob_max,
		struct vg_diag *diag);

/*
 * vg_tpm_unseal - load @blob under the SRK and unseal it through a salted,
 * response-encrypted policy session with PolicyPCR over @p's selection.
 * The object must be a sealed keyed-hash with adminWithPolicy, without
 * userWithAuth, whose authPolicy equals vg_tpm_policy_pcr(@p): so the
 * file's stated binding is the TPM's. When the TPM refuses, the current
 * PCR values are compared with @p's and the diag names the ones that
 * differ ("PCR 7, 23 (sha256) differ from the sealed state").
 * Return: secret length (written to @out, <= @out_max); -EACCES (PCRs
 *         differ); -EBADMSG (blob malformed, not a sealed object, or bound
 *         differently than @p says); -ENOSPC; -EIO.
 */
int vg_tpm_unseal(struct vg_tpm *tpm, const uint8_t *blob, size_t blob_len,
		  const struct vg_tpm_pcrs *p, uint8_t *out, size_t out_max,
		  struct vg_diag *diag);

/*
 * vg_tpm_blob_check - the checks vg_tpm_unseal makes before using the TPM:
 * @blob is exactly TPM2B_PUBLIC || TPM2B_PRIVATE, a sealed keyed-hash
 * object openable only by PolicyPCR over @p. No TPM needed; fuzzing
 * entry point (with vg_key_file_decode).
 * Return: 0; -EINVAL (bad selection); -EBADMSG.
 */
int vg_tpm_blob_check(const uint8_t *blob, size_t blob_len, const struct vg_tpm_pcrs *p,
		      struct vg_diag *diag);

/*
 * vg_tpm_random - @len bytes from the TPM's RNG (TPM2_GetRandom, looped).
 * Return: 0; -EIO.
 */
int vg_tpm_random(struct vg_tpm *tpm, uint8_t *buf, size_t len, struct vg_diag *diag);

/*
 * NV monotonic counters (nvcounter.c). vigil's own is defined with an
 * empty authValue, read and incremented with it (TPMA_NV_AUTHREAD,
 * TPMA_NV_AUTHWRITE, TPMA_NV_OWNERREAD, TPMA_NV_NO_DA, not orderly):
 * anyone may advance it, no one can make it go back.
 * VG_TPM_COUNTER_DEFAULT is in the TCG's owner range (0x01000000 to
 * 0x013fffff): "VGS".
 */
#define VG_TPM_COUNTER_DEFAULT 0x01564753u

/*
 * vg_tpm_counter_define - define @index as an 8-byte TPM2_NT_COUNTER in
 * the owner hierarchy (empty owner password) unless it exists already as
 * a counter. A new counter cannot be read until first incremented.
 * Return: 1 (defined), 0 (there already); -EINVAL (not an NV index);
 *         -EMEDIUMTYPE (the index exists and is not a counter); -EACCES
 *         (the owner hierarchy has a password); -EIO.
 */
int vg_tpm_counter_define(struct vg_tpm *tpm, uint32_t index, struct vg_diag *diag);

/*
 * vg_tpm_counter_read - the value of counter @index, after checking that
 * the TPM says it is a counter (an ordinary index could hold any value).
 * Return: 0 and *@ret; -ENOENT (no such index: never defined, or the TPM
 *         was cleared); -EMEDIUMTYPE (not a counter); -ENODATA (never
 *         incremented); -EINVAL; -EIO.
 */
int vg_tpm_counter_read(struct vg_tpm *tpm, uint32_t index, uint64_t *ret, struct vg_diag *diag);

/*
 * vg_tpm_counter_increment - TPM2_NV_Increment of counter @index (the
 * first one sets it to the largest value any counter of the TPM held).
 * Return: 0; -ENOENT; -EMEDIUMTYPE; -EINVAL; -EIO.
 */
int vg_tpm_counter_increment(struct vg_tpm *tpm, uint32_t index, struct vg_diag *diag);

/* Return: the TPM algorithm id (TPM2_ALG_SHA256 = 0x000b, ...) of a kernel hash id, 0 if none. */
uint16_t vg_tpm_alg(unsigned int algo);

#endif
