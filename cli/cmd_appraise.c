// SPDX-License-Identifier: MIT
/*
 * cmd_appraise.c - `vigil appraise [--keyring CERT]... [--hmac-key KEYFILE]
 *                  [--uuid UUID | --no-uuid] [--json] FILE...`
 *
 * One line per file, "FILE: ok" or "FILE: fail (CAUSE)", with the kernel's
 * cause strings; --json prints one JSON object per file instead. Exit 0
 * when every file passes, 1 when any fails, 2 when any could not be
 * judged or on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "tree.h"
#include "vigil/xattr_ima.h"

static const char help[] =
	"usage: vigil appraise [-r] [--config FILE] [--keyring CERT]... [--hmac-key KEYFILE]\n"
	"                      [--uuid UUID | --no-uuid] [--json] PATH...\n"
	"\n"
	"Check each FILE's content against security.ima and its metadata against\n"
	"security.evm, as the kernel's IMA appraisal and EVM do.\n"
	"  -r, --recursive        walk directories (without crossing mount points);\n"
	"                         print failures only (-v: every file) and a summary\n"
	"      --cross-mounts     also walk into other filesystems\n"
	"  -c, --config FILE      configuration (default " VG_CONFIG_DEFAULT ", if present)\n"
	"  -J, --jobs N           worker threads (default: one per CPU)\n"
	"  -q, --quiet            no progress line\n"
	"  -k, --keyring CERT     trusted X.509 certificate(s) or public key(s), PEM\n"
	"                         or DER, for IMA and EVM signatures (repeatable)\n"
	"  -H, --hmac-key FILE    EVM HMAC key (raw, passphrase or TPM-sealed key file);\n"
	"                         also makes security.evm mandatory\n"
	"      --passphrase-file F  passphrase of a passphrase key file (else the terminal)\n"
	"      --tcti STRING      TPM of a sealed key file (default $VIGIL_TCTI)\n"
	"      --require-evm      a file without security.evm fails (missing-HMAC)\n"
	"      --require-sig      only signatures satisfy security.ima (imasig)\n"
	"  -m, --metadata-only    check security.evm and the form of security.ima only;\n"
	"                         do not read content (a quick pass over a tree)\n"
	"      --uuid UUID        filesystem UUID bound in HMACs and 03 signatures\n"
	"      --no-uuid          HMACs and 03 signatures carry no UUID\n"
	"      --inode N          check against inode number N, not the file's own\n"
	"      --generation N     check against generation N, not the file's own\n"
	"  -x, --evm-xattr NAME   protect NAME too (after the kernel's default list)\n"
	"  -a, --algo ALGO        hash for labels that name none (default sha256)\n"
	"  -j, --json             one JSON object per file (-r: per failing file,\n"
	"                         then a summary object)\n"
	"  -v, --verbose          add why a file failed\n"
	"Output: 'FILE: ok' or 'FILE: fail (CAUSE)'. Causes are the kernel's:\n"
	"missing-hash, invalid-hash, invalid-signature, missing-HMAC, invalid-HMAC,\n"
	"invalid-fail-immutable, IMA-signature-required, unknown-ima-data, ...; and\n"
	"unknown-key where the signing key is not in the keyring.\n"
	"Exit status: 0 all pass, 1 any fails, 2 usage or operational error.\n";


static json_object *result_json(const char *path, const struct vg_appraise_result *r,
				const char *err)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "file", cli_json_path(path));
	if (err || !r) {
		json_object_object_add(o, "result", json_object_new_string("error"));
		json_object_object_add(o, "error", json_object_new_string(err ? err : "unknown"));
		return o;
	}
	json_object_object_add(o, "result",
			       json_object_new_string(r->status == VG_ST_PASS ? "ok" : "fail"));
	if (r->cause)
		json_object_object_add(o, "cause", json_object_new_string(r->cause));
	json_object_object_add(o, "ima_status", json_object_new_string(vg_status_name(r->status)));
	json_object_object_add(o, "evm_status", json_object_new_string(vg_status_name(r->evm_status)));
	if (r->ima_type)
		json_object_object_add(o, "ima_type", json_object_new_int(r->ima_type));
	if (r->keyid) {
		char k[9];

		snprintf(k, sizeof(k), "%08x", r->keyid);
		json_object_object_add(o, "keyid", json_object_new_string(k));
	}
	if (r->content_hashed) {
		char hex[2 * VG_HASH_MAX_DIGEST + 1];
		char buf[sizeof(hex) + 16];

		vg_hex_encode(r->digest.bytes, r->digest.len, hex);
		snprintf(buf, sizeof(buf), "%s:%s", vg_hash_name(r->digest.algo), hex);
		json_object_object_add(o, "digest", json_object_new_string(buf));
	}
	if (r->hmac_unchecked)
		json_object_object_add(o, "hmac_checked", json_object_new_boolean(0));
	if (r->status != VG_ST_PASS && r->detail.msg[0])
		json_object_object_add(o, "detail", json_object_new_string(r->detail.msg));
	return o;
}

static void put_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

struct worker {
	struct tree_devcache dc;
};

struct appraise {
	struct vg_appraise_opts o;
	bool uuid_auto, json, verbose, recursive;
	bool warned;
	struct worker w[VG_WALK_MAX_WORKERS];
};

static int appraise_file(struct tree *t, void *arg, const struct tree_file *f)
{
	struct appraise *a = arg;
	struct worker *w = &a->w[f->worker];
	struct vg_appraise_opts o = a->o;
	struct vg_appraise_result res;
	struct vg_diag d = { 0 };
	int r = 0;

	if (a->uuid_auto && o.evm->fsuuid)
		if (tree_fs_uuid(&w->dc, f->fd, f->st->st_dev, o.uuid, &d) == 0)
			o.uuid_mode = VG_UUID_GIVEN;
	/* with the UUID unknown, the library says so if a label needs it */
	d.err = 0;
	r = vg_appraise_file(f->hasher, f->fd, f->st, &o, &res, &d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		tree_count(t, TREE_ERROR, "error");
		tree_lock(t);
		if (a->json)
			put_json(result_json(f->path, NULL, d.msg));
		else
			cli_file_err(f->path, "%s", d.msg);
		tree_unlock(t);
		return 0;
	}
	if (res.content_hashed)
		tree_add_bytes(t, res.size);
	tree_count(t, res.status == VG_ST_PASS ? TREE_OK : TREE_FAIL,
		   res.status == VG_ST_PASS ? NULL : res.cause ? res.cause : "unknown");
	if (res.status == VG_ST_PASS && a->recursive && !a->verbose)
		return 0;
	tree_lock(t);
	if (res.hmac_unchecked && !a->warned && !a->json) {
		cli_err("security.evm holds HMACs; without --hmac-key they are not checked");
		a->warned = true;
	}
	if (a->json) {
		put_json(result_json(f->path, &res, NULL));
	} else {
		cli_put_path(stdout, f->path);
		if (res.status == VG_ST_PASS)
			fputs(": ok\n", stdout);
		else if (a->verbose && res.detail.msg[0])
			printf(": fail (%s): %s\n", res.cause ? res.cause : "unknown", res.detail.msg);
		else
			printf(": fail (%s)\n", res.cause ? res.cause : "unknown");
	}
	tree_unlock(t);
	return 0;
}

static void appraise_error(struct tree *t, void *arg, const char *path, const char *msg)
{
	struct appraise *a = arg;

	(void)t;
	if (a->json)
		put_json(result_json(path, NULL, msg));
	else
		cli_file_err(path, "%s", msg);
}

static const struct tree_ops appraise_ops = { .file = appraise_file, .error = appraise_error };

static void summary(const struct appraise *a, const struct tree *t, const struct tree_stats *st,
		    double secs)
{
	if (a->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "summary", json_object_new_boolean(1));
		json_object_object_add(o, "checked", json_object_new_int64((int64_t)st->files));
		json_object_object_add(o, "passed", json_object_new_int64((int64_t)st->n[TREE_OK]));
		json_object_object_add(o, "failed", json_object_new_int64((int64_t)st->n[TREE_FAIL]));
		json_object_object_add(o, "errors", json_object_new_int64((int64_t)st->n[TREE_ERROR]));
		json_object_object_add(o, "skipped", json_object_new_int64((int64_t)st->n[TREE_SKIP]));
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)st->bytes));
		json_object_object_add(o, "seconds", json_object_new_double(secs));
		json_object_object_add(o, "failed_by_reason", tree_reasons_json(t, TREE_FAIL));
		json_object_object_add(o, "errors_by_reason", tree_reasons_json(t, TREE_ERROR));
		json_object_object_add(o, "skipped_by_reason", tree_reasons_json(t, TREE_SKIP));
		put_json(o);
		return;
	}
	printf("checked %llu files (%.1f MB) in %.2f s: %llu passed, %llu failed, %llu errors, %llu skipped\n",
	       (unsigned long long)st->files, (double)st->bytes / 1e6, secs,
	       (unsigned long long)st->n[TREE_OK], (unsigned long long)st->n[TREE_FAIL],
	       (unsigned long long)st->n[TREE_ERROR], (unsigned long long)st->n[TREE_SKIP]);
	tree_print_reasons(t, stdout, TREE_FAIL);
	tree_print_reasons(t, stdout, TREE_ERROR);
	tree_print_reasons(t, stdout, TREE_SKIP);
}

int cmd_appraise(int argc, char **argv)
{
	enum { OPT_XDEV = 256 };
	static const struct option opts[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "cross-mounts", no_argument, NULL, OPT_XDEV },
		{ "config", required_argument, NULL, 'c' },
		{ "jobs", required_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "keyring", required_argument, NULL, 'k' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "require-evm", no_argument, NULL, 'E' },
		{ "require-sig", no_argument, NULL, 'S' },
		{ "metadata-only", no_argument, NULL, 'm' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "no-uuid", no_argument, NULL, 'N' },
		{ "inode", required_argument, NULL, 'i' },
		{ "generation", required_argument, NULL, 'G' },
		{ "evm-xattr", required_argument, NULL, 'x' },
		{ "algo", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "passphrase-file", required_argument, NULL, 'P' },
		{ "tcti", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config = NULL, *hkey = NULL;
	const char *keyrings[64], *xattrs[VG_EVM_MAX_XATTRS];
	size_t nkeyrings = 0, nxattrs = 0;
	struct appraise *a = NULL;
	struct vg_config cfg;
	struct vg_keyring *kr = NULL;
	struct vg_hmac_key hk = { 0 };
	struct cli_keyopts ko = { 0 };
	struct cli_uuid u = { 0 };
	struct tree_opts to = { 0 };
	struct vg_meta_override meta = { 0 };
	struct tree_stats st;
	struct tree t;
	bool json = false, verbose = false, evm_required = false, require_sig = false;
	bool metadata_only = false;
	bool have_tree = false;
	int algo = -1, c, rc = EXIT_ERROR;

	vg_config_init(&cfg);
	optind = 0;
	while ((c = getopt_long(argc, argv, "rc:J:qk:H:x:a:jvmh", opts, NULL)) != -1) {
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
		case 'J':
			if (cli_parse_jobs(optarg, &to.workers) < 0)
				goto out;
			break;
		case 'q':
			to.quiet = true;
			break;
		case 'k':
			if (nkeyrings == sizeof(keyrings) / sizeof(keyrings[0])) {
				cli_err("too many --keyring");
				goto out;
			}
			keyrings[nkeyrings++] = optarg;
			break;
		case 'H':
			if (hkey) {
				cli_err("--hmac-key given twice");
				goto out;
			}
			hkey = optarg;
			break;
		case 'E':
			evm_required = true;
			break;
		case 'S':
			require_sig = true;
			break;
		case 'm':
			metadata_only = true;
			break;
		case 'U':
			if (cli_parse_uuid(&u, optarg) < 0)
				goto out;
			break;
		case 'N':
			u.omit = true;
			break;
		case 'i':
		case 'G':
			if (cli_parse_meta(&meta, c, optarg) < 0)
				goto out;
			break;
		case 'x':
			if (nxattrs == VG_EVM_MAX_XATTRS) {
				cli_err("too many --evm-xattr");
				goto out;
			}
			xattrs[nxattrs++] = optarg;
			break;
		case 'a':
			algo = cli_parse_algo(optarg);
			if (algo < 0)
				goto out;
			break;
		case 'j':
			json = true;
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
	if (u.omit && u.mode == VG_UUID_GIVEN) {
		cli_err("--uuid and --no-uuid exclude each other");
		goto out;
	}
	if (optind >= argc) {
		cli_err("no FILE given");
		goto out;
	}
	if (cli_load_config(config, &cfg) < 0)
		goto out;
	for (size_t i = 0; i < nxattrs; i++)
		if (cli_evm_add(&cfg.evm, xattrs[i]) < 0)
			goto out;
	if (vg_keyring_new(&kr) < 0 || !(a = calloc(1, sizeof(*a)))) {
		cli_err("out of memory");
		goto out;
	}
	/* the command line replaces the configuration's keys */
	for (size_t i = 0; i < (nkeyrings ? nkeyrings : cfg.nkeyrings); i++)
		if (cli_keyring_add(kr, nkeyrings ? keyrings[i] : cfg.keyrings[i]) < 0)
			goto out;
	if (!hkey)
		hkey = cfg.hmac_key;
	if (!ko.tcti)
		ko.tcti = cfg.tcti;
	if (hkey && cli_load_hmac_key_opts(hkey, &ko, &hk) < 0)
		goto out;
	if (u.omit || cfg.uuid == VG_CONFIG_UUID_NONE)
		cfg.evm.fsuuid = false;
	a->o.evm = &cfg.evm;
	a->o.ima_keys = kr;
	a->o.evm_keys = kr;
	a->o.evm_required = evm_required;
	a->o.require_sig = require_sig;
	a->o.metadata_only = metadata_only;
	if (metadata_only)	/* without EVM, nothing would be checked at all */
		a->o.evm_required = true;
	a->o.default_algo = algo >= 0 ? (unsigned int)algo : cfg.algo;
	a->o.meta = meta;
	if (hk.len) {
		a->o.hmac_key = hk.key;
		a->o.hmac_key_len = hk.len;
	}
	if (u.mode == VG_UUID_GIVEN || cfg.uuid == VG_CONFIG_UUID_GIVEN) {
		a->o.uuid_mode = VG_UUID_GIVEN;
		memcpy(a->o.uuid, u.mode == VG_UUID_GIVEN ? u.uuid : cfg.uuid_value, 16);
	} else {
		a->uuid_auto = true;
	}
	a->json = json;
	a->verbose = verbose;
	a->recursive = to.recursive;
	to.config = &cfg;
	/* a file named twice on the command line is appraised twice */
	to.all_links = !to.recursive;
	have_tree = true;
	if (tree_run(&to, &appraise_ops, a, argv + optind, argc - optind, &st, &t) < 0)
		goto out;
	if (to.recursive)
		summary(a, &t, &st, t.seconds);
	rc = st.n[TREE_ERROR] ? EXIT_ERROR : st.n[TREE_FAIL] ? EXIT_NOTVERIFIED : EXIT_OK;
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
out:
	if (have_tree)
		tree_release(&t);
	free(a);
	vg_hmac_key_wipe(&hk);
	vg_keyring_free(kr);
	vg_config_release(&cfg);
	return rc;
}
