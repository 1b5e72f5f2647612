// SPDX-License-Identifier: MIT
/*
 * trust_db.c - the trust database's writer (docs/trust.md): SQLite, written
 * to a temporary beside the target and renamed into place whole (outfile.h),
 * authenticated like the scan database: an HMAC-SHA256 under a key
 * derived from the caller's (HMAC-SHA256(key, "vigil trust database v1")),
 * over the schema as SQLite keeps it and every row of every table in a
 * fixed order, each value typed and length-prefixed (trust_db_mac.c). An
 * opened database is checked (schema, then MAC) before any row is handed
 * out (trust_db_read.c).
 *
 * Schema (format 4; trust_db.h):
 *   meta(key TEXT PRIMARY KEY, value BLOB): format, algos, mac
 *   releases(id, origin, label, suite, codename, date, valid_until, inrelease_sha256)
 *   packages(id, name, version, arch, release, deb_sha256, state, superseded_at)
 *   files(path BLOB, algo, digest BLOB, package, conffile (a vg_trust_kind), size, mode,
 *         target BLOB, uname, gname, uid, gid)
 *     keyed by (path, algo, digest, package), WITHOUT ROWID: one row per
 *     file and algorithm; a symbolic link has algo 255 and no digest.
 *   sources(name, origin, suite, codename, date): each source's Date, the
 *     newest a build accepted (a replayed older InRelease is refused); a
 *     source is named by where its InRelease is (apt's list name)
 *   boot(name, version, arch, path, role, series, authenticode, sha256,
 *     state, since): the boot references (trust_boot.h), carried from the
 *     previous database and settled by vg_trust_db_boot_settle
 * There is no secondary index: every byte a reader relies on is in the
 * rows the MAC covers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sqlite3.h>

#include "vigil/outfile.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"
#include "sqldb.h"
#include "trust_db.h"

int vg__trust_db_err(struct vg_trust_db *db, struct vg_diag *diag, int err, const char *what)
{
	return vg__sqldb_err(db->db, db->path, diag, err, what);
}

void vg_trust_db_free(struct vg_trust_db *db)
{
	if (!db)
		return;
	sqlite3_finalize(db->ins_file);
	sqlite3_finalize(db->ins_pkg);
	sqlite3_finalize(db->ins_boot);
	sqlite3_finalize(db->q_lookup);
	sqlite3_finalize(db->q_recorded);
	sqlite3_close(db->db);
	if (db->writing)
		vg_outfile_abort(&db->out);
	for (size_t i = 0; i < db->npkgs; i++) {
		free(db->pkgs[i].name);
		free(db->pkgs[i].version);
		free(db->pkgs[i].arch);
	}
	free(db->pkgs);
	for (size_t i = 0; i < db->nrels; i++) {
		free(db->rels[i].origin);
		free(db->rels[i].suite);
	}
	free(db->rels);
	OPENSSL_cleanse(db->mackey, sizeof(db->mackey));
	free(db->path);
	free(db);
}

struct vg_trust_db *vg__trust_db_alloc(const char *path)
{
	struct vg_trust_db *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->out.fd = -1;
	db->path = strdup(path);
	if (!db->path) {
		free(db);
		return NULL;
	}
	return db;
}

int vg_trust_db_create(const char *path, const unsigned int *algos, size_t nalgos,
		       const uint8_t *key, size_t keylen, struct vg_trust_db **ret,
		       struct vg_diag *diag)
{
	struct vg_trust_db *db = vg__trust_db_alloc(path);
	uint8_t fmt = TRUST_FORMAT, ab[VG_TRUST_MAX_ALGOS];
	int r;

	if (!db)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	if (nalgos == 0 || nalgos > VG_TRUST_MAX_ALGOS) {
		r = vg_diag_set(diag, -EINVAL, "%zu digest algorithms (1 to %d)", nalgos,
				VG_TRUST_MAX_ALGOS);
		goto fail;
	}
	for (size_t i = 0; i < nalgos; i++) {
		db->algos[i] = algos[i];
		ab[i] = (uint8_t)algos[i];
	}
	db->nalgos = nalgos;
	r = vg__trust_derive_key(db, key, keylen, diag);
	if (r < 0)
		goto fail;
	db->writing = true;	/* the temporary, if opened, is aborted by vg_trust_db_free */
	r = vg__sqldb_create(&db->out, path, &db->db, diag);
	if (r < 0)
		goto fail;
	r = vg__sqldb_exec(db->db, db->path, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		     SCHEMA "BEGIN;", diag);
	if (r == 0)
		r = vg__sqldb_put_meta(db->db, db->path, "format", &fmt, 1, diag);
	if (r == 0)
		r = vg__sqldb_put_meta(db->db, db->path, "algos", ab, nalgos, diag);
	if (r < 0)
		goto fail;
	db->format = TRUST_FORMAT;
	if (sqlite3_prepare_v2(db->db, "INSERT OR IGNORE INTO files VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1,
			       &db->ins_file, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->db, "INSERT INTO packages VALUES(NULL,?,?,?,?,?,?,?)", -1,
			       &db->ins_pkg, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->db, "INSERT OR REPLACE INTO boot VALUES(?,?,?,?,?,?,?,?,0,0)", -1,
			       &db->ins_boot, NULL) != SQLITE_OK) {
		r = vg__trust_db_err(db, diag, -EIO, "database");
		goto fail;
	}
	*ret = db;
	return 0;
fail:
	vg_trust_db_free(db);
	return r;
}

int64_t vg_trust_db_add_release(struct vg_trust_db *db, const struct vg_trust_release *rel,
				struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	int64_t id = -EIO;

	/* one row per InRelease content */
	if (sqlite3_prepare_v2(db->db, "SELECT id FROM releases WHERE inrelease_sha256 = ?", -1,
			       &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_blob(st, 1, rel->sha256, 32, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return id;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db->db, "INSERT INTO releases VALUES(NULL,?,?,?,?,?,?,?)", -1, &st,
			       NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, rel->origin, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, rel->label, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 3, rel->suite, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 4, rel->codename, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, rel->date) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, rel->valid_until) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 7, rel->sha256, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		id = vg__trust_db_err(db, diag, -EIO, "recording a release");
	else
		id = sqlite3_last_insert_rowid(db->db);
	sqlite3_finalize(st);
	return id;
}

static int insert_pkg(struct vg_trust_db *db, const char *name, const char *version,
		      const char *arch, int64_t release, const uint8_t sha[32], int state,
		      int64_t since, int64_t *ret_id, struct vg_diag *diag)
{
	sqlite3_stmt *st = db->ins_pkg;
	int r = 0;

	sqlite3_reset(st);
	if (sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, version, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 3, arch, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, release) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 5, sha, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 6, state) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 7, since) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
		r = vg__trust_db_err(db, diag, -EIO, "recording a package");
	else
		*ret_id = sqlite3_last_insert_rowid(db->db);
	sqlite3_clear_bindings(st);
	return r;
}

/* the owner columns of a file row; have: false for a file of a format 1 or 2 database */
struct owner {
	bool have;
	const char *uname, *gname;
	int64_t uid, gid;
};

static int bind_text_or_null(sqlite3_stmt *st, int col, const char *s)
{
	return s ? sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, col);
}

static int insert_file(struct vg_trust_db *db, const void *path, int plen, int algo,
		       const void *dg, int dlen, int64_t pkg, int kind, uint64_t size,
		       uint32_t mode, const void *target, int tlen, const struct owner *o,
		       struct vg_diag *diag)
{
	sqlite3_stmt *st = db->ins_file;
	int r = 0;

	sqlite3_reset(st);
	if (o->have ? bind_text_or_null(st, 9, o->uname) != SQLITE_OK ||
			      bind_text_or_null(st, 10, o->gname) != SQLITE_OK ||
			      sqlite3_bind_int64(st, 11, o->uid) != SQLITE_OK ||
			      sqlite3_bind_int64(st, 12, o->gid) != SQLITE_OK :
		      sqlite3_bind_null(st, 9) != SQLITE_OK || sqlite3_bind_null(st, 10) != SQLITE_OK ||
			      sqlite3_bind_null(st, 11) != SQLITE_OK ||
			      sqlite3_bind_null(st, 12) != SQLITE_OK) {
		sqlite3_clear_bindings(st);
		return vg__trust_db_err(db, diag, -EIO, "recording a file");
	}
	if (sqlite3_bind_blob(st, 1, path, plen, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, algo) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 3, dlen ? dg : "", dlen, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, pkg) != SQLITE_OK ||
	    sqlite3_bind_int(st, 5, kind) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, (int64_t)size) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 7, mode) != SQLITE_OK ||
	    (target ? sqlite3_bind_blob(st, 8, target, tlen, SQLITE_STATIC) :
		      sqlite3_bind_null(st, 8)) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		r = vg__trust_db_err(db, diag, -EIO, "recording a file");
	sqlite3_clear_bindings(st);
	return r;
}

/* a boot reference of @p (state settled later: vg_trust_db_boot_settle) */
static int insert_boot(struct vg_trust_db *db, const struct vg_trust_pkgrow *p,
		       const struct vg_trust_file *f, struct vg_diag *diag)
{
	sqlite3_stmt *st = db->ins_boot;
	char series[256];
	int r = 0;

	if (vg_trust_boot_series(p->name, series, sizeof(series)) < 0)
		return vg_diag_set(diag, -EINVAL, "package name \"%.64s...\" too long", p->name);
	sqlite3_reset(st);
	if (sqlite3_bind_text(st, 1, p->name, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, p->version, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 3, p->arch, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 4, f->path, (int)strlen(f->path), SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 5, (int)vg_trust_boot_role(f->path)) != SQLITE_OK ||
	    sqlite3_bind_text(st, 6, series, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 7, f->boot_authenticode, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 8, f->boot_sha256, 32, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		r = vg__trust_db_err(db, diag, -EIO, "recording a boot image");
	sqlite3_clear_bindings(st);
	return r;
}

int vg_trust_db_add_package(struct vg_trust_db *db, int64_t release_id,
			    const struct vg_trust_pkgrow *p, const struct vg_trust_deb *deb,
			    struct vg_diag *diag)
{
	int64_t id = 0;
	int r = insert_pkg(db, p->name, p->version, p->arch, release_id, deb->sha256,
			   VG_TRUST_CURRENT, 0, &id, diag);

	for (size_t i = 0; r == 0 && i < deb->n; i++) {
		const struct vg_trust_file *f = &deb->files[i];
		int plen = (int)strlen(f->path);
		/* a caller that sets only the conffile flag means a conffile */
		int kind = f->kind == VG_TRUST_KIND_FILE && f->conffile ? VG_TRUST_KIND_CONFFILE :
									  (int)f->kind;
		const struct owner o = { f->have_owner, f->uname, f->gname, f->uid, f->gid };

		if (kind < 0 || kind > VG_TRUST_KIND_MAX)
			return vg_diag_set(diag, -EINVAL, "%s: file kind %d", f->path, kind);
		if (f->boot && !f->target && vg_trust_boot_role(f->path) != VG_BOOT_NONE) {
			r = insert_boot(db, p, f, diag);
			if (r < 0)
				return r;
		}

		if (f->target) {
			r = insert_file(db, f->path, plen, ALGO_LINK, NULL, 0, id, kind,
					f->size, f->mode, f->target, (int)strlen(f->target), &o, diag);
			continue;
		}
		for (size_t a = 0; r == 0 && a < db->nalgos; a++)
			r = insert_file(db, f->path, plen, f->dg[a].algo, f->dg[a].bytes,
					f->dg[a].len, id, kind, f->size, f->mode, NULL, 0, &o,
					diag);
	}
	return r;
}

/* Whether @db records @name/@arch: 0 no, 1 in @version, 2 in another version. */
static int recorded(struct vg_trust_db *db, const char *name, const char *arch,
		    const char *version)
{
	sqlite3_stmt *st = NULL;
	int found = 0;

	if (sqlite3_prepare_v2(db->db,
			       "SELECT version FROM packages WHERE name = ? AND arch = ? AND state = 0",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, arch, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		if (v && strcmp(v, version) == 0) {
			found = 1;
			break;
		}
		found = 2;
	}
	sqlite3_finalize(st);
	return found;
}

/* the release row @id of @old into @db; Return: the new id, or -errno */
static int64_t carry_release(struct vg_trust_db *db, struct vg_trust_db *old, int64_t id,
			     struct vg_diag *diag)
{
	struct vg_trust_release rel = { 0 };
	sqlite3_stmt *st = NULL;
	int64_t nid = -ENOENT;

	if (sqlite3_prepare_v2(old->db, "SELECT origin, label, suite, codename, date,"
				       " valid_until, inrelease_sha256 FROM releases WHERE id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(old, diag, -EIO, "reading");
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 6) == 32) {
		rel.origin = (char *)sqlite3_column_text(st, 0);
		rel.label = (char *)sqlite3_column_text(st, 1);
		rel.suite = (char *)sqlite3_column_text(st, 2);
		rel.codename = (char *)sqlite3_column_text(st, 3);
		rel.date = sqlite3_column_int64(st, 4);
		rel.valid_until = sqlite3_column_int64(st, 5);
		memcpy(rel.sha256, sqlite3_column_blob(st, 6), 32);
		nid = vg_trust_db_add_release(db, &rel, diag);
	} else {
		nid = vg_diag_set(diag, -EBADMSG, "%s: package of release %lld, not recorded",
				  old->path, (long long)id);
	}
	sqlite3_finalize(st);
	return nid;
}

static int put_source(struct vg_trust_db *db, const char *verb, const char *name,
		      const char *origin, const char *suite, const char *codename, int64_t date,
		      struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	char sql[80];
	int r = 0;

	snprintf(sql, sizeof(sql), "INSERT OR %s INTO sources VALUES(?,?,?,?,?)", verb);
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, origin ? origin : "", -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 3, suite ? suite : "", -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 4, codename ? codename : "", -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, date) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
		r = vg__trust_db_err(db, diag, -EIO, "recording a source");
	sqlite3_finalize(st);
	return r;
}

int vg_trust_db_set_source(struct vg_trust_db *db, const char *name,
			   const struct vg_trust_release *rel, struct vg_diag *diag)
{
	return put_source(db, "REPLACE", name, rel->origin, rel->suite, rel->codename, rel->date,
			  diag);
}

/*
 * the boot references of @old this build did not record (format 4), with
 * their state: vg_trust_db_boot_settle judges them again
 */
static int carry_boot(struct vg_trust_db *db, struct vg_trust_db *old, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	int r = 0, rc;

	if (old->format < 4)
		return 0;
	if (sqlite3_prepare_v2(old->db, "SELECT * FROM boot", -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(old, diag, -EIO, "reading");
	if (sqlite3_prepare_v2(db->db, "INSERT OR IGNORE INTO boot VALUES(?,?,?,?,?,?,?,?,?,?)",
			       -1, &ins, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return vg__trust_db_err(db, diag, -EIO, "recording a boot image");
	}
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_reset(ins);
		for (int c = 0; c < 10; c++)
			if (sqlite3_bind_value(ins, c + 1, sqlite3_column_value(st, c)) != SQLITE_OK)
				r = -EIO;
		if (r == 0 && sqlite3_step(ins) != SQLITE_DONE)
			r = -EIO;
		if (r < 0)
			r = vg__trust_db_err(db, diag, -EIO, "recording a boot image");
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = vg__trust_db_err(old, diag, -EIO, "reading");
	sqlite3_finalize(ins);
	sqlite3_finalize(st);
	return r;
}

/* the sources of @old this build did not see (format 3; a format 1 or 2 database has none) */
static int carry_sources(struct vg_trust_db *db, struct vg_trust_db *old, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	int r = 0, rc;

	if (old->format < 3)
		return 0;
	if (sqlite3_prepare_v2(old->db, "SELECT name, origin, suite, codename, date FROM sources",
			       -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(old, diag, -EIO, "reading");
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = put_source(db, "IGNORE", (const char *)sqlite3_column_text(st, 0),
			       (const char *)sqlite3_column_text(st, 1),
			       (const char *)sqlite3_column_text(st, 2),
			       (const char *)sqlite3_column_text(st, 3), sqlite3_column_int64(st, 4),
			       diag);
	if (r == 0 && rc != SQLITE_DONE)
		r = vg__trust_db_err(old, diag, -EIO, "reading");
	sqlite3_finalize(st);
	return r;
}

int vg_trust_db_carry(struct vg_trust_db *db, struct vg_trust_db *old, int64_t now,
		      int64_t grace, struct vg_diag *diag)
{
	int64_t *map;	/* old package id -> new id, 0: not carried */
	int64_t maxid = 0;
	sqlite3_stmt *st = NULL;
	int dropped = 0, r = 0, rc;

	for (size_t i = 0; i < old->npkgs; i++)
		if (old->pkgs[i].id > maxid)
			maxid = old->pkgs[i].id;
	map = calloc((size_t)maxid + 1, sizeof(*map));
	if (!map)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	for (size_t i = 0; r == 0 && i < old->npkgs; i++) {
		const struct pkg *p = &old->pkgs[i];
		int state = p->state;
		int64_t since = p->superseded_at, rid;
		int rec = recorded(db, p->name, p->arch, p->version);

		if (rec < 0) {
			r = vg__trust_db_err(db, diag, -EIO, "reading");
			break;
		}
		if (rec == 1)
			continue;	/* recorded again, from the archive */
		if (rec == 2 && state == VG_TRUST_CURRENT) {
			state = VG_TRUST_SUPERSEDED;
			since = now;
		}
		if (state == VG_TRUST_SUPERSEDED && now - since >= grace) {
			dropped++;
			continue;
		}
		rid = carry_release(db, old, p->release, diag);
		if (rid < 0) {
			r = (int)rid;
			break;
		}
		r = insert_pkg(db, p->name, p->version, p->arch, rid, p->deb_sha256, state, since,
			       &map[p->id], diag);
	}
	if (r == 0 && sqlite3_prepare_v2(old->db, old->format >= 3 ?
						  "SELECT path, algo, digest, package, conffile, size,"
						  " mode, target, uname, gname, uid, gid FROM files" :
						  "SELECT path, algo, digest, package, conffile, size,"
						  " mode, target, NULL, NULL, NULL, NULL FROM files",
					 -1, &st, NULL) != SQLITE_OK)
		r = vg__trust_db_err(old, diag, -EIO, "reading");
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t op = sqlite3_column_int64(st, 3);
		const struct owner o = {
			.have = sqlite3_column_type(st, 10) == SQLITE_INTEGER &&
				sqlite3_column_type(st, 11) == SQLITE_INTEGER,
			.uname = (const char *)sqlite3_column_text(st, 8),
			.gname = (const char *)sqlite3_column_text(st, 9),
			.uid = sqlite3_column_int64(st, 10),
			.gid = sqlite3_column_int64(st, 11),
		};

		if (op < 1 || op > maxid || !map[op])
			continue;
		r = insert_file(db, sqlite3_column_blob(st, 0), sqlite3_column_bytes(st, 0),
				sqlite3_column_int(st, 1), sqlite3_column_blob(st, 2),
				sqlite3_column_bytes(st, 2), map[op], sqlite3_column_int(st, 4),
				(uint64_t)sqlite3_column_int64(st, 5),
				(uint32_t)sqlite3_column_int64(st, 6),
				sqlite3_column_type(st, 7) == SQLITE_NULL ? NULL :
									   sqlite3_column_blob(st, 7),
				sqlite3_column_bytes(st, 7), &o, diag);
	}
	if (r == 0 && st && rc != SQLITE_DONE)
		r = vg__trust_db_err(old, diag, -EIO, "reading");
	sqlite3_finalize(st);
	free(map);
	if (r == 0)
		r = carry_sources(db, old, diag);
	if (r == 0)
		r = carry_boot(db, old, diag);
	return r < 0 ? r : dropped;
}

int vg_trust_db_commit(struct vg_trust_db *db, struct vg_diag *diag)
{
	uint8_t mac[32];
	int r;

	sqlite3_finalize(db->ins_file);
	sqlite3_finalize(db->ins_pkg);
	sqlite3_finalize(db->ins_boot);
	sqlite3_finalize(db->q_lookup);
	sqlite3_finalize(db->q_recorded);
	db->ins_file = db->ins_pkg = db->ins_boot = NULL;
	r = vg__trust_compute_mac(db, mac, diag);
	if (r == 0)
		r = vg__sqldb_put_meta(db->db, db->path, "mac", mac, sizeof(mac), diag);
	if (r == 0)
		r = vg__sqldb_exec(db->db, db->path, "COMMIT", diag);
	if (r == 0 && sqlite3_close(db->db) != SQLITE_OK)
		r = vg__trust_db_err(db, diag, -EIO, "closing");
	db->db = NULL;
	if (r == 0) {
		db->writing = false;
		r = vg_outfile_commit(&db->out, diag);
	}
	vg_trust_db_free(db);
	return r;
}
