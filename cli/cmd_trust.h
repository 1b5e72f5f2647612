/* SPDX-License-Identifier: MIT */
/*
 * cmd_trust.h - what `vigil trust build` (cmd_trust_build.c) and `vigil
 * trust verify` (cmd_trust_verify.c) share: the key of the database.
 */
#ifndef VIGIL_CLI_CMD_TRUST_H
#define VIGIL_CLI_CMD_TRUST_H

#include "opts.h"
#include "vigil/hmac_key.h"

/* the grace of a superseded version, by default: a week */
#define TRUST_GRACE_DEFAULT (7 * 24 * 3600)

/*
 * trust_load_key - the HMAC key of a trust database: --hmac-key, else the
 * configuration's key.hmac. Return: 0, or -1 (reported).
 */
int trust_load_key(struct cli_keyargs *k, const char *config, struct vg_hmac_key *hk);

int cmd_trust_build(int argc, char **argv);
int cmd_trust_verify(int argc, char **argv);
/* `vigil trust boot show|hash` (cmd_trust_boot.c) */
int cmd_trust_boot(int argc, char **argv);

#endif
