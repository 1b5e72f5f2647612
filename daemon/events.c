// SPDX-License-Identifier: MIT
/*
 * events.c - the intake of one fanotify permission event, from its
 * descriptor to an answer or a place in a queue: the facts vd_decide
 * (decide.c) asks for (whose access, the file's version and filesystem,
 * its path and the opener's credentials and program when the policy
 * names them, whether the opener is a dynamic loader), a verdict kept
 * for this version (the cache under the inode's lease, an empty new
 * file), and for a miss a leader appraisal that every other opener of
 * the same version waits for. The kernel's structures are decoded in
 * fanotify.c; this file sees (fd, pid, mask). It judges nothing itself.
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

#include "appraisers.h"
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
 * Return: its index, or -1 (full); taken by ev_take.
 */
static int ev_free(const struct vd *d)
{
	for (int i = 0; i < d->ev_hi; i++)
		if (!d->ev[i].used)
			return i;
	return d->ev_hi < MAX_PENDING ? d->ev_hi : -1;
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

/* Slot @i (ev_free) for an event on @fd: every field reset, in use. */
static struct ev *ev_take(struct vd *d, int i, int fd, pid_t pid, uint32_t mask, double t0)
{
	struct ev *e = &d->ev[i];
	uint16_t gen = e->gen;

	if (i == d->ev_hi)
		d->ev_hi++;
	memset(e, 0, sizeof(*e));
	e->gen = (uint16_t)(gen + 1);
	e->used = true;
	e->fd = fd;
	e->pid = pid;
	e->mask = mask;
	e->t0 = t0;
	e->worker = -1;
	e->leader = -1;
	e->next_waiter = -1;
	e->qnext = -1;
	d->npending++;
	return e;
}

/*
 * The access as the policy sees it: its path when a path= rule needs it,
 * the filesystem's facts, the file's owner, and the opener's credentials
 * and program when rules name them. Into @f: whether the subject and the
 * path could be told.
 */
static void look(struct vd *d, struct ev *e, const struct stat *st, int kname_named,
		 struct vd_facts *f)
{
	struct vd_side *side = e->side;
	int named = 1, exe_named = 1;	/* vd_name_here of the file and of the program */

	/* read here only for a path= rule; otherwise when a record needs it (vd_ev_path) */
	if (d->policy_uses_path) {
		if (side) {
			/* the side's thread looked (it may wait on its filesystem; the loop may not) */
			named = kname_named;
		} else {
			(void)vd_ev_path(e);
			named = vd_name_here(d, e->fd, "", st, e->path, &e->path_here);
		}
		if (named > 0)
			e->acc.path = e->path_here ? e->path_here : e->path;
	}
	e->acc.func = e->mask & VD_EV_EXEC ? VG_FUNC_BPRM_CHECK : VG_FUNC_FILE_CHECK;
	e->acc.mask = e->mask & VD_EV_EXEC ? VG_MAY_EXEC : VG_MAY_READ;
	vd_fsinfo_access(&d->fsinfo, side && side->cls == VD_FS_SLOW ? -1 : e->fd, st->st_dev, &e->acc);
	e->acc.fsmagic = side ? side->magic : fsmagic_of(d, e->fd, st->st_dev);
	e->acc.fowner = st->st_uid;
	e->acc.fgroup = st->st_gid;
	if (d->policy_uses_uid)
		e->creds = vd_task_creds(e->pid, &e->acc);
	if (d->policy_uses_subject) {
		char link[64];
		struct stat xs;

		/* the audit record keeps the kernel's name; the policy sees vigild's (names.c) */
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)e->pid);
		e->subj_exe = vd_readlink(link);
		exe_named = e->subj_exe && vd_stat_nowait(link, &xs) == 0 ?
			vd_name_here(d, AT_FDCWD, link, &xs, e->subj_exe, &e->exe_here) : -ESRCH;
		if (exe_named > 0)
			e->acc.subj_exe = e->exe_here ? e->exe_here : e->subj_exe;
		else if (exe_named == -ENOENT)
			exe_named = 0;	/* on a filesystem vigild has no mount of: no name */
	}
	f->subject_unknown = (d->policy_uses_uid && !e->creds) || exe_named < 0;
	f->path_named = named;
	f->acc = &e->acc;
}

/*
 * A verdict kept for this version, if any: the cache's under the lease
 * held on the inode, or one for an empty new file. NULL: none.
 */
static struct result *kept(struct vd *d, struct ev *e, const struct stat *st)
{
	struct lease *l = e->side ? NULL : vd_lease_get(d, st->st_dev, st->st_ino);
	struct result *r = l ? vd_cache_get(d, &e->key, l->gen) : NULL;

	/* no lease on a side's file: the file below (stacked) or the server (slow) can change it */
	if (r) {
		e->leased = true;
		e->lease_gen = l->gen;
		l->used = e->t0;
	}
	if (!r && !e->side && st->st_size == 0 && fgetxattr(e->fd, "security.ima", NULL, 0) < 0 &&
	    errno == ENODATA) {
		/*
		 * An empty file without a label: most likely being created (the
		 * event does not say O_CREAT). The kernel passes IMA_NEW_FILE;
		 * empty content can neither leak nor run anything. Kept only
		 * under a lease: its creator usually still has it open.
		 */
		e->leased = vd_lease_take(d, e->fd, st->st_dev, st->st_ino, &e->lease_gen) == 0;
		r = e->leased ? vd_cache_put(d, &e->key, e->lease_gen) : vd_result_uncached(d, &e->key);
		r->appraised = true;
		r->status = VG_ST_PASS;
		vg_hash_buf(d->algo, "", 0, &r->digest, NULL);
	}
	return r;
}

/* A cache miss: one appraisal for every opener of this version, queued per uid. */
static void appraise(struct vd *d, int i, pid_t pid)
{
	struct ev *e = &d->ev[i];
	int leader, w;

	e->large = e->key.size >= LARGE_FILE;
	leader = find_leader(d, e);
	if (leader < 0) {
		/* the lease is taken before any content is read: a writer since then voids the verdict */
		e->leased = !e->side && vd_lease_take(d, e->fd, e->key.dev, e->key.ino, &e->lease_gen) == 0;
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

/* Answer an event that never took a slot (vd_decide's OWN, PASS, OVERFLOW). */
static void answer_slotless(struct vd *d, int group, int ans, bool parked, const struct vd_verdict *v)
{
	if (v->how == VD_HOW_OWN)
		d->st.own++;
	else if (v->how == VD_HOW_OVERFLOW)
		d->st.overflows++;
	(void)vd_fan_answer(group, ans, v->allow);
	if (parked)
		vd_held_answered(d, true);
	if (v->how != VD_HOW_OWN)
		v->allow ? d->st.allowed++ : d->st.denied++;
}

void vd_event_from(struct vd *d, const struct vd_origin *o, int fd, pid_t pid, uint32_t mask,
		   const struct stat *stp, char *kname, int kname_named)
{
	bool before = o && o->before, parked = o && o->parked > 0;
	struct vd_verdict v;
	struct vd_facts f;
	struct result *r;
	struct ev *e;
	int i;

	if (!before)
		d->st.events++;
	/* who asks: vigild itself, a file the policy cannot judge, no room (no slot taken) */
	i = ev_free(d);
	vd_facts_of(d, NULL, &f);
	f.before = before;
	f.own = !before && is_own(d, pid);
	f.irregular = stp && !S_ISREG(stp->st_mode);
	f.unreadable = !stp;
	f.full = i < 0;
	vd_decide(&f, &v);
	if (v.next == VD_NEXT_ANSWER &&
	    (v.how == VD_HOW_OWN || v.how == VD_HOW_PASS || v.how == VD_HOW_OVERFLOW)) {
		answer_slotless(d, group_of(d, o), parked ? o->parked : fd, parked, &v);
		close(fd);
		free(kname);
		return;
	}
	e = ev_take(d, i, fd, pid, mask, vd_now());
	e->answer_no = parked ? o->parked : fd;	/* the number the kernel knows the event by */
	e->parked = parked;
	e->side = o ? o->side : NULL;
	f.side = e->side != NULL;
	if (before) {
		e->before = true;
		d->before_pending++;
	}
	e->path = kname;
	if (stp) {
		e->fmode = stp->st_mode;
		e->nlink = stp->st_nlink;
		e->key = (struct vkey){ stp->st_dev, stp->st_ino, stp->st_size,
					(int64_t)stp->st_mtim.tv_sec * 1000000000 + stp->st_mtim.tv_nsec,
					(int64_t)stp->st_ctim.tv_sec * 1000000000 + stp->st_ctim.tv_nsec };
		f.size = stp->st_size;
		look(d, e, stp, kname_named, &f);
	}
	/*
	 * What the policy wants of it, who opens when that matters. Its size
	 * is judged once a kept verdict has been looked for: a FUSE file
	 * fails as unverifiable whatever its size.
	 */
	f.max_size = 0;
	vd_decide(&f, &v);
	while (v.next == VD_NEXT_LOADER) {
		int l = vd_loader_is(&d->loaders, pid);

		f.opener = l < 0 ? VD_OPENER_UNKNOWN : l ? VD_OPENER_LOADER : VD_OPENER_OTHER;
		vd_decide(&f, &v);
	}
	e->dec = v.dec;
	e->need_appraise = v.dec.appraise;
	e->pass_allows = v.pass_allows;
	if (v.as_exec) {
		e->acc.also_func = VG_FUNC_BPRM_CHECK;
		e->acc.also_mask = VG_MAY_EXEC;
	}
	if (v.next == VD_NEXT_ANSWER) {	/* decided without the file's content */
		vd_verdict_apply(d, i, &v, NULL, NULL);
		return;
	}
	f.dec = &e->dec;
	if (e->side && e->side->fuse && e->need_appraise) {
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
	r = kept(d, e, stp);
	f.res_kept = true;
	f.max_size = d->max_size;
	if (vd_judge(d, i, &f, r, &v) && v.next == VD_NEXT_RESULT) {
		d->st.cache_misses++;
		appraise(d, i, pid);
		return;
	}
	if (v.cache_hit)
		d->st.cache_hits++;
	if (v.cache_miss)
		d->st.cache_misses++;
}
