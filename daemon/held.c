// SPDX-License-Identifier: MIT
/*
 * held.c - the monitor's side of vigild --hold (hold.h): take the group
 * from the holder, give it a new one, take what waited, say when all of
 * it is answered.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hold.h"
#include "monitor.h"

int vd_held_open(struct vd *d)
{
	const char *v = getenv(HOLD_ENV_FD);
	char *end;
	long fd;

	d->holder = -1;
	if (!v)
		return 0;
	fd = strtol(v, &end, 10);
	unsetenv(HOLD_ENV_FD);
	if (*end || fd < 3 || fd > 1 << 20 || fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
		vd_log("%s=%s: not the holder's channel", HOLD_ENV_FD, v);
		return -1;
	}
	d->holder = (int)fd;
	return 1;
}

int vd_held_group(struct vd *d)
{
	struct hold_msg m = { .type = HOLD_HELLO };
	int fd = -1, r;

	if (d->holder < 0)
		return 0;
	r = vd_hold_send(d->holder, &m, -1);
	if (r == 0)
		r = vd_hold_recv(d->holder, &m, &fd);
	if (r == 0 && m.type != HOLD_GROUP)
		r = -EPROTO;
	if (r < 0) {
		vd_log("the holder: %s", strerror(-r));
		return -1;
	}
	if (fd < 0)
		return 0;	/* the first monitor: it makes the group */
	d->fan = fd;
	d->fd_error_reported = m.flags & HOLD_FD_ERROR;
	d->held_group = true;
	/*
	 * The dead monitor's ignore marks (inode marks) went with its cache and
	 * its leases: a file written since would pass unseen. The filesystem
	 * marks stay (vd_fan_setup adds them again, as they are).
	 */
	if (fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) < 0) {
		vd_log("the held group: flushing its ignore marks: %s", strerror(errno));
		return -1;
	}
	vd_log_at(VLOG_WARNING, "took the fanotify group over from the holder (restart %llu): %llu accesses "
		  "wait for it, %llu in flight at deaths were denied, %llu of vigild's own restart allowed",
		  (unsigned long long)m.restarts, (unsigned long long)m.parked, (unsigned long long)m.denied,
		  (unsigned long long)m.allowed);
	return 1;
}

int vd_held_give(struct vd *d)
{
	struct hold_msg m = { .type = HOLD_GROUP, .flags = d->fd_error_reported ? HOLD_FD_ERROR : 0 };
	int r;

	if (d->holder < 0 || d->held_group)
		return 0;
	r = vd_hold_send(d->holder, &m, d->fan);
	if (r < 0)
		vd_log("the holder: giving it the group: %s", strerror(-r));
	return r;
}

int vd_held_take(struct vd *d)
{
	struct hold_msg m = { .type = HOLD_TAKE };
	unsigned long n = 0;
	int r, fd;

	if (d->holder < 0)
		return 0;
	r = vd_hold_send(d->holder, &m, -1);
	while (r == 0 && (r = vd_hold_recv(d->holder, &m, &fd)) == 0 && m.type == HOLD_PARKED) {
		struct vd_origin o = { .parked = m.no };
		struct stat st;

		if (fd < 0 || m.no <= 0) {
			r = -EPROTO;
			break;
		}
		d->parked_open++;
		n++;
		if (fstat(fd, &st) < 0)
			vd_event_from(d, &o, fd, m.pid, (uint32_t)m.mask, NULL, NULL, 0);
		else
			vd_event_from(d, &o, fd, m.pid, (uint32_t)m.mask, &st, NULL, 0);
	}
	if (r == 0 && m.type != HOLD_END)
		r = -EPROTO;
	if (r < 0) {
		vd_log("the holder: taking what waits: %s", strerror(-r));
		return -1;
	}
	d->parked_end = true;
	if (n)
		vd_log_at(VLOG_INFO, "%lu accesses waited while no monitor ran: judged now", n);
	if (d->parked_open == 0)
		vd_held_answered(d, false);
	return 0;
}

void vd_held_answered(struct vd *d, bool one)
{
	if (one && d->parked_open > 0)
		d->parked_open--;
	if (d->parked_end && d->parked_open == 0 && d->holder >= 0) {
		d->parked_end = false;	/* said once */
		(void)vd_hold_send(d->holder, &(struct hold_msg){ .type = HOLD_DONE }, -1);
	}
}

void vd_held_release(struct vd *d)
{
	if (d->holder < 0)
		return;
	(void)vd_hold_send(d->holder, &(struct hold_msg){ .type = HOLD_RELEASE }, -1);
	close(d->holder);
	d->holder = -1;
}
