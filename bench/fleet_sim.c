// SPDX-License-Identifier: MIT
/*
 * vigil-fleet-sim - N simulated vigil-agents in one process, on one
 * loopback port, for bench/fleet: agent ID answers at
 * http://127.0.0.1:PORT/a/ID exactly what vigil-agent answers at its root
 * (agent/agent_routes.c; the JSON is attest_api.h's builders):
 *
 *   GET  /a/ID/v1/identity      {id, ek_pub, ek_cert, ak_pub}
 *   POST /a/ID/v1/activate      {proof: HMAC-SHA256(secret, ID)}
 *   GET  /a/ID/v1/quote?nonce=&bank=sha256&mask=   {attest, sig, bank, pcrs}
 *   GET  /a/ID/v1/log?offset=N  the binary ima-ng list from byte N
 *   GET  /a/ID/v1/bootlog       404 (no boot event log)
 *
 * Each agent has its own software TPM (fleet_sim_tpm.h: RSA-2048 EK with a
 * certificate from the CA written to --ek-ca-out, RSA-2048 AK, PCR 10)
 * and its own measurement list, which grows by --entries new entries
 * (extended into its PCR 10) before every quote it serves: every round
 * has new entries to replay and judge, and every quote signs the
 * verifier's nonce over a new PCR value. Registration is the real one
 * (MakeCredential by the verifier, ActivateCredential here with the EK's
 * private key). The lists hold --files distinct files (the same for every
 * agent), written once as a list to --policy-log so that `vigil attest
 * policy create --log` makes the reference policy that trusts them all;
 * entry j of every list is file (j-1) mod --files, so a list is computed,
 * not stored: an agent costs its keys and 64 bytes of state.
 *
 * --tamper ID: from its second quote on, agent ID measures a changed
 * content of its files (a new digest, extended and logged as the kernel
 * would): its round fails policy (policy.digest). --tamper-replay ID:
 * from its second quote on, the list it serves names other files (ones
 * the policy allows) than the ones its PCR 10 was extended with: its round
 * fails the replay (log.pcr_mismatch). --tamper-every K: every K-th
 * agent tampered as by --tamper (a fleet with failing agents among it).
 *
 * --quote-log FILE: one line per quote served, "ID WALL_MS PEER_ADDR:PORT",
 * written at least every second and at exit. --request-log FILE: the same
 * for every request to an agent, with its path: "ID WALL_MS PEER PATH"
 * (which requests came over one connection).
 *
 * --tls-cert/--tls-key: HTTPS (libmicrohttpd's gnutls), --tls-client-ca:
 * a verified client certificate required (the verifier's --client-cert),
 * as vigil-agent's; every connection's handshake counted, full or
 * resumed (SIGUSR2 prints the counters). --tamper-on-signal K: SIGUSR1
 * sets K agents spread over the fleet tampering (as --tamper) from their
 * next quote; the quote log marks every quote covering a tampered entry.
 * --push URL: the agents push instead (fleet_sim_push.c); the answers are
 * made in fleet_sim_host.c for both modes.
 *
 * It checks no token (a verifier's token is accepted and ignored) and
 * listens on 127.0.0.1 only. Not installed: a load generator.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdatomic.h>

#include "http_reply.h"
#include "vigil/attest.h"
#include "vigil/attest_api.h"

#include "fleet_sim.h"

#define BODY_MAX (64 * 1024)
#define TAMPER_MAX 16
#define PEM_MAX (64 * 1024)

static const char help[] =
	"usage: vigil-fleet-sim --agents N --port PORT --ek-ca-out FILE [options]\n"
	"N simulated vigil-agents at http://127.0.0.1:PORT/a/ID (bench/fleet_sim.c).\n"
	"  -n, --agents N          agents (default 50)\n"
	"      --prefix P          agent ids P00000, P00001, ... (default sim)\n"
	"  -p, --port PORT         port on 127.0.0.1 (required)\n"
	"  -k, --entries K         new list entries per quote served (default 5)\n"
	"      --files F           distinct files the lists measure (default 1000)\n"
	"      --ek-ca-out FILE    write the EK CA certificate there (new file; required)\n"
	"      --policy-log FILE   write a list of every file measured there (new file), for\n"
	"                          `vigil attest policy create --log FILE`\n"
	"      --quote-log FILE    one line per quote served: ID WALL_MS PEER_ADDR:PORT\n"
	"      --request-log FILE  one line per request to an agent: ID WALL_MS PEER PATH\n"
	"      --tamper ID         from its second quote on, ID measures changed files\n"
	"      --tamper-replay ID  from its second quote on, ID's list disagrees with its PCR\n"
	"      --tamper-every K    every K-th agent (P0000K-1, P0000(2K-1), ...) as --tamper\n"
	"      --tamper-on-signal K  on SIGUSR1, K agents spread over the fleet start to\n"
	"                          measure changed files from their next quote (the quote\n"
	"                          log marks the quotes that cover them: \"tampered\")\n"
	"      --tls-cert FILE     serve HTTPS with this PEM certificate (and --tls-key FILE)\n"
	"      --tls-client-ca FILE  ask the verifier for a client certificate chaining to it\n"
	"                          (mutual TLS, as vigil-agent's --tls-client-ca)\n"
	"      --push URL          every agent pushes to the verifier at URL (as vigil-agent\n"
	"                          --push): register, activate, then a push every interval\n"
	"      --push-ca FILE      the verifier's certificate's CA (https URL)\n"
	"      --push-client-ca-out FILE  each agent a client certificate (CN = its id) from\n"
	"                          a new CA, written there: the verifier's --push-client-ca\n"
	"      --push-log FILE     one line per evidence pushed: ID WALL_MS HTTP_CODE MS\n"
	"      --push-threads T    pushing threads for all the agents (default 8)\n"
	"      --push-keepalive    keep each agent's connection between its pushes (each\n"
	"                          agent from its own source address in 127/8)\n"
	"SIGUSR2 prints a line of counters (connections, TLS handshakes full and resumed,\n"
	"requests, quotes) to stdout.\n"
	"      --threads T         HTTP threads (default 2)\n"
	"      --independent-keys  one EVP keygen per key (slow) instead of the prime pool\n";

struct upload {
	char *buf;
	size_t len;
	bool big;
};

static void peer_name(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
		MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr_in *sin = ci ? (const struct sockaddr_in *)ci->client_addr : NULL;
	char ip[INET_ADDRSTRLEN];

	if (!sin || sin->sin_family != AF_INET || !inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)))
		snprintf(out, cap, "?");
	else
		snprintf(out, cap, "%s:%u", ip, ntohs(sin->sin_port));
}

static void rlog_write(struct sim *s, const char *id, size_t idlen, const char *path,
		       struct MHD_Connection *c)
{
	char peer[64];
	int64_t now = fsim_wall_ms();

	if (!s->rlog)
		return;
	peer_name(c, peer, sizeof(peer));
	pthread_mutex_lock(&s->qlog_lock);
	fprintf(s->rlog, "%.*s %" PRId64 " %s %s\n", (int)idlen, id, now, peer, path);
	fflush(s->rlog);
	pthread_mutex_unlock(&s->qlog_lock);
}

static enum MHD_Result do_identity(struct sagent *a, struct MHD_Connection *c)
{
	enum MHD_Result ret;
	char *text = NULL;

	ret = fsim_identity(a, &text) < 0 ? MHD_NO : http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	return ret;
}

static enum MHD_Result do_activate(struct sagent *a, struct MHD_Connection *c,
				   const struct upload *u)
{
	enum MHD_Result ret;
	char *text = NULL, err[256];
	int r = fsim_activate(a, u->buf, u->len, &text, err, sizeof(err));

	if (r == -EBADMSG)
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, err);
	else if (r < 0 && r != -ENOMEM)
		ret = http_reply_error(c, MHD_HTTP_FORBIDDEN, err);
	else
		ret = r < 0 ? MHD_NO : http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	return ret;
}

static enum MHD_Result do_quote(struct sim *s, struct sagent *a, struct MHD_Connection *c)
{
	const char *nh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
	const char *bs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "bank");
	const char *ms = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mask");
	struct vg_api_quote_req qr;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char *text = NULL, peer[64];
	bool tampered = false;
	int r;

	if (vg_api_quote_query_parse(nh, bs, ms, &qr, &d) < 0)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	r = fsim_quote(s, a, &qr, &text, &tampered);
	if (r == -EOPNOTSUPP)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, "vigil-fleet-sim: bank sha256 only");
	if (r == -EIO)
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "quote: signing failed");
	if (r < 0)
		return MHD_NO;
	peer_name(c, peer, sizeof(peer));
	fsim_qlog_write(s, a->id, peer, tampered);
	ret = http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	return ret;
}

/* The list from byte ?offset= to its size now, and that size in X-Vigil-Log-Size. */
static enum MHD_Result do_log(struct sim *s, struct sagent *a, struct MHD_Connection *c)
{
	const char *os = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
	struct vg_diag d = { 0 };
	uint64_t off, size;
	uint8_t *buf = NULL;
	size_t len = 0;
	char hv[32];

	if (vg_api_log_query_parse(os, &off, &d) < 0)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	if (fsim_log(s, a, off, &buf, &len, &size) < 0)
		return MHD_NO;
	snprintf(hv, sizeof(hv), "%" PRIu64, size);
	return http_reply_bytes(c, MHD_HTTP_OK, buf, len, "X-Vigil-Log-Size", hv);
}

/* what the server did, for SIGUSR2 */
static atomic_ulong n_conns, n_full, n_resumed, n_requests, n_noclient;

struct conn {
	bool seen;			/* its TLS session counted */
	bool client_ok;
};

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	(void)cls, (void)c;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = calloc(1, sizeof(struct conn));
		atomic_fetch_add(&n_conns, 1);
	} else {
		free(*socket_context);
		*socket_context = NULL;
	}
}

static bool tls_client_ca;	/* --tls-client-ca: a verified client certificate required */

/* Count the connection's TLS handshake once (full or resumed); false: no good client certificate. */
static bool tls_check(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
		MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;
	gnutls_session_t ts;
	unsigned int st = 1;

	if (!k)
		return true;
	if (!k->seen) {
		k->seen = true;
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		ts = ci ? (gnutls_session_t)ci->tls_session : NULL;
		if (ts) {
			atomic_fetch_add(gnutls_session_is_resumed(ts) ? &n_resumed : &n_full, 1);
			k->client_ok = !tls_client_ca ||
				(gnutls_certificate_verify_peers2(ts, &st) == 0 && st == 0 &&
				 gnutls_certificate_get_peers(ts, &(unsigned int){ 0 }) != NULL);
		} else {
			k->client_ok = !tls_client_ca;
		}
		if (!k->client_ok)
			atomic_fetch_add(&n_noclient, 1);
	}
	return k->client_ok;
}

static enum MHD_Result route(struct sim *s, struct MHD_Connection *c, const char *url,
			     const char *method, const struct upload *u)
{
	const char *id, *slash;
	struct sagent *a;
	bool get = strcmp(method, "GET") == 0;

	atomic_fetch_add(&n_requests, 1);
	if (!tls_check(c))
		return http_reply_error(c, MHD_HTTP_FORBIDDEN, "no client certificate from --tls-client-ca");
	if (strncmp(url, "/a/", 3) != 0 || !(slash = strchr(url + 3, '/')))
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint: /a/ID/v1/...");
	id = url + 3;
	a = fsim_agent_find(s, id, (size_t)(slash - id));
	if (!a)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such agent");
	rlog_write(s, id, (size_t)(slash - id), slash, c);
	if (get && strcmp(slash, "/v1/identity") == 0)
		return do_identity(a, c);
	if (get && strcmp(slash, "/v1/quote") == 0)
		return do_quote(s, a, c);
	if (get && strcmp(slash, "/v1/log") == 0)
		return do_log(s, a, c);
	if (get && strcmp(slash, "/v1/bootlog") == 0)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no boot event log on this host");
	if (strcmp(method, "POST") == 0 && strcmp(slash, "/v1/activate") == 0)
		return do_activate(a, c, u);
	return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;

	(void)version;
	if (!u) {
		u = calloc(1, sizeof(*u));
		*con_cls = u;
		return u ? MHD_YES : MHD_NO;
	}
	if (*data_len) {
		if (u->len + *data_len > BODY_MAX) {
			u->big = true;
		} else {
			char *nb = realloc(u->buf, u->len + *data_len + 1);

			if (!nb)
				return MHD_NO;
			u->buf = nb;
			memcpy(u->buf + u->len, data, *data_len);
			u->len += *data_len;
			u->buf[u->len] = 0;
		}
		*data_len = 0;
		return MHD_YES;
	}
	if (u->big)
		return http_reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
	return route(cls, c, url, method, u);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls, (void)c, (void)toe;
	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "vigil-fleet-sim: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static unsigned long num(const char *s, unsigned long lo, unsigned long hi, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi)
		die("%s: out of range or not a number", what);
	return v;
}

/* A PEM file, whole, NUL-terminated; NULL unreadable or larger than PEM_MAX. */
static char *pem_read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *b = f ? calloc(1, PEM_MAX + 1) : NULL;
	size_t n = b ? fread(b, 1, PEM_MAX + 1, f) : 0;

	if (f)
		fclose(f);
	if (!b || n == 0 || n > PEM_MAX) {
		free(b);
		return NULL;
	}
	return b;
}

/* SIGUSR1: @k agents spread over the fleet measure changed files from their next quote. */
static void tamper_now(struct sim *s, unsigned int k)
{
	size_t step, done = 0;

	if (!k)
		return;
	step = s->n / k ? s->n / k : 1;
	printf("vigil-fleet-sim: tampering from %" PRId64 " (wall ms):", fsim_wall_ms());
	for (size_t i = step / 2; i < s->n && done < k; i += step, done++) {
		struct sagent *a = &s->ag[i];

		pthread_mutex_lock(&a->lock);
		if (a->tamper == T_NONE) {
			a->tamper = T_FILE;
			a->tamper_from = UINT64_MAX;
		}
		pthread_mutex_unlock(&a->lock);
		printf(" %s", a->id);
	}
	putchar('\n');
	fflush(stdout);
}

static void stats(FILE *f)
{
	fprintf(f, "vigil-fleet-sim: stats: connections %lu tls_full %lu tls_resumed %lu "
		"requests %lu refused_no_client_cert %lu\n", atomic_load(&n_conns),
		atomic_load(&n_full), atomic_load(&n_resumed), atomic_load(&n_requests),
		atomic_load(&n_noclient));
	fflush(f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "agents", required_argument, NULL, 'n' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "port", required_argument, NULL, 'p' },
		{ "entries", required_argument, NULL, 'k' },
		{ "files", required_argument, NULL, 'F' },
		{ "ek-ca-out", required_argument, NULL, 'C' },
		{ "policy-log", required_argument, NULL, 'L' },
		{ "quote-log", required_argument, NULL, 'Q' },
		{ "request-log", required_argument, NULL, 'r' },
		{ "tamper", required_argument, NULL, 'T' },
		{ "tamper-replay", required_argument, NULL, 'R' },
		{ "tamper-every", required_argument, NULL, 'E' },
		{ "threads", required_argument, NULL, 't' },
		{ "independent-keys", no_argument, NULL, 'I' },
		{ "tamper-on-signal", required_argument, NULL, 'S' },
		{ "tls-cert", required_argument, NULL, 'c' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "tls-client-ca", required_argument, NULL, 'A' },
		{ "push", required_argument, NULL, 'U' },
		{ "push-ca", required_argument, NULL, 'a' },
		{ "push-client-ca-out", required_argument, NULL, 'o' },
		{ "push-log", required_argument, NULL, 'l' },
		{ "push-threads", required_argument, NULL, 'j' },
		{ "push-keepalive", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prefix = "sim", *ca_out = NULL, *policy_log = NULL, *quote_log = NULL,
		   *request_log = NULL;
	const char *tamper[TAMPER_MAX];
	enum tamper tamper_kind[TAMPER_MAX];
	const char *tls_cert = NULL, *tls_key = NULL, *tls_ca = NULL, *push_log = NULL;
	char *cert_pem = NULL, *key_pem = NULL, *ca_pem = NULL;
	unsigned int ntamper = 0, threads = 2, port = 0, every = 0, on_signal = 0;
	struct fsim_push_opts po = { .threads = 8 };
	bool independent = false;
	struct sim s = { .n = 50, .files = 1000, .per_quote = 5 };
	struct fsim_keypool *kp = NULL;
	struct fsim_ca ca;
	struct MHD_Daemon *d = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timespec ta, tb;
	char where[600];
	sigset_t sigs;
	int opt, sig;

	while ((opt = getopt_long(argc, argv, "n:p:k:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			s.n = num(optarg, 1, 1000000, "--agents");
			break;
		case 'P':
			prefix = optarg;
			break;
		case 'p':
			port = (unsigned int)num(optarg, 1, 65535, "--port");
			break;
		case 'k':
			s.per_quote = (unsigned int)num(optarg, 0, 10000, "--entries");
			break;
		case 'F':
			s.files = (unsigned int)num(optarg, 1, 999999, "--files");
			break;
		case 'C':
			ca_out = optarg;
			break;
		case 'L':
			policy_log = optarg;
			break;
		case 'Q':
			quote_log = optarg;
			break;
		case 'r':
			request_log = optarg;
			break;
		case 'T':
		case 'R':
			if (ntamper == TAMPER_MAX)
				die("at most %s agents tampered", "16");
			tamper_kind[ntamper] = opt == 'T' ? T_FILE : T_REPLAY;
			tamper[ntamper++] = optarg;
			break;
		case 'E':
			every = (unsigned int)num(optarg, 1, 1000000, "--tamper-every");
			break;
		case 't':
			threads = (unsigned int)num(optarg, 1, 64, "--threads");
			break;
		case 'I':
			independent = true;
			break;
		case 'S':
			on_signal = (unsigned int)num(optarg, 1, 1000000, "--tamper-on-signal");
			break;
		case 'c':
			tls_cert = optarg;
			break;
		case 'K':
			tls_key = optarg;
			break;
		case 'A':
			tls_ca = optarg;
			break;
		case 'U':
			po.url = optarg;
			break;
		case 'a':
			po.ca = optarg;
			break;
		case 'o':
			po.client_ca_out = optarg;
			break;
		case 'l':
			push_log = optarg;
			break;
		case 'e':
			po.keepalive = true;
			break;
		case 'j':
			po.threads = (unsigned int)num(optarg, 1, 256, "--push-threads");
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			fputs(help, stderr);
			return 2;
		}
	}
	if (optind != argc || (!port && !po.url) || !ca_out) {
		fputs(help, stderr);
		return 2;
	}
	if (!tls_cert != !tls_key)
		die("%s", "--tls-cert and --tls-key go together");
	if (tls_ca && !tls_cert)
		die("%s", "--tls-client-ca needs --tls-cert");
	if (po.url && strncmp(po.url, "http://", 7) != 0 && strncmp(po.url, "https://", 8) != 0)
		die("--push %s: an http:// or https:// URL", po.url);
	if (tls_cert && (!(cert_pem = pem_read(tls_cert)) || !(key_pem = pem_read(tls_key)) ||
			 (tls_ca && !(ca_pem = pem_read(tls_ca)))))
		die("%s", "--tls-cert, --tls-key or --tls-client-ca: not readable (a PEM file)");
	tls_client_ca = tls_ca != NULL;
	if (strlen(prefix) + 8 >= VG_API_ID_MAX || !vg_api_id_ok(prefix, strlen(prefix)))
		die("--prefix %s: [A-Za-z0-9._-], shorter", prefix);
	clock_gettime(CLOCK_MONOTONIC, &s.t0);
	if (fsim_lists_make(&s) < 0)
		die("%s", "out of memory");
	if (policy_log && fsim_policy_log_write(&s, policy_log) < 0)
		die("--policy-log %s: cannot create it (it must not exist)", policy_log);
	if (fsim_ca_new(&ca, ca_out) < 0)
		die("--ek-ca-out %s: cannot create it (it must not exist)", ca_out);
	if (quote_log) {
		s.qlog = fopen(quote_log, "wx");
		if (!s.qlog)
			die("--quote-log %s: cannot create it (it must not exist)", quote_log);
		setvbuf(s.qlog, NULL, _IOFBF, 1u << 20);
	}
	if (request_log) {
		s.rlog = fopen(request_log, "wx");
		if (!s.rlog)
			die("--request-log %s: cannot create it (it must not exist)", request_log);
	}
	pthread_mutex_init(&s.qlog_lock, NULL);
	/* every agent's keys: 2N RSA-2048 keys */
	clock_gettime(CLOCK_MONOTONIC, &ta);
	if (!independent && fsim_keypool_new(2 * s.n, 2, &kp) < 0)
		die("%s", "prime pool: OpenSSL failed");
	s.ag = calloc(s.n, sizeof(*s.ag));
	for (s.tab_size = 16; s.tab_size < 2 * s.n; s.tab_size *= 2)
		;
	s.tab = calloc(s.tab_size, sizeof(*s.tab));
	if (!s.ag || !s.tab)
		die("%s", "out of memory");
	for (size_t i = 0; i < s.n; i++) {
		struct sagent *a = &s.ag[i];
		EVP_PKEY *ek = NULL, *ak = NULL;
		size_t h;

		snprintf(a->id, sizeof(a->id), "%s%05zu", prefix, i);
		if (independent) {
			ek = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
			ak = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
		} else {
			fsim_keypool_key(kp, 2 * i, &ek);
			fsim_keypool_key(kp, 2 * i + 1, &ak);
		}
		if (!ek || !ak || fsim_tpm_init(&a->tpm, ek, ak, &ca, 1000 + i) < 0)
			die("%s: keys or EK certificate: OpenSSL failed", a->id);
		pthread_mutex_init(&a->lock, NULL);
		a->tamper_from = UINT64_MAX;
		if (every && i % every == every - 1)
			a->tamper = T_FILE;
		for (h = fsim_hash(a->id, strlen(a->id)) & (s.tab_size - 1); s.tab[h];
		     h = (h + 1) & (s.tab_size - 1))
			;
		s.tab[h] = i + 1;
	}
	fsim_keypool_free(kp);
	fsim_ca_release(&ca);
	for (unsigned int i = 0; i < ntamper; i++) {
		struct sagent *a = fsim_agent_find(&s, tamper[i], strlen(tamper[i]));

		if (!a)
			die("--tamper %s: no such agent", tamper[i]);
		a->tamper = tamper_kind[i];
	}
	if (po.url && po.client_ca_out && fsim_push_certs(&s, &po) < 0)
		die("--push-client-ca-out %s: cannot create it (it must not exist), or OpenSSL failed",
		    po.client_ca_out);
	if (push_log) {
		po.log = fopen(push_log, "wx");
		if (!po.log)
			die("--push-log %s: cannot create it (it must not exist)", push_log);
		setvbuf(po.log, NULL, _IOLBF, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &tb);
	/* signals to the main thread only, before any other thread exists */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (port) {
		struct MHD_OptionItem tls[] = {
			{ MHD_OPTION_HTTPS_MEM_CERT, 0, cert_pem },
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, key_pem },
			{ ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, ca_pem },
			{ MHD_OPTION_END, 0, NULL },
		};

		if (!cert_pem)
			tls[0].option = MHD_OPTION_END;
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
				     MHD_USE_ERROR_LOG | (cert_pem ? MHD_USE_TLS : 0),
				     0, NULL, NULL, handler, &s,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				     MHD_OPTION_THREAD_POOL_SIZE, threads,
				     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				     MHD_OPTION_CONNECTION_LIMIT, 16384u,
				     MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
				     MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
		if (!d) {
			fprintf(stderr, "vigil-fleet-sim: cannot listen on 127.0.0.1:%u%s\n", port,
				cert_pem ? " (or the TLS certificate and key do not load)" : "");
			return 2;
		}
	}
	if (po.url)
		snprintf(where, sizeof(where), "pushing to %s as ", po.url);
	else
		snprintf(where, sizeof(where), "at %s://127.0.0.1:%u/a/", cert_pem ? "https" : "http",
			 port);
	printf("vigil-fleet-sim: %zu agents %s%s%05u .. %s%05zu (keys and EK certificates in %.1f s)\n",
	       s.n, where, prefix, 0u, prefix, s.n - 1,
	       (double)(tb.tv_sec - ta.tv_sec) + (double)(tb.tv_nsec - ta.tv_nsec) / 1e9);
	fflush(stdout);
	if (po.url && fsim_push_start(&s, &po) < 0)
		die("%s", "--push: cannot start the pushing threads");
	for (;;) {
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig == SIGUSR1)
			tamper_now(&s, on_signal);
		else if (sig == SIGUSR2 && po.url)
			fsim_push_stats(stdout);
		else if (sig == SIGUSR2)
			stats(stdout);
		else
			break;
	}
	if (po.url)
		fsim_push_stop(stdout);
	if (d)
		MHD_stop_daemon(d);
	if (s.qlog)
		fclose(s.qlog);
	if (s.rlog)
		fclose(s.rlog);
	for (size_t i = 0; i < s.n; i++)
		fsim_tpm_release(&s.ag[i].tpm);
	free(s.ag);
	free(s.tab);
	free(s.file);
	free(s.changed);
	free(cert_pem);
	free(key_pem);
	free(ca_pem);
	if (po.log)
		fclose(po.log);
	return 0;
}
