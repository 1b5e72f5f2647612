// SPDX-License-Identifier: MIT
/*
 * hold_group.c - the holder's side of the permission group while no
 * monitor reads it (hold.h, step 3), shared by the holder's loop
 * (holder.c) and a restart's bridge (handoff.c): its descriptor table
 * (filled below the monitor's limit, its own descriptors on placeholders
 * there, every event numbered above), what vigild's restart needs and is
 * allowed, and what else waits, parked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hold.h"
#include "holder_internal.h"
#include "monitor.h"

/* the cgroup of @pid (cgroup v2: the line "0::PATH"), or "" */
void vd_holder_cgroup_of(pid_t pid, char *out, size_t n)
{
	char path[64], buf[1024];
	ssize_t r;
	int fd;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return;
	buf[r] = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "0::", 3) == 0) {
			size_t k = strcspn(l + 3, "\n");

			if (k < n) {
				memcpy(out, l + 3, k);
				out[k] = 0;
			}
			return;
		}
	}
}

bool vd_holder_ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* the parent of @pid (/proc/PID/stat's fourth field), or -1 */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t r;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	p = strrchr(buf, ')');	/* the name may hold spaces and parentheses */
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * What a restart of vigild needs, while no monitor answers: the holder's
 * own descendants (the new monitor: its exec, libraries, settings, keys;
 * its appraisers), PID 1 (it starts and watches services), journald (it
 * writes what vigild says) and what it forks to start a unit (init.scope:
 * only PID 1 puts a process there, and a restart's new vigild is such a
 * fork until it joins the unit's cgroup), and in a service's cgroup the
 * unit's own processes (ExecReload=, a restart's new instance) and the
 * software TPM's (vigil-swtpm).
 */
static bool restart_needs(const struct holder *h, pid_t pid)
{
	char cg[512];
	pid_t p = pid;

	if (pid == 1 || pid == h->self)
		return true;
	for (int i = 0; i < 16 && p > 1; i++) {
		p = parent_of(p);
		if (p == h->self)
			return true;
	}
	vd_holder_cgroup_of(pid, cg, sizeof(cg));
	if (!cg[0])
		return false;
	if (h->cgroup[0] && strcmp(cg, h->cgroup) == 0)
		return true;
	return vd_holder_ends_with(cg, "/init.scope") || vd_holder_ends_with(cg, "/systemd-journald.service") ||
	       vd_holder_ends_with(cg, "/vigil-swtpm.service");
}

/*
 * Fill our descriptor table below h->base, so that every event we read is
 * numbered above it (hold.h). The top HOLD_OWN numbers hold placeholders
 * that our own descriptors replace (own_fd) and give back (drop_fd): the
 * table below the base is never left with a hole an event could take.
 */
int vd_holder_fill(struct holder *h)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	h->base = rl.rlim_cur / 2 < HOLD_BASE_MAX ? (int)(rl.rlim_cur / 2) : HOLD_BASE_MAX;
	if (h->base < 2048) {
		vlog_err("--hold: too few descriptors (RLIMIT_NOFILE %llu): the holder needs twice 2048",
		       (unsigned long long)rl.rlim_cur);
		return -EMFILE;
	}
	h->nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (h->nul < 0)
		return -errno;
	do
		fd = fcntl(h->nul, F_DUPFD_CLOEXEC, 0);
	while (fd >= 0 && fd < h->base - 1);
	if (fd < 0)
		return -errno;
	if (fd >= h->base)
		close(fd);
	for (int i = 0; i < HOLD_OWN; i++)
		h->spare[i] = true;
	return 0;
}

/* @fd (a descriptor of our own) moved onto a placeholder below the base; -1 when none is left */
int vd_holder_own_fd(struct holder *h, int fd)
{
	if (fd < 0 || fd < h->base - HOLD_OWN)
		return fd;
	for (int i = 0; i < HOLD_OWN; i++) {
		int slot = h->base - HOLD_OWN + i;

		if (!h->spare[i] || dup3(fd, slot, O_CLOEXEC) < 0)
			continue;
		h->spare[i] = false;
		close(fd);
		return slot;
	}
	close(fd);
	return -1;
}

/* the end of a descriptor of ours: a placeholder again where it was below the base */
void vd_holder_drop_fd(struct holder *h, int fd)
{
	int i = fd - (h->base - HOLD_OWN);

	if (i >= 0 && i < HOLD_OWN && dup3(h->nul, fd, O_CLOEXEC) == fd)
		h->spare[i] = true;
	else if (fd >= 0)
		close(fd);
}

static void park(struct holder *h, int fd, int32_t pid, uint64_t mask)
{
	if (h->npk == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct parked *n = cap <= HOLD_PARK_MAX ? realloc(h->pk, cap * sizeof(*n)) : NULL;

		if (!n) {
			/* no room to keep it waiting: denied, never allowed unseen */
			(void)vd_fan_answer(h->group, fd, false);
			close(fd);
			h->denied++;
			return;
		}
		h->pk = n;
		h->cap = cap;
	}
	h->pk[h->npk++] = (struct parked){ fd, pid, mask };
	h->parked++;
}

/* no monitor reads the group: we do (hold.h, step 3) */
void vd_holder_read_group(struct holder *h)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	const struct fanotify_event_metadata *m = (const void *)buf;
	ssize_t n = read(h->group, buf, sizeof(buf));

	for (; n > 0 && FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
		if (m->vers != FANOTIFY_METADATA_VERSION || m->fd < 0)
			continue;	/* FAN_REPORT_FD_ERROR: the kernel answered it */
		if (restart_needs(h, m->pid)) {
			(void)vd_fan_answer(h->group, m->fd, true);
			close(m->fd);
			h->allowed++;
		} else {
			park(h, m->fd, m->pid, vd_fan_ev_mask(m->mask));
		}
	}
}
