/* SPDX-License-Identifier: MIT */
/*
 * keyring.h - trusted public keys looked up by keyid, and signing keys.
 *
 * The kernel finds the key for a v2 signature by asymmetric key id
 * "id:<keyid>", which matches the tail of an X.509 certificate's Subject
 * Key Identifier. So a certificate's keyid is the last 4 bytes of its SKID,
 * as the kernel sees it, even where the SKID is not the usual SHA-1 of the
 * key (evmctl 1.4's verifier recomputes it from the key instead and then
 * misses such certificates). A bare public key, or a certificate without a
 * SKID, gets the keyid evmctl computes: the last 4 bytes of SHA-1 over the
 * subjectPublicKey BIT STRING contents.
 */
#ifndef VIGIL_KEYRING_H
#define VIGIL_KEYRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"

struct vg_keyring;
struct vg_signer;

struct vg_keyinfo {
	uint32_t keyid;
	bool from_cert;		/* keyid from a certificate (its SKID if any) */
	bool skid_missing;	/* certificate without SKID: kernel cannot find it */
	const char *source;	/* path it was loaded from */
	const char *type;	/* "rsa2048", "ecp256", ... */
};

/* Return: 0 or -ENOMEM. */
int vg_keyring_new(struct vg_keyring **ret);
void vg_keyring_free(struct vg_keyring *kr);

/*
 * vg_keyring_add_file - add every certificate or public key in @path:
 * PEM (any number of CERTIFICATE / PUBLIC KEY blocks) or one DER
 * certificate or SubjectPublicKeyInfo. Only RSA and EC keys are accepted.
 * Return: number of keys added (>= 1), -ENOENT/-EACCES/... (cannot read),
 * -EBADMSG (no key found or unparsable), -EOPNOTSUPP (key type), -ENOMEM.
 */
int vg_keyring_add_file(struct vg_keyring *kr, const char *path, struct vg_diag *diag);

/*
 * vg_keyring_add_mem - the same for @len bytes at @buf (untrusted: a
 * certificate received from elsewhere); @source names them in diag and in
 * vg_keyinfo.source (copied).
 * Return: as vg_keyring_add_file(); -EFBIG above 16 MiB.
 * Both add all the keys or, on error, none.
 */
int vg_keyring_add_mem(struct vg_keyring *kr, const uint8_t *buf, size_t len, const char *source,
		       struct vg_diag *diag);

size_t vg_keyring_count(const struct vg_keyring *kr);

/* Return: info on key @i (< count), valid while @kr lives. */
const struct vg_keyinfo *vg_keyring_info(const struct vg_keyring *kr, size_t i);

/* Return: the OpenSSL EVP_PKEY of the key with @keyid, or NULL. */
const void *vg_keyring_find(const struct vg_keyring *kr, uint32_t keyid);

/*
 * vg_signer_load - load a private key (PEM, PKCS#8 or traditional) for
 * signing. Its keyid is the SKID tail of a certificate found in the same
 * file (as evmctl 1.4 ima_sign does), else computed from the public key.
 * Return: 0, -ENOENT etc., -EBADMSG (no unencrypted private key), -EOPNOTSUPP.
 */
int vg_signer_load(const char *path, struct vg_signer **ret, struct vg_diag *diag);
void vg_signer_free(struct vg_signer *s);
uint32_t vg_signer_keyid(const struct vg_signer *s);
void vg_signer_set_keyid(struct vg_signer *s, uint32_t keyid);
/* Return: the OpenSSL EVP_PKEY of the private key. */
const void *vg_signer_pkey(const struct vg_signer *s);

/*
 * vg_keyid_of_pkey - evmctl's keyid: last 4 bytes of SHA-1 over the
 * subjectPublicKey BIT STRING contents of @pkey (an EVP_PKEY).
 * Return: 0 or -EIO.
 */
int vg_keyid_of_pkey(const void *pkey, uint32_t *ret);

#endif
