/* SPDX-License-Identifier: MIT */
/*
 * tree.h - what `vigil label`, `vigil appraise` and `vigil scan` share to
 * run over many files: the parallel walk (vg_walk), opening each regular
 * file safely, the configuration's selection rules, hard links once, the
 * filesystem UUID and type per device, counters by reason, a summary, and
 * the progress line on a terminal.
 *
 * The command supplies a callback run on the walker's threads for every
 * selected regular file (open, fstat'ed) and optionally for every other
 * entry. Output goes through tree_lock()/tree_unlock() so lines from two
 * threads never interleave.
 */
#ifndef VIGIL_CLI_TREE_H
#define VIGIL_CLI_TREE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "vigil/config.h"
#include "vigil/hash.h"
#include "vigil/walk.h"

enum tree_kind { TREE_OK, TREE_FAIL, TREE_SKIP, TREE_ERROR };

struct tree;

struct tree_file {
	struct vg_hasher *hasher;	/* this worker thread's own */
	int fd;
	const struct stat *st;
	const char *path;
	unsigned int worker;
	uint64_t fsmagic;
};

struct tree_ops {
	/* Return: 0, or a negative errno to stop the run (already reported). */
	int (*file)(struct tree *t, void *arg, const struct tree_file *f);
	/* directories, symlinks and special files; NULL: counted as skipped */
	int (*other)(struct tree *t, void *arg, const struct vg_walk_entry *e);
	/* report an entry that could not be read, under the lock; NULL: to stderr */
	void (*error)(struct tree *t, void *arg, const char *path, const char *msg);
};

struct tree_opts {
	bool recursive;
	bool cross_mounts;
	bool quiet;			/* no progress line */
	bool all_links;			/* report every hard link (scan) */
	const struct vg_config *config;	/* selection rules; NULL: everything */
	unsigned int workers;		/* 0: one per CPU */
};

struct tree_stats {
	uint64_t files, bytes;		/* regular files handed to ops->file */
	uint64_t n[4];			/* by enum tree_kind */
};

struct tree {
	struct tree_opts o;
	const struct tree_ops *ops;
	void *arg;
	struct vg_inode_set *links;
	pthread_mutex_t lock;
	struct tree_stats stats;
	struct {
		enum tree_kind kind;
		const char *reason;
		uint64_t n;
	} reasons[64];
	size_t nreasons;
	uint64_t precount;		/* regular files counted for the ETA */
	bool progress_on;
	int progress_width;
	struct {
		bool valid;
		dev_t dev;
		uint64_t magic;
	} fscache[VG_WALK_MAX_WORKERS];
	struct vg_hasher *hashers[VG_WALK_MAX_WORKERS];
	double seconds;			/* wall time of the walk */
};

/*
 * tree_run - walk @paths, with one vg_hasher per worker thread (handed to
 * ops->file as f->hasher). Return: 0 when the walk completed (failures are
 * in the stats, its wall time in ret_tree->seconds), or -1 (reported) when
 * it had to stop.
 */
int tree_run(const struct tree_opts *o, const struct tree_ops *ops, void *arg, char **paths,
	     int npaths, struct tree_stats *ret_stats, struct tree *ret_tree);

/* Count one outcome under @reason (a string constant or the kernel cause). */
void tree_count(struct tree *t, enum tree_kind kind, const char *reason);
/* Count bytes of content read. */
void tree_add_bytes(struct tree *t, uint64_t n);

/* Hold while printing a multi-part line (also clears the progress line). */
void tree_lock(struct tree *t);
void tree_unlock(struct tree *t);

/* "vigil CMD: PATH: message" to stderr (or to ops->error), under the lock. */
void tree_file_err(struct tree *t, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print "  REASON: N" lines of @kind after a summary line. */
void tree_print_reasons(const struct tree *t, FILE *f, enum tree_kind kind);

/* The reasons of @kind as a JSON object {"reason": n, ...} (json-c). */
struct json_object *tree_reasons_json(const struct tree *t, enum tree_kind kind);

void tree_release(struct tree *t);

/*
 * Per-worker caches of per-device facts. Return: 0, or a negative errno.
 */
struct tree_devcache {
	bool valid, uuid_valid;
	dev_t dev;
	uint8_t uuid[16];
	int uuid_err;
};
int tree_fs_uuid(struct tree_devcache *c, int fd, dev_t dev, uint8_t uuid[16],
		 struct vg_diag *diag);

#endif
