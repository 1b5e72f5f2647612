/* SPDX-License-Identifier: MIT */
/*
 * agent_tamper.h - the attacker simulation of the test build
 * vigil-agent-tamper (compiled with -DVIGIL_AGENT_TAMPER, never
 * installed). Its --tamper-file FILE is read per request; the first word
 * makes the agent misbehave the way an attacker would, so that the
 * verifier's refusals can be tested end to end (t0501):
 *
 *   forge-ak       a software P-256 key dressed as a TPM AK
 *   wrong-ek-cert  the EK certificate's signature no longer verifies
 *   replay-quote   the first quote answered, again
 *   wrong-nonce    the quote signs another nonce than the one asked
 *   alter-log      the last entry's file digest changed
 *   truncate-log   the last entry cut off
 *
 * In the shipped vigil-agent every hook below is an empty inline: the
 * binary has no --tamper-file option and none of this code.
 */
#ifndef VIGIL_AGENT_TAMPER_H
#define VIGIL_AGENT_TAMPER_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/attest_api.h"

#include "agent.h"

#ifdef VIGIL_AGENT_TAMPER

/* /v1/identity: @cert (@cert_len bytes) and @ak (*@ak_len bytes, room for VG_ATPM_PUB_MAX) as served. */
void agent_tamper_identity(struct agent *a, uint8_t *cert, size_t cert_len, uint8_t *ak,
			   size_t *ak_len);
/* /v1/quote before the TPM is asked: a quote text to replay (owned by @a), or NULL; may change @qr. */
const char *agent_tamper_quote(struct agent *a, struct vg_api_quote_req *qr);
/* /v1/quote answered with @ans: the first is kept for replay-quote. */
void agent_tamper_quote_sent(struct agent *a, const char *ans);
/* /v1/log: the @len bytes of @buf as served (*@len may shrink). */
void agent_tamper_log(struct agent *a, uint8_t *buf, size_t *len);
/* At exit. */
void agent_tamper_release(struct agent *a);

#else

static inline void agent_tamper_identity(struct agent *a, uint8_t *cert, size_t cert_len,
					 uint8_t *ak, size_t *ak_len)
{
	(void)a, (void)cert, (void)cert_len, (void)ak, (void)ak_len;
}

static inline const char *agent_tamper_quote(struct agent *a, struct vg_api_quote_req *qr)
{
	(void)a, (void)qr;
	return NULL;
}

static inline void agent_tamper_quote_sent(struct agent *a, const char *ans)
{
	(void)a, (void)ans;
}

static inline void agent_tamper_log(struct agent *a, uint8_t *buf, size_t *len)
{
	(void)a, (void)buf, (void)len;
}

static inline void agent_tamper_release(struct agent *a)
{
	(void)a;
}

#endif
#endif
