// SPDX-License-Identifier: MIT
/*
 * agent_privsep.c - vigil-agent's two processes in one table
 * (agent_procs, as OpenBSD relayd's procs[]; started by common/proc.h,
 * speaking agent_proto.h's fixed messages), and the network process's
 * sandbox (common/sandbox.h), entered once it has the identity from the
 * TPM process and before it serves or pushes:
 *
 *   - --user's uid and gid when given (checked: no supplementary group,
 *     no capability, setuid(0) refused), PR_SET_NO_NEW_PRIVS;
 *   - Landlock, every right of the running ABI handled: reads beneath
 *     the system directories and the directories of the files it reads
 *     while running (the measurement list, the boot log, the token list
 *     read again on SIGHUP, push mode's CA and client certificate), /dev;
 *     nothing written; TCP: pull mode binds its --listen port and
 *     connects nowhere, push mode connects to the verifier's port only
 *     (and 53, the resolver over TCP, and the port of a proxy libcurl
 *     takes from the environment) and binds nothing; no signal or
 *     abstract socket outside its domain;
 *   - seccomp: agent_net_role, the calls of an HTTP process (sandbox.h),
 *     anything else kills it.
 * The TPM process, which holds the TPM and parses only agent_proto.h's
 * messages, keeps its identity: it writes the AK into --state and talks
 * to the TPM (a device, or swtpm's socket).
 */
#include <errno.h>
#include <libgen.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent.h"
#include "proc.h"
#include "sandbox.h"

const struct proc agent_procs[AGENT_PROC__COUNT] = {
	/* the main process: systemd watches it; it opens the TPM after the fork */
	[AGENT_PROC_TPM] = { .name = NULL },
	/* the child: parses HTTP, never had the TPM; keeps the ready pipe; ends with the TPM process */
	[AGENT_PROC_NET] = { NULL, SOCK_SEQPACKET, 0, SIGTERM, false, false, &agent_net_role },
};

const struct sandbox_role agent_net_role = {
	"vigil-agent network process", sandbox_http_calls, NULL, sandbox_http_rules,
	SANDBOX_HTTP_NRULES
};

/* the port of HOST[:PORT][/...] (HOST may be [v6]): PORT, @dflt without one, 0 if unreadable */
static uint16_t host_port(const char *h, uint16_t dflt)
{
	const char *end = h + strcspn(h, "/?#"), *colon;
	unsigned long p;

	colon = h[0] == '[' ? memchr(h, ']', (size_t)(end - h)) : h;
	colon = colon ? memchr(colon, ':', (size_t)(end - colon)) : NULL;
	if (!colon)
		return dflt;
	p = strtoul(colon + 1, NULL, 10);
	return p > 0 && p < 65536 ? (uint16_t)p : 0;
}

/* the port of an http:// or https:// URL; 0 if none can be read */
static uint16_t url_port(const char *url)
{
	const char *h = strstr(url, "://");

	return h ? host_port(h + 3, strncmp(url, "https:", 6) == 0 ? 443 : 80) : 0;
}

/*
 * The ports of the proxies libcurl would take from the environment (its
 * variables; a proxy without a scheme or port is HTTP on 1080, as
 * libcurl reads it) into @out (@n slots, 0 ends them): push mode reaches
 * the verifier through them.
 */
static void proxy_ports(uint16_t *out, size_t n)
{
	static const char *const vars[] = { "http_proxy", "https_proxy", "HTTPS_PROXY",
					    "all_proxy", "ALL_PROXY" };
	size_t k = 0;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]) && k + 1 < n; i++) {
		const char *v = getenv(vars[i]), *h;

		if (!v || !v[0])
			continue;
		h = strstr(v, "://");
		out[k] = host_port(h ? h + 3 : v, 1080);
		k += out[k] != 0;
	}
	out[k] = 0;
}

/* the directory of @path into @buf (its own copy), NULL for NULL */
static const char *dir_of(const char *path, char *buf, size_t cap)
{
	if (!path)
		return NULL;
	snprintf(buf, cap, "%s", path);
	return dirname(buf);
}

int agent_net_sandbox(const struct agent *a, const char *user, uint16_t listen_port, char *msg,
		      size_t cap)
{
	char d[7][4096];
	const char *files[8] = { 0 };
	const char *paths[7] = { a->log, a->boot_log, a->auth_path, a->push.ca, a->push.cert,
				 a->push.key, NULL };
	uint16_t bind[2] = { listen_port, 0 }, conn[8] = { 0 };
	struct sandbox sb = {
		.name = "the network process", .single_thread = true, .landlock = true,
		.landlock_optional = true, .read_dirs = sandbox_system_dirs, .read_files = files,
		.dev = true, .self_exe = true, .bind_ports = bind, .connect_ports = conn,
		.seccomp = agent_procs[AGENT_PROC_NET].role,
	};
	size_t k = 0;

#ifdef VIGIL_AGENT_TAMPER
	paths[6] = a->tamper_file;
#endif
	for (size_t i = 0; i < 7; i++)
		if (paths[i])
			files[k++] = dir_of(paths[i], d[i], sizeof(d[i]));
	if (a->push.url) {
		conn[0] = url_port(a->push.url);
		conn[1] = 53;
		proxy_ports(conn + 2, sizeof(conn) / sizeof(conn[0]) - 2);
		bind[0] = 0;
		if (!conn[0]) {
			snprintf(msg, cap, "--push %s: no port", a->push.url);
			return -EINVAL;
		}
	}
	if (user) {
		struct passwd *pw = getpwnam(user);

		if (!pw) {
			snprintf(msg, cap, "cannot become %s: no such user", user);
			return -ENOENT;
		}
		sb.become = true;
		sb.uid = pw->pw_uid;
		sb.gid = pw->pw_gid;
	}
	return sandbox_enter(&sb, msg, cap);
}
