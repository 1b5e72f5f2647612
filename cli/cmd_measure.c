// SPDX-License-Identifier: MIT
/*
 * cmd_measure.c - `vigil measure [--log FILE] [--pcr N] [--algo A] FILE...`
 *
 * Hashes each FILE, appends an ima-ng entry (ima-sig with --sig) for it
 * to a kernel-format measurement log and extends it into a software PCR
 * bank kept beside the log (LOG.pcrs; not attestable), or into the TPM
 * with --tpm. Entries are
 * committed in groups (--batch): one fdatasync per group, then the
 * extends; "ALGO:HEX  FILE" is printed only for committed entries, so
 * every printed line is an acknowledged measurement. Opening the log
 * reconciles it after a crash (mlog.h); what was repaired is reported.
 * --json: one JSON object per committed entry, {file, algo, digest, pcr},
 * or per file that failed, {file, error} (docs/schemas/measure.schema.json).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <json-c/json.h>

#include "cli.h"
#include "opts.h"
#include "vigil/imalog.h"
#include "vigil/mlog.h"
#include "vigil/pcrbank.h"
#include "vigil/tpm.h"
#include "vigil/xattr_ima.h"
#include "tcti.h"

#define DEFAULT_LOG "/run/vigil/binary_runtime_measurements"

static const char help[] =
	"usage: vigil measure [--log FILE] [--pcrs FILE | --tpm[=TCTI]] [--pcr N] [--algo ALGO] [--sig]\n"
	"                     [--batch N] [--no-sync] [--json] [FILE...]\n"
	"\n"
	"Measure each FILE into a kernel-format measurement log (binary, sha1\n"
	"template digests: what binary_runtime_measurements holds) and extend the\n"
	"entries into a software PCR bank beside the log. Without FILE: open the\n"
	"log, recover it after a crash, and exit. A new log starts with the\n"
	"boot_aggregate entry.\n"
	"  -l, --log FILE      the log (default " DEFAULT_LOG ")\n"
	"  -p, --pcrs FILE     the software PCR bank (default: LOG.pcrs). It is NOT\n"
	"                      attestable: it keeps the log self-consistent only\n"
	"  -B, --banks LIST    banks of a new software bank (default sha1,sha256)\n"
	"  -T, --tpm[=TCTI]    extend the TPM's PCRs instead (attestable; TCTI default:\n"
	"                      $VIGIL_TCTI, else device:/dev/tpmrm0); the boot_aggregate\n"
	"                      of a new log is computed from its PCRs 0-9, and the TPM's\n"
	"                      boot (resetCount) recorded in LOG.boot: an earlier boot's\n"
	"                      log is refused, never extended into the fresh PCRs\n"
	"  -n, --pcr N         PCR to extend (default 10)\n"
	"  -a, --algo ALGO     file digest algorithm (default sha256)\n"
	"  -s, --sig           ima-sig template: record security.ima when it is a\n"
	"                      signature (or a portable security.evm signature)\n"
	"  -b, --batch N       entries per commit (one fdatasync each; default 64)\n"
	"      --no-sync       skip fdatasync (not crash-safe; for benchmarks)\n"
	"  -j, --json          one JSON object per committed entry {file, algo, digest,\n"
	"                      pcr}, or per file that failed {file, error}\n"
	"Prints 'ALGO:HEX  FILE' for every committed (durable, extended) entry.\n"
	"Exit status: 0 all measured, 2 any error (the log and the PCRs disagree,\n"
	"a file cannot be read, ...).\n";

struct pend {
	char *path;
	struct vg_digest d;
};

static int parse_banks(const char *arg, uint32_t *ret)
{
	char *s = strdup(arg), *save = NULL, *t;
	uint32_t b = 0;

	if (!s)
		return -1;
	for (t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int a = cli_parse_algo(t);

		if (a < 0) {
			free(s);
			return -1;
		}
		b |= 1u << a;
	}
	free(s);
	*ret = b;
	return b ? 0 : -1;
}

/* The kernel's "sig" field: security.ima if a signature, else a portable security.evm. */
static ssize_t get_sig(int fd, uint8_t *buf, size_t cap)
{
	ssize_t n = fgetxattr(fd, VG_XATTR_IMA, buf, cap);

	if (n > 0 && (buf[0] == VG_EVM_IMA_XATTR_DIGSIG || buf[0] == VG_IMA_VERITY_DIGSIG))
		return n;
	n = fgetxattr(fd, VG_XATTR_EVM, buf, cap);
	if (n > 0 && buf[0] == VG_EVM_XATTR_PORTABLE_DIGSIG)
		return n;
	return 0;
}

/* --json: one line, an entry (@dg) or a failure (@err) */
static void put_json(const char *path, const struct vg_digest *dg, unsigned long pcr,
		     const char *err)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "file", cli_json_path(path));
	if (dg) {
		cli_json_add_digest(j, dg);
		json_object_object_add(j, "pcr", json_object_new_int((int)pcr));
	} else {
		json_object_object_add(j, "error", json_object_new_string(err));
	}
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

static int flush(struct vg_mlog *l, struct pend *pe, size_t *np, const char *log, bool json,
		 unsigned long pcr)
{
	struct vg_diag d = { 0 };
	int r = vg_mlog_commit(l, &d);

	for (size_t i = 0; i < *np; i++) {
		if (r >= 0 && json) {
			put_json(pe[i].path, &pe[i].d, pcr, NULL);
		} else if (r >= 0) {
			char hex[2 * VG_HASH_MAX_DIGEST + 1];

			vg_hex_encode(pe[i].d.bytes, pe[i].d.len, hex);
			printf("%s:%s  ", vg_hash_name(pe[i].d.algo), hex);
			cli_put_path(stdout, pe[i].path);
			putchar('\n');
		} else if (json) {
			put_json(pe[i].path, NULL, pcr, "not committed");
		}
		free(pe[i].path);
	}
	*np = 0;
	if (r < 0) {
		cli_file_err(log, "commit: %s", d.msg);
		return -1;
	}
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* @path@suffix does not exist (not even as a link). */
static bool absent(const char *path, const char *suffix)
{
	char p[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(p, sizeof(p), "%s%s", path, suffix) < sizeof(p) && lstat(p, &st) < 0 &&
	       errno == ENOENT;
}

/* Remove @path@suffix if this run made it (@made). */
static void forget(const char *path, const char *suffix, bool made)
{
	char p[PATH_MAX];

	if (made && (size_t)snprintf(p, sizeof(p), "%s%s", path, suffix) < sizeof(p))
		(void)unlink(p);
}

int cmd_measure(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "log", required_argument, 'l', 'l' },
		{ "pcrs", required_argument, 'p', 'p' },
		{ "banks", required_argument, 'B', 'B' },
		{ "pcr", required_argument, 'n', 'n' },
		CLI_OPT_ALGO('a'),
		{ "sig", no_argument, 's', 's' },
		{ "batch", required_argument, 'b', 'b' },
		{ "no-sync", no_argument, 0, 'S' },
		{ "tpm", optional_argument, 0, 'T' },
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	const char *log = DEFAULT_LOG;
	char *bankpath = NULL;
	uint32_t banks = 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256;
	unsigned long pcr = VG_IMALOG_PCR_DEFAULT, batch = 64;
	int c, rc = EXIT_ERROR;
	bool sig = false, tpm = false, bank_new = false, lock_new = false;
	const char *tcti = NULL;
	struct vg_tpm *t = NULL;
	struct vg_mlog_opts mo = { .ops = &vg_pcrbank_ops, .pcr_sync = vg_pcrbank_sync_cb };
	struct vg_mlog_recovery rec;
	struct vg_pcrbank *bank = NULL;
	struct vg_hasher *h = NULL;
	struct vg_mlog *l = NULL;
	struct vg_diag d = { 0 };
	struct pend *pe = NULL;
	size_t np = 0;
	char *end;
	int r;
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = VG_HASH_SHA256 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .out = &o };

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'l':
			log = optarg;
			break;
		case 'p':
			free(bankpath);
			bankpath = strdup(optarg);
			break;
		case 'B':
			if (parse_banks(optarg, &banks) < 0) {
				cli_err("--banks '%s': a comma-separated list of hash names", optarg);
				goto out;
			}
			break;
		case 'n':
			errno = 0;
			pcr = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || pcr >= VG_PCR_COUNT) {
				cli_err("--pcr '%s': a PCR number below %d", optarg, VG_PCR_COUNT);
				goto out;
			}
			break;
		case 's':
			sig = true;
			break;
		case 'b':
			errno = 0;
			batch = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || batch == 0 || batch > 1000000) {
				cli_err("--batch '%s': a number from 1 to 1000000", optarg);
				goto out;
			}
			break;
		case 'S':
			mo.no_sync = true;
			break;
		case 'T':
			tpm = true;
			tcti = optarg;
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	if (!bankpath && asprintf(&bankpath, "%s.pcrs", log) < 0) {
		bankpath = NULL;
		cli_err("out of memory");
		goto out;
	}
	if (!bankpath) {
		cli_err("out of memory");
		goto out;
	}
	if (tpm) {
		if (vg_tpm_open(vg_prog_tcti(tcti), &t, &d) < 0) {
			cli_err("TPM: %s", d.msg);
			goto out;
		}
		mo.ops = &vg_tpm_pcr_ops;
		mo.ops_ctx = t;
		mo.pcr_sync = NULL;
	} else {
		bank_new = absent(bankpath, "");
		lock_new = absent(bankpath, ".lock");
		if (vg_pcrbank_open(bankpath, banks, &bank, &d) < 0) {
			cli_err("%s", d.msg);	/* it names the file */
			goto out;
		}
		mo.ops_ctx = bank;
	}
	if (vg_mlog_open(log, &mo, &l, &rec, &d) < 0) {
		cli_file_err(log, "%s", d.msg);
		/* a bank made for a log that could not be opened is not left behind */
		vg_pcrbank_free(bank);
		bank = NULL;
		forget(bankpath, "", bank_new);
		forget(bankpath, ".lock", lock_new);
		goto out;
	}
	if (rec.created && !tpm)
		cli_file_err(log, "new log; PCRs in the software bank %s (not attestable: no TPM)",
			     bankpath);
	if (rec.truncated)
		cli_file_err(log, "recovered: removed a torn last entry (%llu bytes)",
			     (unsigned long long)rec.truncated);
	if (rec.extended)
		cli_file_err(log, "recovered: extended %llu logged entries the PCRs had not seen",
			     (unsigned long long)rec.extended);
	pe = calloc(batch, sizeof(*pe));
	if (!pe || vg_hasher_new(&h) < 0) {
		cli_err("out of memory");
		goto out;
	}
	rc = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		uint8_t sigbuf[VG_XATTR_SIZE_MAX];
		char real[PATH_MAX];
		ssize_t sl = 0;
		int fd = cli_open_regular(argv[i]);

		if (fd < 0) {
			if (o.json)
				put_json(argv[i], NULL, pcr, "not a readable regular file");
			rc = EXIT_ERROR;
			continue;
		}
		if (!realpath(argv[i], real)) {
			cli_file_err(argv[i], "%s", strerror(errno));
			if (o.json)
				put_json(argv[i], NULL, pcr, strerror(errno));
			close(fd);
			rc = EXIT_ERROR;
			continue;
		}
		r = vg_hasher_fd(h, fd, (unsigned int)cf.algo, &pe[np].d, NULL, &d);
		if (r >= 0 && sig)
			sl = get_sig(fd, sigbuf, sizeof(sigbuf));
		close(fd);
		if (r < 0) {
			cli_file_err(argv[i], "%s", d.msg);
			if (o.json)
				put_json(argv[i], NULL, pcr, d.msg);
			rc = EXIT_ERROR;
			continue;
		}
		r = vg_mlog_append_file(l, (unsigned int)pcr, &pe[np].d, real, sig ? sigbuf : NULL,
					(size_t)sl, &d);
		if (r < 0) {
			cli_file_err(argv[i], "%s", d.msg);
			rc = EXIT_ERROR;
			goto out;
		}
		pe[np].path = strdup(argv[i]);
		if (!pe[np].path) {
			cli_err("out of memory");
			rc = EXIT_ERROR;
			goto out;
		}
		if (++np == batch && flush(l, pe, &np, log, o.json, pcr) < 0) {
			rc = EXIT_ERROR;
			goto out;
		}
	}
	if (np && flush(l, pe, &np, log, o.json, pcr) < 0)
		rc = EXIT_ERROR;
out:
	for (size_t i = 0; pe && i < np; i++)
		free(pe[i].path);
	free(pe);
	vg_hasher_free(h);
	vg_mlog_free(l);
	vg_pcrbank_free(bank);
	vg_tpm_close(t);
	free(bankpath);
	return rc;
}
