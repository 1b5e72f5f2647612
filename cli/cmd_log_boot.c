// SPDX-License-Identifier: MIT
/*
 * cmd_log_boot.c - `vigil log boot show|replay`: the TCG boot event log
 * (binary_bios_measurements, eventlog.h), printed record by record or
 * replayed into the PCR values it claims.
 *
 *   show   [--json] FILE
 *   replay [--bank ALGO]... [--all] [--pcrs [ALGO,]FILE]... FILE
 *
 * Exit: 0 ok (replay with --pcrs: every given PCR matches), 1 a PCR does
 * not match, 2 malformed log (the message names the event index and its
 * byte offset) or operational error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "verb.h"
#include "vigil/eventlog.h"
#include "vigil/pcrbank.h"

static const char help[] =
	"usage: vigil log boot show [--json] FILE\n"
	"       vigil log boot replay [--bank ALGO]... [--all] [--pcrs [ALGO,]FILE]... [--json] FILE\n"
	"\n"
	"The TCG PC Client boot event log (/sys/kernel/security/tpm0/binary_bios_measurements):\n"
	"crypto-agile (Spec ID Event03) or legacy SHA-1.\n"
	"\n"
	"show     one line per event: index, byte offset, PCR, type, digests, event size\n"
	"  -j, --json            one JSON document: the Spec ID header and every event\n"
	"                        with its digests and data (hex)\n"
	"replay   the PCR values the log gives, 'PCR-NN ALGO:HEX', for the PCRs it\n"
	"         extends (EV_NO_ACTION is not extended; a StartupLocality event sets\n"
	"         PCR 0's start value), every bank vigil knows unless --bank\n"
	"  -b, --bank ALGO       replay this bank (repeatable)\n"
	"  -a, --all             print all 24 PCRs, not only those the log extends\n"
	"  -p, --pcrs [ALGO,]FILE  expected values ('PCR-NN [ALGO:]HEX' lines, as\n"
	"                        `vigil log replay --pcrs`): exit 1 naming each PCR\n"
	"                        that differs\n"
	"  -j, --json            (replay) one JSON object: log, compared, result (replayed,\n"
	"                        match, mismatch), pcrs [{pcr, bank, value, expected}]\n"
	"Exit status: 0 ok / matches, 1 PCR mismatch, 2 malformed log or error.\n";

/* Return: 0, or EXIT_ERROR (reported). */
static int load(const char *path, struct vg_eventlog **ret)
{
	struct vg_diag d = { 0 };
	uint8_t *buf;
	size_t len;
	int r = cli_read_file(path, VG_EVENTLOG_SIZE_MAX, &buf, &len);

	if (r < 0) {
		cli_read_err(path, r, VG_EVENTLOG_SIZE_MAX);
		return EXIT_ERROR;
	}
	r = vg_eventlog_parse(buf, len, ret, &d);
	free(buf);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg);
		return EXIT_ERROR;
	}
	return 0;
}

static void alg_name(uint16_t tpm_alg, const struct vg_eventlog *log, char *out, size_t n)
{
	int a = vg_eventlog_tpm_algo(tpm_alg);

	(void)log;
	if (a >= 0)
		snprintf(out, n, "%s", vg_hash_name((unsigned int)a));
	else
		snprintf(out, n, "0x%04x", tpm_alg);
}

static void type_name(uint32_t type, char *out, size_t n)
{
	const char *s = vg_eventlog_type_name(type);

	if (s)
		snprintf(out, n, "%s", s);
	else
		snprintf(out, n, "0x%08" PRIx32, type);
}

static int show_json(const struct vg_eventlog *log)
{
	json_object *root = json_object_new_object(), *evs = json_object_new_array();
	char name[40];

	json_object_object_add(root, "format",
			       json_object_new_string(log->agile ? "crypto-agile" : "sha1"));
	if (log->agile) {
		json_object *sid = json_object_new_object(), *algs = json_object_new_array();

		json_object_object_add(sid, "platform_class",
				       json_object_new_int64(log->platform_class));
		json_object_object_add(sid, "spec_version_major", json_object_new_int(log->spec_major));
		json_object_object_add(sid, "spec_version_minor", json_object_new_int(log->spec_minor));
		json_object_object_add(sid, "spec_errata", json_object_new_int(log->spec_errata));
		json_object_object_add(sid, "uintn_size", json_object_new_int(log->uintn_size));
		for (uint32_t i = 0; i < log->nalgs; i++) {
			json_object *a = json_object_new_object();

			alg_name(log->algs[i].tpm_alg, log, name, sizeof(name));
			json_object_object_add(a, "algorithm", json_object_new_string(name));
			json_object_object_add(a, "id", json_object_new_int(log->algs[i].tpm_alg));
			json_object_object_add(a, "digest_size", json_object_new_int(log->algs[i].size));
			json_object_array_add(algs, a);
		}
		json_object_object_add(sid, "algorithms", algs);
		json_object_object_add(sid, "vendor_info",
				       cli_json_hex(log->buf + log->vendor_off, log->vendor_len));
		json_object_object_add(root, "spec_id", sid);
	}
	if (log->startup_locality >= 0)
		json_object_object_add(root, "startup_locality",
				       json_object_new_int(log->startup_locality));
	for (size_t i = 0; i < log->nevents; i++) {
		const struct vg_eventlog_event *e = &log->events[i];
		json_object *o = json_object_new_object(), *dg = json_object_new_object();

		json_object_object_add(o, "index", json_object_new_int64((int64_t)i));
		json_object_object_add(o, "offset", json_object_new_int64((int64_t)e->offset));
		json_object_object_add(o, "pcr", json_object_new_int64(e->pcr));
		type_name(e->type, name, sizeof(name));
		json_object_object_add(o, "type", json_object_new_string(name));
		json_object_object_add(o, "type_id", json_object_new_int64(e->type));
		for (uint32_t k = 0; k < e->ndigests; k++) {
			const struct vg_eventlog_digest *d = &log->digests[e->first_digest + k];

			alg_name(d->tpm_alg, log, name, sizeof(name));
			json_object_object_add(dg, name, cli_json_hex(log->buf + d->off, d->len));
		}
		json_object_object_add(o, "digests", dg);
		json_object_object_add(o, "size", json_object_new_int64(e->data_len));
		json_object_object_add(o, "data", cli_json_hex(log->buf + e->data_off, e->data_len));
		json_object_array_add(evs, o);
	}
	json_object_object_add(root, "events", evs);
	fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						   JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
	putchar('\n');
	json_object_put(root);
	return EXIT_OK;
}

static void show_text(const struct vg_eventlog *log)
{
	char name[40];

	if (log->agile) {
		printf("# crypto-agile log (Spec ID Event03, spec %u.%u errata %u, uintnSize %u, "
		       "platformClass %" PRIu32 ", vendorInfo %u bytes), algorithms:",
		       log->spec_major, log->spec_minor, log->spec_errata, log->uintn_size,
		       log->platform_class, log->vendor_len);
		for (uint32_t i = 0; i < log->nalgs; i++) {
			alg_name(log->algs[i].tpm_alg, log, name, sizeof(name));
			printf(" %s/%u", name, log->algs[i].size);
		}
	} else {
		printf("# legacy SHA-1 log");
	}
	printf("; %zu events\n", log->nevents);
	for (size_t i = 0; i < log->nevents; i++) {
		const struct vg_eventlog_event *e = &log->events[i];

		type_name(e->type, name, sizeof(name));
		printf("%zu @%zu PCR-%02" PRIu32 " %s", i, e->offset, e->pcr, name);
		for (uint32_t k = 0; k < e->ndigests; k++) {
			const struct vg_eventlog_digest *d = &log->digests[e->first_digest + k];
			char hex[2 * VG_EVENTLOG_DIGEST_MAX + 1];

			alg_name(d->tpm_alg, log, name, sizeof(name));
			vg_hex_encode(log->buf + d->off, d->len, hex);
			printf(" %s:%s", name, hex);
		}
		printf(" size=%" PRIu32 "\n", e->data_len);
	}
}

static int boot_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct vg_eventlog *log;
	bool json = false;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); return EXIT_ERROR;
		}
	}
	if (optind != argc - 1) {
		cli_err("show takes one FILE");
		return EXIT_ERROR;
	}
	rc = load(argv[optind], &log);
	if (rc)
		return rc;
	if (json)
		rc = show_json(log);
	else
		show_text(log);
	vg_eventlog_free(log);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_err("writing the output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
	return rc;
}

/* --pcrs [ALGO,]FILE into @pv. Return: 0, or -1 (reported). */
static int add_pcrs(struct vg_pcr_values *pv, const char *arg)
{
	const char *comma = strchr(arg, ',');
	const char *path = arg;
	struct vg_diag d = { 0 };
	int algo = -1, r;
	uint8_t *buf;
	size_t len;

	if (comma) {
		char name[32];

		if ((size_t)(comma - arg) < sizeof(name)) {
			memcpy(name, arg, (size_t)(comma - arg));
			name[comma - arg] = 0;
			algo = vg_hash_by_name(name);
		}
		if (algo >= 0)
			path = comma + 1;
	}
	r = cli_read_file(path, CLI_SMALL_MAX, &buf, &len);
	if (r < 0) {
		cli_read_err(path, r, CLI_SMALL_MAX);
		return -1;
	}
	r = vg_pcr_values_parse(pv, (const char *)buf, len, algo, &d);
	free(buf);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg);
		return -1;
	}
	return 0;
}

/* replay --json: one PCR, with the value expected when --pcrs gives one */
static void replay_json_pcr(json_object *arr, unsigned int k, unsigned int algo, const char *hex,
			    const struct vg_digest *want)
{
	json_object *o = json_object_new_object();
	char wh[2 * VG_HASH_MAX_DIGEST + 1];

	json_object_object_add(o, "pcr", json_object_new_int((int)k));
	json_object_object_add(o, "bank", json_object_new_string(vg_hash_name(algo)));
	json_object_object_add(o, "value", json_object_new_string(hex));
	if (want) {
		vg_hex_encode(want->bytes, want->len, wh);
		json_object_object_add(o, "expected", json_object_new_string(wh));
	}
	json_object_array_add(arr, o);
}

static int boot_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bank", required_argument, NULL, 'b' },
		{ "all", no_argument, NULL, 'a' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	json_object *jp = NULL;
	struct vg_pcr_values *want = calloc(1, sizeof(*want));
	struct vg_eventlog *log = NULL;
	uint32_t banks = 0, compared = 0;
	bool all = false, have_want = false;
	int c, a, rc = EXIT_ERROR;

	if (!want) {
		cli_err("out of memory");
		return EXIT_ERROR;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, "b:ap:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (!jp && !(jp = json_object_new_array())) {
				cli_err("out of memory");
				goto out;
			}
			break;
		case 'b':
			a = cli_parse_algo(optarg);
			if (a < 0)
				goto out;
			banks |= 1u << a;
			break;
		case 'a': all = true; break;
		case 'p':
			if (add_pcrs(want, optarg) < 0)
				goto out;
			have_want = true;
			break;
		case 'h': fputs(help, stdout); rc = EXIT_OK; goto out;
		default: fputs(help, stderr); goto out;
		}
	}
	if (optind != argc - 1) {
		cli_err("replay takes one FILE");
		goto out;
	}
	rc = load(argv[optind], &log);
	if (rc)
		goto out;
	rc = EXIT_ERROR;
	if (!banks) {
		banks = vg_eventlog_banks(log);
		for (unsigned int i = 0; i < VG_HASH__LAST; i++)
			if (!vg_hash_available(i))
				banks &= ~(1u << i);
	}
	/* in the order the Spec ID event lists them */
	for (uint32_t i = 0; i < log->nalgs; i++) {
		const struct vg_eventlog_alg *al = &log->algs[i];
		struct vg_eventlog_pcrs p;
		struct vg_diag d = { 0 };

		if (al->algo < 0 || !(banks & (1u << al->algo)))
			continue;
		banks &= ~(1u << al->algo);
		if (vg_eventlog_replay(log, (unsigned int)al->algo, &p, &d) < 0) {
			cli_file_err(argv[optind], "%s", d.msg);
			goto out;
		}
		for (unsigned int k = 0; k < VG_PCR_COUNT; k++) {
			char hex[2 * VG_HASH_MAX_DIGEST + 1];
			const struct vg_digest *w = &want->v[al->algo][k];

			if (!all && !(p.touched & (1u << k)) && !(want->have[al->algo] & (1u << k)))
				continue;
			vg_hex_encode(p.pcr[k].bytes, p.pcr[k].len, hex);
			if (jp)
				replay_json_pcr(jp, k, p.algo, hex, want->have[al->algo] & (1u << k) ? w : NULL);
			else
				printf("PCR-%02u %s:%s\n", k, vg_hash_name(p.algo), hex);
			if (!(want->have[al->algo] & (1u << k)))
				continue;
			compared++;
			if (w->len != p.pcr[k].len || memcmp(w->bytes, p.pcr[k].bytes, w->len)) {
				char wh[2 * VG_HASH_MAX_DIGEST + 1];

				vg_hex_encode(w->bytes, w->len, wh);
				fprintf(stderr, "vigil log: PCR-%02u %s: expected %s, the log replays "
					"to %s\n", k, vg_hash_name(p.algo), wh, hex);
				rc = EXIT_NOTVERIFIED;
			}
		}
	}
	if (banks) {
		for (unsigned int i = 0; i < VG_HASH__LAST; i++)
			if (banks & (1u << i))
				cli_file_err(argv[optind], "the log has no %s digests", vg_hash_name(i));
		goto out;
	}
	if (have_want && !compared) {
		cli_err("--pcrs: no value for a bank this log has");
		goto out;
	}
	if (rc != EXIT_NOTVERIFIED)
		rc = EXIT_OK;
	if (jp) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "log", cli_json_path(argv[optind]));
		json_object_object_add(j, "compared", json_object_new_boolean(have_want));
		json_object_object_add(j, "result", json_object_new_string(
			!have_want ? "replayed" : rc == EXIT_OK ? "match" : "mismatch"));
		json_object_object_add(j, "pcrs", jp);
		jp = NULL;
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_err("writing the output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
out:
	json_object_put(jp);
	vg_eventlog_free(log);
	free(want);
	return rc;
}

static const struct cli_verb verbs[] = {
	{ "show", boot_show },
	{ "replay", boot_replay },
};

int cmd_log_boot(int argc, char **argv)
{
	int rc = cli_verb_main(verbs, CLI_NVERBS(verbs), help, argc, argv);

	if (rc < 0) {
		cli_err("'%s' is not a boot log command (show, replay)", argv[1]);
		rc = EXIT_ERROR;
	}
	return rc;
}
