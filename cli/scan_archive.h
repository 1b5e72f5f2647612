/* SPDX-License-Identifier: MIT */
/*
 * scan_archive.h - the archive as a baseline of `vigil scan`
 * (scan_archive.c): where a "trust" baseline rule (scan.baseline, vigil/
 * scan_rules.h) decides, a file a current package of the trust database
 * ships is judged against what the archive says (content, type, link
 * target, mode, owner, group, as dpkg gives them) rather than against the
 * scan's own database, so that an upgrade recorded by apt's hook needs no
 * --update and a tampered file is still caught. Not a library interface.
 */
#ifndef VIGIL_CLI_SCAN_ARCHIVE_H
#define VIGIL_CLI_SCAN_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/hash.h"
#include "vigil/hmac_key.h"
#include "vigil/scan.h"

struct scan_archive;

/* how the archive judged a file (scan_archive_judge) */
struct scan_verdict {
	bool conffile;		/* a conffile: what differs is the scan database's to judge */
	uint32_t what;		/* VG_SCAN_* fields that differ; 0: as the archive says */
	struct vg_scan_rec then;	/* the archive's values (path, xattrs, target borrowed) */
	const char *pkg;	/* "NAME VERSION ARCH" of the package judged against */
	struct vg_digest disk;	/* the file's content in the database's algorithm (len 0: none) */
};

/*
 * scan_archive_open - the trust database @db (its schema and MAC checked
 * with @hk before anything is read), every file of its current packages
 * in memory with what dpkg gives it on this system (statoverrides, the
 * owners' names in /etc/passwd and /etc/group); files another package
 * diverted and files dpkg's path-exclude keeps out are left to the scan's
 * database. @algo: the scan's content algorithm. Return: 0, -1 (said).
 */
int scan_archive_open(const char *db, const struct vg_hmac_key *hk, unsigned int algo,
		      struct scan_archive **ret);
void scan_archive_free(struct scan_archive *a);

/* Return: whether a current package ships @path (merged /usr: as /bin/x too). */
bool scan_archive_ships(const struct scan_archive *a, const char *path, size_t len);

/*
 * scan_archive_judge - @now (its digest in the scan's algorithm; @fd
 * open on it if a regular file, to digest it again in the database's
 * algorithm when they differ; @h this thread's hasher) against the
 * packages that ship its path; marks the path seen. Thread-safe.
 * Return: 1 a package ships it (@v filled: release with
 * scan_verdict_release); 0 none does; -1 (said: no memory, unreadable).
 */
int scan_archive_judge(struct scan_archive *a, const struct vg_scan_rec *now, int fd,
		       struct vg_hasher *h, struct scan_verdict *v);
void scan_verdict_release(struct scan_verdict *v);

/*
 * scan_archive_unseen - call @fn for every packaged file (conffiles aside:
 * the scan database has them) that no scan_archive_judge() saw, with the
 * path the walk would have met it under (merged /usr: /usr/bin/x for
 * /bin/x), its package and the mode the archive gives it. A non-zero
 * return of @fn stops and is returned. Return: 0, that.
 */
int scan_archive_unseen(struct scan_archive *a,
			int (*fn)(void *arg, const char *path, const char *pkg, uint32_t mode),
			void *arg);

/* Return: the number of files judged by the archive so far (they matched or not). */
size_t scan_archive_judged(const struct scan_archive *a);

#endif
