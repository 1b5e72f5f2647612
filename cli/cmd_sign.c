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
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "algo", required_argument, NULL, 'a' },
		{ "keyid", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *key = NULL, *keyid = NULL;
	struct vg_signer *signer = NULL;
	struct vg_hasher *h = NULL;
	int algo = VG_HASH_SHA256, c, rc = EXIT_OK;

	optind = 0;
	while ((c = getopt_long(argc, argv, "k:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			key = optarg;
			break;
		case 'a':
			algo = cli_parse_algo(optarg);
			if (algo < 0)
				return EXIT_ERROR;
			break;
		case 'I':
			keyid = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return EXIT_OK;
		default:
			fputs(help, stderr);
			return EXIT_ERROR;
		}
	}
	if (!key) {
		cli_err("--key KEY.pem is required");
		return EXIT_ERROR;
	}
	if (optind >= argc) {
		cli_err("no FILE given");
		return EXIT_ERROR;
	}
	if (cli_load_signer(key, keyid, &signer) < 0)
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
		if (vg_label_ima_fd(h, fd, (unsigned int)algo, signer, NULL, &d) < 0) {
			cli_file_err(argv[i], "%s", d.msg);
			rc = EXIT_ERROR;
		}
		close(fd);
	}
	vg_hasher_free(h);
	vg_signer_free(signer);
	return rc;
}
