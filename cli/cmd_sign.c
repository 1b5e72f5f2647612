// SPDX-License-Identifier: MIT
/*
 * cmd_sign.c - `vigil sign --key KEY.pem [--algo A] [--keyid HEX] FILE...`
 *
 * Stores a signature v2 (type 03) over the file digest in security.ima,
 * as evmctl ima_sign does.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

static const char help[] =
	"usage: vigil sign --key KEY.pem [--algo ALGO] [--keyid HEX] FILE...\n"
	"\n"
	"Sign each FILE's content and store the signature v2 in security.ima.\n"
	"  -k, --key KEY.pem   RSA or EC private key (PEM, unencrypted); when the\n"
	"                      file also holds its certificate, the keyid is the\n"
	"                      certificate's SKID, as the kernel looks keys up\n"
	"  -a, --algo ALGO     hash algorithm (default sha256)\n"
	"      --keyid HEX     set the 4-byte keyid explicitly\n"
	"Exit status: 0 all signed, 2 any error.\n";

int cmd_sign(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_KEY('k'),
		CLI_OPT_ALGO('a'),
		CLI_OPT_KEYID,
		CLI_OPT_HELP,
	};
	struct vg_signer *signer = NULL;
	struct vg_hasher *h = NULL;
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = VG_HASH_SHA256 };
	struct cli_keyargs k = { 0 };
	int c, rc = EXIT_OK;
	const struct cli_groups gr = { .cfg = &cf, .keys = &k };

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	/* every option is a group's: what comes back ends the command */
	c = cli_getopt_next(&g, argc, argv);
	if (c != -1)
		return cli_opts_stop(help, c);
	if (!k.key) {
		cli_err("--key KEY.pem is required");
		return EXIT_ERROR;
	}
	if (optind >= argc) {
		cli_err("no FILE given");
		return EXIT_ERROR;
	}
	if (cli_load_signer(k.key, k.keyid, &signer) < 0)
		return EXIT_ERROR;
	if (vg_hasher_new(&h) < 0) {
		vg_signer_free(signer);
		cli_err("out of memory");
		return EXIT_ERROR;
	}
	for (int i = optind; i < argc; i++) {
		struct vg_diag d = { 0 };
		int fd = cli_open_regular(argv[i]);

		if (fd < 0) {
			rc = EXIT_ERROR;
			continue;
		}
		if (vg_label_ima_fd(h, fd, (unsigned int)cf.algo, signer, NULL, &d) < 0) {
			cli_file_err(argv[i], "%s", d.msg);
			rc = EXIT_ERROR;
		}
		close(fd);
	}
	vg_hasher_free(h);
	vg_signer_free(signer);
	return rc;
}
