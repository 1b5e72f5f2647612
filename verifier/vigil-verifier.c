// SPDX-License-Identifier: MIT
/*
 * vigil-verifier - registers agents (EK certificate, MakeCredential /
 * ActivateCredential), attests each of them at an interval (fresh nonce,
 * quote, incremental measurement list, reference policy: libvigil's
 * attest.h), keeps everything in a store (store.h, SQLite by default),
 * acts on failures (webhook POST, command hook) and serves a REST API to
 * operators (`vigil attest` is its client; routes in rest.c).
 *
 * This file is the program: the start (the store, the API, the signals,
 * the notice queues) and the stop, from the options (options.c);
 * verifier.h says which file does what.
 * The API is HTTP on the address given, or HTTPS with --api-cert/--api-key.
 * Every route needs a credential (docs/api-auth.md): a bearer token whose
 * sha256 is listed in --auth-tokens, or a client certificate from
 * --api-client-ca; no scheme, no start, unless --insecure-no-auth. Agents
 * are reached over HTTP or HTTPS (--agent-ca), with our token
 * (--agent-token-file) or our client certificate for mutual TLS
 * (--client-cert/--client-key).
 *
 * Threads: a pool of four libmicrohttpd threads serves the API (and runs
 * registrations); the main thread schedules the rounds, each on its own
 * thread (at most --max-rounds at once, one per agent; agents due meanwhile
 * wait in a queue, the longest-waiting first), so a slow or hostile agent
 * delays only itself and the agents queued behind it are reported late. Hostile peers are bounded: API requests must arrive
 * whole within --api-timeout (http_guard.c), bodies above --max-body get
 * 413 before they are read, connections per address are limited; every
 * exchange with an agent ends within --agent-timeout, answers above 1 MiB
 * (the log: --max-log) are cut, redirects are not followed, and what an
 * agent sends is parsed by attest_api.h.
 *
 * The one file-scope mutable is the signal handler's target (`signalled`,
 * the struct verifier of main): a handler gets no argument.
 *
 * Every setting is checked before the verifier says it is ready (READY=1
 * to $NOTIFY_SOCKET, notify.h): the listen address (a port out of range
 * or in use is named as such), the store URL's scheme, every PEM file
 * (CAs, certificates, keys); a refusal exits 2 naming the file and the
 * problem.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include <openssl/crypto.h>

#include "background.h"
#include "log.h"
#include "verifier.h"
#include "privsep.h"
#include "http_auth.h"
#include "http_guard.h"
#include "http_util.h"
#include "listen.h"
#include "notify.h"
#include "options.h"
#include "tls_files.h"
#include "vigil/hmac_key.h"
#include "vigil/trust.h"

#define VERIFIER_TOKENS "/etc/vigil/verifier-tokens"
/* on SIGTERM, how long requests and rounds in flight may take before we go without them */
#define STOP_GRACE_MS 1000

static struct verifier *signalled;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		signalled->reload = 1;
	else
		signalled->stop = 1;
}

/*
 * --trust-db: the verifier's own archive database, authenticated with
 * --trust-key and read whole into memory before the sandbox; read again
 * when it changes (trust_reload.c). Return: 0, -1 (said).
 */
static int load_archive(struct verifier *vf, const struct vf_args *a)
{
	if (!a->trust_db != !a->trust_key) {
		vlog_err("--trust-db and --trust-key go together");
		return -1;
	}
	return vf_trust_open(vf, a->trust_db, a->trust_key);
}

/* Whether @path (may be NULL) is @dir or beneath it, both real paths. */
static bool beneath(const char *dir, const char *path)
{
	char r[PATH_MAX];
	size_t n = strlen(dir);

	if (!path || !realpath(path, r))
		return false;
	return strcmp(dir, "/") == 0 || (strncmp(r, dir, n) == 0 && (r[n] == '/' || r[n] == 0));
}

/*
 * The directory of --trust-db, for the sandbox to let the network process
 * read it again, unless the SQLite store or a key the network process must
 * never hold (the API's TLS key, the EAR key: the key process's) is in it:
 * into @out, or "" (not reloaded, said).
 */
static void trust_dir(struct verifier *vf, const struct vf_args *a, char *out, size_t cap)
{
	char t[PATH_MAX], *sl;
	const char *db = a->db, *what = NULL;

	out[0] = 0;
	if (!vf->trust || !realpath(a->trust_db, t))
		return;
	sl = strrchr(t, '/');
	*sl = 0;
	if (!t[0])
		snprintf(t, sizeof(t), "/");
	if (strncmp(db, "sqlite:", 7) == 0)
		db += 7;
	if (strncmp(a->db, "postgresql:", 11) != 0 && strncmp(a->db, "postgres:", 9) != 0) {
		char d[PATH_MAX];

		/* the store's directory: the database file and its journals */
		if (realpath(db, d) && (sl = strrchr(d, '/')) && (*sl = 0, 1) &&
		    beneath(t, d[0] ? d : "/"))
			what = "the store's database";
	}
	if (!what && beneath(t, a->api_key))
		what = "--api-key";
	if (!what && beneath(t, a->ear_key))
		what = "--ear-key";
	if (what) {
		vlog_warn("--trust-db %s: in a directory that holds %s, which the network process "
			  "may not read: it is not reloaded when it changes (give it a directory of "
			  "its own)", a->trust_db, what);
		return;
	}
	snprintf(out, cap, "%s", t);
	vf->trust_reload = true;
}

/* The API's credentials: the token list, ours for agents. Return: 0, -1 (said). */
static int setup_auth(struct verifier *vf, const struct vf_args *a)
{
	const char *list = a->tokens ? a->tokens : VERIFIER_TOKENS;

	if (vf->no_auth && (a->tokens || a->api_ca || a->read_ca)) {
		vlog_err("--insecure-no-auth excludes --auth-tokens and "
			"--api-client-ca");
		return -1;
	}
	if (!vf->no_auth) {
		char err[512];
		int ar = http_auth_load(list, VG_AUTH_ADMIN | VG_AUTH_READ | VG_AUTH_AGENT, &vf->auth, err,
					sizeof(err));

		if (ar < 0 && (ar != -ENOENT || a->tokens || !(a->api_ca || a->read_ca))) {
			vlog_err("%s", err);
			if (ar == -ENOENT)
				vlog_err("every API route needs a credential: "
					"create the first admin token with\n"
					"  vigil-verifier --create-token admin FILE [--auth-tokens %s]"
					"or give --api-client-ca (client certificates); for tests only, "
					"--insecure-no-auth\n", list);
			return -1;
		}
		vf->auth_path = list;
		if (!a->api_ca && !a->read_ca && !vg_auth_count(vf->auth)) {
			vlog_err("%s lists no token and there is no "
				"--api-client-ca: nobody could use the API", list);
			vg_auth_free(vf->auth);
			vf->auth = NULL;
			return -1;
		}
	}
	if (a->agent_token_file) {
		struct vg_diag td = { 0 };

		if (vg_auth_token_read(a->agent_token_file, vf->agent_token, &td) < 0) {
			vlog_err("%s: %s", a->agent_token_file, td.msg);
			vg_auth_free(vf->auth);
			vf->auth = NULL;
			return -1;
		}
	}
	return 0;
}

/*
 * --db: sqlite:PATH, a PATH, postgresql:// or postgres://; "mysql://..."
 * (any other scheme) is refused as such, not opened as a file of that name.
 * Return: 0, -1 (said).
 */
static int check_db_url(const char *url)
{
	size_t n = 0;

	while ((url[n] >= 'a' && url[n] <= 'z') || (url[n] >= 'A' && url[n] <= 'Z') ||
	       (n && ((url[n] >= '0' && url[n] <= '9') || url[n] == '+' || url[n] == '-' || url[n] == '.')))
		n++;
	if (n < 2 || url[n] != ':')
		return 0;	/* a path */
	if ((n == 6 && strncmp(url, "sqlite", 6) == 0) || (n == 10 && strncmp(url, "postgresql", 10) == 0) ||
	    (n == 8 && strncmp(url, "postgres", 8) == 0))
		return 0;
	vlog_err("--db: unsupported scheme '%.*s:' (the store is sqlite:PATH, "
		"a PATH, or postgresql://...; a file whose name has a colon: sqlite:NAME or ./NAME)",
		(int)n, url);
	return -1;
}

/*
 * What the options name, checked before any process starts: the listen
 * address (into @sa), the store URL, every PEM file. Return: 0, -1 (said).
 */
/*
 * --verifier-id and --lease: who we are among the verifiers of one store,
 * and how long a claimed agent stays ours. Return: 0, -1 (said).
 */
static int check_fleet(struct verifier *vf, const struct vf_args *a)
{
	char host[sizeof(vf->host)] = "";
	size_t n;

	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	snprintf(vf->host, sizeof(vf->host), "%s", host);
	if (a->verifier_id) {
		n = strlen(a->verifier_id);
		if (n >= sizeof(vf->id) || !vg_api_id_ok(a->verifier_id, n)) {
			vlog_err("--verifier-id %s: 1 to %zu of A-Z a-z 0-9 . _ -", a->verifier_id,
				 sizeof(vf->id) - 1);
			return -1;
		}
		snprintf(vf->id, sizeof(vf->id), "%s", a->verifier_id);
	} else {
		/* the host name cut at its first character an id may not hold, then our pid */
		n = strspn(host, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
		snprintf(vf->id, sizeof(vf->id), "%.*s-%ld", (int)(n > 40 ? 40 : n), host,
			 (long)getpid());
	}
	if (a->lease && a->lease <= vf->agent_timeout) {
		vlog_err("--lease %u: more than --agent-timeout (%u s) is needed: a round may take "
			 "that long, and another verifier would start one beside it", a->lease,
			 vf->agent_timeout);
		return -1;
	}
	vf->lease_ms = 1000 * (a->lease ? a->lease : vf->agent_timeout + 5);
	vf->started_ms = vf_wall_ms();
	return 0;
}

/*
 * Descriptors: the API's (--api-connections), the agents' kept connections
 * (--agent-connections), a connection per round (--max-rounds) and 256 of
 * our own. The soft RLIMIT_NOFILE is raised as far as the hard one allows.
 * Short of it, a default --agent-connections is lowered to fit (16 at
 * least); still short, a number given is refused, naming what it needs,
 * and defaults are said. Return: 0, -1 (said).
 */
static int check_fds(struct verifier *vf, struct vf_args *a)
{
	bool api_given = a->api_connections != 0;
	struct rlimit rl;
	rlim_t base, need;

	if (!api_given)
		a->api_connections = VF_API_CONNECTIONS_DEFAULT;
	base = (rlim_t)a->api_connections + vf->max_rounds + 256;
	need = base + vf->agent_conns;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return 0;
	}
	if (rl.rlim_cur < need && !vf->agent_conns_set) {
		vf->agent_conns = rl.rlim_cur > base + 16 ? (unsigned int)(rl.rlim_cur - base) : 16;
		need = base + vf->agent_conns;
	}
	if (rl.rlim_cur >= need)
		return 0;
	if (vf->agent_conns_set) {
		vlog_err("--agent-connections %u: needs %llu file descriptors, RLIMIT_NOFILE allows "
			 "%llu (LimitNOFILE= in the unit, ulimit -n)", vf->agent_conns,
			 (unsigned long long)need, (unsigned long long)rl.rlim_cur);
		return -1;
	}
	if (api_given) {
		vlog_err("--api-connections %u: needs about %llu file descriptors, and this "
			 "process may open %llu (RLIMIT_NOFILE: LimitNOFILE= in the unit, ulimit -n)",
			 a->api_connections, (unsigned long long)need,
			 (unsigned long long)rl.rlim_cur);
		return -1;
	}
	vlog_warn("%llu file descriptors (RLIMIT_NOFILE): fewer than --api-connections %u needs "
		  "(about %llu); connections past them are refused", (unsigned long long)rl.rlim_cur,
		  a->api_connections, (unsigned long long)need);
	return 0;
}

static int check_settings(struct verifier *vf, const struct vf_args *a, struct sockaddr_in *sa)
{
	const struct {
		const char *opt, *path;
	} certs[] = {
		{ "--ek-ca", vf->ek_ca }, { "--agent-ca", vf->agent_ca },
		{ "--api-client-ca", a->api_ca }, { "--api-read-client-ca", a->read_ca },
		{ "--push-client-ca", a->push_ca },
		{ "--client-cert", vf->client_cert }, { "--api-cert", a->api_cert },
	};
	const char *kopt = NULL, *kpath = NULL;
	char why[512];

	if (!a->listen || !a->db) {
		vlog_err("--listen ADDR:PORT and --db URL are required");
		return -1;
	}
	if (check_db_url(a->db) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(certs) / sizeof(certs[0]); i++)
		if (certs[i].path && tls_certs_check(certs[i].path, why, sizeof(why)) < 0) {
			vlog_err("%s %s: %s", certs[i].opt, certs[i].path, why);
			if (certs[i].path == vf->ek_ca && access(vf->ek_ca, F_OK) < 0)
				vlog_err("--ek-ca names the CAs an agent's EK certificate must chain to: "
					 "your TPMs' manufacturers' (PEM, concatenated); for vigil-swtpm's "
					 "software TPM, its host's /var/lib/vigil/swtpm/ek-ca.pem "
					 "(vigil-attest's README.Debian)");
			return -1;
		}
	if (vf->client_key && tls_key_check(vf->client_key, vf->client_cert, why, sizeof(why)) < 0)
		kopt = "--client-key", kpath = vf->client_key;
	else if (a->api_key && tls_key_check(a->api_key, a->api_cert, why, sizeof(why)) < 0)
		kopt = "--api-key", kpath = a->api_key;
	if (kopt) {
		vlog_err("%s %s: %s", kopt, kpath, why);
		return -1;
	}
	if (listen_check(a->listen, sa, why, sizeof(why)) < 0) {
		vlog_err("--listen %s: %s", a->listen, why);
		return -1;
	}
	return check_fleet(vf, a);
}

/* HTTPS for the API and the client CAs (admin, read). Return: 0, -1 (said). */
static int setup_tls(struct verifier *vf, struct vf_args *a)
{
	if (!!vf->client_cert != !!vf->client_key || !!a->api_cert != !!a->api_key ||
	    ((a->api_ca || a->read_ca) && !a->api_cert)) {
		vlog_err("--client-cert/--client-key and --api-cert/--api-key go "
			"together; --api-client-ca and --api-read-client-ca need --api-cert");
		return -1;
	}
	if (a->api_cert && (!(a->cert_pem = http_slurp(a->api_cert)) ||
			    !(a->key_pem = http_slurp(a->api_key)) ||
			    (a->api_ca && !(a->ca_pem = http_slurp(a->api_ca))))) {
		vlog_err("cannot read the API certificate, key or CA");
		return -1;
	}
	if (a->ear_key && !(a->ear_pem = http_slurp(a->ear_key))) {
		vlog_err("--ear-key: cannot read %s", a->ear_key);
		return -1;
	}
	if (a->read_ca) {
		/* the handshake trusts both CAs; http_client_cert_from tells them apart */
		char *rp = http_slurp(a->read_ca), *both;
		int r = rp ? 0 : -EBADMSG;

		if (!r && a->ca_pem && (r = http_ca_new(a->ca_pem, &vf->admin_ca)) == 0) {
			both = malloc(strlen(a->ca_pem) + strlen(rp) + 2);
			if (both)
				sprintf(both, "%s\n%s", a->ca_pem, rp);
			free(a->ca_pem);
			a->ca_pem = both;
			r = both ? 0 : -ENOMEM;
		} else if (!r) {
			a->ca_pem = strdup(rp);
			r = a->ca_pem ? 0 : -ENOMEM;
		}
		if (!r)
			r = http_ca_new(rp, &vf->read_ca);
		free(rp);
		if (r < 0) {
			vlog_err("%s: cannot read a PEM CA certificate from it",
				a->read_ca);
			return -1;
		}
	} else if (a->ca_pem && http_ca_new(a->ca_pem, &vf->admin_ca) < 0) {
		vlog_err("%s: cannot read a PEM CA certificate from it",
			a->api_ca);
		return -1;
	}
	vf->api_client_ca = a->ca_pem != NULL;
	return 0;
}

/*
 * --push-client-ca: the handshake trusts it too; a certificate that
 * chains to it (and to neither admin nor read CA) is an agent's.
 * Return: 0, -1 (said).
 */
static int setup_push_ca(struct verifier *vf, struct vf_args *a)
{
	char *pp, *both;

	if (!a->push_ca)
		return 0;
	if (!a->api_cert) {
		vlog_err("--push-client-ca needs --api-cert (mutual TLS)");
		return -1;
	}
	pp = http_slurp(a->push_ca);
	if (!pp || http_ca_new(pp, &vf->push_ca) < 0) {
		free(pp);
		vlog_err("%s: cannot read a PEM CA certificate from it", a->push_ca);
		return -1;
	}
	both = malloc((a->ca_pem ? strlen(a->ca_pem) : 0) + strlen(pp) + 2);
	if (both)
		sprintf(both, "%s\n%s", a->ca_pem ? a->ca_pem : "", pp);
	free(pp);
	free(a->ca_pem);
	a->ca_pem = both;
	if (!both)
		return -1;
	vf->api_client_ca = true;
	return 0;
}

/* What the settings read from files hold; a key wiped first. */
static void args_free(struct vf_args *a)
{
	if (a->key_pem)
		OPENSSL_cleanse(a->key_pem, strlen(a->key_pem));
	free(a->cert_pem);
	free(a->key_pem);
	free(a->ear_pem);
	free(a->ca_pem);
	a->cert_pem = a->key_pem = a->ear_pem = a->ca_pem = NULL;
}

/*
 * The processes (privsep.h), before any thread: the key process (the
 * API's TLS key), the store process (--db), the hook process (--on-fail),
 * then this process confined. Return: 0, -1 (said).
 */
static int start_processes(struct verifier *vf, const struct vf_args *a)
{
	struct vg_diag dg = { 0 };
	char tdir[PATH_MAX];

	if ((a->key_pem || a->ear_pem) &&
	    vg_privsep_key_start(a->key_pem, a->cert_pem, a->ear_pem, (char *)a->db, &dg) < 0) {
		if (a->ear_key && strncmp(dg.msg, "--ear-key: ", 11) == 0)	/* name the file */
			vlog_err("--ear-key %s: %s", a->ear_key, dg.msg + 11);
		else
			vlog_err("%s", dg.msg);
		return -1;
	}
	if (a->ear_pem)
		vlog_info("EARs signed %s with %s (key process)",
			  vg_jws_alg_name(vg_privsep_ear_alg()), a->ear_key);
	if (vg_privsep_store_open((char *)a->db, &vf->store, &dg) < 0) {	/* privsep.h */
		vlog_err("%s", dg.msg);
		return -1;
	}
	/* store round trip (store_client.c) */
	vg_store_set_timeout(vf->store, a->db_timeout * 1000);
	if (vf_heartbeat_unique(vf, &dg) < 0) {
		vlog_err("%s", dg.msg);
		return -1;
	}
	trust_dir(vf, a, tdir, sizeof(tdir));	/* --trust-db read again when it changes */
	if ((vf->on_fail && vg_privsep_hook_start(vf->on_fail, &dg) < 0) ||
	    vg_privsep_sandbox(a->db, (const char *[]){ vf->ek_ca, vf->agent_ca, vf->client_cert,
			       vf->client_key, vf->auth_path, tdir[0] ? tdir : NULL }, 6, &dg) < 0) {
		vlog_err("%s", dg.msg);
		return -1;
	}
	return 0;
}

static void say_listening(const struct verifier *vf, const struct vf_args *a)
{
	char safe[512];

	vg_store_url_scrub(a->db, safe, sizeof(safe));
	vlog_info("listening on %s, store %s", a->listen, safe);
	if (vf->no_auth)
		vlog_warn("WARNING: --insecure-no-auth: the API has NO "
			"AUTHENTICATION; anyone who reaches %s can delete agents, clear their "
			"policies and turn a failed host back to trusted (tests only)", a->listen);
	else
		vlog_info("API credentials: %zu token(s)%s%s",
			vg_auth_count(vf->auth), vf->admin_ca ?
			", client certificates from --api-client-ca (admin)" : "",
			vf->read_ca ? ", from --api-read-client-ca (read)" : "");
	if (vf->push_ca)
		vlog_info("pushing agents: client certificates from --push-client-ca (agent)");
}

/*
 * Rounds end at once (libcurl's progress callback sees vf->stop), so do
 * registrations waiting on an agent; an answer being computed (a large
 * policy parsed) gets STOP_GRACE_MS. Past that we go without it: nothing
 * half-written survives (the store's transactions), and stopping the API
 * would wait for the handler.
 * Return: true if everything stopped (else the caller exits at once).
 */
static bool drain(struct verifier *vf)
{
	for (int w = 0; w < STOP_GRACE_MS / 20 &&
	     (atomic_load(&vf->api_busy) || vf_rounds_in_flight(vf)); w++)
		usleep(20000);
	if (atomic_load(&vf->api_busy) || vf_rounds_in_flight(vf)) {
		vlog_err("stopping with %d request(s) and %zu round(s) still "
			"running", atomic_load(&vf->api_busy), vf_rounds_in_flight(vf));
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static struct verifier vf;
	struct vf_args a = { .api_timeout = 10, .api_max_conn = 64, .db_timeout = 10,
			     .api_idle_timeout = 60 };
	struct sockaddr_in sa;
	struct vf_api *api = NULL;
	struct http_guard *guard = NULL;
	struct sigaction act = { .sa_handler = on_signal };
	char cerr[512];
	int r;

	vlog_init("vigil-verifier");
	if (vf_init(&vf) < 0 || vf_push_init(&vf) < 0)
		return 2;
	r = vf_parse_args(&vf, &a, argc, argv);
	if (r >= 0)
		return r;
	if (a.create_role) {
		/* vigil-verifier --create-token ROLE OUT [--auth-tokens FILE]: no daemon */
		if (optind != argc - 1) {
			vlog_err("--create-token ROLE OUT: one OUT file");
			return 2;
		}
		if (strcmp(a.create_role, "verifier") == 0 && !a.tokens) {
			vlog_err("--create-token verifier: name the agents' token "
				"list with --auth-tokens FILE (not the verifier's own)");
			return 2;
		}
		return http_auth_create_token(a.create_role,
					      VG_AUTH_ADMIN | VG_AUTH_READ | VG_AUTH_VERIFIER |
					      VG_AUTH_AGENT,
					      argv[optind], a.tokens ? a.tokens : VERIFIER_TOKENS);
	}
	if (optind != argc) {
		vlog_err("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (setup_auth(&vf, &a) < 0 || check_settings(&vf, &a, &sa) < 0 ||
	    check_fds(&vf, &a) < 0 ||
	    setup_tls(&vf, &a) < 0 ||
	    setup_push_ca(&vf, &a) < 0 || load_archive(&vf, &a) < 0)
		return 2;
	if (!vf.mask) {
		vlog_err("--pcrs: no PCR");
		return 2;
	}
	if (a.background && (r = vg_background_start()) < 0) {
		vlog_err("--background: %s", strerror(-r));
		return 2;
	}
	r = notify_open();	/* before the sandbox: it refuses new AF_UNIX sockets */
	if (r < 0)
		vlog_err("$NOTIFY_SOCKET %s: %s: readiness cannot be reported",
			getenv("NOTIFY_SOCKET"), strerror(-r));
	if (start_processes(&vf, &a) < 0) {
		args_free(&a);
		return 2;
	}
	r = vf_client_init(&vf, cerr, sizeof(cerr));
	if (r < 0) {
		vlog_err("the agents' client: %s", cerr);
		args_free(&a);
		return 2;
	}
	r = vf_notify_start(&vf, vf.notify_queue);
	if (r < 0) {
		vlog_err("notice queues: %s", strerror(-r));
		return 2;
	}
	signalled = &vf;
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGHUP, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_guard_start(a.api_timeout, &guard) < 0) {
		vlog_err("cannot start the request reaper");
		return 2;
	}
	http_guard_idle(guard, a.api_idle_timeout);
	{
		struct vf_api_opts ao = {
			.sa = &sa, .cert_pem = a.cert_pem, .ca_pem = a.ca_pem,
			.timeout_s = a.api_timeout, .max_conn = a.api_max_conn,
			.idle_s = a.api_idle_timeout, .connections = a.api_connections,
			.guard = guard,
		};

		if (vf_api_start(&vf, &ao, &api) < 0) {
			vlog_err("cannot listen on %s", a.listen);
			return 2;
		}
	}
	say_listening(&vf, &a);
	(void)notify_send("READY=1\nSTATUS=listening on %s", a.listen);
	vf_schedule(&vf);
	(void)notify_send("STOPPING=1");
	if (!drain(&vf) || !vf_pool_stop(&vf.sched.pool, STOP_GRACE_MS))
		_exit(vf.exit_code);
	vf_notify_stop(&vf, STOP_GRACE_MS);
	vf_api_stop(api);
	http_guard_stop(guard);
	vf_policy_cache_free(&vf);
	vg_store_close(vf.store);
	vg_dsse_keys_free(vf.policy_keys);
	vf_trust_free(&vf);
	vg_auth_free(vf.auth);
	http_ca_free(vf.admin_ca);
	http_ca_free(vf.read_ca);
	http_ca_free(vf.push_ca);
	vf_push_free(&vf);
	vf_sched_free(&vf);
	vf_bootc_free(&vf);
	OPENSSL_cleanse(vf.agent_token, sizeof(vf.agent_token));
	vf_client_cleanup();
	args_free(&a);
	return vf.exit_code;
}
