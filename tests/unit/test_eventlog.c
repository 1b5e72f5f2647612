// SPDX-License-Identifier: MIT
/*
 * test_eventlog.c - the TCG boot event log (eventlog.h) and its use by the
 * verifier (attest_boot.h): real logs from tests/vectors/eventlog decoded,
 * re-encoded byte for byte and replayed to the values tpm2_eventlog and
 * go-attestation give; truncation at every offset and crafted malformed
 * headers refused naming the event and offset; boot PCR checks, pinned
 * values and boot_aggregate; allocation failures end in -ENOMEM.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vigil/attest.h"
#include "vigil/attest_boot.h"
#include "vigil/eventlog.h"

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	uint8_t *buf = malloc(1 << 20);
	FILE *f;

	snprintf(path, sizeof(path), "%s/eventlog/%s", v ? v : "tests/vectors", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void hex(const struct vg_digest *d, char *out)
{
	vg_hex_encode(d->bytes, d->len, out);
}

static const struct {
	const char *file;
	size_t events;
	bool agile;
	uint32_t banks;
} logs[] = {
	{ "tpm2-tools__event-arch-linux.bin", 25, true, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256 },
	{ "tpm2-tools__event-sd-boot-fedora37.bin", 28, true, 1u << VG_HASH_SHA256 },
	{ "tpm2-tools__event-gce-ubuntu-2104-log.bin", 112, true,
	  1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256 | 1u << VG_HASH_SHA384 },
	{ "tpm2-tools__event-uefi-sha1-log.bin", 17, false, 1u << VG_HASH_SHA1 },
	{ "go-attestation__option_rom_eventlog", 61, false, 1u << VG_HASH_SHA1 },
	{ "go-attestation__short_no_action_eventlog", 1, false, 1u << VG_HASH_SHA1 },
	{ "keylime__binary_bios_measurements", 121, true, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256 },
	{ "python3-uefi-eventlog__thinkpad_p511.bin", 59, true,
	  1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256 },
};

static void parse_real_logs_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		struct vg_eventlog *log;
		struct vg_diag d = { 0 };
		size_t len;
		uint8_t *buf = slurp(logs[i].file, &len), *enc;
		long n;

		assert_int_equal(vg_eventlog_parse(buf, len, &log, &d), 0);
		assert_int_equal(log->nevents, logs[i].events);
		assert_int_equal(log->agile, logs[i].agile);
		assert_int_equal(vg_eventlog_banks(log), logs[i].banks);
		n = vg_eventlog_encode(log, &enc);
		assert_int_equal(n, (long)len);
		assert_memory_equal(enc, buf, len);
		free(enc);
		vg_eventlog_free(log);
		free(buf);
	}
}

/* PCR @pcr of @algo replayed from @file, hex. */
static void replayed(const char *file, unsigned int algo, unsigned int pcr, char *out,
		     uint32_t *missing)
{
	struct vg_eventlog_pcrs p;
	struct vg_eventlog *log;
	size_t len;
	uint8_t *buf = slurp(file, &len);

	assert_int_equal(vg_eventlog_parse(buf, len, &log, NULL), 0);
	assert_int_equal(vg_eventlog_replay(log, algo, &p, NULL), 0);
	hex(&p.pcr[pcr], out);
	if (missing)
		*missing = p.missing;
	vg_eventlog_free(log);
	free(buf);
}

static void replay_gives_known_values(void **state)
{
	char h[2 * VG_HASH_MAX_DIGEST + 1];
	uint32_t missing;

	(void)state;
	/* tpm2_eventlog's pcrs: section */
	replayed("tpm2-tools__event-sd-boot-fedora37.bin", VG_HASH_SHA256, 0, h, NULL);
	assert_string_equal(h, "464a812afa3f88d8a5f1fe7e71df41951435ebd05edb742db8c2c0d67d62c0d1");
	replayed("tpm2-tools__event-sd-boot-fedora37.bin", VG_HASH_SHA256, 12, h, NULL);
	assert_string_equal(h, "73b2090e3e72430531e7bc7d63e88826891ef4e04d6c1e250dc5c52db24f2f48");
	replayed("tpm2-tools__event-uefi-sha1-log.bin", VG_HASH_SHA1, 7, h, NULL);
	assert_string_equal(h, "9216fc0727c344b355a90a3f34f357e4362d51bb");
	/* go-attestation's expected PCRs of the machine */
	replayed("go-attestation__option_rom_eventlog", VG_HASH_SHA1, 7, h, NULL);
	assert_string_equal(h, "20de7dfba6bcdfccadad7e3eb099c91d4d97c5ad");
	/* StartupLocality 3: PCR 0 starts at 00..03 */
	replayed("keylime__binary_bios_measurements", VG_HASH_SHA256, 0, h, NULL);
	assert_string_equal(h, "0ee9a7feba8f4172f1a7451594aa5731665a4d353ac61814042ce107a00742f2");
	replayed("go-attestation__short_no_action_eventlog", VG_HASH_SHA1, 0, h, NULL);
	assert_string_equal(h, "0000000000000000000000000000000000000003");
	/* Windows' own records carry sha256 only: not extended into sha1 */
	replayed("python3-uefi-eventlog__thinkpad_p511.bin", VG_HASH_SHA1, 12, h, &missing);
	assert_string_equal(h, "0000000000000000000000000000000000000000");
	assert_int_equal(missing, 15);
	replayed("python3-uefi-eventlog__thinkpad_p511.bin", VG_HASH_SHA256, 12, h, &missing);
	assert_int_equal(missing, 0);
	assert_string_not_equal(h, "0000000000000000000000000000000000000000000000000000000000000000");
}

static void parse_rejects_truncation_at_every_offset(void **state)
{
	size_t len;
	uint8_t *buf = slurp("tpm2-tools__event-sd-boot-fedora37.bin", &len);
	struct vg_eventlog *full;
	size_t next = 0;

	(void)state;
	assert_int_equal(vg_eventlog_parse(buf, len, &full, NULL), 0);
	for (size_t cut = 1; cut < len; cut++) {
		struct vg_eventlog *log = NULL;
		struct vg_diag d = { 0 };
		int r = vg_eventlog_parse(buf, cut, &log, &d);

		while (next < full->nevents && full->events[next].offset + full->events[next].size < cut)
			next++;
		if (next < full->nevents && full->events[next].offset + full->events[next].size == cut) {
			assert_int_equal(r, 0);
			assert_int_equal(log->nevents, next + 1);
			vg_eventlog_free(log);
			continue;
		}
		assert_int_equal(r, -EBADMSG);
		assert_null(log);
		{
			char want[64];

			snprintf(want, sizeof(want), "event %zu (byte %zu): ", next,
				 next < full->nevents ? full->events[next].offset : cut);
			assert_non_null(strstr(d.msg, want));
		}
	}
	vg_eventlog_free(full);
	free(buf);
}

/* ---- crafted logs ---- */

struct b {
	uint8_t p[4096];
	size_t n;
};

static void u8(struct b *b, uint8_t v) { b->p[b->n++] = v; }
static void u16(struct b *b, uint16_t v) { u8(b, (uint8_t)v); u8(b, (uint8_t)(v >> 8)); }
static void u32(struct b *b, uint32_t v) { u16(b, (uint16_t)v); u16(b, (uint16_t)(v >> 16)); }
static void fill(struct b *b, uint8_t v, size_t n) { memset(b->p + b->n, v, n); b->n += n; }

/* A Spec ID event for @n algorithms {alg, size}, vendorInfo of @vendor bytes, @extra after it. */
static void specid(struct b *b, const uint16_t (*algs)[2], uint32_t n, uint8_t vendor,
		   size_t extra)
{
	u32(b, 0);
	u32(b, VG_EV_NO_ACTION);
	fill(b, 0, 20);
	u32(b, (uint32_t)(28 + 4 * n + 1 + vendor + extra));
	memcpy(b->p + b->n, "Spec ID Event03", 16);
	b->n += 16;
	u32(b, 0);
	u8(b, 0);
	u8(b, 2);
	u8(b, 0);
	u8(b, 2);
	u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		u16(b, algs[i][0]);
		u16(b, algs[i][1]);
	}
	u8(b, vendor);
	fill(b, 0xee, vendor + extra);
}

static const uint16_t two[2][2] = { { 0x0004, 20 }, { 0x000b, 32 } };

/* TCG_PCR_EVENT2 with digests of @algs (@n of them), @data. */
static void event2(struct b *b, uint32_t pcr, uint32_t type, const uint16_t (*algs)[2], uint32_t n,
		   const char *data, size_t dlen)
{
	u32(b, pcr);
	u32(b, type);
	u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		u16(b, algs[i][0]);
		fill(b, (uint8_t)(0x10 + i), algs[i][1]);
	}
	u32(b, (uint32_t)dlen);
	memcpy(b->p + b->n, data, dlen);
	b->n += dlen;
}

static int parse_msg(const struct b *b, char *msg)
{
	struct vg_eventlog *log = NULL;
	struct vg_diag d = { 0 };
	int r = vg_eventlog_parse(b->p, b->n, &log, &d);

	vg_eventlog_free(log);
	strcpy(msg, r < 0 ? d.msg : "");
	return r;
}

static void parse_rejects_malformed(void **state)
{
	static const uint16_t dup[2][2] = { { 0x000b, 32 }, { 0x000b, 32 } };
	static const uint16_t bad256[1][2] = { { 0x000b, 20 } };
	static const uint16_t zero[1][2] = { { 0x1234, 0 } };
	static const uint16_t big[1][2] = { { 0x1234, 65 } };
	static const uint16_t unknown[1][2] = { { 0x0077, 32 } };
	static const uint16_t sha256[1][2] = { { 0x000b, 32 } };
	static const uint16_t dupdig[2][2] = { { 0x000b, 32 }, { 0x000b, 32 } };
	struct b b;
	char m[256];

	(void)state;
	assert_int_equal(vg_eventlog_parse((const uint8_t *)"", 0, &(struct vg_eventlog *){ 0 }, NULL),
			 -EBADMSG);
	b.n = 0; specid(&b, two, 0, 0, 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "event 0 (byte 0): Spec ID event lists 0 algorithms"));
	{
		uint16_t many[17][2];

		for (uint16_t i = 0; i < 17; i++) {
			many[i][0] = (uint16_t)(0x100 + i);
			many[i][1] = 32;
		}
		b.n = 0; specid(&b, (const uint16_t (*)[2])many, 17, 0, 0);
		assert_int_equal(parse_msg(&b, m), -EBADMSG);
		assert_non_null(strstr(m, "lists 17 algorithms (1..16)"));
		b.n = 0; specid(&b, (const uint16_t (*)[2])many, 16, 0, 0);
		assert_int_equal(parse_msg(&b, m), 0);
	}
	b.n = 0; specid(&b, dup, 2, 0, 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "algorithm 0x000b twice"));
	b.n = 0; specid(&b, bad256, 1, 0, 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "sha256 digestSize 20, not 32"));
	b.n = 0; specid(&b, zero, 1, 0, 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	b.n = 0; specid(&b, big, 1, 0, 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	b.n = 0; specid(&b, two, 2, 3, 1);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "1 bytes after vendorInfo"));
	b.n = 0; specid(&b, two, 2, 3, 0);
	assert_int_equal(parse_msg(&b, m), 0);

	/* records */
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 0, VG_EV_SEPARATOR, two, 2, "\0\0\0\0", 4);
	assert_int_equal(parse_msg(&b, m), 0);
	event2(&b, 1, VG_EV_SEPARATOR, unknown, 1, "", 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "event 2 (byte 145): digest algorithm 0x0077 is not in the Spec ID"));
	b.n = 0; specid(&b, sha256, 1, 0, 0);
	event2(&b, 1, VG_EV_SEPARATOR, dupdig, 2, "", 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "2 digests, the Spec ID event lists 1"));
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 1, VG_EV_SEPARATOR, dupdig, 2, "", 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "two digests of algorithm 0x000b"));
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 24, VG_EV_SEPARATOR, two, 2, "", 0);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "PCR index 24"));
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 0xffffffffu, VG_EV_NO_ACTION, two, 2, "", 0);	/* Windows does this */
	assert_int_equal(parse_msg(&b, m), 0);
	/* StartupLocality: once, first, PCR 0, 17 bytes, 0..4 */
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 0, VG_EV_NO_ACTION, two, 2, "StartupLocality\0\3", 17);
	assert_int_equal(parse_msg(&b, m), 0);
	event2(&b, 0, VG_EV_NO_ACTION, two, 2, "StartupLocality\0\3", 17);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "StartupLocality event after another one"));
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 0, VG_EV_S_CRTM_VERSION, two, 2, "", 0);
	event2(&b, 0, VG_EV_NO_ACTION, two, 2, "StartupLocality\0\3", 17);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "after an extend of PCR 0"));
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 0, VG_EV_NO_ACTION, two, 2, "StartupLocality\0\5", 17);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 1, VG_EV_NO_ACTION, two, 2, "StartupLocality\0\3", 17);
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	/* eventSize beyond the end */
	b.n = 0; specid(&b, two, 2, 0, 0);
	event2(&b, 1, VG_EV_SEPARATOR, two, 2, "\0\0\0\0", 4);
	b.n -= 2;
	assert_int_equal(parse_msg(&b, m), -EBADMSG);
	assert_non_null(strstr(m, "event 1 (byte 69): eventSize 4 runs past the end (2 bytes left)"));
}

static void unknown_algorithm_is_stepped_over(void **state)
{
	static const uint16_t algs[2][2] = { { 0x000b, 32 }, { 0x4242, 48 } };
	struct vg_eventlog_pcrs p;
	struct vg_eventlog *log;
	struct b b = { .n = 0 };
	const uint8_t *d;
	size_t dl;
	uint8_t *enc;

	(void)state;
	specid(&b, algs, 2, 0, 0);
	event2(&b, 4, VG_EV_EFI_BOOT_SERVICES_APPLICATION, algs, 2, "x", 1);
	event2(&b, 4, VG_EV_SEPARATOR, algs, 2, "\0\0\0\0", 4);
	assert_int_equal(vg_eventlog_parse(b.p, b.n, &log, NULL), 0);
	assert_int_equal(log->nevents, 3);
	assert_int_equal(vg_eventlog_banks(log), 1u << VG_HASH_SHA256);
	assert_int_equal(log->algs[1].algo, -1);
	d = vg_eventlog_event_digest(log, &log->events[1], 0x4242, &dl);
	assert_non_null(d);
	assert_int_equal(dl, 48);
	assert_int_equal(d[0], 0x11);
	assert_int_equal(vg_eventlog_replay(log, VG_HASH_SHA256, &p, NULL), 0);
	assert_int_equal(p.touched, 1u << 4);
	assert_int_equal(vg_eventlog_replay(log, VG_HASH_SHA1, &p, NULL), -ENOENT);
	assert_int_equal(vg_eventlog_encode(log, &enc), (long)b.n);
	assert_memory_equal(enc, b.p, b.n);
	free(enc);
	vg_eventlog_free(log);
	assert_string_equal(vg_eventlog_type_name(VG_EV_EFI_VARIABLE_DRIVER_CONFIG),
			    "EV_EFI_VARIABLE_DRIVER_CONFIG");
	assert_string_equal(vg_eventlog_type_name(VG_EV_NO_ACTION), "EV_NO_ACTION");
	assert_null(vg_eventlog_type_name(0x12345678));
}

/* ---- attest_boot ---- */

static void quote_of(const struct vg_attest_boot *bt, struct vg_pcr_values *q)
{
	memset(q, 0, sizeof(*q));
	for (unsigned int i = 0; i < VG_ATTEST_BOOT_PCRS; i++) {
		q->v[VG_HASH_SHA256][i] = bt->pcr[i];
		q->have[VG_HASH_SHA256] |= 1u << i;
	}
	q->v[VG_HASH_SHA256][10] = (struct vg_digest){ .algo = VG_HASH_SHA256, .len = 32 };
	q->have[VG_HASH_SHA256] |= 1u << 10;
}

/*
 * PCR 14 (shim's MOK lists): replayed from the log, and required of the
 * quote only under a policy with a measured_boot section, which judges the
 * MokList events; then a wrong value is boot.pcr_mismatch naming PCR 14.
 */
static void boot_check_mok_pcr(void **state)
{
	struct vg_attest_request req = { (const uint8_t *)"n", 1, VG_HASH_SHA256, 0x47ff };
	static struct vg_pcr_values q;
	struct vg_attest_boot bt;
	struct vg_attest_verdict v;
	struct vg_refpolicy *plain, *mb;
	static const char mbdoc[] = "{\"measured_boot\": {}}";
	size_t len;
	uint8_t *buf = slurp("keylime__binary_bios_measurements-secureboot", &len);

	(void)state;
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_boot_load(buf, len, VG_HASH_SHA256, &bt, &v), 0);
	assert_true(bt.touched & 1u << VG_ATTEST_MOK_PCR);
	assert_int_equal(bt.mok.len, 32);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)"{}", 2, &plain, NULL), 0);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)mbdoc, strlen(mbdoc), &mb, NULL), 0);
	quote_of(&bt, &q);
	q.v[VG_HASH_SHA256][VG_ATTEST_MOK_PCR] = bt.mok;
	q.have[VG_HASH_SHA256] |= 1u << VG_ATTEST_MOK_PCR;
	assert_int_equal(vg_attest_boot_check(&bt, plain, &req, &q, &v), 0);
	assert_int_equal(vg_attest_boot_check(&bt, mb, &req, &q, &v), 0);
	/* another MOK list measured than the log says */
	q.v[VG_HASH_SHA256][VG_ATTEST_MOK_PCR].bytes[0] ^= 1;
	assert_int_equal(vg_attest_boot_check(&bt, plain, &req, &q, &v), 0);
	assert_int_equal(vg_attest_boot_check(&bt, mb, &req, &q, &v), 1);
	assert_string_equal(vg_attest_fail_id(v.fail), "boot.pcr_mismatch");
	assert_non_null(strstr(v.msg, "PCR 14: the quote has sha256:"));
	q.v[VG_HASH_SHA256][VG_ATTEST_MOK_PCR].bytes[0] ^= 1;
	/* not quoted: cannot pass the measured_boot policy */
	req.mask = 0x7ff;
	assert_int_equal(vg_attest_boot_check(&bt, plain, &req, &q, &v), 0);
	assert_int_equal(vg_attest_boot_check(&bt, mb, &req, &q, &v), 1);
	assert_non_null(strstr(v.msg, "PCR 14 is not quoted"));
	vg_refpolicy_free(plain);
	vg_refpolicy_free(mb);
	vg_attest_verdict_release(&v);
	free(buf);
}

static void boot_check_replay_and_pins(void **state)
{
	struct vg_attest_request req = { (const uint8_t *)"n", 1, VG_HASH_SHA256, 0x7ff };
	static struct vg_pcr_values q;
	struct vg_attest_boot bt;
	struct vg_attest_verdict v;
	struct vg_refpolicy *pol;
	size_t len;
	uint8_t *buf = slurp("tpm2-tools__event-arch-linux.bin", &len);
	char doc[1024], h[65];
	long n;
	char *js;

	(void)state;
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_boot_load(buf, len, VG_HASH_SHA256, &bt, &v), 0);
	assert_int_equal(bt.events, 25);
	assert_int_equal(bt.touched, 0x1ff);
	quote_of(&bt, &q);
	assert_int_equal(vg_attest_boot_check(&bt, NULL, &req, &q, &v), 0);
	q.v[VG_HASH_SHA256][4].bytes[0] ^= 1;
	assert_int_equal(vg_attest_boot_check(&bt, NULL, &req, &q, &v), 1);
	assert_int_equal(v.fail, VG_AF_BOOT_PCR);
	assert_non_null(strstr(v.msg, "PCR 4: the quote has sha256:"));
	assert_string_equal(vg_attest_fail_id(v.fail), "boot.pcr_mismatch");
	q.v[VG_HASH_SHA256][4].bytes[0] ^= 1;
	req.mask = 0x4ff;	/* PCR 8 and 9 not quoted */
	assert_int_equal(vg_attest_boot_check(&bt, NULL, &req, &q, &v), 1);
	assert_non_null(strstr(v.msg, "PCR 8 is not quoted"));
	req.mask = 0x7ff;

	/* pinned values */
	vg_attest_verdict_release(&v);
	hex(&bt.pcr[7], h);
	snprintf(doc, sizeof(doc), "{\"boot_pcrs\": {\"0\": \"sha256:%064d\", \"7\": [\"%s\"]}}", 0,
		 h);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)doc, strlen(doc), &pol, NULL), 0);
	assert_int_equal(vg_refpolicy_boot_mask(pol), 0x81);
	assert_int_equal(vg_attest_boot_check(NULL, pol, &req, &q, &v), 1);
	assert_int_equal(v.fail, VG_AF_BOOT_VALUE);
	assert_non_null(strstr(v.msg, "PCR 0: sha256:"));
	assert_string_equal(vg_attest_fail_id(v.fail), "boot.pcr_value");
	assert_int_equal(vg_attest_verdict_count(&v), 1);
	vg_attest_verdict_release(&v);
	/* every pinned PCR that differs is listed, as Keylime lists them: 0 and 7 here */
	q.v[VG_HASH_SHA256][7].bytes[0] ^= 1;
	assert_int_equal(vg_attest_boot_check(NULL, pol, &req, &q, &v), 1);
	assert_int_equal(vg_attest_verdict_count(&v), 2);
	assert_int_equal(vg_attest_verdict_listed(&v), 2);
	assert_non_null(strstr(vg_attest_verdict_nth(&v, 0)->msg, "PCR 0: sha256:"));
	assert_non_null(strstr(vg_attest_verdict_nth(&v, 1)->msg, "PCR 7: sha256:"));
	assert_int_equal(vg_attest_verdict_nth(&v, 1)->fail, VG_AF_BOOT_VALUE);
	assert_non_null(strstr(vg_attest_verdict_nth(&v, 1)->digest, "sha256:"));
	q.v[VG_HASH_SHA256][7].bytes[0] ^= 1;
	vg_attest_verdict_release(&v);
	assert_int_equal(vg_refpolicy_boot_pin(pol, 0, &bt.pcr[0]), 0);
	assert_int_equal(vg_attest_boot_check(&bt, pol, &req, &q, &v), 0);
	req.mask = 0x400;
	assert_int_equal(vg_attest_boot_check(NULL, pol, &req, &q, &v), 1);
	assert_non_null(strstr(v.msg, "PCR 0 is pinned by the policy but not quoted"));
	/* ... and PCR 7, not quoted either */
	assert_int_equal(vg_attest_verdict_count(&v), 2);
	vg_attest_verdict_release(&v);
	req.mask = 0x7ff;
	/* the pins survive vigil's JSON */
	n = vg_refpolicy_to_json(pol, &js);
	assert_true(n > 0);
	vg_refpolicy_free(pol);
	assert_int_equal(vg_refpolicy_load((const uint8_t *)js, (size_t)n, &pol, NULL), 0);
	free(js);
	assert_int_equal(vg_refpolicy_boot_mask(pol), 0x81);
	assert_int_equal(vg_attest_boot_check(&bt, pol, &req, &q, &v), 0);
	assert_int_equal(vg_refpolicy_boot_allows(pol, 7, &bt.pcr[0]), 0);
	{
		struct vg_digest s1 = { .algo = VG_HASH_SHA1, .len = 20 };

		assert_int_equal(vg_refpolicy_boot_allows(pol, 7, &s1), -ENOENT);
	}
	vg_refpolicy_free(pol);
	/* bad pins */
	{
		static const char *bad[] = {
			"{\"boot_pcrs\": {\"10\": \"sha256:00\"}}",
			"{\"boot_pcrs\": {\"24\": \"00000000000000000000000000000000000000000000000000000000000000000\"}}",
			"{\"boot_pcrs\": {\"01\": \"0000000000000000000000000000000000000000\"}}",
			"{\"boot_pcrs\": {\"1\": \"sha256:0000000000000000000000000000000000000000\"}}",
			"{\"boot_pcrs\": {\"1\": []}}",
			"{\"boot_pcrs\": {\"1\": 5}}",
			"{\"boot_pcrs\": []}",
			"{\"boot_pcrs\": {\"1\": \"000000000000000000000000000000000000000000\"}}",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct vg_diag d = { 0 };

			assert_int_equal(vg_refpolicy_load((const uint8_t *)bad[i], strlen(bad[i]), &pol,
							   &d), -EBADMSG);
			assert_non_null(strstr(d.msg, "boot_pcrs"));
		}
	}
	/* a log without the quoted bank, a malformed one */
	assert_int_equal(vg_attest_boot_load(buf, len, VG_HASH_SHA384, &bt, &v), 1);
	assert_int_equal(v.fail, VG_AF_BOOT_MALFORMED);
	assert_int_equal(vg_attest_boot_load(buf, len - 3, VG_HASH_SHA256, &bt, &v), 1);
	assert_int_equal(v.fail, VG_AF_BOOT_MALFORMED);
	assert_non_null(strstr(v.msg, "boot log: event 24 (byte "));
	free(buf);
}

/* An ima-ng binary list whose first entry is @name with sha256 digest @d. */
static size_t imalist(uint8_t *out, const char *name, const uint8_t *d)
{
	struct b b = { .n = 0 };
	size_t nl = strlen(name) + 1;

	u32(&b, 10);
	fill(&b, 0xaa, 20);		/* template digest: not checked here */
	u32(&b, 6);
	memcpy(b.p + b.n, "ima-ng", 6);
	b.n += 6;
	u32(&b, (uint32_t)(4 + 8 + 32 + 4 + nl));
	u32(&b, 8 + 32);
	memcpy(b.p + b.n, "sha256:", 8);
	b.n += 8;
	memcpy(b.p + b.n, d, 32);
	b.n += 32;
	u32(&b, (uint32_t)nl);
	memcpy(b.p + b.n, name, nl);
	b.n += nl;
	memcpy(out, b.p, b.n);
	return b.n;
}

static void boot_aggregate_from_the_log(void **state)
{
	struct vg_attest_boot bt;
	struct vg_attest_verdict v;
	struct vg_digest agg;
	uint8_t list[512];
	size_t len, n;
	uint8_t *buf = slurp("tpm2-tools__event-arch-linux.bin", &len);

	(void)state;
	vg_attest_verdict_init(&v);
	assert_int_equal(vg_attest_boot_load(buf, len, VG_HASH_SHA256, &bt, &v), 0);
	/* ima_calc_boot_aggregate: sha256 over PCRs 0-9 */
	assert_int_equal(vg_imalog_boot_aggregate(VG_HASH_SHA256, bt.pcr, &agg, NULL), 0);
	assert_memory_equal(bt.aggregate[1].bytes, agg.bytes, 32);
	assert_int_equal(bt.aggregate[0].len, 20);
	assert_int_equal(bt.aggregate[2].len, 0);	/* no sha384 bank */
	n = imalist(list, "boot_aggregate", agg.bytes);
	assert_int_equal(vg_attest_boot_aggregate_check(&bt, list, n, VG_HASH_SHA1, &v), 0);
	assert_int_equal(vg_attest_boot_aggregate_check(&bt, list, 0, VG_HASH_SHA1, &v), 0);
	agg.bytes[31] ^= 1;
	n = imalist(list, "boot_aggregate", agg.bytes);
	assert_int_equal(vg_attest_boot_aggregate_check(&bt, list, n, VG_HASH_SHA1, &v), 1);
	assert_int_equal(v.fail, VG_AF_BOOT_AGG);
	assert_int_equal(v.entry, 0);
	assert_non_null(strstr(v.msg, "is not sha256:"));
	assert_string_equal(vg_attest_fail_id(v.fail), "boot.aggregate");
	n = imalist(list, "/usr/bin/bash", agg.bytes);
	assert_int_equal(vg_attest_boot_aggregate_check(&bt, list, n, VG_HASH_SHA1, &v), 1);
	assert_non_null(strstr(v.msg, "is not boot_aggregate"));
	free(buf);
}

static void survives_allocation_failures(void **state)
{
	size_t len;
	uint8_t *buf = slurp("tpm2-tools__event-arch-linux.bin", &len);

	(void)state;
	for (long n = 0;; n++) {
		struct vg_eventlog *log = NULL;
		struct vg_eventlog_pcrs p;
		struct vg_attest_boot bt;
		struct vg_attest_verdict v;
		uint8_t *enc = NULL;
		int r, rr = 0, rb;
		long e = 0;

		failalloc_arm(n);
		r = vg_eventlog_parse(buf, len, &log, NULL);
		if (r == 0) {
			rr = vg_eventlog_replay(log, VG_HASH_SHA256, &p, NULL);
			e = vg_eventlog_encode(log, &enc);
		}
		rb = vg_attest_boot_load(buf, len, VG_HASH_SHA256, &bt, &v);
		failalloc_disarm();
		free(enc);
		vg_eventlog_free(log);
		if (!failalloc_hit()) {
			assert_int_equal(r, 0);
			assert_int_equal(rr, 0);
			assert_int_equal(e, (long)len);
			assert_int_equal(rb, 0);
			break;
		}
		assert_true(r == 0 || r == -ENOMEM);
		assert_true(rr == 0 || rr == -ENOMEM);
		assert_true(e >= 0 || e == -ENOMEM);
		assert_true(rb == 0 || rb == -ENOMEM);
	}
	free(buf);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_real_logs_round_trip),
		cmocka_unit_test(replay_gives_known_values),
		cmocka_unit_test(parse_rejects_truncation_at_every_offset),
		cmocka_unit_test(parse_rejects_malformed),
		cmocka_unit_test(unknown_algorithm_is_stepped_over),
		cmocka_unit_test(boot_check_replay_and_pins),
		cmocka_unit_test(boot_check_mok_pcr),
		cmocka_unit_test(boot_aggregate_from_the_log),
		cmocka_unit_test(survives_allocation_failures),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
