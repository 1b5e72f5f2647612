// SPDX-License-Identifier: MIT
/*
 * trust_index.c - a trust database's (path, digest) pairs in one
 * algorithm, in memory, with the package of each: for a daemon's event
 * path, which must neither touch SQLite nor open a file, and for a
 * verifier naming the package and version of a digest. Built from an opened (schema and MAC
 * checked) database through vg_trust_db_files(): every regular file of
 * every package it records, current and superseded (superseded rows are
 * in the database only within the grace of its last build). One sorted
 * array of fixed-size entries, paths and package names in one string
 * pool, digests in one byte array: about 20 bytes, the digest and the
 * path per file. Lookup is a binary search on the path, then the few
 * entries of that path compared by digest. Immutable once built: any
 * number of threads may look up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "vigil/trust.h"

struct entry {
	uint32_t path, pathlen;	/* into pool */
	uint32_t pkg;		/* into pool: the package's name, then its version, then its
				   architecture (three strings one after another) */
	uint32_t dg;		/* index into digests (times dlen) */
	uint8_t state;		/* enum vg_trust_state */
};

struct vg_trust_index {
	unsigned int algo;
	size_t dlen;
	struct entry *e;
	size_t n, cap;
	char *pool;
	size_t poollen, poolcap;
	uint8_t *dg;
	uint32_t lastpkg;	/* the last package name interned, UINT32_MAX: none */
	int64_t lastpkg_id;
};

static int pool_add(struct vg_trust_index *x, const char *s, size_t len, uint32_t *ret)
{
	if (x->poollen + len + 1 > UINT32_MAX)
		return -EFBIG;
	if (x->poollen + len + 1 > x->poolcap) {
		size_t cap = x->poolcap ? x->poolcap : 65536;
		char *p;

		while (cap < x->poollen + len + 1)
			cap *= 2;
		p = realloc(x->pool, cap);
		if (!p)
			return -ENOMEM;
		x->pool = p;
		x->poolcap = cap;
	}
	memcpy(x->pool + x->poollen, s, len);
	x->pool[x->poollen + len] = '\0';
	*ret = (uint32_t)x->poollen;
	x->poollen += len + 1;
	return 0;
}

static int add_row(void *arg, const struct vg_trust_filerow *f)
{
	struct vg_trust_index *x = arg;
	const struct vg_digest *dg = NULL;
	struct entry *en;
	int r;

	if (f->target)
		return 0;	/* a symbolic link: nothing is appraised by it */
	for (size_t i = 0; i < f->ndg; i++)
		if (f->dg[i].algo == x->algo && f->dg[i].len == x->dlen)
			dg = &f->dg[i];
	if (!dg)
		return 0;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 4096;
		struct entry *e = realloc(x->e, cap * sizeof(*e));
		uint8_t *d;

		if (!e)
			return -ENOMEM;
		x->e = e;
		d = realloc(x->dg, cap * x->dlen);
		if (!d)
			return -ENOMEM;
		x->dg = d;
		x->cap = cap;
	}
	en = &x->e[x->n];
	memset(en, 0, sizeof(*en));
	r = pool_add(x, f->path, strlen(f->path), &en->path);
	if (r < 0)
		return r;
	en->pathlen = (uint32_t)strlen(f->path);
	if (x->lastpkg == UINT32_MAX || x->lastpkg_id != f->pkg->id ||
	    strcmp(x->pool + x->lastpkg, f->pkg->name) != 0) {
		const char *arch = f->pkg->arch ? f->pkg->arch : "";
		uint32_t unused;

		r = pool_add(x, f->pkg->name, strlen(f->pkg->name), &x->lastpkg);
		if (r == 0)
			r = pool_add(x, f->pkg->version, strlen(f->pkg->version), &unused);
		if (r == 0)
			r = pool_add(x, arch, strlen(arch), &unused);
		if (r < 0)
			return r;
		x->lastpkg_id = f->pkg->id;
	}
	en->pkg = x->lastpkg;
	en->state = (uint8_t)f->pkg->state;
	en->dg = (uint32_t)x->n;
	memcpy(x->dg + x->n * x->dlen, dg->bytes, x->dlen);
	x->n++;
	return 0;
}

static int cmp_path(const char *pool, const struct entry *a, const char *path, size_t len)
{
	size_t m = a->pathlen < len ? a->pathlen : len;
	int c = memcmp(pool + a->path, path, m);

	return c ? c : a->pathlen < len ? -1 : a->pathlen > len ? 1 : 0;
}

static int cmp_entries(const void *pa, const void *pb, void *arg)
{
	const struct vg_trust_index *x = arg;
	const struct entry *a = pa, *b = pb;

	return cmp_path(x->pool, a, x->pool + b->path, b->pathlen);
}

int vg_trust_index_load(struct vg_trust_db *db, unsigned int algo, struct vg_trust_index **ret,
			struct vg_diag *diag)
{
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	size_t n = vg_trust_db_algos(db, algos);
	struct vg_trust_index *x;
	bool have = false;
	int r;

	for (size_t i = 0; i < n; i++)
		have |= algos[i] == algo;
	if (!have || !vg_hash_size(algo))
		return vg_diag_set(diag, -EOPNOTSUPP, "records no %s digests", vg_hash_name(algo));
	x = calloc(1, sizeof(*x));
	if (!x)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	x->algo = algo;
	x->dlen = vg_hash_size(algo);
	x->lastpkg = UINT32_MAX;
	r = vg_trust_db_files(db, false, add_row, x, diag);
	if (r < 0) {
		if (r == -ENOMEM || r == -EFBIG)
			vg_diag_set(diag, r, "out of memory");
		vg_trust_index_free(x);
		return r;
	}
	/* the database yields path order already; sorting here makes the order this file's own */
	if (x->n)	/* an empty database: no array at all (qsort_r's NULL is undefined) */
		qsort_r(x->e, x->n, sizeof(*x->e), cmp_entries, x);
	*ret = x;
	return 0;
}

/* The first entry of @path (or where it would be). */
static size_t first_of(const struct vg_trust_index *x, const char *path, size_t len)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_path(x->pool, &x->e[mid], path, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct vg_trust_hit hit_of(const struct vg_trust_index *x, const struct entry *e)
{
	const char *name = x->pool + e->pkg, *ver = name + strlen(name) + 1;

	return (struct vg_trust_hit){ .package = name, .version = ver,
				      .arch = ver + strlen(ver) + 1,
				      .state = (enum vg_trust_state)e->state };
}

size_t vg_trust_index_find(const struct vg_trust_index *x, const char *path,
			   const struct vg_digest *dg, struct vg_trust_hit *ret, size_t max)
{
	size_t len, n = 0;

	if (!x || !path || !dg || dg->algo != x->algo || dg->len != x->dlen)
		return 0;
	len = strlen(path);
	for (size_t i = first_of(x, path, len);
	     i < x->n && cmp_path(x->pool, &x->e[i], path, len) == 0; i++) {
		struct vg_trust_hit h;
		size_t at;

		if (memcmp(x->dg + (size_t)x->e[i].dg * x->dlen, dg->bytes, x->dlen) != 0)
			continue;
		h = hit_of(x, &x->e[i]);
		/* newest version first: insertion into the first @max */
		for (at = n < max ? n : max; at > 0; at--)
			if (vg_trust_version_cmp(ret[at - 1].version, h.version) >= 0)
				break;
		if (at < max) {
			size_t last = n < max ? n : max - 1;

			memmove(&ret[at + 1], &ret[at], (last - at) * sizeof(*ret));
			ret[at] = h;
		}
		n++;
	}
	return n;
}

int vg_trust_index_lookup(const struct vg_trust_index *x, const char *path,
			  const struct vg_digest *dg, const char **ret_package)
{
	size_t len;
	int found = 0;

	if (!x || !path || !dg || dg->algo != x->algo || dg->len != x->dlen)
		return 0;
	len = strlen(path);
	for (size_t i = first_of(x, path, len); i < x->n && cmp_path(x->pool, &x->e[i], path, len) == 0; i++) {
		const struct entry *e = &x->e[i];

		if (CRYPTO_memcmp(x->dg + (size_t)e->dg * x->dlen, dg->bytes, x->dlen) != 0)
			continue;
		if (e->state == VG_TRUST_CURRENT || !found) {
			found = e->state == VG_TRUST_CURRENT ? 1 : 2;
			if (ret_package)
				*ret_package = x->pool + e->pkg;
		}
		if (found == 1)
			break;
	}
	return found;
}

size_t vg_trust_index_count(const struct vg_trust_index *x)
{
	return x ? x->n : 0;
}

unsigned int vg_trust_index_algo(const struct vg_trust_index *x)
{
	return x->algo;
}

void vg_trust_index_free(struct vg_trust_index *x)
{
	if (!x)
		return;
	free(x->e);
	free(x->pool);
	free(x->dg);
	free(x);
}
