/* SPDX-License-Identifier: MIT */
/*
 * scan_db.h - what the scan database (scan_db.c) and its MAC (scan_mac.c)
 * share: the handle, and the three MAC steps the database takes (key
 * derivation, the MAC over records loaded, the MAC over rows as stored).
 * Not installed.
 */
#ifndef VIGIL_SCAN_DB_H
#define VIGIL_SCAN_DB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vigil/diag.h"
#include "vigil/outfile.h"
#include "vigil/scan.h"

/* the format written; format 1 (no link counts, no counter) is still read */
#define SCAN_FORMAT 2

/* Records waiting to be inserted; inserted in path order, SCAN_BATCH at a time. */
#define SCAN_BATCH 4096

struct vg_scan_db {
	sqlite3 *db;
	sqlite3_stmt *insert;
	pthread_mutex_t lock;		/* pending, npending */
	pthread_mutex_t insert_lock;	/* insert, the connection, dup */
	struct vg_scan_rec *pending;	/* SCAN_BATCH slots */
	size_t npending;
	char *dup;			/* first path recorded twice */
	char *path;
	struct vg_outfile out;		/* the temporary being written (outfile.h) */
	unsigned int format;		/* 1 or 2: what the MAC and the rows hold */
	unsigned int algo;
	bool has_counter;		/* format 2: bound to a TPM NV counter */
	uint32_t nv_index;
	uint64_t counter;
	char **roots;
	size_t nroots;
	uint8_t mackey[32];
	struct vg_scan_rec *recs;
	size_t n;
	size_t *index;		/* open addressing into recs, SIZE_MAX empty */
	size_t index_cap;
};

/* "<db path>: @what: <SQLite's message>". Return: @err. */
int vg__scan_db_err(struct vg_scan_db *db, struct vg_diag *diag, int err, const char *what);

/* The header's "tpm_counter" value: u32be NV index, u64be counter (zeros when unbound). */
void vg__scan_counter_encode(const struct vg_scan_db *db, uint8_t out[12]);

/* db->mackey from the caller's @key (HMAC-SHA256 of a fixed label). Return: 0 or -ENOMEM. */
int vg__scan_derive_key(struct vg_scan_db *db, const uint8_t *key, size_t keylen,
			struct vg_diag *diag);
/* The MAC over the header and db->recs (loaded in path order). Return: 0 or -ENOMEM. */
int vg__scan_compute_mac(struct vg_scan_db *db, uint8_t out[32], struct vg_diag *diag);
/* The MAC over the rows as stored, read back in path order. Return: 0, -EIO, -ENOMEM. */
int vg__scan_stream_mac(struct vg_scan_db *db, uint8_t out[32], struct vg_diag *diag);

#endif
