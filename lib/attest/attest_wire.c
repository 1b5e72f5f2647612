// SPDX-License-Identifier: MIT
/*
 * attest_wire.c - TPM structures from the wire, field by field, every
 * input untrusted: TPMS_ATTEST (a quote) and TPMT_SIGNATURE with a bounded
 * big-endian reader, TPM2B_PUBLIC through tss2-mu with its size held to
 * the structure, tpm2-tools' serialized PCR file, and the pcrDigest a
 * quote's selection implies over given PCR values. The TPM algorithm ids
 * and their names in vigil and OpenSSL live here too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <tss2/tss2_mu.h>

#include "internal.h"
#include "attest_tpm.h"
#include "vigil/attest.h"

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

const char *vg__attest_md_name(uint16_t alg)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(algs); i++)
		if (algs[i].alg == alg)
			return algs[i].ossl;
	return NULL;
}

int vg__attest_decode_public(const uint8_t *buf, size_t len, TPM2B_PUBLIC *pub, const char *what,
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

int vg_attest_pcr_digest(const struct vg_tpms_attest *q, const struct vg_pcr_values *pv,
			 uint16_t hash_alg, uint8_t out[VG_HASH_MAX_DIGEST], struct vg_diag *diag)
{
	const char *mdn = vg__attest_md_name(hash_alg);
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
