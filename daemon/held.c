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
#include <sys/mman.h>
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
		vlog_err("%s=%s: not the holder's channel", HOLD_ENV_FD, v);
		return -1;
	}
	d->holder = (int)fd;
	return 1;
}

/* the counters as the holder keeps them (hold.h): this layout's, or none */
struct held_stats {
	uint64_t magic;
	uint64_t size;
	struct stats st;
};
#define HELD_STATS_MAGIC 0x7669676c73743031ull	/* "viglst01" */
_Static_assert(sizeof(struct held_stats) <= HOLD_STATS_BYTES, "the counters outgrow the holder's memory");

/* map the holder's counters (@fd) and start from them when their layout is ours */
static void held_stats(struct vd *d, int fd)
{
	struct held_stats *hs = mmap(NULL, HOLD_STATS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	if (hs == MAP_FAILED) {
		vlog_err("the holder's counters: %s: counting from zero", strerror(errno));
		return;
	}
	if (hs->magic == HELD_STATS_MAGIC && hs->size == sizeof(hs->st))
		d->st = hs->st;
	else if (hs->magic)
		vlog(VLOG_INFO, "the counters of the monitor before have another layout (an upgrade): "
			  "counting from zero");
	d->held_stats = hs;
	vd_held_save(d);
}

void vd_held_save(struct vd *d)
{
	struct held_stats *hs = d->held_stats;

	if (!hs)
		return;
	hs->st = d->st;
	hs->size = sizeof(hs->st);
	hs->magic = HELD_STATS_MAGIC;
}

int vd_held_group(struct vd *d)
{
	struct hold_msg m = { .type = HOLD_HELLO, .flags = HOLD_WANT_STATS };
	int fd = -1, r;

	if (d->holder < 0)
		return 0;
	r = vd_hold_send(d->holder, &m, -1);
	if (r == 0)
		r = vd_hold_recv(d->holder, &m, &fd);
	if (r == 0 && m.type != HOLD_GROUP)
		r = -EPROTO;
	if (r == 0 && (m.flags & HOLD_HAS_STATS)) {
		struct hold_msg sm;
		int sfd;

		r = vd_hold_recv(d->holder, &sm, &sfd);
		if (r == 0 && (sm.type != HOLD_STATS || sfd < 0))
			r = -EPROTO;
		if (r == 0)
			held_stats(d, sfd);
		else if (sfd >= 0)
			close(sfd);
	}
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		vlog_err("the holder: %s", strerror(-r));
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
		vlog_err("the held group: flushing its ignore marks: %s", strerror(errno));
		return -1;
	}
	vlog(VLOG_WARNING, "took the fanotify group over from the holder (restart %llu): %llu accesses "
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
		vlog_err("the holder: giving it the group: %s", strerror(-r));
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
		vlog_err("the holder: taking what waits: %s", strerror(-r));
		return -1;
	}
	d->parked_end = true;
	if (n)
		vlog(VLOG_INFO, "%lu accesses waited while no monitor ran: judged now", n);
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
