// SPDX-License-Identifier: MIT
/*
 * attest.c - TPM quote structures and their verification without a TPM:
 * TPMS_ATTEST and TPMT_SIGNATURE decoded field by field, the AK from its
 * TPM2B_PUBLIC (tss2-mu) into an EVP_PKEY, signature/nonce/selection/
 * pcrDigest checks, clockInfo tracking, tpm2-tools' serialized PCR file,
 * the EK certificate check and TPM2_MakeCredential in OpenSSL.
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
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <tss2/tss2_mu.h>

#include "internal.h"
#include "vigil/attest.h"

static const char *const fail_ids[VG_AF__COUNT] = {
	[VG_AF_NONE] = "ok",
	[VG_AF_MALFORMED] = "quote.malformed",
	[VG_AF_SIG_SCHEME] = "quote.scheme",
	[VG_AF_SIGNATURE] = "quote.signature",
	[VG_AF_NOT_QUOTE] = "quote.type",
	[VG_AF_NONCE] = "quote.nonce",
	[VG_AF_PCR_SELECTION] = "quote.selection",
	[VG_AF_PCR_DIGEST] = "quote.pcr_digest",
	[VG_AF_CLOCK] = "quote.clock",
	[VG_AF_UNSAFE] = "quote.unsafe",
	[VG_AF_AK] = "identity.ak",
	[VG_AF_EK_CERT] = "identity.ek_cert",
	[VG_AF_EK_CHANGED] = "identity.ek_changed",
	[VG_AF_CREDENTIAL] = "identity.credential",
	[VG_AF_LOG_MALFORMED] = "log.malformed",
	[VG_AF_LOG_ENTRY] = "log.entry_digest",
	[VG_AF_LOG_PCR] = "log.pcr_mismatch",
	[VG_AF_LOG_PROGRESS] = "log.progress",
	[VG_AF_NOT_IN_POLICY] = "policy.not_in_policy",
	[VG_AF_DIGEST] = "policy.digest",
	[VG_AF_SIG_INVALID] = "policy.signature",
	[VG_AF_VIOLATION] = "policy.violation",
	[VG_AF_BOOT_AGGREGATE] = "policy.boot_aggregate",
	[VG_AF_REBOOT] = "state.reboot",
	[VG_AF_COMM] = "agent.comm",
	[VG_AF_BOOT_MALFORMED] = "boot.malformed",
	[VG_AF_BOOT_PCR] = "boot.pcr_mismatch",
	[VG_AF_BOOT_VALUE] = "boot.pcr_value",
	[VG_AF_BOOT_AGG] = "boot.aggregate",
};

const char *vg_attest_fail_id(unsigned int f)
{
	return f < VG_AF__COUNT ? fail_ids[f] : NULL;
}

int vg_attest_fail_by_id(const char *id)
{
	for (unsigned int i = 0; i < VG_AF__COUNT; i++)
		if (strcmp(fail_ids[i], id) == 0)
			return (int)i;
	return -ENOENT;
}

void vg_attest_verdict_init(struct vg_attest_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->entry = -1;
}

int vg_attest_fail(struct vg_attest_verdict *v, unsigned int fail, const char *fmt, ...)
{
	va_list ap;

	if (!v)
		return 1;
	v->fail = fail;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
	return 1;
}

static const struct {
	uint8_t algo;
	uint16_t alg;
	const char *ossl;
} algs[] = {
	{ VG_HASH_SHA1, TPM2_ALG_SHA1, "SHA1" },
	{ VG_HASH_SHA256, TPM2_ALG_SHA256, "SHA256" },
	{ VG_HASH_SHA384, TPM2_ALG_SHA384, "SHA384" },
	{ VG_HASH_SHA512, TPM2_ALG_SHA512, "SHA512" },
	{ VG_HASH_SM3_256, TPM2_ALG_SM3_256, "SM3" },
};

uint16_t vg_attest_tpm_alg(unsigned int algo)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(algs); i++)
		if (algs[i].algo == algo)
			return algs[i].alg;
	return 0;
}

int vg_attest_vg_algo(uint16_t alg)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(algs); i++)
		if (algs[i].alg == alg)
			return algs[i].algo;
	return -1;
}

/* ---- big-endian reader ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
	const char *field;		/* first field that did not fit */
};

static bool need(struct rd *r, size_t n, const char *field)
{
	if (r->field)
		return false;
	if (r->len - r->off < n) {
		r->field = field;
		return false;
	}
	return true;
}

static uint64_t get(struct rd *r, unsigned int n, const char *field)
{
	uint64_t v = 0;

	if (!need(r, n, field))
		return 0;
	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | r->p[r->off + i];
	r->off += n;
	return v;
}

static uint16_t get_2b(struct rd *r, uint8_t *out, size_t cap, const char *field)
{
	uint16_t n = (uint16_t)get(r, 2, field);

	if (r->field)
		return 0;
	if (n > cap) {
		r->field = field;
		return 0;
	}
	if (!need(r, n, field))
		return 0;
	memcpy(out, r->p + r->off, n);
	r->off += n;
	return n;
}

int vg_attest_quote_decode(const uint8_t *buf, size_t len, struct vg_tpms_attest *q,
			   struct vg_diag *diag)
{
	struct rd r = { .p = buf, .len = len };

	memset(q, 0, sizeof(*q));
	q->magic = (uint32_t)get(&r, 4, "magic");
	q->type = (uint16_t)get(&r, 2, "type");
	q->signer_len = get_2b(&r, q->signer, sizeof(q->signer), "qualifiedSigner");
	q->extra_len = get_2b(&r, q->extra, sizeof(q->extra), "extraData");
	q->clock = get(&r, 8, "clockInfo.clock");
	q->reset_count = (uint32_t)get(&r, 4, "clockInfo.resetCount");
	q->restart_count = (uint32_t)get(&r, 4, "clockInfo.restartCount");
	q->safe = (uint8_t)get(&r, 1, "clockInfo.safe");
	q->firmware = get(&r, 8, "firmwareVersion");
	if (r.field)
		goto bad;
	if (q->type != TPM2_ST_ATTEST_QUOTE)
		return vg_diag_set(diag, -EBADMSG, "TPMS_ATTEST: type 0x%04x is not a quote (0x8018)",
				   q->type);
	q->nsel = (uint32_t)get(&r, 4, "pcrSelect.count");
	if (!r.field && q->nsel > VG_ATTEST_SEL_MAX)
		return vg_diag_set(diag, -EBADMSG, "TPMS_ATTEST: %" PRIu32 " PCR selections (max %d)",
				   q->nsel, VG_ATTEST_SEL_MAX);
	for (uint32_t i = 0; i < q->nsel && !r.field; i++) {
		q->sel[i].alg = (uint16_t)get(&r, 2, "pcrSelect.hash");
		q->sel[i].size = (uint8_t)get(&r, 1, "pcrSelect.sizeofSelect");
		if (!r.field && q->sel[i].size > 4)
			return vg_diag_set(diag, -EBADMSG, "TPMS_ATTEST: sizeofSelect %u (max 4)",
					   q->sel[i].size);
		if (need(&r, q->sel[i].size, "pcrSelect.pcrSelect")) {
			memcpy(q->sel[i].bits, buf + r.off, q->sel[i].size);
			r.off += q->sel[i].size;
		}
	}
	q->digest_len = get_2b(&r, q->pcr_digest, sizeof(q->pcr_digest), "pcrDigest");
	if (r.field)
		goto bad;
	if (r.off != len)
		return vg_diag_set(diag, -EBADMSG, "TPMS_ATTEST: %zu trailing bytes", len - r.off);
	return 0;
bad:
	return vg_diag_set(diag, -EBADMSG, "TPMS_ATTEST: %s truncated or too long at byte %zu",
			   r.field, r.off);
}

int vg_attest_sig_decode(const uint8_t *buf, size_t len, struct vg_tpmt_signature *s,
			 struct vg_diag *diag)
{
	struct rd r = { .p = buf, .len = len };

	memset(s, 0, sizeof(*s));
	s->alg = (uint16_t)get(&r, 2, "sigAlg");
	s->hash = (uint16_t)get(&r, 2, "hash");
	if (r.field)
		goto bad;
	switch (s->alg) {
	case TPM2_ALG_RSASSA:
	case TPM2_ALG_RSAPSS:
		s->len = get_2b(&r, s->sig, sizeof(s->sig), "signature.sig");
		break;
	case TPM2_ALG_ECDSA:
		s->r_len = get_2b(&r, s->r, sizeof(s->r), "signature.r");
		s->s_len = get_2b(&r, s->s, sizeof(s->s), "signature.s");
		break;
	default:
		return vg_diag_set(diag, -EOPNOTSUPP, "TPMT_SIGNATURE: algorithm 0x%04x", s->alg);
	}
	if (r.field)
		goto bad;
	if (r.off != len)
		return vg_diag_set(diag, -EBADMSG, "TPMT_SIGNATURE: %zu trailing bytes", len - r.off);
	return 0;
bad:
	return vg_diag_set(diag, -EBADMSG, "TPMT_SIGNATURE: %s truncated or too long", r.field);
}

/* tss2's in-memory layout of the structs tpm2-tools dumps, little-endian on x86. */
#define TT_SEL_SIZE 8			/* TPMS_PCR_SELECTION: u16, u8, u8[4], pad */
#define TT_SELLIST_SIZE (4 + 16 * TT_SEL_SIZE)
#define TT_2B_SIZE (2 + 64)		/* TPM2B_DIGEST */
#define TT_DIGLIST_SIZE (4 + 8 * TT_2B_SIZE)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int vg_attest_pcrs_tpm2tools(const uint8_t *buf, size_t len, struct vg_pcr_values *pv,
			     struct vg_diag *diag)
{
	uint32_t nsel, nlists, list = 0, in_list = 0;
	const uint8_t *dl;
	int added = 0;

	if (len < TT_SELLIST_SIZE + 4)
		return vg_diag_set(diag, -EBADMSG, "PCR file: %zu bytes, too short", len);
	nsel = le32(buf);
	if (nsel > 16)
		return vg_diag_set(diag, -EBADMSG, "PCR file: %" PRIu32 " selections", nsel);
	nlists = le32(buf + TT_SELLIST_SIZE);
	if (nlists > 64 || len != TT_SELLIST_SIZE + 4 + (size_t)nlists * TT_DIGLIST_SIZE)
		return vg_diag_set(diag, -EBADMSG, "PCR file: %zu bytes do not hold %" PRIu32
				   " digest lists", len, nlists);
	dl = buf + TT_SELLIST_SIZE + 4;
	for (uint32_t i = 0; i < nsel; i++) {
		const uint8_t *s = buf + 4 + i * TT_SEL_SIZE;
		uint16_t alg = (uint16_t)(s[0] | s[1] << 8);
		uint8_t size = s[2];
		int algo = vg_attest_vg_algo(alg);

		if (algo < 0 || size > 3)
			return vg_diag_set(diag, -EBADMSG, "PCR file: selection %" PRIu32
					   " bank 0x%04x size %u", i, alg, size);
		for (unsigned int pcr = 0; pcr < 8u * size; pcr++) {
			const uint8_t *d;
			uint16_t dlen;

			if (!(s[3 + pcr / 8] & (1u << (pcr % 8))))
				continue;
			while (list < nlists && in_list >= le32(dl + (size_t)list * TT_DIGLIST_SIZE)) {
				list++;
				in_list = 0;
			}
			if (list >= nlists || in_list >= 8)
				return vg_diag_set(diag, -EBADMSG, "PCR file: fewer values than selected");
			d = dl + (size_t)list * TT_DIGLIST_SIZE + 4 + in_list * TT_2B_SIZE;
			dlen = (uint16_t)(d[0] | d[1] << 8);
			if (dlen != vg_hash_size((unsigned int)algo))
				return vg_diag_set(diag, -EBADMSG, "PCR file: PCR %u value of %u bytes",
						   pcr, dlen);
			pv->v[algo][pcr].algo = (uint8_t)algo;
			pv->v[algo][pcr].len = (uint8_t)dlen;
			memcpy(pv->v[algo][pcr].bytes, d + 2, dlen);
			pv->have[algo] |= 1u << pcr;
			in_list++;
			added++;
		}
	}
	return added;
}

/* ---- keys ---- */

struct vg_attest_ak {
	EVP_PKEY *pkey;
	EVP_MD *md;			/* the scheme's hash, fetched once */
	uint16_t sig_alg, hash_alg;
	size_t name_len;
	uint8_t name[VG_ATTEST_NAME_MAX];
};

static const char *md_name(uint16_t alg)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(algs); i++)
		if (algs[i].alg == alg)
			return algs[i].ossl;
	return NULL;
}

static int pkey_rsa(const TPM2B_PUBLIC_KEY_RSA *n, uint32_t exp, EVP_PKEY **ret,
		    struct vg_diag *diag)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BIGNUM *bn = NULL, *be = NULL;
	int r = -ENOMEM;

	if (!bld)
		goto out;
	bn = BN_bin2bn(n->buffer, n->size, NULL);
	be = BN_new();
	if (!bn || !be || !BN_set_word(be, exp ? exp : 65537))
		goto out;
	if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	if (!params || !ctx)
		goto out;
	if (EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, ret, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		r = vg_diag_ssl(diag, -EBADMSG, "RSA public key");
		goto out;
	}
	r = 0;
out:
	BN_free(bn);
	BN_free(be);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX_free(ctx);
	return r;
}

static int pkey_ecc(uint16_t curve, const TPMS_ECC_POINT *pt, EVP_PKEY **ret, struct vg_diag *diag)
{
	const char *group;
	size_t fl;
	uint8_t pub[1 + 2 * 66];
	OSSL_PARAM params[3];
	EVP_PKEY_CTX *ctx;
	int r = 0;

	switch (curve) {
	case TPM2_ECC_NIST_P256: group = "prime256v1"; fl = 32; break;
	case TPM2_ECC_NIST_P384: group = "secp384r1"; fl = 48; break;
	case TPM2_ECC_NIST_P521: group = "secp521r1"; fl = 66; break;
	default:
		return vg_diag_set(diag, -EOPNOTSUPP, "ECC curve 0x%04x", curve);
	}
	if (pt->x.size > fl || pt->y.size > fl)
		return vg_diag_set(diag, -EBADMSG, "ECC point coordinates longer than the curve");
	memset(pub, 0, sizeof(pub));
	pub[0] = 4;
	memcpy(pub + 1 + fl - pt->x.size, pt->x.buffer, pt->x.size);
	memcpy(pub + 1 + 2 * fl - pt->y.size, pt->y.buffer, pt->y.size);
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pub, 1 + 2 * fl);
	params[2] = OSSL_PARAM_construct_end();
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!ctx)
		return -ENOMEM;
	if (EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, ret, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		r = vg_diag_ssl(diag, -EBADMSG, "ECC public key (point not on the curve?)");
	EVP_PKEY_CTX_free(ctx);
	return r;
}

static int decode_public(const uint8_t *buf, size_t len, TPM2B_PUBLIC *pub, const char *what,
			 struct vg_diag *diag)
{
	size_t off = 0;

	memset(pub, 0, sizeof(*pub));
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, pub) != TSS2_RC_SUCCESS)
		return vg_diag_set(diag, -EBADMSG, "%s: TPM2B_PUBLIC does not decode", what);
	if (off != len)
		return vg_diag_set(diag, -EBADMSG, "%s: %zu bytes after TPM2B_PUBLIC", what, len - off);
	/* tss2-mu does not hold the size field to the structure (fuzz_attest_ak) */
	if (len < 2 || ((size_t)buf[0] << 8 | buf[1]) != len - 2)
		return vg_diag_set(diag, -EBADMSG, "%s: TPM2B_PUBLIC size %u, the structure has %zu",
				   what, len < 2 ? 0u : (unsigned int)(buf[0] << 8 | buf[1]),
				   len < 2 ? 0 : len - 2);
	return 0;
}

static int public_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret, struct vg_diag *diag)
{
	if (p->type == TPM2_ALG_RSA)
		return pkey_rsa(&p->unique.rsa, p->parameters.rsaDetail.exponent, ret, diag);
	if (p->type == TPM2_ALG_ECC)
		return pkey_ecc(p->parameters.eccDetail.curveID, &p->unique.ecc, ret, diag);
	return vg_diag_set(diag, -EOPNOTSUPP, "key type 0x%04x", p->type);
}

/* name = nameAlg || H_nameAlg(TPMT_PUBLIC as marshalled) */
static int public_name(const uint8_t *buf, size_t len, uint16_t name_alg, uint8_t *name,
		       size_t *name_len, struct vg_diag *diag)
{
	int algo = vg_attest_vg_algo(name_alg);
	struct vg_digest d;
	int r;

	if (algo < 0 || algo == VG_HASH_SHA1)
		return vg_diag_set(diag, -EBADMSG, "nameAlg 0x%04x not accepted", name_alg);
	r = vg_hash_buf((unsigned int)algo, buf + 2, len - 2, &d, diag);
	if (r < 0)
		return r;
	name[0] = (uint8_t)(name_alg >> 8);
	name[1] = (uint8_t)name_alg;
	memcpy(name + 2, d.bytes, d.len);
	*name_len = 2u + d.len;
	return 0;
}

int vg_attest_ak_load(const uint8_t *buf, size_t len, struct vg_attest_ak **ret,
		      struct vg_diag *diag)
{
	const TPMA_OBJECT want = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT |
				 TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				 TPMA_OBJECT_SENSITIVEDATAORIGIN;
	struct vg_attest_ak *ak;
	TPM2B_PUBLIC pub;
	TPMT_PUBLIC *p = &pub.publicArea;
	int r;

	r = decode_public(buf, len, &pub, "AK", diag);
	if (r < 0)
		return r;
	if ((p->objectAttributes & want) != want || (p->objectAttributes & TPMA_OBJECT_DECRYPT))
		return vg_diag_set(diag, -EBADMSG, "AK attributes 0x%08" PRIx32 " are not those of a "
				   "restricted, fixedTPM, TPM-generated signing key",
				   p->objectAttributes);
	ak = calloc(1, sizeof(*ak));
	if (!ak)
		return -ENOMEM;
	if (p->type == TPM2_ALG_RSA) {
		ak->sig_alg = p->parameters.rsaDetail.scheme.scheme;
		ak->hash_alg = p->parameters.rsaDetail.scheme.details.anySig.hashAlg;
		if (ak->sig_alg != TPM2_ALG_RSASSA && ak->sig_alg != TPM2_ALG_RSAPSS) {
			r = vg_diag_set(diag, -EBADMSG, "AK: RSA scheme 0x%04x is not RSASSA/RSAPSS",
					ak->sig_alg);
			goto fail;
		}
		if (p->parameters.rsaDetail.keyBits < 2048) {
			r = vg_diag_set(diag, -EBADMSG, "AK: RSA key of %u bits",
					p->parameters.rsaDetail.keyBits);
			goto fail;
		}
		/* the modulus is what keyBits says (fuzz_attest_ak), the exponent a TPM's (Part 2: prime > 2; 0 = 65537) */
		if ((size_t)p->unique.rsa.size * 8 != p->parameters.rsaDetail.keyBits ||
		    !(p->unique.rsa.buffer[0] & 0x80)) {
			r = vg_diag_set(diag, -EBADMSG, "AK: RSA modulus of %u bytes is not the %u bits "
					"the key declares", p->unique.rsa.size,
					p->parameters.rsaDetail.keyBits);
			goto fail;
		}
		if (p->parameters.rsaDetail.exponent != 0 &&
		    (p->parameters.rsaDetail.exponent < 3 || !(p->parameters.rsaDetail.exponent & 1))) {
			r = vg_diag_set(diag, -EBADMSG, "AK: RSA exponent %" PRIu32 " is not odd and > 2",
					p->parameters.rsaDetail.exponent);
			goto fail;
		}
	} else if (p->type == TPM2_ALG_ECC) {
		ak->sig_alg = p->parameters.eccDetail.scheme.scheme;
		ak->hash_alg = p->parameters.eccDetail.scheme.details.anySig.hashAlg;
		if (ak->sig_alg != TPM2_ALG_ECDSA) {
			r = vg_diag_set(diag, -EBADMSG, "AK: ECC scheme 0x%04x is not ECDSA", ak->sig_alg);
			goto fail;
		}
	} else {
		r = vg_diag_set(diag, -EOPNOTSUPP, "AK: key type 0x%04x", p->type);
		goto fail;
	}
	if (!md_name(ak->hash_alg) || ak->hash_alg == TPM2_ALG_SHA1) {
		r = vg_diag_set(diag, -EBADMSG, "AK: scheme hash 0x%04x not accepted", ak->hash_alg);
		goto fail;
	}
	r = public_name(buf, len, p->nameAlg, ak->name, &ak->name_len, diag);
	if (r < 0)
		goto fail;
	r = public_pkey(p, &ak->pkey, diag);
	if (r < 0)
		goto fail;
	ak->md = EVP_MD_fetch(NULL, md_name(ak->hash_alg), NULL);
	if (!ak->md) {
		r = vg_diag_ssl(diag, -EOPNOTSUPP, "AK: hash %s", md_name(ak->hash_alg));
		goto fail;
	}
	*ret = ak;
	return 0;
fail:
	vg_attest_ak_free(ak);
	return r;
}

void vg_attest_ak_free(struct vg_attest_ak *ak)
{
	if (!ak)
		return;
	EVP_PKEY_free(ak->pkey);
	EVP_MD_free(ak->md);
	free(ak);
}

const uint8_t *vg_attest_ak_name(const struct vg_attest_ak *ak, size_t *len)
{
	*len = ak->name_len;
	return ak->name;
}

const void *vg_attest_ak_pkey(const struct vg_attest_ak *ak)
{
	return ak->pkey;
}

void vg_attest_ak_scheme(const struct vg_attest_ak *ak, uint16_t *sig_alg, uint16_t *hash_alg)
{
	*sig_alg = ak->sig_alg;
	*hash_alg = ak->hash_alg;
}

/* Return: 1 valid, 0 not, negative errno. */
static int sig_verify(const struct vg_attest_ak *ak, const struct vg_tpmt_signature *s,
		      const uint8_t *msg, size_t len)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	uint8_t der[2 * 70 + 16];
	const uint8_t *sig = s->sig;
	size_t siglen = s->len;
	int r = -ENOMEM, ok;

	if (!md)
		return -ENOMEM;
	if (s->alg == TPM2_ALG_ECDSA) {
		ECDSA_SIG *es = ECDSA_SIG_new();
		BIGNUM *br = BN_bin2bn(s->r, s->r_len, NULL), *bs = BN_bin2bn(s->s, s->s_len, NULL);
		uint8_t *p = der;
		int n;

		if (!es || !br || !bs || !ECDSA_SIG_set0(es, br, bs)) {
			ECDSA_SIG_free(es);
			BN_free(br);
			BN_free(bs);
			goto out;
		}
		n = i2d_ECDSA_SIG(es, NULL);
		if (n <= 0 || (size_t)n > sizeof(der)) {
			ECDSA_SIG_free(es);
			r = 0;
			goto out;
		}
		n = i2d_ECDSA_SIG(es, &p);
		ECDSA_SIG_free(es);
		sig = der;
		siglen = (size_t)n;
	}
	/* s->hash == ak->hash_alg: the caller checked the scheme */
	if (EVP_DigestVerifyInit(md, &pctx, ak->md, NULL, ak->pkey) <= 0) {
		r = -EIO;
		goto out;
	}
	if (s->alg == TPM2_ALG_RSAPSS &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_AUTO) <= 0)) {
		r = -EIO;
		goto out;
	}
	ok = EVP_DigestVerify(md, sig, siglen, msg, len);
	r = ok == 1;
out:
	vg_ssl_clear();
	EVP_MD_CTX_free(md);
	return r;
}

int vg_attest_pcr_digest(const struct vg_tpms_attest *q, const struct vg_pcr_values *pv,
			 uint16_t hash_alg, uint8_t out[VG_HASH_MAX_DIGEST], struct vg_diag *diag)
{
	const char *mdn = md_name(hash_alg);
	EVP_MD_CTX *md;
	unsigned int olen = 0;
	int r = 0;

	if (!mdn)
		return vg_diag_set(diag, -EOPNOTSUPP, "hash 0x%04x", hash_alg);
	md = EVP_MD_CTX_new();
	if (!md)
		return -ENOMEM;
	if (EVP_DigestInit_ex2(md, EVP_get_digestbyname(mdn), NULL) <= 0) {
		r = -EIO;
		goto out;
	}
	for (uint32_t i = 0; i < q->nsel; i++) {
		int algo = vg_attest_vg_algo(q->sel[i].alg);

		for (unsigned int pcr = 0; pcr < 8u * q->sel[i].size; pcr++) {
			if (!(q->sel[i].bits[pcr / 8] & (1u << (pcr % 8))))
				continue;
			if (algo < 0 || pcr >= VG_PCR_COUNT || !(pv->have[algo] & (1u << pcr))) {
				r = vg_diag_set(diag, -ENOENT, "no value for quoted PCR %u (bank 0x%04x)",
						pcr, q->sel[i].alg);
				goto out;
			}
			EVP_DigestUpdate(md, pv->v[algo][pcr].bytes, pv->v[algo][pcr].len);
		}
	}
	if (EVP_DigestFinal_ex(md, out, &olen) <= 0)
		r = -EIO;
	else
		r = (int)olen;
out:
	EVP_MD_CTX_free(md);
	return r;
}

static void hex_of(const uint8_t *b, size_t n, char *out, size_t cap)
{
	if (2 * n + 1 > cap)
		n = (cap - 1) / 2;
	vg_hex_encode(b, n, out);
}

int vg_attest_quote_verify(const struct vg_attest_ak *ak, const uint8_t *attest, size_t alen,
			   const uint8_t *sigbuf, size_t slen, const struct vg_attest_request *req,
			   const struct vg_pcr_values *pcrs, struct vg_tpms_attest *ret,
			   struct vg_attest_verdict *v)
{
	struct vg_tpms_attest q;
	struct vg_tpmt_signature s;
	struct vg_diag d = { 0 };
	uint8_t dig[VG_HASH_MAX_DIGEST];
	uint16_t want_alg = vg_attest_tpm_alg(req->bank);
	int r;

	/* the signature first: nothing of an unsigned structure is believed */
	if (vg_attest_sig_decode(sigbuf, slen, &s, &d) < 0)
		return vg_attest_fail(v, VG_AF_MALFORMED, "signature: %s", d.msg);
	if (s.alg != ak->sig_alg || s.hash != ak->hash_alg)
		return vg_attest_fail(v, VG_AF_SIG_SCHEME, "signature scheme 0x%04x/0x%04x is not the "
				      "AK's 0x%04x/0x%04x", s.alg, s.hash, ak->sig_alg, ak->hash_alg);
	r = sig_verify(ak, &s, attest, alen);
	if (r < 0)
		return r;
	if (r == 0)
		return vg_attest_fail(v, VG_AF_SIGNATURE, "quote signature does not verify with the "
				      "registered AK");
	if (alen < 6 || vg__be32(attest) != TPM2_GENERATED_VALUE)
		return vg_attest_fail(v, VG_AF_NOT_QUOTE, "TPMS_ATTEST magic is not TPM_GENERATED_VALUE");
	if (vg_attest_quote_decode(attest, alen, &q, &d) < 0)
		return vg_attest_fail(v, VG_AF_MALFORMED, "%s", d.msg);
	if (q.extra_len != req->nonce_len || memcmp(q.extra, req->nonce, req->nonce_len) != 0) {
		char hex[2 * VG_ATTEST_NONCE_MAX + 1];

		hex_of(q.extra, q.extra_len, hex, sizeof(hex));
		return vg_attest_fail(v, VG_AF_NONCE, "quote extraData %s is not this request's nonce "
				      "(an old or replayed quote)", hex);
	}
	if (q.nsel != 1 || q.sel[0].alg != want_alg || q.sel[0].size < 3 ||
	    (uint32_t)(q.sel[0].bits[0] | q.sel[0].bits[1] << 8 | q.sel[0].bits[2] << 16) != req->mask ||
	    (q.sel[0].size > 3 && q.sel[0].bits[3]))
		return vg_attest_fail(v, VG_AF_PCR_SELECTION, "quote covers other PCRs than the "
				      "requested %s mask 0x%06" PRIx32, vg_hash_name(req->bank), req->mask);
	r = vg_attest_pcr_digest(&q, pcrs, ak->hash_alg, dig, &d);
	if (r == -ENOENT)
		return vg_attest_fail(v, VG_AF_MALFORMED, "%s", d.msg);
	if (r < 0)
		return r;
	if ((size_t)r != q.digest_len || memcmp(dig, q.pcr_digest, (size_t)r) != 0)
		return vg_attest_fail(v, VG_AF_PCR_DIGEST, "the PCR values sent do not hash to the "
				      "quote's pcrDigest");
	if (ret)
		*ret = q;
	return 0;
}

int vg_attest_clock_check(struct vg_attest_clock *c, const struct vg_tpms_attest *q, bool *reboot,
			  struct vg_attest_verdict *v)
{
	*reboot = false;
	if (!q->safe)
		return vg_attest_fail(v, VG_AF_UNSAFE, "TPM clock not safe (unorderly shutdown: "
				      "the clock may have gone back)");
	if (c->valid) {
		if (q->reset_count < c->reset_count ||
		    (q->reset_count == c->reset_count && q->restart_count < c->restart_count))
			return vg_attest_fail(v, VG_AF_CLOCK, "TPM resetCount/restartCount %" PRIu32 "/%"
					      PRIu32 " below the last accepted %" PRIu32 "/%" PRIu32
					      " (an old quote)", q->reset_count, q->restart_count,
					      c->reset_count, c->restart_count);
		if (q->reset_count == c->reset_count && q->restart_count == c->restart_count &&
		    q->clock <= c->clock)
			return vg_attest_fail(v, VG_AF_CLOCK, "TPM clock %" PRIu64 " did not advance past "
					      "%" PRIu64 " (a replayed quote)", q->clock, c->clock);
		*reboot = q->reset_count > c->reset_count;
	}
	c->valid = true;
	c->clock = q->clock;
	c->reset_count = q->reset_count;
	c->restart_count = q->restart_count;
	return 0;
}

/* ---- registration ---- */

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

	if (decode_public(ek_pub, ek_len, &pub, "EK", &d) < 0 ||
	    public_pkey(&pub.publicArea, &pk, &d) < 0) {
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

int vg_attest_make_credential(const uint8_t *ek_pub, size_t ek_len, const uint8_t *name,
			      size_t name_len, const uint8_t *secret, size_t secret_len,
			      uint8_t *id_object, size_t *id_len, uint8_t *enc_secret,
			      size_t *es_len, struct vg_diag *diag)
{
	static const uint8_t iv[16];
	TPM2B_PUBLIC pub;
	const TPMT_PUBLIC *p = &pub.publicArea;
	const char *mdn;
	EVP_PKEY *pk = NULL;
	EVP_PKEY_CTX *pc = NULL;
	EVP_CIPHER_CTX *cc = NULL;
	uint8_t seed[32], symkey[32], hmackey[64], plain[2 + 64], enc[2 + 64];
	unsigned char *label = NULL;
	unsigned int hlen = 0, keybits;
	size_t mdlen, outl;
	int r, n1 = 0, n2 = 0;

	r = decode_public(ek_pub, ek_len, &pub, "EK", diag);
	if (r < 0)
		return r;
	if (p->type != TPM2_ALG_RSA)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK type 0x%04x (RSA only)",
				   p->type);
	mdn = md_name(p->nameAlg);
	if (!mdn || p->nameAlg == TPM2_ALG_SHA1)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK nameAlg 0x%04x", p->nameAlg);
	mdlen = vg_hash_size((unsigned int)vg_attest_vg_algo(p->nameAlg));
	if (p->parameters.rsaDetail.symmetric.algorithm != TPM2_ALG_AES ||
	    p->parameters.rsaDetail.symmetric.mode.aes != TPM2_ALG_CFB)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: EK symmetric scheme not AES-CFB");
	keybits = p->parameters.rsaDetail.symmetric.keyBits.aes;
	if (keybits != 128 && keybits != 256)
		return vg_diag_set(diag, -EOPNOTSUPP, "MakeCredential: AES-%u", keybits);
	if (secret_len == 0 || secret_len > 64 || name_len == 0 || name_len > VG_ATTEST_NAME_MAX)
		return vg_diag_set(diag, -EBADMSG, "MakeCredential: secret or name size");
	if (*id_len < 2 + mdlen + 2 + secret_len || *es_len < p->unique.rsa.size)
		return vg_diag_set(diag, -ENOSPC, "MakeCredential: output buffers too small");
	r = public_pkey(p, &pk, diag);
	if (r < 0)
		return r;
	r = -EIO;
	if (RAND_bytes(seed, (int)mdlen) != 1)
		goto out;
	/* secret = RSA-OAEP(nameAlg, label "IDENTITY\0") of the seed */
	pc = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	label = OPENSSL_malloc(9);
	if (!pc || !label) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(label, "IDENTITY", 9);
	outl = *es_len;
	if (EVP_PKEY_encrypt_init(pc) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md_name(pc, mdn, NULL) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md_name(pc, mdn, NULL) <= 0 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(pc, label, 9) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "MakeCredential: OAEP setup");
		goto out;
	}
	label = NULL;		/* owned by pc now */
	if (EVP_PKEY_encrypt(pc, enc_secret, &outl, seed, mdlen) <= 0) {
		r = vg_diag_ssl(diag, -EIO, "MakeCredential: OAEP");
		goto out;
	}
	*es_len = outl;
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
	OPENSSL_free(label);
	EVP_CIPHER_CTX_free(cc);
	EVP_PKEY_CTX_free(pc);
	EVP_PKEY_free(pk);
	return r;
}
