// SPDX-License-Identifier: MIT
/*
 * outfile.c - writing a whole output file: to a locked temporary renamed
 * over a regular file, in place on a character device or fifo, refused on
 * anything else; dead writers' temporaries removed. See outfile.h. Does
 * not write standard output and does not follow symbolic links.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "vigil/outfile.h"

/* NAME_MAX minus the dot, the infix and the six random characters */
#define BASE_MAX (NAME_MAX - 1 - (sizeof(VG_OUTFILE_TMP_INFIX) - 1) - 6)

static const char *kind(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR: return "directory";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFLNK: return "symbolic link";
	default: return "unknown file type";
	}
}

/* Split @path into its directory (malloc'ed, "." if none) and final component. */
static int split(const char *path, char **ret_dir, const char **ret_base)
{
	const char *slash = strrchr(path, '/');
	char *dir;

	if (!slash) {
		dir = strdup(".");
		*ret_base = path;
	} else {
		size_t n = slash == path ? 1 : (size_t)(slash - path);

		dir = strndup(path, n);
		*ret_base = slash + 1;
	}
	if (!dir)
		return -ENOMEM;
	*ret_dir = dir;
	return 0;
}

/* ".BASE.vigil-tmp." with BASE cut to fit NAME_MAX. */
static void tmp_prefix(const char *base, char *out, size_t cap)
{
	size_t bl = strlen(base);

	snprintf(out, cap, ".%.*s%s", (int)(bl > BASE_MAX ? BASE_MAX : bl), base,
		 VG_OUTFILE_TMP_INFIX);
}

/*
 * Remove temporaries of this target whose writer is gone: named like
 * ours, a regular file of ours, and its lock can be taken (a writer holds
 * it from creation to rename). The name is checked to still be that
 * inode just before it is removed.
 */
static unsigned int clean_stale(int dfd, const char *prefix)
{
	size_t pl = strlen(prefix);
	unsigned int removed = 0;
	struct dirent *de;
	DIR *dir;
	int d2 = dup(dfd);

	if (d2 < 0)
		return 0;
	dir = fdopendir(d2);
	if (!dir) {
		close(d2);
		return 0;
	}
	while ((de = readdir(dir))) {
		struct stat st, st2;
		int fd;

		if (strncmp(de->d_name, prefix, pl) != 0 || strlen(de->d_name) != pl + 6)
			continue;
		fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dfd, de->d_name, &st2, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st2.st_dev == st.st_dev && st2.st_ino == st.st_ino &&
		    unlinkat(dfd, de->d_name, 0) == 0)
			removed++;
		close(fd);
	}
	closedir(dir);
	return removed;
}

/* Create, lock and return a new temporary in @dfd; its name into @name. */
static int make_tmp(int dfd, const char *prefix, mode_t mode, char *name, size_t cap)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[6];
		struct stat st;
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return errno ? -errno : -EIO;
		snprintf(name, cap, "%s%c%c%c%c%c%c", prefix, abc[rnd[0] % 62], abc[rnd[1] % 62],
			 abc[rnd[2] % 62], abc[rnd[3] % 62], abc[rnd[4] % 62], abc[rnd[5] % 62]);
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		/*
		 * Another writer's clean_stale() may have opened it between our
		 * create and our lock: it then holds the lock or has removed the
		 * name. Either way, this one is lost; take another. A filesystem
		 * without flock: unlocked, and then no clean_stale() removes it.
		 */
		if ((flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) ||
		    fstat(fd, &st) != 0 || st.st_nlink == 0) {
			close(fd);
			continue;
		}
		return fd;
	}
	return -EEXIST;
}

static int open_in_place(struct vg_outfile *o, const char *path, const struct stat *st,
			 struct vg_diag *diag)
{
	struct stat st2;
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC), r;

	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s", strerror(errno));
	/* replaced between lstat and open: write nothing rather than guess */
	if (fstat(fd, &st2) != 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino ||
	    (st2.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
		close(fd);
		return vg_diag_set(diag, -EAGAIN, "replaced while being opened; nothing written");
	}
	o->path = strdup(path);
	if (!o->path) {
		r = vg_diag_set(diag, -ENOMEM, "out of memory");
		close(fd);
		return r;
	}
	o->fd = fd;
	return 0;
}

int vg_outfile_open(struct vg_outfile *o, const char *path, mode_t mode, unsigned int flags,
		    struct vg_diag *diag)
{
	char prefix[NAME_MAX + 1], name[NAME_MAX + 1];
	const char *base;
	char *dir = NULL;
	struct stat st;
	int dfd = -1, fd, r;

	*o = (struct vg_outfile){ .fd = -1 };
	if (!path[0])
		return vg_diag_set(diag, -ENOENT, "empty file name");
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return vg_diag_set(diag, -ELOOP, "a symbolic link; not followed (name the "
					   "file itself)");
		if (S_ISDIR(st.st_mode))
			return vg_diag_set(diag, -EISDIR, "not a regular file (directory)");
		if ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && (flags & VG_OUTFILE_STREAM))
			return open_in_place(o, path, &st, diag);
		if (!S_ISREG(st.st_mode))
			return vg_diag_set(diag, -EINVAL, "not a regular file (%s)", kind(st.st_mode));
	} else if (errno != ENOENT) {
		return vg_diag_set(diag, -errno, "%s", strerror(errno));
	}
	r = split(path, &dir, &base);
	if (r < 0)
		return vg_diag_set(diag, r, "out of memory");
	if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		r = vg_diag_set(diag, -EISDIR, "not a file name");
		goto out;
	}
	if (strlen(base) > NAME_MAX) {
		r = vg_diag_set(diag, -ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = vg_diag_set(diag, -errno, "directory %s: %s", dir, strerror(errno));
		goto out;
	}
	tmp_prefix(base, prefix, sizeof(prefix));
	o->stale = clean_stale(dfd, prefix);
	fd = make_tmp(dfd, prefix, mode, name, sizeof(name));
	if (fd < 0) {
		r = vg_diag_set(diag, fd, "creating a temporary file in %s: %s", dir, strerror(-fd));
		goto out;
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s/%s", dir, name) < 0) {
		o->tmp = NULL;
		(void)unlinkat(dfd, name, 0);
		close(fd);
		free(o->path);
		o->path = NULL;
		r = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto out;
	}
	o->fd = fd;
	r = 0;
out:
	if (dfd >= 0)
		close(dfd);
	free(dir);
	return r;
}

int vg_outfile_write(struct vg_outfile *o, const void *buf, size_t len, struct vg_diag *diag)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = write(o->fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return vg_diag_set(diag, -errno, "writing: %s", strerror(errno));
		if (w == 0)
			return vg_diag_set(diag, -EIO, "writing: short write");
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void release(struct vg_outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	free(o->path);
	free(o->tmp);
	*o = (struct vg_outfile){ .fd = -1 };
}

void vg_outfile_abort(struct vg_outfile *o)
{
	if (!o->path)
		return;
	/* unlink before close: the name goes while our lock still marks it live */
	if (o->tmp)
		(void)unlink(o->tmp);
	release(o);
}

int vg_outfile_commit(struct vg_outfile *o, struct vg_diag *diag)
{
	char *dir = NULL;
	const char *base;
	int r, dfd;

	if (!o->tmp) {
		r = close(o->fd) == 0 || errno == EINTR ? 0 : -errno;
		o->fd = -1;
		if (r < 0)
			vg_diag_set(diag, r, "closing: %s", strerror(-r));
		release(o);
		return r;
	}
	if (fsync(o->fd) != 0) {
		r = vg_diag_set(diag, -errno, "syncing %s: %s", o->tmp, strerror(errno));
		goto fail;
	}
	if (rename(o->tmp, o->path) != 0) {
		r = vg_diag_set(diag, -errno, "renaming %s over it: %s", o->tmp, strerror(errno));
		goto fail;
	}
	free(o->tmp);
	o->tmp = NULL;
	r = split(o->path, &dir, &base);
	if (r < 0) {
		vg_diag_set(diag, r, "out of memory");
		release(o);
		return r;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = 0;
	if (dfd >= 0) {
		/* some filesystems cannot sync a directory (EINVAL): nothing to wait for */
		if (fsync(dfd) != 0 && errno != EINVAL)
			r = vg_diag_set(diag, -errno, "syncing directory %s: %s", dir, strerror(errno));
		close(dfd);
	}
	free(dir);
	release(o);
	return r;
fail:
	vg_outfile_abort(o);
	return r;
}

int vg_outfile_put(const char *path, const void *buf, size_t len, mode_t mode,
		   unsigned int flags, struct vg_diag *diag)
{
	struct vg_outfile o;
	int r = vg_outfile_open(&o, path, mode, flags, diag);

	if (r < 0)
		return r;
	r = vg_outfile_write(&o, buf, len, diag);
	if (r < 0) {
		vg_outfile_abort(&o);
		return r;
	}
	return vg_outfile_commit(&o, diag);
}
