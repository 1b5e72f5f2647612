/* SPDX-License-Identifier: MIT */
/*
 * scan_report.h - the change list of `vigil scan --check/--update/--compare`
 * and its three reports: text (AIDE-like: the counts, then each entry with
 * its old and new values), JSON lines, and AIDE 0.18's own report layout
 * (--format aide) for the log parsers and SIEM rules written for it.
 */
#ifndef VIGIL_CLI_SCAN_REPORT_H
#define VIGIL_CLI_SCAN_REPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "vigil/scan.h"

enum scan_format { SCAN_TEXT, SCAN_JSON, SCAN_AIDE };

#define CH_ADDED 0u
#define CH_REMOVED UINT32_MAX

struct change {
	char *path;
	uint32_t what;		/* CH_ADDED, CH_REMOVED, else VG_SCAN_* bits */
	uint32_t mode_then, mode_now; /* st_mode on each side (0 on the side it is absent) */
	char xattrs[256];	/* names of the changed xattrs, comma separated */
	char *pkg;		/* judged by the archive: "NAME VERSION ARCH"; NULL: by the scan's database */
	struct json_object *diff; /* owned: {FIELD: {old, new}, xattrs: {NAME: {old, new}}} */
};

struct scan_changes {
	pthread_mutex_t lock;
	struct change *v;
	size_t n, cap;
	enum scan_format format;
	const char *db;		/* the database, for the AIDE report's trailer */
	struct timespec start;	/* when the check began */
	size_t checked;		/* entries looked at (set before reporting) */
	const char *archive_db;	/* the trust database of a "trust" baseline, or NULL */
	size_t archive;		/* entries the archive judged (set before reporting) */
};

void changes_init(struct scan_changes *c, enum scan_format format, const char *db);
void changes_release(struct scan_changes *c);

/* An added (@mode: its st_mode now) or removed (@mode: as recorded) entry. Thread-safe.
 * Return: 0, -1 (said). */
int changes_add(struct scan_changes *c, const char *path, uint32_t what, uint32_t mode);

/*
 * A changed entry: @what (VG_SCAN_* bits) from @then to @now, the old and
 * new value of each field kept. Thread-safe. Return: 0, -1 (said).
 */
int changes_add_diff(struct scan_changes *c, const struct vg_scan_rec *then,
		     const struct vg_scan_rec *now, uint32_t what);

/* The same, judged by the archive (@then its values), against package @pkg ("NAME VERSION ARCH"). */
int changes_add_archive(struct scan_changes *c, const char *path, uint32_t what, uint32_t mode,
			const char *pkg);
int changes_add_diff_archive(struct scan_changes *c, const struct vg_scan_rec *then,
			     const struct vg_scan_rec *now, uint32_t what, const char *pkg);

/* The report, in c->format, to @out; @quiet drops the text summary. */
void changes_report(FILE *out, struct scan_changes *c, bool quiet);

/*
 * The report on stdout, and where --report and --on-change send it: the
 * file replaced whole (0640: it names files and digests), the command run
 * by /bin/sh with the report on its stdin and VIGIL_SCAN_DB,
 * VIGIL_SCAN_CHANGES in its environment, only when something changed.
 * Return: 0, or -1 (said: the file could not be written, or the command
 * could not run or failed).
 */
int changes_deliver(struct scan_changes *c, bool quiet, const char *file, const char *cmd);

#endif
