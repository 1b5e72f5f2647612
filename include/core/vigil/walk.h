/* SPDX-License-Identifier: MIT */
/*
 * walk.h - a parallel tree walker for whole-filesystem labeling, appraisal
 * and scans.
 *
 * A pool of worker threads shares one stack of work items: directories to
 * read and batches of up to VG_WALK_BATCH entries of one directory. A
 * worker that reads a directory pushes its subdirectories and its other
 * entries in batches, so one huge directory still spreads over every
 * worker. The callback runs on the worker threads with the entry's parent
 * directory open (for openat()) and its full path in a per-worker buffer;
 * it never runs twice at once with the same worker index, so callers keep
 * per-worker state (a hasher, buffers) in an array indexed by it.
 *
 * Symbolic links are reported, never followed. Mount points below a root
 * are reported as directories but not entered unless cross_mounts is set.
 * Entries come in no particular order. The walker allocates per directory
 * and per batch, never per file.
 */
#ifndef VIGIL_WALK_H
#define VIGIL_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vigil/diag.h"

#define VG_WALK_BATCH 64
#define VG_WALK_MAX_WORKERS 64

enum vg_walk_type {
	VG_WALK_REG,		/* regular file */
	VG_WALK_DIR,		/* directory, before it is entered */
	VG_WALK_LNK,		/* symbolic link (not followed) */
	VG_WALK_OTHER,		/* device, fifo, socket */
	VG_WALK_ERROR,		/* could not be read: @error says why */
};

struct vg_walk_entry {
	int dirfd;		/* the parent directory, for *at() calls; AT_FDCWD for a root */
	const char *name;	/* relative to dirfd */
	const char *path;	/* full path: the root as given, then /name... */
	size_t path_len;
	enum vg_walk_type type;
	int error;		/* VG_WALK_ERROR: positive errno */
	bool mount_point;	/* VG_WALK_DIR on another filesystem, not entered */
	unsigned int depth;	/* 0 for a root */
	unsigned int worker;	/* 0 .. workers-1 */
};

/*
 * Called once per entry. Return: 0 to go on; VG_WALK_SKIP (for a
 * directory) not to enter it; a negative errno to stop the whole walk,
 * which vg_walk() then returns.
 */
#define VG_WALK_SKIP 1
typedef int (*vg_walk_fn)(void *arg, const struct vg_walk_entry *e);

struct vg_walk_opts {
	unsigned int workers;	/* 0: one per online CPU */
	bool recursive;		/* false: roots only, directories reported, not entered */
	bool cross_mounts;
};

/*
 * vg_walk - walk @roots, calling @fn for each entry (roots included).
 * Return: 0 when every entry was handed to @fn; the first negative value
 * @fn returned; -ENOMEM or another errno from thread creation (diag filled).
 * Entries that cannot be read are reported as VG_WALK_ERROR, not returned.
 */
int vg_walk(const struct vg_walk_opts *o, char *const *roots, size_t nroots, vg_walk_fn fn,
	    void *arg, struct vg_diag *diag);

/* Return: the number of workers vg_walk() will start for @o. */
unsigned int vg_walk_workers(const struct vg_walk_opts *o);

/*
 * A thread-safe set of (st_dev, st_ino) pairs, for handling files with
 * several hard links once.
 */
struct vg_inode_set;

int vg_inode_set_new(struct vg_inode_set **ret);
void vg_inode_set_free(struct vg_inode_set *s);
/* Return: 1 if added, 0 if it was there already, -ENOMEM. */
int vg_inode_set_add(struct vg_inode_set *s, dev_t dev, ino_t ino);

#endif
