// SPDX-License-Identifier: MIT
/*
 * pool.c - the appraiser processes seen from the monitor: starting one
 * (fork, then exec of vigild --appraiser with the init message carrying
 * the HMAC key), sending it a request with the event's descriptor,
 * checking its fixed-size replies, deadlines (an appraiser that overruns
 * is killed and replaced) and death (its events get the fail action).
 *
 * An appraiser has started when its hello arrives (vigild.h): at start the
 * monitor waits for every one before it says it is ready; later, one that
 * dies before its hello counts towards VD_START_TRIES deaths in a row,
 * after which vigild stops (a crash loop replaced appraisers some 70 times
 * a second, for ever).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "appraisers.h"
#include "monitor.h"
#include "setup.h"

/*
 * May the appraiser write the allow for @e itself? Only where the
 * monitor's decision (vd_finish) is an allow exactly when the appraisal
 * passes: nothing to measure before the answer, no audit record, no
 * access rule that reads the verdict, no fix mode; and never for an
 * event that an earlier, killed appraiser was allowed to answer (its
 * descriptor must stay parked for that one: struct ev). Not an exec
 * either: the monitor sets its ignore mark before the answer, which
 * spares the open event the kernel raises next (verdict.c).
 */
static bool appraiser_may_answer(const struct vd *d, const struct ev *e)
{
	return e->pass_allows && !d->policy_access && d->mode != MODE_FIX && !e->answer_pid;
}

/*
 * Where appraiser @w runs. Handing a request to a process asleep on
 * another CPU costs that CPU's wake-up, which on a VM is most of the
 * hand-off. So when at most one other appraisal is in flight, a small
 * file's appraiser is held to the CPU the monitor is on: the monitor is
 * about to sleep there, and the appraiser takes its place. Under more
 * load, or for a large file, it may run on any of the monitor's CPUs, so
 * that appraisals spread. One system call, only when the place changes.
 * Scheduling only: nothing of what the appraiser may do changes.
 */
static void place(struct vd *d, int w, const struct ev *e)
{
	unsigned int busy = 0;
	int want = -1, r;

	if (!d->cpus_many)
		return;
	for (unsigned int k = 0; k < d->nworkers; k++)
		busy += d->w[k].dead ? 0 : d->w[k].inflight;
	if (!e->large && busy <= 1)
		want = sched_getcpu();
	if (want == d->w[w].cpu)
		return;
	if (want >= 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(want, &one);
		r = sched_setaffinity(d->w[w].pid, sizeof(one), &one);
	} else {
		r = sched_setaffinity(d->w[w].pid, sizeof(d->cpus), &d->cpus);
	}
	d->w[w].cpu = r == 0 ? want : -2;	/* -2: not known, set again next time */
}

int vd_pool_send(struct vd *d, int w, int i)
{
	struct ev *e = &d->ev[i];
	bool answer = appraiser_may_answer(d, e);
	struct vd_req q = {
		.magic = VD_MAGIC_REQ,
		.id = (uint32_t)e->gen << 16 | (uint32_t)i,
		.flags = (e->need_appraise ? VD_APPRAISE : 0) | (d->mode == MODE_FIX && !e->fixing ? VD_FIX : 0) |
			 (e->dec.flags & VG_POLF_DIGSIG_REQUIRED ? VD_REQUIRE_SIG : 0),
		/* a file without a label is hashed in this algorithm: trust=archive's, when it applies */
		.algo = e->need_appraise && e->dec.trust_archive && d->trust ? d->trust->algo : d->algo,
		.allowed_algos = e->dec.allowed_algos,
		.answer_fd = answer ? e->answer_no : -1,
		.uid = e->acc.fowner,
		.gid = e->acc.fgroup,
		.mode = e->fmode,
		.dev = e->key.dev,
		.ino = e->key.ino,
		.size = e->key.size,
	};
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
	struct msghdr m = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &e->fd, sizeof(int));
	if (answer)
		q.flags |= VD_ANSWER;
	place(d, w, e);
	if (sendmsg(d->w[w].sock, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(q))
		return -errno;
	if (answer)
		e->answer_pid = d->w[w].pid;
	e->worker = w;
	d->w[w].inflight++;
	if (e->large) {
		d->w[w].large = true;
		vd_uq(d, e)->large_inflight++;
	}
	return 0;
}

/*
 * The appraiser's environment: vigild's, with the sanitizers told not to
 * check for leaks (LeakSanitizer needs /proc, which Landlock denies) nor
 * to symbolize (the symbolizer would fork, which seccomp kills; a report
 * is written unsymbolized). Made before fork(): the monitor has threads,
 * and a child of a threaded process may only make async-signal-safe calls
 * until it execs (another thread may have held malloc's lock at the fork).
 * Return: a NULL-terminated array (free_env), or NULL.
 */
static char **appraiser_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "ASAN_OPTIONS=", 13) && strncmp(environ[i], "UBSAN_OPTIONS=", 14))
			env[k++] = strdup(environ[i]);
	{
		const char *asan = getenv("ASAN_OPTIONS"), *ubsan = getenv("UBSAN_OPTIONS");

		if (asprintf(&env[k++], "ASAN_OPTIONS=%s%sdetect_leaks=0:symbolize=0", asan ? asan : "",
			     asan ? ":" : "") < 0)
			env[--k] = NULL;
		if (asprintf(&env[k++], "UBSAN_OPTIONS=%s%ssymbolize=0", ubsan ? ubsan : "",
			     ubsan ? ":" : "") < 0)
			env[--k] = NULL;
	}
	for (size_t i = 0; i < k; i++)
		if (!env[i]) {
			for (size_t j = 0; j < k; j++)
				free(env[j]);
			free(env);
			return NULL;
		}
	return env;
}

static void free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

int vd_pool_spawn(struct vd *d, int w)
{
	int sv[2];
	pid_t pid;
	struct vd_init init = { .magic = VD_MAGIC_INIT };
	char fdarg[16], **argv, **env;

	/* vigild --appraiser FD, the options, [--fix], NULL: all made before fork() */
	argv = calloc(d->nworker_args + 5, sizeof(*argv));
	env = appraiser_env();
	if (!argv || !env) {
		free(argv);
		free_env(env);
		return -ENOMEM;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", VD_APPRAISER_SOCK_FD);
	argv[0] = (char *)"vigild";
	argv[1] = (char *)"--appraiser";
	argv[2] = fdarg;
	for (size_t i = 0; i < d->nworker_args; i++)
		argv[3 + i] = d->worker_args[i];
	if (d->mode == MODE_FIX)
		argv[3 + d->nworker_args] = (char *)"--fix";
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		free(argv);
		free_env(env);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		free(argv);
		free_env(env);
		return -e;
	}
	if (pid == 0) {
		/* async-signal-safe calls only, up to the exec; above 4 first: either may be 3 or 4 here */
		int sock = fcntl(sv[1], F_DUPFD_CLOEXEC, 10), group = fcntl(d->fan, F_DUPFD_CLOEXEC, 10);
		sigset_t none;

		if (sock < 0 || group < 0)
			_exit(2);
		if (dup2(sock, VD_APPRAISER_SOCK_FD) < 0 || dup2(group, VD_APPRAISER_GROUP_FD) < 0)
			_exit(2);
		/* the monitor's blocked signals are for its signalfd, not the appraiser's */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	free(argv);
	free_env(env);
	close(sv[1]);
	init.keylen = (uint32_t)d->key.len;
	memcpy(init.key, d->key.key, d->key.len);
	if (write(sv[0], &init, sizeof(init)) != (ssize_t)sizeof(init)) {
		OPENSSL_cleanse(&init, sizeof(init));
		close(sv[0]);
		kill(pid, SIGKILL);
		return -EIO;
	}
	OPENSSL_cleanse(&init, sizeof(init));
	d->w[w] = (struct worker){ .pid = pid, .sock = sv[0], .cpu = -1 };
	if (vd_loop_add_worker(d, w) < 0) {
		close(sv[0]);
		kill(pid, SIGKILL);
		d->w[w].dead = true;
		return -EIO;
	}
	return 0;
}

void vd_pool_status_text(int status, char *buf, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "ended (status 0x%x)", (unsigned int)status);
}

/* Its hello within @ms. Return: 0, or -1 (it died, said something else, or was silent). */
static int wait_hello(struct vd *d, int w, int ms)
{
	struct pollfd p = { .fd = d->w[w].sock, .events = POLLIN };
	struct vd_hello h;
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -1;
	n = recv(d->w[w].sock, &h, sizeof(h), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(h) || h.magic != VD_MAGIC_HELLO)
		return -1;
	d->w[w].started = true;
	return 0;
}

int vd_pool_start(struct vd *d)
{
	for (unsigned int w = 0; w < d->nworkers; w++) {
		for (unsigned int t = 1;; t++) {
			char why[96];
			int r = vd_pool_spawn(d, (int)w), st = 0;

			if (r < 0) {
				vlog_err("cannot start appraiser %u: %s", w, strerror(-r));
				return -1;
			}
			if (wait_hello(d, (int)w, 10000) == 0)
				break;
			close(d->w[w].sock);
			kill(d->w[w].pid, SIGKILL);
			if (waitpid(d->w[w].pid, &st, 0) < 0)
				st = 0;
			vd_pool_status_text(st, why, sizeof(why));
			d->w[w].dead = true;
			if (t == VD_START_TRIES) {
				vlog_err("appraiser %u could not start %u times in a row (last: %s; its own "
				       "message, if any, is above): not starting", w, t, why);
				for (unsigned int k = 0; k < w; k++) {
					close(d->w[k].sock);
					kill(d->w[k].pid, SIGKILL);
					waitpid(d->w[k].pid, NULL, 0);
					d->w[k].dead = true;
				}
				return -1;
			}
		}
	}
	return 0;
}

/*
 * Appraiser @w is gone (or is killed here). Its events get the fail
 * action, or with @requeue (it was killed for overrunning another
 * event's deadline) go back to their queues for another appraiser.
 */
void vd_pool_died(struct vd *d, int w, const char *why, bool requeue)
{
	if (d->w[w].dead)
		return;
	vlog(VLOG_WARNING, "appraiser %d (pid %d) %s; %s", w, (int)d->w[w].pid, why,
	       requeue ? "its other events go to another appraiser"
		       : "answering its events with the fail action");
	d->w[w].dead = true;
	vd_loop_del_worker(d, w);
	close(d->w[w].sock);
	kill(d->w[w].pid, SIGKILL);
	if (!d->w[w].started)
		d->start_failures++;
	for (int i = 0; i < d->ev_hi; i++)
		if (d->ev[i].used && d->ev[i].worker == w && d->ev[i].leader < 0) {
			if (requeue) {
				vd_req_done(d, &d->ev[i]);
				vd_uq_push(d, i);
			} else {
				vd_fail_group(d, i, "appraiser-died");
			}
		}
	d->w[w].inflight = 0;
	d->w[w].large = false;
	if (d->stopping)
		return;
	if (d->start_failures >= VD_START_TRIES) {
		vlog_err("FATAL: appraisers died before they could serve %u times in a row (last: "
		       "appraiser %d, %s): stopping (exit %d) instead of restarting them for ever",
		       d->start_failures, w, why, VD_EXIT_CRASHLOOP);
		d->fatal = VD_EXIT_CRASHLOOP;
		return;
	}
	d->st.worker_restarts++;
	if (vd_pool_spawn(d, w) < 0)
		vlog_err("cannot restart appraiser %d", w);
}

static void unpark(struct vd *d, pid_t pid)
{
	for (unsigned int i = 0; i < d->nparked;)
		if (d->parked[i].pid == pid) {
			close(d->parked[i].fd);
			d->parked[i] = d->parked[--d->nparked];
		} else {
			i++;
		}
}

void vd_pool_reaped(struct vd *d, pid_t pid, int status)
{
	char why[96];

	vd_pool_status_text(status, why, sizeof(why));
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (d->w[i].pid == pid && !d->w[i].dead)
			vd_pool_died(d, (int)i, why, false);
	unpark(d, pid);	/* it can answer nothing now: the numbers it was given may be reused */
}

void vd_pool_park(struct vd *d, int fd, pid_t pid)
{
	if (d->nparked == PARKED_CAP) {
		/*
		 * Full, which takes appraisers killed faster than they are
		 * reaped: end the oldest one's process now, then reuse its room.
		 */
		pid_t old = d->parked[0].pid;
		int st = 0;

		kill(old, SIGKILL);
		if (waitpid(old, &st, 0) == old)
			vd_pool_reaped(d, old, st);
		else
			unpark(d, old);	/* reaped already: it is gone */
	}
	d->parked[d->nparked++] = (struct parked_fd){ .fd = fd, .pid = pid };
}

/*
 * Fix mode: write the labels the appraiser computed (it holds no
 * privilege; security.ima needs CAP_SYS_ADMIN). Fixed-size bytes, not
 * parsed here. Return: 0, or -errno in @p (err, detail).
 */
static int write_fix(int fd, struct vd_rep *p)
{
	if (fsetxattr(fd, "security.ima", p->fix_ima, p->fix_ima_len, 0) == 0 &&
	    (!p->fix_evm_len || fsetxattr(fd, "security.evm", p->fix_evm, p->fix_evm_len, 0) == 0))
		return 0;
	p->err = -errno;
	snprintf(p->detail, sizeof(p->detail), "setxattr security.%s: %s",
		 p->fix_evm_len && errno != ENOTSUP ? "ima/evm" : "ima", strerror(errno));
	p->appraised = 0;
	return p->err;
}

void vd_pool_reply(struct vd *d, int w)
{
	struct vd_rep p;
	ssize_t n = recv(d->w[w].sock, &p, sizeof(p), MSG_DONTWAIT);
	unsigned int idx;
	struct result *r;
	struct ev *e;
	bool keep;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (!d->w[w].started) {
		const struct vd_hello *h = (const void *)&p;

		if (n == (ssize_t)sizeof(*h) && h->magic == VD_MAGIC_HELLO) {
			d->w[w].started = true;
			d->start_failures = 0;
			return;
		}
		vd_pool_died(d, w, n == 0 ? "exited before it could serve" : "sent no hello", false);
		return;
	}
	if (n != (ssize_t)sizeof(p) || p.magic != VD_MAGIC_REP ||
	    p.digest_len > VG_HASH_MAX_DIGEST || p.siglen > sizeof(p.sig) ||
	    p.fix_ima_len > sizeof(p.fix_ima) || p.fix_evm_len > sizeof(p.fix_evm)) {
		vd_pool_died(d, w, n == 0 ? "exited" : "sent a malformed reply", false);
		return;
	}
	idx = p.id & 0xffff;
	if (idx >= MAX_PENDING)
		return;
	e = &d->ev[idx];
	if (!e->used || e->gen != (uint16_t)(p.id >> 16) || e->worker != w)
		return;	/* answered already */
	if (p.answered && (e->answer_pid != d->w[w].pid || p.err || !p.appraised || p.fix_ima_len ||
			   !vd_status_pass(p.status))) {
		/* an allow it was not asked for, or for a file that did not pass */
		vd_pool_died(d, w, "answered an event it may not answer", false);
		return;
	}
	if (e->answer_pid == d->w[w].pid)
		e->answer_pid = 0;	/* it has replied: it writes nothing more for this event */
	e->answered = p.answered;
	vd_req_done(d, e);
	p.cause[sizeof(p.cause) - 1] = 0;
	p.detail[sizeof(p.detail) - 1] = 0;
	d->st.hashed_bytes += p.size;
	if (p.appraised)
		d->st.appraisals++;
	if (p.fix_ima_len && !p.err) {
		if (write_fix(e->fd, &p) == 0) {
			d->st.fixed++;
			vd_audit(d, e, "fixed", "label-written", e->dec.rule[VG_CLASS_APPRAISE]);
			/* appraised again, as written, by the same appraiser */
			e->fixing = true;
			if (vd_pool_send(d, w, (int)idx) < 0)
				vd_fail_group(d, (int)idx, "no-appraiser");
			return;
		}
	}
	keep = vd_lease_valid_for(d, e);
	r = keep ? vd_cache_put(d, &e->key, e->lease_gen) : vd_result_uncached(d, &e->key);
	r->appraised = p.appraised;
	r->sig_required = e->need_appraise && (e->dec.flags & VG_POLF_DIGSIG_REQUIRED);
	r->allowed_algos = e->need_appraise ? e->dec.allowed_algos : 0;
	r->err = p.err;
	r->status = p.status;
	memcpy(r->cause, p.cause, sizeof(r->cause));
	r->digest.algo = p.digest_algo;
	r->digest.len = p.digest_len;
	memcpy(r->digest.bytes, p.digest, p.digest_len);
	if (p.siglen) {
		r->sig = malloc(p.siglen);
		if (r->sig) {
			memcpy(r->sig, p.sig, p.siglen);
			r->siglen = p.siglen;
		}
	}
	if (p.err) {
		vlog_err("%s: %s", vd_ev_path(e), p.detail);
		snprintf(r->cause, sizeof(r->cause), "appraisal-error");
	}
	vd_finish_group(d, (int)idx, r);
	if (keep && r->err)	/* do not keep an error: the next open retries */
		r->valid = false;
}

/*
 * Deadlines: a leader still queued gets the fail action; one being
 * appraised too, and its appraiser, hung or hashing something endless
 * (a 500 GB sparse file), is killed and replaced: nobody can keep an
 * appraiser for longer than the deadline.
 */
static double deadline_s(const struct vd *d, const struct ev *e)
{
	double base = d->timeout_ms / 1000.0, extra = 0;

	/* large files: 200 MB/s is granted on top, at most 11 deadlines more */
	if (e->large) {
		extra = (double)e->key.size / 200e6;
		if (extra > 11 * base)
			extra = 11 * base;
	}
	return base + extra;
}

void vd_pool_timeouts(struct vd *d)
{
	double now = vd_now();

	for (int i = 0; i < d->ev_hi; i++) {
		struct ev *e = &d->ev[i];
		int w = e->worker;

		if (!e->used || e->leader >= 0 || (w < 0 && !e->queued && !e->mwait) ||
		    now - e->t0 <= deadline_s(d, e))
			continue;
		d->st.timeouts++;
		if (e->mwait) {	/* the list's writer is stuck (a TPM that does not answer) */
			vd_fail_one(d, i, "measurement-timeout", e->dec.rule[VG_CLASS_MEASURE]);
			continue;
		}
		vd_fail_group(d, i, "timeout");
		if (w >= 0 && !d->w[w].dead) {
			d->st.appraiser_kills++;
			vd_pool_died(d, w, "overran the deadline: killed", true);
		}
	}
}

int vd_loop_add_worker(struct vd *d, int w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = VD_LOOP_WORKER + (uint32_t)w };

	if (d->ep < 0)
		return 0;	/* the loop has not started: it adds the living ones itself */
	return epoll_ctl(d->ep, EPOLL_CTL_ADD, d->w[w].sock, &ev) == 0 ? 0 : -errno;
}

void vd_loop_del_worker(struct vd *d, int w)
{
	if (d->ep >= 0)
		(void)epoll_ctl(d->ep, EPOLL_CTL_DEL, d->w[w].sock, NULL);
}
