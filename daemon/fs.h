/* SPDX-License-Identifier: MIT */
/*
 * fs.h - the filesystems vigild watches, as the monitor knows them: the
 * mount table (mounts.c), the marks on it (marks.c), the stacked and slow
 * filesystems' own groups and readers (side.c), the ways around vigild
 * (gaps.c), the programs that ran before it (before.c), and the name a
 * file has in vigild's mount namespace (names.c). Their types are part
 * of the monitor's state (monitor.h includes this file); their functions
 * are called by the setup, the loop and the intake.
 */
#ifndef VIGILD_FS_H
#define VIGILD_FS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <json-c/json.h>

struct vd;

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

/* a way around vigild (gaps.c) */
enum vd_gap_state { VD_GAP_CLOSED, VD_GAP_ACCEPTED, VD_GAP_OPEN, VD_GAP_OUTSIDE };
struct vd_gap {
	char name[4096 + 8];	/* memfd, userns, fuse, mount:PATH */
	enum vd_gap_state state;	/* OUTSIDE: the policy neither judges nor measures execs there */
	bool judged;		/* the policy appraises or denies execs there: refused if open in enforce mode */
	char *how;		/* what it lets through and how to close it */
};

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

#endif
