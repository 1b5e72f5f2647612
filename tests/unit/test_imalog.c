// SPDX-License-Identifier: MIT
/*
 * test_imalog.c - the measurement list codec, replay, the software PCR
 * bank and the log writer, against the evmctl vectors and real kernel
 * lists (tests/vectors/evmctl/ima-log, tests/vectors/imalog).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vigil/imalog.h"
#include "vigil/mlog.h"
#include "vigil/pcrbank.h"

static uint8_t *slurp(const char *dir, const char *rel, size_t *len)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	struct stat st;
	uint8_t *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", v ? v : "tests/vectors", dir, rel);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void hex(const char *h, struct vg_digest *d, unsigned int algo)
{
	d->algo = (uint8_t)algo;
	d->len = (uint8_t)vg_hash_size(algo);
	assert_int_equal(vg_hex_decode(h, d->bytes, sizeof(d->bytes)), d->len);
}

static void template_lookup_builtins_and_custom(void **state)
{
	struct vg_imalog_template t;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_imalog_template_lookup("ima-ng", 6, &t, NULL), 0);
	assert_int_equal(t.nfields, 2);
	assert_int_equal(t.fields[0], VG_IMAF_D_NG);
	assert_false(t.ima);
	assert_int_equal(vg_imalog_template_lookup("ima", 3, &t, NULL), 0);
	assert_true(t.ima);
	assert_int_equal(vg_imalog_template_lookup("evm-sig", 7, &t, NULL), 0);
	assert_int_equal(t.nfields, 9);
	assert_int_equal(t.fields[8], VG_IMAF_IMODE);
	/* a custom format named by its format string; "d|n" is not "ima" */
	assert_int_equal(vg_imalog_template_lookup("d|n", 3, &t, NULL), 0);
	assert_false(t.ima);
	assert_int_equal(t.nfields, 2);
	assert_int_equal(vg_imalog_template_lookup("d-ng|bogus", 10, &t, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "unknown template"));
	assert_int_equal(vg_imalog_template_lookup("d-ng||n-ng", 10, &t, NULL), -EBADMSG);
	assert_int_equal(vg_imalog_template_lookup("", 0, &t, NULL), -EBADMSG);
	assert_int_equal(vg_imalog_template_lookup("n|n|n|n|n|n|n|n|n|n|n|n|n|n|n|n|n", 33, &t, &d),
			 -EBADMSG);
}

static void parse_evmctl_vector_entries(void **state)
{
	size_t len;
	uint8_t *buf = slurp("evmctl", "ima-log/binary_runtime_measurements", &len);
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_digest want, got;
	unsigned int violations = 0;
	int r;

	(void)state;
	assert_int_equal(vg_imalog_detect(buf, len, NULL), VG_HASH_SHA1);
	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	assert_int_equal(vg_imalog_parser_next(&p, &e, NULL), 1);
	assert_int_equal(e.pcr, 10);
	assert_memory_equal(e.name, "ima-ng", 6);
	assert_int_equal(e.f[1].len, 15);
	assert_memory_equal(e.f[1].data, "boot_aggregate", 15);
	hex("517243bc7e2db6b75e62d3e07935ba7ff494ce3f", &want, VG_HASH_SHA1);
	assert_memory_equal(e.digest.bytes, want.bytes, 20);
	assert_int_equal(vg_imalog_template_digest(&e, VG_HASH_SHA1, &got, NULL), 0);
	assert_memory_equal(got.bytes, want.bytes, 20);
	/* the per-bank digest of entry 1, as the kernel's _sha256 list holds it */
	assert_int_equal(vg_imalog_parser_next(&p, &e, NULL), 1);
	assert_int_equal(vg_imalog_template_digest(&e, VG_HASH_SHA256, &got, NULL), 0);
	hex("cef5146c003ad473e522e25cc78c7465375ec2d0435a39847725d3a87088ed9f", &want, VG_HASH_SHA256);
	assert_memory_equal(got.bytes, want.bytes, 32);
	while ((r = vg_imalog_parser_next(&p, &e, NULL)) == 1) {
		violations += e.violation;
		if (!e.violation) {
			assert_int_equal(vg_imalog_template_digest(&e, VG_HASH_SHA1, &got, NULL), 0);
			assert_memory_equal(got.bytes, e.digest.bytes, 20);
		}
	}
	assert_int_equal(r, 0);
	assert_int_equal(p.index, 13);
	assert_int_equal(violations, 1);
	free(buf);
}

static void parse_rejects_truncation_at_every_offset(void **state)
{
	size_t len;
	uint8_t *buf = slurp("imalog", "ibmtss-imatest.log", &len);
	size_t bounds[64], nb = 0;
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;

	(void)state;
	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	bounds[nb++] = 0;
	while (vg_imalog_parser_next(&p, &e, NULL) == 1)
		bounds[nb++] = p.off;
	assert_int_equal(nb, 18);
	assert_int_equal(bounds[nb - 1], len);
	for (size_t cut = 0, b = 0; cut < len; cut++) {
		struct vg_diag d = { 0 };
		int r;

		while (b + 1 < nb && bounds[b + 1] <= cut)
			b++;
		vg_imalog_parser_init(&p, buf, cut, VG_HASH_SHA1);
		while ((r = vg_imalog_parser_next(&p, &e, &d)) == 1)
			;
		if (cut == bounds[b]) {
			assert_int_equal(r, 0);
		} else {
			assert_int_equal(r, -EMSGSIZE);
			assert_int_equal(p.off, bounds[b]);	/* stays at the torn entry */
			assert_int_equal(p.index, b);
			assert_non_null(strstr(d.msg, "truncated"));
		}
	}
	free(buf);
}

static void parse_rejects_malformed(void **state)
{
	size_t len;
	uint8_t *orig = slurp("evmctl", "ima-log/binary_runtime_measurements", &len);
	uint8_t *buf = malloc(len);
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };

	(void)state;
	assert_non_null(buf);
	/* absurd template name length */
	memcpy(buf, orig, len);
	buf[24] = 0xff, buf[25] = 0xff, buf[26] = 0xff, buf[27] = 0x7f;
	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "entry 0 at offset 0: template name length"));
	/* zero name length */
	buf[24] = buf[25] = buf[26] = buf[27] = 0;
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	/* unknown template name */
	memcpy(buf, orig, len);
	memcpy(buf + 28, "xxx-ng", 6);
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "unknown template 'xxx-ng'"));
	/* a non-printable byte in the name */
	memcpy(buf, orig, len);
	buf[30] = '\n';
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	/* pcr out of range */
	memcpy(buf, orig, len);
	buf[0] = 24;
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "pcr 24"));
	/* a field length running past the template data */
	memcpy(buf, orig, len);
	buf[38] = 0x40;		/* d-ng length 0x28 -> 0x40 */
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "overruns"));
	/* d-ng without the NUL after "sha256:" */
	memcpy(buf, orig, len);
	buf[49] = 'x';
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	/* d-ng naming an unknown algorithm */
	memcpy(buf, orig, len);
	memcpy(buf + 42, "sha999", 6);
	assert_int_equal(vg_imalog_parser_next(&p, &e, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "unknown algorithm"));
	/* not a list at all */
	assert_int_equal(vg_imalog_detect((const uint8_t *)"this is not a list", 18, &d), -EBADMSG);
	free(buf);
	free(orig);
}

static void ascii_round_trip_and_errors(void **state)
{
	size_t alen, blen;
	uint8_t *ascii = slurp("evmctl", "ima-log/ascii_runtime_measurements", &alen);
	uint8_t *bin = slurp("evmctl", "ima-log/binary_runtime_measurements", &blen);
	struct vg_imalog_buf out = { 0 }, txt = { 0 };
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };
	unsigned int algo = 99;

	(void)state;
	assert_true(vg_imalog_is_ascii(ascii, alen));
	assert_false(vg_imalog_is_ascii(bin, blen));
	assert_int_equal(vg_imalog_from_ascii((const char *)ascii, alen, &out, &algo, NULL), 13);
	assert_int_equal(algo, VG_HASH_SHA1);
	assert_int_equal(out.len, blen);
	assert_memory_equal(out.data, bin, blen);
	vg_imalog_parser_init(&p, bin, blen, VG_HASH_SHA1);
	while (vg_imalog_parser_next(&p, &e, NULL) == 1)
		assert_int_equal(vg_imalog_format_ascii(&e, &txt), 0);
	assert_int_equal(txt.len, alen);
	assert_memory_equal(txt.data, ascii, alen);

	out.len = 0;
	assert_int_equal(vg_imalog_from_ascii("10 abc ima-ng sha1:00 x\n", 24, &out, NULL, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "line 1"));
	{
		static const char two[] =
			"10 0000000000000000000000000000000000000000 ima-ng sha1:0000000000000000000000000000000000000000 a\n"
			"10 0000000000000000000000000000000000000000 ima-sig sha1:0000000000000000000000000000000000000000 b\n";

		assert_int_equal(vg_imalog_from_ascii(two, sizeof(two) - 1, &out, NULL, &d), -EBADMSG);
		assert_non_null(strstr(d.msg, "line 2: 2 fields for template ima-sig"));
		assert_int_equal(out.len, 0);	/* nothing half-converted */
	}
	vg_imalog_buf_release(&out);
	vg_imalog_buf_release(&txt);
	free(ascii);
	free(bin);
}

static void replay(const uint8_t *buf, size_t len, size_t from, struct vg_imalog_replay *r,
		   unsigned int algo)
{
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;

	vg_imalog_parser_init(&p, buf, len, algo);
	p.off = from;
	while (vg_imalog_parser_next(&p, &e, NULL) == 1)
		assert_int_equal(vg_imalog_replay_entry(r, &e, p.index - 1, NULL), 0);
}

static void replay_matches_pcrs_and_is_incremental(void **state)
{
	size_t len, tlen;
	uint8_t *buf = slurp("imalog", "embrave.binary_runtime_measurements", &len);
	char *pt = (char *)slurp("evmctl", "ima-log/pcrs-sha256.txt", &tlen);
	const uint32_t banks = 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256;
	struct vg_imalog_replay *full, *a, *b;
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_digest v, w, s1, s256;
	size_t mid = 0;

	(void)state;
	assert_int_equal(vg_imalog_replay_new(banks, 0, &full, NULL), 0);
	replay(buf, len, 0, full, VG_HASH_SHA1);
	assert_int_equal(vg_imalog_replay_get(full, 10, VG_HASH_SHA1, &v), 0);
	hex("f38695bbd9479953543813fb13bb88235440504e", &w, VG_HASH_SHA1);
	assert_memory_equal(v.bytes, w.bytes, 20);
	assert_int_equal(vg_imalog_replay_pcrs(full), 1u << 10);
	assert_int_equal(vg_imalog_replay_get(full, 10, VG_HASH_SHA384, &v), -ENOENT);

	/* replay the first 500 entries, save (offset, PCR), resume in a new object */
	assert_int_equal(vg_imalog_replay_new(banks, 0, &a, NULL), 0);
	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	while (p.index < 500 && vg_imalog_parser_next(&p, &e, NULL) == 1)
		assert_int_equal(vg_imalog_replay_entry(a, &e, p.index - 1, NULL), 0);
	mid = p.off;
	assert_int_equal(vg_imalog_replay_get(a, 10, VG_HASH_SHA1, &s1), 0);
	assert_int_equal(vg_imalog_replay_get(a, 10, VG_HASH_SHA256, &s256), 0);
	assert_int_equal(vg_imalog_replay_new(banks, 0, &b, NULL), 0);
	assert_int_equal(vg_imalog_replay_set(b, 10, &s1), 0);
	assert_int_equal(vg_imalog_replay_set(b, 10, &s256), 0);
	replay(buf, len, mid, b, VG_HASH_SHA1);
	for (unsigned int alg = VG_HASH_SHA1; alg <= VG_HASH_SHA256; alg += 2) {
		assert_int_equal(vg_imalog_replay_get(full, 10, alg, &v), 0);
		assert_int_equal(vg_imalog_replay_get(b, 10, alg, &w), 0);
		assert_memory_equal(v.bytes, w.bytes, v.len);
	}
	s1.len = 19;
	assert_int_equal(vg_imalog_replay_set(b, 10, &s1), -EINVAL);
	vg_imalog_replay_free(full);
	vg_imalog_replay_free(a);
	vg_imalog_replay_free(b);
	free(buf);
	free(pt);
}

static void replay_rejects_tampered_entry(void **state)
{
	size_t len;
	uint8_t *buf = slurp("evmctl", "ima-log/binary_runtime_measurements", &len);
	struct vg_imalog_replay *r;
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };

	(void)state;
	buf[60] ^= 1;		/* inside entry 0's file digest */
	assert_int_equal(vg_imalog_replay_new(1u << VG_HASH_SHA256, 0, &r, NULL), 0);
	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	assert_int_equal(vg_imalog_parser_next(&p, &e, NULL), 1);
	assert_int_equal(vg_imalog_replay_entry(r, &e, 0, &d), -EILSEQ);
	assert_non_null(strstr(d.msg, "entry 0 at offset 0 (ima-ng): template digest does not match"));
	vg_imalog_replay_free(r);
	assert_int_equal(vg_imalog_replay_new(1u << VG_HASH_SHA256, VG_REPLAY_NO_CHECK, &r, NULL), 0);
	assert_int_equal(vg_imalog_replay_entry(r, &e, 0, &d), 0);
	vg_imalog_replay_free(r);
	free(buf);
}

static void boot_aggregate_equals_evmctl(void **state)
{
	size_t len;
	char *t1 = (char *)slurp("evmctl", "ima-log/pcrs-sha1.txt", &len);
	struct vg_pcr_values *pv = calloc(1, sizeof(*pv));
	struct vg_digest agg, want;
	size_t len256;
	char *t256 = (char *)slurp("evmctl", "ima-log/pcrs-sha256.txt", &len256);

	(void)state;
	assert_non_null(pv);
	assert_int_equal(vg_pcr_values_parse(pv, t1, len, VG_HASH_SHA1, NULL), 24);
	assert_int_equal(vg_pcr_values_parse(pv, t256, len256, -1, NULL), 24);
	assert_int_equal(vg_imalog_boot_aggregate(VG_HASH_SHA1, pv->v[VG_HASH_SHA1], &agg, NULL), 0);
	hex("7e33097dd0948ff15d882e0e4c8e3c27f0ac41c6", &want, VG_HASH_SHA1);
	assert_memory_equal(agg.bytes, want.bytes, 20);
	assert_int_equal(vg_imalog_boot_aggregate(VG_HASH_SHA256, pv->v[VG_HASH_SHA256], &agg, NULL), 0);
	hex("b3676a9adccb99ccc1badb9c02a346a297da8276f418b09dcf15345d1fa4e67d", &want, VG_HASH_SHA256);
	assert_memory_equal(agg.bytes, want.bytes, 32);
	assert_int_equal(vg_pcr_values_parse(pv, "PCR-99 00\n", 10, -1, NULL), -EBADMSG);
	assert_int_equal(vg_pcr_values_parse(pv, "PCR-10 sha7:00\n", 15, -1, NULL), -EBADMSG);
	free(pv);
	free(t1);
	free(t256);
}

static char tmpdir[] = "/tmp/vigil-imalog.XXXXXX";

static void pcrbank_persists_and_locks(void **state)
{
	char path[256];
	struct vg_pcrbank *b, *b2;
	struct vg_digest d[2], v;
	struct vg_diag dg = { 0 };

	(void)state;
	snprintf(path, sizeof(path), "%s/bank", tmpdir);
	unlink(path);
	assert_int_equal(vg_pcrbank_open(path, 1u << VG_HASH_SHA256, &b, NULL), 0);
	assert_false(vg_pcrbank_ops.attestable);
	assert_int_equal(vg_pcrbank_ops.banks(b), 1u << VG_HASH_SHA256);
	assert_int_equal(vg_pcrbank_open(path, 1u << VG_HASH_SHA256, &b2, &dg), -EBUSY);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "a", 1, &d[0], NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA1, "a", 1, &d[1], NULL), 0);
	/* the sha1 digest is ignored: no such bank, as a TPM does */
	assert_int_equal(vg_pcrbank_ops.extend(b, 16, d, 2, NULL), 0);
	assert_int_equal(vg_pcrbank_ops.read(b, 16, VG_HASH_SHA1, &v, NULL), -ENOENT);
	assert_int_equal(vg_pcrbank_sync(b, NULL), 0);
	vg_pcrbank_free(b);
	assert_int_equal(vg_pcrbank_open(path, 0, &b, NULL), 0);
	assert_int_equal(vg_pcrbank_ops.read(b, 16, VG_HASH_SHA256, &v, NULL), 0);
	/* tpm2_pcrextend 16:sha256=H(a) from zero gives H(0^32 || H(a)) */
	{
		uint8_t in[64] = { 0 };
		struct vg_digest w;

		memcpy(in + 32, d[0].bytes, 32);
		assert_int_equal(vg_hash_buf(VG_HASH_SHA256, in, 64, &w, NULL), 0);
		assert_memory_equal(v.bytes, w.bytes, 32);
	}
	vg_pcrbank_free(b);
}

struct wctx {
	struct vg_pcrbank *b;
	char log[256], bank[256];
};

static struct vg_mlog *open_log(struct wctx *w, int want, struct vg_mlog_recovery *rec)
{
	struct vg_mlog_opts o = { .ops = &vg_pcrbank_ops, .pcr_sync = vg_pcrbank_sync_cb };
	struct vg_mlog *l = NULL;
	struct vg_diag d = { 0 };

	assert_int_equal(vg_pcrbank_open(w->bank, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256, &w->b, NULL), 0);
	o.ops_ctx = w->b;
	assert_int_equal(vg_mlog_open(w->log, &o, &l, rec, &d), want);
	if (want < 0) {
		vg_pcrbank_free(w->b);
		w->b = NULL;
	}
	return l;
}

static void close_log(struct wctx *w, struct vg_mlog *l)
{
	vg_mlog_free(l);
	vg_pcrbank_free(w->b);
	w->b = NULL;
}

static void copy(const char *from, const char *to, size_t n)
{
	size_t len;
	FILE *f = fopen(from, "rb"), *g;
	uint8_t *buf;
	struct stat st;

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	len = (size_t)st.st_size;
	buf = malloc(len + 1);
	assert_int_equal(fread(buf, 1, len, f), len);
	fclose(f);
	g = fopen(to, "wb");
	assert_non_null(g);
	assert_int_equal(fwrite(buf, 1, n < len ? n : len, g), n < len ? n : len);
	fclose(g);
	free(buf);
}

static size_t fsize(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return (size_t)st.st_size;
}

static void mlog_writes_recovers_and_refuses(void **state)
{
	struct wctx w;
	struct vg_mlog_recovery rec;
	struct vg_mlog *l;
	struct vg_digest fd;
	char log0[300], bank0[300], log1[300];
	size_t s0, s1;

	(void)state;
	snprintf(w.log, sizeof(w.log), "%s/log", tmpdir);
	snprintf(w.bank, sizeof(w.bank), "%s/log.pcrs", tmpdir);
	snprintf(log0, sizeof(log0), "%s/log0", tmpdir);
	snprintf(bank0, sizeof(bank0), "%s/bank0", tmpdir);
	snprintf(log1, sizeof(log1), "%s/log1", tmpdir);
	unlink(w.log);
	unlink(w.bank);
	l = open_log(&w, 0, &rec);
	assert_true(rec.created);
	assert_int_equal(rec.entries, 1);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "x", 1, &fd, NULL), 0);
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/a file", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_append_file(l, 11, &fd, "/b", (const uint8_t *)"\x03\x02", 2, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, NULL), 2);
	assert_int_equal(vg_mlog_commit(l, NULL), 0);
	assert_int_equal(vg_mlog_entries(l), 3);
	{
		struct vg_imalog_field bad = { VG_IMAF_N_NG, 2, (const uint8_t *)"x" };

		assert_int_equal(vg_mlog_append(l, 10, "ima-ng", &bad, 1, NULL), -EINVAL);
		assert_int_equal(vg_mlog_append(l, 10, "nonsense", &bad, 1, NULL), -EINVAL);
	}
	close_log(&w, l);
	copy(w.log, log0, SIZE_MAX);
	copy(w.bank, bank0, SIZE_MAX);
	s0 = fsize(log0);

	/* one more entry, then every torn prefix of it is recovered */
	l = open_log(&w, 0, &rec);
	assert_false(rec.created);
	assert_int_equal(rec.entries, 3);
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/c", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, NULL), 1);
	close_log(&w, l);
	copy(w.log, log1, SIZE_MAX);
	s1 = fsize(log1);
	for (size_t cut = s0 + 1; cut < s1; cut++) {
		copy(log1, w.log, cut);
		copy(bank0, w.bank, SIZE_MAX);
		l = open_log(&w, 0, &rec);
		assert_int_equal(rec.truncated, cut - s0);
		assert_int_equal(rec.entries, 3);
		assert_int_equal(fsize(w.log), s0);
		close_log(&w, l);
	}
	/* logged but not extended */
	copy(log1, w.log, SIZE_MAX);
	copy(bank0, w.bank, SIZE_MAX);
	l = open_log(&w, 0, &rec);
	assert_int_equal(rec.extended, 1);
	assert_int_equal(rec.entries, 4);
	close_log(&w, l);
	/* and now the bank is at 4: opening again repairs nothing */
	l = open_log(&w, 0, &rec);
	assert_int_equal(rec.extended, 0);
	assert_int_equal(rec.truncated, 0);
	close_log(&w, l);
	/* a log shorter than the PCRs have seen: refused */
	copy(log0, w.log, SIZE_MAX);
	open_log(&w, -ESTALE, NULL);
	assert_int_equal(fsize(w.log), s0);
	/* a damaged middle entry: refused, not truncated */
	{
		FILE *f;

		copy(log1, w.log, SIZE_MAX);
		f = fopen(w.log, "r+b");
		fseek(f, 60, SEEK_SET);
		fputc(0x77, f);
		fclose(f);
		open_log(&w, -EILSEQ, NULL);
		assert_int_equal(fsize(w.log), s1);
	}
	unlink(w.log);
	unlink(w.bank);
	unlink(log0);
	unlink(log1);
	unlink(bank0);
}

/* A software bank that fails extends on demand and has a reset counter (a TPM's part). */
struct fstore {
	struct vg_pcrbank *b;
	int fail_extend;
	uint32_t reset;
};

static int fs_extend(void *ctx, unsigned int pcr, const struct vg_digest *d, size_t n,
		     struct vg_diag *diag)
{
	struct fstore *f = ctx;

	if (f->fail_extend > 0) {
		f->fail_extend--;
		return vg_diag_set(diag, -EIO, "injected extend failure");
	}
	return vg_pcrbank_ops.extend(f->b, pcr, d, n, diag);
}

static int fs_read(void *ctx, unsigned int pcr, unsigned int algo, struct vg_digest *ret,
		   struct vg_diag *diag)
{
	return vg_pcrbank_ops.read(((struct fstore *)ctx)->b, pcr, algo, ret, diag);
}

static uint32_t fs_banks(void *ctx)
{
	return vg_pcrbank_ops.banks(((struct fstore *)ctx)->b);
}

static int fs_reset(void *ctx, uint32_t *ret, struct vg_diag *diag)
{
	(void)diag;
	*ret = ((struct fstore *)ctx)->reset;
	return 0;
}

static int fs_sync(void *ctx, struct vg_diag *diag)
{
	return vg_pcrbank_sync(((struct fstore *)ctx)->b, diag);
}

static const struct vg_pcr_ops fstore_ops = {
	.extend = fs_extend, .read = fs_read, .banks = fs_banks, .reset_count = fs_reset,
	.attestable = true,
};

static struct vg_mlog *fopen_log(struct wctx *w, struct fstore *f, int want, struct vg_diag *d)
{
	struct vg_mlog_opts o = { .ops = &fstore_ops, .ops_ctx = f, .pcr_sync = fs_sync };
	struct vg_mlog *l = NULL;

	assert_int_equal(vg_pcrbank_open(w->bank, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256, &f->b, NULL), 0);
	assert_int_equal(vg_mlog_open(w->log, &o, &l, NULL, d), want);
	if (want < 0) {
		vg_pcrbank_free(f->b);
		f->b = NULL;
	}
	return l;
}

static void fclose_log(struct fstore *f, struct vg_mlog *l)
{
	vg_mlog_free(l);
	vg_pcrbank_free(f->b);
	f->b = NULL;
}

static void mlog_recovers_after_failed_commits(void **state)
{
	struct fstore f = { .reset = 5 };
	struct vg_diag d = { 0 };
	struct wctx w;
	struct vg_mlog *l;
	struct vg_digest fd;
	struct rlimit old, lim;
	char boot[300];
	size_t s;

	(void)state;
	snprintf(w.log, sizeof(w.log), "%s/flog", tmpdir);
	snprintf(w.bank, sizeof(w.bank), "%s/flog.pcrs", tmpdir);
	snprintf(boot, sizeof(boot), "%s/flog.boot", tmpdir);
	unlink(w.log);
	unlink(w.bank);
	unlink(boot);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "y", 1, &fd, NULL), 0);
	l = fopen_log(&w, &f, 0, &d);
	assert_int_equal(vg_mlog_entries(l), 1);
	assert_true(fsize(boot) > 0);	/* the boot record, before the first entry */

	/* a write that fails (file size limit: EFBIG, as ENOSPC would) */
	s = fsize(w.log);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = s + 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/full", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, &d), -EFBIG);
	assert_true(vg_mlog_failed(l));
	assert_int_equal(fsize(w.log), s);		/* the partial entry is cut off */
	/* still full: the recovery succeeds (a cut needs no room), the write fails again */
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/full", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, &d), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	/* room again: the same writer goes on */
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/room", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, &d), 1);
	assert_false(vg_mlog_failed(l));
	assert_int_equal(vg_mlog_entries(l), 2);

	/* an extend that fails: the entry is in the file; recovery extends it */
	f.fail_extend = 1;
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/tpm-gone", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, NULL), -EIO);
	assert_true(vg_mlog_failed(l));
	assert_int_equal(vg_mlog_recover(l, &d), 0);
	assert_false(vg_mlog_failed(l));
	assert_int_equal(vg_mlog_entries(l), 3);
	fclose_log(&f, l);
	{
		struct vg_mlog_opts o = { .ops = &fstore_ops, .ops_ctx = &f, .pcr_sync = fs_sync };
		struct vg_mlog_recovery rec;

		/* the file and the (synced) bank agree: nothing to repair */
		assert_int_equal(vg_pcrbank_open(w.bank, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256, &f.b, NULL), 0);
		assert_int_equal(vg_mlog_open(w.log, &o, &l, &rec, &d), 0);
		assert_int_equal(rec.extended, 0);
		assert_int_equal(rec.truncated, 0);
		assert_int_equal(rec.entries, 3);
	}
	/* the TPM reset while the writer had failed: refused for good */
	f.fail_extend = 1;
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/x", NULL, 0, NULL), 0);
	assert_int_equal(vg_mlog_commit(l, NULL), -EIO);
	f.reset = 6;
	assert_int_equal(vg_mlog_append_file(l, 10, &fd, "/x", NULL, 0, &d), -ESTALE);
	assert_non_null(strstr(d.msg, "resetCount 5 to 6"));
	fclose_log(&f, l);

	/* reopened at another resetCount: an earlier boot's list */
	s = fsize(w.log);
	fopen_log(&w, &f, -ESTALE, &d);
	assert_non_null(strstr(d.msg, "resetCount 5"));
	assert_non_null(strstr(d.msg, "resetCount 6 now"));
	assert_int_equal(fsize(w.log), s);
	/* the record matches but the PCRs were reset (a TPM Restart): refused */
	f.reset = 5;
	unlink(w.bank);
	fopen_log(&w, &f, -ESTALE, &d);
	assert_non_null(strstr(d.msg, "have seen none of its 4 entries"));
	assert_int_equal(fsize(w.log), s);
	/* a malformed record is refused, not rewritten */
	{
		FILE *b = fopen(boot, "w");

		fputs("resetCount five\n", b);
		fclose(b);
		fopen_log(&w, &f, -EBADMSG, &d);
	}
	unlink(w.log);
	unlink(w.bank);
	unlink(boot);
}

static void load_and_replay_survive_allocation_failures(void **state)
{
	size_t len;
	uint8_t *ascii = slurp("imalog", "keylime-tests-test2.ascii_runtime_measurements", &len);

	(void)state;
	for (long n = 0;; n++) {
		struct vg_imalog_buf scratch = { 0 };
		struct vg_imalog_replay *r = NULL;
		const uint8_t *buf;
		size_t blen;
		unsigned int algo;
		long c;
		int rc = 0;

		failalloc_arm(n);
		c = vg_imalog_load(ascii, len, &scratch, &buf, &blen, &algo, NULL);
		if (c >= 0)
			rc = vg_imalog_replay_new(1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256, 0, &r, NULL);
		if (c >= 0 && rc == 0) {
			struct vg_imalog_parser p;
			struct vg_imalog_entry e;

			vg_imalog_parser_init(&p, buf, blen, algo);
			while (rc == 0 && vg_imalog_parser_next(&p, &e, NULL) == 1)
				rc = vg_imalog_replay_entry(r, &e, p.index - 1, NULL);
		}
		failalloc_disarm();
		vg_imalog_replay_free(r);
		vg_imalog_buf_release(&scratch);
		if (!failalloc_hit()) {
			assert_true(c > 0);
			assert_int_equal(rc, 0);
			break;
		}
		assert_true(c == -ENOMEM || rc == -ENOMEM || rc == -EIO || rc == -EOPNOTSUPP ||
			    c >= 0);
	}
	free(ascii);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(template_lookup_builtins_and_custom),
		cmocka_unit_test(parse_evmctl_vector_entries),
		cmocka_unit_test(parse_rejects_truncation_at_every_offset),
		cmocka_unit_test(parse_rejects_malformed),
		cmocka_unit_test(ascii_round_trip_and_errors),
		cmocka_unit_test(replay_matches_pcrs_and_is_incremental),
		cmocka_unit_test(replay_rejects_tampered_entry),
		cmocka_unit_test(boot_aggregate_equals_evmctl),
		cmocka_unit_test(pcrbank_persists_and_locks),
		cmocka_unit_test(mlog_writes_recovers_and_refuses),
		cmocka_unit_test(mlog_recovers_after_failed_commits),
		cmocka_unit_test(load_and_replay_survive_allocation_failures),
	};
	int r;

	failalloc_install();
	if (!mkdtemp(tmpdir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return r;
}
