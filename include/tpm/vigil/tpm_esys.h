/* SPDX-License-Identifier: MIT */
/*
 * tpm_esys.h - the TPM context's ESAPI handle, for libvigil code above the
 * TPM subsystem that issues its own commands (attest's EK/AK/quote code,
 * tpm_attest.c). There is one TPM context in vigil: vg_tpm_open() loads
 * the TCTI, initialises ESYS and sends TPM2_Startup; everything else
 * borrows it. Programs use tpm.h and tpm_attest.h, not this.
 */
#ifndef VIGIL_TPM_ESYS_H
#define VIGIL_TPM_ESYS_H

#include <tss2/tss2_esys.h>

#include "vigil/tpm.h"

/* The ESYS context of @tpm, valid until vg_tpm_close(). */
ESYS_CONTEXT *vg_tpm_esys(struct vg_tpm *tpm);

/*
 * vg_tpm_rc - record @rc of command @what in words in @diag (tpm2-tss's
 * decoder, and the code, since decoders differ), the one way vigil reports
 * a TSS2_RC. An error from below the TPM (ESYS, the TCTI, marshalling)
 * marks the context for renewal by the TPM subsystem's next command.
 * Return: @err.
 */
int vg_tpm_rc(struct vg_tpm *tpm, struct vg_diag *diag, int err, TSS2_RC rc, const char *what);

#endif
