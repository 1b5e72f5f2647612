// SPDX-License-Identifier: MIT
/*
 * store_row.c - what both store backends share (store_row.h): the column
 * lists, the encoding of agents and verdicts to row values and back
 * (failure types are stored as their stable ids, "policy.digest", not as
 * numbers, so history survives enum changes), and the SQL column lists.
 * The backends call it; store.c, which dispatches to the backends, does
 * not, so the dependency runs one way: store.c -> backends -> store_row.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_row.h"

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
	{ "log_keys", STORE_BLOB },
	{ "failure_count", STORE_INT },
	{ "ek_key", STORE_BLOB },
	{ "boot_next", STORE_BLOB },
};

/* policy, ak_pub, state, clock_valid .. log_lag, rounds */
const int store_agent_guard[STORE_GUARD_NCOLS] = { 2, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 };

const struct store_col store_verdict_cols[STORE_VERDICT_NCOLS] = {
	{ "time", STORE_INT },	{ "fail", STORE_TEXT },	 { "entry", STORE_INT },
	{ "path", STORE_TEXT },	{ "digest", STORE_TEXT }, { "msg", STORE_TEXT },
};

const struct store_col store_sched_cols[STORE_SCHED_NCOLS] = {
	{ "next_due", STORE_INT }, { "lease_owner", STORE_TEXT }, { "lease_until", STORE_INT },
};

const struct store_col store_verifier_cols[STORE_VERIFIER_NCOLS] = {
	{ "id", STORE_TEXT },	  { "host", STORE_TEXT },	  { "pid", STORE_INT },
	{ "started", STORE_INT }, { "beat", STORE_INT },	  { "max_rounds", STORE_INT },
	{ "running", STORE_INT }, { "rounds", STORE_INT },	  { "late", STORE_INT },
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
	enc_blob(&v[i++], a->st.log.keys.buf, a->st.log.keys.len);
	v[i++].i = (int64_t)a->failure_count;
	enc_blob(&v[i++], a->ek_key, a->ek_key_len);
	enc_blob(&v[i++], a->st.ann.buf, a->st.ann.len);
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
	if (vg_attest_learned_set(&a->st.log.keys, v[i].p, v[i].len) < 0)
		return -EBADMSG;
	i++;
	a->failure_count = v[i++].i > 0 ? (uint64_t)v[i - 1].i : 0;
	/* a row written before the column: none (the store makes it on the next write) */
	if (dec_blob(&v[i], a->ek_key, sizeof(a->ek_key), &a->ek_key_len) < 0 ||
	    (a->ek_key_len && a->ek_key_len != sizeof(a->ek_key)))
		a->ek_key_len = 0;
	i++;
	/* the next boots' announcements (attest_announce.h); a row before the column: none */
	if (vg_attest_announced_set(&a->st.ann, v[i].p, v[i].len) < 0)
		return -EBADMSG;
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

void store_sched_encode(const struct vg_store_agent *a, struct store_val v[STORE_SCHED_NCOLS])
{
	memset(v, 0, STORE_SCHED_NCOLS * sizeof(*v));
	v[0].i = a->next_due;
	enc_text(&v[1], a->lease_owner, sizeof(a->lease_owner));
	v[2].i = a->lease_until;
}

void store_sched_decode(const struct store_val v[STORE_SCHED_NCOLS], struct vg_store_agent *a)
{
	a->next_due = v[0].i;
	dec_text(&v[1], a->lease_owner, sizeof(a->lease_owner));
	a->lease_until = v[2].i;
}

void store_verifier_encode(const struct vg_store_verifier *v,
			   struct store_val out[STORE_VERIFIER_NCOLS])
{
	memset(out, 0, STORE_VERIFIER_NCOLS * sizeof(*out));
	enc_text(&out[0], v->id, sizeof(v->id));
	enc_text(&out[1], v->host, sizeof(v->host));
	out[2].i = v->pid;
	out[3].i = v->started;
	out[4].i = v->beat;
	out[5].i = v->max_rounds;
	out[6].i = v->running;
	out[7].i = v->rounds;
	out[8].i = v->late;
}

void store_verifier_decode(const struct store_val in[STORE_VERIFIER_NCOLS],
			   struct vg_store_verifier *v)
{
	memset(v, 0, sizeof(*v));
	dec_text(&in[0], v->id, sizeof(v->id));
	dec_text(&in[1], v->host, sizeof(v->host));
	v->pid = in[2].i;
	v->started = in[3].i;
	v->beat = in[4].i;
	v->max_rounds = in[5].i;
	v->running = in[6].i;
	v->rounds = in[7].i;
	v->late = in[8].i;
}

const struct store_col store_push_cols[STORE_PUSH_NCOLS] = {
	{ "cred", STORE_BLOB }, { "nonce", STORE_BLOB }, { "bank", STORE_INT },
	{ "mask", STORE_INT }, { "issued_ms", STORE_INT }, { "busy_until", STORE_INT },
	{ "want_mask", STORE_INT }, { "want_boot", STORE_INT }, { "want_offset", STORE_INT },
	{ "log_offset", STORE_INT }, { "stale", STORE_INT }, { "quiet_ms", STORE_INT },
	{ "pushed_ms", STORE_INT },
};

const struct store_col store_push_reg_cols[STORE_PUSH_REG_NCOLS] = {
	{ "cred", STORE_BLOB }, { "proof_hash", STORE_BLOB }, { "reg_ms", STORE_INT },
	{ "idn", STORE_BLOB },
};

void store_push_encode(const struct vg_store_push *s, struct store_val out[STORE_PUSH_NCOLS])
{
	memset(out, 0, STORE_PUSH_NCOLS * sizeof(*out));
	out[0].p = s->cred;
	out[0].len = strnlen(s->cred, sizeof(s->cred) - 1);
	out[1].p = s->nonce;
	out[1].len = s->nonce_len;
	out[2].i = s->bank;
	out[3].i = s->mask;
	out[4].i = s->issued_ms;
	out[5].i = s->busy_until;
	out[6].i = s->want_mask;
	out[7].i = s->want_boot;
	out[8].i = s->want_offset;
	out[9].i = (int64_t)s->offset;
	out[10].i = s->stale;
	out[11].i = s->quiet_ms;
	out[12].i = s->pushed_ms;
}

/* @v's bytes into @buf (NUL-terminated). Return: 0, -EBADMSG (no room for them). */
static int dec_str(const struct store_val *v, char *buf, size_t cap)
{
	if (v->len >= cap || memchr(v->p ? v->p : "", 0, v->len))
		return -EBADMSG;
	if (v->len)
		memcpy(buf, v->p, v->len);
	buf[v->len] = 0;
	return 0;
}

int store_push_decode(const struct store_val in[STORE_PUSH_NCOLS], struct vg_store_push *s)
{
	if (dec_str(&in[0], s->cred, sizeof(s->cred)) < 0 || in[1].len > sizeof(s->nonce))
		return -EBADMSG;
	s->nonce_len = in[1].len;
	if (in[1].len)
		memcpy(s->nonce, in[1].p, in[1].len);
	s->bank = (unsigned int)in[2].i;
	s->mask = (uint32_t)in[3].i;
	s->issued_ms = in[4].i;
	s->busy_until = in[5].i;
	s->want_mask = (uint32_t)in[6].i;
	s->want_boot = in[7].i != 0;
	s->want_offset = in[8].i != 0;
	s->offset = (uint64_t)in[9].i;
	s->stale = in[10].i != 0;
	s->quiet_ms = in[11].i;
	s->pushed_ms = in[12].i;
	return 0;
}

void store_push_reg_encode(const struct vg_store_push_reg *g,
			   struct store_val out[STORE_PUSH_REG_NCOLS])
{
	memset(out, 0, STORE_PUSH_REG_NCOLS * sizeof(*out));
	out[0].p = g->cred;
	out[0].len = strnlen(g->cred, sizeof(g->cred) - 1);
	out[1].p = g->proof_hash;
	out[1].len = sizeof(g->proof_hash);
	out[2].i = g->reg_ms;
	out[3].p = g->idn;
	out[3].len = g->idn_len < sizeof(g->idn) ? g->idn_len : sizeof(g->idn) - 1;
}

int store_push_reg_decode(const struct store_val in[STORE_PUSH_REG_NCOLS],
			  struct vg_store_push_reg *g)
{
	if (dec_str(&in[0], g->cred, sizeof(g->cred)) < 0 || in[1].len != sizeof(g->proof_hash) ||
	    dec_str(&in[3], g->idn, sizeof(g->idn)) < 0)
		return -EBADMSG;
	memcpy(g->proof_hash, in[1].p, sizeof(g->proof_hash));
	g->reg_ms = in[2].i;
	g->idn_len = in[3].len;
	return 0;
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
