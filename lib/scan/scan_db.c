// SPDX-License-Identifier: MIT
/*
 * scan_db.c - the MAC'ed SQLite database that holds scan records
 * (scan.h): created into a temporary and committed whole, filled by many
 * threads, opened read-only with its MAC checked (scan_mac.c) and its
 * records indexed by path.
 *
 * Schema (format 2, docs/scan.md):
 *   meta(key TEXT PRIMARY KEY, value BLOB): format, algo, roots, mac,
 *        and tpm_counter when bound to a TPM NV counter
 *   files(path BLOB PRIMARY KEY, mode, uid, gid, size, ino, mtime, ctime,
 *         nlink, xattrs BLOB, target BLOB, algo, digest BLOB) WITHOUT ROWID
 * Format 1 (no nlink column, no tpm_counter) is still opened and checked:
 * its records have nlink 0 (unknown, not compared).
 * Paths are BLOBs so that any byte string a filesystem allows round-trips;
 * BLOB order is memcmp order, which is the order the MAC covers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <sqlite3.h>

#include "vigil/outfile.h"
#include "vigil/scan.h"
#include "internal.h"
#include "scan_db.h"
#include "sqldb.h"

/* the schema, word for word as SQLite keeps it in sqlite_schema */
#define SQL_META "CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB)"
#define SQL_FILES1 \
	"CREATE TABLE files(path BLOB PRIMARY KEY, mode INTEGER, uid INTEGER, gid INTEGER," \
	" size INTEGER, ino INTEGER, mtime INTEGER, ctime INTEGER, xattrs BLOB, target BLOB," \
	" algo INTEGER, digest BLOB) WITHOUT ROWID"
#define SQL_FILES \
	"CREATE TABLE files(path BLOB PRIMARY KEY, mode INTEGER, uid INTEGER, gid INTEGER," \
	" size INTEGER, ino INTEGER, mtime INTEGER, ctime INTEGER, nlink INTEGER, xattrs BLOB," \
	" target BLOB, algo INTEGER, digest BLOB) WITHOUT ROWID"
#define SQL_COLUMNS1 "path, mode, uid, gid, size, ino, mtime, ctime, xattrs, target, algo, digest"

void vg__scan_counter_encode(const struct vg_scan_db *db, uint8_t out[12])
{
	for (int i = 0; i < 4; i++)
		out[i] = db->has_counter ? (uint8_t)(db->nv_index >> (24 - 8 * i)) : 0;
	for (int i = 0; i < 8; i++)
		out[4 + i] = db->has_counter ? (uint8_t)(db->counter >> (56 - 8 * i)) : 0;
}

int vg__scan_db_err(struct vg_scan_db *db, struct vg_diag *diag, int err, const char *what)
{
	return vg__sqldb_err(db->db, db->path, diag, err, what);
}

static struct vg_scan_db *db_alloc(const char *path)
{
	struct vg_scan_db *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->out.fd = -1;
	db->path = strdup(path);
	if (!db->path) {
		free(db);
		return NULL;
	}
	pthread_mutex_init(&db->lock, NULL);
	pthread_mutex_init(&db->insert_lock, NULL);
	return db;
}

int vg_scan_db_create(const char *path, unsigned int algo, char *const *roots, size_t nroots,
		      const uint8_t *key, size_t keylen, struct vg_scan_db **ret,
		      struct vg_diag *diag)
{
	static const char schema[] =
		"PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		"PRAGMA cache_size=-262144;" SQL_META ";" SQL_FILES ";BEGIN;";
	struct vg_scan_db *db = db_alloc(path);
	uint8_t fmt = SCAN_FORMAT, a = (uint8_t)algo;
	size_t rlen = 0;
	char *rbuf;
	int r;

	if (!db)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	db->algo = algo;
	db->format = SCAN_FORMAT;
	r = vg__scan_derive_key(db, key, keylen, diag);
	if (r < 0)
		goto fail;
	/* every use of the connection is under insert_lock, or single-threaded */
	r = vg__sqldb_create(&db->out, path, &db->db, diag);
	if (r < 0)
		goto fail;
	r = vg__sqldb_exec(db->db, db->path, schema, diag);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < nroots; i++)
		rlen += strlen(roots[i]) + 1;
	rbuf = malloc(rlen + 1);
	if (!rbuf) {
		r = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto fail;
	}
	rlen = 0;
	for (size_t i = 0; i < nroots; i++) {
		size_t l = strlen(roots[i]) + 1;

		memcpy(rbuf + rlen, roots[i], l);
		rlen += l;
	}
	r = vg__sqldb_put_meta(db->db, db->path, "format", &fmt, 1, diag);
	if (r == 0)
		r = vg__sqldb_put_meta(db->db, db->path, "algo", &a, 1, diag);
	if (r == 0)
		r = vg__sqldb_put_meta(db->db, db->path, "roots", rbuf, rlen, diag);
	free(rbuf);
	if (r < 0)
		goto fail;
	db->roots = calloc(nroots ? nroots : 1, sizeof(*db->roots));
	if (!db->roots) {
		r = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nroots; i++) {
		db->roots[i] = strdup(roots[i]);
		if (!db->roots[i]) {
			r = vg_diag_set(diag, -ENOMEM, "out of memory");
			goto fail;
		}
		db->nroots++;
	}
	if (sqlite3_prepare_v2(db->db, "INSERT INTO files VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
			       &db->insert, NULL) != SQLITE_OK) {
		r = vg__scan_db_err(db, diag, -EIO, "database");
		goto fail;
	}
	db->pending = malloc(SCAN_BATCH * sizeof(*db->pending));
	if (!db->pending) {
		r = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto fail;
	}
	*ret = db;
	return 0;
fail:
	vg_scan_db_free(db);
	return r;
}

/* SQLite orders BLOBs by memcmp, the shorter first on a tie. */
static int path_cmp(const struct vg_scan_rec *a, const struct vg_scan_rec *b)
{
	int c = memcmp(a->path, b->path, a->path_len < b->path_len ? a->path_len : b->path_len);

	return c ? c : (a->path_len > b->path_len) - (a->path_len < b->path_len);
}

static int cmp_rec_ptr(const void *a, const void *b)
{
	return path_cmp(*(const struct vg_scan_rec *const *)a,
			*(const struct vg_scan_rec *const *)b);
}

static int insert_one(struct vg_scan_db *db, const struct vg_scan_rec *r, struct vg_diag *diag)
{
	sqlite3_stmt *st = db->insert;
	int rc, ret = 0;

	sqlite3_bind_blob(st, 1, r->path, (int)r->path_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->mode);
	sqlite3_bind_int64(st, 3, r->uid);
	sqlite3_bind_int64(st, 4, r->gid);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)r->size);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)r->ino);
	sqlite3_bind_int64(st, 7, r->mtime_ns);
	sqlite3_bind_int64(st, 8, r->ctime_ns);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)r->nlink);
	sqlite3_bind_blob(st, 10, r->xattrs ? (const void *)r->xattrs : "", (int)r->xattrs_len,
			  SQLITE_STATIC);
	sqlite3_bind_blob(st, 11, r->target ? (const void *)r->target : "", (int)r->target_len,
			  SQLITE_STATIC);
	sqlite3_bind_int64(st, 12, r->digest.algo);
	sqlite3_bind_blob(st, 13, r->digest.bytes, r->digest.len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_CONSTRAINT) {
		if (!db->dup)
			db->dup = strdup(r->path);
	} else if (rc != SQLITE_DONE) {
		ret = vg__scan_db_err(db, diag, -EIO, "adding a record");
	}
	sqlite3_reset(st);
	return ret;
}

/*
 * Insert @n records in path order (B-tree appends, not random inserts)
 * and release them. Called with insert_lock held, not db->lock: other
 * threads go on filling the next batch meanwhile.
 */
static int insert_batch(struct vg_scan_db *db, struct vg_scan_rec *recs, size_t n,
			struct vg_diag *diag)
{
	struct vg_scan_rec *sorted[SCAN_BATCH];
	int r = 0;

	for (size_t i = 0; i < n; i++)
		sorted[i] = &recs[i];
	qsort(sorted, n, sizeof(*sorted), cmp_rec_ptr);
	for (size_t i = 0; i < n && r == 0; i++)
		r = insert_one(db, sorted[i], diag);
	for (size_t i = 0; i < n; i++)
		vg_scan_rec_release(&recs[i]);
	if (r == 0 && db->dup)
		r = vg_diag_set(diag, -EEXIST, "%s: recorded twice", db->dup);
	return r;
}

int vg_scan_db_add(struct vg_scan_db *db, struct vg_scan_rec *r, struct vg_diag *diag)
{
	struct vg_scan_rec *full, *next;
	int ret;

	pthread_mutex_lock(&db->lock);
	db->pending[db->npending++] = *r;
	memset(r, 0, sizeof(*r));
	if (db->npending < SCAN_BATCH) {
		pthread_mutex_unlock(&db->lock);
		return 0;
	}
	/* a fresh buffer lets the others go on while this batch is inserted */
	full = db->pending;
	next = malloc(SCAN_BATCH * sizeof(*next));
	if (next) {
		db->pending = next;
		db->npending = 0;
		pthread_mutex_unlock(&db->lock);
	}
	pthread_mutex_lock(&db->insert_lock);
	ret = insert_batch(db, full, SCAN_BATCH, diag);
	pthread_mutex_unlock(&db->insert_lock);
	if (next) {
		free(full);
	} else {	/* out of memory: inserted under the lock, the buffer is kept */
		db->npending = 0;
		pthread_mutex_unlock(&db->lock);
	}
	return ret;
}

static int column_blob(sqlite3_stmt *st, int col, uint8_t **ret, size_t *len, size_t max)
{
	const void *p = sqlite3_column_blob(st, col);
	int n = sqlite3_column_bytes(st, col);

	*ret = NULL;
	*len = 0;
	if (sqlite3_column_type(st, col) != SQLITE_BLOB && sqlite3_column_type(st, col) != SQLITE_NULL)
		return -EBADMSG;
	if (n < 0 || (size_t)n > max)
		return -EBADMSG;
	if (n == 0)
		return 0;
	*ret = malloc((size_t)n + 1);
	if (!*ret)
		return -ENOMEM;
	memcpy(*ret, p, (size_t)n);
	(*ret)[n] = 0;
	*len = (size_t)n;
	return 0;
}

/* Load every row, in path order, into db->recs. */
static int load_rows(struct vg_scan_db *db, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, r = 0;

	/* format 1 has no nlink column: 0, unknown */
	if (sqlite3_prepare_v2(db->db,
			       db->format >= 2 ? "SELECT " SQL_COLUMNS1 ", nlink FROM files ORDER BY path"
					       : "SELECT " SQL_COLUMNS1 ", 0 FROM files ORDER BY path",
			       -1, &st, NULL) != SQLITE_OK)
		return vg_diag_set(diag, -EBADMSG, "%s: not a vigil scan database (%s)", db->path,
				   sqlite3_errmsg(db->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct vg_scan_rec *rec;
		uint8_t *dig = NULL;
		size_t dlen;

		if (db->n == cap) {
			size_t ncap = cap ? 2 * cap : 1024;
			struct vg_scan_rec *n = realloc(db->recs, ncap * sizeof(*n));

			if (!n) {
				r = vg_diag_set(diag, -ENOMEM, "out of memory");
				break;
			}
			db->recs = n;
			cap = ncap;
		}
		rec = &db->recs[db->n];
		memset(rec, 0, sizeof(*rec));
		r = column_blob(st, 0, (uint8_t **)&rec->path, &rec->path_len, 1u << 20);
		if (r == 0)
			r = column_blob(st, 8, &rec->xattrs, &rec->xattrs_len, 64u << 20);
		if (r == 0)
			r = column_blob(st, 9, &rec->target, &rec->target_len, 1u << 20);
		if (r == 0)
			r = column_blob(st, 11, &dig, &dlen, VG_HASH_MAX_DIGEST);
		db->n++;
		if (r == 0 && (!rec->path || memchr(rec->path, 0, rec->path_len)))
			r = -EBADMSG;
		if (r < 0) {
			free(dig);
			r = r == -ENOMEM ? vg_diag_set(diag, r, "out of memory") :
					   vg_diag_set(diag, r, "%s: malformed record", db->path);
			break;
		}
		rec->mode = (uint32_t)sqlite3_column_int64(st, 1);
		rec->uid = (uint32_t)sqlite3_column_int64(st, 2);
		rec->gid = (uint32_t)sqlite3_column_int64(st, 3);
		rec->size = (uint64_t)sqlite3_column_int64(st, 4);
		rec->ino = (uint64_t)sqlite3_column_int64(st, 5);
		rec->mtime_ns = sqlite3_column_int64(st, 6);
		rec->ctime_ns = sqlite3_column_int64(st, 7);
		rec->nlink = (uint64_t)sqlite3_column_int64(st, 12);
		rec->digest.algo = (uint8_t)sqlite3_column_int64(st, 10);
		rec->digest.len = (uint8_t)dlen;
		if (dlen)
			memcpy(rec->digest.bytes, dig, dlen);
		free(dig);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = vg_diag_set(diag, -EBADMSG, "%s: reading records: %s", db->path,
				sqlite3_errmsg(db->db));
	sqlite3_finalize(st);
	return r;
}


int vg_scan_db_commit(struct vg_scan_db *db, struct vg_diag *diag)
{
	uint8_t mac[32];
	int r;

	pthread_mutex_lock(&db->insert_lock);
	r = insert_batch(db, db->pending, db->npending, diag);
	db->npending = 0;
	pthread_mutex_unlock(&db->insert_lock);
	if (r < 0)
		return r;
	sqlite3_finalize(db->insert);
	db->insert = NULL;
	if (db->has_counter) {
		uint8_t c[12];

		vg__scan_counter_encode(db, c);
		r = vg__sqldb_put_meta(db->db, db->path, "tpm_counter", c, sizeof(c), diag);
		if (r < 0)
			return r;
	}
	r = vg__scan_stream_mac(db, mac, diag);
	if (r == 0)
		r = vg__sqldb_put_meta(db->db, db->path, "mac", mac, sizeof(mac), diag);
	if (r == 0)
		r = vg__sqldb_exec(db->db, db->path, "COMMIT;", diag);
	if (r < 0)
		return r;
	if (sqlite3_close(db->db) != SQLITE_OK)
		return vg__scan_db_err(db, diag, -EIO, "closing");
	db->db = NULL;
	r = vg_outfile_commit(&db->out, diag);
	if (r < 0) {
		char why[sizeof(diag->msg)];

		snprintf(why, sizeof(why), "%s", diag ? diag->msg : "");
		return vg_diag_set(diag, r, "%s: %s", db->path, why);
	}
	return 0;
}

static uint64_t path_hash(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h;
}

static int build_index(struct vg_scan_db *db, struct vg_diag *diag)
{
	size_t cap = 16;

	while (cap < 2 * db->n + 1)
		cap *= 2;
	db->index = malloc(cap * sizeof(*db->index));
	if (!db->index)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	db->index_cap = cap;
	for (size_t i = 0; i < cap; i++)
		db->index[i] = SIZE_MAX;
	for (size_t i = 0; i < db->n; i++) {
		size_t s = (size_t)path_hash(db->recs[i].path, db->recs[i].path_len) & (cap - 1);

		while (db->index[s] != SIZE_MAX)
			s = (s + 1) & (cap - 1);
		db->index[s] = i;
	}
	return 0;
}

/*
 * The database is the attacker's to edit, and is read before its MAC can
 * be checked: it must hold our two tables and nothing else. A view in
 * place of a table could yield rows for ever (a recursive CTE); triggers,
 * views and functions are not run anyway (SQLITE_DBCONFIG_DEFENSIVE,
 * trusted_schema off).
 */
static int check_schema(struct vg_scan_db *db, unsigned int *ret_format, struct vg_diag *diag)
{
	static const char *const want[][4] = {
		{ "table", "files", "files", SQL_FILES },
		{ "table", "meta", "meta", SQL_META },
		{ "index", "sqlite_autoindex_meta_1", "meta", NULL },
	};
	unsigned int format = SCAN_FORMAT;
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	bool ok = true;
	int rc;

	if (sqlite3_prepare_v2(db->db, "SELECT type, name, tbl_name, sql FROM sqlite_schema "
			       "ORDER BY type DESC, name", -1, &st, NULL) != SQLITE_OK)
		return vg_diag_set(diag, -EBADMSG, "%s: not a vigil scan database (%s)", db->path,
				   sqlite3_errmsg(db->db));
	while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == sizeof(want) / sizeof(want[0])) {
			ok = false;
			break;
		}
		for (int c = 0; c < 4 && ok; c++) {
			const char *v = (const char *)sqlite3_column_text(st, c);

			ok = want[n][c] ? v && strcmp(v, want[n][c]) == 0 :
					  sqlite3_column_type(st, c) == SQLITE_NULL;
			/* or format 1's table */
			if (!ok && n == 0 && c == 3 && v && strcmp(v, SQL_FILES1) == 0) {
				format = 1;
				ok = true;
			}
		}
		n++;
	}
	if (ok && rc != SQLITE_DONE) {
		sqlite3_finalize(st);
		return vg_diag_set(diag, -EBADMSG, "%s: not a vigil scan database (%s)", db->path,
				   sqlite3_errmsg(db->db));
	}
	sqlite3_finalize(st);
	if (!ok || n != sizeof(want) / sizeof(want[0]))
		return vg_diag_set(diag, -EBADMSG, "%s: not a vigil scan database: its schema is "
				   "not the two tables vigil makes (altered?)", db->path);
	*ret_format = format;
	return 0;
}

/* The header's tpm_counter row (format 2), when there is one. */
static int read_counter(struct vg_scan_db *db, struct vg_diag *diag)
{
	uint8_t *v = NULL;
	size_t len = 0;
	int r = vg__sqldb_get_meta(db->db, "tpm_counter", 1u << 20, &v, &len);

	if (r == -ENOMEM)
		return vg_diag_set(diag, r, "out of memory");
	if (r < 0)
		return 0;	/* no such row: not bound */
	if (len != 12) {
		free(v);
		return vg_diag_set(diag, -EBADMSG, "%s: bad tpm_counter in header", db->path);
	}
	db->has_counter = true;
	db->nv_index = vg__be32(v);
	db->counter = (uint64_t)vg__be32(v + 4) << 32 | vg__be32(v + 8);
	free(v);
	return 0;
}

/* @schema_format: what check_schema() found; the header must say the same. */
static int read_header(struct vg_scan_db *db, unsigned int schema_format, struct vg_diag *diag)
{
	uint8_t *v = NULL;
	size_t len = 0, n = 0;
	int r;

	r = vg__sqldb_get_meta(db->db, "format", 1u << 20, &v, &len);
	if (r < 0 || len != 1 || v[0] != schema_format) {
		free(v);
		return vg_diag_set(diag, r == -ENOMEM ? r : -EBADMSG,
				   "%s: not a vigil scan database (format %u)", db->path,
				   schema_format);
	}
	free(v);
	db->format = schema_format;
	if (db->format >= 2 && (r = read_counter(db, diag)) < 0)
		return r;
	r = vg__sqldb_get_meta(db->db, "algo", 1u << 20, &v, &len);
	if (r < 0 || len != 1 || !vg_hash_size(v[0])) {
		free(v);
		return vg_diag_set(diag, -EBADMSG, "%s: bad hash algorithm in header", db->path);
	}
	db->algo = v[0];
	free(v);
	r = vg__sqldb_get_meta(db->db, "roots", 1u << 20, &v, &len);
	if (r < 0 || len == 0 || v[len - 1] != 0) {
		free(v);
		return vg_diag_set(diag, -EBADMSG, "%s: bad roots in header", db->path);
	}
	for (size_t i = 0; i < len; i++)
		n += v[i] == 0;
	db->roots = calloc(n, sizeof(*db->roots));
	if (!db->roots) {
		free(v);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	for (size_t off = 0; off < len; off += strlen((char *)v + off) + 1) {
		db->roots[db->nroots] = strdup((char *)v + off);
		if (!db->roots[db->nroots]) {
			free(v);
			return vg_diag_set(diag, -ENOMEM, "out of memory");
		}
		db->nroots++;
	}
	free(v);
	return 0;
}

int vg_scan_db_open(const char *path, const uint8_t *key, size_t keylen,
		    struct vg_scan_db **ret, struct vg_diag *diag)
{
	struct vg_scan_db *db = db_alloc(path);
	uint8_t want[32], *mac = NULL;
	size_t maclen = 0;
	unsigned int format = 0;
	int r;

	if (!db)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	if (access(path, R_OK) < 0) {
		r = vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	r = vg__sqldb_open_ro(path, &db->db, -EIO, diag);
	if (r == 0)
		r = vg__scan_derive_key(db, key, keylen, diag);
	if (r == 0)
		r = check_schema(db, &format, diag);
	if (r == 0)
		r = read_header(db, format, diag);
	if (r == 0)
		r = load_rows(db, diag);
	if (r < 0)
		goto fail;
	r = vg__sqldb_get_meta(db->db, "mac", 1u << 20, &mac, &maclen);
	if (r < 0 || maclen != 32) {
		r = vg_diag_set(diag, r == -ENOMEM ? r : -EKEYREJECTED,
				"%s: the database has no MAC: it is incomplete or was altered", path);
		goto fail;
	}
	r = vg__scan_compute_mac(db, want, diag);
	if (r < 0)
		goto fail;
	if (CRYPTO_memcmp(want, mac, 32) != 0) {
		r = vg_diag_set(diag, -EKEYREJECTED,
				"%s: MAC mismatch: the database was altered, or the key differs", path);
		goto fail;
	}
	r = build_index(db, diag);
	if (r < 0)
		goto fail;
	free(mac);
	sqlite3_close(db->db);
	db->db = NULL;
	*ret = db;
	return 0;
fail:
	free(mac);
	vg_scan_db_free(db);
	return r;
}

void vg_scan_db_set_counter(struct vg_scan_db *db, uint32_t nv_index, uint64_t value)
{
	db->has_counter = true;
	db->nv_index = nv_index;
	db->counter = value;
}

bool vg_scan_db_counter(const struct vg_scan_db *db, uint32_t *nv_index, uint64_t *value)
{
	if (!db->has_counter)
		return false;
	*nv_index = db->nv_index;
	*value = db->counter;
	return true;
}

unsigned int vg_scan_db_format(const struct vg_scan_db *db)
{
	return db->format;
}

unsigned int vg_scan_db_algo(const struct vg_scan_db *db)
{
	return db->algo;
}

size_t vg_scan_db_nroots(const struct vg_scan_db *db)
{
	return db->nroots;
}

const char *vg_scan_db_root(const struct vg_scan_db *db, size_t i)
{
	return i < db->nroots ? db->roots[i] : NULL;
}

size_t vg_scan_db_count(const struct vg_scan_db *db)
{
	return db->n;
}

struct vg_scan_rec *vg_scan_db_rec(struct vg_scan_db *db, size_t i)
{
	return i < db->n ? &db->recs[i] : NULL;
}

struct vg_scan_rec *vg_scan_db_lookup(struct vg_scan_db *db, const char *path, size_t len)
{
	size_t s;

	if (!db->index_cap)
		return NULL;
	s = (size_t)path_hash(path, len) & (db->index_cap - 1);
	while (db->index[s] != SIZE_MAX) {
		struct vg_scan_rec *r = &db->recs[db->index[s]];

		if (r->path_len == len && memcmp(r->path, path, len) == 0)
			return r;
		s = (s + 1) & (db->index_cap - 1);
	}
	return NULL;
}

void vg_scan_db_free(struct vg_scan_db *db)
{
	if (!db)
		return;
	sqlite3_finalize(db->insert);
	if (db->db)
		sqlite3_close(db->db);
	vg_outfile_abort(&db->out);
	for (size_t i = 0; i < db->n; i++)
		vg_scan_rec_release(&db->recs[i]);
	free(db->recs);
	for (size_t i = 0; i < db->npending; i++)
		vg_scan_rec_release(&db->pending[i]);
	free(db->pending);
	free(db->dup);
	pthread_mutex_destroy(&db->insert_lock);
	free(db->index);
	for (size_t i = 0; i < db->nroots; i++)
		free(db->roots[i]);
	free(db->roots);
	OPENSSL_cleanse(db->mackey, sizeof(db->mackey));
	pthread_mutex_destroy(&db->lock);
	free(db->path);
	free(db);
}

