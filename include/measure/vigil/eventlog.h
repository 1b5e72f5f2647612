/* SPDX-License-Identifier: MIT */
/*
 * eventlog.h - the TCG boot event log (TCG PC Client Platform Firmware
 * Profile, securityfs binary_bios_measurements): decoded field by field
 * from bytes, replayed per bank into the PCR values it claims, and
 * re-encoded (the decoder keeps every field, so encode(parse(x)) == x).
 *
 * Wire format (all integers little-endian, unlike TPM structures):
 *   first record, always TCG_PCClientPCREvent (the SHA-1 form):
 *     pcrIndex u32 | eventType u32 | digest[20] | eventSize u32 | event[]
 *   crypto-agile log: that record is EV_NO_ACTION on PCR 0 whose event is
 *   TCG_EfiSpecIDEvent:
 *     signature[16] "Spec ID Event03\0" | platformClass u32 |
 *     specVersionMinor u8 | specVersionMajor u8 | specErrata u8 |
 *     uintnSize u8 | numberOfAlgorithms u32 |
 *     {algorithmId u16, digestSize u16} x n | vendorInfoSize u8 | vendorInfo[]
 *   and every later record is TCG_PCR_EVENT2:
 *     pcrIndex u32 | eventType u32 | count u32 |
 *     {hashAlg u16, digest[digestSize of hashAlg in the Spec ID event]} x count |
 *     eventSize u32 | event[]
 *   legacy log (no Spec ID event): every record has the first form.
 *
 * What the decoder enforces: every length within the buffer and the
 * limits below, the whole buffer consumed; the Spec ID event exactly
 * filling its eventSize; 1..VG_EVENTLOG_ALGS_MAX algorithms, no duplicate,
 * digest sizes 1..64 and, for algorithms vigil knows, their real size;
 * digests of an algorithm the header does not list, or listed twice in one
 * record, refused (an unknown algorithm is stepped over with the size the
 * header gives); PCR index < 24 for every record that extends; a
 * StartupLocality EV_NO_ACTION (PCR 0, "StartupLocality\0" + locality
 * 0..4) at most once and before anything extends PCR 0. It does not judge
 * event data (a variable's name, a device path): replay proves only the
 * digests and the PCR index, never the event type or data.
 *
 * Replay (vg_eventlog_replay): per bank, each PCR starts at zero (PCR 0 at
 * 00..00||locality after a StartupLocality event); every record except
 * EV_NO_ACTION extends PCR[pcrIndex] = H(PCR || digest of that bank). A
 * record without a digest of the bank (Windows logs its own events in
 * sha256 only) was not extended into it, as TPM2_PCR_Extend extends only
 * the banks it is given: it is skipped and counted.
 *
 * Errors: -EBADMSG with a diag naming the record index and its byte
 * offset ("event 12 (byte 1544): ..."); -ENOMEM. The library keeps no
 * global state and never prints. Fuzz entry point: vg_eventlog_parse.
 */
#ifndef VIGIL_EVENTLOG_H
#define VIGIL_EVENTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/pcr.h"

#define VG_EVENTLOG_SIZE_MAX (64u << 20)	/* whole log */
#define VG_EVENTLOG_EVENTS_MAX (1u << 18)	/* records */
#define VG_EVENTLOG_ALGS_MAX 16			/* algorithms in the Spec ID event */
#define VG_EVENTLOG_DIGEST_MAX 64		/* TPMU_HA */

/* Event types (PC Client PFP 10.4.1). */
enum {
	VG_EV_PREBOOT_CERT = 0x0,
	VG_EV_POST_CODE = 0x1,
	VG_EV_UNUSED = 0x2,
	VG_EV_NO_ACTION = 0x3,
	VG_EV_SEPARATOR = 0x4,
	VG_EV_ACTION = 0x5,
	VG_EV_EVENT_TAG = 0x6,
	VG_EV_S_CRTM_CONTENTS = 0x7,
	VG_EV_S_CRTM_VERSION = 0x8,
	VG_EV_CPU_MICROCODE = 0x9,
	VG_EV_PLATFORM_CONFIG_FLAGS = 0xa,
	VG_EV_TABLE_OF_DEVICES = 0xb,
	VG_EV_COMPACT_HASH = 0xc,
	VG_EV_IPL = 0xd,
	VG_EV_IPL_PARTITION_DATA = 0xe,
	VG_EV_NONHOST_CODE = 0xf,
	VG_EV_NONHOST_CONFIG = 0x10,
	VG_EV_NONHOST_INFO = 0x11,
	VG_EV_OMIT_BOOT_DEVICE_EVENTS = 0x12,
	VG_EV_POST_CODE2 = 0x13,
	VG_EV_EFI_EVENT_BASE = 0x80000000u,
	VG_EV_EFI_VARIABLE_DRIVER_CONFIG = 0x80000001u,
	VG_EV_EFI_VARIABLE_BOOT = 0x80000002u,
	VG_EV_EFI_BOOT_SERVICES_APPLICATION = 0x80000003u,
	VG_EV_EFI_BOOT_SERVICES_DRIVER = 0x80000004u,
	VG_EV_EFI_RUNTIME_SERVICES_DRIVER = 0x80000005u,
	VG_EV_EFI_GPT_EVENT = 0x80000006u,
	VG_EV_EFI_ACTION = 0x80000007u,
	VG_EV_EFI_PLATFORM_FIRMWARE_BLOB = 0x80000008u,
	VG_EV_EFI_HANDOFF_TABLES = 0x80000009u,
	VG_EV_EFI_PLATFORM_FIRMWARE_BLOB2 = 0x8000000au,
	VG_EV_EFI_HANDOFF_TABLES2 = 0x8000000bu,
	VG_EV_EFI_VARIABLE_BOOT2 = 0x8000000cu,
	VG_EV_EFI_GPT_EVENT2 = 0x8000000du,
	VG_EV_EFI_HCRTM_EVENT = 0x80000010u,
	VG_EV_EFI_VARIABLE_AUTHORITY = 0x800000e0u,
	VG_EV_EFI_SPDM_FIRMWARE_BLOB = 0x800000e1u,
	VG_EV_EFI_SPDM_FIRMWARE_CONFIG = 0x800000e2u,
	VG_EV_EFI_SPDM_DEVICE_POLICY = 0x800000e3u,
	VG_EV_EFI_SPDM_DEVICE_AUTHORITY = 0x800000e4u,
};

/* Return: "EV_SEPARATOR", "EV_EFI_VARIABLE_DRIVER_CONFIG", ...; NULL for a type without a name. */
const char *vg_eventlog_type_name(uint32_t type);

/* One algorithm of the Spec ID event (a legacy log has sha1/20 only). */
struct vg_eventlog_alg {
	uint16_t tpm_alg;		/* TPM_ALG_ID: sha1 0x0004, sha256 0x000b, ... */
	uint16_t size;			/* digestSize */
	int algo;			/* enum vg_hash_algo, -1 when vigil does not know it */
};

struct vg_eventlog_digest {
	uint16_t tpm_alg;
	uint16_t len;
	uint32_t off;			/* of the digest bytes in log->buf */
};

struct vg_eventlog_event {
	uint32_t pcr;			/* pcrIndex */
	uint32_t type;			/* eventType */
	size_t offset;			/* of the record in the log */
	size_t size;			/* of the whole record */
	size_t data_off;		/* of event[] in log->buf */
	uint32_t data_len;		/* eventSize */
	uint32_t ndigests;
	uint32_t first_digest;		/* index of its first digest in log->digests */
};

struct vg_eventlog {
	uint8_t *buf;			/* a copy of the bytes parsed */
	size_t len;
	bool agile;			/* crypto-agile (Spec ID Event03); false: legacy SHA-1 log */
	/* TCG_EfiSpecIDEvent (agile logs) */
	uint32_t platform_class;
	uint8_t spec_minor, spec_major, spec_errata, uintn_size;
	uint32_t nalgs;
	struct vg_eventlog_alg algs[VG_EVENTLOG_ALGS_MAX];
	uint8_t vendor_len;
	size_t vendor_off;		/* of vendorInfo in buf */
	/* StartupLocality event: locality, or -1 when the log has none */
	int startup_locality;
	size_t nevents;
	struct vg_eventlog_event *events;	/* every record, the first one included */
	size_t ndigests;
	struct vg_eventlog_digest *digests;
};

/*
 * vg_eventlog_parse - decode a whole event log (see the top of this file).
 * *@ret is a new log holding its own copy of @buf; free it with
 * vg_eventlog_free. Set only on success.
 * Return: 0; -EBADMSG (diag names the event index and byte offset), -ENOMEM.
 */
int vg_eventlog_parse(const uint8_t *buf, size_t len, struct vg_eventlog **ret,
		      struct vg_diag *diag);
void vg_eventlog_free(struct vg_eventlog *log);

/* The algorithm entry for TPM_ALG_ID @tpm_alg. Return: NULL when the log does not list it. */
const struct vg_eventlog_alg *vg_eventlog_alg(const struct vg_eventlog *log, uint16_t tpm_alg);

/* @e's digest for @tpm_alg, its length in *@len. Return: NULL when @e has none. */
const uint8_t *vg_eventlog_event_digest(const struct vg_eventlog *log,
					const struct vg_eventlog_event *e, uint16_t tpm_alg,
					size_t *len);

/* TPM_ALG_ID -> enum vg_hash_algo. Return: the id, -1 for an algorithm vigil does not know. */
int vg_eventlog_tpm_algo(uint16_t tpm_alg);

/* Return: bitmask (1 << enum vg_hash_algo) of the banks the log lists that vigil knows. */
uint32_t vg_eventlog_banks(const struct vg_eventlog *log);

/* PCR values one bank of a log replays to. */
struct vg_eventlog_pcrs {
	unsigned int algo;		/* enum vg_hash_algo */
	uint32_t touched;		/* PCRs the log extends or sets (bit i = PCR i) */
	uint32_t missing;		/* records that extend other banks but carry no digest of
					   this one: not extended here, so unproven by this bank */
	struct vg_digest pcr[VG_PCR_COUNT];	/* every PCR, zero where untouched */
};

/*
 * vg_eventlog_replay - the PCR values of bank @algo (see the top).
 * Return: 0; -ENOENT (the Spec ID event does not list @algo),
 * -EOPNOTSUPP (OpenSSL lacks the hash), -ENOMEM.
 */
int vg_eventlog_replay(const struct vg_eventlog *log, unsigned int algo,
		       struct vg_eventlog_pcrs *ret, struct vg_diag *diag);

/*
 * vg_eventlog_encode - the wire form of @log rebuilt from the decoded
 * fields (the Spec ID event from its fields, digests and event data from
 * the records), malloc'd into *@ret. For a parsed log: the bytes parsed.
 * Return: length; -ENOMEM.
 */
long vg_eventlog_encode(const struct vg_eventlog *log, uint8_t **ret);

#endif
