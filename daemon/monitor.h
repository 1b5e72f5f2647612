/* SPDX-License-Identifier: MIT */
/*
 * monitor.h - the vigild monitor's state and the contracts between its
 * files. The monitor is one thread (main.c's poll loop); nothing here is
 * locked. Files, in the order an event meets them:
 *
 *   fanotify.c  the only user of <sys/fanotify.h>: groups, marks, reading
 *               events, answers, ignore marks
 *   events.c    an event: access facts, policy match, cache, leader
 *   cache.c     verdicts per file version      lease.c  read leases
 *   dispatch.c  per-uid queues, round-robin    pool.c   the appraisers
 *   verdict.c   measure, decide, audit, answer audit.c   audit lines
 *   reload.c    policy load and reload         control.c control socket
 *   trust.c     trust=archive: the trust database in memory, its lookup
 *   stats.c     reasons and latency            args.c   command line
 *   startup.c   settings checked before ready: keys, keyrings, TPM,
 *               default paths, the control socket's lock
 *   main.c      setup and the loop
 *
 * What is looked up on every event (the cache slot, the lease set) is
 * static inline here, so the event path costs what it did in one file.
 */
#ifndef VIGILD_MONITOR_H
#define VIGILD_MONITOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "log.h"
#include "vigil/appraise.h"
#include "vigil/config.h"
#include "vigil/hmac_key.h"
#include "vigil/mlog.h"
#include "vigil/pcrbank.h"
#include "vigil/policy.h"
#include "vigil/tpm.h"
#include "vigil/trust.h"
#include "vigild.h"
#include "vigild_ctl.h"

#define MAX_WATCH 16		/* --watch */
#define MAX_MARKS 256		/* filesystems marked (marks.c) */
#define MAX_ACCEPT 64		/* --accept-gap */
#define MAX_GAPS 64
#define MAX_PENDING 4096
#define MAX_WORKERS 8
#define CACHE_CAP 65536		/* power of two */
#define LEASE_CAP 65536		/* power of two */
#define LEASE_WAYS 4		/* the lease table's associativity (lease.c) */
#define VD_LEASE_IDLE 10.0	/* s: a transient lease unused this long is dropped (lease.c) */
#define UQ_CAP 64		/* per-uid queues (a uid hashes to one) */
#define WORKER_DEPTH 2		/* small requests in flight per appraiser */
#define LARGE_FILE ((off_t)16 << 20)	/* takes an appraiser for itself */
#define VD_START_TRIES 5	/* appraiser deaths before their hello, in a row: vigild stops */
#define VD_EXIT_CRASHLOOP 3	/* exit status after ready when appraisers cannot start */
#define VD_RELOAD_WAITERS 8	/* `vigil status --reload` clients waiting for one result */
#define VD_ANNOUNCE_WAITERS 16	/* `vigil trust boot announce` clients waiting for their commit */
#define VD_TRUST_DB_DEFAULT "/var/lib/vigil/trust.db"	/* --trust-db, trust.db in vigil.conf */

/* what an event is, in fanotify.c's words to the rest */
#define VD_EV_OPEN 0x1u		/* FAN_OPEN_PERM */
#define VD_EV_EXEC 0x2u		/* FAN_OPEN_EXEC_PERM */

enum mode { MODE_ENFORCE = VD_CTL_ENFORCE, MODE_PERMISSIVE = VD_CTL_PERMISSIVE, MODE_FIX = VD_CTL_FIX };

struct vkey {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime, ctime;
};

struct result {
	bool valid, appraised;
	bool sig_required;	/* appraised with appraise_type=imasig */
	bool archive_audited;	/* an allow by the trust database was recorded for this version */
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
	uint32_t inflight;	/* PCRs a measurement of it is on its way to (commit.c) */
	uint64_t seq;		/* ... the last one's sequence number */
};

/* what a filesystem is to vigild (mounts.c) */
enum vd_fsclass { VD_FS_PSEUDO, VD_FS_DEVICE, VD_FS_LOCAL, VD_FS_STACKED, VD_FS_SLOW };

struct vd_mount {
	uint64_t id;
	dev_t dev;
	char *point;		/* where, in vigild's mount namespace */
	char fstype[32];
	bool ro;		/* the filesystem is read-only (superblock), not just this mount */
	bool noexec;
	bool whole;		/* mounts the filesystem's root, not a part of it bound here */
	enum vd_fsclass cls;
};

struct vd_mounts {
	struct vd_mount *m;
	size_t n;
	int fd;			/* /proc/self/mountinfo, polled for changes before a path is walked */
	uint64_t gen;
};

/* a stacked or slow filesystem's own group and reader (side.c) */
enum { VD_SIDE_STARTING, VD_SIDE_MARKED, VD_SIDE_FAILED, VD_SIDE_ENDED };
struct vd_side {
	struct vd *d;
	int group;		/* its fanotify group: read by its thread, answered by the loop */
	int stop;		/* eventfd: the thread ends */
	dev_t dev;
	enum vd_fsclass cls;
	bool fuse;		/* its files cannot pass an appraisal (events.c) */
	bool want_names;	/* the thread checks each file's name (a path= policy) */
	bool fd_error;		/* its group has FAN_REPORT_FD_ERROR */
	char *point;
	uint64_t magic;		/* its statfs f_type, read by the thread */
	int mark_err;
	_Atomic int state;	/* VD_SIDE_* */
	pthread_t tid;
};

/* a filesystem vigild watches (marks.c) */
struct vd_mark {
	dev_t dev;
	enum vd_fsclass cls;
	char *point;		/* the path it was marked through */
	char fstype[32];
	bool explicit_;		/* a --watch path is on it */
	struct vd_side *side;	/* stacked, slow: its own group; NULL: the main group */
	int said;		/* the side's state last logged */
};

/* where an event came from (events.c) */
struct vd_origin {
	struct vd_side *side;	/* NULL: the main group */
	bool before;		/* a program running before vigild started (before.c): no kernel waits */
	int parked;		/* > 0: an event that waited in the holder, answered by this number (hold.h) */
};

/* a way around vigild (gaps.c) */
enum vd_gap_state { VD_GAP_CLOSED, VD_GAP_ACCEPTED, VD_GAP_OPEN, VD_GAP_OUTSIDE };
struct vd_gap {
	char name[4096 + 8];	/* memfd, userns, fuse, mount:PATH */
	enum vd_gap_state state;	/* OUTSIDE: the policy neither judges nor measures execs there */
	bool judged;		/* the policy appraises or denies execs there: refused if open in enforce mode */
	char *how;		/* what it lets through and how to close it */
};

/* an event's measurement (vd_finish): not asked yet, or what the list's writer said */
enum { VD_MEAS_NONE, VD_MEAS_OK, VD_MEAS_FAILED };

struct ev {
	bool used;
	uint16_t gen;
	int fd;
	pid_t pid;
	uint64_t mask;
	struct vkey key;
	mode_t fmode;		/* the file's st_mode at the event */
	nlink_t nlink;		/* ... and its st_nlink (0: unlinked, no name: names.c) */
	double t0;
	int worker;		/* appraiser working on it, -1: waiting for a leader */
	int leader;		/* index of the event whose appraisal this one waits for */
	int next_waiter;	/* list of events waiting for this one */
	char *path;		/* the kernel's name, as the opener's mount namespace sees it */
	char *path_here;	/* its name in vigild's, where that is another (names.c) */
	struct vg_decision dec;
	struct vg_access acc;
	bool creds;		/* acc's uids and gids were read (vd_task_creds) */
	char *subj_exe;		/* the kernel's name of the opener's program */
	char *exe_here;		/* its name in vigild's mount namespace, where that is another */
	bool need_appraise;
	bool leased;		/* a lease was held from before the content was read */
	uint32_t lease_gen;
	bool large, queued;	/* queued: waiting in its uid's queue for an appraiser */
	int qnext;
	bool counted;		/* in its uid queue's pending count */
	bool fixing;		/* fix mode wrote its labels: appraised again without VD_FIX */
	uid_t uid;		/* the opener's, for fair dispatch (count_opener) */
	unsigned int uq;	/* the queue it is counted in (d->uq[]), when counted */
	/*
	 * The appraiser that was allowed to answer this event itself
	 * (VD_ANSWER), until its reply for it arrives; 0: none. While it may
	 * still write, the event's descriptor stays open even after the event
	 * is done (vd_ev_release parks it until that process is reaped), so
	 * that its number, which is what names the event to the kernel, is
	 * not given to a new event that a late allow would then answer.
	 */
	pid_t answer_pid;
	int answer_no;		/* the number the kernel knows it by: fd, or the holder's (hold.h) */
	bool parked;		/* it waited in the holder while no monitor ran */
	bool answered;		/* the appraiser wrote the allow: the monitor writes none */
	/*
	 * Waiting for the measurement list's writer (commit.c): the sequence
	 * number of the measurement it waits for (0: none), what became of
	 * its own, and the result it is decided on, kept here meanwhile (a
	 * cache slot may be reused before the writer is done).
	 */
	uint64_t mwait;
	int mstate;
	bool has_res;
	struct result res;
	struct vd_side *side;	/* read from a side's group (answered there); NULL: the main one */
	bool before;		/* a program that ran before vigild started: no kernel waits (before.c) */
};

/* An event's descriptor kept open until @pid, which could still answer it, is reaped. */
struct parked_fd {
	int fd;
	pid_t pid;
};
#define PARKED_CAP (MAX_WORKERS * WORKER_DEPTH * 4)

/* The monitor's read lease on an inode: what keeps its cached verdicts true. */
struct lease {
	bool held, ignored;	/* ignored: a kernel ignore mark depends on it */
	bool transient;		/* on a filesystem --watch-mounts marked: dropped when idle (lease.c) */
	double used;		/* vd_now() of its last use, for transient ones */
	dev_t dev;
	ino_t ino;
	int fd;			/* the descriptor of the event it was taken on, which it keeps open */
	uint32_t gen;		/* new on take and on drop: old verdicts never match */
};

struct uqueue {
	uid_t uid;		/* whose queue it is, while it is in use (vd_uq_claim) */
	int head, tail;		/* events waiting for an appraiser, FIFO */
	unsigned int pending;	/* events of this queue's uids not yet answered */
	unsigned int large_inflight;
};

struct worker {
	pid_t pid;
	int sock;
	unsigned int inflight;
	bool dead, large;	/* large: hashing a large file, takes nothing else */
	bool started;		/* its hello arrived (vigild.h) */
	int cpu;		/* the CPU it is held to (pool.c, place); -1: any of the monitor's */
};

/* trust=archive's table (trust.c): immutable once loaded, swapped whole on reload */
struct vd_trust {
	struct vg_trust_index *idx;
	struct vg_trust_root root;	/* --trust-root and its merged-/usr links */
	unsigned int algo;		/* of the digests compared */
};

struct stats {
	uint64_t events, allowed, denied, would_deny, own, cache_hits, cache_misses, hashed_bytes;
	uint64_t timeouts, worker_restarts, overflows, measured, fixed, errors;
	uint64_t ignore_marks, ignore_flushes, measure_failures;
	uint64_t lease_breaks, lease_writers, lease_errors, too_large, appraiser_kills, worker_spawns;
	uint64_t trusted_archive;	/* unlabeled files allowed by the trust database */
	uint64_t appraiser_answers;	/* allows the appraiser wrote to the group itself (VD_ANSWER) */
	uint64_t appraisals;		/* replies with a full appraisal (EVM, then content) */
	uint64_t open_errors;		/* events the kernel refused: their file could not be opened for vigild */
	uint64_t before_failed;		/* programs running before ready that failed their appraisal */
	uint64_t lat[32];	/* log2 buckets of microseconds */
	struct {
		char reason[40];
		uint64_t n;
	} reasons[32];
	unsigned int nreasons;
	double lat_sum_us;	/* the sum of the latencies counted in lat */
};

struct vd {
	/* options */
	const char *config, *policy_path, *log_path, *audit_path, *control_path, *tcti;
	const char *hmac_key_path;
	const char *passphrase_file;	/* --passphrase-file (startup.c) */
	const char *trust_db_path;	/* --trust-db (else trust.db in vigil.conf, else the default) */
	const char *trust_root;		/* --trust-root (default "/") */
	const char *trust_key_path;	/* --trust-key (default: the HMAC key) */
	bool allow_empty_keyring;	/* --allow-empty-keyring */
	bool log_default;		/* no --log: the default list, when the policy measures */
	const char *watch[MAX_WATCH];
	size_t nwatch;
	struct {			/* a directory on each watched local filesystem (names.c) */
		const char *dir;
		dev_t dev;
	} wmount[MAX_MARKS];
	size_t nwmount;
	const char *watch_mounts;	/* --watch-mounts PREFIX: mounts under it are watched (marks.c) */
	struct vd_mounts mounts;	/* the mount table (mounts.c) */
	struct vd_mark marks[MAX_MARKS];
	size_t nmarks;
	int mnt_watch;			/* wakes the loop when the mount table changes (-1: none) */
	bool mnt_events;		/* ... it is fanotify's mount events (else mountinfo's POLLPRI) */
	bool mounts_dirty;		/* changed while the marks could not be touched (before ready) */
	const char *accept[MAX_ACCEPT];	/* --accept-gap (gaps.c) */
	size_t naccept;
	struct vd_gap gaps[MAX_GAPS];
	size_t ngaps;
	bool close_gaps;		/* --close-gaps: set the sysctls, exit */
	bool test_no_memfd_noexec, test_no_mnt_events;	/* the test build: features forced off */
	/* side groups' events, and the scan of running programs, for the loop (side.c) */
	pthread_mutex_t side_lock;
	struct vd_sevent *side_head, *side_tail;
	int side_fd;			/* eventfd */
	_Atomic unsigned long before_procs;	/* processes running when vigild started (before.c) */
	unsigned int before_pending;	/* their programs not decided yet (+1 until the scan ends) */
	bool ready;			/* READY=1 said */
	/* --hold (hold.h, held.c) */
	int hold;			/* -1: from vigil.conf (vigild.hold), else 0 or 1 */
	int holder;			/* the channel to the holder; -1: none */
	const char *handoff;		/* --handoff: the holder's socket across a service restart */
	void *held_stats;		/* the counters in the holder's memory (held.c), or NULL */
	bool held_group;		/* the group was the holder's: a restart */
	unsigned long parked_open;	/* events handed over by the holder, not answered yet */
	bool parked_end;		/* ... and all of them handed over */
	bool left_behind;		/* a thread stuck on a server or the TPM at exit: _exit (main.c) */
	const char *keyrings[16];
	size_t nkeyrings;
	bool no_tpm, foreground, background, fail_open;
	bool no_fd_error;		/* test build: as a kernel without FAN_REPORT_FD_ERROR */
	bool fd_error_reported;		/* the group has FAN_REPORT_FD_ERROR (fanotify.c) */
	bool accept_unenforced;	/* keep rules vigild cannot enforce (unenforced.c) */
	const char *appraiser_user;	/* --appraiser-user (default "vigil") */
	uid_t app_uid;
	gid_t app_gid;
	char app_ids[2][16];	/* the appraisers' --uid, --gid */
	const char *loader_paths[8];	/* --loader */
	size_t nloader_paths;
	enum mode mode;
	const char *mode_arg;	/* --mode, when given (vigild.mode otherwise) */
	unsigned int nworkers, timeout_ms, algo;
	uint64_t max_size;	/* 0: none */
	char **worker_args;	/* options handed to appraisers */
	size_t nworker_args;
	/* state */
	struct vg_config cfg;
	struct vg_policy *policy;
	struct vd_trust *trust;	/* NULL: the policy has no trust=archive */
	bool policy_uses_subject, policy_uses_uid, policy_access;
	bool policy_uses_path;	/* a rule has path=: the path is read at the event, not when first needed */
	bool ignore_ok;		/* verdicts depend on the inode alone: kernel ignore marks may cache them */
	bool ignore_open_ok;	/* ... for opens too: no rule can match an exec (loader.c) */
	struct vd_loaders loaders;
	struct vd_fsinfo fsinfo;	/* fsname=, fsuuid= */
	int notif;		/* FAN_ATTRIB notifications: chmod, chown, setxattr drop ignore marks */
	char policy_digest[65];
	int fan, sigfd, ctl, audit;
	int ep;			/* the loop's epoll set (main.c), -1 before the loop */
	int reload_pipe[2];
	pthread_t reload_tid;
	bool reloading;
	struct vg_hmac_key key;
	struct vg_hmac_key trust_key;	/* --trust-key; empty: the trust database is under key */
	struct vg_tpm *tpm;
	struct vg_pcrbank *bank;
	struct vg_mlog *mlog;		/* the list's writer's (commit.c) once the loop runs */
	uint64_t measurements;		/* entries in the list, as the writer last said */
	/* the list's writer thread (commit.c) */
	pthread_t commit_tid;
	pthread_mutex_t commit_lock;
	pthread_cond_t commit_cond;
	struct vd_mreq *commit_head, *commit_tail;	/* queued for it (commit_lock) */
	struct vd_mreq *done_head, *done_tail;		/* done, for the loop (commit_lock) */
	bool commit_stop, committing;
	int commit_fd;			/* eventfd: results are waiting */
	uint64_t commit_seq;		/* the last measurement queued */
	uint64_t commit_done;		/* the last one whose result the loop has */
	unsigned int nmwait;		/* events waiting for a measurement */
	struct worker w[MAX_WORKERS];
	cpu_set_t cpus;		/* the monitor's own CPUs, at start */
	bool cpus_many;		/* more than one: appraisers are placed (pool.c) */
	struct parked_fd parked[PARKED_CAP];
	unsigned int nparked;
	struct ev ev[MAX_PENDING];
	unsigned int npending;
	int ev_hi;		/* one past the highest slot in use: every walk of ev[] stops here */
	struct result *cache;
	struct measured *measured;
	struct lease *lease;
	unsigned int nleases, lease_max;
	int lease_sig;		/* 0: leases unavailable, nothing is cached */
	unsigned int lease_evict;
	unsigned int ntransient;	/* transient leases held */
	double lease_sweep;		/* vd_now() of the next vd_lease_expire */
	uint32_t lease_gens;	/* generations are unique across the table: a set's ways never share one */
	bool lease_warned;
	struct result uncached;	/* a verdict that may not be kept */
	struct uqueue uq[UQ_CAP];
	unsigned int rr;
	struct stats st;
	const char *metrics_path;	/* --metrics-file (metrics.c) */
	const char *journal_path;	/* --journal (audit.c, startup.c) */
	double metrics_next;		/* vd_now() of its next rewrite */
	double watchdog_s, watchdog_next;	/* WATCHDOG=1 every watchdog_s (0: none), next at */
	pid_t self;
	bool stopping;
	int fatal;		/* non-zero: stop with this exit status (pool.c) */
	unsigned int start_failures;	/* appraiser deaths before their hello, in a row */
	size_t nkeys;		/* trusted keys in the keyrings, counted at start */
	int lock_fd;		/* the control socket's lock (startup.c), -1 */
	char lock_path[4096 + 8];
	bool ctl_bound;		/* the control socket is ours: unlinked at exit */
	int reload_waiters[VD_RELOAD_WAITERS];	/* control connections waiting for the reload */
	unsigned int nreload_waiters;
	unsigned int nannounce_waiters;	/* control connections waiting for an announcement's commit */
	char *log_real;		/* the list's canonical path, what an announcement names (announce.c) */
	struct {
		bool valid;
		dev_t dev;
		uint64_t magic;
	} fs[8];
};

/* ---- main.c ---- */

static inline double vd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * vd_loop_add_worker / vd_loop_del_worker - appraiser @w's socket into or
 * out of the loop's epoll set: at its spawn, and before its socket is
 * closed (a closed descriptor's number may be the next appraiser's).
 * Before the loop starts they do nothing. Return: 0, -errno.
 */
int vd_loop_add_worker(struct vd *d, int w);
void vd_loop_del_worker(struct vd *d, int w);

/* Say READY=1 (and 'vigild: ready' with --foreground); what waited for it goes on. */
void vd_ready(struct vd *d);

/* "vigild: MESSAGE" on stderr (the journal under systemd). */
void vd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* vd_log at a priority of common/log.h (VLOG_ERR, VLOG_WARNING, VLOG_INFO) */
void vd_log_at(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- cache.c ---- */

static inline size_t vd_key_slot(const struct vkey *k)
{
	uint64_t h = (uint64_t)k->ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)k->dev * 0xc2b2ae3d27d4eb4full ^
		     (uint64_t)k->ctime * 0x165667b19e3779f9ull ^ (uint64_t)k->mtime ^ (uint64_t)k->size;

	return (size_t)(h ^ (h >> 29)) & (CACHE_CAP - 1);
}

static inline bool vd_key_eq(const struct vkey *a, const struct vkey *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime == b->mtime &&
	       a->ctime == b->ctime;
}

/*
 * Direct-mapped: a collision replaces the older version (it is only a
 * cache). A verdict counts only under the lease generation it was made in.
 * Return: the cached result of version @k, or NULL.
 */
static inline struct result *vd_cache_get(struct vd *d, const struct vkey *k, uint32_t lease_gen)
{
	struct result *r = &d->cache[vd_key_slot(k)];

	return r->valid && vd_key_eq(&r->key, k) && r->lease_gen == lease_gen ? r : NULL;
}

/* Return: @k's slot, emptied and keyed, for a verdict made under @lease_gen. */
struct result *vd_cache_put(struct vd *d, const struct vkey *k, uint32_t lease_gen);
/* Forget every verdict (policy or mode changed). */
void vd_cache_clear(struct vd *d);
/*
 * vd_table_alloc - @len zeroed bytes for one of the monitor's tables,
 * backed by memory now (huge pages where the kernel gives them, one
 * write per page) and left out of fork()
 * (MADV_DONTFORK: an appraiser's fork would otherwise make every page
 * copy-on-write again), so that no access pays a page fault: the tables
 * are hashed, and each cold file would touch a page of its own. An
 * appraiser is exec'd right after its fork and never sees them.
 * Return: the table, NULL (out of memory). vd_table_free() gives it back.
 */
void *vd_table_alloc(size_t len);
void vd_table_free(void *p, size_t len);

/* ---- lease.c ---- */

static inline size_t vd_lease_set(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 31)) & (LEASE_CAP - 1) & ~(size_t)(LEASE_WAYS - 1);
}

/* Return: the lease held on (@dev, @ino), or NULL. */
static inline struct lease *vd_lease_get(struct vd *d, dev_t dev, ino_t ino)
{
	struct lease *set = &d->lease[vd_lease_set(dev, ino)];

	for (size_t k = 0; k < LEASE_WAYS; k++)
		if (set[k].held && set[k].dev == dev && set[k].ino == ino)
			return &set[k];
	return NULL;
}

/* Invalidate what depends on @l (its ignore mark, its verdicts), then release it. */
void vd_lease_drop(struct vd *d, struct lease *l);
/* Is @e's descriptor the one its inode's lease is held on (and keeps open)? */
bool vd_lease_owns(struct vd *d, const struct ev *e);
/*
 * vd_lease_take - a lease on the inode of @fd (an event's descriptor).
 * Return: 0 with *@ret_gen; -EAGAIN the file is open for writing (do not
 * cache); another -errno when leases cannot be had (nothing is cached).
 */
int vd_lease_take(struct vd *d, int fd, dev_t dev, ino_t ino, uint32_t *ret_gen);
/* The kernel breaks the lease on @fd (a writer waits): drop it. */
void vd_lease_broken(struct vd *d, int fd);
/* SIGIO: the signal queue overflowed; check every lease. */
void vd_lease_rescan(struct vd *d);
/* Allocate the table, raise RLIMIT_NOFILE, choose the lease signal (0: none). */
void vd_lease_setup(struct vd *d);
/* Return: whether @e's verdict may be kept (its lease is still the one it was made under). */
bool vd_lease_valid_for(struct vd *d, const struct ev *e);
/* Drop the leases on filesystems --watch-mounts marked that were not used for VD_LEASE_IDLE s. */
void vd_lease_expire(struct vd *d);

/* ---- stats.c ---- */

/* Count one denial (or would-deny, fail action) for @reason. */
void vd_stats_reason(struct vd *d, const char *reason);
/* Return: the upper bound in µs of the bucket holding percentile @p (0..1). */
double vd_stats_percentile(const struct stats *s, double p);
/* Count the latency of a decision that started at @t0 (vd_now()). */
void vd_stats_latency(struct vd *d, double t0);
/* The latency histogram of @st into the control answer @s. */
void vd_stats_fill_latency(const struct stats *st, struct vd_ctl_status *s);

/* ---- metrics.c ---- */

/*
 * vd_metrics_write - rewrite --metrics-file now, from the monitor itself
 * (temporary beside it, then rename): only while no mark is in place.
 * Return: 0 (also without --metrics-file), or -1 after logging the file
 * and the problem.
 */
int vd_metrics_write(struct vd *d);
/* vd_metrics_tick - from the loop: when 5 s are up, the text is written by a thread. */
/* vd_metrics_final - at exit, once the fanotify group is closed: the last counters
 * (nothing when the file was never written). */
void vd_metrics_final(struct vd *d);
void vd_metrics_tick(struct vd *d);

/* ---- held.c: the monitor's side of --hold (hold.h) ---- */

/* The holder's channel from the environment. Return: 1, 0 (no holder), -1 after logging. */
int vd_held_open(struct vd *d);
/* The group of the monitor before, from the holder. Return: 1 taken, 0 none yet, -1 after logging. */
int vd_held_group(struct vd *d);
/* Give the holder the group just made and marked. Return: 0 or -errno (logged). */
int vd_held_give(struct vd *d);
/* Stop the holder reading and judge what waited in it. Return: 0, or -1 after logging. */
int vd_held_take(struct vd *d);
/* One event the holder had parked was answered (@one), or none is left to answer. */
void vd_held_answered(struct vd *d, bool one);
/* The monitor ends: the holder reads the group from here on (what the exit opens). */
void vd_held_release(struct vd *d);
/* the counters into the holder's memory, so that they outlive this monitor (each loop turn, at exit) */
void vd_held_save(struct vd *d);

/* ---- fanotify.c ---- */

/*
 * vd_fan_init - the permission group, without marks (it raises no event
 * yet): made before the appraisers start, which hold a copy to write
 * their allows to (vigild.h). Return: 0, or -1 after logging why.
 */
int vd_fan_init(struct vd *d);
/*
 * vd_fan_setup - the group's filesystem marks on every --watch path, and
 * the FAN_ATTRIB notification group (without which no ignore marks are
 * set: d->notif stays -1).
 * Return: 0, or -1 after logging why.
 */
int vd_fan_setup(struct vd *d);
/* The VD_EV_* of a fanotify event mask. */
uint32_t vd_fan_ev_mask(uint64_t m);
/* Answer the permission event of @fd. */
void vd_fan_respond(struct vd *d, int fd, bool allow);
/* Read and hand on every queued event (vd_event). */
void vd_fan_read(struct vd *d);
/* Return: 0 when an ignore mark for @mask (VD_EV_*) is set on @fd's inode, or -errno. */
int vd_fan_ignore(struct vd *d, int fd, uint32_t mask);
/* Remove the ignore mark of @fd's inode. */
void vd_fan_unignore(struct vd *d, int fd);
/* A new group like the main one; *@fd_error: try FAN_REPORT_FD_ERROR, cleared without. Return: fd, -errno. */
int vd_fan_group_new(bool *fd_error);
/* Mark the filesystem of @path in @group for opens and execs. Return: 0, -errno. */
int vd_fan_mark_fs(int group, const char *path);
/* Read @group once and call @fn for each event (fd, pid, VD_EV_*). Return: bytes read, -errno. */
int vd_fan_read_each(int group, bool fd_error, void (*fn)(void *arg, int fd, pid_t pid, uint32_t mask),
		     void *arg);
/* An event the kernel refused because its file could not be opened for vigild (-@err): audited. */
void vd_fan_fd_error(struct vd *d, int err, pid_t pid, uint32_t mask);
/* The FAN_ATTRIB channel for a local filesystem marked later. */
void vd_fan_notif_add(struct vd *d, const char *path);
/* What wakes the loop when the mount table changes: fanotify's mount events, else mountinfo. */
int vd_fan_mnt_open(struct vd *d);
/* Read what woke the loop. */
void vd_fan_mnt_drain(struct vd *d);
/* Remove every ignore mark. */
void vd_fan_flush(struct vd *d);
/* An attribute changed (chmod, chown, setxattr): drain the channel, flush the marks. */
void vd_fan_flush_ignores(struct vd *d);

/* ---- events.c ---- */

/* One permission event of the main group (@mask: VD_EV_*): answered now or queued. */
void vd_event(struct vd *d, int fd, pid_t pid, uint32_t mask);
/*
 * vd_event_from - one event from @o (a side's group, or a program that ran
 * before ready; NULL: the main group), its file's fstat @st (NULL: it
 * could not be had: the fail action), and, from a side, the kernel's name
 * @kname (taken) and whether it leads to the file here (@kname_named > 0).
 */
void vd_event_from(struct vd *d, const struct vd_origin *o, int fd, pid_t pid, uint32_t mask,
		   const struct stat *st, char *kname, int kname_named);
/* Return: the target of the symbolic link @link (malloc'ed), or NULL. */
char *vd_readlink(const char *link);
/*
 * vd_task_creds - @pid's real, effective and saved uids and gids into @a,
 * from /proc/PID/status (procfs is never marked). Read at the event for a
 * policy with uid conditions, else only when a record names the subject.
 * Return: whether the uids were read (false: the task is gone).
 */
bool vd_task_creds(pid_t pid, struct vg_access *a);
/*
 * vd_ev_path - @e's path, read from its descriptor at the first need (a
 * path= rule reads it at the event; otherwise a measurement, an audit
 * record or a log line does, and a plain allow never pays for it).
 * Return: the path, or "?" when it cannot be had (e->path stays NULL).
 */
const char *vd_ev_path(struct ev *e);

/* ---- verdict.c ---- */

/* @r passed its appraisal. */
static inline bool vd_result_passes(const struct result *r)
{
	return r && r->appraised && !r->err && vd_status_pass(r->status);
}

/*
 * @r passed under requirements at least as strict as these: a signature
 * if one is needed, algorithms within @need_algos (0: any).
 */
static inline bool vd_result_satisfies(const struct result *r, bool need_sig, uint32_t need_algos)
{
	return vd_result_passes(r) && (r->sig_required || !need_sig) &&
	       (!need_algos || (r->allowed_algos && !(r->allowed_algos & ~need_algos)));
}

/* A verdict for this access only (a writer was, or came): never in the cache. */
struct result *vd_result_uncached(struct vd *d, const struct vkey *k);
/* Free event slot @i (its descriptor closed). */
void vd_ev_release(struct vd *d, int i);
/* Keep @fd open until @pid is reaped (struct parked_fd). */
void vd_pool_park(struct vd *d, int fd, pid_t pid);
/* Answer @e and count it. */
void vd_answer(struct vd *d, struct ev *e, bool allow);
/* Decide event @i with the appraisal/hash result @r (NULL: none needed), answer it, release it. */
void vd_finish(struct vd *d, int i, struct result *r);
/* vd_finish for @leader and every event waiting for it. */
void vd_finish_group(struct vd *d, int leader, struct result *r);
/* No answer in time, or the appraiser died: the fail action for @leader's group, reason @why. */
void vd_fail_group(struct vd *d, int leader, const char *why);
/* The fail action for event @i alone (in no group, no queue), audited under @rule (-1: none); released. */
void vd_fail_one(struct vd *d, int i, const char *why, int rule);

/* ---- announce.c: the next boot's announcements, through the control socket ---- */

/*
 * vd_announce - the announcement @a from the control connection @c of
 * the peer @uid, @pid (SO_PEERCRED): checked, then queued for the list's
 * writer; @a NULL: refused unread (@uid is not root).
 * Return: NULL queued (@c is answered when it is committed), or the
 * refusal to answer now.
 */
json_object *vd_announce(struct vd *d, int c, const struct vd_ctl_announce *a, uid_t uid, pid_t pid);
/* Set d->log_real once the list is open. Return: 0, or -1 after logging. */
int vd_announce_setup(struct vd *d);

/* ---- commit.c: the measurement list, written off the loop ---- */

struct vd_mreq;
/* Start the list's writer (d->mlog is set). Return: 0, or -1 after logging. */
int vd_commit_start(struct vd *d);
/* Stop it once what it was given is done (after the group is closed: it may wait on an open). */
void vd_commit_stop(struct vd *d);
/*
 * vd_commit_submit - queue the measurement of event @i's file (result @r,
 * into @pcr, template ima-sig when @sig). Return: 0 with its sequence
 * number in *@ret_seq, or -ENOMEM.
 */
int vd_commit_submit(struct vd *d, int i, unsigned int pcr, const struct result *r, bool sig,
		     uint64_t *ret_seq);
/*
 * vd_commit_submit_announce - queue the announcement @a (checked: the
 * list's, by root), answered on the control connection @client when
 * committed (the connection is the writer's then). Return: 0, -ENOMEM.
 */
int vd_commit_submit_announce(struct vd *d, const struct vd_ctl_announce *a, int client);
/* The writer's results (its eventfd is readable): recorded, and the events that waited go on. */
void vd_commit_done(struct vd *d);
/* verdict.c: measurement @seq of event @ev (@gen) into @pcr of version @k was made (@ok) or not. */
void vd_measured_result(struct vd *d, uint64_t seq, int ev, uint16_t gen, unsigned int pcr,
			const struct vkey *k, uint32_t lease_gen, bool ok);
/* verdict.c: every event whose measurement is done goes on (vd_finish). */
void vd_measure_waiters(struct vd *d);

/* ---- mounts.c ---- */

enum vd_fsclass vd_fsclass_of(const char *fstype);
const char *vd_fsclass_name(enum vd_fsclass c);
/* Read the table (again). Return: 0, -errno. */
int vd_mounts_read(struct vd_mounts *t);
/* A second view of mountinfo, for vd_mounts_changed. Return: 0, -errno. */
int vd_mounts_watch_open(struct vd_mounts *t);
/* Has the namespace changed since the last call? (consumes the news) */
bool vd_mounts_changed(struct vd_mounts *t);
/* The most telling mount of filesystem @dev (an exec-able, writable one), or NULL. */
const struct vd_mount *vd_mounts_dev(const struct vd_mounts *t, dev_t dev);
/* Does walking @path enter a stacked or slow filesystem? */
bool vd_mounts_through_unsafe(const struct vd_mounts *t, const char *path);
void vd_mounts_free(struct vd_mounts *t);

/* ---- marks.c ---- */

/* Mark the --watch filesystems, and with --watch-mounts every one it wants. Return: 0, -1. */
int vd_marks_setup(struct vd *d);
/* Wait up to @seconds for sides still marking; log what they said. */
void vd_marks_wait(struct vd *d, double seconds);
/* Log the sides whose marking ended since the last call. */
void vd_marks_side_news(struct vd *d);
/* The mount table changed: mark what is new, forget what is gone. */
void vd_marks_reconcile(struct vd *d);
struct vd_mark *vd_mark_of(struct vd *d, dev_t dev);
/* Is @m (may be NULL) a mark in place, or one on its way? (not one its side failed to set) */
bool vd_mark_watching(const struct vd_mark *m);
void vd_marks_free(struct vd *d);

/* ---- side.c ---- */

struct vd_sevent;
int vd_side_setup(struct vd *d);
/* A group and reader for filesystem @dev through @point. Return: the side, or NULL (errno). */
struct vd_side *vd_side_start(struct vd *d, dev_t dev, const char *point, enum vd_fsclass cls,
			      const char *fstype);
/* End @s's thread: joined if it ends within 0.1 s. Return: false it was left behind (stuck). */
bool vd_side_end(struct vd_side *s);
/* The loop: what the sides and the scan of running programs handed over. */
void vd_side_events(struct vd *d);
/* before.c: a running program's open file @fd (-1: the scan ended) for the loop. */
void vd_side_push_before(struct vd *d, int fd, pid_t pid, const struct stat *st);

/* ---- gaps.c ---- */

/* Return: 0 @name is one --accept-gap takes, -EINVAL. */
int vd_gap_name_check(const char *name);
bool vd_gap_accepted_mount(const struct vd *d, const char *point);
/* Find the gaps; refuse (-1, logged) an open one not accepted where it matters. */
int vd_gaps_check(struct vd *d);
/* The mount table changed: its gaps again (logged, never refused after start). */
void vd_gaps_mounts_changed(struct vd *d);
/* --close-gaps: set the sysctls that close memfd and userns. Return: 0, -1 (logged). */
int vd_gaps_close(struct vd *d);
json_object *vd_gaps_json(const struct vd *d);

/* ---- before.c ---- */

/* Judge the programs running now, on a thread; READY=1 waits for them. Return: 0, -1. */
int vd_before_start(struct vd *d);
/* Is a program on filesystem @dev judged? (on a watched local one) */
bool vd_before_wanted(const struct vd *d, dev_t dev);
/* The scan has handed over its last program; READY=1 once every one is decided. */
void vd_before_done(struct vd *d);
/* A running program's event was released (vd_ev_release). */
void vd_before_released(struct vd *d);

/* ---- audit.c ---- */

/* One audit line for @e (@rule: the policy rule's index, or -1). */
void vd_audit(struct vd *d, struct ev *e, const char *action, const char *reason, long rule);
/* vd_audit with "package": @package (an allow by the trust database) */
void vd_audit_package(struct vd *d, struct ev *e, const char *action, const char *reason,
		      long rule, const char *package);

/* ---- dispatch.c ---- */

/*
 * vd_uq_claim - the queue of @uid: the one it holds, else a free one
 * (nothing pending, queued or hashing a large file), starting at its hash;
 * only when every queue is held by another uid (UQ_CAP users waiting at
 * once) does it share the one at its hash. Return: its index.
 */
unsigned int vd_uq_claim(struct vd *d, uid_t uid);
/* The queue event @e is counted in. */
static inline struct uqueue *vd_uq(struct vd *d, const struct ev *e)
{
	return &d->uq[e->uq];
}
/* Leader @i leaves its uid's queue. */
void vd_uq_remove(struct vd *d, int i);
/* Leader @i waits at the end of its uid's queue. */
void vd_uq_push(struct vd *d, int i);
/* Leader @e's appraiser no longer works for it (answered, overran, died). */
void vd_req_done(struct vd *d, struct ev *e);
/* Return: an appraiser that may take leader @e now, or -1. */
int vd_pick_worker(struct vd *d, const struct ev *e);
/* Send queued leaders to appraisers, one uid queue after the other. */
void vd_dispatch(struct vd *d);

/* ---- pool.c ---- */

/* Start appraiser @w. Return: 0 or -errno. */
int vd_pool_spawn(struct vd *d, int w);
/*
 * vd_pool_start - every appraiser, each waited for (its hello) and
 * started again up to VD_START_TRIES times. Before the marks only: it blocks.
 * Return: 0, or -1 after logging why (no appraiser is left running).
 */
int vd_pool_start(struct vd *d);
/*
 * A child @pid was reaped with @status: if an appraiser, it died
 * (vd_pool_died); the descriptors parked for it are closed.
 */
void vd_pool_reaped(struct vd *d, pid_t pid, int status);
/* A wait status in words: "exited with status 2", "killed by signal 31 (...)". */
void vd_pool_status_text(int status, char *buf, size_t cap);
/* Send leader @i to appraiser @w. Return: 0 or -errno (nothing sent). */
int vd_pool_send(struct vd *d, int w, int i);
/*
 * Appraiser @w is gone (or is killed here): its events get the fail
 * action, or with @requeue go back to their queues; it is replaced.
 */
void vd_pool_died(struct vd *d, int w, const char *why, bool requeue);
/* A reply (or the end) from appraiser @w. */
void vd_pool_reply(struct vd *d, int w);
/* Fail what is past its deadline; kill appraisers that overran. */
void vd_pool_timeouts(struct vd *d);

/* ---- reload.c ---- */

/* Derive from @p what the event path needs to know (struct vd's policy_* and ignore_*). */
void vd_policy_facts(struct vd *d, struct vg_policy *p);
/* @out: the hex sha256 of @p's canonical text ("" if it cannot be formatted). */
void vd_policy_digest(struct vg_policy *p, char out[65]);
/*
 * vd_policy_load - parse d->policy_path and check it can be enforced
 * (unless --accept-unenforced) and that its signature rules can pass
 * (a trusted key is loaded, or --allow-empty-keyring).
 * Return: 0 with *@ret, or -errno with the reason in @msg (FILE:LINE:COL: why).
 */
int vd_policy_load(const struct vd *d, struct vg_policy **ret, char *msg, size_t cap);
/* Start reading the policy on a thread (no-op while one runs). */
void vd_reload_start(struct vd *d);
/* The reload thread's result: swap the policy in, or keep the old one. */
void vd_reload_done(struct vd *d);

/* ---- trust.c ---- */

/* Return: the trust database's path (--trust-db, trust.db, VD_TRUST_DB_DEFAULT). */
const char *vd_trust_db_path(const struct vd *d);
/*
 * vd_trust_load - for a policy @p with trust=archive: open the trust
 * database, check schema and MAC with d->trust_key (--trust-key) or else
 * d->key, choose the algorithm (vigild's hash if recorded, else the
 * database's first; every
 * trust=archive rule's appraise_algos= must allow it), load the index,
 * canonicalise --trust-root. Opens files: before the marks, or on the
 * reload thread. A policy without trust=archive: 0 and *@ret NULL,
 * nothing opened. Return: 0 with *@ret; -errno with "trust database
 * FILE: problem" (or FILE:LINE:COL) in @msg.
 */
int vd_trust_load(const struct vd *d, const struct vg_policy *p, struct vd_trust **ret, char *msg,
		  size_t cap);
void vd_trust_free(struct vd_trust *t);
/*
 * vd_trust_judge - may event @e, whose appraisal @r found no security.ima
 * (missing-hash), pass by the archive? Its rule has trust=archive and the
 * index records (@e's name in vigild's namespace under the root, or its
 * merged-/usr alias, @r's digest). Finds that name (vd_name_here) when the
 * event has not. *@ret_package: the package's name on a hit.
 * Return: 1 a current package, 2 a superseded one, 0 no.
 */
int vd_trust_judge(struct vd *d, struct ev *e, const struct result *r,
		   const char **ret_package);

/* ---- control.c ---- */

/* Bind and listen on the control socket. Return: 0, or -1 after logging. */
int vd_control_setup(struct vd *d);
/* Accept one control connection and answer it. */
void vd_control(struct vd *d);
/* Return: the status answer (json_object_put it), or NULL (no memory). */
json_object *vd_control_status(struct vd *d);

/* ---- names.c: the name a file has in vigild's mount namespace ---- */

/* stat(2) of @path without asking a filesystem's server (statx AT_STATX_DONT_SYNC). Return: 0, -errno. */
int vd_stat_nowait(const char *path, struct stat *st);
/*
 * vd_name_check - does @name lead to the file @st, walked without following
 * any symbolic link (openat2 RESOLVE_NO_SYMLINKS; where a seccomp filter
 * answers openat2 ENOSYS, as RestrictSUIDSGID= does, one component at a
 * time with O_NOFOLLOW)? May wait on any
 * filesystem on the way: for side threads. Return: 1 yes, 0 no.
 */
int vd_name_check(const char *name, const struct stat *st);
/*
 * The name of the file @st (@at relative to @dirfd: "" for @dirfd itself,
 * else a magic link followed) in vigild's mount namespace, given @kname, the
 * kernel's name of it (may be NULL). Return: 1, and *@name NULL (@kname is
 * it) or a malloc'ed other name; 0 it is unlinked: no name; -ENOENT vigild
 * has no mount of its filesystem; another -errno its name cannot be told.
 */
int vd_name_here(struct vd *d, int dirfd, const char *at, const struct stat *st,
		 const char *kname, char **name);

/* ---- startup.c: each Return: 0, or -1 after logging (file and problem) ---- */

/* Load every keyring (--keyring, else vigil.conf's) as the appraisers will; count d->nkeys. */
int vd_keyrings_check(struct vd *d);
/* The HMAC key (any kind; a passphrase from --passphrase-file, ...) and the appraisers' options. */
int vd_keys_setup(struct vd *d);
/* The default log when the policy measures; the log's and audit file's directories writable. */
int vd_outputs_check(struct vd *d);
/* @what @path can be created or written: its directory exists and is writable. */
int vd_writable(const char *what, const char *path);
/* Each --watch path there; a filesystem whose opens open other files (overlay, eCryptfs, FUSE) alone. */
int vd_watch_check(struct vd *d);
/* /proc of vigild's pid namespace (refused otherwise); said when that is not the host's. */
int vd_proc_check(void);
/* The journal: --journal SOCKET (must listen), under systemd its socket (or said), or none. */
int vd_journal_setup(struct vd *d);
/* The TPM: explicit (must answer), the default device, or a software bank (said). */
int vd_tpm_setup(struct vd *d);
/* The control socket's lock (SOCKET.lock): taken, or another vigild named. */
int vd_lock_take(struct vd *d);
/* @path: absent, or a dead vigild's socket (removed); a live one or a non-socket refused. */
int vd_control_stale(const char *path);
/* Our control socket and lock file removed, the lock released. */
void vd_lock_release(struct vd *d);

/* ---- args.c ---- */

/* Return: 0, or -1 after logging (usage error). */
int vd_args_parse(struct vd *d, int argc, char **argv);
/* @mode (enforce, permissive, fix) into d->mode; @what names its source. Return: 0, -1 (logged). */
int vd_args_mode(struct vd *d, const char *mode, const char *what);
/* vigil.conf's vigild.* keys for what the command line left out. Return: 0, -1 (logged). */
int vd_args_config(struct vd *d);
/*
 * vd_args_appraiser_user - look up --appraiser-user (before any mark is
 * set) and hand its uid and gid to the appraisers.
 * Return: 0, or -1 after logging: no such user, or uid or gid 0.
 */
int vd_args_appraiser_user(struct vd *d);
/* Append @a (and @b unless NULL) to the appraisers' options. Return: 0 or -1. */
int vd_args_worker(struct vd *d, const char *a, const char *b);

#endif
