// SPDX-License-Identifier: MIT
/*
 * cmd_status.c - `vigil status [--control SOCKET] [--json] [--mode MODE | --reload]`
 *
 * Asks a running vigild over its control socket for its mode, policy
 * digest, the policy rules it was told to keep although it cannot enforce
 * them (--accept-unenforced), marks and counters, or switches its mode or reloads its policy.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"

static const char help[] =
	"usage: vigil status [--control SOCKET] [--json] [--mode enforce|permissive|fix | --reload]\n"
	"\n"
	"Show what a running vigild does: mode, policy digest, rules it keeps but\n"
	"cannot enforce (--accept-unenforced), marks, counters\n"
	"(events, allowed, denied by reason, cache hits, bytes hashed, decision\n"
	"latency p50/p99); or switch its mode, or make it reload its policy.\n"
	"  -s, --control SOCKET   vigild's control socket (default /run/vigild.sock)\n"
	"  -j, --json             the raw JSON answer\n"
	"  -m, --mode MODE        switch to enforce, permissive or fix\n"
	"  -r, --reload           reload the policy (a bad policy is refused, the old stays)\n"
	"Exit status: 0 answered, 2 vigild not reachable or refused the request.\n";

static void print_human(json_object *o)
{
	json_object *c = NULL, *v, *marks, *reasons;

	if (json_object_object_get_ex(o, "mode", &v))
		printf("mode: %s\n", json_object_get_string(v));
	if (json_object_object_get_ex(o, "policy_sha256", &v))
		printf("policy: sha256 %s", json_object_get_string(v));
	if (json_object_object_get_ex(o, "policy_rules", &v))
		printf(" (%d rules)\n", json_object_get_int(v));
	if (json_object_object_get_ex(o, "unenforced_rules", &v) &&
	    json_object_get_int(json_object_object_get(v, "total")) > 0) {
		json_object *rules = json_object_object_get(v, "rules");

		printf("unenforced rules (accepted with --accept-unenforced): %d\n",
		       json_object_get_int(json_object_object_get(v, "total")));
		for (size_t i = 0; rules && i < json_object_array_length(rules); i++) {
			json_object *r = json_object_array_get_idx(rules, i);

			printf("  line %d: %s\n    %s\n",
			       json_object_get_int(json_object_object_get(r, "line")),
			       json_object_get_string(json_object_object_get(r, "rule")),
			       json_object_get_string(json_object_object_get(r, "why")));
		}
	}
	if (json_object_object_get_ex(o, "marks", &marks)) {
		fputs("marks:", stdout);
		for (size_t i = 0; i < json_object_array_length(marks); i++)
			printf(" %s", json_object_get_string(json_object_array_get_idx(marks, i)));
		fputc('\n', stdout);
	}
	if (json_object_object_get_ex(o, "counters", &c)) {
		json_object_object_foreach(c, key, val) {
			if (strcmp(key, "denied_by_reason") == 0)
				continue;
			printf("%s: %s\n", key, json_object_get_string(val));
		}
		if (json_object_object_get_ex(c, "denied_by_reason", &reasons)) {
			json_object_object_foreach(reasons, rk, rv)
				printf("  denied %s: %s\n", rk, json_object_get_string(rv));
		}
	}
	if (json_object_object_get_ex(o, "latency_p50_us", &v))
		printf("latency p50: %.0f us\n", json_object_get_double(v));
	if (json_object_object_get_ex(o, "latency_p99_us", &v))
		printf("latency p99: %.0f us\n", json_object_get_double(v));
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "control", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "mode", required_argument, NULL, 'm' },
		{ "reload", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = "/run/vigild.sock", *mode = NULL;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	bool json = false, reload = false;
	char req[64], buf[65536];
	size_t len = 0;
	ssize_t n;
	json_object *o, *err;
	int c, s;

	optind = 0;
	while ((c = getopt_long(argc, argv, "s:jm:rh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'r':
			reload = true;
			break;
		case 'h':
			fputs(help, stdout);
			return EXIT_OK;
		default:
			fputs(help, stderr);
			return EXIT_ERROR;
		}
	}
	if (optind < argc || (mode && reload)) {
		fputs(help, stderr);
		return EXIT_ERROR;
	}
	if (mode && strcmp(mode, "enforce") && strcmp(mode, "permissive") && strcmp(mode, "fix")) {
		cli_err("--mode must be enforce, permissive or fix, not '%s'", mode);
		return EXIT_ERROR;
	}
	if (strlen(path) >= sizeof(a.sun_path)) {
		cli_err("%s: socket path too long", path);
		return EXIT_ERROR;
	}
	strcpy(a.sun_path, path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		cli_err("%s: cannot reach vigild: %s", path, strerror(errno));
		if (s >= 0)
			close(s);
		return EXIT_ERROR;
	}
	snprintf(req, sizeof(req), "%s%s\n", mode ? "mode " : reload ? "reload" : "status",
		 mode ? mode : "");
	if (write(s, req, strlen(req)) != (ssize_t)strlen(req)) {
		cli_err("%s: %s", path, strerror(errno));
		close(s);
		return EXIT_ERROR;
	}
	while (len < sizeof(buf) - 1 && (n = read(s, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(s);
	buf[len] = 0;
	o = json_tokener_parse(buf);
	if (!o) {
		cli_err("%s: vigild sent no valid answer", path);
		return EXIT_ERROR;
	}
	if (json_object_object_get_ex(o, "error", &err)) {
		cli_err("vigild refused: %s", json_object_get_string(err));
		json_object_put(o);
		return EXIT_ERROR;
	}
	if (json || mode || reload)
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	else
		print_human(o);
	json_object_put(o);
	return EXIT_OK;
}
