// SPDX-License-Identifier: MIT
/*
 * before.c - the programs that were running when vigild started.
 *
 * vigild cannot deny what already runs, but it can say what it is: before
 * it reports ready, the program of every process (/proc/PID/exe) on a
 * filesystem it watches is judged as the exec it was, once per file
 * version: measured into the list where the policy measures execs, and
 * appraised where it appraises them. One that fails is audited
 * ("ran-before-ready", with the reason) and counted, not denied: there is
 * nothing left to deny. `vigil status` says how many processes predate
 * vigild and how many of their programs failed.
 *
 * The scan runs on a thread while the loop already answers (it opens
 * every program, /proc/PID/exe, and so raises events on the watched
 * filesystems: vigild's own, which the loop allows). Each program goes to
 * the loop as an event of its own that no kernel waits on (events.c:
 * vd_origin.before); the loop says READY=1 once the last is decided.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor.h"
#include "notify.h"

struct seen {
	dev_t dev;
	ino_t ino;
	int64_t mtime, ctime;
	off_t size;
};

static bool seen_before(struct seen *s, size_t n, const struct stat *st)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].dev == st->st_dev && s[i].ino == st->st_ino && s[i].size == st->st_size &&
		    s[i].mtime == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec &&
		    s[i].ctime == (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec)
			return true;
	return false;
}

static void *scan_main(void *arg)
{
	struct vd *d = arg;
	DIR *proc = opendir("/proc");
	struct dirent *de;
	struct seen *seen = NULL;
	size_t nseen = 0, cap = 0;

	while (proc && (de = readdir(proc))) {
		char *end, link[64];
		long pid = strtol(de->d_name, &end, 10);
		struct stat st;
		int fd;

		if (*end || pid <= 0 || pid == d->self)
			continue;
		snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
		/* a kernel thread has no program; one on a slow filesystem is not looked at here */
		if (vd_stat_nowait(link, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		atomic_fetch_add(&d->before_procs, 1);
		if (!vd_before_wanted(d, st.st_dev) || seen_before(seen, nseen, &st))
			continue;
		fd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (nseen == cap) {
			struct seen *g = realloc(seen, (cap ? cap * 2 : 256) * sizeof(*g));

			if (!g) {
				close(fd);
				break;
			}
			seen = g;
			cap = cap ? cap * 2 : 256;
		}
		seen[nseen++] = (struct seen){ st.st_dev, st.st_ino,
					       (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
					       (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
					       st.st_size };
		vd_side_push_before(d, fd, (pid_t)pid, &st);
	}
	if (proc)
		closedir(proc);
	free(seen);
	vd_side_push_before(d, -1, 0, NULL);	/* the end */
	return NULL;
}

int vd_before_start(struct vd *d)
{
	pthread_t t;

	d->before_pending = 1;	/* the end marker; each program adds one until it is decided */
	if (pthread_create(&t, NULL, scan_main, d) != 0) {
		vlog_err("cannot start the scan of running programs: %s", strerror(errno));
		return -1;
	}
	pthread_detach(t);
	return 0;
}

bool vd_before_wanted(const struct vd *d, dev_t dev)
{
	const struct vd_mark *m = NULL;

	/* the marks table is not changed while the scan runs: the loop reconciles after ready */
	for (size_t i = 0; i < d->nmarks; i++)
		if (d->marks[i].dev == dev)
			m = &d->marks[i];
	return m && m->cls == VD_FS_LOCAL;
}

/* READY=1 once the scan ended and every program it handed over is decided (main.c). */
static void maybe_ready(struct vd *d)
{
	if (d->before_pending == 0 && !d->ready)
		vd_ready(d);
}

void vd_before_done(struct vd *d)
{
	d->before_pending--;
	maybe_ready(d);
}

void vd_before_released(struct vd *d)
{
	d->before_pending--;
	maybe_ready(d);
}

void vd_ready(struct vd *d)
{
	unsigned long procs = atomic_load(&d->before_procs);

	d->ready = true;
	(void)notify_send("READY=1\nSTATUS=%s: %zu policy rules, %zu marks, %u appraisers%s",
			  vd_ctl_mode_names[d->mode], vg_policy_count(d->policy), d->nmarks, d->nworkers,
			  d->log_path ? (d->no_tpm ? ", measuring (software PCR bank, not attestable)"
						: ", measuring (TPM)") : "");
	if (procs)
		vlog(d->st.before_failed ? VLOG_WARNING : VLOG_INFO, "%lu processes were running "
			  "before vigild: %llu of their programs failed their appraisal (audited as "
			  "ran-before-ready)", procs, (unsigned long long)d->st.before_failed);
	if (d->foreground)
		fputs("vigild: ready\n", stderr);
	if (d->mounts_dirty) {
		d->mounts_dirty = false;
		vd_marks_reconcile(d);
	}
}
