/* SPDX-License-Identifier: MIT */
/*
 * pcr.h - a store of PCRs that measurements are extended into: the TPM
 * (tpm.h provides one) or a software bank kept beside the log when there
 * is no TPM. The measurement-list writer and replay code talk to PCRs
 * only through this interface.
 *
 * Extending follows the TPM: new = H_bank(old || digest_bank), per bank.
 */
#ifndef VIGIL_PCR_H
#define VIGIL_PCR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"

#define VG_PCR_COUNT 24

struct vg_pcr_ops {
	/*
	 * Extend PCR @pcr with @n digests, one per bank (d[i].algo names the
	 * bank). Banks the store does not have are ignored, as a TPM does.
	 * Return: 0 or a negative errno.
	 */
	int (*extend)(void *ctx, unsigned int pcr, const struct vg_digest *d, size_t n,
		      struct vg_diag *diag);
	/* Read PCR @pcr of bank @algo. Return: 0, -ENOENT (no such bank), ... */
	int (*read)(void *ctx, unsigned int pcr, unsigned int algo, struct vg_digest *ret,
		    struct vg_diag *diag);
	/* Return: bitmask of banks present, bit (1 << enum vg_hash_algo). */
	uint32_t (*banks)(void *ctx);
	/*
	 * The store's reset counter, which changes when its PCRs restart from
	 * their reset values (a TPM's clockInfo.resetCount: every TPM Reset,
	 * i.e. every boot). NULL when the store has none (a software bank).
	 * Return: 0 or a negative errno.
	 */
	int (*reset_count)(void *ctx, uint32_t *ret, struct vg_diag *diag);
	/* false for a software bank: nobody outside can trust its values */
	bool attestable;
};

#endif
