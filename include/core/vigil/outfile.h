/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - the one way vigil writes a whole output file (issue 18:
 * log convert, attest policy import/create, log replay --state, scan
 * --init, key create/rewrap, the software PCR bank, the agent's state).
 *
 * What the target is decides what happens (lstat, never followed):
 *   - absent or a regular file: the content goes to a temporary file in
 *     the same directory (".NAME.vigil-tmp.XXXXXX", created O_EXCL with
 *     @mode, flock()ed by its writer for as long as it writes), which is
 *     fsynced, renamed over the target and the directory fsynced. Readers
 *     see the old file or the whole new one, never a part; a failure
 *     removes the temporary and leaves the target as it was;
 *   - a character device or fifo: written in place (opened O_WRONLY
 *     without O_CREAT or O_TRUNC, so /dev/null stays /dev/null) when the
 *     caller passed VG_OUTFILE_STREAM, refused otherwise (a database or a
 *     key file must be a file);
 *   - a symbolic link: refused, not followed (renaming over it would
 *     replace the link, writing through it would write where the path
 *     does not say; for a root-run tool in a directory others can write,
 *     following it is how files get clobbered);
 *   - a directory, a socket, a block device: refused.
 * Refusals write nothing and create nothing.
 *
 * Temporaries of a writer that was killed are removed by the next
 * vg_outfile_open() of the same target: a temporary whose lock can be
 * taken has no living writer. Only files named like this target's
 * temporaries, owned by the caller's euid, are candidates.
 *
 * No stdout handling here ("-" is the program's business). Not thread-safe
 * per struct; distinct structs are independent.
 */
#ifndef VIGIL_OUTFILE_H
#define VIGIL_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vigil/diag.h"

/* a character device or fifo target is written in place (else refused) */
#define VG_OUTFILE_STREAM 0x1u

/* the infix of temporary names: ".NAME" VG_OUTFILE_TMP_INFIX "XXXXXX" */
#define VG_OUTFILE_TMP_INFIX ".vigil-tmp."

struct vg_outfile {
	int fd;			/* write the content here (-1 when closed) */
	char *path;		/* the target */
	char *tmp;		/* the temporary's path; NULL when written in place */
	unsigned int stale;	/* dead writers' temporaries removed by open */
};

/*
 * vg_outfile_open - start writing @path (above). @o is initialised here;
 * on success finish with vg_outfile_commit() or vg_outfile_abort().
 * Return: 0; -ELOOP (a symbolic link), -EISDIR (a directory), -EINVAL
 * (another kind of file that may not be written: diag names the kind),
 * -ENAMETOOLONG, -ENOMEM, or the errno of creating the temporary.
 */
int vg_outfile_open(struct vg_outfile *o, const char *path, mode_t mode, unsigned int flags,
		    struct vg_diag *diag);

/* Write all of @buf to @o (EINTR and short writes retried). Return: 0 or -errno. */
int vg_outfile_write(struct vg_outfile *o, const void *buf, size_t len, struct vg_diag *diag);

/*
 * vg_outfile_commit - sync and rename the temporary over the target, then
 * sync the directory (in place: close). @o is released either way; on
 * failure the temporary is removed and the target is as it was.
 * Return: 0 or -errno.
 */
int vg_outfile_commit(struct vg_outfile *o, struct vg_diag *diag);

/* Give up: remove the temporary, release @o. Safe on a released or zeroed @o. */
void vg_outfile_abort(struct vg_outfile *o);

/* open, write @len bytes, commit. Return: as those. */
int vg_outfile_put(const char *path, const void *buf, size_t len, mode_t mode,
		   unsigned int flags, struct vg_diag *diag);

#endif
