// SPDX-License-Identifier: MIT
/*
 * imalog_write.c - writing a measurement list: the ascii printer
 * (ima_ascii_measurements_show), the binary encoder of an entry or of
 * loose fields, and the ascii list converted to the binary layout, which
 * imalog.c's parser then checks like any binary list.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "imalog_internal.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"

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

	switch (vg__imalog_fields[f->id].fmt) {
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

/* Append the bytes of @n hex digits. Return: 0, -EBADMSG, -ENOMEM. */
static int put_unhex(struct vg_imalog_buf *b, const char *s, size_t n)
{
	if (n % 2)
		return -EBADMSG;
	if (buf_reserve(b, n / 2) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i += 2) {
		int hi = vg_hex_digit((unsigned char)s[i]);
		int lo = vg_hex_digit((unsigned char)s[i + 1]);

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

	switch (vg__imalog_fields[id].fmt) {
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
		if (vg__imalog_fields[id].uint_len == 2 && v > UINT16_MAX)
			return -EBADMSG;
		if (vg__imalog_fields[id].uint_len == 4 && v > UINT32_MAX)
			return -EBADMSG;
		{
			uint8_t x[4];

			put_le32(x, (uint32_t)v);
			return buf_put(b, x, vg__imalog_fields[id].uint_len);
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
					   lineno, i, vg__imalog_fields[t.fields[i]].id);
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
