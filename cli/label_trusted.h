/* SPDX-License-Identifier: MIT */
/*
 * label_trusted.h - `vigil label --trusted DB`: a file is labeled only
 * where the digest of the content read for the label equals a digest the
 * authenticated trust database records for its path (docs/trust.md,
 * "Labels from the archive"). The check is a vg_label_gate, so the bytes
 * compared are the bytes labeled, from one read of one fd.
 */
#ifndef VIGIL_CLI_LABEL_TRUSTED_H
#define VIGIL_CLI_LABEL_TRUSTED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "vigil/appraise.h"
#include "vigil/hash.h"
#include "vigil/trust.h"

struct label_trusted {
	struct vg_trust_db *db;
	pthread_mutex_t lock;		/* one lookup at a time on the database */
	struct vg_trust_root tr;	/* --trusted-root ("/" by default) and its merged-/usr links */
	bool superseded;		/* --trusted-superseded */
};

/* why a file was refused; its words are the reasons counted */
enum label_trusted_verdict {
	LT_TRUSTED,
	LT_NOT_IN_DB,		/* "not-in-database" */
	LT_DIFFERS,		/* "digest-differs" */
	LT_SUPERSEDED,		/* "superseded-version" */
	LT_OUTSIDE,		/* "outside-root" */
};

/* what the gate found for one file */
struct label_trusted_check {
	struct label_trusted *lt;
	const char *dbpath;		/* the path as the database records it */
	enum label_trusted_verdict verdict;
	struct vg_digest disk, recorded;	/* recorded: for LT_DIFFERS */
};

/*
 * label_trusted_open - open and authenticate @db with @key, check that it
 * records @algo, canonicalise @root. Reports its errors.
 * Return: 0, -1.
 */
int label_trusted_open(struct label_trusted *lt, const char *db, const uint8_t *key,
		       size_t keylen, const char *root, unsigned int algo, bool superseded);

/*
 * label_trusted_dbpath - the database path of the file open on @fd: its
 * absolute path (the kernel's, /proc/self/fd) under the root, written to
 * @buf. Return: @buf, or NULL when the file is not under the root.
 */
const char *label_trusted_dbpath(const struct label_trusted *lt, int fd, char *buf, size_t cap);

/* the vg_label_gate check: @arg is a struct label_trusted_check */
int label_trusted_gate(void *arg, const struct vg_digest *d);

/* the reason word of @v */
const char *label_trusted_reason(enum label_trusted_verdict v);

void label_trusted_release(struct label_trusted *lt);

#endif
