// SPDX-License-Identifier: MIT
/*
 * fuzz_attest_quote.c - TPM quote structures from an agent: TPMS_ATTEST
 * (vg_attest_quote_decode), TPMT_SIGNATURE (vg_attest_sig_decode),
 * tpm2-tools' PCR file (vg_attest_pcrs_tpm2tools) and whole quote checks
 * (vg_attest_quote_verify) against a real TPM's AK.
 *
 * The first byte picks the target (mod 4):
 *  0  TPMS_ATTEST: accepted ⇒ every field within its bound and a
 *     re-encoding by this file's own encoder gives the input bytes back;
 *  1  TPMT_SIGNATURE: the same;
 *  2  u16 attest length, TPMS_ATTEST, TPMT_SIGNATURE: checked with the AK of
 *     Keylime's tpm2-tools quote (tests/vectors/attest) and its nonce and
 *     PCRs. Trusted ⇒ OpenSSL alone (the PEM of the AK, not the library's
 *     TPM2B_PUBLIC decoding) verifies that exact signature over those exact
 *     bytes, the bytes are the quote the TPM signed, and extraData, the
 *     selection and pcrDigest are those asked for: never a trusted quote
 *     whose bytes were not signed;
 *  3  tpm2-tools PCR file: every value added has its bank's size.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "fuzz.h"
#include "vigil/attest.h"

static struct {
	bool ready;
	struct vg_attest_ak *ak;
	EVP_PKEY *pem;
	uint8_t *quote, *nonce;
	size_t quote_len, nonce_len;
	struct vg_pcr_values pv;
} K;

static uint8_t *slurp(const char *rel, size_t *len)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	FILE *f;
	uint8_t *b;
	long n;

	snprintf(path, sizeof(path), "%s/attest/%s", v && *v ? v : VG_FUZZ_VECTORS, rel);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		fprintf(stderr, "fuzz_attest_quote: cannot read %s\n", path);
		abort();
	}
	b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	*len = (size_t)n;
	return b;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t al, pl;
	uint8_t *ak, *pcrs;
	FILE *f;
	char path[4096];
	const char *v = getenv("VECTORS");

	(void)argc;
	(void)argv;
	ak = slurp("ak.pub", &al);
	FUZZ_CHECK(vg_attest_ak_load(ak, al, &K.ak, NULL) == 0);
	free(ak);
	pcrs = slurp("quotepcr.out", &pl);
	FUZZ_CHECK(vg_attest_pcrs_tpm2tools(pcrs, pl, &K.pv, NULL) == 3);
	free(pcrs);
	K.quote = slurp("quote.out", &K.quote_len);
	K.nonce = slurp("rand.out", &K.nonce_len);
	snprintf(path, sizeof(path), "%s/attest/akpub.pem", v && *v ? v : VG_FUZZ_VECTORS);
	f = fopen(path, "r");
	FUZZ_CHECK(f != NULL);
	K.pem = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	FUZZ_CHECK(K.pem != NULL);
	K.ready = true;
	return 0;
}

/* ---- an encoder of our own (TPM 2.0 Part 2, big-endian) ---- */

struct wr {
	uint8_t b[4096];
	size_t n;
};

static void put(struct wr *w, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		w->b[w->n++] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void put_2b(struct wr *w, const uint8_t *p, size_t n)
{
	put(w, n, 2);
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void encode_attest(const struct vg_tpms_attest *q, struct wr *w)
{
	w->n = 0;
	put(w, q->magic, 4);
	put(w, q->type, 2);
	put_2b(w, q->signer, q->signer_len);
	put_2b(w, q->extra, q->extra_len);
	put(w, q->clock, 8);
	put(w, q->reset_count, 4);
	put(w, q->restart_count, 4);
	put(w, q->safe, 1);
	put(w, q->firmware, 8);
	put(w, q->nsel, 4);
	for (uint32_t i = 0; i < q->nsel; i++) {
		put(w, q->sel[i].alg, 2);
		put(w, q->sel[i].size, 1);
		memcpy(w->b + w->n, q->sel[i].bits, q->sel[i].size);
		w->n += q->sel[i].size;
	}
	put_2b(w, q->pcr_digest, q->digest_len);
}

static void encode_sig(const struct vg_tpmt_signature *s, struct wr *w)
{
	w->n = 0;
	put(w, s->alg, 2);
	put(w, s->hash, 2);
	if (s->alg == 0x0018) {
		put_2b(w, s->r, s->r_len);
		put_2b(w, s->s, s->s_len);
	} else {
		put_2b(w, s->sig, s->len);
	}
}

static void t_attest(const uint8_t *d, size_t n)
{
	struct vg_tpms_attest q;
	struct wr *w;

	if (vg_attest_quote_decode(d, n, &q, NULL) != 0)
		return;
	FUZZ_CHECK(q.type == 0x8018);
	FUZZ_CHECK(q.signer_len <= sizeof(q.signer) && q.extra_len <= sizeof(q.extra));
	FUZZ_CHECK(q.nsel <= VG_ATTEST_SEL_MAX && q.digest_len <= sizeof(q.pcr_digest));
	for (uint32_t i = 0; i < q.nsel; i++)
		FUZZ_CHECK(q.sel[i].size <= 4);
	w = malloc(sizeof(*w));
	FUZZ_CHECK(w != NULL);
	encode_attest(&q, w);
	FUZZ_CHECK(w->n == n && memcmp(w->b, d, n) == 0);
	free(w);
}

static void t_sig(const uint8_t *d, size_t n)
{
	struct vg_tpmt_signature s;
	struct wr *w;
	int r = vg_attest_sig_decode(d, n, &s, NULL);

	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EOPNOTSUPP);
	if (r != 0)
		return;
	FUZZ_CHECK(s.alg == 0x0014 || s.alg == 0x0016 || s.alg == 0x0018);
	FUZZ_CHECK(s.len <= sizeof(s.sig) && s.r_len <= sizeof(s.r) && s.s_len <= sizeof(s.s));
	w = malloc(sizeof(*w));
	FUZZ_CHECK(w != NULL);
	encode_sig(&s, w);
	FUZZ_CHECK(w->n == n && memcmp(w->b, d, n) == 0);
	free(w);
}

/* OpenSSL alone: RSASSA-SHA256 of @msg by the AK's PEM key, with the raw TPMT_SIGNATURE bytes. */
static bool openssl_verifies(const uint8_t *msg, size_t ml, const uint8_t *sig, size_t sl)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t n;
	bool ok;

	/* sigAlg RSASSA (0014), hash sha256 (000b), TPM2B */
	if (!md || sl < 6 || sig[0] != 0x00 || sig[1] != 0x14 || sig[2] != 0x00 || sig[3] != 0x0b)
		ok = false;
	else if ((n = (size_t)sig[4] << 8 | sig[5]) != sl - 6)
		ok = false;
	else
		ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, K.pem) == 1 &&
		     EVP_DigestVerify(md, sig + 6, n, msg, ml) == 1;
	EVP_MD_CTX_free(md);
	return ok;
}

static void t_verify(const uint8_t *d, size_t n)
{
	struct vg_attest_request req = { K.nonce, K.nonce_len, VG_HASH_SHA256,
					 1u << 15 | 1u << 16 | 1u << 22 };
	struct vg_attest_verdict v;
	struct vg_tpms_attest q;
	size_t al;
	int r;

	if (n < 2)
		return;
	al = (size_t)d[0] << 8 | d[1];
	if (al > n - 2)
		return;
	vg_attest_verdict_init(&v);
	r = vg_attest_quote_verify(K.ak, d + 2, al, d + 2 + al, n - 2 - al, &req, &K.pv, &q, &v);
	FUZZ_CHECK(r == 0 || r == 1);
	if (r == 1) {
		FUZZ_CHECK(v.fail != VG_AF_NONE && vg_attest_fail_id(v.fail) != NULL);
		return;
	}
	FUZZ_CHECK(openssl_verifies(d + 2, al, d + 2 + al, n - 2 - al));
	FUZZ_CHECK(al == K.quote_len && memcmp(d + 2, K.quote, al) == 0);
	FUZZ_CHECK(q.extra_len == K.nonce_len && memcmp(q.extra, K.nonce, K.nonce_len) == 0);
	FUZZ_CHECK(q.nsel == 1 && q.sel[0].alg == 0x000b);
}

static void t_pcrs(const uint8_t *d, size_t n)
{
	struct vg_pcr_values *pv = calloc(1, sizeof(*pv));
	int r;

	FUZZ_CHECK(pv != NULL);
	r = vg_attest_pcrs_tpm2tools(d, n, pv, NULL);
	FUZZ_CHECK(r >= 0 || r == -EBADMSG);
	for (unsigned int a = 0; r > 0 && a < VG_HASH__LAST; a++)
		for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
			if (pv->have[a] & (1u << i))
				FUZZ_CHECK(pv->v[a][i].len == vg_hash_size(a) && pv->v[a][i].algo == a);
	free(pv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!K.ready)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0: t_attest(data + 1, size - 1); break;
	case 1: t_sig(data + 1, size - 1); break;
	case 2: t_verify(data + 1, size - 1); break;
	default: t_pcrs(data + 1, size - 1); break;
	}
	return 0;
}
