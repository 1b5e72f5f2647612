// SPDX-License-Identifier: MIT
/*
 * agent_http.c - vigil-agent's HTTP server, in the network process:
 * libmicrohttpd with one internal thread (so the TPM has one client),
 * HTTP or HTTPS, every request bounded in time and size (http_guard.h).
 * Before a byte of the body is read a request must show a credential (a
 * client certificate chaining to --tls-client-ca, or a bearer token of
 * role verifier from --auth-tokens, docs/api-auth.md; none with
 * --insecure-no-auth) and a path that decodes strictly; then it is routed
 * to agent_routes.c. The token list is read again on SIGHUP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "agent.h"
#include "http_auth.h"
#include "http_guard.h"
#include "http_reply.h"
#include "http_upload.h"
#include "http_util.h"

void agent_auth_reload(struct agent *a)
{
	struct vg_auth *n = NULL, *old;
	char err[512];

	if (a->no_auth || !a->auth_path)
		return;
	if (http_auth_load(a->auth_path, VG_AUTH_VERIFIER, &n, err, sizeof(err)) < 0) {
		vlog_warn("SIGHUP: %s; the tokens listed before stay valid", err);
		return;
	}
	pthread_rwlock_wrlock(&a->auth_lock);
	old = a->auth;
	a->auth = n;
	pthread_rwlock_unlock(&a->auth_lock);
	vg_auth_free(old);
	vlog_info("SIGHUP: %zu token(s) from %s", vg_auth_count(n), a->auth_path);
}

/* Return: true when the request carries a credential of ours (else @ret is the refusal). */
static bool authorized(struct agent *a, struct MHD_Connection *c, enum MHD_Result *ret)
{
	char id[VG_AUTH_ID_LEN + 1];
	int role;

	if (a->no_auth || (a->need_client_cert && http_client_cert_ok(c)))
		return true;
	pthread_rwlock_rdlock(&a->auth_lock);
	role = http_auth_role(c, a->auth, id);
	pthread_rwlock_unlock(&a->auth_lock);
	if (role == VG_AUTH_VERIFIER)
		return true;
	if (role != -ENOKEY)
		vlog_warn("refused %s%s", role == -EBADMSG ? "a malformed token" :
			"token ", role == -EBADMSG ? "" : id);
	*ret = http_auth_refuse(c, MHD_HTTP_UNAUTHORIZED, "vigil-agent", role == -ENOKEY ?
				"a credential is required: the verifier's bearer token or client "
				"certificate" : "the bearer token is not valid here");
	return false;
}

/* The request is whole: its answer. */
static enum MHD_Result route(struct agent *a, struct MHD_Connection *c, const char *method,
			     const struct http_upload *u)
{
	bool get = strcmp(method, "GET") == 0;
	const char *url = u->path;

	if (get && strcmp(url, "/v1/identity") == 0)
		return agent_identity(a, c);
	if (get && strcmp(url, "/v1/quote") == 0)
		return agent_quote(a, c);
	if (get && strcmp(url, "/v1/log") == 0)
		return agent_log(a, c);
	if (get && strcmp(url, "/v1/bootlog") == 0)
		return agent_bootlog(a, c);
	if (strcmp(method, "POST") == 0 && strcmp(url, "/v1/activate") == 0)
		return agent_activate(a, c, u->buf ? u->buf : "", u->len);
	return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct agent *a = cls;
	struct http_upload *u = *con_cls;
	enum MHD_Result ret;

	(void)version;
	(void)url;			/* MHD's decoding stops at a %00: u->path is ours */
	if (!u)
		return MHD_NO;
	if (!u->started) {
		u->started = true;
		/* refused before a byte of the body is read */
		if (!authorized(a, c, &ret)) {
			u->answered = true;
			return ret;
		}
		if (u->path_err < 0) {
			u->answered = true;
			return http_reply_error(c, MHD_HTTP_BAD_REQUEST, u->path);
		}
		if (http_guard_body_too_big(c, AGENT_BODY_MAX)) {
			u->answered = true;
			return http_reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
		}
		return MHD_YES;
	}
	if (*data_len) {
		/* chunked past the limit: the connection is closed */
		if (u->answered || http_upload_append(u, data, *data_len, AGENT_BODY_MAX) < 0)
			return MHD_NO;
		*data_len = 0;
		return MHD_YES;
	}
	http_guard_busy(c);
	if (u->answered)
		return MHD_YES;			/* refusal already queued */
	return route(a, c, method, u);
}

struct MHD_Daemon *agent_http_start(struct agent *a, const void *sa, const char *cert_pem,
				    const char *key_pem, const char *ca_pem, unsigned int idle_s,
				    struct http_guard *guard)
{
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert_pem },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem },
		{ ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, (void *)ca_pem },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (!cert_pem)
		tls[0].option = MHD_OPTION_END;
	a->need_client_cert = ca_pem != NULL;
	/*
	 * One thread (the TPM has one client). A request arrives whole
	 * within 10 s or its connection is shut (http_guard.h), and a
	 * connection waits @idle_s for its next request; 16 connections
	 * per address, 64 in all, 16 KiB of headers.
	 */
	return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
				(cert_pem ? MHD_USE_TLS : 0), 0, NULL, NULL, handler, a,
				MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_NOTIFY_COMPLETED, http_upload_end, NULL,
				MHD_OPTION_URI_LOG_CALLBACK, http_upload_begin, NULL,
				MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, guard,
				MHD_OPTION_CONNECTION_TIMEOUT, idle_s > 10 ? idle_s : 10u,
				MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, 16u,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16u << 10),
				MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
}
