// SPDX-License-Identifier: MIT
/*
 * trust_db_mac.c - the MAC of a trust database (docs/trust.md): HMAC-SHA256
 * under a key derived from the caller's, over the schema as SQLite keeps
 * it and every row of every table in a fixed order, each value typed and
 * length-prefixed, each table closed by its row count. The writer computes
 * it over the rows as stored before it commits, the reader before it uses
 * a row; both run the same queries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sqlite3.h>

#include "vigil/hash.h"
#include "vigil/outfile.h"
#include "vigil/trust.h"
#include "trust_db.h"

/* the MAC'ed content, table by table, in a fixed order; each from a format on */
static const struct {
	const char *sql;
	unsigned int since;
} mac_queries[] = {
	{ "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name", 1 },
	{ "SELECT key, value FROM meta WHERE key <> 'mac' ORDER BY key", 1 },
	{ "SELECT * FROM releases ORDER BY id", 1 },
	{ "SELECT * FROM packages ORDER BY id", 1 },
	{ "SELECT * FROM files ORDER BY path, algo, digest, package", 1 },
	{ "SELECT * FROM sources ORDER BY name", 3 },
	{ "SELECT * FROM boot ORDER BY name, version, arch, path", 4 },
};

int vg__trust_derive_key(struct vg_trust_db *db, const uint8_t *key, size_t keylen,
		struct vg_diag *diag)
{
	return vg_hmac_sha256(key, keylen, TRUST_MAC_LABEL, strlen(TRUST_MAC_LABEL), db->mackey,
			      diag);
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
int vg__trust_compute_mac(struct vg_trust_db *db, uint8_t out[32], struct vg_diag *diag)
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
	size_t nq = sizeof(mac_queries) / sizeof(mac_queries[0]);

	for (size_t q = 0; ok && q < nq; q++) {
		sqlite3_stmt *st = NULL;
		uint64_t rows = 0;
		uint8_t b[9] = { 0xff };
		int rc;

		if (db->format < mac_queries[q].since)
			continue;
		if (sqlite3_prepare_v2(db->db, mac_queries[q].sql, -1, &st, NULL) != SQLITE_OK) {
			r = vg__trust_db_err(db, diag, -EBADMSG, "reading");
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
			r = vg__trust_db_err(db, diag, -EBADMSG, "reading");
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
