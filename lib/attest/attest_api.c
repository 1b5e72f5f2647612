// SPDX-License-Identifier: MIT
/*
 * attest_api.c - the REST messages between vigil-verifier, vigil-agent and
 * operators (attest_api.h): strict parsers of what a peer sends and the
 * builders of what we send, with no HTTP and no I/O, so that the daemons
 * stay thin and every byte a hostile peer controls is parsed in one place
 * that a fuzzer can reach.
 *
 * JSON goes through json-c with JSON_TOKENER_STRICT, one object per
 * buffer, at most VG_API_MSG_MAX bytes; base64 through vg_attest_b64_decode
 * into fixed-size fields (a value that does not fit is refused, never
 * truncated).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "internal.h"
#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/hash.h"

bool vg_api_id_ok(const char *s, size_t len)
{
	if (!s || len == 0 || len >= VG_API_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* ---- JSON ---- */

/* One JSON object filling @buf (trailing whitespace allowed). Return: 0, -EBADMSG, -ENOMEM. */
static int parse_object_max(const uint8_t *buf, size_t len, size_t max, const char *what,
			    json_object **ret, struct vg_diag *diag)
{
	json_tokener *tok;
	json_object *o;
	size_t end;

	if (!buf || len == 0)
		return vg_diag_set(diag, -EBADMSG, "%s: empty body (a JSON object is expected)", what);
	if (len > max || len > INT32_MAX)
		return vg_diag_set(diag, -EBADMSG, "%s: %zu bytes, more than %zu", what, len, max);
	tok = json_tokener_new();
	if (!tok)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!o) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		int r = vg_diag_set(diag, -EBADMSG, "%s: not valid JSON at byte %zu (%s)", what, end,
				    e == json_tokener_continue || e == json_tokener_success ?
				    "unexpected end" : json_tokener_error_desc(e));

		json_tokener_free(tok);
		return r;
	}
	json_tokener_free(tok);
	while (end < len && (buf[end] == ' ' || buf[end] == '\n' || buf[end] == '\r' ||
			     buf[end] == '\t'))
		end++;
	if (end < len) {
		json_object_put(o);
		return vg_diag_set(diag, -EBADMSG, "%s: %zu bytes after the JSON value", what, len - end);
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return vg_diag_set(diag, -EBADMSG, "%s: not a JSON object", what);
	}
	*ret = o;
	return 0;
}

static int parse_object(const uint8_t *buf, size_t len, const char *what, json_object **ret,
			struct vg_diag *diag)
{
	return parse_object_max(buf, len, VG_API_MSG_MAX, what, ret, diag);
}

/*
 * String member @key into @out (cap with the NUL). Return: its length;
 * -ENOENT missing (no diag), -EBADMSG wrong type, too long or with a NUL.
 */
static int get_str(json_object *o, const char *what, const char *key, char *out, size_t cap,
		   struct vg_diag *diag)
{
	json_object *v;
	const char *s;
	int n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	s = json_object_get_string(v);
	n = json_object_get_string_len(v);
	if (n < 0 || (size_t)n >= cap)
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" longer than %zu bytes", what, key,
				   cap - 1);
	if (memchr(s, 0, (size_t)n))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" contains a NUL", what, key);
	memcpy(out, s, (size_t)n);
	out[n] = 0;
	return n;
}

/* Base64 member @key into @out (at most @cap bytes). Return: length; -ENOENT, -EBADMSG, -ENOMEM. */
static long get_b64(json_object *o, const char *what, const char *key, uint8_t *out, size_t cap,
		    struct vg_diag *diag)
{
	json_object *v;
	uint8_t *raw = NULL;
	long n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	/* 4 characters per 3 bytes: anything longer cannot fit, do not decode it */
	if ((size_t)json_object_get_string_len(v) > 4 * ((cap + 2) / 3) + 64)
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" longer than %zu bytes", what, key, cap);
	n = vg_attest_b64_decode(json_object_get_string(v), &raw);
	if (n == -ENOMEM)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	if (n < 0) {
		free(raw);
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not base64", what, key);
	}
	if ((size_t)n > cap) {
		free(raw);
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is %ld bytes, more than %zu", what, key,
				   n, cap);
	}
	memcpy(out, raw, (size_t)n);
	free(raw);
	return n;
}

/* Add a base64 string member. Return: 0, -ENOMEM. */
static int add_b64(json_object *o, const char *key, const uint8_t *b, size_t n)
{
	char *s = NULL;
	json_object *v;

	if (vg_attest_b64_encode(b, n, &s) < 0)
		return -ENOMEM;
	v = json_object_new_string(s);
	free(s);
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_str(json_object *o, const char *key, const char *s)
{
	json_object *v = json_object_new_string(s);

	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* Serialise @o (consumed) into a malloc'd string. Return: length, -ENOMEM. */
static long finish(json_object *o, int r, char **ret)
{
	const char *s;
	long n = -ENOMEM;

	if (r == 0 && o) {
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
		if (s && (*ret = strdup(s)))
			n = (long)strlen(s);
	}
	json_object_put(o);
	return n;
}

/* ---- operator -> verifier ---- */

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

static bool url_ok(const char *u)
{
	const char *host;

	if (strncmp(u, "http://", 7) == 0)
		host = u + 7;
	else if (strncmp(u, "https://", 8) == 0)
		host = u + 8;
	else
		return false;
	if (!*host || *host == '/' || *host == ':')
		return false;
	for (const char *c = u; *c; c++)
		if (*c <= 0x20 || *c >= 0x7f || *c == '?' || *c == '#' || *c == '\\')
			return false;
	return true;
}

int vg_api_register_parse(const uint8_t *body, size_t len, struct vg_api_register *ret,
			  struct vg_diag *diag)
{
	static const char what[] = "register";
	struct vg_api_register a;
	json_object *o = NULL;
	int pr = parse_object(body, len, what, &o, diag);
	int r;

	if (pr < 0)
		return pr;
	memset(&a, 0, sizeof(a));
	/* absent or "": the verifier takes the id the agent's identity says */
	r = get_str(o, what, "id", a.id, sizeof(a.id), diag);
	if (r == -ENOENT)
		r = 0;
	if (r > 0 && !vg_api_id_ok(a.id, (size_t)r))
		r = vg_diag_set(diag, -EBADMSG, "register: id: 1 to %d characters of [A-Za-z0-9._-]",
				VG_API_ID_MAX - 1);
	if (r >= 0) {
		r = get_str(o, what, "url", a.url, sizeof(a.url), diag);
		if (r == -ENOENT)
			r = vg_diag_set(diag, -EBADMSG, "register: \"url\" is required");
		else if (r >= 0 && !url_ok(a.url))
			r = vg_diag_set(diag, -EBADMSG, "register: url: http://HOST[:PORT] or https://, "
					"printable, without spaces, query or fragment");
	}
	if (r >= 0) {
		r = get_str(o, what, "policy", a.policy, sizeof(a.policy), diag);
		if (r == -ENOENT)
			r = 0;
		else if (r > 0 && !vg_api_id_ok(a.policy, (size_t)r))
			r = vg_diag_set(diag, -EBADMSG, "register: policy: a name of [A-Za-z0-9._-]");
	}
	json_object_put(o);
	if (r < 0)
		return r;
	*ret = a;
	return 0;
}

int vg_api_policy_assign_parse(const uint8_t *body, size_t len, char name[VG_API_ID_MAX],
			       struct vg_diag *diag)
{
	char n[VG_API_ID_MAX];
	json_object *o = NULL;
	int pr = parse_object(body, len, "policy", &o, diag);
	int r;

	if (pr < 0)
		return pr;
	r = get_str(o, "policy", "policy", n, sizeof(n), diag);
	json_object_put(o);
	if (r == -ENOENT)
		return vg_diag_set(diag, -EBADMSG, "policy: \"policy\": a name is required");
	if (r < 0)
		return r;
	if (r > 0 && !vg_api_id_ok(n, (size_t)r))
		return vg_diag_set(diag, -EBADMSG, "policy: a name of [A-Za-z0-9._-]");
	memcpy(name, n, (size_t)r + 1);
	return 0;
}

/* ---- verifier -> agent ---- */

int vg_api_quote_query_parse(const char *nonce, const char *bank, const char *mask,
			     struct vg_api_quote_req *ret, struct vg_diag *diag)
{
	struct vg_api_quote_req q;
	size_t nl, ml;
	int b;

	if (!nonce || !bank || !mask)
		return vg_diag_set(diag, -EBADMSG, "quote: nonce, bank and mask are required");
	memset(&q, 0, sizeof(q));
	nl = strlen(nonce);
	if (nl % 2 || nl / 2 < VG_API_NONCE_MIN || nl / 2 > VG_ATTEST_NONCE_MAX)
		return vg_diag_set(diag, -EBADMSG, "quote: nonce must be %d to %d bytes in hex",
				   VG_API_NONCE_MIN, VG_ATTEST_NONCE_MAX);
	for (size_t i = 0; i < nl / 2; i++) {
		int hi = vg_hex_digit((unsigned char)nonce[2 * i]);
		int lo = vg_hex_digit((unsigned char)nonce[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return vg_diag_set(diag, -EBADMSG, "quote: nonce is not hex");
		q.nonce[i] = (uint8_t)(hi << 4 | lo);
	}
	q.nonce_len = nl / 2;
	b = vg_hash_by_name(bank);
	if (b < 0 || !vg_attest_tpm_alg((unsigned int)b))
		return vg_diag_set(diag, -EBADMSG, "quote: bank: sha1, sha256, sha384, sha512 or sm3-256");
	q.bank = (unsigned int)b;
	ml = strlen(mask);
	if (ml == 0 || ml > 6)
		return vg_diag_set(diag, -EBADMSG, "quote: mask: 1 to 6 hex digits (PCRs 0-23)");
	for (size_t i = 0; i < ml; i++) {
		int v = vg_hex_digit((unsigned char)mask[i]);

		if (v < 0)
			return vg_diag_set(diag, -EBADMSG, "quote: mask is not hex");
		q.mask = q.mask << 4 | (uint32_t)v;
	}
	if (!q.mask)
		return vg_diag_set(diag, -EBADMSG, "quote: mask selects no PCR");
	*ret = q;
	return 0;
}

int vg_api_quote_query_build(const struct vg_api_quote_req *q, char *buf, size_t cap)
{
	char hex[2 * VG_ATTEST_NONCE_MAX + 1];
	int n;

	if (q->nonce_len > VG_ATTEST_NONCE_MAX)
		return -ENOSPC;
	vg_hex_encode(q->nonce, q->nonce_len, hex);
	n = snprintf(buf, cap, "nonce=%s&bank=%s&mask=%" PRIx32, hex, vg_hash_name(q->bank),
		     q->mask);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

int vg_api_log_query_parse(const char *s, uint64_t *ret, struct vg_diag *diag)
{
	uint64_t v = 0;

	if (!s) {
		*ret = 0;
		return 0;
	}
	if (!*s)
		return vg_diag_set(diag, -EBADMSG, "log: offset is empty");
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return vg_diag_set(diag, -EBADMSG, "log: offset must be decimal digits");
		if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)(*c - '0')) / 10)
			return vg_diag_set(diag, -EBADMSG, "log: offset larger than 2^63-1");
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*ret = v;
	return 0;
}

int vg_api_activate_parse(const uint8_t *body, size_t len, struct vg_api_activate *ret,
			  struct vg_diag *diag)
{
	static const char what[] = "activate";
	json_object *o = NULL;
	int pr = parse_object(body, len, what, &o, diag);
	struct vg_api_activate a;
	long n;

	if (pr < 0)
		return pr;
	memset(&a, 0, sizeof(a));
	n = get_b64(o, what, "id_object", a.id_object, sizeof(a.id_object), diag);
	if (n == 0 || n == -ENOENT)
		n = vg_diag_set(diag, -EBADMSG, "activate: \"id_object\" (base64) is required");
	if (n > 0) {
		a.id_len = (size_t)n;
		n = get_b64(o, what, "enc_secret", a.enc_secret, sizeof(a.enc_secret), diag);
		if (n == 0 || n == -ENOENT)
			n = vg_diag_set(diag, -EBADMSG, "activate: \"enc_secret\" (base64) is required");
		a.es_len = n > 0 ? (size_t)n : 0;
	}
	json_object_put(o);
	if (n < 0)
		return (int)n;
	*ret = a;
	return 0;
}

long vg_api_activate_build(const struct vg_api_activate *a, char **ret)
{
	json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM;

	if (!r)
		r = add_b64(o, "id_object", a->id_object, a->id_len);
	if (!r)
		r = add_b64(o, "enc_secret", a->enc_secret, a->es_len);
	return finish(o, r, ret);
}

/* ---- agent -> verifier ---- */

int vg_api_identity_parse(const uint8_t *buf, size_t len, struct vg_api_identity *ret,
			  struct vg_diag *diag)
{
	static const char what[] = "identity";
	struct vg_api_identity *a = calloc(1, sizeof(*a));
	json_object *o = NULL;
	long n;
	int r;

	if (!a)
		return -ENOMEM;
	r = parse_object(buf, len, what, &o, diag);
	if (r < 0) {
		free(a);
		return r;
	}
	r = get_str(o, what, "id", a->id, sizeof(a->id), diag);
	if (r == -ENOENT)
		r = 0;
	if (r > 0 && !vg_api_id_ok(a->id, (size_t)r))
		r = vg_diag_set(diag, -EBADMSG, "identity: id: 1 to %d characters of [A-Za-z0-9._-]",
				VG_API_ID_MAX - 1);
	n = r < 0 ? r : get_b64(o, what, "ek_pub", a->ek_pub, sizeof(a->ek_pub), diag);
	if (n == 0 || n == -ENOENT)
		n = vg_diag_set(diag, -EBADMSG, "identity: \"ek_pub\" (base64) is required");
	if (n > 0) {
		a->ek_pub_len = (size_t)n;
		n = get_b64(o, what, "ek_cert", a->ek_cert, sizeof(a->ek_cert), diag);
		if (n == -ENOENT)
			n = 0;
	}
	if (n >= 0) {
		a->ek_cert_len = (size_t)n;
		n = get_b64(o, what, "ak_pub", a->ak_pub, sizeof(a->ak_pub), diag);
		if (n == 0 || n == -ENOENT)
			n = vg_diag_set(diag, -EBADMSG, "identity: \"ak_pub\" (base64) is required");
		a->ak_pub_len = n > 0 ? (size_t)n : 0;
	}
	json_object_put(o);
	if (n >= 0)
		*ret = *a;
	free(a);
	return n < 0 ? (int)n : 0;
}

long vg_api_identity_build(const struct vg_api_identity *id, char **ret)
{
	json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM;

	if (!r && id->id[0])
		r = add_str(o, "id", id->id);
	if (!r)
		r = add_b64(o, "ek_pub", id->ek_pub, id->ek_pub_len);
	if (!r)
		r = add_b64(o, "ek_cert", id->ek_cert, id->ek_cert_len);
	if (!r)
		r = add_b64(o, "ak_pub", id->ak_pub, id->ak_pub_len);
	return finish(o, r, ret);
}

int vg_api_proof_parse(const uint8_t *buf, size_t len, uint8_t proof[32], struct vg_diag *diag)
{
	char hex[2 * 32 + 1];
	json_object *o = NULL;
	int pr = parse_object(buf, len, "activate answer", &o, diag);
	int r;

	if (pr < 0)
		return pr;
	r = get_str(o, "activate answer", "proof", hex, sizeof(hex), diag);
	json_object_put(o);
	if (r == -ENOENT)
		return vg_diag_set(diag, -EBADMSG, "activate answer: no \"proof\"");
	if (r < 0)
		return r;
	if (r != 64 || vg_hex_decode(hex, proof, 32) != 32)
		return vg_diag_set(diag, -EBADMSG, "activate answer: proof is not 32 bytes of hex");
	return 0;
}

long vg_api_proof_build(const uint8_t proof[32], char **ret)
{
	json_object *o = json_object_new_object();
	char hex[2 * 32 + 1];
	int r = o ? 0 : -ENOMEM;

	vg_hex_encode(proof, 32, hex);
	if (!r)
		r = add_str(o, "proof", hex);
	return finish(o, r, ret);
}

/* "0".."23", no sign, no leading zero. Return: the PCR, -1. */
static int pcr_key(const char *k)
{
	if (k[0] < '0' || k[0] > '9')
		return -1;
	if (!k[1])
		return k[0] - '0';
	if (k[0] == '0' || k[1] < '0' || k[1] > '9' || k[2])
		return -1;
	int n = (k[0] - '0') * 10 + (k[1] - '0');

	return n < VG_PCR_COUNT ? n : -1;
}

int vg_api_quote_parse(const uint8_t *buf, size_t len, unsigned int bank, struct vg_api_quote *ret,
		       struct vg_diag *diag)
{
	static const char what[] = "quote answer";
	struct vg_api_quote *q;
	json_object *o = NULL, *pcrs;
	size_t hs = vg_hash_size(bank);
	char bn[32];
	long n;
	int r = 0;

	if (!hs || !vg_attest_tpm_alg(bank))
		return vg_diag_set(diag, -EINVAL, "quote answer: bank %u", bank);
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	r = parse_object(buf, len, what, &o, diag);
	if (r < 0) {
		free(q);
		return r;
	}
	q->bank = bank;
	n = get_b64(o, what, "attest", q->attest, sizeof(q->attest), diag);
	if (n == 0 || n == -ENOENT)
		n = vg_diag_set(diag, -EBADMSG, "quote answer: \"attest\" (base64) is required");
	if (n > 0) {
		q->attest_len = (size_t)n;
		n = get_b64(o, what, "sig", q->sig, sizeof(q->sig), diag);
		if (n == 0 || n == -ENOENT)
			n = vg_diag_set(diag, -EBADMSG, "quote answer: \"sig\" (base64) is required");
		q->sig_len = n > 0 ? (size_t)n : 0;
	}
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	r = get_str(o, what, "bank", bn, sizeof(bn), diag);
	if (r == -ENOENT)
		r = 0;
	else if (r >= 0 && vg_hash_by_name(bn) != (int)bank)
		r = vg_diag_set(diag, -EBADMSG, "quote answer: bank \"%s\", %s was asked for", bn,
				vg_hash_name(bank));
	if (r < 0)
		goto out;
	r = 0;
	if (!json_object_object_get_ex(o, "pcrs", &pcrs) || !json_object_is_type(pcrs, json_type_object)) {
		r = vg_diag_set(diag, -EBADMSG, "quote answer: \"pcrs\" (an object) is required");
		goto out;
	}
	json_object_object_foreach(pcrs, k, val) {
		int i = pcr_key(k);
		struct vg_digest *d;

		if (i < 0) {
			r = vg_diag_set(diag, -EBADMSG, "quote answer: PCR \"%.8s\" is not 0-23", k);
			goto out;
		}
		if (!json_object_is_type(val, json_type_string) ||
		    (size_t)json_object_get_string_len(val) != 2 * hs) {
			r = vg_diag_set(diag, -EBADMSG, "quote answer: PCR %d is not %zu bytes of hex", i,
					hs);
			goto out;
		}
		d = &q->pcr[i];
		if (vg_hex_decode(json_object_get_string(val), d->bytes, sizeof(d->bytes)) != (int)hs) {
			r = vg_diag_set(diag, -EBADMSG, "quote answer: PCR %d is not hex", i);
			goto out;
		}
		d->algo = (uint8_t)bank;
		d->len = (uint8_t)hs;
		q->have |= 1u << i;
	}
	*ret = *q;
out:
	json_object_put(o);
	free(q);
	return r < 0 ? r : 0;
}

long vg_api_quote_build(const struct vg_api_quote *q, char **ret)
{
	json_object *o = json_object_new_object(), *pcrs = json_object_new_object();
	int r = o && pcrs ? 0 : -ENOMEM;

	if (!r)
		r = add_b64(o, "attest", q->attest, q->attest_len);
	if (!r)
		r = add_b64(o, "sig", q->sig, q->sig_len);
	if (!r)
		r = add_str(o, "bank", vg_hash_name(q->bank));
	for (unsigned int i = 0; !r && i < VG_PCR_COUNT; i++) {
		char k[4], hex[2 * VG_HASH_MAX_DIGEST + 1];

		if (!(q->have & (1u << i)))
			continue;
		snprintf(k, sizeof(k), "%u", i);
		vg_hex_encode(q->pcr[i].bytes, q->pcr[i].len, hex);
		r = add_str(pcrs, k, hex);
	}
	if (!r) {
		if (json_object_object_add(o, "pcrs", pcrs) < 0)
			r = -ENOMEM;
		else
			pcrs = NULL;
	}
	json_object_put(pcrs);
	return finish(o, r, ret);
}

void vg_api_quote_pcrs(const struct vg_api_quote *q, struct vg_pcr_values *pv)
{
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		if (!(q->have & (1u << i)))
			continue;
		pv->v[q->bank][i] = q->pcr[i];
		pv->have[q->bank] |= 1u << i;
	}
}

/* ---- POST /v1/verify/evidence ---- */

/* A string member, copied whole (malloc'd, NUL-terminated). Return: length, -ENOENT, -EBADMSG, -ENOMEM. */
static long dup_str(json_object *o, const char *what, const char *key, char **ret,
		    struct vg_diag *diag)
{
	json_object *v;
	int n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (json_object_is_type(v, json_type_object)) {
		/* a document given as JSON rather than as a string of it */
		const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);

		*ret = t ? strdup(t) : NULL;
		return *ret ? (long)strlen(*ret) : vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	}
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	n = json_object_get_string_len(v);
	if (n <= 0)
		return -ENOENT;		/* "" is absent, as Keylime reads it */
	if (memchr(json_object_get_string(v), 0, (size_t)n))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" contains a NUL", what, key);
	*ret = malloc((size_t)n + 1);
	if (!*ret)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	memcpy(*ret, json_object_get_string(v), (size_t)n + 1);
	return n;
}

int vg_api_keylime_quote_parse(const char *s, struct vg_api_evidence *e, struct vg_diag *diag)
{
	static const char what[] = "Keylime quote";
	const char *c1, *c2;
	uint8_t *b[3] = { NULL };
	long n[3] = { 0 };
	int r = 0;

	if (s[0] != 'r' || !(c1 = strchr(s + 1, ':')) || !(c2 = strchr(c1 + 1, ':')) ||
	    strchr(c2 + 1, ':'))
		return vg_diag_set(diag, -EBADMSG, "%s: not 'r<base64>:<base64>:<base64>'", what);
	{
		char *part[3] = { strndup(s + 1, (size_t)(c1 - s - 1)),
				  strndup(c1 + 1, (size_t)(c2 - c1 - 1)), strdup(c2 + 1) };

		for (int i = 0; i < 3; i++) {
			n[i] = part[i] ? vg_attest_b64_decode(part[i], &b[i]) : -ENOMEM;
			free(part[i]);
			if (n[i] <= 0 && r == 0)
				r = n[i] == -ENOMEM ? -ENOMEM : -EBADMSG;
		}
	}
	if (r == -ENOMEM) {
		r = vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	} else if (r < 0) {
		r = vg_diag_set(diag, -EBADMSG, "%s: a part is not base64", what);
	} else if ((size_t)n[0] > sizeof(e->attest) || (size_t)n[1] > sizeof(e->sig)) {
		r = vg_diag_set(diag, -EBADMSG, "%s: attest or signature too large", what);
	} else {
		memcpy(e->attest, b[0], (size_t)n[0]);
		e->attest_len = (size_t)n[0];
		memcpy(e->sig, b[1], (size_t)n[1]);
		e->sig_len = (size_t)n[1];
		r = vg_attest_pcrs_tpm2tools(b[2], (size_t)n[2], &e->pcrs, diag);
		if (r < 0)
			r = vg_diag_set(diag, -EBADMSG, "%s: PCR values: %s", what,
					diag ? diag->msg : "malformed");
	}
	for (int i = 0; i < 3; i++)
		free(b[i]);
	return r;
}

/* Keylime's tpm_policy: {"mask": "0x..."} and nothing vigil would not enforce */
static int tpm_policy(const char *s, uint32_t *mask, struct vg_diag *diag)
{
	static const char what[] = "evidence: tpm_policy";
	json_object *o = NULL;
	int r = parse_object((const uint8_t *)s, strlen(s), what, &o, diag);

	if (r < 0)
		return r;
	json_object_object_foreach(o, k, v) {
		const char *m;
		char *end;
		unsigned long x;

		if (strcmp(k, "mask") != 0) {
			r = vg_diag_set(diag, -EBADMSG, "%s: PCR %s: pinned PCR values are not judged "
					"here (pin boot PCRs in the runtime policy's \"boot_pcrs\")",
					what, k);
			break;
		}
		m = json_object_get_string(v);
		if (!json_object_is_type(v, json_type_string) || strncmp(m, "0x", 2) != 0 ||
		    !m[2] || strlen(m) > 8) {
			r = vg_diag_set(diag, -EBADMSG, "%s: mask is \"0x\" and hex", what);
			break;
		}
		x = strtoul(m + 2, &end, 16);
		if (*end || x == 0 || x >= (1ul << 24)) {
			r = vg_diag_set(diag, -EBADMSG, "%s: mask is not PCRs 0-23", what);
			break;
		}
		*mask = (uint32_t)x;
	}
	json_object_put(o);
	return r;
}

int vg_api_evidence_parse(const uint8_t *body, size_t len, struct vg_api_evidence *e,
			  struct vg_diag *diag)
{
	static const char what[] = "evidence";
	json_object *o = NULL, *data, *q;
	char type[16], hash[32], *s = NULL;
	long n;
	int r, bank;

	memset(e, 0, sizeof(*e));
	r = parse_object_max(body, len, VG_API_EVIDENCE_MAX, what, &o, diag);
	if (r < 0)
		return r;
	r = get_str(o, what, "type", type, sizeof(type), diag);
	if (r == -ENOENT || (r >= 0 && strcmp(type, "tpm") != 0)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: \"type\" must be \"tpm\"");
		goto out;
	}
	if (r < 0)
		goto out;
	if (!json_object_object_get_ex(o, "data", &data) ||
	    !json_object_is_type(data, json_type_object)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: \"data\" (an object) is required");
		goto out;
	}
	/* vigil's own: the verdict as a signed EAR, with the caller's nonce */
	if (json_object_object_get_ex(o, "ear", &q)) {
		if (!json_object_is_type(q, json_type_boolean)) {
			r = vg_diag_set(diag, -EBADMSG, "evidence: \"ear\" is not a boolean");
			goto out;
		}
		e->ear = json_object_get_boolean(q);
	}
	r = get_str(o, what, "eat_nonce", e->eat_nonce, sizeof(e->eat_nonce), diag);
	if (r >= 0 && !vg_ear_nonce_ok(e->eat_nonce))
		r = vg_diag_set(diag, -EBADMSG, "evidence: \"eat_nonce\" must be %d to %d characters "
				"of [A-Za-z0-9._~-]", VG_EAR_NONCE_MIN, VG_EAR_NONCE_MAX);
	if (r == -ENOENT)
		e->eat_nonce[0] = 0;
	else if (r < 0)
		goto out;
	/* hash_alg: the bank of the quote's PCRs */
	r = get_str(data, what, "hash_alg", hash, sizeof(hash), diag);
	if (r == -ENOENT)
		r = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"hash_alg\"");
	if (r < 0)
		goto out;
	bank = vg_hash_by_name(hash);
	if (bank < 0 || !vg_attest_tpm_alg((unsigned int)bank)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: hash_alg \"%s\" is not a TPM bank", hash);
		goto out;
	}
	e->bank = (unsigned int)bank;
	/* the AK: TPM2B_PUBLIC */
	n = get_b64(data, what, "tpm_ak", e->ak, sizeof(e->ak), diag);
	if (n == -ENOENT || n == 0)
		n = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"tpm_ak\"");
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	e->ak_len = (size_t)n;
	/* the nonce: its bytes are the quote's extraData (Keylime); or nonce_hex */
	if (json_object_object_get_ex(data, "nonce_hex", &q)) {
		const char *h = json_object_get_string(q);
		int k = json_object_is_type(q, json_type_string) ?
			vg_hex_decode(h, e->nonce, sizeof(e->nonce)) : -1;

		if (k <= 0) {
			r = vg_diag_set(diag, -EBADMSG, "evidence: nonce_hex is not hex of 1-%d bytes",
					VG_ATTEST_NONCE_MAX);
			goto out;
		}
		e->nonce_len = (size_t)k;
	} else {
		char nt[VG_ATTEST_NONCE_MAX + 1];

		r = get_str(data, what, "nonce", nt, sizeof(nt), diag);
		if (r == -ENOENT || r == 0)
			r = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"nonce\"");
		if (r < 0)
			goto out;
		memcpy(e->nonce, nt, (size_t)r);
		e->nonce_len = (size_t)r;
	}
	/* the quote: Keylime's string, or the object vigil-agent answers */
	if (!json_object_object_get_ex(data, "quote", &q)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"quote\"");
		goto out;
	}
	if (json_object_is_type(q, json_type_string)) {
		r = vg_api_keylime_quote_parse(json_object_get_string(q), e, diag);
	} else if (json_object_is_type(q, json_type_object)) {
		const char *t = json_object_to_json_string_ext(q, JSON_C_TO_STRING_PLAIN);
		struct vg_api_quote *vq = calloc(1, sizeof(*vq));

		r = vq && t ? vg_api_quote_parse((const uint8_t *)t, strlen(t), e->bank, vq, diag) :
			      vg_diag_set(diag, -ENOMEM, "evidence: out of memory");
		if (r == 0) {
			memcpy(e->attest, vq->attest, vq->attest_len);
			e->attest_len = vq->attest_len;
			memcpy(e->sig, vq->sig, vq->sig_len);
			e->sig_len = vq->sig_len;
			vg_api_quote_pcrs(vq, &e->pcrs);
		}
		free(vq);
	} else {
		r = vg_diag_set(diag, -EBADMSG, "evidence: quote is a string or an object");
	}
	if (r < 0)
		goto out;
	/* what was asked for */
	n = dup_str(data, what, "tpm_policy", &s, diag);
	if (n > 0) {
		r = tpm_policy(s, &e->mask, diag);
		free(s);
		s = NULL;
		if (r < 0)
			goto out;
	} else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	n = dup_str(data, what, "mb_policy", &s, diag);
	free(s);
	s = NULL;
	if (n > 0) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: mb_policy: measured-boot event policies are "
				"not judged here (pin boot PCRs in the runtime policy's \"boot_pcrs\")");
		goto out;
	}
	/* the policy: a document, or the name of one the verifier holds */
	n = dup_str(data, what, "runtime_policy", &e->policy, diag);
	if (n > 0)
		e->policy_len = (size_t)n;
	else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	r = get_str(data, what, "runtime_policy_name", e->policy_name, sizeof(e->policy_name), diag);
	if (r >= 0 && !vg_api_id_ok(e->policy_name, (size_t)r))
		r = vg_diag_set(diag, -EBADMSG, "evidence: runtime_policy_name is not a policy name");
	if (r < 0 && r != -ENOENT)
		goto out;
	if (!e->policy == !e->policy_name[0]) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: give one of runtime_policy and "
				"runtime_policy_name");
		goto out;
	}
	n = dup_str(data, what, "ima_measurement_list", &e->log, diag);
	if (n > 0)
		e->log_len = (size_t)n;
	else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	n = dup_str(data, what, "mb_log", &s, diag);
	if (n > 0) {
		n = vg_attest_b64_decode(s, &e->mb_log);
		if (n <= 0) {
			r = vg_diag_set(diag, n == -ENOMEM ? -ENOMEM : -EBADMSG,
					"evidence: mb_log is not base64");
			goto out;
		}
		e->mb_len = (size_t)n;
	} else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	r = 0;
out:
	free(s);
	json_object_put(o);
	if (r < 0)
		vg_api_evidence_release(e);
	return r;
}

void vg_api_evidence_release(struct vg_api_evidence *e)
{
	if (!e)
		return;
	free(e->policy);
	free(e->log);
	free(e->mb_log);
	e->policy = e->log = NULL;
	e->mb_log = NULL;
	e->policy_len = e->log_len = e->mb_len = 0;
}


/* ---- push mode ---- */

/* A boolean member. Return: 0/1, -ENOENT, -EBADMSG. */
static int get_bool(json_object *o, const char *what, const char *key, struct vg_diag *diag)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_boolean))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not true or false", what, key);
	return json_object_get_boolean(v) ? 1 : 0;
}

/* "log_offset": decimal digits in a string (64 bits do not fit a JSON number everywhere). */
static int get_offset(json_object *o, const char *what, uint64_t *ret, struct vg_diag *diag)
{
	char s[24];
	int r = get_str(o, what, "log_offset", s, sizeof(s), diag);

	if (r == -ENOENT)
		return vg_diag_set(diag, -EBADMSG, "%s: no \"log_offset\"", what);
	if (r < 0)
		return r;
	if (vg_api_log_query_parse(s, ret, NULL) < 0)
		return vg_diag_set(diag, -EBADMSG, "%s: \"log_offset\" is not a decimal offset "
				   "below 2^63", what);
	return 0;
}

int vg_api_challenge_parse(const uint8_t *buf, size_t len, struct vg_api_challenge *ret,
			   struct vg_diag *diag)
{
	static const char what[] = "challenge";
	char nonce[2 * VG_ATTEST_NONCE_MAX + 1], bank[16], mask[8];
	struct vg_api_challenge c = { 0 };
	json_object *o = NULL, *iv;
	struct vg_diag qd = { 0 };
	int r = parse_object(buf, len, what, &o, diag);

	if (r < 0)
		return r;
	if ((r = get_str(o, what, "nonce", nonce, sizeof(nonce), diag)) == -ENOENT ||
	    (r >= 0 && (r = get_str(o, what, "bank", bank, sizeof(bank), diag)) == -ENOENT) ||
	    (r >= 0 && (r = get_str(o, what, "mask", mask, sizeof(mask), diag)) == -ENOENT)) {
		r = vg_diag_set(diag, -EBADMSG, "%s: nonce, bank and mask are required", what);
		goto out;
	}
	if (r < 0)
		goto out;
	if (vg_api_quote_query_parse(nonce, bank, mask, &c.q, &qd) < 0) {
		r = vg_diag_set(diag, -EBADMSG, "%s: %s", what, qd.msg);
		goto out;
	}
	r = get_offset(o, what, &c.log_offset, diag);
	if (r < 0)
		goto out;
	r = get_bool(o, what, "boot_log", diag);
	if (r == -EBADMSG)
		goto out;
	c.boot_log = r == 1;
	if (json_object_object_get_ex(o, "interval_ms", &iv)) {
		int64_t ms = json_object_get_int64(iv);

		if (!json_object_is_type(iv, json_type_int) || ms < 0 || ms > INT32_MAX) {
			r = vg_diag_set(diag, -EBADMSG, "%s: \"interval_ms\" is not a number of ms",
					what);
			goto out;
		}
		c.interval_ms = (uint32_t)ms;
	}
	*ret = c;
	r = 0;
out:
	json_object_put(o);
	return r;
}

long vg_api_challenge_build(const struct vg_api_challenge *c, char **ret)
{
	json_object *o = json_object_new_object();
	char hex[2 * VG_ATTEST_NONCE_MAX + 1], mask[16], off[24];
	int r = o ? 0 : -ENOMEM;

	if (c->q.nonce_len > VG_ATTEST_NONCE_MAX) {
		json_object_put(o);
		return -ENOSPC;
	}
	vg_hex_encode(c->q.nonce, c->q.nonce_len, hex);
	snprintf(mask, sizeof(mask), "%" PRIx32, c->q.mask);
	snprintf(off, sizeof(off), "%" PRIu64, c->log_offset);
	if (!r)
		r = add_str(o, "nonce", hex);
	if (!r)
		r = add_str(o, "bank", vg_hash_name(c->q.bank));
	if (!r)
		r = add_str(o, "mask", mask);
	if (!r)
		r = add_str(o, "log_offset", off);
	if (!r && json_object_object_add(o, "boot_log", json_object_new_boolean(c->boot_log)) < 0)
		r = -ENOMEM;
	if (!r && json_object_object_add(o, "interval_ms",
					 json_object_new_int64(c->interval_ms)) < 0)
		r = -ENOMEM;
	return finish(o, r, ret);
}

/* Base64 member @key, any size (the body's bound holds it). Return: 0, -ENOENT, -EBADMSG, -ENOMEM. */
static int get_b64_dup(json_object *o, const char *what, const char *key, uint8_t **ret,
		       size_t *len, struct vg_diag *diag)
{
	json_object *v;
	uint8_t *raw = NULL;
	long n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	if (json_object_get_string_len(v) == 0) {
		*ret = NULL;
		*len = 0;
		return 0;
	}
	n = vg_attest_b64_decode(json_object_get_string(v), &raw);
	if (n == -ENOMEM)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	if (n < 0) {
		free(raw);
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not base64", what, key);
	}
	*ret = raw;
	*len = (size_t)n;
	return 0;
}

int vg_api_push_parse(const uint8_t *buf, size_t len, size_t max, struct vg_api_push *ret,
		      struct vg_diag *diag)
{
	static const char what[] = "evidence";
	char nonce[2 * VG_ATTEST_NONCE_MAX + 1];
	struct vg_api_push p = { 0 };
	json_object *o = NULL;
	long ql;
	int r = parse_object_max(buf, len, max, what, &o, diag), n;

	if (r < 0)
		return r;
	n = get_str(o, what, "nonce", nonce, sizeof(nonce), diag);
	if (n == -ENOENT) {
		r = vg_diag_set(diag, -EBADMSG, "%s: no \"nonce\"", what);
		goto fail;
	}
	if (n < 0 || n % 2 || n / 2 < VG_API_NONCE_MIN ||
	    vg_hex_decode(nonce, p.nonce, (size_t)n / 2) != n / 2) {
		r = n < 0 ? n : vg_diag_set(diag, -EBADMSG, "%s: nonce must be %d to %d bytes in hex",
					    what, VG_API_NONCE_MIN, VG_ATTEST_NONCE_MAX);
		goto fail;
	}
	p.nonce_len = (size_t)n / 2;
	ql = dup_str(o, what, "quote", &p.quote, diag);
	if (ql == -ENOENT) {
		r = vg_diag_set(diag, -EBADMSG, "%s: no \"quote\"", what);
		goto fail;
	}
	if (ql < 0) {
		r = (int)ql;
		goto fail;
	}
	p.quote_len = (size_t)ql;
	r = get_offset(o, what, &p.log_offset, diag);
	if (r < 0)
		goto fail;
	r = get_b64_dup(o, what, "log", &p.log, &p.log_len, diag);
	if (r < 0 && r != -ENOENT)
		goto fail;
	p.have_log = r == 0;
	r = get_b64_dup(o, what, "boot_log", &p.boot_log, &p.boot_len, diag);
	if (r < 0 && r != -ENOENT)
		goto fail;
	p.have_boot = r == 0;
	json_object_put(o);
	*ret = p;
	return 0;
fail:
	json_object_put(o);
	vg_api_push_release(&p);
	return r;
}

long vg_api_push_build(const struct vg_api_push *p, char **ret)
{
	json_object *o = json_object_new_object();
	char hex[2 * VG_ATTEST_NONCE_MAX + 1], off[24];
	int r = o ? 0 : -ENOMEM;

	if (p->nonce_len > VG_ATTEST_NONCE_MAX) {
		json_object_put(o);
		return -ENOSPC;
	}
	vg_hex_encode(p->nonce, p->nonce_len, hex);
	snprintf(off, sizeof(off), "%" PRIu64, p->log_offset);
	if (!r)
		r = add_str(o, "nonce", hex);
	if (!r)
		r = add_str(o, "quote", p->quote ? p->quote : "");
	if (!r)
		r = add_str(o, "log_offset", off);
	if (!r && p->have_log)
		r = add_b64(o, "log", p->log, p->log_len);
	if (!r && p->have_boot)
		r = add_b64(o, "boot_log", p->boot_log, p->boot_len);
	return finish(o, r, ret);
}

void vg_api_push_release(struct vg_api_push *p)
{
	if (!p)
		return;
	free(p->quote);
	free(p->log);
	free(p->boot_log);
	p->quote = NULL;
	p->log = p->boot_log = NULL;
}
