// SPDX-License-Identifier: MIT
/*
 * fsinfo.c - the filesystem facts a policy may name, per device: fsname=
 * (the kernel's sb->s_type->name) and fsuuid= (sb->s_uuid), so that vigild
 * evaluates those conditions as the kernel does instead of never.
 *
 * Looked up once per device, at the first event from it, and kept for
 * vigild's lifetime: the name from /proc/self/mountinfo (the entry with
 * the device's major:minor, its type without a ".subtype", as fuse's
 * s_type is "fuse"), the UUID with vg_fs_uuid() (FS_IOC_GETFSUUID, Linux
 * 6.5; else libblkid from the block device). Events come only from the
 * marked filesystems (at most 16, MAX_WATCH), so the table (64 devices:
 * btrfs subvolumes have a device each) does not fill in practice; a device
 * beyond it, or one whose name cannot be found, gets no fsname (an fsname=
 * condition does not hold) and no UUID (compared as the zero UUID, as the
 * kernel compares a filesystem without one). The strings handed to
 * vg_access point into the table, which never moves or changes an entry.
 *
 * Neither lookup opens a file on a marked filesystem: procfs, and a block
 * device on devtmpfs, are never marked.
 */
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "vigil/evm.h"
#include "vigild.h"

static void name_of(dev_t dev, char *out, size_t cap)
{
	char line[4096], want[32];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	out[0] = 0;
	if (!f)
		return;
	snprintf(want, sizeof(want), "%u:%u", major(dev), minor(dev));
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *sep, *fstype, *field = line;
		size_t n;

		for (int i = 0; i < 2 && field; i++) {
			field = strchr(field, ' ');
			if (field)
				field++;
		}
		if (!field || strncmp(field, want, strlen(want)) != 0 || field[strlen(want)] != ' ')
			continue;
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		fstype = sep + 3;
		n = strcspn(fstype, " .");	/* "fuse.sshfs": s_type is "fuse" */
		if (n && n < cap) {
			memcpy(out, fstype, n);
			out[n] = 0;
		}
		break;
	}
	fclose(f);
}

void vd_fsinfo_access(struct vd_fsinfo *fi, int fd, dev_t dev, struct vg_access *a)
{
	struct vd_fs *e = NULL;

	if (!fi->want_name && !fi->want_uuid)
		return;
	for (size_t i = 0; i < fi->n; i++)
		if (fi->fs[i].dev == dev) {
			e = &fi->fs[i];
			break;
		}
	if (!e) {
		if (fi->n == VD_MAX_FS)
			return;
		e = &fi->fs[fi->n++];
		e->dev = dev;
		name_of(dev, e->name, sizeof(e->name));
		e->has_uuid = vg_fs_uuid(fd, e->uuid, NULL) == 0;
	}
	if (fi->want_name && e->name[0])
		a->fsname = e->name;
	if (fi->want_uuid && e->has_uuid) {
		a->fsuuid_set = true;
		memcpy(a->fsuuid, e->uuid, 16);
	}
}

void vd_fsinfo_policy(struct vd_fsinfo *fi, const struct vg_policy *p)
{
	unsigned int uses = vg_policy_uses(p);

	fi->want_name = uses & VG_POLICY_USES_FSNAME;
	fi->want_uuid = uses & VG_POLICY_USES_FSUUID;
}
