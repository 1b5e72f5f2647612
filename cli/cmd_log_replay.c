// SPDX-License-Identifier: MIT
/*
 * cmd_log_replay.c - `vigil log replay`: check every entry's template
 * digest against its data and replay the list into PCR values; compare
 * them with expected values (--pcrs files, or the TPM's own PCRs), and
 * resume from a saved state (--state). Reading and decoding the list is
 * cmd_log.c's (cli_log_load).
 *
 * --json: the outcome as one JSON object (docs/schemas/log-replay.schema.json),
 * printed when the exit status is 0 or 1; on 2 only stderr says why.
 *
 * Exit: 0 the log matches (or no values to compare), 1 mismatch, 2
 * malformed input or operational error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_log.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"
#include "vigil/pcrbank.h"
#include "vigil/tpm.h"
#include "tcti.h"
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

/* --json: the members every outcome has (nothing without --json) */
static void json_result(json_object *j, const char *path, uint64_t entries, bool compared,
			const char *result)
{
	if (!j)
		return;
	json_object_object_add(j, "log", cli_json_path(path));
	json_object_object_add(j, "entries", json_object_new_int64((int64_t)entries));
	json_object_object_add(j, "compared", json_object_new_boolean(compared));
	json_object_object_add(j, "result", json_object_new_string(result));
}

/* --json: one replayed value */
static void json_pcr(json_object *arr, unsigned int pc, unsigned int algo, const char *hex)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "pcr", json_object_new_int((int)pc));
	json_object_object_add(o, "bank", json_object_new_string(vg_hash_name(algo)));
	json_object_object_add(o, "value", json_object_new_string(hex));
	json_object_array_add(arr, o);
}

int cli_log_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bank", required_argument, NULL, 'b' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "legacy-padded", no_argument, NULL, 'L' },
		{ "allow-prefix", no_argument, NULL, 'P' },
		{ "tpm", optional_argument, NULL, 'T' },
		{ "state", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
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
	json_object *j = NULL, *jp = NULL;

	if (!x || !st) {
		cli_err("out of memory");
		free(x);
		free(st);
		return EXIT_ERROR;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, "b:p:LPs:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (!j && (!(j = json_object_new_object()) ||
				   !(jp = json_object_new_array()))) {
				cli_err("out of memory");
				goto out;
			}
			break;
		case 'b':
			r = cli_parse_algo(optarg);
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
			fputs(cli_log_help, stdout);
			rc = EXIT_OK;
			goto out;
		default:
			fputs(cli_log_help, stderr);
			goto out;
		}
	}
	if (optind + 1 != argc) {
		cli_err("replay takes one FILE");
		goto out;
	}
	path = argv[optind];
	/*
	 * A live list grows while it is read (under a policy that measures
	 * what root reads, this very command's reads add to it): the TPM's
	 * PCRs are read first, so that the list read after them holds at
	 * least what they reflect (--allow-prefix accepts the rest)
	 */
	if (tpm && read_tpm(tcti, x, (1u << VG_PCR_COUNT) - 1, 0) < 0)
		goto out;
	if (cli_log_load(path, &in) != 0)
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
	/* only the PCRs the list extends, in the banks the state has (if any), are compared */
	for (unsigned int a = 0; tpm && a < VG_HASH__LAST; a++)
		x->pv.have[a] &= banks && !(banks & (1u << a)) ? 0 : used;
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
			json_result(j, path, n, have_pcrs, "invalid-entry");
			if (j)
				json_object_object_add(j, "error", cli_json_path(d.msg));
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
			if (j)
				json_pcr(jp, pc, a, hex);
			else
				printf("PCR-%02u %s:%s\n", pc, vg_hash_name(a), hex);
		}
	}
	rc = EXIT_OK;
	if (!have_pcrs) {
		json_result(j, path, n, false, "replayed");
		goto out;
	}
	if (matches(rp, x, used, &bad_pcr, &bad_algo)) {
		json_result(j, path, n, true, "match");
		fprintf(stderr, "vigil log: ");
		cli_put_path(stderr, path);
		fprintf(stderr, ": matches the PCRs (%" PRIu64 " entries)\n", n);
	} else if (prefix && allow_prefix) {
		json_result(j, path, n, true, "prefix");
		if (j)
			json_object_object_add(j, "matched_entries", json_object_new_int64((int64_t)k));
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
		json_result(j, path, n, true, "mismatch");
		if (j && prefix) {
			json_object_object_add(j, "matched_entries", json_object_new_int64((int64_t)k));
			json_object_object_add(j, "first_unreflected_offset",
					       json_object_new_int64((int64_t)k_off));
		} else if (j) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "pcr", json_object_new_int((int)bad_pcr));
			json_object_object_add(m, "bank", json_object_new_string(vg_hash_name(bad_algo)));
			json_object_object_add(m, "value", json_object_new_string(got));
			json_object_object_add(m, "expected", json_object_new_string(want));
			json_object_object_add(j, "mismatch", m);
		}
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
	if (j && rc != EXIT_ERROR && json_object_object_get_ex(j, "result", NULL)) {
		json_object_object_add(j, "pcrs", jp);
		jp = NULL;
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(j);
	json_object_put(jp);
	if (fflush(stdout) != 0 && rc == EXIT_OK) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
	vg_imalog_replay_free(rp);
	cli_log_release(&in);
	free(x);
	free(st);
	return rc;
}