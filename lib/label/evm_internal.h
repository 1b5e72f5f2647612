/* SPDX-License-Identifier: MIT */
/*
 * evm_internal.h - what lib/label/evm.c gives the rest of the label
 * subsystem (appraise.c, xattr_evm.c) beyond vigil/evm.h: the reads and
 * digests with a hasher's cached state. Not for other subsystems.
 */
#ifndef VIGIL_LABEL_EVM_INTERNAL_H
#define VIGIL_LABEL_EVM_INTERNAL_H

#include <openssl/evp.h>

#include "internal.h"
#include "vigil/evm.h"

struct vg_diag;

struct stat;
struct vg_evm_config;
struct vg_evm_meta;
/*
 * vg_evm_meta_from_fd() with the fd's fstat() already at hand; @h (may be
 * NULL) remembers filesystems without i_generation.
 */
int vg__evm_meta_from_stat(struct vg_hasher *h, int fd, const struct stat *st, _Bool want_uuid,
			   struct vg_evm_meta *ret, struct vg_diag *diag);
/*
 * vg_evm_xattrs_read(), except that protected xattr @name (if not NULL)
 * is not read: it takes the value @val (NULL: absent), as the kernel
 * hashes the value being set. *@evm_listed, if not NULL: whether the
 * file's xattr list names security.evm.
 */
int vg__evm_xattrs_scan(int fd, const struct vg_evm_config *cfg, struct vg_evm_xattrs *xs,
			const char *name, const uint8_t *val, size_t len, _Bool *evm_listed,
			struct vg_diag *diag);
/* vg_evm_digest(), with the hasher's cached HMAC context when @h is not NULL */
int vg__evm_digest(struct vg_hasher *h, const struct vg_evm_config *cfg,
		   const struct vg_evm_xattrs *xs, const struct vg_evm_meta *meta, uint8_t type,
		   unsigned int algo, const uint8_t *key, size_t keylen, struct vg_digest *ret,
		   struct vg_diag *diag);

/*
 * vg__evm_scratch_xattrs - the hasher's reusable xattr buffer (NULL when it
 * cannot be allocated).
 */
struct vg_evm_xattrs *vg__evm_scratch_xattrs(struct vg_hasher *h);

#endif
