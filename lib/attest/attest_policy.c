// SPDX-License-Identifier: MIT
/*
 * attest_policy.c - reference policies for remote attestation: what file
 * digests may appear in an agent's measurement list, per path; excluded
 * paths; keys whose ima-sig signatures are trusted; allowed boot_aggregate
 * values and ima-buf digests.
 *
 * Reads vigil's own JSON, Keylime's runtime policy (v1, plain or inside a
 * DSSE envelope whose signature is NOT checked here) and Keylime's legacy
 * flat allowlist; writes vigil's JSON. Semantics follow Keylime's
 * keylime/ima/ima.py so verdicts agree on the same evidence.
 *
 * The path table is an open hash of paths, each with an array of allowed
 * digests (in the order given, for the export); past a few digests a path
 * also gets an open-addressing index over them, so that adding (with its
 * duplicate check) and looking up cost O(1) each whatever the number of
 * digests of one path: a policy's cost is linear in its size. Paths and
 * digests are hashed with SipHash-2-4 under a key drawn per policy, so a
 * policy cannot be written whose entries all collide. Lookups are per
 * entry on the verifier's hot path.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include <json-c/json.h>
#include <openssl/buffer.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "internal.h"
#include "vigil/attest.h"
#include "vigil/attest_boot.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"

struct pdig {
	uint8_t algo;			/* vg algo; VG_HASH__LAST: any algo of this length */
	uint8_t len;
	uint8_t bytes[VG_HASH_MAX_DIGEST];
};

struct pent {
	struct pent *next;
	uint64_t hash;
	size_t n, cap;
	struct pdig *d;
	uint32_t *ix;			/* slots: index into d + 1, 0 empty; NULL below IX_MIN */
	size_t ixcap;			/* a power of two, more than twice n */
	char path[];
};

#define IX_MIN 8			/* digests of one path before it gets an index */

struct table {
	struct pent **b;
	size_t nb, count;
	size_t ndig;			/* digests in all entries, at most VG_REFPOLICY_DIGESTS_MAX */
	uint64_t key[2];		/* SipHash key of this policy */
};

struct bootpin {
	uint8_t pcr;
	struct pdig d;
};

struct vg_refpolicy {
	struct table files;		/* path → digests (incl. "boot_aggregate") */
	struct table bufs;		/* ima-buf event name → digests */
	struct table ignored;		/* keyrings whose ima-buf entries pass ("*": all) */
	regex_t *ex;
	char **ex_src;
	size_t nex;
	struct vg_keyring *keys;
	size_t nkeys;
	char **key_pem;			/* each vg_refpolicy_add_key() as PEM, for the export */
	size_t nkey_pem;
	bool ignore_violations;
	struct bootpin *pins;		/* "boot_pcrs": allowed values per boot PCR */
	size_t npins;
};

static uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND							\
	do {								\
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;			\
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;			\
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
	} while (0)

/* SipHash-2-4 of @len bytes under @k (Aumasson and Bernstein's reference). */
static uint64_t siphash(const uint64_t k[2], const uint8_t *in, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
	uint64_t b = (uint64_t)len << 56, m;
	size_t end = len & ~(size_t)7;

	for (size_t i = 0; i < end; i += 8) {
		m = 0;
		for (int j = 7; j >= 0; j--)
			m = m << 8 | in[i + (size_t)j];
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; j < (len & 7); j++)
		b |= (uint64_t)in[end + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t path_hash(const struct table *t, const char *path)
{
	return siphash(t->key, (const uint8_t *)path, strlen(path));
}

static struct pent *t_find(const struct table *t, const char *path)
{
	uint64_t h;

	if (!t->nb)
		return NULL;
	h = path_hash(t, path);
	for (struct pent *e = t->b[h & (t->nb - 1)]; e; e = e->next)
		if (e->hash == h && strcmp(e->path, path) == 0)
			return e;
	return NULL;
}

static int t_grow(struct table *t)
{
	size_t nb = t->nb ? t->nb * 2 : 64;
	struct pent **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->nb; i++) {
		struct pent *e = t->b[i], *next;

		for (; e; e = next) {
			size_t k = e->hash & (nb - 1);

			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
	return 0;
}

/* Put d[@i] of @e in its index (which has room). */
static void ix_put(const struct table *t, struct pent *e, size_t i)
{
	size_t mask = e->ixcap - 1, k = siphash(t->key, e->d[i].bytes, e->d[i].len) & mask;

	while (e->ix[k])
		k = (k + 1) & mask;
	e->ix[k] = (uint32_t)(i + 1);
}

/* An index of @cap slots over the digests of @e. Return: 0, -ENOMEM. */
static int ix_build(const struct table *t, struct pent *e, size_t cap)
{
	uint32_t *ix = calloc(cap, sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	free(e->ix);
	e->ix = ix;
	e->ixcap = cap;
	for (size_t i = 0; i < e->n; i++)
		ix_put(t, e, i);
	return 0;
}

static bool same(const struct pdig *a, const struct pdig *b)
{
	return a->len == b->len && a->algo == b->algo && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* @d is already one of @e's digests (the same algorithm or wildcard, length and bytes). */
static bool t_has(const struct table *t, const struct pent *e, const struct pdig *d)
{
	if (!e->ix) {
		for (size_t i = 0; i < e->n; i++)
			if (same(&e->d[i], d))
				return true;
		return false;
	}
	for (size_t mask = e->ixcap - 1, k = siphash(t->key, d->bytes, d->len) & mask; e->ix[k];
	     k = (k + 1) & mask)
		if (same(&e->d[e->ix[k] - 1], d))
			return true;
	return false;
}

static int t_add(struct table *t, const char *path, const struct pdig *d)
{
	struct pent *e = t_find(t, path);

	if (!e) {
		size_t k;

		if (t->count >= t->nb && t_grow(t) < 0)
			return -ENOMEM;
		e = calloc(1, sizeof(*e) + strlen(path) + 1);
		if (!e)
			return -ENOMEM;
		strcpy(e->path, path);
		e->hash = path_hash(t, path);
		k = e->hash & (t->nb - 1);
		e->next = t->b[k];
		t->b[k] = e;
		t->count++;
	}
	if (!d || t_has(t, e, d))
		return 0;
	if (t->ndig >= VG_REFPOLICY_DIGESTS_MAX)
		return -E2BIG;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 2;
		struct pdig *nd = realloc(e->d, cap * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		e->d = nd;
		e->cap = cap;
	}
	/* the index (more than twice as many slots as digests) before the digest counts */
	if (e->n + 1 >= IX_MIN && 2 * (e->n + 1) >= e->ixcap &&
	    ix_build(t, e, e->ixcap ? e->ixcap * 2 : 4 * IX_MIN) < 0)
		return -ENOMEM;
	e->d[e->n++] = *d;
	if (e->ix)
		ix_put(t, e, e->n - 1);
	t->ndig++;
	return 0;
}

static void t_free(struct table *t)
{
	for (size_t i = 0; i < t->nb; i++) {
		struct pent *e = t->b[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e->d);
			free(e->ix);
			free(e);
		}
	}
	free(t->b);
	memset(t, 0, sizeof(*t));
}

static bool dig_match(const struct pdig *d, unsigned int algo, const uint8_t *b, size_t len)
{
	return d->len == len && (d->algo == VG_HASH__LAST || d->algo == algo) &&
	       memcmp(d->bytes, b, len) == 0;
}

static bool t_match(const struct table *t, const struct pent *e, unsigned int algo,
		    const uint8_t *b, size_t len)
{
	if (!e->ix) {
		for (size_t i = 0; i < e->n; i++)
			if (dig_match(&e->d[i], algo, b, len))
				return true;
		return false;
	}
	/* the index is keyed on the bytes only: a wildcard digest sits with the others */
	for (size_t mask = e->ixcap - 1, k = siphash(t->key, b, len) & mask; e->ix[k];
	     k = (k + 1) & mask)
		if (dig_match(&e->d[e->ix[k] - 1], algo, b, len))
			return true;
	return false;
}

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
	*ret = p;
	return 0;
}

void vg_refpolicy_free(struct vg_refpolicy *p)
{
	if (!p)
		return;
	t_free(&p->files);
	t_free(&p->bufs);
	t_free(&p->ignored);
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
	free(p);
}

int vg_refpolicy_allow(struct vg_refpolicy *p, const char *path, const struct vg_digest *digest)
{
	struct pdig d = { .algo = digest->algo, .len = digest->len };

	memcpy(d.bytes, digest->bytes, digest->len);
	return t_add(&p->files, path, &d);
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

/* "algo:hex" (vigil) or bare hex, algorithm implied by its length (Keylime). */
static int parse_digest(const char *s, struct pdig *d)
{
	const char *colon = strchr(s, ':');
	const char *hex = s;
	int n;

	memset(d, 0, sizeof(*d));
	d->algo = VG_HASH__LAST;
	if (colon) {
		char name[32];
		int a;

		if ((size_t)(colon - s) >= sizeof(name))
			return -EBADMSG;
		memcpy(name, s, (size_t)(colon - s));
		name[colon - s] = 0;
		a = vg_hash_by_name(name);
		if (a < 0)
			return -EBADMSG;
		d->algo = (uint8_t)a;
		hex = colon + 1;
	}
	n = vg_hex_decode(hex, d->bytes, sizeof(d->bytes));
	if (n < 20)
		return -EBADMSG;
	if (d->algo != VG_HASH__LAST && (size_t)n != vg_hash_size(d->algo))
		return -EBADMSG;
	d->len = (uint8_t)n;
	return 0;
}

static int add_digest_list(struct table *t, const char *path, json_object *arr,
			   struct vg_diag *diag)
{
	size_t n;
	int r;

	if (!json_object_is_type(arr, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "policy: digests of \"%.200s\" are not a list", path);
	n = json_object_array_length(arr);
	r = t_add(t, path, NULL);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		struct pdig d;

		if (!json_object_is_type(o, json_type_string) ||
		    parse_digest(json_object_get_string(o), &d) < 0)
			return vg_diag_set(diag, -EBADMSG, "policy: bad digest for \"%.200s\"", path);
		r = t_add(t, path, &d);
		if (r == -E2BIG)
			return vg_diag_set(diag, r, "policy: more than %u digests (the limit)",
					   VG_REFPOLICY_DIGESTS_MAX);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_digest_map(struct table *t, json_object *map, const char *what, struct vg_diag *diag)
{
	if (!map)
		return 0;
	if (!json_object_is_type(map, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "policy: \"%s\" is not an object", what);
	json_object_object_foreach(map, k, val) {
		int r = add_digest_list(t, k, val, diag);

		if (r < 0)
			return r;
	}
	return 0;
}

long vg_attest_b64_encode(const uint8_t *buf, size_t len, char **ret)
{
	char *out;

	if (len > (1u << 30))
		return -EINVAL;
	out = malloc(4 * ((len + 2) / 3) + 1);
	if (!out)
		return -ENOMEM;
	*ret = out;
	return EVP_EncodeBlock((unsigned char *)out, buf, (int)len);
}

static long b64_decode(const char *s, uint8_t **ret);

long vg_attest_b64_decode(const char *s, uint8_t **ret)
{
	return b64_decode(s, ret);
}

/* Base64 → malloc'd bytes. Return: length, or -EBADMSG/-ENOMEM. */
static long b64_decode(const char *s, uint8_t **ret)
{
	size_t n = strlen(s), pad = 0, j = 0;
	char *clean = malloc(n + 1);
	uint8_t *out;
	int r;

	if (!clean)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\n' && s[i] != '\r' && s[i] != ' ')
			clean[j++] = s[i];
	clean[j] = 0;
	if (j % 4) {
		free(clean);
		return -EBADMSG;
	}
	if (j && clean[j - 1] == '=')
		pad++;
	if (j > 1 && clean[j - 2] == '=')
		pad++;
	out = malloc(j / 4 * 3 + 1);
	if (!out) {
		free(clean);
		return -ENOMEM;
	}
	r = EVP_DecodeBlock(out, (const unsigned char *)clean, (int)j);
	free(clean);
	if (r < 0) {
		free(out);
		return -EBADMSG;
	}
	*ret = out;
	return r - (long)pad;
}

/* Keylime "verification-keys": a JSON string {"pubkeys": [b64 DER SPKI, ...]}. */
static int load_keylime_keys(struct vg_refpolicy *p, json_object *vk, struct vg_diag *diag)
{
	json_object *doc, *arr;
	const char *s;
	int r = 0;

	if (!vk || !json_object_is_type(vk, json_type_string))
		return 0;
	s = json_object_get_string(vk);
	if (!*s)
		return 0;
	doc = json_tokener_parse(s);
	if (!doc)
		return vg_diag_set(diag, -EBADMSG, "policy: verification-keys is not JSON");
	if (json_object_object_get_ex(doc, "pubkeys", &arr) &&
	    json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr) && r >= 0; i++) {
			json_object *o = json_object_array_get_idx(arr, i);
			uint8_t *der;
			long n;

			if (!json_object_is_type(o, json_type_string)) {
				r = vg_diag_set(diag, -EBADMSG, "policy: verification key %zu", i);
				break;
			}
			n = b64_decode(json_object_get_string(o), &der);
			if (n < 0) {
				r = vg_diag_set(diag, (int)n, "policy: verification key %zu base64", i);
				break;
			}
			r = vg_refpolicy_add_key(p, der, (size_t)n, diag);
			free(der);
		}
	}
	json_object_put(doc);
	return r < 0 ? r : 0;
}

static int load_json(struct vg_refpolicy *p, json_object *root, int depth, struct vg_diag *diag);

static int pin_add(struct vg_refpolicy *p, unsigned int pcr, const struct pdig *d)
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

/* "boot_pcrs": {"0": "hex" | "algo:hex" | [...], ...}: PCR 0-23 but 10 (IMA's). */
static int load_boot_pcrs(struct vg_refpolicy *p, json_object *o, struct vg_diag *diag)
{
	if (!json_object_is_type(o, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs is not an object");
	json_object_object_foreach(o, k, val) {
		char *end;
		unsigned long pcr = strtoul(k, &end, 10);
		bool list = json_object_is_type(val, json_type_array);
		size_t n = list ? json_object_array_length(val) : 1;

		if (!*k || *end || k[0] == '+' || k[0] == '-' || (k[0] == '0' && k[1]) ||
		    pcr >= 24 || pcr == 10)
			return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs: \"%.40s\" is not a PCR "
					   "0-23 other than 10", k);
		if (list && n == 0)
			return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs %lu: no value", pcr);
		for (size_t i = 0; i < n; i++) {
			json_object *e = list ? json_object_array_get_idx(val, i) : val;
			struct pdig d;
			int r;

			if (!json_object_is_type(e, json_type_string) ||
			    parse_digest(json_object_get_string(e), &d) < 0 ||
			    (d.algo == VG_HASH__LAST && d.len != 20 && d.len != 32 && d.len != 48 &&
			     d.len != 64))
				return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs %lu: value %zu is "
						   "not [ALGO:]HEX of a PCR", pcr, i);
			r = pin_add(p, (unsigned int)pcr, &d);
			if (r < 0)
				return r;
		}
	}
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
	return pin_add(p, pcr, &d);
}

static int load_dsse(struct vg_refpolicy *p, json_object *root, int depth, struct vg_diag *diag)
{
	json_object *pl, *doc;
	uint8_t *raw;
	long n;
	int r;

	if (!json_object_object_get_ex(root, "payload", &pl) ||
	    !json_object_is_type(pl, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "policy: DSSE envelope without payload");
	n = b64_decode(json_object_get_string(pl), &raw);
	if (n < 0)
		return vg_diag_set(diag, (int)n, "policy: DSSE payload is not base64");
	{
		json_tokener *tok = json_tokener_new();

		if (!tok) {
			free(raw);
			return -ENOMEM;
		}
		doc = json_tokener_parse_ex(tok, (const char *)raw, (int)n);
		json_tokener_free(tok);
	}
	free(raw);
	if (!doc)
		return vg_diag_set(diag, -EBADMSG, "policy: DSSE payload is not JSON");
	r = load_json(p, doc, depth + 1, diag);
	json_object_put(doc);
	return r;
}

static int load_json(struct vg_refpolicy *p, json_object *root, int depth, struct vg_diag *diag)
{
	json_object *o;
	int r;

	if (depth > 2 || !json_object_is_type(root, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "policy: not a JSON object");
	if (json_object_object_get_ex(root, "payloadType", &o))
		return load_dsse(p, root, depth, diag);
	if (json_object_object_get_ex(root, "digests", &o)) {
		r = add_digest_map(&p->files, o, "digests", diag);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "boot_aggregate", &o)) {
		r = add_digest_list(&p->files, "boot_aggregate", o, diag);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "excludes", &o)) {
		if (!json_object_is_type(o, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "policy: excludes is not a list");
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			json_object *e = json_object_array_get_idx(o, i);

			if (!json_object_is_type(e, json_type_string))
				return vg_diag_set(diag, -EBADMSG, "policy: exclude %zu", i);
			r = vg_refpolicy_exclude(p, json_object_get_string(e), diag);
			if (r == -EINVAL && diag)
				diag->err = -EBADMSG;	/* the diag says what the caller gets (fuzz_refpolicy) */
			if (r < 0)
				return r == -EINVAL ? -EBADMSG : r;
		}
	}
	/* vigil: "ima_buf"; Keylime: "ima-buf" and "keyrings" (sha256 of the buffer) */
	if (json_object_object_get_ex(root, "ima_buf", &o) &&
	    (r = add_digest_map(&p->bufs, o, "ima_buf", diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "ima-buf", &o) &&
	    (r = add_digest_map(&p->bufs, o, "ima-buf", diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "keyrings", &o) &&
	    (r = add_digest_map(&p->bufs, o, "keyrings", diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "keys", &o)) {
		if (!json_object_is_type(o, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "policy: keys is not a list");
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			json_object *k = json_object_array_get_idx(o, i);
			const char *s = json_object_get_string(k);

			if (!json_object_is_type(k, json_type_string))
				return vg_diag_set(diag, -EBADMSG, "policy: key %zu", i);
			r = vg_refpolicy_add_key(p, (const uint8_t *)s, strlen(s), diag);
			if (r < 0)
				return r;
		}
	}
	if (json_object_object_get_ex(root, "verification-keys", &o) &&
	    (r = load_keylime_keys(p, o, diag)) < 0)
		return r;
	/* Keylime: "ima": {"ignored_keyrings": [...]}; vigil: "ignored_keyrings" */
	{
		json_object *ik = NULL, *ima;

		if (json_object_object_get_ex(root, "ima", &ima) &&
		    json_object_is_type(ima, json_type_object))
			json_object_object_get_ex(ima, "ignored_keyrings", &ik);
		if (!ik)
			json_object_object_get_ex(root, "ignored_keyrings", &ik);
		if (ik && !json_object_is_type(ik, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "policy: ignored_keyrings is not a list");
		for (size_t i = 0; ik && i < json_object_array_length(ik); i++) {
			json_object *k = json_object_array_get_idx(ik, i);

			if (!json_object_is_type(k, json_type_string))
				return vg_diag_set(diag, -EBADMSG, "policy: ignored keyring %zu", i);
			r = t_add(&p->ignored, json_object_get_string(k), NULL);
			if (r < 0)
				return r;
		}
	}
	if (json_object_object_get_ex(root, "ignore_violations", &o))
		p->ignore_violations = json_object_get_boolean(o);
	if (json_object_object_get_ex(root, "boot_pcrs", &o) && (r = load_boot_pcrs(p, o, diag)) < 0)
		return r;
	return 0;
}

/* Keylime's legacy flat allowlist: "<hex digest>  <path>" per line, '#' comments. */
static int load_flat(struct vg_refpolicy *p, const char *s, size_t len, struct vg_diag *diag)
{
	size_t line = 0;

	while (len) {
		const char *nl = memchr(s, '\n', len);
		size_t ll = nl ? (size_t)(nl - s) : len;
		char buf[4200], *sp, *path;
		struct pdig d;
		int r;

		line++;
		if (ll >= sizeof(buf))
			return vg_diag_set(diag, -EBADMSG, "allowlist line %zu too long", line);
		memcpy(buf, s, ll);
		buf[ll] = 0;
		if (ll && buf[ll - 1] == '\r')
			buf[ll - 1] = 0;
		s += ll + (nl ? 1 : 0);
		len -= ll + (nl ? 1 : 0);
		if (!buf[0] || buf[0] == '#')
			continue;
		sp = strpbrk(buf, " \t");
		if (!sp)
			return vg_diag_set(diag, -EBADMSG, "allowlist line %zu: no path", line);
		*sp = 0;
		path = sp + 1;
		while (*path == ' ' || *path == '\t')
			path++;
		if (!*path || parse_digest(buf, &d) < 0)
			return vg_diag_set(diag, -EBADMSG, "allowlist line %zu: bad digest or path", line);
		r = t_add(&p->files, path, &d);
		if (r == -E2BIG)
			return vg_diag_set(diag, r, "allowlist line %zu: more than %u digests (the "
					   "limit)", line, VG_REFPOLICY_DIGESTS_MAX);
		if (r < 0)
			return r;
	}
	return 0;
}

int vg_refpolicy_load(const uint8_t *buf, size_t len, struct vg_refpolicy **ret,
		      struct vg_diag *diag)
{
	struct vg_refpolicy *p;
	size_t i = 0;
	int r;

	if (len > (256u << 20))
		return vg_diag_set(diag, -EBADMSG, "policy: %zu bytes, too large", len);
	r = vg_refpolicy_new(&p);
	if (r < 0)
		return r;
	while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r'))
		i++;
	if (i < len && buf[i] == '{') {
		json_tokener *tok = json_tokener_new();
		json_object *root;

		if (!tok) {
			r = -ENOMEM;
			goto fail;
		}
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		root = len > INT32_MAX ? NULL : json_tokener_parse_ex(tok, (const char *)buf, (int)len);
		if (!root || json_tokener_get_parse_end(tok) < len) {
			size_t end = json_tokener_get_parse_end(tok);

			/* trailing whitespace is fine */
			while (root && end < len && (buf[end] == ' ' || buf[end] == '\n' ||
						     buf[end] == '\r' || buf[end] == '\t'))
				end++;
			if (!root || end < len) {
				json_object_put(root);
				json_tokener_free(tok);
				r = vg_diag_set(diag, -EBADMSG, "policy: not valid JSON (byte %zu)",
						json_tokener_get_parse_end(tok));
				goto fail;
			}
		}
		json_tokener_free(tok);
		r = load_json(p, root, 0, diag);
		json_object_put(root);
	} else {
		r = load_flat(p, (const char *)buf, len, diag);
	}
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	vg_refpolicy_free(p);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp((*(const struct pent *const *)a)->path, (*(const struct pent *const *)b)->path);
}

static json_object *digests_json(const struct pent *e)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < e->n; i++) {
		char s[32 + 2 * VG_HASH_MAX_DIGEST + 1], *h = s;

		if (e->d[i].algo != VG_HASH__LAST)
			h += sprintf(s, "%s:", vg_hash_name(e->d[i].algo));
		vg_hex_encode(e->d[i].bytes, e->d[i].len, h);
		json_object_array_add(arr, json_object_new_string(s));
	}
	return arr;
}

static json_object *table_json(const struct table *t, bool skip_ba)
{
	json_object *o = json_object_new_object();
	struct pent **v = t->count ? malloc(t->count * sizeof(*v)) : NULL;
	size_t n = 0;

	if (!o || (t->count && !v)) {
		json_object_put(o);
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < t->nb; i++)
		for (struct pent *e = t->b[i]; e; e = e->next)
			if (!skip_ba || strcmp(e->path, "boot_aggregate") != 0)
				v[n++] = e;
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, v[i]->path, digests_json(v[i]));
	free(v);
	return o;
}

long vg_refpolicy_to_json(const struct vg_refpolicy *p, char **ret)
{
	json_object *root = json_object_new_object(), *ex, *ba;
	const struct pent *b = t_find(&p->files, "boot_aggregate");
	const char *s;
	long n = -ENOMEM;

	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "vigil_refpolicy", json_object_new_int(1));
	json_object_object_add(root, "digests", table_json(&p->files, true));
	/* absent stays absent: an empty list would be a path with no digest (fuzz_refpolicy) */
	if (b) {
		ba = digests_json(b);
		json_object_object_add(root, "boot_aggregate", ba);
	}
	ex = json_object_new_array();
	for (size_t i = 0; ex && i < p->nex; i++)
		json_object_array_add(ex, json_object_new_string(p->ex_src[i]));
	json_object_object_add(root, "excludes", ex);
	json_object_object_add(root, "ima_buf", table_json(&p->bufs, false));
	{
		json_object *ik = table_json(&p->ignored, false), *arr = json_object_new_array();

		json_object_object_foreach(ik, k, val) {
			(void)val;
			json_object_array_add(arr, json_object_new_string(k));
		}
		json_object_put(ik);
		json_object_object_add(root, "ignored_keyrings", arr);
	}
	json_object_object_add(root, "ignore_violations",
			       json_object_new_boolean(p->ignore_violations));
	if (p->nkey_pem) {
		json_object *ks = json_object_new_array();

		for (size_t i = 0; ks && i < p->nkey_pem; i++)
			json_object_array_add(ks, json_object_new_string(p->key_pem[i]));
		json_object_object_add(root, "keys", ks);
	}
	if (p->npins) {
		json_object *bp = json_object_new_object();

		for (unsigned int pcr = 0; bp && pcr < 24; pcr++) {
			json_object *arr = NULL;
			char key[4];

			for (size_t i = 0; i < p->npins; i++) {
				const struct pdig *d = &p->pins[i].d;
				char hs[32 + 2 * VG_HASH_MAX_DIGEST + 1], *h = hs;

				if (p->pins[i].pcr != pcr)
					continue;
				if (!arr)
					arr = json_object_new_array();
				if (d->algo != VG_HASH__LAST)
					h += sprintf(hs, "%s:", vg_hash_name(d->algo));
				vg_hex_encode(d->bytes, d->len, h);
				json_object_array_add(arr, json_object_new_string(hs));
			}
			if (!arr)
				continue;
			snprintf(key, sizeof(key), "%u", pcr);
			json_object_object_add(bp, key, arr);
		}
		json_object_object_add(root, "boot_pcrs", bp);
	}
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s) {
		*ret = strdup(s);
		n = *ret ? (long)strlen(s) : -ENOMEM;
	}
	json_object_put(root);
	return n;
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

int vg_refpolicy_check_entry(const struct vg_refpolicy *p, const struct vg_imalog_entry *e,
			     uint64_t index, struct vg_attest_verdict *v)
{
	const struct vg_imalog_field *fn, *fd, *fs;
	const struct pent *pe;
	struct vg_diag d = { 0 };
	const uint8_t *dig;
	unsigned int algo;
	size_t dlen, plen;
	char path[4097];
	bool is_buf = false;

	fn = field(e, VG_IMAF_N_NG);
	if (!fn)
		fn = field(e, VG_IMAF_N);
	fd = field(e, VG_IMAF_D_NG);
	if (!fd)
		fd = field(e, VG_IMAF_D_NGV2);
	if (!fd)
		fd = field(e, VG_IMAF_D);
	fs = field(e, VG_IMAF_SIG);
	if (field(e, VG_IMAF_BUF))
		is_buf = true;
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
	if (is_buf) {
		if (t_find(&p->ignored, path) || t_find(&p->ignored, "*"))
			return 0;
		pe = t_find(&p->bufs, path);
		if (!pe)
			return vg_attest_fail(v, VG_AF_NOT_IN_POLICY, "entry %llu: ima-buf event %s is "
					      "not in the policy", (unsigned long long)index, path);
		if (!t_match(&p->bufs, pe, algo, dig, dlen))
			return vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: ima-buf %s digest %s is not "
					      "allowed", (unsigned long long)index, path,
					      v ? v->digest : "");
		return 0;
	}
	if (excluded(p, path))
		return 0;
	pe = t_find(&p->files, path);
	if (fs && fs->len > 0 && p->nkeys > 0) {
		struct vg_digest fdg = { .algo = (uint8_t)algo, .len = (uint8_t)dlen };

		memcpy(fdg.bytes, dig, dlen);
		if (vg_sig_verify(p->keys, fs->data, fs->len, &fdg, &d) < 0)
			return vg_attest_fail(v, VG_AF_SIG_INVALID, "entry %llu: signature of %s does "
					      "not verify with a policy key: %s",
					      (unsigned long long)index, path, d.msg);
		/* a good signature is enough unless the policy also names the file (Keylime) */
		if (!pe)
			return 0;
	}
	if (!pe) {
		if (strcmp(path, "boot_aggregate") == 0)
			return vg_attest_fail(v, VG_AF_BOOT_AGGREGATE, "entry %llu: the policy allows "
					      "no boot_aggregate", (unsigned long long)index);
		return vg_attest_fail(v, VG_AF_NOT_IN_POLICY, "entry %llu: %s is not in the policy",
				      (unsigned long long)index, path);
	}
	if (!t_match(&p->files, pe, algo, dig, dlen)) {
		if (strcmp(path, "boot_aggregate") == 0)
			return vg_attest_fail(v, VG_AF_BOOT_AGGREGATE, "entry %llu: boot_aggregate %s is "
					      "not allowed", (unsigned long long)index,
					      v ? v->digest : "");
		return vg_attest_fail(v, VG_AF_DIGEST, "entry %llu: %s has digest %s, not one the "
				      "policy allows", (unsigned long long)index, path,
				      v ? v->digest : "");
	}
	return 0;
}
