// SPDX-License-Identifier: MIT
/*
 * trust_db.c - the trust database (docs/trust.md): SQLite, written to a
 * temporary beside the target and renamed into place whole (outfile.h),
 * authenticated like the scan database: an HMAC-SHA256 under a key
 * derived from the caller's (HMAC-SHA256(key, "vigil trust database v1")),
 * over the schema as SQLite keeps it and every row of every table in a
 * fixed order, each value typed and length-prefixed. An opened database is
 * checked (schema, then MAC) before any row is handed out.
 *
 * Schema (format 1):
 *   meta(key TEXT PRIMARY KEY, value BLOB): format, algos, mac
 *   releases(id, origin, label, suite, codename, date, valid_until, inrelease_sha256)
 *   packages(id, name, version, arch, release, deb_sha256, state, superseded_at)
 *   files(path BLOB, algo, digest BLOB, package, conffile, size, mode, target BLOB)
 *     keyed by (path, algo, digest, package), WITHOUT ROWID: one row per
 *     file and algorithm; a symbolic link has algo 255 and no digest.
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

#define TRUST_FORMAT 1
#define TRUST_MAC_LABEL "vigil trust database v1"
#define ALGO_LINK 255

#define SCHEMA \
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB);" \
	"CREATE TABLE releases(id INTEGER PRIMARY KEY, origin TEXT, label TEXT, suite TEXT," \
	" codename TEXT, date INTEGER, valid_until INTEGER, inrelease_sha256 BLOB);" \
	"CREATE TABLE packages(id INTEGER PRIMARY KEY, name TEXT, version TEXT, arch TEXT," \
	" release INTEGER, deb_sha256 BLOB, state INTEGER, superseded_at INTEGER);" \
	"CREATE TABLE files(path BLOB, algo INTEGER, digest BLOB, package INTEGER," \
	" conffile INTEGER, size INTEGER, mode INTEGER, target BLOB," \
	" PRIMARY KEY(path, algo, digest, package)) WITHOUT ROWID;"

/* the MAC'ed content, table by table, in a fixed order */
static const char *const mac_queries[] = {
	"SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name",
	"SELECT key, value FROM meta WHERE key <> 'mac' ORDER BY key",
	"SELECT * FROM releases ORDER BY id",
	"SELECT * FROM packages ORDER BY id",
	"SELECT * FROM files ORDER BY path, algo, digest, package",
};

struct pkg {
	int64_t id;
	char *name, *version, *arch;
	int64_t release;
	uint8_t deb_sha256[32];
	int state;
	int64_t superseded_at;
};

struct rel {
	int64_t id;
	char *origin, *suite;
};

struct vg_trust_db {
	sqlite3 *db;
	char *path;
	struct vg_outfile out;
	bool writing;
	uint8_t mackey[32];
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	size_t nalgos;
	sqlite3_stmt *ins_file, *ins_pkg;
	/* an opened database: packages and releases, by id */
	struct pkg *pkgs;
	size_t npkgs;
	struct rel *rels;
	size_t nrels;
};

static int db_err(struct vg_trust_db *db, struct vg_diag *diag, int err, const char *what)
{
	return vg_diag_set(diag, err, "%s: %s: %s", db->path, what,
			   db->db ? sqlite3_errmsg(db->db) : "cannot open");
}

static int derive_key(struct vg_trust_db *db, const uint8_t *key, size_t keylen,
		      struct vg_diag *diag)
{
	size_t outlen = 0;
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	int r = 0;

	if (!ctx || !EVP_MAC_init(ctx, key, keylen, params) ||
	    !EVP_MAC_update(ctx, (const uint8_t *)TRUST_MAC_LABEL, strlen(TRUST_MAC_LABEL)) ||
	    !EVP_MAC_final(ctx, db->mackey, &outlen, sizeof(db->mackey)))
		r = vg_diag_ssl(diag, -ENOMEM, "HMAC-SHA256");
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return r;
}

/* u8 type tag, then an i64 or a u32 length and the bytes; big-endian */
static bool mac_value(EVP_MAC_CTX *ctx, sqlite3_stmt *st, int col)
{
	uint8_t h[9];
	int t = sqlite3_column_type(st, col);

	h[0] = (uint8_t)t;
	if (t == SQLITE_INTEGER) {
		uint64_t v = (uint64_t)sqlite3_column_int64(st, col);

		for (int i = 0; i < 8; i++)
			h[1 + i] = (uint8_t)(v >> (56 - 8 * i));
		return EVP_MAC_update(ctx, h, 9);
	}
	if (t == SQLITE_NULL)
		return EVP_MAC_update(ctx, h, 1);
	{
		const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, col) :
						   sqlite3_column_blob(st, col);
		uint32_t n = (uint32_t)sqlite3_column_bytes(st, col);

		h[1] = (uint8_t)(n >> 24);
		h[2] = (uint8_t)(n >> 16);
		h[3] = (uint8_t)(n >> 8);
		h[4] = (uint8_t)n;
		return EVP_MAC_update(ctx, h, 5) && (!n || EVP_MAC_update(ctx, p, n));
	}
}

/* The MAC over the schema and every row (mac_queries). Return: 0, -EIO, -ENOMEM. */
static int compute_mac(struct vg_trust_db *db, uint8_t out[32], struct vg_diag *diag)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	size_t outlen = 0;
	bool ok;
	int r = 0;

	EVP_MAC_free(mac);
	ok = ctx && EVP_MAC_init(ctx, db->mackey, sizeof(db->mackey), params) &&
	     EVP_MAC_update(ctx, (const uint8_t *)"vigil-trust", 11);
	for (size_t q = 0; ok && q < sizeof(mac_queries) / sizeof(mac_queries[0]); q++) {
		sqlite3_stmt *st = NULL;
		uint64_t rows = 0;
		uint8_t b[9] = { 0xff };
		int rc;

		if (sqlite3_prepare_v2(db->db, mac_queries[q], -1, &st, NULL) != SQLITE_OK) {
			r = db_err(db, diag, -EBADMSG, "reading");
			ok = false;
			break;
		}
		while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			int cols = sqlite3_column_count(st);

			for (int c = 0; ok && c < cols; c++)
				ok = mac_value(ctx, st, c);
			rows++;
		}
		if (ok && rc != SQLITE_DONE) {
			r = db_err(db, diag, -EBADMSG, "reading");
			ok = false;
		}
		sqlite3_finalize(st);
		for (int i = 0; i < 8; i++)
			b[1 + i] = (uint8_t)(rows >> (56 - 8 * i));
		ok = ok && EVP_MAC_update(ctx, b, 9);
	}
	ok = ok && EVP_MAC_final(ctx, out, &outlen, 32);
	EVP_MAC_CTX_free(ctx);
	if (!ok && r == 0)
		r = vg_diag_ssl(diag, -ENOMEM, "HMAC-SHA256");
	return r;
}

static int exec_sql(struct vg_trust_db *db, const char *sql, struct vg_diag *diag)
{
	return sqlite3_exec(db->db, sql, NULL, NULL, NULL) == SQLITE_OK ?
		       0 :
		       db_err(db, diag, -EIO, "database");
}

static int put_meta(struct vg_trust_db *db, const char *key, const void *val, size_t len,
		    struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	int r = 0;

	if (sqlite3_prepare_v2(db->db, "INSERT OR REPLACE INTO meta VALUES(?, ?)", -1, &st,
			       NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 2, val, (int)len, SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		r = db_err(db, diag, -EIO, "writing the header");
	sqlite3_finalize(st);
	return r;
}

void vg_trust_db_free(struct vg_trust_db *db)
{
	if (!db)
		return;
	sqlite3_finalize(db->ins_file);
	sqlite3_finalize(db->ins_pkg);
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

static struct vg_trust_db *db_alloc(const char *path)
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
	struct vg_trust_db *db = db_alloc(path);
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
	r = derive_key(db, key, keylen, diag);
	if (r < 0)
		goto fail;
	r = vg_outfile_open(&db->out, path, 0644, 0, diag);
	if (r < 0) {
		char why[sizeof(diag->msg)];

		snprintf(why, sizeof(why), "%s", diag ? diag->msg : "");
		r = vg_diag_set(diag, r, "%s: %s", path, why);
		goto fail;
	}
	db->writing = true;
	if (sqlite3_open_v2(db->out.tmp, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		r = vg_diag_set(diag, -EIO, "%s: cannot create: %s", db->out.tmp,
				db->db ? sqlite3_errmsg(db->db) : "out of memory");
		goto fail;
	}
	r = exec_sql(db, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		     SCHEMA "BEGIN;", diag);
	if (r == 0)
		r = put_meta(db, "format", &fmt, 1, diag);
	if (r == 0)
		r = put_meta(db, "algos", ab, nalgos, diag);
	if (r < 0)
		goto fail;
	if (sqlite3_prepare_v2(db->db, "INSERT OR IGNORE INTO files VALUES(?,?,?,?,?,?,?,?)", -1,
			       &db->ins_file, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->db, "INSERT INTO packages VALUES(NULL,?,?,?,?,?,?,?)", -1,
			       &db->ins_pkg, NULL) != SQLITE_OK) {
		r = db_err(db, diag, -EIO, "database");
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
		id = db_err(db, diag, -EIO, "recording a release");
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
		r = db_err(db, diag, -EIO, "recording a package");
	else
		*ret_id = sqlite3_last_insert_rowid(db->db);
	sqlite3_clear_bindings(st);
	return r;
}

static int insert_file(struct vg_trust_db *db, const void *path, int plen, int algo,
		       const void *dg, int dlen, int64_t pkg, bool conffile, uint64_t size,
		       uint32_t mode, const void *target, int tlen, struct vg_diag *diag)
{
	sqlite3_stmt *st = db->ins_file;
	int r = 0;

	sqlite3_reset(st);
	if (sqlite3_bind_blob(st, 1, path, plen, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, algo) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 3, dlen ? dg : "", dlen, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, pkg) != SQLITE_OK ||
	    sqlite3_bind_int(st, 5, conffile) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, (int64_t)size) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 7, mode) != SQLITE_OK ||
	    (target ? sqlite3_bind_blob(st, 8, target, tlen, SQLITE_STATIC) :
		      sqlite3_bind_null(st, 8)) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		r = db_err(db, diag, -EIO, "recording a file");
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

		if (f->target) {
			r = insert_file(db, f->path, plen, ALGO_LINK, NULL, 0, id, f->conffile,
					f->size, f->mode, f->target, (int)strlen(f->target), diag);
			continue;
		}
		for (size_t a = 0; r == 0 && a < db->nalgos; a++)
			r = insert_file(db, f->path, plen, f->dg[a].algo, f->dg[a].bytes,
					f->dg[a].len, id, f->conffile, f->size, f->mode, NULL, 0,
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
		return db_err(old, diag, -EIO, "reading");
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
			r = db_err(db, diag, -EIO, "reading");
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
	if (r == 0 && sqlite3_prepare_v2(old->db, "SELECT path, algo, digest, package, conffile,"
						  " size, mode, target FROM files",
					 -1, &st, NULL) != SQLITE_OK)
		r = db_err(old, diag, -EIO, "reading");
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t op = sqlite3_column_int64(st, 3);

		if (op < 1 || op > maxid || !map[op])
			continue;
		r = insert_file(db, sqlite3_column_blob(st, 0), sqlite3_column_bytes(st, 0),
				sqlite3_column_int(st, 1), sqlite3_column_blob(st, 2),
				sqlite3_column_bytes(st, 2), map[op], sqlite3_column_int(st, 4),
				(uint64_t)sqlite3_column_int64(st, 5),
				(uint32_t)sqlite3_column_int64(st, 6),
				sqlite3_column_type(st, 7) == SQLITE_NULL ? NULL :
									   sqlite3_column_blob(st, 7),
				sqlite3_column_bytes(st, 7), diag);
		if (r == 0)
			continue;
	}
	if (r == 0 && st && rc != SQLITE_DONE)
		r = db_err(old, diag, -EIO, "reading");
	sqlite3_finalize(st);
	free(map);
	return r < 0 ? r : dropped;
}

int vg_trust_db_commit(struct vg_trust_db *db, struct vg_diag *diag)
{
	uint8_t mac[32];
	int r;

	sqlite3_finalize(db->ins_file);
	sqlite3_finalize(db->ins_pkg);
	db->ins_file = db->ins_pkg = NULL;
	r = compute_mac(db, mac, diag);
	if (r == 0)
		r = put_meta(db, "mac", mac, sizeof(mac), diag);
	if (r == 0)
		r = exec_sql(db, "COMMIT", diag);
	if (r == 0 && sqlite3_close(db->db) != SQLITE_OK)
		r = db_err(db, diag, -EIO, "closing");
	db->db = NULL;
	if (r == 0) {
		db->writing = false;
		r = vg_outfile_commit(&db->out, diag);
	}
	vg_trust_db_free(db);
	return r;
}

/* the schema a database of this format has, as SQLite keeps it */
static int expected_schema(char **ret)
{
	sqlite3 *m = NULL;
	sqlite3_stmt *st = NULL;
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	int r = 0;

	if (!f)
		return -ENOMEM;
	if (sqlite3_open_v2(":memory:", &m, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(m, SCHEMA, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name",
			       -1, &st, NULL) != SQLITE_OK)
		r = -ENOMEM;
	while (r == 0 && sqlite3_step(st) == SQLITE_ROW)
		for (int c = 0; c < 4; c++)
			fprintf(f, "%s%c", sqlite3_column_text(st, c) ?
						   (const char *)sqlite3_column_text(st, c) : "",
				c == 3 ? '\n' : '\t');
	sqlite3_finalize(st);
	sqlite3_close(m);
	fclose(f);
	if (r < 0) {
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

static int check_schema(struct vg_trust_db *db, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	char *want = NULL, *got = NULL;
	size_t n = 0;
	FILE *f;
	int r = expected_schema(&want);

	if (r < 0)
		return vg_diag_set(diag, r, "out of memory");
	f = open_memstream(&got, &n);
	if (!f) {
		free(want);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	if (sqlite3_prepare_v2(db->db,
			       "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name",
			       -1, &st, NULL) != SQLITE_OK)
		r = -EBADMSG;
	while (r == 0 && sqlite3_step(st) == SQLITE_ROW)
		for (int c = 0; c < 4; c++)
			fprintf(f, "%s%c", sqlite3_column_text(st, c) ?
						   (const char *)sqlite3_column_text(st, c) : "",
				c == 3 ? '\n' : '\t');
	sqlite3_finalize(st);
	fclose(f);
	if (r == 0 && (!got || strcmp(got, want) != 0))
		r = -EBADMSG;
	free(want);
	free(got);
	return r < 0 ? vg_diag_set(diag, r, "%s: not a vigil trust database", db->path) : 0;
}

static int get_meta(struct vg_trust_db *db, const char *key, uint8_t *buf, size_t cap,
		    size_t *ret_len)
{
	sqlite3_stmt *st = NULL;
	int r = -EBADMSG;

	if (sqlite3_prepare_v2(db->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_BLOB) {
		size_t n = (size_t)sqlite3_column_bytes(st, 0);

		if (n <= cap) {
			memcpy(buf, sqlite3_column_blob(st, 0), n);
			*ret_len = n;
			r = 0;
		}
	}
	sqlite3_finalize(st);
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
		return db_err(db, diag, -EBADMSG, "reading");
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
		return db_err(db, diag, -EBADMSG, "reading");
	cap = 0;
	if (sqlite3_prepare_v2(db->db, "SELECT id, name, version, arch, release, deb_sha256, state,"
				       " superseded_at FROM packages ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, diag, -EBADMSG, "reading");
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
		return db_err(db, diag, -EBADMSG, "reading");
	return 0;
nomem:
	sqlite3_finalize(st);
	return vg_diag_set(diag, -ENOMEM, "out of memory");
}

int vg_trust_db_open(const char *path, const uint8_t *key, size_t keylen,
		     struct vg_trust_db **ret, struct vg_diag *diag)
{
	struct vg_trust_db *db = db_alloc(path);
	uint8_t mac[32], want[32], ab[VG_TRUST_MAX_ALGOS], fmt = 0;
	size_t n = 0;
	int r;

	if (!db)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	if (sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		r = db_err(db, diag, -EBADMSG, "cannot open");
		goto fail;
	}
	r = check_schema(db, diag);
	if (r < 0)
		goto fail;
	if (get_meta(db, "format", &fmt, 1, &n) < 0 || n != 1 || fmt != TRUST_FORMAT ||
	    get_meta(db, "algos", ab, sizeof(ab), &db->nalgos) < 0 || db->nalgos == 0 ||
	    get_meta(db, "mac", want, sizeof(want), &n) < 0 || n != 32) {
		r = vg_diag_set(diag, -EBADMSG, "%s: not a vigil trust database of format %d",
				path, TRUST_FORMAT);
		goto fail;
	}
	for (size_t i = 0; i < db->nalgos; i++)
		db->algos[i] = ab[i];
	r = derive_key(db, key, keylen, diag);
	if (r == 0)
		r = compute_mac(db, mac, diag);
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
	char *path = NULL, *target = NULL;
	int64_t cur_pkg = -1;
	int rc, r = 0;

	if (sqlite3_prepare_v2(db->db, "SELECT path, algo, digest, package, conffile, size, mode,"
				       " target FROM files ORDER BY path, package, algo",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, diag, -EIO, "reading");
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
			r = fn(arg, &f);
			free(path);
			free(target);
			path = target = NULL;
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
			f.conffile = sqlite3_column_int(st, 4) != 0;
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
		r = db_err(db, diag, -EIO, "reading");
	free(path);
	free(target);
	sqlite3_finalize(st);
	return r;
}

int vg_trust_db_lookup(struct vg_trust_db *db, const char *path, const struct vg_digest *dg,
		       struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	int best = 0, rc;

	if (sqlite3_prepare_v2(db->db, "SELECT package FROM files WHERE path = ? AND algo = ?"
				       " AND digest = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, diag, -EIO, "reading");
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
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(db, diag, -EIO, "reading");
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
