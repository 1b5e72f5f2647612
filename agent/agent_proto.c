// SPDX-License-Identifier: MIT
/*
 * agent_proto.c - sending and strictly receiving the fixed-size messages
 * of agent_proto.h between vigil-agent's TPM and network processes.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "agent_proto.h"

size_t agent_msg_size(uint32_t type)
{
	switch (type) {
	case AGENT_MSG_IDENTITY: return sizeof(struct agent_msg_identity);
	case AGENT_MSG_QUOTE: return sizeof(struct agent_msg_quote);
	case AGENT_MSG_QUOTE_ANSWER: return sizeof(struct agent_msg_quote_answer);
	case AGENT_MSG_ACTIVATE: return sizeof(struct agent_msg_activate);
	case AGENT_MSG_ACTIVATE_ANSWER: return sizeof(struct agent_msg_activate_answer);
	default: return 0;
	}
}

int agent_msg_send(int fd, const union agent_msg *m)
{
	size_t n = agent_msg_size(m->type);
	ssize_t w;

	if (!n)
		return -EINVAL;
	do
		w = send(fd, m, n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EIO;
}

static bool text_ok(const char *s, size_t cap)
{
	return memchr(s, 0, cap) != NULL;
}

/* Every length and field of a message whose size is right. Return: true if in range. */
static bool fields_ok(const union agent_msg *m)
{
	switch (m->type) {
	case AGENT_MSG_IDENTITY: {
		const struct agent_msg_identity *i = &m->identity;

		return i->ek_pub_len <= sizeof(i->ek_pub) && i->ek_cert_len <= sizeof(i->ek_cert) &&
		       i->ak_pub_len <= sizeof(i->ak_pub);
	}
	case AGENT_MSG_QUOTE: {
		const struct agent_msg_quote *q = &m->quote;

		return q->nonce_len <= sizeof(q->nonce) && q->bank < VG_HASH__LAST &&
		       q->mask < (1u << VG_PCR_COUNT);
	}
	case AGENT_MSG_QUOTE_ANSWER: {
		const struct agent_msg_quote_answer *a = &m->quote_answer;

		return a->err <= 0 && text_ok(a->msg, sizeof(a->msg)) &&
		       a->attest_len <= sizeof(a->attest) && a->sig_len <= sizeof(a->sig) &&
		       a->have < (1u << VG_PCR_COUNT);
	}
	case AGENT_MSG_ACTIVATE: {
		const struct agent_msg_activate *a = &m->activate;

		return a->id_len <= sizeof(a->id_object) && a->es_len <= sizeof(a->enc_secret) &&
		       text_ok(a->agent_id, sizeof(a->agent_id));
	}
	case AGENT_MSG_ACTIVATE_ANSWER: {
		const struct agent_msg_activate_answer *a = &m->activate_answer;

		return a->err <= 0 && text_ok(a->msg, sizeof(a->msg));
	}
	default:
		return false;
	}
}

int agent_msg_recv(int fd, union agent_msg *m, uint32_t want)
{
	ssize_t n;

	/* MSG_TRUNC: the packet's real length, so an oversized one is seen */
	n = recv(fd, m, sizeof(*m), MSG_TRUNC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if ((size_t)n < sizeof(m->type) || m->type >= 32 || !(want & (1u << m->type)) ||
	    (size_t)n != agent_msg_size(m->type) || !fields_ok(m))
		return -EPROTO;
	return 1;
}
