// SPDX-License-Identifier: MIT
/*
 * vigil-agent - the attested host's end of remote attestation: owns the
 * TPM (EK, AK), proves the AK with TPM2_ActivateCredential when the
 * verifier registers it, and serves quotes and the measurement list
 * (the routes: agent_routes.c).
 *
 * Two processes. The parent holds the TPM and nothing else (agent_tpm.c):
 * it answers the fixed-size messages of agent_proto.h on a SOCK_SEQPACKET
 * socketpair, checks the exact size and every field, and exits on any
 * violation; the credential secret never leaves it (it returns only the
 * HMAC proof). The child, forked before the TPM is opened, parses HTTP
 * (agent_http.c), reads the log file, and runs sandboxed (--user's
 * uid/gid, PR_SET_NO_NEW_PRIVS, Landlock, seccomp: agent_privsep.c).
 * HTTP on the address given, or HTTPS with --tls-cert/--tls-key; with
 * --tls-client-ca a client certificate that chains to it (mutual TLS:
 * the verifier's certificate) is a credential.
 * Every route needs a credential (docs/api-auth.md): that certificate, or
 * a bearer token listed with role "verifier" in --auth-tokens (default
 * /etc/vigil/agent-tokens, hashes only, made by `vigil-verifier
 * --create-token verifier`); without either the agent does not start,
 * unless --insecure-no-auth (tests).
 *
 * Every setting is checked before the fork (the listen address: a port
 * out of range or in use is named as such; the TLS files; the state
 * directory); the TPM process then opens the TPM (--tcti unreachable:
 * exit 2, naming it). READY=1 goes to $NOTIFY_SOCKET (notify.h) from the
 * main process (the TPM process, which systemd watches) once the network
 * process says, through a pipe, that it listens.
 *
 * This file: the options, the fork, and the network process's start.
 * Built with -DVIGIL_AGENT_TAMPER it is vigil-agent-tamper, the test
 * build with --tamper-file (agent_tamper.h); the shipped vigil-agent
 * answers that option as unknown.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "vigil/auth.h"
#include "vigil/config.h"

#include "agent.h"
#include "log.h"
#include "agent_proto.h"
#include "agent_tamper.h"
#include "vigil/tpm_attest.h"
#include "background.h"
#include "http_auth.h"
#include "http_guard.h"
#include "http_util.h"
#include "listen.h"
#include "notify.h"
#include "sandbox.h"
#include "tls_files.h"

static const char help[] =
	"usage: vigil-agent --listen ADDR:PORT --state DIR [--log FILE] [--id ID]\n"
	"                   [--tcti TCTI] [--config FILE] [--ak ecc|rsa] [--ek-type TYPE]\n"
	"       vigil-agent --push URL --state DIR [--push-ca FILE] [--push-cert FILE\n"
	"                   --push-key FILE] [--push-token-file FILE] [--log FILE] [--id ID]\n"
	"Serve TPM quotes and the measurement list to vigil-verifier, or push them to it.\n"
	"  -L, --listen ADDR:PORT  address to listen on (e.g. 127.0.0.1:9002)\n"
	"  -s, --state DIR         keeps the AK blob (DIR/ak.blob) across restarts\n"
	"  -l, --log FILE          measurement list (default /run/vigil/binary_runtime_measurements)\n"
	"  -i, --id ID             agent id (default: the host name)\n"
	"  -t, --tcti TCTI         TPM (default tpm.tcti of --config, else $VIGIL_TCTI,\n"
	"                          else device:/dev/tpmrm0)\n"
	"      --config FILE       vigil.conf(5) to read tpm.tcti from (the unit's:\n"
	"                          /etc/vigil/vigil.conf, as vigild's)\n"
	"  -a, --ak ecc|rsa        type of a new AK (default ecc: P-256, fast quotes)\n"
	"      --ek-type TYPE      the endorsement key: rsa2048 (default, template L-1),\n"
	"                          ecc-p256 (L-2) or ecc-p384 (H-3, swtpm_setup's ECC EK);\n"
	"                          its certificate is read from its NV index\n"
	"  -u, --user NAME         run the network process as NAME (the TPM process keeps\n"
	"                          its identity)\n"
	"      --boot-log FILE     TCG boot event log to serve (default: the kernel's, if any)\n"
	"      --tls-cert FILE     serve HTTPS with this PEM certificate (chain)\n"
	"      --tls-key FILE      and its PEM private key\n"
	"      --tls-client-ca FILE  a client certificate chaining to this PEM CA is a\n"
	"                          credential (mutual TLS)\n"
	"      --idle-timeout S    keep a verifier's connection open S seconds between its\n"
	"                          requests (default 30; 1 to 3600): above the verifier's\n"
	"                          --interval, a round finds it open and over TLS makes no\n"
	"                          handshake. A request still arrives whole within 10 s of\n"
	"                          its start; a refused one's connection is closed\n"
	"      --auth-tokens FILE  bearer tokens allowed to ask (ROLE ID SHA256 lines, role\n"
	"                          verifier; default /etc/vigil/agent-tokens; mode 600)\n"
	"      --insecure-no-auth  serve quotes, the lists and the boot log to anyone; with\n"
	"                          --push: plain HTTP and no credential (tests)\n"
	"Push mode (the agent opens every connection; docs/attest-push.md):\n"
	"      --push URL          register with the verifier at URL (https://HOST:PORT) and\n"
	"                          push quote, measurement list and boot log every interval\n"
	"                          it says; nothing is served (no --listen)\n"
	"      --push-ca FILE      PEM CA the verifier's certificate must chain to\n"
	"      --push-cert FILE    our PEM client certificate (mutual TLS; the verifier's\n"
	"                          --push-client-ca)\n"
	"      --push-key FILE     and its key\n"
	"      --push-token-file FILE  our token (role agent in the verifier's --auth-tokens;\n"
	"                          mode 600)\n"
	"      --background        return once the agent serves (0), or with its exit\n"
	"                          status when it stops before (2: a refused setting)\n"
	"      --version           print the version and exit\n"
#ifdef VIGIL_AGENT_TAMPER
	"      --tamper-file FILE  TEST BUILD: misbehave as its first word says (agent_tamper.h)\n"
#endif
	"Without a credential scheme (--auth-tokens file or --tls-client-ca; with --push:\n"
	"--push-cert or --push-token-file) the agent refuses to start.\n";

/* What main() parsed and read; the network process's share goes into struct agent. */
struct options {
	const char *listen, *state, *tcti, *user, *config;
	char conf_tcti[512];	/* tpm.tcti of --config */
	const char *tls_cert, *tls_key, *tls_ca, *tokens, *push_token;
	bool rsa, background;
	unsigned int ek_type;	/* enum vg_atpm_ek_type */
	unsigned int idle_s;	/* --idle-timeout */
	bool idle_set;
	struct sockaddr_in sa;
	char *cert_pem, *key_pem, *ca_pem;
	int ready_fd;		/* the network process writes one byte there when it listens */
};

/* The main process's watch on the network process's start (see the top). */
struct ready_watch {
	int fd;
	const char *listen, *id;
	atomic_bool ready;
};

static void *ready_main(void *arg)
{
	struct ready_watch *w = arg;
	ssize_t n;
	char c;

	do
		n = read(w->fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1) {
		atomic_store(&w->ready, true);
		(void)notify_send("READY=1\nSTATUS=%s listening on %s", w->id, w->listen);
	}
	close(w->fd);
	return NULL;
}

/* The TLS files parsed, --state a writable directory. Return: 0, -1 (said). */
static int check_files(const struct options *o)
{
	const char *opt[] = { "--tls-cert", "--tls-client-ca" }, *path[] = { o->tls_cert, o->tls_ca };
	struct stat st;
	char why[512];

	for (int i = 0; i < 2; i++)
		if (path[i] && tls_certs_check(path[i], why, sizeof(why)) < 0) {
			vlog_err("%s %s: %s", opt[i], path[i], why);
			return -1;
		}
	if (o->tls_key && tls_key_check(o->tls_key, o->tls_cert, why, sizeof(why)) < 0) {
		vlog_err("--tls-key %s: %s", o->tls_key, why);
		return -1;
	}
	if (stat(o->state, &st) < 0 || !S_ISDIR(st.st_mode)) {
		vlog_err("--state %s: %s", o->state,
			errno == ENOENT ? "no such directory" : "not a directory");
		return -1;
	}
	if (access(o->state, W_OK | X_OK) < 0) {
		vlog_err("--state %s: not writable (%s): the AK is kept there",
			o->state, strerror(errno));
		return -1;
	}
	return 0;
}

static void pems_free(struct options *o)
{
	/* the TLS key belongs to the network process only */
	if (o->key_pem)
		OPENSSL_cleanse(o->key_pem, strlen(o->key_pem));
	free(o->cert_pem);
	free(o->key_pem);
	free(o->ca_pem);
	o->cert_pem = o->key_pem = o->ca_pem = NULL;
}

/* Return: -1 to go on, or an exit code (help, usage). */
static int parse(int argc, char **argv, struct options *o, struct agent *a)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "state", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "id", required_argument, NULL, 'i' },
		{ "tcti", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'F' },
		{ "ak", required_argument, NULL, 'a' },
		{ "ek-type", required_argument, NULL, 'E' },
		{ "user", required_argument, NULL, 'u' },
#ifdef VIGIL_AGENT_TAMPER
		{ "tamper-file", required_argument, NULL, 'X' },
#endif
		{ "boot-log", required_argument, NULL, 'B' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "tls-client-ca", required_argument, NULL, 'A' },
		{ "idle-timeout", required_argument, NULL, 'O' },
		{ "auth-tokens", required_argument, NULL, 'T' },
		{ "insecure-no-auth", no_argument, NULL, 'I' },
		{ "background", no_argument, NULL, 'G' },
		{ "push", required_argument, NULL, 'P' },
		{ "push-ca", required_argument, NULL, 'Q' },
		{ "push-cert", required_argument, NULL, 'R' },
		{ "push-key", required_argument, NULL, 'S' },
		{ "push-token-file", required_argument, NULL, 'U' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "L:s:l:i:t:a:u:h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': o->listen = optarg; break;
		case 's': o->state = optarg; break;
		case 'l': a->log = optarg; break;
		case 'i': a->id = optarg; break;
		case 't': o->tcti = optarg; break;
		case 'F': o->config = optarg; break;
		case 'a': o->rsa = strcmp(optarg, "rsa") == 0; break;
		case 'E': {
			int t = vg_atpm_ek_type_by_name(optarg);

			if (t < 0) {
				vlog_err("--ek-type %s: rsa2048, ecc-p256 or ecc-p384", optarg);
				return 2;
			}
			o->ek_type = (unsigned int)t;
			break;
		}
		case 'u': o->user = optarg; break;
#ifdef VIGIL_AGENT_TAMPER
		case 'X': a->tamper_file = optarg; break;
#endif
		case 'B': a->boot_log = optarg; break;
		case 'C': o->tls_cert = optarg; break;
		case 'K': o->tls_key = optarg; break;
		case 'A': o->tls_ca = optarg; break;
		case 'O': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*optarg < '0' || *optarg > '9' || *end || n == 0 || n > 3600) {
				vlog_err("--idle-timeout %s: seconds, 1 to 3600", optarg);
				return 2;
			}
			o->idle_s = (unsigned int)n;
			o->idle_set = true;
			break;
		}
		case 'T': o->tokens = optarg; break;
		case 'I': a->no_auth = true; break;
		case 'G': o->background = true; break;
		case 'P': a->push.url = optarg; break;
		case 'Q': a->push.ca = optarg; break;
		case 'R': a->push.cert = optarg; break;
		case 'S': a->push.key = optarg; break;
		case 'U': o->push_token = optarg; break;
		case 'V': printf("vigil-agent %s\n", VIGIL_VERSION); return 0;
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	return -1;
}

/* The credential schemes: the token list, or why the agent must not start. Return: 0 or -1 (logged). */
static int auth_setup(const struct options *o, struct agent *a)
{
	const char *path = o->tokens ? o->tokens : AGENT_TOKENS;
	char err[512];
	int r;

	if (a->no_auth && (o->tokens || o->tls_ca)) {
		vlog_err("--insecure-no-auth excludes --auth-tokens and "
			"--tls-client-ca");
		return -1;
	}
	if (a->no_auth)
		return 0;
	r = http_auth_load(path, VG_AUTH_VERIFIER, &a->auth, err, sizeof(err));
	if (r < 0 && (r != -ENOENT || o->tokens || !o->tls_ca)) {
		vlog_err("%s", err);
		if (r == -ENOENT)
			vlog_err("every route needs a credential: list the "
				"verifier's token (vigil-verifier --create-token verifier OUT "
				"--auth-tokens LIST, then copy LIST here) with --auth-tokens LIST, "
				"or give --tls-client-ca; for tests only, --insecure-no-auth");
		return -1;
	}
	a->auth_path = path;
	if (!o->tls_ca && !vg_auth_count(a->auth)) {
		vlog_err("%s lists no token and there is no "
			"--tls-client-ca: nobody could ask for a quote", path);
		return -1;
	}
	return 0;
}

/*
 * Push mode's settings: no server, HTTPS to the verifier with a
 * credential (or --insecure-no-auth). Return: 0, -1 (said).
 */
static int push_setup(struct options *o, struct agent *a)
{
	const char *p[] = { a->push.ca, a->push.cert }, *opt[] = { "--push-ca", "--push-cert" };
	struct vg_diag d = { 0 };
	char why[512];

	if (o->listen || o->tls_cert || o->tls_key || o->tls_ca || o->tokens || o->idle_set) {
		vlog_err("--push serves nothing: --listen, --tls-*, --idle-timeout and --auth-tokens "
			"are for pull mode");
		return -1;
	}
	if (!!a->push.cert != !!a->push.key) {
		vlog_err("--push-cert and --push-key go together");
		return -1;
	}
	if (strncmp(a->push.url, "https://", 8) != 0 &&
	    (strncmp(a->push.url, "http://", 7) != 0 || !a->no_auth)) {
		vlog_err("--push %s: an https:// URL (http:// only with "
			"--insecure-no-auth, for tests)", a->push.url);
		return -1;
	}
	if (!a->no_auth && !a->push.cert && !o->push_token) {
		vlog_err("--push needs a credential: --push-cert/--push-key or "
			"--push-token-file (for tests only, --insecure-no-auth)");
		return -1;
	}
	if (a->no_auth && (a->push.cert || o->push_token)) {
		vlog_err("--insecure-no-auth excludes --push-cert and --push-token-file");
		return -1;
	}
	for (int i = 0; i < 2; i++)
		if (p[i] && tls_certs_check(p[i], why, sizeof(why)) < 0) {
			vlog_err("%s %s: %s", opt[i], p[i], why);
			return -1;
		}
	if (a->push.key && tls_key_check(a->push.key, a->push.cert, why, sizeof(why)) < 0) {
		vlog_err("--push-key %s: %s", a->push.key, why);
		return -1;
	}
	if (o->push_token && vg_auth_token_read(o->push_token, a->push.token, &d) < 0) {
		vlog_err("--push-token-file %s: %s", o->push_token, d.msg);
		return -1;
	}
	return 0;
}

/* Options, TLS files, tokens, id. Return: -1 to go on, or an exit code. */
static int setup(int argc, char **argv, struct options *o, struct agent *a, char *host,
		 size_t hostlen)
{
	int r = parse(argc, argv, o, a);

	if (r >= 0)
		return r;
	if (o->config) {
		struct vg_config cfg;
		struct vg_diag d = { 0 };

		vg_config_init(&cfg);
		if (vg_config_load(&cfg, o->config, false, &d) < 0) {
			vlog_err("%s", d.msg);
			vg_config_release(&cfg);
			return 2;
		}
		if (cfg.tcti && (size_t)snprintf(o->conf_tcti, sizeof(o->conf_tcti), "%s", cfg.tcti) >=
				sizeof(o->conf_tcti)) {
			vlog_err("%s: tpm.tcti is longer than %zu bytes", o->config, sizeof(o->conf_tcti) - 1);
			vg_config_release(&cfg);
			return 2;
		}
		vg_config_release(&cfg);
		if (!o->tcti && o->conf_tcti[0])
			o->tcti = o->conf_tcti;
	}
	if (a->push.url) {
		if (!o->state) {
			vlog_err("--state DIR is required");
			return 2;
		}
		if (push_setup(o, a) < 0 || check_files(o) < 0)
			return 2;
		goto id;
	}
	if (!o->listen || !o->state) {
		vlog_err("--listen ADDR:PORT and --state DIR are required");
		return 2;
	}
	if (!!o->tls_cert != !!o->tls_key || (o->tls_ca && !o->tls_cert)) {
		vlog_err("--tls-cert and --tls-key go together; --tls-client-ca needs them");
		return 2;
	}
	if (check_files(o) < 0)
		return 2;
	{
		char why[256];

		if (listen_check(o->listen, &o->sa, why, sizeof(why)) < 0) {
			vlog_err("--listen %s: %s", o->listen, why);
			return 2;
		}
	}
	if (o->tls_cert && (!(o->cert_pem = http_slurp(o->tls_cert)) ||
			    !(o->key_pem = http_slurp(o->tls_key)) ||
			    (o->tls_ca && !(o->ca_pem = http_slurp(o->tls_ca))))) {
		vlog_err("cannot read the TLS certificate, key or CA");
		return 2;
	}
	if (auth_setup(o, a) < 0)
		return 2;
id:
	if (!a->id) {
		if (gethostname(host, hostlen) < 0)
			snprintf(host, hostlen, "agent");
		host[hostlen - 1] = 0;
		a->id = host;
	}
	if (strlen(a->id) >= AGENT_ID_MAX) {
		vlog_err("--id too long");
		return 2;
	}
	return -1;
}

/* The network process: the identity from the TPM process, fewer privileges, then HTTP until SIGTERM. */
static int net_main(struct options *o, struct agent *a)
{
	union agent_msg *m = calloc(1, sizeof(*m));
	struct http_guard *guard = NULL;
	struct MHD_Daemon *d;
	char why[600];
	uint32_t type;
	sigset_t set;
	int sig, r;

	do
		r = m ? ipc_recv_fixed(&a->ipc, 1u << AGENT_MSG_IDENTITY, &type, m, sizeof(*m), NULL) :
			-ENOMEM;
	while (r == -EINTR);
	if (r <= 0)
		_exit(2);
	memcpy(a->ek_pub, m->identity.ek_pub, m->identity.ek_pub_len);
	a->ek_pub_len = m->identity.ek_pub_len;
	memcpy(a->ek_cert, m->identity.ek_cert, m->identity.ek_cert_len);
	a->ek_cert_len = m->identity.ek_cert_len;
	memcpy(a->ak_pub, m->identity.ak_pub, m->identity.ak_pub_len);
	a->ak_pub_len = m->identity.ak_pub_len;
	free(m);
	/* --user, no new privileges, Landlock, seccomp (agent_privsep.c) */
	r = agent_net_sandbox(a, o->user, ntohs(o->sa.sin_port), why, sizeof(why));
	if (r < 0) {
		vlog_err("%s", why);
		_exit(2);
	}
#ifdef VIGIL_AGENT_TAMPER
	sandbox_test_probe();	/* the test build: tests/cli/t0535 */
#endif
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (a->push.url) {
		/* push mode: nothing is served; ready once the settings are all taken */
		if (write(o->ready_fd, "1", 1) != 1) {
			/* the main process is gone: PDEATHSIG ends us */
		}
		close(o->ready_fd);
		if (a->no_auth)
			vlog_warn("WARNING: --insecure-no-auth: pushing over plain "
				"HTTP without a credential (tests only)");
		r = agent_push_main(a, &set);
		OPENSSL_cleanse(a->push.token, sizeof(a->push.token));
		close(a->ipc.fd);
		agent_tamper_release(a);
		return r;
	}
	if (http_guard_start(10, &guard) < 0)
		_exit(2);
	http_guard_idle(guard, o->idle_s);
	d = agent_http_start(a, &o->sa, o->cert_pem, o->key_pem, o->ca_pem, o->idle_s, guard);
	if (!d) {
		vlog_err("cannot listen on %s%s", o->listen,
			o->cert_pem ? " (TLS setup failed?)" : "");
		_exit(2);
	}
	vlog_info("%s listening on %s", a->id, o->listen);
	if (write(o->ready_fd, "1", 1) != 1) {
		/* the main process is gone: PDEATHSIG ends us */
	}
	close(o->ready_fd);
	if (a->no_auth)
		vlog_warn("WARNING: --insecure-no-auth: anyone who reaches %s gets "
			"quotes, the measurement list and the boot log (tests only)", o->listen);
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
		agent_auth_reload(a);
	MHD_stop_daemon(d);
	http_guard_stop(guard);
	close(a->ipc.fd);
	agent_tamper_release(a);
	vg_auth_free(a->auth);
	pems_free(o);
	return 0;
}

int main(int argc, char **argv)
{
	struct agent a = { .auth_lock = PTHREAD_RWLOCK_INITIALIZER,
			   .log = "/run/vigil/binary_runtime_measurements" };
	struct options o = { .idle_s = 30 };
	struct ready_watch rw = { .fd = -1 };
	pthread_t rw_tid;
	sigset_t all, old;
	char host[128];
	int sp, rp[2], rc;
	pid_t pid;

	vlog_init("vigil-agent");
	if (access("/sys/kernel/security/tpm0/binary_bios_measurements", R_OK) == 0)
		a.boot_log = "/sys/kernel/security/tpm0/binary_bios_measurements";
	rc = setup(argc, argv, &o, &a, host, sizeof(host));
	if (rc >= 0) {
		pems_free(&o);
		vg_auth_free(a.auth);
		return rc;
	}
	if (o.background && (rc = vg_background_start()) < 0) {
		vlog_err("--background: %s", strerror(-rc));
		return 2;
	}
	rc = notify_open();
	if (rc < 0)
		vlog_err("$NOTIFY_SOCKET %s: %s: readiness cannot be reported",
			getenv("NOTIFY_SOCKET"), strerror(-rc));
	if (pipe2(rp, O_CLOEXEC) < 0) {
		vlog_err("pipe: %s", strerror(errno));
		return 2;
	}
	/* fork before the TPM is opened: the network process never has it */
	pid = proc_start(&agent_procs[AGENT_PROC_NET], &sp);
	if (pid < 0) {
		vlog_err("the network process: %s", strerror(-(int)pid));
		return 2;
	}
	if (pid > 0) {
		close(rp[1]);
		pems_free(&o);
		vg_auth_free(a.auth);
		a.auth = NULL;
		rw.fd = rp[0];
		rw.listen = o.listen ? o.listen : a.push.url;
		rw.id = a.id;
		/* the watcher takes no signal: SIGTERM and SIGHUP are the TPM loop's */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&rw_tid, NULL, ready_main, &rw) != 0) {
			vlog_err("cannot start a thread");
			close(rp[0]);
			rw.fd = -1;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		rc = agent_tpm_main(sp, pid, o.tcti, o.state, o.rsa, o.ek_type);
		if (rw.fd >= 0)
			pthread_join(rw_tid, NULL);	/* the network process is gone: its pipe end too */
		(void)notify_send("STOPPING=1");
		notify_close();
		/* a network process that never listened is a failed start, whatever the TPM side says */
		return atomic_load(&rw.ready) ? rc : (rc ? rc : 2);
	}
	close(rp[0]);
	notify_close();
	vg_background_drop();	/* the main process says "ready" */
	o.ready_fd = rp[1];
	if (agent_chan(&a.ipc, sp, "network process") < 0)
		_exit(2);
	return net_main(&o, &a);
}
