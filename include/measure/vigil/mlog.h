/* SPDX-License-Identifier: MIT */
/*
 * mlog.h - the measurement log writer: appends kernel-format entries
 * (the sha1 binary_runtime_measurements layout, imalog.h) to a file and
 * extends them into a PCR store (pcr.h: the TPM, or a software bank).
 *
 * Ordering, as the kernel's ima_add_template_entry(): the entry goes into
 * the list first, then the PCR is extended. Here "into the list" means
 * durable: a commit writes every pending entry with O_APPEND, fdatasyncs
 * once (group commit: all entries of a commit share one sync), then
 * extends them into the store in list order, then calls opts.pcr_sync (a
 * software bank persists itself there). Only when vg_mlog_commit()
 * returns is an entry acknowledged. So at every instant the store holds
 * the replay of a prefix of the file, and the file holds every
 * acknowledged entry.
 *
 * vg_mlog_open() reconciles after a crash:
 *   - a torn last entry (the file ends inside an entry, in zero bytes, or
 *     in a prefix of an entry followed by zeros: blocks allocated but not
 *     written) was never acknowledged: it is truncated away. Safe because
 *     the store must then match a prefix ending before it (checked first);
 *     an acknowledged entry is always in the store;
 *   - entries the store has not seen (crash between sync and extend) are
 *     extended: the store must equal the replay of some prefix of the log;
 *   - anything else (a PCR that matches no prefix, a malformed entry in
 *     the middle) is reported and the log is not opened: nothing is ever
 *     "fixed" silently.
 * A new (empty) log gets the boot_aggregate entry first: ima-ng, sha256
 * (or sha1 if the store has no sha256 bank) over PCRs 0-9 (0-7 for sha1)
 * read from the store; zeros when the store is not attestable, as the
 * kernel does without a TPM.
 *
 * A log is per boot: a TPM's PCRs restart at zero on reboot, so the file
 * belongs in a per-boot directory (/run). With a store that has a reset
 * counter (the TPM's resetCount), a new log's boot is recorded beside it
 * first (LOG.boot, "resetCount N", written atomically), and opening a
 * non-empty log refuses it (-ESTALE) as an earlier boot's, before
 * anything is extended, when: the record's resetCount is not the TPM's;
 * or there is no record (a list of an older vigil) and its first entry is
 * a boot_aggregate other than that of the TPM's PCRs 0-9 now; or the PCRs
 * have seen none of its entries although it has two or more (its first
 * commit, the boot_aggregate alone, was extended before anything else was
 * written: these PCRs were reset since, by a reboot or a TPM Restart). The
 * writer never renames or deletes such a list: the operator moves it
 * aside. A software bank has no reset counter: none of this applies to it.
 *
 * After a failed commit its entries are dropped (never acknowledged) and
 * the next vg_mlog_append() or vg_mlog_commit() first recovers
 * (vg_mlog_recover): a failed write or sync is cut off the file and the
 * cut synced (the store never saw it); a failed extend or store sync is
 * reconciled as on open (entries the file has and the store lacks are
 * extended), after checking the TPM was not reset meanwhile. Until that
 * succeeds (the disk has room again, the TPM answers) every call fails
 * with the recovery's error, so a full disk costs the entries of the
 * commits made while it is full, not the writer.
 * One writer per file (flock). Not thread-safe: the daemon serialises.
 */
#ifndef VIGIL_MLOG_H
#define VIGIL_MLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/pcr.h"

struct vg_mlog_opts {
	const struct vg_pcr_ops *ops;	/* required */
	void *ops_ctx;
	/* called after the extends of a commit (vg_pcrbank_sync_cb); may be NULL */
	int (*pcr_sync)(void *ops_ctx, struct vg_diag *diag);
	bool no_sync;			/* skip fdatasync (tests, benchmarks): not crash-safe */
};

struct vg_mlog_recovery {
	uint64_t entries;		/* entries in the log after open */
	uint64_t truncated;		/* bytes of a torn tail removed */
	uint64_t extended;		/* entries extended that the store had not seen */
	bool created;			/* a new log, boot_aggregate written */
};

struct vg_mlog;

/*
 * vg_mlog_open - open or create the log at @path and reconcile it with the
 * store (above). @rec (may be NULL) says what was done.
 * Return: 0; -EBUSY (another writer); -EBADMSG (malformed log, diag names
 * entry and offset; or a malformed LOG.boot); -ESTALE (the store's PCRs
 * match no prefix of the log, or the log is an earlier boot's: diag says
 * which of the reasons above); -EILSEQ (an entry whose template digest does not match its data);
 * -ENOMEM; an I/O errno; an error of the store.
 */
int vg_mlog_open(const char *path, const struct vg_mlog_opts *opts, struct vg_mlog **ret,
		 struct vg_mlog_recovery *rec, struct vg_diag *diag);

/*
 * vg_mlog_append - queue an entry of template @tmpl with fields @f for PCR
 * @pcr; nothing is written before vg_mlog_commit().
 * Return: 0, -EINVAL (fields do not fit the template), -ENOMEM, or the
 * error of recovering from an earlier failure (above).
 */
int vg_mlog_append(struct vg_mlog *l, unsigned int pcr, const char *tmpl,
		   const struct vg_imalog_field *f, unsigned int n, struct vg_diag *diag);

/*
 * vg_mlog_append_file - queue the measurement of a file: ima-ng
 * (d-ng|n-ng), or ima-sig when @sig is not NULL (the security.ima or
 * security.evm value the kernel's "sig" field takes; @siglen may be 0 for
 * ima-sig without signature). Spaces in @path become '_', as the kernel
 * stores event names.
 * Return: as vg_mlog_append().
 */
int vg_mlog_append_file(struct vg_mlog *l, unsigned int pcr, const struct vg_digest *file_digest,
			const char *path, const uint8_t *sig, size_t siglen, struct vg_diag *diag);

/*
 * vg_mlog_commit - write, sync and extend every queued entry (above).
 * Return: entries committed (0 if none queued), or a negative errno; on
 * failure the queued entries are dropped and the next call recovers first.
 */
int vg_mlog_commit(struct vg_mlog *l, struct vg_diag *diag);

/*
 * vg_mlog_recover - after a failed commit, bring the file and the store
 * back in step (above); append and commit do it themselves.
 * Return: 0 (nothing to do, or done); the errno of the step that still
 * fails (-ENOSPC, -EIO, ...); -ESTALE (the TPM was reset meanwhile: the
 * list is an earlier boot's for good).
 */
int vg_mlog_recover(struct vg_mlog *l, struct vg_diag *diag);

/* Return: whether a commit failed and recovery has not succeeded since. */
bool vg_mlog_failed(const struct vg_mlog *l);

/* Return: entries in the log (committed). */
uint64_t vg_mlog_entries(const struct vg_mlog *l);

/* Close without committing queued entries (they were never acknowledged). NULL-safe. */
void vg_mlog_free(struct vg_mlog *l);

#endif
