// SPDX-License-Identifier: MIT
/*
 * scan_mac.c - the MAC of a scan database: HMAC-SHA256 under a key
 * derived from the caller's, over the header (format, algorithm, roots,
 * and in format 2 the TPM counter), then every record in path order (in
 * format 2 with its link count), then the count. It is computed over
 * the records loaded (when a database is opened) or over the rows as
 * SQLite stores them (when one is created), and the two must agree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sqlite3.h>

#include "vigil/hash.h"
#include "internal.h"
#include "scan_db.h"

#define SCAN_MAC_LABEL "vigil scan database v1"

int vg__scan_derive_key(struct vg_scan_db *db, const uint8_t *key, size_t keylen,
		struct vg_diag *diag)
{
	return vg_hmac_sha256(key, keylen, SCAN_MAC_LABEL, strlen(SCAN_MAC_LABEL), db->mackey,
			      diag);
}

/*
 * The MAC: over the header, then every record in path order, then the
 * count; each field is a u64 or a u32-length-prefixed string, big-endian.
 * Fields are gathered into a buffer: one EVP_MAC_update per 64 KiB, not
 * a dozen per record.
 */
struct mac {
	EVP_MAC_CTX *ctx;
	bool ok;
	size_t n;
	uint8_t buf[65536];
};

static void mac_flush(struct mac *m)
{
	if (m->n && m->ok)
		m->ok = EVP_MAC_update(m->ctx, m->buf, m->n);
	m->n = 0;
}

static void mac_bytes(struct mac *m, const void *p, size_t len)
{
	if (len > sizeof(m->buf) - m->n) {
		mac_flush(m);
		if (len > sizeof(m->buf)) {
			m->ok = m->ok && EVP_MAC_update(m->ctx, p, len);
			return;
		}
	}
	if (len)
		memcpy(m->buf + m->n, p, len);
	m->n += len;
}

static void mac_u64(struct mac *m, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	mac_bytes(m, b, 8);
}

static void mac_put(struct mac *m, const void *p, size_t len)
{
	uint8_t l[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			 (uint8_t)len };

	mac_bytes(m, l, 4);
	mac_bytes(m, p, len);
}

/* A keyed context with the header in it; NULL when out of memory. */
static struct mac *mac_begin(const struct vg_scan_db *db)
{
	struct mac *m = malloc(sizeof(*m));
	EVP_MAC *mac = m ? EVP_MAC_fetch(NULL, "HMAC", NULL) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};

	if (!m)
		return NULL;
	m->ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	EVP_MAC_free(mac);	/* the context holds its own reference */
	m->n = 0;
	m->ok = m->ctx && EVP_MAC_init(m->ctx, db->mackey, sizeof(db->mackey), params);
	mac_put(m, "vigil-scan", 10);
	mac_u64(m, db->format);
	mac_u64(m, db->algo);
	mac_u64(m, db->nroots);
	for (size_t i = 0; i < db->nroots; i++)
		mac_put(m, db->roots[i], strlen(db->roots[i]));
	if (db->format >= 2) {
		uint8_t c[12];

		vg__scan_counter_encode(db, c);
		mac_put(m, c, db->has_counter ? sizeof(c) : 0);
	}
	return m;
}

static void mac_rec(struct mac *m, unsigned int format, const struct vg_scan_rec *r)
{
	mac_put(m, r->path, r->path_len);
	mac_u64(m, r->mode);
	mac_u64(m, r->uid);
	mac_u64(m, r->gid);
	mac_u64(m, r->size);
	mac_u64(m, r->ino);
	mac_u64(m, (uint64_t)r->mtime_ns);
	mac_u64(m, (uint64_t)r->ctime_ns);
	if (format >= 2)
		mac_u64(m, r->nlink);
	mac_put(m, r->xattrs, r->xattrs_len);
	mac_put(m, r->target, r->target_len);
	mac_u64(m, r->digest.algo);
	mac_put(m, r->digest.bytes, r->digest.len);
}

/* Finish into @out and free @m. Return: 0, or -ENOMEM (diag filled). */
static int mac_end(struct mac *m, uint64_t n, uint8_t out[32], struct vg_diag *diag)
{
	size_t outlen = 0;
	bool ok;

	if (!m)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	mac_u64(m, n);
	mac_flush(m);
	ok = m->ok && EVP_MAC_final(m->ctx, out, &outlen, 32);
	EVP_MAC_CTX_free(m->ctx);
	OPENSSL_cleanse(m->buf, sizeof(m->buf));
	free(m);
	return ok ? 0 : vg_diag_ssl(diag, -ENOMEM, "HMAC-SHA256");
}

/* The MAC over the header and db->recs (loaded in path order). */
int vg__scan_compute_mac(struct vg_scan_db *db, uint8_t out[32], struct vg_diag *diag)
{
	struct mac *m = mac_begin(db);

	for (size_t i = 0; m && i < db->n; i++)
		mac_rec(m, db->format, &db->recs[i]);
	return mac_end(m, db->n, out, diag);
}

/*
 * The MAC of a database being created, over its rows as stored (read back
 * in path order, straight from SQLite's pages, nothing copied).
 */
int vg__scan_stream_mac(struct vg_scan_db *db, uint8_t out[32], struct vg_diag *diag)
{
	struct mac *m = mac_begin(db);
	sqlite3_stmt *st = NULL;
	uint64_t n = 0;
	bool ok = true;
	int rc = SQLITE_DONE, r;

	if (!m)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	if (sqlite3_prepare_v2(db->db,
				     "SELECT path, mode, uid, gid, size, ino, mtime, ctime, xattrs,"
				     " target, algo, digest, nlink FROM files ORDER BY path", -1, &st,
				     NULL) != SQLITE_OK) {
		(void)mac_end(m, 0, out, NULL);
		return vg__scan_db_err(db, diag, -EIO, "reading back");
	}
	while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct vg_scan_rec rec = {
			.path = (char *)sqlite3_column_blob(st, 0),
			.path_len = (size_t)sqlite3_column_bytes(st, 0),
			.mode = (uint32_t)sqlite3_column_int64(st, 1),
			.uid = (uint32_t)sqlite3_column_int64(st, 2),
			.gid = (uint32_t)sqlite3_column_int64(st, 3),
			.size = (uint64_t)sqlite3_column_int64(st, 4),
			.ino = (uint64_t)sqlite3_column_int64(st, 5),
			.mtime_ns = sqlite3_column_int64(st, 6),
			.ctime_ns = sqlite3_column_int64(st, 7),
			.nlink = (uint64_t)sqlite3_column_int64(st, 12),
			.xattrs = (uint8_t *)sqlite3_column_blob(st, 8),
			.xattrs_len = (size_t)sqlite3_column_bytes(st, 8),
			.target = (uint8_t *)sqlite3_column_blob(st, 9),
			.target_len = (size_t)sqlite3_column_bytes(st, 9),
			.digest.algo = (uint8_t)sqlite3_column_int64(st, 10),
		};
		const void *dig = sqlite3_column_blob(st, 11);
		size_t dlen = (size_t)sqlite3_column_bytes(st, 11);

		if (dlen > sizeof(rec.digest.bytes)) {
			ok = false;
			break;
		}
		rec.digest.len = (uint8_t)dlen;
		if (dlen)
			memcpy(rec.digest.bytes, dig, dlen);
		mac_rec(m, db->format, &rec);
		n++;
	}
	if (!ok || rc != SQLITE_DONE) {
		r = ok ? vg__scan_db_err(db, diag, -EIO, "reading back") :
			 vg_diag_set(diag, -EIO, "%s: reading back: a digest too long", db->path);
		sqlite3_finalize(st);
		(void)mac_end(m, 0, out, NULL);
		return r;
	}
	sqlite3_finalize(st);
	return mac_end(m, n, out, diag);
}
