/* SPDX-License-Identifier: MIT */
/*
 * scan_update.h - `vigil scan --update`'s files beside the new database
 * (scan_update.c). Not a library interface.
 */
#ifndef VIGIL_CLI_SCAN_UPDATE_H
#define VIGIL_CLI_SCAN_UPDATE_H

#include "vigil/scan.h"

/* --update --limit: a copy of @r, outside the limit, into @next. Return: 0, -1 (said). */
int scan_keep_rec(struct vg_scan_db *next, const struct vg_scan_rec *r);
/* --update: DB kept as DB.old before the new one replaces it. Return: 0, -1 (said). */
int scan_keep_old(const char *db);

#endif
