// SPDX-License-Identifier: MIT
/*
 * tpm.c - the TPM through tpm2-tss ESAPI: context, PCRs, seal/unseal under
 * PolicyPCR. The only file of libvigil that includes <tss2/...>.
 *
 * Every function flushes the transient objects and sessions it created
 * before returning (there may be no resource manager, and swtpm has three
 * object slots). The SRK is re-derived per call from a fixed template
 * (the TCG provisioning guidance's ECC P-256 storage key), never
 * persisted: the owner seed makes it the same key every time.
 *
 * Not here yet: EK/AK, quotes, credential activation (attestation).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "vigil/tpm_esys.h"

struct vg_tpm {
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *ectx;
	uint32_t banks;			/* allocated banks, bit (1 << vg algo) */
	bool broken;			/* an ESYS/TCTI-level failure: renew before use */
	char tcti_conf[];		/* to reconnect */
};

static const struct {
	uint8_t algo;
	uint16_t alg;
} algs[] = {
	{ VG_HASH_SHA1, TPM2_ALG_SHA1 },
	{ VG_HASH_SHA256, TPM2_ALG_SHA256 },
	{ VG_HASH_SHA384, TPM2_ALG_SHA384 },
	{ VG_HASH_SHA512, TPM2_ALG_SHA512 },
	{ VG_HASH_SM3_256, TPM2_ALG_SM3_256 },
	{ VG_HASH_SHA3_256, TPM2_ALG_SHA3_256 },
	{ VG_HASH_SHA3_384, TPM2_ALG_SHA3_384 },
	{ VG_HASH_SHA3_512, TPM2_ALG_SHA3_512 },
};

uint16_t vg_tpm_alg(unsigned int algo)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].algo == algo)
			return algs[i].alg;
	return 0;
}

static int algo_of(uint16_t alg)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == alg)
			return algs[i].algo;
	return -1;
}

/*
 * Record a TSS2_RC in words; the code too, since decoders differ. An error
 * from below the TPM (ESYS itself, the TCTI, marshalling) may leave the
 * ESYS context mid-command, after which every call fails with "bad
 * sequence": mark the context for renewal.
 */
int vg_tpm_rc(struct vg_tpm *tpm, struct vg_diag *d, int err, TSS2_RC rc, const char *what)
{
	if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER &&
	    (rc & TSS2_RC_LAYER_MASK) != TSS2_RESMGR_TPM_RC_LAYER)
		tpm->broken = true;
	return vg_diag_set(d, err, "%s: %s (TPM rc 0x%x)", what, Tss2_RC_Decode(rc), rc);
}

/* Flush every transient object and loaded session in range @first. */
static void flush_all(struct vg_tpm *tpm, TPM2_HANDLE first)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;

	if (Esys_GetCapability(tpm->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
			       first, TPM2_MAX_CAP_HANDLES, &more, &cap) != TSS2_RC_SUCCESS)
		return;
	for (UINT32 i = 0; i < cap->data.handles.count; i++) {
		ESYS_TR h;

		if (Esys_TR_FromTPMPublic(tpm->ectx, cap->data.handles.handle[i], ESYS_TR_NONE,
					  ESYS_TR_NONE, ESYS_TR_NONE, &h) == TSS2_RC_SUCCESS)
			Esys_FlushContext(tpm->ectx, h);
	}
	Esys_Free(cap);
}

/*
 * A fresh ESYS context on the same TCTI after a failure below the TPM, and
 * the objects and sessions the failed sequence left in the TPM flushed
 * (there is one client without a resource manager, and a resource manager
 * shows each client only its own).
 */
static int renew(struct vg_tpm *tpm, struct vg_diag *diag)
{
	TSS2_RC rc;

	if (!tpm->broken)
		return 0;
	/* a new connection too: the old one may hold half a response */
	if (tpm->ectx)
		Esys_Finalize(&tpm->ectx);
	tpm->ectx = NULL;
	if (tpm->tcti)
		Tss2_TctiLdr_Finalize(&tpm->tcti);
	tpm->tcti = NULL;
	rc = Tss2_TctiLdr_Initialize(tpm->tcti_conf, &tpm->tcti);
	if (rc != TSS2_RC_SUCCESS) {
		tpm->tcti = NULL;
		return vg_diag_set(diag, -ENODEV, "reconnecting to the TPM at TCTI '%s': %s",
				   tpm->tcti_conf, Tss2_RC_Decode(rc));
	}
	rc = Esys_Initialize(&tpm->ectx, tpm->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		tpm->ectx = NULL;
		return vg_diag_set(diag, -EIO, "renewing the ESYS context: %s (TPM rc 0x%x)",
				   Tss2_RC_Decode(rc), rc);
	}
	tpm->broken = false;
	/* TPM2_TRANSIENT_FIRST, TPM2_LOADED_SESSION_FIRST (the macros shift a signed 0x80) */
	flush_all(tpm, 0x80000000u);
	flush_all(tpm, 0x02000000u);
	return 0;
}

/* The TPM-layer error number, without the parameter/handle/session index. */
static TSS2_RC rc_base(TSS2_RC rc)
{
	if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER)
		return rc;
	return (rc & TPM2_RC_FMT1) ? (rc & (TPM2_RC_FMT1 | 0x3f)) : (rc & 0xfff);
}

static void flush(struct vg_tpm *tpm, ESYS_TR *h)
{
	/* a broken context refuses; renew() flushes what is left in the TPM */
	if (*h != ESYS_TR_NONE && !tpm->broken &&
	    Esys_FlushContext(tpm->ectx, *h) != TSS2_RC_SUCCESS)
		tpm->broken = true;
	*h = ESYS_TR_NONE;
}

static int load_banks(struct vg_tpm *tpm, struct vg_diag *diag)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;
	TSS2_RC rc = Esys_GetCapability(tpm->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					TPM2_CAP_PCRS, 0, 1, &more, &cap);

	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_GetCapability(PCRS)");
	tpm->banks = 0;
	for (UINT32 i = 0; i < cap->data.assignedPCR.count && i < TPM2_NUM_PCR_BANKS; i++) {
		const TPMS_PCR_SELECTION *s = &cap->data.assignedPCR.pcrSelections[i];
		int a = algo_of(s->hash);
		bool any = false;

		for (unsigned int b = 0; b < s->sizeofSelect && b < sizeof(s->pcrSelect); b++)
			any |= s->pcrSelect[b] != 0;
		if (a >= 0 && any)
			tpm->banks |= 1u << a;
	}
	Esys_Free(cap);
	return 0;
}

int vg_tpm_open(const char *tcti, struct vg_tpm **ret, struct vg_diag *diag)
{
	struct vg_tpm *tpm;
	TSS2_RC rc;
	int r;

	if (!tcti || !*tcti)
		tcti = VG_TPM_TCTI_DEFAULT;
	tpm = calloc(1, sizeof(*tpm) + strlen(tcti) + 1);
	if (!tpm)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	strcpy(tpm->tcti_conf, tcti);
	rc = Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
	if (rc != TSS2_RC_SUCCESS) {
		free(tpm);
		return vg_diag_set(diag, -ENODEV, "TPM at TCTI '%s' cannot be reached: %s",
				   tcti, Tss2_RC_Decode(rc));
	}
	rc = Esys_Initialize(&tpm->ectx, tpm->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		r = vg_tpm_rc(tpm, diag, -EIO, rc, "ESYS initialization");
		Tss2_TctiLdr_Finalize(&tpm->tcti);
		free(tpm);
		return r;
	}
	rc = Esys_Startup(tpm->ectx, TPM2_SU_CLEAR);
	if (rc != TSS2_RC_SUCCESS && rc_base(rc) != TPM2_RC_INITIALIZE) {
		r = vg_tpm_rc(tpm, diag, (rc & TSS2_RC_LAYER_MASK) == TSS2_TPM_RC_LAYER ? -EIO : -ENODEV,
			    rc, "TPM2_Startup");
		vg_tpm_close(tpm);
		return r;
	}
	r = load_banks(tpm, diag);
	if (r < 0) {
		vg_tpm_close(tpm);
		return r;
	}
	*ret = tpm;
	return 0;
}

ESYS_CONTEXT *vg_tpm_esys(struct vg_tpm *tpm)
{
	return tpm->ectx;
}

void vg_tpm_close(struct vg_tpm *tpm)
{
	if (!tpm)
		return;
	if (tpm->ectx)
		Esys_Finalize(&tpm->ectx);
	if (tpm->tcti)
		Tss2_TctiLdr_Finalize(&tpm->tcti);
	free(tpm);
}

uint32_t vg_tpm_banks(struct vg_tpm *tpm)
{
	return tpm->banks;
}

static void set_sel(TPML_PCR_SELECTION *sel, uint16_t alg, uint32_t mask)
{
	memset(sel, 0, sizeof(*sel));
	sel->count = 1;
	sel->pcrSelections[0].hash = alg;
	sel->pcrSelections[0].sizeofSelect = 3;
	sel->pcrSelections[0].pcrSelect[0] = mask & 0xff;
	sel->pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
	sel->pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;
}

static int check_sel(const struct vg_tpm_pcrs *p, uint16_t *alg, struct vg_diag *diag)
{
	*alg = vg_tpm_alg(p->bank);
	if (!*alg || !vg_hash_size(p->bank))
		return vg_diag_set(diag, -EINVAL, "no TPM PCR bank for hash algorithm %u", p->bank);
	if (!p->mask || p->mask >> VG_PCR_COUNT)
		return vg_diag_set(diag, -EINVAL, "PCR selection 0x%x is empty or beyond PCR 23",
				   p->mask);
	return 0;
}

int vg_tpm_pcr_read_sel(struct vg_tpm *tpm, struct vg_tpm_pcrs *p, struct vg_diag *diag)
{
	uint32_t left = p->mask;
	size_t dlen = vg_hash_size(p->bank);
	uint16_t alg;
	int r = check_sel(p, &alg, diag);

	if (r < 0 || (r = renew(tpm, diag)) < 0)
		return r;
	if (!(tpm->banks & (1u << p->bank)))
		return vg_diag_set(diag, -ENOENT, "the TPM has no %s PCR bank", vg_hash_name(p->bank));
	while (left) {
		TPML_PCR_SELECTION sel, *out = NULL;
		TPML_DIGEST *vals = NULL;
		UINT32 counter;
		uint32_t got = 0;
		UINT32 k = 0;
		TSS2_RC rc;

		set_sel(&sel, alg, left);
		rc = Esys_PCR_Read(tpm->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel,
				   &counter, &out, &vals);
		if (rc != TSS2_RC_SUCCESS)
			return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_PCR_Read");
		if (out->count == 1 && out->pcrSelections[0].hash == alg) {
			const TPMS_PCR_SELECTION *s = &out->pcrSelections[0];

			for (unsigned int i = 0; i < VG_PCR_COUNT && i / 8 < s->sizeofSelect; i++) {
				if (!(s->pcrSelect[i / 8] & (1u << (i % 8))) || !(left & (1u << i)))
					continue;
				if (k >= vals->count || vals->digests[k].size != dlen) {
					Esys_Free(out);
					Esys_Free(vals);
					return vg_diag_set(diag, -EIO, "TPM2_PCR_Read returned a short list");
				}
				memcpy(p->values[i], vals->digests[k].buffer, dlen);
				got |= 1u << i;
				k++;
			}
		}
		Esys_Free(out);
		Esys_Free(vals);
		if (!got)
			return vg_diag_set(diag, -ENOENT, "the TPM returned no %s PCR values",
					   vg_hash_name(p->bank));
		left &= ~got;
	}
	return 0;
}

int vg_tpm_pcr_read(struct vg_tpm *tpm, unsigned int pcr, unsigned int algo,
		    struct vg_digest *ret, struct vg_diag *diag)
{
	struct vg_tpm_pcrs p = { .bank = algo, .mask = 1u << (pcr & 31) };
	int r;

	if (pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EINVAL, "PCR %u: the TPM has PCRs 0 to 23", pcr);
	r = vg_tpm_pcr_read_sel(tpm, &p, diag);
	if (r < 0)
		return r;
	ret->algo = (uint8_t)algo;
	ret->len = (uint8_t)vg_hash_size(algo);
	memcpy(ret->bytes, p.values[pcr], ret->len);
	return 0;
}

int vg_tpm_pcr_extend(struct vg_tpm *tpm, unsigned int pcr, const struct vg_digest *d,
		      size_t n, struct vg_diag *diag)
{
	TPML_DIGEST_VALUES v = { 0 };
	TSS2_RC rc;
	int r;

	if (pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EINVAL, "PCR %u: the TPM has PCRs 0 to 23", pcr);
	r = renew(tpm, diag);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		uint16_t alg = vg_tpm_alg(d[i].algo);

		if (d[i].len != vg_hash_size(d[i].algo) || d[i].len == 0)
			return vg_diag_set(diag, -EINVAL, "digest %zu: %u bytes is not a %s digest",
					   i, d[i].len, vg_hash_name(d[i].algo) ?: "known");
		if (!alg || !(tpm->banks & (1u << d[i].algo)))
			continue;	/* as the TPM does for unallocated banks */
		if (v.count >= TPM2_NUM_PCR_BANKS)
			return vg_diag_set(diag, -EINVAL, "more than %d digests", TPM2_NUM_PCR_BANKS);
		v.digests[v.count].hashAlg = alg;
		memcpy(&v.digests[v.count].digest, d[i].bytes, d[i].len);
		v.count++;
	}
	if (!v.count)
		return 0;
	rc = Esys_PCR_Extend(tpm->ectx, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE,
			     ESYS_TR_NONE, &v);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_PCR_Extend");
	return 0;
}

int vg_tpm_reset_count(struct vg_tpm *tpm, uint32_t *ret, struct vg_diag *diag)
{
	TPMS_TIME_INFO *ti = NULL;
	TSS2_RC rc;
	int r = renew(tpm, diag);

	if (r < 0)
		return r;
	rc = Esys_ReadClock(tpm->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &ti);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_ReadClock");
	*ret = ti->clockInfo.resetCount;
	Esys_Free(ti);
	return 0;
}

static int ops_reset_count(void *ctx, uint32_t *ret, struct vg_diag *diag)
{
	return vg_tpm_reset_count(ctx, ret, diag);
}

static int ops_extend(void *ctx, unsigned int pcr, const struct vg_digest *d, size_t n,
		      struct vg_diag *diag)
{
	return vg_tpm_pcr_extend(ctx, pcr, d, n, diag);
}

static int ops_read(void *ctx, unsigned int pcr, unsigned int algo, struct vg_digest *ret,
		    struct vg_diag *diag)
{
	return vg_tpm_pcr_read(ctx, pcr, algo, ret, diag);
}

static uint32_t ops_banks(void *ctx)
{
	return vg_tpm_banks(ctx);
}

const struct vg_pcr_ops vg_tpm_pcr_ops = {
	.extend = ops_extend,
	.read = ops_read,
	.banks = ops_banks,
	.reset_count = ops_reset_count,
	.attestable = true,
};

int vg_tpm_random(struct vg_tpm *tpm, uint8_t *buf, size_t len, struct vg_diag *diag)
{
	int r = renew(tpm, diag);

	if (r < 0)
		return r;
	while (len) {
		TPM2B_DIGEST *rnd = NULL;
		TSS2_RC rc = Esys_GetRandom(tpm->ectx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					    len > 32 ? 32 : (UINT16)len, &rnd);
		size_t n;

		if (rc != TSS2_RC_SUCCESS)
			return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_GetRandom");
		n = rnd->size < len ? rnd->size : len;
		memcpy(buf, rnd->buffer, n);
		OPENSSL_cleanse(rnd->buffer, sizeof(rnd->buffer));
		Esys_Free(rnd);
		if (!n)
			return vg_diag_set(diag, -EIO, "TPM2_GetRandom returned nothing");
		buf += n;
		len -= n;
	}
	return 0;
}

int vg_tpm_policy_pcr(const struct vg_tpm_pcrs *p, uint8_t ret[32], struct vg_diag *diag)
{
	uint8_t buf[32 + 4 + sizeof(TPML_PCR_SELECTION)];
	uint8_t vals[VG_PCR_COUNT * VG_HASH_MAX_DIGEST];
	size_t dlen = vg_hash_size(p->bank), vlen = 0, off = 36;
	TPML_PCR_SELECTION sel;
	uint16_t alg;
	int r = check_sel(p, &alg, diag);

	if (r < 0)
		return r;
	memset(buf, 0, 32);
	buf[32] = 0;
	buf[33] = 0;
	buf[34] = (TPM2_CC_PolicyPCR >> 8) & 0xff;
	buf[35] = TPM2_CC_PolicyPCR & 0xff;
	set_sel(&sel, alg, p->mask);
	if (Tss2_MU_TPML_PCR_SELECTION_Marshal(&sel, buf, sizeof(buf) - 32, &off) != TSS2_RC_SUCCESS)
		return vg_diag_set(diag, -EIO, "marshalling the PCR selection");
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
		if (p->mask & (1u << i)) {
			memcpy(vals + vlen, p->values[i], dlen);
			vlen += dlen;
		}
	/* sha256 always exists: a failure here is memory, not -EOPNOTSUPP */
	if (!EVP_Digest(vals, vlen, buf + off, NULL, EVP_sha256(), NULL))
		return vg_diag_ssl(diag, -EIO, "SHA-256 of the PCR values");
	off += 32;
	if (!EVP_Digest(buf, off, ret, NULL, EVP_sha256(), NULL))
		return vg_diag_ssl(diag, -EIO, "SHA-256 of the policy");
	return 0;
}

/* The SRK: TCG provisioning guidance ECC P-256 template, owner hierarchy. */
static int create_srk(struct vg_tpm *tpm, ESYS_TR *ret, struct vg_diag *diag)
{
	static const TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_ECC,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					    TPMA_OBJECT_SENSITIVEDATAORIGIN |
					    TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA |
					    TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
			.parameters.eccDetail = {
				.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
					       .mode.aes = TPM2_ALG_CFB },
				.scheme.scheme = TPM2_ALG_NULL,
				.curveID = TPM2_ECC_NIST_P256,
				.kdf.scheme = TPM2_ALG_NULL,
			},
			.unique.ecc = { .x.size = 32, .y.size = 32 },
		},
	};
	static const TPM2B_SENSITIVE_CREATE sens = { 0 };
	static const TPM2B_DATA outside = { 0 };
	static const TPML_PCR_SELECTION none = { 0 };
	TSS2_RC rc;
	int r = renew(tpm, diag);

	if (r < 0)
		return r;
	rc = Esys_CreatePrimary(tpm->ectx, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				ESYS_TR_NONE, &sens, &tmpl, &outside, &none, ret, NULL, NULL, NULL,
				NULL);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "creating the storage root key (TPM2_CreatePrimary)");
	return 0;
}

/* A session salted to @srk, AES-128-CFB parameter encryption in direction @dir. */
static int start_session(struct vg_tpm *tpm, ESYS_TR srk, TPM2_SE type, TPMA_SESSION dir,
			 ESYS_TR *ret, struct vg_diag *diag)
{
	static const TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
					  .mode.aes = TPM2_ALG_CFB };
	TSS2_RC rc = Esys_StartAuthSession(tpm->ectx, srk, ESYS_TR_NONE, ESYS_TR_NONE,
					   ESYS_TR_NONE, ESYS_TR_NONE, NULL, type, &sym,
					   TPM2_ALG_SHA256, ret);

	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_StartAuthSession");
	rc = Esys_TRSess_SetAttributes(tpm->ectx, *ret, dir | TPMA_SESSION_CONTINUESESSION, 0xff);
	if (rc != TSS2_RC_SUCCESS) {
		flush(tpm, ret);
		return vg_tpm_rc(tpm, diag, -EIO, rc, "setting session attributes");
	}
	return 0;
}

#define SEAL_ATTRS (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_ADMINWITHPOLICY | \
		    TPMA_OBJECT_NODA)

int vg_tpm_seal(struct vg_tpm *tpm, const uint8_t *secret, size_t len,
		const struct vg_tpm_pcrs *p, uint8_t *blob, size_t blob_max,
		struct vg_diag *diag)
{
	TPM2B_PUBLIC pub = {
		.publicArea = {
			.type = TPM2_ALG_KEYEDHASH,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = SEAL_ATTRS,
			.authPolicy.size = 32,
			.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
		},
	};
	static const TPM2B_DATA outside = { 0 };
	static const TPML_PCR_SELECTION none = { 0 };
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_PUBLIC *opub = NULL;
	TPM2B_PRIVATE *opriv = NULL;
	ESYS_TR srk = ESYS_TR_NONE, sess = ESYS_TR_NONE;
	size_t off = 0;
	TSS2_RC rc;
	int r;

	if (!len || len > VG_TPM_SEAL_MAX || len > sizeof(sens.sensitive.data.buffer))
		return vg_diag_set(diag, -EINVAL, "a sealed secret is 1 to %d bytes", VG_TPM_SEAL_MAX);
	r = vg_tpm_policy_pcr(p, pub.publicArea.authPolicy.buffer, diag);
	if (r < 0)
		return r;
	r = create_srk(tpm, &srk, diag);
	if (r < 0)
		return r;
	r = start_session(tpm, srk, TPM2_SE_HMAC, TPMA_SESSION_DECRYPT, &sess, diag);
	if (r < 0)
		goto out;
	sens.sensitive.data.size = (UINT16)len;
	memcpy(sens.sensitive.data.buffer, secret, len);
	rc = Esys_Create(tpm->ectx, srk, sess, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &pub, &outside,
			 &none, &opriv, &opub, NULL, NULL, NULL);
	OPENSSL_cleanse(&sens, sizeof(sens));
	if (rc != TSS2_RC_SUCCESS) {
		r = vg_tpm_rc(tpm, diag, -EIO, rc, "creating the sealed object (TPM2_Create)");
		goto out;
	}
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(opub, blob, blob_max, &off) != TSS2_RC_SUCCESS ||
	    Tss2_MU_TPM2B_PRIVATE_Marshal(opriv, blob, blob_max, &off) != TSS2_RC_SUCCESS) {
		r = vg_diag_set(diag, -ENOSPC, "sealed object larger than %zu bytes", blob_max);
		goto out;
	}
	r = (int)off;
out:
	Esys_Free(opub);
	Esys_Free(opriv);
	flush(tpm, &sess);
	flush(tpm, &srk);
	return r;
}

/* After a refused unseal: which PCRs of @p differ now? Fills @diag. */
static int explain_refusal(struct vg_tpm *tpm, const struct vg_tpm_pcrs *p, TSS2_RC rc,
			   struct vg_diag *diag)
{
	struct vg_tpm_pcrs now = { .bank = p->bank, .mask = p->mask };
	size_t dlen = vg_hash_size(p->bank);
	char list[VG_PCR_COUNT * 4] = "";
	size_t n = 0, changed = 0;

	if (vg_tpm_pcr_read_sel(tpm, &now, NULL) < 0)
		return vg_tpm_rc(tpm, diag, -EACCES, rc, "the TPM refused to unseal (PCR policy)");
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		if (!(p->mask & (1u << i)) || memcmp(now.values[i], p->values[i], dlen) == 0)
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u", changed ? ", " : "", i);
		changed++;
	}
	if (!changed)
		return vg_tpm_rc(tpm, diag, -EACCES, rc,
			       "the TPM refused to unseal although the PCRs match the sealed values");
	return vg_diag_set(diag, -EACCES, "the TPM refused to unseal: PCR%s %s (%s) differ%s from the sealed state",
			   changed > 1 ? "s" : "", list, vg_hash_name(p->bank),
			   changed > 1 ? "" : "s");
}

static int check_sealed_public(const TPM2B_PUBLIC *pub, const struct vg_tpm_pcrs *p,
			       struct vg_diag *diag)
{
	const TPMT_PUBLIC *a = &pub->publicArea;
	uint8_t want[32];
	int r;

	if (a->type != TPM2_ALG_KEYEDHASH || a->nameAlg != TPM2_ALG_SHA256 ||
	    a->parameters.keyedHashDetail.scheme.scheme != TPM2_ALG_NULL)
		return vg_diag_set(diag, -EBADMSG, "sealed object: not a sealed keyed-hash object");
	if ((a->objectAttributes & (SEAL_ATTRS | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT |
				    TPMA_OBJECT_DECRYPT | TPMA_OBJECT_RESTRICTED)) != SEAL_ATTRS)
		return vg_diag_set(diag, -EBADMSG,
				   "sealed object: attributes 0x%x allow use without the PCR policy",
				   a->objectAttributes);
	r = vg_tpm_policy_pcr(p, want, diag);
	if (r < 0)
		return r;
	if (a->authPolicy.size != 32 || memcmp(a->authPolicy.buffer, want, 32) != 0)
		return vg_diag_set(diag, -EBADMSG,
				   "sealed object: its policy is not the PCR binding the key file states");
	return 0;
}

static int parse_blob(const uint8_t *blob, size_t blob_len, const struct vg_tpm_pcrs *p,
		      TPM2B_PUBLIC *pub, TPM2B_PRIVATE *priv, struct vg_diag *diag)
{
	size_t off = 0;
	uint16_t alg;
	int r = check_sel(p, &alg, diag);

	if (r < 0)
		return r;
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, blob_len, &off, pub) != TSS2_RC_SUCCESS ||
	    Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, blob_len, &off, priv) != TSS2_RC_SUCCESS)
		return vg_diag_set(diag, -EBADMSG, "sealed object: truncated or malformed");
	if (off != blob_len)
		return vg_diag_set(diag, -EBADMSG, "sealed object: %zu trailing bytes", blob_len - off);
	return check_sealed_public(pub, p, diag);
}

int vg_tpm_blob_check(const uint8_t *blob, size_t blob_len, const struct vg_tpm_pcrs *p,
		      struct vg_diag *diag)
{
	TPM2B_PUBLIC pub = { 0 };
	TPM2B_PRIVATE priv = { 0 };

	return parse_blob(blob, blob_len, p, &pub, &priv, diag);
}

int vg_tpm_unseal(struct vg_tpm *tpm, const uint8_t *blob, size_t blob_len,
		  const struct vg_tpm_pcrs *p, uint8_t *out, size_t out_max,
		  struct vg_diag *diag)
{
	static const TPM2B_DIGEST empty = { 0 };
	TPM2B_PUBLIC pub = { 0 };
	TPM2B_PRIVATE priv = { 0 };
	TPML_PCR_SELECTION sel;
	ESYS_TR srk = ESYS_TR_NONE, obj = ESYS_TR_NONE, sess = ESYS_TR_NONE;
	uint16_t alg = vg_tpm_alg(p->bank);
	TSS2_RC rc = TSS2_RC_SUCCESS;
	int r = parse_blob(blob, blob_len, p, &pub, &priv, diag);

	if (r < 0)
		return r;
	set_sel(&sel, alg, p->mask);
	r = create_srk(tpm, &srk, diag);
	if (r < 0)
		return r;
	rc = Esys_Load(tpm->ectx, srk, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, &obj);
	if (rc != TSS2_RC_SUCCESS) {
		r = vg_tpm_rc(tpm, diag, (rc & TPM2_RC_FMT1) ? -EBADMSG : -EIO, rc,
			    "the TPM rejected the sealed object (corrupted, or made by another TPM or before TPM2_Clear)");
		goto out;
	}
	/* another extender between PolicyPCR and Unseal: retry the session */
	for (int tries = 0; tries < 3; tries++) {
		TPM2B_SENSITIVE_DATA *data = NULL;

		r = start_session(tpm, srk, TPM2_SE_POLICY, TPMA_SESSION_ENCRYPT, &sess, diag);
		if (r < 0)
			goto out;
		rc = Esys_PolicyPCR(tpm->ectx, sess, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				    &empty, &sel);
		if (rc != TSS2_RC_SUCCESS) {
			r = vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_PolicyPCR");
			goto out;
		}
		rc = Esys_Unseal(tpm->ectx, obj, sess, ESYS_TR_NONE, ESYS_TR_NONE, &data);
		flush(tpm, &sess);
		if (rc == TSS2_RC_SUCCESS) {
			if (data->size > out_max) {
				r = vg_diag_set(diag, -ENOSPC, "sealed secret of %u bytes, room for %zu",
						data->size, out_max);
			} else {
				memcpy(out, data->buffer, data->size);
				r = data->size;
			}
			OPENSSL_cleanse(data, sizeof(*data));
			Esys_Free(data);
			goto out;
		}
		if (rc_base(rc) != TPM2_RC_PCR_CHANGED)
			break;
	}
	if (rc_base(rc) == TPM2_RC_POLICY_FAIL || rc_base(rc) == TPM2_RC_PCR_CHANGED)
		r = explain_refusal(tpm, p, rc, diag);
	else
		r = vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_Unseal");
out:
	flush(tpm, &sess);
	flush(tpm, &obj);
	flush(tpm, &srk);
	return r;
}
