// SPDX-License-Identifier: MIT
/*
 * metrics.c - vigild's --metrics-file: the counters of the status answer
 * (control.c) in the Prometheus text format (common/vigild_prom.c, the
 * same text as `vigil status --prometheus`), for node_exporter's textfile
 * collector. vigild's unit has no network: there is no listener.
 *
 * The file is replaced whole (libvigil's outfile: a temporary beside it,
 * fsync, rename), so a scrape never reads half of it. It is written once
 * before the marks are placed (a path that cannot be written stops the
 * start, exit 2: main.c calls it right before the marks), then every METRICS_PERIOD
 * seconds, and once more at exit after the fanotify group is closed. While marks are in place the
 * monitor never opens a file itself (the file may be on a marked
 * filesystem, and the monitor would wait on its own permission event):
 * it formats the text in memory and a short-lived thread writes it,
 * whose opens the loop answers like any own-process event (reload.c
 * does the same for the policy). One writer at a time; its state is the
 * file-scope `writer`, since there is one monitor per process.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>

#include "monitor.h"
#include "setup.h"
#include "vigil/outfile.h"
#include "vigild_prom.h"

#define METRICS_PERIOD 5.0

static struct {
	pthread_t thread;
	bool running;		/* started and not joined yet */
	atomic_bool done;	/* the thread has finished */
	const char *path;
	char *buf;
	size_t len;
} writer;

/* the exposition text for @d, in a malloc'ed buffer. Return: 0 or -1 (no memory). */
static int format(struct vd *d, char **ret, size_t *ret_len)
{
	static struct vd_ctl_unenforced rules[VD_CTL_MAX_UNENFORCED];
	struct vd_ctl_status s;
	json_object *o = vd_control_status(d);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r = -1;

	if (o && f) {
		/* the answer `vigil status` decodes: one path from counters to text */
		vd_ctl_status_decode(o, &s, rules, VD_CTL_MAX_UNENFORCED);
		r = vd_ctl_prometheus(&s, f);
	}
	if (f && fclose(f) != 0)
		r = -1;
	json_object_put(o);
	if (r < 0) {
		free(buf);
		vlog_err("--metrics-file %s: out of memory", d->metrics_path);
		return -1;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

static int put(const char *path, const char *buf, size_t len)
{
	struct vg_diag dg = { 0 };

	if (vg_outfile_put(path, buf, len, 0644, 0, &dg) < 0) {
		vlog_err("--metrics-file %s: %s", path, dg.msg);
		return -1;
	}
	/* counters are not secret, and the unit's UMask=0077 would hide them from
	 * node_exporter (another user): readable by all, whatever the umask */
	(void)chmod(path, 0644);
	return 0;
}

static void *writer_main(void *arg)
{
	(void)arg;
	(void)put(writer.path, writer.buf, writer.len);
	atomic_store(&writer.done, true);
	return NULL;
}

static void writer_join(void)
{
	if (!writer.running)
		return;
	pthread_join(writer.thread, NULL);
	writer.running = false;
	free(writer.buf);
	writer.buf = NULL;
}

int vd_metrics_write(struct vd *d)
{
	char *buf;
	size_t len;
	int r;

	if (!d->metrics_path)
		return 0;
	writer_join();
	if (format(d, &buf, &len) < 0)
		return -1;
	r = put(d->metrics_path, buf, len);
	free(buf);
	if (r == 0)
		d->metrics_next = vd_now() + METRICS_PERIOD;
	return r;
}

void vd_metrics_final(struct vd *d)
{
	if (d->metrics_path && d->metrics_next > 0)
		(void)vd_metrics_write(d);
}

void vd_metrics_tick(struct vd *d)
{
	if (!d->metrics_path || vd_now() < d->metrics_next)
		return;
	if (writer.running) {
		if (!atomic_load(&writer.done))
			return;		/* still writing (a slow disk): try again next round */
		writer_join();
	}
	d->metrics_next = vd_now() + METRICS_PERIOD;
	if (format(d, &writer.buf, &writer.len) < 0)
		return;
	writer.path = d->metrics_path;
	atomic_store(&writer.done, false);
	if (pthread_create(&writer.thread, NULL, writer_main, NULL) != 0) {
		vlog_err("--metrics-file %s: cannot start its writer thread", d->metrics_path);
		free(writer.buf);
		writer.buf = NULL;
		return;
	}
	writer.running = true;
}
