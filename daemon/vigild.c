// SPDX-License-Identifier: MIT
/*
 * vigild.c - the integrity hooks: fanotify permission events at exec and
 * open, decided by policy (measure, appraise, audit, IBAC access rules).
 *
 * This file is the monitor process (vigild.h explains the split): one
 * thread runs a poll loop over the fanotify group, the appraisers'
 * sockets, the control socket and a signalfd, and answers every event.
 * It never opens a file while events may be pending (its own opens would
 * wait for its own answer): files are opened before the marks are placed,
 * and a policy reload reads the file on a short-lived thread whose opens
 * the loop answers like every event of its own process.
 *
 * Per event: the file's version (dev, ino, size, mtime, ctime: a write,
 * chmod, chown or setxattr changes ctime) is looked up in the verdict
 * cache; a hit costs an fstat and a policy match. A verdict is cached only
 * while the monitor holds a read lease on the inode (see "leases"): no
 * write of any kind, shared mappings included, can reach cached content.
 * A miss is queued per opener's uid and dispatched round-robin to the
 * appraisers with the event's descriptor; a large file never takes the
 * last free appraiser, so one user's huge files cannot stall everyone
 * else's small ones. Two events for one version wait for one appraisal.
 * An event not answered within the deadline gets the fail action, and
 * the appraiser that overran is killed and replaced. Measurements go to
 * the log (and the PCR) once per version.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "vigil/appraise.h"
#include "vigil/config.h"
#include "vigil/hmac_key.h"
#include "vigil/mlog.h"
#include "vigil/pcrbank.h"
#include "vigil/policy.h"
#include "vigil/tpm.h"
#include "tcti.h"
#include "vigild.h"

#define MAX_WATCH 16
#define MAX_PENDING 4096
#define MAX_WORKERS 8
#define CACHE_CAP 65536		/* power of two */
#define LEASE_CAP 65536		/* power of two */
#define UQ_CAP 64		/* per-uid queues (a uid hashes to one) */
#define WORKER_DEPTH 2		/* small requests in flight per appraiser */
#define LARGE_FILE ((off_t)16 << 20)	/* takes an appraiser for itself */

enum mode { MODE_ENFORCE, MODE_PERMISSIVE, MODE_FIX };
static const char *const mode_names[] = { "enforce", "permissive", "fix" };

struct vkey {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime, ctime;
};

struct result {
	bool valid, appraised;
	bool sig_required;	/* appraised with appraise_type=imasig */
	uint32_t allowed_algos;	/* ... and with this appraise_algos= (0: any) */
	uint32_t lease_gen;	/* valid while this lease generation is held */
	struct vkey key;
	int err;
	uint32_t status;
	char cause[40];
	struct vg_digest digest;
	uint16_t siglen;
	uint8_t *sig;
};

/* PCRs a file version was measured into: kept across policy reloads, as IMA keeps IMA_MEASURED */
struct measured {
	bool valid;
	uint32_t lease_gen;
	struct vkey key;
	uint32_t pcrs;
};

struct ev {
	bool used;
	uint16_t gen;
	int fd;
	pid_t pid;
	uint64_t mask;
	struct vkey key;
	double t0;
	int worker;		/* appraiser working on it, -1: waiting for a leader */
	int leader;		/* index of the event whose appraisal this one waits for */
	int next_waiter;	/* list of events waiting for this one */
	char *path;
	struct vg_decision dec;
	struct vg_access acc;
	char *subj_exe;
	bool need_appraise;
	bool leased;		/* a lease was held from before the content was read */
	uint32_t lease_gen;
	bool large, queued;	/* queued: waiting in its uid's queue for an appraiser */
	int qnext;
	bool counted;		/* in its uid queue's pending count */
	uid_t uid;		/* the opener's, for fair dispatch */
};

/* The monitor's read lease on an inode: what keeps its cached verdicts true. */
struct lease {
	bool held, ignored;	/* ignored: a kernel ignore mark depends on it */
	dev_t dev;
	ino_t ino;
	int fd;
	uint32_t gen;		/* new on take and on drop: old verdicts never match */
};

struct uqueue {
	int head, tail;		/* events waiting for an appraiser, FIFO */
	unsigned int pending;	/* events of this queue's uids not yet answered */
	unsigned int large_inflight;
};

struct worker {
	pid_t pid;
	int sock;
	unsigned int inflight;
	bool dead, large;	/* large: hashing a large file, takes nothing else */
};

struct stats {
	uint64_t events, allowed, denied, would_deny, own, cache_hits, cache_misses, hashed_bytes;
	uint64_t timeouts, worker_restarts, overflows, measured, fixed, errors;
	uint64_t ignore_marks, ignore_flushes, measure_failures;
	uint64_t lease_breaks, lease_writers, lease_errors, too_large, appraiser_kills, worker_spawns;
	uint64_t lat[32];	/* log2 buckets of microseconds */
	struct {
		char reason[40];
		uint64_t n;
	} reasons[32];
	unsigned int nreasons;
};

struct vd {
	/* options */
	const char *config, *policy_path, *log_path, *audit_path, *control_path, *tcti;
	const char *hmac_key_path;
	const char *watch[MAX_WATCH];
	size_t nwatch;
	const char *keyrings[16];
	size_t nkeyrings;
	bool no_tpm, foreground, fail_open;
	bool accept_unenforced;	/* keep rules vigild cannot enforce (unenforced.c) */
	const char *loader_paths[8];	/* --loader */
	size_t nloader_paths;
	enum mode mode;
	unsigned int nworkers, timeout_ms, algo;
	uint64_t max_size;	/* 0: none */
	char **worker_args;	/* options handed to appraisers */
	size_t nworker_args;
	/* state */
	struct vg_config cfg;
	struct vg_policy *policy;
	bool policy_uses_subject, policy_uses_uid, policy_access;
	bool ignore_ok;		/* verdicts depend on the inode alone: kernel ignore marks may cache them */
	bool ignore_open_ok;	/* ... for opens too: no rule can match an exec (loader.c) */
	struct vd_loaders loaders;
	struct vd_fsinfo fsinfo;	/* fsname=, fsuuid= */
	int notif;		/* FAN_ATTRIB notifications: chmod, chown, setxattr drop ignore marks */
	char policy_digest[65];
	int fan, sigfd, ctl, audit;
	int reload_pipe[2];
	pthread_t reload_tid;
	bool reloading;
	struct vg_hmac_key key;
	struct vg_tpm *tpm;
	struct vg_pcrbank *bank;
	struct vg_mlog *mlog;
	struct worker w[MAX_WORKERS];
	struct ev ev[MAX_PENDING];
	unsigned int npending;
	struct result *cache;
	struct measured *measured;
	struct lease *lease;
	unsigned int nleases, lease_max;
	int lease_sig;		/* 0: leases unavailable, nothing is cached */
	unsigned int lease_evict;
	uint32_t lease_gens;	/* generations are unique across the table: a set's ways never share one */
	bool lease_warned;
	struct result uncached;	/* a verdict that may not be kept */
	struct uqueue uq[UQ_CAP];
	unsigned int rr;
	struct stats st;
	pid_t self;
	bool stopping;
	struct {
		bool valid;
		dev_t dev;
		uint64_t magic;
	} fs[8];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	fputs("vigild: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- cache ---- */

static size_t key_slot(const struct vkey *k)
{
	uint64_t h = (uint64_t)k->ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)k->dev * 0xc2b2ae3d27d4eb4full ^
		     (uint64_t)k->ctime * 0x165667b19e3779f9ull ^ (uint64_t)k->mtime ^ (uint64_t)k->size;

	return (size_t)(h ^ (h >> 29)) & (CACHE_CAP - 1);
}

static bool key_eq(const struct vkey *a, const struct vkey *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime == b->mtime &&
	       a->ctime == b->ctime;
}

static void cache_clear(struct vd *d)
{
	for (size_t i = 0; i < CACHE_CAP; i++) {
		free(d->cache[i].sig);
		memset(&d->cache[i], 0, sizeof(d->cache[i]));
	}
}

/*
 * Direct-mapped: a collision replaces the older version (it is only a
 * cache). A verdict counts only under the lease generation it was made in.
 */
static struct result *cache_get(struct vd *d, const struct vkey *k, uint32_t lease_gen)
{
	struct result *r = &d->cache[key_slot(k)];

	return r->valid && key_eq(&r->key, k) && r->lease_gen == lease_gen ? r : NULL;
}

static struct result *cache_put(struct vd *d, const struct vkey *k, uint32_t lease_gen)
{
	struct result *r = &d->cache[key_slot(k)];

	free(r->sig);
	memset(r, 0, sizeof(*r));
	r->valid = true;
	r->key = *k;
	r->lease_gen = lease_gen;
	return r;
}

/* ---- leases ---- */

/*
 * Every cached verdict (the table above, a kernel ignore mark, a
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
 */
/*
 * The table is 4-way set associative: dropping a lease drops the inode's
 * ignore mark too, so collisions must be rare (direct-mapped, 2,000 hot
 * inodes already collided about 30 times).
 */
#define LEASE_WAYS 4

static size_t lease_set(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 31)) & (LEASE_CAP - 1) & ~(size_t)(LEASE_WAYS - 1);
}

static struct lease *lease_get(struct vd *d, dev_t dev, ino_t ino)
{
	struct lease *set = &d->lease[lease_set(dev, ino)];

	for (size_t k = 0; k < LEASE_WAYS; k++)
		if (set[k].held && set[k].dev == dev && set[k].ino == ino)
			return &set[k];
	return NULL;
}

/* Invalidate what depends on @l, then let the writer (if any) go on. */
static void lease_drop(struct vd *d, struct lease *l)
{
	l->gen = ++d->lease_gens;
	if (l->ignored)
		(void)fanotify_mark(d->fan, FAN_MARK_REMOVE | FAN_MARK_IGNORED_MASK,
				    FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM, l->fd, NULL);
	/* explicitly: the appraiser may still hold the same open file */
	(void)fcntl(l->fd, F_SETLEASE, F_UNLCK);
	close(l->fd);
	l->held = l->ignored = false;
	l->fd = -1;
	d->nleases--;
}

/*
 * A lease on the inode of @fd (an event's descriptor), held from now on.
 * Return: 0 with *@ret_gen; -EAGAIN the file is open for writing (its
 * content may change under any verdict: do not cache); another -errno
 * when leases cannot be had (then nothing is cached either).
 */
static int lease_take(struct vd *d, int fd, dev_t dev, ino_t ino, uint32_t *ret_gen)
{
	struct lease *set = &d->lease[lease_set(dev, ino)], *l = lease_get(d, dev, ino);
	int nfd, r;

	if (l) {
		*ret_gen = l->gen;
		return 0;
	}
	if (!d->lease_sig)
		return -EOPNOTSUPP;
	for (size_t k = 0; k < LEASE_WAYS && !l; k++)
		if (!set[k].held)
			l = &set[k];
	if (!l) {		/* a full set: one of the others goes, in turn */
		l = &set[d->lease_evict++ % LEASE_WAYS];
		lease_drop(d, l);
	} else if (d->nleases >= d->lease_max) {
		return -EMFILE;
	}
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	if (fcntl(nfd, F_SETSIG, d->lease_sig) < 0 || fcntl(nfd, F_SETLEASE, F_RDLCK) < 0) {
		r = -errno;
		close(nfd);
		if (r == -EAGAIN) {
			d->st.lease_writers++;
		} else {
			d->st.lease_errors++;
			if (!d->lease_warned)
				logmsg("no read lease (%s): verdicts on this filesystem are not cached, "
				       "every access is appraised", strerror(-r));
			d->lease_warned = true;
		}
		return r;
	}
	l->held = true;
	l->ignored = false;
	l->dev = dev;
	l->ino = ino;
	l->fd = nfd;
	l->gen = ++d->lease_gens;
	d->nleases++;
	*ret_gen = l->gen;
	return 0;
}

/* The kernel is breaking the lease on @fd: someone opens the file for writing. */
static void lease_broken(struct vd *d, int fd)
{
	struct stat st;
	struct lease *l;

	if (fd < 0 || fcntl(fd, F_GETLEASE) == F_RDLCK || fstat(fd, &st) < 0)
		return;		/* stale signal: that descriptor was dropped already */
	l = lease_get(d, st.st_dev, st.st_ino);
	if (l && l->fd == fd) {
		d->st.lease_breaks++;
		lease_drop(d, l);
	}
}

/* SIGIO: the signal queue overflowed, a break may have gone unnamed. */
static void lease_rescan(struct vd *d)
{
	for (size_t i = 0; i < LEASE_CAP; i++)
		if (d->lease[i].held && fcntl(d->lease[i].fd, F_GETLEASE) != F_RDLCK) {
			d->st.lease_breaks++;
			lease_drop(d, &d->lease[i]);
		}
}

static void lease_setup(struct vd *d)
{
	struct rlimit rl;

	d->lease = calloc(LEASE_CAP, sizeof(*d->lease));
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
		logmsg("too few descriptors for read leases (RLIMIT_NOFILE): nothing is cached");
}

/* The event's verdict may be kept: its lease is still the one it was made under. */
static bool ev_lease_valid(struct vd *d, const struct ev *e)
{
	struct lease *l;

	if (!e->leased)
		return false;
	l = lease_get(d, e->key.dev, e->key.ino);
	return l && l->gen == e->lease_gen;
}

/* ---- stats ---- */

static void count_reason(struct vd *d, const char *reason)
{
	unsigned int i;

	for (i = 0; i < d->st.nreasons; i++)
		if (strcmp(d->st.reasons[i].reason, reason) == 0)
			break;
	if (i == d->st.nreasons) {
		if (i == 32)
			return;
		snprintf(d->st.reasons[i].reason, sizeof(d->st.reasons[i].reason), "%s", reason);
		d->st.nreasons++;
	}
	d->st.reasons[i].n++;
}

static double percentile(const struct stats *s, double p)
{
	uint64_t total = 0, acc = 0;

	for (int i = 0; i < 32; i++)
		total += s->lat[i];
	if (!total)
		return 0;
	for (int i = 0; i < 32; i++) {
		acc += s->lat[i];
		if ((double)acc >= p * (double)total)
			return (double)(1ull << i);	/* upper bound of the bucket, µs */
	}
	return 0;
}

/* ---- fanotify ---- */

static void respond(struct vd *d, int fd, bool allow)
{
	struct fanotify_response r = { .fd = fd, .response = allow ? FAN_ALLOW : FAN_DENY };

	if (write(d->fan, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
		d->st.errors++;
		logmsg("fanotify response for fd %d failed: %s", fd, strerror(errno));
	}
}

static uint64_t fsmagic_of(struct vd *d, int fd, dev_t dev)
{
	struct statfs sf;
	size_t slot = (size_t)dev & 7;

	if (d->fs[slot].valid && d->fs[slot].dev == dev)
		return d->fs[slot].magic;
	d->fs[slot].valid = true;
	d->fs[slot].dev = dev;
	d->fs[slot].magic = fstatfs(fd, &sf) == 0 ? (uint64_t)sf.f_type : 0;
	return d->fs[slot].magic;
}

static char *readlink_alloc(const char *link)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

/* Credentials of @pid from /proc (procfs is never marked). */
static void task_creds(pid_t pid, struct vg_access *a)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int r, e, s;

		if (sscanf(line, "Uid:\t%u\t%u\t%u", &r, &e, &s) == 3) {
			a->uid = r;
			a->euid = e;
			a->suid = s;
		} else if (sscanf(line, "Gid:\t%u\t%u\t%u", &r, &e, &s) == 3) {
			a->gid = r;
			a->egid = e;
			a->sgid = s;
			break;
		}
	}
	fclose(f);
}

/* ---- audit ---- */

static void audit(struct vd *d, const struct ev *e, const char *action, const char *reason,
		  long rule)
{
	json_object *o;
	char ts[64], proc[64], *exe;
	struct timespec now;
	struct tm tm;

	if (d->audit < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%06ldZ", now.tv_nsec / 1000);
	snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)e->pid);
	exe = e->subj_exe ? strdup(e->subj_exe) : readlink_alloc(proc);
	o = json_object_new_object();
	json_object_object_add(o, "time", json_object_new_string(ts));
	json_object_object_add(o, "pid", json_object_new_int(e->pid));
	json_object_object_add(o, "exe", json_object_new_string(exe ? exe : "?"));
	json_object_object_add(o, "uid", json_object_new_int64(e->acc.uid));
	json_object_object_add(o, "path", json_object_new_string(e->path ? e->path : "?"));
	json_object_object_add(o, "dev", json_object_new_int64((int64_t)e->key.dev));
	json_object_object_add(o, "ino", json_object_new_int64((int64_t)e->key.ino));
	json_object_object_add(o, "event", json_object_new_string(
		e->mask & FAN_OPEN_EXEC_PERM ? "exec" : "open"));
	json_object_object_add(o, "action", json_object_new_string(action));
	json_object_object_add(o, "mode", json_object_new_string(mode_names[d->mode]));
	if (rule >= 0 && d->policy) {
		const struct vg_policy_rule *r = vg_policy_rule(d->policy, (size_t)rule);
		char text[512];

		if (r) {
			vg_policy_rule_format(r, text, sizeof(text));
			json_object_object_add(o, "rule", json_object_new_string(text));
			json_object_object_add(o, "rule_line", json_object_new_int((int)r->line));
		}
	}
	json_object_object_add(o, "reason", json_object_new_string(reason));
	dprintf(d->audit, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	free(exe);
}

/* ---- events ---- */

static struct uqueue *uq_of(struct vd *d, uid_t uid)
{
	return &d->uq[(uint32_t)uid % UQ_CAP];
}

static void ev_release(struct vd *d, int i)
{
	struct ev *e = &d->ev[i];

	if (e->counted && uq_of(d, e->uid)->pending)
		uq_of(d, e->uid)->pending--;
	e->counted = false;
	if (e->fd >= 0)
		close(e->fd);
	free(e->path);
	free(e->subj_exe);
	e->used = false;
	e->fd = -1;
	e->path = NULL;
	e->subj_exe = NULL;
	d->npending--;
}

static void record_latency(struct vd *d, double t0)
{
	double us = (now_s() - t0) * 1e6;
	int b = 0;

	while (b < 31 && (double)(1ull << b) < us)
		b++;
	d->st.lat[b]++;
}

static void answer(struct vd *d, struct ev *e, bool allow)
{
	respond(d, e->fd, allow);
	if (allow)
		d->st.allowed++;
	else
		d->st.denied++;
	record_latency(d, e->t0);
}

/*
 * Log, then PCR (mlog). Return: false when the measurement could not be
 * made (log write or sync failed, disk full, TPM gone): in enforce mode
 * the access is denied, so that nothing runs that the log, and so the
 * attestation, does not show. The writer recovers by itself at a later
 * measurement, once the disk has room or the TPM answers again (mlog.h).
 */
static bool measure(struct vd *d, struct ev *e, struct result *r)
{
	struct vg_diag dg = { 0 };
	unsigned int pcr = e->dec.pcr >= 0 ? (unsigned int)e->dec.pcr : VG_POLICY_DEFAULT_PCR;
	bool sig = e->dec.template_name && strcmp(e->dec.template_name, "ima-sig") == 0;
	bool was_failed;

	struct measured *m = &d->measured[key_slot(&e->key)];
	bool keep = ev_lease_valid(d, e);

	/*
	 * "Measured" is remembered only under a lease: a file open for
	 * writing is measured at every access, and after any writer (a shared
	 * mapping changes content without changing the version) again.
	 */
	if (!keep || !m->valid || !key_eq(&m->key, &e->key) || m->lease_gen != e->lease_gen)
		*m = (struct measured){ .valid = keep, .key = e->key, .lease_gen = e->lease_gen };
	if (!d->mlog || (m->pcrs & (1u << pcr)))
		return true;
	was_failed = vg_mlog_failed(d->mlog);
	if (!r->digest.len || vg_mlog_append_file(d->mlog, pcr, &r->digest, e->path ? e->path : "?",
						  sig ? r->sig : NULL, sig ? r->siglen : 0, &dg) < 0 ||
	    vg_mlog_commit(d->mlog, &dg) < 0) {
		d->st.errors++;
		d->st.measure_failures++;
		logmsg("measurement of %s failed: %s", e->path ? e->path : "?",
		       dg.msg[0] ? dg.msg : "no digest");
		return false;
	}
	if (was_failed)
		logmsg("measurement log %s recovered: measuring again", d->log_path);
	if (m->valid)
		m->pcrs |= 1u << pcr;
	d->st.measured++;
	return true;
}

static enum vg_integrity integrity_of(const struct result *r)
{
	if (!r->appraised || r->err)
		return VG_INTEGRITY_UNKNOWN;
	switch (r->status) {
	case VG_ST_PASS:
	case VG_ST_PASS_IMMUTABLE:
		return VG_INTEGRITY_PASS;
	case VG_ST_NOLABEL:
	case VG_ST_NOXATTRS:
		return VG_INTEGRITY_NOLABEL;
	case VG_ST_FAIL:
	case VG_ST_FAIL_IMMUTABLE:
		return VG_INTEGRITY_FAIL;
	default:
		return VG_INTEGRITY_UNKNOWN;
	}
}

/*
 * A clean allow that depends on the inode alone: let the kernel skip this
 * inode's events of this kind from now on. Only under the inode's lease:
 * an open for writing (even one whose own event the mark hides) breaks
 * the lease, and the mark is removed before that open returns. The kernel
 * also drops the mark on write(2) and truncate; FAN_ATTRIB (chmod, chown,
 * setxattr) flushes every mark (flush_ignores).
 */
static bool result_passes(const struct result *r)
{
	return r && r->appraised && !r->err && (r->status == VG_ST_PASS || r->status == VG_ST_PASS_IMMUTABLE);
}

/*
 * @r passed under requirements at least as strict as these: a signature
 * if one is needed, algorithms within @need_algos (0: any).
 */
static bool result_satisfies(const struct result *r, bool need_sig, uint32_t need_algos)
{
	return result_passes(r) && (r->sig_required || !need_sig) &&
	       (!need_algos || (r->allowed_algos && !(r->allowed_algos & ~need_algos)));
}

/* A verdict for this access only (a writer was, or came): never in the cache. */
static struct result *uncached_result(struct vd *d, const struct vkey *k)
{
	free(d->uncached.sig);
	memset(&d->uncached, 0, sizeof(d->uncached));
	d->uncached.key = *k;
	return &d->uncached;
}

/*
 * A loader's open of this inode is an exec of it too (loader.c), and an
 * ignore mark for opens would hide that open. Such a mark is still right
 * when the exec would pass with nothing left to do: no measurement, no
 * audit, no access rule, and an appraisal it has passed already, under
 * requirements at least as strict (a signature, the algorithms).
 */
static bool exec_needs_nothing(struct vd *d, const struct ev *e, const struct result *r)
{
	struct vg_access xa = e->acc;
	struct vg_decision xd;

	if (d->policy_access)
		return false;
	xa.func = VG_FUNC_BPRM_CHECK;
	xa.mask = VG_MAY_EXEC;
	xa.also_func = VG_FUNC_NONE;
	xa.also_mask = 0;
	if (vg_policy_match(d->policy, &xa, VG_CLASSES_IMA, &xd) < 0 || xd.measure || xd.audit)
		return false;
	return !xd.appraise || result_satisfies(r, xd.flags & VG_POLF_DIGSIG_REQUIRED, xd.allowed_algos);
}

static void ignore_inode(struct vd *d, const struct ev *e, const struct result *r)
{
	uint64_t mask = e->mask & (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM);
	struct lease *l = lease_get(d, e->key.dev, e->key.ino);

	/* the loader's open of this inode must still be seen, unless its exec needs nothing */
	if (!d->ignore_open_ok && (mask & FAN_OPEN_PERM) && !exec_needs_nothing(d, e, r))
		mask &= ~(uint64_t)FAN_OPEN_PERM;
	if (!mask || !e->leased || !l || l->gen != e->lease_gen)
		return;
	if (fanotify_mark(d->fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_EVICTABLE, mask,
			  e->fd, NULL) == 0) {
		l->ignored = true;
		d->st.ignore_marks++;
	}
}

static void flush_ignores(struct vd *d)
{
	char buf[4096];

	while (read(d->notif, buf, sizeof(buf)) > 0)
		;
	if (fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) == 0)
		d->st.ignore_flushes++;
}

/* Decide event @i with the appraisal/hash result @r, answer it, release it. */
static void finish(struct vd *d, int i, struct result *r)
{
	struct ev *e = &d->ev[i];
	const char *reason = NULL;
	long rule = -1;
	bool deny = false;

	if (e->dec.measure && r && !measure(d, e, r) && !d->fail_open) {
		deny = true;
		reason = "measurement-failed";
		rule = e->dec.rule[VG_CLASS_MEASURE];
	}
	if (!deny && e->need_appraise) {
		if (!r || r->err) {
			deny = true;
			reason = "appraisal-error";
			rule = e->dec.rule[VG_CLASS_APPRAISE];
		} else if (r->status != VG_ST_PASS && r->status != VG_ST_PASS_IMMUTABLE) {
			deny = true;
			reason = r->cause[0] ? r->cause : "unknown";
			rule = e->dec.rule[VG_CLASS_APPRAISE];
		}
	}
	if (!deny && d->policy_access) {
		struct vg_decision ad;

		e->acc.appraisal = r ? integrity_of(r) : VG_INTEGRITY_UNKNOWN;
		if (vg_policy_match(d->policy, &e->acc, 1u << VG_CLASS_ACCESS, &ad) == 0) {
			if (ad.verdict == VG_VERDICT_DENY) {
				deny = true;
				reason = "access-rule";
				rule = ad.rule[VG_CLASS_ACCESS];
			} else if (ad.verdict == VG_VERDICT_AUDIT) {
				audit(d, e, "allow", "audit-access", ad.rule[VG_CLASS_ACCESS]);
			}
		}
	}
	if (!deny && e->dec.audit)
		audit(d, e, "allow", "audit", e->dec.rule[VG_CLASS_AUDIT]);
	if (!deny && !e->dec.audit && d->ignore_ok && d->notif >= 0 && d->mode != MODE_FIX)
		ignore_inode(d, e, r);
	/*
	 * The record is written before the answer: once the access goes on (or
	 * fails), its audit line is there, and the subject is still alive to
	 * be named by /proc/PID/exe.
	 */
	if (deny && d->mode == MODE_ENFORCE) {
		count_reason(d, reason);
		audit(d, e, "deny", reason, rule);
		answer(d, e, false);
	} else {
		if (deny) {
			d->st.would_deny++;
			count_reason(d, reason);
			audit(d, e, "would-deny", reason, rule);
		}
		answer(d, e, true);
	}
	ev_release(d, i);
}

static void finish_group(struct vd *d, int leader, struct result *r)
{
	int i = leader;

	while (i >= 0) {
		int next = d->ev[i].next_waiter;

		finish(d, i, r);
		i = next;
	}
}

/* Leader @i leaves its uid's queue. */
static void uq_remove(struct vd *d, int i)
{
	struct ev *e = &d->ev[i];
	struct uqueue *q = uq_of(d, e->uid);
	int prev = -1;

	if (!e->queued)
		return;
	for (int j = q->head; j >= 0; prev = j, j = d->ev[j].qnext)
		if (j == i) {
			if (prev < 0)
				q->head = e->qnext;
			else
				d->ev[prev].qnext = e->qnext;
			if (q->tail == i)
				q->tail = prev;
			break;
		}
	e->queued = false;
	e->qnext = -1;
}

static void uq_push(struct vd *d, int i)
{
	struct ev *e = &d->ev[i];
	struct uqueue *q = uq_of(d, e->uid);

	e->qnext = -1;
	e->queued = true;
	if (q->tail >= 0)
		d->ev[q->tail].qnext = i;
	else
		q->head = i;
	q->tail = i;
}

/* Leader @e's appraiser no longer works for it (answered, overran, died). */
static void req_done(struct vd *d, struct ev *e)
{
	struct worker *w;

	if (e->worker < 0)
		return;
	w = &d->w[e->worker];
	if (w->inflight)
		w->inflight--;
	if (e->large) {
		struct uqueue *q = uq_of(d, e->uid);

		w->large = false;
		if (q->large_inflight)
			q->large_inflight--;
	}
	e->worker = -1;
}

/* No answer in time, or the appraiser died: the fail action. */
static void fail_group(struct vd *d, int leader, const char *why)
{
	int i = leader;

	uq_remove(d, leader);
	req_done(d, &d->ev[leader]);
	while (i >= 0) {
		struct ev *e = &d->ev[i];
		int next = e->next_waiter;
		bool allow = d->fail_open || d->mode != MODE_ENFORCE;

		count_reason(d, why);
		audit(d, e, allow ? "allow-on-failure" : "deny-on-failure", why,
		      e->dec.rule[VG_CLASS_APPRAISE]);
		answer(d, e, allow);
		ev_release(d, i);
		i = next;
	}
}

static int send_req(struct vd *d, int w, int i)
{
	struct ev *e = &d->ev[i];
	struct vd_req q = {
		.magic = VD_MAGIC_REQ,
		.id = (uint32_t)e->gen << 16 | (uint32_t)i,
		.flags = (e->need_appraise ? VD_APPRAISE : 0) | (d->mode == MODE_FIX ? VD_FIX : 0) |
			 (e->dec.flags & VG_POLF_DIGSIG_REQUIRED ? VD_REQUIRE_SIG : 0),
		.algo = d->algo,
		.allowed_algos = e->dec.allowed_algos,
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
	if (sendmsg(d->w[w].sock, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(q))
		return -errno;
	e->worker = w;
	d->w[w].inflight++;
	if (e->large) {
		d->w[w].large = true;
		uq_of(d, e->uid)->large_inflight++;
	}
	return 0;
}

/*
 * An appraiser for leader @e, or -1 (it waits in its queue). A large file
 * takes an idle appraiser for itself, one per uid queue at a time, and
 * never the last appraiser not hashing a large file: small files always
 * have one, whoever floods the others with huge ones.
 */
static int pick_worker(struct vd *d, const struct ev *e)
{
	unsigned int live = 0, nlarge = 0;
	int best = -1;

	for (unsigned int i = 0; i < d->nworkers; i++)
		if (!d->w[i].dead) {
			live++;
			nlarge += d->w[i].large;
		}
	if (e->large) {
		if (uq_of(d, e->uid)->large_inflight || (live > 1 && nlarge + 1 >= live))
			return -1;
		for (unsigned int i = 0; i < d->nworkers; i++)
			if (!d->w[i].dead && !d->w[i].inflight)
				return (int)i;
		return -1;
	}
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (!d->w[i].dead && !d->w[i].large && d->w[i].inflight < WORKER_DEPTH &&
		    (best < 0 || d->w[i].inflight < d->w[best].inflight))
			best = (int)i;
	return best;
}

/* Send queued leaders to appraisers, one uid queue after the other. */
static int spawn_worker(struct vd *d, int w);

static void dispatch(struct vd *d)
{
	bool progress = true;

	while (progress) {
		progress = false;
		for (unsigned int n = 0; n < UQ_CAP; n++) {
			unsigned int b = (d->rr + n) % UQ_CAP;
			int i = d->uq[b].head, w;

			if (i < 0)
				continue;
			w = pick_worker(d, &d->ev[i]);
			if (w < 0 && d->ev[i].large && !d->uq[b].large_inflight && d->nworkers < MAX_WORKERS &&
			    !d->stopping) {
				/*
				 * Every appraiser that may take a large file is busy with
				 * other users' large files: one more appraiser (up to
				 * MAX_WORKERS), so a user's large file does not wait on
				 * another user's deadline.
				 */
				if (spawn_worker(d, (int)d->nworkers) == 0) {
					d->nworkers++;
					d->st.worker_spawns++;
					w = pick_worker(d, &d->ev[i]);
				}
			}
			if (w < 0)
				continue;
			uq_remove(d, i);
			d->rr = (b + 1) % UQ_CAP;
			if (send_req(d, w, i) < 0)
				fail_group(d, i, "no-appraiser");
			progress = true;
			break;
		}
	}
}

/* An appraisal in progress of the same version, under the same requirements as @e's. */
static int find_leader(struct vd *d, const struct ev *e)
{
	uint32_t sig = e->dec.flags & VG_POLF_DIGSIG_REQUIRED;

	for (int i = 0; i < MAX_PENDING; i++) {
		const struct ev *l = &d->ev[i];

		if (l->used && l->leader < 0 && (l->worker >= 0 || l->queued) && key_eq(&l->key, &e->key) &&
		    (!e->need_appraise ||
		     (l->need_appraise && (l->dec.flags & VG_POLF_DIGSIG_REQUIRED) == sig &&
		      l->dec.allowed_algos == e->dec.allowed_algos)))
			return i;
	}
	return -1;
}

/*
 * A verdict made under other requirements fits this event only if it was
 * at least as strict and passed: a hash label that passed for an open
 * must not pass an exec that wants a signature (appraise_type=imasig), nor
 * one that allows fewer algorithms (appraise_algos=).
 */
static bool result_fits(const struct result *r, const struct ev *e)
{
	bool need_sig = e->dec.flags & VG_POLF_DIGSIG_REQUIRED;
	uint32_t need_algos = e->dec.allowed_algos;

	return !e->need_appraise || (r->sig_required == need_sig && r->allowed_algos == need_algos) ||
	       result_satisfies(r, need_sig, need_algos);
}

/* The opener's effective uid: the owner of /proc/PID (one stat, no parsing). */
static uid_t opener_uid(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

static bool queues_empty(const struct vd *d)
{
	for (size_t i = 0; i < UQ_CAP; i++)
		if (d->uq[i].head >= 0)
			return false;
	return true;
}

/* Charge event @e to its opener's queue. Return: -EAGAIN that user holds too many already. */
static int count_opener(struct vd *d, struct ev *e, pid_t pid)
{
	struct uqueue *q;

	e->uid = opener_uid(pid);
	q = uq_of(d, e->uid);
	if (q->pending >= MAX_PENDING / 4)
		return -EAGAIN;
	q->pending++;
	e->counted = true;
	return 0;
}

static int ev_alloc(struct vd *d)
{
	static int hint;

	for (int n = 0; n < MAX_PENDING; n++) {
		int i = (hint + n) % MAX_PENDING;

		if (!d->ev[i].used) {
			hint = i + 1;
			return i;
		}
	}
	return -1;
}

static bool is_own(struct vd *d, pid_t pid)
{
	if (pid == d->self)
		return true;
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (d->w[i].pid == pid)
			return true;
	return false;
}

static void on_event(struct vd *d, const struct fanotify_event_metadata *m)
{
	struct stat st;
	struct result *r;
	struct lease *l;
	struct ev *e;
	int i, leader, w;
	double t0 = now_s();

	d->st.events++;
	if (is_own(d, m->pid)) {
		d->st.own++;
		respond(d, m->fd, true);
		close(m->fd);
		return;
	}
	if (fstat(m->fd, &st) < 0 || !S_ISREG(st.st_mode) || !d->policy) {
		respond(d, m->fd, true);
		d->st.allowed++;
		close(m->fd);
		return;
	}
	i = ev_alloc(d);
	if (i < 0) {	/* the bounded table is full: the overflow policy */
		bool allow = d->mode != MODE_ENFORCE || d->fail_open;

		d->st.overflows++;
		respond(d, m->fd, allow);
		allow ? d->st.allowed++ : d->st.denied++;
		close(m->fd);
		return;
	}
	e = &d->ev[i];
	{
		uint16_t gen = e->gen;

		memset(e, 0, sizeof(*e));
		e->gen = (uint16_t)(gen + 1);
	}
	e->used = true;
	e->fd = m->fd;
	e->pid = m->pid;
	e->mask = m->mask;
	e->t0 = t0;
	e->worker = -1;
	e->leader = -1;
	e->next_waiter = -1;
	e->qnext = -1;
	e->key = (struct vkey){ st.st_dev, st.st_ino, st.st_size,
				(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
				(int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec };
	d->npending++;
	{
		char link[64];

		snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
		e->path = readlink_alloc(link);
	}
	e->acc.func = m->mask & FAN_OPEN_EXEC_PERM ? VG_FUNC_BPRM_CHECK : VG_FUNC_FILE_CHECK;
	e->acc.mask = m->mask & FAN_OPEN_EXEC_PERM ? VG_MAY_EXEC : VG_MAY_READ;
	vd_loader_access(&d->loaders, m->pid, m->mask & FAN_OPEN_EXEC_PERM, &e->acc);
	vd_fsinfo_access(&d->fsinfo, m->fd, st.st_dev, &e->acc);
	e->acc.path = e->path;
	e->acc.fsmagic = fsmagic_of(d, m->fd, st.st_dev);
	e->acc.fowner = st.st_uid;
	e->acc.fgroup = st.st_gid;
	if (d->policy_uses_uid)
		task_creds(m->pid, &e->acc);
	if (d->policy_uses_subject) {
		char link[64];

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)m->pid);
		e->subj_exe = readlink_alloc(link);
		e->acc.subj_exe = e->subj_exe;
	}
	vg_policy_match(d->policy, &e->acc, VG_CLASSES_IMA, &e->dec);
	e->need_appraise = e->dec.appraise;
	if (!e->dec.appraise && !e->dec.measure && !e->dec.audit && !d->policy_access) {
		answer(d, e, true);
		ev_release(d, i);
		return;
	}
	if (!e->dec.appraise && !e->dec.measure) {
		finish(d, i, NULL);
		return;
	}
	l = lease_get(d, st.st_dev, st.st_ino);
	r = l ? cache_get(d, &e->key, l->gen) : NULL;
	if (r) {
		e->leased = true;
		e->lease_gen = l->gen;
	}
	if (!r && st.st_size == 0 && fgetxattr(m->fd, "security.ima", NULL, 0) < 0 && errno == ENODATA) {
		/*
		 * An empty file without a label: most likely being created (the
		 * event does not say O_CREAT). The kernel passes IMA_NEW_FILE;
		 * empty content can neither leak nor run anything. Kept only
		 * under a lease: its creator usually still has it open.
		 */
		e->leased = lease_take(d, m->fd, st.st_dev, st.st_ino, &e->lease_gen) == 0;
		r = e->leased ? cache_put(d, &e->key, e->lease_gen) : uncached_result(d, &e->key);
		r->appraised = true;
		r->status = VG_ST_PASS;
		vg_hash_buf(d->algo, "", 0, &r->digest, NULL);
	}
	if (r && (r->appraised || !e->need_appraise) && !r->err && result_fits(r, e)) {
		d->st.cache_hits++;
		finish(d, i, r);
		return;
	}
	d->st.cache_misses++;
	if (d->max_size && (uint64_t)st.st_size > d->max_size) {
		d->st.too_large++;
		fail_group(d, i, "file-too-large");
		return;
	}
	e->large = st.st_size >= LARGE_FILE;
	leader = find_leader(d, e);
	if (leader < 0) {
		/* the lease is taken before any content is read: a writer since then voids the verdict */
		e->leased = lease_take(d, m->fd, st.st_dev, st.st_ino, &e->lease_gen) == 0;
		/*
		 * Whose access this is matters only when it has to wait: a small
		 * file that an appraiser takes at once, with nobody queued, is
		 * sent without looking the opener up (a stat of /proc/PID saved).
		 */
		if (!e->large && queues_empty(d) && (w = pick_worker(d, e)) >= 0 && send_req(d, w, i) == 0)
			return;
	}
	if (count_opener(d, e, m->pid) < 0) {
		/* one user's flood must not fill the table for everyone */
		d->st.overflows++;
		fail_group(d, i, "overflow");
		return;
	}
	if (leader >= 0) {	/* one appraisal for every opener of this version */
		e->leased = d->ev[leader].leased;
		e->lease_gen = d->ev[leader].lease_gen;
		e->leader = leader;
		e->next_waiter = d->ev[leader].next_waiter;
		d->ev[leader].next_waiter = i;
		return;
	}
	uq_push(d, i);
	dispatch(d);
}

static void read_events(struct vd *d)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));

	for (;;) {
		ssize_t n = read(d->fan, buf, sizeof(buf));
		const struct fanotify_event_metadata *m = (const void *)buf;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				logmsg("reading fanotify: %s", strerror(errno));
			return;
		}
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION) {
				logmsg("fanotify metadata version %u, not %u", m->vers,
				       FANOTIFY_METADATA_VERSION);
				exit(2);
			}
			if (m->mask & FAN_Q_OVERFLOW) {
				d->st.overflows++;
				logmsg("fanotify queue overflow: events were allowed unseen");
				continue;
			}
			if (m->fd < 0)
				continue;
			on_event(d, m);
		}
	}
}

/* ---- appraisers ---- */

static int spawn_worker(struct vd *d, int w)
{
	int sv[2];
	pid_t pid;
	struct vd_init init = { .magic = VD_MAGIC_INIT };

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		char fdarg[16];
		char **argv = calloc(d->nworker_args + 4, sizeof(*argv));

		sigset_t none;

		if (!argv)
			_exit(2);
		if (dup2(sv[1], 3) < 0)
			_exit(2);
		/* the monitor's blocked signals are for its signalfd, not the appraiser's */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		{
			/* sanitizer builds: LeakSanitizer needs /proc, which Landlock denies */
			const char *asan = getenv("ASAN_OPTIONS");
			char opt[512];

			snprintf(opt, sizeof(opt), "%s%sdetect_leaks=0", asan ? asan : "",
				 asan ? ":" : "");
			setenv("ASAN_OPTIONS", opt, 1);
		}
		snprintf(fdarg, sizeof(fdarg), "%d", 3);
		argv[0] = (char *)"vigild";
		argv[1] = (char *)"--appraiser";
		argv[2] = fdarg;
		for (size_t i = 0; i < d->nworker_args; i++)
			argv[3 + i] = d->worker_args[i];
		if (d->mode == MODE_FIX)
			argv[3 + d->nworker_args] = (char *)"--fix";
		execv("/proc/self/exe", argv);
		_exit(127);
	}
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
	d->w[w] = (struct worker){ .pid = pid, .sock = sv[0] };
	return 0;
}

/*
 * Appraiser @w is gone (or is killed here). Its events get the fail
 * action, or with @requeue (it was killed for overrunning another
 * event's deadline) go back to their queues for another appraiser.
 */
static void worker_died(struct vd *d, int w, const char *why, bool requeue)
{
	if (d->w[w].dead)
		return;
	logmsg("appraiser %d (pid %d) %s; %s", w, (int)d->w[w].pid, why,
	       requeue ? "its other events go to another appraiser"
		       : "answering its events with the fail action");
	d->w[w].dead = true;
	close(d->w[w].sock);
	kill(d->w[w].pid, SIGKILL);
	for (int i = 0; i < MAX_PENDING; i++)
		if (d->ev[i].used && d->ev[i].worker == w && d->ev[i].leader < 0) {
			if (requeue) {
				req_done(d, &d->ev[i]);
				uq_push(d, i);
			} else {
				fail_group(d, i, "appraiser-died");
			}
		}
	d->w[w].inflight = 0;
	d->w[w].large = false;
	if (!d->stopping) {
		d->st.worker_restarts++;
		if (spawn_worker(d, w) < 0)
			logmsg("cannot restart appraiser %d", w);
	}
}

static void on_reply(struct vd *d, int w)
{
	struct vd_rep p;
	ssize_t n = recv(d->w[w].sock, &p, sizeof(p), MSG_DONTWAIT);
	unsigned int idx;
	struct result *r;
	struct ev *e;
	bool keep;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != (ssize_t)sizeof(p) || p.magic != VD_MAGIC_REP ||
	    p.digest_len > VG_HASH_MAX_DIGEST || p.siglen > sizeof(p.sig)) {
		worker_died(d, w, n == 0 ? "exited" : "sent a malformed reply", false);
		return;
	}
	idx = p.id & 0xffff;
	if (idx >= MAX_PENDING)
		return;
	e = &d->ev[idx];
	if (!e->used || e->gen != (uint16_t)(p.id >> 16) || e->worker != w)
		return;	/* answered already */
	req_done(d, e);
	p.cause[sizeof(p.cause) - 1] = 0;
	p.detail[sizeof(p.detail) - 1] = 0;
	d->st.hashed_bytes += p.size;
	if (p.fixed) {
		d->st.fixed++;
		audit(d, e, "fixed", "label-written", e->dec.rule[VG_CLASS_APPRAISE]);
	}
	keep = ev_lease_valid(d, e);
	r = keep ? cache_put(d, &e->key, e->lease_gen) : uncached_result(d, &e->key);
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
		logmsg("%s: %s", e->path ? e->path : "?", p.detail);
		snprintf(r->cause, sizeof(r->cause), "appraisal-error");
	}
	finish_group(d, (int)idx, r);
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

static void check_timeouts(struct vd *d)
{
	double now = now_s();

	for (int i = 0; i < MAX_PENDING; i++) {
		struct ev *e = &d->ev[i];
		int w = e->worker;

		if (!e->used || e->leader >= 0 || (w < 0 && !e->queued) || now - e->t0 <= deadline_s(d, e))
			continue;
		d->st.timeouts++;
		fail_group(d, i, "timeout");
		if (w >= 0 && !d->w[w].dead) {
			d->st.appraiser_kills++;
			worker_died(d, w, "overran the deadline: killed", true);
		}
	}
}

/* ---- policy ---- */

static void policy_facts(struct vd *d, struct vg_policy *p)
{
	unsigned int uses = vg_policy_uses(p);

	d->policy_uses_subject = uses & (VG_POLICY_USES_SUBJ_EXE | VG_POLICY_USES_SUBJ_APPRAISAL);
	d->policy_access = uses & VG_POLICY_USES_ACCESS_RULES;
	d->policy_uses_uid = false;
	for (size_t i = 0; i < vg_policy_count(p); i++)
		if (vg_policy_rule(p, i)->flags & (VG_POLF_UID | VG_POLF_EUID | VG_POLF_GID | VG_POLF_EGID))
			d->policy_uses_uid = true;
	/* a path is not a property of the inode (hard links, renames), nor is the subject */
	d->ignore_ok = !d->policy_uses_uid && !d->policy_uses_subject &&
		       !(uses & (VG_POLICY_USES_PATH | VG_POLICY_USES_SUBJ_LSM));
	d->ignore_open_ok = vd_loader_policy(&d->loaders, p);
	vd_fsinfo_policy(&d->fsinfo, p);
}

static void policy_digest(struct vg_policy *p, char out[65])
{
	char *text = NULL;
	size_t len = 0;
	struct vg_digest dg;

	out[0] = 0;
	if (vg_policy_format(p, &text, &len) == 0 && vg_hash_buf(VG_HASH_SHA256, text, len, &dg, NULL) == 0)
		vg_hex_encode(dg.bytes, dg.len, out);
	free(text);
}

static int load_policy(const char *path, bool accept_unenforced, struct vg_policy **ret, char *msg,
		       size_t cap)
{
	struct vg_policy_error err = { 0 };
	int r = vg_policy_load_file(path, 0, ret, &err);

	if (r < 0) {
		if (err.line)
			snprintf(msg, cap, "%s:%u:%u: %s", path, err.line, err.col, err.msg);
		else
			snprintf(msg, cap, "%s: %s", path, err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	r = vd_policy_enforceable(*ret, path, accept_unenforced, msg, cap);
	if (r < 0) {
		vg_policy_unref(*ret);
		*ret = NULL;
	}
	return r;
}

struct reload_msg {
	struct vg_policy *p;
	char msg[640];
};

static void *reload_main(void *arg)
{
	struct vd *d = arg;
	struct reload_msg m = { 0 };

	if (load_policy(d->policy_path, d->accept_unenforced, &m.p, m.msg, sizeof(m.msg)) < 0)
		m.p = NULL;
	if (write(d->reload_pipe[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
		vg_policy_unref(m.p);
	return NULL;
}

static void start_reload(struct vd *d)
{
	if (d->reloading || !d->policy_path)
		return;
	if (pthread_create(&d->reload_tid, NULL, reload_main, d) == 0)
		d->reloading = true;
}

static void reload_done(struct vd *d)
{
	struct reload_msg m;

	if (read(d->reload_pipe[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
		return;
	pthread_join(d->reload_tid, NULL);
	d->reloading = false;
	if (!m.p) {
		logmsg("policy reload refused, the old policy stays: %s", m.msg);
		return;
	}
	vg_policy_unref(d->policy);
	d->policy = m.p;
	policy_facts(d, d->policy);
	policy_digest(d->policy, d->policy_digest);
	cache_clear(d);		/* verdicts of the old policy */
	if (d->notif >= 0)
		(void)fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
	logmsg("policy reloaded (%zu rules, sha256 %.16s)", vg_policy_count(d->policy),
	       d->policy_digest);
	vd_policy_unenforced_log(d->policy, d->policy_path, logmsg);
}

/* ---- control ---- */

static json_object *status_json(struct vd *d)
{
	json_object *o = json_object_new_object(), *c = json_object_new_object();
	json_object *marks = json_object_new_array(), *reasons = json_object_new_object();

	json_object_object_add(o, "mode", json_object_new_string(mode_names[d->mode]));
	json_object_object_add(o, "policy_sha256", json_object_new_string(d->policy_digest));
	json_object_object_add(o, "policy_rules",
			       json_object_new_int64((int64_t)vg_policy_count(d->policy)));
	json_object_object_add(o, "unenforced_rules", vd_policy_unenforced_json(d->policy));
	for (size_t i = 0; i < d->nwatch; i++)
		json_object_array_add(marks, json_object_new_string(d->watch[i]));
	json_object_object_add(o, "marks", marks);
	json_object_object_add(o, "pending", json_object_new_int((int)d->npending));
	json_object_object_add(o, "measurements",
			       json_object_new_int64(d->mlog ? (int64_t)vg_mlog_entries(d->mlog) : 0));
#define C(name) json_object_object_add(c, #name, json_object_new_int64((int64_t)d->st.name))
	C(events);
	C(allowed);
	C(denied);
	C(would_deny);
	C(own);
	C(cache_hits);
	C(cache_misses);
	C(hashed_bytes);
	C(timeouts);
	C(worker_restarts);
	C(overflows);
	C(measured);
	C(fixed);
	C(errors);
	C(ignore_marks);
	C(ignore_flushes);
	C(measure_failures);
	C(lease_breaks);
	C(lease_writers);
	C(lease_errors);
	C(too_large);
	C(appraiser_kills);
	C(worker_spawns);
	json_object_object_add(c, "appraisers", json_object_new_int64((int64_t)d->nworkers));
#undef C
	json_object_object_add(c, "leases", json_object_new_int64((int64_t)d->nleases));
	for (unsigned int i = 0; i < d->st.nreasons; i++)
		json_object_object_add(reasons, d->st.reasons[i].reason,
				       json_object_new_int64((int64_t)d->st.reasons[i].n));
	json_object_object_add(c, "denied_by_reason", reasons);
	json_object_object_add(o, "counters", c);
	json_object_object_add(o, "latency_p50_us", json_object_new_double(percentile(&d->st, 0.5)));
	json_object_object_add(o, "latency_p99_us", json_object_new_double(percentile(&d->st, 0.99)));
	return o;
}

static void on_control(struct vd *d)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	char req[256];
	json_object *o;
	ssize_t n;
	int c = accept4(d->ctl, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	n = read(c, req, sizeof(req) - 1);
	if (n <= 0) {
		close(c);
		return;
	}
	req[n] = 0;
	req[strcspn(req, "\r\n")] = 0;
	if (strcmp(req, "status") == 0) {
		o = status_json(d);
	} else if (strncmp(req, "mode ", 5) == 0) {
		int m = -1;

		for (int i = 0; i < 3; i++)
			if (strcmp(req + 5, mode_names[i]) == 0)
				m = i;
		o = json_object_new_object();
		if (m < 0) {
			json_object_object_add(o, "error", json_object_new_string("unknown mode"));
		} else {
			bool restart = (m == MODE_FIX) != (d->mode == MODE_FIX);

			d->mode = (enum mode)m;
			cache_clear(d);
			if (d->notif >= 0)
				(void)fanotify_mark(d->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
			logmsg("mode %s", mode_names[m]);
			if (restart)	/* fix mode changes what the appraisers may do */
				for (unsigned int w = 0; w < d->nworkers; w++)
					worker_died(d, (int)w, "restarted for the new mode", false);
			json_object_object_add(o, "mode", json_object_new_string(mode_names[m]));
		}
	} else if (strcmp(req, "reload") == 0) {
		start_reload(d);
		o = json_object_new_object();
		json_object_object_add(o, "reload", json_object_new_string("started"));
	} else {
		o = json_object_new_object();
		json_object_object_add(o, "error", json_object_new_string("unknown request"));
	}
	dprintf(c, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	close(c);
}

/* ---- setup ---- */

static const char help[] =
	"usage: vigild [--config FILE] [--policy FILE] [--mode enforce|permissive|fix]\n"
	"              [--watch PATH]... [--keyring CERT]... [--hmac-key FILE] [--log FILE]\n"
	"              [--tcti STRING | --no-tpm] [--control SOCKET] [--audit FILE] [--foreground]\n"
	"\n"
	"Appraise and measure files at exec and open (fanotify permission events),\n"
	"and deny what fails, under an IMA-style policy with access rules.\n"
	"  -c, --config FILE      vigil.conf (keys, keyring, hash, EVM xattrs)\n"
	"  -p, --policy FILE      the policy (docs/policy.md); required\n"
	"  -m, --mode MODE        enforce (deny), permissive (log only), fix (label\n"
	"                         missing or wrong hashes, never over signatures)\n"
	"  -w, --watch PATH       mark the filesystem holding PATH (repeatable)\n"
	"  -k, --keyring CERT     trusted certificate or public key (repeatable)\n"
	"  -H, --hmac-key FILE    EVM HMAC key (any vigil key file; a sealed key is\n"
	"                         unsealed with the TPM)\n"
	"  -l, --log FILE         measurement list (binary ima-ng); PCR extends go to the\n"
	"                         TPM, or with --no-tpm to a software bank FILE.pcrs\n"
	"  -t, --tcti STRING      the TPM (default $VIGIL_TCTI)\n"
	"      --no-tpm           software PCR bank (not attestable)\n"
	"  -s, --control SOCKET   control socket for `vigil status` (default /run/vigild.sock)\n"
	"  -a, --audit FILE       audit records, JSON lines (default: none)\n"
	"  -j, --workers N        appraiser processes (default 2)\n"
	"  -T, --timeout-ms N     decision deadline (default 5000), then the fail action;\n"
	"                         an appraiser still hashing then is killed and replaced;\n"
	"                         files of 16 MiB or more get 1 s per 200 MB on top, at\n"
	"                         most 12 deadlines in all\n"
	"      --max-file-size SIZE  files larger than SIZE (bytes, or with K, M, G, T)\n"
	"                         are not hashed: the fail action (default: no limit)\n"
	"      --fail-open        on timeout or appraiser failure allow (default: deny\n"
	"                         in enforce mode)\n"
	"      --accept-unenforced  keep policy rules vigild cannot enforce (mmap, open\n"
	"                         flags, kernel hooks, ...; refused by default), listed\n"
	"                         by `vigil status`\n"
	"      --loader PATH      also a dynamic loader (its opens count as execs);\n"
	"                         the system's are found (repeatable)\n"
	"  -f, --foreground       print 'vigild: ready' on stderr when the marks are set\n";

static int add_worker_arg(struct vd *d, const char *a, const char *b)
{
	char **n = realloc(d->worker_args, (d->nworker_args + 3) * sizeof(*n));

	if (!n)
		return -1;
	d->worker_args = n;
	n[d->nworker_args++] = (char *)a;
	if (b)
		n[d->nworker_args++] = (char *)b;
	n[d->nworker_args] = NULL;
	return 0;
}

/* "123", "64K", "1G" (powers of 1024) */
static int parse_size(const char *s, uint64_t *ret)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v;
	const char *u;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		if (end[1] || !(u = strchr(units, *end)))
			return -EINVAL;
		for (long k = 0; k <= u - units; k++) {
			if (v > UINT64_MAX / 1024)
				return -EINVAL;
			v *= 1024;
		}
	}
	*ret = v;
	return 0;
}

static int parse_args(struct vd *d, int argc, char **argv)
{
	enum { OPT_NOTPM = 256, OPT_FAILOPEN, OPT_MAXSIZE, OPT_ACCEPT, OPT_LOADER };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "watch", required_argument, NULL, 'w' },
		{ "keyring", required_argument, NULL, 'k' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "log", required_argument, NULL, 'l' },
		{ "tcti", required_argument, NULL, 't' },
		{ "no-tpm", no_argument, NULL, OPT_NOTPM },
		{ "control", required_argument, NULL, 's' },
		{ "audit", required_argument, NULL, 'a' },
		{ "workers", required_argument, NULL, 'j' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "fail-open", no_argument, NULL, OPT_FAILOPEN },
		{ "max-file-size", required_argument, NULL, OPT_MAXSIZE },
		{ "accept-unenforced", no_argument, NULL, OPT_ACCEPT },
		{ "loader", required_argument, NULL, OPT_LOADER },
		{ "foreground", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *mode = NULL;
	int c;

	d->nworkers = 2;
	d->timeout_ms = 5000;
	while ((c = getopt_long(argc, argv, "c:p:m:w:k:H:l:t:s:a:j:T:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d->config = optarg;
			break;
		case 'p':
			d->policy_path = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'w':
			if (d->nwatch == MAX_WATCH) {
				logmsg("at most %d --watch", MAX_WATCH);
				return -1;
			}
			d->watch[d->nwatch++] = optarg;
			break;
		case 'k':
			if (d->nkeyrings == 16) {
				logmsg("at most 16 --keyring");
				return -1;
			}
			d->keyrings[d->nkeyrings++] = optarg;
			break;
		case 'H':
			d->hmac_key_path = optarg;
			break;
		case 'l':
			d->log_path = optarg;
			break;
		case 't':
			d->tcti = optarg;
			break;
		case OPT_NOTPM:
			d->no_tpm = true;
			break;
		case 's':
			d->control_path = optarg;
			break;
		case 'a':
			d->audit_path = optarg;
			break;
		case 'j':
			d->nworkers = (unsigned int)atoi(optarg);
			if (d->nworkers < 1 || d->nworkers > MAX_WORKERS) {
				logmsg("--workers must be 1..%d", MAX_WORKERS);
				return -1;
			}
			break;
		case 'T':
			d->timeout_ms = (unsigned int)atoi(optarg);
			if (d->timeout_ms < 10) {
				logmsg("--timeout-ms must be at least 10");
				return -1;
			}
			break;
		case OPT_FAILOPEN:
			d->fail_open = true;
			break;
		case OPT_MAXSIZE:
			if (parse_size(optarg, &d->max_size) < 0 || !d->max_size) {
				logmsg("--max-file-size: '%s' is not a size (bytes, or a number with K, M, G or T)",
				       optarg);
				return -1;
			}
			break;
		case OPT_ACCEPT:
			d->accept_unenforced = true;
			break;
		case OPT_LOADER: {
			struct stat st;

			if (stat(optarg, &st) < 0 || !S_ISREG(st.st_mode)) {
				logmsg("--loader %s: not a file", optarg);
				return -1;
			}
			if (d->nloader_paths == 8) {
				logmsg("at most 8 --loader");
				return -1;
			}
			d->loader_paths[d->nloader_paths++] = optarg;
			break;
		}
		case 'f':
			d->foreground = true;
			break;
		case 'h':
			fputs(help, stdout);
			exit(0);
		default:
			fputs(help, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		logmsg("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	d->mode = MODE_ENFORCE;
	if (mode) {
		int m = -1;

		for (int i = 0; i < 3; i++)
			if (strcmp(mode, mode_names[i]) == 0)
				m = i;
		if (m < 0) {
			logmsg("--mode must be enforce, permissive or fix, not '%s'", mode);
			return -1;
		}
		d->mode = (enum mode)m;
	}
	if (!d->policy_path) {
		logmsg("no --policy given");
		return -1;
	}
	if (!d->nwatch) {
		logmsg("no --watch PATH given: nothing to mark");
		return -1;
	}
	return 0;
}

static int setup_keys(struct vd *d)
{
	struct vg_diag dg = { 0 };
	const char *hk = d->hmac_key_path ? d->hmac_key_path : d->cfg.hmac_key;

	for (size_t i = 0; i < d->nkeyrings; i++)
		add_worker_arg(d, "--keyring", d->keyrings[i]);
	if (!d->nkeyrings)
		for (size_t i = 0; i < d->cfg.nkeyrings; i++)
			add_worker_arg(d, "--keyring", d->cfg.keyrings[i]);
	for (size_t i = 8; i < d->cfg.evm.n; i++)
		add_worker_arg(d, "--evm-xattr", d->cfg.evm.x[i].name);
	if (d->cfg.uuid == VG_CONFIG_UUID_NONE)
		add_worker_arg(d, "--no-uuid", NULL);
	add_worker_arg(d, "--algo", vg_hash_name(d->algo));
	if (hk) {
		struct vg_key_source src = { .tpm = d->tpm, .tcti = vg_prog_tcti(d->tcti) };

		if (vg_hmac_key_load(hk, &src, &d->key, NULL, &dg) < 0) {
			logmsg("HMAC key %s", dg.msg);
			return -1;
		}
	}
	return 0;
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
			logmsg("%s", dg.msg);
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
		logmsg("measurement log %s: %s", d->log_path, dg.msg);
		return -1;
	}
	return 0;
}

static int setup_control(struct vd *d)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *path = d->control_path ? d->control_path : "/run/vigild.sock";

	if (strlen(path) >= sizeof(a.sun_path)) {
		logmsg("control socket path too long: %s", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	d->ctl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->ctl < 0)
		return -1;
	(void)unlink(path);
	if (bind(d->ctl, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(path, 0600) < 0 ||
	    listen(d->ctl, 8) < 0) {
		logmsg("control socket %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void notify_ready(struct vd *d)
{
	const char *ns = getenv("NOTIFY_SOCKET");

	if (ns && (ns[0] == '/' || ns[0] == '@') && strlen(ns) < sizeof(((struct sockaddr_un *)0)->sun_path)) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		socklen_t len;

		strcpy(a.sun_path, ns);
		if (a.sun_path[0] == '@')
			a.sun_path[0] = 0;
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(ns));
		if (s >= 0) {
			(void)sendto(s, "READY=1", 7, 0, (struct sockaddr *)&a, len);
			close(s);
		}
	}
	if (d->foreground)
		fputs("vigild: ready\n", stderr);
}

static void drain(struct vd *d)
{
	double until = now_s() + d->timeout_ms / 1000.0;

	while (d->npending && now_s() < until) {
		struct pollfd p[MAX_WORKERS];

		dispatch(d);
		for (unsigned int i = 0; i < d->nworkers; i++)
			p[i] = (struct pollfd){ .fd = d->w[i].dead ? -1 : d->w[i].sock, .events = POLLIN };
		if (poll(p, d->nworkers, 100) > 0)
			for (unsigned int i = 0; i < d->nworkers; i++)
				if (p[i].revents)
					on_reply(d, (int)i);
	}
	for (int i = 0; i < MAX_PENDING; i++)
		if (d->ev[i].used && d->ev[i].leader < 0)
			fail_group(d, i, "shutdown");
}

static int run(struct vd *d)
{
	for (;;) {
		struct pollfd p[5 + MAX_WORKERS];
		int n = 0, timeout = d->npending ? 50 : 1000;

		p[n++] = (struct pollfd){ .fd = d->fan, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = d->sigfd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = d->ctl, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = d->reload_pipe[0], .events = POLLIN };
		for (unsigned int i = 0; i < d->nworkers; i++)
			p[n++] = (struct pollfd){ .fd = d->w[i].dead ? -1 : d->w[i].sock, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = d->notif, .events = POLLIN };
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			logmsg("poll: %s", strerror(errno));
			return -1;
		}
		/* attribute changes first: no event may be skipped on a stale mark */
		if (p[n - 1].revents & POLLIN)
			flush_ignores(d);
		/* lease breaks before events: a writer waits on each */
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (d->lease_sig && si.ssi_signo == (uint32_t)d->lease_sig) {
					lease_broken(d, si.ssi_fd);
				} else if (si.ssi_signo == SIGIO) {
					lease_rescan(d);
				} else if (si.ssi_signo == SIGHUP) {
					start_reload(d);
				} else if (si.ssi_signo == SIGCHLD) {
					pid_t pid;

					while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
						for (unsigned int i = 0; i < d->nworkers; i++)
							if (d->w[i].pid == pid && !d->w[i].dead)
								worker_died(d, (int)i, "exited", false);
				} else {
					logmsg("signal %d: draining and exiting", (int)si.ssi_signo);
					d->stopping = true;
					drain(d);
					return 0;
				}
			}
		}
		if (p[0].revents & POLLIN)
			read_events(d);
		for (unsigned int i = 0; i < d->nworkers; i++)
			if (p[4 + i].revents)
				on_reply(d, (int)i);
		if (p[2].revents & POLLIN)
			on_control(d);
		if (p[3].revents & POLLIN)
			reload_done(d);
		if (d->npending)
			check_timeouts(d);
		dispatch(d);
	}
}

int main(int argc, char **argv)
{
	static struct vd vd;
	struct vd *d = &vd;
	struct vg_diag dg = { 0 };
	char msg[640];
	sigset_t mask;
	int rc;

	if (argc >= 3 && strcmp(argv[1], "--appraiser") == 0) {
		int sock = atoi(argv[2]);

		return vd_worker_main(sock, argc - 2, argv + 2);
	}
	d->fan = d->sigfd = d->ctl = d->audit = d->notif = -1;
	d->self = getpid();
	vg_config_init(&d->cfg);
	if (parse_args(d, argc, argv) < 0)
		return 2;
	if (vg_config_load(&d->cfg, d->config ? d->config : VG_CONFIG_DEFAULT, !d->config, &dg) < 0) {
		logmsg("config: %s", dg.msg);
		return 2;
	}
	d->algo = d->cfg.algo;
	if (!d->tcti)
		d->tcti = d->cfg.tcti;
	if (d->log_path && !d->no_tpm && !d->tcti && !getenv("VIGIL_TCTI")) {
		logmsg("--log needs a TPM (--tcti, tpm.tcti or $VIGIL_TCTI) or --no-tpm");
		return 2;
	}
	if (load_policy(d->policy_path, d->accept_unenforced, &d->policy, msg, sizeof(msg)) < 0) {
		logmsg("policy refused: %s", msg);
		return 2;
	}
	vd_policy_unenforced_log(d->policy, d->policy_path, logmsg);
	vd_loaders_init(&d->loaders, d->loader_paths, d->nloader_paths);	/* --loader checked above */
	policy_facts(d, d->policy);
	policy_digest(d->policy, d->policy_digest);
	d->cache = calloc(CACHE_CAP, sizeof(*d->cache));
	d->measured = calloc(CACHE_CAP, sizeof(*d->measured));
	for (size_t i = 0; i < UQ_CAP; i++)
		d->uq[i].head = d->uq[i].tail = -1;
	lease_setup(d);
	if (!d->cache || !d->measured || !d->lease) {
		logmsg("out of memory");
		return 2;
	}
	if (!d->no_tpm && (d->tcti || getenv("VIGIL_TCTI"))) {
		setenv("TSS2_LOG", "all+none", 0);	/* errors are reported once, here */
		if (vg_tpm_open(vg_prog_tcti(d->tcti), &d->tpm, &dg) < 0) {
			logmsg("TPM: %s", dg.msg);
			return 2;
		}
	}
	if (setup_keys(d) < 0 || setup_log(d) < 0 || setup_control(d) < 0)
		return 2;
	if (d->audit_path) {
		d->audit = open(d->audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (d->audit < 0) {
			logmsg("audit file %s: %s", d->audit_path, strerror(errno));
			return 2;
		}
	}
	if (pipe2(d->reload_pipe, O_CLOEXEC) < 0)
		return 2;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGIO);
	if (d->lease_sig)
		sigaddset(&mask, d->lease_sig);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (spawn_worker(d, (int)i) < 0) {
			logmsg("cannot start appraiser: %s", strerror(errno));
			return 2;
		}
	/*
	 * The monitor keeps the key (locked in memory, out of core dumps) for
	 * the appraisers it starts later: one that replaces a dead or killed
	 * appraiser, anyone can provoke that, must not come up without it and
	 * let HMAC labels go unchecked. The monitor is root and holds the TPM
	 * that unseals it anyway; it never reads file content.
	 */
	(void)mlock(&d->key, sizeof(d->key));
	(void)madvise((void *)((uintptr_t)&d->key & ~(uintptr_t)4095), 4096, MADV_DONTDUMP);
	d->fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE,
			       O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME);
	if (d->fan < 0) {
		logmsg("fanotify_init: %s", strerror(errno));
		return 2;
	}
	for (size_t i = 0; i < d->nwatch; i++)
		if (fanotify_mark(d->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				  FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM, AT_FDCWD, d->watch[i]) < 0) {
			logmsg("cannot mark the filesystem of %s: %s", d->watch[i], strerror(errno));
			return 2;
		}
	/* the attribute channel; without it no ignore marks are set */
	d->notif = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY);
	for (size_t i = 0; d->notif >= 0 && i < d->nwatch; i++)
		if (fanotify_mark(d->notif, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_ATTRIB, AT_FDCWD,
				  d->watch[i]) < 0) {
			logmsg("no FAN_ATTRIB channel for %s (%s): verdicts are cached in vigild only",
			       d->watch[i], strerror(errno));
			close(d->notif);
			d->notif = -1;
		}
	notify_ready(d);
	rc = run(d);
	/* an appraiser may be in the middle of a long hash: it holds nothing to save */
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (!d->w[i].dead) {
			close(d->w[i].sock);
			kill(d->w[i].pid, SIGKILL);
			waitpid(d->w[i].pid, NULL, 0);
		}
	close(d->fan);
	vg_hmac_key_wipe(&d->key);
	vg_mlog_free(d->mlog);
	vg_pcrbank_free(d->bank);
	vg_tpm_close(d->tpm);
	vg_policy_unref(d->policy);
	cache_clear(d);
	free(d->cache);
	free(d->measured);
	free(d->worker_args);
	vg_config_release(&d->cfg);
	if (d->control_path)
		unlink(d->control_path);
	return rc < 0 ? 2 : 0;
}
