// SPDX-License-Identifier: MIT
/*
 * cmd_label.c - `vigil label [-r] [--config FILE] PATH...`
 *
 * Writes security.ima (a digest, or a signature with --key) and then
 * security.evm (an HMAC with the configured key, or a signature) on every
 * regular file the configuration selects, on all CPUs. A file whose
 * security.ima was written but whose security.evm was not is reported as
 * such; labeling it again fixes it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tree.h"
#include "vigil/xattr_ima.h"

static const char help[] =
	"usage: vigil label [-r] [--config FILE] [--algo ALGO] [--key KEY.pem]\n"
	"                   [--hmac-key KEYFILE | --evm-key KEY.pem [--portable] | --no-evm]\n"
	"                   [--uuid UUID | --no-uuid] [--evm-xattr NAME]... PATH...\n"
	"\n"
	"Label files: security.ima (hash, or signature v2 with --key), then\n"
	"security.evm (HMAC-SHA1, or an EVM signature), for every regular file the\n"
	"configuration selects. Symlinks are not followed; hard links are labeled once.\n"
	"  -r, --recursive        walk directories (without crossing mount points)\n"
	"      --cross-mounts     also walk into other filesystems\n"
	"  -c, --config FILE      configuration (default " VG_CONFIG_DEFAULT ", if present)\n"
	"  -a, --algo ALGO        content hash (default from the config, else sha256)\n"
	"  -k, --key KEY.pem      sign content: security.ima holds a signature v2\n"
	"      --keyid HEX        keyid to put in signatures (default from the key)\n"
	"  -H, --hmac-key FILE    EVM HMAC key (security.evm type 02): raw, passphrase or\n"
	"                         TPM-sealed key file\n"
	"      --passphrase-file F  passphrase of a passphrase key file (else the terminal)\n"
	"      --tcti STRING      TPM of a sealed key file (default $VIGIL_TCTI)\n"
	"  -e, --evm-key KEY.pem  EVM signature (type 03; 05 with --portable)\n"
	"  -p, --portable         portable EVM signature (no inode, generation, UUID)\n"
	"      --no-evm           write security.ima only\n"
	"      --uuid UUID        filesystem UUID bound in HMACs and 03 signatures\n"
	"      --no-uuid          HMACs and 03 signatures carry no UUID\n"
	"  -x, --evm-xattr NAME   protect NAME too (after the kernel's default list)\n"
	"  -j, --jobs N           worker threads (default: one per CPU)\n"
	"  -q, --quiet            no progress line and no summary\n"
	"  -v, --verbose          print every labeled file\n"
	"Exit status: 0 every selected file labeled, 1 some could not be, 2 usage or\n"
	"operational error.\n";

struct worker {
	struct tree_devcache dc;
};

struct label {
	unsigned int algo;
	const struct vg_signer *ima_signer;
	bool evm;
	struct vg_evm_label_opts eo;	/* shared; uuid filled per worker copy */
	bool uuid_auto;
	bool verbose;
	struct worker w[VG_WALK_MAX_WORKERS];
};

static const char *write_reason(int err)
{
	switch (err) {
	case -EOPNOTSUPP:
		return "no-xattr-support";
	case -EROFS:
		return "read-only-fs";
	case -EPERM:
	case -EACCES:
		return "not-permitted";
	case -ENOSPC:
	case -EDQUOT:
		return "no-space";
	case -EDESTADDRREQ:
		return "no-fs-uuid";
	case -ESTALE:
		return "changed";
	default:
		return "error";
	}
}

static int label_file(struct tree *t, void *arg, const struct tree_file *f)
{
	struct label *l = arg;
	struct worker *w = &l->w[f->worker];
	struct vg_diag d = { 0 }, ud = { 0 };
	struct vg_evm_label_opts eo, *evm = NULL;
	struct vg_label_result res;
	int r, ur = 0;

	if (l->evm) {
		eo = l->eo;
		evm = &eo;
		if (l->uuid_auto && eo.evm->fsuuid && eo.type != VG_EVM_XATTR_PORTABLE_DIGSIG) {
			ur = tree_fs_uuid(&w->dc, f->fd, f->st->st_dev, eo.uuid, &ud);
			if (ur == -ENOMEM)
				return ur;
			if (ur < 0)
				evm = NULL;	/* security.ima alone; then say why not EVM */
			eo.uuid_mode = VG_UUID_GIVEN;
		}
	}
	r = vg_label_file(f->hasher, f->fd, f->st, l->algo, l->ima_signer, evm, &res, &d);
	if (r == -ENOMEM)
		return r;
	if (res.ima_done || r == -ESTALE)
		tree_add_bytes(t, (uint64_t)f->st->st_size);
	if (r == -ESTALE) {
		tree_file_err(t, f->path, "changed while it was labeled; label it again");
		tree_count(t, TREE_FAIL, "changed");
		return 0;
	}
	if (r < 0 && !res.ima_done) {
		tree_file_err(t, f->path, "security.ima not written: %s", d.msg);
		tree_count(t, TREE_FAIL, write_reason(r));
		return 0;
	}
	if (r < 0 || ur < 0) {
		tree_file_err(t, f->path, "security.ima written, security.evm not: %s; label it again",
			      r < 0 ? d.msg : ud.msg);
		tree_count(t, TREE_FAIL, "evm-not-written");
		return 0;
	}
	if (l->verbose) {
		tree_lock(t);
		cli_put_path(stdout, f->path);
		fputs(": labeled\n", stdout);
		tree_unlock(t);
	}
	tree_count(t, TREE_OK, NULL);
	return 0;
}

static const struct tree_ops label_ops = { .file = label_file };

int cmd_label(int argc, char **argv)
{
	enum { OPT_KEYID = 256, OPT_NOEVM, OPT_UUID, OPT_NOUUID, OPT_XDEV };
	static const struct option opts[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "cross-mounts", no_argument, NULL, OPT_XDEV },
		{ "config", required_argument, NULL, 'c' },
		{ "algo", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "keyid", required_argument, NULL, OPT_KEYID },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "evm-key", required_argument, NULL, 'e' },
		{ "portable", no_argument, NULL, 'p' },
		{ "no-evm", no_argument, NULL, OPT_NOEVM },
		{ "uuid", required_argument, NULL, OPT_UUID },
		{ "no-uuid", no_argument, NULL, OPT_NOUUID },
		{ "evm-xattr", required_argument, NULL, 'x' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "passphrase-file", required_argument, NULL, 'P' },
		{ "tcti", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config = NULL, *ima_key = NULL, *keyid = NULL, *hkey = NULL, *evm_key = NULL;
	const char *xattrs[VG_EVM_MAX_XATTRS];
	size_t nxattrs = 0;
	struct label *l = NULL;
	struct vg_config cfg;
	struct vg_signer *ima_signer = NULL, *evm_signer = NULL;
	struct vg_hmac_key hk = { 0 };
	struct cli_keyopts ko = { 0 };
	struct cli_uuid u = { 0 };
	struct tree_opts to = { 0 };
	struct tree_stats st;
	struct tree t;
	bool portable = false, no_evm = false, verbose = false, have_tree = false;
	int algo = -1, c, rc = EXIT_ERROR;

	vg_config_init(&cfg);
	optind = 0;
	while ((c = getopt_long(argc, argv, "rc:a:k:H:e:px:j:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			to.recursive = true;
			break;
		case OPT_XDEV:
			to.cross_mounts = true;
			break;
		case 'c':
			config = optarg;
			break;
		case 'a':
			algo = cli_parse_algo(optarg);
			if (algo < 0)
				goto out;
			break;
		case 'k':
			ima_key = optarg;
			break;
		case OPT_KEYID:
			keyid = optarg;
			break;
		case 'H':
			hkey = optarg;
			break;
		case 'e':
			evm_key = optarg;
			break;
		case 'p':
			portable = true;
			break;
		case OPT_NOEVM:
			no_evm = true;
			break;
		case OPT_UUID:
			if (cli_parse_uuid(&u, optarg) < 0)
				goto out;
			break;
		case OPT_NOUUID:
			u.omit = true;
			break;
		case 'x':
			if (nxattrs == VG_EVM_MAX_XATTRS) {
				cli_err("too many --evm-xattr");
				goto out;
			}
			xattrs[nxattrs++] = optarg;
			break;
		case 'j':
			if (cli_parse_jobs(optarg, &to.workers) < 0)
				goto out;
			break;
		case 'q':
			to.quiet = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'P':
			ko.passphrase_file = optarg;
			break;
		case 'T':
			ko.tcti = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			rc = EXIT_OK;
			goto out;
		default:
			fputs(help, stderr);
			goto out;
		}
	}
	rc = EXIT_ERROR;
	if (optind >= argc) {
		cli_err("no PATH given");
		goto out;
	}
	if (cli_load_config(config, &cfg) < 0)
		goto out;
	for (size_t i = 0; i < nxattrs; i++)
		if (cli_evm_add(&cfg.evm, xattrs[i]) < 0)
			goto out;
	if (u.omit && u.mode == VG_UUID_GIVEN) {
		cli_err("--uuid and --no-uuid exclude each other");
		goto out;
	}
	if (hkey && evm_key) {
		cli_err("--hmac-key and --evm-key exclude each other");
		goto out;
	}
	if (portable && !evm_key && !cfg.evm_key) {
		cli_err("--portable needs --evm-key (or key.evm in the configuration)");
		goto out;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		cli_err("out of memory");
		goto out;
	}
	l->verbose = verbose;
	l->algo = algo >= 0 ? (unsigned int)algo : cfg.algo;
	if (!ima_key)
		ima_key = cfg.ima_key;
	if (ima_key) {
		if (cli_load_signer(ima_key, keyid, &ima_signer) < 0)
			goto out;
		l->ima_signer = ima_signer;
	}
	/* EVM: command line first, then the configuration */
	if (!hkey && !evm_key && !no_evm) {
		if (cfg.evm_type == VG_EVM_XATTR_HMAC || (!cfg.evm_type && cfg.hmac_key))
			hkey = cfg.hmac_key;
		else if (cfg.evm_type || cfg.evm_key)
			evm_key = cfg.evm_key;
		if (cfg.evm_type == VG_EVM_XATTR_PORTABLE_DIGSIG)
			portable = true;
		if (cfg.evm_type && !hkey && !evm_key) {
			cli_err("the configuration sets evm.type but no key for it");
			goto out;
		}
	}
	l->eo.evm = &cfg.evm;
	l->eo.algo = l->algo;
	if (!no_evm && hkey) {
		if (!ko.tcti)
		ko.tcti = cfg.tcti;
	if (cli_load_hmac_key_opts(hkey, &ko, &hk) < 0)
			goto out;
		l->evm = true;
		l->eo.type = VG_EVM_XATTR_HMAC;
		l->eo.hmac_key = hk.key;
		l->eo.hmac_key_len = hk.len;
	} else if (!no_evm && evm_key) {
		if (cli_load_signer(evm_key, NULL, &evm_signer) < 0)
			goto out;
		l->evm = true;
		l->eo.type = portable ? VG_EVM_XATTR_PORTABLE_DIGSIG : VG_EVM_IMA_XATTR_DIGSIG;
		l->eo.signer = evm_signer;
	}
	if (u.omit || cfg.uuid == VG_CONFIG_UUID_NONE)
		cfg.evm.fsuuid = false;
	if (u.mode == VG_UUID_GIVEN || cfg.uuid == VG_CONFIG_UUID_GIVEN) {
		l->eo.uuid_mode = VG_UUID_GIVEN;
		memcpy(l->eo.uuid, u.mode == VG_UUID_GIVEN ? u.uuid : cfg.uuid_value, 16);
	} else {
		l->uuid_auto = true;
	}
	to.config = &cfg;
	have_tree = true;
	if (tree_run(&to, &label_ops, l, argv + optind, argc - optind, &st, &t) < 0)
		goto out;
	rc = st.n[TREE_FAIL] || st.n[TREE_ERROR] ? EXIT_NOTVERIFIED : EXIT_OK;
	if (!to.quiet) {
		double el = t.seconds;

		printf("labeled %llu of %llu files (%.1f MB) in %.2f s; %llu failed, %llu errors, %llu skipped\n",
		       (unsigned long long)st.n[TREE_OK], (unsigned long long)st.files,
		       (double)st.bytes / 1e6, el, (unsigned long long)st.n[TREE_FAIL],
		       (unsigned long long)st.n[TREE_ERROR], (unsigned long long)st.n[TREE_SKIP]);
		tree_print_reasons(&t, stdout, TREE_FAIL);
		tree_print_reasons(&t, stdout, TREE_ERROR);
		tree_print_reasons(&t, stdout, TREE_SKIP);
	}
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
out:
	if (have_tree)
		tree_release(&t);
	free(l);
	vg_signer_free(ima_signer);
	vg_signer_free(evm_signer);
	vg_hmac_key_wipe(&hk);
	vg_config_release(&cfg);
	return rc;
}
