// SPDX-License-Identifier: MIT
/*
 * scan.c - one scan record (scan.h): what a file is (type, mode, owner,
 * size, inode, times, extended attributes, link target, content digest),
 * read from an open file. Comparing two records is scan_compare.c; the
 * database that holds them is scan_db.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "vigil/scan.h"
#include "internal.h"

#define SCAN_XATTR_MAX (1u << 20)

static const char *const field_names[VG_SCAN__NFIELDS] = {
	"type", "content", "size", "mode", "uid", "gid", "mtime", "ctime", "inode", "xattrs",
	"target", "nlink",
};

const char *vg_scan_field_name(uint32_t bit)
{
	for (unsigned int i = 0; i < VG_SCAN__NFIELDS; i++)
		if (bit == 1u << i)
			return field_names[i];
	return "?";
}

void vg_scan_rec_release(struct vg_scan_rec *r)
{
	free(r->path);
	free(r->xattrs);
	free(r->target);
	memset(r, 0, sizeof(*r));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static ssize_t list_xattrs(int fd, const char *path, char *buf, size_t cap)
{
	return fd >= 0 ? flistxattr(fd, buf, cap) : llistxattr(path, buf, cap);
}

static ssize_t get_xattr(int fd, const char *path, const char *name, void *buf, size_t cap)
{
	return fd >= 0 ? fgetxattr(fd, name, buf, cap) : lgetxattr(path, name, buf, cap);
}

/* All xattrs, sorted by name, as (name NUL, u32be length, value)... */
static int read_xattrs(struct vg_scan_rec *r, int fd, const char *path, struct vg_diag *diag)
{
	char small[1024], *list = small, **names = NULL;
	uint8_t *out = NULL;
	size_t n = 0, used = 0, cap = 0;
	ssize_t len;
	int ret = 0;

	len = list_xattrs(fd, path, small, sizeof(small));
	if (len < 0 && errno == ERANGE) {
		len = list_xattrs(fd, path, NULL, 0);
		if (len >= 0) {
			list = malloc((size_t)len + 1);
			if (!list)
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			len = list_xattrs(fd, path, list, (size_t)len + 1);
		}
	}
	if (len < 0) {
		ret = errno == ENOTSUP ? 0 : vg_diag_set(diag, -errno, "listxattr: %s",
							  strerror(errno));
		goto out;
	}
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		n++;
	if (!n)
		goto out;
	names = malloc(n * sizeof(*names));
	if (!names) {
		ret = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto out;
	}
	n = 0;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		names[n++] = list + i;
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(names[i]) + 1, want = 256;	/* most values are small */
		ssize_t vl;

		for (;;) {
			if (used + nl + 4 + want > cap) {
				size_t ncap = cap ? cap : 512;
				uint8_t *p;

				while (ncap < used + nl + 4 + want)
					ncap *= 2;
				p = realloc(out, ncap);
				if (!p) {
					ret = vg_diag_set(diag, -ENOMEM, "out of memory");
					goto out;
				}
				out = p;
				cap = ncap;
			}
			/* read straight into place; ask the size only if it does not fit */
			vl = get_xattr(fd, path, names[i], out + used + nl + 4, cap - used - nl - 4);
			if (vl >= 0 || errno != ERANGE)
				break;
			vl = get_xattr(fd, path, names[i], NULL, 0);
			if (vl < 0)
				break;
			if ((size_t)vl > SCAN_XATTR_MAX) {
				ret = vg_diag_set(diag, -E2BIG, "xattr %s is larger than 1 MiB", names[i]);
				goto out;
			}
			want = (size_t)vl;
		}
		if (vl < 0) {
			if (errno == ENODATA)	/* removed since listed */
				continue;
			ret = vg_diag_set(diag, -errno, "getxattr %s: %s", names[i], strerror(errno));
			goto out;
		}
		if ((size_t)vl > SCAN_XATTR_MAX) {
			ret = vg_diag_set(diag, -E2BIG, "xattr %s is larger than 1 MiB", names[i]);
			goto out;
		}
		memcpy(out + used, names[i], nl);
		used += nl;
		out[used++] = (uint8_t)((uint32_t)vl >> 24);
		out[used++] = (uint8_t)((uint32_t)vl >> 16);
		out[used++] = (uint8_t)((uint32_t)vl >> 8);
		out[used++] = (uint8_t)vl;
		used += (size_t)vl;
	}
out:
	if (ret == 0 && used) {
		r->xattrs = out;
		r->xattrs_len = used;
		out = NULL;
	}
	free(out);
	free(names);
	if (list != small)
		free(list);
	return ret;
}

int vg_scan_rec_fill(struct vg_scan_rec *r, const char *path, size_t path_len, int fd,
		     int dirfd, const char *name, const struct stat *st, struct vg_diag *diag)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->path = malloc(path_len + 1);
	if (!r->path)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	memcpy(r->path, path, path_len + 1);
	r->path_len = path_len;
	r->mode = st->st_mode;
	r->uid = st->st_uid;
	r->gid = st->st_gid;
	r->size = S_ISDIR(st->st_mode) ? 0 : (uint64_t)st->st_size;
	r->ino = st->st_ino;
	r->nlink = st->st_nlink;
	r->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	r->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
	if (S_ISLNK(st->st_mode)) {
		size_t cap = (size_t)st->st_size + 2;
		ssize_t n;

		r->target = malloc(cap);
		if (!r->target) {
			ret = vg_diag_set(diag, -ENOMEM, "out of memory");
			goto fail;
		}
		n = readlinkat(dirfd, name, (char *)r->target, cap);
		if (n < 0 || (size_t)n >= cap) {
			ret = vg_diag_set(diag, n < 0 ? -errno : -ESTALE, "readlink: %s",
					  n < 0 ? strerror(errno) : "changed while read");
			goto fail;
		}
		r->target_len = (size_t)n;
	}
	ret = read_xattrs(r, fd, path, diag);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	vg_scan_rec_release(r);
	return ret;
}
