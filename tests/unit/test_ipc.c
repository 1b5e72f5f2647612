// SPDX-License-Identifier: MIT
/*
 * test_ipc.c - the privilege-separation messages refuse what breaks them.
 *
 * vigil-agent (agent_proto.h's table on common/ipc.h): ipc_recv_fixed
 * accepts a packet only when it is exactly one message of a wanted type
 * with every field in range.
 *
 * common/ipc.h with a protocol of its own: fixed messages round-trip on
 * packet and stream sockets, a field out of range or a descriptor the
 * table does not say is refused (-EPROTO, the receiver lives).
 *
 * vigil-verifier (store_ipc.h): the real store process (store_proc_main,
 * forked here on a throwaway SQLite file) answers a well-formed request,
 * and ends itself, exit status 2 with "protocol violation" on stderr, at
 * an unknown type, a length out of its type's bounds, a field over its
 * cap, bytes left over or a frame cut short.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent_proto.h"
#include "store_ipc.h"
#include "store_proc.h"

/* ---- vigil-agent ---- */

static int sp[2];
static struct ipc_chan agent_rx;

static int agent_setup(void **state)
{
	(void)state;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	return agent_chan(&agent_rx, sp[1], "test");
}

static int agent_teardown(void **state)
{
	(void)state;
	close(sp[0]);
	close(sp[1]);
	return 0;
}

static size_t msg_size(uint32_t type)
{
	return agent_proto.type[type].max;
}

static void good_quote(union agent_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->quote.nonce_len = 20;
	m->quote.bank = VG_HASH_SHA256;
	m->quote.mask = 1u << 10;
}

/* one packet on @sp[0]: the frame header (@type, @len) and @len bytes of @m */
static void send_frame(uint32_t type, const void *m, size_t len)
{
	static uint8_t big[8 + sizeof(union agent_msg) * 2];	/* room for an oversized packet */
	uint32_t h[2] = { type, (uint32_t)len };

	memcpy(big, h, 8);
	memcpy(big + 8, m, len < sizeof(union agent_msg) ? len : sizeof(union agent_msg));
	assert_int_equal(send(sp[0], big, 8 + len, 0), (ssize_t)(8 + len));
}

/* receive wanting @want; Return: ipc_recv_fixed's 1, -EPROTO */
static int recv_want(uint32_t want)
{
	union agent_msg got;
	uint32_t type;

	return ipc_recv_fixed(&agent_rx, want, &type, &got, sizeof(got), NULL);
}

/* send @len bytes of @m as a message of @type, receive wanting QUOTE only */
static int roundtrip(uint32_t type, const union agent_msg *m, size_t len)
{
	send_frame(type, m, len);
	return recv_want(1u << AGENT_MSG_QUOTE);
}

static void agent_recv_accepts_an_exact_message(void **state)
{
	union agent_msg m;

	(void)state;
	good_quote(&m);
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, msg_size(AGENT_MSG_QUOTE)), 1);
}

static void agent_recv_rejects_a_short_or_long_packet(void **state)
{
	union agent_msg m;

	(void)state;
	good_quote(&m);
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, msg_size(AGENT_MSG_QUOTE) - 1), -EPROTO);
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, msg_size(AGENT_MSG_QUOTE) + 1), -EPROTO);
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, sizeof(m) + 64), -EPROTO);	/* truncated by recv: seen */
	/* a packet shorter than the frame header */
	assert_int_equal(send(sp[0], &m, 2, 0), 2);
	assert_int_equal(recv_want(1u << AGENT_MSG_QUOTE), -EPROTO);
}

static void agent_recv_rejects_an_unwanted_or_unknown_type(void **state)
{
	union agent_msg m;

	(void)state;
	memset(&m, 0, sizeof(m));
	strcpy(m.activate.agent_id, "host1");
	assert_int_equal(roundtrip(AGENT_MSG_ACTIVATE, &m, msg_size(AGENT_MSG_ACTIVATE)), -EPROTO);
	assert_int_equal(roundtrip(77, &m, msg_size(AGENT_MSG_QUOTE)), -EPROTO);
}

static void agent_recv_rejects_fields_out_of_range(void **state)
{
	union agent_msg m;

	(void)state;
	good_quote(&m);
	m.quote.nonce_len = VG_ATTEST_NONCE_MAX + 1;
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, msg_size(AGENT_MSG_QUOTE)), -EPROTO);
	good_quote(&m);
	m.quote.bank = VG_HASH__LAST;
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, msg_size(AGENT_MSG_QUOTE)), -EPROTO);
	good_quote(&m);
	m.quote.mask = 1u << VG_PCR_COUNT;
	assert_int_equal(roundtrip(AGENT_MSG_QUOTE, &m, msg_size(AGENT_MSG_QUOTE)), -EPROTO);
}

static void agent_recv_rejects_an_unterminated_agent_id(void **state)
{
	union agent_msg m;
	size_t n = msg_size(AGENT_MSG_ACTIVATE);

	(void)state;
	memset(&m, 0, sizeof(m));
	memset(m.activate.agent_id, 'a', sizeof(m.activate.agent_id));
	send_frame(AGENT_MSG_ACTIVATE, &m, n);
	assert_int_equal(recv_want(1u << AGENT_MSG_ACTIVATE), -EPROTO);
	m.activate.agent_id[5] = '\0';
	send_frame(AGENT_MSG_ACTIVATE, &m, n);
	assert_int_equal(recv_want(1u << AGENT_MSG_ACTIVATE), 1);
}

/* ---- common/ipc.h: a protocol of its own, descriptors, the fixed path ---- */

struct t_fixed {
	uint32_t a, b;
};

static bool t_check(const void *p)
{
	const struct t_fixed *f = p;

	return f->a < 100;
}

enum { T_FIXED = 1, T_WITH_FD, T_FIELDS, T__COUNT };

static const struct ipc_type t_types[T__COUNT] = {
	[T_FIXED] = { "FIXED", sizeof(struct t_fixed), sizeof(struct t_fixed), false, t_check },
	[T_WITH_FD] = { "WITH_FD", 4, 4, true, NULL },
	[T_FIELDS] = { "FIELDS", 4, 64, false, NULL },
};

static const struct ipc_proto t_proto = { "test", t_types, T__COUNT };

/* a pair of @type whose receiving end returns -EPROTO (no exit) */
static void t_pair(int type, struct ipc_chan *tx, struct ipc_chan *rx)
{
	int sv[2];

	assert_int_equal(ipc_socketpair(type, 0, sv), 0);
	assert_int_equal(ipc_chan_init(tx, sv[0], &t_proto, "sender", false), 0);
	assert_int_equal(ipc_chan_init(rx, sv[1], &t_proto, "receiver", false), 0);
}

static void t_close(struct ipc_chan *tx, struct ipc_chan *rx)
{
	close(tx->fd);
	close(rx->fd);
}

static void ipc_fixed_round_trips_on_both_socket_types(void **state)
{
	int kinds[2] = { SOCK_SEQPACKET, SOCK_STREAM };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct ipc_chan tx, rx;
		struct t_fixed f = { 7, 9 }, got = { 0, 0 };
		uint32_t type = 0;

		t_pair(kinds[i], &tx, &rx);
		assert_int_equal(ipc_send_fixed(&tx, T_FIXED, &f, sizeof(f), -1), 0);
		assert_int_equal(ipc_recv_fixed(&rx, 1u << T_FIXED, &type, &got, sizeof(got), NULL), 1);
		assert_int_equal(type, T_FIXED);
		assert_int_equal(got.b, 9);
		/* a field out of range, then an unwanted type: refused, the receiver lives */
		f.a = 100;
		assert_int_equal(ipc_send_fixed(&tx, T_FIXED, &f, sizeof(f), -1), 0);
		assert_int_equal(ipc_recv_fixed(&rx, 1u << T_FIXED, &type, &got, sizeof(got), NULL),
				 -EPROTO);
		assert_non_null(strstr(rx.why, "out of range"));
		t_close(&tx, &rx);
	}
}

static void ipc_descriptor_travels_only_where_the_table_says(void **state)
{
	struct ipc_chan tx, rx;
	uint32_t v = 1, type;
	int fd = -1, p[2];
	struct ipc_out o = { 0 };
	struct ipc_in in;

	(void)state;
	assert_int_equal(pipe(p), 0);
	t_pair(SOCK_SEQPACKET, &tx, &rx);
	assert_int_equal(ipc_send_fixed(&tx, T_WITH_FD, &v, 4, p[1]), 0);
	assert_int_equal(ipc_recv_fixed(&rx, 1u << T_WITH_FD, &type, &v, 4, &fd), 1);
	assert_true(fd >= 0 && fd != p[1]);
	assert_int_equal(write(fd, "x", 1), 1);	/* the same pipe */
	close(fd);
	/* the type carries one: none sent is a violation */
	assert_int_equal(ipc_send_fixed(&tx, T_WITH_FD, &v, 4, -1), 0);
	assert_int_equal(ipc_recv_fixed(&rx, 1u << T_WITH_FD, &type, &v, 4, &fd), -EPROTO);
	assert_non_null(strstr(rx.why, "descriptor missing"));
	t_close(&tx, &rx);
	/* a stream of fields: a descriptor the type does not carry is refused */
	t_pair(SOCK_STREAM, &tx, &rx);
	ipc_put_u32(&o, 5);
	assert_int_equal(ipc_send(&tx, T_FIELDS, &o, p[0]), 0);
	assert_int_equal(ipc_recv(&rx, &in), -EPROTO);
	assert_non_null(strstr(rx.why, "not asked for"));
	t_close(&tx, &rx);
	close(p[0]);
	close(p[1]);
}

/* ---- vigil-verifier's store process ---- */

struct proc {
	pid_t pid;
	int fd;		/* our end */
	int err;	/* its stderr, read end */
};

static char dbdir[] = "/tmp/vigil-test-ipc.XXXXXX";

static int store_setup(void **state)
{
	(void)state;
	return mkdtemp(dbdir) ? 0 : -1;
}

static int store_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dbdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* the store process on a fresh SQLite file, its open answered */
static void start(struct proc *p)
{
	static unsigned int n;
	char url[256];
	int sv[2], ep[2];
	struct ipc_in in;
	struct ipc_chan ch;

	snprintf(url, sizeof(url), "sqlite:%s/s%u.db", dbdir, n++);
	assert_int_equal(sipc_socketpair(sv), 0);
	assert_int_equal(pipe2(ep, O_CLOEXEC), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		dup2(ep[1], 2);
		close(sv[0]);
		store_proc_main(sv[1], url);
	}
	close(sv[1]);
	close(ep[1]);
	p->fd = sv[0];
	p->err = ep[0];
	sipc_chan(&ch, p->fd, "test");
	assert_int_equal(ipc_recv(&ch, &in), 0);
	assert_int_equal(in.type, SIPC_DONE);
	assert_int_equal(sipc_get_done(&in, NULL), 0);
	ipc_in_free(&in);
}

/* a raw frame: header (type, length) then @len bytes of @payload */
static void frame(struct proc *p, uint32_t type, uint32_t len, const void *payload, size_t n)
{
	uint32_t h[2] = { type, len };

	assert_int_equal(write(p->fd, h, sizeof(h)), (ssize_t)sizeof(h));
	if (n)
		assert_int_equal(write(p->fd, payload, n), (ssize_t)n);
}

/* the process ended with status 2 and said what broke */
static void dies(struct proc *p, const char *why)
{
	char buf[512] = { 0 };
	ssize_t k;
	int st, waited = 0;

	/* a store that does not end itself is the failure: give it 10 s */
	while (waitpid(p->pid, &st, WNOHANG) == 0) {
		if (waited++ == 1000) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			fail_msg("the store process is still running after \"%s\"", why);
		}
		usleep(10000);
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	k = read(p->err, buf, sizeof(buf) - 1);
	assert_true(k > 0);
	assert_non_null(strstr(buf, "protocol violation"));
	assert_non_null(strstr(buf, why));
	close(p->fd);
	close(p->err);
}

/*
 * the process answered the one request sent DONE with @want, and ended
 * cleanly (exit 0) when its channel closed
 */
static void answers(struct proc *p, int want)
{
	struct ipc_in in;
	struct ipc_chan ch;
	int st;

	sipc_chan(&ch, p->fd, "test");
	assert_int_equal(ipc_recv(&ch, &in), 0);
	assert_int_equal(in.type, SIPC_DONE);
	assert_int_equal(sipc_get_done(&in, NULL), want);
	ipc_in_free(&in);
	close(p->fd);		/* a clean end: exit 0 */
	assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(p->err);
}

static size_t name_field(uint8_t *out, const char *name)
{
	uint32_t n = (uint32_t)strlen(name);

	memcpy(out, &n, 4);
	memcpy(out + 4, name, n);
	return 4 + n;
}

static void store_answers_a_well_formed_request(void **state)
{
	struct proc p;
	uint8_t b[64];
	size_t n;

	(void)state;
	start(&p);
	n = name_field(b, "nobody-here");
	frame(&p, SIPC_AGENT_GET, (uint32_t)n, b, n);
	answers(&p, -ENOENT);
}

/* a LEASE_DROP of @id's lease under @owner ending at 1234 sent to @p */
static void lease_drop(struct proc *p, const char *id, const char *owner)
{
	uint8_t b[160];
	int64_t until = 1234;
	size_t n = name_field(b, id);

	n += name_field(b + n, owner);
	memcpy(b + n, &until, 8);
	n += 8;
	frame(p, SIPC_LEASE_DROP, (uint32_t)n, b, n);
}

/* LEASE_DROP: an unknown lease is -ESTALE; an owner over its cap ends the store */
static void store_lease_drop_answers_or_dies(void **state)
{
	struct proc p;
	char owner[VG_STORE_VERIFIER_ID_MAX + 1];

	(void)state;
	start(&p);
	lease_drop(&p, "nobody-here", "v1");
	answers(&p, -ESTALE);

	start(&p);
	memset(owner, 'v', sizeof(owner) - 1);	/* 64 bytes: one over a verifier id's cap */
	owner[sizeof(owner) - 1] = 0;
	lease_drop(&p, "host1", owner);
	dies(&p, "over its cap");
}

static void store_dies_at_an_unknown_type(void **state)
{
	struct proc p;

	(void)state;
	start(&p);
	frame(&p, 999, 0, NULL, 0);
	dies(&p, "unknown message type");
}

static void store_dies_at_a_length_out_of_bounds(void **state)
{
	struct proc p;

	(void)state;
	start(&p);
	/* SET_TIMEOUT is exactly 4 bytes; the header is judged before any payload is read */
	frame(&p, SIPC_SET_TIMEOUT, 8, NULL, 0);
	dies(&p, "length out of bounds");
	start(&p);
	frame(&p, SIPC_AGENT_GET, 0x7fffffff, NULL, 0);
	dies(&p, "length out of bounds");
}

static void store_dies_at_a_field_over_its_cap(void **state)
{
	struct proc p;
	uint8_t b[12];
	uint32_t big = SIPC_NAME_MAX + 1;

	(void)state;
	start(&p);
	/* a name whose length field says more than the frame holds */
	memcpy(b, &big, 4);
	memcpy(b + 4, "abcdefgh", 8);
	frame(&p, SIPC_AGENT_GET, sizeof(b), b, sizeof(b));
	dies(&p, "over its cap");
}

static void store_dies_at_bytes_left_over(void **state)
{
	struct proc p;
	uint8_t b[64];
	size_t n;

	(void)state;
	start(&p);
	n = name_field(b, "host1");
	memset(b + n, 0, 4);
	frame(&p, SIPC_AGENT_GET, (uint32_t)n + 4, b, n + 4);
	dies(&p, "left over");
}

static void store_dies_at_a_frame_cut_short(void **state)
{
	struct proc p;
	uint8_t b[64];
	size_t n;

	(void)state;
	start(&p);
	n = name_field(b, "host1");
	frame(&p, SIPC_AGENT_GET, (uint32_t)n, b, n - 2);
	shutdown(p.fd, SHUT_WR);
	dies(&p, "cut short");
}

static int setup(void **state)
{
	return agent_setup(state) | store_setup(state);
}

static int teardown(void **state)
{
	return agent_teardown(state) | store_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agent_recv_accepts_an_exact_message),
		cmocka_unit_test(agent_recv_rejects_a_short_or_long_packet),
		cmocka_unit_test(agent_recv_rejects_an_unwanted_or_unknown_type),
		cmocka_unit_test(agent_recv_rejects_fields_out_of_range),
		cmocka_unit_test(agent_recv_rejects_an_unterminated_agent_id),
		cmocka_unit_test(ipc_fixed_round_trips_on_both_socket_types),
		cmocka_unit_test(ipc_descriptor_travels_only_where_the_table_says),
		cmocka_unit_test(store_answers_a_well_formed_request),
		cmocka_unit_test(store_lease_drop_answers_or_dies),
		cmocka_unit_test(store_dies_at_an_unknown_type),
		cmocka_unit_test(store_dies_at_a_length_out_of_bounds),
		cmocka_unit_test(store_dies_at_a_field_over_its_cap),
		cmocka_unit_test(store_dies_at_bytes_left_over),
		cmocka_unit_test(store_dies_at_a_frame_cut_short),
	};

	return cmocka_run_group_tests_name("ipc", tests, setup, teardown);
}
