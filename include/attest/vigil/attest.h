/* SPDX-License-Identifier: MIT */
/*
 * attest.h - the verifier's side of remote attestation, without a TPM and
 * without a network: TPM quote structures decoded field by field, quote
 * verification with a registered AK, TPM clock/counter tracking (reboot
 * and replay detection), incremental replay of a measurement list up to a
 * quoted PCR value, reference policies (vigil's JSON and Keylime's runtime
 * policy) judging every new entry, and the software half of the AK-EK
 * binding (EK certificate check, TPM2_MakeCredential).
 *
 * Wire formats (TPM 2.0 Part 2, big-endian):
 *   TPMS_ATTEST  magic u32 (ff544347) | type u16 (8018 quote) |
 *                qualifiedSigner TPM2B_NAME | extraData TPM2B_DATA |
 *                clock u64 | resetCount u32 | restartCount u32 | safe u8 |
 *                firmwareVersion u64 | TPML_PCR_SELECTION | pcrDigest TPM2B
 *   TPMT_SIGNATURE sigAlg u16 | hash u16 | RSASSA/RSAPSS: TPM2B sig;
 *                ECDSA: TPM2B r | TPM2B s
 * The AK arrives as a marshalled TPM2B_PUBLIC (unmarshalled with tss2-mu).
 *
 * Outcomes. A check returns 0 (trusted), 1 (not trusted: @v says why, in
 * a typed failure with the entry, the file and the digest at fault; the
 * policy's judgement of a list lists every failing entry, up to
 * VG_ATTEST_FAILURES_MAX, and counts them all) or a
 * negative errno for an operational problem (-ENOMEM, -EIO). Bytes from
 * an agent are never an operational problem: malformed evidence is the
 * failure VG_AF_MALFORMED.
 *
 * Fuzzing entry points (bytes, len): vg_attest_quote_decode,
 * vg_attest_sig_decode, vg_attest_ak_load, vg_attest_pcrs_tpm2tools,
 * vg_refpolicy_load, vg_attest_evidence_check (all of the above at once).
 *
 * Boot event logs (replay against the quoted PCRs 0-9, pinned boot PCR
 * values, boot_aggregate against the log): attest_boot.h.
 *
 * Keys learned from the log (Keylime's keyring learning): an ima-buf entry
 * whose buffer is a certificate or public key that the policy's
 * "keyrings" section allows (vg_refpolicy_load) makes the key trusted for
 * the ima-sig entries AFTER it in the same boot's list; the keys learned
 * by the attested part of the list are part of the log state
 * (struct vg_attest_learned), so they persist across rounds, and a new
 * boot starts with none.
 *
 * Measured-boot policies on the events themselves: attest_mbpolicy.h.
 *
 * Not here: the
 * DSSE signature checks of Keylime policies (the envelope is unwrapped,
 * not verified: dsse.h checks it).
 */
#ifndef VIGIL_ATTEST_H
#define VIGIL_ATTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest_announce.h"
#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/pcr.h"
#include "vigil/pcrbank.h"

#define VG_ATTEST_NONCE_MAX 64		/* TPM2B_DATA: sizeof(TPMT_HA) - 2 */
#define VG_ATTEST_NAME_MAX 66		/* TPM2B_NAME of a key: alg u16 + digest */
#define VG_ATTEST_SIG_MAX 512		/* RSA-4096 */
#define VG_ATTEST_SEL_MAX 16
#define VG_ATTEST_PCR_IMA 10

/* Failure types: stable ids (vg_attest_fail_id) for APIs, hooks and history. */
enum vg_attest_fail {
	VG_AF_NONE = 0,
	VG_AF_MALFORMED,	/* quote.malformed: evidence does not decode */
	VG_AF_SIG_SCHEME,	/* quote.scheme: signature alg/hash not the AK's */
	VG_AF_SIGNATURE,	/* quote.signature: does not verify with the registered AK */
	VG_AF_NOT_QUOTE,	/* quote.type: magic or type wrong (not a TPM-made quote) */
	VG_AF_NONCE,		/* quote.nonce: extraData is not this request's nonce */
	VG_AF_PCR_SELECTION,	/* quote.selection: not the PCRs asked for */
	VG_AF_PCR_DIGEST,	/* quote.pcr_digest: PCR values do not hash to pcrDigest */
	VG_AF_CLOCK,		/* quote.clock: counters went back, or clock did not advance */
	VG_AF_UNSAFE,		/* quote.unsafe: clock safe flag clear (unorderly shutdown) */
	VG_AF_AK,		/* identity.ak: AK unusable (attributes, scheme, not the registered one) */
	VG_AF_EK_CERT,		/* identity.ek_cert: EK certificate bad or not for this EK */
	VG_AF_EK_CHANGED,	/* identity.ek_changed: known agent id with another EK */
	VG_AF_CREDENTIAL,	/* identity.credential: ActivateCredential proof wrong */
	VG_AF_LOG_MALFORMED,	/* log.malformed: measurement list does not parse */
	VG_AF_LOG_ENTRY,	/* log.entry_digest: template digest does not match the entry */
	VG_AF_LOG_PCR,		/* log.pcr_mismatch: no prefix of the log reaches the quoted PCR */
	VG_AF_LOG_PROGRESS,	/* log.progress: quote keeps lagging the log */
	VG_AF_NOT_IN_POLICY,	/* policy.not_in_policy: path has no entry in the policy */
	VG_AF_DIGEST,		/* policy.digest: path known, digest not allowed */
	VG_AF_SIG_INVALID,	/* policy.signature: ima-sig signature does not verify */
	VG_AF_VIOLATION,	/* policy.violation: ToMToU/open-writers entry */
	VG_AF_BOOT_AGGREGATE,	/* policy.boot_aggregate: boot_aggregate not allowed */
	VG_AF_REBOOT,		/* state.reboot: reboot seen (informational, not a failure) */
	VG_AF_COMM,		/* agent.comm: agent did not answer */
	VG_AF_BOOT_MALFORMED,	/* boot.malformed: boot event log does not decode (attest_boot.h) */
	VG_AF_BOOT_PCR,		/* boot.pcr_mismatch: quoted PCR 0-9 is not the boot log's replay */
	VG_AF_BOOT_VALUE,	/* boot.pcr_value: boot PCR not a value the policy pins */
	VG_AF_BOOT_AGG,		/* boot.aggregate: IMA boot_aggregate is not the boot log's */
	VG_AF_LATE,		/* state.late: the verifier did not start a due round on time (an event) */
	VG_AF_DIGEST_UNSUPPORTED,	/* policy.digest_unsupported: the policy's digests for the
					   path are all of algorithms vigil cannot compute */
	VG_AF_PACKAGE_NEWER,	/* policy.package_newer: the digest is the file of a newer version
				   of a Debian package than the one the policy allows (named by the
				   verifier's own trust database, vg_refpolicy_set_archive) */
	VG_AF_STALE,		/* state.stale: no round of the agent for longer than its interval
				   (and a lease): no verifier attested it, or a pushing agent
				   went silent (an event) */
	VG_AF_KEYRING_KEY,	/* policy.keyring_key: an ima-buf keyring entry carries a key of a
				   type that cannot verify file signatures (not RSA or EC; Keylime's
				   invalid_key), judged as Keylime does for Keylime-format policies */
	VG_AF_BOOT_EVENT,	/* boot.event: an event of the boot log is not one the measured-boot
				   policy allows (attest_mbpolicy.h; names the event) */
	VG_AF_EK_BOUND,		/* identity.ek_bound: the EK is registered under another agent id
				   (a registration refused; names that id) */
	VG_AF__COUNT
};

/* Return: "quote.nonce" etc., "ok" for VG_AF_NONE, NULL out of range. */
const char *vg_attest_fail_id(unsigned int f);
/* Return: the enum value for a failure id, or -ENOENT. */
int vg_attest_fail_by_id(const char *id);

/*
 * A judgement of a round may find several failures: the policy judges every
 * entry of a list (as Keylime does), so a list with three bad entries fails
 * with three. The first failure is the verdict's own fields (fail, entry,
 * path, digest, msg: what a caller that wants one failure reads, as before);
 * the next ones, up to VG_ATTEST_FAILURES_MAX in all, are listed in @more,
 * and @failures counts them all, also those beyond the bound. A verdict
 * with one failure, or none, holds no memory: @more is allocated only for
 * the second failure. vg_attest_verdict_release() frees it; a verdict is
 * not copied by value once it may hold a list.
 */
#define VG_ATTEST_FAILURES_MAX 64

struct vg_attest_verdict {
	unsigned int fail;		/* enum vg_attest_fail */
	int64_t entry;			/* absolute log entry index at fault, -1 if none */
	char path[1024];		/* file at fault (the entry's event name, truncated) */
	char digest[2 * VG_HASH_MAX_DIGEST + 16];	/* "sha256:<hex>" at fault */
	char msg[512];			/* the explanation, one sentence */
	uint64_t failures;		/* failures found, the first included; 0 when fail is NONE */
	size_t nmore;			/* failures listed in @more (at most FAILURES_MAX - 1) */
	struct vg_attest_verdict *more;	/* the 2nd.. listed failures (their own @more NULL) */
};

void vg_attest_verdict_init(struct vg_attest_verdict *v);
/* Free the list of @v (may be NULL) and make it a verdict with no failure. */
void vg_attest_verdict_release(struct vg_attest_verdict *v);

/*
 * Record a failure in @v (may be NULL). The message is kept as formatted
 * when it is clean text, else in vigil's escaped form (vigil/text.h): a
 * file name from the log may be any bytes, and the message goes to
 * reports, hooks and EARs. Return: 1, the "not trusted" outcome.
 */
int vg_attest_fail(struct vg_attest_verdict *v, unsigned int fail, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * vg_attest_verdict_add - one more failure @f (its own list ignored) for
 * @v: the first failure is copied into @v's fields, the next ones into
 * the list while it has fewer than VG_ATTEST_FAILURES_MAX, and every one
 * is counted.
 * Return: 1 (the "not trusted" outcome), -ENOMEM (@v unchanged).
 */
int vg_attest_verdict_add(struct vg_attest_verdict *v, const struct vg_attest_verdict *f);

/* Return: the number of failures of @v, those beyond the bound included. */
uint64_t vg_attest_verdict_count(const struct vg_attest_verdict *v);
/* Return: the number of failures listed, at most VG_ATTEST_FAILURES_MAX. */
size_t vg_attest_verdict_listed(const struct vg_attest_verdict *v);
/* Return: the @i-th listed failure (0: @v itself), NULL past the list. */
const struct vg_attest_verdict *vg_attest_verdict_nth(const struct vg_attest_verdict *v, size_t i);

/* ---- TPM structures ---- */

struct vg_tpm_pcr_select {
	uint16_t alg;			/* TPM_ALG_ID */
	uint8_t size;			/* sizeofSelect, <= 4 */
	uint8_t bits[4];
};

struct vg_tpms_attest {
	uint32_t magic;
	uint16_t type;
	uint16_t signer_len;
	uint8_t signer[VG_ATTEST_NAME_MAX];
	uint16_t extra_len;
	uint8_t extra[VG_ATTEST_NONCE_MAX];
	uint64_t clock;
	uint32_t reset_count, restart_count;
	uint8_t safe;
	uint64_t firmware;
	uint32_t nsel;
	struct vg_tpm_pcr_select sel[VG_ATTEST_SEL_MAX];
	uint16_t digest_len;
	uint8_t pcr_digest[VG_HASH_MAX_DIGEST];
};

/*
 * vg_attest_quote_decode - decode a TPMS_ATTEST of type quote, every
 * length checked, the whole buffer consumed.
 * Return: 0, -EBADMSG (diag names the field).
 */
int vg_attest_quote_decode(const uint8_t *buf, size_t len, struct vg_tpms_attest *ret,
			   struct vg_diag *diag);

struct vg_tpmt_signature {
	uint16_t alg;			/* TPM_ALG_RSASSA 0x14, RSAPSS 0x16, ECDSA 0x18 */
	uint16_t hash;
	uint16_t len;			/* RSA signature */
	uint8_t sig[VG_ATTEST_SIG_MAX];
	uint16_t r_len, s_len;		/* ECDSA */
	uint8_t r[VG_HASH_MAX_DIGEST + 2], s[VG_HASH_MAX_DIGEST + 2];
};

/* Return: 0, -EBADMSG, -EOPNOTSUPP (signature algorithm). */
int vg_attest_sig_decode(const uint8_t *buf, size_t len, struct vg_tpmt_signature *ret,
			 struct vg_diag *diag);

/*
 * A PCR selection in one bank (vg hash algo) plus the values claimed for it.
 * vg_pcr_values (pcrbank.h) holds values of several banks.
 */

/*
 * vg_attest_pcrs_tpm2tools - read tpm2-tools' "serialized" PCR output
 * (tpm2_quote -o, Keylime's third quote field): a native-endian
 * TPML_PCR_SELECTION, a u32 count and that many TPML_DIGEST structs, all
 * as in-memory C structs of tss2 (132 + 4 + n*532 bytes).
 * Return: number of values added to @pv, -EBADMSG.
 */
int vg_attest_pcrs_tpm2tools(const uint8_t *buf, size_t len, struct vg_pcr_values *pv,
			     struct vg_diag *diag);

/* TPM algorithm id ↔ vg hash id. Return: 0 / -1 when unknown. */
uint16_t vg_attest_tpm_alg(unsigned int algo);
int vg_attest_vg_algo(uint16_t tpm_alg);

/* ---- AK ---- */

struct vg_attest_ak;

/*
 * vg_attest_ak_load - decode a marshalled TPM2B_PUBLIC AK and make its
 * OpenSSL key. Requires what a TPM-resident attestation key has:
 * restricted|sign|fixedTPM|fixedParent|sensitiveDataOrigin, not decrypt,
 * nameAlg sha256/384/512, a signing scheme (RSASSA, RSAPSS, ECDSA) with a
 * hash, RSA >= 2048 bits or NIST P-256/P-384/P-521. Its name is
 * nameAlg || H(TPMT_PUBLIC).
 * Return: 0; -EBADMSG (malformed, or attributes/scheme unfit: diag says),
 * -EOPNOTSUPP, -ENOMEM.
 */
int vg_attest_ak_load(const uint8_t *buf, size_t len, struct vg_attest_ak **ret,
		      struct vg_diag *diag);
void vg_attest_ak_free(struct vg_attest_ak *ak);
/* The TPM name (TPM2B contents): 2-byte alg + digest. */
const uint8_t *vg_attest_ak_name(const struct vg_attest_ak *ak, size_t *len);
/* The EVP_PKEY (const EVP_PKEY *). */
const void *vg_attest_ak_pkey(const struct vg_attest_ak *ak);
/* The signing scheme: TPM sig alg and hash alg. */
void vg_attest_ak_scheme(const struct vg_attest_ak *ak, uint16_t *sig_alg, uint16_t *hash_alg);

/* ---- quotes ---- */

struct vg_attest_clock {
	bool valid;			/* a previous quote was accepted */
	uint64_t clock;
	uint32_t reset_count, restart_count;
};

struct vg_attest_request {
	const uint8_t *nonce;		/* fresh, CSPRNG */
	size_t nonce_len;		/* 1..VG_ATTEST_NONCE_MAX */
	unsigned int bank;		/* vg hash algo of the quoted PCRs */
	uint32_t mask;			/* PCRs asked for (bit i = PCR i) */
};

/*
 * vg_attest_quote_verify - check a quote: signature over @attest with @ak
 * (in the AK's own scheme), magic and type, extraData == nonce, selection
 * == the request's, pcrDigest == H(claimed values of @pcrs in selection
 * order) with the scheme's hash; *@ret (may be NULL) gets the decoded
 * quote. PCR values themselves are judged by the caller (replay).
 * Return: 0 trusted, 1 not (@v), -ENOMEM/-EIO.
 */
int vg_attest_quote_verify(const struct vg_attest_ak *ak, const uint8_t *attest, size_t alen,
			   const uint8_t *sig, size_t slen, const struct vg_attest_request *req,
			   const struct vg_pcr_values *pcrs, struct vg_tpms_attest *ret,
			   struct vg_attest_verdict *v);

/*
 * vg_attest_pcr_digest - H_@hash_alg over the values of @pv for the
 * selection of @q, in selection order, PCRs ascending.
 * Return: digest length; -ENOENT (a selected value is missing; diag says
 * which), -EOPNOTSUPP.
 */
int vg_attest_pcr_digest(const struct vg_tpms_attest *q, const struct vg_pcr_values *pv,
			 uint16_t hash_alg, uint8_t out[VG_HASH_MAX_DIGEST], struct vg_diag *diag);

/*
 * vg_attest_clock_check - compare the quote's clockInfo with the last
 * accepted quote of the same AK. resetCount or restartCount lower, or all
 * equal with the clock not advancing: VG_AF_CLOCK (an old or replayed
 * quote). safe == 0: VG_AF_UNSAFE. A higher resetCount is a reboot:
 * *@reboot = true (the measurement list starts over). On success @c is
 * updated to the quote's values.
 * Return: 0, 1 (@v).
 */
int vg_attest_clock_check(struct vg_attest_clock *c, const struct vg_tpms_attest *q, bool *reboot,
			  struct vg_attest_verdict *v);

/* ---- reference policies ---- */

struct vg_refpolicy;

/* Digests one policy may hold (files, boot_aggregate and ima-buf each). */
#define VG_REFPOLICY_DIGESTS_MAX (4u << 20)

int vg_refpolicy_new(struct vg_refpolicy **ret);
void vg_refpolicy_free(struct vg_refpolicy *p);

/*
 * vg_refpolicy_load - parse a policy document, any of:
 *   vigil's JSON  {"vigil_refpolicy": 1, "digests": {"/path": ["sha256:hex", ...]},
 *                  "excludes": ["^/tmp/"], "keys": ["<PEM>", ...],
 *                  "boot_aggregate": ["sha256:hex"], "ima_buf": {"name": [...]},
 *                  "keyrings": {"name": [...]}, "ignored_keyrings": [".ima"],
 *                  "ignore_violations": false,
 *                  "boot_pcrs": {"0": "sha256:hex", "7": ["hex", ...]}}
 *   ("boot_pcrs", optional: allowed values of boot PCRs 0-23 but 10, one
 *   string or a list each, bank by prefix or by length; a quote must cover
 *   every pinned PCR with an allowed value in its bank: boot.pcr_value,
 *   attest_boot.h),
 *   Keylime runtime policy v1 (digests without prefix, "excludes" as
 *   regexes, "verification-keys", "ima-buf", "keyrings",
 *   "ima.ignored_keyrings", "digests.boot_aggregate"),
 *   also inside a DSSE envelope (payload unwrapped, NOT verified),
 *   Keylime's legacy flat allowlist ("<hex digest> <path>" lines).
 * Excludes are POSIX extended regexes anchored at the start of the path
 * (Python's re.match, which Keylime uses).
 * A digest "NAME:hex" whose NAME is no algorithm vigil knows (Keylime's
 * "sm3_256", anything spelled [a-z0-9_-], at most 127 names a policy) is
 * kept as uncheckable, and exported as it came: it matches no entry, and
 * an entry whose path has only uncheckable digests fails with
 * VG_AF_DIGEST_UNSUPPORTED naming the algorithm (Keylime too parses such
 * a policy and fails only those entries); a path with a checkable digest
 * beside is judged by it. Boot PCR pins must be checkable.
 * Cost: linear in the document (duplicates are dropped through a keyed
 * hash index, per path), at most VG_REFPOLICY_DIGESTS_MAX digests.
 * Return: 0; -EBADMSG (diag names the key or line); -E2BIG (more digests
 * than the limit: diag names it); -ENOMEM.
 */
int vg_refpolicy_load(const uint8_t *buf, size_t len, struct vg_refpolicy **ret,
		      struct vg_diag *diag);

/* Allow @digest (any algo; matched by algorithm and bytes) for @path. Return: 0, -ENOMEM. */
int vg_refpolicy_allow(struct vg_refpolicy *p, const char *path, const struct vg_digest *digest);
/* Return: 0, -EINVAL (bad regex), -ENOMEM. */
int vg_refpolicy_exclude(struct vg_refpolicy *p, const char *regex, struct vg_diag *diag);
/* Add a trusted ima-sig key (PEM/DER, as vg_keyring_add_mem). Return: keys added or errno. */
int vg_refpolicy_add_key(struct vg_refpolicy *p, const uint8_t *buf, size_t len,
			 struct vg_diag *diag);
/* Return: number of paths with digests. */
size_t vg_refpolicy_paths(const struct vg_refpolicy *p);

struct vg_trust_index;
/*
 * vg_refpolicy_set_archive - what the Debian archive knows, for naming the
 * package of a digest @p does not allow (issue 16): @idx (may be NULL,
 * none) is an index of the checker's own trust database (never a host's
 * word) and must outlive @p's checks. It never makes an entry pass: a file
 * whose digest @idx records for its path in a version of a package newer
 * (dpkg's order) than every version whose digest @p allows for that path
 * fails as VG_AF_PACKAGE_NEWER, with package and versions; other digests
 * @idx knows keep their failure (VG_AF_DIGEST, VG_AF_NOT_IN_POLICY) with
 * the package named. Paths under /usr/{bin,sbin,lib*}/ are also looked up
 * without /usr (bookworm's packages ship /bin/x; a merged-/usr host
 * measures /usr/bin/x).
 */
void vg_refpolicy_set_archive(struct vg_refpolicy *p, const struct vg_trust_index *idx);

/*
 * vg_refpolicy_to_json - serialise in vigil's format (sorted paths,
 * keys as PEM), NUL-terminated, malloc'd into *@ret. Loading the text
 * gives a policy with the same verdicts, and exporting that the same
 * text (tests/fuzz/fuzz_refpolicy.c).
 * Return: length, -ENOMEM.
 */
long vg_refpolicy_to_json(const struct vg_refpolicy *p, char **ret);

/*
 * vg_refpolicy_check_entry - judge one measurement-list entry: excluded
 * paths pass; ima-sig with a signature passes when it verifies with a
 * policy key and fails (VG_AF_SIG_INVALID) when the policy has keys and
 * it does not; otherwise the file digest must be allowed for the path
 * (VG_AF_NOT_IN_POLICY, VG_AF_DIGEST; VG_AF_BOOT_AGGREGATE for the
 * boot_aggregate entry; VG_AF_DIGEST_UNSUPPORTED when the policy's
 * digests for the path are all of algorithms vigil does not know). Violations fail unless ignore_violations.
 * ima-buf entries: a keyring entry (a key in the buffer) is judged as
 * docs/attest-states.md "Keys learned from the log" says; this function
 * learns nothing (vg_attest_log_check does).
 * Return: 0, 1 (@v; @index goes into v->entry).
 */
int vg_refpolicy_check_entry(const struct vg_refpolicy *p, const struct vg_imalog_entry *e,
			     uint64_t index, struct vg_attest_verdict *v);

/* ---- incremental log verification ---- */

/*
 * Keys learned from the list's keyring entries (ima-buf entries whose
 * buffer is a DER or PEM certificate or public key, RSA or EC), as the
 * buffers themselves: records of a big-endian u16 length and the bytes,
 * each buffer once, in the order learned. Bounded: a key whose record does
 * not fit in what is left is not learned (its signatures are then judged
 * as if it were unknown: never more trust than with it, the bound is
 * documented in docs/attest-keylime.md). Unused bytes are zero, so that
 * two states compare with memcmp.
 */
#define VG_ATTEST_LEARNED_MAX 4096	/* a store column (SIPC_COL_MAX) */

struct vg_attest_learned {
	uint32_t len;			/* bytes of @buf in use */
	uint8_t buf[VG_ATTEST_LEARNED_MAX];
};

/* Return: the number of keys in @k (records that decode). */
size_t vg_attest_learned_count(const struct vg_attest_learned *k);
/*
 * vg_attest_learned_set - @len bytes from the store into @k: records must
 * decode exactly. Return: 0, -EBADMSG (@k emptied).
 */
int vg_attest_learned_set(struct vg_attest_learned *k, const uint8_t *buf, size_t len);

struct vg_attest_logstate {
	uint64_t entries;		/* entries verified and attested so far */
	uint64_t offset;		/* byte offset of the next entry in the binary list */
	struct vg_digest pcr;		/* PCR value they replay to (bank of the quote) */
	uint64_t lag;			/* entries beyond the quote at the last check */
	struct vg_attest_learned keys;	/* keys learned by the attested entries */
};

/* The state of a fresh boot: nothing verified, PCR zero in @bank. */
void vg_attest_logstate_init(struct vg_attest_logstate *st, unsigned int bank);

/*
 * vg_attest_log_check - replay and judge the entries of @log (a binary
 * list, template digests of bank @log_algo, starting at entry st->entries
 * / byte st->offset of the agent's list) from st->pcr. Every entry's
 * template digest is checked (VG_AF_LOG_ENTRY) and every entry judged by
 * @pol (NULL: none). With @quoted (the quoted PCR @pcr in bank st->pcr's
 * algo) the first prefix whose replay equals it is the attested part: @st
 * moves to its end; entries after it are judged but left for the next
 * round (a quote may lag the log). No prefix reaching @quoted:
 * VG_AF_LOG_PCR. A lag that does not shrink below the previous one while
 * new entries keep coming: VG_AF_LOG_PROGRESS. @quoted NULL: every entry
 * counts as attested (offline policy check).
 * Keys learned (struct vg_attest_learned): st->keys verify ima-sig
 * entries from the start; an allowed keyring entry adds its key for the
 * entries after it; on success st->keys becomes the keys learned up to
 * the end of the attested part (a key in the unattested tail is learned
 * again when that entry is judged next round).
 * A policy failure does not stop the judgement: every entry is judged and
 * each failure goes into @v's list (the first in @v's fields, up to
 * VG_ATTEST_FAILURES_MAX listed, all counted); an entry that does not
 * parse or was altered ends it (nothing after it can be trusted), as do
 * VG_AF_LOG_PCR and VG_AF_LOG_PROGRESS, each added after the policy's
 * failures. A failure already in @v is dropped first. @v, when it may
 * hold a list, is freed with vg_attest_verdict_release(). A round that fails nowhere allocates
 * nothing for its verdict.
 * Return: 0, 1 (@v, @st unchanged), -ENOMEM/-EIO (@v's list dropped).
 */
int vg_attest_log_check(const struct vg_refpolicy *pol, const uint8_t *log, size_t len,
			unsigned int log_algo, unsigned int pcr, const struct vg_digest *quoted,
			struct vg_attest_logstate *st, struct vg_attest_verdict *v);

/* ---- one round of evidence, all checks ---- */

struct vg_attest_boot;

struct vg_attest_evidence {
	const uint8_t *attest;
	size_t attest_len;
	const uint8_t *sig;
	size_t sig_len;
	struct vg_pcr_values pcrs;	/* claimed values of the quoted PCRs */
	const uint8_t *log;		/* binary list, starting at byte log_offset */
	size_t log_len;
	uint64_t log_offset;
	unsigned int log_algo;		/* template digest bank of the list (sha1) */
	const struct vg_attest_boot *boot;	/* the agent's boot log, replayed (attest_boot.h);
						   NULL: none */
	const struct vg_attest_verdict *boot_events;	/* the failures of that log's events
							   (vg_mbpolicy_check, judged once per
							   boot log); NULL or none: all passed */
};

struct vg_attest_state {
	struct vg_attest_clock clock;
	struct vg_attest_logstate log;
	/*
	 * the next boots' initrds and command lines the attested lists announced
	 * (attest_announce.h): kept across reboots, unlike @log; each with the
	 * boot that announced it
	 */
	struct vg_attest_announced ann;
};

/*
 * vg_attest_evidence_check - one round: quote verify, clock check (a
 * reboot restarts the log state at zero, and the evidence must then carry
 * the list from offset 0), replay of PCR 10 (when the request covers it)
 * against the quoted value, policy on new entries. ev->log_offset must be
 * where the state expects the next entry (VG_AF_LOG_PCR otherwise). Boot
 * PCRs (vg_attest_boot_check, attest_boot.h): against ev->boot when the
 * agent has a boot log, against the values @pol pins; a list starting at
 * entry 0 must then begin with the boot log's boot_aggregate. Once the
 * boot PCRs match the log, the failures of its events (ev->boot_events)
 * are the round's too, added after those of the list; a policy with a
 * measured_boot section and no boot log (ev->boot NULL) fails boot.event. Other PCRs
 * are only checked against pcrDigest.
 * On 0 the state is advanced; on 1 it is unchanged. *@reboot is set when
 * a reboot was recognised.
 * Return: 0, 1 (@v), negative errno.
 */
int vg_attest_evidence_check(const struct vg_attest_ak *ak, const struct vg_refpolicy *pol,
			     const struct vg_attest_request *req,
			     const struct vg_attest_evidence *ev, struct vg_attest_state *st,
			     bool *reboot, struct vg_attest_verdict *v);

/*
 * A round in two steps, for a verifier that must know the quote before it
 * asks for the rest of the evidence (which boot it is, where the list must
 * start): vg_attest_evidence_quote verifies and decodes the quote once and
 * decides whether the agent rebooted; vg_attest_evidence_judge then takes
 * the boot log and the list and commits. vg_attest_evidence_check is both.
 */
struct vg_attest_quoted {
	struct vg_tpms_attest quote;	/* decoded; signature, nonce, PCRs verified */
	struct vg_attest_clock from;	/* the state's clock it was judged against */
	struct vg_attest_clock clock;	/* ... advanced to this quote */
	bool reboot;			/* resetCount went up: a new boot */
	bool restart_log;		/* the list is verified again from entry 0 */
	uint64_t log_offset;		/* where the list sent must start */
};

/*
 * vg_attest_evidence_quote - the quote of @ev (attest, sig, pcrs) verified
 * with @ak against @req, and the clock check against @st: the only place
 * that decides "reboot". Nothing in @st changes.
 * Return: 0 (@ret set), 1 (@v), negative errno.
 */
int vg_attest_evidence_quote(const struct vg_attest_ak *ak, const struct vg_attest_request *req,
			     const struct vg_attest_evidence *ev, const struct vg_attest_state *st,
			     struct vg_attest_quoted *ret, struct vg_attest_verdict *v);

/*
 * vg_attest_evidence_judge - the rest of vg_attest_evidence_check for a
 * quote @q that vg_attest_evidence_quote accepted for the same @req, @ev
 * and @st: boot PCRs, the list from q->log_offset, the policy.
 * On 0 the state is advanced; on 1 or an error it is unchanged.
 * Return: 0, 1 (@v), -EINVAL (@st is not the state @q was judged
 * against), negative errno.
 */
int vg_attest_evidence_judge(const struct vg_refpolicy *pol, const struct vg_attest_request *req,
			     const struct vg_attest_evidence *ev, const struct vg_attest_quoted *q,
			     struct vg_attest_state *st, struct vg_attest_verdict *v);

/* Base64 (RFC 4648, no line breaks) into a malloc'd NUL-terminated string. Return: length, -ENOMEM. */
long vg_attest_b64_encode(const uint8_t *buf, size_t len, char **ret);
/* Base64 (whitespace ignored) into malloc'd bytes. Return: length, -EBADMSG, -ENOMEM. */
long vg_attest_b64_decode(const char *s, uint8_t **ret);

/* ---- registration (software side) ---- */

/*
 * vg_attest_key_id - what identifies a TPM key (an EK) whatever else its
 * TPM2B_PUBLIC @pub says: SHA-256 of the DER SubjectPublicKeyInfo of the
 * key it holds (RSA modulus and exponent, ECC curve and point), so that
 * the same key sent with other attributes, policy or name algorithm has
 * the same id. Return: 0, -EBADMSG (@diag: not a TPM2B_PUBLIC of an RSA or
 * ECC key), -ENOMEM.
 */
int vg_attest_key_id(const uint8_t *pub, size_t len, uint8_t id[32], struct vg_diag *diag);

/*
 * vg_attest_ek_check - the EK public (TPM2B_PUBLIC) must be the key of
 * @cert (DER X.509), and, when @ca_file is given (PEM bundle of roots and
 * intermediates), the certificate must chain to it (OpenSSL
 * X509_verify_cert; the EK certificate's critical SAN is accepted).
 * Return: 0, 1 (@v: VG_AF_EK_CERT), -ENOMEM.
 */
int vg_attest_ek_check(const uint8_t *ek_pub, size_t ek_len, const uint8_t *cert, size_t cert_len,
		       const char *ca_file, struct vg_attest_verdict *v);

/*
 * vg_attest_make_credential - TPM2_MakeCredential in software for an RSA
 * EK (seed by RSA-OAEP) or an ECC NIST P-256/P-384 EK (seed by ECDH with
 * a fresh key and KDFe; @enc_secret is then the fresh point, a marshalled
 * TPMS_ECC_POINT), any nameAlg but SHA-1, AES-128/256-CFB: wraps @secret
 * (1..64 bytes) for the object named @name so that only the TPM holding
 * the EK's private key and an object with that name can recover it.
 * @id_object receives the TPM2B_ID_OBJECT contents (no size prefix),
 * @enc_secret the TPM2B_ENCRYPTED_SECRET contents.
 * Return: 0, -EOPNOTSUPP (another key type or curve), -EBADMSG, -ENOSPC,
 * -ENOMEM, -EIO.
 */
int vg_attest_make_credential(const uint8_t *ek_pub, size_t ek_len, const uint8_t *name,
			      size_t name_len, const uint8_t *secret, size_t secret_len,
			      uint8_t *id_object, size_t *id_len, uint8_t *enc_secret,
			      size_t *es_len, struct vg_diag *diag);

#endif
