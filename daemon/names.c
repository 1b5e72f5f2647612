// SPDX-License-Identifier: MIT
/*
 * names.c - the name a file has in vigild's mount namespace, which is what
 * path= and subj_exe= rules are matched against.
 *
 * The kernel names a file (/proc/self/fd/N of the event's descriptor, and
 * /proc/PID/exe of the opener's program) as the opener's mount namespace
 * sees it, and any user can make a namespace of his own (unshare -Urm)
 * and bind-mount any file he can read onto any path there: a protected
 * file as /mnt/x, his own program as /usr/bin/sha256sum. systemd does the
 * same for services (PrivateTmp=: the service's /tmp/f is the host's
 * /tmp/systemd-private-.../tmp/f). So the kernel's name counts only where
 * it leads to this very file in vigild's namespace (an lstat, which opens
 * nothing). Where it does not, the file is found through vigild's own
 * mount of its filesystem (a --watch directory on it): its handle
 * (name_to_handle_at), opened there (open_by_handle_at, O_PATH, which
 * raises no fanotify event), gives the name the file has here, and that
 * name too must lead to it.
 *
 * A file that is unlinked has no name (the kernel's then ends in
 * " (deleted)", and a bind mount of an unlinked file puts it under any
 * directory one likes): it matches no pattern. So does a program on a
 * filesystem vigild has no mount of (a user's own tmpfs, a container's
 * overlay): no pattern names it, as none names a copy of a program.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "monitor.h"

int vd_stat_nowait(const char *path, struct stat *st)
{
	struct statx x;

	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &x) < 0)
		return -errno;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
	st->st_ino = x.stx_ino;
	st->st_mode = x.stx_mode;
	st->st_nlink = x.stx_nlink;
	st->st_uid = x.stx_uid;
	st->st_gid = x.stx_gid;
	st->st_size = (off_t)x.stx_size;
	st->st_mtim.tv_sec = x.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = x.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = x.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = x.stx_ctime.tv_nsec;
	return 0;
}

/*
 * @name opened O_PATH one component at a time, none followed if it is a
 * symbolic link (a link met on the way is then the directory the next
 * component is looked up in: ENOTDIR), as RESOLVE_NO_SYMLINKS walks it.
 * For where openat2 is refused: systemd's RestrictSUIDSGID= (vigild's
 * unit has it) answers it ENOSYS, as it cannot see the mode in its
 * struct open_how. "." and ".." are refused: the kernel's names have none.
 * Return: the descriptor, or -1.
 */
static int walk_nofollow(const char *name)
{
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *p = name;

	while (dir >= 0) {
		char comp[NAME_MAX + 1];
		size_t n;
		int next;

		while (*p == '/')
			p++;
		if (!*p)
			return dir;
		n = strcspn(p, "/");
		if (n > NAME_MAX || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			break;
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n;
		next = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		dir = next;
	}
	if (dir >= 0)
		close(dir);
	return -1;
}

int vd_name_check(const char *name, const struct stat *st)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat o;
	int fd, r;

	if (!name || name[0] != '/')
		return 0;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, name, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = walk_nofollow(name);
	if (fd < 0)
		return 0;
	r = fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
	close(fd);
	return r;
}

/*
 * Does @name lead to the file @st in vigild's namespace? Walked by the
 * loop, so never into a stacked or slow filesystem (a FUSE server could
 * hold the walk for ever: any user can mount one and name a path through
 * it), checked against a mount table read again whenever the namespace
 * changed, and never through a symbolic link (the kernel's name has none;
 * one here, where a user may have made it, could lead anywhere).
 */
static bool leads_to(struct vd *d, const char *name, const struct stat *st)
{
	if (!name)
		return false;
	if (vd_mounts_changed(&d->mounts))
		(void)vd_mounts_read(&d->mounts);
	if (vd_mounts_through_unsafe(&d->mounts, name))
		return false;
	return vd_name_check(name, st) == 1;
}

/*
 * A descriptor of vigild's mount of the filesystem @dev. Opened when
 * needed, not held: a held descriptor would keep the filesystem from being
 * unmounted. It is a directory's, whose open raises no event (the group's
 * mask has no FAN_ONDIR), and a real open: open_by_handle_at takes no O_PATH
 * descriptor.
 * Return: the descriptor; -ENOENT no --watch is on @dev; -ESTALE none of
 * those opens to it any more.
 */
static int mount_of(const struct vd *d, dev_t dev)
{
	int r = -ENOENT;

	for (size_t i = 0; i < d->nwmount; i++)
		if (d->wmount[i].dev == dev) {
			struct stat st;
			int fd = open(d->wmount[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev)
				return fd;
			if (fd >= 0)
				close(fd);
			r = -ESTALE;
		}
	return r;
}

int vd_name_here(struct vd *d, int dirfd, const char *at, const struct stat *st,
		 const char *kname, char **name)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	char link[64];
	int mfd, fd, mnt_id, r;

	*name = NULL;
	if (leads_to(d, kname, st))
		return 1;
	if (st->st_nlink == 0)
		return 0;
	mfd = mount_of(d, st->st_dev);
	if (mfd < 0)
		return mfd;
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dirfd, at, &h.fh, &mnt_id, *at ? AT_SYMLINK_FOLLOW : AT_EMPTY_PATH) < 0) {
		r = -errno;
		close(mfd);
		return r;
	}
	fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_CLOEXEC);
	close(mfd);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	*name = vd_readlink(link);
	close(fd);
	if (!leads_to(d, *name, st)) {	/* not reachable from vigild's root, or gone meanwhile */
		free(*name);
		*name = NULL;
		return -ESTALE;
	}
	return 1;
}
