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
#include "vigil/xattr_ima.h"

static const char help[] =
	"usage: vigil appraise [--keyring CERT]... [--hmac-key KEYFILE]\n"
	"                      [--uuid UUID | --no-uuid] [--json] FILE...\n"
	"\n"
	"Check each FILE's content against security.ima and its metadata against\n"
	"security.evm, as the kernel's IMA appraisal and EVM do.\n"
	"  -k, --keyring CERT     trusted X.509 certificate(s) or public key(s), PEM\n"
	"                         or DER, for IMA and EVM signatures (repeatable)\n"
	"  -H, --hmac-key FILE    EVM HMAC key; also makes security.evm mandatory\n"
	"      --require-evm      a file without security.evm fails (missing-HMAC)\n"
	"      --require-sig      only signatures satisfy security.ima (imasig)\n"
	"      --uuid UUID        filesystem UUID bound in HMACs and 03 signatures\n"
	"      --no-uuid          HMACs and 03 signatures carry no UUID\n"
	"      --inode N          check against inode number N, not the file's own\n"
	"      --generation N     check against generation N, not the file's own\n"
	"  -x, --evm-xattr NAME   protect NAME too (after the kernel's default list)\n"
	"  -a, --algo ALGO        hash for labels that name none (default sha256)\n"
	"  -j, --json             one JSON object per file\n"
	"  -v, --verbose          add why a file failed\n"
	"Output: 'FILE: ok' or 'FILE: fail (CAUSE)'. Causes are the kernel's:\n"
	"missing-hash, invalid-hash, invalid-signature, missing-HMAC, invalid-HMAC,\n"
	"invalid-fail-immutable, IMA-signature-required, unknown-ima-data, ...; and\n"
	"unknown-key where the signing key is not in the keyring.\n"
	"Exit status: 0 all pass, 1 any fails, 2 usage or operational error.\n";

static void print_json(const char *path, const struct vg_appraise_result *r, const char *err)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "file", json_object_new_string(path));
	if (err) {
		json_object_object_add(o, "result", json_object_new_string("error"));
		json_object_object_add(o, "error", json_object_new_string(err));
	} else {
		json_object_object_add(o, "result",
				       json_object_new_string(r->status == VG_ST_PASS ? "ok" : "fail"));
		if (r->cause)
			json_object_object_add(o, "cause", json_object_new_string(r->cause));
		json_object_object_add(o, "ima_status", json_object_new_string(vg_status_name(r->status)));
		json_object_object_add(o, "evm_status",
				       json_object_new_string(vg_status_name(r->evm_status)));
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
	}
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int cmd_appraise(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keyring", required_argument, NULL, 'k' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "require-evm", no_argument, NULL, 'E' },
		{ "require-sig", no_argument, NULL, 'S' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "no-uuid", no_argument, NULL, 'N' },
		{ "inode", required_argument, NULL, 'i' },
		{ "generation", required_argument, NULL, 'G' },
		{ "evm-xattr", required_argument, NULL, 'x' },
		{ "algo", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct vg_appraise_opts o = { .default_algo = VG_HASH_SHA256 };
	struct vg_evm_config cfg;
	struct vg_keyring *kr = NULL;
	struct vg_hasher *h = NULL;
	struct vg_hmac_key hk = { 0 };
	struct cli_uuid u = { 0 };
	bool json = false, verbose = false, warned = false;
	int c, rc = EXIT_ERROR, worst = EXIT_OK;

	vg_evm_config_default(&cfg);
	if (vg_keyring_new(&kr) < 0 || vg_hasher_new(&h) < 0) {
		cli_err("out of memory");
		goto out;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, "k:H:x:a:jvh", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (cli_keyring_add(kr, optarg) < 0)
				goto out;
			break;
		case 'H':
			if (hk.len) {
				cli_err("--hmac-key given twice");
				goto out;
			}
			if (cli_load_hmac_key(optarg, &hk) < 0)
				goto out;
			break;
		case 'E':
			o.evm_required = true;
			break;
		case 'S':
			o.require_sig = true;
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
			if (cli_parse_meta(&o.meta, c, optarg) < 0)
				goto out;
			break;
		case 'x':
			if (cli_evm_add(&cfg, optarg) < 0)
				goto out;
			break;
		case 'a': {
			int a = cli_parse_algo(optarg);

			if (a < 0)
				goto out;
			o.default_algo = (unsigned int)a;
			break;
		}
		case 'j':
			json = true;
			break;
		case 'v':
			verbose = true;
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
	if (u.omit)
		cfg.fsuuid = false;
	o.evm = &cfg;
	o.ima_keys = kr;
	o.evm_keys = kr;
	if (hk.len) {
		o.hmac_key = hk.key;
		o.hmac_key_len = hk.len;
	}
	o.uuid_mode = u.mode;
	memcpy(o.uuid, u.uuid, 16);

	for (int i = optind; i < argc; i++) {
		const char *path = argv[i];
		struct vg_appraise_result res;
		struct vg_diag d = { 0 };
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			d.err = -errno;
			snprintf(d.msg, sizeof(d.msg), "%s", strerror(errno));
		} else if (vg_appraise_fd(h, fd, &o, &res, &d) == 0) {
			d.err = 0;
		}
		if (fd >= 0)
			close(fd);
		if (d.err) {
			if (json)
				print_json(path, NULL, d.msg);
			else
				cli_file_err(path, "%s", d.msg);
			worst = EXIT_ERROR;
			continue;
		}
		if (res.hmac_unchecked && !warned && !json) {
			cli_err("security.evm holds HMACs; without --hmac-key they are not checked");
			warned = true;
		}
		if (res.status != VG_ST_PASS && worst == EXIT_OK)
			worst = EXIT_NOTVERIFIED;
		if (json) {
			print_json(path, &res, NULL);
			continue;
		}
		cli_put_path(stdout, path);
		if (res.status == VG_ST_PASS)
			fputs(": ok\n", stdout);
		else if (verbose && res.detail.msg[0])
			printf(": fail (%s): %s\n", res.cause ? res.cause : "unknown", res.detail.msg);
		else
			printf(": fail (%s)\n", res.cause ? res.cause : "unknown");
	}
	rc = worst;
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
out:
	vg_hmac_key_wipe(&hk);
	vg_hasher_free(h);
	vg_keyring_free(kr);
	return rc;
}
