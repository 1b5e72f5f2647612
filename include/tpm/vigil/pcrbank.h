/* SPDX-License-Identifier: MIT */
/*
 * pcrbank.h - a software PCR store (struct vg_pcr_ops) for machines
 * without a TPM, kept in a text file beside the measurement log, and the
 * text form of PCR values shared with `vigil log replay --pcrs`.
 *
 * It keeps the log self-consistent (replay equals the bank), nothing
 * more: anyone who can write the file can set any value, so the ops say
 * attestable = false and every user must say so.
 *
 * File format (also accepted by --pcrs), one PCR per line:
 *   # comment
 *   PCR-10 sha256:<hex>      bank named
 *   PCR-10 <hex>             bank from the length (40 sha1, 64 sha256, 96
 *                            sha384, 128 sha512) or the caller's default
 *                            (evmctl's --pcrs format)
 *
 * Durability: extends change memory only; vg_pcrbank_sync() writes the
 * whole bank to PATH.tmp, fdatasyncs it, renames it over PATH and syncs
 * the directory. After a crash the file therefore holds the state of some
 * earlier sync: a prefix of the log, which the log writer reconciles
 * (mlog.h). The file is locked (flock) while a bank is open.
 */
#ifndef VIGIL_PCRBANK_H
#define VIGIL_PCRBANK_H

#include <stdbool.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/pcr.h"

/* A set of PCR values per bank, as parsed from text. */
struct vg_pcr_values {
	uint32_t have[VG_HASH__LAST];			/* per algo: bitmask of PCRs given */
	struct vg_digest v[VG_HASH__LAST][VG_PCR_COUNT];
};

/*
 * vg_pcr_values_parse - add the values in @text to @pv (which the caller
 * zeroed). @default_algo (-1: none) names the bank of bare hex values
 * whose length fits it; other bare values take the bank their length
 * implies.
 * Return: number of values read, -EBADMSG (diag names the line).
 */
int vg_pcr_values_parse(struct vg_pcr_values *pv, const char *text, size_t len, int default_algo,
			struct vg_diag *diag);

struct vg_pcrbank;

/*
 * vg_pcrbank_open - open the bank file @path, or create it (all zero, for
 * the banks in @banks, a bitmask 1 << algo) when it does not exist. An
 * existing file keeps its own banks.
 * Return: 0, -EBUSY (another process has it open), -EBADMSG (unreadable
 * file: reported, never reset), -EOPNOTSUPP, -ENOMEM, or an I/O errno.
 */
int vg_pcrbank_open(const char *path, uint32_t banks, struct vg_pcrbank **ret,
		    struct vg_diag *diag);
void vg_pcrbank_free(struct vg_pcrbank *b);

/* Persist the current values (see above). Return: 0 or a negative errno. */
int vg_pcrbank_sync(struct vg_pcrbank *b, struct vg_diag *diag);

/* The vg_pcr_ops of a software bank: ctx is a struct vg_pcrbank *. attestable = false. */
extern const struct vg_pcr_ops vg_pcrbank_ops;

/* Adapter for struct vg_mlog_opts.pcr_sync: vg_pcrbank_sync(ctx). */
int vg_pcrbank_sync_cb(void *ctx, struct vg_diag *diag);

#endif
