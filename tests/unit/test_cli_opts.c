// SPDX-License-Identifier: MIT
/*
 * test_cli_opts.c - the CLI's option groups (cli/opts.c) and verb tables
 * (cli/verb.c): a command's table turned into getopt_long()'s (short
 * letters, long names, abbreviations, long-only options whose id looks
 * like a letter), each group's parser and its refusals, and verb lookup.
 * The flags' exact text and messages are asserted by the CLI scripts
 * (t0090-cli-usage.sh); this checks the machinery under them.
 */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "opts.h"
#include "tree.h"
#include "verb.h"

#define ARGV(...) ((char *[]){ (char *)"cmd", __VA_ARGS__, NULL })
#define ARGC(v) ((int)(sizeof(v) / sizeof(char *)) - 1)

static const struct cli_opt table[] = {
	CLI_OPT_RECURSIVE('r'),
	CLI_OPT_JOBS('J'),
	CLI_OPT_QUIET('q'),
	{ "require-evm", no_argument, 0, 'E' },
	{ "init", no_argument, 'i', 'i' },
	{ "tpm", optional_argument, 0, 'T' },
	CLI_OPT_HELP,
};

static int next(struct cli_getopt *g, int argc, char **argv)
{
	return cli_getopt_next(g, argc, argv);
}

static void getopt_maps_short_and_long_to_ids(void **state)
{
	char **argv = ARGV("-J", "3", "--quiet", "-i", "--recursive", "-h", "FILE");
	int argc = 8;
	struct cli_getopt g;

	(void)state;
	assert_int_equal(cli_getopt_init(&g, table, sizeof(table) / sizeof(table[0]), NULL), 0);
	assert_string_equal(g.shortopts, "rJ:qih");
	assert_int_equal(next(&g, argc, argv), CLI_O_JOBS);
	assert_string_equal(optarg, "3");
	assert_int_equal(next(&g, argc, argv), CLI_O_QUIET);
	assert_int_equal(next(&g, argc, argv), 'i');
	assert_int_equal(next(&g, argc, argv), CLI_O_RECURSIVE);
	assert_int_equal(next(&g, argc, argv), CLI_O_HELP);
	assert_int_equal(next(&g, argc, argv), -1);
	assert_string_equal(argv[optind], "FILE");
}

static void getopt_long_only_option_has_no_letter(void **state)
{
	char **a1 = ARGV("--require-evm");
	char **a2 = ARGV("-E");
	struct cli_getopt g;

	(void)state;
	cli_getopt_init(&g, table, sizeof(table) / sizeof(table[0]), NULL);
	assert_int_equal(next(&g, 2, a1), 'E');
	cli_getopt_init(&g, table, sizeof(table) / sizeof(table[0]), NULL);
	opterr = 0;
	assert_int_equal(next(&g, 2, a2), '?');
	opterr = 1;
}

static void getopt_takes_abbreviations_and_optional_arguments(void **state)
{
	char **argv = ARGV("--qu", "--tpm=dev", "--tpm", "--rec");
	struct cli_getopt g;

	(void)state;
	cli_getopt_init(&g, table, sizeof(table) / sizeof(table[0]), NULL);
	assert_int_equal(next(&g, 5, argv), CLI_O_QUIET);
	assert_int_equal(next(&g, 5, argv), 'T');
	assert_string_equal(optarg, "dev");
	assert_int_equal(next(&g, 5, argv), 'T');
	assert_null(optarg);
	assert_int_equal(next(&g, 5, argv), CLI_O_RECURSIVE);
}

static void getopt_init_refuses_too_many(void **state)
{
	static struct cli_opt many[CLI_OPTS_MAX + 1];
	struct cli_getopt g;

	(void)state;
	assert_int_equal(cli_getopt_init(&g, many, CLI_OPTS_MAX + 1, NULL), -E2BIG);
}

static void getopt_groups_parse_their_options(void **state)
{
	char **argv = ARGV("-J", "2", "--init", "-q", "-J", "0", "-r");
	struct tree_opts to = { 0 };
	const struct cli_groups gr = { .tree = &to };
	struct cli_getopt g;

	(void)state;
	cli_getopt_init(&g, table, sizeof(table) / sizeof(table[0]), &gr);
	/* the group's options are parsed on the way; the command sees its own */
	assert_int_equal(next(&g, 8, argv), 'i');
	assert_int_equal(to.workers, 2);
	assert_int_equal(next(&g, 8, argv), CLI_O_BAD);
	assert_true(to.quiet);
	assert_int_equal(next(&g, 8, argv), -1);
	assert_true(to.recursive);
}

static void opts_tree_parses_and_refuses_jobs(void **state)
{
	struct tree_opts to = { 0 };

	(void)state;
	assert_int_equal(cli_opts_tree(&to, CLI_O_JOBS, "4"), 1);
	assert_int_equal(to.workers, 4);
	assert_int_equal(cli_opts_tree(&to, CLI_O_JOBS, "0"), -1);
	assert_int_equal(cli_opts_tree(&to, CLI_O_CROSS_MOUNTS, NULL), 1);
	assert_true(to.cross_mounts);
	assert_int_equal(cli_opts_tree(&to, CLI_O_HMAC_KEY, "k"), 0);
}

static void opts_keys_hmac_key_once(void **state)
{
	struct cli_keyargs k = { 0 };

	(void)state;
	assert_int_equal(cli_opts_keys(&k, CLI_O_HMAC_KEY, "a"), 1);
	assert_int_equal(cli_opts_keys(&k, CLI_O_HMAC_KEY, "b"), 1);
	assert_string_equal(k.hmac_key, "b");
	k.hmac_key_once = true;
	assert_int_equal(cli_opts_keys(&k, CLI_O_HMAC_KEY, "c"), -1);
	assert_int_equal(cli_opts_keys(&k, CLI_O_TCTI, "swtpm"), 1);
	assert_string_equal(k.ko.tcti, "swtpm");
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(cli_opts_keys(&k, CLI_O_KEYRING, "r.pem"), 1);
	assert_int_equal(cli_opts_keys(&k, CLI_O_KEYRING, "r.pem"), -1);
}

static void opts_cfg_refuses_unknown_algo(void **state)
{
	struct cli_cfgargs c = { .algo = -1 };

	(void)state;
	assert_int_equal(cli_opts_cfg(&c, CLI_O_ALGO, "sha256"), 1);
	assert_int_equal(c.algo, VG_HASH_SHA256);
	assert_int_equal(cli_opts_cfg(&c, CLI_O_ALGO, "nope"), -1);
	assert_int_equal(cli_opts_cfg(&c, CLI_O_CONFIG, "/x"), 1);
	assert_string_equal(c.config, "/x");
}

static void opts_evm_uuid_meta_and_xattrs(void **state)
{
	struct cli_evmargs e = { 0 };
	struct vg_config cfg;
	enum vg_uuid_mode mode = VG_UUID_FROM_FS;
	uint8_t uuid[16] = { 0 };

	(void)state;
	assert_int_equal(cli_opts_evm(&e, CLI_O_UUID, "not-a-uuid"), -1);
	assert_int_equal(cli_opts_evm(&e, CLI_O_UUID, "01234567-89ab-cdef-0123-456789abcdef"), 1);
	assert_int_equal(cli_evmargs_check(&e), 0);
	assert_int_equal(cli_opts_evm(&e, CLI_O_NO_UUID, NULL), 1);
	assert_int_equal(cli_evmargs_check(&e), -1);
	e.u.omit = false;
	assert_int_equal(cli_opts_evm(&e, CLI_O_GENERATION, "7"), 1);
	assert_true(e.meta.gen_set && e.meta.gen == 7);
	assert_int_equal(cli_opts_evm(&e, CLI_O_INODE, "-1"), -1);
	assert_int_equal(cli_opts_evm(&e, CLI_O_EVM_XATTR, "security.foo"), 1);
	assert_int_equal(e.nxattrs, 1);

	vg_config_init(&cfg);
	assert_int_equal(cli_evmargs_apply(&e, &cfg.evm), 0);
	assert_false(cli_evmargs_uuid(&e, &cfg, &mode, uuid));
	assert_int_equal(mode, VG_UUID_GIVEN);
	assert_int_equal(uuid[0], 0x01);
	assert_int_equal(uuid[15], 0xef);
	e.u.mode = VG_UUID_FROM_FS;
	assert_true(cli_evmargs_uuid(&e, &cfg, &mode, uuid));
	vg_config_release(&cfg);
}

static void opts_evm_direct_refuses_bad_name(void **state)
{
	struct vg_evm_config evm;
	struct cli_evmargs e = { .direct = &evm };

	(void)state;
	vg_evm_config_default(&evm);
	assert_int_equal(cli_opts_evm(&e, CLI_O_EVM_XATTR, "security.bar"), 1);
	assert_int_equal(e.nxattrs, 0);
	assert_int_equal(cli_opts_evm(&e, CLI_O_EVM_XATTR, "user.bar"), -1);
}

static int run_a(int argc, char **argv)
{
	(void)argv;
	return 40 + argc;
}

static const struct cli_verb verbs[] = { { "a", run_a }, { "b", run_a } };

static void verb_main_dispatches_and_leaves_unknown(void **state)
{
	(void)state;
	assert_non_null(cli_verb_find(verbs, CLI_NVERBS(verbs), "b"));
	assert_null(cli_verb_find(verbs, CLI_NVERBS(verbs), "c"));
	assert_int_equal(cli_verb_main(verbs, CLI_NVERBS(verbs), "", 3, ARGV("a", "x")), 42);
	assert_int_equal(cli_verb_main(verbs, CLI_NVERBS(verbs), "", 2, ARGV("c")), -1);
	assert_int_equal(cli_verb_main(verbs, CLI_NVERBS(verbs), "", 1, ARGV(NULL)), EXIT_ERROR);
	assert_int_equal(cli_verb_main(verbs, CLI_NVERBS(verbs), "", 2, ARGV("-h")), EXIT_OK);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(getopt_maps_short_and_long_to_ids),
		cmocka_unit_test(getopt_long_only_option_has_no_letter),
		cmocka_unit_test(getopt_takes_abbreviations_and_optional_arguments),
		cmocka_unit_test(getopt_init_refuses_too_many),
		cmocka_unit_test(getopt_groups_parse_their_options),
		cmocka_unit_test(opts_tree_parses_and_refuses_jobs),
		cmocka_unit_test(opts_keys_hmac_key_once),
		cmocka_unit_test(opts_cfg_refuses_unknown_algo),
		cmocka_unit_test(opts_evm_uuid_meta_and_xattrs),
		cmocka_unit_test(opts_evm_direct_refuses_bad_name),
		cmocka_unit_test(verb_main_dispatches_and_leaves_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
