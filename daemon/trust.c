// SPDX-License-Identifier: MIT
/*
 * trust.c - trust=archive (docs/vigild.md, docs/trust.md): a file an
 * appraise rule with trust=archive covers that has no security.ima
 * passes when the trust database records its path and content digest.
 *
 * Who does what: the reload thread (and start-up, before any mark is
 * set) opens the database, checks its schema and MAC with vigild's HMAC
 * key and loads its (path, digest) pairs into an immutable in-memory
 * index (vg_trust_index); a policy without trust=archive never opens it.
 * The appraiser, which holds no path, returns the content digest of a
 * file without a label (in the index's algorithm, vd_req.algo). The
 * monitor looks up the kernel's name of the event's descriptor (never a
 * name a process gave) with --trust-root cut off, and on a merged-/usr
 * root the /bin/x alias of /usr/bin/x. The lookup is per event, also on
 * a cache hit: a cached verdict holds the digest, not the path, so a
 * hard link elsewhere is judged by its own path, and a reload's index
 * applies at once. A label, good or bad, is never overridden.
 *
 * The kernel names the file as seen from the opener's mount namespace: a
 * user who bind-mounts a copy onto a packaged path in a namespace of his
 * own (unshare -Urm) gets that path as the name. So the path looked up is
 * the name the file has in vigild's namespace (names.c, as for path=
 * rules): the kernel's where it leads to this very inode (lstat: no open,
 * no event), else the one its handle opens to through vigild's mount; the
 * copy is then named where it really is, and a packaged file seen through
 * a bind mount elsewhere (a service's private directory) by its own path.
 * A file with no name here (unlinked, or on a filesystem vigild has no
 * mount of) is trusted by nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "monitor.h"
#include "setup.h"

const char *vd_trust_db_path(const struct vd *d)
{
	return d->trust_db_path ? d->trust_db_path : d->cfg.trust_db ? d->cfg.trust_db : VD_TRUST_DB_DEFAULT;
}

void vd_trust_free(struct vd_trust *t)
{
	if (!t)
		return;
	vg_trust_index_free(t->idx);
	vg_trust_root_release(&t->root);
	free(t);
}

/* The first trust=archive rule whose appraise_algos= leaves @algo out: its index, or -1. */
static long algo_refused(const struct vg_policy *p, unsigned int algo)
{
	for (size_t i = 0; i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);

		if ((r->xflags & VG_POLX_TRUST_ARCHIVE) && (r->flags & VG_POLF_VALIDATE_ALGOS) &&
		    !(r->allowed_algos & (1u << algo)))
			return (long)i;
	}
	return -1;
}

int vd_trust_load(const struct vd *d, const struct vg_policy *p, struct vd_trust **ret, char *msg,
		  size_t cap)
{
	const char *path = vd_trust_db_path(d);
	const struct vg_hmac_key *key = d->trust_key.len ? &d->trust_key : &d->key;
	unsigned int algos[VG_TRUST_MAX_ALGOS], algo;
	struct vg_trust_db *db = NULL;
	struct vg_diag dg = { 0 };
	struct vd_trust *t;
	size_t n;
	long k;
	int r;

	*ret = NULL;
	if (!(vg_policy_uses(p) & VG_POLICY_USES_TRUST_ARCHIVE))
		return 0;
	if (!key->len) {
		snprintf(msg, cap, "trust database %s: the policy has trust=archive, and the database "
			 "is authenticated with the HMAC key: give --hmac-key (or key.hmac in vigil.conf) "
			 "or --trust-key", path);
		return -ENOKEY;
	}
	r = vg_trust_db_open(path, key->key, key->len, &db, &dg);
	if (r < 0) {
		if (strstr(dg.msg, path))
			snprintf(msg, cap, "trust database %s", dg.msg);
		else
			snprintf(msg, cap, "trust database %s: %s", path, dg.msg[0] ? dg.msg : strerror(-r));
		return r;
	}
	/* vigild's hash when the database records it, else the first it records */
	n = vg_trust_db_algos(db, algos);
	algo = n ? algos[0] : d->algo;
	for (size_t i = 0; i < n; i++)
		if (algos[i] == d->algo)
			algo = d->algo;
	k = algo_refused(p, algo);
	if (k >= 0) {
		const struct vg_policy_rule *q = vg_policy_rule(p, (size_t)k);

		snprintf(msg, cap, "%s:%u:%u: trust=archive with appraise_algos= that leaves out %s, "
			 "the digests trust database %s records", d->policy_path, q->line, q->col,
			 vg_hash_name(algo), path);
		vg_trust_db_free(db);
		return -EOPNOTSUPP;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		vg_trust_db_free(db);
		snprintf(msg, cap, "trust database %s: out of memory", path);
		return -ENOMEM;
	}
	r = vg_trust_index_load(db, algo, &t->idx, &dg);
	vg_trust_db_free(db);
	if (r < 0) {
		snprintf(msg, cap, "trust database %s: %s", path, dg.msg);
		vd_trust_free(t);
		return r;
	}
	r = vg_trust_root_init(&t->root, d->trust_root, &dg);
	if (r < 0) {
		snprintf(msg, cap, "--trust-root %s", dg.msg);
		vd_trust_free(t);
		return r;
	}
	t->algo = algo;
	*ret = t;
	return 0;
}

int vd_trust_judge(struct vd *d, struct ev *e, const struct result *r,
		   const char **ret_package)
{
	const struct vd_trust *t = d->trust;
	struct stat st = { .st_dev = e->key.dev, .st_ino = e->key.ino, .st_nlink = e->nlink };
	const char *name = e->acc.path, *path, *alias;
	int k;

	/* no security.ima at all: a label, good or bad, is never overridden */
	if (!t || !e->dec.trust_archive || !r || !r->appraised || r->err || r->status != VG_ST_NOLABEL ||
	    strcmp(r->cause, "missing-hash") != 0 || r->digest.algo != t->algo)
		return 0;
	/* found already when the policy has a path= rule (events.c) */
	if (!name) {
		if (vd_name_here(d, e->fd, "", &st, e->path, &e->path_here) <= 0)
			return 0;
		name = e->path_here ? e->path_here : e->path;
	}
	path = vg_trust_root_path(&t->root, name);
	if (!path)
		return 0;
	k = vg_trust_index_lookup(t->idx, path, &r->digest, ret_package);
	if (k == 0 && (alias = vg_trust_root_alias(&t->root, path)))
		k = vg_trust_index_lookup(t->idx, alias, &r->digest, ret_package);
	return k;
}
