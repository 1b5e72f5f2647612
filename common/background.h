/* SPDX-License-Identifier: MIT */
/*
 * background.h - `--background` for the daemons started by hand or by an
 * init system without readiness notification (a script, sysvinit,
 * start-stop-daemon): the command returns only once the daemon can serve,
 * with status 0, or with the daemon's own exit status (2: a refused
 * setting, already said on stderr) if it stops before. A script can
 * then talk to it on the next line without a race.
 *
 * The parent forks and waits on a pipe; the child leaves the session
 * (setsid), takes /dev/null as stdin, keeps stdout and stderr, and goes
 * on with its start-up. vg_background_ready() (called where READY=1 is
 * sent) releases the parent. Call vg_background_start() before any thread
 * or helper process exists.
 */
#ifndef VIGIL_COMMON_BACKGROUND_H
#define VIGIL_COMMON_BACKGROUND_H

/*
 * Fork; in the parent, wait for readiness and exit (never returns); in
 * the child, return 0. Return: 0, or -errno (nothing forked) when the
 * pipe or the fork fails.
 */
int vg_background_start(void);

/* Tell a waiting parent that the daemon is ready (no-op without one). */
void vg_background_ready(void);

/*
 * In a process forked after vg_background_start() that will not say
 * "ready" (a helper process): let go of the pipe, so that the waiting
 * parent sees the end when the process that would say it stops.
 */
void vg_background_drop(void);

#endif
