// SPDX-License-Identifier: MIT
/*
 * nvcounter.c - TPM NV monotonic counters (TPM2_NT_COUNTER indices):
 * define one, read it, increment it. `vigil scan` binds its database to
 * one so that an older copy is refused (docs/scan.md, "Rollback").
 *
 * The index vigil defines has an empty authValue and is read and
 * incremented with it (TPMA_NV_AUTHREAD, TPMA_NV_AUTHWRITE), so a check
 * needs no secret. That is safe because a counter only goes up: whoever
 * increments it can make a database look too old (refused), never make an
 * old one current. Even undefining the index and defining a new one does
 * not help: a new counter starts at the largest value any counter of the
 * TPM ever held (TPM 2.0 Part 1, "NV Counters"). What must be checked is
 * that the index *is* a counter (an ordinary index could be written with
 * any value): vg_tpm_counter_read() refuses anything else. Not orderly
 * (TPMA_NV_ORDERLY): an orderly counter jumps ahead after a power loss,
 * which would look like a rollback; each increment is an NV write.
 *
 * Not here: policy-authorized counters, or removing one (tpm2_nvundefine).
 */
#include <errno.h>
#include <string.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>

#include "vigil/tpm.h"
#include "vigil/tpm_esys.h"

#define NV_ATTRS                                                                              \
	((TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_AUTHREAD | TPMA_NV_AUTHWRITE |  \
	 TPMA_NV_OWNERREAD | TPMA_NV_NO_DA)

/* Whether @rc is the TPM format-one or format-zero error @what, whatever its index bits. */
static bool rc_is(TSS2_RC rc, TSS2_RC what)
{
	if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER &&
	    (rc & TSS2_RC_LAYER_MASK) != TSS2_RESMGR_TPM_RC_LAYER)
		return false;
	rc &= ~TSS2_RC_LAYER_MASK;
	if (rc & TPM2_RC_FMT1)
		return (rc & (TPM2_RC_FMT1 | 0x3f)) == what;
	return (rc & 0xfff) == what;
}

static int check_index(uint32_t index, struct vg_diag *diag)
{
	if ((index >> 24) != TPM2_HT_NV_INDEX)
		return vg_diag_set(diag, -EINVAL, "0x%08x is not an NV index handle (0x01000000 "
				   "to 0x01ffffff)", index);
	return 0;
}

/*
 * An ESYS handle for @index, its public area checked: a counter. Return:
 * 0; -ENOENT (no such index); -EMEDIUMTYPE (not a counter); -EIO.
 */
static int open_index(struct vg_tpm *tpm, uint32_t index, ESYS_TR *ret, bool *written,
		      struct vg_diag *diag)
{
	ESYS_CONTEXT *e = vg_tpm_esys(tpm);
	TPM2B_NV_PUBLIC *pub = NULL;
	ESYS_TR nv = ESYS_TR_NONE;
	TSS2_RC rc;
	int r = check_index(index, diag);

	if (r < 0)
		return r;
	rc = Esys_TR_FromTPMPublic(e, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
	if (rc_is(rc, TPM2_RC_HANDLE))
		return vg_diag_set(diag, -ENOENT, "the TPM has no NV index 0x%08x", index);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_NV_ReadPublic");
	rc = Esys_NV_ReadPublic(e, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		r = vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_NV_ReadPublic");
	} else if (((pub->nvPublic.attributes & TPMA_NV_TPM2_NT_MASK) >> TPMA_NV_TPM2_NT_SHIFT) !=
		   TPM2_NT_COUNTER || pub->nvPublic.dataSize != 8) {
		/* an ordinary index can be written with any value: worthless here */
		r = vg_diag_set(diag, -EMEDIUMTYPE, "TPM NV index 0x%08x is not a counter "
				"(attributes 0x%08x)", index, pub->nvPublic.attributes);
	} else {
		*written = pub->nvPublic.attributes & TPMA_NV_WRITTEN;
	}
	Esys_Free(pub);
	if (r < 0) {
		Esys_TR_Close(e, &nv);
		return r;
	}
	*ret = nv;
	return 0;
}

int vg_tpm_counter_define(struct vg_tpm *tpm, uint32_t index, struct vg_diag *diag)
{
	ESYS_CONTEXT *e = vg_tpm_esys(tpm);
	TPM2B_AUTH auth = { .size = 0 };
	TPM2B_NV_PUBLIC pub = {
		.nvPublic = {
			.nvIndex = index,
			.nameAlg = TPM2_ALG_SHA256,
			.attributes = NV_ATTRS,
			.dataSize = 8,
		},
	};
	ESYS_TR nv = ESYS_TR_NONE;
	bool written;
	TSS2_RC rc;
	int r = check_index(index, diag);

	if (r < 0)
		return r;
	r = open_index(tpm, index, &nv, &written, diag);
	if (r == 0) {
		Esys_TR_Close(e, &nv);
		return 0;
	}
	if (r != -ENOENT)
		return r;
	rc = Esys_NV_DefineSpace(e, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
				 &auth, &pub, &nv);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, rc_is(rc, TPM2_RC_BAD_AUTH) ? -EACCES : -EIO, rc,
				 "TPM2_NV_DefineSpace (owner hierarchy, empty owner password)");
	Esys_TR_Close(e, &nv);
	return 1;
}

int vg_tpm_counter_read(struct vg_tpm *tpm, uint32_t index, uint64_t *ret, struct vg_diag *diag)
{
	ESYS_CONTEXT *e = vg_tpm_esys(tpm);
	TPM2B_MAX_NV_BUFFER *data = NULL;
	ESYS_TR nv;
	bool written = false;
	uint64_t v = 0;
	TSS2_RC rc;
	int r = open_index(tpm, index, &nv, &written, diag);

	if (r < 0)
		return r;
	if (!written) {
		Esys_TR_Close(e, &nv);
		return vg_diag_set(diag, -ENODATA, "TPM NV counter 0x%08x was never incremented",
				   index);
	}
	rc = Esys_NV_Read(e, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
	Esys_TR_Close(e, &nv);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_NV_Read");
	if (data->size != 8) {
		Esys_Free(data);
		return vg_diag_set(diag, -EIO, "TPM2_NV_Read: %u bytes, not 8", data->size);
	}
	for (int i = 0; i < 8; i++)
		v = v << 8 | data->buffer[i];
	Esys_Free(data);
	*ret = v;
	return 0;
}

int vg_tpm_counter_increment(struct vg_tpm *tpm, uint32_t index, struct vg_diag *diag)
{
	ESYS_CONTEXT *e = vg_tpm_esys(tpm);
	ESYS_TR nv;
	bool written;
	TSS2_RC rc;
	int r = open_index(tpm, index, &nv, &written, diag);

	if (r < 0)
		return r;
	rc = Esys_NV_Increment(e, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
	Esys_TR_Close(e, &nv);
	if (rc != TSS2_RC_SUCCESS)
		return vg_tpm_rc(tpm, diag, -EIO, rc, "TPM2_NV_Increment");
	return 0;
}
