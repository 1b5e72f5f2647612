// SPDX-License-Identifier: MIT
/*
 * side.c - filesystems whose events the loop must not read itself: a
 * group of their own each, read by a thread of their own.
 *
 * When vigild reads an event the kernel opens the event's file for it,
 * inside read(). For a stacked filesystem (overlay, eCryptfs) that open
 * opens a file of the filesystem below, which vigild may watch: read by
 * the loop, the loop would wait for its own answer. For a slow one (FUSE,
 * NFS, ...) that open asks a server, which may never answer: any user can
 * mount a FUSE filesystem whose server does exactly that. So each such
 * filesystem has its own fanotify group, marked and read by its own
 * thread: the thread may wait, and what waits with it is that
 * filesystem's accesses alone. The thread also makes every call on the
 * event's file that may wait (fstat, and for a path= policy whether the
 * kernel's name leads to the file, names.c) and hands the event to the
 * loop through a queue and an eventfd; the loop decides it as any other
 * (events.c), without touching the file of a slow filesystem again, and
 * answers on the filesystem's group. The thread's own opens of other
 * watched files are vigild's and the loop answers them.
 *
 * A side is ended when its filesystem is unmounted (the reconciliation
 * of the mount table, fanotify.c): its thread is told through a second
 * eventfd and closes the group. A thread stuck in a server that never
 * answers is left behind at exit (process exit ends it).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "monitor.h"

enum { SEV_EVENT, SEV_NEWS, SEV_BEFORE, SEV_BEFORE_END };

struct vd_sevent {
	struct vd_sevent *next;
	int kind;		/* SEV_* */
	struct vd_side *side;
	int fd;			/* < 0: -errno, the kernel refused the access (FAN_REPORT_FD_ERROR) */
	pid_t pid;
	uint32_t mask;		/* VD_EV_* */
	int st_err;		/* fstat's -errno, 0 */
	struct stat st;
	char *kname;		/* the kernel's name, read here (names.c) */
	int named;		/* vd_name_check's answer for kname: 1 it leads to the file here */
};

/* Hand @q to the loop. */
static void push(struct vd *d, struct vd_sevent *q)
{
	uint64_t one = 1;

	pthread_mutex_lock(&d->side_lock);
	if (d->side_tail)
		d->side_tail->next = q;
	else
		d->side_head = q;
	d->side_tail = q;
	pthread_mutex_unlock(&d->side_lock);
	if (write(d->side_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot be full: the loop reads it */
	}
}

/* One event of the side's group (fanotify.c decodes it): looked at here, handed to the loop. */
static void take(void *arg, int fd, pid_t pid, uint32_t mask)
{
	struct vd_side *s = arg;
	struct vd_sevent *q = calloc(1, sizeof(*q));

	if (!q) {
		if (fd >= 0) {
			(void)vd_fan_answer(s->group, fd, false);	/* no memory: denied */
			close(fd);
		}
		return;
	}
	q->kind = SEV_EVENT;
	q->side = s;
	q->fd = fd;
	q->pid = pid;
	q->mask = mask;
	if (fd >= 0) {
		if (fstat(fd, &q->st) < 0)
			q->st_err = -errno;
		/* a path= policy needs the name; checking it may wait on this filesystem */
		if (!q->st_err && S_ISREG(q->st.st_mode) && s->want_names) {
			char link[64];

			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			q->kname = vd_readlink(link);
			/*
			 * Its name here: the kernel's, where that leads to it; none when
			 * unlinked; else it cannot be told (no lookup by handle on a
			 * stacked or slow filesystem: the fail action for a path= rule)
			 */
			q->named = q->kname && vd_name_check(q->kname, &q->st) ? 1 :
				   q->st.st_nlink == 0 ? 0 : -ESTALE;
		}
	}
	push(s->d, q);
}

/* The side's marking ended, one way or the other: the loop logs it. */
static void news(struct vd_side *s)
{
	struct vd_sevent *q = calloc(1, sizeof(*q));

	if (q) {
		q->kind = SEV_NEWS;
		push(s->d, q);
	}
}

void vd_side_push_before(struct vd *d, int fd, pid_t pid, const struct stat *st)
{
	struct vd_sevent *q;

	/* a program may be left out for want of memory; the end marker never is: READY=1 waits on it */
	while (!(q = calloc(1, sizeof(*q)))) {
		if (fd >= 0) {
			close(fd);
			return;
		}
		usleep(10000);
	}
	q->kind = fd >= 0 ? SEV_BEFORE : SEV_BEFORE_END;
	q->fd = fd;
	q->pid = pid;
	q->mask = VD_EV_EXEC;
	if (st)
		q->st = *st;
	push(d, q);
}

static void *side_main(void *arg)
{
	struct vd_side *s = arg;
	struct statfs sf;
	int r;

	/* marking walks to the filesystem, and may wait on its server: here, not in the loop */
	r = vd_fan_mark_fs(s->group, s->point);
	if (r < 0) {
		s->mark_err = -r;
		atomic_store(&s->state, VD_SIDE_FAILED);
		news(s);
		return NULL;
	}
	s->magic = statfs(s->point, &sf) == 0 ? (uint64_t)sf.f_type : 0;
	atomic_store(&s->state, VD_SIDE_MARKED);
	news(s);
	for (;;) {
		struct pollfd p[2] = { { .fd = s->group, .events = POLLIN }, { .fd = s->stop, .events = POLLIN } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		/* the kernel's opens of the files happen in this read: it may wait */
		r = vd_fan_read_each(s->group, s->fd_error, take, s);
		if (r < 0 && r != -EAGAIN && r != -EINTR)
			break;
	}
	atomic_store(&s->state, VD_SIDE_ENDED);
	return NULL;
}

struct vd_side *vd_side_start(struct vd *d, dev_t dev, const char *point, enum vd_fsclass cls,
			      const char *fstype)
{
	struct vd_side *s = calloc(1, sizeof(*s));
	pthread_attr_t a;

	if (!s)
		return NULL;
	s->d = d;
	s->dev = dev;
	s->cls = cls;
	s->fuse = strncmp(fstype, "fuse", 4) == 0;
	s->want_names = d->policy_uses_path;
	s->point = strdup(point);
	s->fd_error = d->fd_error_reported;
	s->group = vd_fan_group_new(&s->fd_error);
	s->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!s->point || s->group < 0 || s->stop < 0)
		goto fail;
	/* a thread that reads and stats, and may wait: a small stack will do */
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	if (pthread_create(&s->tid, &a, side_main, s) != 0) {
		pthread_attr_destroy(&a);
		goto fail;
	}
	pthread_attr_destroy(&a);
	return s;
fail:
	if (s->group >= 0)
		close(s->group);
	if (s->stop >= 0)
		close(s->stop);
	free(s->point);
	free(s);
	return NULL;
}

bool vd_side_end(struct vd_side *s)
{
	uint64_t one = 1;
	int st;

	if (!s)
		return true;
	if (write(s->stop, &one, sizeof(one)) < 0) {
		/* cannot fail: a fresh counter */
	}
	for (int i = 0; i < 100 && (st = atomic_load(&s->state)) != VD_SIDE_ENDED && st != VD_SIDE_FAILED;
	     i++)
		usleep(1000);
	if (atomic_load(&s->state) == VD_SIDE_FAILED) {
		pthread_join(s->tid, NULL);	/* it returned after saying so */
	} else if (atomic_load(&s->state) != VD_SIDE_ENDED) {
		/* stuck in a server that never answers: left behind, its memory with it */
		pthread_detach(s->tid);
		return false;
	} else {
		pthread_join(s->tid, NULL);
	}
	close(s->group);
	close(s->stop);
	free(s->point);
	free(s);
	return true;
}

int vd_side_setup(struct vd *d)
{
	pthread_mutex_init(&d->side_lock, NULL);
	d->side_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->side_fd < 0) {
		vlog_err("eventfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void vd_side_events(struct vd *d)
{
	struct vd_sevent *q;
	uint64_t n;

	if (read(d->side_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		vlog_err("eventfd: %s", strerror(errno));
	pthread_mutex_lock(&d->side_lock);
	q = d->side_head;
	d->side_head = d->side_tail = NULL;
	pthread_mutex_unlock(&d->side_lock);
	while (q) {
		struct vd_sevent *next = q->next;

		if (q->kind == SEV_NEWS) {
			vd_marks_side_news(d);	/* a side thread marked, or could not */
		} else if (q->kind == SEV_BEFORE_END) {
			vd_before_done(d);
		} else if (q->kind == SEV_BEFORE) {
			struct vd_origin o = { .before = true };

			vd_event_from(d, &o, q->fd, q->pid, q->mask, &q->st, NULL, 0);
		} else if (q->fd < 0) {
			vd_fan_fd_error(d, -q->fd, q->pid, q->mask);
		} else if (q->st_err) {
			/* its file cannot be looked at: the fail action, on its own group */
			struct vd_origin o = { .side = q->side };

			vd_event_from(d, &o, q->fd, q->pid, q->mask, NULL, NULL, 0);
		} else {
			struct vd_origin o = { .side = q->side };

			vd_event_from(d, &o, q->fd, q->pid, q->mask, &q->st, q->kname, q->named);
			q->kname = NULL;	/* the event owns it now */
		}
		free(q->kname);
		free(q);
		q = next;
	}
}
