/* SPDX-License-Identifier: MIT */
/*
 * scan_rules_cli.h - `vigil scan --explain PATH` and `vigil scan
 * --import-aide AIDE.CONF` (cli/scan_rules_cli.c).
 */
#ifndef VIGIL_CLI_SCAN_RULES_H
#define VIGIL_CLI_SCAN_RULES_H

#include <stdbool.h>

#include "vigil/config.h"

/*
 * scan_explain - print which scan rule of @cfg decides for @path, and
 * why: the file and line, the kind of selection, the group and the
 * attributes it expands to; as one JSON document with @json.
 * Return: the exit status (0).
 */
int scan_explain(const struct vg_config *cfg, const char *path, bool json);

/*
 * scan_import_aide - translate the aide.conf @file, then the @nmore files
 * of @more (in order: the groups of one are known to the next, as
 * aide.conf and its aide.conf.d) into vigil.conf scan lines on stdout,
 * each line that could not be (wholly) translated named on stderr with
 * the reason. Return: the exit status: 0 all translated, 1 some lines
 * not, 2 a file unreadable.
 */
int scan_import_aide(const char *file, char *const *more, int nmore);

#endif
