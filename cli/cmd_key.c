// SPDX-License-Identifier: MIT
/*
 * cmd_key.c - `vigil key create|unseal|reseal|show`: EVM HMAC key files.
 *
 *   create --passphrase        a key derived from a passphrase with scrypt;
 *                              the file holds salt, parameters, check value
 *   create --tpm [--pcrs LIST] a random key sealed by the TPM to the current
 *                              values of those PCRs (default 0-7)
 *   unseal KEYFILE...          recover each key and say so (the key itself
 *                              is never written out)
 *   reseal KEYFILE             bind a TPM key to new PCR values (current
 *                              ones or --pcr-value N=HEX expected after an
 *                              approved update); the key comes from KEYFILE
 *                              or, once the PCRs moved, from --from BACKUP
 *   show KEYFILE...            what a key file is and how it is bound
 *
 * Unsealed keys exist only in memory and are wiped after use.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "opts.h"
#include "vigil/tpm.h"

static const char help[] =
	"usage: vigil key create (--passphrase | --tpm [--pcrs LIST] [--from KEYFILE]) [-o] OUT\n"
	"       vigil key unseal KEYFILE...\n"
	"       vigil key reseal [--pcrs LIST] [--pcr-value N=HEX]... [--from KEYFILE] [-o OUT] KEYFILE\n"
	"       vigil key show [--json] KEYFILE...\n"
	"\n"
	"EVM HMAC key files. A key file is raw (32..128 key bytes, as evmctl's),\n"
	"passphrase-derived (scrypt; the file holds the salt, the parameters and a\n"
	"check value, never the key) or sealed by the TPM to PCR values (only that\n"
	"TPM, in that boot state, can recover it). Every command taking --hmac-key\n"
	"accepts all three.\n"
	"  create --passphrase     derive the key from a passphrase (asked twice on\n"
	"                          the terminal, or --passphrase-file)\n"
	"  create --tpm            a random key (OpenSSL's RNG xor the TPM's) sealed to\n"
	"                          the current values of --pcrs (default 0-7)\n"
	"  unseal                  recover each key: exit 0 if available, 2 if not (the\n"
	"                          message names the PCRs that differ)\n"
	"  reseal                  seal a TPM key again, to the current PCR values or\n"
	"                          to --pcr-value; the key comes from KEYFILE itself or\n"
	"                          from --from (a backup raw or passphrase key file)\n"
	"  show                    kind, KDF parameters, bound PCRs and their values\n"
	"options:\n"
	"  -o, --output FILE       file to write (create: may not exist; reseal:\n"
	"                          default KEYFILE, replaced atomically)\n"
	"      --pcrs [BANK:]LIST  PCRs to bind, e.g. 0,2-7 or sha256:7,23 (default\n"
	"                          sha256:0-7; reseal: the file's)\n"
	"      --pcr-value N=HEX   bind PCR N to HEX instead of its current value\n"
	"      --from KEYFILE      take the key from KEYFILE (create --tpm: import it)\n"
	"      --passphrase-file F read the passphrase from F's first line ('-': stdin);\n"
	"                          also $VIGIL_PASSPHRASE_FILE\n"
	"      --scrypt-logn N     scrypt N = 2^N (default 17: 128 MiB, r 8, p 1)\n"
	"      --tcti STRING       TPM to use (default $VIGIL_TCTI, else " VG_TPM_TCTI_DEFAULT ")\n"
	"  -f, --force             create: replace OUT if it exists\n"
	"  -j, --json              show: one JSON object per file\n"
	"Exit status: 0 done, 1 -, 2 usage or operational error (a key unavailable).\n";

enum { OPT_PASS = 1, OPT_TPM, OPT_PCRS, OPT_PCRVAL, OPT_FROM, OPT_LOGN };

struct key_args {
	bool passphrase, tpm, force;
	struct cli_outargs o;		/* --json, --output */
	struct cli_keyargs k;		/* --passphrase-file, --tcti */
	const char *from;
	const char *pcrs;
	unsigned int logn;
	struct { unsigned int pcr; const char *hex; } vals[VG_PCR_COUNT];
	size_t nvals;
};

/* "[bank:]0,2-7,23" -> @p->bank, @p->mask. Return: 0 or -1 (reported). */
static int parse_pcrs(const char *arg, struct vg_tpm_pcrs *p)
{
	const char *colon = strchr(arg, ':'), *s = arg;
	char bank[32];

	p->mask = 0;
	if (colon) {
		int a;

		if ((size_t)(colon - arg) >= sizeof(bank))
			goto bad;
		memcpy(bank, arg, (size_t)(colon - arg));
		bank[colon - arg] = 0;
		a = vg_hash_by_name(bank);
		if (a < 0 || !vg_tpm_alg((unsigned int)a)) {
			cli_err("--pcrs '%s': '%s' is not a TPM PCR bank (sha1, sha256, sha384, sha512, sm3)",
				arg, bank);
			return -1;
		}
		p->bank = (unsigned int)a;
		s = colon + 1;
	}
	while (*s) {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;

		if (end == s || *s == '-' || *s == '+')
			goto bad;
		if (*end == '-') {
			s = end + 1;
			hi = strtoul(s, &end, 10);
			if (end == s || *s == '-' || *s == '+')
				goto bad;
		}
		if (lo > hi || hi >= VG_PCR_COUNT)
			goto bad;
		for (unsigned long i = lo; i <= hi; i++)
			p->mask |= 1u << i;
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		s = end;
	}
	if (p->mask)
		return 0;
bad:
	cli_err("--pcrs '%s': expected [BANK:]LIST of PCRs 0..23, e.g. 0,2-7 or sha256:7,23", arg);
	return -1;
}

static void pcr_list(uint32_t mask, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = 0;
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(out + n, cap - n, "%s%u", n ? "," : "", i);
}

/* Current values of @p's selection, then --pcr-value overrides. Return: 0 or -1. */
static int bind_values(struct vg_tpm *tpm, const struct key_args *a, struct vg_tpm_pcrs *p)
{
	struct vg_diag d = { 0 };
	size_t dlen = vg_hash_size(p->bank);

	for (size_t i = 0; i < a->nvals; i++)
		p->mask |= 1u << a->vals[i].pcr;
	if (vg_tpm_pcr_read_sel(tpm, p, &d) < 0) {
		cli_err("reading PCRs: %s", d.msg);
		return -1;
	}
	for (size_t i = 0; i < a->nvals; i++) {
		if (vg_hex_decode(a->vals[i].hex, p->values[a->vals[i].pcr], dlen) != (int)dlen) {
			cli_err("--pcr-value %u=%s: not a %s value (%zu hex digits)", a->vals[i].pcr,
				a->vals[i].hex, vg_hash_name(p->bank), 2 * dlen);
			return -1;
		}
	}
	return 0;
}

static int write_key(const char *path, const struct vg_key_file *kf)
{
	struct vg_diag d = { 0 };

	if (vg_key_file_write(path, kf, &d) < 0) {
		cli_file_err(path, "%s", d.msg);
		return -1;
	}
	return 0;
}

static void say_bound(const char *path, const char *verb, const struct vg_key_file *kf)
{
	char list[VG_PCR_COUNT * 3 + 1];

	pcr_list(kf->pcrs.mask, list, sizeof(list));
	cli_put_path(stdout, path);
	printf(": %s, sealed to %s PCRs %s\n", verb, vg_hash_name(kf->pcrs.bank), list);
}

static int key_create(struct key_args *a)
{
	struct vg_key_file *kf = calloc(1, sizeof(*kf));
	struct vg_hmac_key k = { 0 };
	struct vg_tpm *tpm = NULL;
	struct vg_diag d = { 0 };
	struct stat st;
	int rc = EXIT_ERROR;

	if (!kf) {
		cli_err("out of memory");
		return EXIT_ERROR;
	}
	if (a->passphrase == a->tpm) {
		cli_err("create: give exactly one of --passphrase or --tpm");
		goto out;
	}
	if (a->passphrase && (a->from || a->pcrs || a->nvals)) {
		cli_err("create --passphrase: --from, --pcrs and --pcr-value go with --tpm");
		goto out;
	}
	if (!a->o.output) {
		cli_err("create: no output file (-o OUT)");
		goto out;
	}
	if (!a->force && lstat(a->o.output, &st) == 0) {
		cli_file_err(a->o.output, "exists; use --force to replace it");
		goto out;
	}
	if (a->passphrase) {
		char pass[1024];
		int n = cli_read_passphrase(&a->k.ko, a->o.output, true, pass, sizeof(pass));

		if (n < 0)
			goto out;
		if (vg_hmac_key_passphrase_new(pass, (size_t)n, a->logn, 32, kf, &k, &d) < 0) {
			OPENSSL_cleanse(pass, sizeof(pass));
			cli_err("%s", d.msg);
			goto out;
		}
		OPENSSL_cleanse(pass, sizeof(pass));
		if (write_key(a->o.output, kf) < 0)
			goto out;
		cli_put_path(stdout, a->o.output);
		printf(": passphrase key, scrypt N=2^%u r=%u p=%u\n", kf->kdf.log_n, kf->kdf.r, kf->kdf.p);
	} else {
		struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 0xff };

		if (a->pcrs && parse_pcrs(a->pcrs, &p) < 0)
			goto out;
		if (a->from && cli_load_hmac_key_opts(a->from, &a->k.ko, &k) < 0)
			goto out;
		if (cli_tpm_open(a->k.ko.tcti, &tpm) < 0 || bind_values(tpm, a, &p) < 0)
			goto out;
		if (!a->from && vg_hmac_key_generate(tpm, 32, &k, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
		if (vg_hmac_key_seal(tpm, &k, &p, kf, &d) < 0) {
			cli_err("sealing: %s", d.msg);
			goto out;
		}
		if (write_key(a->o.output, kf) < 0)
			goto out;
		say_bound(a->o.output, "TPM key", kf);
	}
	rc = EXIT_OK;
out:
	vg_hmac_key_wipe(&k);
	vg_tpm_close(tpm);
	free(kf);
	return rc;
}

static int key_unseal(struct key_args *a, int argc, char **argv)
{
	int rc = EXIT_OK;

	if (optind >= argc) {
		cli_err("unseal: no KEYFILE given");
		return EXIT_ERROR;
	}
	for (int i = optind; i < argc; i++) {
		struct vg_key_file kf;
		struct vg_hmac_key k;
		struct vg_diag d = { 0 };

		if (vg_key_file_read(argv[i], &kf, &d) < 0) {
			cli_err("%s", d.msg);
			rc = EXIT_ERROR;
			continue;
		}
		if (cli_load_hmac_key_opts(argv[i], &a->k.ko, &k) < 0) {
			rc = EXIT_ERROR;
			continue;
		}
		vg_hmac_key_wipe(&k);
		cli_put_path(stdout, argv[i]);
		printf(": key available (%s, %zu bytes)\n", vg_key_kind_name(kf.kind), kf.key_len);
	}
	return rc;
}

static int key_reseal(struct key_args *a, int argc, char **argv)
{
	struct vg_key_file *kf = calloc(1, sizeof(*kf)), *nkf = calloc(1, sizeof(*nkf));
	struct vg_hmac_key k = { 0 };
	struct vg_tpm *tpm = NULL;
	struct vg_diag d = { 0 };
	struct vg_tpm_pcrs p = { .bank = VG_HASH_SHA256, .mask = 0xff };
	const char *in;
	int rc = EXIT_ERROR;

	if (!kf || !nkf) {
		cli_err("out of memory");
		goto out;
	}
	if (optind + 1 != argc) {
		cli_err("reseal: give one KEYFILE");
		goto out;
	}
	in = argv[optind];
	if (vg_key_file_read(in, kf, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	if (kf->kind != VG_KEY_TPM && !a->o.output) {
		cli_file_err(in, "a %s key, not TPM-sealed: give -o OUT for the sealed copy",
			     vg_key_kind_name(kf->kind));
		goto out;
	}
	if (kf->kind == VG_KEY_TPM) {
		p.bank = kf->pcrs.bank;
		p.mask = kf->pcrs.mask;
	}
	if (a->pcrs && parse_pcrs(a->pcrs, &p) < 0)
		goto out;
	if (cli_tpm_open(a->k.ko.tcti, &tpm) < 0)
		goto out;
	if (a->from) {
		if (cli_load_hmac_key_opts(a->from, &a->k.ko, &k) < 0)
			goto out;
		if (kf->kind == VG_KEY_TPM && k.len != kf->key_len) {
			cli_file_err(a->from, "a %zu-byte key, %s holds %zu bytes", k.len, in, kf->key_len);
			goto out;
		}
	} else {
		if (kf->kind == VG_KEY_TPM) {
			if (vg_hmac_key_unseal(tpm, kf, &k, &d) < 0) {
				cli_err("HMAC key %s: %s%s", in, d.msg,
					d.err == -EACCES ? "; reseal needs the key: give --from BACKUP" : "");
				goto out;
			}
		} else if (cli_load_hmac_key_opts(in, &a->k.ko, &k) < 0) {
			goto out;
		}
	}
	if (bind_values(tpm, a, &p) < 0)
		goto out;
	if (vg_hmac_key_seal(tpm, &k, &p, nkf, &d) < 0) {
		cli_err("sealing: %s", d.msg);
		goto out;
	}
	if (write_key(a->o.output ? a->o.output : in, nkf) < 0)
		goto out;
	say_bound(a->o.output ? a->o.output : in, "resealed", nkf);
	rc = EXIT_OK;
out:
	vg_hmac_key_wipe(&k);
	vg_tpm_close(tpm);
	free(kf);
	free(nkf);
	return rc;
}

static int key_show(struct key_args *a, int argc, char **argv)
{
	int rc = EXIT_OK;

	if (optind >= argc) {
		cli_err("show: no KEYFILE given");
		return EXIT_ERROR;
	}
	for (int i = optind; i < argc; i++) {
		struct vg_key_file kf;
		struct vg_diag d = { 0 };
		json_object *o;
		char hex[2 * VG_HASH_MAX_DIGEST + 1], list[VG_PCR_COUNT * 3 + 1];
		uint8_t pol[32] = { 0 };

		list[0] = 0;
		if (vg_key_file_read(argv[i], &kf, &d) < 0) {
			cli_err("%s", d.msg);
			rc = EXIT_ERROR;
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "file", cli_json_path(argv[i]));
		json_object_object_add(o, "kind", json_object_new_string(vg_key_kind_name(kf.kind)));
		json_object_object_add(o, "key_bytes", json_object_new_int((int)kf.key_len));
		if (kf.kind == VG_KEY_PASSPHRASE) {
			json_object_object_add(o, "kdf", json_object_new_string("scrypt"));
			json_object_object_add(o, "log2_n", json_object_new_int(kf.kdf.log_n));
			json_object_object_add(o, "r", json_object_new_int((int)kf.kdf.r));
			json_object_object_add(o, "p", json_object_new_int((int)kf.kdf.p));
			vg_hex_encode(kf.kdf.salt, kf.kdf.salt_len, hex);
			json_object_object_add(o, "salt", json_object_new_string(hex));
		} else if (kf.kind == VG_KEY_TPM) {
			json_object *vals = json_object_new_object();
			size_t dlen = vg_hash_size(kf.pcrs.bank);

			json_object_object_add(o, "bank", json_object_new_string(vg_hash_name(kf.pcrs.bank)));
			pcr_list(kf.pcrs.mask, list, sizeof(list));
			json_object_object_add(o, "pcrs", json_object_new_string(list));
			for (unsigned int j = 0; j < VG_PCR_COUNT; j++) {
				char num[4];

				if (!(kf.pcrs.mask & (1u << j)))
					continue;
				snprintf(num, sizeof(num), "%u", j);
				vg_hex_encode(kf.pcrs.values[j], dlen, hex);
				json_object_object_add(vals, num, json_object_new_string(hex));
			}
			json_object_object_add(o, "pcr_values", vals);
			if (vg_tpm_policy_pcr(&kf.pcrs, pol, NULL) == 0) {
				vg_hex_encode(pol, 32, hex);
				json_object_object_add(o, "policy", json_object_new_string(hex));
			}
			json_object_object_add(o, "sealed_bytes", json_object_new_int((int)kf.blob_len));
			if (vg_tpm_blob_check(kf.blob, kf.blob_len, &kf.pcrs, &d) < 0) {
				cli_err("%s: %s", argv[i], d.msg);
				rc = EXIT_ERROR;
				json_object_put(o);
				continue;
			}
		}
		if (a->o.json) {
			puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		} else {
			cli_put_path(stdout, argv[i]);
			printf(": %s key, %zu bytes\n", vg_key_kind_name(kf.kind), kf.key_len);
			if (kf.kind == VG_KEY_PASSPHRASE) {
				vg_hex_encode(kf.kdf.salt, kf.kdf.salt_len, hex);
				printf("  kdf: scrypt N=2^%u r=%u p=%u\n  salt: %s\n", kf.kdf.log_n,
				       kf.kdf.r, kf.kdf.p, hex);
			} else if (kf.kind == VG_KEY_TPM) {
				size_t dlen = vg_hash_size(kf.pcrs.bank);

				printf("  sealed to: %s PCRs %s\n", vg_hash_name(kf.pcrs.bank), list);
				for (unsigned int j = 0; j < VG_PCR_COUNT; j++)
					if (kf.pcrs.mask & (1u << j)) {
						vg_hex_encode(kf.pcrs.values[j], dlen, hex);
						printf("  pcr %2u: %s\n", j, hex);
					}
				vg_hex_encode(pol, 32, hex);
				printf("  policy: %s\n", hex);
				printf("  sealed object: %zu bytes\n", kf.blob_len);
			}
		}
		json_object_put(o);
	}
	return rc;
}

/* `key create [OUT]`: the file may be named without --output */
static int key_create_args(struct key_args *a, int argc, char **argv)
{
	if (!a->o.output && optind + 1 == argc)
		a->o.output = argv[optind++];
	if (optind != argc) {
		cli_err("create: unexpected argument '%s'", argv[optind]);
		return EXIT_ERROR;
	}
	return key_create(a);
}

/* The verbs share one option table; only create and reseal take its key-making options. */
static const struct {
	const char *name;
	int (*run)(struct key_args *a, int argc, char **argv);
	bool makes_keys;
} verbs[] = {
	{ "create", key_create_args, true },
	{ "unseal", key_unseal, false },
	{ "reseal", key_reseal, true },
	{ "show", key_show, false },
};

int cmd_key(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "passphrase", no_argument, 0, OPT_PASS },
		{ "tpm", no_argument, 0, OPT_TPM },
		{ "pcrs", required_argument, 0, OPT_PCRS },
		{ "pcr-value", required_argument, 0, OPT_PCRVAL },
		{ "from", required_argument, 0, OPT_FROM },
		CLI_OPT_PASSPHRASE_FILE,
		{ "scrypt-logn", required_argument, 0, OPT_LOGN },
		CLI_OPT_TCTI,
		CLI_OPT_OUTPUT('o'),
		{ "force", no_argument, 'f', 'f' },
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	struct key_args a = { .logn = VG_KEY_SCRYPT_LOGN_DEFAULT };
	const struct cli_groups gr = { .keys = &a.k, .out = &a.o };
	struct cli_getopt g;
	const char *sub;
	size_t v;
	int c;

	if (argc < 2) {
		fputs(help, stderr);
		return EXIT_ERROR;
	}
	sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (strcmp(verbs[v].name, sub) == 0)
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0])) {
		cli_err("'%s' is not a key command (create, unseal, reseal, show)", sub);
		return EXIT_ERROR;
	}
	argc--;
	argv++;
	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_PASS:
			a.passphrase = true;
			break;
		case OPT_TPM:
			a.tpm = true;
			break;
		case OPT_PCRS:
			a.pcrs = optarg;
			break;
		case OPT_PCRVAL: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (end == optarg || *end != '=' || n >= VG_PCR_COUNT || a.nvals >= VG_PCR_COUNT) {
				cli_err("--pcr-value '%s': expected N=HEX with N in 0..23", optarg);
				return EXIT_ERROR;
			}
			a.vals[a.nvals].pcr = (unsigned int)n;
			a.vals[a.nvals++].hex = end + 1;
			break;
		}
		case OPT_FROM:
			a.from = optarg;
			break;
		case OPT_LOGN: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (end == optarg || *end || n < VG_KEY_SCRYPT_LOGN_MIN || n > 20) {
				cli_err("--scrypt-logn '%s': expected %d..20", optarg, VG_KEY_SCRYPT_LOGN_MIN);
				return EXIT_ERROR;
			}
			a.logn = (unsigned int)n;
			break;
		}
		case 'f':
			a.force = true;
			break;
		default:
			return cli_opts_stop(help, c);
		}
	}
	if (!verbs[v].makes_keys &&
	    (a.passphrase || a.tpm || a.pcrs || a.nvals || a.from || a.o.output || a.force)) {
		cli_err("%s: takes no create/reseal options", sub);
		return EXIT_ERROR;
	}
	return verbs[v].run(&a, argc, argv);
}
