/* SPDX-License-Identifier: MIT */
/*
 * scan_counter.h - `vigil scan`'s rollback protection: a database bound to
 * a TPM NV monotonic counter (docs/scan.md, "Rollback") is accepted only
 * when its counter equals the TPM's, or is one ahead (a kill between
 * writing the database and advancing the counter: the counter is advanced
 * then); --init and --update write the new database with the TPM's value
 * + 1, rename it into place, then advance the TPM's counter.
 */
#ifndef VIGIL_CLI_SCAN_COUNTER_H
#define VIGIL_CLI_SCAN_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

#include "vigil/scan.h"

struct vg_tpm;

struct scan_counter {
	bool want;		/* --tpm-counter[=NVINDEX]: bind (--init, --update), require (--check) */
	bool named;		/* ... with an NVINDEX */
	bool ignore;		/* --ignore-tpm-counter (--check only) */
	uint32_t index;		/* NVINDEX, else VG_TPM_COUNTER_DEFAULT */
	const char *tcti;	/* --tcti, tpm.tcti; NULL: $VIGIL_TCTI, the default */
	struct vg_tpm *tpm;
	bool bind;		/* the database written is bound to .bound_index */
	uint32_t bound_index;
	uint64_t written;	/* the counter recorded in the database written */
};

/* --tpm-counter[=NVINDEX]. Return: 0, or -1 (said). */
int scan_counter_option(struct scan_counter *c, const char *arg);

/*
 * scan_counter_verify - the freshness of the opened @db (@path, with
 * roots for the recovery advice) against the TPM, the counter advanced
 * when the database is one ahead (said on stderr). @update: the new
 * database will be bound (when @db is, or --tpm-counter was given).
 * Return: 0, or -1 (said, with what to do: exit 2).
 */
int scan_counter_verify(struct scan_counter *c, struct vg_scan_db *db, const char *path,
			bool update);

/*
 * scan_counter_prepare - for a database about to be committed (--init:
 * when --tpm-counter was given; --update: when scan_counter_verify said
 * so): the counter defined if absent, read, and the TPM's value + 1
 * recorded in @next. Return: 0, or -1 (said).
 */
int scan_counter_prepare(struct scan_counter *c, struct vg_scan_db *next, bool init);

/* After the commit: advance the TPM's counter. Return: 0, or -1 (said: what it means). */
int scan_counter_advance(struct scan_counter *c, const char *path);

void scan_counter_release(struct scan_counter *c);

#endif
