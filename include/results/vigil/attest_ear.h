/* SPDX-License-Identifier: MIT */
/*
 * attest_ear.h - a verdict as a signed EAR, the IETF's EAT Attestation
 * Result (draft-ietf-rats-ear): a JWT (RFC 7519, an EAT per RFC 9711)
 * whose claims are
 *
 *   {"eat_profile": "tag:github.com,2023:veraison/ear", "iat": SECONDS,
 *    "eat_nonce": NONCE (when the caller sent one),
 *    "ear.verifier-id": {"developer": ..., "build": ...},
 *    "submods": {NAME: {"ear.status": TIER,
 *                       "ear.trustworthiness-vector": {CLAIM: VALUE, ...},
 *                       "ear.appraisal-policy-id": POLICY,
 *                       "vigil.agent-id": ID, "vigil.state": STATE,
 *                       "vigil.failure-count": N,
 *                       "vigil.failures": [{"id", "entry", "path", "digest",
 *                                           "message"}, ...]}}}
 *
 * TIER and the vector are AR4SI's (draft-ietf-rats-ar4si): vg_ear_claim
 * maps each failure id to a claim and value (docs/attest-ear.md lists the
 * mapping). The JWS (RFC 7515, compact serialisation) is signed through
 * a callback, so that the key may live in another process; vg_jws_sign_pkey
 * is that signer for an EVP_PKEY (ES256/ES384/ES512 for EC keys, the
 * signature converted from DER to JWS's r||s; PS256 or RS256 for RSA; EdDSA
 * for Ed25519). Nothing here does I/O.
 */
#ifndef VIGIL_ATTEST_EAR_H
#define VIGIL_ATTEST_EAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "vigil/attest.h"
#include "vigil/diag.h"

#define VG_EAR_PROFILE "tag:github.com,2023:veraison/ear"
#define VG_EAR_MEDIA_TYPE "application/eat+jwt"
#define VG_EAR_NONCE_MIN 8		/* eat_nonce: RFC 9711's 8..64 bytes */
#define VG_EAR_NONCE_MAX 64
#define VG_JWS_SIG_MAX 1024		/* a JWS signature (RSA 8192 bits) */

enum vg_jws_alg {
	VG_JWS_NONE = 0,
	VG_JWS_ES256,
	VG_JWS_ES384,
	VG_JWS_ES512,
	VG_JWS_PS256,
	VG_JWS_RS256,
	VG_JWS_EDDSA,
};

/* Return: "ES256" etc. (JWA names), NULL out of range or VG_JWS_NONE. */
const char *vg_jws_alg_name(unsigned int alg);

/*
 * vg_jws_alg_for_key - the JWS algorithm @pk dictates: EC P-256 ES256,
 * P-384 ES384, P-521 ES512; RSA (2048 bits at least) PS256, or RS256 when
 * @rsa_pkcs1; Ed25519 EdDSA.
 * Return: the enum vg_jws_alg; -EOPNOTSUPP (another key type or curve, an
 * RSA key under 2048 bits: diag says).
 */
int vg_jws_alg_for_key(EVP_PKEY *pk, bool rsa_pkcs1, struct vg_diag *diag);

/*
 * A signer: the JWS signature of @in (the ASCII signing input,
 * BASE64URL(header) "." BASE64URL(payload)) in JWS form (ECDSA r||s), at
 * most VG_JWS_SIG_MAX bytes into @sig, its length in *@siglen.
 * Return: 0 or a negative errno.
 */
typedef int (*vg_jws_sign_fn)(void *arg, const uint8_t *in, size_t len, uint8_t *sig,
			      size_t *siglen);

/*
 * vg_jws_sign_pkey - sign @in with @pk under @alg (as vg_jws_alg_for_key
 * says), the signature in JWS form into @sig (VG_JWS_SIG_MAX bytes).
 * Return: 0; -EOPNOTSUPP (@alg not for @pk), -EIO (OpenSSL: diag says),
 * -ENOMEM.
 */
int vg_jws_sign_pkey(EVP_PKEY *pk, unsigned int alg, const uint8_t *in, size_t len,
		     uint8_t sig[VG_JWS_SIG_MAX], size_t *siglen, struct vg_diag *diag);

/*
 * vg_jws_compact - the JWS compact serialisation of @payload: header
 * {"alg": ALG, "typ": @typ (NULL: none)}, signed by @sign.
 * *@ret is malloc'd, NUL-terminated.
 * Return: its length; the signer's error, -ENOMEM.
 */
int vg_jws_compact(unsigned int alg, const char *typ, const uint8_t *payload, size_t len,
		   vg_jws_sign_fn sign, void *arg, char **ret, struct vg_diag *diag);

/*
 * vg_jws_verify_pkey - verify compact JWS @jws with @pk: the header's alg
 * must be the one @pk dictates (either RSA one for an RSA key) and the
 * signature must verify. *@ret_payload (malloc'd, NUL-terminated, may be
 * NULL) is the decoded payload, set only on success.
 * Return: the payload's length; -EBADMSG (not a JWS, the header: diag
 * says), -EKEYREJECTED (signature does not verify, or alg not the key's),
 * -ENOMEM.
 */
int vg_jws_verify_pkey(EVP_PKEY *pk, const char *jws, size_t len, char **ret_payload,
		       struct vg_diag *diag);

/* base64url without padding of @len bytes into @out (4 * ceil(len / 3) + 1 bytes). Return: length. */
size_t vg_b64url_encode(const uint8_t *in, size_t len, char *out);
/* Return: decoded length into @out (at least len * 3 / 4 + 1), -EBADMSG. */
int vg_b64url_decode(const char *in, size_t len, uint8_t *out);

/* AR4SI's trustworthiness claims, in its order */
enum vg_ear_claim {
	VG_EAR_INSTANCE_IDENTITY = 0,
	VG_EAR_CONFIGURATION,
	VG_EAR_EXECUTABLES,
	VG_EAR_FILE_SYSTEM,
	VG_EAR_HARDWARE,
	VG_EAR_RUNTIME_OPAQUE,
	VG_EAR_STORAGE_OPAQUE,
	VG_EAR_SOURCED_DATA,
	VG_EAR__CLAIMS
};

/* AR4SI's tiers: ear.status */
enum vg_ear_tier {
	VG_EAR_TIER_NONE = 0,
	VG_EAR_TIER_AFFIRMING,
	VG_EAR_TIER_WARNING,
	VG_EAR_TIER_CONTRAINDICATED,
};

/* Return: "instance-identity" etc., NULL out of range. */
const char *vg_ear_claim_name(unsigned int c);
/* Return: "none", "affirming", "warning", "contraindicated"; NULL out of range. */
const char *vg_ear_tier_name(unsigned int t);
/* The tier of an AR4SI claim value: -1..1 none, 2..31 affirming, 32..95 warning, 96..127 contraindicated. */
unsigned int vg_ear_tier_of(int value);

/*
 * vg_ear_claim - the AR4SI claim and value failure @fail (enum
 * vg_attest_fail) stands for. Return: true; false for what is no
 * appraisal failure (none, state.reboot, agent.comm, state.late,
 * state.stale: no claim).
 */
bool vg_ear_claim(unsigned int fail, unsigned int *claim, int *value);

/* What the verifier knows of the agent: the tier cannot be better than this. */
enum vg_ear_subject {
	VG_EAR_JUDGED = 0,		/* @v is the verdict of its latest round */
	VG_EAR_NOT_YET,			/* registered, no round judged: status none */
	VG_EAR_UNREACHABLE,		/* its latest round got no evidence: status none */
};

/*
 * What the verifier proved of the AK the quote was verified with: the
 * basis of instance-identity (docs/attest-ear.md). Zero is the least.
 */
enum vg_ear_identity {
	VG_EAR_ID_NONE = 0,	/* nothing: an AK sent with the evidence, no registration proved it */
	VG_EAR_ID_EK,		/* the AK proven (MakeCredential/ActivateCredential) to be in the
				   TPM of the EK its agent registered with, that EK not chained to
				   an EK CA (none configured, or it does not chain) */
	VG_EAR_ID_EK_CA,	/* ... to an EK whose certificate chains to the verifier's EK CA */
};

struct vg_ear {
	const char *submod;		/* the submodule's name: the agent id, "evidence" */
	const char *agent_id;		/* NULL: none (the stateless endpoint) */
	const char *state;		/* "trusted"... (NULL: none) */
	const char *developer, *build;	/* ear.verifier-id */
	const char *policy_id;		/* ear.appraisal-policy-id, NULL none */
	const char *nonce;		/* eat_nonce, NULL none */
	int64_t iat;			/* unix seconds */
	unsigned int subject;		/* enum vg_ear_subject */
	unsigned int identity;		/* enum vg_ear_identity */
	const struct vg_attest_verdict *v;	/* its failures (listed, and counted) */
};

/*
 * vg_ear_claims - the EAR claims set of @e as JSON (json-c, '/' not
 * escaped). The vector: for each failure listed, its claim takes the
 * value of the worst tier (the first failure of that tier); with no
 * failure of the quote or identity (quote.*, identity.*) and
 * @e->identity VG_EAR_ID_EK_CA, instance-identity is 2 (the quote
 * verified with an AK proven to an EK that chains to the EK CA), else it
 * is not claimed; with no failure at all, executables is 2 too.
 * ear.status: the vector's worst tier, contraindicated with any failure
 * (vigil fails the agent); with none, affirming only for VG_EAR_ID_EK_CA,
 * warning for VG_EAR_ID_EK, none for VG_EAR_ID_NONE (never affirming
 * on an identity nobody proved); none when @e->subject is not
 * VG_EAR_JUDGED. *@ret is malloc'd.
 * Return: its length; -EINVAL (@e without submod, a nonce out of
 * VG_EAR_NONCE_MIN..MAX), -ENOMEM.
 */
int vg_ear_claims(const struct vg_ear *e, char **ret, struct vg_diag *diag);

/* Return: true when @s is a nonce vg_ear_claims takes: 8..64 of [A-Za-z0-9._~-]. */
bool vg_ear_nonce_ok(const char *s);

#endif
