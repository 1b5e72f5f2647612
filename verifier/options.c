// SPDX-License-Identifier: MIT
/*
 * options.c - vigil-verifier's command line: the help text and the
 * options, parsed into struct verifier (its settings) and struct vf_args
 * (what the start reads: files, addresses, limits); each value checked
 * here as a value (a number's range, a bank's name), files and addresses
 * by the start (vigil-verifier.c), before the verifier says it is ready.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "http_util.h"

const char vf_help[] =
	"usage: vigil-verifier --listen ADDR:PORT --db URL [--interval MS] [--ek-ca FILE]\n"
	"                      [--webhook URL] [--on-fail CMD] [--bank ALGO] [--pcrs N,...]\n"
	"Attest vigil-agents at an interval; REST API for `vigil attest`.\n"
	"  -L, --listen ADDR:PORT  API address (e.g. 127.0.0.1:8881)\n"
	"  -d, --db URL            store: sqlite:PATH or PATH (SQLite), or a PostgreSQL URL\n"
	"                          postgresql://[USER[:PASSWORD]@][HOST][:PORT]/DB[?PARAM=V&...]\n"
	"                          (any libpq parameter: host=/run/postgresql, sslmode=...;\n"
	"                          password also from PGPASSFILE/~/.pgpass); verifiers may share\n"
	"                          one database (docs/verifier-postgresql.md)\n"
	"  -i, --interval MS       time between rounds per agent (default 2000)\n"
	"      --max-rounds N      rounds at once, one per agent (default 16, at most 1024);\n"
	"                          agents due meanwhile wait in a queue, longest-waiting\n"
	"                          first, and are reported late a second past their due time\n"
	"      --verifier-id ID    this verifier's name among those sharing --db: its leases\n"
	"                          and heartbeat (default HOST-PID; [A-Za-z0-9._-], 63 at most);\n"
	"                          unique among those running\n"
	"      --lease S           an agent claimed for a round is ours this long; a verifier\n"
	"                          that dies leaves its agents to the others after it\n"
	"                          (default --agent-timeout + 5; more than --agent-timeout)\n"
	"  -c, --ek-ca FILE        PEM roots/intermediates EK certificates must chain to;\n"
	"                          without it the certificate must still match the EK\n"
	"      --policy-key PEM    accept only reference policies in a DSSE envelope signed\n"
	"                          by this key (public key or certificate; repeatable),\n"
	"                          checked on upload and again whenever one is loaded\n"
	"      --trust-db FILE     this verifier's own trust database (vigil trust build):\n"
	"                          a digest a policy does not allow is named by its Debian\n"
	"                          package, a newer version than the policy's fails as\n"
	"                          policy.package_newer; read once at start\n"
	"      --trust-key FILE    its raw HMAC key (needed with --trust-db)\n"
	"  -w, --webhook URL       POST a JSON notice there on every failure (and state.late)\n"
	"  -x, --on-fail CMD       run CMD (sh -c) on every failure, with VIGIL_AGENT,\n"
	"                          VIGIL_FAILURE, VIGIL_MESSAGE, VIGIL_PATH in the environment;\n"
	"                          also once when an agent becomes late (state.late)\n"
	"      --notify-queue N    notices waiting for --webhook (and for --on-fail), each\n"
	"                          sent from a queue of its own, never holding up a round;\n"
	"                          beyond N a new one is dropped, counted and logged\n"
	"                          (default 1024)\n"
	"  -b, --bank ALGO         PCR bank to quote (default sha256)\n"
	"  -p, --pcrs LIST         PCRs to quote (default 10)\n"
	"      --agent-ca FILE     PEM CA that agents' HTTPS certificates chain to\n"
	"      --client-cert FILE  our PEM client certificate for agents (mutual TLS)\n"
	"      --client-key FILE   and its key\n"
	"      --api-cert FILE     serve the REST API over HTTPS with this PEM certificate\n"
	"      --api-key FILE      and its key\n"
	"      --ear-key FILE      sign EARs (attestation results: GET /v1/agents/ID/ear) with\n"
	"                          this PEM private key (EC P-256/384/521, RSA, Ed25519); held\n"
	"                          by the key process only (docs/attest-ear.md)\n"
	"      --api-client-ca FILE  a client certificate chaining to it is an admin credential\n"
	"      --api-read-client-ca FILE  one chaining to this CA is a read credential\n"
	"      --push-client-ca FILE  one chaining to this CA is a pushing agent's credential\n"
	"                          (role agent, bound to the agent it registers; push mode:\n"
	"                          docs/attest-push.md)\n"
	"Credentials (docs/api-auth.md): every API route needs one\n"
	"      --auth-tokens FILE  bearer tokens as ROLE ID SHA256 lines, role admin, read\n"
	"                          or agent (a pushing agent)\n"
	"                          (default /etc/vigil/verifier-tokens); mode 600\n"
	"      --create-token ROLE OUT  make a token (admin, read or agent; verifier: for agents'\n"
	"                          lists, with an explicit --auth-tokens), write it to OUT\n"
	"                          (a new file, 0600), list its hash in --auth-tokens; exit\n"
	"      --agent-token-file FILE  the token we present to agents (role verifier there)\n"
	"      --insecure-no-auth  no credentials at all (tests only): anyone may change state\n"
	"      --background        return once the verifier serves (0), or with its exit\n"
	"                          status when it stops before (2: a refused setting)\n"
	"      --version           print the version and exit\n"
	"Limits (hostile peers):\n"
	"      --api-timeout S     a request must arrive whole within S seconds (default 10)\n"
	"      --api-max-conn N    connections per client address (default 64)\n"
	"      --api-connections N API connections open at once, in all (default 1024, at\n"
	"                          most 262144); an idle TLS connection costs this verifier\n"
	"                          about 30 KiB (docs/attest-push.md): 1024 about 30 MiB\n"
	"      --api-idle-timeout S  a kept-alive connection may wait S seconds for its next\n"
	"                          request (default 60: a pushing agent keeps its connection\n"
	"                          between pushes); a new connection's first request and a\n"
	"                          started request still have --api-timeout\n"
	"      --max-body BYTES    largest API request body, e.g. a policy (default 32M)\n"
	"      --agent-timeout S   whole exchange with an agent or the webhook (default 30)\n"
	"      --agent-connections N  agents' connections kept open between rounds, one per\n"
	"                          agent, at most N (default 4096): about 56 KiB each over\n"
	"                          TLS, 17 KiB over HTTP, and a descriptor; with N kept, the\n"
	"                          other agents' rounds make a connection each\n"
	"      --db-timeout S      one database call: SQLite's busy wait, PostgreSQL's answer\n"
	"                          (default 10; a hung server fails the call, not the verifier)\n"
	"      --max-log BYTES     largest measurement-list answer of one round (default 64M)\n";

/* the long options without a letter */
enum { OPT_API_CONNECTIONS = 0x100, OPT_API_IDLE_TIMEOUT };

/*
 * A count option @opt (--max-rounds, --notify-queue, --agent-connections,
 * --api-connections, --api-idle-timeout): digits only, 1 to @max, into
 * *@ret; @what is what it counts, for the refusal. Return: 0, -1 (said).
 */
static int parse_count(const char *opt, const char *arg, unsigned long max, const char *what,
		       unsigned int *ret)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 10);

	if (*arg < '0' || *arg > '9' || *end || n == 0 || n > max) {
		vlog_err("%s %s: %s, 1 to %lu", opt, arg, what, max);
		return -1;
	}
	*ret = (unsigned int)n;
	return 0;
}

/* --pcrs N,... into vf->mask. Return: 0, -1 (said). */
static int parse_pcrs(struct verifier *vf, const char *arg)
{
	const char *s = arg;
	char *end;

	vf->mask = 0;
	while (*s) {
		unsigned long n = strtoul(s, &end, 10);

		if (end == s || n >= 24) {
			vlog_err("--pcrs %s", arg);
			return -1;
		}
		vf->mask |= 1u << n;
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/* A limit option (@c its letter): seconds, or bytes with K/M. Return: 0, -1 (said). */
static int parse_limit(struct verifier *vf, struct vf_args *a, int c, const char *arg)
{
	char *end;
	unsigned long long n = strtoull(arg, &end, 10);

	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	if (end == arg || *end || *arg == '-' || n == 0 ||
	    (c != 'M' && c != 'G' && n > 86400) || n > (1ull << 32)) {
		vlog_err("%s: a positive number is needed", arg);
		return -1;
	}
	if (c == 'T')
		a->api_timeout = (unsigned int)n;
	else if (c == 'N')
		a->api_max_conn = (unsigned int)n;
	else if (c == 'U')
		vf->agent_timeout = (unsigned int)n;
	else if (c == 'D')
		a->db_timeout = (unsigned int)n;
	else if (c == 'O')
		a->lease = (unsigned int)n;
	else if (c == 'M')
		vf->max_body = (size_t)n;

	else
		vf->max_log = (size_t)n;
	return 0;
}

/* --policy-key PEM: one more key policies may be signed with. Return: 0, -1 (said). */
static int add_policy_key(struct verifier *vf, const char *path)
{
	struct vg_diag kd = { 0 };
	char *pem = http_slurp(path);
	int kr;

	if (!vf->policy_keys && vg_dsse_keys_new(&vf->policy_keys) < 0) {
		free(pem);
		return -1;
	}
	kr = pem ? vg_dsse_keys_add(vf->policy_keys, (const uint8_t *)pem, strlen(pem), &kd) :
		   vg_diag_set(&kd, -errno, "%s", errno == EFBIG ? "larger than 1 MiB" :
					  errno == EINVAL ? "not text (a NUL byte)" :
					  strerror(errno));
	free(pem);
	if (kr < 0) {
		vlog_err("%s: %s", path, kd.msg);
		return -1;
	}
	return 0;
}

int vf_parse_args(struct verifier *vf, struct vf_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "db", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "max-rounds", required_argument, NULL, 'm' },
		{ "verifier-id", required_argument, NULL, 'j' },
		{ "lease", required_argument, NULL, 'O' },
		{ "ek-ca", required_argument, NULL, 'c' },
		{ "webhook", required_argument, NULL, 'w' },
		{ "on-fail", required_argument, NULL, 'x' },
		{ "notify-queue", required_argument, NULL, 'q' },
		{ "agent-connections", required_argument, NULL, 'n' },
		{ "bank", required_argument, NULL, 'b' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "agent-ca", required_argument, NULL, 'A' },
		{ "client-cert", required_argument, NULL, 'C' },
		{ "client-key", required_argument, NULL, 'K' },
		{ "api-cert", required_argument, NULL, 'P' },
		{ "api-key", required_argument, NULL, 'Q' },
		{ "ear-key", required_argument, NULL, 'e' },
		{ "api-client-ca", required_argument, NULL, 'R' },
		{ "api-read-client-ca", required_argument, NULL, 'r' },
		{ "push-client-ca", required_argument, NULL, 'W' },
		{ "api-timeout", required_argument, NULL, 'T' },
		{ "api-max-conn", required_argument, NULL, 'N' },
		{ "api-connections", required_argument, NULL, OPT_API_CONNECTIONS },
		{ "api-idle-timeout", required_argument, NULL, OPT_API_IDLE_TIMEOUT },
		{ "max-body", required_argument, NULL, 'M' },
		{ "agent-timeout", required_argument, NULL, 'U' },
		{ "db-timeout", required_argument, NULL, 'D' },
		{ "max-log", required_argument, NULL, 'G' },
		{ "policy-key", required_argument, NULL, 'Y' },
		{ "auth-tokens", required_argument, NULL, 'a' },
		{ "create-token", required_argument, NULL, 'k' },
		{ "agent-token-file", required_argument, NULL, 'g' },
		{ "trust-db", required_argument, NULL, 'E' },
		{ "trust-key", required_argument, NULL, 'H' },
		{ "insecure-no-auth", no_argument, NULL, 'I' },
		{ "background", no_argument, NULL, 'J' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, b;

	while ((c = getopt_long(argc, argv, "L:d:i:c:w:x:b:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': a->listen = optarg; break;
		case 'd': a->db = optarg; break;
		case 'i': vf->interval_ms = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'm':
			if (parse_count("--max-rounds", optarg, VF_ROUNDS_MAX, "a number of rounds",
					&vf->max_rounds) < 0)
				return 2;
			break;
		case 'c': vf->ek_ca = optarg; break;
		case 'j': a->verifier_id = optarg; break;
		case 'w': vf->webhook = optarg; break;
		case 'x': vf->on_fail = optarg; break;
		case 'q':
			if (parse_count("--notify-queue", optarg, VF_NOTIFY_QUEUE_MAX, "a number of notices",
					&vf->notify_queue) < 0)
				return 2;
			break;
		case 'n':
			if (parse_count("--agent-connections", optarg, VF_AGENT_CONNS_MAX,
					"a number of connections", &vf->agent_conns) < 0)
				return 2;
			vf->agent_conns_set = true;
			break;
		case 'b':
			b = vg_hash_by_name(optarg);
			if (b < 0 || !vg_attest_tpm_alg((unsigned int)b)) {
				vlog_err("--bank %s: unknown", optarg);
				return 2;
			}
			vf->bank = (unsigned int)b;
			break;
		case 'p':
			if (parse_pcrs(vf, optarg) < 0)
				return 2;
			break;
		case 'A': vf->agent_ca = optarg; break;
		case 'C': vf->client_cert = optarg; break;
		case 'K': vf->client_key = optarg; break;
		case 'P': a->api_cert = optarg; break;
		case 'Q': a->api_key = optarg; break;
		case 'e': a->ear_key = optarg; break;
		case 'R': a->api_ca = optarg; break;
		case 'r': a->read_ca = optarg; break;
		case 'W': a->push_ca = optarg; break;
		case 'T':
		case 'N':
		case 'U':
		case 'D':
		case 'M':
		case 'G':
		case 'O':
			if (parse_limit(vf, a, c, optarg) < 0)
				return 2;
			break;
		case OPT_API_CONNECTIONS:
			if (parse_count("--api-connections", optarg, VF_API_CONNECTIONS_MAX,
					"a number of connections", &a->api_connections) < 0)
				return 2;
			break;
		case OPT_API_IDLE_TIMEOUT:
			if (parse_count("--api-idle-timeout", optarg, 86400, "seconds",
					&a->api_idle_timeout) < 0)
				return 2;
			break;
		case 'Y':
			if (add_policy_key(vf, optarg) < 0)
				return 2;
			break;
		case 'a': a->tokens = optarg; break;
		case 'k': a->create_role = optarg; break;
		case 'g': a->agent_token_file = optarg; break;
		case 'E': a->trust_db = optarg; break;
		case 'H': a->trust_key = optarg; break;
		case 'I': vf->no_auth = true; break;
		case 'J': a->background = true; break;
		case 'V': printf("vigil-verifier %s\n", VIGIL_VERSION); return 0;
		case 'h': fputs(vf_help, stdout); return 0;
		default: fputs(vf_help, stderr); return 2;
		}
	}
	return -1;
}
