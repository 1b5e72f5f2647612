// SPDX-License-Identifier: MIT
/*
 * attest_announce.c - announcements of the next boot's initrd and kernel
 * command line in a measurement list (attest_announce.h): recognised in
 * list entries, collected from the attested part of a passing round, kept
 * per agent in a bounded buffer of records (the store's boot_next
 * column), read back for the measured-boot judge. Which boot may use an
 * announcement is the judge's business (attest_mbpolicy_event.c); whether
 * the round passed is vg_attest_evidence_judge's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "vigil/attest_announce.h"
#include "internal.h"

#define HDR 9			/* kind u8, reset u32, key length u16, value length u16 */

static const struct vg_imalog_field *field(const struct vg_imalog_entry *e, unsigned int id)
{
	for (unsigned int i = 0; i < e->tmpl.nfields; i++)
		if (e->f[i].id == id)
			return &e->f[i];
	return NULL;
}

bool vg_attest_announce_name(const char *name, size_t len)
{
	static const char pre[] = "next-boot-";

	return len >= sizeof(pre) - 1 && memcmp(name, pre, sizeof(pre) - 1) == 0;
}

int vg_attest_announce_entry(const struct vg_imalog_entry *e, struct vg_announcement *ret)
{
	const struct vg_imalog_field *fn = field(e, VG_IMAF_N_NG), *fd = field(e, VG_IMAF_D_NG);
	const struct vg_imalog_field *fb = field(e, VG_IMAF_BUF);
	const uint8_t *dig;
	unsigned int algo;
	size_t nl, dl, pl = strlen(VG_ANNOUNCE_INITRD);

	if (!fn)
		return 0;
	nl = fn->len;
	if (nl && fn->data[nl - 1] == 0)
		nl--;
	if (!vg_attest_announce_name((const char *)fn->data, nl))
		return 0;
	if (!fd || vg_imalog_field_digest(fd, &algo, &dig, &dl, NULL) < 0 ||
	    algo != VG_HASH_SHA256 || dl != 32 || e->violation)
		return -EBADMSG;
	memset(ret, 0, sizeof(*ret));
	if (nl > pl && memcmp(fn->data, VG_ANNOUNCE_INITRD, pl) == 0 && !fb) {
		ret->kind = VG_ANNOUNCE_KIND_INITRD;
		ret->key = (const char *)fn->data + pl;
		ret->key_len = nl - pl;
		ret->value = dig;
		ret->value_len = 32;
		return memchr(ret->key, 0, ret->key_len) ? -EBADMSG : 1;
	}
	if (nl == strlen(VG_ANNOUNCE_CMDLINE) && memcmp(fn->data, VG_ANNOUNCE_CMDLINE, nl) == 0 &&
	    fb && fb->len > 0 && fb->len <= VG_ANNOUNCE_CMDLINE_MAX &&
	    !memchr(fb->data, 0, fb->len)) {
		struct vg_digest h;
		size_t k = 0;

		/* the digest must be the buffer's, as the kernel's ima-buf entries have it */
		if (vg_hash_buf(VG_HASH_SHA256, fb->data, fb->len, &h, NULL) < 0 ||
		    memcmp(h.bytes, dig, 32) != 0)
			return -EBADMSG;
		while (k < fb->len && fb->data[k] != ' ')
			k++;
		ret->kind = VG_ANNOUNCE_KIND_CMDLINE;
		ret->key = (const char *)fb->data;
		ret->key_len = k;
		ret->value = fb->data;
		ret->value_len = fb->len;
		return 1;
	}
	return -EBADMSG;
}

int vg_attest_announce_initrd(struct vg_mlog *l, unsigned int pcr, const char *path,
			      const uint8_t sha256[32], struct vg_diag *diag)
{
	char name[sizeof(VG_ANNOUNCE_INITRD) + PATH_MAX];
	struct vg_digest dg = { .algo = VG_HASH_SHA256, .len = 32 };
	size_t len = strnlen(path, PATH_MAX);

	if (len == 0 || len >= PATH_MAX || path[0] != '/')
		return vg_diag_set(diag, -EINVAL, "an initrd announced is named by an absolute path "
				   "of fewer than %d bytes", PATH_MAX);
	memcpy(dg.bytes, sha256, 32);
	snprintf(name, sizeof(name), "%s%s", VG_ANNOUNCE_INITRD, path);
	return vg_mlog_append_file(l, pcr, &dg, name, NULL, 0, diag);
}

int vg_attest_announce_cmdline(struct vg_mlog *l, unsigned int pcr, const char *line, size_t len,
			       struct vg_diag *diag)
{
	struct vg_imalog_field f[3];
	uint8_t dng[8 + 32] = "sha256:";
	struct vg_digest h;

	if (len == 0 || len > VG_ANNOUNCE_CMDLINE_MAX || memchr(line, 0, len))
		return vg_diag_set(diag, -EINVAL, "a command line announced has from 1 to %d bytes, "
				   "none of them NUL", VG_ANNOUNCE_CMDLINE_MAX);
	if (vg_hash_buf(VG_HASH_SHA256, line, len, &h, NULL) < 0)
		return vg_diag_set(diag, -ENOMEM, "SHA-256 of the command line");
	memcpy(dng + 8, h.bytes, 32);
	f[0] = (struct vg_imalog_field){ VG_IMAF_D_NG, sizeof(dng), dng };
	f[1] = (struct vg_imalog_field){ VG_IMAF_N_NG, sizeof(VG_ANNOUNCE_CMDLINE),
					 (const uint8_t *)VG_ANNOUNCE_CMDLINE };
	f[2] = (struct vg_imalog_field){ VG_IMAF_BUF, (uint32_t)len, (const uint8_t *)line };
	return vg_mlog_append(l, pcr, "ima-buf", f, 3, diag);
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* the record at @off. Return: its size, 0 at the end, -EBADMSG. */
static long rec_at(const struct vg_attest_announced *ann, size_t off, struct vg_announcement *a)
{
	size_t kl, vl;

	if (off >= ann->len)
		return 0;
	if (ann->len - off < HDR)
		return -EBADMSG;
	a->kind = (enum vg_announce_kind)ann->buf[off];
	a->reset = be32(ann->buf + off + 1);
	kl = (size_t)ann->buf[off + 5] << 8 | ann->buf[off + 6];
	vl = (size_t)ann->buf[off + 7] << 8 | ann->buf[off + 8];
	if ((a->kind != VG_ANNOUNCE_KIND_INITRD && a->kind != VG_ANNOUNCE_KIND_CMDLINE) ||
	    kl + vl > ann->len - off - HDR ||
	    (a->kind == VG_ANNOUNCE_KIND_INITRD && vl != 32))
		return -EBADMSG;
	a->key = (const char *)ann->buf + off + HDR;
	a->key_len = kl;
	a->value = ann->buf + off + HDR + kl;
	a->value_len = vl;
	return (long)(HDR + kl + vl);
}

int vg_attest_announced_next(const struct vg_attest_announced *ann, size_t *cursor,
			     uint32_t before, struct vg_announcement *ret)
{
	for (;;) {
		long n = rec_at(ann, *cursor, ret);

		if (n <= 0)
			return 0;
		*cursor += (size_t)n;
		if (!before || ret->reset < before)
			return 1;
	}
}

int vg_attest_announced_set(struct vg_attest_announced *ann, const uint8_t *buf, size_t len)
{
	struct vg_announcement a;
	size_t off = 0;
	long n;

	memset(ann, 0, sizeof(*ann));
	if (len > sizeof(ann->buf))
		return -EBADMSG;
	if (len)
		memcpy(ann->buf, buf, len);
	ann->len = (uint32_t)len;
	while ((n = rec_at(ann, off, &a)) > 0)
		off += (size_t)n;
	if (n < 0) {
		memset(ann, 0, sizeof(*ann));
		return -EBADMSG;
	}
	return 0;
}

/* drop the record at @off of @n bytes */
static void drop(struct vg_attest_announced *ann, size_t off, size_t n)
{
	memmove(ann->buf + off, ann->buf + off + n, ann->len - off - n);
	ann->len -= (uint32_t)n;
	memset(ann->buf + ann->len, 0, n);
}

int vg_attest_announced_add(struct vg_attest_announced *ann, const struct vg_announcement *a)
{
	size_t need = HDR + a->key_len + a->value_len, off = 0;
	struct vg_announcement x;
	long n;
	uint8_t *p;

	if (need > sizeof(ann->buf) || a->key_len > 0xffff || a->value_len > 0xffff)
		return -E2BIG;
	/* the earlier one of the same kind and key gives way */
	while ((n = rec_at(ann, off, &x)) > 0) {
		if (x.kind == a->kind && x.key_len == a->key_len &&
		    memcmp(x.key, a->key, a->key_len) == 0) {
			drop(ann, off, (size_t)n);
			continue;
		}
		off += (size_t)n;
	}
	/* then the oldest, until it fits */
	while (sizeof(ann->buf) - ann->len < need && (n = rec_at(ann, 0, &x)) > 0)
		drop(ann, 0, (size_t)n);
	p = ann->buf + ann->len;
	p[0] = (uint8_t)a->kind;
	p[1] = (uint8_t)(a->reset >> 24);
	p[2] = (uint8_t)(a->reset >> 16);
	p[3] = (uint8_t)(a->reset >> 8);
	p[4] = (uint8_t)a->reset;
	p[5] = (uint8_t)(a->key_len >> 8);
	p[6] = (uint8_t)a->key_len;
	p[7] = (uint8_t)(a->value_len >> 8);
	p[8] = (uint8_t)a->value_len;
	memcpy(p + HDR, a->key, a->key_len);
	memcpy(p + HDR + a->key_len, a->value, a->value_len);
	ann->len += (uint32_t)need;
	return 0;
}

int vg_attest_announce_collect(const uint8_t *log, size_t len, unsigned int algo, uint64_t n,
			       uint32_t reset, struct vg_attest_announced *ann)
{
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	int taken = 0, r;

	if (!log || !n)
		return 0;
	vg_imalog_parser_init(&ps, log, len, algo);
	for (uint64_t i = 0; i < n; i++) {
		struct vg_announcement a;

		r = vg_imalog_parser_next(&ps, &e, NULL);
		if (r <= 0)
			return r < 0 ? -EBADMSG : taken;
		if (vg_attest_announce_entry(&e, &a) != 1)
			continue;
		a.reset = reset;
		if (vg_attest_announced_add(ann, &a) == 0)
			taken++;
	}
	return taken;
}
