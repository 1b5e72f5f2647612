// SPDX-License-Identifier: MIT
/*
 * cmd_log.c - `vigil log show|replay|convert`: the kernel's measurement
 * list, binary or ascii (detected), printed, replayed into PCR values, or
 * converted.
 *
 *   show    [--format ascii|binary|json] FILE
 *   replay  [--bank ALGO]... [--pcrs [ALGO,]FILE]... [--tpm[=TCTI]]
 *           [--legacy-padded] [--allow-prefix] [--state FILE] FILE
 *   convert [--to ascii|binary] [--bank ALGO] [-o OUT] FILE
 *
 * Exit: 0 ok (replay with --pcrs: the log matches), 1 mismatch (PCRs, or
 * an entry whose template digest does not match its data), 2 malformed
 * input or operational error. Errors name the entry index and offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_log.h"
#include "verb.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"
#include "vigil/pcrbank.h"
#include "vigil/tpm.h"

const char cli_log_help[] =
	"usage: vigil log show [--format ascii|binary|json] FILE\n"
	"       vigil log replay [--bank ALGO]... [--pcrs [ALGO,]FILE]... [--tpm[=TCTI]] [--json]\n"
	"                        [--legacy-padded] [--allow-prefix] [--state FILE] FILE\n"
	"       vigil log convert [--to ascii|binary] [--bank ALGO] [-o OUT] FILE\n"
	"       vigil log boot show|replay ...   the TCG boot event log (vigil log boot --help)\n"
	"\n"
	"The kernel's IMA measurement list (binary_runtime_measurements[_ALGO] or\n"
	"ascii_runtime_measurements; the format is detected).\n"
	"\n"
	"show     print the list as the kernel's ascii list (byte for byte), as the\n"
	"         binary list, or as JSON (one object per entry, with the template\n"
	"         digest each bank extends)\n"
	"replay   check every entry's template digest against its data and print the\n"
	"         PCR values the list gives, 'PCR-NN ALGO:HEX' (banks sha1 and sha256\n"
	"         unless --bank); with --pcrs compare them with the given values\n"
	"         (lines 'PCR-NN HEX' as evmctl's --pcrs, or 'PCR-NN ALGO:HEX')\n"
	"  -b, --bank ALGO       replay this bank (repeatable)\n"
	"  -p, --pcrs [ALGO,]FILE  expected PCR values (repeatable)\n"
	"  -T, --tpm[=TCTI]      expected values: the TPM's PCRs, every bank it has\n"
	"                        (TCTI default: $VIGIL_TCTI, else device:/dev/tpmrm0)\n"
	"  -L, --legacy-padded   kernels < 5.8: the sha1 template digest, zero-padded,\n"
	"                        was extended into every other bank\n"
	"  -P, --allow-prefix    accept a log that runs ahead of the PCRs (entries\n"
	"                        appended after the PCRs were read)\n"
	"  -s, --state FILE      incremental: resume from the offset, entry count and\n"
	"                        PCR values saved in FILE (when it exists: entries\n"
	"                        before the offset are not checked again), and save\n"
	"                        the state at the end of the list there on success\n"
	"  -j, --json            the outcome as one JSON object (log, entries, compared,\n"
	"                        result, pcrs [{pcr, bank, value}], mismatch)\n"
	"convert  ascii to binary or binary to ascii (default: the other one)\n"
	"  -t, --to ascii|binary\n"
	"  -b, --bank ALGO       template digest bank of the output (binary: the\n"
	"                        list binary_runtime_measurements_ALGO would hold)\n"
	"  -o, --output OUT      write OUT (atomically) instead of stdout\n"
	"Exit status: 0 ok / matches, 1 PCR mismatch or an entry whose template\n"
	"digest does not match its data, 2 malformed input or error.\n";


/*
 * A regular, non-empty file is mapped read-only (large lists: no copy, no
 * zeroed pages). Return: 0, -ENODEV (not mappable: read it), or -errno.
 */
static int map_file(const char *path, uint8_t **ret, size_t *ret_len)
{
	struct stat st;
	void *p;
	int fd;

	if (strcmp(path, "-") == 0)
		return -ENODEV;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return -ENODEV;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -ENODEV;
	*ret = p;
	*ret_len = (size_t)st.st_size;
	return 0;
}

void cli_log_release(struct input *in)
{
	if (in->mapped)
		munmap(in->raw, in->raw_len);
	else
		free(in->raw);
	in->raw = NULL;
	in->mapped = false;
	vg_imalog_buf_release(&in->conv);
}

/* Read and decode the whole list. Return: 0, or EXIT_ERROR (reported). */
int cli_log_load(const char *path, struct input *in)
{
	struct vg_diag d = { 0 };
	long n;
	int r;

	memset(in, 0, sizeof(*in));
	r = map_file(path, &in->raw, &in->raw_len);
	if (r == 0)
		in->mapped = true;
	else if (r == -ENODEV)
		r = cli_read_file(path, CLI_LOG_MAX, &in->raw, &in->raw_len);
	if (r < 0) {
		cli_read_err(path, r, CLI_LOG_MAX);
		return EXIT_ERROR;
	}
	in->ascii = vg_imalog_is_ascii(in->raw, in->raw_len);
	n = vg_imalog_load(in->raw, in->raw_len, &in->conv, &in->buf, &in->len, &in->algo, &d);
	if (n < 0) {
		cli_file_err(path, "%s", d.msg);
		cli_log_release(in);
		return EXIT_ERROR;
	}
	return 0;
}


/* NULL, "-", /dev/stdout: standard output; a fifo or device in place (cli_write_out) */
static int write_out(const char *out, const uint8_t *data, size_t len)
{
	return cli_write_out(out, data, len, 0644, VG_OUTFILE_STREAM) < 0 ? EXIT_ERROR : 0;
}

/* @n bytes of a log field (a file name, a template name: the log's) as JSON text (cli_json_path). */
static json_object *json_field(const void *p, size_t n)
{
	char *s = strndup(p, n);
	json_object *o = s ? cli_json_path(s) : NULL;

	free(s);
	return o;
}

static json_object *entry_json(const struct vg_imalog_entry *e, uint64_t index)
{
	json_object *o = json_object_new_object(), *fa = json_object_new_array(),
		    *dg = json_object_new_object();
	struct vg_digest bd[VG_HASH__LAST];
	uint32_t banks = 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256;
	int nb;

	json_object_object_add(o, "index", json_object_new_int64((int64_t)index));
	json_object_object_add(o, "offset", json_object_new_int64((int64_t)e->offset));
	json_object_object_add(o, "pcr", json_object_new_int((int)e->pcr));
	json_object_object_add(o, "template_hash_algo",
			       json_object_new_string(vg_hash_name(e->digest.algo)));
	json_object_object_add(o, "template_hash", cli_json_hex(e->digest.bytes, e->digest.len));
	json_object_object_add(o, "template_name", json_field(e->name, e->name_len));
	json_object_object_add(o, "violation", json_object_new_boolean(e->violation));
	for (unsigned int i = 0; i < e->tmpl.nfields; i++) {
		const struct vg_imalog_field *f = &e->f[i];
		json_object *fo = json_object_new_object();
		const uint8_t *d;
		unsigned int a;
		size_t l;

		json_object_object_add(fo, "id", json_object_new_string(vg_imalog_field_name(f->id)));
		switch (f->id) {
		case VG_IMAF_D:
		case VG_IMAF_D_NG:
		case VG_IMAF_D_NGV2:
		case VG_IMAF_D_MODSIG:
			if (vg_imalog_field_digest(f, &a, &d, &l, NULL) == 0) {
				json_object_object_add(fo, "algo", json_object_new_string(vg_hash_name(a)));
				json_object_object_add(fo, "digest", cli_json_hex(d, l));
				if (f->id == VG_IMAF_D_NGV2)
					json_object_object_add(fo, "type", json_field(f->data,
						strcspn((const char *)f->data, ":")));
			}
			break;
		case VG_IMAF_N:
		case VG_IMAF_N_NG:
		case VG_IMAF_XATTRNAMES: {
			const uint8_t *nul = f->len ? memchr(f->data, '\0', f->len) : NULL;

			json_object_object_add(fo, "value", json_field(f->data,
				nul ? (size_t)(nul - f->data) : f->len));
			break;
		}
		case VG_IMAF_IUID:
		case VG_IMAF_IGID:
		case VG_IMAF_IMODE:
			if (f->len == 4)
				json_object_object_add(fo, "value", json_object_new_int64(
					(int64_t)((uint32_t)f->data[0] | (uint32_t)f->data[1] << 8 |
						  (uint32_t)f->data[2] << 16 | (uint32_t)f->data[3] << 24)));
			else if (f->len == 2)
				json_object_object_add(fo, "value",
						       json_object_new_int(f->data[0] | f->data[1] << 8));
			break;
		default:
			json_object_object_add(fo, "hex", cli_json_hex(f->data, f->len));
			break;
		}
		json_object_array_add(fa, fo);
	}
	json_object_object_add(o, "fields", fa);
	nb = vg_imalog_entry_bank_digests(e, banks, false, bd, NULL);
	for (int i = 0; i < nb; i++)
		json_object_object_add(dg, vg_hash_name(bd[i].algo), cli_json_hex(bd[i].bytes, bd[i].len));
	json_object_object_add(o, "extends", dg);
	return o;
}

static int log_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum { F_ASCII, F_BINARY, F_JSON } fmt = F_ASCII;
	struct vg_imalog_buf out = { 0 };
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct input in;
	int c, r, rc = EXIT_OK;

	optind = 0;
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "ascii") == 0)
				fmt = F_ASCII;
			else if (strcmp(optarg, "binary") == 0)
				fmt = F_BINARY;
			else if (strcmp(optarg, "json") == 0)
				fmt = F_JSON;
			else {
				cli_err("--format '%s': ascii, binary or json", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'h':
			fputs(cli_log_help, stdout);
			return EXIT_OK;
		default:
			fputs(cli_log_help, stderr);
			return EXIT_ERROR;
		}
	}
	if (optind + 1 != argc) {
		cli_err("show takes one FILE");
		return EXIT_ERROR;
	}
	if (cli_log_load(argv[optind], &in) != 0)
		return EXIT_ERROR;
	if (fmt == F_BINARY) {
		rc = write_out(NULL, in.buf, in.len);
		cli_log_release(&in);
		return rc;
	}
	vg_imalog_parser_init(&p, in.buf, in.len, in.algo);
	if (fmt == F_JSON)
		fputs("[", stdout);
	while ((r = vg_imalog_parser_next(&p, &e, NULL)) == 1) {
		if (fmt == F_JSON) {
			json_object *o = entry_json(&e, p.index - 1);

			printf("%s\n%s", p.index > 1 ? "," : "",
			       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
			continue;
		}
		if (vg_imalog_format_ascii(&e, &out) < 0) {
			cli_err("out of memory");
			rc = EXIT_ERROR;
			break;
		}
		if (out.len >= (1u << 16)) {
			if (write_out(NULL, out.data, out.len) != 0) {
				rc = EXIT_ERROR;
				break;
			}
			out.len = 0;
		}
	}
	if (fmt == F_JSON)
		fputs("\n]\n", stdout);
	if (rc == EXIT_OK)
		rc = write_out(NULL, out.data, out.len);
	vg_imalog_buf_release(&out);
	cli_log_release(&in);
	return rc;
}

static int log_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "bank", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct vg_imalog_buf out = { 0 };
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct input in;
	const char *output = NULL;
	int to = -1, bank = -1, c, r, rc = EXIT_OK;

	optind = 0;
	while ((c = getopt_long(argc, argv, "t:b:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (strcmp(optarg, "ascii") == 0)
				to = 0;
			else if (strcmp(optarg, "binary") == 0)
				to = 1;
			else {
				cli_err("--to '%s': ascii or binary", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'b':
			bank = cli_parse_algo(optarg);
			if (bank < 0)
				return EXIT_ERROR;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(cli_log_help, stdout);
			return EXIT_OK;
		default:
			fputs(cli_log_help, stderr);
			return EXIT_ERROR;
		}
	}
	if (optind + 1 != argc) {
		cli_err("convert takes one FILE");
		return EXIT_ERROR;
	}
	if (cli_log_load(argv[optind], &in) != 0)
		return EXIT_ERROR;
	if (to < 0)
		to = in.ascii ? 1 : 0;
	vg_imalog_parser_init(&p, in.buf, in.len, in.algo);
	while ((r = vg_imalog_parser_next(&p, &e, NULL)) == 1) {
		struct vg_diag d = { 0 };

		if (bank >= 0 && (unsigned int)bank != in.algo) {
			/* the template digest another bank's list shows (violations stay zero) */
			struct vg_digest nd = { .algo = (uint8_t)bank,
						.len = (uint8_t)vg_hash_size((unsigned int)bank) };

			if (!e.violation && vg_imalog_template_digest(&e, (unsigned int)bank, &nd, &d) < 0) {
				cli_file_err(argv[optind], "entry %" PRIu64 ": %s", p.index - 1, d.msg);
				rc = EXIT_ERROR;
				break;
			}
			e.digest = nd;
		}
		if ((to ? vg_imalog_encode(&e, &e.digest, &out) : vg_imalog_format_ascii(&e, &out)) < 0) {
			cli_err("out of memory");
			rc = EXIT_ERROR;
			break;
		}
	}
	if (rc == EXIT_OK)
		rc = write_out(output, out.data, out.len);
	vg_imalog_buf_release(&out);
	cli_log_release(&in);
	return rc;
}

static const struct cli_verb verbs[] = {
	{ "show", log_show },
	{ "replay", cli_log_replay },
	{ "convert", log_convert },
	{ "boot", cmd_log_boot },
};

int cmd_log(int argc, char **argv)
{
	int rc = cli_verb_main(verbs, CLI_NVERBS(verbs), cli_log_help, argc, argv);

	if (rc < 0) {
		cli_err("'%s' is not a log command (show, replay, convert, boot)", argv[1]);
		rc = EXIT_ERROR;
	}
	return rc;
}
