// SPDX-License-Identifier: MIT
/*
 * scan_update.c - what `vigil scan --update` writes besides the new
 * database (scan_update.h): the previous database kept as DB.old (a hard
 * link renamed into place: DB and DB.old are whole at every moment), and
 * the records outside --limit carried into the new one as they were.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "scan_update.h"

/* --update --limit: a copy of @r, outside the limit, into @next. Return: 0, -1 (said). */
int scan_keep_rec(struct vg_scan_db *next, const struct vg_scan_rec *r)
{
	struct vg_scan_rec c = *r;
	struct vg_diag d = { 0 };

	c.path = strndup(r->path, r->path_len);
	c.xattrs = r->xattrs_len ? malloc(r->xattrs_len) : NULL;
	c.target = r->target_len ? malloc(r->target_len) : NULL;
	if (!c.path || (r->xattrs_len && !c.xattrs) || (r->target_len && !c.target)) {
		vg_scan_rec_release(&c);
		cli_err("out of memory");
		return -1;
	}
	if (r->xattrs_len)
		memcpy(c.xattrs, r->xattrs, r->xattrs_len);
	if (r->target_len)
		memcpy(c.target, r->target, r->target_len);
	if (vg_scan_db_add(next, &c, &d) < 0) {
		vg_scan_rec_release(&c);
		cli_err("%s", d.msg);
		return -1;
	}
	return 0;
}

/*
 * --update: keep DB as DB.old before the new one replaces it. A hard link
 * under a temporary name, renamed over DB.old: DB stays in place, and
 * DB.old is always a whole database. Return: 0, or -1 (said).
 */
int scan_keep_old(const char *db)
{
	size_t n = strlen(db);
	char *old = malloc(n + 5), *tmp = malloc(n + 24);
	int r = -1;

	if (!old || !tmp) {
		cli_err("out of memory");
		goto out;
	}
	snprintf(old, n + 5, "%s.old", db);
	snprintf(tmp, n + 24, "%s.old.vigil-tmp", db);
	(void)unlink(tmp);	/* a leftover of a killed --update */
	if (link(db, tmp) < 0) {
		cli_file_err(db, "cannot keep the previous database as %s: %s", old, strerror(errno));
		goto out;
	}
	if (rename(tmp, old) < 0) {
		cli_file_err(old, "%s", strerror(errno));
		(void)unlink(tmp);
		goto out;
	}
	/*
	 * DB.old may already be DB's inode (an --update killed after keeping
	 * DB.old and before renaming the new database): rename() of two links
	 * to one file does nothing, and would leave the temporary behind.
	 */
	(void)unlink(tmp);
	r = 0;
out:
	free(old);
	free(tmp);
	return r;
}
