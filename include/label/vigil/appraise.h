/* SPDX-License-Identifier: MIT */
/*
 * appraise.h - the kernel's appraisal decision for one open file, and
 * writing the labels it checks.
 *
 * vg_appraise_fd() follows ima_appraise_measurement() (ima_appraise.c) and
 * evm_verify_hmac() (evm_main.c): no security.ima is NOLABEL
 * ("missing-hash"); then EVM judges security.ima and the other protected
 * metadata; then the value of security.ima is checked against the content
 * hashed with the algorithm it names. Causes are the kernel's strings, with
 * one refinement: a signature whose keyid is in no trusted keyring reports
 * "unknown-key" where the kernel says "invalid-signature" (IMA) or
 * "invalid-HMAC" / "invalid-fail-immutable" (EVM).
 *
 * EVM "initialized" (the kernel's evm_key_loaded()): when the caller gives
 * an HMAC key or sets evm_required, a missing security.evm fails with
 * "missing-HMAC". Otherwise a security.evm that is present is still
 * verified (signatures with the EVM keyring), and one that is absent
 * leaves the verdict to IMA alone, as on a kernel with only IMA keys.
 */
#ifndef VIGIL_APPRAISE_H
#define VIGIL_APPRAISE_H

#include <stdbool.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/evm.h"
#include "vigil/hash.h"

struct vg_keyring;
struct vg_signer;

/* enum integrity_status */
enum vg_status {
	VG_ST_PASS = 0,
	VG_ST_PASS_IMMUTABLE,
	VG_ST_FAIL,
	VG_ST_FAIL_IMMUTABLE,
	VG_ST_NOLABEL,
	VG_ST_NOXATTRS,
	VG_ST_UNKNOWN,
};

const char *vg_status_name(enum vg_status st);

enum vg_uuid_mode {
	VG_UUID_FROM_FS = 0,		/* FS_IOC_GETFSUUID / blkid */
	VG_UUID_GIVEN,			/* uuid[] below */
};

/*
 * Metadata to use instead of the file's own, as evmctl's --inode and
 * --generation: labels made for another filesystem (a golden image), and
 * checks of labels recorded elsewhere.
 */
struct vg_meta_override {
	bool ino_set, gen_set;
	uint64_t ino;
	uint32_t gen;
};

struct vg_appraise_opts {
	const struct vg_evm_config *evm;	/* fsuuid false: --no-uuid */
	const struct vg_keyring *ima_keys;	/* may be NULL */
	const struct vg_keyring *evm_keys;	/* may be NULL */
	const uint8_t *hmac_key;		/* NULL: none loaded */
	size_t hmac_key_len;
	bool evm_required;
	bool require_sig;			/* appraise_type=imasig */
	bool metadata_only;			/* EVM and label form only: no content read */
	uint32_t allowed_algos;			/* appraise_algos= bitmask; 0: any */
	unsigned int default_algo;		/* ima_hash=, when the label names none */
	enum vg_uuid_mode uuid_mode;
	uint8_t uuid[16];
	struct vg_meta_override meta;
};

struct vg_appraise_result {
	enum vg_status status;		/* PASS, or why not */
	enum vg_status evm_status;
	const char *cause;		/* NULL when status is PASS */
	uint8_t ima_type;		/* 0: no security.ima */
	uint32_t keyid;			/* of a signature, when there is one */
	bool hmac_unchecked;		/* HMAC present, no key given */
	bool content_hashed;
	struct vg_digest digest;	/* the content digest when hashed */
	uint64_t size;
	struct vg_diag detail;		/* why, in words, when not PASS */
};

/*
 * vg_appraise_fd - appraise the file open on @fd (read from offset 0).
 * Return: 0 when a verdict was reached (see @ret->status); a negative
 * errno when the file could not be judged (read error, -ENOMEM, fs UUID
 * needed but unknown: -EDESTADDRREQ), with @diag filled.
 */
int vg_appraise_fd(struct vg_hasher *h, int fd, const struct vg_appraise_opts *o,
		   struct vg_appraise_result *ret, struct vg_diag *diag);

/*
 * vg_appraise_file - vg_appraise_fd() for a regular file whose fstat()
 * the caller has (@st, NULL: fstat it): no second fstat, content read
 * with pread from offset 0, the hasher's HMAC context and xattr buffer
 * reused. The tree commands' hot path.
 */
struct stat;
int vg_appraise_file(struct vg_hasher *h, int fd, const struct stat *st,
		     const struct vg_appraise_opts *o, struct vg_appraise_result *ret,
		     struct vg_diag *diag);

/*
 * vg_label_ima_fd - hash @fd's content with @algo and write security.ima:
 * the hash form, or a v2 signature (type 03) when @signer is given.
 * @ret_digest, if not NULL, receives the content digest.
 * Return: 0 or a negative errno (diag filled).
 */
int vg_label_ima_fd(struct vg_hasher *h, int fd, unsigned int algo,
		    const struct vg_signer *signer, struct vg_digest *ret_digest,
		    struct vg_diag *diag);

struct vg_evm_label_opts {
	const struct vg_evm_config *evm;
	uint8_t type;			/* 02 HMAC, 03 signature, 05 portable */
	unsigned int algo;		/* 03/05 */
	const struct vg_signer *signer;	/* 03/05 */
	const uint8_t *hmac_key;	/* 02 */
	size_t hmac_key_len;
	enum vg_uuid_mode uuid_mode;
	uint8_t uuid[16];
	struct vg_meta_override meta;
};

/*
 * vg_label_evm_fd - compute security.evm over the file's current
 * protected xattrs and metadata, and write it.
 * Return: 0 or a negative errno (diag filled).
 */
int vg_label_evm_fd(int fd, const struct vg_evm_label_opts *o, struct vg_diag *diag);

struct vg_label_result {
	bool ima_done;		/* security.ima holds the label of the content read */
	bool ima_written;	/* ...written now (false: it already held it) */
	bool evm_written;	/* security.evm written now (false on success: already right) */
};

/*
 * vg_label_file - label the regular file open on @fd (fstat @st, NULL:
 * fstat it): hash the content, write security.ima (hash, or signature
 * with @signer), then, when @evm is not NULL, security.evm over the new
 * value and the file's metadata. A value already equal to the one to be
 * written is left alone (no write, no ctime change).
 * Return: 0; -ESTALE when the size or mtime changed while the content
 * was read (nothing written); another negative errno, with
 * @res->ima_done telling whether security.ima was done (then only
 * security.evm is missing, and labeling again fixes it).
 */
int vg_label_file(struct vg_hasher *h, int fd, const struct stat *st, unsigned int algo,
		  const struct vg_signer *signer, const struct vg_evm_label_opts *evm,
		  struct vg_label_result *res, struct vg_diag *diag);

/*
 * A condition on the content of a file to be labeled: @check is called
 * with the digest vg_label_file_if() computed from the fd it then labels
 * (after the content stamp was found unchanged, before anything is
 * written). It returns 1 to label, 0 to refuse, or a negative errno.
 */
struct vg_label_gate {
	int (*check)(void *arg, const struct vg_digest *d);
	void *arg;
};

/*
 * vg_label_file_if - vg_label_file(), but only when @gate (NULL: always)
 * accepts the digest of the content read: the bytes compared are the
 * bytes labeled, from one read of @fd. Return: as vg_label_file(), or
 * VG_LABEL_REFUSED when @gate refused (nothing written, existing labels
 * untouched), or @gate's negative errno (nothing written).
 */
#define VG_LABEL_REFUSED 1
int vg_label_file_if(struct vg_hasher *h, int fd, const struct stat *st, unsigned int algo,
		     const struct vg_signer *signer, const struct vg_evm_label_opts *evm,
		     const struct vg_label_gate *gate, struct vg_label_result *res,
		     struct vg_diag *diag);

/*
 * vg_evm_value - build the security.evm value for the given inputs
 * (without writing). Return: value length, or a negative errno.
 */
int vg_evm_value(const struct vg_evm_label_opts *o, const struct vg_evm_xattrs *xs,
		 const struct vg_evm_meta *meta, uint8_t *out, size_t cap, struct vg_diag *diag);

#endif
