// SPDX-License-Identifier: MIT
/*
 * cmd_evm.c - `vigil evm (--key KEY.pem [--portable] | --hmac-key KEYFILE)
 *                       [--uuid UUID | --no-uuid] FILE...`
 *
 * Computes security.evm over the file's current protected xattrs and
 * inode metadata and stores it: 02 HMAC-SHA1, 03 inode-bound signature,
 * or 05 portable signature.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "vigil/xattr_ima.h"

static const char help[] =
	"usage: vigil evm (--key KEY.pem [--portable] | --hmac-key KEYFILE)\n"
	"                 [--algo ALGO] [--uuid UUID | --no-uuid] [--evm-xattr NAME]... FILE...\n"
	"\n"
	"Store security.evm over each FILE's protected xattrs, inode, generation,\n"
	"uid, gid and mode, computed as the kernel's evm_calc_hmac_or_hash().\n"
	"  -k, --key KEY.pem      sign (type 03, bound to inode and filesystem)\n"
	"  -p, --portable         with --key: portable signature (type 05, no inode,\n"
	"                         generation or UUID)\n"
	"  -H, --hmac-key FILE    HMAC-SHA1 with this key (type 02): a raw, passphrase or\n"
	"                         TPM-sealed key file (vigil key)\n"
	"      --passphrase-file F  passphrase of a passphrase key file (else the terminal)\n"
	"      --tcti STRING      TPM of a sealed key file (default $VIGIL_TCTI)\n"
	"  -a, --algo ALGO        signature hash algorithm (default sha256)\n"
	"      --keyid HEX        override the signing keyid\n"
	"      --uuid UUID        filesystem UUID to bind (default: the filesystem's own,\n"
	"                         via FS_IOC_GETFSUUID or the superblock)\n"
	"      --no-uuid          leave the UUID out (kernel without EVM_ATTR_FSUUID,\n"
	"                         evmctl 1.4's hmac)\n"
	"      --inode N          bind inode number N instead of the file's own\n"
	"      --generation N     bind generation N instead of the file's own\n"
	"  -x, --evm-xattr NAME   protect NAME too (after the kernel's default list)\n"
	"Exit status: 0 all labeled, 2 any error.\n";

int cmd_evm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "portable", no_argument, NULL, 'p' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "algo", required_argument, NULL, 'a' },
		{ "keyid", required_argument, NULL, 'I' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "no-uuid", no_argument, NULL, 'N' },
		{ "inode", required_argument, NULL, 'i' },
		{ "generation", required_argument, NULL, 'G' },
		{ "evm-xattr", required_argument, NULL, 'x' },
		{ "passphrase-file", required_argument, NULL, 'P' },
		{ "tcti", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *key = NULL, *hkey = NULL, *keyid = NULL;
	struct vg_evm_config cfg;
	struct vg_evm_label_opts o = { .algo = VG_HASH_SHA256 };
	struct vg_hmac_key hk = { 0 };
	struct vg_signer *signer = NULL;
	struct cli_uuid u = { 0 };
	struct cli_keyopts ko = { 0 };
	bool portable = false;
	int c, rc = EXIT_OK;

	vg_evm_config_default(&cfg);
	optind = 0;
	while ((c = getopt_long(argc, argv, "k:pH:a:x:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			key = optarg;
			break;
		case 'p':
			portable = true;
			break;
		case 'H':
			hkey = optarg;
			break;
		case 'a': {
			int a = cli_parse_algo(optarg);

			if (a < 0)
				return EXIT_ERROR;
			o.algo = (unsigned int)a;
			break;
		}
		case 'I':
			keyid = optarg;
			break;
		case 'U':
			if (cli_parse_uuid(&u, optarg) < 0)
				return EXIT_ERROR;
			break;
		case 'N':
			u.omit = true;
			break;
		case 'i':
		case 'G':
			if (cli_parse_meta(&o.meta, c, optarg) < 0)
				return EXIT_ERROR;
			break;
		case 'x':
			if (cli_evm_add(&cfg, optarg) < 0)
				return EXIT_ERROR;
			break;
		case 'P':
			ko.passphrase_file = optarg;
			break;
		case 'T':
			ko.tcti = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return EXIT_OK;
		default:
			fputs(help, stderr);
			return EXIT_ERROR;
		}
	}
	if (!key == !hkey) {
		cli_err("give exactly one of --key KEY.pem or --hmac-key KEYFILE");
		return EXIT_ERROR;
	}
	if (portable && !key) {
		cli_err("--portable needs --key");
		return EXIT_ERROR;
	}
	if (u.omit && u.mode == VG_UUID_GIVEN) {
		cli_err("--uuid and --no-uuid exclude each other");
		return EXIT_ERROR;
	}
	if (optind >= argc) {
		cli_err("no FILE given");
		return EXIT_ERROR;
	}
	if (u.omit)
		cfg.fsuuid = false;
	if (key) {
		if (cli_load_signer(key, keyid, &signer) < 0)
			return EXIT_ERROR;
		o.type = portable ? VG_EVM_XATTR_PORTABLE_DIGSIG : VG_EVM_IMA_XATTR_DIGSIG;
		o.signer = signer;
	} else {
		if (cli_load_hmac_key_opts(hkey, &ko, &hk) < 0)
			return EXIT_ERROR;
		o.type = VG_EVM_XATTR_HMAC;
		o.hmac_key = hk.key;
		o.hmac_key_len = hk.len;
	}
	o.evm = &cfg;
	o.uuid_mode = u.mode;
	memcpy(o.uuid, u.uuid, 16);

	for (int i = optind; i < argc; i++) {
		struct vg_diag d = { 0 };
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC), r;

		if (fd < 0) {
			cli_file_err(argv[i], "%s", strerror(errno));
			rc = EXIT_ERROR;
			continue;
		}
		r = vg_label_evm_fd(fd, &o, &d);
		if (r < 0) {
			cli_file_err(argv[i], "%s", d.msg);
			rc = EXIT_ERROR;
		}
		close(fd);
	}
	vg_signer_free(signer);
	vg_hmac_key_wipe(&hk);
	return rc;
}
