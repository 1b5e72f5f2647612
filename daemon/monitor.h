/* SPDX-License-Identifier: MIT */
/*
 * monitor.h - the vigild monitor's state and the contracts of its event
 * path. The monitor is one thread (main.c's loop); nothing here is
 * locked. An event meets, in order:
 *
 *   fanotify.c  the only user of <sys/fanotify.h>: groups, reading
 *               events, answers, ignore marks; it calls nothing above it
 *   events.c    the intake: the facts of the access (facts.c reads /proc
 *               at need), a verdict kept for its version (cache.c under
 *               lease.c's read lease), a leader appraisal on a miss
 *   decide.c    the decision, one pure function (decide.h)
 *   dispatch.c, pool.c   the appraisers (appraisers.h), for a miss
 *   verdict.c   the answer: measurement (commit.c, the list's writer),
 *               audit lines (audit.c), counters (stats.c), the kernel's
 *               answer, the ignore mark
 *
 * Around it: fs.h (the filesystems watched: mounts, marks, side groups,
 * gaps, programs running before, names), setup.h (command line, checks
 * before ready, policy and trust database, control socket, metrics),
 * held.c (--hold, hold.h) and main.c (setup and the loop). What is looked
 * up on every event (the cache slot, the lease set) is static inline
 * here, so the event path costs what it did in one file.
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
#include "decide.h"
#include "fs.h"
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

/* PCRs a file version was measured into: kept across policy reloads, as IMA keeps IMA_MEASURED */
struct measured {
	bool valid;
	uint32_t lease_gen;
	struct vkey key;
	uint32_t pcrs;
	uint32_t inflight;	/* PCRs a measurement of it is on its way to (commit.c) */
	uint64_t seq;		/* ... the last one's sequence number */
};

/* where an event came from (events.c) */
struct vd_origin {
	struct vd_side *side;	/* NULL: the main group */
	bool before;		/* a program running before vigild started (before.c): no kernel waits */
	int parked;		/* > 0: an event that waited in the holder, answered by this number (hold.h) */
};

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
	bool pass_allows;	/* its verdict is an allow exactly when its appraisal passes (decide.h) */
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
	struct vd_trust *trust;	/* NULL: the policy has no trust=archive (setup.h) */
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
/* the epoll tag of appraiser 0's socket (pool.c); main.c's own tags are below it */
#define VD_LOOP_WORKER 8
void vd_loop_del_worker(struct vd *d, int w);

/* Say READY=1 (and 'vigild: ready' with --foreground); what waited for it goes on. */
void vd_ready(struct vd *d);

/* vigild's diagnostic lines are common/log.h's (vlog_err, vlog_warn, vlog_info, vlog). */

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
 * their allows to (vigild.h); not under --hold when the holder gave the
 * group of the monitor before (vd_held_group). Return: 0, or -1 after
 * logging why.
 */
int vd_fan_init(struct vd *d);
/*
 * vd_fan_notif_open - the FAN_ATTRIB notification group, marked with each
 * local filesystem marks.c marks; without it no ignore marks are set
 * (d->notif stays -1).
 */
void vd_fan_notif_open(struct vd *d);
/* The VD_EV_* of a fanotify event mask. */
uint32_t vd_fan_ev_mask(uint64_t m);
/* Answer the permission event of @fd. */
void vd_fan_respond(struct vd *d, int fd, bool allow);
/* Read and hand every queued event to @on_event (main.c gives events.c's vd_event). */
void vd_fan_read(struct vd *d, void (*on_event)(struct vd *d, int fd, pid_t pid, uint32_t mask));
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

/* ---- events.c: the intake ---- */

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

/* ---- facts.c: what is read of an access from /proc, at need ---- */

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

/* ---- verdict.c: the answer (what vd_decide decided, decide.h) ---- */

/* A verdict for this access only (a writer was, or came): never in the cache. */
struct result *vd_result_uncached(struct vd *d, const struct vkey *k);
/* Free event slot @i (its descriptor closed). */
void vd_ev_release(struct vd *d, int i);
/* Keep @fd open until @pid is reaped (struct parked_fd). */
void vd_pool_park(struct vd *d, int fd, pid_t pid);
/* Answer @e and count it. */
void vd_answer(struct vd *d, struct ev *e, bool allow);
/* The facts of event @i for vd_decide (decide.h): vigild's settings and, unless @e is NULL, the event's. */
void vd_facts_of(const struct vd *d, const struct ev *e, struct vd_facts *f);
/*
 * vd_judge - decide event @i on the facts @f with its result @r (NULL:
 * none yet), fetching what vd_decide asks for on the way (its
 * measurement, the trust database's word), then answer it.
 * Return: 0 answered, or waiting for its measurement (vd_measure_waiters
 * goes on); 1 the decision needs what only the caller can fetch: *@v
 * says which (VD_NEXT_ACCESS, VD_NEXT_LOADER, VD_NEXT_RESULT).
 */
int vd_judge(struct vd *d, int i, struct vd_facts *f, struct result *r, struct vd_verdict *v);
/* Do what verdict @v says for event @i (its result @r, @package by the trust database): records, answer, ignore mark, release. */
void vd_verdict_apply(struct vd *d, int i, const struct vd_verdict *v, struct result *r,
		      const char *package);
/* Decide event @i with the appraisal/hash result @r (NULL: none needed), answer it, release it. */
void vd_finish(struct vd *d, int i, struct result *r);
/* vd_finish for @leader and every event waiting for it. */
void vd_finish_group(struct vd *d, int leader, struct result *r);
/* No answer in time, or the appraiser died: the fail action for @leader's group, reason @why. */
void vd_fail_group(struct vd *d, int leader, const char *why);
/* The fail action for event @i alone (in no group, no queue), audited under @rule (-1: none); released. */
void vd_fail_one(struct vd *d, int i, const char *why, int rule);

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
/* The writer's results (its eventfd is readable): recorded; then vd_measure_waiters. */
void vd_commit_done(struct vd *d);
/* verdict.c: every event whose measurement is done goes on (vd_finish). */
void vd_measure_waiters(struct vd *d);

/* ---- audit.c ---- */

/* One audit line for @e (@rule: the policy rule's index, or -1). */
void vd_audit(struct vd *d, struct ev *e, const char *action, const char *reason, long rule);
/* vd_audit with "package": @package (an allow by the trust database) */
void vd_audit_package(struct vd *d, struct ev *e, const char *action, const char *reason,
		      long rule, const char *package);

#endif
