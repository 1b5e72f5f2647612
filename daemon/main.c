// SPDX-License-Identifier: MIT
/*
 * main.c - vigild, the integrity hooks: fanotify permission events at
 * exec and open, decided by policy (measure, appraise, audit, IBAC access
 * rules).
 *
 * This file is the monitor's setup and its loop (monitor.h explains the
 * split into files, vigild.h the split into processes): one thread polls
 * the fanotify group, the appraisers' sockets, the control socket and a
 * signalfd, and answers every event. It never opens a file while events
 * may be pending: files are opened before the marks are placed (names.c
 * opens a watched directory, which raises no event, and a file by its
 * handle O_PATH, which raises none either). Started
 * as `vigild --appraiser FD`, the same binary is an appraiser (worker.c).
 *
 * Start: every setting is checked first (startup.c, reload.c), then the
 * lock, the TPM, the key, the control socket, the appraisers (each
 * waited for), the log, the audit file and the marks are taken; only then
 * READY=1 (notify.h). A refusal exits 2 and leaves nothing behind.
 * Exit statuses: 0 stopped by a signal; 2 refused at start (or a broken
 * loop); VD_EXIT_CRASHLOOP appraisers died before serving
 * VD_START_TRIES times in a row after ready.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "background.h"
#include "hold.h"
#include "monitor.h"
#include "notify.h"

/* an error unless said otherwise (vd_log_at): common/log.h */
void vd_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogv(VLOG_ERR, fmt, ap);
	va_end(ap);
}

void vd_log_at(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogv(prio, fmt, ap);
	va_end(ap);
}

static int setup_log(struct vd *d)
{
	struct vg_mlog_opts mo = { 0 };
	struct vg_mlog_recovery rec;
	struct vg_diag dg = { 0 };

	if (!d->log_path)
		return 0;
	if (d->no_tpm) {
		char bank[PATH_MAX];

		snprintf(bank, sizeof(bank), "%s.pcrs", d->log_path);
		if (vg_pcrbank_open(bank, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256, &d->bank, &dg) < 0) {
			vd_log("%s", dg.msg);
			return -1;
		}
		mo.ops = &vg_pcrbank_ops;
		mo.ops_ctx = d->bank;
		mo.pcr_sync = vg_pcrbank_sync_cb;
	} else {
		mo.ops = &vg_tpm_pcr_ops;
		mo.ops_ctx = d->tpm;
	}
	if (vg_mlog_open(d->log_path, &mo, &d->mlog, &rec, &dg) < 0) {
		vd_log("measurement log %s: %s", d->log_path, dg.msg);
		return -1;
	}
	d->measurements = vg_mlog_entries(d->mlog);
	if (vd_announce_setup(d) < 0)
		return -1;
	return vd_commit_start(d);
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
		vd_log_at(d->st.before_failed ? VLOG_WARNING : VLOG_INFO, "%lu processes were running "
			  "before vigild: %llu of their programs failed their appraisal (audited as "
			  "ran-before-ready)", procs, (unsigned long long)d->st.before_failed);
	if (d->foreground)
		fputs("vigild: ready\n", stderr);
	if (d->mounts_dirty) {
		d->mounts_dirty = false;
		vd_marks_reconcile(d);
	}
}

static void drain(struct vd *d)
{
	double until = vd_now() + d->timeout_ms / 1000.0;

	while (d->npending && vd_now() < until) {
		struct pollfd p[MAX_WORKERS + 1];
		unsigned int n = d->nworkers;

		vd_dispatch(d);
		for (unsigned int i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = d->w[i].dead ? -1 : d->w[i].sock, .events = POLLIN };
		p[n] = (struct pollfd){ .fd = d->commit_fd, .events = POLLIN };
		if (poll(p, n + 1, 100) > 0) {
			for (unsigned int i = 0; i < n; i++)
				if (p[i].revents)
					vd_pool_reply(d, (int)i);
			if (p[n].revents)
				vd_commit_done(d);
		}
	}
	for (int i = 0; i < d->ev_hi; i++)
		if (d->ev[i].used && d->ev[i].leader < 0)
			vd_fail_group(d, i, "shutdown");
}

/* what the loop's epoll set tells apart (epoll_event.data.u32) */
enum { LOOP_FAN, LOOP_SIG, LOOP_CTL, LOOP_RELOAD, LOOP_NOTIF, LOOP_COMMIT, LOOP_SIDE, LOOP_MOUNTS,
       LOOP_WORKER };

int vd_loop_add_worker(struct vd *d, int w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LOOP_WORKER + (uint32_t)w };

	if (d->ep < 0)
		return 0;	/* the loop has not started: it adds the living ones itself */
	return epoll_ctl(d->ep, EPOLL_CTL_ADD, d->w[w].sock, &ev) == 0 ? 0 : -errno;
}

void vd_loop_del_worker(struct vd *d, int w)
{
	if (d->ep >= 0)
		(void)epoll_ctl(d->ep, EPOLL_CTL_DEL, d->w[w].sock, NULL);
}

/* The loop's epoll set: one registration per descriptor for the daemon's life. Return: 0, -1. */
static int loop_setup(struct vd *d)
{
	const struct {
		int fd;
		uint32_t tag;
	} fixed[] = { { d->fan, LOOP_FAN }, { d->sigfd, LOOP_SIG }, { d->ctl, LOOP_CTL },
		      { d->reload_pipe[0], LOOP_RELOAD }, { d->notif, LOOP_NOTIF },
		      { d->commit_fd, LOOP_COMMIT }, { d->side_fd, LOOP_SIDE }, { d->mnt_watch, LOOP_MOUNTS } };

	d->ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->ep < 0) {
		vd_log("epoll_create1: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		/* mountinfo says a change with POLLPRI (fanotify's mount events with POLLIN) */
		struct epoll_event ev = { .events = fixed[i].tag == LOOP_MOUNTS && !d->mnt_events ? EPOLLPRI : EPOLLIN,
					  .data.u32 = fixed[i].tag };

		if (fixed[i].fd >= 0 && epoll_ctl(d->ep, EPOLL_CTL_ADD, fixed[i].fd, &ev) < 0) {
			vd_log("epoll_ctl: %s", strerror(errno));
			return -1;
		}
	}
	for (unsigned int w = 0; w < d->nworkers; w++)
		if (!d->w[w].dead && vd_loop_add_worker(d, (int)w) < 0) {
			vd_log("epoll_ctl: %s", strerror(errno));
			return -1;
		}
	return 0;
}

/*
 * The service manager's watchdog ($WATCHDOG_USEC, the unit's WatchdogSec=):
 * WATCHDOG=1 from the loop, at least twice a period. A loop that stops
 * turning (a wait it must never make) stops it, and systemd ends vigild
 * (WatchdogSignal=SIGKILL) and starts it again instead of showing it
 * running while every watched access waits.
 */
static void watchdog_setup(struct vd *d)
{
	double period = notify_watchdog_s();

	if (period <= 0)
		return;
	d->watchdog_s = period / 2;
	vd_log_at(VLOG_INFO, "watchdog: every %.1f s", d->watchdog_s);
}

static void watchdog_tick(struct vd *d)
{
	double now;

	if (d->watchdog_s <= 0)
		return;
	now = vd_now();
	if (now >= d->watchdog_next) {
		(void)notify_send("WATCHDOG=1");
		d->watchdog_next = now + d->watchdog_s;
	}
}

static int run(struct vd *d)
{
	if (loop_setup(d) < 0)
		return -1;
	/* from here on the loop reads the group: what waited in the holder first */
	if (vd_held_take(d) < 0)
		return -1;
	watchdog_setup(d);
	for (;;) {
		struct epoll_event evs[8 + MAX_WORKERS];
		bool ready[LOOP_WORKER] = { false };
		uint32_t workers = 0;
		int n, timeout = d->npending ? 50 : 1000;

		if (d->watchdog_s > 0 && timeout > (int)(d->watchdog_s * 1000))
			timeout = (int)(d->watchdog_s * 1000);
		watchdog_tick(d);
		vd_held_save(d);
		vd_metrics_tick(d);
		vd_lease_expire(d);

		n = epoll_wait(d->ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout);
		if (n < 0 && errno != EINTR) {
			vd_log("epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			uint32_t tag = evs[i].data.u32;

			if (tag >= LOOP_WORKER)
				workers |= 1u << (tag - LOOP_WORKER);
			else
				ready[tag] = true;
		}
		/* attribute changes first: no event may be skipped on a stale mark */
		if (ready[LOOP_NOTIF])
			vd_fan_flush_ignores(d);
		/* lease breaks before events: a writer waits on each */
		if (ready[LOOP_SIG]) {
			struct signalfd_siginfo si;

			while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (d->lease_sig && si.ssi_signo == (uint32_t)d->lease_sig) {
					vd_lease_broken(d, si.ssi_fd);
				} else if (si.ssi_signo == SIGIO) {
					vd_lease_rescan(d);
				} else if (si.ssi_signo == SIGHUP) {
					vd_reload_start(d);
				} else if (si.ssi_signo == SIGUSR1) {
					vd_log_at(VLOG_WARNING, "SIGUSR1 renews the monitor under --hold (vigild.hold "
						  "= yes) only: ignored; `systemctl restart vigild` runs a new binary, "
						  "with a window");
#ifdef VIGILD_TEST_HOOKS
				} else if (si.ssi_signo == SIGUSR2) {
					/* the test build: what the loop must never do, on demand (t0714) */
					const char *f = getenv("VIGILD_TEST_LOOP_OPEN");
					int fd = f ? open(f, O_RDONLY | O_CLOEXEC) : -1;

					if (fd >= 0)
						close(fd);
#endif
				} else if (si.ssi_signo == SIGCHLD) {
					pid_t pid;
					int status;

					while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
						vd_pool_reaped(d, pid, status);
				} else {
					vd_log_at(VLOG_INFO, "signal %d: draining and exiting", (int)si.ssi_signo);
					(void)notify_send("STOPPING=1");
					d->stopping = true;
					drain(d);
					return 0;
				}
			}
		}
		if (ready[LOOP_FAN])
			vd_fan_read(d);
		for (unsigned int i = 0; i < d->nworkers; i++)
			if ((workers & (1u << i)) && !d->w[i].dead)
				vd_pool_reply(d, (int)i);
		if (ready[LOOP_CTL])
			vd_control(d);
		if (ready[LOOP_RELOAD])
			vd_reload_done(d);
		if (ready[LOOP_COMMIT])
			vd_commit_done(d);
		if (ready[LOOP_SIDE])
			vd_side_events(d);
		if (ready[LOOP_MOUNTS]) {
			/* not while the running programs are judged: the marks are read there */
			if (d->ready)
				vd_marks_reconcile(d);
			else
				d->mounts_dirty = true;
			if (!d->ready)
				vd_fan_mnt_drain(d);
		}
		if (d->npending)
			vd_pool_timeouts(d);
		vd_dispatch(d);
		if (d->fatal) {
			(void)notify_send("STOPPING=1\nSTATUS=appraisers cannot start: stopping");
			d->stopping = true;
			drain(d);
			return d->fatal;
		}
	}
}

/* What main() took, given back in reverse: also after a refusal at start. */
static void teardown(struct vd *d)
{
	vd_held_save(d);
	vd_held_release(d);	/* first: under --hold the group outlives what follows */
	/* an appraiser may be in the middle of a long hash: it holds nothing to save */
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (d->w[i].pid > 0 && !d->w[i].dead) {
			close(d->w[i].sock);
			kill(d->w[i].pid, SIGKILL);
			waitpid(d->w[i].pid, NULL, 0);
		}
	for (unsigned int i = 0; i < d->nreload_waiters; i++)
		close(d->reload_waiters[i]);
	if (d->fan >= 0)
		close(d->fan);	/* first: a reload thread may wait on its own open's event */
	vd_commit_stop(d);	/* after the group is gone: the writer may wait on an open */
	vd_marks_free(d);	/* the sides' groups, and threads left behind */
	vd_metrics_final(d);	/* after the group is gone: it opens a file */
	if (d->reloading)
		pthread_join(d->reload_tid, NULL);
	if (d->ctl >= 0)
		close(d->ctl);
	free(d->log_real);
	if (d->audit >= 0)
		close(d->audit);
	if (d->ep >= 0)
		close(d->ep);
	if (d->side_fd >= 0)
		close(d->side_fd);
	if (d->mnt_watch >= 0)
		close(d->mnt_watch);
	vg_hmac_key_wipe(&d->key);
	vg_hmac_key_wipe(&d->trust_key);
	if (!d->left_behind) {	/* a thread left behind may still use them */
		vg_mlog_free(d->mlog);
		vg_pcrbank_free(d->bank);
		vg_tpm_close(d->tpm);
	}
	vg_policy_unref(d->policy);
	vd_trust_free(d->trust);
	if (d->cache)
		vd_cache_clear(d);
	vd_table_free(d->cache, CACHE_CAP * sizeof(*d->cache));
	vd_table_free(d->measured, CACHE_CAP * sizeof(*d->measured));
	vd_table_free(d->lease, LEASE_CAP * sizeof(*d->lease));
	free(d->worker_args);
	vg_config_release(&d->cfg);
	vd_lock_release(d);
	notify_close();
}

int main(int argc, char **argv)
{
	static struct vd vd;
	struct vd *d = &vd;
	struct vg_diag dg = { 0 };
	char msg[640];
	sigset_t mask;
	int rc = 2, r;

	vlog_init("vigild");
	if (argc >= 3 && strcmp(argv[1], "--appraiser") == 0) {
		int sock = atoi(argv[2]);

		return vd_worker_main(sock, argc - 2, argv + 2);
	}
	d->fan = d->sigfd = d->ctl = d->audit = d->notif = d->lock_fd = d->ep = d->commit_fd = -1;
	d->side_fd = d->mnt_watch = d->mounts.fd = d->holder = -1;
	d->hold = -1;
	d->self = getpid();
#ifdef VIGILD_TEST_HOOKS
	/* the test build, as on a kernel without these features (Debian 12's 6.1) */
	d->no_fd_error = getenv("VIGILD_TEST_NO_FD_ERROR") != NULL;
	d->test_no_memfd_noexec = getenv("VIGILD_TEST_NO_MEMFD_NOEXEC") != NULL;
	d->test_no_mnt_events = getenv("VIGILD_TEST_NO_MNT_EVENTS") != NULL;
#endif
	d->cpus_many = sched_getaffinity(0, sizeof(d->cpus), &d->cpus) == 0 && CPU_COUNT(&d->cpus) > 1;
	vg_config_init(&d->cfg);
	if (vd_args_parse(d, argc, argv) < 0 || vd_args_appraiser_user(d) < 0)
		return 2;
	if (d->background) {
		r = vg_background_start();	/* READY=1 (notify.c) releases the parent */
		if (r < 0) {
			vd_log("--background: %s", strerror(-r));
			return 2;
		}
		d->self = getpid();
	}
	r = notify_open();
	if (r < 0)
		vd_log("$NOTIFY_SOCKET %s: %s: readiness cannot be reported", getenv("NOTIFY_SOCKET"),
		       strerror(-r));
	/* every setting, before anything is taken (nothing to undo) */
	if (vg_config_load(&d->cfg, d->config ? d->config : VG_CONFIG_DEFAULT, !d->config, &dg) < 0) {
		vd_log("config: %s", dg.msg);
		goto out;
	}
	d->algo = d->cfg.algo;
	if (!d->tcti)
		d->tcti = d->cfg.tcti;
	if (vd_args_config(d) < 0 || vd_journal_setup(d) < 0)
		goto out;
	r = d->close_gaps ? 0 : vd_held_open(d);
	if (r < 0)
		goto out;
	if (r == 0 && d->hold && !d->close_gaps) {
		/* --hold: this process keeps the group; the monitor is its child (hold.h) */
		vg_config_release(&d->cfg);
		return vd_holder_main(argc, argv, d->handoff);
	}
	if (d->close_gaps) {
		/* the unit's ExecStartPre=+, with ExecStart's options: the sysctls, and nothing else */
		if (vd_policy_load(d, &d->policy, msg, sizeof(msg)) < 0) {
			vd_log("policy refused: %s", msg);
			goto out;
		}
		rc = vd_gaps_close(d) < 0 ? 2 : 0;
		goto out;
	}
	if (vd_watch_check(d) < 0 || vd_proc_check() < 0 || vd_keyrings_check(d) < 0)
		goto out;
	if (vd_policy_load(d, &d->policy, msg, sizeof(msg)) < 0) {
		vd_log("policy refused: %s", msg);
		goto out;
	}
	vd_policy_unenforced_log(d->policy, d->policy_path, vd_log);
	if (vd_outputs_check(d) < 0)
		goto out;
	vd_loaders_init(&d->loaders, d->loader_paths, d->nloader_paths);	/* --loader checked above */
	vd_policy_facts(d, d->policy);
	vd_policy_digest(d->policy, d->policy_digest);
	d->cache = vd_table_alloc(CACHE_CAP * sizeof(*d->cache));
	d->measured = vd_table_alloc(CACHE_CAP * sizeof(*d->measured));
	for (size_t i = 0; i < UQ_CAP; i++)
		d->uq[i].head = d->uq[i].tail = -1;
	vd_lease_setup(d);
	if (!d->cache || !d->measured || !d->lease) {
		vd_log("out of memory");
		goto out;
	}
	/* then what is taken, in an order that leaves nothing behind on a refusal */
	if (vd_lock_take(d) < 0 || vd_tpm_setup(d) < 0 || vd_keys_setup(d) < 0)
		goto out;
	/* trust=archive's database, with the key just loaded; no mark is set yet */
	if (vd_trust_load(d, d->policy, &d->trust, msg, sizeof(msg)) < 0) {
		vd_log("%s", msg);
		goto out;
	}
	if (d->trust)
		vd_log_at(VLOG_INFO, "trust database %s: %zu files (%s)", vd_trust_db_path(d),
			  vg_trust_index_count(d->trust->idx), vg_hash_name(d->trust->algo));
	if (vd_control_setup(d) < 0)
		goto out;
	if (pipe2(d->reload_pipe, O_CLOEXEC) < 0)
		goto out;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGIO);
	sigaddset(&mask, SIGUSR1);	/* the holder's renewal (--hold); without one, said and ignored */
#ifdef VIGILD_TEST_HOOKS
	sigaddset(&mask, SIGUSR2);
#endif
	if (d->lease_sig)
		sigaddset(&mask, d->lease_sig);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	if (vd_fan_init(d) < 0 || vd_pool_start(d) < 0)
		goto out;
	/*
	 * The monitor keeps the key (locked in memory, out of core dumps) for
	 * the appraisers it starts later: one that replaces a dead or killed
	 * appraiser, anyone can provoke that, must not come up without it and
	 * let HMAC labels go unchecked. The monitor is root and holds the TPM
	 * that unseals it anyway; it never reads file content.
	 */
	(void)mlock(&d->key, sizeof(d->key));
	(void)mlock(&d->trust_key, sizeof(d->trust_key));
	(void)madvise((void *)((uintptr_t)&d->key & ~(uintptr_t)4095), 4096, MADV_DONTDUMP);
	if (setup_log(d) < 0)
		goto out;
	if (d->audit_path) {
		d->audit = open(d->audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (d->audit < 0) {
			vd_log("audit file %s: %s", d->audit_path, strerror(errno));
			goto out;
		}
	}
	if (vd_side_setup(d) < 0 || vd_fan_setup(d) < 0 || vd_gaps_check(d) < 0)
		goto out;
	/* the programs already running are judged before ready, while the loop answers */
	if (vd_held_give(d) < 0)
		goto out;
	if (!d->loaders.policy_execs || vd_before_start(d) < 0)
		vd_ready(d);
	r = run(d);
	rc = r < 0 ? 2 : r;
	(void)notify_send("STOPPING=1");
out:
	teardown(d);
	if (d->left_behind) {
		/*
		 * A thread waits on a FUSE server or a TPM that never answers: no
		 * exit handlers (a leak checker would wait for it to stop, for ever).
		 */
		fflush(NULL);
		_exit(rc);
	}
	return rc;
}
