// SPDX-License-Identifier: MIT
/*
 * holder.c - vigild --hold: the process that keeps the fanotify group
 * while the monitor restarts (hold.h says how the two work together).
 *
 * The holder is small on purpose: it opens no file on a filesystem vigild
 * watches after its start (only /proc, which no one marks), parses nothing
 * from outside but its own monitor's messages and the kernel's events,
 * and has one loop: signals, the monitor's channel and notify socket, and
 * the group while no monitor reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hold.h"
#include "holder_internal.h"
#include "monitor.h"
#include "notify.h"

#define HOLD_INTERVAL 10.0	/* ... before the holder gives up (the unit's own limit is 5 in 10 s) */
#define HOLD_CHILDREN_WAIT 2.0	/* s: for the dead monitor's appraisers to end */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U	/* Linux 6.3; Debian 12's headers predate it */
#endif

static void forward_note(struct holder *h)
{
	char buf[1024], out[1024];
	ssize_t n;

	while ((n = recv(h->note, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		size_t k = 0;

		buf[n] = 0;
		for (char *l = buf, *e; l && *l; l = e ? e + 1 : NULL) {
			size_t len;

			e = strchr(l, '\n');
			len = e ? (size_t)(e - l) : strlen(l);
			if (len >= 10 && strncmp(l, "WATCHDOG=1", 10) == 0) {
				h->beat = vd_now();
				if (h->watchdog <= 0)
					continue;	/* ours to keep: the service manager has none */
			}
			if (len >= 7 && strncmp(l, "READY=1", 7) == 0)
				h->ready = h->ever_ready = true;
			/* a monitor that ends is not the service stopping, unless we are */
			if (len >= 10 && strncmp(l, "STOPPING=1", 10) == 0 && !h->stopping)
				continue;
			if (k + len + 1 < sizeof(out)) {
				memcpy(out + k, l, len);
				k += len;
				out[k++] = '\n';
			}
		}
		if (k) {
			out[k - 1] = 0;
			(void)notify_send("%s", out);
		}
	}
}

static void spawn(struct holder *h)
{
	double t = vd_now();
	pid_t pid;

	if (h->nstarts == HOLD_BURST && t - h->starts[0] < HOLD_INTERVAL) {
		vlog_err("the monitor died %d times in %.0f s: the holder gives up, and the kernel allows "
		       "what waits (the service manager may start vigild again)", HOLD_BURST, HOLD_INTERVAL);
		exit(1);
	}
	if (h->nstarts == HOLD_BURST)
		memmove(h->starts, h->starts + 1, --h->nstarts * sizeof(h->starts[0]));
	h->starts[h->nstarts++] = t;
	pid = fork();
	if (pid < 0) {
		vlog_err("--hold: fork: %s", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		struct rlimit rl = { (rlim_t)h->base, (rlim_t)h->base };
		char fdv[16], nfdv[16], pidv[16];
		sigset_t all;
		int c = dup(h->chan_child), n = dup(h->note_child);	/* without O_CLOEXEC */

		if (c < 0 || n < 0 || setrlimit(RLIMIT_NOFILE, &rl) < 0 ||
		    prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != h->self)
			_exit(127);
		snprintf(fdv, sizeof(fdv), "%d", c);
		snprintf(nfdv, sizeof(nfdv), "%d", n);
		snprintf(pidv, sizeof(pidv), "%d", (int)getpid());
		if (setenv(HOLD_ENV_FD, fdv, 1) < 0 || setenv("VIGIL_NOTIFY_FD", nfdv, 1) < 0 ||
		    (getenv("WATCHDOG_USEC") && setenv("WATCHDOG_PID", pidv, 1) < 0))
			_exit(127);
		unsetenv("NOTIFY_SOCKET");
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		/* the binary's path: after a package upgrade, the new one (ours may be deleted) */
		if (h->exe[0] && access(h->exe, X_OK) == 0)
			execv(h->exe, h->argv);
		execv("/proc/self/exe", h->argv);
		_exit(127);
	}
	h->monitor = pid;
	h->ready = false;
	h->beat = t;
}

/* the monitor is gone: its appraisers next, then what it had read (hold.h, steps 1 and 2) */
static void after_death(struct holder *h, bool died)
{
	double until = vd_now() + HOLD_CHILDREN_WAIT;
	uint64_t denied = 0;
	pid_t p;

	while ((p = waitpid(-1, NULL, WNOHANG)) >= 0 && vd_now() < until)
		if (p == 0)
			usleep(2000);
	for (int no = 0; no < h->base; no++)
		if (vd_fan_answer(h->group, no, false) == 0)
			denied++;
	h->denied += denied;
	/* the parked events handed to it, not all answered: ours again, for the next one */
	h->handed = false;
	h->monitor_reads = false;
	h->restarts++;
	if (died)
		vlog(VLOG_WARNING, "the monitor died: %llu accesses it had not answered denied; accesses "
			  "wait for a new monitor (restart %llu)", (unsigned long long)denied,
			  (unsigned long long)h->restarts);
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void reap(struct holder *h)
{
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
		if (p != h->monitor)
			continue;	/* an appraiser of a dead monitor, ours since (subreaper) */
		h->monitor = 0;
		if (h->handing && !h->stopping) {
			vlog(VLOG_INFO, "the monitor (pid %d) drained for the service's restart", (int)p);
			after_death(h, false);
			vd_holder_bridge(h);
		}
		if (h->renewing && !h->stopping) {
			/* asked for (SIGUSR1: a package upgrade): as after a death, but no failure */
			h->renewing = false;
			vlog(VLOG_WARNING, "the monitor (pid %d) stopped to be renewed (%s %d): accesses wait "
				  "for the new one", (int)p, WIFEXITED(status) ? "exit status" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			after_death(h, false);
			spawn(h);
			continue;
		}
		if (h->stopping || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			vlog(VLOG_WARNING, "the monitor stopped: vigild no longer enforces");
			exit(h->stopping ? 0 : exit_code(status));
		}
		if (!h->ever_ready || h->group < 0) {
			/* refused at its start (exit 2: a setting), or died holding nothing yet */
			exit(exit_code(status));
		}
		vlog(VLOG_WARNING, "the monitor (pid %d) ended: %s %d", (int)p,
			  WIFEXITED(status) ? "exit status" : "signal",
			  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		after_death(h, true);
		spawn(h);
	}
}

static void on_message(struct holder *h)
{
	struct hold_msg m, r = { .type = HOLD_GROUP };
	int fd;

	if (vd_hold_recv(h->chan, &m, &fd) < 0)
		return;	/* its death is seen by SIGCHLD */
	switch (m.type) {
	case HOLD_HELLO:
		r.flags = (h->fd_error ? HOLD_FD_ERROR : 0) |
			  ((m.flags & HOLD_WANT_STATS) && h->stats >= 0 ? HOLD_HAS_STATS : 0);
		r.restarts = h->restarts;
		r.denied = h->denied;
		r.parked = h->npk;
		r.allowed = h->allowed;
		(void)vd_hold_send(h->chan, &r, h->group);
		if (r.flags & HOLD_HAS_STATS)
			(void)vd_hold_send(h->chan, &(struct hold_msg){ .type = HOLD_STATS }, h->stats);
		break;
	case HOLD_GROUP:
		if (h->group < 0 && fd >= 0) {
			h->group = vd_holder_own_fd(h, fd);
			h->fd_error = m.flags & HOLD_FD_ERROR;
			fd = -1;
		}
		break;
	case HOLD_TAKE:
		h->monitor_reads = true;	/* from here on the monitor reads; we no longer do */
		for (size_t i = 0; i < h->npk; i++) {
			struct hold_msg pm = { .type = HOLD_PARKED, .no = h->pk[i].fd, .pid = h->pk[i].pid,
					       .mask = h->pk[i].mask };

			(void)vd_hold_send(h->chan, &pm, h->pk[i].fd);
		}
		(void)vd_hold_send(h->chan, &(struct hold_msg){ .type = HOLD_END }, -1);
		h->handed = true;
		break;
	case HOLD_RELEASE:
		/*
		 * The monitor ends (stopped, or a failure of its own): what it
		 * still opens on its way out (its metrics file, a reload's
		 * policy) is an event no one else would read. Its own are
		 * allowed, the rest wait as after a death.
		 */
		h->monitor_reads = false;
		break;
	case HOLD_DONE:
		if (h->handed) {
			for (size_t i = 0; i < h->npk; i++)
				close(h->pk[i].fd);
			h->npk = 0;
			h->handed = false;
		}
		break;
	default:
		break;
	}
	if (fd >= 0)
		close(fd);
}

/* SIGTERM, SIGINT: a restart of the service hands the group on (hold.h), anything else ends */
static void stop(struct holder *h)
{
	char why[256];
	int r = h->handoff && h->group >= 0 ? vd_handoff_restarting(why, sizeof(why)) : 0;

	if (r > 0) {
		h->handing = true;
		vlog(VLOG_INFO, "the service restarts (%s): the monitor drains; the group is kept for the "
			  "new vigild", why);
		if (!h->monitor)
			vd_holder_bridge(h);
		kill(h->monitor, SIGTERM);
		return;
	}
	if (h->handoff && h->group >= 0)
		vlog(VLOG_WARNING, "stopped (%s): vigild ends enforcement", why);
	h->stopping = true;
	if (!h->monitor)
		exit(0);
	kill(h->monitor, SIGTERM);
}

static void on_signal(struct holder *h)
{
	struct signalfd_siginfo si;

	while (read(h->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap(h);
		} else if (si.ssi_signo == SIGHUP) {
			if (h->monitor)
				kill(h->monitor, SIGHUP);
		} else if (si.ssi_signo == SIGUSR1) {
			/* renew: the monitor drains and ends, a new one from the binary's path takes over */
			if (h->monitor && h->ready && !h->renewing) {
				h->renewing = true;
				kill(h->monitor, SIGTERM);
			}
		} else if (!h->stopping && !h->handing) {
			stop(h);
		}
	}
}

/* the service manager's watchdog: ours to answer, the monitor's loop ours to watch */
static void watchdog(struct holder *h)
{
	double t = vd_now(), period = h->watchdog > 0 ? h->watchdog : 0;

	if (h->monitor && h->ready && period > 0 && t - h->beat > period) {
		vlog_err("the monitor's loop stopped turning (no WATCHDOG=1 for %.1f s): killed", t - h->beat);
		kill(h->monitor, SIGKILL);
		h->ready = false;
	}
	if (period > 0 && t >= h->next_ping) {
		(void)notify_send("WATCHDOG=1");
		h->next_ping = t + period / 4;
	}
}

int vd_holder_main(int argc, char **argv, const char *handoff)
{
	static struct holder hh;
	struct holder *h = &hh;
	int sp[2], np[2], r;
	sigset_t mask;

	(void)argc;
	h->argv = argv;
	h->handoff = handoff;
	h->group = -1;
	h->self = getpid();
	if ((r = vd_holder_fill(h)) < 0) {
		if (r != -EMFILE)
			vlog_err("--hold: %s", strerror(-r));
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, np) < 0) {
		vlog_err("--hold: %s", strerror(errno));
		return 2;
	}
	/* ours, below the base (fill_below_base) */
	h->chan = vd_holder_own_fd(h, sp[0]);
	h->chan_child = vd_holder_own_fd(h, sp[1]);
	h->note = vd_holder_own_fd(h, np[0]);
	h->note_child = vd_holder_own_fd(h, np[1]);
	if (h->chan < 0 || h->chan_child < 0 || h->note < 0 || h->note_child < 0) {
		vlog_err("--hold: no descriptor left below the base for our own");
		return 2;
	}
	{
		ssize_t n = readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);

		h->exe[n > 0 && h->exe[0] == '/' ? n : 0] = 0;
		if (strstr(h->exe, " (deleted)"))
			h->exe[0] = 0;
	}
	vd_holder_cgroup_of(h->self, h->cgroup, sizeof(h->cgroup));
	if (!vd_holder_ends_with(h->cgroup, ".service"))
		h->cgroup[0] = 0;	/* a shell's or a test's: not ours alone */
	h->watchdog = notify_watchdog_s();
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	h->sigfd = vd_holder_own_fd(h, signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
	signal(SIGPIPE, SIG_IGN);
	if (h->sigfd < 0) {
		vlog_err("--hold: signalfd: %s", strerror(errno));
		return 2;
	}
	h->stats = memfd_create("vigild-counters", MFD_CLOEXEC | MFD_NOEXEC_SEAL);
	if (h->stats < 0 && errno == EINVAL)	/* Linux before 6.3: no MFD_NOEXEC_SEAL */
		h->stats = memfd_create("vigild-counters", MFD_CLOEXEC);
	if (h->stats >= 0 && ftruncate(h->stats, HOLD_STATS_BYTES) < 0) {
		close(h->stats);
		h->stats = -1;
	}
	h->stats = vd_holder_own_fd(h, h->stats);
	if (h->stats < 0)
		vlog_err("--hold: the counters' memory: %s: each monitor counts from zero", strerror(errno));
	if (h->handoff && (r = vd_holder_take_over(h)) < 0)
		vlog_err("--handoff %s: %s: a group of our own instead", h->handoff, strerror(-r));
	spawn(h);
	for (;;) {
		struct pollfd p[4] = {
			{ .fd = h->sigfd, .events = POLLIN },
			{ .fd = h->chan, .events = POLLIN },
			{ .fd = h->note, .events = POLLIN },
			{ .fd = h->group >= 0 && !h->monitor_reads ? h->group : -1,
			  .events = POLLIN },
		};
		int timeout = h->watchdog > 0 ? (int)(h->watchdog * 250) : -1;

		watchdog(h);
		if (poll(p, 4, timeout) < 0 && errno != EINTR) {
			vlog_err("--hold: poll: %s", strerror(errno));
			return 1;
		}
		if (p[2].revents & POLLIN)
			forward_note(h);
		if (p[1].revents & POLLIN)
			on_message(h);
		if (p[0].revents & POLLIN)
			on_signal(h);
		if ((p[3].revents & POLLIN) && !h->monitor_reads)
			vd_holder_read_group(h);
	}
}
