// SPDX-License-Identifier: MIT
/*
 * imalog_replay.c - template digests the kernel's way, the digests each
 * entry extends per bank, the boot_aggregate, and replay of a list into
 * PCR values.
 *
 * ima_calc_field_array_hash: for every allocated bank the template digest
 * is recomputed with that bank's hash (the sha1 one is what the default
 * list shows); a bank whose hash the kernel lacks gets the sha1 digest
 * zero-padded. Kernels before 5.8 padded the sha1 digest into every bank
 * (VG_REPLAY_PADDED_SHA1). Violations (all-zero digest in the list) are
 * extended as 0xff..ff (ima_queue.c).
 *
 * Replay is the hot path of attestation. For the SHA-1/SHA-2 banks it uses
 * OpenSSL's one-shot SHA*_Init/Update/Final (deprecated in 3.0, same
 * SHA-NI code): EVP_DigestInit_ex2 in OpenSSL 3.0 allocates and frees
 * the provider context on every call, which was over half of the replay
 * time for ima-ng entries (perf, 1M entries). Other banks go through one
 * EVP_MD_CTX and EVP_MDs fetched once per replay object.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "internal.h"
#include "vigil/imalog.h"

/*
 * H_algo(a || b || c) with the low-level SHA API.
 * Return: digest size, or 0 if @algo has no fast path.
 */
static unsigned int fast3(unsigned int algo, const void *a, size_t al, const void *b, size_t bl,
			  const void *c, size_t cl, uint8_t *out)
{
	union {
		SHA_CTX s1;
		SHA256_CTX s256;
		SHA512_CTX s512;
	} u;

	switch (algo) {
	case VG_HASH_SHA1:
		SHA1_Init(&u.s1);
		SHA1_Update(&u.s1, a, al);
		SHA1_Update(&u.s1, b, bl);
		SHA1_Update(&u.s1, c, cl);
		SHA1_Final(out, &u.s1);
		return 20;
	case VG_HASH_SHA224:
	case VG_HASH_SHA256:
		if (algo == VG_HASH_SHA224)
			SHA224_Init(&u.s256);
		else
			SHA256_Init(&u.s256);
		SHA256_Update(&u.s256, a, al);
		SHA256_Update(&u.s256, b, bl);
		SHA256_Update(&u.s256, c, cl);
		if (algo == VG_HASH_SHA224)
			SHA224_Final(out, &u.s256);
		else
			SHA256_Final(out, &u.s256);
		return algo == VG_HASH_SHA224 ? 28 : 32;
	case VG_HASH_SHA384:
	case VG_HASH_SHA512:
		if (algo == VG_HASH_SHA384)
			SHA384_Init(&u.s512);
		else
			SHA512_Init(&u.s512);
		SHA512_Update(&u.s512, a, al);
		SHA512_Update(&u.s512, b, bl);
		SHA512_Update(&u.s512, c, cl);
		if (algo == VG_HASH_SHA384)
			SHA384_Final(out, &u.s512);
		else
			SHA512_Final(out, &u.s512);
		return algo == VG_HASH_SHA384 ? 48 : 64;
	default:
		return 0;
	}
}

/* H(entry's template data) with @md (bank @algo) into @out. */
static int tdigest(EVP_MD_CTX *ctx, const EVP_MD *md, unsigned int algo,
		   const struct vg_imalog_entry *e, uint8_t *out, unsigned int *outlen)
{
	if (e->tmpl.ima) {
		uint8_t name[VG_IMALOG_EVENT_NAME_MAX + 1] = { 0 };

		if (e->f[0].len != 20 || e->f[1].len > VG_IMALOG_EVENT_NAME_MAX)
			return -EBADMSG;
		memcpy(name, e->f[1].data, e->f[1].len);
		if ((*outlen = fast3(algo, e->f[0].data, 20, name, sizeof(name), "", 0, out)))
			return 0;
	} else if ((*outlen = fast3(algo, e->data, e->data_len, "", 0, "", 0, out))) {
		return 0;
	}
	if (!EVP_DigestInit_ex2(ctx, md, NULL))
		return -EIO;
	if (e->tmpl.ima) {
		uint8_t name[VG_IMALOG_EVENT_NAME_MAX + 1] = { 0 };

		if (e->f[0].len != 20 || e->f[1].len > VG_IMALOG_EVENT_NAME_MAX)
			return -EBADMSG;
		memcpy(name, e->f[1].data, e->f[1].len);
		if (!EVP_DigestUpdate(ctx, e->f[0].data, 20) ||
		    !EVP_DigestUpdate(ctx, name, sizeof(name)))
			return -EIO;
	} else if (!EVP_DigestUpdate(ctx, e->data, e->data_len)) {
		return -EIO;
	}
	return EVP_DigestFinal_ex(ctx, out, outlen) ? 0 : -EIO;
}

int vg_imalog_template_digest(const struct vg_imalog_entry *e, unsigned int algo,
			      struct vg_digest *ret, struct vg_diag *diag)
{
	EVP_MD *md = vg__md_fetch(algo);
	EVP_MD_CTX *ctx;
	unsigned int n = 0;
	int r;

	if (!md)
		return vg_diag_ssl(diag, -EOPNOTSUPP, "hash algorithm %s is not available",
				   vg_hash_name(algo) ? vg_hash_name(algo) : "(unknown)");
	ctx = EVP_MD_CTX_new();
	if (!ctx) {
		EVP_MD_free(md);
		return vg_diag_ssl(diag, -ENOMEM, "out of memory");
	}
	r = tdigest(ctx, md, algo, e, ret->bytes, &n);
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	if (r == -EBADMSG)
		return vg_diag_set(diag, r, "ima template name longer than %d bytes",
				   VG_IMALOG_EVENT_NAME_MAX);
	if (r < 0)
		return vg_diag_ssl(diag, r, "template digest");
	ret->algo = (uint8_t)algo;
	ret->len = (uint8_t)n;
	return 0;
}

int vg_imalog_boot_aggregate(unsigned int algo, const struct vg_digest pcrs[10],
			     struct vg_digest *ret, struct vg_diag *diag)
{
	uint8_t buf[10 * VG_HASH_MAX_DIGEST];
	size_t n = algo == VG_HASH_SHA1 ? 8 : 10, sz = vg_hash_size(algo), off = 0;

	if (!sz)
		return vg_diag_set(diag, -EOPNOTSUPP, "unknown hash algorithm %u", algo);
	for (size_t i = 0; i < n; i++) {
		if (pcrs[i].len != sz)
			return vg_diag_set(diag, -EINVAL, "PCR %zu is not a %s value", i,
					   vg_hash_name(algo));
		memcpy(buf + off, pcrs[i].bytes, sz);
		off += sz;
	}
	return vg_hash_buf(algo, buf, off, ret, diag);
}

struct vg_imalog_replay {
	uint32_t banks;
	uint32_t pcrs;
	unsigned int flags;
	unsigned int nb;
	uint8_t algo[VG_HASH__LAST];		/* slot -> algo */
	EVP_MD *md[VG_HASH__LAST];		/* per slot */
	EVP_MD *list_md[VG_HASH__LAST];		/* per algo, for checking stored digests */
	EVP_MD_CTX *ctx;
	struct vg_digest pcr[VG_PCR_COUNT][VG_HASH__LAST];	/* [pcr][slot] */
};

int vg_imalog_replay_new(uint32_t banks, unsigned int flags, struct vg_imalog_replay **ret,
			 struct vg_diag *diag)
{
	struct vg_imalog_replay *r = calloc(1, sizeof(*r));

	if (!r)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	r->banks = banks;
	r->flags = flags;
	r->ctx = EVP_MD_CTX_new();
	if (!r->ctx) {
		vg_imalog_replay_free(r);
		return vg_diag_ssl(diag, -ENOMEM, "out of memory");
	}
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(banks & (1u << a)))
			continue;
		r->md[r->nb] = vg__md_fetch(a);
		if (!r->md[r->nb]) {
			int e = vg_hash_size(a) && !vg_hash_available(a) ? -EOPNOTSUPP : -ENOMEM;

			vg_imalog_replay_free(r);
			return vg_diag_ssl(diag, e, "bank %s: hash not available",
					   vg_hash_name(a) ? vg_hash_name(a) : "(unknown)");
		}
		r->algo[r->nb] = (uint8_t)a;
		for (unsigned int p = 0; p < VG_PCR_COUNT; p++) {
			r->pcr[p][r->nb].algo = (uint8_t)a;
			r->pcr[p][r->nb].len = (uint8_t)vg_hash_size(a);
		}
		r->nb++;
	}
	*ret = r;
	return 0;
}

void vg_imalog_replay_free(struct vg_imalog_replay *r)
{
	if (!r)
		return;
	for (unsigned int i = 0; i < VG_HASH__LAST; i++) {
		EVP_MD_free(r->md[i]);
		EVP_MD_free(r->list_md[i]);
	}
	EVP_MD_CTX_free(r->ctx);
	free(r);
}

static int slot_of(const struct vg_imalog_replay *r, unsigned int algo)
{
	for (unsigned int i = 0; i < r->nb; i++)
		if (r->algo[i] == algo)
			return (int)i;
	return -1;
}

/* The md for the list's own bank (to check stored digests), fetched once. */
static const EVP_MD *list_md(struct vg_imalog_replay *r, unsigned int algo)
{
	int s = slot_of(r, algo);

	if (s >= 0)
		return r->md[s];
	if (algo >= VG_HASH__LAST)
		return NULL;
	if (!r->list_md[algo]) {
		r->list_md[algo] = vg__md_fetch(algo);
		vg_ssl_clear();
	}
	return r->list_md[algo];
}

static int extend(EVP_MD_CTX *ctx, const EVP_MD *md, struct vg_digest *pcr, const uint8_t *d)
{
	uint8_t out[VG_HASH_MAX_DIGEST];
	unsigned int n = 0;

	if (fast3(pcr->algo, pcr->bytes, pcr->len, d, pcr->len, "", 0, out)) {
		memcpy(pcr->bytes, out, pcr->len);
		return 0;
	}
	if (!EVP_DigestInit_ex2(ctx, md, NULL) || !EVP_DigestUpdate(ctx, pcr->bytes, pcr->len) ||
	    !EVP_DigestUpdate(ctx, d, pcr->len) || !EVP_DigestFinal_ex(ctx, pcr->bytes, &n))
		return -EIO;
	return 0;
}

int vg_imalog_replay_entry(struct vg_imalog_replay *r, const struct vg_imalog_entry *e,
			   uint64_t index, struct vg_diag *diag)
{
	uint8_t sha1[VG_HASH_MAX_DIGEST], d[VG_HASH_MAX_DIGEST];
	bool have_sha1 = false, checked = false;
	unsigned int n = 0;
	int rc;

	if (e->pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: pcr %" PRIu32,
				   index, e->offset, e->pcr);
	if (!e->violation && !(r->flags & VG_REPLAY_NO_CHECK)) {
		const EVP_MD *md = list_md(r, e->digest.algo);

		if (md) {
			rc = tdigest(r->ctx, md, e->digest.algo, e, d, &n);
			if (rc < 0)
				return vg_diag_set(diag, rc, "entry %" PRIu64 " at offset %zu: template "
						   "digest", index, e->offset);
			if (n != e->digest.len || memcmp(d, e->digest.bytes, n) != 0)
				return vg_diag_set(diag, -EILSEQ, "entry %" PRIu64 " at offset %zu (%.*s): "
						   "template digest does not match its data",
						   index, e->offset, (int)e->name_len, e->name);
			checked = true;
		}
	}
	for (unsigned int i = 0; i < r->nb; i++) {
		struct vg_digest *pcr = &r->pcr[e->pcr][i];

		if (e->violation && r->flags & VG_REPLAY_PADDED_SHA1 && r->algo[i] != VG_HASH_SHA1) {
			/* old kernels: 0xff x 20, zero-padded like any sha1 digest */
			memset(d, 0, pcr->len);
			memset(d, 0xff, pcr->len < 20 ? pcr->len : 20);
		} else if (e->violation) {
			memset(d, 0xff, pcr->len);
		} else if (r->flags & VG_REPLAY_PADDED_SHA1 && r->algo[i] != VG_HASH_SHA1) {
			if (!have_sha1) {
				const EVP_MD *md = list_md(r, VG_HASH_SHA1);

				if (!md || tdigest(r->ctx, md, VG_HASH_SHA1, e, sha1, &n) < 0)
					return vg_diag_ssl(diag, -EIO, "sha1 template digest");
				have_sha1 = true;
			}
			memset(d, 0, pcr->len);
			memcpy(d, sha1, pcr->len < 20 ? pcr->len : 20);
		} else if (checked && r->algo[i] == e->digest.algo) {
			memcpy(d, e->digest.bytes, e->digest.len);	/* just checked against the data */
		} else {
			rc = tdigest(r->ctx, r->md[i], r->algo[i], e, d, &n);
			if (rc < 0)
				return vg_diag_set(diag, rc, "entry %" PRIu64 " at offset %zu: template "
						   "digest", index, e->offset);
		}
		if (extend(r->ctx, r->md[i], pcr, d) < 0)
			return vg_diag_ssl(diag, -EIO, "extend");
	}
	r->pcrs |= 1u << e->pcr;
	return 0;
}

int vg_imalog_replay_get(const struct vg_imalog_replay *r, unsigned int pcr, unsigned int algo,
			 struct vg_digest *ret)
{
	int s = slot_of(r, algo);

	if (s < 0 || pcr >= VG_PCR_COUNT)
		return -ENOENT;
	*ret = r->pcr[pcr][s];
	return 0;
}

int vg_imalog_replay_set(struct vg_imalog_replay *r, unsigned int pcr, const struct vg_digest *v)
{
	int s = slot_of(r, v->algo);

	if (s < 0 || pcr >= VG_PCR_COUNT)
		return -ENOENT;
	if (v->len != vg_hash_size(v->algo))
		return -EINVAL;
	r->pcr[pcr][s] = *v;
	r->pcrs |= 1u << pcr;
	return 0;
}

uint32_t vg_imalog_replay_pcrs(const struct vg_imalog_replay *r)
{
	return r->pcrs;
}

uint32_t vg_imalog_replay_banks(const struct vg_imalog_replay *r)
{
	return r->banks;
}

int vg_imalog_entry_bank_digests(const struct vg_imalog_entry *e, uint32_t banks, bool padded_sha1,
				 struct vg_digest *ret, struct vg_diag *diag)
{
	struct vg_digest sha1;
	int n = 0, r;

	if (padded_sha1 && !e->violation) {
		r = vg_imalog_template_digest(e, VG_HASH_SHA1, &sha1, diag);
		if (r < 0)
			return r;
	}
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		struct vg_digest *d = &ret[n];

		if (!(banks & (1u << a)))
			continue;
		d->algo = (uint8_t)a;
		d->len = (uint8_t)vg_hash_size(a);
		if (e->violation && padded_sha1 && a != VG_HASH_SHA1) {
			memset(d->bytes, 0, d->len);
			memset(d->bytes, 0xff, d->len < 20 ? d->len : 20);
		} else if (e->violation) {
			memset(d->bytes, 0xff, d->len);
		} else if (padded_sha1 && a != VG_HASH_SHA1) {
			memset(d->bytes, 0, d->len);
			memcpy(d->bytes, sha1.bytes, d->len < 20 ? d->len : 20);
		} else {
			r = vg_imalog_template_digest(e, a, d, diag);
			if (r < 0)
				return r;
		}
		n++;
	}
	return n;
}
