// SPDX-License-Identifier: MIT
/*
 * attest_api_routes.c - the verifier's API routes (attest_api.h): the table
 * of every route with its methods and the role it needs (vg_api_routes,
 * described in docs/openapi.json), a request path decoded strictly
 * (vg_api_path_decode) and matched to one (vg_api_route), the ids in it
 * checked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "internal.h"
#include "attest_api_json.h"
#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/hash.h"

static int id_or_400(const char *s, size_t n, const char *what, char *out, struct vg_diag *diag)
{
	if (!vg_api_id_ok(s, n))
		return vg_diag_set(diag, -EBADMSG, "%s: 1 to %d characters of [A-Za-z0-9._-]", what,
				   VG_API_ID_MAX - 1);
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

int vg_api_path_decode(const char *uri, char *out, size_t cap, struct vg_diag *diag)
{
	size_t n = 0;

	if (!uri || !cap)
		return vg_diag_set(diag, -EBADMSG, "no request path");
	for (size_t i = 0; uri[i] && uri[i] != '?' && uri[i] != '#'; i++) {
		unsigned char c = (unsigned char)uri[i];

		if (c == '%') {
			int hi = vg_hex_digit((unsigned char)uri[i + 1]);
			int lo = hi < 0 ? -1 : vg_hex_digit((unsigned char)uri[i + 2]);

			if (hi < 0 || lo < 0)
				return vg_diag_set(diag, -EBADMSG, "path: '%%' at byte %zu is not "
						   "followed by two hex digits", i);
			c = (unsigned char)(hi << 4 | lo);
			if (c < 0x20 || c == 0x7f)
				return vg_diag_set(diag, -EBADMSG, "path: %%%02X at byte %zu decodes "
						   "to a control character", c, i);
			if (c == '/')
				return vg_diag_set(diag, -EBADMSG, "path: an encoded '/' at byte %zu",
						   i);
			i += 2;
		} else if (c < 0x20 || c == 0x7f) {
			return vg_diag_set(diag, -EBADMSG, "path: a control character at byte %zu", i);
		}
		if (n + 1 >= cap)
			return vg_diag_set(diag, -ENAMETOOLONG, "path: longer than %zu bytes", cap - 1);
		out[n++] = (char)c;
	}
	out[n] = 0;
	return (int)n;
}

/*
 * Every route, and who may call it (docs/api-auth.md, docs/openapi.json):
 * reading needs read, and so does judging evidence (POST
 * /v1/verify/evidence changes nothing); changing state needs admin; the
 * page's static files need nothing (they hold no data: every request of
 * its script carries the operator's credential).
 */
static const struct vg_api_route_def routes[] = {
	{ "GET", "/v1/agents", VG_API_AGENTS, VG_AUTH_READ },
	{ "POST", "/v1/agents", VG_API_AGENTS, VG_AUTH_ADMIN },
	{ "GET", "/v1/agents/{id}", VG_API_AGENT, VG_AUTH_READ },
	{ "DELETE", "/v1/agents/{id}", VG_API_AGENT, VG_AUTH_ADMIN },
	{ "GET", "/v1/agents/{id}/history", VG_API_AGENT_HISTORY, VG_AUTH_READ },
	{ "GET", "/v1/agents/{id}/ear", VG_API_AGENT_EAR, VG_AUTH_READ },
	{ "POST", "/v1/agents/{id}/reactivate", VG_API_AGENT_REACTIVATE, VG_AUTH_ADMIN },
	{ "PUT", "/v1/agents/{id}/policy", VG_API_AGENT_POLICY, VG_AUTH_ADMIN },
	{ "GET", "/v1/policies/{name}", VG_API_POLICY, VG_AUTH_READ },
	{ "PUT", "/v1/policies/{name}", VG_API_POLICY, VG_AUTH_ADMIN },
	{ "POST", "/v1/verify/evidence", VG_API_VERIFY_EVIDENCE, VG_AUTH_READ },
	{ "GET", "/v1/verifiers", VG_API_VERIFIERS, VG_AUTH_READ },
	{ "GET", "/metrics", VG_API_METRICS, VG_AUTH_READ },
	{ "GET", "/ui/", VG_API_UI_PAGE, 0 },
	{ "GET", "/ui/app.js", VG_API_UI_SCRIPT, 0 },
	{ "GET", "/ui/app.css", VG_API_UI_STYLE, 0 },
	{ "POST", "/v1/push/{id}/register", VG_API_PUSH_REGISTER, VG_AUTH_AGENT },
	{ "POST", "/v1/push/{id}/activate", VG_API_PUSH_ACTIVATE, VG_AUTH_AGENT },
	{ "POST", "/v1/push/{id}/nonce", VG_API_PUSH_NONCE, VG_AUTH_AGENT },
	{ "POST", "/v1/push/{id}/evidence", VG_API_PUSH_EVIDENCE, VG_AUTH_AGENT },
};

const struct vg_api_route_def *vg_api_routes(size_t *n)
{
	*n = sizeof(routes) / sizeof(routes[0]);
	return routes;
}

/*
 * @rt->ep found from the path: its role for @method from the table, or
 * -EOPNOTSUPP naming the methods listed for it ("GET or POST").
 */
static int route_method(const char *method, struct vg_api_route *rt, struct vg_diag *diag)
{
	char allowed[64] = "";
	size_t n = 0;

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (routes[i].ep != rt->ep)
			continue;
		if (strcmp(routes[i].method, method) == 0) {
			rt->role = routes[i].role;
			return 0;
		}
		n += (size_t)snprintf(allowed + n, n < sizeof(allowed) ? sizeof(allowed) - n : 0,
				      "%s%s", n ? " or " : "", routes[i].method);
	}
	if (!n) {
		/* found by the path, absent from the table: not served */
		memset(rt, 0, sizeof(*rt));
		return -ENOENT;
	}
	return vg_diag_set(diag, -EOPNOTSUPP, "%s", allowed);
}

int vg_api_route(const char *method, const char *url, struct vg_api_route *rt,
		 struct vg_diag *diag)
{
	static const struct {
		const char *path;
		enum vg_api_endpoint ep;
	} fixed[] = {
		{ "/v1/agents", VG_API_AGENTS },
		{ "/v1/agents/", VG_API_AGENTS },
		{ "/v1/verify/evidence", VG_API_VERIFY_EVIDENCE },
		{ "/v1/verifiers", VG_API_VERIFIERS },
		{ "/metrics", VG_API_METRICS },
		{ "/ui/", VG_API_UI_PAGE },
		{ "/ui/app.js", VG_API_UI_SCRIPT },
		{ "/ui/app.css", VG_API_UI_STYLE },
	};
	const char *rest, *slash, *sub;
	size_t il;
	int r;

	memset(rt, 0, sizeof(*rt));
	if (!method || !url)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (strcmp(url, fixed[i].path) == 0) {
			rt->ep = fixed[i].ep;
			return route_method(method, rt, diag);
		}
	}
	if (strncmp(url, "/v1/policies/", 13) == 0) {
		rest = url + 13;
		r = id_or_400(rest, strlen(rest), "policy name", rt->id, diag);
		if (r < 0)
			return r;
		rt->ep = VG_API_POLICY;
		return route_method(method, rt, diag);
	}
	if (strncmp(url, "/v1/push/", 9) == 0) {
		static const struct { const char *sub; enum vg_api_endpoint ep; } push[] = {
			{ "register", VG_API_PUSH_REGISTER }, { "activate", VG_API_PUSH_ACTIVATE },
			{ "nonce", VG_API_PUSH_NONCE }, { "evidence", VG_API_PUSH_EVIDENCE },
		};

		rest = url + 9;
		slash = strchr(rest, '/');
		if (!slash)
			return -ENOENT;
		r = id_or_400(rest, (size_t)(slash - rest), "agent id", rt->id, diag);
		if (r < 0)
			return r;
		for (size_t i = 0; i < sizeof(push) / sizeof(push[0]); i++)
			if (strcmp(slash + 1, push[i].sub) == 0) {
				rt->ep = push[i].ep;
				return route_method(method, rt, diag);
			}
		memset(rt, 0, sizeof(*rt));
		return -ENOENT;
	}
	if (strncmp(url, "/v1/agents/", 11) != 0)
		return -ENOENT;
	rest = url + 11;
	slash = strchr(rest, '/');
	il = slash ? (size_t)(slash - rest) : strlen(rest);
	sub = slash ? slash + 1 : "";
	r = id_or_400(rest, il, "agent id", rt->id, diag);
	if (r < 0)
		return r;
	if (!slash) {
		rt->ep = VG_API_AGENT;
	} else if (strcmp(sub, "history") == 0) {
		rt->ep = VG_API_AGENT_HISTORY;
	} else if (strcmp(sub, "ear") == 0) {
		rt->ep = VG_API_AGENT_EAR;
	} else if (strcmp(sub, "reactivate") == 0) {
		rt->ep = VG_API_AGENT_REACTIVATE;
	} else if (strcmp(sub, "policy") == 0) {
		rt->ep = VG_API_AGENT_POLICY;
	} else {
		memset(rt, 0, sizeof(*rt));
		return -ENOENT;
	}
	return route_method(method, rt, diag);
}
