// SPDX-License-Identifier: MIT
/*
 * cmd_label.c - `vigil label [-r] [--config FILE] [--json] PATH...`
 *
 * Writes security.ima (a digest, or a signature with --key) and then
 * security.evm (an HMAC with the configured key, or a signature) on every
 * regular file the configuration selects, on all CPUs. A file whose
 * security.ima was written but whose security.evm was not is reported as
 * such; labeling it again fixes it.
 *
 * With --trusted DB, a file is labeled only where the digest of the
 * content read for its label is one the authenticated trust database
 * records for its path (label_trusted.c); any other is reported with the
 * reason and left as it is, labels and all.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "label_trusted.h"
#include "opts.h"
#include "tree.h"
#include "vigil/xattr_ima.h"

static const char help[] =
	"usage: vigil label [-r] [--config FILE] [--algo ALGO] [--key KEY.pem]\n"
	"                   [--hmac-key KEYFILE | --evm-key KEY.pem [--portable] | --no-evm]\n"
	"                   [--uuid UUID | --no-uuid] [--evm-xattr NAME]...\n"
	"                   [--trusted DB [--trusted-key KEYFILE] [--trusted-root DIR]\n"
	"                    [--trusted-superseded]] PATH...\n"
	"\n"
	"Label files: security.ima (hash, or signature v2 with --key), then\n"
	"security.evm (HMAC-SHA1, or an EVM signature), for every regular file the\n"
	"configuration selects. Symlinks are not followed; hard links are labeled once.\n"
	"  -r, --recursive        walk directories (without crossing mount points)\n"
	CLI_HELP_CROSS_MOUNTS
	CLI_HELP_CONFIG
	"  -a, --algo ALGO        content hash (default from the config, else sha256)\n"
	"  -k, --key KEY.pem      sign content: security.ima holds a signature v2\n"
	"      --keyid HEX        keyid to put in signatures (default from the key)\n"
	"  -H, --hmac-key FILE    EVM HMAC key (security.evm type 02): raw, passphrase or\n"
	"                         TPM-sealed key file\n"
	CLI_HELP_KEYOPTS
	"  -e, --evm-key KEY.pem  EVM signature (type 03; 05 with --portable)\n"
	"  -p, --portable         portable EVM signature (no inode, generation, UUID)\n"
	"      --no-evm           write security.ima only\n"
	CLI_HELP_UUID
	CLI_HELP_EVM_XATTR
	CLI_HELP_JOBS("j")
	"  -q, --quiet            no progress line and no summary\n"
	"  -v, --verbose          print every labeled file\n"
	"      --trusted DB       label only a file whose content digest the trust database\n"
	"                         DB (vigil trust build) records for its path, in a current\n"
	"                         package; report any other (not-in-database, digest-differs,\n"
	"                         superseded-version, outside-root) and leave it untouched\n"
	"      --trusted-key FILE the database's key (default: --hmac-key, else key.hmac)\n"
	"      --trusted-root DIR the tree's root: DIR/usr/bin/x is /usr/bin/x (default /)\n"
	"      --trusted-superseded  also a digest of a superseded version within its grace\n"
	"      --json             the summary as one JSON object (counts, seconds, reasons);\n"
	"                         no progress or per-file lines (failures stay on stderr)\n"
	"Exit status: 0 every selected file labeled, 1 some could not be (or, with\n"
	"--trusted, were refused), 2 usage or operational error (the database not\n"
	"authenticated: nothing labeled).\n";

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
	struct label_trusted *trusted;	/* --trusted; NULL: every file */
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

/* --trusted: why @path was not labeled, on stderr; counted by reason */
static void report_refused(struct tree *t, const char *path, const struct label_trusted_check *c)
{
	char disk[2 * VG_HASH_MAX_DIGEST + 1], rec[2 * VG_HASH_MAX_DIGEST + 1];
	const char *why = label_trusted_reason(c->verdict);

	vg_hex_encode(c->disk.bytes, c->disk.len, disk);
	if (c->verdict == LT_DIFFERS) {
		vg_hex_encode(c->recorded.bytes, c->recorded.len, rec);
		tree_file_err(t, path, "not labeled: %s (%s): disk %s:%s, database %s:%s", why,
			      c->dbpath, vg_hash_name(c->disk.algo), disk,
			      vg_hash_name(c->recorded.algo), rec);
	} else {
		tree_file_err(t, path, "not labeled: %s (%s): disk %s:%s", why, c->dbpath,
			      vg_hash_name(c->disk.algo), disk);
	}
	tree_count(t, TREE_FAIL, why);
}

static int label_file(struct tree *t, void *arg, const struct tree_file *f)
{
	struct label *l = arg;
	struct worker *w = &l->w[f->worker];
	struct vg_diag d = { 0 }, ud = { 0 };
	struct vg_evm_label_opts eo, *evm = NULL;
	struct vg_label_result res;
	struct label_trusted_check tc = { .lt = l->trusted };
	struct vg_label_gate gate = { label_trusted_gate, &tc };
	char pbuf[PATH_MAX + 16];
	int r, ur = 0;

	if (l->trusted) {
		tc.dbpath = label_trusted_dbpath(l->trusted, f->fd, pbuf, sizeof(pbuf));
		if (!tc.dbpath) {
			tree_file_err(t, f->path, "not labeled: outside-root (not under %s)",
				      l->trusted->tr.root);
			tree_count(t, TREE_FAIL, label_trusted_reason(LT_OUTSIDE));
			return 0;
		}
	}

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
	r = vg_label_file_if(f->hasher, f->fd, f->st, l->algo, l->ima_signer, evm,
			     l->trusted ? &gate : NULL, &res, &d);
	if (r == -ENOMEM)
		return r;
	if (r == VG_LABEL_REFUSED) {
		report_refused(t, f->path, &tc);
		return 0;
	}
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

/* --json: the summary (docs/schemas/label.schema.json) */
static void put_summary_json(const struct tree_stats *st, const struct tree *t)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "labeled", json_object_new_int64((int64_t)st->n[TREE_OK]));
	json_object_object_add(j, "files", json_object_new_int64((int64_t)st->files));
	json_object_object_add(j, "failed", json_object_new_int64((int64_t)st->n[TREE_FAIL]));
	json_object_object_add(j, "errors", json_object_new_int64((int64_t)st->n[TREE_ERROR]));
	json_object_object_add(j, "skipped", json_object_new_int64((int64_t)st->n[TREE_SKIP]));
	json_object_object_add(j, "bytes", json_object_new_int64((int64_t)st->bytes));
	json_object_object_add(j, "seconds", json_object_new_double(t->seconds));
	json_object_object_add(j, "failed_by_reason", tree_reasons_json(t, TREE_FAIL));
	json_object_object_add(j, "errors_by_reason", tree_reasons_json(t, TREE_ERROR));
	json_object_object_add(j, "skipped_by_reason", tree_reasons_json(t, TREE_SKIP));
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

int cmd_label(int argc, char **argv)
{
	enum { OPT_NOEVM = 1, OPT_TRUSTED, OPT_TRUSTED_KEY, OPT_TRUSTED_ROOT, OPT_SUPERSEDED };
	static const struct cli_opt opts[] = {
		CLI_OPT_RECURSIVE('r'),
		CLI_OPT_CROSS_MOUNTS,
		CLI_OPT_CONFIG('c'),
		CLI_OPT_ALGO('a'),
		CLI_OPT_KEY('k'),
		CLI_OPT_KEYID,
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_EVM_KEY('e'),
		CLI_OPT_PORTABLE('p'),
		{ "no-evm", no_argument, 0, OPT_NOEVM },
		{ "trusted", required_argument, 0, OPT_TRUSTED },
		{ "trusted-key", required_argument, 0, OPT_TRUSTED_KEY },
		{ "trusted-root", required_argument, 0, OPT_TRUSTED_ROOT },
		{ "trusted-superseded", no_argument, 0, OPT_SUPERSEDED },
		CLI_OPT_UUID,
		CLI_OPT_NO_UUID,
		CLI_OPT_EVM_XATTR('x'),
		CLI_OPT_JOBS('j'),
		CLI_OPT_QUIET('q'),
		CLI_OPT_VERBOSE('v'),
		CLI_OPT_JSON(0),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_HELP,
	};
	struct label *l = NULL;
	struct vg_config cfg;
	struct vg_signer *ima_signer = NULL, *evm_signer = NULL;
	struct vg_hmac_key hk = { 0 }, tk = { 0 };
	struct label_trusted lt;
	const char *trusted = NULL, *trusted_key = NULL, *trusted_root = NULL;
	bool superseded = false, have_lt = false;
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_evmargs e = { 0 };
	struct cli_outargs o = { 0 };
	struct tree_opts to = { 0 };
	struct tree_stats st;
	struct tree t;
	bool no_evm = false, have_tree = false;
	int c, rc = EXIT_ERROR;
	const struct cli_groups gr = { .cfg = &cf, .tree = &to, .keys = &k, .evm = &e, .out = &o };

	vg_config_init(&cfg);
	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_NOEVM:
			no_evm = true;
			break;
		case OPT_TRUSTED:
			trusted = optarg;
			break;
		case OPT_TRUSTED_KEY:
			trusted_key = optarg;
			break;
		case OPT_TRUSTED_ROOT:
			trusted_root = optarg;
			break;
		case OPT_SUPERSEDED:
			superseded = true;
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	rc = EXIT_ERROR;
	if (optind >= argc) {
		cli_err("no PATH given");
		goto out;
	}
	if (cli_load_config(cf.config, &cfg) < 0 || cli_evmargs_apply(&e, &cfg.evm) < 0 ||
	    cli_evmargs_check(&e) < 0)
		goto out;
	if (k.hmac_key && k.evm_key) {
		cli_err("--hmac-key and --evm-key exclude each other");
		goto out;
	}
	if (k.portable && !k.evm_key && !cfg.evm_key) {
		cli_err("--portable needs --evm-key (or key.evm in the configuration)");
		goto out;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		cli_err("out of memory");
		goto out;
	}
	l->verbose = o.verbose && !o.json;
	l->algo = cf.algo >= 0 ? (unsigned int)cf.algo : cfg.algo;
	if (!k.key)
		k.key = cfg.ima_key;
	if (k.key) {
		if (cli_load_signer(k.key, k.keyid, &ima_signer) < 0)
			goto out;
		l->ima_signer = ima_signer;
	}
	/* EVM: command line first, then the configuration */
	if (!k.hmac_key && !k.evm_key && !no_evm) {
		if (cfg.evm_type == VG_EVM_XATTR_HMAC || (!cfg.evm_type && cfg.hmac_key))
			k.hmac_key = cfg.hmac_key;
		else if (cfg.evm_type || cfg.evm_key)
			k.evm_key = cfg.evm_key;
		if (cfg.evm_type == VG_EVM_XATTR_PORTABLE_DIGSIG)
			k.portable = true;
		if (cfg.evm_type && !k.hmac_key && !k.evm_key) {
			cli_err("the configuration sets evm.type but no key for it");
			goto out;
		}
	}
	l->eo.evm = &cfg.evm;
	l->eo.algo = l->algo;
	if (!no_evm && k.hmac_key) {
		if (cli_keyargs_load_hmac(&k, &cfg, &hk) < 0)
			goto out;
		l->evm = true;
		l->eo.type = VG_EVM_XATTR_HMAC;
		l->eo.hmac_key = hk.key;
		l->eo.hmac_key_len = hk.len;
	} else if (!no_evm && k.evm_key) {
		if (cli_load_signer(k.evm_key, NULL, &evm_signer) < 0)
			goto out;
		l->evm = true;
		l->eo.type = k.portable ? VG_EVM_XATTR_PORTABLE_DIGSIG : VG_EVM_IMA_XATTR_DIGSIG;
		l->eo.signer = evm_signer;
	}
	if (!trusted && (trusted_key || trusted_root || superseded)) {
		cli_err("--trusted-key, --trusted-root and --trusted-superseded need --trusted DB");
		goto out;
	}
	if (trusted) {
		/* the database's key: --trusted-key, else the EVM HMAC key, else key.hmac */
		const struct vg_hmac_key *dbk = &hk;

		if (trusted_key || !hk.len) {
			const char *kf = trusted_key ? trusted_key : k.hmac_key ? k.hmac_key :
							   cfg.hmac_key;

			if (!kf) {
				cli_err("trust databases are authenticated: give --trusted-key KEYFILE, "
					"--hmac-key KEYFILE or set key.hmac");
				goto out;
			}
			if (cli_keyargs_load_hmac(&(struct cli_keyargs){ .hmac_key = kf, .ko = k.ko },
						  &cfg, &tk) < 0)
				goto out;
			dbk = &tk;
		}
		have_lt = true;
		if (label_trusted_open(&lt, trusted, dbk->key, dbk->len, trusted_root, l->algo,
				       superseded) < 0)
			goto out;
		l->trusted = &lt;
	}
	l->uuid_auto = cli_evmargs_uuid(&e, &cfg, &l->eo.uuid_mode, l->eo.uuid);
	to.config = &cfg;
	have_tree = true;
	if (tree_run(&to, &label_ops, l, argv + optind, argc - optind, &st, &t) < 0)
		goto out;
	rc = st.n[TREE_FAIL] || st.n[TREE_ERROR] ? EXIT_NOTVERIFIED : EXIT_OK;
	if (o.json) {
		put_summary_json(&st, &t);
	} else if (!to.quiet) {
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
	if (have_lt)
		label_trusted_release(&lt);
	vg_hmac_key_wipe(&tk);
	vg_signer_free(ima_signer);
	vg_signer_free(evm_signer);
	vg_hmac_key_wipe(&hk);
	vg_config_release(&cfg);
	return rc;
}
