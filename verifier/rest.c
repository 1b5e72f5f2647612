// SPDX-License-Identifier: MIT
/*
 * rest.c - the verifier's REST API on libmicrohttpd, for operators
 * (`vigil attest` is its client); the only part of vigil-verifier that
 * includes microhttpd.h (besides the shared http_* helpers):
 *
 *   POST   /v1/agents {id, url, policy}      register (201; 403 typed failure; 409 EK changed)
 *   GET    /v1/agents                        {agents: [...]}
 *   GET    /v1/agents/ID                     status
 *   GET    /v1/agents/ID/history             {history: [...]} newest first
 *   GET    /v1/agents/ID/ear[?nonce=N]       its latest verdict as a signed EAR (ear.c)
 *   DELETE /v1/agents/ID
 *   POST   /v1/agents/ID/reactivate          poll a failed agent again
 *   PUT    /v1/agents/ID/policy {policy}     assign a policy, re-verify from entry 0
 *   PUT    /v1/policies/NAME  (document)     vigil JSON, Keylime runtime policy, allowlist
 *   GET    /v1/policies/NAME                 as vigil JSON
 *   POST   /v1/verify/evidence               one round's evidence judged, no agent (evidence.c);
 *                                            a signed EAR with "ear": true or Accept:
 *                                            application/eat+jwt
 *   GET    /v1/verifiers                     {verifiers: [...]} sharing the store, heartbeats
 *   GET    /metrics                          Prometheus text (metrics.c)
 *   GET    /ui/, /ui/app.js, /ui/app.css     the operators' page (web.c, docs/web.md)
 *   POST   /v1/push/ID/register|activate|nonce|evidence   a pushing agent (push.c)
 *
 * The routes and the role each needs are one table, vg_api_routes
 * (attest_api.c); docs/openapi.json describes them (t0515 compares). Every
 * route but the page's static files needs a credential (docs/api-auth.md),
 * checked from the headers before the body is read: a bearer token (admin:
 * every route; read: reading, and judging evidence), or a client
 * certificate (admin or read by its CA); none with --insecure-no-auth.
 * Every answer carries the headers of http_reply_harden (no sniffing,
 * framing or caching; a CSP under which nothing runs, but for the page).
 * Routes are found on the path as sent, decoded strictly
 * (vg_api_path_decode). Requests must arrive whole within
 * --api-timeout (http_guard.c); bodies above --max-body get 413 before
 * they are read. Registration is register.c's; this file only sends its
 * answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "log.h"
#include "verifier.h"
#include "privsep.h"
#include "http_auth.h"
#include "http_guard.h"
#include "http_reply.h"
#include "http_upload.h"
#include "http_util.h"
#include "web.h"

#define VF_API_CONN_POOL (8u << 10)

struct vf_api {
	struct MHD_Daemon *d;
	struct verifier *vf;
	struct http_guard *guard;
};

/* "auth": "disabled" in every status answer when there is no authentication. */
static json_object *auth_mark(const struct verifier *vf, json_object *o)
{
	if (vf->no_auth && o)
		json_object_object_add(o, "auth", json_object_new_string("disabled"));
	return o;
}

struct list_arg {
	struct verifier *vf;
	json_object *arr;
};

static int list_cb(void *arg, const struct vg_store_agent *a)
{
	struct list_arg *la = arg;

	json_object_array_add(la->arr, vf_json_status(la->vf, a));
	return 0;
}

/* /v1/agents: POST registers (register.c), GET lists. */
static enum MHD_Result h_agents(struct verifier *vf, struct MHD_Connection *c, const char *method,
				const char *body, size_t len)
{
	json_object *o, *arr;
	struct vg_diag ld = { 0 };
	int lr;

	if (strcmp(method, "POST") == 0) {
		struct vf_answer ans;

		vf_register(vf, body, len, &ans);
		return http_reply_json(c, ans.code, ans.body);
	}
	o = json_object_new_object();
	arr = json_object_new_array();
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c), the rows streamed back */
	lr = vg_store_agent_list(vf->store, list_cb, &(struct list_arg){ vf, arr }, &ld);
	pthread_mutex_unlock(&vf->lock);
	json_object_object_add(o, "agents", arr);
	auth_mark(vf, o);
	if (lr < 0) {
		json_object_put(o);
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, ld.msg);
	}
	return http_reply_json(c, MHD_HTTP_OK, o);
}

static int verifier_cb(void *arg, const struct vg_store_verifier *v)
{
	json_object_array_add(arg, vf_json_verifier(v, vf_wall_ms()));
	return 0;
}

/* GET /v1/verifiers: every verifier's last heartbeat, and which one answers. */
static enum MHD_Result h_verifiers(struct verifier *vf, struct MHD_Connection *c)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct vg_diag d = { 0 };
	int r;

	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c), the rows streamed back */
	r = vg_store_verifier_list(vf->store, verifier_cb, arr, &d);
	pthread_mutex_unlock(&vf->lock);
	json_object_object_add(o, "self", json_object_new_string(vf->id));
	json_object_object_add(o, "alive_ms", json_object_new_int64(VF_BEAT_ALIVE_MS));
	json_object_object_add(o, "verifiers", arr);
	if (r < 0) {
		json_object_put(o);
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
	}
	return http_reply_json(c, MHD_HTTP_OK, auth_mark(vf, o));
}

static enum MHD_Result h_agent(struct verifier *vf, struct MHD_Connection *c, const char *method,
			       const struct vg_api_route *rt, const char *body, size_t len)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	const char *id = rt->id;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char pname[VG_API_ID_MAX] = "", err[512];
	int r;

	if (!a)
		return MHD_NO;
	/* the body is parsed before the lock is taken */
	if (rt->ep == VG_API_AGENT_POLICY &&
	    vg_api_policy_assign_parse((const uint8_t *)body, len, pname, &d) < 0) {
		free(a);
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	}
	pthread_mutex_lock(&vf->lock);
	/* first: vf_policy_lookup may drop the lock while it parses (the agent is read after) */
	if (*pname && !vf_policy_lookup(vf, pname, err, sizeof(err))) {
		pthread_mutex_unlock(&vf->lock);
		free(a);
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, err);
	}
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, a, &d);
	if (r == -ENOENT) {
		ret = http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such agent");
	} else if (r < 0) {
		ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
	} else if (rt->ep == VG_API_AGENT && strcmp(method, "GET") == 0) {
		ret = http_reply_json(c, MHD_HTTP_OK, auth_mark(vf, vf_json_status(vf, a)));
	} else if (rt->ep == VG_API_AGENT_HISTORY) {
		json_object *o = json_object_new_object(), *arr = json_object_new_array();

		/* store round trip (store_client.c), the rows streamed back */
		r = vg_store_verdict_list(vf->store, id, VF_HISTORY_MAX, vf_json_verdict_cb, arr,
					  &d);
		json_object_object_add(o, "id", json_object_new_string(id));
		json_object_object_add(o, "history", arr);
		auth_mark(vf, o);
		if (r < 0) {
			json_object_put(o);
			ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
		} else {
			ret = http_reply_json(c, MHD_HTTP_OK, o);
		}
	} else if (rt->ep == VG_API_AGENT) {	/* DELETE */
		/* store round trip (store_client.c) */
		ret = vg_store_agent_del(vf->store, id, &d) < 0
			? http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg)
			: http_reply_json(c, MHD_HTTP_OK, json_object_new_object());
	} else if (rt->ep == VG_API_AGENT_REACTIVATE) {
		a->state = VG_AGENT_REGISTERED;
		/* store round trip (store_client.c) */
		ret = vg_store_agent_put(vf->store, a, &d) < 0
			? http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg)
			: http_reply_json(c, MHD_HTTP_OK, vf_json_agent(a, vf_sched_late(vf, a->id)));
	} else {					/* VG_API_AGENT_POLICY */
		snprintf(a->policy, sizeof(a->policy), "%s", pname);
		a->state = VG_AGENT_REGISTERED;
		vg_attest_logstate_init(&a->st.log, a->bank);	/* judge the whole list */
		/* store round trip (store_client.c) */
		ret = vg_store_agent_put(vf->store, a, &d) < 0
			? http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg)
			: http_reply_json(c, MHD_HTTP_OK, vf_json_agent(a, vf_sched_late(vf, a->id)));
	}
	pthread_mutex_unlock(&vf->lock);
	free(a);
	return ret;
}

static enum MHD_Result h_policy(struct verifier *vf, struct MHD_Connection *c, const char *method,
				const char *name, const char *body, size_t len)
{
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char err[512];

	if (strcmp(method, "PUT") == 0) {
		int r;

		/* linear in the upload (attest_policy.c), and at most two at once */
		if (atomic_fetch_add(&vf->policy_checks, 1) >= VF_POLICY_CHECKS_MAX) {
			atomic_fetch_sub(&vf->policy_checks, 1);
			return http_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
						"two policy uploads are being checked already: retry");
		}
		r = vf_policy_load(vf, (const uint8_t *)body, len, &p, &d);
		atomic_fetch_sub(&vf->policy_checks, 1);
		if (r < 0)
			return http_reply_error(c, r == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE :
						MHD_HTTP_BAD_REQUEST, d.msg);
		vg_refpolicy_free(p);
		pthread_mutex_lock(&vf->lock);
		/* store round trip (store_client.c) */
		if (vg_store_policy_put(vf->store, name, body, len, &d) < 0) {
			ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, d.msg);
		} else {
			vf->policy_gen++;
			vf_policy_forget(vf, name);
			ret = http_reply_json(c, MHD_HTTP_OK, json_object_new_object());
		}
		pthread_mutex_unlock(&vf->lock);
		return ret;
	}
	if (strcmp(method, "GET") == 0) {
		char *json = NULL;

		pthread_mutex_lock(&vf->lock);
		p = vf_policy_lookup(vf, name, err, sizeof(err));
		if (p && vg_refpolicy_to_json(p, &json) > 0) {
			json_object *o = json_tokener_parse(json);

			ret = o ? http_reply_json(c, MHD_HTTP_OK, o) :
				  http_reply_error(c, 500, "policy serialisation");
			err[0] = 0;
		} else {
			ret = http_reply_error(c, MHD_HTTP_NOT_FOUND, err);
		}
		pthread_mutex_unlock(&vf->lock);
		free(json);
		return ret;
	}
	return http_reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or PUT");
}

/* Accept: application/eat+jwt asks for a signed EAR (ear.c) */
static bool wants_ear(struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return a && strstr(a, VG_EAR_MEDIA_TYPE);
}

/*
 * GET /v1/agents/ID/ear[?nonce=N]: the agent's latest verdict as a signed
 * EAR (ear.c), 501 without --ear-key, 400 for a nonce that is not one.
 */
static enum MHD_Result h_ear(struct verifier *vf, struct MHD_Connection *c, const char *id)
{
	const char *nonce = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
	char err[600] = "", *ear = NULL;
	size_t len = 0;
	int status;

	if (nonce && !vg_ear_nonce_ok(nonce))
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, "nonce: 8 to 64 characters of "
					"[A-Za-z0-9._~-]");
	status = vf_ear_agent(vf, id, nonce, &ear, &len, err, sizeof(err));
	if (status != MHD_HTTP_OK)
		return http_reply_error(c, (unsigned int)status, err);
	return http_reply_typed(c, MHD_HTTP_OK, VG_EAR_MEDIA_TYPE, ear, len);
}

/* POST /v1/verify/evidence: parsed here, judged by evidence.c */
static enum MHD_Result h_evidence(struct verifier *vf, struct MHD_Connection *c, const char *body,
				  size_t len)
{
	struct vg_api_evidence *e = malloc(sizeof(*e));
	struct vg_diag d = { 0 };
	json_object *o = NULL;
	char err[600] = "", *ear = NULL;
	size_t ear_len = 0;
	bool is_ear;
	int status;

	if (!e)
		return MHD_NO;
	if (vg_api_evidence_parse((const uint8_t *)body, len, e, &d) < 0) {
		free(e);
		return http_reply_error(c, d.err == -ENOMEM ? MHD_HTTP_INTERNAL_SERVER_ERROR :
					MHD_HTTP_BAD_REQUEST, d.msg);
	}
	if (wants_ear(c))
		e->ear = true;
	if (e->ear && !vg_privsep_ear_alg()) {
		/* refused before the judging is paid for */
		vg_api_evidence_release(e);
		free(e);
		return http_reply_error(c, 501, "no EAR signing key: start vigil-verifier with "
					"--ear-key FILE");
	}
	status = vf_evidence_judge(vf, e, &o, &ear, &ear_len, err, sizeof(err));
	is_ear = e->ear;
	vg_api_evidence_release(e);
	free(e);
	if (status != MHD_HTTP_OK)
		return http_reply_error(c, (unsigned int)status, err);
	if (is_ear)
		return http_reply_typed(c, MHD_HTTP_OK, VG_EAR_MEDIA_TYPE, ear, ear_len);
	return http_reply_json(c, MHD_HTTP_OK, o);
}

static int credential(struct verifier *vf, struct MHD_Connection *c, char id[VG_AUTH_ID_LEN + 1],
		      char *cred, size_t cap);

/* POST /v1/push/ID/...: a pushing agent (push.c), its credential named for the binding */
static enum MHD_Result h_push(struct verifier *vf, struct MHD_Connection *c,
			      const struct vg_api_route *rt, const char *body, size_t len)
{
	char cred[VF_PUSH_CRED_MAX] = "", id[VG_AUTH_ID_LEN + 1];
	struct vf_answer ans = { 0 };

	if (!vf->no_auth && credential(vf, c, id, cred, sizeof(cred)) != VG_AUTH_AGENT)
		return http_reply_error(c, MHD_HTTP_FORBIDDEN, "not an agent's credential");
	if (vf->no_auth)
		snprintf(cred, sizeof(cred), "none");
	switch (rt->ep) {
	case VG_API_PUSH_REGISTER:
		vf_push_register(vf, cred, rt->id, body, len, &ans);
		break;
	case VG_API_PUSH_ACTIVATE:
		vf_push_activate(vf, cred, rt->id, body, len, &ans);
		break;
	case VG_API_PUSH_NONCE:
		vf_push_nonce(vf, cred, rt->id, &ans);
		break;
	default:
		vf_push_evidence(vf, cred, rt->id, body, len, &ans);
		break;
	}
	return http_reply_json(c, ans.code, ans.body);
}

/* GET /metrics: the counters as Prometheus text (metrics.c) */
static enum MHD_Result h_metrics(struct verifier *vf, struct MHD_Connection *c)
{
	char *text, err[300];
	size_t len;
	int r;

	r = vf_metrics_text(vf, &text, &len, err, sizeof(err));
	if (r < 0)
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
					r == -EIO ? err : "out of memory");
	return http_reply_typed(c, MHD_HTTP_OK, VF_METRICS_TYPE, text, len);
}

/* GET /ui/...: the operators' page, a built-in file (web.c) */
static enum MHD_Result h_web(struct MHD_Connection *c, enum vg_api_endpoint ep)
{
	struct vf_web_file f;

	if (vf_web_file(ep, &f) < 0)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
	return http_reply_static(c, f.type, f.data, f.len, VF_WEB_CSP);
}

/*
 * The role of @c's client certificate (admin, read or agent by the CA it
 * chains to; 0 none), and for an agent its credential "cert:SUBJECT" in
 * @cred (empty: the subject did not print). Decided once per connection
 * and certificate (http_guard_memo): each CA's check verifies the chain
 * again, and a pushing agent makes two requests on one connection.
 */
/* @src into @dst of @cap bytes whole. Return: false (too long: @dst empty). */
static bool copy_text(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	dst[0] = 0;
	if (n >= cap)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

static int cert_role(struct verifier *vf, struct MHD_Connection *c, char *cred, size_t cap)
{
	struct http_conn_memo *m = http_guard_memo(c), local = { 0 };
	uint8_t h[32];
	int role = 0;

	cred[0] = 0;
	if (http_client_cert_hash(c, h) < 0)
		return 0;
	if (m && m->set && memcmp(m->cert, h, sizeof(h)) == 0) {
		(void)copy_text(cred, cap, m->text);
		return m->role;
	}
	if (!m)
		m = &local;
	/* the handshake trusted every CA: which one says the role */
	if (http_client_cert_ok(c)) {
		if (http_client_cert_from(c, vf->admin_ca)) {
			role = VG_AUTH_ADMIN;
		} else if (http_client_cert_from(c, vf->read_ca)) {
			role = VG_AUTH_READ;
		} else if (http_client_cert_from(c, vf->push_ca)) {
			char dn[VF_PUSH_CRED_MAX - 8];

			role = VG_AUTH_AGENT;
			if (http_client_cert_dn(c, dn, sizeof(dn)) == 0)
				snprintf(cred, cap, "cert:%s", dn);
		}
	}
	memcpy(m->cert, h, sizeof(h));
	m->role = role;
	(void)copy_text(m->text, sizeof(m->text), cred);
	m->set = true;
	return role;
}

/*
 * The role of the request's credential: a client certificate (admin,
 * read or agent by its CA), else a bearer token; @cred (may be NULL) says
 * which credential for a pushing agent ("cert:SUBJECT", "token:ID").
 * Return: the role, or as http_auth_role.
 */
static int credential(struct verifier *vf, struct MHD_Connection *c, char id[VG_AUTH_ID_LEN + 1],
		      char *cred, size_t cap)
{
	char cc[VF_PUSH_CRED_MAX];
	int role = 0;

	id[0] = 0;
	if (vf->api_client_ca) {
		role = cert_role(vf, c, cc, sizeof(cc));
		/* a pushing agent's certificate whose subject did not print names no credential */
		if (role == VG_AUTH_AGENT && cred && !cc[0])
			role = 0;
		else if (role == VG_AUTH_AGENT && cred && !copy_text(cred, cap, cc))
			role = 0;
	}
	if (!role) {
		pthread_rwlock_rdlock(&vf->auth_lock);
		role = http_auth_role(c, vf->auth, id);
		pthread_rwlock_unlock(&vf->auth_lock);
		if (role == VG_AUTH_AGENT && cred)
			snprintf(cred, cap, "token:%s", id);
	}
	return role;
}

/*
 * Who may do this: what the route table says (vg_api_routes: reading and
 * judging evidence need read, changing state admin, the page's static
 * files nothing); a request that will be refused with 400, 404 or 405
 * needs read for GET or HEAD and admin for anything else, so that nothing
 * is learnt about the API without a credential. A client certificate from
 * --api-client-ca is admin, from --api-read-client-ca read; else a bearer
 * token.
 * Return: MHD_YES (allowed: *@ok set) or the queued refusal.
 */
static enum MHD_Result authorize(struct verifier *vf, struct MHD_Connection *c,
				 const char *method, const char *path, bool *ok)
{
	struct vg_api_route rt;
	unsigned int need;
	char id[VG_AUTH_ID_LEN + 1];
	int role;

	if (vg_api_route(method, path, &rt, NULL) == 0)
		need = rt.role;
	else
		need = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ? VG_AUTH_READ :
		       VG_AUTH_ADMIN;
	*ok = false;
	if (vf->no_auth || need == 0) {
		*ok = true;
		return MHD_YES;
	}
	role = credential(vf, c, id, NULL, 0);
	if (role == -ENOKEY)
		return http_auth_refuse(c, MHD_HTTP_UNAUTHORIZED, "vigil-verifier",
					"a credential is required: Authorization: Bearer TOKEN "
					"(vigil attest --token-file) or a client certificate");
	if (role < 0) {
		vlog_warn("refused %s%s", role == -EBADMSG ? "a malformed token" :
			"token ", role == -EBADMSG ? "" : id);
		return http_auth_refuse(c, MHD_HTTP_UNAUTHORIZED, "vigil-verifier",
					"the bearer token is not valid here");
	}
	/* an agent pushes, and does nothing else; nobody else pushes */
	if ((need == VG_AUTH_AGENT) != (role == VG_AUTH_AGENT))
		return http_auth_refuse(c, MHD_HTTP_FORBIDDEN, "vigil-verifier",
					need == VG_AUTH_AGENT ?
					"only a pushing agent's credential (role agent) may push" :
					"an agent's credential may only push its own evidence");
	/* admin implies read */
	if (need == VG_AUTH_ADMIN && role != VG_AUTH_ADMIN)
		return http_auth_refuse(c, MHD_HTTP_FORBIDDEN, "vigil-verifier",
					"this credential may read, not change state (an admin "
					"token is needed)");
	*ok = true;
	return MHD_YES;
}

static enum MHD_Result answer(struct verifier *vf, struct MHD_Connection *c, const char *method,
			      struct http_upload *u)
{
	struct vg_api_route rt;
	struct vg_diag d = { 0 };
	const char *body;
	int r;

	body = u->buf ? u->buf : "";
	r = vg_api_route(method, u->path, &rt, &d);
	if (r == -ENOENT)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
	if (r == -EBADMSG)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	if (r < 0)
		return http_reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, d.msg);
	if (rt.ep == VG_API_AGENTS)
		return h_agents(vf, c, method, body, u->len);
	if (rt.ep == VG_API_POLICY)
		return h_policy(vf, c, method, rt.id, body, u->len);
	if (rt.ep == VG_API_VERIFY_EVIDENCE)
		return h_evidence(vf, c, body, u->len);
	if (rt.ep == VG_API_VERIFIERS)
		return h_verifiers(vf, c);
	if (rt.ep == VG_API_METRICS)
		return h_metrics(vf, c);
	if (rt.ep >= VG_API_UI_PAGE && rt.ep <= VG_API_UI_STYLE)
		return h_web(c, rt.ep);
	if (rt.ep >= VG_API_PUSH_REGISTER && rt.ep <= VG_API_PUSH_EVIDENCE)
		return h_push(vf, c, &rt, body, u->len);
	if (rt.ep == VG_API_AGENT_EAR)
		return h_ear(vf, c, rt.id);
	return h_agent(vf, c, method, &rt, body, u->len);
}

/* The headers are in: every refusal is sent before a byte of the body is read. */
static enum MHD_Result headers_seen(struct verifier *vf, struct MHD_Connection *c,
				    const char *method, struct http_upload *u)
{
	bool ok;
	enum MHD_Result ar;

	u->started = true;
	/* all refused before a byte of the body is read (curl's Expect: 100-continue waits) */
	ar = authorize(vf, c, method, u->path, &ok);
	if (!ok) {
		u->answered = true;
		return ar;
	}
	if (u->path_err < 0) {
		u->answered = true;
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, u->path);
	}
	if (http_guard_body_too_big(c, vf->max_body)) {
		u->answered = true;
		return http_reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
	}
	/* told to retry before its body is read, too (h_policy checks again) */
	if (strcmp(method, "PUT") == 0 && strncmp(u->path, "/v1/policies/", 13) == 0 &&
	    atomic_load(&vf->policy_checks) >= VF_POLICY_CHECKS_MAX) {
		u->answered = true;
		return http_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "two policy uploads are "
					"being checked already: retry");
	}
	return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct verifier *vf = cls;
	struct http_upload *u = *con_cls;
	enum MHD_Result ret;

	(void)version;
	(void)url;			/* MHD's decoding: u->path is ours, strict */
	if (!u)
		return MHD_NO;
	if (!u->started) {
		ret = headers_seen(vf, c, method, u);
		vf_metrics_http(&vf->metrics, http_reply_take_status());
		return ret;
	}
	if (*data_len) {
		/* chunked past the limit: the connection is closed */
		if (u->answered || http_upload_append(u, data, *data_len, vf->max_body) < 0)
			return MHD_NO;
		*data_len = 0;
		return MHD_YES;
	}
	http_guard_busy(c);
	if (u->answered)
		return MHD_YES;			/* refusal already queued */
	/* counted, so that a shutdown knows whether it would wait on someone */
	atomic_fetch_add(&vf->api_busy, 1);
	ret = answer(vf, c, method, u);
	vf_metrics_http(&vf->metrics, http_reply_take_status());
	atomic_fetch_sub(&vf->api_busy, 1);
	return ret;
}

/* MHD_OPTION_NOTIFY_CONNECTION: counted for /metrics, then the guard's */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct vf_api *api = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		atomic_fetch_add(&api->vf->metrics.api_accepted, 1);
		atomic_fetch_add(&api->vf->metrics.api_open, 1);
	} else {
		atomic_fetch_sub(&api->vf->metrics.api_open, 1);
	}
	http_guard_notify(api->guard, c, socket_context, code);
}

int vf_api_start(struct verifier *vf, const struct vf_api_opts *o, struct vf_api **ret)
{
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	struct vf_api *api = calloc(1, sizeof(*api));
	/*
	 * Four threads: a registration waiting on a slow agent does not hold up
	 * the API. Connections: --api-max-conn per client address,
	 * --api-connections in all; a request must arrive whole within
	 * --api-timeout of its request line (the guard's deadline), a
	 * kept-alive connection may wait --api-idle-timeout for its next one
	 * (the guard's allowance; MHD's inactivity timeout the larger of the
	 * two: one for every connection, so MHD keeps them on its sorted
	 * list, not on the one it walks whole on every event). A connection's pool
	 * (request and answer headers, the read buffer) is VF_API_CONN_POOL,
	 * touched whole after its first request (MHD zeroes it between
	 * requests), so every kept connection costs all of it: 16 KiB made an
	 * idle TLS connection 36.5 KiB of RSS, 8 KiB 28.9 KiB (300 idle,
	 * bench/api_idle_cost.py); a push's headers are under 1 KiB.
	 */
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)vg_privsep_key_cert },	/* keyproc.c */
		{ o->ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, (void *)o->ca_pem },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (!api)
		return -ENOMEM;
	api->vf = vf;
	api->guard = o->guard;
	if (o->cert_pem)
		flags |= MHD_USE_TLS;
	else
		tls[0].option = MHD_OPTION_END;
	api->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, vf, MHD_OPTION_SOCK_ADDR, o->sa,
				  MHD_OPTION_NOTIFY_COMPLETED, http_upload_end, NULL,
				  MHD_OPTION_URI_LOG_CALLBACK, http_upload_begin, NULL,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, api,
				  MHD_OPTION_THREAD_POOL_SIZE, 4u,
				  MHD_OPTION_CONNECTION_TIMEOUT,
				  o->idle_s > o->timeout_s ? o->idle_s : o->timeout_s,
				  MHD_OPTION_CONNECTION_LIMIT, o->connections,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_conn,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)VF_API_CONN_POOL,
				  MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!api->d) {
		free(api);
		return -EADDRNOTAVAIL;
	}
	*ret = api;
	return 0;
}

void vf_api_stop(struct vf_api *api)
{
	if (!api)
		return;
	MHD_stop_daemon(api->d);
	free(api);
}
