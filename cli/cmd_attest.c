// SPDX-License-Identifier: MIT
/*
 * cmd_attest.c - `vigil attest`: remote attestation from the operator's
 * side. Offline commands use libvigil's verifier core directly; the
 * others are a client of vigil-verifier's REST API (libcurl).
 *
 *   quote-check  verify tpm2-tools quote files (tpm2_quote -m/-s/-o) with an AK
 *   policy create|check|import   build, apply and convert reference policies
 *   policy set|get NAME          upload / fetch a named policy on the verifier
 *   add ID --agent URL [--policy NAME]   register an agent (credential activation)
 *   status [ID] [--history] [--json]     agent state and verdicts
 *   policy assign ID NAME        give an agent another policy (re-verifies from entry 0)
 *   reactivate ID                poll a failed agent again
 *   remove ID
 *
 * Exit: 0 ok/trusted, 1 not trusted (quote, policy or agent failed), 2
 * usage or operational error (verifier unreachable, bad file).
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

#include <curl/curl.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cli.h"
#include "vigil/attest.h"
#include "vigil/attest_boot.h"
#include "vigil/auth.h"
#include "vigil/dsse.h"
#include "vigil/eventlog.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"

static const char help[] =
	"usage: vigil attest quote-check --ak AK.pub (--msg MSG --sig SIG --pcrs PCRS |\n"
	"                                --keylime r<...>) --nonce HEX --pcr-list ALGO:N[,N...]\n"
	"       vigil attest policy create [--log LOG] [--tree DIR [--root PREFIX]]\n"
	"                                [--boot-log FILE [--boot-bank ALGO]]\n"
	"                                [--algo ALGO] [--exclude REGEX]... [--key PEM]... [-o OUT]\n"
	"       vigil attest policy check --policy FILE [--policy-key PEM]... LOG\n"
	"       vigil attest policy import FILE [--policy-key PEM]... [-o OUT]\n"
	"       vigil attest policy set NAME FILE | policy get NAME | policy assign ID NAME\n"
	"       vigil attest add ID --agent URL [--policy NAME]\n"
	"       vigil attest status [ID] [--history] [--json]\n"
	"       vigil attest reactivate ID | remove ID\n"
	"       (those talking to the verifier take [--verifier URL] [--token-file FILE]\n"
	"        before the subcommand)\n"
	"\n"
	"Remote attestation with vigil-agent and vigil-verifier.\n"
	"quote-check    verify a TPM quote offline: signature with the AK (TPM2B_PUBLIC),\n"
	"               nonce, PCR selection and pcrDigest over the PCR file\n"
	"               (tpm2_quote -o, serialized format); same answer as tpm2_checkquote;\n"
	"               --keylime takes Keylime's 'r<quote>:<sig>:<pcrs>' string instead\n"
	"policy create  a reference policy (vigil JSON) from a known-good measurement\n"
	"               list (its boot_aggregate included), and/or by hashing every\n"
	"               regular file under DIR (paths as seen from --root: DIR itself\n"
	"               is '/' by default); --boot-log pins boot PCRs 0-7 (\"boot_pcrs\") to\n"
	"               the values a known-good TCG boot event log replays to (bank\n"
	"               --boot-bank, default sha256)\n"
	"policy check   judge every entry of LOG (binary or ascii) against a policy\n"
	"policy import  convert a Keylime runtime policy / allowlist to vigil JSON\n"
	"--policy-key   the policy must be a DSSE envelope (as Keylime signs them)\n"
	"               signed by this key (PEM public key or certificate; repeat for\n"
	"               more); without it an envelope is unwrapped unchecked\n"
	"others         talk to the verifier: --verifier URL, default $VIGIL_VERIFIER,\n"
	"               else http://127.0.0.1:8881; over HTTPS $VIGIL_VERIFIER_CACERT names\n"
	"               its CA, $VIGIL_VERIFIER_CERT/_KEY our operator certificate;\n"
	"               credential: --token-file FILE, else $VIGIL_TOKEN_FILE, else\n"
	"               /etc/vigil/attest-token if it exists (a vg1. bearer token made by\n"
	"               vigil-verifier --create-token; mode 600; docs/api-auth.md)\n"
	"Exit status: 0 ok / trusted, 1 not trusted, 2 usage or operational error.\n";

/* ---- files ---- */

/* Return: 0, or -1 (reported). */
static int read_file(const char *path, uint8_t **ret, size_t *len)
{
	int r = cli_read_file(path, CLI_DOC_MAX, ret, len);

	if (r < 0) {
		cli_read_err(path, r, CLI_DOC_MAX);
		return -1;
	}
	return 0;
}

/* NULL, "-", /dev/stdout: standard output; a fifo or device in place (cli_write_out) */
static int write_out(const char *path, const char *data, size_t len)
{
	return cli_write_out(path, data, len, 0644, VG_OUTFILE_STREAM);
}

/* ---- quote-check ---- */

static int parse_pcr_list(const char *s, unsigned int *bank, uint32_t *mask)
{
	const char *colon = strchr(s, ':');
	char name[32];
	int a;

	if (!colon || (size_t)(colon - s) >= sizeof(name))
		return -1;
	memcpy(name, s, (size_t)(colon - s));
	name[colon - s] = 0;
	a = vg_hash_by_name(name);
	if (a < 0)
		return -1;
	*bank = (unsigned int)a;
	*mask = 0;
	for (const char *p = colon + 1; *p;) {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (end == p || n >= 24)
			return -1;
		*mask |= 1u << n;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return *mask ? 0 : -1;
}

static int quote_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ak", required_argument, NULL, 'a' },
		{ "msg", required_argument, NULL, 'm' },
		{ "sig", required_argument, NULL, 's' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "nonce", required_argument, NULL, 'q' },
		{ "pcr-list", required_argument, NULL, 'l' },
		{ "keylime", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *akf = NULL, *mf = NULL, *sf = NULL, *pf = NULL, *nonce = NULL, *list = NULL;
	const char *kq = NULL;
	uint8_t *ak = NULL, *m = NULL, *s = NULL, *p = NULL, nb[VG_ATTEST_NONCE_MAX];
	size_t akl, ml, sl, pl;
	struct vg_attest_ak *k = NULL;
	struct vg_pcr_values pv;
	struct vg_attest_request req;
	struct vg_attest_verdict v;
	struct vg_tpms_attest q;
	struct vg_diag d = { 0 };
	int c, rc = EXIT_ERROR, n;

	while ((c = getopt_long(argc, argv, "a:m:s:p:q:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': akf = optarg; break;
		case 'm': mf = optarg; break;
		case 's': sf = optarg; break;
		case 'p': pf = optarg; break;
		case 'q': nonce = optarg; break;
		case 'l': list = optarg; break;
		case 'k': kq = optarg; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_ERROR;
		}
	}
	if (!akf || !nonce || !list || (kq ? (mf || sf || pf) : (!mf || !sf || !pf))) {
		cli_err("quote-check needs --ak, --nonce, --pcr-list and --msg/--sig/--pcrs or --keylime");
		return EXIT_ERROR;
	}
	if (parse_pcr_list(list, &req.bank, &req.mask) < 0) {
		cli_err("--pcr-list '%s': expected ALGO:N[,N...]", list);
		return EXIT_ERROR;
	}
	n = vg_hex_decode(nonce, nb, sizeof(nb));
	if (n <= 0) {
		cli_err("--nonce: not hex of at most %d bytes", VG_ATTEST_NONCE_MAX);
		return EXIT_ERROR;
	}
	req.nonce = nb;
	req.nonce_len = (size_t)n;
	if (kq) {
		/* Keylime's pull-API form: "r" b64(TPMS_ATTEST) ":" b64(TPMT_SIGNATURE) ":" b64(PCRs) */
		char *copy = strdup(kq), *f[3] = { NULL }, *save = NULL;
		long l[3];
		int i = 0;

		if (!copy)
			goto out;
		for (char *t = strtok_r(copy[0] == 'r' ? copy + 1 : copy, ":", &save); t && i < 3;
		     t = strtok_r(NULL, ":", &save))
			f[i++] = t;
		if (copy[0] != 'r' || i != 3 || (l[0] = vg_attest_b64_decode(f[0], &m)) <= 0 ||
		    (l[1] = vg_attest_b64_decode(f[1], &s)) <= 0 ||
		    (l[2] = vg_attest_b64_decode(f[2], &p)) <= 0) {
			cli_err("--keylime: not 'r<base64>:<base64>:<base64>'");
			free(copy);
			goto out;
		}
		free(copy);
		ml = (size_t)l[0];
		sl = (size_t)l[1];
		pl = (size_t)l[2];
		if (read_file(akf, &ak, &akl) < 0)
			goto out;
	} else if (read_file(akf, &ak, &akl) < 0 || read_file(mf, &m, &ml) < 0 ||
		   read_file(sf, &s, &sl) < 0 || read_file(pf, &p, &pl) < 0) {
		goto out;
	}
	if (vg_attest_ak_load(ak, akl, &k, &d) < 0) {
		cli_file_err(akf, "%s", d.msg);
		goto out;
	}
	memset(&pv, 0, sizeof(pv));
	if (vg_attest_pcrs_tpm2tools(p, pl, &pv, &d) < 0) {
		cli_file_err(pf, "%s", d.msg);
		goto out;
	}
	vg_attest_verdict_init(&v);
	n = vg_attest_quote_verify(k, m, ml, s, sl, &req, &pv, &q, &v);
	if (n < 0) {
		cli_err("verifying: %s", strerror(-n));
		goto out;
	}
	if (n == 1) {
		printf("FAIL %s: %s\n", vg_attest_fail_id(v.fail), v.msg);
		rc = EXIT_NOTVERIFIED;
		goto out;
	}
	printf("OK clock=%" PRIu64 " resetCount=%" PRIu32 " restartCount=%" PRIu32 " safe=%u\n",
	       q.clock, q.reset_count, q.restart_count, q.safe);
	rc = EXIT_OK;
out:
	vg_attest_ak_free(k);
	free(ak);
	free(m);
	free(s);
	free(p);
	return rc;
}

/* ---- policies, offline ---- */

struct tree_ctx {
	struct vg_refpolicy *p;
	struct vg_hasher *h;
	const char *dir;
	const char *root;
	unsigned int algo;
	int err;
};

static struct tree_ctx *tctx;		/* nftw has no user pointer */

static int tree_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct vg_digest dg;
	struct vg_diag d = { 0 };
	char key[4200];
	size_t dl = strlen(tctx->dir);
	int fd;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		cli_file_err(path, "%s", strerror(errno));
		tctx->err = -1;
		return 0;
	}
	if (vg_hasher_fd(tctx->h, fd, tctx->algo, &dg, NULL, &d) < 0) {
		cli_file_err(path, "%s", d.msg);
		tctx->err = -1;
		close(fd);
		return 0;
	}
	close(fd);
	snprintf(key, sizeof(key), "%s%s%s", strcmp(tctx->root, "/") ? tctx->root : "",
		 path[dl] == '/' ? "" : "/", path + dl);
	for (char *c = key; *c; c++)
		if (*c == ' ')
			*c = '_';		/* as the kernel names events */
	if (vg_refpolicy_allow(tctx->p, key, &dg) < 0)
		tctx->err = -1;
	return 0;
}

static int policy_from_log(struct vg_refpolicy *p, const char *path)
{
	struct vg_imalog_buf scratch = { 0 };
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };
	const uint8_t *buf;
	uint8_t *raw;
	size_t rl, len;
	unsigned int algo;
	long n;
	int r, rc = -1;

	if (read_file(path, &raw, &rl) < 0)
		return -1;
	n = vg_imalog_load(raw, rl, &scratch, &buf, &len, &algo, &d);
	if (n < 0) {
		cli_file_err(path, "%s", d.msg);
		goto out;
	}
	vg_imalog_parser_init(&ps, buf, len, algo);
	while ((r = vg_imalog_parser_next(&ps, &e, &d)) == 1) {
		const struct vg_imalog_field *fn = NULL, *fd = NULL;
		struct vg_digest dg;
		const uint8_t *db;
		size_t dlen, pl;
		unsigned int da;
		char name[4200];

		for (unsigned int i = 0; i < e.tmpl.nfields; i++) {
			if (e.f[i].id == VG_IMAF_N_NG || e.f[i].id == VG_IMAF_N)
				fn = &e.f[i];
			if (e.f[i].id == VG_IMAF_D_NG || e.f[i].id == VG_IMAF_D || e.f[i].id == VG_IMAF_D_NGV2)
				fd = &e.f[i];
		}
		if (!fn || !fd || e.violation)
			continue;
		for (unsigned int i = 0; i < e.tmpl.nfields; i++)
			if (e.f[i].id == VG_IMAF_BUF)
				fn = NULL;	/* ima-buf: not a file */
		if (!fn || vg_imalog_field_digest(fd, &da, &db, &dlen, &d) < 0)
			continue;
		pl = fn->len;
		if (pl && fn->data[pl - 1] == 0)
			pl--;
		if (pl >= sizeof(name))
			continue;
		memcpy(name, fn->data, pl);
		name[pl] = 0;
		dg.algo = (uint8_t)da;
		dg.len = (uint8_t)dlen;
		memcpy(dg.bytes, db, dlen);
		if (vg_refpolicy_allow(p, name, &dg) < 0)
			goto out;
	}
	if (r < 0 && r != -EMSGSIZE) {
		cli_file_err(path, "%s", d.msg);
		goto out;
	}
	rc = 0;
out:
	vg_imalog_buf_release(&scratch);
	free(raw);
	return rc;
}

static int emit_policy(const struct vg_refpolicy *p, const char *out)
{
	char *json;
	long n = vg_refpolicy_to_json(p, &json);
	int r;

	if (n < 0) {
		cli_err("out of memory");
		return -1;
	}
	json[n] = '\n';		/* replaces the NUL: write n + 1 bytes */
	r = write_out(out, json, (size_t)n + 1);
	free(json);
	return r;
}

/* --boot-log: pin PCRs 0-7 to the replay of a known-good boot log. Return: 0, -1 (reported). */
static int policy_boot_pins(struct vg_refpolicy *p, const char *path, unsigned int bank)
{
	struct vg_eventlog *log = NULL;
	struct vg_eventlog_pcrs pcrs;
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r;

	if (read_file(path, &b, &n) < 0)
		return -1;
	r = vg_eventlog_parse(b, n, &log, &d);
	free(b);
	if (r == 0)
		r = vg_eventlog_replay(log, bank, &pcrs, &d);
	for (unsigned int i = 0; r == 0 && i < 8; i++)
		r = vg_refpolicy_boot_pin(p, i, &pcrs.pcr[i]);
	vg_eventlog_free(log);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg[0] ? d.msg : strerror(-r));
		return -1;
	}
	return 0;
}

static int policy_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "tree", required_argument, NULL, 't' },
		{ "root", required_argument, NULL, 'r' },
		{ "algo", required_argument, NULL, 'a' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "key", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ "boot-log", required_argument, NULL, 'B' },
		{ "boot-bank", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *log = NULL, *tree = NULL, *root = "/", *out = NULL, *boot = NULL;
	int boot_bank = VG_HASH_SHA256;
	struct tree_ctx tc = { 0 };
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	int c, algo = VG_HASH_SHA256, rc = EXIT_ERROR;

	if (vg_refpolicy_new(&p) < 0)
		return EXIT_ERROR;
	while ((c = getopt_long(argc, argv, "l:t:r:a:x:k:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': log = optarg; break;
		case 't': tree = optarg; break;
		case 'r': root = optarg; break;
		case 'a':
			algo = cli_parse_algo(optarg);
			if (algo < 0)
				goto out;
			break;
		case 'x':
			if (vg_refpolicy_exclude(p, optarg, &d) < 0) {
				cli_err("--exclude: %s", d.msg);
				goto out;
			}
			break;
		case 'k': {
			uint8_t *k;
			size_t kl;

			if (read_file(optarg, &k, &kl) < 0)
				goto out;
			if (vg_refpolicy_add_key(p, k, kl, &d) < 0) {
				cli_file_err(optarg, "%s", d.msg);
				free(k);
				goto out;
			}
			free(k);
			break;
		}
		case 'o': out = optarg; break;
		case 'B': boot = optarg; break;
		case 'K':
			boot_bank = cli_parse_algo(optarg);
			if (boot_bank < 0)
				goto out;
			break;
		case 'h': fputs(help, stdout); rc = EXIT_OK; goto out;
		default: goto out;
		}
	}
	if ((!log && !tree && !boot) || optind != argc) {
		cli_err("policy create needs --log LOG, --tree DIR, --boot-log FILE, or several");
		goto out;
	}
	if (log && policy_from_log(p, log) < 0)
		goto out;
	if (boot && policy_boot_pins(p, boot, (unsigned int)boot_bank) < 0)
		goto out;
	if (tree) {
		tc.p = p;
		tc.dir = tree;
		tc.root = root;
		tc.algo = (unsigned int)algo;
		if (vg_hasher_new(&tc.h) < 0)
			goto out;
		tctx = &tc;
		if (nftw(tree, tree_one, 32, FTW_PHYS | FTW_MOUNT) != 0) {
			cli_file_err(tree, "%s", strerror(errno));
			tc.err = -1;
		}
		vg_hasher_free(tc.h);
		tctx = NULL;
		if (tc.err)
			goto out;
	}
	if (emit_policy(p, out) == 0)
		rc = EXIT_OK;
out:
	vg_refpolicy_free(p);
	return rc;
}

/* --policy-key FILE: add FILE's keys to *@keys. Return: 0, or -1 (reported). */
static int add_policy_key(struct vg_dsse_keys **keys, const char *file)
{
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r;

	if (!*keys && vg_dsse_keys_new(keys) < 0) {
		cli_err("out of memory");
		return -1;
	}
	if (read_file(file, &b, &n) < 0)
		return -1;
	r = vg_dsse_keys_add(*keys, b, n, &d);
	free(b);
	if (r < 0) {
		cli_file_err(file, "%s", d.msg);
		return -1;
	}
	return 0;
}

/*
 * @keys NULL: any policy form (an envelope unwrapped unchecked); else a
 * DSSE envelope signed by one of @keys. Return: 0; 1 bad signature; -1
 * other errors (all reported).
 */
static int load_policy_file(const char *path, const struct vg_dsse_keys *keys,
			    struct vg_refpolicy **ret)
{
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r;

	if (read_file(path, &b, &n) < 0)
		return -1;
	r = keys ? vg_refpolicy_load_dsse(keys, b, n, ret, &d) : vg_refpolicy_load(b, n, ret, &d);
	free(b);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg);
		return r == -EKEYREJECTED ? 1 : -1;
	}
	return 0;
}

static void print_verdict(const struct vg_attest_verdict *v)
{
	printf("FAIL %s", vg_attest_fail_id(v->fail));
	if (v->entry >= 0)
		printf(" entry=%" PRId64, v->entry);
	if (v->path[0]) {
		fputs(" path=", stdout);
		cli_put_path(stdout, v->path);
	}
	if (v->digest[0])
		printf(" digest=%s", v->digest);
	printf(": %s\n", v->msg);
}

static int policy_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "policy-key", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *pf = NULL;
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
	int c, r, rc = EXIT_ERROR;

	while ((c = getopt_long(argc, argv, "p:K:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pf = optarg; break;
		case 'K':
			if (add_policy_key(&keys, optarg) < 0)
				goto out;
			break;
		case 'h': fputs(help, stdout); rc = EXIT_OK; goto out;
		default: goto out;
		}
	}
	if (!pf || optind != argc - 1) {
		cli_err("policy check needs --policy FILE and one LOG");
		goto out;
	}
	r = load_policy_file(pf, keys, &p);
	if (r > 0)
		rc = EXIT_NOTVERIFIED;
	if (r != 0 || read_file(argv[optind], &raw, &rl) < 0)
		goto out;
	if (vg_imalog_load(raw, rl, &scratch, &buf, &len, &algo, &d) < 0) {
		cli_file_err(argv[optind], "%s", d.msg);
		goto out;
	}
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	vg_attest_verdict_init(&v);
	r = vg_attest_log_check(p, buf, len, algo, VG_ATTEST_PCR_IMA, NULL, &st, &v);
	if (r < 0) {
		cli_err("%s", strerror(-r));
		goto out;
	}
	if (r == 1) {
		print_verdict(&v);
		rc = EXIT_NOTVERIFIED;
		goto out;
	}
	printf("OK %" PRIu64 " entries\n", st.entries);
	rc = EXIT_OK;
out:
	vg_imalog_buf_release(&scratch);
	vg_refpolicy_free(p);
	vg_dsse_keys_free(keys);
	free(raw);
	return rc;
}

static int policy_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "policy-key", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL;
	struct vg_dsse_keys *keys = NULL;
	struct vg_refpolicy *p = NULL;
	int c, r, rc = EXIT_ERROR;

	while ((c = getopt_long(argc, argv, "o:K:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'K':
			if (add_policy_key(&keys, optarg) < 0)
				goto done;
			break;
		case 'h': fputs(help, stdout); rc = EXIT_OK; goto done;
		default: goto done;
		}
	}
	if (optind != argc - 1) {
		cli_err("policy import needs one FILE");
		goto done;
	}
	r = load_policy_file(argv[optind], keys, &p);
	if (r > 0)
		rc = EXIT_NOTVERIFIED;
	if (r == 0 && emit_policy(p, out) == 0)
		rc = EXIT_OK;
done:
	vg_refpolicy_free(p);
	vg_dsse_keys_free(keys);
	return rc;
}

/* ---- REST client ---- */

/*
 * libcurl is loaded by the commands that talk to the verifier, not linked:
 * with it every vigil command loaded some thirty libraries (GnuTLS,
 * Kerberos, LDAP ...) before main(), which more than doubled the time of
 * `vigil hash FILE`. systemd loads its heavy optional libraries the same way.
 */
static struct {
	void *dl;
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	void (*easy_cleanup)(CURL *c);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} curl;

static char bearer[VG_AUTH_TOKEN_LEN + 32];	/* "Authorization: Bearer vg1..." or "" */

/* Load libcurl and initialise it. Return: 0, or -1 (reported). */
static int curl_open(void)
{
	static const char *const names[] = {
		"curl_global_init", "curl_global_cleanup", "curl_easy_init", "curl_easy_setopt",
		"curl_easy_perform", "curl_easy_getinfo", "curl_easy_strerror",
		"curl_easy_cleanup", "curl_slist_append", "curl_slist_free_all",
	};
	void **slots[] = {
		(void **)&curl.global_init, (void **)&curl.global_cleanup,
		(void **)&curl.easy_init, (void **)&curl.easy_setopt, (void **)&curl.easy_perform,
		(void **)&curl.easy_getinfo, (void **)&curl.easy_strerror,
		(void **)&curl.easy_cleanup, (void **)&curl.slist_append,
		(void **)&curl.slist_free_all,
	};

	curl.dl = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!curl.dl) {
		cli_err("cannot load libcurl (the libcurl4 package): %s", dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slots[i] = dlsym(curl.dl, names[i]);
		if (!*slots[i]) {
			cli_err("libcurl.so.4 has no %s", names[i]);
			dlclose(curl.dl);
			curl.dl = NULL;
			return -1;
		}
	}
	if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cli_err("cannot initialise libcurl");
		dlclose(curl.dl);
		curl.dl = NULL;
		return -1;
	}
	return 0;
}

static void curl_close(void)
{
	OPENSSL_cleanse(bearer, sizeof(bearer));
	if (!curl.dl)
		return;
	curl.global_cleanup();
	dlclose(curl.dl);
	curl.dl = NULL;
}

struct resp {
	char *body;
	size_t len;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct resp *r = arg;
	char *nb = realloc(r->body, r->len + size * n + 1);

	if (!nb)
		return 0;
	memcpy(nb + r->len, p, size * n);
	r->body = nb;
	r->len += size * n;
	r->body[r->len] = 0;
	return size * n;
}

static const char *verifier_url;
static bool warned_no_auth;

#define DEFAULT_TOKEN_FILE "/etc/vigil/attest-token"

/*
 * The credential: --token-file, else $VIGIL_TOKEN_FILE, else the default
 * file if it exists; none is not an error here (the verifier says 401).
 * Return: 0, or -1 (reported: a named file that is missing, readable by
 * others or not a token).
 */
static int token_open(const char *opt)
{
	const char *path = opt && *opt ? opt : getenv("VIGIL_TOKEN_FILE");
	char tok[VG_AUTH_TOKEN_LEN + 1];
	struct vg_diag d = { 0 };

	if (!path || !*path) {
		if (access(DEFAULT_TOKEN_FILE, F_OK) != 0)
			return 0;
		path = DEFAULT_TOKEN_FILE;
	}
	if (vg_auth_token_read(path, tok, &d) < 0) {
		cli_file_err(path, "%s", d.msg);
		return -1;
	}
	snprintf(bearer, sizeof(bearer), "Authorization: Bearer %s", tok);
	OPENSSL_cleanse(tok, sizeof(tok));
	return 0;
}

/* Return: HTTP status, or -1 (reported). *@ret_json: parsed body, or NULL. */
static long http(const char *method, const char *path, const char *body, size_t blen,
		 json_object **ret_json)
{
	CURL *c = curl.easy_init();
	struct curl_slist *hdr = NULL;
	struct resp r = { 0 };
	char url[1024];
	long code = -1;
	CURLcode cr;

	if (!c) {
		cli_err("cannot initialise libcurl");
		return -1;
	}
	snprintf(url, sizeof(url), "%s%s", verifier_url, path);
	curl.easy_setopt(c, CURLOPT_URL, url);
	curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl.easy_setopt(c, CURLOPT_WRITEDATA, &r);
	curl.easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	/* HTTPS to the verifier: its CA, and our operator certificate (mutual TLS) */
	if (getenv("VIGIL_VERIFIER_CACERT"))
		curl.easy_setopt(c, CURLOPT_CAINFO, getenv("VIGIL_VERIFIER_CACERT"));
	if (getenv("VIGIL_VERIFIER_CERT")) {
		curl.easy_setopt(c, CURLOPT_SSLCERT, getenv("VIGIL_VERIFIER_CERT"));
		if (getenv("VIGIL_VERIFIER_KEY"))
			curl.easy_setopt(c, CURLOPT_SSLKEY, getenv("VIGIL_VERIFIER_KEY"));
	}
	if (body)
		hdr = curl.slist_append(hdr, "Content-Type: application/json");
	if (bearer[0])
		hdr = curl.slist_append(hdr, bearer);
	if (hdr)
		curl.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	if (body) {
		curl.easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)blen);
	}
	cr = curl.easy_perform(c);
	if (cr != CURLE_OK) {
		cli_err("verifier %s: %s", verifier_url, curl.easy_strerror(cr));
	} else {
		curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		if (ret_json) {
			json_object *a;

			*ret_json = r.body ? json_tokener_parse(r.body) : NULL;
			if (*ret_json && json_object_is_type(*ret_json, json_type_object) &&
			    json_object_object_get_ex(*ret_json, "auth", &a) &&
			    strcmp(json_object_get_string(a), "disabled") == 0 && !warned_no_auth) {
				warned_no_auth = true;
				cli_err("WARNING: verifier %s runs without authentication "
					"(--insecure-no-auth): anyone who reaches it can change "
					"what it reports", verifier_url);
			}
		}
	}
	curl.slist_free_all(hdr);
	curl.easy_cleanup(c);
	free(r.body);
	return code;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return "";
	return json_object_get_string(v);
}

/* An error answer: {"error": "...", "failure": "id", "message": "..."} */
static int report_error(long code, json_object *o)
{
	const char *f = jstr(o, "failure");

	/* a refused credential is never an attestation verdict */
	if (code == 401) {
		cli_err("verifier %s: authentication failed (401): %s", verifier_url,
			bearer[0] ? "the token is not valid there" :
			"no credential (--token-file, $VIGIL_TOKEN_FILE or " DEFAULT_TOKEN_FILE ")");
		return EXIT_ERROR;
	}
	if (code == 403 && !*f) {
		cli_err("verifier %s: forbidden: read credential cannot change state (403)",
			verifier_url);
		return EXIT_ERROR;
	}
	if (*f) {
		printf("FAIL %s: %s\n", f, jstr(o, "message"));
		return EXIT_NOTVERIFIED;
	}
	cli_err("verifier answered %ld: %s", code, *jstr(o, "error") ? jstr(o, "error") : "(no detail)");
	return EXIT_ERROR;
}

static bool id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n >= 128)
		return false;
	for (const char *c = id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return false;
	return true;
}

static int attest_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *agent = NULL, *policy = "";
	json_object *req, *res = NULL;
	const char *body;
	long code;
	int c, rc;

	while ((c = getopt_long(argc, argv, "a:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': agent = optarg; break;
		case 'p': policy = optarg; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_ERROR;
		}
	}
	if (!agent || optind != argc - 1 || !id_ok(argv[optind])) {
		cli_err("add needs an ID ([A-Za-z0-9._-]) and --agent URL");
		return EXIT_ERROR;
	}
	req = json_object_new_object();
	json_object_object_add(req, "id", json_object_new_string(argv[optind]));
	json_object_object_add(req, "url", json_object_new_string(agent));
	json_object_object_add(req, "policy", json_object_new_string(policy));
	body = json_object_to_json_string(req);
	code = http("POST", "/v1/agents", body, strlen(body), &res);
	json_object_put(req);
	if (code < 0)
		return EXIT_ERROR;
	if (code == 201) {
		printf("registered %s (%s)\n", argv[optind], jstr(res, "ak_name"));
		rc = EXIT_OK;
	} else {
		rc = report_error(code, res);
	}
	json_object_put(res);
	return rc;
}

static void print_agent(json_object *a)
{
	printf("%s %s rounds=%s reboots=%s log_entries=%s policy=%s", jstr(a, "id"),
	       jstr(a, "state"), jstr(a, "rounds"), jstr(a, "reboots"), jstr(a, "log_entries"),
	       jstr(a, "policy"));
	if (strcmp(jstr(a, "last_failure"), "ok") != 0 && *jstr(a, "last_failure"))
		printf(" last_failure=%s (%s)", jstr(a, "last_failure"), jstr(a, "last_message"));
	putchar('\n');
}

static int attest_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "history", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool history = false, json = false;
	json_object *res = NULL;
	char path[512];
	long code;
	int c, rc = EXIT_OK;

	while ((c = getopt_long(argc, argv, "Hjh", opts, NULL)) != -1) {
		switch (c) {
		case 'H': history = true; break;
		case 'j': json = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: return EXIT_ERROR;
		}
	}
	if (optind < argc - 1 || (optind == argc - 1 && !id_ok(argv[optind]))) {
		cli_err("status takes at most one agent ID");
		return EXIT_ERROR;
	}
	if (optind == argc - 1)
		snprintf(path, sizeof(path), "/v1/agents/%s%s", argv[optind],
			 history ? "/history" : "");
	else
		snprintf(path, sizeof(path), "/v1/agents");
	code = http("GET", path, NULL, 0, &res);
	if (code < 0)
		return EXIT_ERROR;
	if (code != 200) {
		rc = report_error(code, res);
		json_object_put(res);
		return rc;
	}
	if (json) {
		puts(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	} else if (history) {
		json_object *arr;

		if (json_object_object_get_ex(res, "history", &arr))
			for (size_t i = 0; i < json_object_array_length(arr); i++) {
				json_object *h = json_object_array_get_idx(arr, i);

				printf("%s %s entry=%s path=%s digest=%s: %s\n", jstr(h, "time"),
				       jstr(h, "failure"), jstr(h, "entry"), jstr(h, "path"),
				       jstr(h, "digest"), jstr(h, "message"));
			}
	} else if (optind == argc - 1) {
		print_agent(res);
	} else {
		json_object *arr;

		if (json_object_object_get_ex(res, "agents", &arr))
			for (size_t i = 0; i < json_object_array_length(arr); i++)
				print_agent(json_object_array_get_idx(arr, i));
	}
	/* exit 1 when the agent asked about is not trusted */
	if (optind == argc - 1 && !history && strcmp(jstr(res, "state"), "trusted") != 0)
		rc = EXIT_NOTVERIFIED;
	json_object_put(res);
	return rc;
}

static int simple(const char *method, const char *path, const char *body, const char *done)
{
	json_object *res = NULL;
	long code = http(method, path, body, body ? strlen(body) : 0, &res);
	int rc;

	if (code < 0)
		return EXIT_ERROR;
	if (code >= 200 && code < 300) {
		if (done)
			puts(done);
		rc = EXIT_OK;
	} else {
		rc = report_error(code, res);
	}
	json_object_put(res);
	return rc;
}

static int cmd_policy_remote(int argc, char **argv)
{
	char path[512];
	const char *sub = argv[1];

	if (strcmp(sub, "set") == 0) {
		uint8_t *doc;
		size_t n;
		int rc;

		if (argc != 4 || !id_ok(argv[2])) {
			cli_err("policy set needs NAME and FILE");
			return EXIT_ERROR;
		}
		if (read_file(argv[3], &doc, &n) < 0)
			return EXIT_ERROR;
		snprintf(path, sizeof(path), "/v1/policies/%s", argv[2]);
		rc = simple("PUT", path, (const char *)doc, "policy stored");
		free(doc);
		return rc;
	}
	if (strcmp(sub, "get") == 0) {
		json_object *res = NULL;
		long code;

		if (argc != 3 || !id_ok(argv[2])) {
			cli_err("policy get needs NAME");
			return EXIT_ERROR;
		}
		snprintf(path, sizeof(path), "/v1/policies/%s", argv[2]);
		code = http("GET", path, NULL, 0, &res);
		if (code != 200) {
			int rc = code < 0 ? EXIT_ERROR : report_error(code, res);

			json_object_put(res);
			return rc;
		}
		puts(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(res);
		return EXIT_OK;
	}
	/* assign ID NAME */
	{
		json_object *req;
		int rc;

		if (argc != 4 || !id_ok(argv[2]) || !id_ok(argv[3])) {
			cli_err("policy assign needs ID and NAME");
			return EXIT_ERROR;
		}
		req = json_object_new_object();
		json_object_object_add(req, "policy", json_object_new_string(argv[3]));
		snprintf(path, sizeof(path), "/v1/agents/%s/policy", argv[2]);
		rc = simple("PUT", path, json_object_to_json_string(req), "policy assigned");
		json_object_put(req);
		return rc;
	}
}

int cmd_attest(int argc, char **argv)
{
	const char *sub, *token_file = NULL;
	char path[512];
	int rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(help, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_ERROR : EXIT_OK;
	}
	verifier_url = getenv("VIGIL_VERIFIER");
	if (!verifier_url || !*verifier_url)
		verifier_url = "http://127.0.0.1:8881";
	/* --verifier URL and --token-file FILE anywhere before the subcommand's own options */
	for (int i = 1; i < argc - 1; i++)
		if (strcmp(argv[i], "--verifier") == 0 || strcmp(argv[i], "--token-file") == 0) {
			if (argv[i][2] == 'v')
				verifier_url = argv[i + 1];
			else
				token_file = argv[i + 1];
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 2) * sizeof(*argv));
			argc -= 2;
			i--;
		}
	sub = argv[1];
	argc--;
	argv++;
	if (strcmp(sub, "quote-check") == 0)
		return quote_check(argc, argv);
	if (strcmp(sub, "policy") == 0) {
		if (argc < 2) {
			cli_err("policy needs create, check, import, set, get or assign");
			return EXIT_ERROR;
		}
		if (strcmp(argv[1], "create") == 0)
			return policy_create(argc - 1, argv + 1);
		if (strcmp(argv[1], "check") == 0)
			return policy_check(argc - 1, argv + 1);
		if (strcmp(argv[1], "import") == 0)
			return policy_import(argc - 1, argv + 1);
		if (strcmp(argv[1], "set") == 0 || strcmp(argv[1], "get") == 0 ||
		    strcmp(argv[1], "assign") == 0) {
			if (token_open(token_file) < 0 || curl_open() < 0)
				return EXIT_ERROR;
			rc = cmd_policy_remote(argc, argv);
			curl_close();
			return rc;
		}
		if (strcmp(argv[1], "--help") == 0) {
			fputs(help, stdout);
			return EXIT_OK;
		}
		cli_err("unknown policy subcommand '%s'", argv[1]);
		return EXIT_ERROR;
	}
	if (token_open(token_file) < 0 || curl_open() < 0)
		return EXIT_ERROR;
	if (strcmp(sub, "add") == 0) {
		rc = attest_add(argc, argv);
	} else if (strcmp(sub, "status") == 0) {
		rc = attest_status(argc, argv);
	} else if (strcmp(sub, "remove") == 0 || strcmp(sub, "reactivate") == 0) {
		if (argc == 2 && strcmp(argv[1], "--help") == 0) {
			fputs(help, stdout);
			rc = EXIT_OK;
		} else if (argc != 2 || !id_ok(argv[1])) {
			cli_err("%s needs one agent ID", sub);
			rc = EXIT_ERROR;
		} else if (strcmp(sub, "remove") == 0) {
			snprintf(path, sizeof(path), "/v1/agents/%s", argv[1]);
			rc = simple("DELETE", path, NULL, "removed");
		} else {
			snprintf(path, sizeof(path), "/v1/agents/%s/reactivate", argv[1]);
			rc = simple("POST", path, "{}", "reactivated");
		}
	} else {
		cli_err("unknown subcommand '%s' (see vigil attest --help)", sub);
		rc = EXIT_ERROR;
	}
	curl_close();
	return rc;
}
