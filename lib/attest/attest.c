// SPDX-License-Identifier: MIT
/*
 * attest.c - TPM quotes verified without a TPM: the verdict and its
 * failure ids, the AK from its TPM2B_PUBLIC (tss2-mu) into an EVP_PKEY,
 * the signature/nonce/selection/pcrDigest checks of a quote, clockInfo
 * tracking. The structures are decoded field by field in attest_wire.c;
 * the EK certificate check and TPM2_MakeCredential are attest_cred.c.
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
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include <tss2/tss2_mu.h>

#include "internal.h"
#include "attest_tpm.h"
#include "vigil/attest.h"
#include "vigil/text.h"

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
	[VG_AF_LATE] = "state.late",
	[VG_AF_DIGEST_UNSUPPORTED] = "policy.digest_unsupported",
	[VG_AF_PACKAGE_NEWER] = "policy.package_newer",
	[VG_AF_STALE] = "state.stale",
	[VG_AF_KEYRING_KEY] = "policy.keyring_key",
	[VG_AF_BOOT_EVENT] = "boot.event",
	[VG_AF_EK_BOUND] = "identity.ek_bound",
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
	char raw[sizeof(v->msg)];
	va_list ap;

	if (!v)
		return 1;
	v->fail = fail;
	if (!v->failures)
		v->failures = 1;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* a path in it is the attested host's bytes: escaped unless clean text */
	if (vg_text_is_clean(raw))
		memcpy(v->msg, raw, sizeof(raw));
	else
		vg_text_escape(raw, v->msg, sizeof(v->msg));
	return 1;
}

void vg_attest_verdict_release(struct vg_attest_verdict *v)
{
	if (!v || (v->fail == VG_AF_NONE && !v->more))
		return;		/* nothing to free: a passed round costs nothing here */
	free(v->more);
	vg_attest_verdict_init(v);
}

/* Copy the failure fields of @f into @v, leaving @v's count and list alone. */
static void verdict_copy(struct vg_attest_verdict *v, const struct vg_attest_verdict *f)
{
	v->fail = f->fail;
	v->entry = f->entry;
	memcpy(v->path, f->path, sizeof(v->path));
	memcpy(v->digest, f->digest, sizeof(v->digest));
	memcpy(v->msg, f->msg, sizeof(v->msg));
}

int vg_attest_verdict_add(struct vg_attest_verdict *v, const struct vg_attest_verdict *f)
{
	if (!v)
		return 1;
	if (v->fail == VG_AF_NONE) {
		verdict_copy(v, f);
		v->failures = 1;
		return 1;
	}
	if (v->nmore + 1 < VG_ATTEST_FAILURES_MAX) {
		/* room for the whole bound at once: a failing round allocates once */
		if (!v->more) {
			v->more = calloc(VG_ATTEST_FAILURES_MAX - 1, sizeof(*v->more));
			if (!v->more)
				return -ENOMEM;
		}
		vg_attest_verdict_init(&v->more[v->nmore]);
		verdict_copy(&v->more[v->nmore], f);
		v->more[v->nmore].failures = 1;
		v->nmore++;
	}
	v->failures = (v->failures ? v->failures : 1) + 1;
	return 1;
}

uint64_t vg_attest_verdict_count(const struct vg_attest_verdict *v)
{
	if (v->fail == VG_AF_NONE)
		return 0;
	return v->failures ? v->failures : 1;
}

size_t vg_attest_verdict_listed(const struct vg_attest_verdict *v)
{
	return v->fail == VG_AF_NONE ? 0 : 1 + v->nmore;
}

const struct vg_attest_verdict *vg_attest_verdict_nth(const struct vg_attest_verdict *v, size_t i)
{
	if (i >= vg_attest_verdict_listed(v))
		return NULL;
	return i == 0 ? v : &v->more[i - 1];
}

/* ---- keys ---- */

struct vg_attest_ak {
	EVP_PKEY *pkey;
	EVP_MD *md;			/* the scheme's hash, fetched once */
	uint16_t sig_alg, hash_alg;
	size_t name_len;
	uint8_t name[VG_ATTEST_NAME_MAX];
};

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

int vg__attest_public_pkey(const TPMT_PUBLIC *p, EVP_PKEY **ret, struct vg_diag *diag)
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

	r = vg__attest_decode_public(buf, len, &pub, "AK", diag);
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
	if (!vg__attest_md_name(ak->hash_alg) || ak->hash_alg == TPM2_ALG_SHA1) {
		r = vg_diag_set(diag, -EBADMSG, "AK: scheme hash 0x%04x not accepted", ak->hash_alg);
		goto fail;
	}
	r = public_name(buf, len, p->nameAlg, ak->name, &ak->name_len, diag);
	if (r < 0)
		goto fail;
	r = vg__attest_public_pkey(p, &ak->pkey, diag);
	if (r < 0)
		goto fail;
	ak->md = EVP_MD_fetch(NULL, vg__attest_md_name(ak->hash_alg), NULL);
	if (!ak->md) {
		r = vg_diag_ssl(diag, -EOPNOTSUPP, "AK: hash %s", vg__attest_md_name(ak->hash_alg));
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
