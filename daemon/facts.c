// SPDX-License-Identifier: MIT
/*
 * facts.c - what the monitor reads of an access from /proc when it needs
 * it, and no sooner: a descriptor's or an executable's name (a link's
 * target), the event's path, the opener's credentials. Called by the
 * intake (events.c) and by those that record an event (audit.c,
 * commit.c, verdict.c, pool.c, names.c); it calls nothing of vigild.
 * procfs is never marked: none of these reads raises an event.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor.h"

char *vd_readlink(const char *link)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

const char *vd_ev_path(struct ev *e)
{
	if (!e->path && e->fd >= 0) {
		char link[64];

		snprintf(link, sizeof(link), "/proc/self/fd/%d", e->fd);
		e->path = vd_readlink(link);
	}
	return e->path ? e->path : "?";
}

bool vd_task_creds(pid_t pid, struct vg_access *a)
{
	char path[64], line[256];
	bool uids = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned int r, e, s;

		if (sscanf(line, "Uid:\t%u\t%u\t%u", &r, &e, &s) == 3) {
			a->uid = r;
			a->euid = e;
			a->suid = s;
			uids = true;
		} else if (sscanf(line, "Gid:\t%u\t%u\t%u", &r, &e, &s) == 3) {
			a->gid = r;
			a->egid = e;
			a->sgid = s;
			break;
		}
	}
	fclose(f);
	return uids;
}
