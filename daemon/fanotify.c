// SPDX-License-Identifier: MIT
/*
 * fanotify.c - the monitor's fanotify intake, the only user of
 * <sys/fanotify.h>: the permission group and its filesystem marks, the
 * FAN_ATTRIB notification group, reading and checking event metadata,
 * answers, and ignore marks. Events reach events.c as (fd, pid,
 * VD_EV_OPEN | VD_EV_EXEC); nothing here decides anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "monitor.h"

/* Linux 6.13 (and 6.12.5, 6.6.66): an event whose descriptor could not be opened carries -errno */
#ifndef FAN_REPORT_FD_ERROR
#define FAN_REPORT_FD_ERROR 0x00002000
#endif

int vd_fan_answer(int group, int fd, bool allow)
{
	struct fanotify_response r = { .fd = fd, .response = allow ? FAN_ALLOW : FAN_DENY };

	return write(group, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : -errno;
}

void vd_fan_respond(struct vd *d, int fd, bool allow)
{
	int r = vd_fan_answer(d->fan, fd, allow);

	if (r < 0) {
		d->st.errors++;
		vlog_err("fanotify response for fd %d failed: %s", fd, strerror(-r));
	}
}

uint32_t vd_fan_ev_mask(uint64_t m)
{
	return (m & FAN_OPEN_PERM ? VD_EV_OPEN : 0) | (m & FAN_OPEN_EXEC_PERM ? VD_EV_EXEC : 0);
}

static uint64_t fan_mask(uint32_t mask)
{
	return (mask & VD_EV_OPEN ? FAN_OPEN_PERM : 0) | (mask & VD_EV_EXEC ? FAN_OPEN_EXEC_PERM : 0);
}

int vd_fan_ignore(struct vd *d, int fd, uint32_t mask)
{
	return fanotify_mark(d->fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_EVICTABLE,
			     fan_mask(mask), fd, NULL) == 0 ? 0 : -errno;
}

void vd_fan_unignore(struct vd *d, int fd)
{
	(void)fanotify_mark(d->fan, FAN_MARK_REMOVE | FAN_MARK_IGNORED_MASK,
			    FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM, fd, NULL);
}

void vd_fan_flush(struct vd *d)
{
	if (d->notif >= 0)
		(void)fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
}

void vd_fan_flush_ignores(struct vd *d)
{
	char buf[4096];

	while (read(d->notif, buf, sizeof(buf)) > 0)
		;
	if (fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) == 0)
		d->st.ignore_flushes++;
}

/*
 * The kernel opens each event's file for vigild inside read(). The group's
 * descriptors are opened O_NONBLOCK, so that open never waits: not on a
 * lease an unprivileged user holds on a file of his (it would wait
 * fs.lease-break-time, 45 s, inside vigild's read, with every watched
 * access behind it), nor on a FIFO's writer. An event whose file cannot be
 * opened so is denied by the kernel itself. Where the kernel has
 * FAN_REPORT_FD_ERROR (6.13) the event still arrives, with -errno as its
 * descriptor and the opener's pid, and is audited; before, read() skips
 * it (failing with EAGAIN when it was alone): the bytes queued
 * (FIONREAD) and the bytes read then differ, and the difference is
 * counted.
 */
void vd_fan_fd_error(struct vd *d, int err, pid_t pid, uint32_t mask)
{
	struct ev e = { .fd = -1, .pid = pid, .mask = mask };
	char why[96];

	d->st.open_errors++;
	d->st.denied++;
	snprintf(why, sizeof(why), "unopenable: %s", strerror(err));
	e.path = strdup("?");
	vd_audit(d, &e, "deny", why, -1);
	free(e.path);
	free(e.subj_exe);
}

void vd_fan_read(struct vd *d, void (*on_event)(struct vd *d, int fd, pid_t pid, uint32_t mask))
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	bool first = true;

	for (;;) {
		int queued = 0;
		ssize_t n;
		const struct fanotify_event_metadata *m = (const void *)buf;

		if (!d->fd_error_reported && ioctl(d->fan, FIONREAD, &queued) < 0)
			queued = 0;
		n = read(d->fan, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EAGAIN && queued > 0)
				d->st.open_errors += (uint64_t)queued / FAN_EVENT_METADATA_LEN;
			else if (errno == EAGAIN && first && !d->fd_error_reported)
				d->st.open_errors++;	/* woken for an event that is gone: refused */
			else if (errno != EAGAIN && errno != EINTR)
				vlog_err("reading fanotify: %s", strerror(errno));
			return;
		}
		first = false;
		if (queued > 0 && (size_t)queued <= sizeof(buf) && n < queued)
			d->st.open_errors += (uint64_t)(queued - n) / FAN_EVENT_METADATA_LEN;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION) {
				vlog_err("fanotify metadata version %u, not %u", m->vers,
				       FANOTIFY_METADATA_VERSION);
				exit(2);
			}
			if (m->mask & FAN_Q_OVERFLOW) {
				d->st.overflows++;
				vlog(VLOG_WARNING, "fanotify queue overflow: events were allowed unseen");
				continue;
			}
			if (m->fd < 0) {
				/* FAN_NOFD, or (FAN_REPORT_FD_ERROR) -errno: the kernel has denied it */
				if (d->fd_error_reported && m->fd != FAN_NOFD &&
				    (m->mask & (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)))
					vd_fan_fd_error(d, -m->fd, m->pid, vd_fan_ev_mask(m->mask));
				continue;
			}
			on_event(d, m->fd, m->pid, vd_fan_ev_mask(m->mask));
		}
		/*
		 * A read that left half the buffer free found the queue empty
		 * (the kernel stops only then, or at an event that does not
		 * fit): poll, level-triggered, says when there is more. This
		 * saves the read that would only answer EAGAIN.
		 */
		if ((size_t)n <= sizeof(buf) / 2)
			return;
	}
}

int vd_fan_group_new(bool *fd_error)
{
	const unsigned int flags = FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE;
	const unsigned int fflags = O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME | O_NONBLOCK;
	int g = *fd_error ? fanotify_init(flags | FAN_REPORT_FD_ERROR, fflags) : -1;

	if (g < 0 && (!*fd_error || errno == EINVAL)) {
		*fd_error = false;	/* before Linux 6.13: counted, not audited */
		g = fanotify_init(flags, fflags);
	}
	return g < 0 ? -errno : g;
}

int vd_fan_mark_fs(int group, const char *path)
{
	return fanotify_mark(group, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM,
			     AT_FDCWD, path) == 0 ? 0 : -errno;
}

int vd_fan_read_each(int group, bool fd_error, void (*fn)(void *arg, int fd, pid_t pid, uint32_t mask),
		     void *arg)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	const struct fanotify_event_metadata *m = (const void *)buf;
	ssize_t n = read(group, buf, sizeof(buf));

	if (n < 0)
		return -errno;
	for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
		if (m->vers != FANOTIFY_METADATA_VERSION || (m->mask & FAN_Q_OVERFLOW))
			continue;
		if (m->fd >= 0 || (fd_error && m->fd != FAN_NOFD))
			fn(arg, m->fd, m->pid, vd_fan_ev_mask(m->mask));
	}
	return (int)n;
}

int vd_fan_init(struct vd *d)
{
	int r;

	d->fd_error_reported = !d->no_fd_error;
	r = vd_fan_group_new(&d->fd_error_reported);
	d->fan = r;
	errno = r < 0 ? -r : 0;
	if (d->fan < 0) {
		vlog_err("fanotify_init: %s%s", strerror(errno), errno == EPERM ?
		       " (vigild needs CAP_SYS_ADMIN, and the fanotify system calls: a container's "
		       "system call filter may forbid them, e.g. systemd-nspawn's: "
		       "--system-call-filter=fanotify_init)" : "");
		return -1;
	}
	return 0;
}

void vd_fan_notif_open(struct vd *d)
{
	/* the attribute channel, marked with each local filesystem; without it no ignore marks */
	d->notif = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY);
}

void vd_fan_notif_add(struct vd *d, const char *path)
{
	if (d->notif < 0 || fanotify_mark(d->notif, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_ATTRIB, AT_FDCWD,
					  path) == 0)
		return;
	vlog(VLOG_WARNING, "no FAN_ATTRIB channel for %s (%s): verdicts are cached in vigild only",
		  path, strerror(errno));
	/* the ignore marks set so far would go stale without it: gone too */
	(void)fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
	close(d->notif);
	d->notif = -1;
}

/* Linux 6.14: mount events of a mount namespace */
#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#endif
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000
#define FAN_MNT_DETACH 0x02000000
#endif

int vd_fan_mnt_open(struct vd *d)
{
	if (!d->test_no_mnt_events) {
		int g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, 0);
		int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		bool ok = g >= 0 && ns >= 0 &&
			  fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH | FAN_MNT_DETACH, ns,
					NULL) == 0;

		if (ns >= 0)
			close(ns);
		if (ok) {
			d->mnt_events = true;
			return g;
		}
		if (g >= 0)
			close(g);
	}
	/* before Linux 6.14: mountinfo says POLLPRI when the namespace's table changes */
	d->mnt_events = false;
	return open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
}

void vd_fan_mnt_drain(struct vd *d)
{
	char buf[4096];

	if (d->mnt_events)
		while (read(d->mnt_watch, buf, sizeof(buf)) > 0)
			;
}
