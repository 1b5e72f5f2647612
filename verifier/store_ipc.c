// SPDX-License-Identifier: MIT
/*
 * store_ipc.c - the wire of store_ipc.h: framing with the bounds of each
 * message type, field encoders and checked decoders. Rows travel as the
 * backends' own column values (store_row.c), so the IPC cannot encode an
 * agent differently from the databases, and a row read back is decoded
 * by the same bounds-checked store_agent_decode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "log.h"
#include "store_ipc.h"
#include "store_row.h"

#define AGENT_MAX ((STORE_AGENT_NCOLS + STORE_SCHED_NCOLS) * (4 + SIPC_COL_MAX))
#define VERIFIER_MAX (STORE_VERIFIER_NCOLS * (4 + SIPC_COL_MAX))
#define VERDICT_MAX (STORE_VERDICT_NCOLS * (4 + SIPC_COL_MAX))
#define NAME_F (4 + SIPC_NAME_MAX)
#define DONE_MAX (4 + 4 + 4 + SIPC_MSG_MAX)

static const struct { size_t min, max; } bounds[SIPC__COUNT] = {
	[SIPC_AGENT_PUT] = { 0, AGENT_MAX },
	[SIPC_AGENT_GET] = { 4, NAME_F },
	[SIPC_AGENT_DEL] = { 4, NAME_F },
	[SIPC_AGENT_LIST] = { 0, 0 },
	[SIPC_AGENT_UPDATE] = { 0, 2 * AGENT_MAX },
	[SIPC_POLICY_PUT] = { 8, NAME_F + 4 + SIPC_DOC_MAX },
	[SIPC_POLICY_GET] = { 4, NAME_F },
	[SIPC_POLICY_DEL] = { 4, NAME_F },
	[SIPC_VERDICT_ADD] = { 4, NAME_F + VERDICT_MAX },
	[SIPC_VERDICT_LIST] = { 12, NAME_F + 8 },
	[SIPC_SET_TIMEOUT] = { 4, 4 },
	[SIPC_DONE] = { 12, DONE_MAX },
	[SIPC_AGENT] = { 0, AGENT_MAX },
	[SIPC_VERDICT] = { 0, VERDICT_MAX },
	[SIPC_POLICY] = { 4, 4 + SIPC_DOC_MAX },
	[SIPC_HOOK_RUN] = { 16, 4 * (4 + SIPC_HOOK_FIELD_MAX) },
	[SIPC_HOOK_DONE] = { 4, 4 },
	[SIPC_KEY_INFO] = { 4, 4 },
	[SIPC_KEY_SIGN_DATA] = { 12, 12 + SIPC_SIGN_IN_MAX },
	[SIPC_KEY_SIGN_HASH] = { 12, 12 + SIPC_SIGN_IN_MAX },
	[SIPC_KEY_ANSWER] = { 8, 8 + SIPC_SIG_MAX },
	[SIPC_LEASE_CLAIM] = { 4 + 8 + 8 + 4, NAME_F + 8 + 8 + 4 },
	[SIPC_LEASE_RELEASE] = { 4 + 4 + 8, 2 * NAME_F + 8 },
	[SIPC_VERIFIER_BEAT] = { 0, VERIFIER_MAX },
	[SIPC_VERIFIER_LIST] = { 0, 0 },
	[SIPC_LEASE] = { 4 + 8, NAME_F + 8 },
	[SIPC_VERIFIER] = { 0, VERIFIER_MAX },
	[SIPC_EAR_SIGN] = { 4, 4 + SIPC_EAR_IN_MAX },
	[SIPC_AGENT_FIND] = { 4 + 4 + 4, 4 + 4 + SIPC_COL_MAX + NAME_F },
};

bool sipc_bounds(uint32_t t, size_t *min, size_t *max)
{
	if (t == 0 || t >= SIPC__COUNT)
		return false;
	*min = bounds[t].min;
	*max = bounds[t].max;
	return true;
}

_Noreturn void sipc_die(const char *who, const char *what)
{
	vlog_err("%s: protocol violation: %s", who, what);
	_exit(2);
}

/* ---- out ---- */

static void put(struct sipc_out *o, const void *p, size_t len)
{
	if (o->err)
		return;
	if (o->cap - o->len < len) {
		size_t cap = o->cap ? o->cap : 256;
		uint8_t *n;

		while (cap - o->len < len)
			cap *= 2;
		n = realloc(o->p, cap);
		if (!n) {
			o->err = -ENOMEM;
			return;
		}
		o->p = n;
		o->cap = cap;
	}
	if (len)
		memcpy(o->p + o->len, p, len);
	o->len += len;
}

void sipc_put_u32(struct sipc_out *o, uint32_t v)
{
	put(o, &v, sizeof(v));
}

void sipc_put_i64(struct sipc_out *o, int64_t v)
{
	put(o, &v, sizeof(v));
}

void sipc_put_bytes(struct sipc_out *o, const void *p, size_t len)
{
	if (len > UINT32_MAX) {
		o->err = -EMSGSIZE;
		return;
	}
	sipc_put_u32(o, (uint32_t)len);
	put(o, p, len);
}

void sipc_put_tail(struct sipc_out *o, const void *p, size_t len)
{
	if (len > UINT32_MAX - o->len) {
		o->err = -EMSGSIZE;
		return;
	}
	sipc_put_u32(o, (uint32_t)len);
	o->tail = p;
	o->tail_len = len;
}

static void put_cols(struct sipc_out *o, const struct store_col *cols, const struct store_val *v,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (cols[i].type == STORE_INT)
			sipc_put_i64(o, v[i].i);
		else
			sipc_put_bytes(o, v[i].p, v[i].len);
	}
}

void sipc_put_agent(struct sipc_out *o, const struct vg_store_agent *a)
{
	struct store_val v[STORE_AGENT_NCOLS], sv[STORE_SCHED_NCOLS];

	store_agent_encode(a, v);
	put_cols(o, store_agent_cols, v, STORE_AGENT_NCOLS);
	store_sched_encode(a, sv);
	put_cols(o, store_sched_cols, sv, STORE_SCHED_NCOLS);
}

void sipc_put_verifier(struct sipc_out *o, const struct vg_store_verifier *vr)
{
	struct store_val v[STORE_VERIFIER_NCOLS];

	store_verifier_encode(vr, v);
	put_cols(o, store_verifier_cols, v, STORE_VERIFIER_NCOLS);
}

void sipc_put_verdict(struct sipc_out *o, const struct vg_store_verdict *vd)
{
	struct store_val v[STORE_VERDICT_NCOLS];

	store_verdict_encode(vd, v);
	put_cols(o, store_verdict_cols, v, STORE_VERDICT_NCOLS);
}

void sipc_put_done(struct sipc_out *o, int r, const struct vg_diag *d)
{
	bool set = d && (d->err || d->msg[0]);

	sipc_put_u32(o, (uint32_t)r);
	sipc_put_u32(o, set);
	sipc_put_bytes(o, set ? d->msg : "", set ? strnlen(d->msg, SIPC_MSG_MAX - 1) : 0);
}

static int write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len) {
		ssize_t w = write(fd, b, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

int sipc_socketpair(int sv[2])
{
	int size = 4 << 20;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		/* capped by net.core.wmem_max / rmem_max: a smaller buffer only costs time */
		setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	}
	return 0;
}

int sipc_send(int fd, uint32_t t, struct sipc_out *o)
{
	uint32_t h[2] = { t, (uint32_t)(o->len + o->tail_len) };
	int r = o->err;

	if (!r && o->len + o->tail_len > UINT32_MAX)
		r = -EMSGSIZE;
	if (!r)
		r = write_all(fd, h, sizeof(h));
	if (!r && o->len)
		r = write_all(fd, o->p, o->len);
	if (!r && o->tail_len)
		r = write_all(fd, o->tail, o->tail_len);
	free(o->p);
	*o = (struct sipc_out){ 0 };
	return r;
}

/* ---- in ---- */

static int read_all(int fd, void *p, size_t len, bool *eof_at_start)
{
	uint8_t *b = p;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, b + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			if (eof_at_start)
				*eof_at_start = got == 0;
			return -EPIPE;
		}
		got += (size_t)n;
	}
	return 0;
}

int sipc_recv(int fd, struct sipc_in *in, const char *who)
{
	uint32_t h[2];
	size_t min, max;
	bool eof = false;
	int r = read_all(fd, h, sizeof(h), &eof);

	*in = (struct sipc_in){ 0 };
	if (r == -EPIPE && !eof)
		sipc_die(who, "a frame header cut short");
	if (r < 0)
		return r;
	if (!sipc_bounds(h[0], &min, &max))
		sipc_die(who, "unknown message type");
	if (h[1] < min || h[1] > max)
		sipc_die(who, "message length out of bounds");
	in->type = h[0];
	in->len = h[1];
	in->p = malloc(in->len + 1);	/* + 1: a document handed over gets its NUL in place */
	if (!in->p)
		return -ENOMEM;
	r = read_all(fd, in->p, in->len, NULL);
	if (r == -EPIPE)
		sipc_die(who, "a message cut short");
	if (r < 0)
		sipc_in_free(in);
	return r;
}

void sipc_in_free(struct sipc_in *in)
{
	free(in->p);
	in->p = NULL;
}

static const uint8_t *take(struct sipc_in *in, size_t len)
{
	const uint8_t *p;

	if (in->bad || in->len - in->off < len) {
		in->bad = true;
		return NULL;
	}
	p = in->p + in->off;
	in->off += len;
	return p;
}

uint32_t sipc_get_u32(struct sipc_in *in)
{
	const uint8_t *p = take(in, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

int64_t sipc_get_i64(struct sipc_in *in)
{
	const uint8_t *p = take(in, 8);
	int64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

const uint8_t *sipc_get_bytes(struct sipc_in *in, size_t cap, size_t *len)
{
	uint32_t n = sipc_get_u32(in);
	const uint8_t *p;

	*len = 0;
	if (in->bad || n > cap) {
		in->bad = true;
		return NULL;
	}
	p = take(in, n);
	if (p)
		*len = n;
	return p;
}

void sipc_get_name(struct sipc_in *in, char *buf, size_t cap)
{
	size_t n;
	const uint8_t *p = sipc_get_bytes(in, cap - 1, &n);

	buf[0] = 0;
	if (!p)
		return;
	if (memchr(p, 0, n)) {
		in->bad = true;
		return;
	}
	memcpy(buf, p, n);
	buf[n] = 0;
}

static void get_cols(struct sipc_in *in, const struct store_col *cols, struct store_val *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct store_val){ 0 };
		if (cols[i].type == STORE_INT)
			v[i].i = sipc_get_i64(in);
		else
			v[i].p = sipc_get_bytes(in, SIPC_COL_MAX, &v[i].len);
	}
}

void sipc_get_agent(struct sipc_in *in, struct vg_store_agent *a)
{
	struct store_val v[STORE_AGENT_NCOLS], sv[STORE_SCHED_NCOLS];

	get_cols(in, store_agent_cols, v, STORE_AGENT_NCOLS);
	get_cols(in, store_sched_cols, sv, STORE_SCHED_NCOLS);
	if (in->bad || store_agent_decode(v, a) < 0)
		in->bad = true;
	else
		store_sched_decode(sv, a);
}

void sipc_get_verifier(struct sipc_in *in, struct vg_store_verifier *vr)
{
	struct store_val v[STORE_VERIFIER_NCOLS];

	get_cols(in, store_verifier_cols, v, STORE_VERIFIER_NCOLS);
	if (!in->bad)
		store_verifier_decode(v, vr);
}

void sipc_get_verdict(struct sipc_in *in, struct vg_store_verdict *vd)
{
	struct store_val v[STORE_VERDICT_NCOLS];

	get_cols(in, store_verdict_cols, v, STORE_VERDICT_NCOLS);
	if (!in->bad)
		store_verdict_decode(v, vd);
}

int sipc_get_done(struct sipc_in *in, struct vg_diag *d)
{
	int r = (int)sipc_get_u32(in);
	uint32_t set = sipc_get_u32(in);
	size_t n;
	const uint8_t *m = sipc_get_bytes(in, SIPC_MSG_MAX - 1, &n);

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

void sipc_end(struct sipc_in *in, const char *who)
{
	if (in->bad)
		sipc_die(who, "a field over its cap or past the end of the message");
	if (in->off != in->len)
		sipc_die(who, "bytes left over after the last field");
}
