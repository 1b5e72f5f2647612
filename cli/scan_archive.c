// SPDX-License-Identifier: MIT
/*
 * scan_archive.c - the archive as `vigil scan`'s baseline (scan_archive.h).
 * The trust database is opened and authenticated once; every file of its
 * current packages goes into a table by path (open addressing, FNV-1a),
 * each with what dpkg gives it here (trust_dpkg.c: statoverrides, owner
 * names resolved in /etc/passwd and /etc/group); no SQLite after that,
 * and the walk's threads look up concurrently (a path's "seen" flag is
 * atomic). A file is judged by what a package says: content (in the
 * database's algorithm), type, link target, and, but for maintainer
 * scripts and links' modes, mode, owner and group. Times, inode, link
 * count and extended attributes are not: an upgrade changes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "scan_archive.h"
#include "trust_dpkg.h"
#include "vigil/trust.h"

/* what a package gives one path */
struct aentry {
	const char *name, *version, *arch;	/* the database's, open all along */
	enum vg_trust_kind kind;
	uint32_t mode;		/* type bits and the permission bits dpkg gives */
	uint32_t uid, gid;
	bool owner;		/* uid, gid known */
	struct vg_digest dg;
	char *target;		/* a link's */
	uint64_t size;
};

struct apath {
	char *path;
	size_t first, n;	/* its entries */
	atomic_int seen;
};

struct scan_archive {
	struct vg_trust_db *db;
	unsigned int algo, dbalgo;	/* the scan's; the database's it judges in */
	struct apath *p;
	size_t np, pcap;
	struct aentry *e;
	size_t ne, ecap;
	size_t *slot;		/* index + 1 into p; 0 empty */
	size_t cap;
	struct vg_trust_root tr;
	struct trust_dpkg dpkg;
	int rootfd;
	atomic_size_t judged;
};

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static const struct apath *find(const struct scan_archive *a, const char *path, size_t len)
{
	if (!a->cap)
		return NULL;
	for (size_t i = fnv(path, len) & (a->cap - 1);; i = (i + 1) & (a->cap - 1)) {
		const struct apath *p;

		if (!a->slot[i])
			return NULL;
		p = &a->p[a->slot[i] - 1];
		if (strlen(p->path) == len && memcmp(p->path, path, len) == 0)
			return p;
	}
}

/* @path, or on a merged /usr its /bin/x name */
static struct apath *lookup(const struct scan_archive *a, const char *path, size_t len)
{
	const struct apath *p = find(a, path, len);
	const char *alias;

	if (!p && path[len] == '\0' && (alias = vg_trust_root_alias(&a->tr, path)))
		p = find(a, alias, strlen(alias));
	return (struct apath *)p;
}

bool scan_archive_ships(const struct scan_archive *a, const char *path, size_t len)
{
	const struct apath *p = lookup(a, path, len);

	for (size_t i = 0; p && i < p->n; i++)
		if (a->e[p->first + i].kind != VG_TRUST_KIND_CONFFILE)
			return true;
	return false;
}

static int index_paths(struct scan_archive *a)
{
	a->cap = 1024;
	while (a->cap < 2 * a->np)
		a->cap *= 2;
	a->slot = calloc(a->cap, sizeof(*a->slot));
	if (!a->slot)
		return -ENOMEM;
	for (size_t k = 0; k < a->np; k++) {
		size_t i = fnv(a->p[k].path, strlen(a->p[k].path)) & (a->cap - 1);

		while (a->slot[i])
			i = (i + 1) & (a->cap - 1);
		a->slot[i] = k + 1;
	}
	return 0;
}

/* one row of the database: an entry of its path (rows come in path order) */
static int add_row(void *arg, const struct vg_trust_filerow *f)
{
	struct scan_archive *a = arg;
	struct aentry *e;
	const struct vg_digest *dg = NULL;
	unsigned int k;

	if (f->kind == VG_TRUST_KIND_SCRIPT_TMP)
		return 0;	/* there only during an unpack */
	/* a package's file another package diverted, one dpkg leaves out: the scan's */
	if (trust_dpkg_diverted(&a->dpkg, f->path, f->pkg->name) ||
	    trust_dpkg_excluded(&a->dpkg, f->path))
		return 0;
	for (size_t i = 0; i < f->ndg && !dg; i++)
		if (f->dg[i].algo == a->dbalgo)
			dg = &f->dg[i];
	if (!f->target && !dg)
		return 0;
	if (!a->np || strcmp(a->p[a->np - 1].path, f->path) != 0) {
		if (a->np == a->pcap) {
			size_t nc = a->pcap ? 2 * a->pcap : 4096;
			struct apath *np = realloc(a->p, nc * sizeof(*np));

			if (!np)
				return -ENOMEM;
			a->p = np;
			a->pcap = nc;
		}
		memset(&a->p[a->np], 0, sizeof(a->p[0]));
		a->p[a->np].path = strdup(f->path);
		a->p[a->np].first = a->ne;
		if (!a->p[a->np++].path)
			return -ENOMEM;
	}
	if (a->ne == a->ecap) {
		size_t nc = a->ecap ? 2 * a->ecap : 4096;
		struct aentry *ne = realloc(a->e, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		a->e = ne;
		a->ecap = nc;
	}
	e = &a->e[a->ne++];
	a->p[a->np - 1].n++;
	memset(e, 0, sizeof(*e));
	e->name = f->pkg->name;
	e->version = f->pkg->version;
	e->arch = f->pkg->arch;
	e->kind = f->kind;
	e->size = f->size;
	if (dg)
		e->dg = *dg;
	if (f->target && !(e->target = strdup(f->target)))
		return -ENOMEM;
	k = trust_dpkg_expected(&a->dpkg, f->path, f->mode, f->have_owner, f->uname, f->gname,
				f->uid, f->gid, &e->mode, &e->uid, &e->gid);
	e->owner = k & TRUST_DPKG_OWNER;
	e->mode |= f->target ? S_IFLNK : S_IFREG;
	return 0;
}

int scan_archive_open(const char *db, const struct vg_hmac_key *hk, unsigned int algo,
		      struct scan_archive **ret)
{
	struct scan_archive *a = calloc(1, sizeof(*a));
	struct vg_diag d = { 0 };
	int r;

	if (!a) {
		cli_err("out of memory");
		return -1;
	}
	a->rootfd = -1;
	a->algo = algo;
	atomic_init(&a->judged, 0);
	if (vg_trust_db_open(db, hk->key, hk->len, &a->db, &d) < 0) {
		cli_err("scan.baseline trust: %s", d.msg);
		goto fail;
	}
	a->dbalgo = vg_trust_db_algo_pick(a->db, algo);
	if (vg_trust_root_init(&a->tr, "/", &d) < 0) {
		cli_err("%s", d.msg);
		goto fail;
	}
	a->rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->rootfd < 0 || trust_dpkg_load(&a->dpkg, a->rootfd) < 0)
		goto fail;
	r = vg_trust_db_files(a->db, true, add_row, a, &d);
	if (r == 0)
		r = index_paths(a);
	if (r < 0) {
		cli_err("%s: %s", db, r == -ENOMEM ? "out of memory" : d.msg);
		goto fail;
	}
	*ret = a;
	return 0;
fail:
	scan_archive_free(a);
	return -1;
}

void scan_archive_free(struct scan_archive *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->np; i++)
		free(a->p[i].path);
	for (size_t i = 0; i < a->ne; i++)
		free(a->e[i].target);
	free(a->p);
	free(a->e);
	free(a->slot);
	vg_trust_root_release(&a->tr);
	if (a->rootfd >= 0)
		trust_dpkg_release(&a->dpkg);
	vg_trust_db_free(a->db);
	if (a->rootfd >= 0)
		close(a->rootfd);
	free(a);
}

static unsigned int bits(uint32_t m)
{
	unsigned int n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

/* what of @now differs from @e; @disk: its content in e's algorithm (len 0: not a file) */
static uint32_t differs(const struct aentry *e, const struct vg_scan_rec *now,
			const struct vg_digest *disk)
{
	uint32_t w = 0;
	bool link = e->target != NULL;

	if ((now->mode & S_IFMT) != (e->mode & S_IFMT))
		return VG_SCAN_TYPE;
	if (link && (now->target_len != strlen(e->target) ||
		     memcmp(now->target, e->target, now->target_len) != 0))
		w |= VG_SCAN_TARGET;
	if (!link && (disk->algo != e->dg.algo || disk->len != e->dg.len ||
		      memcmp(disk->bytes, e->dg.bytes, e->dg.len) != 0))
		w |= VG_SCAN_CONTENT | (now->size != e->size ? VG_SCAN_SIZE : 0);
	if (e->kind == VG_TRUST_KIND_SCRIPT)
		return w;	/* dpkg's own files: their content only */
	if (!link && (now->mode & 07777) != (e->mode & 07777))
		w |= VG_SCAN_MODE;
	if (e->owner && now->uid != e->uid)
		w |= VG_SCAN_UID;
	if (e->owner && now->gid != e->gid)
		w |= VG_SCAN_GID;
	return w;
}

int scan_archive_judge(struct scan_archive *a, const struct vg_scan_rec *now, int fd,
		       struct vg_hasher *h, struct scan_verdict *v)
{
	struct apath *p = lookup(a, now->path, now->path_len);
	struct vg_digest disk = { 0 };
	const struct aentry *best = NULL;
	uint32_t bw = 0;

	memset(v, 0, sizeof(*v));
	if (!p)
		return 0;
	atomic_store(&p->seen, 1);
	atomic_fetch_add(&a->judged, 1);
	if (S_ISREG(now->mode)) {
		disk = now->digest;
		if (disk.algo != a->dbalgo) {
			struct vg_diag d = { 0 };
			struct stat st;

			if (fd < 0 || fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0 ||
			    vg_hasher_file(h, fd, &st, a->dbalgo, &disk, NULL, &d) < 0) {
				cli_file_err(now->path, "%s", d.msg[0] ? d.msg : strerror(errno));
				return -1;
			}
		}
	}
	/* the package it matches best: every path has one; several (Multi-Arch) rarely differ */
	for (size_t i = 0; i < p->n; i++) {
		const struct aentry *e = &a->e[p->first + i];
		uint32_t w = differs(e, now, &disk);

		/* a different content weighs more than any metadata */
		if (!best || bits(w) + (w & VG_SCAN_CONTENT ? 8 : 0) <
				     bits(bw) + (bw & VG_SCAN_CONTENT ? 8 : 0)) {
			best = e;
			bw = w;
		}
	}
	v->conffile = best->kind == VG_TRUST_KIND_CONFFILE;
	v->what = bw;
	if (asprintf((char **)&v->pkg, "%s %s %s", best->name, best->version, best->arch) < 0) {
		v->pkg = NULL;
		cli_err("out of memory");
		return -1;
	}
	/* the archive's values, the rest the disk's (borrowed: never released) */
	v->then = *now;
	v->then.mode = best->target ? (best->mode & S_IFMT) | (now->mode & 07777) : best->mode;
	if (best->owner) {
		v->then.uid = best->uid;
		v->then.gid = best->gid;
	}
	if (best->target) {
		v->then.target = (uint8_t *)best->target;
		v->then.target_len = strlen(best->target);
	} else {
		v->then.digest = best->dg;
		v->then.size = best->size;
	}
	if (bw & VG_SCAN_TYPE)
		v->then.digest.len = 0;
	v->disk = disk;
	return 1;
}

void scan_verdict_release(struct scan_verdict *v)
{
	free((char *)v->pkg);
	memset(v, 0, sizeof(*v));
}

size_t scan_archive_judged(const struct scan_archive *a)
{
	return atomic_load(&a->judged);
}

int scan_archive_unseen(struct scan_archive *a,
			int (*fn)(void *arg, const char *path, const char *pkg, uint32_t mode),
			void *arg)
{
	static const char *const tops[] = { "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
					    "/libx32/" };

	for (size_t k = 0; k < a->np; k++) {
		const struct apath *p = &a->p[k];
		const struct aentry *e = NULL;
		char pkg[512], path[4096];
		int r;

		if (atomic_load(&p->seen))
			continue;
		for (size_t i = 0; i < p->n && !e; i++)
			if (a->e[p->first + i].kind != VG_TRUST_KIND_CONFFILE)
				e = &a->e[p->first + i];
		if (!e)
			continue;	/* a conffile: the scan's database has it */
		snprintf(path, sizeof(path), "%s", p->path);
		/* trust_root.c's merged bits: bin, sbin, lib, lib32, lib64, libx32 */
		for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
			if ((a->tr.merged & (1u << i)) && strncmp(p->path, tops[i], strlen(tops[i])) == 0)
				snprintf(path, sizeof(path), "/usr%s", p->path);
		/* seen under its other name (a merged /usr's /usr/bin/x of /bin/x) */
		if (strcmp(path, p->path) != 0 && find(a, path, strlen(path)) &&
		    atomic_load(&((struct apath *)find(a, path, strlen(path)))->seen))
			continue;
		snprintf(pkg, sizeof(pkg), "%s %s %s", e->name, e->version, e->arch);
		r = fn(arg, path, pkg, e->mode);
		if (r)
			return r;
	}
	return 0;
}
