/* SPDX-License-Identifier: MIT */
/*
 * attest_api.h - the REST messages of remote attestation as pure
 * functions: bytes (a JSON body, a query parameter, a URL) in, a checked
 * struct or -EBADMSG out. vigil-verifier and vigil-agent only move these
 * between libmicrohttpd/libcurl and the library, so everything a hostile
 * peer sends is parsed here, and fuzzed here (tests/fuzz/fuzz_http_api.c).
 *
 *   operator -> verifier   POST /v1/agents {id, url, policy}
 *                          PUT /v1/agents/ID/policy {policy}
 *                          the URL itself (vg_api_route; every route and
 *                          the role it needs: vg_api_routes)
 *   verifier -> agent      GET /v1/quote?nonce=HEX&bank=ALGO&mask=HEX
 *                          GET /v1/log?offset=N
 *                          POST /v1/activate {id_object, enc_secret}
 *   agent -> verifier      {id, ek_pub, ek_cert, ak_pub}      (identity)
 *                          {proof}                            (activate)
 *                          {attest, sig, bank, pcrs: {"N": hex}}  (quote)
 *   push mode: the agent opens every connection (docs/attest-push.md)
 *                          POST /v1/push/ID/register (identity) -> activate request
 *                          POST /v1/push/ID/activate {proof}
 *                          POST /v1/push/ID/nonce -> challenge
 *                          POST /v1/push/ID/evidence (push)
 *
 * Every parser is strict: the whole buffer is one JSON object (trailing
 * whitespace allowed), strings are of the right type and size, numbers
 * are canonical decimal or hex without signs, spaces or overflow. Unknown
 * keys are ignored (forward compatibility). Every message the agent or
 * verifier sends has a builder here; parse(build(x)) == x.
 *
 * Not here: HTTP itself (methods, headers, timeouts: the daemons), the
 * measurement list bytes (vg_attest_log_check), TPM structures inside the
 * base64 (vg_attest_quote_decode and friends).
 */
#ifndef VIGIL_ATTEST_API_H
#define VIGIL_ATTEST_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"
#include "vigil/attest_ear.h"
#include "vigil/diag.h"
#include "vigil/pcrbank.h"

#define VG_API_ID_MAX 128		/* agent id / policy name, with the NUL */
#define VG_API_URL_MAX 256		/* agent URL, with the NUL */
#define VG_API_PUB_MAX 1024		/* marshalled TPM2B_PUBLIC */
#define VG_API_CERT_MAX 4096		/* EK certificate, DER */
#define VG_API_BLOB_MAX 512		/* credential blobs */
#define VG_API_ATTEST_MAX 1024		/* TPMS_ATTEST */
#define VG_API_SIG_MAX 1024		/* TPMT_SIGNATURE */
#define VG_API_MSG_MAX (1u << 20)	/* any JSON message between the daemons */

/* [A-Za-z0-9._-]{1,127}: agent ids and policy names. */
bool vg_api_id_ok(const char *s, size_t len);

/* ---- operator -> verifier ---- */

enum vg_api_endpoint {
	VG_API_AGENTS = 1,		/* GET list, POST register */
	VG_API_AGENT,			/* GET status, DELETE */
	VG_API_AGENT_HISTORY,		/* GET */
	VG_API_AGENT_REACTIVATE,	/* POST */
	VG_API_AGENT_POLICY,		/* PUT */
	VG_API_AGENT_EAR,		/* GET: its latest verdict as a signed EAR (attest_ear.h) */
	VG_API_POLICY,			/* GET, PUT */
	VG_API_VERIFY_EVIDENCE,		/* POST: one round, no registered agent */
	VG_API_VERIFIERS,		/* GET: the verifiers sharing the store, their heartbeats */
	VG_API_METRICS,			/* GET: Prometheus text */
	VG_API_UI_PAGE,			/* GET: the operators' page (docs/web.md) */
	VG_API_UI_SCRIPT,		/* GET: its script */
	VG_API_UI_STYLE,		/* GET: its style sheet */
	VG_API_PUSH_REGISTER,		/* POST /v1/push/ID/register: identity, answered with MakeCredential */
	VG_API_PUSH_ACTIVATE,		/* POST /v1/push/ID/activate: the proof */
	VG_API_PUSH_NONCE,		/* POST /v1/push/ID/nonce: a challenge for one quote */
	VG_API_PUSH_EVIDENCE,		/* POST /v1/push/ID/evidence: quote, list, boot log */
};

/*
 * One route the verifier serves: @method on @path, where "{id}" (an agent
 * id) and "{name}" (a policy name) stand for one vg_api_id_ok segment;
 * @role is what the request must prove: VG_AUTH_READ or VG_AUTH_ADMIN
 * (vigil/auth.h; admin implies read), VG_AUTH_AGENT (a pushing agent's
 * credential, good for nothing else), or 0 for none (the page's static
 * files, which carry no data).
 */
struct vg_api_route_def {
	const char *method;
	const char *path;
	enum vg_api_endpoint ep;
	unsigned int role;
};

/*
 * vg_api_routes - every route of the verifier, in one table: vg_api_route
 * takes each endpoint's methods and required role from it (a method not
 * listed is 405, an endpoint not listed is never served), and
 * docs/openapi.json is compared with it (tests/cli/t0515-verifier-web.sh).
 * Return: the table, its length in *@n.
 */
const struct vg_api_route_def *vg_api_routes(size_t *n);

struct vg_api_route {
	enum vg_api_endpoint ep;
	char id[VG_API_ID_MAX];		/* agent id or policy name ("" for the others) */
	unsigned int role;		/* the route's, from vg_api_routes (on 0 only) */
};

/*
 * vg_api_route - the verifier's endpoint for @method and @url (the path,
 * without the query), with the role it needs.
 * Return: 0; -ENOENT (no such endpoint: 404), -EBADMSG (an id or name
 * that is not vg_api_id_ok: 400, diag says), -EOPNOTSUPP (method not
 * allowed there: 405, diag names the allowed ones).
 */
int vg_api_route(const char *method, const char *url, struct vg_api_route *ret,
		 struct vg_diag *diag);

#define VG_API_PATH_MAX 1024		/* a request path, decoded, with the NUL */

/*
 * vg_api_path_decode - the path of a request URI as sent (up to '?' or
 * '#'), percent-decoded strictly: every '%' is followed by two hex
 * digits, and neither the URI nor what it decodes to holds a control
 * byte (NUL included: "/v1/agents/h1%00x" is not "/v1/agents/h1"), and
 * '/' is not encoded (it would move a route's boundaries). Routes are
 * found on this, never on a decoding that stops at a NUL.
 * Return: the decoded length (@out NUL-terminated), -EBADMSG (diag says
 * which byte), -ENAMETOOLONG (does not fit @cap).
 */
int vg_api_path_decode(const char *uri, char *out, size_t cap, struct vg_diag *diag);

struct vg_api_register {
	char id[VG_API_ID_MAX];		/* "" = the id the agent's identity says */
	char url[VG_API_URL_MAX];	/* http:// or https://, printable, no spaces */
	char policy[VG_API_ID_MAX];	/* "" = none */
};

/* POST /v1/agents body. Return: 0, -EBADMSG (diag names the field). */
int vg_api_register_parse(const uint8_t *body, size_t len, struct vg_api_register *ret,
			  struct vg_diag *diag);

/* PUT /v1/agents/ID/policy body {"policy": NAME}; "" unassigns. Return: 0, -EBADMSG. */
int vg_api_policy_assign_parse(const uint8_t *body, size_t len, char name[VG_API_ID_MAX],
			       struct vg_diag *diag);

/*
 * POST /v1/verify/evidence: the evidence of one round judged with no
 * registered agent, in Keylime's request shape:
 *   {"type": "tpm", "data": {"quote": Q, "nonce": STR | "nonce_hex": HEX,
 *    "hash_alg": BANK, "tpm_ak": b64 TPM2B_PUBLIC, "tpm_ek": ignored,
 *    "tpm_policy": "{\"mask\": \"0x...\"}", "runtime_policy": DOC |
 *    "runtime_policy_name": NAME, "mb_policy": MB, "ima_measurement_list":
 *    ASCII LIST, "mb_log": b64 TCG log}}
 * Q is Keylime's "r<b64 attest>:<b64 sig>:<b64 tpm2-tools PCRs>" or the
 * object vigil-agent answers GET /v1/quote with. The nonce's bytes are the
 * quote's extraData (Keylime sends text). DOC is any policy form
 * vg_refpolicy_load reads, as a string or as JSON; MB a measured-boot
 * policy (vg_mbpolicy_load: Keylime's reference state, or vigil's
 * section), judged as the policy's measured_boot section; one of DOC, NAME
 * and MB at least (MB alone: an empty runtime policy). What vigil would
 * not enforce is refused: PCR values pinned in tpm_policy.
 * "" is absent, as Keylime reads it. Beside "type" and "data", vigil's
 * own: "ear": true asks for the verdict as a signed EAR, "eat_nonce": a
 * nonce for it (8..64 of [A-Za-z0-9._~-]).
 */
#define VG_API_EVIDENCE_MAX (64u << 20)	/* bytes of one request */

struct vg_api_evidence {
	uint8_t attest[VG_API_ATTEST_MAX];
	size_t attest_len;
	uint8_t sig[VG_API_SIG_MAX];
	size_t sig_len;
	struct vg_pcr_values pcrs;	/* claimed values of the quoted PCRs */
	uint8_t nonce[VG_ATTEST_NONCE_MAX];
	size_t nonce_len;
	unsigned int bank;		/* hash_alg */
	uint8_t ak[VG_API_PUB_MAX];
	size_t ak_len;
	uint32_t mask;			/* tpm_policy's; 0: none given */
	char *policy;			/* runtime_policy, NUL-terminated; NULL: by name */
	size_t policy_len;
	char policy_name[VG_API_ID_MAX];
	char *log;			/* ascii list, NUL-terminated; NULL: none */
	size_t log_len;
	uint8_t *mb_log;		/* NULL: none */
	size_t mb_len;
	char *mb_policy;		/* mb_policy, NUL-terminated; NULL: none */
	size_t mb_policy_len;
	bool ear;			/* "ear": true: the answer is a signed EAR (attest_ear.h) */
	char eat_nonce[VG_EAR_NONCE_MAX + 1];	/* "eat_nonce" (vg_ear_nonce_ok), "" none */
};

/* Return: 0, -EBADMSG (diag names the parameter: a 400), -ENOMEM. */
int vg_api_evidence_parse(const uint8_t *body, size_t len, struct vg_api_evidence *ret,
			  struct vg_diag *diag);
/* Free what @e holds (not @e). */
void vg_api_evidence_release(struct vg_api_evidence *e);

/*
 * vg_api_keylime_quote_parse - Keylime's quote string "r" b64(TPMS_ATTEST)
 * ":" b64(TPMT_SIGNATURE) ":" b64(tpm2-tools PCR values) into @e's attest,
 * sig and pcrs (nothing else of @e is touched). Return: 0, -EBADMSG (diag
 * says which part), -ENOMEM.
 */
int vg_api_keylime_quote_parse(const char *s, struct vg_api_evidence *e, struct vg_diag *diag);

/* ---- verifier -> agent ---- */

struct vg_api_quote_req {
	uint8_t nonce[VG_ATTEST_NONCE_MAX];
	size_t nonce_len;		/* VG_API_NONCE_MIN..VG_ATTEST_NONCE_MAX */
	unsigned int bank;		/* vg hash algo with a TPM algorithm id */
	uint32_t mask;			/* 1..2^24-1 */
};

#define VG_API_NONCE_MIN 8

/*
 * vg_api_quote_query_parse - the three query parameters of GET /v1/quote
 * (any may be NULL = missing): nonce lower/upper hex of 8..64 bytes, bank
 * a hash name the TPM knows (sha1, sha256, sha384, sha512, sm3-256), mask
 * hex (no 0x, no sign) of PCRs 0..23, not zero.
 * Return: 0, -EBADMSG (diag names the parameter).
 */
int vg_api_quote_query_parse(const char *nonce, const char *bank, const char *mask,
			     struct vg_api_quote_req *ret, struct vg_diag *diag);

/* The query string "nonce=..&bank=..&mask=.." for @q. Return: length, -ENOSPC. */
int vg_api_quote_query_build(const struct vg_api_quote_req *q, char *buf, size_t cap);

/* GET /v1/log?offset=N: NULL is 0; else decimal digits only, <= 2^63-1. Return: 0, -EBADMSG. */
int vg_api_log_query_parse(const char *offset, uint64_t *ret, struct vg_diag *diag);

struct vg_api_activate {
	uint8_t id_object[VG_API_BLOB_MAX];
	size_t id_len;			/* 1..VG_API_BLOB_MAX */
	uint8_t enc_secret[VG_API_BLOB_MAX];
	size_t es_len;			/* 1..VG_API_BLOB_MAX */
};

/* POST /v1/activate body. Return: 0, -EBADMSG, -ENOMEM. */
int vg_api_activate_parse(const uint8_t *body, size_t len, struct vg_api_activate *ret,
			  struct vg_diag *diag);
/* Return: length of the malloc'd NUL-terminated JSON in *@ret, -ENOMEM. */
long vg_api_activate_build(const struct vg_api_activate *a, char **ret);

/* ---- agent -> verifier ---- */

struct vg_api_identity {
	char id[VG_API_ID_MAX];		/* may be "" (not sent) */
	uint8_t ek_pub[VG_API_PUB_MAX];
	size_t ek_pub_len;		/* >= 1 */
	uint8_t ek_cert[VG_API_CERT_MAX];
	size_t ek_cert_len;		/* 0: the TPM has none */
	uint8_t ak_pub[VG_API_PUB_MAX];
	size_t ak_pub_len;		/* >= 1 */
};

/* GET /v1/identity answer. Return: 0, -EBADMSG, -ENOMEM. */
int vg_api_identity_parse(const uint8_t *buf, size_t len, struct vg_api_identity *ret,
			  struct vg_diag *diag);
long vg_api_identity_build(const struct vg_api_identity *id, char **ret);

/* POST /v1/activate answer {"proof": 64 hex}. Return: 0, -EBADMSG. */
int vg_api_proof_parse(const uint8_t *buf, size_t len, uint8_t proof[32], struct vg_diag *diag);
long vg_api_proof_build(const uint8_t proof[32], char **ret);

struct vg_api_quote {
	uint8_t attest[VG_API_ATTEST_MAX];
	size_t attest_len;		/* >= 1 */
	uint8_t sig[VG_API_SIG_MAX];
	size_t sig_len;			/* >= 1 */
	unsigned int bank;
	uint32_t have;			/* PCRs of @bank given */
	struct vg_digest pcr[VG_PCR_COUNT];
};

/*
 * vg_api_quote_parse - GET /v1/quote answer for a request in @bank:
 * attest and sig base64, "bank" (if present) the requested one, "pcrs" an
 * object of canonical decimal PCR numbers 0..23 to hex values of the
 * bank's size.
 * Return: 0, -EBADMSG (diag names the field), -ENOMEM.
 */
int vg_api_quote_parse(const uint8_t *buf, size_t len, unsigned int bank, struct vg_api_quote *ret,
		       struct vg_diag *diag);
long vg_api_quote_build(const struct vg_api_quote *q, char **ret);

/* The PCR values of @q into @pv (the form vg_attest_evidence_check takes). */
void vg_api_quote_pcrs(const struct vg_api_quote *q, struct vg_pcr_values *pv);

/* ---- push mode: the agent asks, the verifier answers ---- */

/*
 * The verifier's answer to POST /v1/push/ID/nonce: what to quote (nonce,
 * bank, mask as GET /v1/quote's query would say), the byte offset of the
 * measurement list the verifier has judged (send the list from there),
 * and whether to send the boot event log:
 *   {"nonce": HEX, "bank": ALGO, "mask": HEX, "log_offset": "N", "boot_log": BOOL,
 *    "interval_ms": N}
 */
struct vg_api_challenge {
	struct vg_api_quote_req q;
	uint64_t log_offset;
	bool boot_log;
	uint32_t interval_ms;		/* push again this long after this push (0: not said) */
};

/* Return: 0, -EBADMSG (diag names the field), -ENOMEM. */
int vg_api_challenge_parse(const uint8_t *buf, size_t len, struct vg_api_challenge *ret,
			   struct vg_diag *diag);
/* Return: length of the malloc'd NUL-terminated JSON in *@ret, -ENOMEM, -ENOSPC. */
long vg_api_challenge_build(const struct vg_api_challenge *c, char **ret);

/*
 * POST /v1/push/ID/evidence: the answers the agent would have served in
 * pull mode, as it would have served them:
 *   {"nonce": HEX, "quote": STR, "log_offset": "N", "log": B64, "boot_log": B64}
 * quote is the text of GET /v1/quote's answer (parsed later by
 * vg_api_quote_parse, as a pulled one), log the binary list from
 * log_offset (absent: none sent), boot_log the TCG log (absent: none
 * sent; "" the host has none).
 */
struct vg_api_push {
	uint8_t nonce[VG_ATTEST_NONCE_MAX];
	size_t nonce_len;		/* VG_API_NONCE_MIN..VG_ATTEST_NONCE_MAX */
	char *quote;			/* NUL-terminated, malloc'd */
	size_t quote_len;
	uint64_t log_offset;
	uint8_t *log;			/* malloc'd when have_log (may be NULL if empty) */
	size_t log_len;
	bool have_log;
	uint8_t *boot_log;		/* malloc'd when have_boot (may be NULL if empty) */
	size_t boot_len;
	bool have_boot;
};

/* Return: 0, -EBADMSG (diag names the field), -ENOMEM. @max: bytes of the body. */
int vg_api_push_parse(const uint8_t *buf, size_t len, size_t max, struct vg_api_push *ret,
		      struct vg_diag *diag);
/* Return: length of the malloc'd NUL-terminated JSON in *@ret, -ENOMEM. */
long vg_api_push_build(const struct vg_api_push *p, char **ret);
/* Free what @p holds (not @p). NULL-safe. */
void vg_api_push_release(struct vg_api_push *p);

#endif
