// SPDX-License-Identifier: MIT
/*
 * eventlog.c - the TCG PC Client boot event log (eventlog.h): decoder,
 * per-bank replay and encoder.
 *
 * The decoder reads the untrusted bytes once, little-endian, field by
 * field through a bounded reader, and records offsets into its own copy of
 * the buffer: no event data is interpreted, no struct is cast over the
 * bytes. Every failure names the record index and its byte offset. The
 * replay hashes with OpenSSL (one context for the whole log); the encoder
 * rebuilds the bytes from the decoded fields, which the fuzz harness uses
 * to show nothing was skipped or misread.
 *
 * Not here: event data parsers (UEFI variables, device paths), measured-
 * boot policies on events, go-attestation's workarounds for firmware bugs
 * (a missing ExitBootServices pair is a mismatch, as the TPM says).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "internal.h"
#include "vigil/eventlog.h"

static const char specid_sig[16] = "Spec ID Event03";	/* with its NUL */
static const char locality_sig[16] = "StartupLocality";

static const struct {
	uint32_t type;
	const char *name;
} type_names[] = {
	{ VG_EV_PREBOOT_CERT, "EV_PREBOOT_CERT" },
	{ VG_EV_POST_CODE, "EV_POST_CODE" },
	{ VG_EV_UNUSED, "EV_UNUSED" },
	{ VG_EV_NO_ACTION, "EV_NO_ACTION" },
	{ VG_EV_SEPARATOR, "EV_SEPARATOR" },
	{ VG_EV_ACTION, "EV_ACTION" },
	{ VG_EV_EVENT_TAG, "EV_EVENT_TAG" },
	{ VG_EV_S_CRTM_CONTENTS, "EV_S_CRTM_CONTENTS" },
	{ VG_EV_S_CRTM_VERSION, "EV_S_CRTM_VERSION" },
	{ VG_EV_CPU_MICROCODE, "EV_CPU_MICROCODE" },
	{ VG_EV_PLATFORM_CONFIG_FLAGS, "EV_PLATFORM_CONFIG_FLAGS" },
	{ VG_EV_TABLE_OF_DEVICES, "EV_TABLE_OF_DEVICES" },
	{ VG_EV_COMPACT_HASH, "EV_COMPACT_HASH" },
	{ VG_EV_IPL, "EV_IPL" },
	{ VG_EV_IPL_PARTITION_DATA, "EV_IPL_PARTITION_DATA" },
	{ VG_EV_NONHOST_CODE, "EV_NONHOST_CODE" },
	{ VG_EV_NONHOST_CONFIG, "EV_NONHOST_CONFIG" },
	{ VG_EV_NONHOST_INFO, "EV_NONHOST_INFO" },
	{ VG_EV_OMIT_BOOT_DEVICE_EVENTS, "EV_OMIT_BOOT_DEVICE_EVENTS" },
	{ VG_EV_POST_CODE2, "EV_POST_CODE2" },
	{ VG_EV_EFI_EVENT_BASE, "EV_EFI_EVENT_BASE" },
	{ VG_EV_EFI_VARIABLE_DRIVER_CONFIG, "EV_EFI_VARIABLE_DRIVER_CONFIG" },
	{ VG_EV_EFI_VARIABLE_BOOT, "EV_EFI_VARIABLE_BOOT" },
	{ VG_EV_EFI_BOOT_SERVICES_APPLICATION, "EV_EFI_BOOT_SERVICES_APPLICATION" },
	{ VG_EV_EFI_BOOT_SERVICES_DRIVER, "EV_EFI_BOOT_SERVICES_DRIVER" },
	{ VG_EV_EFI_RUNTIME_SERVICES_DRIVER, "EV_EFI_RUNTIME_SERVICES_DRIVER" },
	{ VG_EV_EFI_GPT_EVENT, "EV_EFI_GPT_EVENT" },
	{ VG_EV_EFI_ACTION, "EV_EFI_ACTION" },
	{ VG_EV_EFI_PLATFORM_FIRMWARE_BLOB, "EV_EFI_PLATFORM_FIRMWARE_BLOB" },
	{ VG_EV_EFI_HANDOFF_TABLES, "EV_EFI_HANDOFF_TABLES" },
	{ VG_EV_EFI_PLATFORM_FIRMWARE_BLOB2, "EV_EFI_PLATFORM_FIRMWARE_BLOB2" },
	{ VG_EV_EFI_HANDOFF_TABLES2, "EV_EFI_HANDOFF_TABLES2" },
	{ VG_EV_EFI_VARIABLE_BOOT2, "EV_EFI_VARIABLE_BOOT2" },
	{ VG_EV_EFI_GPT_EVENT2, "EV_EFI_GPT_EVENT2" },
	{ VG_EV_EFI_HCRTM_EVENT, "EV_EFI_HCRTM_EVENT" },
	{ VG_EV_EFI_VARIABLE_AUTHORITY, "EV_EFI_VARIABLE_AUTHORITY" },
	{ VG_EV_EFI_SPDM_FIRMWARE_BLOB, "EV_EFI_SPDM_FIRMWARE_BLOB" },
	{ VG_EV_EFI_SPDM_FIRMWARE_CONFIG, "EV_EFI_SPDM_FIRMWARE_CONFIG" },
	{ VG_EV_EFI_SPDM_DEVICE_POLICY, "EV_EFI_SPDM_DEVICE_POLICY" },
	{ VG_EV_EFI_SPDM_DEVICE_AUTHORITY, "EV_EFI_SPDM_DEVICE_AUTHORITY" },
};

const char *vg_eventlog_type_name(uint32_t type)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(type_names); i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	return NULL;
}

/* TPM_ALG_ID (TPM 2.0 Part 2, 6.3) of the hashes vigil knows. */
static const struct {
	uint16_t tpm_alg;
	uint8_t algo;
} tpm_algs[] = {
	{ 0x0004, VG_HASH_SHA1 },
	{ 0x000b, VG_HASH_SHA256 },
	{ 0x000c, VG_HASH_SHA384 },
	{ 0x000d, VG_HASH_SHA512 },
	{ 0x0012, VG_HASH_SM3_256 },
	{ 0x0027, VG_HASH_SHA3_256 },
	{ 0x0028, VG_HASH_SHA3_384 },
	{ 0x0029, VG_HASH_SHA3_512 },
};

int vg_eventlog_tpm_algo(uint16_t tpm_alg)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(tpm_algs); i++)
		if (tpm_algs[i].tpm_alg == tpm_alg)
			return tpm_algs[i].algo;
	return -1;
}

static uint16_t tpm_alg_of(unsigned int algo)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(tpm_algs); i++)
		if (tpm_algs[i].algo == algo)
			return tpm_algs[i].tpm_alg;
	return 0;
}

/* ---- bounded little-endian reader ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
};

static bool has(const struct rd *r, size_t n)
{
	return r->len - r->off >= n;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

struct parse {
	struct vg_eventlog *log;
	size_t cap_ev, cap_dg;
	bool pcr0_extended;
	struct vg_diag *diag;
};

#define EV_ERR(ps, idx, at, fmt, ...)                                                      \
	vg_diag_set((ps)->diag, -EBADMSG, "event %zu (byte %zu): " fmt, (size_t)(idx),        \
		    (size_t)(at), ##__VA_ARGS__)

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *p;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* TCG_EfiSpecIDEvent in event[] of the first record. */
static int parse_specid(struct parse *ps, size_t off, uint32_t size)
{
	struct vg_eventlog *log = ps->log;
	struct rd r = { log->buf + off, size, 0 };
	const uint8_t *p;

	/* signature, platformClass, 4 bytes of versions, numberOfAlgorithms */
	if (!has(&r, 16 + 4 + 4 + 4))
		return EV_ERR(ps, 0, 0, "Spec ID event of %" PRIu32 " bytes is too short", size);
	p = r.p + 16;
	log->platform_class = le32(p);
	log->spec_minor = p[4];
	log->spec_major = p[5];
	log->spec_errata = p[6];
	log->uintn_size = p[7];
	log->nalgs = le32(p + 8);
	r.off = 28;
	if (log->nalgs == 0 || log->nalgs > VG_EVENTLOG_ALGS_MAX)
		return EV_ERR(ps, 0, 0, "Spec ID event lists %" PRIu32 " algorithms (1..%u)",
			      log->nalgs, VG_EVENTLOG_ALGS_MAX);
	if (!has(&r, 4u * log->nalgs + 1))
		return EV_ERR(ps, 0, 0, "Spec ID event: %" PRIu32 " algorithms do not fit in "
			      "eventSize %" PRIu32, log->nalgs, size);
	for (uint32_t i = 0; i < log->nalgs; i++) {
		struct vg_eventlog_alg *a = &log->algs[i];

		a->tpm_alg = le16(r.p + r.off);
		a->size = le16(r.p + r.off + 2);
		a->algo = vg_eventlog_tpm_algo(a->tpm_alg);
		r.off += 4;
		for (uint32_t j = 0; j < i; j++)
			if (log->algs[j].tpm_alg == a->tpm_alg)
				return EV_ERR(ps, 0, 0, "Spec ID event lists algorithm 0x%04x twice",
					      a->tpm_alg);
		if (a->size == 0 || a->size > VG_EVENTLOG_DIGEST_MAX)
			return EV_ERR(ps, 0, 0, "Spec ID event: algorithm 0x%04x digestSize %u "
				      "(1..%u)", a->tpm_alg, a->size, VG_EVENTLOG_DIGEST_MAX);
		if (a->algo >= 0 && a->size != vg_hash_size((unsigned int)a->algo))
			return EV_ERR(ps, 0, 0, "Spec ID event: %s digestSize %u, not %zu",
				      vg_hash_name((unsigned int)a->algo), a->size,
				      vg_hash_size((unsigned int)a->algo));
	}
	log->vendor_len = r.p[r.off++];
	log->vendor_off = off + r.off;
	if (!has(&r, log->vendor_len))
		return EV_ERR(ps, 0, 0, "Spec ID event: vendorInfoSize %u runs past eventSize "
			      "%" PRIu32, log->vendor_len, size);
	r.off += log->vendor_len;
	if (r.off != size)
		return EV_ERR(ps, 0, 0, "Spec ID event: %zu bytes after vendorInfo", size - r.off);
	return 0;
}

static int add_event(struct parse *ps, const struct vg_eventlog_event *e)
{
	struct vg_eventlog *log = ps->log;

	if (log->nevents >= VG_EVENTLOG_EVENTS_MAX)
		return EV_ERR(ps, log->nevents, e->offset, "more than %u events",
			      VG_EVENTLOG_EVENTS_MAX);
	if (grow((void **)&log->events, &ps->cap_ev, log->nevents + 1, sizeof(*log->events)) < 0)
		return vg_diag_set(ps->diag, -ENOMEM, "out of memory");
	log->events[log->nevents++] = *e;
	return 0;
}

/* Checks shared by both record forms, once digests and data are known. */
static int check_event(struct parse *ps, const struct vg_eventlog_event *e, size_t idx)
{
	struct vg_eventlog *log = ps->log;
	const uint8_t *data = log->buf + e->data_off;

	if (e->type == VG_EV_NO_ACTION) {
		if (e->data_len >= 16 && memcmp(data, locality_sig, 16) == 0) {
			if (e->data_len != 17 || e->pcr != 0)
				return EV_ERR(ps, idx, e->offset, "StartupLocality event of %" PRIu32
					      " bytes on PCR %" PRIu32 " (17 bytes, PCR 0)",
					      e->data_len, e->pcr);
			if (log->startup_locality >= 0 || ps->pcr0_extended)
				return EV_ERR(ps, idx, e->offset, "StartupLocality event after %s",
					      ps->pcr0_extended ? "an extend of PCR 0"
								: "another one");
			if (data[16] > 4)
				return EV_ERR(ps, idx, e->offset, "StartupLocality %u (0..4)",
					      data[16]);
			log->startup_locality = data[16];
		}
		return 0;
	}
	if (e->pcr >= VG_PCR_COUNT)
		return EV_ERR(ps, idx, e->offset, "PCR index %" PRIu32 " (0..%u)", e->pcr,
			      VG_PCR_COUNT - 1);
	if (e->pcr == 0)
		ps->pcr0_extended = true;
	return 0;
}

static int parse_legacy_record(struct parse *ps, struct rd *r, size_t idx)
{
	struct vg_eventlog *log = ps->log;
	struct vg_eventlog_event e = { .offset = r->off };
	int ret;

	if (!has(r, 32))
		return EV_ERR(ps, idx, r->off, "header truncated (%zu of 32 bytes)", r->len - r->off);
	e.pcr = le32(r->p + r->off);
	e.type = le32(r->p + r->off + 4);
	e.data_len = le32(r->p + r->off + 28);
	e.data_off = r->off + 32;
	if (e.data_len > r->len - r->off - 32)
		return EV_ERR(ps, idx, r->off, "eventSize %" PRIu32 " runs past the end (%zu bytes "
			      "left)", e.data_len, r->len - r->off - 32);
	if (grow((void **)&log->digests, &ps->cap_dg, log->ndigests + 1, sizeof(*log->digests)) < 0)
		return vg_diag_set(ps->diag, -ENOMEM, "out of memory");
	e.ndigests = 1;
	e.first_digest = (uint32_t)log->ndigests;
	log->digests[log->ndigests++] = (struct vg_eventlog_digest){
		.tpm_alg = 0x0004, .len = 20, .off = (uint32_t)(r->off + 8)
	};
	e.size = 32 + (size_t)e.data_len;
	r->off += e.size;
	if (idx > 0 || !log->agile) {
		ret = check_event(ps, &e, idx);
		if (ret < 0)
			return ret;
	}
	return add_event(ps, &e);
}

static int parse_agile_record(struct parse *ps, struct rd *r, size_t idx)
{
	struct vg_eventlog *log = ps->log;
	struct vg_eventlog_event e = { .offset = r->off };
	size_t start = r->off;
	uint32_t count;
	int ret;

	if (!has(r, 12))
		return EV_ERR(ps, idx, start, "header truncated (%zu of 12 bytes)", r->len - r->off);
	e.pcr = le32(r->p + r->off);
	e.type = le32(r->p + r->off + 4);
	count = le32(r->p + r->off + 8);
	r->off += 12;
	if (count > log->nalgs)
		return EV_ERR(ps, idx, start, "%" PRIu32 " digests, the Spec ID event lists %" PRIu32
			      " algorithms", count, log->nalgs);
	if (grow((void **)&log->digests, &ps->cap_dg, log->ndigests + count,
		 sizeof(*log->digests)) < 0)
		return vg_diag_set(ps->diag, -ENOMEM, "out of memory");
	e.ndigests = count;
	e.first_digest = (uint32_t)log->ndigests;
	for (uint32_t i = 0; i < count; i++) {
		const struct vg_eventlog_alg *a;
		uint16_t alg;

		if (!has(r, 2))
			return EV_ERR(ps, idx, start, "digest %" PRIu32 " truncated", i);
		alg = le16(r->p + r->off);
		a = vg_eventlog_alg(log, alg);
		if (!a)
			return EV_ERR(ps, idx, start, "digest algorithm 0x%04x is not in the Spec ID "
				      "event", alg);
		for (uint32_t j = 0; j < i; j++)
			if (log->digests[e.first_digest + j].tpm_alg == alg)
				return EV_ERR(ps, idx, start, "two digests of algorithm 0x%04x", alg);
		r->off += 2;
		if (!has(r, a->size))
			return EV_ERR(ps, idx, start, "digest %" PRIu32 " (0x%04x, %u bytes) truncated",
				      i, alg, a->size);
		log->digests[log->ndigests++] = (struct vg_eventlog_digest){
			.tpm_alg = alg, .len = a->size, .off = (uint32_t)r->off
		};
		r->off += a->size;
	}
	if (!has(r, 4))
		return EV_ERR(ps, idx, start, "eventSize truncated");
	e.data_len = le32(r->p + r->off);
	r->off += 4;
	if (e.data_len > r->len - r->off)
		return EV_ERR(ps, idx, start, "eventSize %" PRIu32 " runs past the end (%zu bytes "
			      "left)", e.data_len, r->len - r->off);
	e.data_off = r->off;
	r->off += e.data_len;
	e.size = r->off - start;
	ret = check_event(ps, &e, idx);
	if (ret < 0)
		return ret;
	return add_event(ps, &e);
}

int vg_eventlog_parse(const uint8_t *buf, size_t len, struct vg_eventlog **ret,
		      struct vg_diag *diag)
{
	struct vg_eventlog *log;
	struct parse ps = { .diag = diag };
	struct rd r;
	int rc;

	if (len == 0)
		return vg_diag_set(diag, -EBADMSG, "empty event log");
	if (len > VG_EVENTLOG_SIZE_MAX)
		return vg_diag_set(diag, -EBADMSG, "event log of %zu bytes (at most %u)", len,
				   VG_EVENTLOG_SIZE_MAX);
	log = calloc(1, sizeof(*log));
	if (!log)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	log->startup_locality = -1;
	log->buf = malloc(len);
	if (!log->buf) {
		rc = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto fail;
	}
	memcpy(log->buf, buf, len);
	log->len = len;
	ps.log = log;
	r = (struct rd){ log->buf, len, 0 };

	/* the first record has the SHA-1 form in both kinds of log */
	if (len >= 32 + 16 && le32(buf) == 0 && le32(buf + 4) == VG_EV_NO_ACTION &&
	    le32(buf + 28) >= 16 && memcmp(buf + 32, specid_sig, 16) == 0)
		log->agile = true;
	rc = parse_legacy_record(&ps, &r, 0);
	if (rc < 0)
		goto fail;
	if (log->agile) {
		rc = parse_specid(&ps, log->events[0].data_off, log->events[0].data_len);
		if (rc < 0)
			goto fail;
	} else {
		log->nalgs = 1;
		log->algs[0] = (struct vg_eventlog_alg){ 0x0004, 20, VG_HASH_SHA1 };
	}
	while (r.off < len) {
		rc = log->agile ? parse_agile_record(&ps, &r, log->nevents)
				: parse_legacy_record(&ps, &r, log->nevents);
		if (rc < 0)
			goto fail;
	}
	*ret = log;
	return 0;
fail:
	vg_eventlog_free(log);
	return rc;
}

void vg_eventlog_free(struct vg_eventlog *log)
{
	if (!log)
		return;
	free(log->buf);
	free(log->events);
	free(log->digests);
	free(log);
}

const struct vg_eventlog_alg *vg_eventlog_alg(const struct vg_eventlog *log, uint16_t tpm_alg)
{
	for (uint32_t i = 0; i < log->nalgs; i++)
		if (log->algs[i].tpm_alg == tpm_alg)
			return &log->algs[i];
	return NULL;
}

const uint8_t *vg_eventlog_event_digest(const struct vg_eventlog *log,
					const struct vg_eventlog_event *e, uint16_t tpm_alg,
					size_t *len)
{
	for (uint32_t i = 0; i < e->ndigests; i++) {
		const struct vg_eventlog_digest *d = &log->digests[e->first_digest + i];

		if (d->tpm_alg == tpm_alg) {
			*len = d->len;
			return log->buf + d->off;
		}
	}
	return NULL;
}

uint32_t vg_eventlog_banks(const struct vg_eventlog *log)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < log->nalgs; i++)
		if (log->algs[i].algo >= 0)
			m |= 1u << log->algs[i].algo;
	return m;
}

int vg_eventlog_replay(const struct vg_eventlog *log, unsigned int algo,
		       struct vg_eventlog_pcrs *ret, struct vg_diag *diag)
{
	uint16_t tpm_alg = tpm_alg_of(algo);
	size_t sz = vg_hash_size(algo);
	struct vg_eventlog_pcrs out = { .algo = algo };
	EVP_MD_CTX *ctx = NULL;
	EVP_MD *md = NULL;
	int r = 0;

	if (!tpm_alg || !vg_eventlog_alg(log, tpm_alg))
		return vg_diag_set(diag, -ENOENT, "the event log has no %s digests",
				   vg_hash_name(algo) ? vg_hash_name(algo) : "such");
	md = vg__md_fetch(algo);
	if (!md) {
		/* the default provider always has SHA-1 and SHA-2: failing those is memory */
		bool base = algo == VG_HASH_SHA1 || algo == VG_HASH_SHA256 ||
			    algo == VG_HASH_SHA384 || algo == VG_HASH_SHA512;

		return vg_diag_ssl(diag, base || vg_hash_available(algo) ? -ENOMEM : -EOPNOTSUPP,
				   "%s: hash not available", vg_hash_name(algo));
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx) {
		r = vg_diag_ssl(diag, -ENOMEM, "out of memory");
		goto out;
	}
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		out.pcr[i].algo = (uint8_t)algo;
		out.pcr[i].len = (uint8_t)sz;
	}
	if (log->startup_locality >= 0) {
		out.pcr[0].bytes[sz - 1] = (uint8_t)log->startup_locality;
		out.touched |= 1u;
	}
	for (size_t i = 0; i < log->nevents; i++) {
		const struct vg_eventlog_event *e = &log->events[i];
		struct vg_digest *p;
		const uint8_t *d;
		unsigned int n;
		size_t dl;

		if (e->type == VG_EV_NO_ACTION)
			continue;
		d = vg_eventlog_event_digest(log, e, tpm_alg, &dl);
		if (!d) {
			/* logged for other banks only (Windows' own events): not extended here */
			out.missing++;
			continue;
		}
		p = &out.pcr[e->pcr];
		if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
		    EVP_DigestUpdate(ctx, p->bytes, sz) != 1 ||
		    EVP_DigestUpdate(ctx, d, dl) != 1 ||
		    EVP_DigestFinal_ex(ctx, p->bytes, &n) != 1) {
			r = vg_diag_ssl(diag, -ENOMEM, "event %zu: %s", i, vg_hash_name(algo));
			goto out;
		}
		out.touched |= 1u << e->pcr;
	}
	*ret = out;
out:
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	return r;
}

/* ---- encoder ---- */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static size_t specid_size(const struct vg_eventlog *log)
{
	return 28 + 4 * (size_t)log->nalgs + 1 + log->vendor_len;
}

static uint8_t *put_specid(const struct vg_eventlog *log, uint8_t *p)
{
	memcpy(p, specid_sig, 16);
	p = put32(p + 16, log->platform_class);
	*p++ = log->spec_minor;
	*p++ = log->spec_major;
	*p++ = log->spec_errata;
	*p++ = log->uintn_size;
	p = put32(p, log->nalgs);
	for (uint32_t i = 0; i < log->nalgs; i++) {
		p = put16(p, log->algs[i].tpm_alg);
		p = put16(p, log->algs[i].size);
	}
	*p++ = log->vendor_len;
	memcpy(p, log->buf + log->vendor_off, log->vendor_len);
	return p + log->vendor_len;
}

long vg_eventlog_encode(const struct vg_eventlog *log, uint8_t **ret)
{
	size_t total = 0;
	uint8_t *out, *p;

	for (size_t i = 0; i < log->nevents; i++) {
		const struct vg_eventlog_event *e = &log->events[i];
		size_t dl = i == 0 && log->agile ? specid_size(log) : e->data_len;

		if (i == 0 || !log->agile) {
			total += 32 + dl;
			continue;
		}
		total += 16 + dl;
		for (uint32_t k = 0; k < e->ndigests; k++)
			total += 2 + (size_t)log->digests[e->first_digest + k].len;
	}
	if (total > LONG_MAX)
		return -ENOMEM;
	out = malloc(total ? total : 1);
	if (!out)
		return -ENOMEM;
	p = out;
	for (size_t i = 0; i < log->nevents; i++) {
		const struct vg_eventlog_event *e = &log->events[i];

		p = put32(p, e->pcr);
		p = put32(p, e->type);
		if (i == 0 || !log->agile) {
			const struct vg_eventlog_digest *d = &log->digests[e->first_digest];

			memcpy(p, log->buf + d->off, 20);
			p += 20;
		} else {
			p = put32(p, e->ndigests);
			for (uint32_t k = 0; k < e->ndigests; k++) {
				const struct vg_eventlog_digest *d = &log->digests[e->first_digest + k];

				p = put16(p, d->tpm_alg);
				memcpy(p, log->buf + d->off, d->len);
				p += d->len;
			}
		}
		if (i == 0 && log->agile) {
			p = put32(p, (uint32_t)specid_size(log));
			p = put_specid(log, p);
		} else {
			p = put32(p, e->data_len);
			memcpy(p, log->buf + e->data_off, e->data_len);
			p += e->data_len;
		}
	}
	*ret = out;
	return (long)total;
}
