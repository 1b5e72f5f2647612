// SPDX-License-Identifier: MIT
/*
 * trust_db_read.c - a trust database opened for reading: the schema is
 * compared word for word with the one this format creates (an added
 * index, trigger or table is refused), the MAC checked (trust_db_mac.c),
 * and only then packages and releases loaded by id and rows handed out:
 * every file grouped by path and package, or one (path, digest) looked up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sqlite3.h>

#include "vigil/outfile.h"
#include "vigil/trust.h"
#include "sqldb.h"
#include "trust_db.h"

/* The schema, word for word: format 4's (Return: 4), 3's (3) or that of 1 and 2 (2). */
static int check_schema(struct vg_trust_db *db, struct vg_diag *diag)
{
	static const char *const schemas[] = { SCHEMA, SCHEMA_V3, SCHEMA_V2 };
	char *got = NULL;
	int r = vg__sqldb_schema(db->db, &got), which = 0;

	for (int i = 0; r == 0 && !which && i < 3; i++) {
		char *want = NULL;

		r = vg__sqldb_schema_of(schemas[i], &want);
		if (r == 0 && strcmp(got, want) == 0)
			which = 4 - i;
		free(want);
	}
	free(got);
	if (r == -ENOMEM)
		return vg_diag_set(diag, r, "out of memory");
	return which ? which : vg_diag_set(diag, -EBADMSG, "%s: not a vigil trust database", db->path);
}

/* meta(@key) into @buf (at most @cap bytes). Return: 0, -EBADMSG, -ENOMEM */
static int get_meta(struct vg_trust_db *db, const char *key, uint8_t *buf, size_t cap,
		    size_t *ret_len)
{
	uint8_t *v = NULL;
	size_t n = 0;
	int r = vg__sqldb_get_meta(db->db, key, cap, &v, &n);

	if (r == 0) {
		if (n)
			memcpy(buf, v, n);
		*ret_len = n;
	}
	free(v);
	return r;
}

static char *col_dup(sqlite3_stmt *st, int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);

	return strdup(s ? s : "");
}

/* packages and releases into memory, by id */
static int load_index(struct vg_trust_db *db, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db->db, "SELECT id, origin, suite FROM releases ORDER BY id", -1,
			       &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EBADMSG, "reading");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db->nrels == cap) {
			struct rel *n = realloc(db->rels, (cap = cap ? cap * 2 : 16) * sizeof(*n));

			if (!n)
				goto nomem;
			db->rels = n;
		}
		db->rels[db->nrels] = (struct rel){ .id = sqlite3_column_int64(st, 0),
						    .origin = col_dup(st, 1),
						    .suite = col_dup(st, 2) };
		db->nrels++;
		if (!db->rels[db->nrels - 1].origin || !db->rels[db->nrels - 1].suite)
			goto nomem;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return vg__trust_db_err(db, diag, -EBADMSG, "reading");
	cap = 0;
	if (sqlite3_prepare_v2(db->db, "SELECT id, name, version, arch, release, deb_sha256, state,"
				       " superseded_at FROM packages ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EBADMSG, "reading");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct pkg *p;

		if (db->npkgs == cap) {
			struct pkg *n = realloc(db->pkgs, (cap = cap ? cap * 2 : 256) * sizeof(*n));

			if (!n)
				goto nomem;
			db->pkgs = n;
		}
		p = &db->pkgs[db->npkgs++];
		memset(p, 0, sizeof(*p));
		p->id = sqlite3_column_int64(st, 0);
		p->name = col_dup(st, 1);
		p->version = col_dup(st, 2);
		p->arch = col_dup(st, 3);
		p->release = sqlite3_column_int64(st, 4);
		if (sqlite3_column_bytes(st, 5) == 32)
			memcpy(p->deb_sha256, sqlite3_column_blob(st, 5), 32);
		p->state = sqlite3_column_int(st, 6);
		p->superseded_at = sqlite3_column_int64(st, 7);
		if (!p->name || !p->version || !p->arch)
			goto nomem;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return vg__trust_db_err(db, diag, -EBADMSG, "reading");
	return 0;
nomem:
	sqlite3_finalize(st);
	return vg_diag_set(diag, -ENOMEM, "out of memory");
}

int vg_trust_db_open(const char *path, const uint8_t *key, size_t keylen,
		     struct vg_trust_db **ret, struct vg_diag *diag)
{
	struct vg_trust_db *db = vg__trust_db_alloc(path);
	uint8_t mac[32], want[32], ab[VG_TRUST_MAX_ALGOS], fmt = 0;
	struct stat st = { 0 };
	size_t n = 0;
	int r;

	if (!db)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	/* SQLite would say "unable to open database file" for all of these */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = vg_diag_set(diag, st.st_mode && !S_ISREG(st.st_mode) ? -EINVAL : -errno, "%s: %s",
				path, st.st_mode && !S_ISREG(st.st_mode) ? "not a regular file" :
									   strerror(errno));
		goto fail;
	}
	r = vg__sqldb_open_ro(path, &db->db, -EBADMSG, diag);
	if (r == 0)
		r = check_schema(db, diag);
	if (r < 0)
		goto fail;
	/* the format names the schema found: 4, 3, or 1 and 2 */
	if (get_meta(db, "format", &fmt, 1, &n) < 0 || n != 1 || fmt < TRUST_FORMAT_MIN ||
	    fmt > TRUST_FORMAT || (r >= 3 ? fmt != r : fmt >= 3) ||
	    get_meta(db, "algos", ab, sizeof(ab), &db->nalgos) < 0 || db->nalgos == 0 ||
	    get_meta(db, "mac", want, sizeof(want), &n) < 0 || n != 32) {
		r = vg_diag_set(diag, -EBADMSG, "%s: not a vigil trust database of format %d to %d",
				path, TRUST_FORMAT_MIN, TRUST_FORMAT);
		goto fail;
	}
	for (size_t i = 0; i < db->nalgos; i++)
		db->algos[i] = ab[i];
	db->format = fmt;
	r = vg__trust_derive_key(db, key, keylen, diag);
	if (r == 0)
		r = vg__trust_compute_mac(db, mac, diag);
	if (r < 0)
		goto fail;
	if (CRYPTO_memcmp(mac, want, 32) != 0) {
		r = vg_diag_set(diag, -EKEYREJECTED,
				"%s: MAC mismatch: the database was altered, or the key differs",
				path);
		goto fail;
	}
	r = load_index(db, diag);
	if (r < 0)
		goto fail;
	*ret = db;
	return 0;
fail:
	vg_trust_db_free(db);
	return r;
}

size_t vg_trust_db_algos(const struct vg_trust_db *db, unsigned int *algos)
{
	for (size_t i = 0; i < db->nalgos; i++)
		algos[i] = db->algos[i];
	return db->nalgos;
}

unsigned int vg_trust_db_algo_pick(const struct vg_trust_db *db, unsigned int want)
{
	for (size_t i = 0; i < db->nalgos; i++)
		if (db->algos[i] == want)
			return want;
	return db->algos[0];
}

static const struct pkg *pkg_by_id(const struct vg_trust_db *db, int64_t id)
{
	size_t lo = 0, hi = db->npkgs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (db->pkgs[mid].id == id)
			return &db->pkgs[mid];
		if (db->pkgs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct rel *rel_by_id(const struct vg_trust_db *db, int64_t id)
{
	for (size_t i = 0; i < db->nrels; i++)
		if (db->rels[i].id == id)
			return &db->rels[i];
	return NULL;
}

static void fill_pkgrow(const struct vg_trust_db *db, const struct pkg *p,
			struct vg_trust_pkgrow *row)
{
	const struct rel *rl = rel_by_id(db, p->release);

	row->id = p->id;
	row->name = p->name;
	row->version = p->version;
	row->arch = p->arch;
	row->origin = rl ? rl->origin : "";
	row->suite = rl ? rl->suite : "";
	memcpy(row->deb_sha256, p->deb_sha256, 32);
	row->state = p->state ? VG_TRUST_SUPERSEDED : VG_TRUST_CURRENT;
	row->superseded_at = p->superseded_at;
}

int vg_trust_db_files(struct vg_trust_db *db, bool current_only,
		      int (*fn)(void *arg, const struct vg_trust_filerow *f), void *arg,
		      struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	struct vg_trust_filerow f = { 0 };
	struct vg_trust_pkgrow prow;
	char *path = NULL, *target = NULL, *uname = NULL, *gname = NULL;
	int64_t cur_pkg = -1;
	int rc, r = 0;

	if (sqlite3_prepare_v2(db->db, db->format >= 3 ?
				       "SELECT path, algo, digest, package, conffile, size, mode,"
				       " target, uname, gname, uid, gid FROM files"
				       " ORDER BY path, package, algo" :
				       "SELECT path, algo, digest, package, conffile, size, mode,"
				       " target, NULL, NULL, NULL, NULL FROM files"
				       " ORDER BY path, package, algo",
			       -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EIO, "reading");
	for (;;) {
		const void *pp;
		int plen;
		int64_t pkg;
		bool same;

		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			pp = sqlite3_column_blob(st, 0);
			plen = sqlite3_column_bytes(st, 0);
			pkg = sqlite3_column_int64(st, 3);
			same = path && pkg == cur_pkg && (size_t)plen == strlen(path) &&
			       memcmp(pp, path, (size_t)plen) == 0;
		} else {
			same = false;
		}
		if (!same && path) {
			/* the file gathered so far is complete */
			f.path = path;
			f.target = target;
			f.uname = uname;
			f.gname = gname;
			r = fn(arg, &f);
			free(path);
			free(target);
			free(uname);
			free(gname);
			path = target = uname = gname = NULL;
			if (r)
				break;
		}
		if (rc != SQLITE_ROW)
			break;
		if (!same) {
			const struct pkg *p = pkg_by_id(db, pkg);

			if (!p) {
				r = vg_diag_set(diag, -EBADMSG, "%s: a file of no package", db->path);
				break;
			}
			if (current_only && p->state != VG_TRUST_CURRENT) {
				cur_pkg = -1;
				continue;
			}
			memset(&f, 0, sizeof(f));
			fill_pkgrow(db, p, &prow);
			f.pkg = &prow;
			{
				int k = sqlite3_column_int(st, 4);

				if (k < 0 || k > VG_TRUST_KIND_MAX) {
					r = vg_diag_set(diag, -EBADMSG, "%s: a file of kind %d",
							db->path, k);
					break;
				}
				f.kind = (enum vg_trust_kind)k;
				f.conffile = k == VG_TRUST_KIND_CONFFILE;
			}
			f.size = (uint64_t)sqlite3_column_int64(st, 5);
			f.mode = (uint32_t)sqlite3_column_int64(st, 6);
			path = malloc((size_t)plen + 1);
			if (!path) {
				r = vg_diag_set(diag, -ENOMEM, "out of memory");
				break;
			}
			memcpy(path, pp, (size_t)plen);
			path[plen] = '\0';
			cur_pkg = pkg;
			if (sqlite3_column_type(st, 10) == SQLITE_INTEGER &&
			    sqlite3_column_type(st, 11) == SQLITE_INTEGER) {
				const char *un = (const char *)sqlite3_column_text(st, 8);
				const char *gn = (const char *)sqlite3_column_text(st, 9);

				f.have_owner = true;
				f.uid = (uint32_t)sqlite3_column_int64(st, 10);
				f.gid = (uint32_t)sqlite3_column_int64(st, 11);
				uname = un ? strdup(un) : NULL;
				gname = gn ? strdup(gn) : NULL;
				if ((un && !uname) || (gn && !gname)) {
					r = vg_diag_set(diag, -ENOMEM, "out of memory");
					break;
				}
			}
			if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
				int tl = sqlite3_column_bytes(st, 7);

				target = malloc((size_t)tl + 1);
				if (!target) {
					r = vg_diag_set(diag, -ENOMEM, "out of memory");
					break;
				}
				memcpy(target, sqlite3_column_blob(st, 7), (size_t)tl);
				target[tl] = '\0';
			}
		}
		if (sqlite3_column_int(st, 1) != ALGO_LINK && f.ndg < VG_TRUST_MAX_ALGOS &&
		    sqlite3_column_bytes(st, 2) <= VG_HASH_MAX_DIGEST) {
			struct vg_digest *d = &f.dg[f.ndg++];

			d->algo = (uint8_t)sqlite3_column_int(st, 1);
			d->len = (uint8_t)sqlite3_column_bytes(st, 2);
			memcpy(d->bytes, sqlite3_column_blob(st, 2), d->len);
		}
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = vg__trust_db_err(db, diag, -EIO, "reading");
	free(path);
	free(target);
	free(uname);
	free(gname);
	sqlite3_finalize(st);
	return r;
}

unsigned int vg_trust_db_format(const struct vg_trust_db *db)
{
	return db->format;
}

int vg_trust_db_source_date(struct vg_trust_db *db, const char *name,
			    const struct vg_trust_release *rel, int64_t *ret_date, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	int r = 0, rc;

	if (sqlite3_prepare_v2(db->db, db->format >= 3 ?
				       "SELECT date FROM sources WHERE name = ?5" :
				       "SELECT max(date) FROM releases WHERE ifnull(origin, '') = ?1"
				       " AND ifnull(label, '') = ?2 AND ifnull(suite, '') = ?3"
				       " AND ifnull(codename, '') = ?4 HAVING count(*) > 0",
			       -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EIO, "reading");
	sqlite3_bind_text(st, 1, rel->origin ? rel->origin : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, rel->label ? rel->label : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, rel->suite ? rel->suite : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, rel->codename ? rel->codename : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*ret_date = sqlite3_column_int64(st, 0);
		r = 1;
	} else if (rc != SQLITE_DONE) {
		r = vg__trust_db_err(db, diag, -EIO, "reading");
	}
	sqlite3_finalize(st);
	return r;
}

int vg_trust_db_lookup(struct vg_trust_db *db, const char *path, const struct vg_digest *dg,
		       struct vg_diag *diag)
{
	sqlite3_stmt *st;
	int best = 0, rc;

	if (!db->q_lookup &&
	    sqlite3_prepare_v2(db->db, "SELECT package FROM files WHERE path = ? AND algo = ?"
				       " AND digest = ?",
			       -1, &db->q_lookup, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EIO, "reading");
	st = db->q_lookup;
	sqlite3_bind_blob(st, 1, path, (int)strlen(path), SQLITE_STATIC);
	sqlite3_bind_int(st, 2, dg->algo);
	sqlite3_bind_blob(st, 3, dg->bytes, dg->len, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct pkg *p = pkg_by_id(db, sqlite3_column_int64(st, 0));

		if (p && p->state == VG_TRUST_CURRENT)
			best = 1;
		else if (p && !best)
			best = 2;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return vg__trust_db_err(db, diag, -EIO, "reading");
	return best;
}

int vg_trust_db_recorded(struct vg_trust_db *db, const char *path, unsigned int algo,
			 struct vg_digest *ret_dg, struct vg_diag *diag)
{
	sqlite3_stmt *st;
	struct vg_digest cur = { 0 }, sup = { 0 };
	int best = 0, rc;

	if (!db->q_recorded &&
	    sqlite3_prepare_v2(db->db, "SELECT digest, package FROM files WHERE path = ?"
				       " AND algo = ? ORDER BY digest",
			       -1, &db->q_recorded, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EIO, "reading");
	st = db->q_recorded;
	sqlite3_bind_blob(st, 1, path, (int)strlen(path), SQLITE_STATIC);
	sqlite3_bind_int(st, 2, (int)algo);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct pkg *p = pkg_by_id(db, sqlite3_column_int64(st, 1));
		int n = sqlite3_column_bytes(st, 0);
		struct vg_digest *to;

		if (!p || n <= 0 || n > VG_HASH_MAX_DIGEST)
			continue;
		if (p->state == VG_TRUST_CURRENT) {
			if (best == 1)
				continue;
			best = 1;
			to = &cur;
		} else {
			if (best)
				continue;
			best = 2;
			to = &sup;
		}
		to->algo = (uint8_t)algo;
		to->len = (uint8_t)n;
		memcpy(to->bytes, sqlite3_column_blob(st, 0), (size_t)n);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return vg__trust_db_err(db, diag, -EIO, "reading");
	if (best && ret_dg)
		*ret_dg = best == 1 ? cur : sup;
	return best;
}

void vg_trust_db_counts(struct vg_trust_db *db, uint64_t *ret_current,
			uint64_t *ret_superseded, uint64_t *ret_files)
{
	sqlite3_stmt *st = NULL;
	uint64_t cur = 0, sup = 0, files = 0;

	for (size_t i = 0; i < db->npkgs; i++) {
		if (db->pkgs[i].state == VG_TRUST_CURRENT)
			cur++;
		else
			sup++;
	}
	if (sqlite3_prepare_v2(db->db, "SELECT count(*) FROM (SELECT DISTINCT path, package"
				       " FROM files)",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		files = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	*ret_current = cur;
	*ret_superseded = sup;
	*ret_files = files;
}
