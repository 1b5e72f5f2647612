// SPDX-License-Identifier: MIT
/*
 * imalog.c - the measurement list codec: templates and fields, the binary
 * parser, the ascii printer, and ascii → binary conversion.
 *
 * Everything is decoded field by field with a bounds check before every
 * read; parsed entries point into the caller's buffer. Ascii input is
 * converted to the binary layout and then parsed by the same binary
 * parser, so both paths share one set of checks. Template digests and
 * replay live in imalog_replay.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vigil/imalog.h"

enum field_fmt { FMT_DIGEST, FMT_DIGEST_ALGO, FMT_STRING, FMT_HEX, FMT_UINT };

/* ima_template.c supported_fields[], with the show format of each. */
static const struct {
	const char *id;
	uint8_t fmt;
	uint8_t uint_len;	/* FMT_UINT: bytes the kernel stores */
} fields[VG_IMAF__COUNT] = {
	[VG_IMAF_D] = { "d", FMT_DIGEST, 0 },
	[VG_IMAF_N] = { "n", FMT_STRING, 0 },
	[VG_IMAF_D_NG] = { "d-ng", FMT_DIGEST_ALGO, 0 },
	[VG_IMAF_D_NGV2] = { "d-ngv2", FMT_DIGEST_ALGO, 0 },
	[VG_IMAF_N_NG] = { "n-ng", FMT_STRING, 0 },
	[VG_IMAF_SIG] = { "sig", FMT_HEX, 0 },
	[VG_IMAF_BUF] = { "buf", FMT_HEX, 0 },
	[VG_IMAF_D_MODSIG] = { "d-modsig", FMT_DIGEST_ALGO, 0 },
	[VG_IMAF_MODSIG] = { "modsig", FMT_HEX, 0 },
	[VG_IMAF_EVMSIG] = { "evmsig", FMT_HEX, 0 },
	[VG_IMAF_XATTRNAMES] = { "xattrnames", FMT_STRING, 0 },
	[VG_IMAF_XATTRLENGTHS] = { "xattrlengths", FMT_HEX, 0 },
	[VG_IMAF_XATTRVALUES] = { "xattrvalues", FMT_HEX, 0 },
	[VG_IMAF_IUID] = { "iuid", FMT_UINT, 4 },
	[VG_IMAF_IGID] = { "igid", FMT_UINT, 4 },
	[VG_IMAF_IMODE] = { "imode", FMT_UINT, 2 },
};

/* ima_template.c builtin_templates[] */
static const struct {
	const char *name;
	const char *fmt;
} builtins[] = {
	{ "ima", "d|n" },
	{ "ima-ng", "d-ng|n-ng" },
	{ "ima-sig", "d-ng|n-ng|sig" },
	{ "ima-ngv2", "d-ngv2|n-ng" },
	{ "ima-sigv2", "d-ngv2|n-ng|sig" },
	{ "ima-buf", "d-ng|n-ng|buf" },
	{ "ima-modsig", "d-ng|n-ng|sig|d-modsig|modsig" },
	{ "evm-sig", "d-ng|n-ng|evmsig|xattrnames|xattrlengths|xattrvalues|iuid|igid|imode" },
};

const char *vg_imalog_field_name(unsigned int id)
{
	return id < VG_IMAF__COUNT ? fields[id].id : NULL;
}

static int parse_fmt(const char *s, size_t len, struct vg_imalog_template *t, struct vg_diag *diag)
{
	size_t i = 0;

	t->nfields = 0;
	t->ima = false;
	while (i <= len) {
		size_t j = i;
		unsigned int id;

		while (j < len && s[j] != '|')
			j++;
		for (id = 0; id < VG_IMAF__COUNT; id++)
			if (strlen(fields[id].id) == j - i && memcmp(fields[id].id, s + i, j - i) == 0)
				break;
		if (id == VG_IMAF__COUNT)
			return vg_diag_set(diag, -EBADMSG, "unknown template '%.*s'",
					   (int)(len > 64 ? 64 : len), s);
		if (t->nfields == VG_IMALOG_MAX_FIELDS)
			return vg_diag_set(diag, -EBADMSG, "template has more than %d fields",
					   VG_IMALOG_MAX_FIELDS);
		t->fields[t->nfields++] = (uint8_t)id;
		i = j + 1;
	}
	return 0;
}

int vg_imalog_template_lookup(const char *name, size_t len, struct vg_imalog_template *ret,
			      struct vg_diag *diag)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(builtins); i++) {
		if (strlen(builtins[i].name) == len && memcmp(builtins[i].name, name, len) == 0) {
			int r = parse_fmt(builtins[i].fmt, strlen(builtins[i].fmt), ret, diag);

			ret->ima = i == 0;
			return r;
		}
	}
	if (len == 0)
		return vg_diag_set(diag, -EBADMSG, "empty template name");
	return parse_fmt(name, len, ret, diag);
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void vg_imalog_parser_init(struct vg_imalog_parser *p, const uint8_t *buf, size_t len,
			   unsigned int algo)
{
	p->buf = buf;
	p->len = len;
	p->off = 0;
	p->index = 0;
	p->algo = algo;
	p->last_name = NULL;
	p->last_len = 0;
}

int vg_imalog_field_digest(const struct vg_imalog_field *f, unsigned int *ret_algo,
			   const uint8_t **ret_digest, size_t *ret_len, struct vg_diag *diag)
{
	const uint8_t *nul, *colon = NULL;
	char name[32];
	size_t plen, nlen;
	int a;

	if (f->id == VG_IMAF_D) {
		*ret_algo = f->len == 16 ? VG_HASH_MD5 : VG_HASH_SHA1;
		*ret_digest = f->data;
		*ret_len = f->len;
		return 0;
	}
	nul = f->len ? memchr(f->data, '\0', f->len) : NULL;
	if (!nul)
		return vg_diag_set(diag, -EBADMSG, "%s field has no 'algo:' prefix",
				   fields[f->id].id);
	plen = (size_t)(nul - f->data);
	if (plen == 0 || f->data[plen - 1] != ':')
		return vg_diag_set(diag, -EBADMSG, "%s field prefix does not end in ':'",
				   fields[f->id].id);
	/* the algorithm is the last component: "sha256:" or "ima:sha256:" */
	for (size_t i = 0; i + 1 < plen; i++)
		if (f->data[i] == ':')
			colon = f->data + i;
	nlen = plen - 1 - (colon ? (size_t)(colon - f->data) + 1 : 0);
	if (nlen == 0 || nlen >= sizeof(name))
		return vg_diag_set(diag, -EBADMSG, "%s field: bad algorithm name",
				   fields[f->id].id);
	memcpy(name, f->data + plen - 1 - nlen, nlen);
	name[nlen] = '\0';
	/* the common names first: this runs for every entry */
	if (nlen == 6 && memcmp(name, "sha256", 6) == 0)
		a = VG_HASH_SHA256;
	else if (nlen == 4 && memcmp(name, "sha1", 4) == 0)
		a = VG_HASH_SHA1;
	else
		a = vg_hash_by_name(name);
	if (a < 0)
		return vg_diag_set(diag, -EBADMSG, "%s field: unknown algorithm '%s'",
				   fields[f->id].id, name);
	if (f->len - plen - 1 != vg_hash_size((unsigned int)a))
		return vg_diag_set(diag, -EBADMSG, "%s field: %zu digest bytes for %s",
				   fields[f->id].id, (size_t)(f->len - plen - 1), name);
	*ret_algo = (unsigned int)a;
	*ret_digest = nul + 1;
	*ret_len = f->len - plen - 1;
	return 0;
}

#define NEED(n)                                                                           \
	do {                                                                              \
		if ((n) > p->len - off)                                                   \
			return vg_diag_set(diag, -EMSGSIZE,                               \
					   "entry %" PRIu64 " at offset %zu: truncated (%s)", \
					   p->index, start, what);                        \
	} while (0)

int vg_imalog_parser_next(struct vg_imalog_parser *p, struct vg_imalog_entry *e,
			  struct vg_diag *diag)
{
	size_t start = p->off, off = p->off, dlen = vg_hash_size(p->algo);
	const char *what = "pcr";
	uint32_t nlen, dtotal;
	bool zero = true;
	int r;

	if (off == p->len)
		return 0;
	NEED(4);
	e->pcr = le32(p->buf + off);
	off += 4;
	if (e->pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: pcr %" PRIu32
				   " is not below %d", p->index, start, e->pcr, VG_PCR_COUNT);
	what = "template digest";
	NEED(dlen);
	e->digest.algo = (uint8_t)p->algo;
	e->digest.len = (uint8_t)dlen;
	memcpy(e->digest.bytes, p->buf + off, dlen);
	for (size_t i = 0; i < dlen; i++)
		zero &= p->buf[off + i] == 0;
	e->violation = zero;
	off += dlen;
	what = "template name length";
	NEED(4);
	nlen = le32(p->buf + off);
	off += 4;
	if (nlen == 0 || nlen > VG_IMALOG_NAME_MAX)
		return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: template name "
				   "length %" PRIu32 " is absurd", p->index, start, nlen);
	what = "template name";
	NEED(nlen);
	e->name = (const char *)p->buf + off;
	e->name_len = nlen;
	off += nlen;
	for (size_t i = 0; i < nlen; i++)
		if (e->name[i] <= ' ' || e->name[i] > '~')
			return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: template "
					   "name has a non-printable byte", p->index, start);
	if (p->last_name && p->last_len == nlen && memcmp(p->last_name, e->name, nlen) == 0) {
		e->tmpl = p->last;
	} else {
		r = vg_imalog_template_lookup(e->name, nlen, &e->tmpl, NULL);
		if (r < 0)
			return vg_diag_set(diag, r, "entry %" PRIu64 " at offset %zu: unknown template "
					   "'%.*s'", p->index, start, (int)(nlen > 64 ? 64 : nlen), e->name);
		p->last = e->tmpl;
		p->last_name = e->name;
		p->last_len = nlen;
	}
	if (e->tmpl.ima) {
		/* d[20] | u32 n_len | n, no data length (ima_measurements_show) */
		what = "ima d field";
		NEED(20 + 4);
		e->data = p->buf + off;
		e->f[0] = (struct vg_imalog_field){ VG_IMAF_D, 20, p->buf + off };
		off += 20;
		nlen = le32(p->buf + off);
		off += 4;
		if (nlen > VG_IMALOG_EVENT_NAME_MAX)
			return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: ima name "
					   "length %" PRIu32 " exceeds %d", p->index, start, nlen,
					   VG_IMALOG_EVENT_NAME_MAX);
		what = "ima n field";
		NEED(nlen);
		e->f[1] = (struct vg_imalog_field){ VG_IMAF_N, nlen, p->buf + off };
		off += nlen;
		e->data_len = (size_t)(p->buf + off - e->data);
	} else {
		size_t doff;

		what = "template data length";
		NEED(4);
		dtotal = le32(p->buf + off);
		off += 4;
		if (dtotal > VG_IMALOG_DATA_MAX)
			return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: template data "
					   "length %" PRIu32 " is absurd", p->index, start, dtotal);
		what = "template data";
		NEED(dtotal);
		e->data = p->buf + off;
		e->data_len = dtotal;
		off += dtotal;
		doff = 0;
		for (unsigned int i = 0; i < e->tmpl.nfields; i++) {
			uint32_t fl;

			if (dtotal - doff < 4 || (fl = le32(e->data + doff)) > dtotal - doff - 4)
				return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: field %u "
						   "(%s) overruns the template data", p->index, start, i,
						   fields[e->tmpl.fields[i]].id);
			e->f[i] = (struct vg_imalog_field){ e->tmpl.fields[i], fl, e->data + doff + 4 };
			doff += 4 + fl;
		}
		if (doff != dtotal)
			return vg_diag_set(diag, -EBADMSG, "entry %" PRIu64 " at offset %zu: %zu bytes "
					   "after the last field", p->index, start, dtotal - doff);
	}
	for (unsigned int i = 0; i < e->tmpl.nfields; i++) {
		const struct vg_imalog_field *f = &e->f[i];
		const uint8_t *dg;
		unsigned int a;
		size_t l;

		/* an empty digest field: d-modsig without an appended signature */
		if (fields[f->id].fmt != FMT_DIGEST_ALGO || f->len == 0)
			continue;
		struct vg_diag fd;	/* written (and read) only on failure */

		r = vg_imalog_field_digest(f, &a, &dg, &l, &fd);
		if (r < 0)
			return vg_diag_set(diag, r, "entry %" PRIu64 " at offset %zu: %s", p->index,
					   start, fd.msg);
	}
	e->offset = start;
	e->size = off - start;
	p->off = off;
	p->index++;
	return 1;
}
#undef NEED

bool vg_imalog_is_ascii(const uint8_t *buf, size_t len)
{
	return len > 0 && (buf[0] == ' ' || (buf[0] >= '0' && buf[0] <= '9'));
}

int vg_imalog_detect(const uint8_t *buf, size_t len, struct vg_diag *diag)
{
	static const unsigned int cand[] = { VG_HASH_SHA1, VG_HASH_SHA256, VG_HASH_SHA384,
					     VG_HASH_SHA512 };
	struct vg_diag first = { 0 };
	int parsed = -1;

	if (len == 0)
		return VG_HASH_SHA1;
	for (size_t i = 0; i < VG_ARRAY_SIZE(cand); i++) {
		struct vg_imalog_parser p;
		struct vg_imalog_entry e;
		struct vg_digest d;
		struct vg_diag dd = { 0 };

		vg_imalog_parser_init(&p, buf, len, cand[i]);
		if (vg_imalog_parser_next(&p, &e, &dd) != 1) {
			if (i == 0)
				first = dd;
			continue;
		}
		if (e.violation)
			return (int)cand[i];
		if (vg_imalog_template_digest(&e, cand[i], &d, NULL) == 0 &&
		    memcmp(d.bytes, e.digest.bytes, d.len) == 0)
			return (int)cand[i];
		if (parsed < 0)
			parsed = (int)cand[i];
	}
	if (parsed >= 0)
		return parsed;
	return vg_diag_set(diag, -EBADMSG, "not a measurement list: %s", first.msg);
}

/* ---- output buffers ---- */

void vg_imalog_buf_release(struct vg_imalog_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static int buf_reserve(struct vg_imalog_buf *b, size_t more)
{
	size_t cap;
	uint8_t *n;

	if (more <= b->cap - b->len)
		return 0;
	if (more > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more)
		cap *= 2;
	n = realloc(b->data, cap);
	if (!n)
		return -ENOMEM;
	b->data = n;
	b->cap = cap;
	return 0;
}

static int buf_put(struct vg_imalog_buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) < 0)
		return -ENOMEM;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

static int buf_u32(struct vg_imalog_buf *b, uint32_t v)
{
	uint8_t x[4];

	put_le32(x, v);
	return buf_put(b, x, 4);
}

static int buf_hex(struct vg_imalog_buf *b, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	if (buf_reserve(b, 2 * n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		b->data[b->len++] = (uint8_t)hx[p[i] >> 4];
		b->data[b->len++] = (uint8_t)hx[p[i] & 15];
	}
	return 0;
}

/* ---- ascii output (ima_ascii_measurements_show, ima_show_template_data_ascii) ---- */

static int show_field(const struct vg_imalog_field *f, struct vg_imalog_buf *out)
{
	const uint8_t *nul;
	char num[32];
	int n;

	switch (fields[f->id].fmt) {
	case FMT_DIGEST_ALGO:
		nul = f->len ? memchr(f->data, '\0', f->len) : NULL;
		if (nul) {
			size_t plen = (size_t)(nul - f->data);

			if (buf_put(out, f->data, plen) < 0)
				return -ENOMEM;
			return buf_hex(out, nul + 1, f->len - plen - 1);
		}
		return buf_hex(out, f->data, f->len);
	case FMT_DIGEST:
	case FMT_HEX:
		return buf_hex(out, f->data, f->len);
	case FMT_STRING:
		nul = f->len ? memchr(f->data, '\0', f->len) : NULL;
		return buf_put(out, f->data, nul ? (size_t)(nul - f->data) : f->len);
	case FMT_UINT:
		switch (f->len) {
		case 1:
			n = snprintf(num, sizeof(num), "%u", f->data[0]);
			break;
		case 2:
			n = snprintf(num, sizeof(num), "%u", (unsigned int)(f->data[0] | f->data[1] << 8));
			break;
		case 4:
			n = snprintf(num, sizeof(num), "%" PRIu32, le32(f->data));
			break;
		case 8:
			n = snprintf(num, sizeof(num), "%" PRIu64,
				     (uint64_t)le32(f->data) | (uint64_t)le32(f->data + 4) << 32);
			break;
		default:
			return 0;	/* the kernel prints nothing */
		}
		return buf_put(out, num, (size_t)n);
	}
	return 0;
}

int vg_imalog_format_ascii(const struct vg_imalog_entry *e, struct vg_imalog_buf *out)
{
	char pcr[16];
	int n = snprintf(pcr, sizeof(pcr), "%2" PRIu32 " ", e->pcr);

	if (buf_put(out, pcr, (size_t)n) < 0 || buf_hex(out, e->digest.bytes, e->digest.len) < 0 ||
	    buf_put(out, " ", 1) < 0 || buf_put(out, e->name, e->name_len) < 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < e->tmpl.nfields; i++)
		if (buf_put(out, " ", 1) < 0 || show_field(&e->f[i], out) < 0)
			return -ENOMEM;
	return buf_put(out, "\n", 1);
}

/* ---- binary output ---- */

static int encode_body(const struct vg_imalog_entry *e, struct vg_imalog_buf *out)
{
	if (e->tmpl.ima) {
		if (buf_put(out, e->f[0].data, e->f[0].len) < 0 || buf_u32(out, e->f[1].len) < 0 ||
		    buf_put(out, e->f[1].data, e->f[1].len) < 0)
			return -ENOMEM;
		return 0;
	}
	if (buf_u32(out, (uint32_t)e->data_len) < 0 || buf_put(out, e->data, e->data_len) < 0)
		return -ENOMEM;
	return 0;
}

int vg_imalog_encode(const struct vg_imalog_entry *e, const struct vg_digest *digest,
		     struct vg_imalog_buf *out)
{
	if (buf_u32(out, e->pcr) < 0 || buf_put(out, digest->bytes, digest->len) < 0 ||
	    buf_u32(out, (uint32_t)e->name_len) < 0 || buf_put(out, e->name, e->name_len) < 0)
		return -ENOMEM;
	return encode_body(e, out);
}

int vg_imalog_encode_fields(uint32_t pcr, const char *tmpl_name, const struct vg_imalog_field *f,
			    unsigned int n, size_t digest_len, struct vg_imalog_buf *out)
{
	struct vg_imalog_template t;
	uint8_t zero[VG_HASH_MAX_DIGEST] = { 0 };
	size_t total = 0, nl = strlen(tmpl_name);

	if (vg_imalog_template_lookup(tmpl_name, nl, &t, NULL) < 0 || t.nfields != n ||
	    digest_len > sizeof(zero) || pcr >= VG_PCR_COUNT)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (f[i].id != t.fields[i])
			return -EINVAL;
		total += 4 + (size_t)f[i].len;
	}
	if (t.ima && (f[0].len != 20 || f[1].len > VG_IMALOG_EVENT_NAME_MAX))
		return -EINVAL;
	if (total > VG_IMALOG_DATA_MAX)
		return -EINVAL;
	if (buf_u32(out, pcr) < 0 || buf_put(out, zero, digest_len) < 0 ||
	    buf_u32(out, (uint32_t)nl) < 0 || buf_put(out, tmpl_name, nl) < 0)
		return -ENOMEM;
	if (t.ima) {
		/* the "ima" layout stores n without its NUL */
		uint32_t l = f[1].len;

		if (l && f[1].data[l - 1] == '\0')
			l--;
		if (buf_put(out, f[0].data, 20) < 0 || buf_u32(out, l) < 0 ||
		    buf_put(out, f[1].data, l) < 0)
			return -ENOMEM;
		return 0;
	}
	if (buf_u32(out, (uint32_t)total) < 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++)
		if (buf_u32(out, f[i].len) < 0 || buf_put(out, f[i].data, f[i].len) < 0)
			return -ENOMEM;
	return 0;
}

/* ---- ascii input ---- */

static int nib(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Append the bytes of @n hex digits. Return: 0, -EBADMSG, -ENOMEM. */
static int put_unhex(struct vg_imalog_buf *b, const char *s, size_t n)
{
	if (n % 2)
		return -EBADMSG;
	if (buf_reserve(b, n / 2) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i += 2) {
		int hi = nib(s[i]), lo = nib(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -EBADMSG;
		b->data[b->len++] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

struct tok {
	const char *p;
	size_t n;
};

/* Append one field's stored bytes (without its length) for ascii token @t. */
static int ascii_field(unsigned int id, struct tok t, struct vg_imalog_buf *b)
{
	const char *colon = NULL;
	unsigned long long v = 0;

	switch (fields[id].fmt) {
	case FMT_DIGEST_ALGO:
		for (size_t i = 0; i < t.n; i++)
			if (t.p[i] == ':')
				colon = t.p + i;
		if (colon) {
			size_t plen = (size_t)(colon - t.p) + 1;

			if (buf_put(b, t.p, plen) < 0 || buf_put(b, "", 1) < 0)
				return -ENOMEM;
			return put_unhex(b, colon + 1, t.n - plen);
		}
		return put_unhex(b, t.p, t.n);
	case FMT_DIGEST:
	case FMT_HEX:
		return put_unhex(b, t.p, t.n);
	case FMT_STRING:
		if (t.n == 0 && id == VG_IMAF_XATTRNAMES)
			return 0;
		if (buf_put(b, t.p, t.n) < 0 || buf_put(b, "", 1) < 0)
			return -ENOMEM;
		return 0;
	case FMT_UINT:
		if (t.n == 0)
			return 0;
		if (t.n > 20)
			return -EBADMSG;
		for (size_t i = 0; i < t.n; i++) {
			if (t.p[i] < '0' || t.p[i] > '9')
				return -EBADMSG;
			v = v * 10 + (unsigned int)(t.p[i] - '0');
		}
		if (fields[id].uint_len == 2 && v > UINT16_MAX)
			return -EBADMSG;
		if (fields[id].uint_len == 4 && v > UINT32_MAX)
			return -EBADMSG;
		{
			uint8_t x[4];

			put_le32(x, (uint32_t)v);
			return buf_put(b, x, fields[id].uint_len);
		}
	}
	return -EBADMSG;
}

/* Convert one ascii line (no '\n') into a binary entry appended to @out. */
static int ascii_line(const char *line, size_t len, size_t lineno, struct vg_imalog_buf *out,
		      size_t *dlen, struct vg_diag *diag)
{
	struct tok tk[3 + VG_IMALOG_MAX_FIELDS];
	struct vg_imalog_template t;
	struct vg_imalog_buf fb = { 0 };
	size_t ntok = 0, i = 0, start = out->len;
	unsigned long pcr = 0;
	int r;

	while (i < len && line[i] == ' ')
		i++;
	for (;;) {
		size_t j = i;

		while (j < len && line[j] != ' ')
			j++;
		if (ntok == VG_ARRAY_SIZE(tk))
			return vg_diag_set(diag, -EBADMSG, "line %zu: too many fields", lineno);
		tk[ntok++] = (struct tok){ line + i, j - i };
		if (j == len)
			break;
		i = j + 1;
	}
	if (ntok < 3)
		return vg_diag_set(diag, -EBADMSG, "line %zu: fewer than 3 columns", lineno);
	if (tk[0].n == 0 || tk[0].n > 2)
		return vg_diag_set(diag, -EBADMSG, "line %zu: bad PCR number", lineno);
	for (i = 0; i < tk[0].n; i++) {
		if (tk[0].p[i] < '0' || tk[0].p[i] > '9')
			return vg_diag_set(diag, -EBADMSG, "line %zu: bad PCR number", lineno);
		pcr = pcr * 10 + (unsigned long)(tk[0].p[i] - '0');
	}
	if (pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EBADMSG, "line %zu: PCR %lu is not below %d", lineno, pcr,
				   VG_PCR_COUNT);
	if (tk[1].n != 40 && tk[1].n != 64 && tk[1].n != 96 && tk[1].n != 128)
		return vg_diag_set(diag, -EBADMSG, "line %zu: template digest of %zu hex digits",
				   lineno, tk[1].n);
	if (*dlen && *dlen != tk[1].n / 2)
		return vg_diag_set(diag, -EBADMSG, "line %zu: template digest size differs from "
				   "line 1", lineno);
	*dlen = tk[1].n / 2;
	if (tk[2].n > VG_IMALOG_NAME_MAX)
		return vg_diag_set(diag, -EBADMSG, "line %zu: template name too long", lineno);
	r = vg_imalog_template_lookup(tk[2].p, tk[2].n, &t, diag);
	if (r < 0)
		return vg_diag_set(diag, r, "line %zu: unknown template '%.*s'", lineno,
				   (int)(tk[2].n > 64 ? 64 : tk[2].n), tk[2].p);
	if (ntok != 3 + t.nfields)
		return vg_diag_set(diag, -EBADMSG, "line %zu: %zu fields for template %.*s, which "
				   "has %u", lineno, ntok - 3, (int)tk[2].n, tk[2].p, t.nfields);
	if (buf_u32(out, (uint32_t)pcr) < 0)
		goto nomem;
	r = put_unhex(out, tk[1].p, tk[1].n);
	if (r < 0)
		goto bad;
	if (buf_u32(out, (uint32_t)tk[2].n) < 0 || buf_put(out, tk[2].p, tk[2].n) < 0)
		goto nomem;
	if (t.ima) {
		r = put_unhex(out, tk[3].p, tk[3].n);
		if (r < 0)
			goto bad;
		if (tk[3].n != 40) {
			r = -EBADMSG;
			goto bad;
		}
		if (buf_u32(out, (uint32_t)tk[4].n) < 0 || buf_put(out, tk[4].p, tk[4].n) < 0)
			goto nomem;
		return 0;
	}
	for (i = 0; i < t.nfields; i++) {
		size_t at = fb.len;

		if (buf_u32(&fb, 0) < 0)
			goto nomem;
		r = ascii_field(t.fields[i], tk[3 + i], &fb);
		if (r < 0) {
			vg_imalog_buf_release(&fb);
			out->len = start;
			if (r == -ENOMEM)
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			return vg_diag_set(diag, -EBADMSG, "line %zu: field %zu (%s) is malformed",
					   lineno, i, fields[t.fields[i]].id);
		}
		put_le32(fb.data + at, (uint32_t)(fb.len - at - 4));
	}
	if (buf_u32(out, (uint32_t)fb.len) < 0 || buf_put(out, fb.data, fb.len) < 0)
		goto nomem;
	vg_imalog_buf_release(&fb);
	return 0;
bad:
	vg_imalog_buf_release(&fb);
	out->len = start;
	if (r == -ENOMEM)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	return vg_diag_set(diag, -EBADMSG, "line %zu: bad hex", lineno);
nomem:
	vg_imalog_buf_release(&fb);
	out->len = start;
	return vg_diag_set(diag, -ENOMEM, "out of memory");
}

static unsigned int algo_of_size(size_t n)
{
	switch (n) {
	case 32:
		return VG_HASH_SHA256;
	case 48:
		return VG_HASH_SHA384;
	case 64:
		return VG_HASH_SHA512;
	default:
		return VG_HASH_SHA1;
	}
}

long vg_imalog_from_ascii(const char *text, size_t len, struct vg_imalog_buf *out,
			  unsigned int *ret_algo, struct vg_diag *diag)
{
	size_t i = 0, lineno = 0, dlen = 0, start = out->len;
	long n = 0;

	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		size_t before = out->len;
		struct vg_imalog_parser p;
		struct vg_imalog_entry e;
		struct vg_diag pd = { 0 };
		int r;

		lineno++;
		if (memchr(text + i, '\0', l)) {
			out->len = start;
			return vg_diag_set(diag, -EBADMSG, "line %zu: NUL byte", lineno);
		}
		r = ascii_line(text + i, l, lineno, out, &dlen, diag);
		if (r < 0) {
			out->len = start;
			return r;
		}
		/* the same checks as a binary list */
		vg_imalog_parser_init(&p, out->data + before, out->len - before, algo_of_size(dlen));
		r = vg_imalog_parser_next(&p, &e, &pd);
		if (r != 1) {
			out->len = start;
			return vg_diag_set(diag, r < 0 ? r : -EBADMSG, "line %zu: %s", lineno,
					   pd.msg[0] ? pd.msg : "malformed");
		}
		n++;
		i += l + (nl ? 1 : 0);
	}
	if (ret_algo)
		*ret_algo = algo_of_size(dlen);
	return n;
}

long vg_imalog_load(const uint8_t *buf, size_t len, struct vg_imalog_buf *scratch,
		    const uint8_t **ret_buf, size_t *ret_len, unsigned int *ret_algo,
		    struct vg_diag *diag)
{
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	unsigned int algo;
	long n = 0;
	int r;

	if (vg_imalog_is_ascii(buf, len)) {
		long c = vg_imalog_from_ascii((const char *)buf, len, scratch, &algo, diag);

		if (c < 0)
			return c;
		buf = scratch->data;
		len = scratch->len;
	} else {
		r = vg_imalog_detect(buf, len, diag);
		if (r < 0)
			return r;
		algo = (unsigned int)r;
	}
	vg_imalog_parser_init(&p, buf, len, algo);
	while ((r = vg_imalog_parser_next(&p, &e, diag)) == 1)
		n++;
	if (r < 0)
		return r;
	if (ret_buf)
		*ret_buf = buf;
	if (ret_len)
		*ret_len = len;
	if (ret_algo)
		*ret_algo = algo;
	return n;
}
