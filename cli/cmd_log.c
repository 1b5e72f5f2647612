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
#include "vigil/imalog.h"
#include "vigil/outfile.h"
#include "vigil/pcrbank.h"
#include "vigil/tpm.h"
#include "tcti.h"

static const char help[] =
	"usage: vigil log show [--format ascii|binary|json] FILE\n"
	"       vigil log replay [--bank ALGO]... [--pcrs [ALGO,]FILE]... [--tpm[=TCTI]]\n"
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
	"convert  ascii to binary or binary to ascii (default: the other one)\n"
	"  -t, --to ascii|binary\n"
	"  -b, --bank ALGO       template digest bank of the output (binary: the\n"
	"                        list binary_runtime_measurements_ALGO would hold)\n"
	"  -o, --output OUT      write OUT (atomically) instead of stdout\n"
	"Exit status: 0 ok / matches, 1 PCR mismatch or an entry whose template\n"
	"digest does not match its data, 2 malformed input or error.\n";

struct input {
	uint8_t *raw;
	size_t raw_len;
	bool mapped;
	struct vg_imalog_buf conv;	/* ascii converted to binary */
	const uint8_t *buf;
	size_t len;
	unsigned int algo;
	bool ascii;
};

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

static void release(struct input *in)
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
static int load(const char *path, struct input *in)
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
		release(in);
		return EXIT_ERROR;
	}
	return 0;
}


/* NULL, "-", /dev/stdout: standard output; a fifo or device in place (cli_write_out) */
static int write_out(const char *out, const uint8_t *data, size_t len)
{
	return cli_write_out(out, data, len, 0644, VG_OUTFILE_STREAM) < 0 ? EXIT_ERROR : 0;
}

static json_object *hexstr(const uint8_t *p, size_t n)
{
	char *h = malloc(2 * n + 1);
	json_object *o;

	if (!h)
		return NULL;
	vg_hex_encode(p, n, h);
	o = json_object_new_string(h);
	free(h);
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
	json_object_object_add(o, "template_hash", hexstr(e->digest.bytes, e->digest.len));
	json_object_object_add(o, "template_name", json_object_new_string_len(e->name, (int)e->name_len));
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
				json_object_object_add(fo, "digest", hexstr(d, l));
				if (f->id == VG_IMAF_D_NGV2)
					json_object_object_add(fo, "type", json_object_new_string_len(
						(const char *)f->data, (int)strcspn((const char *)f->data, ":")));
			}
			break;
		case VG_IMAF_N:
		case VG_IMAF_N_NG:
		case VG_IMAF_XATTRNAMES: {
			const uint8_t *nul = f->len ? memchr(f->data, '\0', f->len) : NULL;

			json_object_object_add(fo, "value", json_object_new_string_len(
				(const char *)f->data, (int)(nul ? (size_t)(nul - f->data) : f->len)));
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
			json_object_object_add(fo, "hex", hexstr(f->data, f->len));
			break;
		}
		json_object_array_add(fa, fo);
	}
	json_object_object_add(o, "fields", fa);
	nb = vg_imalog_entry_bank_digests(e, banks, false, bd, NULL);
	for (int i = 0; i < nb; i++)
		json_object_object_add(dg, vg_hash_name(bd[i].algo), hexstr(bd[i].bytes, bd[i].len));
	json_object_object_add(o, "extends", dg);
	return o;
}

static int parse_algo_opt(const char *arg)
{
	return cli_parse_algo(arg);
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
			fputs(help, stdout);
			return EXIT_OK;
		default:
			fputs(help, stderr);
			return EXIT_ERROR;
		}
	}
	if (optind + 1 != argc) {
		cli_err("show takes one FILE");
		return EXIT_ERROR;
	}
	if (load(argv[optind], &in) != 0)
		return EXIT_ERROR;
	if (fmt == F_BINARY) {
		rc = write_out(NULL, in.buf, in.len);
		release(&in);
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
	release(&in);
	return rc;
}

struct expect {
	struct vg_pcr_values pv;
	uint32_t banks;
};

static int add_pcrs(struct expect *x, const char *arg)
{
	const char *comma = strchr(arg, ',');
	const char *path = arg;
	int algo = -1, r;
	struct vg_diag d = { 0 };
	uint8_t *text;
	size_t len;

	if (comma) {
		char name[32];
		size_t n = (size_t)(comma - arg);

		if (n < sizeof(name)) {
			memcpy(name, arg, n);
			name[n] = '\0';
			algo = vg_hash_by_name(name);
		}
		if (algo >= 0)
			path = comma + 1;
	}
	r = cli_read_file(path, CLI_SMALL_MAX, &text, &len);
	if (r < 0) {
		cli_read_err(path, r, CLI_SMALL_MAX);
		return -1;
	}
	r = vg_pcr_values_parse(&x->pv, (const char *)text, len, algo, &d);
	free(text);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg);
		return -1;
	}
	if (r == 0) {
		cli_file_err(path, "no PCR values");
		return -1;
	}
	return 0;
}

/*
 * The TPM's values of the PCRs the log extends, in every bank it has (or
 * those of @banks). Return: 0, or -1 (reported).
 */
static int read_tpm(const char *tcti, struct expect *x, uint32_t used, uint32_t banks)
{
	struct vg_tpm *t = NULL;
	struct vg_diag d = { 0 };
	uint32_t have;

	if (vg_tpm_open(vg_prog_tcti(tcti), &t, &d) < 0) {
		cli_err("TPM: %s", d.msg);
		return -1;
	}
	have = vg_tpm_banks(t);
	if (banks)
		have &= banks;
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(have & (1u << a)) || !vg_hash_available(a))
			continue;
		for (unsigned int pc = 0; pc < VG_PCR_COUNT; pc++) {
			if (!(used & (1u << pc)))
				continue;
			if (vg_tpm_pcr_read(t, pc, a, &x->pv.v[a][pc], &d) < 0) {
				cli_err("TPM: PCR %u %s: %s", pc, vg_hash_name(a), d.msg);
				vg_tpm_close(t);
				return -1;
			}
			x->pv.have[a] |= 1u << pc;
		}
	}
	vg_tpm_close(t);
	return 0;
}

/*
 * --state FILE: '# offset N', '# entries K' and 'PCR-NN ALGO:HEX' lines.
 * Return: 1 loaded, 0 no such file (start from zero), -1 (reported).
 */
static int load_state(const char *path, struct vg_pcr_values *st, size_t *off, uint64_t *entries)
{
	struct vg_diag d = { 0 };
	uint8_t *text;
	size_t len;
	char *s;
	int r = cli_read_file(path, CLI_SMALL_MAX, &text, &len);
	bool have_off = false, have_n = false;

	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		cli_read_err(path, r, CLI_SMALL_MAX);
		return -1;
	}
	r = vg_pcr_values_parse(st, (const char *)text, len, -1, &d);
	if (r >= 0) {
		text[len] = '\0';	/* read_all always leaves room */
		for (s = (char *)text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
			unsigned long long v;
			char *end;

			if (strncmp(s, "# offset ", 9) == 0 || strncmp(s, "# entries ", 10) == 0) {
				bool o = s[2] == 'o';

				errno = 0;
				v = strtoull(s + (o ? 9 : 10), &end, 10);
				if (errno || (*end != '\n' && *end != '\0'))
					break;
				if (o) {
					*off = (size_t)v;
					have_off = true;
				} else {
					*entries = v;
					have_n = true;
				}
			}
		}
	}
	free(text);
	if (r < 0 || !have_off || !have_n) {
		cli_file_err(path, "not a replay state (%s)", r < 0 ? d.msg : "no offset/entries line");
		return -1;
	}
	return 1;
}

static int save_state(const char *path, const struct vg_imalog_replay *rp, uint32_t banks,
		      uint32_t pcrs, size_t off, uint64_t entries)
{
	struct vg_imalog_buf b = { 0 };
	char *line = NULL;
	int n, rc;

	n = asprintf(&line, "# vigil log replay state (offset in the binary list)\n"
		     "# offset %zu\n# entries %" PRIu64 "\n", off, entries);
	if (n < 0)
		goto nomem;
	b.data = (uint8_t *)line;
	b.len = b.cap = (size_t)n;
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(banks & (1u << a)))
			continue;
		for (unsigned int pc = 0; pc < VG_PCR_COUNT; pc++) {
			char hex[2 * VG_HASH_MAX_DIGEST + 1], l[200];
			struct vg_digest v;
			uint8_t *nb;

			if (!(pcrs & (1u << pc)) || vg_imalog_replay_get(rp, pc, a, &v) < 0)
				continue;
			vg_hex_encode(v.bytes, v.len, hex);
			n = snprintf(l, sizeof(l), "PCR-%02u %s:%s\n", pc, vg_hash_name(a), hex);
			nb = realloc(b.data, b.len + (size_t)n);
			if (!nb)
				goto nomem;
			b.data = nb;
			memcpy(b.data + b.len, l, (size_t)n);
			b.len += (size_t)n;
		}
	}
	/* read back by the next replay: a regular file */
	rc = cli_write_out(path, b.data, b.len, 0644, 0) < 0 ? EXIT_ERROR : 0;
	free(b.data);
	return rc;
nomem:
	free(b.data);
	cli_err("out of memory");
	return EXIT_ERROR;
}

/* Every given value of a replayed PCR equals the replay? */
static bool matches(const struct vg_imalog_replay *rp, const struct expect *x, uint32_t used,
		    unsigned int *bad_pcr, unsigned int *bad_algo)
{
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(x->banks & (1u << a)))
			continue;
		for (unsigned int p = 0; p < VG_PCR_COUNT; p++) {
			struct vg_digest v;

			if (!(used & (1u << p)))
				continue;
			if (vg_imalog_replay_get(rp, p, a, &v) < 0 ||
			    memcmp(v.bytes, x->pv.v[a][p].bytes, v.len) != 0) {
				*bad_pcr = p;
				*bad_algo = a;
				return false;
			}
		}
	}
	return true;
}

static int log_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bank", required_argument, NULL, 'b' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "legacy-padded", no_argument, NULL, 'L' },
		{ "allow-prefix", no_argument, NULL, 'P' },
		{ "tpm", optional_argument, NULL, 'T' },
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct expect *x = calloc(1, sizeof(*x));
	struct vg_pcr_values *st = calloc(1, sizeof(*st));
	const char *statepath = NULL;
	bool have_state = false, boundary;
	uint64_t st_entries = 0;
	size_t st_off = 0;
	struct vg_imalog_replay *rp = NULL;
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };
	struct input in = { 0 };
	uint32_t banks = 0, used = 0;
	unsigned int flags = 0, bad_pcr = 0, bad_algo = 0;
	bool have_pcrs = false, allow_prefix = false, prefix = false, tpm = false;
	const char *tcti = NULL;
	uint64_t k = 0, n = 0;
	size_t k_off = 0;
	int c, r, rc = EXIT_ERROR;
	const char *path;

	if (!x || !st) {
		cli_err("out of memory");
		free(x);
		free(st);
		return EXIT_ERROR;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, "b:p:LPs:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			r = parse_algo_opt(optarg);
			if (r < 0)
				goto out;
			banks |= 1u << r;
			break;
		case 'p':
			if (add_pcrs(x, optarg) < 0)
				goto out;
			have_pcrs = true;
			break;
		case 'L':
			flags |= VG_REPLAY_PADDED_SHA1;
			break;
		case 'P':
			allow_prefix = true;
			break;
		case 'T':
			tpm = true;
			tcti = optarg;
			have_pcrs = true;
			break;
		case 's':
			statepath = optarg;
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
	if (optind + 1 != argc) {
		cli_err("replay takes one FILE");
		goto out;
	}
	path = argv[optind];
	if (load(path, &in) != 0)
		goto out;
	if (statepath) {
		r = load_state(statepath, st, &st_off, &st_entries);
		if (r < 0)
			goto out;
		have_state = r > 0;
	}
	/* which PCRs the list extends: those are compared */
	boundary = st_off == 0 && st_entries == 0;
	vg_imalog_parser_init(&p, in.buf, in.len, in.algo);
	while (vg_imalog_parser_next(&p, &e, NULL) == 1) {
		used |= 1u << e.pcr;
		if (have_state && p.off == st_off) {
			if (p.index != st_entries) {
				cli_file_err(path, "--state: offset %zu is entry %" PRIu64 ", the state says %"
					     PRIu64 " (another list?)", st_off, p.index, st_entries);
				goto out;
			}
			boundary = true;
		}
	}
	if (have_state && !boundary) {
		cli_file_err(path, "--state: offset %zu is not an entry boundary of this list "
			     "(shorter, or another list)", st_off);
		goto out;
	}
	if (have_state)
		for (unsigned int a = 0; a < VG_HASH__LAST; a++)
			if (st->have[a])
				banks |= 1u << a;
	if (tpm && read_tpm(tcti, x, used, banks) < 0)
		goto out;
	for (unsigned int a = 0; a < VG_HASH__LAST; a++)
		if (x->pv.have[a])
			x->banks |= 1u << a;
	if (have_pcrs && !x->banks && used) {
		cli_err("no PCR values to compare with (no bank in common)");
		goto out;
	}
	if (!banks && !x->banks)
		banks = 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256;
	banks |= x->banks;
	for (unsigned int a = 0; a < VG_HASH__LAST; a++)
		if (x->banks & (1u << a) && !vg_hash_available(a)) {
			cli_err("bank %s: OpenSSL here cannot compute it", vg_hash_name(a));
			goto out;
		}
	if (vg_imalog_replay_new(banks, flags, &rp, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	if (have_state) {
		for (unsigned int a = 0; a < VG_HASH__LAST; a++)
			for (unsigned int pc = 0; pc < VG_PCR_COUNT; pc++)
				if (st->have[a] & (1u << pc) && vg_imalog_replay_set(rp, pc, &st->v[a][pc]) < 0) {
					cli_file_err(statepath, "PCR-%02u %s cannot be restored", pc,
						     vg_hash_name(a));
					goto out;
				}
		uint32_t any = 0;

		for (unsigned int a = 0; a < VG_HASH__LAST; a++)
			any |= st->have[a];
		for (unsigned int a = 0; a < VG_HASH__LAST; a++)
			if (banks & (1u << a) && any && !st->have[a]) {
				cli_file_err(statepath, "has no %s values: replay that bank from the start",
					     vg_hash_name(a));
				goto out;
			}
	}
	if (have_pcrs) {
		for (unsigned int a = 0; a < VG_HASH__LAST; a++)
			for (unsigned int pc = 0; pc < VG_PCR_COUNT; pc++)
				if (x->banks & (1u << a) && used & (1u << pc) &&
				    !(x->pv.have[a] & (1u << pc))) {
					cli_err("--pcrs: no value for PCR-%02u in bank %s", pc,
						vg_hash_name(a));
					goto out;
				}
		prefix = used == 0 || matches(rp, x, used, &bad_pcr, &bad_algo);
	}
	vg_imalog_parser_init(&p, in.buf, in.len, in.algo);
	p.off = st_off;
	p.index = st_entries;
	n = st_entries;
	k = st_entries;
	while ((r = vg_imalog_parser_next(&p, &e, &d)) == 1) {
		r = vg_imalog_replay_entry(rp, &e, p.index - 1, &d);
		if (r < 0) {
			cli_file_err(path, "%s", d.msg);
			rc = r == -EILSEQ ? EXIT_NOTVERIFIED : EXIT_ERROR;
			goto out;
		}
		n++;
		if (have_pcrs && matches(rp, x, used, &bad_pcr, &bad_algo)) {
			prefix = true;
			k = n;
			k_off = p.off;
		}
	}
	if (r < 0) {
		cli_file_err(path, "%s", d.msg);
		goto out;
	}
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(banks & (1u << a)))
			continue;
		for (unsigned int pc = 0; pc < VG_PCR_COUNT; pc++) {
			struct vg_digest v;
			char hex[2 * VG_HASH_MAX_DIGEST + 1];

			if (!(used & (1u << pc)) || vg_imalog_replay_get(rp, pc, a, &v) < 0)
				continue;
			vg_hex_encode(v.bytes, v.len, hex);
			printf("PCR-%02u %s:%s\n", pc, vg_hash_name(a), hex);
		}
	}
	rc = EXIT_OK;
	if (!have_pcrs)
		goto out;
	if (matches(rp, x, used, &bad_pcr, &bad_algo)) {
		fprintf(stderr, "vigil log: ");
		cli_put_path(stderr, path);
		fprintf(stderr, ": matches the PCRs (%" PRIu64 " entries)\n", n);
	} else if (prefix && allow_prefix) {
		fprintf(stderr, "vigil log: ");
		cli_put_path(stderr, path);
		fprintf(stderr, ": the PCRs match the first %" PRIu64 " of %" PRIu64 " entries "
			"(the log runs ahead of them)\n", k, n);
	} else {
		struct vg_digest v = { 0 };
		char got[2 * VG_HASH_MAX_DIGEST + 1], want[2 * VG_HASH_MAX_DIGEST + 1];

		(void)vg_imalog_replay_get(rp, bad_pcr, bad_algo, &v);
		vg_hex_encode(v.bytes, v.len, got);
		vg_hex_encode(x->pv.v[bad_algo][bad_pcr].bytes, v.len, want);
		if (prefix)
			cli_file_err(path, "PCR mismatch: the PCRs match the log up to entry %" PRIu64
				     "; entry %" PRIu64 " at offset %zu is the first they do not "
				     "reflect (--allow-prefix accepts this)", k ? k - 1 : 0, k, k_off);
		else
			cli_file_err(path, "PCR mismatch: PCR-%02u %s replays to %s, expected %s; no "
				     "prefix of the log matches", bad_pcr, vg_hash_name(bad_algo),
				     got, want);
		rc = EXIT_NOTVERIFIED;
	}
out:
	if (rc == EXIT_OK && statepath && rp)
		rc = save_state(statepath, rp, banks, used | vg_imalog_replay_pcrs(rp), p.off, n);
	if (fflush(stdout) != 0 && rc == EXIT_OK) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
	vg_imalog_replay_free(rp);
	release(&in);
	free(x);
	free(st);
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
			bank = parse_algo_opt(optarg);
			if (bank < 0)
				return EXIT_ERROR;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return EXIT_OK;
		default:
			fputs(help, stderr);
			return EXIT_ERROR;
		}
	}
	if (optind + 1 != argc) {
		cli_err("convert takes one FILE");
		return EXIT_ERROR;
	}
	if (load(argv[optind], &in) != 0)
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
	release(&in);
	return rc;
}

int cmd_log(int argc, char **argv)
{
	if (argc < 2) {
		fputs(help, stderr);
		return EXIT_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "show") == 0)
		return log_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "replay") == 0)
		return log_replay(argc - 1, argv + 1);
	if (strcmp(argv[1], "convert") == 0)
		return log_convert(argc - 1, argv + 1);
	if (strcmp(argv[1], "boot") == 0)
		return cmd_log_boot(argc - 1, argv + 1);
	cli_err("'%s' is not a log command (show, replay, convert, boot)", argv[1]);
	return EXIT_ERROR;
}
