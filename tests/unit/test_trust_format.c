// SPDX-License-Identifier: MIT
/*
 * test_trust_format.c - the trust database's format 3 (docs/trust.md):
 * files with the owner the archive gives them (names and ids), each
 * source's newest Date, both carried into the next build; and format 2,
 * which an older vigil wrote, still read. The format 2 database here is
 * written by this test from the documented schema and MAC encoding with
 * SQLite and OpenSSL directly, not by lib/trust.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <sqlite3.h>

#include "vigil/hash.h"
#include "vigil/trust.h"

static char dir[] = "/tmp/vigil-trust-format.XXXXXX";
static const uint8_t key[32] = { 7 };

static const char *at(const char *name)
{
	static char buf[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static struct vg_trust_release rel_of(const char *codename, int64_t date)
{
	struct vg_trust_release r = { .origin = (char *)"Debian", .label = (char *)"Debian",
				      .suite = (char *)"stable", .codename = (char *)codename,
				      .date = date };

	memset(r.sha256, (int)(date & 0xff), 32);
	return r;
}

/* a package of one program owned root:root and one setgid tool of group "crontab" (gid 101 in the archive) */
static void write_v3(const char *path, struct vg_trust_db *old, int64_t date)
{
	static const unsigned int algos[] = { VG_HASH_SHA256 };
	struct vg_trust_release rel = rel_of("bookworm", date);
	struct vg_trust_pkgrow row = { .name = "cron", .version = "3.0", .arch = "amd64" };
	struct vg_trust_file f[2] = {
		{ .path = (char *)"/usr/bin/cron", .mode = 0100755, .size = 2, .have_owner = true,
		  .uname = (char *)"root", .gname = (char *)"root" },
		{ .path = (char *)"/usr/bin/crontab", .mode = 0102755, .size = 2, .have_owner = true,
		  .uid = 0, .gid = 101, .uname = (char *)"root", .gname = (char *)"crontab" },
	};
	struct vg_trust_deb deb = { .files = f, .n = 2, .cap = 2 };
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };
	int64_t rid;

	for (int i = 0; i < 2; i++)
		assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "x\n", 2, &f[i].dg[0], NULL), 0);
	assert_int_equal(vg_trust_db_create(path, algos, 1, key, sizeof(key), &db, &d), 0);
	rid = vg_trust_db_add_release(db, &rel, &d);
	assert_true(rid > 0);
	assert_int_equal(vg_trust_db_set_source(db, "bookworm_InRelease", &rel, &d), 0);
	assert_int_equal(vg_trust_db_add_package(db, rid, &row, &deb, &d), 0);
	if (old)
		assert_true(vg_trust_db_carry(db, old, 1000, 100, &d) >= 0);
	assert_int_equal(vg_trust_db_commit(db, &d), 0);
}

static int owners(void *arg, const struct vg_trust_filerow *f)
{
	char *out = arg;

	snprintf(out + strlen(out), 512 - strlen(out), "%s %d %s:%s %u:%u %o;", f->path,
		 f->have_owner, f->uname ? f->uname : "-", f->gname ? f->gname : "-", f->uid,
		 f->gid, f->mode);
	return 0;
}

static void format3_records_owners_and_source_dates(void **state)
{
	struct vg_trust_db *db = NULL;
	struct vg_trust_release bw = rel_of("bookworm", 1700000000), tx = rel_of("trixie", 1);
	struct vg_diag d = { 0 };
	char rows[512] = "";
	int64_t date = 0;

	(void)state;
	write_v3(at("a.db"), NULL, 1700000000);
	assert_int_equal(vg_trust_db_open(at("a.db"), key, sizeof(key), &db, &d), 0);
	/* format 4 since issue 45 (its boot table: test_trust_boot.c); the rest is format 3's */
	assert_int_equal(vg_trust_db_format(db), 4);
	assert_int_equal(vg_trust_db_files(db, true, owners, rows, &d), 0);
	assert_string_equal(rows, "/usr/bin/cron 1 root:root 0:0 100755;"
				  "/usr/bin/crontab 1 root:crontab 0:101 102755;");
	assert_int_equal(vg_trust_db_source_date(db, "bookworm_InRelease", &bw, &date, &d), 1);
	assert_int_equal(date, 1700000000);
	assert_int_equal(vg_trust_db_source_date(db, "trixie_InRelease", &tx, &date, &d), 0);
	vg_trust_db_free(db);
}

/* a source this build did not see keeps its Date; one it saw takes the new one; each by its name */
static void format3_carries_source_dates(void **state)
{
	static const unsigned int algos[] = { VG_HASH_SHA256 };
	struct vg_trust_db *old = NULL, *db = NULL;
	struct vg_trust_release bw = rel_of("bookworm", 1800000000), tx = rel_of("trixie", 5);
	struct vg_diag d = { 0 };
	int64_t date = 0;

	(void)state;
	write_v3(at("b.db"), NULL, 1700000000);
	assert_int_equal(vg_trust_db_open(at("b.db"), key, sizeof(key), &old, &d), 0);
	assert_int_equal(vg_trust_db_create(at("c.db"), algos, 1, key, sizeof(key), &db, &d), 0);
	assert_int_equal(vg_trust_db_set_source(db, "trixie_InRelease", &tx, &d), 0);
	assert_int_equal(vg_trust_db_carry(db, old, 1000, 100, &d), 0);
	assert_int_equal(vg_trust_db_commit(db, &d), 0);
	vg_trust_db_free(old);
	assert_int_equal(vg_trust_db_open(at("c.db"), key, sizeof(key), &db, &d), 0);
	assert_int_equal(vg_trust_db_source_date(db, "bookworm_InRelease", &bw, &date, &d), 1);
	assert_int_equal(date, 1700000000);
	assert_int_equal(vg_trust_db_source_date(db, "trixie_InRelease", &tx, &date, &d), 1);
	assert_int_equal(date, 5);
	vg_trust_db_free(db);
}

/* ---- a format 2 database, written from docs/trust.md alone ---- */

#define V2_FILES \
	"CREATE TABLE files(path BLOB, algo INTEGER, digest BLOB, package INTEGER," \
	" conffile INTEGER, size INTEGER, mode INTEGER, target BLOB," \
	" PRIMARY KEY(path, algo, digest, package)) WITHOUT ROWID;"
#define V3_FILES \
	"CREATE TABLE files(path BLOB, algo INTEGER, digest BLOB, package INTEGER," \
	" conffile INTEGER, size INTEGER, mode INTEGER, target BLOB," \
	" uname TEXT, gname TEXT, uid INTEGER, gid INTEGER," \
	" PRIMARY KEY(path, algo, digest, package)) WITHOUT ROWID;" \
	"CREATE TABLE sources(name TEXT PRIMARY KEY, origin TEXT, suite TEXT, codename TEXT," \
	" date INTEGER) WITHOUT ROWID;"
#define COMMON \
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB);" \
	"CREATE TABLE releases(id INTEGER PRIMARY KEY, origin TEXT, label TEXT, suite TEXT," \
	" codename TEXT, date INTEGER, valid_until INTEGER, inrelease_sha256 BLOB);" \
	"CREATE TABLE packages(id INTEGER PRIMARY KEY, name TEXT, version TEXT, arch TEXT," \
	" release INTEGER, deb_sha256 BLOB, state INTEGER, superseded_at INTEGER);"

/* each value: a type byte, then 8 bytes big-endian or a 4-byte length and the bytes */
static void mac_value(FILE *h, sqlite3_stmt *st, int c)
{
	uint8_t b[9];
	int t = sqlite3_column_type(st, c);

	b[0] = (uint8_t)t;
	if (t == SQLITE_INTEGER) {
		uint64_t v = (uint64_t)sqlite3_column_int64(st, c);

		for (int i = 0; i < 8; i++)
			b[1 + i] = (uint8_t)(v >> (56 - 8 * i));
		fwrite(b, 1, 9, h);
	} else if (t == SQLITE_NULL) {
		fwrite(b, 1, 1, h);
	} else {
		uint32_t n = (uint32_t)sqlite3_column_bytes(st, c);
		const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, c) :
						   sqlite3_column_blob(st, c);

		b[1] = (uint8_t)(n >> 24);
		b[2] = (uint8_t)(n >> 16);
		b[3] = (uint8_t)(n >> 8);
		b[4] = (uint8_t)n;
		fwrite(b, 1, 5, h);
		fwrite(p, 1, n, h);
	}
}

/* a database of @schema and format byte @fmt, its MAC over @nq of the documented queries */
static void write_by_hand(const char *path, const char *schema, uint8_t fmt, size_t nq)
{
	static const char *const q[] = {
		"SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name",
		"SELECT key, value FROM meta WHERE key <> 'mac' ORDER BY key",
		"SELECT * FROM releases ORDER BY id",
		"SELECT * FROM packages ORDER BY id",
		"SELECT * FROM files ORDER BY path, algo, digest, package",
		"SELECT * FROM sources ORDER BY name",
	};
	uint8_t mk[32], mac[32], algo = VG_HASH_SHA256;
	size_t ml = 0, mlen = 0;
	char *msg = NULL;
	FILE *h = open_memstream(&msg, &mlen);
	struct vg_digest dg;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char sql[512];

	assert_non_null(h);
	/* the MAC key: HMAC-SHA256(key, "vigil trust database v1") */
	assert_non_null(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, sizeof(key),
				  (const uint8_t *)"vigil trust database v1", 23, mk, sizeof(mk), &ml));
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "x\n", 2, &dg, NULL), 0);
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, schema, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO meta VALUES(?, ?)", -1, &st, NULL), 0);
	sqlite3_bind_text(st, 1, "format", -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, &fmt, 1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, "algos", -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, &algo, 1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO releases VALUES(1, 'Debian', 'Debian', 'stable',"
				      " 'bookworm', 1600000000, 0, zeroblob(32));"
				      "INSERT INTO releases VALUES(2, 'Debian', 'Debian', 'stable',"
				      " 'bookworm', 1650000000, 0, randomblob(32));"
				      "INSERT INTO packages VALUES(1, 'old', '1', 'amd64', 2,"
				      " zeroblob(32), 0, 0);", NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "INSERT INTO files(path, algo, digest, package, conffile, size,"
		 " mode, target) VALUES(CAST('/usr/bin/old' AS BLOB), 4, ?, 1, 0, 2, %d, NULL)",
		 0100755);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), 0);
	sqlite3_bind_blob(st, 1, dg.bytes, dg.len, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	fwrite("vigil-trust", 1, 11, h);
	for (size_t i = 0; i < nq; i++) {
		uint64_t rows = 0;
		uint8_t b[9] = { 0xff };

		assert_int_equal(sqlite3_prepare_v2(db, q[i], -1, &st, NULL), SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++)
				mac_value(h, st, c);
			rows++;
		}
		sqlite3_finalize(st);
		for (int k = 0; k < 8; k++)
			b[1 + k] = (uint8_t)(rows >> (56 - 8 * k));
		fwrite(b, 1, 9, h);
	}
	assert_int_equal(fclose(h), 0);
	assert_non_null(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, mk, sizeof(mk),
				  (const uint8_t *)msg, mlen, mac, sizeof(mac), &ml));
	free(msg);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO meta VALUES('mac', ?)", -1, &st, NULL), 0);
	sqlite3_bind_blob(st, 1, mac, 32, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void format2_is_still_read(void **state)
{
	struct vg_trust_db *db = NULL;
	struct vg_trust_release bw = rel_of("bookworm", 0);
	struct vg_diag d = { 0 };
	char rows[512] = "";
	int64_t date = 0;

	(void)state;
	write_by_hand(at("v2.db"), COMMON V2_FILES, 2, 5);
	assert_int_equal(vg_trust_db_open(at("v2.db"), key, sizeof(key), &db, &d), 0);
	assert_int_equal(vg_trust_db_format(db), 2);
	assert_int_equal(vg_trust_db_files(db, true, owners, rows, &d), 0);
	assert_string_equal(rows, "/usr/bin/old 0 -:- 0:0 100755;");
	/* no sources table: the newest Date of its releases of the same names stands for it */
	assert_int_equal(vg_trust_db_source_date(db, "bookworm_InRelease", &bw, &date, &d), 1);
	assert_int_equal(date, 1650000000);
	/* a build over it writes format 4: the old rows without an owner, the Date carried */
	write_v3(at("v3.db"), db, 1);
	vg_trust_db_free(db);
	assert_int_equal(vg_trust_db_open(at("v3.db"), key, sizeof(key), &db, &d), 0);
	assert_int_equal(vg_trust_db_format(db), 4);
	rows[0] = '\0';
	assert_int_equal(vg_trust_db_files(db, true, owners, rows, &d), 0);
	assert_string_equal(rows, "/usr/bin/cron 1 root:root 0:0 100755;"
				  "/usr/bin/crontab 1 root:crontab 0:101 102755;"
				  "/usr/bin/old 0 -:- 0:0 100755;");
	assert_int_equal(vg_trust_db_source_date(db, "bookworm_InRelease", &bw, &date, &d), 1);
	assert_int_equal(date, 1);	/* this build's Date for the source it saw */
	vg_trust_db_free(db);
}

/* the format byte must name the schema found */
static void format_names_its_schema(void **state)
{
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };

	(void)state;
	write_by_hand(at("x.db"), COMMON V3_FILES, 2, 6);
	assert_int_equal(vg_trust_db_open(at("x.db"), key, sizeof(key), &db, &d), -EBADMSG);
	write_by_hand(at("x.db"), COMMON V2_FILES, 3, 5);
	assert_int_equal(vg_trust_db_open(at("x.db"), key, sizeof(key), &db, &d), -EBADMSG);
	/* and the right pair opens: the MAC of this test is the library's */
	write_by_hand(at("x.db"), COMMON V3_FILES, 3, 6);
	assert_int_equal(vg_trust_db_open(at("x.db"), key, sizeof(key), &db, &d), 0);
	vg_trust_db_free(db);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const f[] = { "a.db", "b.db", "c.db", "v2.db", "v3.db", "x.db" };

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		unlink(at(f[i]));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format3_records_owners_and_source_dates),
		cmocka_unit_test(format3_carries_source_dates),
		cmocka_unit_test(format2_is_still_read),
		cmocka_unit_test(format_names_its_schema),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
