// SPDX-License-Identifier: MIT
/*
 * imalog.c - reading a measurement list: templates and fields, the binary
 * parser, format detection and loading either form.
 *
 * Everything is decoded field by field with a bounds check before every
 * read; parsed entries point into the caller's buffer. Ascii input is
 * converted to the binary layout (imalog_write.c) and then parsed by the
 * same binary parser, so both paths share one set of checks. Template
 * digests and replay live in imalog_replay.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "imalog_internal.h"
#include "vigil/imalog.h"
#include "vigil/ima_template.h"

/* ima_template.c supported_fields[], with the show format of each. */
const struct vg__imalog_field_info vg__imalog_fields[VG_IMAF__COUNT] = {
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

const char *vg_imalog_field_name(unsigned int id)
{
	return id < VG_IMAF__COUNT ? vg__imalog_fields[id].id : NULL;
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
			if (strlen(vg__imalog_fields[id].id) == j - i && memcmp(vg__imalog_fields[id].id, s + i, j - i) == 0)
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
	for (size_t i = 0; i < VG_IMA_TEMPLATES; i++) {
		if (strlen(vg_ima_templates[i].name) == len && memcmp(vg_ima_templates[i].name, name, len) == 0) {
			int r = parse_fmt(vg_ima_templates[i].fmt, strlen(vg_ima_templates[i].fmt), ret, diag);

			ret->ima = i == 0;
			return r;
		}
	}
	if (len == 0)
		return vg_diag_set(diag, -EBADMSG, "empty template name");
	return parse_fmt(name, len, ret, diag);
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
				   vg__imalog_fields[f->id].id);
	plen = (size_t)(nul - f->data);
	if (plen == 0 || f->data[plen - 1] != ':')
		return vg_diag_set(diag, -EBADMSG, "%s field prefix does not end in ':'",
				   vg__imalog_fields[f->id].id);
	/* the algorithm is the last component: "sha256:" or "ima:sha256:" */
	for (size_t i = 0; i + 1 < plen; i++)
		if (f->data[i] == ':')
			colon = f->data + i;
	nlen = plen - 1 - (colon ? (size_t)(colon - f->data) + 1 : 0);
	if (nlen == 0 || nlen >= sizeof(name))
		return vg_diag_set(diag, -EBADMSG, "%s field: bad algorithm name",
				   vg__imalog_fields[f->id].id);
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
				   vg__imalog_fields[f->id].id, name);
	if (f->len - plen - 1 != vg_hash_size((unsigned int)a))
		return vg_diag_set(diag, -EBADMSG, "%s field: %zu digest bytes for %s",
				   vg__imalog_fields[f->id].id, (size_t)(f->len - plen - 1), name);
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
						   vg__imalog_fields[e->tmpl.fields[i]].id);
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
		if (vg__imalog_fields[f->id].fmt != FMT_DIGEST_ALGO || f->len == 0)
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

