// SPDX-License-Identifier: MIT
/*
 * opts.c - the option groups of the vigil commands (opts.h): a command's
 * table of options turned into getopt_long()'s, and one parser per group.
 * The messages are the ones the commands printed when each parsed these
 * options itself; the checks that need a loaded configuration or key
 * stay with the commands.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "opts.h"
#include "tree.h"

int cli_getopt_init(struct cli_getopt *g, const struct cli_opt *opts, size_t n,
		    const struct cli_groups *groups)
{
	size_t nl = 0, ns = 0;

	if (n > CLI_OPTS_MAX)
		return -E2BIG;
	memset(g, 0, sizeof(*g));
	g->opts = opts;
	g->n = n;
	g->groups = groups;
	for (size_t i = 0; i < n; i++) {
		if (opts[i].name)
			g->longopts[nl++] = (struct option){ opts[i].name, opts[i].has_arg, NULL,
							     opts[i].id };
		if (!opts[i].letter)
			continue;
		g->shortopts[ns++] = (char)opts[i].letter;
		if (opts[i].has_arg != no_argument)
			g->shortopts[ns++] = ':';
		if (opts[i].has_arg == optional_argument)
			g->shortopts[ns++] = ':';
	}
	optind = 0;
	return 0;
}

/* The id of what getopt_long() returned: '?', -1, or an entry's id. */
static int opt_id(const struct cli_getopt *g, int c, int li)
{
	if (c == -1 || c == '?' || c == ':')
		return c == -1 ? -1 : '?';
	if (li >= 0)
		return g->longopts[li].val;
	/* a short option: the entry that gives this letter */
	for (size_t i = 0; i < g->n; i++)
		if (g->opts[i].letter == c)
			return g->opts[i].id;
	return '?';
}

int cli_getopt_next(struct cli_getopt *g, int argc, char **argv)
{
	for (;;) {
		int li = -1, c = getopt_long(argc, argv, g->shortopts, g->longopts, &li);
		int id = opt_id(g, c, li), r;

		if (id == -1 || id == '?' || !g->groups)
			return id;
		r = cli_opts_groups(g->groups, id, optarg);
		if (r < 0)
			return CLI_O_BAD;
		if (r == 0)
			return id;
	}
}

int cli_opts_stop(const char *help, int id)
{
	if (id == CLI_O_HELP) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	if (id != CLI_O_BAD)
		fputs(help, stderr);
	return EXIT_ERROR;
}

int cli_opts_groups(const struct cli_groups *gr, int id, const char *arg)
{
	int r = 0;

	if (!r && gr->cfg)
		r = cli_opts_cfg(gr->cfg, id, arg);
	if (!r && gr->tree)
		r = cli_opts_tree(gr->tree, id, arg);
	if (!r && gr->keys)
		r = cli_opts_keys(gr->keys, id, arg);
	if (!r && gr->evm)
		r = cli_opts_evm(gr->evm, id, arg);
	if (!r && gr->out)
		r = cli_opts_out(gr->out, id, arg);
	return r;
}

int cli_opts_cfg(struct cli_cfgargs *c, int id, const char *arg)
{
	switch (id) {
	case CLI_O_CONFIG:
		c->config = arg;
		return 1;
	case CLI_O_ALGO:
		c->algo = cli_parse_algo(arg);
		return c->algo < 0 ? -1 : 1;
	}
	return 0;
}

int cli_opts_tree(struct tree_opts *to, int id, const char *arg)
{
	switch (id) {
	case CLI_O_RECURSIVE:
		to->recursive = true;
		return 1;
	case CLI_O_CROSS_MOUNTS:
		to->cross_mounts = true;
		return 1;
	case CLI_O_JOBS:
		return cli_parse_jobs(arg, &to->workers) < 0 ? -1 : 1;
	case CLI_O_QUIET:
		to->quiet = true;
		return 1;
	}
	return 0;
}

int cli_opts_keys(struct cli_keyargs *k, int id, const char *arg)
{
	switch (id) {
	case CLI_O_HMAC_KEY:
		if (k->hmac_key && k->hmac_key_once) {
			cli_err("--hmac-key given twice");
			return -1;
		}
		k->hmac_key = arg;
		return 1;
	case CLI_O_PASSPHRASE_FILE:
		k->ko.passphrase_file = arg;
		return 1;
	case CLI_O_TCTI:
		k->ko.tcti = arg;
		return 1;
	case CLI_O_KEYRING:
		if (k->nkeyrings == sizeof(k->keyrings) / sizeof(k->keyrings[0])) {
			cli_err("too many --keyring");
			return -1;
		}
		k->keyrings[k->nkeyrings++] = arg;
		return 1;
	case CLI_O_KEY:
		k->key = arg;
		return 1;
	case CLI_O_KEYID:
		k->keyid = arg;
		return 1;
	case CLI_O_EVM_KEY:
		k->evm_key = arg;
		return 1;
	case CLI_O_PORTABLE:
		k->portable = true;
		return 1;
	}
	return 0;
}

int cli_keyargs_load_hmac(struct cli_keyargs *k, const struct vg_config *cfg,
			  struct vg_hmac_key *ret)
{
	if (!k->ko.tcti && cfg)
		k->ko.tcti = cfg->tcti;
	return cli_load_hmac_key_opts(k->hmac_key, &k->ko, ret);
}

int cli_opts_evm(struct cli_evmargs *e, int id, const char *arg)
{
	switch (id) {
	case CLI_O_UUID:
		return cli_parse_uuid(&e->u, arg) < 0 ? -1 : 1;
	case CLI_O_NO_UUID:
		e->u.omit = true;
		return 1;
	case CLI_O_INODE:
		return cli_parse_meta(&e->meta, 'i', arg) < 0 ? -1 : 1;
	case CLI_O_GENERATION:
		return cli_parse_meta(&e->meta, 'G', arg) < 0 ? -1 : 1;
	case CLI_O_EVM_XATTR:
		if (e->direct)
			return cli_evm_add(e->direct, arg) < 0 ? -1 : 1;
		if (e->nxattrs == VG_EVM_MAX_XATTRS) {
			cli_err("too many --evm-xattr");
			return -1;
		}
		e->xattrs[e->nxattrs++] = arg;
		return 1;
	}
	return 0;
}

int cli_evmargs_check(const struct cli_evmargs *e)
{
	if (e->u.omit && e->u.mode == VG_UUID_GIVEN) {
		cli_err("--uuid and --no-uuid exclude each other");
		return -1;
	}
	return 0;
}

int cli_evmargs_apply(const struct cli_evmargs *e, struct vg_evm_config *evm)
{
	for (size_t i = 0; i < e->nxattrs; i++)
		if (cli_evm_add(evm, e->xattrs[i]) < 0)
			return -1;
	return 0;
}

bool cli_evmargs_uuid(const struct cli_evmargs *e, struct vg_config *cfg,
		      enum vg_uuid_mode *mode, uint8_t uuid[16])
{
	if (e->u.omit || cfg->uuid == VG_CONFIG_UUID_NONE)
		cfg->evm.fsuuid = false;
	if (e->u.mode != VG_UUID_GIVEN && cfg->uuid != VG_CONFIG_UUID_GIVEN)
		return true;
	*mode = VG_UUID_GIVEN;
	memcpy(uuid, e->u.mode == VG_UUID_GIVEN ? e->u.uuid : cfg->uuid_value, 16);
	return false;
}

int cli_opts_out(struct cli_outargs *o, int id, const char *arg)
{
	switch (id) {
	case CLI_O_JSON:
		o->json = true;
		return 1;
	case CLI_O_VERBOSE:
		o->verbose = true;
		return 1;
	case CLI_O_OUTPUT:
		o->output = arg;
		return 1;
	}
	return 0;
}
