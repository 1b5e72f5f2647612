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
#include "opts.h"
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
	CLI_HELP_CROSS_MOUNTS
	CLI_HELP_CONFIG
	CLI_HELP_JOBS("J")
	"  -q, --quiet            no progress line\n"
	"  -k, --keyring CERT     trusted X.509 certificate(s) or public key(s), PEM\n"
	"                         or DER, for IMA and EVM signatures (repeatable)\n"
	"  -H, --hmac-key FILE    EVM HMAC key (raw, passphrase or TPM-sealed key file);\n"
	"                         also makes security.evm mandatory\n"
	CLI_HELP_KEYOPTS
	"      --require-evm      a file without security.evm fails (missing-HMAC)\n"
	"      --require-sig      only signatures satisfy security.ima (imasig)\n"
	"  -m, --metadata-only    check security.evm and the form of security.ima only;\n"
	"                         do not read content (a quick pass over a tree)\n"
	CLI_HELP_UUID
	"      --inode N          check against inode number N, not the file's own\n"
	"      --generation N     check against generation N, not the file's own\n"
	CLI_HELP_EVM_XATTR
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
		json_object_object_add(o, "detail", cli_json_path(r->detail.msg));
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
	static const struct cli_opt opts[] = {
		CLI_OPT_RECURSIVE('r'),
		CLI_OPT_CROSS_MOUNTS,
		CLI_OPT_CONFIG('c'),
		CLI_OPT_JOBS('J'),
		CLI_OPT_QUIET('q'),
		CLI_OPT_KEYRING('k'),
		CLI_OPT_HMAC_KEY('H'),
		{ "require-evm", no_argument, 0, 'E' },
		{ "require-sig", no_argument, 0, 'S' },
		{ "metadata-only", no_argument, 'm', 'm' },
		CLI_OPT_UUID,
		CLI_OPT_NO_UUID,
		CLI_OPT_INODE,
		CLI_OPT_GENERATION,
		CLI_OPT_EVM_XATTR('x'),
		CLI_OPT_ALGO('a'),
		CLI_OPT_JSON('j'),
		CLI_OPT_VERBOSE('v'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_HELP,
	};
	struct appraise *a = NULL;
	struct vg_config cfg;
	struct vg_keyring *kr = NULL;
	struct vg_hmac_key hk = { 0 };
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { .hmac_key_once = true };
	struct cli_evmargs e = { 0 };
	struct cli_outargs o = { 0 };
	struct tree_opts to = { 0 };
	struct tree_stats st;
	struct tree t;
	bool evm_required = false, require_sig = false, metadata_only = false;
	bool have_tree = false;
	int c, rc = EXIT_ERROR;
	const struct cli_groups gr = { .cfg = &cf, .tree = &to, .keys = &k, .evm = &e, .out = &o };

	vg_config_init(&cfg);
	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'E':
			evm_required = true;
			break;
		case 'S':
			require_sig = true;
			break;
		case 'm':
			metadata_only = true;
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	if (cli_evmargs_check(&e) < 0)
		goto out;
	if (optind >= argc) {
		cli_err("no FILE given");
		goto out;
	}
	if (cli_load_config(cf.config, &cfg) < 0 || cli_evmargs_apply(&e, &cfg.evm) < 0)
		goto out;
	if (vg_keyring_new(&kr) < 0 || !(a = calloc(1, sizeof(*a)))) {
		cli_err("out of memory");
		goto out;
	}
	/* the command line replaces the configuration's keys */
	for (size_t i = 0; i < (k.nkeyrings ? k.nkeyrings : cfg.nkeyrings); i++)
		if (cli_keyring_add(kr, k.nkeyrings ? k.keyrings[i] : cfg.keyrings[i]) < 0)
			goto out;
	if (!k.hmac_key)
		k.hmac_key = cfg.hmac_key;
	if (k.hmac_key && cli_keyargs_load_hmac(&k, &cfg, &hk) < 0)
		goto out;
	a->o.evm = &cfg.evm;
	a->o.ima_keys = kr;
	a->o.evm_keys = kr;
	a->o.evm_required = evm_required;
	a->o.require_sig = require_sig;
	a->o.metadata_only = metadata_only;
	if (metadata_only)	/* without EVM, nothing would be checked at all */
		a->o.evm_required = true;
	a->o.default_algo = cf.algo >= 0 ? (unsigned int)cf.algo : cfg.algo;
	a->o.meta = e.meta;
	if (hk.len) {
		a->o.hmac_key = hk.key;
		a->o.hmac_key_len = hk.len;
	}
	a->uuid_auto = cli_evmargs_uuid(&e, &cfg, &a->o.uuid_mode, a->o.uuid);
	a->json = o.json;
	a->verbose = o.verbose;
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
