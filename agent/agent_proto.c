// SPDX-License-Identifier: MIT
/*
 * agent_proto.c - the table of agent_proto.h: each message's exact size
 * and the check of its fields; common/ipc.c frames, sends and receives.
 */
#include <stdbool.h>
#include <string.h>

#include "agent_proto.h"

static bool text_ok(const char *s, size_t cap)
{
	return memchr(s, 0, cap) != NULL;
}

static bool identity_ok(const void *p)
{
	const struct agent_msg_identity *i = p;

	return i->ek_pub_len <= sizeof(i->ek_pub) && i->ek_cert_len <= sizeof(i->ek_cert) &&
	       i->ak_pub_len <= sizeof(i->ak_pub);
}

static bool quote_ok(const void *p)
{
	const struct agent_msg_quote *q = p;

	return q->nonce_len <= sizeof(q->nonce) && q->bank < VG_HASH__LAST &&
	       q->mask < (1u << VG_PCR_COUNT);
}

static bool quote_answer_ok(const void *p)
{
	const struct agent_msg_quote_answer *a = p;

	return a->err <= 0 && text_ok(a->msg, sizeof(a->msg)) && a->attest_len <= sizeof(a->attest) &&
	       a->sig_len <= sizeof(a->sig) && a->have < (1u << VG_PCR_COUNT);
}

static bool activate_ok(const void *p)
{
	const struct agent_msg_activate *a = p;

	return a->id_len <= sizeof(a->id_object) && a->es_len <= sizeof(a->enc_secret) &&
	       text_ok(a->agent_id, sizeof(a->agent_id));
}

static bool activate_answer_ok(const void *p)
{
	const struct agent_msg_activate_answer *a = p;

	return a->err <= 0 && text_ok(a->msg, sizeof(a->msg));
}

#define FIXED(type, st, check) \
	[AGENT_MSG_##type] = { #type, sizeof(struct st), sizeof(struct st), false, check }

static const struct ipc_type types[AGENT_MSG__COUNT] = {
	FIXED(IDENTITY, agent_msg_identity, identity_ok),
	FIXED(QUOTE, agent_msg_quote, quote_ok),
	FIXED(QUOTE_ANSWER, agent_msg_quote_answer, quote_answer_ok),
	FIXED(ACTIVATE, agent_msg_activate, activate_ok),
	FIXED(ACTIVATE_ANSWER, agent_msg_activate_answer, activate_answer_ok),
};

const struct ipc_proto agent_proto = { "vigil-agent", types, AGENT_MSG__COUNT };

int agent_chan(struct ipc_chan *ch, int fd, const char *who)
{
	return ipc_chan_init(ch, fd, &agent_proto, who, false);
}
