// SPDX-License-Identifier: MIT
/*
 * ipc.c - the wire of ipc.h: framing against a protocol's table, the
 * descriptor beside the header, field encoders and checked decoders.
 * It knows no program's message; each program's table says what its
 * messages are (verifier/store_ipc.h, agent/agent_proto.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "ipc.h"
#include "log.h"

#define HDR 8u

int ipc_chan_init(struct ipc_chan *ch, int fd, const struct ipc_proto *proto, const char *who,
		  bool die)
{
	int type = 0;
	socklen_t sl = sizeof(type);

	*ch = (struct ipc_chan){ .fd = fd, .proto = proto, .who = who, .die = die };
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) < 0)
		return -errno;
	ch->packet = type == SOCK_SEQPACKET;
	return 0;
}

int ipc_socketpair(int type, int buf, int sv[2])
{
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	for (int i = 0; buf > 0 && i < 2; i++) {
		setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	}
	return 0;
}

_Noreturn void ipc_die(const char *who, const char *what)
{
	vlog_err("%s: protocol violation: %s", who, what);
	_exit(2);
}

int ipc_violation(struct ipc_chan *ch, const char *what)
{
	if (ch->die)
		ipc_die(ch->who, what);
	ch->why = what;
	return -EPROTO;
}

static const struct ipc_type *type_of(const struct ipc_chan *ch, uint32_t t)
{
	if (t == 0 || t >= ch->proto->ntypes || !ch->proto->type[t].name)
		return NULL;
	return &ch->proto->type[t];
}

/* ---- sending ---- */

/* @iov whole, @pass with its first byte; a packet socket takes it in one call */
static int sendv(int fd, struct iovec *iov, int n, int pass)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };

	if (pass >= 0) {
		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.b;
		m.msg_controllen = sizeof(cm.b);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &pass, sizeof(int));
	}
	while (m.msg_iovlen) {
		ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == ECONNRESET ? -EPIPE : -errno;
		m.msg_control = NULL;	/* the descriptor went with the first byte */
		m.msg_controllen = 0;
		while (m.msg_iovlen && (size_t)w >= m.msg_iov->iov_len) {
			w -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + w;
			m.msg_iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int ipc_send_fixed(struct ipc_chan *ch, uint32_t type, const void *p, size_t len, int pass)
{
	uint32_t h[2] = { type, (uint32_t)len };
	struct iovec iov[2] = { { h, HDR }, { (void *)p, len } };

	if (len > IPC_PAYLOAD_MAX)
		return -EMSGSIZE;
	return sendv(ch->fd, iov, len ? 2 : 1, pass);
}

static void put(struct ipc_out *o, const void *p, size_t len)
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

void ipc_put_u32(struct ipc_out *o, uint32_t v)
{
	put(o, &v, sizeof(v));
}

void ipc_put_i64(struct ipc_out *o, int64_t v)
{
	put(o, &v, sizeof(v));
}

void ipc_put_bytes(struct ipc_out *o, const void *p, size_t len)
{
	if (len > UINT32_MAX) {
		o->err = -EMSGSIZE;
		return;
	}
	ipc_put_u32(o, (uint32_t)len);
	put(o, p, len);
}

void ipc_put_tail(struct ipc_out *o, const void *p, size_t len)
{
	if (len > UINT32_MAX - o->len) {
		o->err = -EMSGSIZE;
		return;
	}
	ipc_put_u32(o, (uint32_t)len);
	o->tail = p;
	o->tail_len = len;
}

void ipc_out_free(struct ipc_out *o)
{
	free(o->p);
	*o = (struct ipc_out){ 0 };
}

int ipc_send(struct ipc_chan *ch, uint32_t type, struct ipc_out *o, int pass)
{
	size_t len = o->len + o->tail_len;
	uint32_t h[2] = { type, (uint32_t)len };
	struct iovec iov[3] = { { h, HDR }, { o->p, o->len }, { (void *)o->tail, o->tail_len } };
	int r = o->err;

	if (!r && len > IPC_PAYLOAD_MAX)
		r = -EMSGSIZE;
	if (!r)
		r = sendv(ch->fd, iov, o->tail_len ? 3 : o->len ? 2 : 1, pass);
	ipc_out_free(o);
	return r;
}

/* ---- receiving ---- */

/*
 * One recvmsg into @iov, the descriptors taken: Return: bytes (0 at the
 * end), -errno; *@passfd the first descriptor or -1 (others closed, and
 * *@extra set); *@trunc the packet was larger than @iov.
 */
static ssize_t recvv(int fd, struct iovec *iov, int n, int *passfd, bool *extra, bool *trunc)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n, .msg_control = cm.b,
			    .msg_controllen = sizeof(cm.b) };
	ssize_t r;

	*passfd = -1;
	r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_TRUNC);
	if (r < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*passfd < 0) {
				*passfd = got;
			} else {
				close(got);
				*extra = true;
			}
		}
	}
	if (m.msg_flags & MSG_CTRUNC)
		*extra = true;
	if (m.msg_flags & MSG_TRUNC)
		*trunc = true;
	return r;
}

static int read_all(int fd, void *p, size_t len)
{
	uint8_t *b = p;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, b + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

/* the header of a stream frame, with its descriptor. Return: 1, 0 (end), -errno, -EPROTO */
static int stream_header(struct ipc_chan *ch, uint32_t h[2], int *passfd)
{
	struct iovec iov = { h, HDR };
	bool extra = false, trunc = false;
	ssize_t n;

	do
		n = recvv(ch->fd, &iov, 1, passfd, &extra, &trunc);
	while (n == -EINTR);
	if (n <= 0)
		return (int)n;
	if ((size_t)n < HDR) {
		int r = read_all(ch->fd, (uint8_t *)h + n, HDR - (size_t)n);

		if (r == -EPIPE)
			r = ipc_violation(ch, "a frame header cut short");
		if (r < 0)
			return r;
	}
	if (extra)
		return ipc_violation(ch, "more than one descriptor");
	return 1;
}

/* the header's type and length against @want and the table */
static int header_ok(struct ipc_chan *ch, const uint32_t h[2], uint64_t want, int fd)
{
	const struct ipc_type *t = type_of(ch, h[0]);

	if (!t)
		return ipc_violation(ch, "unknown message type");
	if (h[0] >= 64 || !(want & (UINT64_C(1) << h[0])))
		return ipc_violation(ch, "a message type not expected here");
	if (h[1] < t->min || h[1] > t->max)
		return ipc_violation(ch, "message length out of bounds");
	if (t->fd != (fd >= 0))
		return ipc_violation(ch, t->fd ? "a descriptor missing" : "a descriptor not asked for");
	return 0;
}

int ipc_recv_fixed(struct ipc_chan *ch, uint64_t want, uint32_t *type, void *buf, size_t cap,
		   int *passfd)
{
	uint32_t h[2] = { 0, 0 };
	const struct ipc_type *t;
	int fd = -1, r;

	if (ch->packet) {
		struct iovec iov[2] = { { h, HDR }, { buf, cap } };
		bool extra = false, trunc = false;
		ssize_t n = recvv(ch->fd, iov, 2, &fd, &extra, &trunc);

		if (n <= 0)
			return (int)n;
		if (extra)
			r = ipc_violation(ch, "more than one descriptor");
		else if (trunc || (size_t)n < HDR || (size_t)n - HDR != h[1])
			r = ipc_violation(ch, (size_t)n < HDR ? "a frame header cut short" :
					  "a packet whose length is not its header's");
		else
			r = header_ok(ch, h, want, fd);
	} else {
		r = stream_header(ch, h, &fd);
		if (r <= 0)
			return r;
		r = header_ok(ch, h, want, fd);
		if (!r && h[1] > cap)
			r = ipc_violation(ch, "message length out of bounds");
		if (!r) {
			r = read_all(ch->fd, buf, h[1]);
			if (r == -EPIPE)
				r = ipc_violation(ch, "a message cut short");
		}
	}
	t = r ? NULL : type_of(ch, h[0]);
	if (!r && (t->min != t->max || h[1] > cap))
		r = ipc_violation(ch, "not a fixed-size message");
	if (!r && t->check && !t->check(buf))
		r = ipc_violation(ch, "a field out of range");
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	*type = h[0];
	if (passfd)
		*passfd = fd;
	else if (fd >= 0)
		close(fd);
	return 1;
}

int ipc_recv(struct ipc_chan *ch, struct ipc_in *in)
{
	uint32_t h[2];
	int fd = -1, r;

	*in = (struct ipc_in){ .ch = ch, .fd = -1 };
	if (ch->packet)
		return ipc_violation(ch, "a frame of fields on a packet socket");
	r = stream_header(ch, h, &fd);
	if (r == 0)
		return -EPIPE;
	if (r > 0)
		r = header_ok(ch, h, UINT64_MAX, fd);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	in->type = h[0];
	in->len = h[1];
	in->fd = fd;
	in->p = malloc(in->len + 1);	/* + 1: a document handed over gets its NUL in place */
	if (!in->p) {
		ipc_in_free(in);
		return -ENOMEM;
	}
	r = read_all(ch->fd, in->p, in->len);
	if (r == -EPIPE)
		r = ipc_violation(ch, "a message cut short");
	if (r < 0)
		ipc_in_free(in);
	return r;
}

void ipc_in_free(struct ipc_in *in)
{
	free(in->p);
	in->p = NULL;
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}

static const uint8_t *take(struct ipc_in *in, size_t len)
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

uint32_t ipc_get_u32(struct ipc_in *in)
{
	const uint8_t *p = take(in, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

int64_t ipc_get_i64(struct ipc_in *in)
{
	const uint8_t *p = take(in, 8);
	int64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

const uint8_t *ipc_get_bytes(struct ipc_in *in, size_t cap, size_t *len)
{
	uint32_t n = ipc_get_u32(in);
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

void ipc_get_name(struct ipc_in *in, char *buf, size_t cap)
{
	size_t n;
	const uint8_t *p = ipc_get_bytes(in, cap - 1, &n);

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

int ipc_end(struct ipc_in *in)
{
	if (in->bad)
		return ipc_violation(in->ch, "a field over its cap or past the end of the message");
	if (in->off != in->len)
		return ipc_violation(in->ch, "bytes left over after the last field");
	return 0;
}
