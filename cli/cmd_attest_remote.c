// SPDX-License-Identifier: MIT
/*
 * cmd_attest_remote.c - the `vigil attest` verbs that are a client of
 * vigil-verifier's REST API: add, status, remove, reactivate and policy
 * set|get|assign. libcurl is loaded here, on first use; the credential
 * (a bearer token file) is read here and wiped when the verb is done.
 * Offline verbs (quote-check, policy create|check|import) never load it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "cmd_attest.h"
#include "vigil/attest_ear.h"
#include "vigil/auth.h"

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
static const char *token_file;
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

/*
 * Return: HTTP status, or -1 (reported). *@ret_json: parsed body, or NULL.
 * *@ret_text (may be NULL): the body as sent (malloc'd), or NULL.
 */
static long http_req(const char *method, const char *path, const char *body, size_t blen,
		     const char *accept, json_object **ret_json, char **ret_text)
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
	if (accept)
		hdr = curl.slist_append(hdr, accept);
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
	if (ret_text && code >= 0) {
		*ret_text = r.body;
		r.body = NULL;
	}
	free(r.body);
	return code;
}

static long http(const char *method, const char *path, const char *body, size_t blen,
		 json_object **ret_json)
{
	return http_req(method, path, body, blen, NULL, ret_json, NULL);
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
		case 'h': fputs(cli_attest_help, stdout); return EXIT_OK;
		default: return EXIT_ERROR;
		}
	}
	/* without ID the verifier registers the agent under the id it says */
	if (!agent || optind < argc - 1 || (optind == argc - 1 && !id_ok(argv[optind]))) {
		cli_err("add takes [ID] ([A-Za-z0-9._-]) and needs --agent URL");
		return EXIT_ERROR;
	}
	req = json_object_new_object();
	if (optind == argc - 1)
		json_object_object_add(req, "id", json_object_new_string(argv[optind]));
	json_object_object_add(req, "url", json_object_new_string(agent));
	json_object_object_add(req, "policy", json_object_new_string(policy));
	body = json_object_to_json_string(req);
	code = http("POST", "/v1/agents", body, strlen(body), &res);
	json_object_put(req);
	if (code < 0)
		return EXIT_ERROR;
	if (code == 201) {
		printf("registered %s (%s)\n", jstr(res, "id"), jstr(res, "ak_name"));
		rc = EXIT_OK;
	} else {
		rc = report_error(code, res);
	}
	json_object_put(res);
	return rc;
}

/*
 * ID STATE [(late N ms)] [(stale N ms)] rounds=... : a late or stale agent
 * never reads as plainly trusted
 */
static void print_agent(json_object *a)
{
	printf("%s %s", jstr(a, "id"), jstr(a, "state"));
	if (strcmp(jstr(a, "late"), "true") == 0)
		printf(" (late %s ms)", jstr(a, "late_ms"));
	if (strcmp(jstr(a, "stale"), "true") == 0)
		printf(" (stale %s ms)", jstr(a, "silent_ms"));
	printf(" rounds=%s reboots=%s log_entries=%s policy=%s", jstr(a, "rounds"),
	       jstr(a, "reboots"), jstr(a, "log_entries"), jstr(a, "policy"));
	if (strcmp(jstr(a, "last_failure"), "ok") != 0 && *jstr(a, "last_failure"))
		printf(" last_failure=%s (%s)", jstr(a, "last_failure"), jstr(a, "last_message"));
	putchar('\n');
	/* what an operator does next, on stderr: stdout stays one line per agent */
	if (strcmp(jstr(a, "state"), "failed") == 0) {
		fflush(stdout);
		if (strcmp(jstr(a, "last_failure"), "quote.unsafe") == 0)
			fprintf(stderr, "vigil attest: %s: its TPM was not shut down in order (power lost, "
				"swtpm killed), so its clock may have gone back; the next orderly "
				"shutdown clears that\n", jstr(a, "id"));
		fprintf(stderr, "vigil attest: %s: failed, its rounds stopped; once the host is known "
			"good, `vigil attest reactivate %s` resumes them\n", jstr(a, "id"), jstr(a, "id"));
	}
}

/* ID HOST pid=N alive|dead (beat N ms ago) running=N/MAX rounds=N late=N [this one] */
static void print_verifiers(json_object *res)
{
	json_object *arr;
	const char *self = jstr(res, "self");

	if (!json_object_object_get_ex(res, "verifiers", &arr))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		printf("%s %s pid=%s %s (beat %s ms ago) running=%s/%s rounds=%s late=%s%s\n",
		       jstr(v, "id"), jstr(v, "host"), jstr(v, "pid"),
		       strcmp(jstr(v, "alive"), "true") == 0 ? "alive" : "dead",
		       jstr(v, "beat_age_ms"), jstr(v, "running"), jstr(v, "max_rounds"),
		       jstr(v, "rounds"), jstr(v, "late"),
		       strcmp(jstr(v, "id"), self) == 0 ? " (answering)" : "");
	}
}

/*
 * status ID --ear [--nonce N]: the agent's latest verdict as a signed EAR
 * (docs/attest-ear.md), printed as the compact JWS on one line.
 * Return: EXIT_OK, or as report_error.
 */
static int print_ear(const char *id, const char *nonce)
{
	json_object *res = NULL;
	char path[512], *text = NULL;
	long code;
	int rc = EXIT_OK;

	snprintf(path, sizeof(path), "/v1/agents/%s/ear%s%s", id, nonce ? "?nonce=" : "",
		 nonce ? nonce : "");
	code = http_req("GET", path, NULL, 0, "Accept: application/eat+jwt", &res, &text);
	if (code < 0)
		return EXIT_ERROR;
	if (code == 200 && text) {
		printf("%s\n", text);
	} else if (code == 501 || code == 400) {
		cli_err("verifier %s: %s (%ld)", verifier_url, jstr(res, "error"), code);
		rc = EXIT_ERROR;
	} else {
		rc = report_error(code, res);
	}
	json_object_put(res);
	free(text);
	return rc;
}

static int attest_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verifiers", no_argument, NULL, 'V' },
		{ "history", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "ear", no_argument, NULL, 'E' },
		{ "nonce", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool history = false, json = false, verifiers = false, ear = false;
	const char *nonce = NULL;
	json_object *res = NULL;
	char path[512], *end;
	long code, wait_s = 0;
	int c, rc = EXIT_OK;

	while ((c = getopt_long(argc, argv, "Hjw:h", opts, NULL)) != -1) {
		switch (c) {
		case 'V': verifiers = true; break;
		case 'H': history = true; break;
		case 'j': json = true; break;
		case 'E': ear = true; break;
		case 'n': nonce = optarg; break;
		case 'w':
			wait_s = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || wait_s > 86400) {
				cli_err("--wait '%s': seconds, 0 to 86400", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'h': fputs(cli_attest_help, stdout); return EXIT_OK;
		default: return EXIT_ERROR;
		}
	}
	if (optind < argc - 1 || (optind == argc - 1 && !id_ok(argv[optind]))) {
		cli_err("status takes at most one agent ID");
		return EXIT_ERROR;
	}
	if (verifiers && (optind < argc || history || wait_s)) {
		cli_err("status --verifiers takes no agent ID, --history or --wait");
		return EXIT_ERROR;
	}
	if ((ear && (optind != argc - 1 || history || json || verifiers || wait_s)) ||
	    (nonce && !ear)) {
		cli_err("status --ear takes one agent ID and no --history, --json, --verifiers or "
			"--wait; --nonce goes with --ear");
		return EXIT_ERROR;
	}
	if (nonce && !vg_ear_nonce_ok(nonce)) {
		cli_err("--nonce '%s': 8 to 64 characters of [A-Za-z0-9._~-]", nonce);
		return EXIT_ERROR;
	}
	if (ear)
		return print_ear(argv[optind], nonce);
	if (verifiers)
		snprintf(path, sizeof(path), "/v1/verifiers");
	else if (optind == argc - 1)
		snprintf(path, sizeof(path), "/v1/agents/%s%s", argv[optind],
			 history ? "/history" : "");
	else
		snprintf(path, sizeof(path), "/v1/agents");
	/* --wait: until the first round has judged the agent (not "registered") */
	for (long tenths = wait_s * 10;; tenths -= 2) {
		code = http("GET", path, NULL, 0, &res);
		if (code != 200 || optind != argc - 1 || history || tenths <= 0 ||
		    strcmp(jstr(res, "state"), "registered") != 0)
			break;
		json_object_put(res);
		res = NULL;
		usleep(200000);
	}
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
	} else if (verifiers) {
		print_verifiers(res);
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

/* `policy set NAME FILE`: @argv[0] is "set" */
static int policy_set(int argc, char **argv)
{
	char path[512];
	uint8_t *doc;
	size_t n;
	int rc;

	if (argc != 3 || !id_ok(argv[1])) {
		cli_err("policy set needs NAME and FILE");
		return EXIT_ERROR;
	}
	if (cli_attest_read(argv[2], &doc, &n) < 0)
		return EXIT_ERROR;
	snprintf(path, sizeof(path), "/v1/policies/%s", argv[1]);
	rc = simple("PUT", path, (const char *)doc, "policy stored");
	free(doc);
	return rc;
}

static int policy_get(int argc, char **argv)
{
	json_object *res = NULL;
	char path[512];
	long code;

	if (argc != 2 || !id_ok(argv[1])) {
		cli_err("policy get needs NAME");
		return EXIT_ERROR;
	}
	snprintf(path, sizeof(path), "/v1/policies/%s", argv[1]);
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

/* `policy assign ID NAME` */
static int policy_assign(int argc, char **argv)
{
	json_object *req;
	char path[512];
	int rc;

	if (argc != 3 || !id_ok(argv[1]) || !id_ok(argv[2])) {
		cli_err("policy assign needs ID and NAME");
		return EXIT_ERROR;
	}
	req = json_object_new_object();
	json_object_object_add(req, "policy", json_object_new_string(argv[2]));
	snprintf(path, sizeof(path), "/v1/agents/%s/policy", argv[1]);
	rc = simple("PUT", path, json_object_to_json_string(req), "policy assigned");
	json_object_put(req);
	return rc;
}

/* `remove ID`, `reactivate ID`: @argv[0] is the verb, named in the usage error */
static int agent_op(int argc, char **argv, const char *method, const char *fmt,
		    const char *body, const char *done)
{
	char path[512];

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(cli_attest_help, stdout);
		return EXIT_OK;
	}
	if (argc != 2 || !id_ok(argv[1])) {
		cli_err("%s needs one agent ID", argv[0]);
		return EXIT_ERROR;
	}
	snprintf(path, sizeof(path), fmt, argv[1]);
	return simple(method, path, body, done);
}

static int attest_remove(int argc, char **argv)
{
	return agent_op(argc, argv, "DELETE", "/v1/agents/%s", NULL, "removed");
}

static int attest_reactivate(int argc, char **argv)
{
	return agent_op(argc, argv, "POST", "/v1/agents/%s/reactivate", "{}", "reactivated");
}

static int unknown(int argc, char **argv)
{
	(void)argc;
	cli_err("unknown subcommand '%s' (see vigil attest --help)", argv[0]);
	return EXIT_ERROR;
}

void cli_attest_remote_setup(const char *url, const char *token)
{
	verifier_url = url;
	token_file = token;
}

/* Help, or the credential and libcurl first (their errors come before the verb's), then @run. */
static int connected(int (*run)(int argc, char **argv), int argc, char **argv)
{
	int rc;

	/* `VERB --help` is help: no credential, no verifier asked */
	if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
		fputs(cli_attest_help, stdout);
		return EXIT_OK;
	}
	if (token_open(token_file) < 0 || curl_open() < 0)
		return EXIT_ERROR;
	rc = run(argc, argv);
	curl_close();
	return rc;
}

#define CONNECTED(name, fn) \
	int name(int argc, char **argv) { return connected(fn, argc, argv); }

CONNECTED(cli_attest_add, attest_add)
CONNECTED(cli_attest_status, attest_status)
CONNECTED(cli_attest_remove, attest_remove)
CONNECTED(cli_attest_reactivate, attest_reactivate)
CONNECTED(cli_attest_policy_set, policy_set)
CONNECTED(cli_attest_policy_get, policy_get)
CONNECTED(cli_attest_policy_assign, policy_assign)
CONNECTED(cli_attest_unknown, unknown)
