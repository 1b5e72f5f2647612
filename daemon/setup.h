/* SPDX-License-Identifier: MIT */
/*
 * setup.h - what the monitor is told and what it tells: the command line
 * and vigil.conf (args.c), the settings checked before ready (startup.c),
 * the policy loaded and reloaded (reload.c) with its trust database
 * (trust.c), the control socket (control.c) and the announcements it
 * takes (announce.c), the metrics file (metrics.c). None of it is on the
 * path of an event but trust.c's lookup (vd_trust_judge, for verdict.c).
 */
#ifndef VIGILD_SETUP_H
#define VIGILD_SETUP_H

#include "monitor.h"

/* trust=archive's table (trust.c): immutable once loaded, swapped whole on reload */
struct vd_trust {
	struct vg_trust_index *idx;
	struct vg_trust_root root;	/* --trust-root and its merged-/usr links */
	unsigned int algo;		/* of the digests compared */
};

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

#endif
