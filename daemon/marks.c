// SPDX-License-Identifier: MIT
/*
 * marks.c - which filesystems vigild watches, and keeping that true while
 * filesystems come and go.
 *
 * A filesystem is marked whole (FAN_MARK_FILESYSTEM: every mount of it,
 * bind mounts included). It is marked when a --watch path is on it, and,
 * with --watch-mounts PREFIX, when one of its mounts under PREFIX could
 * hold a program a user wrote: writable and not noexec, and neither one
 * of the kernel's pseudo filesystems nor devtmpfs (mounts.c). A local one
 * goes into the main group, with the FAN_ATTRIB channel that keeps
 * ignore marks honest; a stacked or slow one gets a group and reader of
 * its own (side.c), whose thread marks it (the walk to a FUSE
 * filesystem's root may wait on its server).
 *
 * Filesystems mounted after start are found by the mount table's
 * changes: fanotify's mount events where the kernel has them (FAN_MNT_ATTACH
 * on the namespace, Linux 6.14), else /proc/self/mountinfo's POLLPRI,
 * which every kernel gives; either wakes the loop, which reads the table
 * again and marks what is new. Marking is asynchronous: between a mount
 * and its mark a program on it runs unseen (docs/vigild.md has the window
 * measured). A filesystem that is gone takes its mark with it (the
 * kernel's), and its side is ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor.h"

bool vd_mark_watching(const struct vd_mark *m)
{
	return m && (!m->side || atomic_load(&m->side->state) != VD_SIDE_FAILED);
}

struct vd_mark *vd_mark_of(struct vd *d, dev_t dev)
{
	for (size_t i = 0; i < d->nmarks; i++)
		if (d->marks[i].dev == dev)
			return &d->marks[i];
	return NULL;
}

/* Is @path under @prefix (at a '/' boundary)? */
static bool under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	return (n == 1 && prefix[0] == '/') ||
	       (strncmp(path, prefix, n) == 0 && (path[n] == '/' || path[n] == 0));
}

/* A directory to reach the filesystem through (names.c's handle lookups). */
static void note_dir(struct vd *d, const char *dir, dev_t dev)
{
	if (d->nwmount < MAX_MARKS) {
		d->wmount[d->nwmount].dir = dir;
		d->wmount[d->nwmount++].dev = dev;
	}
}

/*
 * Mark filesystem @dev (class @cls) through @point. Return: 0 (marked, or
 * its side started), or -errno after logging when @loud.
 */
static int mark(struct vd *d, dev_t dev, const char *point, enum vd_fsclass cls, const char *fstype,
		bool explicit_, bool loud)
{
	struct vd_mark *m;
	char *p;

	if (vd_mark_of(d, dev))
		return 0;
	if (d->nmarks == MAX_MARKS) {
		if (loud)
			vlog_err("%s: more than %d filesystems to watch", point, MAX_MARKS);
		return -ENOSPC;
	}
	p = strdup(point);
	if (!p)
		return -ENOMEM;
	m = &d->marks[d->nmarks];
	*m = (struct vd_mark){ .dev = dev, .cls = cls, .point = p, .explicit_ = explicit_,
			       .said = cls == VD_FS_LOCAL ? VD_SIDE_MARKED : VD_SIDE_STARTING };
	snprintf(m->fstype, sizeof(m->fstype), "%s", fstype);
	if (cls == VD_FS_LOCAL) {
		int r = vd_fan_mark_fs(d->fan, point);

		if (r < 0) {
			if (loud)
				vlog_err("cannot mark the filesystem of %s: %s", point, strerror(-r));
			free(p);
			return r;
		}
		vd_fan_notif_add(d, point);
		note_dir(d, p, dev);
	} else {
		m->side = vd_side_start(d, dev, point, cls, fstype);
		if (!m->side) {
			if (loud)
				vlog_err("%s (%s): cannot start its reader: %s", point, fstype, strerror(errno));
			free(p);
			return -ENOMEM;
		}
	}
	d->nmarks++;
	return 0;
}

/*
 * Should --watch-mounts mark the filesystem of mount @m? One a program
 * could be put on: writable, or slow (a FUSE server makes up its content
 * whether it is mounted read-only or not), and not noexec; mounted whole
 * here. A part of a filesystem bound here (a container's view of a file
 * or directory of its host: /run/host/os-release) is not the filesystem:
 * marking it would watch every access to the host's (it stays a gap).
 */
static bool wanted(const struct vd *d, const struct vd_mount *m)
{
	return d->watch_mounts && m->whole && under(m->point, d->watch_mounts) &&
	       (!m->ro || m->cls == VD_FS_SLOW) && !m->noexec &&
	       (m->cls == VD_FS_LOCAL || m->cls == VD_FS_STACKED || m->cls == VD_FS_SLOW) &&
	       !vd_gap_accepted_mount(d, m->point);
}

/* Mark what --watch-mounts wants that is not marked yet. Return: filesystems newly marked. */
static int mark_new(struct vd *d, bool loud)
{
	int n = 0;

	for (size_t i = 0; i < d->mounts.n; i++) {
		const struct vd_mount *m = &d->mounts.m[i];

		if (!wanted(d, m) || vd_mark_of(d, m->dev))
			continue;
		/* the walk to a local mount point must not pass through a slow one */
		if (m->cls == VD_FS_LOCAL && vd_mounts_through_unsafe(&d->mounts, m->point)) {
			vlog(VLOG_WARNING, "%s: mounted under a stacked or slow filesystem: not "
				  "watched", m->point);
			continue;
		}
		if (mark(d, m->dev, m->point, m->cls, m->fstype, false, loud) == 0) {
			n++;
			if (!loud)
				vlog(VLOG_INFO, "watching %s (%s, mounted after start)", m->point,
					  m->fstype);
		}
	}
	return n;
}

int vd_marks_setup(struct vd *d)
{
	if (vd_mounts_read(&d->mounts) < 0 || vd_mounts_watch_open(&d->mounts) < 0) {
		vlog_err("/proc/self/mountinfo: %s", strerror(errno));
		return -1;
	}
	d->nwmount = 0;
	for (size_t i = 0; i < d->nwatch; i++) {
		const struct vd_mount *m;
		struct stat st;

		if (stat(d->watch[i], &st) < 0) {
			vlog_err("--watch %s: %s", d->watch[i], strerror(errno));
			return -1;
		}
		m = vd_mounts_dev(&d->mounts, st.st_dev);
		if (mark(d, st.st_dev, d->watch[i], m ? m->cls : VD_FS_LOCAL, m ? m->fstype : "?", true,
			 true) < 0)
			return -1;
		/* a --watch directory on a filesystem marked through another path: for names.c too */
		if (S_ISDIR(st.st_mode) && vd_mark_of(d, st.st_dev)->cls == VD_FS_LOCAL &&
		    strcmp(vd_mark_of(d, st.st_dev)->point, d->watch[i]) != 0)
			note_dir(d, d->watch[i], st.st_dev);
	}
	if (d->watch_mounts)
		(void)mark_new(d, true);
	vd_marks_wait(d, 2.0);
	d->mnt_watch = vd_fan_mnt_open(d);
	return 0;
}

void vd_marks_wait(struct vd *d, double seconds)
{
	double until = vd_now() + seconds;

	for (;;) {
		bool pending = false;

		for (size_t i = 0; i < d->nmarks; i++)
			if (d->marks[i].side && atomic_load(&d->marks[i].side->state) == VD_SIDE_STARTING)
				pending = true;
		if (!pending || vd_now() >= until)
			break;
		usleep(2000);
	}
	vd_marks_side_news(d);
}

void vd_marks_side_news(struct vd *d)
{
	for (size_t i = 0; i < d->nmarks; i++) {
		struct vd_mark *m = &d->marks[i];
		int st = m->side ? atomic_load(&m->side->state) : VD_SIDE_MARKED;

		if (st == m->said)
			continue;
		m->said = st;
		if (st == VD_SIDE_MARKED)
			vlog(VLOG_INFO, "watching %s (%s): a reader of its own", m->point, m->fstype);
		else if (st == VD_SIDE_FAILED) {
			vlog(VLOG_WARNING, "cannot mark the filesystem of %s (%s): %s: not watched%s",
				  m->point, m->fstype, strerror(m->side->mark_err),
				  m->side->mark_err == EACCES && m->side->fuse ?
				  " (a FUSE filesystem mounted without allow_other: its user alone can reach it)" : "");
			if (d->ready)
				vd_gaps_mounts_changed(d);	/* a gap now, in the list */
		}
	}
}

void vd_marks_reconcile(struct vd *d)
{
	size_t k = 0;

	vd_fan_mnt_drain(d);
	if (vd_mounts_read(&d->mounts) < 0)
		return;
	/* filesystems that are gone: their marks went with them; their sides end */
	for (size_t i = 0; i < d->nmarks; i++) {
		struct vd_mark *m = &d->marks[i];

		if (vd_mounts_dev(&d->mounts, m->dev) || m->explicit_) {
			d->marks[k++] = *m;
			continue;
		}
		vlog(VLOG_INFO, "%s (%s) is no longer mounted", m->point, m->fstype);
		if (!vd_side_end(m->side))
			d->left_behind = true;
		for (size_t w = 0; w < d->nwmount; w++)
			if (d->wmount[w].dir == m->point)
				d->wmount[w] = d->wmount[--d->nwmount];
		free(m->point);
	}
	d->nmarks = k;
	if (d->watch_mounts)
		(void)mark_new(d, false);
	vd_gaps_mounts_changed(d);
}

void vd_marks_free(struct vd *d)
{
	for (size_t i = 0; i < d->nmarks; i++) {
		if (!vd_side_end(d->marks[i].side))
			d->left_behind = true;
		free(d->marks[i].point);
	}
	d->nmarks = 0;
	vd_mounts_free(&d->mounts);
}
