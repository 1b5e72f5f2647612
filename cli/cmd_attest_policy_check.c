// SPDX-License-Identifier: MIT
/*
 * cmd_attest_policy_check.c - `vigil attest policy check`: a measurement
 * list (binary or ascii), a boot event log or both judged offline against
 * a reference policy (DSSE-checked with --policy-key), as a verifier's
 * round judges them: every failure listed, in text or --json.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "attest_sig.h"
#include "cli.h"
#include "cmd_attest.h"
#include "cmd_trust.h"
#include "vigil/attest.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/attest_boot.h"
#include "vigil/trust_boot.h"
#include "vigil/dsse.h"
#include "vigil/eventlog.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"
#include "vigil/trust.h"

static int load_policy_file(const char *path, const struct vg_dsse_keys *keys,
			    struct vg_refpolicy **ret)
{
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r;

	if (cli_attest_read(path, &b, &n) < 0)
		return -1;
	r = keys ? vg_refpolicy_load_dsse(keys, b, n, ret, &d) : vg_refpolicy_load(b, n, ret, &d);
	free(b);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg);
		return r == -EKEYREJECTED ? 1 : -1;
	}
	return 0;
}

static void print_failure(const struct vg_attest_verdict *f)
{
	printf("FAIL %s", vg_attest_fail_id(f->fail));
	if (f->entry >= 0)
		printf(" entry=%" PRId64, f->entry);
	if (f->path[0]) {
		fputs(" path=", stdout);
		cli_put_path(stdout, f->path);
	}
	if (f->digest[0])
		printf(" digest=%s", f->digest);
	printf(": %s\n", f->msg);
}

/* One FAIL line per listed failure, then, past one, how many there were. */
static void print_verdict(const struct vg_attest_verdict *v)
{
	uint64_t count = vg_attest_verdict_count(v);
	size_t listed = vg_attest_verdict_listed(v);

	for (size_t i = 0; i < listed; i++)
		print_failure(vg_attest_verdict_nth(v, i));
	if (count > 1)
		printf("%" PRIu64 " failures%s\n", count, count > listed ? ", the first ones listed" : "");
}

static json_object *failure_json(const struct vg_attest_verdict *f)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "failure", json_object_new_string(vg_attest_fail_id(f->fail)));
	if (f->entry >= 0)
		json_object_object_add(j, "entry", json_object_new_int64(f->entry));
	if (f->path[0])
		json_object_object_add(j, "path", cli_json_path(f->path));
	if (f->digest[0])
		json_object_object_add(j, "digest", json_object_new_string(f->digest));
	json_object_object_add(j, "message", cli_json_path(f->msg));
	return j;
}

/*
 * check --json: the verdict as one object (docs/schemas/attest-policy-check.schema.json):
 * {result: "ok", entries} | {result: "fail", failure, entry?, path?, digest?,
 * message, failure_count, failures: [{failure, entry?, path?, digest?,
 * message}, ...]} (the first failure's fields at the top, as before; the
 * list bounded by VG_ATTEST_FAILURES_MAX, the count not) |
 * {result: "policy-rejected", message}; @v NULL unless "fail".
 */
static void put_check_json(const char *result, uint64_t entries,
			   const struct vg_attest_verdict *v, const char *msg)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "result", json_object_new_string(result));
	if (strcmp(result, "ok") == 0)
		json_object_object_add(j, "entries", json_object_new_int64((int64_t)entries));
	if (v) {
		size_t listed = vg_attest_verdict_listed(v);
		json_object *arr = json_object_new_array();

		json_object_object_add(j, "failure", json_object_new_string(vg_attest_fail_id(v->fail)));
		if (v->entry >= 0)
			json_object_object_add(j, "entry", json_object_new_int64(v->entry));
		if (v->path[0])
			json_object_object_add(j, "path", cli_json_path(v->path));
		if (v->digest[0])
			json_object_object_add(j, "digest", json_object_new_string(v->digest));
		msg = v->msg;
		json_object_object_add(j, "failure_count",
				       json_object_new_int64((int64_t)vg_attest_verdict_count(v)));
		for (size_t i = 0; i < listed; i++)
			json_object_array_add(arr, failure_json(vg_attest_verdict_nth(v, i)));
		json_object_object_add(j, "failures", arr);
	}
	if (msg)
		json_object_object_add(j, "message", cli_json_path(msg));
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

/*
 * An ascii list converted line by line into @out, as far as its lines
 * convert: Keylime judges a line that does not parse as a failing entry,
 * so this is a verdict (log.malformed at that entry, ending the
 * judgement as an altered entry does), not a bad file. Empty lines are
 * skipped, as Keylime does. Return: 0 all of it; 1 stopped at entry
 * *@bad (@d says why); -ENOMEM.
 */
static int ascii_prefix(const uint8_t *raw, size_t rl, struct vg_imalog_buf *out,
			unsigned int *algo, uint64_t *bad, struct vg_diag *d)
{
	uint64_t n = 0;
	size_t line = 0;
	bool have_algo = false;

	*algo = VG_HASH_SHA1;
	while (rl) {
		const uint8_t *nl = memchr(raw, '\n', rl);
		size_t ll = nl ? (size_t)(nl - raw) + 1 : rl;
		unsigned int a;
		long r;

		line++;
		if (ll > 1 || (ll == 1 && raw[0] != '\n')) {
			r = vg_imalog_from_ascii((const char *)raw, ll, out, &a, d);
			if (r == -ENOMEM)
				return -ENOMEM;
			if (r >= 0 && have_algo && a != *algo) {
				vg_diag_set(d, -EBADMSG, "its template digest is not of the bank of the "
					    "lines before");
				r = -EBADMSG;
			}
			if (r < 0) {
				char m[sizeof(d->msg)];

				/* the converter counts the one line it was given */
				snprintf(m, sizeof(m), "%s",
					 strncmp(d->msg, "line 1: ", 8) == 0 ? d->msg + 8 : d->msg);
				vg_diag_set(d, -EBADMSG, "line %zu: %s", line, m);
				*bad = n;
				return 1;
			}
			if (r > 0 && !have_algo) {
				*algo = a;
				have_algo = true;
			}
			n += (uint64_t)r;
		}
		raw += ll;
		rl -= ll;
	}
	return 0;
}

int cli_attest_policy_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "policy-key", required_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'j' },
		{ "trusted", required_argument, NULL, 'T' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "boot-log", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool json = false;
	const char *pf = NULL, *trusted = NULL, *boot = NULL, *lf;
	struct cli_keyargs ka = { 0 };
	struct vg_hmac_key hk = { 0 };
	struct vg_trust_db *tdb = NULL;
	struct vg_trust_index *idx = NULL;
	struct vg_trust_boot *tboot = NULL;	/* its boot references: from_archive */
	struct vg_dsse_keys *keys = NULL;
	struct vg_refpolicy *p = NULL;
	struct vg_imalog_buf scratch = { 0 };
	struct vg_attest_logstate st;
	struct vg_attest_verdict v;
	struct vg_diag d = { 0 };
	const uint8_t *buf;
	uint8_t *raw = NULL;
	size_t rl, len;
	unsigned int algo;
	uint64_t bad = 0;
	bool stopped = false;
	int c, r, rc = EXIT_ERROR;

	vg_attest_verdict_init(&v);
	while ((c = getopt_long(argc, argv, "p:K:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pf = optarg; break;
		case 'j': json = true; break;
		case 'T': trusted = optarg; break;
		case 'B': boot = optarg; break;
		case 'H': ka.hmac_key = optarg; break;
		case 'K':
			if (cli_attest_policy_key_add(&keys, optarg) < 0)
				goto out;
			break;
		case 'h': fputs(cli_attest_help, stdout); rc = EXIT_OK; goto out;
		default: goto out;
		}
	}
	if (!pf || optind < argc - 1 || (optind == argc && !boot)) {
		cli_err("policy check needs --policy FILE and one LOG, --boot-log FILE or both");
		goto out;
	}
	lf = optind < argc ? argv[optind] : NULL;
	if (!trusted && ka.hmac_key) {
		cli_err("--hmac-key needs --trusted DB");
		goto out;
	}
	if (trusted) {
		/* the checker's own archive database: names the package of a digest not allowed */
		if (trust_load_key(&ka, NULL, &hk) < 0)
			goto out;
		if (vg_trust_db_open(trusted, hk.key, hk.len, &tdb, &d) < 0 ||
		    vg_trust_index_load(tdb, vg_trust_db_algo_pick(tdb, VG_HASH_SHA256), &idx, &d) < 0 ||
		    vg_trust_boot_load(tdb, &tboot, &d) < 0) {
			cli_file_err(trusted, "%s", d.msg);
			goto out;
		}
		vg_trust_db_free(tdb);
		tdb = NULL;
	}
	r = load_policy_file(pf, keys, &p);
	if (r > 0) {
		rc = EXIT_NOTVERIFIED;
		if (json)
			put_check_json("policy-rejected", 0, NULL,
				       "the policy's signature does not verify with --policy-key");
	}
	if (r != 0)
		goto out;
	if (boot && !vg_refpolicy_mbpolicy(p)) {
		cli_file_err(pf, "--boot-log: the policy has no measured_boot section");
		goto out;
	}
	vg_refpolicy_set_archive(p, idx);
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	vg_attest_verdict_init(&v);
	r = 0;
	if (lf) {
		if (cli_attest_read(lf, &raw, &rl) < 0)
			goto out;
		if (vg_imalog_is_ascii(raw, rl)) {
			r = ascii_prefix(raw, rl, &scratch, &algo, &bad, &d);
			if (r < 0) {
				cli_err("out of memory");
				goto out;
			}
			stopped = r == 1;
			buf = scratch.data ? scratch.data : (const uint8_t *)"";
			len = scratch.len;
		} else if (vg_imalog_load(raw, rl, &scratch, &buf, &len, &algo, &d) < 0) {
			cli_file_err(lf, "%s", d.msg);
			goto out;
		}
		r = vg_attest_log_check(p, buf, len, algo, VG_ATTEST_PCR_IMA, NULL, &st, &v);
	}
	if (r >= 0 && boot) {
		/* the boot log's events, after the list's failures (as a verifier's round) */
		uint8_t *bb;
		size_t bl;
		int rb;

		if (cli_attest_read(boot, &bb, &bl) < 0)
			goto out;
		/* from_archive by the --trusted database; announced: nothing offline */
		rb = vg_mbpolicy_check_buf_refs(vg_refpolicy_mbpolicy(p), bb, bl,
						&(struct vg_mbrefs){ .archive = tboot }, &v);
		free(bb);
		r = rb < 0 ? rb : (r || rb);
	}
	if (r < 0) {
		cli_err("%s", strerror(-r));
		goto out;
	}
	if (stopped && (r == 0 || v.fail < VG_AF_LOG_MALFORMED || v.fail > VG_AF_LOG_ENTRY ||
			vg_attest_verdict_count(&v) == 0)) {
		/* the line that does not parse: a failing entry that ends the judgement */
		struct vg_attest_verdict f;

		vg_attest_verdict_init(&f);
		vg_attest_fail(&f, VG_AF_LOG_MALFORMED, "entry %" PRIu64 " does not parse: %s", bad,
			       d.msg);
		f.entry = (int64_t)bad;
		if (vg_attest_verdict_add(&v, &f) < 0) {
			cli_err("out of memory");
			goto out;
		}
		r = 1;
	}
	if (r == 1) {
		if (json)
			put_check_json("fail", 0, &v, NULL);
		else
			print_verdict(&v);
		rc = EXIT_NOTVERIFIED;
		goto out;
	}
	if (json)
		put_check_json("ok", st.entries, NULL, NULL);
	else if (lf)
		printf("OK %" PRIu64 " entries%s\n", st.entries, boot ? ", boot log" : "");
	else
		printf("OK boot log\n");
	rc = EXIT_OK;
out:
	vg_attest_verdict_release(&v);
	vg_imalog_buf_release(&scratch);
	vg_refpolicy_free(p);
	vg_trust_index_free(idx);
	vg_trust_boot_free(tboot);
	vg_trust_db_free(tdb);
	vg_hmac_key_wipe(&hk);
	vg_dsse_keys_free(keys);
	free(raw);
	return rc;
}
