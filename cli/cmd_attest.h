/* SPDX-License-Identifier: MIT */
/*
 * cmd_attest.h - what the `vigil attest` verbs share: the help text, the
 * whole-file read their messages expect, and the verbs of
 * cmd_attest_policy.c (offline reference policies) and
 * cmd_attest_remote.c (the verifier's REST API), dispatched by
 * cmd_attest.c. Each verb takes argv[0] = its own name.
 */
#ifndef VIGIL_CLI_CMD_ATTEST_H
#define VIGIL_CLI_CMD_ATTEST_H

#include <stddef.h>
#include <stdint.h>

struct vg_dsse_keys;

extern const char cli_attest_help[];

/* The whole of @path ("-": stdin), at most CLI_DOC_MAX bytes. Return: 0, or -1 (reported). */
int cli_attest_read(const char *path, uint8_t **ret, size_t *len);

/* cmd_attest_policy.c, cmd_attest_policy_check.c */
int cli_attest_policy_create(int argc, char **argv);
int cli_attest_policy_check(int argc, char **argv);
int cli_attest_policy_import(int argc, char **argv);
/* --policy-key FILE: one more key policies must be DSSE-signed with. Return: 0, -1 (said). */
int cli_attest_policy_key_add(struct vg_dsse_keys **keys, const char *file);

/*
 * cmd_attest_remote.c: the verifier at @url, the credential in @token_file
 * (NULL: $VIGIL_TOKEN_FILE, else the default file if it exists), for the
 * verbs below; each reads the credential and loads libcurl first.
 */
void cli_attest_remote_setup(const char *url, const char *token_file);
int cli_attest_add(int argc, char **argv);
int cli_attest_status(int argc, char **argv);
int cli_attest_remove(int argc, char **argv);
int cli_attest_reactivate(int argc, char **argv);
int cli_attest_policy_set(int argc, char **argv);
int cli_attest_policy_get(int argc, char **argv);
int cli_attest_policy_assign(int argc, char **argv);
/* Reports @argv[0] as an unknown subcommand (after reading the credential). */
int cli_attest_unknown(int argc, char **argv);

#endif
