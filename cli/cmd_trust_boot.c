// SPDX-License-Identifier: MIT
/*
 * cmd_trust_boot.c - `vigil trust boot show DB` (the boot references a
 * trust database records: every shim, GRUB and kernel of the archive with
 * its Authenticode and file digests and its state, trust_boot.h) and
 * `vigil trust boot hash FILE...` (the Authenticode digest of a PE image,
 * what firmware and shim measure into PCR 4: authenticode.h; pesign -h
 * prints the same). It judges nothing: `vigil attest policy create
 * --trusted DB --boot` and the verifier use the references.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_trust.h"
#include "opts.h"
#include "verb.h"
#include "vigil/authenticode.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"

static const char help[] =
	"usage: vigil trust boot show DB [--hmac-key KEYFILE] [--json]\n"
	"       vigil trust boot hash [--algo ALGO] [--json] FILE...\n"
	"\n"
	"show   the boot references of a trust database: each EFI image and kernel\n"
	"       of its packages (shim, GRUB, kernel, EFI application) with package,\n"
	"       version, state (current, superseded SINCE, expired SINCE), its\n"
	"       Authenticode SHA-256 (PCR 4) and its file SHA-256 (GRUB's PCR 9)\n"
	"hash   the Authenticode digest of each PE image FILE (what firmware and\n"
	"       shim measure; pesign -h prints the same), 'ALGO:HEX  FILE'\n"
	"  -H, --hmac-key KEYFILE  the database's key (else vigil.conf's key.hmac)\n"
	"  -a, --algo ALGO         digest algorithm (default sha256)\n"
	"  -j, --json              show: one JSON object per reference; hash: one\n"
	"                          per FILE {file, algo, digest} or {file, error}\n"
	"Exit status: 0 done, 2 an error (a FILE that is no PE image, a database\n"
	"that does not open).\n";

static const char *state_name(enum vg_boot_state s)
{
	return s == VG_BOOT_CURRENT ? "current" : s == VG_BOOT_SUPERSEDED ? "superseded" : "expired";
}

static int boot_show(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_CONFIG('c'),
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .keys = &k, .out = &o };
	struct vg_hmac_key hk = { 0 };
	struct vg_trust_db *db = NULL;
	struct vg_trust_boot *b = NULL;
	struct vg_diag d = { 0 };
	int c, rc = EXIT_ERROR;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		rc = cli_opts_stop(help, c);
		goto out;
	}
	if (optind != argc - 1) {
		cli_err("boot show needs one DB");
		goto out;
	}
	if (trust_load_key(&k, cf.config, &hk) < 0)
		goto out;
	if (vg_trust_db_open(argv[optind], hk.key, hk.len, &db, &d) < 0 ||
	    vg_trust_boot_load(db, &b, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	for (size_t i = 0; i < vg_trust_boot_count(b); i++) {
		const struct vg_trust_boot_ref *x = vg_trust_boot_at(b, i);
		char ah[65], fh[65];

		vg_hex_encode(x->authenticode, 32, ah);
		vg_hex_encode(x->sha256, 32, fh);
		if (o.json) {
			json_object *j = json_object_new_object();

			json_object_object_add(j, "package", json_object_new_string(x->package));
			json_object_object_add(j, "version", json_object_new_string(x->version));
			json_object_object_add(j, "arch", json_object_new_string(x->arch));
			json_object_object_add(j, "path", cli_json_path(x->path));
			json_object_object_add(j, "role", json_object_new_string(
							     vg_trust_boot_role_name(x->role)));
			json_object_object_add(j, "series", json_object_new_string(x->series));
			json_object_object_add(j, "state", json_object_new_string(
							      state_name(x->state)));
			json_object_object_add(j, "since", json_object_new_int64(x->since));
			json_object_object_add(j, "authenticode", json_object_new_string(ah));
			json_object_object_add(j, "sha256", json_object_new_string(fh));
			puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
			json_object_put(j);
			continue;
		}
		printf("%s %s %s %s %s", vg_trust_boot_role_name(x->role), x->package, x->version,
		       x->arch, state_name(x->state));
		if (x->state != VG_BOOT_CURRENT)
			printf(" since %lld", (long long)x->since);
		printf(" authenticode:sha256:%s file:sha256:%s ", ah, fh);
		cli_put_path(stdout, x->path);
		putchar('\n');
	}
	rc = EXIT_OK;
out:
	vg_trust_boot_free(b);
	vg_trust_db_free(db);
	vg_hmac_key_wipe(&hk);
	return rc;
}

static int boot_hash(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_ALGO('a'),
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .out = &o };
	int c, rc = EXIT_ERROR;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1)
		return cli_opts_stop(help, c);
	if (optind >= argc) {
		cli_err("boot hash needs a FILE");
		return EXIT_ERROR;
	}
	rc = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		struct vg_digest dg;
		struct vg_diag d = { 0 };
		uint8_t *img = NULL;
		size_t len = 0;
		char hex[2 * VG_HASH_MAX_DIGEST + 1];
		int r = cli_read_file(argv[i], CLI_DOC_MAX, &img, &len);

		if (r < 0) {
			cli_read_err(argv[i], r, CLI_DOC_MAX);
			rc = EXIT_ERROR;
			continue;
		}
		r = vg_authenticode_digest(img, len, cf.algo >= 0 ? (unsigned int)cf.algo :
						    VG_HASH_SHA256, &dg, &d);
		free(img);
		if (r < 0) {
			if (o.json) {
				json_object *j = json_object_new_object();

				json_object_object_add(j, "file", cli_json_path(argv[i]));
				json_object_object_add(j, "error", json_object_new_string(d.msg));
				puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
				json_object_put(j);
			}
			cli_file_err(argv[i], "%s", d.msg);
			rc = EXIT_ERROR;
			continue;
		}
		if (o.json) {
			json_object *j = json_object_new_object();

			json_object_object_add(j, "file", cli_json_path(argv[i]));
			cli_json_add_digest(j, &dg);
			puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
			json_object_put(j);
			continue;
		}
		vg_hex_encode(dg.bytes, dg.len, hex);
		printf("%s:%s  ", vg_hash_name(dg.algo), hex);
		cli_put_path(stdout, argv[i]);
		putchar('\n');
	}
	return rc;
}

static const struct cli_verb verbs[] = {
	{ "show", boot_show },
	{ "hash", boot_hash },
};

int cmd_trust_boot(int argc, char **argv)
{
	int rc = cli_verb_main(verbs, CLI_NVERBS(verbs), help, argc, argv);

	if (rc < 0) {
		cli_err("'%s' is not a trust boot command (show, hash)", argv[1]);
		rc = EXIT_ERROR;
	}
	return rc;
}
