/* SPDX-License-Identifier: MIT */
/*
 * agent_proto.h - the only messages between vigil-agent's two processes:
 * one enum of types, one fixed-size struct per type, and their table
 * (agent_proto.c: each type's exact size and the check of its fields),
 * framed, sent and received by common/ipc.h (ipc_send_fixed,
 * ipc_recv_fixed: one packet each, no allocation).
 *
 * The TPM process (the parent) holds the TPM and parses nothing else; the
 * network process (the child) parses HTTP and holds no TPM. They talk over
 * a SOCK_SEQPACKET socketpair (agent_procs, agent.h), one message per packet:
 *
 *   TPM -> network   AGENT_MSG_IDENTITY         once, at start: EK, EK certificate, AK
 *   network -> TPM   AGENT_MSG_QUOTE            nonce <= 64 bytes, bank, mask < 2^24
 *   TPM -> network   AGENT_MSG_QUOTE_ANSWER     attest, signature, the bank's PCRs
 *   network -> TPM   AGENT_MSG_ACTIVATE         two blobs <= 512 bytes, the agent id
 *   TPM -> network   AGENT_MSG_ACTIVATE_ANSWER  HMAC-SHA256(secret, id): the secret stays
 *
 * The receiver (ipc_recv_fixed) checks that the packet is exactly the size
 * of a type it expects and that every length and field is in range; on a
 * violation it returns -EPROTO and the caller exits (the peer is not
 * trusted to be sane). This file does not open the TPM nor speak HTTP.
 */
#ifndef VIGIL_AGENT_PROTO_H
#define VIGIL_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"
#include "vigil/hash.h"
#include "vigil/pcr.h"
#include "vigil/tpm_attest.h"

#include "ipc.h"

enum agent_msg_type {
	AGENT_MSG_IDENTITY = 1,
	AGENT_MSG_QUOTE,
	AGENT_MSG_QUOTE_ANSWER,
	AGENT_MSG_ACTIVATE,
	AGENT_MSG_ACTIVATE_ANSWER,
	AGENT_MSG__COUNT
};

#define AGENT_BLOB_MAX 512		/* a credential blob of TPM2_ActivateCredential */
#define AGENT_ID_MAX 128		/* the agent id, with its NUL */
#define AGENT_MSG_TEXT VG_DIAG_MAX		/* an error message, with its NUL */
#define AGENT_PROOF_LEN 32		/* HMAC-SHA256 */

struct agent_msg_identity {
	uint32_t ek_pub_len, ek_cert_len, ak_pub_len;
	uint8_t ek_pub[VG_ATPM_PUB_MAX], ek_cert[VG_ATPM_CERT_MAX], ak_pub[VG_ATPM_PUB_MAX];
};

struct agent_msg_quote {
	uint32_t nonce_len;
	uint8_t nonce[VG_ATTEST_NONCE_MAX];
	uint32_t bank;			/* enum vg_hash_algo, < VG_HASH__LAST */
	uint32_t mask;			/* PCRs, < 2^VG_PCR_COUNT */
};

struct agent_msg_quote_answer {
	int32_t err;			/* 0 or a negative errno (then @msg says why) */
	char msg[AGENT_MSG_TEXT];
	uint32_t attest_len;
	uint8_t attest[VG_ATPM_ATTEST_MAX];
	uint32_t sig_len;
	uint8_t sig[VG_ATPM_SIG_MAX];
	uint32_t have;			/* PCRs of the bank in @pcr */
	uint8_t pcr[VG_PCR_COUNT][VG_HASH_MAX_DIGEST];
};

struct agent_msg_activate {
	uint32_t id_len;
	uint8_t id_object[AGENT_BLOB_MAX];
	uint32_t es_len;
	uint8_t enc_secret[AGENT_BLOB_MAX];
	char agent_id[AGENT_ID_MAX];	/* NUL-terminated */
};

struct agent_msg_activate_answer {
	int32_t err;			/* 0 or a negative errno (then @msg says why) */
	char msg[AGENT_MSG_TEXT];
	uint8_t proof[AGENT_PROOF_LEN];	/* HMAC-SHA256(secret, agent_id) */
};

/* A buffer any message fits in. */
union agent_msg {
	struct agent_msg_identity identity;
	struct agent_msg_quote quote;
	struct agent_msg_quote_answer quote_answer;
	struct agent_msg_activate activate;
	struct agent_msg_activate_answer activate_answer;
};

/* The table: each type's exact size and the check of its fields. */
extern const struct ipc_proto agent_proto;

/*
 * agent_chan - @ch on @fd (the SOCK_SEQPACKET pair) for agent_proto, a
 * violation returned as -EPROTO (the caller logs and exits), named @who.
 * Return: 0, -errno.
 */
int agent_chan(struct ipc_chan *ch, int fd, const char *who);

#endif
