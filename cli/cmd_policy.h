/* SPDX-License-Identifier: MIT */
/*
 * cmd_policy.h - what the `vigil policy` verbs share (cmd_policy.c: check,
 * show and the dispatch; cmd_policy_explain.c: explain): the help text,
 * the options every verb takes and the policy source (FILE or --builtin).
 */
#ifndef VIGIL_CLI_CMD_POLICY_H
#define VIGIL_CLI_CMD_POLICY_H

#include <stdbool.h>

#include "vigil/policy.h"

/* an IMA policy read whole: the size lib/policy.c accepts from a file */
#define POLICY_MAX ((size_t)64 << 20)

enum { O_BUILTIN = 'b', O_KERNEL = 'k', O_ACCEPT = 'A', O_EUID = 256, O_SUID, O_GID, O_EGID, O_SGID, O_CAPU, O_CAPG,
       O_FGROUP, O_FSMAGIC, O_FSNAME, O_FSUUID, O_OBJ, O_SUBJ, O_DATA, O_SUBJAPP, O_ATTR, O_LOADER };

struct src {
	const char *file;	/* NULL with --builtin */
	const char *builtin;
	unsigned int flags;
	char *label;		/* what messages call it */
};

extern const char cli_policy_help[];

/* Parse the source; report. Return: the policy, or NULL (reported). */
struct vg_policy *cli_policy_load(const struct src *s, bool all_errors);
/* FILE (argv[optind]) or --builtin, and the label messages use. Return: 0, or -1 (reported). */
int cli_policy_src_init(struct src *s, int argc, char **argv);
/* --builtin, --kernel. Return: 0, or -1 when @c is neither. */
int cli_policy_parse_common(int c, struct src *s);

/* `vigil policy explain` (cmd_policy_explain.c); @argv[0] is "explain". */
int cli_policy_explain(int argc, char **argv);

#endif
