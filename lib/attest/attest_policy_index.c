// SPDX-License-Identifier: MIT
/*
 * attest_policy_index.c - the per-path table of a reference policy.
 *
 * The path table is an open hash of paths, each with an array of allowed
 * digests (in the order given, for the export); past a few digests a path
 * also gets an open-addressing index over them, so that adding (with its
 * duplicate check) and looking up cost O(1) each whatever the number of
 * digests of one path: a policy's cost is linear in its size. Paths and
 * digests are hashed with SipHash-2-4 under a key drawn per policy, so a
 * policy cannot be written whose entries all collide.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "attest_policy.h"

#define IX_MIN 8			/* digests of one path before it gets an index */

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

struct pent *vg__reftab_find(const struct table *t, const char *path)
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

int vg__reftab_add(struct table *t, const char *path, const struct pdig *d)
{
	struct pent *e = vg__reftab_find(t, path);

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

void vg__reftab_free(struct table *t)
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

bool vg__reftab_match(const struct table *t, const struct pent *e, unsigned int algo,
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
