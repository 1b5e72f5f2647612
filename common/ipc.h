/* SPDX-License-Identifier: MIT */
/*
 * ipc.h - the one message codec between a daemon's own processes (the
 * OpenBSD imsg way, with stricter checks): every program declares its
 * protocol as a table of message types (struct ipc_proto: each type's
 * name, the bounds of its payload, whether it carries a descriptor, and
 * an optional check of a fixed payload's fields), and this file frames,
 * sends and receives them. It knows no program's messages.
 *
 * A frame is a header of two uint32 in host order (the peers are the
 * same binary on the same machine), type and payload length, then the
 * payload; a descriptor travels as SCM_RIGHTS with the header. On a
 * SOCK_SEQPACKET socket a frame is one packet; on a SOCK_STREAM socket
 * frames follow each other (payloads larger than a packet can be: policy
 * documents). The receiver checks the header against the type's bounds
 * before it reads the payload, then that the payload is consumed
 * exactly: any violation (unknown or unwanted type, a length out of
 * bounds, a field over its cap, bytes left over, a descriptor missing or
 * unasked, a frame cut short) is the peer's breach of the protocol.
 * What follows is the channel's choice (struct ipc_chan.die): the
 * process ends (exit status 2, "WHO: protocol violation: WHAT" on
 * stderr), or the call returns -EPROTO with the reason in .why for a
 * receiver that must outlive its peer (a monitor replacing a worker).
 *
 * Two ways to carry a payload:
 *  - fixed-size structs (min == max in the table) sent and received in
 *    place, one system call each way on a packet socket, no allocation:
 *    ipc_send_fixed, ipc_recv_fixed (a hot path keeps its shape);
 *  - fields written one by one (ipc_put_*) and read back field by field
 *    with caps (ipc_get_*), never cast: ipc_send, ipc_recv.
 */
#ifndef VIGIL_COMMON_IPC_H
#define VIGIL_COMMON_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One message type of a protocol. */
struct ipc_type {
	const char *name;
	uint32_t min, max;	/* the payload's bounds; min == max: a fixed-size message */
	bool fd;		/* it carries exactly one descriptor (others carry none) */
	/* a fixed payload's fields in range (ipc_recv_fixed); NULL: any */
	bool (*check)(const void *payload);
};

/* A protocol: @type[1 .. @ntypes - 1] (type 0 is never valid). */
struct ipc_proto {
	const char *name;
	const struct ipc_type *type;
	uint32_t ntypes;
};

/* One end of a socketpair speaking @proto. */
struct ipc_chan {
	int fd;
	const struct ipc_proto *proto;
	const char *who;	/* the receiver, as a violation names it: "store process" */
	bool die;		/* a violation ends the process; else -EPROTO and @why */
	bool packet;		/* SOCK_SEQPACKET (set by ipc_chan_init) */
	const char *why;	/* the last violation, when !@die */
};

/* The largest payload any type of any protocol may have. */
#define IPC_PAYLOAD_MAX (UINT32_MAX - 8)

/*
 * ipc_chan_init - @ch for @fd: whether it is a packet socket is asked
 * once here. Return: 0, -errno (getsockopt).
 */
int ipc_chan_init(struct ipc_chan *ch, int fd, const struct ipc_proto *proto, const char *who,
		  bool die);

/*
 * ipc_socketpair - a connected pair of @type (SOCK_STREAM or
 * SOCK_SEQPACKET, close-on-exec), with send and receive buffers of up to
 * @buf bytes each (0: the system's; capped by net.core.[rw]mem_max: a
 * smaller buffer only costs time). Return: 0, -errno.
 */
int ipc_socketpair(int type, int buf, int sv[2]);

/* A protocol violation on @ch: die, or remember @what and Return: -EPROTO. */
int ipc_violation(struct ipc_chan *ch, const char *what);

/* The process ends: "@who: protocol violation: @what" on stderr, exit status 2. */
_Noreturn void ipc_die(const char *who, const char *what);

/* ---- fixed-size messages ---- */

/*
 * ipc_send_fixed - @len bytes at @p as a message of @type (its bounds
 * not checked here: the receiver checks), with descriptor @pass (-1:
 * none). Return: 0, -EPIPE (the peer is gone), -errno.
 */
int ipc_send_fixed(struct ipc_chan *ch, uint32_t type, const void *p, size_t len, int pass);

/*
 * ipc_recv_fixed - one message into @buf (@cap bytes), accepted only
 * when its type is in @want (a bit mask: 1 << type), its length is
 * exactly that type's (min == max <= @cap), it brings a descriptor when
 * the type carries one and none else, and the type's check passes.
 * *@type is set; *@passfd to the descriptor received (close-on-exec), or
 * -1 (@passfd may be NULL when no wanted type carries one).
 * Return: 1 a message, 0 the peer hung up before a frame, -EPROTO a
 * violation (!die), -errno (-EINTR included: the caller decides).
 */
int ipc_recv_fixed(struct ipc_chan *ch, uint64_t want, uint32_t *type, void *buf, size_t cap,
		   int *passfd);

/* ---- messages of fields ---- */

/*
 * An outgoing payload. On allocation failure @err is set and nothing more
 * is added. @tail: the bytes of a last field written after @p without a
 * copy (ipc_put_tail), for documents.
 */
struct ipc_out {
	uint8_t *p;
	size_t len, cap;
	int err;
	const void *tail;
	size_t tail_len;
};

void ipc_put_u32(struct ipc_out *o, uint32_t v);
void ipc_put_i64(struct ipc_out *o, int64_t v);
/* a uint32 length, then the bytes */
void ipc_put_bytes(struct ipc_out *o, const void *p, size_t len);
/* like ipc_put_bytes, @p not copied: it must stay valid until ipc_send; the last field */
void ipc_put_tail(struct ipc_out *o, const void *p, size_t len);
/* Drop what @o holds (a message not sent). */
void ipc_out_free(struct ipc_out *o);

/*
 * ipc_send - frame @o as @type and write it whole, with descriptor @pass
 * (-1: none); frees @o. Return: 0, -errno (-EPIPE: the peer is gone),
 * -ENOMEM (@o->err), -EMSGSIZE.
 */
int ipc_send(struct ipc_chan *ch, uint32_t type, struct ipc_out *o, int pass);

/* An incoming payload: reading past its end or over a cap sets @bad. */
struct ipc_in {
	struct ipc_chan *ch;
	uint32_t type;
	uint8_t *p;
	size_t len, off;
	bool bad;
	int fd;			/* the descriptor it carried, or -1 (the receiver owns it) */
};

/*
 * ipc_recv - one frame: the header, the bounds of its type checked, the
 * descriptor checked, then the payload into @in->p, malloc'd with one
 * byte to spare after the payload (free it with ipc_in_free, or take it
 * and set it NULL). Return: 0, -EPIPE at the end of the stream before a
 * header, -EPROTO a violation (!die), -errno.
 */
int ipc_recv(struct ipc_chan *ch, struct ipc_in *in);
/* frees the payload and closes a descriptor nobody took */
void ipc_in_free(struct ipc_in *in);

uint32_t ipc_get_u32(struct ipc_in *in);
int64_t ipc_get_i64(struct ipc_in *in);
/* Return: the field's bytes (inside @in->p, @len set), NULL with @bad on a violation. */
const uint8_t *ipc_get_bytes(struct ipc_in *in, size_t cap, size_t *len);
/* a name into @buf (@cap, NUL-terminated): a NUL in it or @cap bytes or more is @bad */
void ipc_get_name(struct ipc_in *in, char *buf, size_t cap);

/*
 * ipc_end - the payload consumed exactly and nothing bad.
 * Return: 0, or the violation (ipc_violation: the process ends, or -EPROTO).
 */
int ipc_end(struct ipc_in *in);

#endif
