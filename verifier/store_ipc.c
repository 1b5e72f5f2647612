// SPDX-License-Identifier: MIT
/*
 * store_ipc.c - the table of store_ipc.h (each message type's name and
 * the bounds of its payload; framing and checks are common/ipc.c's) and
 * the rows' fields. Rows travel as the
 * backends' own column values (store_row.c), so the IPC cannot encode an
 * agent differently from the databases, and a row read back is decoded
 * by the same bounds-checked store_agent_decode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "store_ipc.h"
#include "store_row.h"

#define AGENT_MAX ((STORE_AGENT_NCOLS + STORE_SCHED_NCOLS) * (4 + SIPC_COL_MAX))
#define VERIFIER_MAX (STORE_VERIFIER_NCOLS * (4 + SIPC_COL_MAX))
#define VERDICT_MAX (STORE_VERDICT_NCOLS * (4 + SIPC_COL_MAX))
#define NAME_F (4 + SIPC_NAME_MAX)
#define DONE_MAX (4 + 4 + 4 + SIPC_MSG_MAX)
/* a DUE's fixed fields (besides its id and its lease owner) */
#define DUE_FIXED (4 + 4 + 5 * 8 + 4 + 2 * 8)
/* a struct vg_store_push_req: its numbers, two ids, the columns of its two rows */
#define PUSH_MAX (6 * 8 + 5 * 4 + 2 * NAME_F + STORE_PUSH_NCOLS * (4 + 8) + 4 * (4 + SIPC_COL_MAX) \
		  + 4 + VG_STORE_PUSH_IDN_MAX)

#define T(name, min, max) [SIPC_##name] = { #name, (uint32_t)(min), (uint32_t)(max), false, NULL }

static const struct ipc_type types[SIPC__COUNT] = {
	T(AGENT_PUT, 0, AGENT_MAX),
	T(AGENT_GET, 4, NAME_F),
	T(AGENT_DEL, 4, NAME_F),
	T(AGENT_LIST, 0, 0),
	T(AGENT_UPDATE, 0, 2 * AGENT_MAX),
	T(POLICY_PUT, 8, NAME_F + 4 + SIPC_DOC_MAX),
	T(POLICY_GET, 4, NAME_F),
	T(POLICY_DEL, 4, NAME_F),
	T(VERDICT_ADD, 4, NAME_F + VERDICT_MAX),
	T(VERDICT_LIST, 12, NAME_F + 8),
	T(SET_TIMEOUT, 4, 4),
	T(DONE, 12, DONE_MAX),
	T(AGENT, 0, AGENT_MAX),
	T(VERDICT, 0, VERDICT_MAX),
	T(POLICY, 4, 4 + SIPC_DOC_MAX),
	T(HOOK_RUN, 16, 4 * (4 + SIPC_HOOK_FIELD_MAX)),
	T(HOOK_DONE, 4, 4),
	T(KEY_INFO, 4, 4),
	T(KEY_SIGN_DATA, 12, 12 + SIPC_SIGN_IN_MAX),
	T(KEY_SIGN_HASH, 12, 12 + SIPC_SIGN_IN_MAX),
	T(KEY_ANSWER, 8, 8 + SIPC_SIG_MAX),
	T(LEASE_RELEASE, 4 + 4 + 8, 2 * NAME_F + 8),
	T(VERIFIER_BEAT, 0, VERIFIER_MAX),
	T(VERIFIER_LIST, 0, 0),
	T(VERIFIER, 0, VERIFIER_MAX),
	T(EAR_SIGN, 4, 4 + SIPC_EAR_IN_MAX),
	T(AGENT_FIND, 4 + 4 + 4, 4 + 4 + SIPC_COL_MAX + NAME_F),
	T(AGENT_DUE, 8, 8),
	T(DUE, DUE_FIXED + 4 + 4, NAME_F + DUE_FIXED + 4 + VG_STORE_VERIFIER_ID_MAX),
	T(LEASE_TAKE, 4 + 8 + 4 + 8 + 8 + 4, 2 * NAME_F + 8 + 8 + 8 + 4),
	T(LEASE_DROP, 4 + 4 + 8, 2 * NAME_F + 8),
	T(AGENT_STATES, 0, 0),
	T(STATES, 8 * VG_STORE_STATES, 8 * VG_STORE_STATES),
	T(PUSH, 4, 4 + PUSH_MAX),
	T(PUSH_ROW, 0, PUSH_MAX),
};

const struct ipc_proto sipc_proto = { "vigil-verifier", types, SIPC__COUNT };

void sipc_chan(struct ipc_chan *ch, int fd, const char *who)
{
	*ch = (struct ipc_chan){ .fd = fd, .proto = &sipc_proto, .who = who, .die = true };
}

int sipc_socketpair(int sv[2])
{
	return ipc_socketpair(SOCK_STREAM, 4 << 20, sv);
}

/* ---- out ---- */

static void put_cols(struct ipc_out *o, const struct store_col *cols, const struct store_val *v,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (cols[i].type == STORE_INT)
			ipc_put_i64(o, v[i].i);
		else
			ipc_put_bytes(o, v[i].p, v[i].len);
	}
}

void sipc_put_agent(struct ipc_out *o, const struct vg_store_agent *a)
{
	struct store_val v[STORE_AGENT_NCOLS], sv[STORE_SCHED_NCOLS];

	store_agent_encode(a, v);
	put_cols(o, store_agent_cols, v, STORE_AGENT_NCOLS);
	store_sched_encode(a, sv);
	put_cols(o, store_sched_cols, sv, STORE_SCHED_NCOLS);
}

void sipc_put_verifier(struct ipc_out *o, const struct vg_store_verifier *vr)
{
	struct store_val v[STORE_VERIFIER_NCOLS];

	store_verifier_encode(vr, v);
	put_cols(o, store_verifier_cols, v, STORE_VERIFIER_NCOLS);
}

void sipc_put_verdict(struct ipc_out *o, const struct vg_store_verdict *vd)
{
	struct store_val v[STORE_VERDICT_NCOLS];

	store_verdict_encode(vd, v);
	put_cols(o, store_verdict_cols, v, STORE_VERDICT_NCOLS);
}

void sipc_put_done(struct ipc_out *o, int r, const struct vg_diag *d)
{
	bool set = d && (d->err || d->msg[0]);

	ipc_put_u32(o, (uint32_t)r);
	ipc_put_u32(o, set);
	ipc_put_bytes(o, set ? d->msg : "", set ? strnlen(d->msg, SIPC_MSG_MAX - 1) : 0);
}

/* ---- in ---- */

static void get_cols(struct ipc_in *in, const struct store_col *cols, struct store_val *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct store_val){ 0 };
		if (cols[i].type == STORE_INT)
			v[i].i = ipc_get_i64(in);
		else
			v[i].p = ipc_get_bytes(in, SIPC_COL_MAX, &v[i].len);
	}
}

void sipc_get_agent(struct ipc_in *in, struct vg_store_agent *a)
{
	struct store_val v[STORE_AGENT_NCOLS], sv[STORE_SCHED_NCOLS];

	get_cols(in, store_agent_cols, v, STORE_AGENT_NCOLS);
	get_cols(in, store_sched_cols, sv, STORE_SCHED_NCOLS);
	if (in->bad || store_agent_decode(v, a) < 0)
		in->bad = true;
	else
		store_sched_decode(sv, a);
}

void sipc_get_verifier(struct ipc_in *in, struct vg_store_verifier *vr)
{
	struct store_val v[STORE_VERIFIER_NCOLS];

	get_cols(in, store_verifier_cols, v, STORE_VERIFIER_NCOLS);
	if (!in->bad)
		store_verifier_decode(v, vr);
}

void sipc_get_verdict(struct ipc_in *in, struct vg_store_verdict *vd)
{
	struct store_val v[STORE_VERDICT_NCOLS];

	get_cols(in, store_verdict_cols, v, STORE_VERDICT_NCOLS);
	if (!in->bad)
		store_verdict_decode(v, vd);
}

void sipc_put_due(struct ipc_out *o, const struct vg_store_due *a)
{
	ipc_put_bytes(o, a->id, strlen(a->id));
	ipc_put_u32(o, a->state);
	ipc_put_u32(o, a->push);
	ipc_put_i64(o, a->registered_at);
	ipc_put_i64(o, a->last_ok);
	ipc_put_i64(o, a->last_seen);
	ipc_put_i64(o, a->next_due);
	ipc_put_i64(o, a->lease_until);
	ipc_put_bytes(o, a->lease_owner, strlen(a->lease_owner));
	ipc_put_u32(o, a->stale);
	ipc_put_i64(o, a->quiet_ms);
	ipc_put_i64(o, a->pushed_ms);
}

void sipc_get_due(struct ipc_in *in, struct vg_store_due *a)
{
	uint32_t push, stale;

	ipc_get_name(in, a->id, sizeof(a->id));
	a->state = ipc_get_u32(in);
	push = ipc_get_u32(in);
	a->registered_at = ipc_get_i64(in);
	a->last_ok = ipc_get_i64(in);
	a->last_seen = ipc_get_i64(in);
	a->next_due = ipc_get_i64(in);
	a->lease_until = ipc_get_i64(in);
	ipc_get_name(in, a->lease_owner, sizeof(a->lease_owner));
	stale = ipc_get_u32(in);
	a->quiet_ms = ipc_get_i64(in);
	a->pushed_ms = ipc_get_i64(in);
	if (push > 1 || stale > 1)
		in->bad = true;
	a->push = push != 0;
	a->stale = stale != 0;
}

void sipc_put_push(struct ipc_out *o, const struct vg_store_push_req *rq)
{
	struct store_val v[STORE_PUSH_NCOLS], g[STORE_PUSH_REG_NCOLS];

	ipc_put_i64(o, rq->now);
	ipc_put_i64(o, rq->age_ms);
	ipc_put_i64(o, rq->lease_ms);
	ipc_put_u32(o, rq->max);
	ipc_put_u32(o, rq->col);
	ipc_put_i64(o, rq->expect);
	ipc_put_i64(o, rq->value);
	ipc_put_u32(o, rq->retry);
	ipc_put_u32(o, rq->judged);
	ipc_put_u32(o, rq->changed);
	ipc_put_bytes(o, rq->st.id, strnlen(rq->st.id, sizeof(rq->st.id) - 1));
	store_push_encode(&rq->st, v);
	put_cols(o, store_push_cols, v, STORE_PUSH_NCOLS);
	ipc_put_bytes(o, rq->reg.id, strnlen(rq->reg.id, sizeof(rq->reg.id) - 1));
	store_push_reg_encode(&rq->reg, g);
	put_cols(o, store_push_reg_cols, g, STORE_PUSH_REG_NCOLS - 1);
	ipc_put_bytes(o, g[STORE_PUSH_REG_NCOLS - 1].p, g[STORE_PUSH_REG_NCOLS - 1].len);
}

void sipc_get_push(struct ipc_in *in, struct vg_store_push_req *rq)
{
	struct store_val v[STORE_PUSH_NCOLS], g[STORE_PUSH_REG_NCOLS];
	uint32_t b[3];

	memset(rq, 0, sizeof(*rq));
	rq->now = ipc_get_i64(in);
	rq->age_ms = ipc_get_i64(in);
	rq->lease_ms = ipc_get_i64(in);
	rq->max = ipc_get_u32(in);
	rq->col = ipc_get_u32(in);
	rq->expect = ipc_get_i64(in);
	rq->value = ipc_get_i64(in);
	for (int i = 0; i < 3; i++)
		b[i] = ipc_get_u32(in);
	ipc_get_name(in, rq->st.id, sizeof(rq->st.id));
	get_cols(in, store_push_cols, v, STORE_PUSH_NCOLS);
	ipc_get_name(in, rq->reg.id, sizeof(rq->reg.id));
	get_cols(in, store_push_reg_cols, g, STORE_PUSH_REG_NCOLS - 1);
	g[STORE_PUSH_REG_NCOLS - 1] = (struct store_val){ 0 };
	g[STORE_PUSH_REG_NCOLS - 1].p = ipc_get_bytes(in, VG_STORE_PUSH_IDN_MAX - 1,
						      &g[STORE_PUSH_REG_NCOLS - 1].len);
	if (in->bad || b[0] > 1 || b[1] > 1 || b[2] > 1 || rq->col >= VG_STORE_PUSH_COL__COUNT ||
	    store_push_decode(v, &rq->st) < 0) {
		in->bad = true;
		return;
	}
	rq->retry = b[0];
	rq->judged = b[1];
	rq->changed = b[2];
	if (store_push_reg_decode(g, &rq->reg) < 0)
		in->bad = true;
}

int sipc_get_done(struct ipc_in *in, struct vg_diag *d)
{
	int r = (int)ipc_get_u32(in);
	uint32_t set = ipc_get_u32(in);
	size_t n;
	const uint8_t *m = ipc_get_bytes(in, SIPC_MSG_MAX - 1, &n);

	if (in->bad || set > 1 || r > 0 || r < -4095) {
		in->bad = true;
		return -EIO;
	}
	if (set && d) {
		d->err = r;
		memcpy(d->msg, m, n);
		d->msg[n] = 0;
	}
	return r;
}
