/* SPDX-License-Identifier: MIT */
/*
 * attest_mbpolicy_int.h - what the two halves of the measured-boot policy
 * share (internal to the attest subsystem): the policy's struct and its
 * digest sets (attest_mbpolicy.c: loaded, written, made), used by the
 * events' side (attest_mbpolicy_event.c: judged, learnt from a log).
 */
#ifndef VIGIL_ATTEST_MBPOLICY_INT_H
#define VIGIL_ATTEST_MBPOLICY_INT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest_mbpolicy.h"
#include "vigil/diag.h"

#define SHA256_LEN 32
#define TPM_ALG_SHA256 0x000b
#define MB_CMDLINE_MAX 4096

/* The digest sets, in the order of the JSON keys. */
enum mb_set {
	MB_PK, MB_KEK, MB_DB, MB_DBX, MB_AUTH, MB_SHIM, MB_GRUB, MB_KERNEL,
	MB_INITRD, MB_VMLINUZ, MB_MOK, MB_MOKX, MB_SCRTM, MB_FIRMWARE, MB_VENDOR_DB, MB__SETS
};

/* the JSON key of each set */
extern const char *const vg__mb_set_key[MB__SETS];

struct dset {
	bool judged;			/* the key is there */
	size_t n, cap;
	uint8_t (*d)[SHA256_LEN];
};

struct strs {
	bool judged;
	size_t n;
	char **s;
};

struct vg_mbpolicy {
	int secure_boot;		/* -1 not judged, 0 must be off, 1 must be on */
	struct dset set[MB__SETS];
	struct strs cmdline;		/* literal command lines */
	struct strs cmdre;		/* their regexes (source) */
	regex_t *re;			/* compiled cmdre */
	/*
	 * "from_archive": the sets (1u << MB_SHIM, MB_GRUB, MB_KERNEL, MB_VMLINUZ)
	 * judged by the verifier's trust database as well (struct vg_mbrefs);
	 * "announced": initrd (1u << MB_INITRD) and command line (MB_ANN_CMDLINE)
	 * by what earlier boots' attested lists announced
	 */
	unsigned int archive, announced;
	uint8_t id[SHA256_LEN];
};
#define MB_ANN_CMDLINE (1u << MB__SETS)

/* EFI_GLOBAL_VARIABLE 8be4df61-93ca-11d2-aa0d-00e098032b8c, as it is in memory */
extern const uint8_t vg__mb_guid_global[16];
/* EFI_IMAGE_SECURITY_DATABASE_GUID d719b2cb-3d3a-4596-a3bc-dad00e67656f */
extern const uint8_t vg__mb_guid_imgsec[16];

/* Appended; sorted and made unique by vg__mb_finish before any lookup. Return: 0, -ENOMEM. */
int vg__mb_dset_add(struct dset *s, const uint8_t d[SHA256_LEN]);
/* Return: the index of @d in the (sorted) set, -1 none. */
long vg__mb_dset_find(const struct dset *s, const uint8_t *d);
bool vg__mb_dset_has(const struct dset *s, const uint8_t *d);
/* Return: 0, -ENOMEM. */
int vg__mb_strs_add(struct strs *s, const char *v);
/* SHA-256 of @n bytes of @b. Return: 0, -ENOMEM. */
int vg__mb_sha256(const void *b, size_t n, uint8_t out[SHA256_LEN]);
/* An empty policy (nothing judged). Return: 0, -ENOMEM. */
int vg__mb_new(struct vg_mbpolicy **ret);
/*
 * "from_archive" and "announced" (attest_mbpolicy_refs.c): read from the
 * section @o, added to @o. Return: 0, -EBADMSG (an unknown name), -ENOMEM.
 */
struct json_object;
int vg__mb_refs_from_json(struct vg_mbpolicy *p, struct json_object *o, struct vg_diag *diag);
void vg__mb_refs_to_json(const struct vg_mbpolicy *p, struct json_object *o);

/* The sets sorted, the regexes compiled, the id: before a policy is used. Return: 0, -EBADMSG, -ENOMEM. */
int vg__mb_finish(struct vg_mbpolicy *p, struct vg_diag *diag);
/* The id alone, again (the policy changed after vg__mb_finish). Return: 0, -ENOMEM. */
int vg__mb_finish_id(struct vg_mbpolicy *p);

/*
 * vg__mb_ref_judge - the digest @d of an event of set @set (shim, grub,
 * kernel, vmlinuz, initrd), or the command line @line (not NULL), judged
 * by from_archive or announced (attest_mbpolicy_refs.c); @what names the
 * image in @why. Return: 0 allowed, 1 not (@why says why), -1 @p has no
 * such key for it.
 */
struct vg_mbrefs;
int vg__mb_ref_judge(const struct vg_mbpolicy *p, const struct vg_mbrefs *refs, enum mb_set set,
		     const uint8_t *d, const char *line, const char *what, char *why, size_t cap);

#endif
