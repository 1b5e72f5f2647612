// SPDX-License-Identifier: MIT
/*
 * events.c - one fanotify permission event, from its descriptor to a
 * result or a place in a queue: the access as the policy sees it (path,
 * opener's credentials and executable when the policy asks, filesystem
 * facts, loader execs), the policy match, the verdict cache under the
 * inode's lease, an empty new file, and for a miss a leader appraisal
 * that every other opener of the same version waits for. The kernel's
 * structures are decoded in fanotify.c; this file sees (fd, pid, mask).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "monitor.h"

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

char *vd_readlink(const char *link)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

const char *vd_ev_path(struct ev *e)
{
	if (!e->path && e->fd >= 0) {
		char link[64];

		snprintf(link, sizeof(link), "/proc/self/fd/%d", e->fd);
		e->path = vd_readlink(link);
	}
	return e->path ? e->path : "?";
}

bool vd_task_creds(pid_t pid, struct vg_access *a)
{
	char path[64], line[256];
	bool uids = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned int r, e, s;

		if (sscanf(line, "Uid:\t%u\t%u\t%u", &r, &e, &s) == 3) {
			a->uid = r;
			a->euid = e;
			a->suid = s;
			uids = true;
		} else if (sscanf(line, "Gid:\t%u\t%u\t%u", &r, &e, &s) == 3) {
			a->gid = r;
			a->egid = e;
			a->sgid = s;
			break;
		}
	}
	fclose(f);
	return uids;
}

/*
 * An appraisal of the same version, under the same requirements as @e's,
 * that @e may wait for: one still queued (its content is read after @e's
 * open), or one in progress under a lease that still holds (the content
 * cannot have changed since it was read: a writer waits for the lease's
 * break). Without a lease (the file is open for writing) an appraisal in
 * progress may have read the content before a write through a mapping
 * that @e's open comes after, and may have been answered already (an
 * appraiser answers a clean pass itself): @e is appraised afresh.
 */
static int find_leader(struct vd *d, const struct ev *e)
{
	uint32_t sig = e->dec.flags & VG_POLF_DIGSIG_REQUIRED;

	for (int i = 0; i < d->ev_hi; i++) {
		const struct ev *l = &d->ev[i];

		if (l->used && l->leader < 0 && (l->queued || (l->worker >= 0 && vd_lease_valid_for(d, l))) &&
		    vd_key_eq(&l->key, &e->key) &&
		    (!e->need_appraise ||
		     (l->need_appraise && (l->dec.flags & VG_POLF_DIGSIG_REQUIRED) == sig &&
		      l->dec.allowed_algos == e->dec.allowed_algos &&
		      l->dec.trust_archive == e->dec.trust_archive)))
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
static bool result_fits(const struct vd *d, const struct result *r, const struct ev *e)
{
	bool need_sig = e->dec.flags & VG_POLF_DIGSIG_REQUIRED;
	uint32_t need_algos = e->dec.allowed_algos;

	/* trust=archive compares the content digest of an unlabeled file in the database's algorithm */
	if (e->need_appraise && e->dec.trust_archive && d->trust && r->status == VG_ST_NOLABEL &&
	    r->digest.algo != d->trust->algo)
		return false;

	return !e->need_appraise || (r->sig_required == need_sig && r->allowed_algos == need_algos) ||
	       vd_result_satisfies(r, need_sig, need_algos);
}

/*
 * Whose access this is, for fair dispatch: the opener's effective uid,
 * the owner of /proc/PID (one stat, no parsing). /proc shows the files
 * of a process that is not dumpable as root's, but not that directory
 * (fs/proc/base.c, task_dump_owner): a process that makes itself
 * non-dumpable is still counted as its user (t0711).
 */
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
	e->uq = vd_uq_claim(d, e->uid);
	q = vd_uq(d, e);
	if (q->pending >= MAX_PENDING / 4)
		return -EAGAIN;
	q->pending++;
	e->counted = true;
	return 0;
}

/*
 * The lowest free slot: the table's live part stays as small as the
 * number of events in flight (one or two, mostly), so that its walks
 * (leaders, deadlines) and its memory stay in the CPU's cache.
 */
static int ev_alloc(struct vd *d)
{
	for (int i = 0; i < d->ev_hi; i++)
		if (!d->ev[i].used)
			return i;
	return d->ev_hi < MAX_PENDING ? d->ev_hi++ : -1;
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

/* The group event @fd was read from: the main one, or a side's (side.c). */
static int group_of(const struct vd *d, const struct vd_origin *o)
{
	return o && o->side ? o->side->group : d->fan;
}

void vd_event(struct vd *d, int fd, pid_t pid, uint32_t mask)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		d->st.events++;
		vd_fan_respond(d, fd, true);
		d->st.allowed++;
		close(fd);
		return;
	}
	vd_event_from(d, NULL, fd, pid, mask, &st, NULL, 0);
}

void vd_event_from(struct vd *d, const struct vd_origin *o, int fd, pid_t pid, uint32_t mask,
		   const struct stat *stp, char *kname, int kname_named)
{
	struct vd_side *side = o ? o->side : NULL;
	bool slow = side && side->cls == VD_FS_SLOW;
	int group = group_of(d, o);
	bool parked = o && o->parked > 0;
	int ans = parked ? o->parked : fd;	/* the number the kernel knows the event by */
	struct stat st;
	struct result *r;
	struct lease *l;
	struct ev *e;
	int i, leader, w;
	int named = 1, exe_named = 1;	/* vd_name_here of the file and of the program */
	bool unknown;
	double t0 = vd_now();

	if (!(o && o->before))
		d->st.events++;
	if (!(o && o->before) && is_own(d, pid)) {
		d->st.own++;
		(void)vd_fan_answer(group, ans, true);
		if (parked)
			vd_held_answered(d, true);
		close(fd);
		free(kname);
		return;
	}
	if (stp && (!S_ISREG(stp->st_mode) || !d->policy)) {
		(void)vd_fan_answer(group, ans, true);
		if (parked)
			vd_held_answered(d, true);
		d->st.allowed++;
		close(fd);
		free(kname);
		return;
	}
	i = ev_alloc(d);
	if (i < 0) {	/* the bounded table is full: the overflow policy */
		bool allow = d->mode != MODE_ENFORCE || d->fail_open;

		d->st.overflows++;
		(void)vd_fan_answer(group, ans, allow);
		if (parked)
			vd_held_answered(d, true);
		allow ? d->st.allowed++ : d->st.denied++;
		close(fd);
		free(kname);
		return;
	}
	e = &d->ev[i];
	{
		uint16_t gen = e->gen;

		memset(e, 0, sizeof(*e));
		e->gen = (uint16_t)(gen + 1);
	}
	e->used = true;
	e->fd = fd;
	e->answer_no = ans;
	e->parked = parked;
	e->side = side;
	if (o && o->before) {
		e->before = true;
		d->before_pending++;
	}
	e->pid = pid;
	e->mask = mask;
	e->t0 = t0;
	e->worker = -1;
	e->leader = -1;
	e->next_waiter = -1;
	e->qnext = -1;
	d->npending++;
	if (kname)
		e->path = kname;
	if (!stp) {
		/* a slow filesystem's server would not say what the file is: the fail action */
		vd_fail_one(d, i, "unreadable", -1);
		return;
	}
	st = *stp;
	e->fmode = st.st_mode;
	e->nlink = st.st_nlink;
	e->key = (struct vkey){ st.st_dev, st.st_ino, st.st_size,
				(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
				(int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec };
	/* read here only for a path= rule; otherwise when a record needs it (vd_ev_path) */
	if (d->policy_uses_path) {
		if (side) {
			/* the side's thread looked (it may wait on its filesystem; the loop may not) */
			named = kname_named;
		} else {
			(void)vd_ev_path(e);
			named = vd_name_here(d, fd, "", &st, e->path, &e->path_here);
		}
		if (named > 0)
			e->acc.path = e->path_here ? e->path_here : e->path;
	}
	e->acc.func = mask & VD_EV_EXEC ? VG_FUNC_BPRM_CHECK : VG_FUNC_FILE_CHECK;
	e->acc.mask = mask & VD_EV_EXEC ? VG_MAY_EXEC : VG_MAY_READ;
	vd_fsinfo_access(&d->fsinfo, slow ? -1 : fd, st.st_dev, &e->acc);
	e->acc.fsmagic = side ? side->magic : fsmagic_of(d, fd, st.st_dev);
	e->acc.fowner = st.st_uid;
	e->acc.fgroup = st.st_gid;
	if (d->policy_uses_uid)
		e->creds = vd_task_creds(pid, &e->acc);
	if (d->policy_uses_subject) {
		char link[64];
		struct stat xs;

		/* the audit record keeps the kernel's name; the policy sees vigild's (names.c) */
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		e->subj_exe = vd_readlink(link);
		exe_named = e->subj_exe && vd_stat_nowait(link, &xs) == 0 ?
			vd_name_here(d, AT_FDCWD, link, &xs, e->subj_exe, &e->exe_here) : -ESRCH;
		if (exe_named > 0)
			e->acc.subj_exe = e->exe_here ? e->exe_here : e->subj_exe;
		else if (exe_named == -ENOENT)
			exe_named = 0;	/* on a filesystem vigild has no mount of: no name */
	}
	unknown = (d->policy_uses_uid && !e->creds) || exe_named < 0;
	if (vd_loader_match(&d->loaders, d->policy, pid, mask & VD_EV_EXEC, d->policy_access, &e->acc,
			    &e->dec) < 0)
		unknown = true;
	if (unknown) {
		/*
		 * Whose access this is cannot be told: the kernel reports an
		 * opener outside vigild's pid namespace as pid 0. Judged as
		 * anyone (uid 0, no program, not the loader), a rule about the
		 * subject could exempt it (dont_appraise uid=0, or an exec
		 * through ld.so under exec rules): the fail action instead, under
		 * no rule (the match was made without the subject). The same for
		 * a program whose name in vigild's mount namespace cannot be told.
		 */
		vd_fail_one(d, i, "unknown-subject", -1);
		return;
	}
	if (named < 0) {	/* a path= rule cannot be judged: the file's name here is not known */
		vd_fail_one(d, i, "unknown-path", -1);
		return;
	}
	e->need_appraise = e->dec.appraise;
	if (!e->dec.appraise && !e->dec.measure && !e->dec.audit && !d->policy_access) {
		vd_answer(d, e, true);
		vd_ev_release(d, i);
		return;
	}
	if (!e->dec.appraise && !e->dec.measure) {
		vd_finish(d, i, NULL);
		return;
	}
	if (side && side->fuse && e->need_appraise) {
		/*
		 * A FUSE server makes up every byte vigild would read, labels
		 * included, and can tell vigild's reads from the opener's: as the
		 * kernel fails such files (SB_I_IMA_UNVERIFIABLE_SIGNATURE), no
		 * appraisal of one can pass.
		 */
		r = vd_result_uncached(d, &e->key);
		r->appraised = true;
		r->status = VG_ST_FAIL;
		snprintf(r->cause, sizeof(r->cause), "unverifiable-filesystem");
		vd_finish(d, i, r);
		return;
	}
	/* no lease on a side's file: the file below (stacked) or the server (slow) can change it */
	l = side ? NULL : vd_lease_get(d, st.st_dev, st.st_ino);
	r = l ? vd_cache_get(d, &e->key, l->gen) : NULL;
	if (r) {
		e->leased = true;
		e->lease_gen = l->gen;
		l->used = t0;
	}
	if (!r && !side && st.st_size == 0 && fgetxattr(fd, "security.ima", NULL, 0) < 0 && errno == ENODATA) {
		/*
		 * An empty file without a label: most likely being created (the
		 * event does not say O_CREAT). The kernel passes IMA_NEW_FILE;
		 * empty content can neither leak nor run anything. Kept only
		 * under a lease: its creator usually still has it open.
		 */
		e->leased = vd_lease_take(d, fd, st.st_dev, st.st_ino, &e->lease_gen) == 0;
		r = e->leased ? vd_cache_put(d, &e->key, e->lease_gen) : vd_result_uncached(d, &e->key);
		r->appraised = true;
		r->status = VG_ST_PASS;
		vg_hash_buf(d->algo, "", 0, &r->digest, NULL);
	}
	if (r && (r->appraised || !e->need_appraise) && !r->err && result_fits(d, r, e)) {
		d->st.cache_hits++;
		vd_finish(d, i, r);
		return;
	}
	d->st.cache_misses++;
	if (d->max_size && (uint64_t)st.st_size > d->max_size) {
		d->st.too_large++;
		vd_fail_group(d, i, "file-too-large");
		return;
	}
	e->large = st.st_size >= LARGE_FILE;
	leader = find_leader(d, e);
	if (leader < 0) {
		/* the lease is taken before any content is read: a writer since then voids the verdict */
		e->leased = !side && vd_lease_take(d, fd, st.st_dev, st.st_ino, &e->lease_gen) == 0;
		/*
		 * Whose access this is matters only when it has to wait: a small
		 * file that an appraiser takes at once, with nobody queued, is
		 * sent without looking the opener up (a stat of /proc/PID saved).
		 */
		if (!e->large && queues_empty(d) && (w = vd_pick_worker(d, e)) >= 0 && vd_pool_send(d, w, i) == 0)
			return;
	}
	if (count_opener(d, e, pid) < 0) {
		/* one user's flood must not fill the table for everyone */
		d->st.overflows++;
		vd_fail_group(d, i, "overflow");
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
	vd_uq_push(d, i);
	vd_dispatch(d);
}
