/* SPDX-License-Identifier: MIT */
/*
 * store_ipc.h - every message between vigil-verifier's processes, in one
 * enum (the OpenBSD ntpd/relayd way): the network process asks the store
 * process (which alone holds the database credentials, store_proc.c) and
 * the hook process (which runs --on-fail, privsep_hook.c) over
 * socketpairs, and the key process (which alone holds the API's TLS key,
 * keyproc.c).
 *
 * The framing, the exact-length checks and the end of a peer that
 * breaks the protocol are common/ipc.h's; this header is the verifier's
 * table: every type, its payload's bounds (store_ipc.c) and its fields.
 * Payloads are fields (ipc_put_* / ipc_get_*), integers as uint32 /
 * int64, variable-length fields as a uint32 length and the bytes, each
 * length checked against the field's cap; a reply that does not answer
 * the request ends the receiver too.
 *
 * Requests and their replies (network -> store unless said):
 *   AGENT_PUT agent              -> DONE
 *   AGENT_GET id                 -> [AGENT] DONE   (AGENT when r == 0)
 *   AGENT_DEL id                 -> DONE
 *   AGENT_LIST                   -> AGENT* DONE    (rows streamed)
 *   AGENT_UPDATE old agent       -> DONE
 *   AGENT_FIND key value except  -> [AGENT] DONE   (uint32 key, the column's bytes, an id)
 *   AGENT_DUE before             -> DUE* DONE      (int64 wall ms; a struct vg_store_due
 *                                   each: id, uint32 state, uint32 push, int64 registered_at,
 *                                   last_ok, last_seen, next_due, lease_until)
 *   PUSH verb req                -> [PUSH_ROW] DONE (the push op: a struct
 *                                   vg_store_push_req each way, PUSH_ROW when it succeeded)
 *   POLICY_PUT name doc          -> DONE
 *   POLICY_GET name              -> [POLICY] DONE
 *   POLICY_DEL name              -> DONE
 *   VERDICT_ADD id verdict       -> DONE
 *   VERDICT_LIST id max          -> VERDICT* DONE
 *   SET_TIMEOUT ms               -> DONE
 *   LEASE_RELEASE id owner due   -> DONE
 *   LEASE_TAKE done due owner now lease max -> AGENT* DONE (vg_store_lease_take:
 *                                   "done" released, then the claimed agents' rows;
 *                                   the client's lease_claim is one with no "done")
 *   AGENT_STATES                 -> [STATES] DONE  (int64 count of each state)
 *   VERIFIER_BEAT verifier       -> DONE
 *   VERIFIER_LIST                -> VERIFIER* DONE
 *   OPEN_RESULT (store -> network, once, at start) = a DONE
 *   HOOK_RUN agent failure message path (network -> hook) -> HOOK_DONE
 *   KEY_INFO flags, KEY_SIGN_DATA / KEY_SIGN_HASH algo flags bytes
 *     (network -> key process, keyproc.c) -> KEY_ANSWER
 *   EAR_SIGN bytes (network -> key process: a JWS signing input, signed
 *     with the --ear-key) -> KEY_ANSWER (the JWS-form signature)
 * DONE is: int32 result (0 or negative errno), uint32 diag set (0/1), the
 * diag's message. An agent is its 27 row columns (store_row.h) in order,
 * then its 3 scheduling columns, TEXT/BLOB as length + bytes, INT as
 * int64; a verdict its 6 columns, a verifier its 9.
 */
#ifndef VIGIL_VERIFIER_STORE_IPC_H
#define VIGIL_VERIFIER_STORE_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc.h"
#include "store.h"

enum sipc_type {
	SIPC_AGENT_PUT = 1,
	SIPC_AGENT_GET,
	SIPC_AGENT_DEL,
	SIPC_AGENT_LIST,
	SIPC_AGENT_UPDATE,
	SIPC_POLICY_PUT,
	SIPC_POLICY_GET,
	SIPC_POLICY_DEL,
	SIPC_VERDICT_ADD,
	SIPC_VERDICT_LIST,
	SIPC_SET_TIMEOUT,
	SIPC_DONE,		/* reply: the result of a request (and of the open) */
	SIPC_AGENT,		/* reply: one agent row */
	SIPC_VERDICT,		/* reply: one verdict row */
	SIPC_POLICY,		/* reply: a policy document */
	SIPC_HOOK_RUN,		/* network -> hook process */
	SIPC_HOOK_DONE,		/* hook process -> network: int32 exit status */
	SIPC_KEY_INFO,		/* network -> key process: uint32 flags (gnutls_privkey_info_func) */
	SIPC_KEY_SIGN_DATA,	/* uint32 algo, uint32 flags, the data to sign */
	SIPC_KEY_SIGN_HASH,	/* uint32 algo, uint32 flags, the hash to sign */
	SIPC_KEY_ANSWER,	/* key process -> network: int32 result, the signature */
	SIPC_LEASE_RELEASE,
	SIPC_VERIFIER_BEAT,
	SIPC_VERIFIER_LIST,
	SIPC_VERIFIER,		/* reply: one verifier row */
	SIPC_EAR_SIGN,		/* network -> key process: a JWS signing input (an EAR) -> KEY_ANSWER */
	SIPC_AGENT_FIND,
	SIPC_AGENT_DUE,		/* int64 before */
	SIPC_DUE,		/* reply: one struct vg_store_due */
	SIPC_LEASE_TAKE,
	SIPC_AGENT_STATES,
	SIPC_STATES,		/* reply: VG_STORE_STATES int64 counts */
	SIPC_PUSH,		/* uint32 verb, a struct vg_store_push_req */
	SIPC_PUSH_ROW,		/* reply: the struct vg_store_push_req after the op */
	SIPC_LEASE_DROP,	/* name id, name owner, int64 lease_until */
	SIPC__COUNT
};

/* caps of the variable-length fields */
#define SIPC_NAME_MAX 4096		/* an agent id, a policy name (a NUL ends it) */
#define SIPC_COL_MAX 4096		/* one TEXT/BLOB column of a row (ek_cert: 4096) */
#define SIPC_DOC_MAX (64u << 20)	/* a policy document (--max-body: 32 MiB by default) */
#define SIPC_MSG_MAX VG_DIAG_MAX	/* a diag message, whole (struct vg_diag) */
#define SIPC_HOOK_FIELD_MAX 1024	/* one field of HOOK_RUN */
#define SIPC_SIGN_IN_MAX 16384		/* what a TLS handshake has signed (data or hash) */
#define SIPC_SIG_MAX 2048		/* a signature (RSA 16384 bits) */
#define SIPC_EAR_IN_MAX (1u << 20)	/* an EAR's JWS signing input (64 failures: ~150 KiB) */

/* The verifier's protocol: every type above with its bounds (store_ipc.c). */
extern const struct ipc_proto sipc_proto;

/* The rows, field by field (the backends' own column values, store_row.h). */
void sipc_put_agent(struct ipc_out *o, const struct vg_store_agent *a);
void sipc_put_verdict(struct ipc_out *o, const struct vg_store_verdict *v);
void sipc_put_done(struct ipc_out *o, int r, const struct vg_diag *d);
void sipc_put_verifier(struct ipc_out *o, const struct vg_store_verifier *v);
void sipc_get_agent(struct ipc_in *in, struct vg_store_agent *a);
void sipc_get_verdict(struct ipc_in *in, struct vg_store_verdict *v);
void sipc_get_verifier(struct ipc_in *in, struct vg_store_verifier *v);
void sipc_put_due(struct ipc_out *o, const struct vg_store_due *a);
void sipc_get_due(struct ipc_in *in, struct vg_store_due *a);
void sipc_put_push(struct ipc_out *o, const struct vg_store_push_req *rq);
/* into *@rq (zeroed first); a field that does not decode marks @in bad */
void sipc_get_push(struct ipc_in *in, struct vg_store_push_req *rq);
/* DONE's fields: Return: the result; @d (may be NULL) set when the sender's was */
int sipc_get_done(struct ipc_in *in, struct vg_diag *d);

/*
 * sipc_chan - @ch on @fd for our processes' protocol; a violation ends
 * the receiver, named @who. sipc_socketpair: a SOCK_STREAM pair with
 * 4 MiB buffers (a policy document crosses in few context switches).
 */
void sipc_chan(struct ipc_chan *ch, int fd, const char *who);
int sipc_socketpair(int sv[2]);

#endif
