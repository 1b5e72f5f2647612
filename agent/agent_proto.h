/* SPDX-License-Identifier: MIT */
/*
 * agent_proto.h - the only messages between vigil-agent's two processes,
 * in the manner of OpenBSD ntpd/relayd's imsg: one enum of types, one
 * fixed-size struct per type, each starting with its type.
 *
 * The TPM process (the parent) holds the TPM and parses nothing else; the
 * network process (the child) parses HTTP and holds no TPM. They talk over
 * a SOCK_SEQPACKET socketpair, one message per packet:
 *
 *   TPM -> network   AGENT_MSG_IDENTITY         once, at start: EK, EK certificate, AK
 *   network -> TPM   AGENT_MSG_QUOTE            nonce <= 64 bytes, bank, mask < 2^24
 *   TPM -> network   AGENT_MSG_QUOTE_ANSWER     attest, signature, the bank's PCRs
 *   network -> TPM   AGENT_MSG_ACTIVATE         two blobs <= 512 bytes, the agent id
 *   TPM -> network   AGENT_MSG_ACTIVATE_ANSWER  HMAC-SHA256(secret, id): the secret stays
 *
 * The receiver (agent_msg_recv) checks that the packet is exactly the size
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

enum agent_msg_type {
	AGENT_MSG_IDENTITY = 1,
	AGENT_MSG_QUOTE,
	AGENT_MSG_QUOTE_ANSWER,
	AGENT_MSG_ACTIVATE,
	AGENT_MSG_ACTIVATE_ANSWER,
};

#define AGENT_BLOB_MAX 512		/* a credential blob of TPM2_ActivateCredential */
#define AGENT_ID_MAX 128		/* the agent id, with its NUL */
#define AGENT_MSG_TEXT VG_DIAG_MAX		/* an error message, with its NUL */
#define AGENT_PROOF_LEN 32		/* HMAC-SHA256 */

struct agent_msg_identity {
	uint32_t type;
	uint32_t ek_pub_len, ek_cert_len, ak_pub_len;
	uint8_t ek_pub[VG_ATPM_PUB_MAX], ek_cert[VG_ATPM_CERT_MAX], ak_pub[VG_ATPM_PUB_MAX];
};

struct agent_msg_quote {
	uint32_t type;
	uint32_t nonce_len;
	uint8_t nonce[VG_ATTEST_NONCE_MAX];
	uint32_t bank;			/* enum vg_hash_algo, < VG_HASH__LAST */
	uint32_t mask;			/* PCRs, < 2^VG_PCR_COUNT */
};

struct agent_msg_quote_answer {
	uint32_t type;
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
	uint32_t type;
	uint32_t id_len;
	uint8_t id_object[AGENT_BLOB_MAX];
	uint32_t es_len;
	uint8_t enc_secret[AGENT_BLOB_MAX];
	char agent_id[AGENT_ID_MAX];	/* NUL-terminated */
};

struct agent_msg_activate_answer {
	uint32_t type;
	int32_t err;			/* 0 or a negative errno (then @msg says why) */
	char msg[AGENT_MSG_TEXT];
	uint8_t proof[AGENT_PROOF_LEN];	/* HMAC-SHA256(secret, agent_id) */
};

/* A buffer any message fits in. */
union agent_msg {
	uint32_t type;
	struct agent_msg_identity identity;
	struct agent_msg_quote quote;
	struct agent_msg_quote_answer quote_answer;
	struct agent_msg_activate activate;
	struct agent_msg_activate_answer activate_answer;
};

/* The exact size of a message of @type. Return: the size, or 0 for no such type. */
size_t agent_msg_size(uint32_t type);

/*
 * agent_msg_send - @m (its size from its type) as one packet on @fd.
 * Return: 0, -EINVAL (no such type), -EIO (short send), or send()'s -errno.
 */
int agent_msg_send(int fd, const union agent_msg *m);

/*
 * agent_msg_recv - one packet from @fd into @m, accepted only when it is
 * exactly a message of a type in @want (a bit mask: 1u << type), with
 * every length and field in range.
 * Return: 1 a message, 0 the peer hung up, -EPROTO a violation (wrong
 * size, type or field: the caller exits), or recv()'s -errno (-EINTR
 * too: the TPM process looks at its stop flag, the network process
 * retries).
 */
int agent_msg_recv(int fd, union agent_msg *m, uint32_t want);

#endif
