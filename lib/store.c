// SPDX-License-Identifier: MIT
/*
 * store.c - the backend-neutral half of store.h: vg_store_open() choosing
 * a backend by URL, the wrappers over the ops, and what both backends
 * share (store_internal.h): the column lists, the encoding of agents and
 * verdicts to row values and back (failure types are stored as their
 * stable ids, "policy.digest", not as numbers, so history survives enum
 * changes), and the scrubbing of passwords out of store URLs.
 *
 * Moved here from store_sqlite.c: vg_agent_state_name, vg_store_open,
 * vg_store_close and the vg_store_* wrappers, the agent column list, and
 * the row decoding that was row_agent()/text()/blob() there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "internal.h"

static const char *const state_names[] = { "registered", "trusted", "failed", "unreachable" };

const char *vg_agent_state_name(unsigned int s)
{
	return s < VG_ARRAY_SIZE(state_names) ? state_names[s] : NULL;
}

const struct store_col store_agent_cols[STORE_AGENT_NCOLS] = {
	{ "id", STORE_TEXT },		{ "url", STORE_TEXT },
	{ "policy", STORE_TEXT },	{ "ek_pub", STORE_BLOB },
	{ "ek_cert", STORE_BLOB },	{ "ak_pub", STORE_BLOB },
	{ "state", STORE_INT },		{ "bank", STORE_INT },
	{ "mask", STORE_INT },		{ "clock_valid", STORE_INT },
	{ "clock", STORE_INT },		{ "reset_count", STORE_INT },
	{ "restart_count", STORE_INT },	{ "log_entries", STORE_INT },
	{ "log_offset", STORE_INT },	{ "log_pcr_algo", STORE_INT },
	{ "log_pcr", STORE_BLOB },	{ "log_lag", STORE_INT },
	{ "rounds", STORE_INT },	{ "reboots", STORE_INT },
	{ "comm_errors", STORE_INT },	{ "registered_at", STORE_INT },
	{ "last_ok", STORE_INT },	{ "last_seen", STORE_INT },
	{ "last_fail", STORE_TEXT },	{ "last_msg", STORE_TEXT },
};

/* policy, ak_pub, state, clock_valid .. log_lag, rounds */
const int store_agent_guard[STORE_GUARD_NCOLS] = { 2, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 };

const struct store_col store_verdict_cols[STORE_VERDICT_NCOLS] = {
	{ "time", STORE_INT },	{ "fail", STORE_TEXT },	 { "entry", STORE_INT },
	{ "path", STORE_TEXT },	{ "digest", STORE_TEXT }, { "msg", STORE_TEXT },
};

const char *store_fail_id(unsigned int f)
{
	const char *id = vg_attest_fail_id(f);

	return id ? id : "ok";
}

unsigned int store_fail_parse(const void *p, size_t len)
{
	char id[64];
	int f;

	if (len >= sizeof(id))
		return VG_AF_NONE;
	memcpy(id, p, len);
	id[len] = 0;
	f = vg_attest_fail_by_id(id);
	return f < 0 ? VG_AF_NONE : (unsigned int)f;
}

static void enc_text(struct store_val *v, const char *s, size_t cap)
{
	v->p = s;
	v->len = strnlen(s, cap);
}

static void enc_blob(struct store_val *v, const void *p, size_t len)
{
	v->p = p;
	v->len = len;
}

void store_agent_encode(const struct vg_store_agent *a, struct store_val v[STORE_AGENT_NCOLS])
{
	int i = 0;

	memset(v, 0, STORE_AGENT_NCOLS * sizeof(*v));
	enc_text(&v[i++], a->id, sizeof(a->id));
	enc_text(&v[i++], a->url, sizeof(a->url));
	enc_text(&v[i++], a->policy, sizeof(a->policy));
	enc_blob(&v[i++], a->ek_pub, a->ek_pub_len);
	enc_blob(&v[i++], a->ek_cert, a->ek_cert_len);
	enc_blob(&v[i++], a->ak_pub, a->ak_pub_len);
	v[i++].i = a->state;
	v[i++].i = a->bank;
	v[i++].i = a->mask;
	v[i++].i = a->st.clock.valid;
	v[i++].i = (int64_t)a->st.clock.clock;
	v[i++].i = a->st.clock.reset_count;
	v[i++].i = a->st.clock.restart_count;
	v[i++].i = (int64_t)a->st.log.entries;
	v[i++].i = (int64_t)a->st.log.offset;
	v[i++].i = a->st.log.pcr.algo;
	enc_blob(&v[i++], a->st.log.pcr.bytes, a->st.log.pcr.len);
	v[i++].i = (int64_t)a->st.log.lag;
	v[i++].i = (int64_t)a->rounds;
	v[i++].i = (int64_t)a->reboots;
	v[i++].i = a->comm_errors;
	v[i++].i = a->registered_at;
	v[i++].i = a->last_ok;
	v[i++].i = a->last_seen;
	enc_text(&v[i++], store_fail_id(a->last_fail), 64);
	enc_text(&v[i++], a->last_msg, sizeof(a->last_msg));
}

/* up to the first NUL, truncated to @cap - 1: what snprintf("%s") did */
static void dec_text(const struct store_val *v, char *out, size_t cap)
{
	size_t n = v->p ? strnlen(v->p, v->len) : 0;

	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(out, v->p, n);
	out[n] = 0;
}

static int dec_blob(const struct store_val *v, uint8_t *out, size_t cap, size_t *len)
{
	if (v->len > cap)
		return -EBADMSG;
	if (v->len)
		memcpy(out, v->p, v->len);
	*len = v->len;
	return 0;
}

int store_agent_decode(const struct store_val v[STORE_AGENT_NCOLS], struct vg_store_agent *a)
{
	int i = 0;
	size_t pl;

	memset(a, 0, sizeof(*a));
	dec_text(&v[i++], a->id, sizeof(a->id));
	dec_text(&v[i++], a->url, sizeof(a->url));
	dec_text(&v[i++], a->policy, sizeof(a->policy));
	if (dec_blob(&v[i++], a->ek_pub, sizeof(a->ek_pub), &a->ek_pub_len) < 0 ||
	    dec_blob(&v[i++], a->ek_cert, sizeof(a->ek_cert), &a->ek_cert_len) < 0 ||
	    dec_blob(&v[i++], a->ak_pub, sizeof(a->ak_pub), &a->ak_pub_len) < 0)
		return -EBADMSG;
	a->state = (unsigned int)v[i++].i;
	a->bank = (unsigned int)v[i++].i;
	a->mask = (uint32_t)v[i++].i;
	a->st.clock.valid = v[i++].i != 0;
	a->st.clock.clock = (uint64_t)v[i++].i;
	a->st.clock.reset_count = (uint32_t)v[i++].i;
	a->st.clock.restart_count = (uint32_t)v[i++].i;
	a->st.log.entries = (uint64_t)v[i++].i;
	a->st.log.offset = (uint64_t)v[i++].i;
	a->st.log.pcr.algo = (uint8_t)v[i++].i;
	if (dec_blob(&v[i++], a->st.log.pcr.bytes, sizeof(a->st.log.pcr.bytes), &pl) < 0 ||
	    pl != vg_hash_size(a->st.log.pcr.algo))
		return -EBADMSG;
	a->st.log.pcr.len = (uint8_t)pl;
	a->st.log.lag = (uint64_t)v[i++].i;
	a->rounds = (uint64_t)v[i++].i;
	a->reboots = (uint64_t)v[i++].i;
	a->comm_errors = (uint32_t)v[i++].i;
	a->registered_at = v[i++].i;
	a->last_ok = v[i++].i;
	a->last_seen = v[i++].i;
	a->last_fail = store_fail_parse(v[i].p, v[i].len);
	i++;
	dec_text(&v[i++], a->last_msg, sizeof(a->last_msg));
	return 0;
}

void store_verdict_encode(const struct vg_store_verdict *v, struct store_val out[STORE_VERDICT_NCOLS])
{
	memset(out, 0, STORE_VERDICT_NCOLS * sizeof(*out));
	out[0].i = v->time;
	enc_text(&out[1], store_fail_id(v->fail), 64);
	out[2].i = v->entry;
	enc_text(&out[3], v->path, sizeof(v->path));
	enc_text(&out[4], v->digest, sizeof(v->digest));
	enc_text(&out[5], v->msg, sizeof(v->msg));
}

void store_verdict_decode(const struct store_val in[STORE_VERDICT_NCOLS], struct vg_store_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->time = in[0].i;
	v->fail = store_fail_parse(in[1].p, in[1].len);
	v->entry = in[2].i;
	dec_text(&in[3], v->path, sizeof(v->path));
	dec_text(&in[4], v->digest, sizeof(v->digest));
	dec_text(&in[5], v->msg, sizeof(v->msg));
}

int store_sql_list(char *buf, size_t cap, const struct store_col *cols, size_t n, const char *fmt)
{
	size_t len = strlen(buf);

	for (size_t i = 0; i < n; i++) {
		int w;

		if (i) {
			w = snprintf(buf + len, cap - len, ", ");
			if (w < 0 || (size_t)w >= cap - len)
				return -ENAMETOOLONG;
			len += (size_t)w;
		}
		w = snprintf(buf + len, cap - len, fmt, cols[i].name, cols[i].name);
		if (w < 0 || (size_t)w >= cap - len)
			return -ENAMETOOLONG;
		len += (size_t)w;
	}
	return 0;
}

/* ---- passwords in store URLs ---- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

size_t vg_store_url_secrets(const char *url, struct vg_store_span *spans, size_t max)
{
	const char *sep = strstr(url, "://"), *p;
	size_t n = 0;

#define ADD(b, e) do { if (n < max) { spans[n].off = (size_t)((b) - url); \
			spans[n].len = (size_t)((e) - (b)); } n++; } while (0)
	if (sep && (size_t)(sep - url) < 16 && !memchr(url, '=', (size_t)(sep - url))) {
		/* URI: scheme://[user[:password]@]host.../db?k=v&password=v */
		const char *a = sep + 3, *e = a + strcspn(a, "/?#"), *at = NULL, *q;

		for (p = a; p < e; p++)
			if (*p == '@')
				at = p;
		if (at) {
			const char *colon = memchr(a, ':', (size_t)(at - a));

			if (colon)
				ADD(colon + 1, at);
		}
		q = strchr(e, '?');
		for (p = q; p && *p; ) {
			const char *k = p + 1, *end = k + strcspn(k, "&#");

			if (strncmp(k, "password=", 9) == 0)
				ADD(k + 9, end);
			p = *end == '&' ? end : NULL;
		}
		return n;
	}
	/* libpq conninfo: keyword = value | keyword = 'quoted \' value' */
	for (p = url; *p; ) {
		const char *k, *v;
		size_t kl;

		while (is_space(*p))
			p++;
		k = p;
		while (*p && *p != '=' && !is_space(*p))
			p++;
		kl = (size_t)(p - k);
		while (is_space(*p))
			p++;
		if (*p != '=')
			break;
		p++;
		while (is_space(*p))
			p++;
		v = p;
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else {
			while (*p && !is_space(*p))
				p++;
		}
		if (kl == 8 && strncmp(k, "password", 8) == 0)
			ADD(v, p);
	}
#undef ADD
	return n;
}

size_t vg_store_url_scrub(const char *url, char *out, size_t cap)
{
	struct vg_store_span s[8];
	size_t n = vg_store_url_secrets(url, s, VG_ARRAY_SIZE(s)), len = 0, from = 0;

	if (n > VG_ARRAY_SIZE(s))
		n = VG_ARRAY_SIZE(s);
#define PUT(p, l) do { for (size_t _i = 0; _i < (l); _i++, len++) \
			if (len + 1 < cap) out[len] = (p)[_i]; } while (0)
	for (size_t i = 0; i < n; i++) {
		PUT(url + from, s[i].off - from);
		PUT("***", 3);
		from = s[i].off + s[i].len;
	}
	PUT(url + from, strlen(url + from));
#undef PUT
	if (cap)
		out[len < cap ? len : cap - 1] = 0;
	return len;
}

/* ---- backend choice and wrappers ---- */

int vg_store_open(const char *url, struct vg_store **ret, struct vg_diag *diag)
{
	if (strncmp(url, "sqlite:", 7) == 0)
		return vg_store_sqlite_open(url + 7, ret, diag);
	if (strncmp(url, "postgresql:", 11) == 0 || strncmp(url, "postgres:", 9) == 0)
		return vg_store_pg_open(url, ret, diag);
	return vg_store_sqlite_open(url, ret, diag);
}

void vg_store_close(struct vg_store *s)
{
	if (!s)
		return;
	s->ops->close(s->ctx);
	free(s);
}

void vg_store_set_timeout(struct vg_store *s, unsigned int ms)
{
	s->ops->set_timeout(s->ctx, ms);
}

int vg_store_agent_put(struct vg_store *s, const struct vg_store_agent *a, struct vg_diag *diag)
{
	return s->ops->agent_put(s->ctx, a, diag);
}

int vg_store_agent_get(struct vg_store *s, const char *id, struct vg_store_agent *ret,
		       struct vg_diag *diag)
{
	return s->ops->agent_get(s->ctx, id, ret, diag);
}

int vg_store_agent_del(struct vg_store *s, const char *id, struct vg_diag *diag)
{
	return s->ops->agent_del(s->ctx, id, diag);
}

int vg_store_agent_update(struct vg_store *s, const struct vg_store_agent *old,
			  const struct vg_store_agent *a, struct vg_diag *diag)
{
	return s->ops->agent_update(s->ctx, old, a, diag);
}

int vg_store_agent_list(struct vg_store *s, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	return s->ops->agent_list(s->ctx, cb, arg, diag);
}

int vg_store_policy_put(struct vg_store *s, const char *name, const char *doc, size_t len,
			struct vg_diag *diag)
{
	return s->ops->policy_put(s->ctx, name, doc, len, diag);
}

int vg_store_policy_get(struct vg_store *s, const char *name, char **ret, size_t *len,
			struct vg_diag *diag)
{
	return s->ops->policy_get(s->ctx, name, ret, len, diag);
}

int vg_store_policy_del(struct vg_store *s, const char *name, struct vg_diag *diag)
{
	return s->ops->policy_del(s->ctx, name, diag);
}

int vg_store_verdict_add(struct vg_store *s, const char *id, const struct vg_store_verdict *v,
			 struct vg_diag *diag)
{
	return s->ops->verdict_add(s->ctx, id, v, diag);
}

int vg_store_verdict_list(struct vg_store *s, const char *id, size_t max, vg_store_verdict_cb cb,
			  void *arg, struct vg_diag *diag)
{
	return s->ops->verdict_list(s->ctx, id, max, cb, arg, diag);
}
