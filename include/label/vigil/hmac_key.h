/* SPDX-License-Identifier: MIT */
/*
 * hmac_key.h - the EVM HMAC key in memory, and loading it from a key file.
 *
 * A raw key file holds the key bytes themselves, 32 to 128 of them, like
 * the payload of the kernel's "evm-key" encrypted key or evmctl's
 * /etc/keys/evm-key-plain. The key is wiped when released.
 *
 * A vigil key file starts with the magic "VIGILKEY" and never holds the
 * key itself (a raw file starting with those 8 bytes is read as one):
 *
 *   0  "VIGILKEY"   8  version (1)   9  key length (32..128)
 *  10  one section: type u8, length u16 (big-endian), value:
 *      1 passphrase: scrypt log2(N) u8, r u32, p u32, salt length u8
 *        (16..64), salt, check[32] = HMAC-SHA256(key, "vigil key check")
 *      2 TPM-sealed: PCR bank u16 (TPM_ALG_ID), PCR mask u32, the bound
 *        PCR values (ascending, bank-size each), then the sealed object
 *        (TPM2B_PUBLIC || TPM2B_PRIVATE, tpm.h)
 *
 * A passphrase key is scrypt(passphrase, salt, N, r, p) truncated to the
 * key length: the file lets an attacker test guesses at scrypt's cost and
 * nothing more. A TPM key is random (OpenSSL's RNG xor the TPM's), sealed
 * under PolicyPCR: the PCR values in the file only explain refusals; the
 * TPM enforces the sealed object's policy, which vg_hmac_key_unseal
 * checks equals the file's statement.
 */
#ifndef VIGIL_HMAC_KEY_H
#define VIGIL_HMAC_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/evm.h"
#include "vigil/tpm.h"

#define VG_HMAC_KEY_MIN 32

struct vg_hmac_key {
	uint8_t key[VG_EVM_KEY_MAX];
	size_t len;
};

/*
 * vg_hmac_key_load_raw - read a raw key file.
 * Return: 0; -EINVAL (size outside 32..128 bytes); -errno from open/read.
 */
int vg_hmac_key_load_raw(const char *path, struct vg_hmac_key *ret, struct vg_diag *diag);

/* Wipe the key. NULL-safe. */
void vg_hmac_key_wipe(struct vg_hmac_key *k);

#define VG_KEY_MAGIC "VIGILKEY"
#define VG_KEY_FILE_MAX 8192
#define VG_KEY_SCRYPT_LOGN_DEFAULT 17	/* N = 2^17, r = 8, p = 1: 128 MiB */
#define VG_KEY_SCRYPT_LOGN_MIN 10
#define VG_KEY_SCRYPT_LOGN_MAX 22
#define VG_KEY_SCRYPT_MAXMEM (1024ull << 20)	/* 128 * r * N limit */

enum vg_key_kind {
	VG_KEY_RAW = 0,
	VG_KEY_PASSPHRASE = 1,
	VG_KEY_TPM = 2,
};

struct vg_key_kdf {
	uint8_t log_n;
	uint32_t r, p;
	uint8_t salt_len;
	uint8_t salt[64];
	uint8_t check[32];
};

/* A key file's public contents: what it is and how to recover the key. */
struct vg_key_file {
	enum vg_key_kind kind;
	size_t key_len;			/* raw: file size */
	struct vg_key_kdf kdf;		/* VG_KEY_PASSPHRASE */
	struct vg_tpm_pcrs pcrs;	/* VG_KEY_TPM: bank, mask, bound values */
	size_t blob_len;		/* VG_KEY_TPM: sealed object */
	uint8_t blob[VG_TPM_BLOB_MAX];
};

/* Return: "raw", "passphrase", "tpm". */
const char *vg_key_kind_name(enum vg_key_kind kind);

/*
 * vg_key_file_decode - parse a key file's bytes, field by field. Bytes
 * without the magic are a raw key (kind VG_KEY_RAW, key_len = @len, the
 * key bytes themselves are not kept). Fuzzing entry point.
 * Return: 0; -EBADMSG (malformed: which field in @diag); -EOPNOTSUPP
 *         (unknown version or section); -EINVAL (raw key of a bad size).
 */
int vg_key_file_decode(const uint8_t *buf, size_t len, struct vg_key_file *ret,
		       struct vg_diag *diag);

/* Return: bytes written (<= @cap), or -ENOSPC / -EINVAL (kind raw). */
int vg_key_file_encode(const struct vg_key_file *kf, uint8_t *buf, size_t cap,
		       struct vg_diag *diag);

/* Read and decode @path (at most VG_KEY_FILE_MAX bytes). Return: as decode, or -errno. */
int vg_key_file_read(const char *path, struct vg_key_file *ret, struct vg_diag *diag);

/*
 * vg_key_file_write - encode into a temporary file beside @path (mode
 * 0600), fsync, rename over @path (outfile.h). Nothing is left
 * half-written; a @path that is a symbolic link, a device, a fifo or
 * anything but a regular file is refused.
 * Return: 0 or a negative errno (-ELOOP, -EISDIR, -EINVAL for those).
 */
int vg_key_file_write(const char *path, const struct vg_key_file *kf, struct vg_diag *diag);

/*
 * vg_hmac_key_generate - @len random bytes (32..128) from OpenSSL's
 * private RNG, xor the TPM's when @tpm is not NULL.
 * Return: 0; -EINVAL; -EIO.
 */
int vg_hmac_key_generate(struct vg_tpm *tpm, size_t len, struct vg_hmac_key *ret,
			 struct vg_diag *diag);

/*
 * vg_hmac_key_passphrase_new - a new passphrase key: random salt, scrypt
 * with N = 2^@log_n, r = 8, p = 1, key length @len. Fills @kf (kind
 * passphrase, with the check value) and the derived key @ret.
 * Return: 0; -EINVAL (log_n out of range, empty passphrase); -ENOMEM; -EIO.
 */
int vg_hmac_key_passphrase_new(const char *pass, size_t pass_len, unsigned int log_n,
			       size_t len, struct vg_key_file *kf, struct vg_hmac_key *ret,
			       struct vg_diag *diag);

/*
 * vg_hmac_key_derive - the key of passphrase key file @kf.
 * Return: 0; -EKEYREJECTED (wrong passphrase: the check value differs);
 *         -EINVAL (not a passphrase key); -ENOMEM; -EIO.
 */
int vg_hmac_key_derive(const struct vg_key_file *kf, const char *pass, size_t pass_len,
		       struct vg_hmac_key *ret, struct vg_diag *diag);

/*
 * vg_hmac_key_seal - seal @key under PolicyPCR over @p (selection and the
 * values to bind) and fill @kf (kind tpm).
 * Return: 0 or as vg_tpm_seal.
 */
int vg_hmac_key_seal(struct vg_tpm *tpm, const struct vg_hmac_key *key,
		     const struct vg_tpm_pcrs *p, struct vg_key_file *kf, struct vg_diag *diag);

/*
 * vg_hmac_key_unseal - the key of TPM key file @kf.
 * Return: 0; -EACCES (PCRs differ from the sealed state; @diag names them);
 *         -EBADMSG (corrupted or foreign sealed object); -EINVAL (not a TPM
 *         key, or the unsealed length is not the file's); -EIO.
 */
int vg_hmac_key_unseal(struct vg_tpm *tpm, const struct vg_key_file *kf,
		       struct vg_hmac_key *ret, struct vg_diag *diag);

/*
 * Where vg_hmac_key_load gets what a key file needs. All optional: a
 * missing passphrase callback or an unreachable TPM makes keys of that
 * kind fail with -ENOKEY / -ENODEV.
 */
struct vg_key_source {
	struct vg_tpm *tpm;		/* an open TPM, or NULL: open @tcti on demand */
	const char *tcti;		/* NULL: VG_TPM_TCTI_DEFAULT */
	/* Write the passphrase (no NUL needed) into @buf; return its length or < 0. */
	int (*passphrase)(void *arg, const char *path, char *buf, size_t cap);
	void *arg;
};

/*
 * vg_hmac_key_load - load any key file: raw, passphrase or TPM-sealed.
 * @kind_ret (optional) receives the file's kind, also on failure once known.
 * Return: 0; the errors of the loaders above; -ENOKEY (no passphrase).
 */
int vg_hmac_key_load(const char *path, const struct vg_key_source *src,
		     struct vg_hmac_key *ret, enum vg_key_kind *kind_ret, struct vg_diag *diag);

#endif
