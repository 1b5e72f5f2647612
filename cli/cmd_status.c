// SPDX-License-Identifier: MIT
/*
 * cmd_status.c - `vigil status [--control SOCKET] [--json] [--prometheus] [--mode MODE | --reload]`
 *
 * Asks a running vigild over its control socket for its mode, policy
 * digest, the policy rules it was told to keep although it cannot enforce
 * them (--accept-unenforced), marks and counters, or switches its mode or reloads its policy.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "vigild_ctl.h"
#include "vigild_prom.h"

static const char help[] =
	"usage: vigil status [--control SOCKET] [--json] [--prometheus] [--mode enforce|permissive|fix | --reload]\n"
	"\n"
	"Show what a running vigild does: mode, policy digest, rules it keeps but\n"
	"cannot enforce (--accept-unenforced), marks, counters\n"
	"(events, allowed, denied by reason, cache hits, bytes hashed, decision\n"
	"latency p50/p99); or switch its mode, or make it reload its policy.\n"
	"  -s, --control SOCKET   vigild's control socket (default " VD_CTL_DEFAULT_SOCKET ")\n"
	"  -j, --json             the raw JSON answer\n"
	"  -P, --prometheus       the counters in the Prometheus text format (0.0.4)\n"
	"  -m, --mode MODE        switch to enforce, permissive or fix\n"
	"  -r, --reload           reload the policy and wait for the result: exit 0 when\n"
	"                         applied; a refused policy (the old one stays): its\n"
	"                         error, exit 2\n"
	"Exit status: 0 answered, 2 vigild not reachable or refused the request.\n";

/* The filesystems watched, and the ways around vigild, with what was done about each. */
static void print_watched(json_object *o)
{
	json_object *a, *v;

	if (json_object_object_get_ex(o, "watched", &a) && json_object_is_type(a, json_type_array))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *x = json_object_array_get_idx(a, i);

			printf("watched: %s (%s, %s reader%s)\n",
			       json_object_get_string(json_object_object_get(x, "path")),
			       json_object_get_string(json_object_object_get(x, "fstype")),
			       json_object_get_string(json_object_object_get(x, "reader")),
			       json_object_get_boolean(json_object_object_get(x, "marked")) ? "" : ", not marked yet");
		}
	if (json_object_object_get_ex(o, "watch_mounts", &v) && json_object_is_type(v, json_type_string))
		printf("watch mounts under: %s (as they appear: %s)\n", json_object_get_string(v),
		       json_object_get_string(json_object_object_get(o, "mount_events")));
	if (json_object_object_get_ex(o, "gaps", &a) && json_object_is_type(a, json_type_array))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *g = json_object_array_get_idx(a, i);

			printf("gap %s: %s\n", json_object_get_string(json_object_object_get(g, "name")),
			       json_object_get_string(json_object_object_get(g, "state")));
			if (strcmp(json_object_get_string(json_object_object_get(g, "state")), "closed") != 0)
				printf("  %s\n", json_object_get_string(json_object_object_get(g, "how")));
		}
}

static void print_human(json_object *o)
{
	static struct vd_ctl_unenforced rules[VD_CTL_MAX_UNENFORCED];
	struct vd_ctl_status s;

	vd_ctl_status_decode(o, &s, rules, VD_CTL_MAX_UNENFORCED);
	if (s.has_mode)
		printf("mode: %s\n", s.mode);
	if (s.has_policy)
		printf("policy: sha256 %s", s.policy_sha256);
	if (s.has_rules)
		printf(" (%d rules)\n", (int)s.policy_rules);
	if (s.unenforced_total > 0) {
		printf("unenforced rules (accepted with --accept-unenforced): %d\n", s.unenforced_total);
		for (size_t i = 0; i < s.nunenforced; i++)
			printf("  line %d: %s\n    %s\n", rules[i].line, rules[i].rule, rules[i].why);
	}
	if (s.has_marks) {
		fputs("marks:", stdout);
		for (size_t i = 0; i < s.nmarks; i++)
			printf(" %s", s.marks[i]);
		fputc('\n', stdout);
	}
	print_watched(o);
	if (s.trust_db)
		printf("trust database: %s (%" PRIu64 " files)\n", s.trust_db, s.counters[VD_CTL_TRUST_FILES]);
	if (s.has_counters) {
		for (size_t i = 0; i < VD_CTL_NCOUNTERS; i++)
			if (s.has_counter[i])
				printf("%s: %" PRIu64 "\n", vd_ctl_counter_names[i], s.counters[i]);
		for (size_t i = 0; i < s.nreasons; i++)
			printf("  denied %s: %" PRIu64 "\n", s.reasons[i].reason, s.reasons[i].n);
	}
	if (s.has_p50)
		printf("latency p50: %.0f us\n", s.p50_us);
	if (s.has_p99)
		printf("latency p99: %.0f us\n", s.p99_us);
}

static int print_prometheus(json_object *o)
{
	static struct vd_ctl_unenforced rules[VD_CTL_MAX_UNENFORCED];
	struct vd_ctl_status s;

	vd_ctl_status_decode(o, &s, rules, VD_CTL_MAX_UNENFORCED);
	if (vd_ctl_prometheus(&s, stdout) < 0 || fflush(stdout) != 0) {
		cli_err("writing the metrics: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "control", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "mode", required_argument, NULL, 'm' },
		{ "reload", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = VD_CTL_DEFAULT_SOCKET, *mode = NULL;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	bool json = false, reload = false, prom = false;
	char req[64], buf[65536];
	size_t len = 0;
	ssize_t n;
	struct vd_ctl_req q;
	const char *why = NULL;
	json_object *o;
	int c, s, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "s:jPm:rh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'P':
			prom = true;
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
	if (optind < argc || (mode && reload) || (prom && (json || mode || reload))) {
		fputs(help, stderr);
		return EXIT_ERROR;
	}
	if (mode && vd_ctl_mode_parse(mode) < 0) {
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
		int e = errno;

		cli_err("%s: cannot reach vigild: %s%s", path, strerror(e),
			e == ECONNREFUSED || e == ENOENT ? " (is vigild running? systemctl status vigild)" : "");
		if (s >= 0)
			close(s);
		return EXIT_ERROR;
	}
	{
		/* a reload is answered when it is done; a daemon that never answers is an error */
		struct timeval tv = { .tv_sec = 60 };

		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	q.op = mode ? VD_CTL_MODE : reload ? VD_CTL_RELOAD : VD_CTL_STATUS;
	q.mode = mode ? (enum vd_ctl_mode)vd_ctl_mode_parse(mode) : VD_CTL_ENFORCE;
	if (vd_ctl_req_encode(&q, req, sizeof(req)) < 0) {
		close(s);
		return EXIT_ERROR;
	}
	if (write(s, req, strlen(req)) != (ssize_t)strlen(req)) {
		cli_err("%s: %s", path, strerror(errno));
		close(s);
		return EXIT_ERROR;
	}
	while (len < sizeof(buf) - 1 && (n = read(s, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(s);
	buf[len] = 0;
	r = vd_ctl_answer_decode(buf, &o, &why);
	if (r == -EBADMSG) {
		cli_err("%s: vigild sent no valid answer", path);
		return EXIT_ERROR;
	}
	if (r < 0) {
		cli_err("vigild refused: %s", why);
		json_object_put(o);
		return EXIT_ERROR;
	}
	if (prom)
		r = print_prometheus(o);
	else if (json || mode || reload)
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	else
		print_human(o);
	json_object_put(o);
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}
