// SPDX-License-Identifier: MIT
/*
 * attest_policy.c - reference policies for remote attestation: what file
 * digests may appear in an agent's measurement list, per path; excluded
 * paths; keys whose ima-sig signatures are trusted; allowed boot_aggregate
 * values and ima-buf digests.
 *
 * Semantics follow Keylime's keylime/ima/ima.py so verdicts agree on the
 * same evidence.
 *
 * This file holds the policy itself (allowed digests, excludes, keys,
 * boot PCR pins) and its lookup, per entry on the verifier's hot path.
 * The per-path digest table is attest_policy_index.c; the formats read
 * and written are attest_policy_format.c.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "internal.h"
#include "attest_policy.h"
#include "attest_mbpolicy_int.h"
#include "vigil/attest.h"
#include "vigil/attest_boot.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"
#include "vigil/trust.h"

int vg_refpolicy_new(struct vg_refpolicy **ret)
{
	struct vg_refpolicy *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (vg_keyring_new(&p->keys) < 0) {
		free(p);
		return -ENOMEM;
	}
	if (RAND_bytes((unsigned char *)p->files.key, sizeof(p->files.key)) != 1) {
		vg_keyring_free(p->keys);
		free(p);
		return -EIO;
	}
	memcpy(p->bufs.key, p->files.key, sizeof(p->bufs.key));
	memcpy(p->ignored.key, p->files.key, sizeof(p->ignored.key));
	memcpy(p->keyrings.key, p->files.key, sizeof(p->keyrings.key));
	*ret = p;
	return 0;
}

void vg_refpolicy_free(struct vg_refpolicy *p)
{
	if (!p)
		return;
	vg__reftab_free(&p->files);
	vg__reftab_free(&p->bufs);
	vg__reftab_free(&p->ignored);
	vg__reftab_free(&p->keyrings);
	for (size_t i = 0; i < p->nex; i++) {
		regfree(&p->ex[i]);
		free(p->ex_src[i]);
	}
	free(p->ex);
	free(p->ex_src);
	vg_keyring_free(p->keys);
	for (size_t i = 0; i < p->nkey_pem; i++)
		free(p->key_pem[i]);
	free(p->key_pem);
	free(p->pins);
	free(p->ualgo);
	vg_mbpolicy_free(p->mb);
	free(p);
}

const struct vg_mbpolicy *vg_refpolicy_mbpolicy(const struct vg_refpolicy *p)
{
	return p ? p->mb : NULL;
}

void vg_refpolicy_set_mbpolicy(struct vg_refpolicy *p, struct vg_mbpolicy *mb)
{
	vg_mbpolicy_free(p->mb);
	p->mb = mb;
}

struct vg_mbpolicy *vg_refpolicy_take_mbpolicy(struct vg_refpolicy *p)
{
	struct vg_mbpolicy *mb = p->mb;

	p->mb = NULL;
	return mb;
}

const char *vg__refpolicy_algo_name(const struct vg_refpolicy *p, const struct pdig *d)
{
	if (d->algo >= PDIG_UNCHECKED)
		return (size_t)(d->algo - PDIG_UNCHECKED) < p->nualgo ? p->ualgo[d->algo - PDIG_UNCHECKED]
								     : "unknown";
	return d->algo == VG_HASH__LAST ? NULL : vg_hash_name(d->algo);
}

int vg__refpolicy_ualgo(struct vg_refpolicy *p, const char *name)
{
	char (*n)[PDIG_NAME_MAX];

	if (strlen(name) >= PDIG_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < p->nualgo; i++)
		if (strcmp(p->ualgo[i], name) == 0)
			return PDIG_UNCHECKED + (int)i;
	if (p->nualgo >= PDIG_UNCHECKED_NAMES)
		return -E2BIG;
	n = realloc(p->ualgo, (p->nualgo + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->ualgo = n;
	strcpy(n[p->nualgo], name);
	return PDIG_UNCHECKED + (int)p->nualgo++;
}

int vg_refpolicy_allow(struct vg_refpolicy *p, const char *path, const struct vg_digest *digest)
{
	struct pdig d = { .algo = digest->algo, .len = digest->len };

	memcpy(d.bytes, digest->bytes, digest->len);
	return vg__reftab_add(&p->files, path, &d);
}

/*
 * What an exclude may cost to compile. glibc's regcomp() expands every
 * repetition into copies of the repeated tree (x+ is xx*, x{3} is xxx),
 * so stacked or nested quantifiers grow it exponentially: "a*0" followed
 * by thirty '+' took 2 GB (found by fuzz_refpolicy). The estimate counts
 * the tree's atoms with each repetition's copies; real excludes (paths,
 * alternations, a few ".*") cost about their length.
 */
#define EXCLUDE_MAX_LEN 4096
#define EXCLUDE_MAX_COST 20000
#define EXCLUDE_MAX_DEPTH 32

/* Return: NULL if @re is within bounds, else why not. */
static const char *exclude_too_costly(const char *re)
{
	uint64_t cost[EXCLUDE_MAX_DEPTH + 1] = { 0 }, last = 0;
	unsigned int depth = 0;
	bool after_quant = false, have_atom = false;
	size_t n = strlen(re);

	if (n > EXCLUDE_MAX_LEN)
		return "longer than 4096 bytes";
	for (size_t i = 0; i < n; i++) {
		uint64_t factor = 0;
		char c = re[i];

		if (c == '{') {
			char *end;
			unsigned long lo = strtoul(re + i + 1, &end, 10), hi = lo;

			if (end != re + i + 1 && *end == ',')
				hi = end[1] == '}' ? lo : strtoul(end + 1, &end, 10);
			if (*end == ',')	/* "{m,}" */
				end++;
			if (end != re + i + 1 && *end == '}') {
				if (lo > 255 || hi > 255)
					return "a repetition bound above 255";
				factor = (lo > hi ? lo : hi) + 1;
				i = (size_t)(end - re);
			}
		} else if (c == '*' || c == '+' || c == '?') {
			factor = 2;
		}
		if (factor) {
			if (after_quant)
				return "a quantifier on a quantifier";
			if (have_atom)
				cost[depth] += last * (factor - 1);
			after_quant = true;
		} else if (c == '(') {
			if (depth == EXCLUDE_MAX_DEPTH)
				return "groups nested deeper than 32";
			cost[++depth] = 0;
			after_quant = have_atom = false;
		} else if (c == ')' && depth > 0) {
			last = cost[depth--];
			cost[depth] += last;
			have_atom = true;
			after_quant = false;
		} else if (c == '|' || c == '^' || c == '$') {
			after_quant = have_atom = false;
		} else {
			if (c == '\\' && i + 1 < n) {
				if (re[i + 1] >= '1' && re[i + 1] <= '9')
					return "a back-reference";
				i++;
			} else if (c == '[') {	/* a bracket expression is one atom */
				size_t j = i + 1;

				if (j < n && re[j] == '^')
					j++;
				if (j < n && re[j] == ']')
					j++;
				while (j < n && re[j] != ']') {
					if (re[j] == '[' && j + 1 < n &&
					    (re[j + 1] == ':' || re[j + 1] == '.' || re[j + 1] == '=')) {
						const char *close = strchr(re + j + 2, re[j + 1]);

						j = close && close[1] == ']' ? (size_t)(close - re) + 2 : n;
						continue;
					}
					j++;
				}
				i = j < n ? j : n - 1;
			}
			last = 1;
			cost[depth] += 1;
			have_atom = true;
			after_quant = false;
		}
		for (unsigned int d = 0; d <= depth; d++)
			if (cost[d] > EXCLUDE_MAX_COST)
				return "too large once its repetitions are expanded";
	}
	return NULL;
}

int vg_refpolicy_exclude(struct vg_refpolicy *p, const char *regex, struct vg_diag *diag)
{
	const char *why = exclude_too_costly(regex);
	regex_t *ex;
	char **src;
	int r;

	if (why)
		return vg_diag_set(diag, -EINVAL, "exclude \"%.100s\" is refused: %s", regex, why);
	ex = realloc(p->ex, (p->nex + 1) * sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	p->ex = ex;
	src = realloc(p->ex_src, (p->nex + 1) * sizeof(*src));
	if (!src)
		return -ENOMEM;
	p->ex_src = src;
	src[p->nex] = strdup(regex);
	if (!src[p->nex])
		return -ENOMEM;
	r = regcomp(&ex[p->nex], regex, REG_EXTENDED);
	if (r != 0) {
		free(src[p->nex]);
		return vg_diag_set(diag, -EINVAL, "exclude \"%.100s\" is not an extended regex", regex);
	}
	p->nex++;
	return 0;
}

/*
 * The text the export writes for a key: PEM as given (up to a NUL, which
 * no JSON string carries), DER as PEM. Return: 0, -EBADMSG, -ENOMEM.
 */
static int key_to_pem(const uint8_t *buf, size_t len, char **ret)
{
	const uint8_t *z = memchr(buf, 0, len), *q = buf;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	BIO *b;
	BUF_MEM *m;
	int r = -ENOMEM;

	if (len >= 5 && memmem(buf, z ? (size_t)(z - buf) : len, "-----BEGIN", 10)) {
		size_t n = z ? (size_t)(z - buf) : len;

		*ret = strndup((const char *)buf, n);
		return *ret ? 0 : -ENOMEM;
	}
	if (len > LONG_MAX)
		return -EBADMSG;
	x = d2i_X509(NULL, &q, (long)len);
	if (!x) {
		q = buf;
		k = d2i_PUBKEY(NULL, &q, (long)len);
	}
	vg_ssl_clear();
	if (!x && !k)
		return -EBADMSG;
	b = BIO_new(BIO_s_mem());
	if (b && (x ? PEM_write_bio_X509(b, x) : PEM_write_bio_PUBKEY(b, k)) == 1) {
		BIO_get_mem_ptr(b, &m);
		*ret = strndup(m->data, m->length);
		r = *ret ? 0 : -ENOMEM;
	}
	BIO_free(b);
	X509_free(x);
	EVP_PKEY_free(k);
	return r;
}

int vg_refpolicy_add_key(struct vg_refpolicy *p, const uint8_t *buf, size_t len,
			 struct vg_diag *diag)
{
	char **kp = realloc(p->key_pem, (p->nkey_pem + 1) * sizeof(*kp));
	char *pem;
	int r;

	if (!kp)
		return -ENOMEM;
	p->key_pem = kp;
	r = key_to_pem(buf, len, &pem);
	if (r < 0)
		return vg_diag_set(diag, r, "policy key: %s", r == -ENOMEM ? "out of memory" :
				   "neither PEM nor a DER certificate or public key");
	r = vg_keyring_add_mem(p->keys, buf, len, "policy", diag);
	if (r <= 0) {
		free(pem);
		return r;
	}
	p->nkeys += (size_t)r;
	kp[p->nkey_pem++] = pem;
	return r;
}

size_t vg_refpolicy_paths(const struct vg_refpolicy *p)
{
	return p->files.count;
}

int vg__refpolicy_pin_add(struct vg_refpolicy *p, unsigned int pcr, const struct pdig *d)
{
	struct bootpin *n;

	for (size_t i = 0; i < p->npins; i++)
		if (p->pins[i].pcr == pcr && p->pins[i].d.algo == d->algo &&
		    p->pins[i].d.len == d->len && memcmp(p->pins[i].d.bytes, d->bytes, d->len) == 0)
			return 0;
	n = realloc(p->pins, (p->npins + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->pins = n;
	n[p->npins].pcr = (uint8_t)pcr;
	n[p->npins++].d = *d;
	return 0;
}

uint32_t vg_refpolicy_boot_mask(const struct vg_refpolicy *p)
{
	uint32_t m = 0;

	for (size_t i = 0; p && i < p->npins; i++)
		m |= 1u << p->pins[i].pcr;
	return m;
}

int vg_refpolicy_boot_allows(const struct vg_refpolicy *p, unsigned int pcr,
			     const struct vg_digest *value)
{
	bool any = false;

	for (size_t i = 0; i < p->npins; i++) {
		const struct pdig *d = &p->pins[i].d;

		if (p->pins[i].pcr != pcr || d->len != value->len ||
		    (d->algo != VG_HASH__LAST && d->algo != value->algo))
			continue;
		any = true;
		if (memcmp(d->bytes, value->bytes, d->len) == 0)
			return 1;
	}
	return any ? 0 : -ENOENT;
}

int vg_refpolicy_boot_pin(struct vg_refpolicy *p, unsigned int pcr, const struct vg_digest *value)
{
	struct pdig d = { .algo = value->algo, .len = value->len };

	if (pcr >= 24 || pcr == 10 || value->len != vg_hash_size(value->algo))
		return -EINVAL;
	memcpy(d.bytes, value->bytes, value->len);
	return vg__refpolicy_pin_add(p, pcr, &d);
}

static bool excluded(const struct vg_refpolicy *p, const char *path)
{
	regmatch_t m;

	for (size_t i = 0; i < p->nex; i++)
		if (regexec(&p->ex[i], path, 1, &m, 0) == 0 && m.rm_so == 0)
			return true;
	return false;
}

static const struct vg_imalog_field *field(const struct vg_imalog_entry *e, unsigned int id)
{
	for (unsigned int i = 0; i < e->tmpl.nfields; i++)
		if (e->f[i].id == id)
			return &e->f[i];
	return NULL;
}

/*
 * On a digest that did not match, only: when every digest the policy has
 * for the path is of an algorithm vigil does not know, the entry cannot be
 * checked (Keylime fails it too), which is a failure of its own kind. A
 * path with one checkable digest is judged by it (VG_AF_DIGEST).
 * Return: true when @v got VG_AF_DIGEST_UNSUPPORTED.
 */
static bool unsupported(const struct vg_refpolicy *p, const struct pent *pe, uint64_t index,
			const char *path, struct vg_attest_verdict *v)
{
	if (!pe->n)
		return false;
	for (size_t i = 0; i < pe->n; i++)
		if (pe->d[i].algo < PDIG_UNCHECKED)
			return false;
	vg_attest_fail(v, VG_AF_DIGEST_UNSUPPORTED, "entry %llu: the policy's digests for %s are "
		       "%s, an algorithm vigil cannot compute: the entry's %s cannot be checked",
		       (unsigned long long)index, path, vg__refpolicy_algo_name(p, &pe->d[0]),
		       v ? v->digest : "digest");
	return true;
}

void vg_refpolicy_set_archive(struct vg_refpolicy *p, const struct vg_trust_index *idx)
{
	p->archive = idx;
}

/*
 * The newest package of the archive index that records @path (else, for
 * /usr/{bin,sbin,lib*}/x, the /x bookworm's packages still ship) with @dg.
 * Return: true with *@hit filled.
 */
static bool archive_find(const struct vg_trust_index *x, const char *path,
			 const struct vg_digest *dg, struct vg_trust_hit *hit)
{
	static const char *const merged[] = { "/usr/bin/", "/usr/sbin/", "/usr/lib/",
					      "/usr/lib32/", "/usr/lib64/", "/usr/libx32/" };

	if (vg_trust_index_find(x, path, dg, hit, 1))
		return true;
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++)
		if (strncmp(path, merged[i], strlen(merged[i])) == 0)
			return vg_trust_index_find(x, path + 4, dg, hit, 1) > 0;
	return false;
}

static bool to_digest(unsigned int algo, const uint8_t *b, size_t len, struct vg_digest *dg)
{
	if (algo >= VG_HASH__LAST || len > sizeof(dg->bytes))
		return false;
	dg->algo = (uint8_t)algo;
	dg->len = (uint8_t)len;
	memcpy(dg->bytes, b, len);
	return true;
}

/*
 * A digest the policy does not allow for @path, that the archive index
 * knows: of a newer version of the package than every version whose
 * digest the policy allows for the path, VG_AF_PACKAGE_NEWER; otherwise
 * (an older version, or none of the policy's digests known) VG_AF_DIGEST
 * naming the package. @pe: the policy's entry for the path, NULL when it
 * has none (VG_AF_NOT_IN_POLICY naming the package).
 * Return: 1 (@v), 0 the archive does not know the digest (nothing done).
 */
static int archive_fail(const struct vg_refpolicy *p, const struct pent *pe, uint64_t index,
			const char *path, unsigned int algo, const uint8_t *dig, size_t dlen,
			struct vg_attest_verdict *v)
{
	unsigned long long i = (unsigned long long)index;
	const char *hd = v ? v->digest : "";
	struct vg_trust_hit host, pol, best = { 0 };
	struct vg_digest dg;
	bool have = false;

	if (!p->archive || !to_digest(algo, dig, dlen, &dg) ||
	    !archive_find(p->archive, path, &dg, &host))
		return 0;
	if (!pe)
		return vg_attest_fail(v, VG_AF_NOT_IN_POLICY, "entry %llu: %s is not in the policy "
				      "(its digest %s is the file of %s %s, a package the policy does "
				      "not hold)", i, path, hd, host.package, host.version);
	for (size_t k = 0; k < pe->n; k++) {
		struct vg_digest pd;

		if (!to_digest(pe->d[k].algo, pe->d[k].bytes, pe->d[k].len, &pd) ||
		    !archive_find(p->archive, path, &pd, &pol) || strcmp(pol.package, host.package))
			continue;
		if (!have || vg_trust_version_cmp(pol.version, best.version) > 0)
			best = pol;
		have = true;
	}
	if (have && vg_trust_version_cmp(host.version, best.version) > 0)
		return vg_attest_fail(v, VG_AF_PACKAGE_NEWER, "entry %llu: %s has digest %s, the "
				      "file of %s %s, newer than the version the policy allows (%s)",
				      i, path, hd, host.package, host.version, best.version);
	if (have)
		return vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: %s has digest %s, not one the "
				      "policy allows: the file of %s %s, not newer than the policy's "
				      "%s", i, path, hd, host.package, host.version, best.version);
	return vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: %s has digest %s, not one the policy "
			      "allows: the file of %s %s (the archive database knows none of the "
			      "policy's digests for it)", i, path, hd, host.package, host.version);
}

int vg_refpolicy_check_entry(const struct vg_refpolicy *p, const struct vg_imalog_entry *e,
			     uint64_t index, struct vg_attest_verdict *v)
{
	return vg__refpolicy_judge(p, e, index, NULL, NULL, v);
}

/*
 * An ima-buf entry whose buffer is a key, read as Keylime does
 * (_validate_ima_buf): a keyring in "ignored_keyrings" (or "*") passes and
 * teaches nothing; else the entry passes, and its key is learned, when the
 * keyring name is excluded or the policy's "keyrings" allow the buffer's
 * digest for it. vigil's own (strict) policies learn only from a digest
 * their "keyrings" list, never through an exclude or an ignored keyring,
 * and judge the entry as any ima-buf entry (below).
 * Return: 0 (*@learn set when the key may be learned), 1 (@v), -1 (not
 * judged here: a strict policy's entry, judged as any ima-buf entry).
 */
static int keyring_entry(const struct vg_refpolicy *p, const char *path, uint64_t index,
			 unsigned int algo, const uint8_t *dig, size_t dlen,
			 const struct vg_imalog_field *fb, struct vg__learn *learn,
			 struct vg_attest_verdict *v)
{
	const struct pent *pe = vg__reftab_find(&p->keyrings, path);
	bool allowed = pe && vg__reftab_match(&p->keyrings, pe, algo, dig, dlen);

	if (p->keyrings_legacy) {
		/* as before keys were learned: judged as any ima-buf entry */
		if (vg__reftab_find(&p->ignored, path) || vg__reftab_find(&p->ignored, "*"))
			return 0;
		return -1;
	}
	if (!p->sig_keylime) {
		if (allowed && learn && !vg__reftab_find(&p->ignored, path) &&
		    !vg__reftab_find(&p->ignored, "*")) {
			learn->buf = fb->data;
			learn->len = fb->len;
		}
		return -1;
	}
	if (vg__reftab_find(&p->ignored, path) || vg__reftab_find(&p->ignored, "*"))
		return 0;
	if (!allowed && !excluded(p, path)) {
		if (!pe)
			return vg_attest_fail(v, VG_AF_NOT_IN_POLICY, "entry %llu: keyring %s is not in "
					      "the policy's keyrings (its key is not learned)",
					      (unsigned long long)index, path);
		return unsupported(p, pe, index, path, v) ? 1 :
		       vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: keyring %s key digest %s is not "
				      "allowed (its key is not learned)", (unsigned long long)index,
				      path, v ? v->digest : "");
	}
	if (learn) {
		learn->buf = fb->data;
		learn->len = fb->len;
	}
	return 0;
}

int vg__refpolicy_judge(const struct vg_refpolicy *p, const struct vg_imalog_entry *e,
			uint64_t index, const struct vg_keyring *learned, struct vg__learn *learn,
			struct vg_attest_verdict *v)
{
	const struct vg_imalog_field *fn, *fd, *fs, *fb;
	const struct pent *pe;
	struct vg_diag d = { 0 };
	const uint8_t *dig;
	unsigned int algo;
	size_t dlen, plen;
	char path[4097];

	if (learn) {
		learn->buf = NULL;
		learn->len = 0;
	}
	fn = field(e, VG_IMAF_N_NG);
	if (!fn)
		fn = field(e, VG_IMAF_N);
	fd = field(e, VG_IMAF_D_NG);
	if (!fd)
		fd = field(e, VG_IMAF_D_NGV2);
	if (!fd)
		fd = field(e, VG_IMAF_D);
	fs = field(e, VG_IMAF_SIG);
	fb = field(e, VG_IMAF_BUF);
	if (v) {
		v->entry = (int64_t)index;
		v->path[0] = v->digest[0] = 0;
	}
	if (!fn || !fd)
		return vg_attest_fail(v, VG_AF_LOG_MALFORMED, "entry %llu: template %.*s has no file "
				      "name and digest", (unsigned long long)index, (int)e->name_len,
				      e->name);
	plen = fn->len;
	if (plen && fn->data[plen - 1] == 0)
		plen--;
	if (plen >= sizeof(path) || memchr(fn->data, 0, plen))
		return vg_attest_fail(v, VG_AF_LOG_MALFORMED, "entry %llu: bad event name",
				      (unsigned long long)index);
	memcpy(path, fn->data, plen);
	path[plen] = 0;
	if (v) {
		size_t k = plen < sizeof(v->path) - 1 ? plen : sizeof(v->path) - 1;

		memcpy(v->path, path, k);
		v->path[k] = 0;
	}
	if (vg_imalog_field_digest(fd, &algo, &dig, &dlen, &d) < 0)
		return vg_attest_fail(v, VG_AF_LOG_MALFORMED, "entry %llu (%s): %s",
				      (unsigned long long)index, path, d.msg);
	if (v) {
		int k = snprintf(v->digest, sizeof(v->digest), "%s:", vg_hash_name(algo));

		if (k > 0 && (size_t)k + 2 * dlen < sizeof(v->digest))
			vg_hex_encode(dig, dlen, v->digest + k);
	}
	if (e->violation) {
		if (p->ignore_violations)
			return 0;
		return vg_attest_fail(v, VG_AF_VIOLATION, "entry %llu: measurement violation "
				      "(ToMToU or open writers) on %s", (unsigned long long)index, path);
	}
	/*
	 * the next boot's initrd and command line (attest_announce.h): files that
	 * did not run, judged by the measured_boot section that takes them
	 */
	if (p->mb && p->mb->announced && vg_attest_announce_name(path, plen))
		return 0;
	if (fb) {
		int k = vg__attest_buf_key(fb->data, fb->len);

		if (k < 0 && p->sig_keylime)
			return vg_attest_fail(v, VG_AF_KEYRING_KEY, "entry %llu: ima-buf %s carries a key "
					      "of a type that cannot verify file signatures (not RSA "
					      "or EC)", (unsigned long long)index, path);
		if (k > 0) {
			k = keyring_entry(p, path, index, algo, dig, dlen, fb, learn, v);
			if (k >= 0)
				return k;
		}
		if (p->sig_keylime) {
			/* Keylime: a buffer that is no key is judged by "ima-buf", excludes apply */
			if (excluded(p, path))
				return 0;
		} else if (vg__reftab_find(&p->ignored, path) || vg__reftab_find(&p->ignored, "*")) {
			return 0;
		}
		pe = vg__reftab_find(&p->bufs, path);
		if (!p->sig_keylime && (!pe || !vg__reftab_match(&p->bufs, pe, algo, dig, dlen))) {
			/* vigil's own policies: a keyring's digests allow its entries too */
			const struct pent *kp = vg__reftab_find(&p->keyrings, path);

			if (kp && vg__reftab_match(&p->keyrings, kp, algo, dig, dlen))
				return 0;
			if (!pe)
				pe = kp;
		}
		if (!pe)
			return vg_attest_fail(v, VG_AF_NOT_IN_POLICY, "entry %llu: ima-buf event %s is "
					      "not in the policy", (unsigned long long)index, path);
		if (!vg__reftab_match(&p->bufs, pe, algo, dig, dlen))
			return unsupported(p, pe, index, path, v) ? 1 :
			       vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: ima-buf %s digest %s is not "
					      "allowed", (unsigned long long)index, path,
					      v ? v->digest : "");
		return 0;
	}
	if (excluded(p, path))
		return 0;
	pe = vg__reftab_find(&p->files, path);
	if (learned && !vg_keyring_count(learned))
		learned = NULL;
	if (fs && fs->len > 0 && (p->nkeys > 0 || learned)) {
		struct vg_digest fdg = { .algo = (uint8_t)algo, .len = (uint8_t)dlen };
		int sr = -ENOKEY;

		memcpy(fdg.bytes, dig, dlen);
		if (p->nkeys > 0)
			sr = vg_sig_verify(p->keys, fs->data, fs->len, &fdg, &d);
		/* a key learned from the log: only the ones learned before this entry */
		if (sr != 0 && learned)
			sr = vg_sig_verify(learned, fs->data, fs->len, &fdg, &d);
		if (sr == 0) {
			/*
			 * a good signature is enough unless the policy also names
			 * the file; read as Keylime does, it is enough
			 */
			if (!pe || p->sig_keylime)
				return 0;
		} else if (!p->sig_keylime) {
			return vg_attest_fail(v, VG_AF_SIG_INVALID, "entry %llu: signature of %s does "
					      "not verify with a policy key: %s",
					      (unsigned long long)index, path, d.msg);
		}
		/* Keylime: a signature that does not verify falls back to the digest list */
	}
	if (!pe) {
		if (strcmp(path, "boot_aggregate") == 0)
			return vg_attest_fail(v, VG_AF_BOOT_AGGREGATE, "entry %llu: the policy allows "
					      "no boot_aggregate", (unsigned long long)index);
		if (archive_fail(p, NULL, index, path, algo, dig, dlen, v))
			return 1;
		return vg_attest_fail(v, VG_AF_NOT_IN_POLICY, "entry %llu: %s is not in the policy",
				      (unsigned long long)index, path);
	}
	if (!vg__reftab_match(&p->files, pe, algo, dig, dlen)) {
		if (unsupported(p, pe, index, path, v))
			return 1;
		if (strcmp(path, "boot_aggregate") == 0)
			return vg_attest_fail(v, VG_AF_BOOT_AGGREGATE, "entry %llu: boot_aggregate %s is "
					      "not allowed", (unsigned long long)index,
					      v ? v->digest : "");
		if (archive_fail(p, pe, index, path, algo, dig, dlen, v))
			return 1;
		return vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: %s has digest %s, not one the "
				      "policy allows", (unsigned long long)index, path,
				      v ? v->digest : "");
	}
	return 0;
}
