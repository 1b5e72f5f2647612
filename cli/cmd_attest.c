// SPDX-License-Identifier: MIT
/*
 * cmd_attest.c - `vigil attest`: remote attestation from the operator's
 * side. Offline commands use libvigil's verifier core directly; the
 * others are a client of vigil-verifier's REST API (libcurl).
 *
 *   quote-check  verify tpm2-tools quote files (tpm2_quote -m/-s/-o) with an AK
 *   policy create|check|import   build, apply and convert reference policies
 *   policy set|get NAME          upload / fetch a named policy on the verifier
 *   add [ID] --agent URL [--policy NAME] register an agent (credential activation)
 *   status [ID] [--history] [--json]     agent state and verdicts
 *   status ID --ear [--nonce N]          its latest verdict as a signed EAR
 *   status --verifiers [--json]          the verifiers sharing the store
 *   policy assign ID NAME        give an agent another policy (re-verifies from entry 0)
 *   reactivate ID                poll a failed agent again
 *   remove ID
 *
 * Exit: 0 ok/trusted, 1 not trusted (quote, policy or agent failed), 2
 * usage or operational error (verifier unreachable, bad file).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cli.h"
#include "cmd_attest.h"
#include "verb.h"
#include "vigil/attest.h"
#include "vigil/attest_api.h"
#include "vigil/attest_boot.h"
#include "vigil/eventlog.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"

const char cli_attest_help[] =
	"usage: vigil attest quote-check --ak AK.pub (--msg MSG --sig SIG --pcrs PCRS |\n"
	"                                --keylime r<...>) --nonce HEX --pcr-list ALGO:N[,N...] [--json]\n"
	"       vigil attest policy create [--log LOG] [--tree DIR [--root PREFIX]]\n"
	"                                [--boot-log FILE [--boot-bank ALGO]\n"
	"                                 [--no-boot-pins | --no-measured-boot]]\n"
	"                                [--trusted DB [--trusted DB2]... [--hmac-key FILE]\n"
	"                                 [--trusted-superseded] [--merged-usr] [--boot]]\n"
	"                                [--algo ALGO] [--exclude REGEX]... [--no-default-excludes]\n"
	"                                [--key PEM]... [-o OUT]\n"
	"       vigil attest policy check --policy FILE [--policy-key PEM]...\n"
	"                                [--trusted DB [--hmac-key FILE]] [--json]\n"
	"                                [--boot-log FILE] [LOG]\n"
	"       vigil attest policy import FILE [--policy-key PEM]...\n"
	"                                [--allowlist-sig SIG --allowlist-sig-key KEY] [-o OUT]\n"
	"       vigil attest policy set NAME FILE | policy get NAME | policy assign ID NAME\n"
	"       vigil attest add [ID] --agent URL [--policy NAME]\n"
	"       vigil attest status [ID] [--history] [--json] [--wait SECONDS]\n"
	"       vigil attest status --verifiers [--json]\n"
	"       vigil attest status ID --ear [--nonce NONCE]\n"
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
	"               is '/' by default); --boot-log: what a known-good TCG boot event\n"
	"               log records, event by event (\"measured_boot\": Secure Boot state,\n"
	"               PK/KEK/db/dbx, authorities, shim/GRUB/kernel, initrd, command\n"
	"               line), and boot PCRs 0-7 (\"boot_pcrs\") pinned to the values it\n"
	"               replays to (bank --boot-bank, default sha256); --no-boot-pins:\n"
	"               the events only; --no-measured-boot: the pins only (no\n"
	"               \"measured_boot\": evidence without a boot log passes); --trusted\n"
	"               DB: the --algo digest of\n"
	"               every regular file of the current packages a trust database\n"
	"               (vigil trust build, authenticated with --hmac-key, else key.hmac)\n"
	"               records, as Debian's archive signed it; several databases (or\n"
	"               --trusted-superseded: the superseded versions they keep) give a\n"
	"               path every version's digest, for a fleet mid-upgrade;\n"
	"               --merged-usr: /bin/x, /sbin/x, /lib*/x also as /usr/...;\n"
	"               --boot (with --trusted): a \"measured_boot\" section taking shim,\n"
	"               GRUB and kernel from the archive (\"from_archive\": any boot image\n"
	"               of the verifier's --trust-db within its grace) and the initrd and\n"
	"               command line the host announced (\"announced\": vigil trust boot\n"
	"               announce, in an earlier boot's attested list); with --boot-log,\n"
	"               the firmware's parts and the enrolment boot's initrd and command\n"
	"               line from the log;\n"
	"               vigil's own state and credentials (/var/lib/vigil/, /run/vigil/,\n"
	"               /var/log/vigil/, /etc/vigil/*-token(s)), which change and which\n"
	"               root reads, are excluded unless --no-default-excludes\n"
	"policy check   judge every entry of LOG (binary or ascii) against a policy\n"
	"               (--json: the verdict as one JSON object); --trusted DB: the\n"
	"               checker's trust database names the Debian package of a digest\n"
	"               not allowed, a newer version than the policy's fails as\n"
	"               policy.package_newer; --boot-log FILE: judge the events of a\n"
	"               TCG boot event log by the policy's \"measured_boot\" section\n"
	"               (boot.event naming each failing event)\n"
	"policy import  convert a Keylime runtime policy / allowlist, or a Keylime\n"
	"               measured-boot reference state (keylime-policy create\n"
	"               measured-boot: into \"measured_boot\"), to vigil JSON\n"
	"--allowlist-sig, --allowlist-sig-key  (import) FILE must carry a good\n"
	"               detached signature SIG by KEY, as Keylime's tenant checks:\n"
	"               KEY an armored OpenPGP public key (SIG checked by GPGME in a\n"
	"               temporary GNUPGHOME), or a PEM EC public key (SIG a DER\n"
	"               ECDSA signature over SHA-256 of FILE); bad: exit 1, no output\n"
	"status         an agent's state, rounds and last failure (exit 1 unless trusted);\n"
	"               --wait: until its first round has judged it, up to SECONDS;\n"
	"               --verifiers: the verifiers sharing the store, alive or dead,\n"
	"               and their load (from their heartbeats); --ear: its latest\n"
	"               verdict as an EAR (a JWT signed by the verifier's --ear-key, the\n"
	"               AR4SI trustworthiness vector and every failure listed;\n"
	"               docs/attest-ear.md), --nonce NONCE its eat_nonce\n"
	"add            register the agent at URL under the id it says (its --id); an\n"
	"               ID given that differs from the agent's is refused naming both\n"
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

int cli_attest_read(const char *path, uint8_t **ret, size_t *len)
{
	int r = cli_read_file(path, CLI_DOC_MAX, ret, len);

	if (r < 0) {
		cli_read_err(path, r, CLI_DOC_MAX);
		return -1;
	}
	return 0;
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

/*
 * quote-check --json (docs/schemas/attest-quote-check.schema.json):
 * {result: "ok", clock, reset_count, restart_count, safe} or
 * {result: "fail", failure, message}
 */
static void quote_json(const struct vg_attest_verdict *v, const struct vg_tpms_attest *q)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "result", json_object_new_string(v ? "fail" : "ok"));
	if (v) {
		json_object_object_add(j, "failure", json_object_new_string(vg_attest_fail_id(v->fail)));
		json_object_object_add(j, "message", cli_json_path(v->msg));
	} else {
		json_object_object_add(j, "clock", json_object_new_int64((int64_t)q->clock));
		json_object_object_add(j, "reset_count", json_object_new_int64(q->reset_count));
		json_object_object_add(j, "restart_count", json_object_new_int64(q->restart_count));
		json_object_object_add(j, "safe", json_object_new_boolean(q->safe));
	}
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
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
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool json = false;
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

	while ((c = getopt_long(argc, argv, "a:m:s:p:q:l:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'a': akf = optarg; break;
		case 'm': mf = optarg; break;
		case 's': sf = optarg; break;
		case 'p': pf = optarg; break;
		case 'q': nonce = optarg; break;
		case 'l': list = optarg; break;
		case 'k': kq = optarg; break;
		case 'h': fputs(cli_attest_help, stdout); return EXIT_OK;
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
	memset(&pv, 0, sizeof(pv));
	if (kq) {
		/* Keylime's pull-API form, parsed as the verifier's evidence endpoint parses it */
		struct vg_api_evidence *ke = calloc(1, sizeof(*ke));

		if (!ke)
			goto out;
		if (vg_api_keylime_quote_parse(kq, ke, &d) < 0) {
			cli_err("--keylime: %s", d.msg);
			free(ke);
			goto out;
		}
		m = malloc(ke->attest_len);
		s = malloc(ke->sig_len);
		if (m && s) {
			memcpy(m, ke->attest, ke->attest_len);
			memcpy(s, ke->sig, ke->sig_len);
			ml = ke->attest_len;
			sl = ke->sig_len;
			pv = ke->pcrs;
		}
		free(ke);
		if (!m || !s || cli_attest_read(akf, &ak, &akl) < 0)
			goto out;
	} else if (cli_attest_read(akf, &ak, &akl) < 0 || cli_attest_read(mf, &m, &ml) < 0 ||
		   cli_attest_read(sf, &s, &sl) < 0 || cli_attest_read(pf, &p, &pl) < 0) {
		goto out;
	}
	if (vg_attest_ak_load(ak, akl, &k, &d) < 0) {
		cli_file_err(akf, "%s", d.msg);
		goto out;
	}
	if (!kq && vg_attest_pcrs_tpm2tools(p, pl, &pv, &d) < 0) {
		cli_file_err(pf, "%s", d.msg);
		goto out;
	}
	vg_attest_verdict_init(&v);
	n = vg_attest_quote_verify(k, m, ml, s, sl, &req, &pv, &q, &v);
	if (n < 0) {
		cli_err("verifying: %s", strerror(-n));
		goto out;
	}
	if (json) {
		quote_json(n == 1 ? &v : NULL, &q);
		rc = n == 1 ? EXIT_NOTVERIFIED : EXIT_OK;
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

static const struct cli_verb policy_verbs[] = {
	{ "create", cli_attest_policy_create },
	{ "check", cli_attest_policy_check },
	{ "import", cli_attest_policy_import },
	{ "set", cli_attest_policy_set },
	{ "get", cli_attest_policy_get },
	{ "assign", cli_attest_policy_assign },
};

/* `policy VERB ...`: @argv[0] is "policy" */
static int attest_policy(int argc, char **argv)
{
	const struct cli_verb *v;

	if (argc < 2) {
		cli_err("policy needs create, check, import, set, get or assign");
		return EXIT_ERROR;
	}
	v = cli_verb_find(policy_verbs, CLI_NVERBS(policy_verbs), argv[1]);
	if (v)
		return v->run(argc - 1, argv + 1);
	if (strcmp(argv[1], "--help") == 0) {
		fputs(cli_attest_help, stdout);
		return EXIT_OK;
	}
	cli_err("unknown policy subcommand '%s'", argv[1]);
	return EXIT_ERROR;
}

static const struct cli_verb verbs[] = {
	{ "quote-check", quote_check },
	{ "policy", attest_policy },
	{ "add", cli_attest_add },
	{ "status", cli_attest_status },
	{ "remove", cli_attest_remove },
	{ "reactivate", cli_attest_reactivate },
};

int cmd_attest(int argc, char **argv)
{
	const char *verifier_url, *token_file = NULL;
	const struct cli_verb *v;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(cli_attest_help, argc < 2 ? stderr : stdout);
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
	cli_attest_remote_setup(verifier_url, token_file);
	v = cli_verb_find(verbs, CLI_NVERBS(verbs), argv[1]);
	/* an unknown verb is reported once the verifier's credential is read, as before */
	return v ? v->run(argc - 1, argv + 1) : cli_attest_unknown(argc - 1, argv + 1);
}
