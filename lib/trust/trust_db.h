/* SPDX-License-Identifier: MIT */
/*
 * trust_db.h - what the trust database's writer (trust_db.c), reader
 * (trust_db_read.c) and MAC (trust_db_mac.c) share: the schema, the
 * handle, and the key and MAC steps. Not installed.
 */
#ifndef VIGIL_TRUST_DB_H
#define VIGIL_TRUST_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vigil/outfile.h"
#include "vigil/trust.h"

/*
 * 4: a boot table, the Authenticode and file digests of every EFI image
 * and kernel (trust_boot.h), each with its state and since when;
 * 3 (read, never written): files have their owner and group (uname, gname, uid, gid as the
 * archive says), and a sources table keeps the newest Date of each
 * source; 2 (read, never written): the files table's conffile column is
 * a vg_trust_kind (maintainer scripts 2 and 3), no owner; 1 (read, never
 * written): conffile 0 or 1 only. Formats 1 and 2 have SCHEMA_V2.
 */
#define TRUST_FORMAT 4
#define TRUST_FORMAT_MIN 1
#define TRUST_MAC_LABEL "vigil trust database v1"
#define ALGO_LINK 255

#define SCHEMA_COMMON \
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB);" \
	"CREATE TABLE releases(id INTEGER PRIMARY KEY, origin TEXT, label TEXT, suite TEXT," \
	" codename TEXT, date INTEGER, valid_until INTEGER, inrelease_sha256 BLOB);" \
	"CREATE TABLE packages(id INTEGER PRIMARY KEY, name TEXT, version TEXT, arch TEXT," \
	" release INTEGER, deb_sha256 BLOB, state INTEGER, superseded_at INTEGER);"
/* formats 1 and 2 */
#define SCHEMA_V2 SCHEMA_COMMON \
	"CREATE TABLE files(path BLOB, algo INTEGER, digest BLOB, package INTEGER," \
	" conffile INTEGER, size INTEGER, mode INTEGER, target BLOB," \
	" PRIMARY KEY(path, algo, digest, package)) WITHOUT ROWID;"
/* format 3: the owner; each source's newest Date */
#define SCHEMA_V3 SCHEMA_COMMON \
	"CREATE TABLE files(path BLOB, algo INTEGER, digest BLOB, package INTEGER," \
	" conffile INTEGER, size INTEGER, mode INTEGER, target BLOB," \
	" uname TEXT, gname TEXT, uid INTEGER, gid INTEGER," \
	" PRIMARY KEY(path, algo, digest, package)) WITHOUT ROWID;" \
	"CREATE TABLE sources(name TEXT PRIMARY KEY, origin TEXT, suite TEXT, codename TEXT," \
	" date INTEGER) WITHOUT ROWID;"
/* format 4: the boot references (trust_boot.h), by package name, version, architecture, path */
#define SCHEMA SCHEMA_V3 \
	"CREATE TABLE boot(name TEXT, version TEXT, arch TEXT, path BLOB, role INTEGER," \
	" series TEXT, authenticode BLOB, sha256 BLOB, state INTEGER, since INTEGER," \
	" PRIMARY KEY(name, version, arch, path)) WITHOUT ROWID;"

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
	unsigned int format;	/* an opened database's; TRUST_FORMAT when written */
	char *path;
	struct vg_outfile out;
	bool writing;
	uint8_t mackey[32];
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	size_t nalgos;
	sqlite3_stmt *ins_file, *ins_pkg, *ins_boot;
	sqlite3_stmt *q_lookup, *q_recorded;	/* opened: prepared on first use, kept */
	/* an opened database: packages and releases, by id */
	struct pkg *pkgs;
	size_t npkgs;
	struct rel *rels;
	size_t nrels;
};

/* "<db path>: @what: <SQLite's message>". Return: @err. */
int vg__trust_db_err(struct vg_trust_db *db, struct vg_diag *diag, int err, const char *what);
/* db->mackey from the caller's @key (HMAC-SHA256 of TRUST_MAC_LABEL). Return: 0 or -ENOMEM. */
int vg__trust_derive_key(struct vg_trust_db *db, const uint8_t *key, size_t keylen,
			 struct vg_diag *diag);
/* The MAC over the schema and every row. Return: 0, -EBADMSG (unreadable), -ENOMEM. */
int vg__trust_compute_mac(struct vg_trust_db *db, uint8_t out[32], struct vg_diag *diag);
/* A zeroed handle for @path. Return: it, or NULL. */
struct vg_trust_db *vg__trust_db_alloc(const char *path);

#endif
