// SPDX-License-Identifier: MIT
/*
 * tpm_attest.c - EK, AK, ActivateCredential and quotes on the agent's TPM
 * through ESAPI (tpm_attest.h), on the one TPM context of lib/tpm/tpm.c
 * (tpm_esys.h: TCTI, ESYS and TPM2_Startup are set up there, and TSS2_RC
 * codes are put in words there). Recipes: research notes tpm.md §2.2-2.5.
 *
 * The EK (L-1) has adminWithPolicy without userWithAuth: each use of it
 * (Create/Load of the AK, ActivateCredential) needs a fresh policy session
 * with PolicySecret(TPM_RH_ENDORSEMENT), flushed afterwards. Handles of
 * the loaded EK and AK are kept; when a command fails because they are
 * gone (TPM reset: TPM_RC_HANDLE / TPM_RC_REFERENCE_H0), they are loaded
 * again and the command repeated once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

#include "internal.h"
#include "vigil/attest.h"
#include "vigil/tpm_attest.h"
#include "vigil/tpm_esys.h"

struct vg_atpm {
	struct vg_tpm *tpm;
	ESYS_CONTEXT *ectx;		/* borrowed from tpm */
	unsigned int ek_type;		/* enum vg_atpm_ek_type */
	ESYS_TR ek, ak;
	TPM2B_PUBLIC ak_pub;
	TPM2B_PRIVATE ak_priv;
	bool have_ak;
};

static void flush(struct vg_atpm *a, ESYS_TR *h)
{
	if (*h != ESYS_TR_NONE && *h != ESYS_TR_PASSWORD)
		Esys_FlushContext(a->ectx, *h);
	*h = ESYS_TR_NONE;
}

int vg_atpm_open(const char *tcti, struct vg_atpm **ret, struct vg_diag *diag)
{
	struct vg_atpm *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->ek = a->ak = ESYS_TR_NONE;
	r = vg_tpm_open(tcti, &a->tpm, diag);
	if (r < 0) {
		free(a);
		return r;
	}
	a->ectx = vg_tpm_esys(a->tpm);
	*ret = a;
	return 0;
}

void vg_atpm_close(struct vg_atpm *a)
{
	if (!a)
		return;
	if (a->tpm) {
		flush(a, &a->ak);
		flush(a, &a->ek);
		vg_tpm_close(a->tpm);
	}
	OPENSSL_cleanse(&a->ak_priv, sizeof(a->ak_priv));
	free(a);
}

/* PolicyA (SHA-256): PolicySecret(TPM_RH_ENDORSEMENT), the L templates' authPolicy */
#define POLICY_A_SHA256 { 32, { 0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, \
				0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, \
				0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa } }

/*
 * The EK templates of the TCG EK Credential Profile (2.3), each the key
 * its certificate in NV certifies: L-1 RSA 2048, L-2 ECC NIST P-256
 * (AES-128-CFB, SHA-256, PolicyA, no user auth, unique 2 x 32 zero bytes)
 * and H-3 ECC NIST P-384 (AES-256-CFB, SHA-384, PolicyB, user auth with
 * the empty password, unique empty): the one swtpm_setup certifies in
 * 0x01c00016, the key `tpm2_createek -G ecc384` makes.
 */
static const TPM2B_PUBLIC ek_templates[] = {
	[VG_ATPM_EK_RSA2048] = { .publicArea = {
		.type = TPM2_ALG_RSA,
		.nameAlg = TPM2_ALG_SHA256,
		.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
				    TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
		.authPolicy = POLICY_A_SHA256,
		.parameters.rsaDetail = {
			.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
				       .mode.aes = TPM2_ALG_CFB },
			.scheme = { .scheme = TPM2_ALG_NULL },
			.keyBits = 2048,
			.exponent = 0,
		},
		.unique.rsa = { .size = 256 },
	} },
	[VG_ATPM_EK_ECC_P256] = { .publicArea = {
		.type = TPM2_ALG_ECC,
		.nameAlg = TPM2_ALG_SHA256,
		.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
				    TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
		.authPolicy = POLICY_A_SHA256,
		.parameters.eccDetail = {
			.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
				       .mode.aes = TPM2_ALG_CFB },
			.scheme = { .scheme = TPM2_ALG_NULL },
			.curveID = TPM2_ECC_NIST_P256,
			.kdf = { .scheme = TPM2_ALG_NULL },
		},
		.unique.ecc = { .x = { .size = 32 }, .y = { .size = 32 } },
	} },
	[VG_ATPM_EK_ECC_P384] = { .publicArea = {
		.type = TPM2_ALG_ECC,
		.nameAlg = TPM2_ALG_SHA384,
		.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
				    TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED |
				    TPMA_OBJECT_DECRYPT,
		.authPolicy = { 48, { 0xb2, 0x6e, 0x7d, 0x28, 0xd1, 0x1a, 0x50, 0xbc, 0x53, 0xd8,
				      0x82, 0xbc, 0xf5, 0xfd, 0x3a, 0x1a, 0x07, 0x41, 0x48, 0xbb,
				      0x35, 0xd3, 0xb4, 0xe4, 0xcb, 0x1c, 0x0a, 0xd9, 0xbd, 0xe4,
				      0x19, 0xca, 0xcb, 0x47, 0xba, 0x09, 0x69, 0x96, 0x46, 0x15,
				      0x0f, 0x9f, 0xc0, 0x00, 0xf3, 0xf8, 0x0e, 0x12 } },
		.parameters.eccDetail = {
			.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 256,
				       .mode.aes = TPM2_ALG_CFB },
			.scheme = { .scheme = TPM2_ALG_NULL },
			.curveID = TPM2_ECC_NIST_P384,
			.kdf = { .scheme = TPM2_ALG_NULL },
		},
	} },
};

/* where each EK's certificate is (TCG EK Credential Profile: L-1, L-2, H-3) */
static const uint32_t ek_cert_nv[] = {
	[VG_ATPM_EK_RSA2048] = 0x01c00002,
	[VG_ATPM_EK_ECC_P256] = 0x01c0000a,
	[VG_ATPM_EK_ECC_P384] = 0x01c00016,
};

static const char *const ek_names[] = {
	[VG_ATPM_EK_RSA2048] = "rsa2048",
	[VG_ATPM_EK_ECC_P256] = "ecc-p256",
	[VG_ATPM_EK_ECC_P384] = "ecc-p384",
};

int vg_atpm_ek_type_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(ek_names) / sizeof(ek_names[0]); i++)
		if (strcmp(name, ek_names[i]) == 0)
			return (int)i;
	return -ENOENT;
}

const char *vg_atpm_ek_type_name(unsigned int type)
{
	return type < sizeof(ek_names) / sizeof(ek_names[0]) ? ek_names[type] : NULL;
}

int vg_atpm_set_ek_type(struct vg_atpm *a, unsigned int type)
{
	if (type >= sizeof(ek_names) / sizeof(ek_names[0]))
		return -EINVAL;
	if (type != a->ek_type) {
		flush(a, &a->ak);
		flush(a, &a->ek);
		a->have_ak = false;
		a->ek_type = type;
	}
	return 0;
}

static int load_ek(struct vg_atpm *a, TPM2B_PUBLIC **ret_pub, struct vg_diag *diag)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION pcrs = { 0 };
	TPM2B_PUBLIC *pub = NULL;
	TSS2_RC rc;

	flush(a, &a->ek);
	rc = Esys_CreatePrimary(a->ectx, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				ESYS_TR_NONE, &sens, &ek_templates[a->ek_type], &outside, &pcrs, &a->ek,
				&pub, NULL,
				NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		a->ek = ESYS_TR_NONE;
		return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_CreatePrimary(EK)");
	}
	if (ret_pub)
		*ret_pub = pub;
	else
		Esys_Free(pub);
	return 0;
}

/*
 * The EK's authorisation for the USER role (Load under it, ActivateCredential):
 * a policy session that satisfies the L templates' PolicyA,
 * PolicySecret(TPM_RH_ENDORSEMENT); the H templates allow user auth with
 * the empty password (*@ret = ESYS_TR_PASSWORD: nothing to flush).
 */
static int ek_session(struct vg_atpm *a, ESYS_TR *ret, struct vg_diag *diag)
{
	TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	ESYS_TR s = ESYS_TR_NONE;
	TSS2_RC rc;

	if (ek_templates[a->ek_type].publicArea.objectAttributes & TPMA_OBJECT_USERWITHAUTH) {
		*ret = ESYS_TR_PASSWORD;
		return 0;
	}
	rc = Esys_StartAuthSession(a->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym, TPM2_ALG_SHA256, &s);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_StartAuthSession");
	rc = Esys_PolicySecret(a->ectx, ESYS_TR_RH_ENDORSEMENT, s, ESYS_TR_PASSWORD, ESYS_TR_NONE,
			       ESYS_TR_NONE, NULL, NULL, NULL, 0, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		flush(a, &s);
		return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_PolicySecret(endorsement)");
	}
	*ret = s;
	return 0;
}

static bool handle_gone(TSS2_RC rc)
{
	TSS2_RC b = rc & 0xfff;

	/* TPM_RC_HANDLE / REFERENCE_Hx: the loaded objects went away (reset) */
	return (rc & TSS2_RC_LAYER_MASK) == TSS2_TPM_RC_LAYER &&
	       ((b & (TPM2_RC_FMT1 | 0x3f)) == TPM2_RC_HANDLE ||
		(b >= TPM2_RC_REFERENCE_H0 && b <= TPM2_RC_REFERENCE_H6));
}

static int load_ak(struct vg_atpm *a, struct vg_diag *diag)
{
	ESYS_TR s = ESYS_TR_NONE;
	TSS2_RC rc;
	int r;

	flush(a, &a->ak);
	if (a->ek == ESYS_TR_NONE && (r = load_ek(a, NULL, diag)) < 0)
		return r;
	r = ek_session(a, &s, diag);
	if (r < 0)
		return r;
	rc = Esys_Load(a->ectx, a->ek, s, ESYS_TR_NONE, ESYS_TR_NONE, &a->ak_priv, &a->ak_pub,
		       &a->ak);
	flush(a, &s);
	if (rc != TSS2_RC_SUCCESS) {
		a->ak = ESYS_TR_NONE;
		return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_Load(AK)");
	}
	return 0;
}

/* After a TPM reset: reload EK and AK (the ESYS context itself is fine). */
static int reload(struct vg_atpm *a, struct vg_diag *diag)
{
	int r;

	/* the old handles are dead: forget them without flushing */
	Esys_TR_Close(a->ectx, &a->ak);
	Esys_TR_Close(a->ectx, &a->ek);
	a->ak = a->ek = ESYS_TR_NONE;
	r = load_ek(a, NULL, diag);
	if (r < 0 || !a->have_ak)
		return r;
	return load_ak(a, diag);
}

int vg_atpm_ek(struct vg_atpm *a, uint8_t *pub, size_t *pub_len, uint8_t *cert, size_t *cert_len,
	       struct vg_diag *diag)
{
	TPM2B_PUBLIC *p = NULL;
	TPM2B_NV_PUBLIC *nvp = NULL;
	ESYS_TR nv = ESYS_TR_NONE;
	size_t off = 0, have = 0, size;
	TSS2_RC rc;
	int r;

	r = load_ek(a, &p, diag);
	if (r < 0)
		return r;
	if (a->have_ak && (r = load_ak(a, diag)) < 0)
		goto out;
	rc = Tss2_MU_TPM2B_PUBLIC_Marshal(p, pub, *pub_len, &off);
	if (rc != TSS2_RC_SUCCESS) {
		r = vg_diag_set(diag, -ENOSPC, "EK public does not fit");
		goto out;
	}
	*pub_len = off;
	*cert_len = 0;
	r = 0;
	rc = Esys_TR_FromTPMPublic(a->ectx, ek_cert_nv[a->ek_type], ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, &nv);
	if (rc != TSS2_RC_SUCCESS)
		goto out;		/* no certificate in NV */
	rc = Esys_NV_ReadPublic(a->ectx, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nvp, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		r = vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_NV_ReadPublic(EK certificate)");
		goto out;
	}
	size = nvp->nvPublic.dataSize;
	if (size > VG_ATPM_CERT_MAX) {
		r = vg_diag_set(diag, -ENOSPC, "EK certificate of %zu bytes", size);
		goto out;
	}
	while (have < size) {
		TPM2B_MAX_NV_BUFFER *d = NULL;
		UINT16 chunk = (UINT16)(size - have > 512 ? 512 : size - have);

		rc = Esys_NV_Read(a->ectx, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				  ESYS_TR_NONE, chunk, (UINT16)have, &d);
		if (rc != TSS2_RC_SUCCESS) {
			r = vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_NV_Read(EK certificate)");
			goto out;
		}
		memcpy(cert + have, d->buffer, d->size);
		have += d->size;
		Esys_Free(d);
	}
	/* DER length, not the NV size (vendors pad) */
	if (have >= 4 && cert[0] == 0x30 && cert[1] == 0x82) {
		size_t der = 4 + ((size_t)cert[2] << 8 | cert[3]);

		if (der <= have)
			have = der;
	}
	*cert_len = have;
out:
	if (nv != ESYS_TR_NONE)
		Esys_TR_Close(a->ectx, &nv);
	Esys_Free(nvp);
	Esys_Free(p);
	return r;
}

int vg_atpm_ak_create(struct vg_atpm *a, bool rsa, uint8_t *blob, size_t *blob_len,
		      struct vg_diag *diag)
{
	TPM2B_PUBLIC tmpl = { 0 };
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION pcrs = { 0 };
	TPM2B_PUBLIC *pub = NULL;
	TPM2B_PRIVATE *priv = NULL;
	ESYS_TR s = ESYS_TR_NONE;
	size_t off = 0;
	TSS2_RC rc;
	int r;

	tmpl.publicArea.nameAlg = TPM2_ALG_SHA256;
	tmpl.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					   TPMA_OBJECT_SENSITIVEDATAORIGIN |
					   TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED |
					   TPMA_OBJECT_SIGN_ENCRYPT;
	if (rsa) {
		tmpl.publicArea.type = TPM2_ALG_RSA;
		tmpl.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
		tmpl.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
		tmpl.publicArea.parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
		tmpl.publicArea.parameters.rsaDetail.keyBits = 2048;
	} else {
		tmpl.publicArea.type = TPM2_ALG_ECC;
		tmpl.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
		tmpl.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
		tmpl.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
		tmpl.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		tmpl.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	}
	flush(a, &a->ak);
	if (a->ek == ESYS_TR_NONE && (r = load_ek(a, NULL, diag)) < 0)
		return r;
	r = ek_session(a, &s, diag);
	if (r < 0)
		return r;
	rc = Esys_Create(a->ectx, a->ek, s, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl, &outside,
			 &pcrs, &priv, &pub, NULL, NULL, NULL);
	flush(a, &s);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_Create(AK)");
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, blob, *blob_len, &off) != TSS2_RC_SUCCESS ||
	    Tss2_MU_TPM2B_PRIVATE_Marshal(priv, blob, *blob_len, &off) != TSS2_RC_SUCCESS) {
		r = vg_diag_set(diag, -ENOSPC, "AK blob does not fit");
		goto out;
	}
	*blob_len = off;
	a->ak_pub = *pub;
	a->ak_priv = *priv;
	a->have_ak = true;
	r = load_ak(a, diag);
out:
	Esys_Free(pub);
	if (priv)
		OPENSSL_cleanse(priv, sizeof(*priv));
	Esys_Free(priv);
	return r;
}

int vg_atpm_ak_load(struct vg_atpm *a, const uint8_t *blob, size_t len, struct vg_diag *diag)
{
	size_t off = 0;

	memset(&a->ak_pub, 0, sizeof(a->ak_pub));
	memset(&a->ak_priv, 0, sizeof(a->ak_priv));
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, len, &off, &a->ak_pub) != TSS2_RC_SUCCESS ||
	    Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, len, &off, &a->ak_priv) != TSS2_RC_SUCCESS ||
	    off != len)
		return vg_diag_set(diag, -EBADMSG, "AK blob is not TPM2B_PUBLIC || TPM2B_PRIVATE");
	a->have_ak = true;
	return load_ak(a, diag);
}

int vg_atpm_ak_public(struct vg_atpm *a, uint8_t *pub, size_t *len)
{
	size_t off = 0;

	if (!a->have_ak)
		return -ENOENT;
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&a->ak_pub, pub, *len, &off) != TSS2_RC_SUCCESS)
		return -ENOSPC;
	*len = off;
	return 0;
}

int vg_atpm_activate(struct vg_atpm *a, const uint8_t *id_object, size_t id_len,
		     const uint8_t *enc_secret, size_t es_len, uint8_t *out, size_t out_max,
		     struct vg_diag *diag)
{
	TPM2B_ID_OBJECT blob = { 0 };
	TPM2B_ENCRYPTED_SECRET sec = { 0 };
	TPM2B_DIGEST *cert = NULL;
	ESYS_TR s = ESYS_TR_NONE;
	TSS2_RC rc;
	int r, tries = 0;

	if (!a->have_ak)
		return vg_diag_set(diag, -ENOENT, "no AK loaded");
	if (id_len > sizeof(blob.credential) || es_len > sizeof(sec.secret))
		return vg_diag_set(diag, -EBADMSG, "credential blob too large");
	blob.size = (UINT16)id_len;
	memcpy(blob.credential, id_object, id_len);
	sec.size = (UINT16)es_len;
	memcpy(sec.secret, enc_secret, es_len);
again:
	r = ek_session(a, &s, diag);
	if (r < 0)
		return r;
	rc = Esys_ActivateCredential(a->ectx, a->ak, a->ek, ESYS_TR_PASSWORD, s, ESYS_TR_NONE, &blob,
				     &sec, &cert);
	flush(a, &s);
	if (rc != TSS2_RC_SUCCESS && handle_gone(rc) && tries++ == 0 && reload(a, diag) == 0)
		goto again;
	if (rc != TSS2_RC_SUCCESS) {
		if ((rc & 0x3f) == (TPM2_RC_INTEGRITY & 0x3f) || (rc & 0xfff) == 0x1df)
			return vg_diag_set(diag, -EACCES, "credential is not for this TPM's EK and AK "
					   "(%s)", Tss2_RC_Decode(rc));
		return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_ActivateCredential");
	}
	if (cert->size > out_max) {
		OPENSSL_cleanse(cert, sizeof(*cert));
		Esys_Free(cert);
		return -ENOSPC;
	}
	r = cert->size;
	memcpy(out, cert->buffer, cert->size);
	OPENSSL_cleanse(cert, sizeof(*cert));
	Esys_Free(cert);
	return r;
}

static int pcr_read(struct vg_atpm *a, uint16_t alg, int algo, uint32_t mask,
		    struct vg_pcr_values *pv, struct vg_diag *diag)
{
	uint32_t left = mask;

	while (left) {
		TPML_PCR_SELECTION sel = { .count = 1 };
		TPML_PCR_SELECTION *out = NULL;
		TPML_DIGEST *vals = NULL;
		uint32_t got = 0;
		size_t k = 0;
		TSS2_RC rc;

		sel.pcrSelections[0].hash = alg;
		sel.pcrSelections[0].sizeofSelect = 3;
		sel.pcrSelections[0].pcrSelect[0] = (uint8_t)left;
		sel.pcrSelections[0].pcrSelect[1] = (uint8_t)(left >> 8);
		sel.pcrSelections[0].pcrSelect[2] = (uint8_t)(left >> 16);
		rc = Esys_PCR_Read(a->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, NULL, &out,
				   &vals);
		if (rc != TSS2_RC_SUCCESS)
			return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_PCR_Read");
		if (out->count == 1)
			got = out->pcrSelections[0].pcrSelect[0] |
			      (uint32_t)out->pcrSelections[0].pcrSelect[1] << 8 |
			      (uint32_t)out->pcrSelections[0].pcrSelect[2] << 16;
		for (unsigned int i = 0; i < 24; i++) {
			if (!(got & (1u << i)))
				continue;
			if (k >= vals->count || vals->digests[k].size != vg_hash_size((unsigned int)algo))
				break;
			pv->v[algo][i].algo = (uint8_t)algo;
			pv->v[algo][i].len = (uint8_t)vals->digests[k].size;
			memcpy(pv->v[algo][i].bytes, vals->digests[k].buffer, vals->digests[k].size);
			pv->have[algo] |= 1u << i;
			k++;
		}
		Esys_Free(out);
		Esys_Free(vals);
		if (!(got & left))
			return vg_diag_set(diag, -EOPNOTSUPP, "bank not allocated");
		left &= ~got;
	}
	return 0;
}

int vg_atpm_quote(struct vg_atpm *a, const uint8_t *nonce, size_t nonce_len, unsigned int bank,
		  uint32_t mask, uint8_t *attest, size_t *attest_len, uint8_t *sig, size_t *sig_len,
		  struct vg_pcr_values *pv, struct vg_diag *diag)
{
	uint16_t alg = vg_attest_tpm_alg(bank);
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPM2B_DATA qd = { 0 };
	TPML_PCR_SELECTION sel = { .count = 1 };
	int tries = 0, r;

	if (!alg || !mask || mask >= (1u << 24) || nonce_len > sizeof(qd.buffer) ||
	    nonce_len > VG_ATTEST_NONCE_MAX)
		return vg_diag_set(diag, -EINVAL, "quote: bad bank, PCR mask or nonce");
	if (!a->have_ak)
		return vg_diag_set(diag, -ENOENT, "no AK loaded");
	qd.size = (UINT16)nonce_len;
	memcpy(qd.buffer, nonce, nonce_len);
	sel.pcrSelections[0].hash = alg;
	sel.pcrSelections[0].sizeofSelect = 3;
	sel.pcrSelections[0].pcrSelect[0] = (uint8_t)mask;
	sel.pcrSelections[0].pcrSelect[1] = (uint8_t)(mask >> 8);
	sel.pcrSelections[0].pcrSelect[2] = (uint8_t)(mask >> 16);
	for (;;) {
		TPM2B_ATTEST *q = NULL;
		TPMT_SIGNATURE *s = NULL;
		struct vg_tpms_attest dq;
		uint8_t dig[VG_HASH_MAX_DIGEST];
		size_t off = 0;
		TSS2_RC rc;
		int n;

		rc = Esys_Quote(a->ectx, a->ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qd,
				&scheme, &sel, &q, &s);
		if (rc != TSS2_RC_SUCCESS && handle_gone(rc) && tries++ == 0) {
			r = reload(a, diag);
			if (r < 0)
				return r;
			continue;
		}
		if (rc != TSS2_RC_SUCCESS)
			return vg_tpm_rc(a->tpm, diag, -EIO, rc, "TPM2_Quote");
		if (q->size > *attest_len ||
		    Tss2_MU_TPMT_SIGNATURE_Marshal(s, sig, *sig_len, &off) != TSS2_RC_SUCCESS) {
			Esys_Free(q);
			Esys_Free(s);
			return vg_diag_set(diag, -ENOSPC, "quote does not fit");
		}
		memcpy(attest, q->attestationData, q->size);
		*attest_len = q->size;
		*sig_len = off;
		Esys_Free(q);
		Esys_Free(s);
		/* the values after the quote; equal unless an extend came in between */
		memset(pv, 0, sizeof(*pv));
		r = pcr_read(a, alg, (int)bank, mask, pv, diag);
		if (r < 0)
			return r;
		if (vg_attest_quote_decode(attest, *attest_len, &dq, diag) < 0)
			return -EIO;
		n = vg_attest_pcr_digest(&dq, pv, a->ak_pub.publicArea.type == TPM2_ALG_RSA ?
					 a->ak_pub.publicArea.parameters.rsaDetail.scheme.details.anySig.hashAlg :
					 a->ak_pub.publicArea.parameters.eccDetail.scheme.details.anySig.hashAlg,
					 dig, diag);
		if (n < 0)
			return n;
		if ((size_t)n == dq.digest_len && memcmp(dig, dq.pcr_digest, (size_t)n) == 0)
			return 0;
		if (++tries > 8)
			return vg_diag_set(diag, -EAGAIN, "PCRs kept changing during the quote");
	}
}
