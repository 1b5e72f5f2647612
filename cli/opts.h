/* SPDX-License-Identifier: MIT */
/*
 * opts.h - the option groups several vigil commands take, each with one
 * home: its flags' definitions, one parser, and the help lines the
 * commands print alike. A command lists its options in one table of
 * struct cli_opt (the groups' through the CLI_OPT_* macros, with the short
 * letter that command gives them, its own beside), parses with
 * cli_getopt_next(), and offers each option to the groups it composes
 * before its own switch. Nothing here is global: every group parses into
 * a struct the command owns.
 *
 * The flags, their short letters, defaults, help text and error messages
 * are the CLI's contract (tests/cli/t0090-cli-usage.sh and others); this
 * file gives them one home and changes none of them. It does not load
 * keys or configurations: the commands do that with the values parsed.
 */
#ifndef VIGIL_CLI_OPTS_H
#define VIGIL_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "vigil/config.h"

struct tree_opts;
struct cli_cfgargs;
struct cli_keyargs;
struct cli_evmargs;
struct cli_outargs;

/* The ids of the groups' options; a command's own use letters or ids below 256. */
enum cli_opt_id {
	CLI_O_HELP = 256,
	/* cli_cfgargs */
	CLI_O_CONFIG, CLI_O_ALGO,
	/* tree_opts */
	CLI_O_RECURSIVE, CLI_O_CROSS_MOUNTS, CLI_O_JOBS, CLI_O_QUIET,
	/* cli_keyargs */
	CLI_O_HMAC_KEY, CLI_O_PASSPHRASE_FILE, CLI_O_TCTI, CLI_O_KEYRING, CLI_O_KEY,
	CLI_O_KEYID, CLI_O_EVM_KEY, CLI_O_PORTABLE,
	/* cli_evmargs */
	CLI_O_UUID, CLI_O_NO_UUID, CLI_O_INODE, CLI_O_GENERATION, CLI_O_EVM_XATTR,
	/* cli_outargs */
	CLI_O_JSON, CLI_O_VERBOSE, CLI_O_OUTPUT,
};

/* One option of a command: --@name, -@letter (0: none), reported as @id. */
struct cli_opt {
	const char *name;	/* NULL: a short option only */
	int has_arg;		/* no_argument, required_argument, optional_argument */
	int letter;
	int id;
};

#define CLI_OPT_HELP			{ "help", no_argument, 'h', CLI_O_HELP }
#define CLI_OPT_CONFIG(l)		{ "config", required_argument, l, CLI_O_CONFIG }
#define CLI_OPT_ALGO(l)			{ "algo", required_argument, l, CLI_O_ALGO }
#define CLI_OPT_RECURSIVE(l)		{ "recursive", no_argument, l, CLI_O_RECURSIVE }
#define CLI_OPT_CROSS_MOUNTS		{ "cross-mounts", no_argument, 0, CLI_O_CROSS_MOUNTS }
#define CLI_OPT_JOBS(l)			{ "jobs", required_argument, l, CLI_O_JOBS }
#define CLI_OPT_QUIET(l)		{ "quiet", no_argument, l, CLI_O_QUIET }
#define CLI_OPT_HMAC_KEY(l)		{ "hmac-key", required_argument, l, CLI_O_HMAC_KEY }
#define CLI_OPT_PASSPHRASE_FILE		{ "passphrase-file", required_argument, 0, CLI_O_PASSPHRASE_FILE }
#define CLI_OPT_TCTI			{ "tcti", required_argument, 0, CLI_O_TCTI }
#define CLI_OPT_KEYRING(l)		{ "keyring", required_argument, l, CLI_O_KEYRING }
#define CLI_OPT_KEY(l)			{ "key", required_argument, l, CLI_O_KEY }
#define CLI_OPT_KEYID			{ "keyid", required_argument, 0, CLI_O_KEYID }
#define CLI_OPT_EVM_KEY(l)		{ "evm-key", required_argument, l, CLI_O_EVM_KEY }
#define CLI_OPT_PORTABLE(l)		{ "portable", no_argument, l, CLI_O_PORTABLE }
#define CLI_OPT_UUID			{ "uuid", required_argument, 0, CLI_O_UUID }
#define CLI_OPT_NO_UUID			{ "no-uuid", no_argument, 0, CLI_O_NO_UUID }
#define CLI_OPT_INODE			{ "inode", required_argument, 0, CLI_O_INODE }
#define CLI_OPT_GENERATION		{ "generation", required_argument, 0, CLI_O_GENERATION }
#define CLI_OPT_EVM_XATTR(l)		{ "evm-xattr", required_argument, l, CLI_O_EVM_XATTR }
#define CLI_OPT_JSON(l)			{ "json", no_argument, l, CLI_O_JSON }
#define CLI_OPT_VERBOSE(l)		{ "verbose", no_argument, l, CLI_O_VERBOSE }
#define CLI_OPT_OUTPUT(l)		{ "output", required_argument, l, CLI_O_OUTPUT }

/* Help lines several commands print word for word. */
#define CLI_HELP_CONFIG \
	"  -c, --config FILE      configuration (default " VG_CONFIG_DEFAULT ", if present)\n"
#define CLI_HELP_CROSS_MOUNTS \
	"      --cross-mounts     also walk into other filesystems\n"
#define CLI_HELP_JOBS(l) \
	"  -" l ", --jobs N           worker threads (default: one per CPU)\n"
#define CLI_HELP_KEYOPTS \
	"      --passphrase-file F  passphrase of a passphrase key file (else the terminal)\n" \
	"      --tcti STRING      TPM of a sealed key file (default $VIGIL_TCTI)\n"
#define CLI_HELP_UUID \
	"      --uuid UUID        filesystem UUID bound in HMACs and 03 signatures\n" \
	"      --no-uuid          HMACs and 03 signatures carry no UUID\n"
#define CLI_HELP_EVM_XATTR \
	"  -x, --evm-xattr NAME   protect NAME too (after the kernel's default list)\n"

#define CLI_OPTS_MAX 48

/* The groups a command composes: each non-NULL one parses its options. */
struct cli_groups {
	struct cli_cfgargs *cfg;
	struct tree_opts *tree;
	struct cli_keyargs *keys;
	struct cli_evmargs *evm;
	struct cli_outargs *out;
};

/* A command's table turned into getopt_long()'s. */
struct cli_getopt {
	const struct cli_opt *opts;
	size_t n;
	const struct cli_groups *groups;
	struct option longopts[CLI_OPTS_MAX + 1];
	char shortopts[3 * CLI_OPTS_MAX + 1];
};

/* What cli_getopt_next() returns for a group's option with a bad argument. */
#define CLI_O_BAD (-2)

/*
 * cli_getopt_init - prepare @g for the @n options of @opts (in their
 * order: getopt_long's abbreviations and messages follow it), parsed by
 * @groups (may be NULL: every option is the command's), and restart
 * getopt (optind = 0).
 * Return: 0, or -E2BIG past CLI_OPTS_MAX options.
 */
int cli_getopt_init(struct cli_getopt *g, const struct cli_opt *opts, size_t n,
		    const struct cli_groups *groups);

/*
 * cli_getopt_next - the next option of @argv, long or short, that is the
 * command's own (optarg set as by getopt_long); the groups' options are
 * parsed on the way.
 * Return: the id, '?' for an option not in the table or a missing
 * argument (getopt_long has said so), CLI_O_BAD for a group's option with
 * a bad argument (reported), -1 after the last option.
 */
int cli_getopt_next(struct cli_getopt *g, int argc, char **argv);

/*
 * cli_opts_stop - what ends a command's option loop at @id, the id of
 * --help, of an option not in its table, or CLI_O_BAD: --help prints @help
 * on stdout; an unknown option prints it on stderr (after getopt_long's
 * own message); a bad argument prints nothing more (reported already).
 * Return: EXIT_OK after --help, else EXIT_ERROR.
 */
int cli_opts_stop(const char *help, int id);

/*
 * cli_opts_groups - offer option @id (with @arg) to each of @gr's groups.
 * Return: as the groups' parsers below.
 */
int cli_opts_groups(const struct cli_groups *gr, int id, const char *arg);

/*
 * The groups. Each cli_opts_<group>() takes an id from cli_getopt_next()
 * and its optarg.
 * Return: 1 the group's option (parsed), 0 not the group's, -1 a bad
 * argument (reported).
 */

/* --config, --algo (@algo -1: not given, or a command's default set before parsing). */
struct cli_cfgargs {
	const char *config;
	int algo;
};
int cli_opts_cfg(struct cli_cfgargs *c, int id, const char *arg);

/* --recursive, --cross-mounts, --jobs, --quiet: straight into the walk's options. */
int cli_opts_tree(struct tree_opts *to, int id, const char *arg);

/* The keys: HMAC key file (and how to open it), keyrings, signing keys. */
struct cli_keyargs {
	const char *hmac_key;
	bool hmac_key_once;		/* set by the command: a second --hmac-key is an error */
	struct cli_keyopts ko;		/* --passphrase-file, --tcti */
	const char *keyrings[64];
	size_t nkeyrings;
	const char *key, *keyid;	/* signing key, its keyid override */
	const char *evm_key;
	bool portable;
};
int cli_opts_keys(struct cli_keyargs *k, int id, const char *arg);
/*
 * cli_keyargs_load_hmac - load k->hmac_key, with the TPM of --tcti, else
 * the configuration's @cfg (may be NULL).
 * Return: 0, or -1 (reported).
 */
int cli_keyargs_load_hmac(struct cli_keyargs *k, const struct vg_config *cfg,
			  struct vg_hmac_key *ret);

/* What security.evm covers: --uuid/--no-uuid, --inode/--generation, --evm-xattr. */
struct cli_evmargs {
	struct cli_uuid u;
	struct vg_meta_override meta;
	/* set by the command to add --evm-xattr names as they come; else they
	 * are kept for cli_evmargs_apply() once the configuration is loaded */
	struct vg_evm_config *direct;
	const char *xattrs[VG_EVM_MAX_XATTRS];
	size_t nxattrs;
};
int cli_opts_evm(struct cli_evmargs *e, int id, const char *arg);
/* --uuid with --no-uuid. Return: 0, or -1 (reported). */
int cli_evmargs_check(const struct cli_evmargs *e);
/* Add the kept --evm-xattr names to @evm. Return: 0, or -1 (reported). */
int cli_evmargs_apply(const struct cli_evmargs *e, struct vg_evm_config *evm);
/*
 * cli_evmargs_uuid - the UUID labels bind, from the command line, else
 * @cfg: --no-uuid or uuid=none clear cfg->evm.fsuuid; a given UUID is
 * copied to @uuid with *@mode VG_UUID_GIVEN.
 * Return: true when each file's filesystem must be asked (nothing given).
 */
bool cli_evmargs_uuid(const struct cli_evmargs *e, struct vg_config *cfg,
		      enum vg_uuid_mode *mode, uint8_t uuid[16]);

/* --json, --verbose, --output FILE. */
struct cli_outargs {
	bool json, verbose;
	const char *output;
};
int cli_opts_out(struct cli_outargs *o, int id, const char *arg);

#endif
