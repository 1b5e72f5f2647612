/* SPDX-License-Identifier: MIT */
/*
 * attest_boot.h - measured boot in remote attestation: the verifier's use
 * of an agent's TCG boot event log (eventlog.h) and of the boot PCRs in a
 * quote, without a TPM and without a network.
 *
 * The log is untrusted and changes only when the machine boots, so it is
 * parsed and replayed once per boot (vg_attest_boot_load: the caller keeps
 * the result, keyed on the quote's resetCount/restartCount) and each round
 * costs a comparison of at most ten digests (vg_attest_boot_check):
 *
 *   boot.malformed     the log does not decode, or lacks the quoted bank
 *   boot.pcr_mismatch  a quoted PCR 0-9 differs from the log's replay
 *                      (names the PCR, the quoted and the replayed value)
 *   boot.pcr_value     a PCR the reference policy pins ("boot_pcrs") is not
 *                      quoted or has a value the policy does not list
 *   boot.aggregate     the measurement list's first entry (boot_aggregate)
 *                      is not ima_calc_boot_aggregate() over the log's
 *                      PCRs: H(PCR 0-7) for sha1, H(PCR 0-9) for other
 *                      banks, in the bank of the entry's digest
 *
 * PCRs 0-9 are the ones checked: 0-7 are the firmware's, 8-9 the boot
 * loader's (GRUB) and the kernel EFI stub's, and IMA's non-sha1
 * boot_aggregate covers all ten, so a verifier that checks the aggregate
 * must have 8 and 9 proven too. Only the quoted bank is proven by the
 * TPM; the aggregate of another bank is consistency of the agent's two
 * logs, not proof.
 *
 * PCR 14 too, under a reference policy with a measured_boot section:
 * shim extends it with the MOK lists (EV_IPL "MokList", "MokListX"),
 * which that section judges (attest_mbpolicy.h, Keylime's mokdig and
 * mokxdig). Unproven, those events would be whatever the agent's log
 * says: a host with a key of its own enrolled could report the allowed
 * list. Keylime replays PCRs 0-9 and 14 for its example policy, as here.
 */
#ifndef VIGIL_ATTEST_BOOT_H
#define VIGIL_ATTEST_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"
#include "vigil/eventlog.h"

#define VG_ATTEST_BOOT_PCRS 10
#define VG_ATTEST_BOOT_MASK ((1u << VG_ATTEST_BOOT_PCRS) - 1)	/* PCRs 0-9 */
#define VG_ATTEST_BOOT_AGGS 4		/* sha1, sha256, sha384, sha512 */
#define VG_ATTEST_MOK_PCR 14		/* shim's MOK lists (measured_boot policies) */

/* What a verifier keeps per agent and boot: ~1 KiB, no pointers. */
struct vg_attest_boot {
	unsigned int bank;				/* of pcr[]: the quoted bank */
	uint32_t touched;				/* PCRs among 0-9 and 14 the log extends */
	uint32_t events;				/* records in the log */
	struct vg_digest pcr[VG_ATTEST_BOOT_PCRS];	/* the log's replay in @bank */
	struct vg_digest mok;				/* its replay of PCR 14 (zero: untouched) */
	struct vg_digest aggregate[VG_ATTEST_BOOT_AGGS];	/* per bank the log has; len 0: none */
};

/*
 * vg_attest_boot_load - parse the agent's boot log @buf, replay it in
 * @bank (PCRs 0-9 and 14) and compute the boot_aggregate of every bank it has.
 * Return: 0 (*@ret filled), 1 (@v: boot.malformed, the parser's message
 * naming the event index and offset), -ENOMEM.
 */
int vg_attest_boot_load(const uint8_t *buf, size_t len, unsigned int bank,
			struct vg_attest_boot *ret, struct vg_attest_verdict *v);

/*
 * vg_attest_boot_mask - the PCRs a quote must cover for a boot log to be
 * checked under @pol (may be NULL): 0-9, and 14 when @pol has a
 * measured_boot section. The verifier asks for these; vg_attest_boot_check
 * requires them.
 */
uint32_t vg_attest_boot_mask(const struct vg_refpolicy *pol);

/*
 * vg_attest_boot_check - judge the boot PCRs of a quote already verified:
 * with @boot (NULL: the agent has no boot log), every PCR 0-9 in
 * @req->mask must equal the replay (boot.pcr_mismatch; the request must
 * cover PCRs 0-9, else boot.pcr_mismatch names the one missing), and so
 * must PCR 14 when @pol has a measured_boot section (the first that
 * differs fails); with @pol, every PCR it pins must be quoted with an
 * allowed value: each that is not is a boot.pcr_value failure of its own,
 * all added to @v (vg_attest_verdict_add), as Keylime lists every PCR.
 * Return: 0, 1 (@v), -ENOMEM.
 */
int vg_attest_boot_check(const struct vg_attest_boot *boot, const struct vg_refpolicy *pol,
			 const struct vg_attest_request *req, const struct vg_pcr_values *quoted,
			 struct vg_attest_verdict *v);

/*
 * vg_attest_boot_aggregate_check - the first entry of @log (a binary
 * measurement list from its start, template digests of bank @log_algo)
 * must be "boot_aggregate" with the digest @boot gives for the bank of
 * that digest. An empty list passes (nothing to compare yet); a first
 * entry of another name, or a bank the boot log lacks: boot.aggregate.
 * Return: 0, 1 (@v).
 */
int vg_attest_boot_aggregate_check(const struct vg_attest_boot *boot, const uint8_t *log,
				   size_t len, unsigned int log_algo, struct vg_attest_verdict *v);

/* ---- reference policy: pinned boot PCR values ("boot_pcrs") ---- */

/* Return: the PCRs @p pins (bit i = PCR i); 0 for NULL. */
uint32_t vg_refpolicy_boot_mask(const struct vg_refpolicy *p);

/*
 * vg_refpolicy_boot_allows - is @value an allowed value of PCR @pcr?
 * Return: 1 allowed, 0 not; -ENOENT when @p pins no value of @pcr in
 * @value's bank.
 */
int vg_refpolicy_boot_allows(const struct vg_refpolicy *p, unsigned int pcr,
			     const struct vg_digest *value);

/* Pin one more allowed value of PCR @pcr (0-23, not 10). Return: 0, -EINVAL, -ENOMEM. */
int vg_refpolicy_boot_pin(struct vg_refpolicy *p, unsigned int pcr, const struct vg_digest *value);

#endif
