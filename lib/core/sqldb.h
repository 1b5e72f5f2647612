/* SPDX-License-Identifier: MIT */
/*
 * sqldb.h - what vigil's two MAC'ed SQLite databases (the scan database,
 * lib/scan/scan_db.c; the trust database, lib/trust/trust_db*.c) share:
 * making one in a temporary (outfile.h renames it into place whole),
 * opening one read-only as an attacker's file (defensive, schema
 * untrusted, cells checked), its meta(key, value) header, its schema as
 * SQLite keeps it, and errors named by the database's path. What a
 * database holds and how its MAC encodes it stay with each database: the
 * two MACs are formats of their own (docs/scan.md, docs/trust.md).
 * Not installed.
 */
#ifndef VIGIL_SQLDB_H
#define VIGIL_SQLDB_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vigil/diag.h"
#include "vigil/outfile.h"

/* "@path: @what: <SQLite's message>" (or "cannot open" without @db). Return: @err */
int vg__sqldb_err(sqlite3 *db, const char *path, struct vg_diag *diag, int err, const char *what);
/*
 * A new database for @path: its temporary opened beside it (@out,
 * outfile.h: mode 0600, renamed into place by vg_outfile_commit) and a
 * read-write connection to it for one thread. On failure @out may be
 * open (the caller aborts it). Return: 0, or outfile's error or -EIO
 * (diag names @path or the temporary)
 */
int vg__sqldb_create(struct vg_outfile *out, const char *path, sqlite3 **ret, struct vg_diag *diag);
/*
 * @path read-only, as a file anyone may have edited: SQLITE_DBCONFIG_DEFENSIVE,
 * no trusted schema (no function or view of the file's runs), cell sizes
 * checked. Return: 0 or @err (diag names @path)
 */
int vg__sqldb_open_ro(const char *path, sqlite3 **ret, int err, struct vg_diag *diag);
/* @sql run whole. Return: 0 or -EIO */
int vg__sqldb_exec(sqlite3 *db, const char *path, const char *sql, struct vg_diag *diag);
/* meta(@key) = @val. Return: 0 or -EIO ("writing the header") */
int vg__sqldb_put_meta(sqlite3 *db, const char *path, const char *key, const void *val, size_t len,
		       struct vg_diag *diag);
/*
 * meta(@key), a BLOB (or NULL: empty) of at most @max bytes, into a
 * malloc'ed *@ret with a NUL after it (freed by the caller; NULL when
 * empty). Return: 0, -ENOMEM, -EBADMSG (no such row, of another type,
 * longer than @max)
 */
int vg__sqldb_get_meta(sqlite3 *db, const char *key, size_t max, uint8_t **ret, size_t *ret_len);
/* the schema as SQLite keeps it, "type\tname\ttbl_name\tsql\n" per object by name. Return: 0, -ENOMEM, -EBADMSG */
int vg__sqldb_schema(sqlite3 *db, char **ret);
/* the schema @sql makes (an in-memory database), as vg__sqldb_schema gives it. Return: 0, -ENOMEM */
int vg__sqldb_schema_of(const char *sql, char **ret);

#endif
