// SPDX-License-Identifier: MIT
/*
 * trust_index.c - every (path, digest) of an opened trust database in
 * memory, with the packages that ship it: what a verifier asks of a digest
 * its policy does not allow (which Debian package and version it is).
 * Chained hash table keyed by path, algorithm and digest; packages are
 * copied once each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/trust.h"

struct ipkg {
	int64_t id;
	char *name, *version, *arch;
	enum vg_trust_state state;
};

struct ient {
	struct ient *next;
	uint64_t hash;
	const struct ipkg *pkg;
	struct vg_digest dg;
	char path[];
};

struct vg_trust_index {
	struct ient **b;
	size_t nb, count;
	struct ipkg *pkgs;
	size_t npkgs, pkgcap;
};

static uint64_t key_hash(const char *path, const struct vg_digest *dg)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	h = (h ^ dg->algo) * 0x100000001b3ull;
	for (size_t i = 0; i < dg->len; i++)
		h = (h ^ dg->bytes[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int grow(struct vg_trust_index *x)
{
	size_t nb = x->nb ? x->nb * 2 : 4096;
	struct ient **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < x->nb; i++)
		for (struct ient *e = x->b[i], *n; e; e = n) {
			n = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
		}
	free(x->b);
	x->b = b;
	x->nb = nb;
	return 0;
}

static const struct ipkg *pkg_of(struct vg_trust_index *x, const struct vg_trust_pkgrow *p)
{
	struct ipkg *k;

	/* rows come grouped by path, so packages repeat in no order: search (few hundred) */
	for (size_t i = x->npkgs; i-- > 0;)
		if (x->pkgs[i].id == p->id)
			return &x->pkgs[i];
	if (x->npkgs == x->pkgcap) {
		size_t cap = x->pkgcap ? x->pkgcap * 2 : 64;
		struct ipkg *n = realloc(x->pkgs, cap * sizeof(*n));

		if (!n)
			return NULL;
		/* entries point into the array: they are re-pointed after the load */
		x->pkgs = n;
		x->pkgcap = cap;
	}
	k = &x->pkgs[x->npkgs];
	*k = (struct ipkg){ .id = p->id, .state = p->state, .name = strdup(p->name),
			    .version = strdup(p->version), .arch = strdup(p->arch ? p->arch : "") };
	if (!k->name || !k->version || !k->arch) {
		free(k->name);
		free(k->version);
		free(k->arch);
		return NULL;
	}
	x->npkgs++;
	return k;
}

struct load {
	struct vg_trust_index *x;
	int err;
};

static int add_row(void *arg, const struct vg_trust_filerow *f)
{
	struct load *l = arg;
	struct vg_trust_index *x = l->x;
	const struct ipkg *p;
	size_t plen = strlen(f->path);

	if (f->target || !f->ndg)
		return 0;
	p = pkg_of(x, f->pkg);
	if (!p) {
		l->err = -ENOMEM;
		return 1;
	}
	for (size_t i = 0; i < f->ndg; i++) {
		struct ient *e;

		if (x->count >= x->nb / 2 * 3 && grow(x) < 0) {
			l->err = -ENOMEM;
			return 1;
		}
		e = malloc(sizeof(*e) + plen + 1);
		if (!e) {
			l->err = -ENOMEM;
			return 1;
		}
		e->dg = f->dg[i];
		memcpy(e->path, f->path, plen + 1);
		e->hash = key_hash(e->path, &e->dg);
		/* the package's index, made a pointer once the array stops moving */
		e->pkg = (const struct ipkg *)(uintptr_t)(p - x->pkgs);
		e->next = x->b[e->hash & (x->nb - 1)];
		x->b[e->hash & (x->nb - 1)] = e;
		x->count++;
	}
	return 0;
}

int vg_trust_index_load(struct vg_trust_db *db, struct vg_trust_index **ret, struct vg_diag *diag)
{
	struct vg_trust_index *x = calloc(1, sizeof(*x));
	struct load l = { .x = x };
	int r;

	*ret = NULL;
	if (!x || grow(x) < 0) {
		free(x);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	r = vg_trust_db_files(db, false, add_row, &l, diag);
	if (r == 1 || l.err) {
		vg_trust_index_free(x);
		return vg_diag_set(diag, l.err ? l.err : -ENOMEM, "out of memory");
	}
	if (r < 0) {
		/* add_row's entries hold indexes still: free them as such */
		vg_trust_index_free(x);
		return r;
	}
	for (size_t i = 0; i < x->nb; i++)
		for (struct ient *e = x->b[i]; e; e = e->next)
			e->pkg = &x->pkgs[(uintptr_t)e->pkg];
	*ret = x;
	return 0;
}

size_t vg_trust_index_find(const struct vg_trust_index *x, const char *path,
			   const struct vg_digest *dg, struct vg_trust_hit *ret, size_t max)
{
	uint64_t h = key_hash(path, dg);
	size_t n = 0;

	for (const struct ient *e = x->b[h & (x->nb - 1)]; e; e = e->next) {
		struct vg_trust_hit hit;
		size_t at;

		if (e->hash != h || e->dg.algo != dg->algo || e->dg.len != dg->len ||
		    memcmp(e->dg.bytes, dg->bytes, dg->len) != 0 || strcmp(e->path, path) != 0)
			continue;
		hit = (struct vg_trust_hit){ .package = e->pkg->name, .version = e->pkg->version,
					     .arch = e->pkg->arch, .state = e->pkg->state };
		/* newest version first (insertion into the first @max) */
		for (at = n < max ? n : max; at > 0; at--)
			if (vg_trust_version_cmp(ret[at - 1].version, hit.version) >= 0)
				break;
		if (at < max) {
			size_t last = n < max ? n : max - 1;

			memmove(&ret[at + 1], &ret[at], (last - at) * sizeof(*ret));
			ret[at] = hit;
		}
		n++;
	}
	return n;
}

size_t vg_trust_index_count(const struct vg_trust_index *x)
{
	return x ? x->count : 0;
}

void vg_trust_index_free(struct vg_trust_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nb; i++)
		for (struct ient *e = x->b[i], *n; e; e = n) {
			n = e->next;
			free(e);
		}
	for (size_t i = 0; i < x->npkgs; i++) {
		free(x->pkgs[i].name);
		free(x->pkgs[i].version);
		free(x->pkgs[i].arch);
	}
	free(x->pkgs);
	free(x->b);
	free(x);
}
