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
#include "opts.h"
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
	CLI_HELP_KEYOPTS
	"  -a, --algo ALGO        signature hash algorithm (default sha256)\n"
	"      --keyid HEX        override the signing keyid\n"
	"      --uuid UUID        filesystem UUID to bind (default: the filesystem's own,\n"
	"                         via FS_IOC_GETFSUUID or the superblock)\n"
	"      --no-uuid          leave the UUID out (kernel without EVM_ATTR_FSUUID,\n"
	"                         evmctl 1.4's hmac)\n"
	"      --inode N          bind inode number N instead of the file's own\n"
	"      --generation N     bind generation N instead of the file's own\n"
	CLI_HELP_EVM_XATTR
	"Exit status: 0 all labeled, 2 any error.\n";

int cmd_evm(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_KEY('k'),
		CLI_OPT_PORTABLE('p'),
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_ALGO('a'),
		CLI_OPT_KEYID,
		CLI_OPT_UUID,
		CLI_OPT_NO_UUID,
		CLI_OPT_INODE,
		CLI_OPT_GENERATION,
		CLI_OPT_EVM_XATTR('x'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_HELP,
	};
	struct vg_evm_config cfg;
	struct vg_evm_label_opts o = { 0 };
	struct vg_hmac_key hk = { 0 };
	struct vg_signer *signer = NULL;
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = VG_HASH_SHA256 };
	struct cli_keyargs k = { 0 };
	struct cli_evmargs e = { .direct = &cfg };
	int c, rc = EXIT_OK;
	const struct cli_groups gr = { .cfg = &cf, .keys = &k, .evm = &e };

	vg_evm_config_default(&cfg);
	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	/* every option is a group's: what comes back ends the command */
	c = cli_getopt_next(&g, argc, argv);
	if (c != -1)
		return cli_opts_stop(help, c);
	if (!k.key == !k.hmac_key) {
		cli_err("give exactly one of --key KEY.pem or --hmac-key KEYFILE");
		return EXIT_ERROR;
	}
	if (k.portable && !k.key) {
		cli_err("--portable needs --key");
		return EXIT_ERROR;
	}
	if (cli_evmargs_check(&e) < 0)
		return EXIT_ERROR;
	if (optind >= argc) {
		cli_err("no FILE given");
		return EXIT_ERROR;
	}
	if (e.u.omit)
		cfg.fsuuid = false;
	o.algo = (unsigned int)cf.algo;
	o.meta = e.meta;
	if (k.key) {
		if (cli_load_signer(k.key, k.keyid, &signer) < 0)
			return EXIT_ERROR;
		o.type = k.portable ? VG_EVM_XATTR_PORTABLE_DIGSIG : VG_EVM_IMA_XATTR_DIGSIG;
		o.signer = signer;
	} else {
		if (cli_keyargs_load_hmac(&k, NULL, &hk) < 0)
			return EXIT_ERROR;
		o.type = VG_EVM_XATTR_HMAC;
		o.hmac_key = hk.key;
		o.hmac_key_len = hk.len;
	}
	o.evm = &cfg;
	o.uuid_mode = e.u.mode;
	memcpy(o.uuid, e.u.uuid, 16);

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
