/* SPDX-License-Identifier: MIT */
/*
 * attest_mbpolicy.h - an event-level measured-boot policy: what the events
 * of an agent's TCG boot log (eventlog.h) may say, judged event by event,
 * each failing event named (boot.event). Where attest_boot.h proves that
 * the log is the one the TPM's PCRs 0-9 hold, this says whether what it
 * records is allowed: "Secure Boot on, only these keys, only kernels
 * signed by them, this command line".
 *
 * The policy is the "measured_boot" section of vigil's reference policy
 * (docs/attest-measured-boot.md); Keylime's measured-boot reference state
 * (keylime-policy create measured-boot) is read too, where its meaning is
 * the same. Every key is optional: an absent key is not judged, a present
 * one is (an empty list allows nothing).
 *
 *   secure_boot        true: PCR 7 EV_EFI_VARIABLE_DRIVER_CONFIG SecureBoot
 *                      must be 1 (and be there); false: must be 0
 *   pk, kek, db        every EFI_SIGNATURE_DATA of the variable's event
 *                      (PCR 7) must be listed: sha256 of its SignatureData
 *   dbx                every listed entry must be in the dbx event (the
 *                      revocations required; more are fine)
 *   authorities        PCR 7 EV_EFI_VARIABLE_AUTHORITY of db, vendor_db,
 *                      Shim, MokList(RT): sha256 of the certificate that
 *                      verified an image must be listed
 *   vendor_db          shim's vendor_db (Keylime's key of that name): every
 *                      entry of a vendor_db variable event (PCR 7) and the
 *                      certificate of a vendor_db EV_EFI_VARIABLE_AUTHORITY
 *                      must be listed (sha256 of the SignatureData); a
 *                      Keylime reference state without it is an empty list
 *                      under Secure Boot, as Keylime reads it
 *   shim, grub, kernel PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION (firmware
 *                      volume images skipped) by position: the 1st is the
 *                      shim, the 2nd GRUB, the rest kernels; the event's
 *                      sha256 (the authenticode digest) must be listed
 *   initrd, vmlinuz    PCR 9 EV_IPL naming an initrd/initramfs, a vmlinuz:
 *                      the file's sha256 (the event digest)
 *   kernel_cmdline     PCR 8 EV_IPL "kernel_cmdline: X": X must be one of
 *                      these strings
 *   kernel_cmdline_regex  ... or match one of these POSIX EREs (whole)
 *   mok, mokx          PCR 14 EV_IPL MokList / MokListX: event sha256
 *   scrtm, platform_firmware  PCR 0 EV_S_CRTM_VERSION,
 *                      EV_EFI_PLATFORM_FIRMWARE_BLOB(2): event sha256
 *   from_archive       ["shim", "grub", "kernel", "vmlinuz"]: those events
 *                      are also allowed when the verifier's trust database
 *                      has the digest as a boot image of that role
 *                      (trust_boot.h), current or superseded within the
 *                      grace; a boot image of another role there fails
 *                      (the order is shim, GRUB, kernel), an expired one
 *                      is named as a downgrade
 *   announced          ["initrd", "kernel_cmdline"]: those events are also
 *                      allowed when an earlier boot's attested list
 *                      announced the digest or line (attest_announce.h)
 * A key of from_archive or announced makes its event required, as a
 * non-empty list does.
 *
 * Event data is trusted only when its digests are its hash: a variable
 * event (PCR 7) must hash to its sha1/sha256/sha384/sha512 digests (over
 * the whole UEFI_VARIABLE_DATA, or the VariableData alone as some firmware
 * measures it), a GRUB command line to its digests (the line without its
 * "kernel_cmdline: " prefix, as GRUB measures it, or the whole string);
 * else the event fails. Digests of files and images are what the TPM
 * holds (the replay proves them), their names only classify them. PCR 14
 * is not among the PCRs the verifier proves by replay (0-9): MOK events are
 * judged as the log says.
 *
 * No global state; a policy is immutable once loaded and may be shared.
 */
#ifndef VIGIL_ATTEST_MBPOLICY_H
#define VIGIL_ATTEST_MBPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"
#include "vigil/eventlog.h"

struct vg_mbpolicy;

/*
 * vg_mbpolicy_load - parse a measured-boot policy: vigil's section object
 * ({"secure_boot": true, "db": [...], ...}), a whole reference policy
 * holding "measured_boot", or Keylime's measured-boot reference state
 * (has_secureboot, scrtm_and_bios, pk/kek/db/dbx, mokdig/mokxdig,
 * kernels[]).
 * Return: 0; -ENOENT (a reference policy without "measured_boot"),
 * -EBADMSG (diag names the key), -ENOMEM.
 */
int vg_mbpolicy_load(const uint8_t *buf, size_t len, struct vg_mbpolicy **ret,
		     struct vg_diag *diag);
void vg_mbpolicy_free(struct vg_mbpolicy *p);

/*
 * vg_mbpolicy_from_log - the policy a known-good boot log @log allows:
 * its Secure Boot state, its PK/KEK/db entries, its dbx (required), the
 * authorities, images, initrd, vmlinuz, command line, MOK lists, S-CRTM
 * and firmware blobs it records (sha256 digests: a log without a sha256
 * bank gives only the Secure Boot state, keys and command line).
 * Return: 0, -EBADMSG (an event to learn from does not decode or does not
 * match its digests: diag names it), -ENOMEM.
 */
int vg_mbpolicy_from_log(const struct vg_eventlog *log, struct vg_mbpolicy **ret,
			 struct vg_diag *diag);

/*
 * vg_mbpolicy_to_json - the section object in vigil's format,
 * NUL-terminated, malloc'd into *@ret; loading it gives the same policy.
 * Return: length, -ENOMEM.
 */
long vg_mbpolicy_to_json(const struct vg_mbpolicy *p, char **ret);

/*
 * vg_mbpolicy_check - judge every event of @log (see the top). Each
 * failing event is added to @v (vg_attest_verdict_add: first in @v's
 * fields, the next listed up to VG_ATTEST_FAILURES_MAX, all counted) as
 * VG_AF_BOOT_EVENT with v->entry the event index and a message naming
 * index, type, PCR and what is wrong ("event 12 EV_EFI_VARIABLE_DRIVER_CONFIG
 * PCR 7: SecureBoot=0, the policy requires Secure Boot"); something
 * required and absent (no SecureBoot event, a dbx entry missing) fails
 * with entry -1 or the event it should be in.
 * Return: 0, 1 (@v), -ENOMEM.
 */
int vg_mbpolicy_check(const struct vg_mbpolicy *p, const struct vg_eventlog *log,
		      struct vg_attest_verdict *v);

struct vg_trust_boot;
struct vg_attest_announced;

/* What from_archive and announced are judged by (each NULL: none). */
struct vg_mbrefs {
	const struct vg_trust_boot *archive;		/* the verifier's trust database */
	const struct vg_attest_announced *announced;	/* the agent's announcements */
	uint32_t boot;		/* resetCount of the boot judged: earlier boots' announcements */
};

/*
 * vg_mbpolicy_check_refs - vg_mbpolicy_check with @refs for the keys
 * from_archive and announced (@refs NULL, or a member NULL: every event
 * such a key judges fails, saying what the verifier lacks).
 * Return: 0, 1 (@v), -ENOMEM.
 */
int vg_mbpolicy_check_refs(const struct vg_mbpolicy *p, const struct vg_eventlog *log,
			   const struct vg_mbrefs *refs, struct vg_attest_verdict *v);
int vg_mbpolicy_check_buf_refs(const struct vg_mbpolicy *p, const uint8_t *buf, size_t len,
			       const struct vg_mbrefs *refs, struct vg_attest_verdict *v);

/* Return: whether @p has from_archive or announced keys (its verdicts depend on refs). */
bool vg_mbpolicy_uses_refs(const struct vg_mbpolicy *p);

/*
 * vg_mbpolicy_set_refs_keys - make @p judge the archive's shim, GRUB,
 * kernel and vmlinuz (from_archive: their lists, if any, are dropped) and
 * the announced initrd and command line (announced: their lists are kept,
 * allowed as well); its id changes. Return: 0, -ENOMEM.
 */
int vg_mbpolicy_set_refs_keys(struct vg_mbpolicy *p, bool archive, bool announced);

/*
 * vg_mbpolicy_check_buf - vg_mbpolicy_check on the bytes of a boot log;
 * a log that does not decode is VG_AF_BOOT_MALFORMED.
 * Return: 0, 1 (@v), -ENOMEM.
 */
int vg_mbpolicy_check_buf(const struct vg_mbpolicy *p, const uint8_t *buf, size_t len,
			  struct vg_attest_verdict *v);

/* SHA-256 of the policy's vigil JSON: equal ids, equal verdicts (for caches). */
const uint8_t *vg_mbpolicy_id(const struct vg_mbpolicy *p);

/* The "measured_boot" section of @p (NULL: none; owned by @p). */
const struct vg_mbpolicy *vg_refpolicy_mbpolicy(const struct vg_refpolicy *p);
/* Make @mb (may be NULL) @p's section; @p takes ownership, frees the previous one. */
void vg_refpolicy_set_mbpolicy(struct vg_refpolicy *p, struct vg_mbpolicy *mb);
/* @p's section, taken from it (NULL: none): the caller frees it, @p has none after. */
struct vg_mbpolicy *vg_refpolicy_take_mbpolicy(struct vg_refpolicy *p);

#endif
