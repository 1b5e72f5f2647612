// SPDX-License-Identifier: MIT
/*
 * sqldb.c - the SQLite plumbing of vigil's MAC'ed databases (sqldb.h):
 * creating, opening an untrusted file, the meta header, the schema text.
 * Each database's rows and MAC are its own (scan_db.c, trust_db*.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqldb.h"

int vg__sqldb_err(sqlite3 *db, const char *path, struct vg_diag *diag, int err, const char *what)
{
	return vg_diag_set(diag, err, "%s: %s: %s", path, what, db ? sqlite3_errmsg(db) : "cannot open");
}

int vg__sqldb_create(struct vg_outfile *out, const char *path, sqlite3 **ret, struct vg_diag *diag)
{
	sqlite3 *db = NULL;
	const char *tmp;
	int r = vg_outfile_open(out, path, 0600, 0, diag);

	if (r < 0) {
		char why[sizeof(diag->msg)];

		snprintf(why, sizeof(why), "%s", diag ? diag->msg : "");
		return vg_diag_set(diag, r, "%s: %s", path, why);
	}
	/* the temporary exists (empty: a new database) and stays locked by out->fd */
	tmp = out->tmp;
	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		r = vg_diag_set(diag, -EIO, "%s: cannot create: %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return r;
	}
	*ret = db;
	return 0;
}

int vg__sqldb_open_ro(const char *path, sqlite3 **ret, int err, struct vg_diag *diag)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		int r = vg__sqldb_err(db, path, diag, err, "cannot open");

		sqlite3_close(db);
		return r;
	}
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	(void)sqlite3_exec(db, "PRAGMA cell_size_check=ON", NULL, NULL, NULL);
	*ret = db;
	return 0;
}

int vg__sqldb_exec(sqlite3 *db, const char *path, const char *sql, struct vg_diag *diag)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 :
		vg__sqldb_err(db, path, diag, -EIO, "database");
}

int vg__sqldb_put_meta(sqlite3 *db, const char *path, const char *key, const void *val, size_t len,
		       struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	int r = 0;

	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 2, val, (int)len, SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		r = vg__sqldb_err(db, path, diag, -EIO, "writing the header");
	sqlite3_finalize(st);
	return r;
}

int vg__sqldb_get_meta(sqlite3 *db, const char *key, size_t max, uint8_t **ret, size_t *ret_len)
{
	sqlite3_stmt *st = NULL;
	int r = -EBADMSG;

	*ret = NULL;	/* a missing row must not leave the caller's last (freed) value */
	*ret_len = 0;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		int t = sqlite3_column_type(st, 0);
		const void *p = sqlite3_column_blob(st, 0);
		size_t n = (size_t)sqlite3_column_bytes(st, 0);

		if ((t == SQLITE_BLOB || t == SQLITE_NULL) && n <= max) {
			r = 0;
			if (n && !(*ret = malloc(n + 1)))
				r = -ENOMEM;
			if (n && r == 0) {
				memcpy(*ret, p, n);
				(*ret)[n] = 0;
				*ret_len = n;
			}
		}
	}
	sqlite3_finalize(st);
	return r;
}

int vg__sqldb_schema(sqlite3 *db, char **ret)
{
	sqlite3_stmt *st = NULL;
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	int r = 0, rc = SQLITE_DONE;

	if (!f)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name", -1,
			       &st, NULL) != SQLITE_OK)
		r = -EBADMSG;
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		for (int c = 0; c < 4; c++) {
			const unsigned char *v = sqlite3_column_text(st, c);

			fprintf(f, "%s%c", v ? (const char *)v : "", c == 3 ? '\n' : '\t');
		}
	if (r == 0 && rc != SQLITE_DONE)
		r = -EBADMSG;
	sqlite3_finalize(st);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0 || !s) {
		free(s);
		return r < 0 ? r : -ENOMEM;
	}
	*ret = s;
	return 0;
}

int vg__sqldb_schema_of(const char *sql, char **ret)
{
	sqlite3 *m = NULL;
	int r = -ENOMEM;

	if (sqlite3_open_v2(":memory:", &m, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_exec(m, sql, NULL, NULL, NULL) == SQLITE_OK)
		r = vg__sqldb_schema(m, ret);
	sqlite3_close(m);
	return r < 0 ? -ENOMEM : 0;
}
