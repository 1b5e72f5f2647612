// SPDX-License-Identifier: MIT
/*
 * lease.c - the monitor's read leases on inodes.
 *
 * Every cached verdict (the verdict cache, a kernel ignore mark, a
 * "measured" bit) is kept only while the monitor holds a read lease
 * (F_SETLEASE F_RDLCK) on the inode, taken before an appraiser reads the
 * content. The kernel refuses the lease while any descriptor or shared
 * mapping has the file open for writing, and breaks it before any new
 * open for writing or truncate proceeds: the writer waits in open() until
 * the monitor has dropped the inode's ignore mark and invalidated its
 * verdicts (the lease generation moves on), and released the lease. So no
 * write, write(2), a MAP_SHARED mapping or truncate, can change content
 * whose verdict is cached, and nothing races: the writer waits. This is
 * the kernel IMA's last-writer rule turned around. A file open for writing
 * by anyone gets no lease, and so a fresh appraisal at every access. The
 * break arrives as a real-time signal carrying the lease's descriptor
 * (F_SETSIG); if the signal queue overflows the kernel sends SIGIO and
 * every lease is checked.
 *
 * A lease keeps its file open, and an open file keeps its filesystem
 * from being unmounted (EBUSY). That is no surprise on a filesystem named
 * with --watch; on one --watch-mounts watches (a USB stick, a user's
 * runtime directory) it would be: there a lease not used for
 * VD_LEASE_IDLE seconds is dropped, with its verdicts, so an unmount
 * succeeds once the filesystem has been idle that long.
 *
 * The set lookup is inline in monitor.h (the event path).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor.h"

/* Is @fd the descriptor of an event still in flight? */
static bool fd_in_flight(const struct vd *d, int fd)
{
	for (int i = 0; i < d->ev_hi; i++)
		if (d->ev[i].used && d->ev[i].fd == fd)
			return true;
	return false;
}

/* Invalidate what depends on @l, then let the writer (if any) go on. */
void vd_lease_drop(struct vd *d, struct lease *l)
{
	l->gen = ++d->lease_gens;
	if (l->transient && d->ntransient)
		d->ntransient--;
	l->transient = false;
	if (l->ignored)
		vd_fan_unignore(d, l->fd);
	/* explicitly: the appraiser may still hold the same open file */
	(void)fcntl(l->fd, F_SETLEASE, F_UNLCK);
	/* the event whose descriptor it is, if still in flight, closes it (vd_ev_release) */
	if (!fd_in_flight(d, l->fd))
		close(l->fd);
	l->held = l->ignored = false;
	l->fd = -1;
	d->nleases--;
}

/*
 * A lease on the inode of @fd (an event's descriptor), held from now on.
 * It is taken on that descriptor itself, which then outlives the event:
 * the lease keeps it (vd_lease_owns), and closes it when it is dropped.
 * No dup() on the first access's path, and no close() after its answer.
 * Return: 0 with *@ret_gen; -EAGAIN the file is open for writing (its
 * content may change under any verdict: do not cache); another -errno
 * when leases cannot be had (then nothing is cached either).
 */
int vd_lease_take(struct vd *d, int fd, dev_t dev, ino_t ino, uint32_t *ret_gen)
{
	struct lease *set = &d->lease[vd_lease_set(dev, ino)], *l = vd_lease_get(d, dev, ino);
	int r;

	if (l) {
		*ret_gen = l->gen;
		l->used = vd_now();
		return 0;
	}
	if (!d->lease_sig)
		return -EOPNOTSUPP;
	for (size_t k = 0; k < LEASE_WAYS && !l; k++)
		if (!set[k].held)
			l = &set[k];
	if (!l) {		/* a full set: one of the others goes, in turn */
		l = &set[d->lease_evict++ % LEASE_WAYS];
		vd_lease_drop(d, l);
	} else if (d->nleases >= d->lease_max) {
		return -EMFILE;
	}
	if (fcntl(fd, F_SETSIG, d->lease_sig) < 0 || fcntl(fd, F_SETLEASE, F_RDLCK) < 0) {
		r = -errno;
		if (r == -EAGAIN) {
			d->st.lease_writers++;
		} else {
			d->st.lease_errors++;
			if (!d->lease_warned)
				vlog(VLOG_WARNING, "no read lease (%s): verdicts on this filesystem "
					  "are not cached, every access is appraised", strerror(-r));
			d->lease_warned = true;
		}
		return r;
	}
	l->held = true;
	l->ignored = false;
	l->dev = dev;
	l->ino = ino;
	l->fd = fd;
	{
		const struct vd_mark *m = vd_mark_of(d, dev);

		l->transient = m && !m->explicit_;
		l->used = vd_now();
		d->ntransient += l->transient;
	}
	l->gen = ++d->lease_gens;
	d->nleases++;
	*ret_gen = l->gen;
	return 0;
}

/* The kernel is breaking the lease on @fd: someone opens the file for writing. */
void vd_lease_broken(struct vd *d, int fd)
{
	struct stat st;
	struct lease *l;

	if (fd < 0 || fcntl(fd, F_GETLEASE) == F_RDLCK || fstat(fd, &st) < 0)
		return;		/* stale signal: that descriptor was dropped already */
	l = vd_lease_get(d, st.st_dev, st.st_ino);
	if (l && l->fd == fd) {
		d->st.lease_breaks++;
		vd_lease_drop(d, l);
	}
}

/* SIGIO: the signal queue overflowed, a break may have gone unnamed. */
void vd_lease_rescan(struct vd *d)
{
	for (size_t i = 0; i < LEASE_CAP; i++)
		if (d->lease[i].held && fcntl(d->lease[i].fd, F_GETLEASE) != F_RDLCK) {
			d->st.lease_breaks++;
			vd_lease_drop(d, &d->lease[i]);
		}
}

void vd_lease_setup(struct vd *d)
{
	struct rlimit rl;

	d->lease = vd_table_alloc(LEASE_CAP * sizeof(*d->lease));
	if (!d->lease)
		return;
	/* one descriptor per leased inode: take what the hard limit allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 1024 + 64)
		d->lease_max = (unsigned int)(rl.rlim_cur - 1024 < LEASE_CAP ? rl.rlim_cur - 1024 : LEASE_CAP);
	d->lease_sig = d->lease_max ? SIGRTMIN : 0;
	if (!d->lease_sig)
		vlog(VLOG_WARNING, "too few descriptors for read leases (RLIMIT_NOFILE): "
			  "nothing is cached");
}

bool vd_lease_owns(struct vd *d, const struct ev *e)
{
	struct lease *l;

	if (e->fd < 0)
		return false;
	l = vd_lease_get(d, e->key.dev, e->key.ino);
	return l && l->fd == e->fd;
}

/* The event's verdict may be kept: its lease is still the one it was made under. */
bool vd_lease_valid_for(struct vd *d, const struct ev *e)
{
	struct lease *l;

	if (!e->leased)
		return false;
	l = vd_lease_get(d, e->key.dev, e->key.ino);
	return l && l->gen == e->lease_gen;
}

void vd_lease_expire(struct vd *d)
{
	double now = vd_now();

	if (now < d->lease_sweep || !d->ntransient || !d->lease)
		return;
	d->lease_sweep = now + 1.0;
	for (size_t i = 0; i < LEASE_CAP; i++)
		if (d->lease[i].held && d->lease[i].transient && now - d->lease[i].used > VD_LEASE_IDLE &&
		    !fd_in_flight(d, d->lease[i].fd))
			vd_lease_drop(d, &d->lease[i]);
}
