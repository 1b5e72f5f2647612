/* SPDX-License-Identifier: MIT */
/*
 * imalog.h - the kernel's IMA measurement list: binary and ascii codecs,
 * template digests, and replay into PCR values.
 *
 * Binary list (security/integrity/ima/ima_fs.c ima_measurements_show), per
 * entry, native (little-endian) integers, no file header:
 *
 *   u32 pcr | template_digest[D] | u32 name_len | name |
 *   u32 data_len | data                     (every template but "ima")
 *   d[20] | u32 n_len | n (no NUL)          (the "ima" template)
 *
 * D is 20 in binary_runtime_measurements (the sha1 bank) and the bank's
 * size in binary_runtime_measurements_<algo>. data is, per field,
 * u32 len || bytes, and the template digest of every template but "ima"
 * is H_bank(data); for "ima" it is H_bank(d || n zero-padded to 256 bytes)
 * (ima_crypto.c ima_calc_field_array_hash_tfm). A custom template
 * (ima_template_fmt=) is named by its format string, "d-ng|n-ng|...".
 * A violation has an all-zero template digest and is extended as 0xff.
 *
 * Ascii list (ima_ascii_measurements_show): "%2d " pcr, hex template
 * digest, " " name, then " " and each field (digests as "algo:hex",
 * strings as text, sig/buf/... as hex, iuid/igid/imode as decimal).
 *
 * Parsing borrows pointers into the caller's buffer and checks every
 * length against what is left. What this does not do: big-endian lists
 * (ima_canonical_fmt on a big-endian machine), and TPM access (pcr.h).
 *
 * Errors: -EBADMSG malformed (absurd length, unknown template, bad field),
 * -EMSGSIZE the last entry runs past the end of the buffer (a torn tail),
 * -EILSEQ a template digest that does not match its data, -ENOMEM.
 * The diag names the entry index (0-based) and its byte offset.
 */
#ifndef VIGIL_IMALOG_H
#define VIGIL_IMALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/pcr.h"

#define VG_IMALOG_MAX_FIELDS 16		/* kernel MAX_TEMPLATE_NAME_LEN-bound formats use <= 9 */
#define VG_IMALOG_NAME_MAX 1024		/* template name (a custom format string) */
#define VG_IMALOG_DATA_MAX (64u << 20)	/* one entry's template data */
#define VG_IMALOG_EVENT_NAME_MAX 255	/* IMA_EVENT_NAME_LEN_MAX, the "n" field */
#define VG_IMALOG_PCR_DEFAULT 10	/* CONFIG_IMA_MEASURE_PCR_IDX */

/* Template field ids (ima_template.c supported_fields). */
enum vg_imalog_field_id {
	VG_IMAF_D,
	VG_IMAF_N,
	VG_IMAF_D_NG,
	VG_IMAF_D_NGV2,
	VG_IMAF_N_NG,
	VG_IMAF_SIG,
	VG_IMAF_BUF,
	VG_IMAF_D_MODSIG,
	VG_IMAF_MODSIG,
	VG_IMAF_EVMSIG,
	VG_IMAF_XATTRNAMES,
	VG_IMAF_XATTRLENGTHS,
	VG_IMAF_XATTRVALUES,
	VG_IMAF_IUID,
	VG_IMAF_IGID,
	VG_IMAF_IMODE,
	VG_IMAF__COUNT
};

/* Return: the kernel field id string ("d-ng"), or NULL. */
const char *vg_imalog_field_name(unsigned int id);

struct vg_imalog_field {
	uint8_t id;			/* enum vg_imalog_field_id */
	uint32_t len;
	const uint8_t *data;		/* as stored: strings with their NUL, d-ng "algo:\0" + digest */
};

/*
 * A template: its name as it appears in the list and its fields.
 * vg_imalog_template_lookup() knows the built-in names (ima, ima-ng,
 * ima-sig, ima-ngv2, ima-sigv2, ima-buf, ima-modsig, evm-sig) and parses
 * any other name as a format string of known field ids joined by '|'.
 */
struct vg_imalog_template {
	unsigned int nfields;
	uint8_t fields[VG_IMALOG_MAX_FIELDS];
	bool ima;			/* the "ima" template: fixed layout and digest */
};

/* Return: 0, or -EBADMSG (unknown name, unknown field id, too many fields). */
int vg_imalog_template_lookup(const char *name, size_t len, struct vg_imalog_template *ret,
			      struct vg_diag *diag);

struct vg_imalog_entry {
	uint32_t pcr;
	struct vg_digest digest;	/* template digest as stored; algo = the list's bank */
	const char *name;		/* template name, not NUL-terminated */
	size_t name_len;
	struct vg_imalog_template tmpl;
	struct vg_imalog_field f[VG_IMALOG_MAX_FIELDS];	/* tmpl.nfields of them */
	const uint8_t *data;		/* template data as in the binary list (hashed for non-ima) */
	size_t data_len;
	bool violation;			/* all-zero template digest */
	size_t offset;			/* of the entry in the buffer */
	size_t size;			/* bytes the entry takes */
};

/* Iterates over a binary list held in memory. */
struct vg_imalog_parser {
	const uint8_t *buf;
	size_t len;
	size_t off;			/* next entry */
	uint64_t index;			/* entries returned so far */
	unsigned int algo;		/* template digest bank (size D) */
	/* the last template looked up (lists repeat one name): private */
	const char *last_name;
	size_t last_len;
	struct vg_imalog_template last;
};

void vg_imalog_parser_init(struct vg_imalog_parser *p, const uint8_t *buf, size_t len,
			   unsigned int algo);

/*
 * vg_imalog_parser_next - decode the entry at p->off field by field, with
 * bounds checks on every length, and advance.
 * Return: 1 an entry, 0 end of list, -EBADMSG, -EMSGSIZE (entry runs past
 * the end: p->off stays at its start).
 */
int vg_imalog_parser_next(struct vg_imalog_parser *p, struct vg_imalog_entry *e,
			  struct vg_diag *diag);

/*
 * vg_imalog_detect - guess the template digest bank of a binary list from
 * its first entry: 20 bytes sha1, 32 sha256, 48 sha384, 64 sha512 (the
 * size that makes the first entry parse, confirmed by its digest where the
 * data allows). An empty list is sha1.
 * Return: the algo id, or -EBADMSG.
 */
int vg_imalog_detect(const uint8_t *buf, size_t len, struct vg_diag *diag);

/* Return: true if @buf looks like an ascii list (first byte ' ' or a digit). */
bool vg_imalog_is_ascii(const uint8_t *buf, size_t len);

/* A growable byte buffer for encoders. Release with vg_imalog_buf_release(). */
struct vg_imalog_buf {
	uint8_t *data;
	size_t len, cap;
};
void vg_imalog_buf_release(struct vg_imalog_buf *b);

/*
 * vg_imalog_from_ascii - convert an ascii list to the binary layout
 * (appended to @out). The template digest size of every line must be the
 * same; *@ret_algo (may be NULL) receives its bank (40 hex: sha1, 64:
 * sha256, 96: sha384, 128: sha512).
 * Return: entries converted, -EBADMSG (diag names the line), -ENOMEM.
 */
long vg_imalog_from_ascii(const char *text, size_t len, struct vg_imalog_buf *out,
			  unsigned int *ret_algo, struct vg_diag *diag);

/*
 * vg_imalog_load - the fuzzing entry point: bytes → binary list. Ascii
 * input is converted into @scratch (and *@ret_buf points there); binary
 * input is left where it is. Then every entry is parsed.
 * Return: entry count, or a negative errno as above.
 */
long vg_imalog_load(const uint8_t *buf, size_t len, struct vg_imalog_buf *scratch,
		    const uint8_t **ret_buf, size_t *ret_len, unsigned int *ret_algo,
		    struct vg_diag *diag);

/* Append the entry's ascii line (with '\n'), as the kernel prints it. Return: 0 or -ENOMEM. */
int vg_imalog_format_ascii(const struct vg_imalog_entry *e, struct vg_imalog_buf *out);

/*
 * vg_imalog_encode - append the entry in the binary layout, with @digest
 * (any bank) as its template digest. Return: 0 or -ENOMEM.
 */
int vg_imalog_encode(const struct vg_imalog_entry *e, const struct vg_digest *digest,
		     struct vg_imalog_buf *out);

/*
 * vg_imalog_encode_fields - build a new entry from fields (the writer's
 * path): pcr, the template digest placeholder (zeros, @digest_len bytes),
 * name, data. The template digest is filled in by the caller with
 * vg_imalog_template_digest over the parsed result.
 * Return: 0, -EINVAL (field set does not match the template), -ENOMEM.
 */
int vg_imalog_encode_fields(uint32_t pcr, const char *tmpl_name, const struct vg_imalog_field *f,
			    unsigned int n, size_t digest_len, struct vg_imalog_buf *out);

/*
 * vg_imalog_template_digest - the template digest of @e in bank @algo, as
 * ima_calc_field_array_hash computes it. Violations are not special here.
 * Return: 0, -EOPNOTSUPP, -EBADMSG ("ima" name longer than 255), -EIO.
 */
int vg_imalog_template_digest(const struct vg_imalog_entry *e, unsigned int algo,
			      struct vg_digest *ret, struct vg_diag *diag);

/*
 * vg_imalog_field_digest - the file digest carried by a d/d-ng/d-ngv2/
 * d-modsig field: *@ret_algo (sha1 for "d"), the digest bytes and length,
 * and for d-ng/d-ngv2 the prefix text before the NUL ("ima:sha256:").
 * Return: 0, -EBADMSG (no prefix NUL, unknown algorithm name, wrong size).
 */
int vg_imalog_field_digest(const struct vg_imalog_field *f, unsigned int *ret_algo,
			   const uint8_t **ret_digest, size_t *ret_len, struct vg_diag *diag);

/*
 * Replay. One object holds, per bank and per PCR, the value the TPM would
 * hold after the entries fed so far, computed the kernel's way: each
 * entry's template digest is recomputed for every bank (not copied from
 * the list), checked against the stored one in the list's own bank, and
 * extended as new = H_bank(old || digest). Violations extend 0xff..ff.
 *
 * VG_REPLAY_PADDED_SHA1: kernels before per-bank digests (< 5.8) extended
 * the sha1 template digest zero-padded into every other bank.
 * VG_REPLAY_NO_CHECK: do not compare stored template digests with the data.
 *
 * Incremental replay: vg_imalog_replay_set() a saved PCR value (and the
 * caller keeps the offset and count), then feed entries from that offset.
 */
enum {
	VG_REPLAY_PADDED_SHA1 = 1u << 0,
	VG_REPLAY_NO_CHECK = 1u << 1,
};

struct vg_imalog_replay;

/*
 * @banks: bitmask (1 << algo) of banks to compute.
 * Return: 0, -EOPNOTSUPP (a bank OpenSSL lacks), -ENOMEM.
 */
int vg_imalog_replay_new(uint32_t banks, unsigned int flags, struct vg_imalog_replay **ret,
			 struct vg_diag *diag);
void vg_imalog_replay_free(struct vg_imalog_replay *r);

/*
 * vg_imalog_replay_entry - check and extend one entry. @index is used in
 * messages only.
 * Return: 0, -EILSEQ (stored template digest does not match its data),
 * -EBADMSG (pcr >= 24), -EIO.
 */
int vg_imalog_replay_entry(struct vg_imalog_replay *r, const struct vg_imalog_entry *e,
			   uint64_t index, struct vg_diag *diag);

/* Return: 0, -ENOENT (bank not replayed or pcr out of range). */
int vg_imalog_replay_get(const struct vg_imalog_replay *r, unsigned int pcr, unsigned int algo,
			 struct vg_digest *ret);
/* Set a saved PCR value (incremental replay). Return: 0, -ENOENT, -EINVAL (size). */
int vg_imalog_replay_set(struct vg_imalog_replay *r, unsigned int pcr, const struct vg_digest *v);
/* Return: bitmask of PCRs extended (or set) so far. */
uint32_t vg_imalog_replay_pcrs(const struct vg_imalog_replay *r);
/* Return: bitmask of banks replayed. */
uint32_t vg_imalog_replay_banks(const struct vg_imalog_replay *r);

/*
 * vg_imalog_entry_bank_digests - the digests the kernel extends for @e,
 * one per bank in @banks (violations: 0xff..ff), into @ret (room for
 * popcount(banks)). Return: count, or a negative errno.
 */
int vg_imalog_entry_bank_digests(const struct vg_imalog_entry *e, uint32_t banks, bool padded_sha1,
				 struct vg_digest *ret, struct vg_diag *diag);

/*
 * vg_imalog_boot_aggregate - ima_calc_boot_aggregate: H_algo(PCR0..7) for
 * sha1, H_algo(PCR0..9) for other banks, over @pcrs (indexed by PCR, each
 * of @algo's size).
 * Return: 0 or a negative errno.
 */
int vg_imalog_boot_aggregate(unsigned int algo, const struct vg_digest pcrs[10],
			     struct vg_digest *ret, struct vg_diag *diag);

#endif
