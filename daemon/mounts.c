// SPDX-License-Identifier: MIT
/*
 * mounts.c - the filesystems mounted in vigild's mount namespace, read
 * from /proc/self/mountinfo (procfs: never marked), and what each kind is
 * to vigild:
 *
 *   pseudo   the kernel's own views (proc, sysfs, cgroup, devpts, ...):
 *            nothing on them runs, nothing is marked;
 *   device   devtmpfs: device nodes, which an event's descriptor would open
 *            (a terminal would become vigild's): never marked; a directory
 *            there that users may write is a gap (gaps.c);
 *   local    a disk or memory filesystem whose files vigild can open, read
 *            and lease without waiting on anyone (ext4, xfs, btrfs, tmpfs,
 *            vfat, ...): the main group;
 *   stacked  opens a file of another filesystem when one of its own is
 *            opened (overlay, eCryptfs): a group and reader of its own
 *            (side.c), or vigild's read of its event would wait for
 *            vigild's answer about the file below; no leases (the file
 *            below can change without the one above being written);
 *   slow     answered by someone else: a FUSE server (which any user can
 *            mount with fusermount3), a network server: every call on its
 *            files may wait for ever. A group and reader of its own, and
 *            the loop never touches its files (side.c, events.c).
 * An unknown type is slow: the safe guess.
 *
 * The table is read again whenever the namespace changes (mountinfo's
 * POLLPRI, or fanotify's mount events: side.c), and is what names.c
 * checks a path against before it walks it: a path through a slow or
 * stacked mount is never walked by the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "monitor.h"

static const char *const pseudo[] = {
	"proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs",
	"securityfs", "pstore", "efivarfs", "bpf", "configfs", "fusectl", "binfmt_misc",
	"autofs", "rpc_pipefs", "nsfs", "selinuxfs", "hugetlbfs", "binder", "nfsd",
	"ramfs_internal", "sockfs", "pipefs", "anon_inodefs", "pidfs",
};
static const char *const local[] = {
	"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "vfat", "msdos", "exfat",
	"f2fs", "jfs", "reiserfs", "squashfs", "iso9660", "udf", "ntfs", "ntfs3", "hfs",
	"hfsplus", "erofs", "nilfs2", "bcachefs", "zfs", "minix", "cramfs", "romfs", "ufs",
};
static const char *const stacked[] = { "overlay", "ecryptfs", "shiftfs", "aufs" };

enum vd_fsclass vd_fsclass_of(const char *fstype)
{
	char base[64];
	size_t n = strcspn(fstype, ".");	/* "fuse.sshfs": a fuse */

	if (n >= sizeof(base))
		return VD_FS_SLOW;
	memcpy(base, fstype, n);
	base[n] = 0;
	if (strcmp(base, "devtmpfs") == 0)
		return VD_FS_DEVICE;
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if (strcmp(base, pseudo[i]) == 0)
			return VD_FS_PSEUDO;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (strcmp(base, local[i]) == 0)
			return VD_FS_LOCAL;
	for (size_t i = 0; i < sizeof(stacked) / sizeof(stacked[0]); i++)
		if (strcmp(base, stacked[i]) == 0)
			return VD_FS_STACKED;
	return VD_FS_SLOW;	/* fuse, fuseblk, nfs, cifs, 9p, ceph, and what is not known */
}

const char *vd_fsclass_name(enum vd_fsclass c)
{
	static const char *const n[] = { "pseudo", "device", "local", "stacked", "slow" };

	return c <= VD_FS_SLOW ? n[c] : "?";
}

/* mountinfo's octal escapes (\040 a space, \011, \012, \134) undone in place */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static bool has_opt(const char *opts, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = opts; p && *p;) {
		size_t k = strcspn(p, ",");

		if (k == n && strncmp(p, want, n) == 0)
			return true;
		p += k;
		if (*p == ',')
			p++;
	}
	return false;
}

void vd_mounts_free(struct vd_mounts *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->m[i].point);
	free(t->m);
	t->m = NULL;
	t->n = 0;
}

/*
 * One line: ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTS.
 * Return: 0, -EBADMSG (not of that shape), -ENOMEM.
 */
static int parse_line(char *line, struct vd_mount *m)
{
	char *f[6], *save = NULL, *sep, *fstype, *superopts;
	unsigned int maj, min;

	sep = strstr(line, " - ");
	if (!sep)
		return -EBADMSG;
	*sep = 0;
	fstype = strtok_r(sep + 3, " \n", &save);
	(void)strtok_r(NULL, " \n", &save);	/* the source */
	superopts = strtok_r(NULL, " \n", &save);
	save = NULL;
	for (int i = 0; i < 6; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
			return -EBADMSG;
	if (!fstype || sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return -EBADMSG;
	unescape(f[4]);
	memset(m, 0, sizeof(*m));
	m->id = strtoull(f[0], NULL, 10);
	m->dev = makedev(maj, min);
	snprintf(m->fstype, sizeof(m->fstype), "%s", fstype);
	/*
	 * Read-only is the filesystem's (its superblock's options), not this
	 * mount's: the unit's ProtectSystem=strict makes every mount in
	 * vigild's namespace read-only, while users write the same
	 * filesystems through the host's mounts.
	 */
	m->ro = superopts && has_opt(superopts, "ro");
	m->whole = strcmp(f[3], "/") == 0;
	m->noexec = has_opt(f[5], "noexec");
	m->cls = vd_fsclass_of(fstype);
	/*
	 * A container's /dev is a tmpfs of device nodes: an event's descriptor
	 * would open the device (a terminal would become vigild's). As devtmpfs.
	 */
	if (strcmp(f[4], "/dev") == 0 && m->cls == VD_FS_LOCAL)
		m->cls = VD_FS_DEVICE;
	m->point = strdup(f[4]);
	return m->point ? 0 : -ENOMEM;
}

int vd_mounts_read(struct vd_mounts *t)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct vd_mount *m = NULL;
	size_t n = 0, cap = 0;
	char *line = NULL;
	size_t len = 0;
	int r = 0;

	if (!f)
		return -errno;
	while (getline(&line, &len, f) > 0) {
		if (n == cap) {
			struct vd_mount *g = realloc(m, (cap ? cap * 2 : 64) * sizeof(*m));

			if (!g) {
				r = -ENOMEM;
				break;
			}
			m = g;
			cap = cap ? cap * 2 : 64;
		}
		r = parse_line(line, &m[n]);
		if (r == -EBADMSG) {
			r = 0;		/* a line not understood is left out */
			continue;
		}
		if (r < 0)
			break;
		n++;
	}
	free(line);
	fclose(f);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(m[i].point);
		free(m);
		return r;
	}
	vd_mounts_free(t);
	t->m = m;
	t->n = n;
	t->gen++;
	return 0;
}

int vd_mounts_watch_open(struct vd_mounts *t)
{
	t->fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	return t->fd < 0 ? -errno : 0;
}

bool vd_mounts_changed(struct vd_mounts *t)
{
	struct pollfd p = { .fd = t->fd, .events = POLLPRI };

	/* the namespace's event count moved since this descriptor last read the table */
	return t->fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLPRI | POLLERR));
}

const struct vd_mount *vd_mounts_dev(const struct vd_mounts *t, dev_t dev)
{
	const struct vd_mount *best = NULL;

	/* the filesystem's mounts: a whole one that is exec-able says most */
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].dev == dev &&
		    (!best || (!best->whole && t->m[i].whole) ||
		     (best->whole == t->m[i].whole && best->noexec && !t->m[i].noexec)))
			best = &t->m[i];
	return best;
}

bool vd_mounts_through_unsafe(const struct vd_mounts *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct vd_mount *m = &t->m[i];
		size_t n;

		if (m->cls != VD_FS_SLOW && m->cls != VD_FS_STACKED)
			continue;
		n = strlen(m->point);
		if (strcmp(m->point, "/") == 0 ||
		    (strncmp(path, m->point, n) == 0 && (path[n] == '/' || path[n] == 0)))
			return true;
	}
	return false;
}
