/* SPDX-License-Identifier: MIT */
/*
 * dsse.h - signed reference policies: the Dead Simple Signing Envelope
 * (github.com/secure-systems-lab/dsse, v1.0), as Keylime signs runtime
 * policies (keylime/dsse, payloadType "application/vnd.keylime+json").
 *
 *   {"payloadType": T, "payload": base64(BODY),
 *    "signatures": [{"keyid": "...", "sig": base64(SIG)}, ...]}
 *
 * SIG signs PAE(T, BODY) = "DSSEv1" SP LEN(T) SP T SP LEN(BODY) SP BODY
 * (LEN: ASCII decimal byte count) with SHA-256: ECDSA (DER signature, as
 * Keylime's ecdsa and x509 backends) or RSA PKCS#1 v1.5. The keyid is an
 * unauthenticated hint (Keylime: sha256 of the PEM public key); every
 * signature is tried against every trusted key.
 */
#ifndef VIGIL_DSSE_H
#define VIGIL_DSSE_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"

#define VG_DSSE_KEYLIME_TYPE "application/vnd.keylime+json"
#define VG_DSSE_VIGIL_TYPE "application/vnd.vigil.refpolicy+json"
#define VG_DSSE_MAX_KEYS 16

struct vg_dsse_keys;

int vg_dsse_keys_new(struct vg_dsse_keys **ret);
void vg_dsse_keys_free(struct vg_dsse_keys *k);

/*
 * vg_dsse_keys_add - trust the public keys in @buf: PEM blocks of PUBLIC
 * KEY or CERTIFICATE (its key; the certificate itself is not validated),
 * or one DER SubjectPublicKeyInfo or certificate. All or nothing.
 * Return: keys added; -EBADMSG (nothing usable, or a block that does not
 * decode), -ENOSPC (more than VG_DSSE_MAX_KEYS in all), -ENOMEM.
 */
int vg_dsse_keys_add(struct vg_dsse_keys *k, const uint8_t *buf, size_t len,
		     struct vg_diag *diag);

/*
 * vg_dsse_open - check envelope @env and return its payload: it must be
 * a JSON DSSE envelope (payloadType one of the NULL-terminated list
 * @types, unless @types is NULL) with at least one signature that
 * verifies with a key of @k.
 * *@payload is malloc'd and NUL-terminated.
 * Return: 0; -EBADMSG (not a well-formed envelope: diag names the
 * field); -EKEYREJECTED (no signature verifies with a trusted key: diag
 * says how many were tried); -ENOMEM.
 */
int vg_dsse_open(const struct vg_dsse_keys *k, const uint8_t *env, size_t len,
		 const char *const *types, uint8_t **payload, size_t *payload_len,
		 struct vg_diag *diag);

/* Whether @buf looks like a DSSE envelope (a JSON object with "payloadType"). */
int vg_dsse_is_envelope(const uint8_t *buf, size_t len);

/*
 * vg_refpolicy_load_dsse - vg_refpolicy_load() of a signed policy: @buf
 * must be an envelope of payloadType VG_DSSE_KEYLIME_TYPE or
 * VG_DSSE_VIGIL_TYPE that vg_dsse_open() accepts with @k.
 * Return: as vg_dsse_open() and vg_refpolicy_load(); a document that is
 * no envelope at all (an unsigned policy) is -EKEYREJECTED.
 */
struct vg_refpolicy;
int vg_refpolicy_load_dsse(const struct vg_dsse_keys *k, const uint8_t *buf, size_t len,
			   struct vg_refpolicy **ret, struct vg_diag *diag);

#endif
