// SPDX-License-Identifier: MIT
/*
 * scan_compare.c - what changed between two scan records of one path:
 * the fields that differ (vg_scan_compare) and, for the extended
 * attributes, which names were added, removed or changed
 * (vg_scan_xattr_diff, vg_scan_xattr_each), and each field's value as
 * text (vg_scan_field_text), for the report of `vigil scan --check`.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
	if (then->nlink && now->nlink && then->nlink != now->nlink)
		m |= VG_SCAN_NLINK;
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

int vg_scan_xattr_each(const struct vg_scan_rec *a, const struct vg_scan_rec *b,
		       vg_scan_xattr_fn fn, void *ctx)
{
	const uint8_t *v, *w;
	const char *n;
	size_t off = 0, vl, wl;
	int r;

	while (xattr_next(a->xattrs, a->xattrs_len, &off, &n, &v, &vl)) {
		bool there = xattr_find(b, n, &w, &wl);

		if (there && blob_eq(v, vl, w, wl))
			continue;
		r = fn(ctx, n, v, vl, there ? w : NULL, there ? wl : 0);
		if (r < 0)
			return r;
	}
	off = 0;
	while (xattr_next(b->xattrs, b->xattrs_len, &off, &n, &v, &vl))
		if (!xattr_find(a, n, &w, &wl) && (r = fn(ctx, n, NULL, 0, v, vl)) < 0)
			return r;
	return 0;
}

static const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symbolic link";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	default: return "unknown";
	}
}

/* nanoseconds since the epoch as UTC ISO 8601 with nanoseconds */
static int time_text(int64_t ns, char *out, size_t cap)
{
	time_t sec = (time_t)(ns >= 0 ? ns / 1000000000 : (ns - 999999999) / 1000000000);
	long frac = (long)(ns - (int64_t)sec * 1000000000);
	struct tm tm;
	char day[32];

	if (!gmtime_r(&sec, &tm) || strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return snprintf(out, cap, "%lld ns", (long long)ns);
	return snprintf(out, cap, "%s.%09ldZ", day, frac);
}

int vg_scan_field_text(const struct vg_scan_rec *r, uint32_t bit, char *out, size_t cap)
{
	size_t n = 0;
	int w;

	if (!cap)
		return -ENOSPC;
	switch (bit) {
	case VG_SCAN_TYPE:
		w = snprintf(out, cap, "%s", type_name(r->mode));
		break;
	case VG_SCAN_CONTENT:
		if (cap < strlen(vg_hash_name(r->digest.algo)) + 2 + 2 * r->digest.len)
			return -ENOSPC;
		w = snprintf(out, cap, "%s:", vg_hash_name(r->digest.algo));
		vg_hex_encode(r->digest.bytes, r->digest.len, out + w);
		return 0;
	case VG_SCAN_SIZE: w = snprintf(out, cap, "%llu", (unsigned long long)r->size); break;
	case VG_SCAN_MODE: w = snprintf(out, cap, "%04o", (unsigned int)(r->mode & 07777)); break;
	case VG_SCAN_UID: w = snprintf(out, cap, "%u", r->uid); break;
	case VG_SCAN_GID: w = snprintf(out, cap, "%u", r->gid); break;
	case VG_SCAN_MTIME: w = time_text(r->mtime_ns, out, cap); break;
	case VG_SCAN_CTIME: w = time_text(r->ctime_ns, out, cap); break;
	case VG_SCAN_INODE: w = snprintf(out, cap, "%llu", (unsigned long long)r->ino); break;
	case VG_SCAN_NLINK: w = snprintf(out, cap, "%llu", (unsigned long long)r->nlink); break;
	case VG_SCAN_TARGET:
		/* printable ASCII as is, every other byte (and the backslash) as \xNN */
		for (size_t i = 0; i < r->target_len; i++) {
			uint8_t c = r->target[i];

			if (n + 5 > cap)
				return -ENOSPC;
			if (c >= 0x20 && c < 0x7f && c != '\\')
				out[n++] = (char)c;
			else
				n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
		}
		out[n] = 0;
		return 0;
	default:
		return -EINVAL;	/* xattrs: vg_scan_xattr_each */
	}
	return w < 0 || (size_t)w >= cap ? -ENOSPC : 0;
}
