// SPDX-License-Identifier: MIT
/*
 * cmd_trust.c - `vigil trust build|verify`: a database of the digests of
 * every file of the installed Debian packages, each taken from a chain
 * that starts at the archive's OpenPGP signature (vigil/trust.h), and
 * the check of a system against it. The verbs are in cmd_trust_build.c
 * and cmd_trust_verify.c; here the dispatch and the key.
 */
#include <stdio.h>

#include "cli.h"
#include "cmd_trust.h"
#include "verb.h"
#include "vigil/config.h"

static const char help[] =
	"usage: vigil trust build -o DB [OPTIONS] [PACKAGE...]\n"
	"       vigil trust verify DB [--root DIR] [--unpackaged] [--json]\n"
	"       vigil trust boot show DB | boot hash FILE...\n"
	"\n"
	"A trust database from the Debian archive: for each package, the chain\n"
	"InRelease (OpenPGP, gpgv and the archive keyring) -> Packages -> .deb ->\n"
	"each file is verified, and the files' digests are recorded in an HMAC'ed\n"
	"SQLite database; verify compares the installed files with it.\n"
	"\n"
	"build    record the installed packages (or PACKAGE..., or every .deb of\n"
	"         --debs with --all-debs)\n"
	"verify   report modified, missing and (--unpackaged) unpackaged files;\n"
	"         changed conffiles separately\n"
	"boot     the boot references (shim, GRUB, kernels: Authenticode and file\n"
	"         digests, state) of a database; the Authenticode digest of a PE image\n"
	"\n"
	"'vigil trust VERB --help' describes a verb.\n";

int trust_load_key(struct cli_keyargs *k, const char *config, struct vg_hmac_key *hk)
{
	struct vg_config cfg;
	int r = -1;

	vg_config_init(&cfg);
	if (cli_load_config(config, &cfg) < 0)
		goto out;
	if (!k->hmac_key)
		k->hmac_key = cfg.hmac_key;
	if (!k->hmac_key) {
		cli_err("trust databases are authenticated: give --hmac-key KEYFILE or set key.hmac");
		goto out;
	}
	r = cli_keyargs_load_hmac(k, &cfg, hk);
	if (k->hmac_key == cfg.hmac_key)
		k->hmac_key = NULL;	/* released with the configuration */
out:
	vg_config_release(&cfg);
	return r;
}

static const struct cli_verb verbs[] = {
	{ "build", cmd_trust_build },
	{ "verify", cmd_trust_verify },
	{ "boot", cmd_trust_boot },
};

int cmd_trust(int argc, char **argv)
{
	int rc = cli_verb_main(verbs, CLI_NVERBS(verbs), help, argc, argv);

	if (rc < 0) {
		cli_err("'%s' is not a trust command (build, verify, boot)", argv[1]);
		rc = EXIT_ERROR;
	}
	return rc;
}
