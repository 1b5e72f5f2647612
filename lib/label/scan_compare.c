// SPDX-License-Identifier: MIT
/*
 * scan_compare.c - what changed between two scan records of one path:
 * the fields that differ (vg_scan_compare) and, for the extended
 * attributes, which names were added, removed or changed
 * (vg_scan_xattr_diff), for the report of `vigil scan check`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vigil/scan.h"
#include "internal.h"

static bool blob_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

uint32_t vg_scan_compare(const struct vg_scan_rec *then, const struct vg_scan_rec *now)
{
	uint32_t m = 0;

	if ((then->mode & S_IFMT) != (now->mode & S_IFMT))
		return VG_SCAN_TYPE;
	if ((then->mode & 07777) != (now->mode & 07777))
		m |= VG_SCAN_MODE;
	if (then->uid != now->uid)
		m |= VG_SCAN_UID;
	if (then->gid != now->gid)
		m |= VG_SCAN_GID;
	if (then->ino != now->ino)
		m |= VG_SCAN_INODE;
	if (!blob_eq(then->xattrs, then->xattrs_len, now->xattrs, now->xattrs_len))
		m |= VG_SCAN_XATTRS;
	if (S_ISDIR(now->mode))
		return m;
	if (then->size != now->size)
		m |= VG_SCAN_SIZE;
	if (then->mtime_ns != now->mtime_ns)
		m |= VG_SCAN_MTIME;
	if (then->ctime_ns != now->ctime_ns)
		m |= VG_SCAN_CTIME;
	if (S_ISREG(now->mode) &&
	    (then->digest.algo != now->digest.algo ||
	     !blob_eq(then->digest.bytes, then->digest.len, now->digest.bytes, now->digest.len)))
		m |= VG_SCAN_CONTENT;
	if (S_ISLNK(now->mode) &&
	    !blob_eq(then->target, then->target_len, now->target, now->target_len))
		m |= VG_SCAN_TARGET;
	return m;
}

/* Iterate an xattr blob: Return: false at the end or on a malformed blob. */
static bool xattr_next(const uint8_t *b, size_t len, size_t *off, const char **name,
		       const uint8_t **val, size_t *vlen)
{
	const uint8_t *nul;
	size_t o = *off, nl;
	uint32_t l;

	if (o >= len)
		return false;
	nul = memchr(b + o, 0, len - o);
	if (!nul)
		return false;
	nl = (size_t)(nul - (b + o)) + 1;
	if (len - o - nl < 4)
		return false;
	l = vg__be32(b + o + nl);
	if (len - o - nl - 4 < l)
		return false;
	*name = (const char *)(b + o);
	*val = b + o + nl + 4;
	*vlen = l;
	*off = o + nl + 4 + l;
	return true;
}

static bool xattr_find(const struct vg_scan_rec *r, const char *name, const uint8_t **val,
		       size_t *vlen)
{
	const char *n;
	size_t off = 0;

	while (xattr_next(r->xattrs, r->xattrs_len, &off, &n, val, vlen))
		if (strcmp(n, name) == 0)
			return true;
	return false;
}

static void append_name(char *out, size_t cap, int *count, const char *name)
{
	size_t l = strlen(out);

	snprintf(out + l, cap - l, "%s%s", *count ? "," : "", name);
	(*count)++;
}

int vg_scan_xattr_diff(const struct vg_scan_rec *a, const struct vg_scan_rec *b, char *out,
		       size_t cap)
{
	const uint8_t *v, *w;
	const char *n;
	size_t off = 0, vl, wl;
	int count = 0;

	if (cap)
		out[0] = 0;
	while (xattr_next(a->xattrs, a->xattrs_len, &off, &n, &v, &vl))
		if (!xattr_find(b, n, &w, &wl) || !blob_eq(v, vl, w, wl))
			append_name(out, cap, &count, n);
	off = 0;
	while (xattr_next(b->xattrs, b->xattrs_len, &off, &n, &v, &vl))
		if (!xattr_find(a, n, &w, &wl))
			append_name(out, cap, &count, n);
	return count;
}
