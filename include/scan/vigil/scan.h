/* SPDX-License-Identifier: MIT */
/*
 * scan.h - AIDE-style offline integrity scans: a record per path (type,
 * mode, owner, size, times, inode, every xattr, content digest or link
 * target) kept in an SQLite database whose contents are authenticated by
 * an HMAC-SHA256, and the comparison of a tree against it.
 *
 * The MAC covers a canonical encoding of the header (format version, hash
 * algorithm, roots, the TPM NV counter it is bound to if any) and of every
 * record in path order (with its hard link count), each field length
 * prefixed, so reordering, removing, adding or editing any row, or the
 * header, is detected. The MAC key is derived from the EVM HMAC key
 * (HMAC-SHA256(key, "vigil scan database v1")), never the key itself.
 *
 * A database is written to a temporary file beside the target and renamed
 * into place only once complete and MAC'ed.
 *
 * Format 2 is written; format 1 (no link counts, no counter) is still
 * read and checked (docs/scan.md).
 */
#ifndef VIGIL_SCAN_H
#define VIGIL_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "vigil/diag.h"
#include "vigil/hash.h"

/* what differs between two records (vg_scan_compare) */
enum {
	VG_SCAN_TYPE = 1u << 0,
	VG_SCAN_CONTENT = 1u << 1,
	VG_SCAN_SIZE = 1u << 2,
	VG_SCAN_MODE = 1u << 3,
	VG_SCAN_UID = 1u << 4,
	VG_SCAN_GID = 1u << 5,
	VG_SCAN_MTIME = 1u << 6,
	VG_SCAN_CTIME = 1u << 7,
	VG_SCAN_INODE = 1u << 8,
	VG_SCAN_XATTRS = 1u << 9,
	VG_SCAN_TARGET = 1u << 10,
	VG_SCAN_NLINK = 1u << 11,	/* hard link count; not for directories */
	VG_SCAN__NFIELDS = 12,
};

/* Return: the name of one VG_SCAN_* bit ("content", "mode", ...). */
const char *vg_scan_field_name(uint32_t bit);

struct vg_scan_rec {
	char *path;		/* owned */
	size_t path_len;
	uint32_t mode;		/* st_mode: type and permissions */
	uint32_t uid, gid;
	uint64_t size, ino;
	uint64_t nlink;		/* st_nlink; 0: unknown (a format 1 database) */
	int64_t mtime_ns, ctime_ns;
	uint8_t *xattrs;	/* owned: sorted (name NUL u32be len value)... */
	size_t xattrs_len;
	uint8_t *target;	/* owned: symlink target */
	size_t target_len;
	struct vg_digest digest; /* regular files; len 0 otherwise */
	bool seen;		/* vg_scan_db_lookup() users mark matches */
};

void vg_scan_rec_release(struct vg_scan_rec *r);

/*
 * vg_scan_rec_fill - fill @r from @st and the entry itself: xattrs from
 * @fd when >= 0 (else by path without following, for symlinks and special
 * files), the link target of a symlink, and no digest (the caller hashes).
 * Return: 0 or a negative errno (diag filled).
 */
int vg_scan_rec_fill(struct vg_scan_rec *r, const char *path, size_t path_len, int fd,
		     int dirfd, const char *name, const struct stat *st, struct vg_diag *diag);

/*
 * vg_scan_compare - the fields in which @now differs from @then. For
 * directories mtime, ctime and the link count are not compared (entries
 * coming and going show as added and removed); content only for regular
 * files; the link count only when both records know it (nlink != 0).
 * Return: a mask of VG_SCAN_* bits.
 */
uint32_t vg_scan_compare(const struct vg_scan_rec *then, const struct vg_scan_rec *now);

/*
 * Names of the xattrs that differ between two xattr blobs, comma
 * separated, into @out. Return: the number of names.
 */
int vg_scan_xattr_diff(const struct vg_scan_rec *a, const struct vg_scan_rec *b, char *out,
		       size_t cap);

/* One extended attribute that differs: @old NULL when added, @new NULL when removed. */
typedef int (*vg_scan_xattr_fn)(void *ctx, const char *name, const uint8_t *old, size_t oldlen,
				const uint8_t *new_, size_t newlen);

/*
 * vg_scan_xattr_each - call @fn for each xattr whose value differs between
 * @a (then) and @b (now), names of @a first, then those only in @b.
 * Return: 0, or the first negative value @fn returned.
 */
int vg_scan_xattr_each(const struct vg_scan_rec *a, const struct vg_scan_rec *b,
		       vg_scan_xattr_fn fn, void *ctx);

/*
 * vg_scan_field_text - @r's value of the field @bit (one VG_SCAN_* but
 * VG_SCAN_XATTRS) as text, NUL terminated in @out: the type's name,
 * "ALGO:HEX", decimal sizes, ids, inodes and link counts, octal permissions, UTC
 * ISO 8601 times with nanoseconds, the link target with bytes outside
 * printable ASCII (and the backslash) as \xNN.
 * Return: 0, -ENOSPC (@cap too small: 4 * target length + 1 is always
 * enough, 160 for every other field), -EINVAL (VG_SCAN_XATTRS, unknown).
 */
int vg_scan_field_text(const struct vg_scan_rec *r, uint32_t bit, char *out, size_t cap);

struct vg_scan_db;

/*
 * vg_scan_db_create - start a new database that will be renamed to @path
 * by vg_scan_db_commit(). @roots are recorded in the header.
 * Return: 0 or a negative errno (diag filled).
 */
int vg_scan_db_create(const char *path, unsigned int algo, char *const *roots, size_t nroots,
		      const uint8_t *key, size_t keylen, struct vg_scan_db **ret,
		      struct vg_diag *diag);

/*
 * vg_scan_db_add - add one record, taking over what it holds (@r is left
 * empty). Thread-safe. Records are inserted in batches, sorted by path, so
 * an error may concern an earlier record: -EEXIST names the path recorded
 * twice; it is also returned by vg_scan_db_commit() if found at the end.
 * Return: 0, -EEXIST, -EIO, -ENOMEM (diag filled).
 */
int vg_scan_db_add(struct vg_scan_db *db, struct vg_scan_rec *r, struct vg_diag *diag);

/*
 * Insert what is pending, compute the MAC, write it, make the file durable
 * and rename it into place.
 */
int vg_scan_db_commit(struct vg_scan_db *db, struct vg_diag *diag);

/*
 * vg_scan_db_open - open @path, load every record, and verify the MAC
 * with @key. Return: 0; -EKEYREJECTED (altered, or another key); -EBADMSG
 * (not a vigil scan database, or damaged); another negative errno.
 */
int vg_scan_db_open(const char *path, const uint8_t *key, size_t keylen,
		    struct vg_scan_db **ret, struct vg_diag *diag);

/* The header of an opened database. */
unsigned int vg_scan_db_algo(const struct vg_scan_db *db);
size_t vg_scan_db_nroots(const struct vg_scan_db *db);
const char *vg_scan_db_root(const struct vg_scan_db *db, size_t i);
size_t vg_scan_db_count(const struct vg_scan_db *db);
/* Record @i in path order. */
struct vg_scan_rec *vg_scan_db_rec(struct vg_scan_db *db, size_t i);

/* Return: the record for @path, or NULL. Safe from many threads. */
struct vg_scan_rec *vg_scan_db_lookup(struct vg_scan_db *db, const char *path, size_t len);

/*
 * vg_scan_db_set_counter - bind a database being created to the TPM NV
 * counter @nv_index: its header records @value (in the MAC), the value
 * the caller will advance the TPM's counter to once the database is in
 * place (docs/scan.md, "Rollback"). Call before vg_scan_db_commit().
 */
void vg_scan_db_set_counter(struct vg_scan_db *db, uint32_t nv_index, uint64_t value);

/*
 * vg_scan_db_counter - the TPM NV counter an opened database is bound to.
 * Return: true and *@nv_index, *@value; false when it names none (format
 * 1 databases never do).
 */
bool vg_scan_db_counter(const struct vg_scan_db *db, uint32_t *nv_index, uint64_t *value);

/* Return: the format of an opened database: 1 (no link counts, no counter) or 2. */
unsigned int vg_scan_db_format(const struct vg_scan_db *db);

/* Close; an uncommitted database's temporary file is removed. */
void vg_scan_db_free(struct vg_scan_db *db);

#endif
