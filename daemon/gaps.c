// SPDX-License-Identifier: MIT
/*
 * gaps.c - the ways an unprivileged user could run code vigild never sees,
 * and what is done about each.
 *
 * fanotify sees only what is marked. The kernel's IMA sees every exec
 * through its hooks; a user who configures "appraise every exec" reads it
 * as "nothing unappraised runs". So, under a policy that appraises (or
 * denies) execution in enforce mode, each way around is closed or vigild
 * refuses to start, naming it and how to close it, unless the
 * administrator accepts it by name (--accept-gap, vigild.accept_gap):
 *
 *   memfd      a program written to a memfd and run (fexecve): memfds live
 *              on an internal filesystem no mark can reach. Closed by
 *              vm.memfd_noexec = 2 (Linux 6.3; per pid namespace);
 *   userns     a user's own mount namespace (unshare -Urm) with a tmpfs of
 *              his: invisible to vigild's marks. Closed by
 *              kernel.unprivileged_userns_clone = 0 (Debian's kernels),
 *              else user.max_user_namespaces = 0 (root's too);
 *   fuse       a FUSE filesystem a user mounts (setuid fusermount3) without
 *              allow_other: reachable by him alone, root included, so no
 *              mark can be set on it. Closed by taking the setuid bit off;
 *   mount:PATH a mounted filesystem users can write and run from that is
 *              not watched (--watch, --watch-mounts), or could not be marked.
 *
 * The sysctls are set by `vigild --close-gaps` (the unit's ExecStartPre=+,
 * outside its ProtectKernelTunables=), which logs what it changed and
 * leaves them set at stop: a restart must not reopen them. vigild itself
 * only reads them. Measure-only and permissive modes are not refused; they
 * list the gaps. `vigil status` and the start's log say which gap is
 * closed, accepted or open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "monitor.h"
#include "vigil/config.h"
#include "vigil/evm.h"

#define SYSCTL_MEMFD "/proc/sys/vm/memfd_noexec"
#define SYSCTL_USERNS_CLONE "/proc/sys/kernel/unprivileged_userns_clone"
#define SYSCTL_MAX_USERNS "/proc/sys/user/max_user_namespaces"
#define SCAN_DIRS_MAX 20000	/* directories looked at per filesystem for one users may write */

int vd_gap_name_check(const char *name)
{
	if (!strcmp(name, "memfd") || !strcmp(name, "userns") || !strcmp(name, "fuse"))
		return 0;
	if (!strncmp(name, "mount:", 6) && name[6] == '/')
		return 0;
	return -EINVAL;
}

static bool accepted(const struct vd *d, const char *name)
{
	for (size_t i = 0; i < d->naccept; i++)
		if (strcmp(d->accept[i], name) == 0)
			return true;
	return false;
}

bool vd_gap_accepted_mount(const struct vd *d, const char *point)
{
	for (size_t i = 0; i < d->naccept; i++)
		if (!strncmp(d->accept[i], "mount:", 6) && strcmp(d->accept[i] + 6, point) == 0)
			return true;
	return false;
}

/* A sysctl's integer value. Return: 0, -ENOENT (this kernel has none), -errno. */
static int sysctl_read(const char *path, long *v)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -errno;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	*v = strtol(buf, NULL, 10);
	return 0;
}

static int sysctl_write(const char *path, long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, r = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	if (write(fd, buf, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

/*
 * What a way around runs programs on, as the policy sees a filesystem: its
 * type's magic and name (0 / NULL: any, a user's choice), its UUID (none).
 */
struct fsfacts {
	uint64_t magic;
	const char *name;
	bool has_uuid;
	uint8_t uuid[16];
	/*
	 * Where its files are in vigild's namespace (path= rules match that
	 * name): a mount point, "/" for anywhere; NULL for files that have no
	 * name there (a memfd, a user's own mount in his namespace), which
	 * match no pattern.
	 */
	const char *dir;
};

/*
 * Could path= pattern @pat match some file under @dir? Decided on the
 * pattern's literal start (up to its first wildcard or escape), so never
 * "no" where a match is possible: /srv/ followed by any wildcard, or /s
 * followed by one, may match under /srv; /srv/app/ followed by one under
 * /srv or /srv/app; /home/ followed by one not under /srv.
 */
static bool path_may_match_under(const char *pat, const char *dir)
{
	size_t lit = strcspn(pat, "*?[\\"), dl;

	if (!dir)
		return false;
	dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl == 1)
		return true;
	if (lit < dl)		/* a wildcard before the end of @dir: may expand to it */
		return strncmp(pat, dir, lit) == 0;
	return strncmp(pat, dir, dl) == 0 && (lit == dl || pat[dl] == '/');
}

/* Can rule @r hold for some exec of a file on @f? (its other conditions taken as met) */
static bool may_match_exec_on(const struct vg_policy_rule *r, const struct fsfacts *f)
{
	static const uint8_t zero[16];

	if (!vd_rule_may_match_exec(r))
		return false;
	if ((r->flags & VG_POLF_FSMAGIC) && f->magic && r->fsmagic != f->magic)
		return false;
	if ((r->flags & VG_POLF_FSNAME) && f->name && r->fsname && strcmp(r->fsname, f->name) != 0)
		return false;
	if ((r->flags & VG_POLF_FSUUID) && memcmp(r->fsuuid, f->has_uuid ? f->uuid : zero, 16) != 0)
		return false;
	if ((r->xflags & VG_POLX_PATH) && r->path && !path_may_match_under(r->path, f->dir))
		return false;
	return true;
}

/* Does rule @r hold for every exec on @f (no condition but the filesystem's)? */
static bool always_matches_exec_on(const struct vg_policy_rule *r, const struct fsfacts *f)
{
	const uint32_t fs_only = VG_POLF_FUNC | VG_POLF_MASK | VG_POLF_INMASK | VG_POLF_FSMAGIC |
				 VG_POLF_FSNAME | VG_POLF_FSUUID | VG_POLF_OPTIONS;

	return may_match_exec_on(r, f) && !(r->flags & ~fs_only) && !r->xflags &&
	       (!(r->flags & VG_POLF_FSMAGIC) || f->magic) && (!(r->flags & VG_POLF_FSNAME) || f->name);
}

/*
 * Does @p act on some exec on @f, first match per class as vigild matches:
 * appraise (an appraise rule no dont_appraise before it always overrides)
 * or deny (an access rule), and, with @measure, measure?
 */
static bool acts_on_exec(const struct vg_policy *p, const struct fsfacts *f, bool measure)
{
	bool appraise_done = false, access_done = false, measure_done = !measure;

	for (size_t i = 0; p && i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);

		switch (r->action) {
		case VG_POL_DONT_APPRAISE:
			appraise_done |= always_matches_exec_on(r, f);
			break;
		case VG_POL_APPRAISE:
			if (!appraise_done && may_match_exec_on(r, f))
				return true;
			break;
		case VG_POL_ALLOW:
		case VG_POL_AUDIT_ACCESS:
			access_done |= always_matches_exec_on(r, f);
			break;
		case VG_POL_DENY:
			if (!access_done && may_match_exec_on(r, f))
				return true;
			break;
		case VG_POL_DONT_MEASURE:
			measure_done |= always_matches_exec_on(r, f);
			break;
		case VG_POL_MEASURE:
			if (!measure_done && may_match_exec_on(r, f))
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

enum { SCOPE_NONE, SCOPE_MEASURE, SCOPE_JUDGE };

/* Does the policy judge (appraise, deny) or measure some exec on @f? Return: SCOPE_*. */
static int scope_on(const struct vd *d, const struct fsfacts *f)
{
	if (acts_on_exec(d->policy, f, false))
		return SCOPE_JUDGE;
	return acts_on_exec(d->policy, f, true) ? SCOPE_MEASURE : SCOPE_NONE;
}

/* Gap @name, as it stands (@st), for a policy whose @scope it is in. */
static void add(struct vd *d, const char *name, enum vd_gap_state st, const char *how, int scope)
{
	struct vd_gap *g;

	if (d->ngaps == MAX_GAPS)
		return;
	g = &d->gaps[d->ngaps++];
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->judged = scope == SCOPE_JUDGE;
	if (st == VD_GAP_OPEN && accepted(d, name))
		st = VD_GAP_ACCEPTED;
	else if (st == VD_GAP_OPEN && scope == SCOPE_NONE)
		st = VD_GAP_OUTSIDE;	/* the policy runs no rule there: nothing to see */
	g->state = st;
	free(g->how);
	g->how = strdup(how);
}

#define TMPFS_MAGIC_ 0x01021994u
#define FUSE_MAGIC_ 0x65735546u
#define RAMFS_MAGIC_ 0x858458f6u
#define OVERLAY_MAGIC_ 0x794c7630u

static int memfd_scope(const struct vd *d)
{
	const struct fsfacts f = { .magic = TMPFS_MAGIC_, .name = "tmpfs" };	/* memfds are shmem's */

	return scope_on(d, &f);
}

/* what a user may mount in a user namespace of his own (FS_USERNS_MOUNT) that could hold a program */
static int userns_scope(const struct vd *d)
{
	const struct fsfacts fs[] = { { .magic = TMPFS_MAGIC_, .name = "tmpfs" },
				      { .magic = RAMFS_MAGIC_, .name = "ramfs" },
				      { .magic = FUSE_MAGIC_, .name = "fuse" },
				      { .magic = OVERLAY_MAGIC_, .name = "overlay" } };
	int s = SCOPE_NONE;

	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		if (scope_on(d, &fs[i]) > s)
			s = scope_on(d, &fs[i]);
	return s;
}

static int fuse_scope(const struct vd *d)
{
	/* mounted on any directory its user owns */
	const struct fsfacts f = { .magic = FUSE_MAGIC_, .name = "fuse", .dir = "/" };

	return scope_on(d, &f);
}

/* The policy's view of mount @m's filesystem: type, name, UUID (read for a local one only). */
static int mount_scope(const struct vd *d, const struct vd_mount *m)
{
	struct fsfacts f = { 0 };
	char name[32];
	size_t n = strcspn(m->fstype, ".");

	snprintf(name, sizeof(name), "%.*s", (int)n, m->fstype);
	f.name = name;
	f.dir = m->point;
	f.magic = vg_fstype_magic(name);
	if (m->cls == VD_FS_LOCAL || m->cls == VD_FS_DEVICE) {
		int fd = open(m->point, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd >= 0) {
			f.has_uuid = vg_fs_uuid(fd, f.uuid, NULL) == 0;
			close(fd);
		}
	}
	return scope_on(d, &f);
}

static bool no_memfd_noexec(const struct vd *d)
{
	return d->test_no_memfd_noexec;
}

static void memfd_gap(struct vd *d)
{
	long v = 0;
	int r = no_memfd_noexec(d) ? -ENOENT : sysctl_read(SYSCTL_MEMFD, &v), sc = memfd_scope(d);

	if (r == -ENOENT)
		add(d, "memfd", VD_GAP_OPEN, "this kernel has no vm.memfd_noexec (Linux 6.3): a program "
		    "written to a memfd runs unseen; run Linux 6.3 or later, or accept it: "
		    "--accept-gap memfd", sc);
	else if (r < 0)
		add(d, "memfd", VD_GAP_OPEN, "vm.memfd_noexec cannot be read", sc);
	else if (v >= 2)
		add(d, "memfd", VD_GAP_CLOSED, "vm.memfd_noexec = 2: no memfd can be run", sc);
	else
		add(d, "memfd", VD_GAP_OPEN, "vm.memfd_noexec is not 2: a program written to a memfd "
		    "runs unseen; `vigild --close-gaps` (the unit's ExecStartPre) sets it (runc, "
		    "and with it Docker and containerd, runs a memfd copy of itself and stops "
		    "working), or accept it: --accept-gap memfd", sc);
}

static void userns_gap(struct vd *d)
{
	long v = 0;
	int sc = userns_scope(d);

	if (sysctl_read(SYSCTL_USERNS_CLONE, &v) == 0) {
		if (v == 0)
			add(d, "userns", VD_GAP_CLOSED, "kernel.unprivileged_userns_clone = 0", sc);
		else
			add(d, "userns", VD_GAP_OPEN, "users may make user namespaces and mount "
			    "filesystems of their own there, which vigild cannot see: "
			    "`vigild --close-gaps` (the unit's ExecStartPre) sets "
			    "kernel.unprivileged_userns_clone = 0, or accept it: --accept-gap userns", sc);
		return;
	}
	if (sysctl_read(SYSCTL_MAX_USERNS, &v) == 0 && v == 0)
		add(d, "userns", VD_GAP_CLOSED, "user.max_user_namespaces = 0", sc);
	else
		add(d, "userns", VD_GAP_OPEN, "users may make user namespaces and mount filesystems "
		    "of their own there, which vigild cannot see; this kernel has no "
		    "kernel.unprivileged_userns_clone, and `vigild --close-gaps` (the unit's "
		    "ExecStartPre) sets user.max_user_namespaces = 0, which stops root's too "
		    "(systemd's PrivateUsers=, rootless containers, browser sandboxes); or accept it: "
		    "--accept-gap userns", sc);
}

static bool user_writable(const struct stat *st)
{
	return S_ISDIR(st->st_mode) &&
	       ((st->st_mode & S_IWOTH) || (st->st_uid != 0 && (st->st_mode & S_IWUSR)) ||
		(st->st_gid != 0 && (st->st_mode & S_IWGRP)));
}

/*
 * A directory of filesystem @dev, under @point, that users other than root
 * may write (mode bits; ACLs are not read), breadth first, at most
 * SCAN_DIRS_MAX. Return: 1 with its path in @found, 0 none, -1 too many to
 * tell (taken as writable).
 */
static int find_writable(const char *point, dev_t dev, char *found, size_t cap)
{
	char **q = malloc(SCAN_DIRS_MAX * sizeof(*q));
	size_t head = 0, tail = 0;
	int r = 0;

	if (!q)
		return -1;
	q[tail++] = strdup(point);
	while (head < tail && r == 0) {
		char *dir = q[head++];
		int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;

		while (dp && r == 0 && (de = readdir(dp))) {
			struct stat st;
			char *path;

			if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
				continue;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISDIR(st.st_mode) || st.st_dev != dev)
				continue;
			if (user_writable(&st)) {
				snprintf(found, cap, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", de->d_name);
				r = 1;
			} else if (tail == SCAN_DIRS_MAX) {
				r = -1;
			} else if (asprintf(&path, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", de->d_name) > 0) {
				q[tail++] = path;
			}
		}
		if (dp)
			closedir(dp);
		else if (fd >= 0)
			close(fd);
	}
	{
		struct stat st;

		if (r == 0 && stat(point, &st) == 0 && user_writable(&st)) {
			snprintf(found, cap, "%s", point);
			r = 1;
		}
	}
	for (size_t i = 0; i < tail; i++)
		free(q[i]);
	free(q);
	return r;
}

/*
 * FUSE: any user may mount a filesystem of his own (fusermount3 is setuid
 * root, /dev/fuse open to all), and one mounted without allow_other can be
 * reached by its user alone: root's access is refused by FUSE itself
 * (fuse_allow_current_process), fanotify_mark's with it, so vigild cannot
 * watch it whatever it does.
 */
static void fuse_gap(struct vd *d)
{
	static const char *const helpers[] = { "/usr/bin/fusermount3", "/usr/bin/fusermount",
					       "/bin/fusermount3", "/bin/fusermount" };
	const char *helper = NULL;
	struct stat st;
	char *how = NULL;

	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]) && !helper; i++)
		if (stat(helpers[i], &st) == 0 && (st.st_mode & S_ISUID) && st.st_uid == 0 &&
		    (st.st_mode & S_IXOTH))
			helper = helpers[i];
	if (!helper || stat("/dev/fuse", &st) < 0 || !(st.st_mode & S_IWOTH)) {
		add(d, "fuse", VD_GAP_CLOSED, "unprivileged users cannot mount FUSE filesystems",
		    fuse_scope(d));
		return;
	}
	if (asprintf(&how, "users may mount FUSE filesystems (%s is setuid root, /dev/fuse is open to "
		     "all); one mounted without allow_other can be reached by its user alone, root "
		     "included, so vigild cannot watch it: take the setuid bit off "
		     "(dpkg-statoverride --update --add root root 0755 %s), or accept it: "
		     "--accept-gap fuse", helper, helper) < 0)
		how = NULL;
	add(d, "fuse", VD_GAP_OPEN, how ? how : "users may mount FUSE filesystems", fuse_scope(d));
	free(how);
}

/* Every filesystem users may write and run programs from, not watched: a gap each. */
static void mount_gaps(struct vd *d, bool scan)
{
	for (size_t i = 0; i < d->mounts.n; i++) {
		const struct vd_mount *m = &d->mounts.m[i], *b = vd_mounts_dev(&d->mounts, m->dev);
		char name[sizeof(((struct vd_gap *)0)->name)], found[PATH_MAX], *how = NULL;
		int w;

		if (b != m)	/* one line per filesystem: its most telling mount */
			continue;
		if (m->cls == VD_FS_PSEUDO || (m->ro && m->cls != VD_FS_SLOW) || m->noexec ||
		    vd_mark_watching(vd_mark_of(d, m->dev)))
			continue;
		if (m->cls == VD_FS_DEVICE && !scan)
			continue;	/* looked at once, at start: device directories do not come and go */
		if ((m->cls == VD_FS_DEVICE || (scan && m->cls == VD_FS_LOCAL)) &&
		    !vd_mounts_through_unsafe(&d->mounts, m->point)) {
			w = find_writable(m->point, m->dev, found, sizeof(found));
			if (w == 0)
				continue;
		} else {
			w = -1;
		}
		snprintf(name, sizeof(name), "mount:%s", m->point);
		if (m->cls == VD_FS_DEVICE)
			w = asprintf(&how, "%s (%s) has a directory users may write (%s): a program put "
				     "there runs unseen (devtmpfs is never watched: its device nodes would "
				     "be opened); make it not writable, or accept it: --accept-gap %s",
				     m->point, m->fstype, found, name);
		else
			w = asprintf(&how, "%s (%s%s) can be written by users%s%s%s and is not watched: a "
				     "program put there runs unseen; watch it (--watch %s, or "
				     "--watch-mounts), mount it noexec, or accept it: --accept-gap %s",
				     m->point, m->fstype, m->whole ? "" : ", a part of it bound here",
				     w > 0 ? " (" : "", w > 0 ? found : "", w > 0 ? ")" : "", m->point, name);
		add(d, name, VD_GAP_OPEN, w > 0 ? how : "not watched", mount_scope(d, m));
		free(how);
	}
}


static const char *state_name(enum vd_gap_state s)
{
	static const char *const n[] = { "closed", "accepted", "open", "outside-policy" };

	return s <= VD_GAP_OUTSIDE ? n[s] : "?";
}

int vd_gaps_check(struct vd *d)
{
	bool strict = d->mode == MODE_ENFORCE;
	int refused = 0;

	for (size_t i = 0; i < d->ngaps; i++)
		free(d->gaps[i].how);
	memset(d->gaps, 0, sizeof(d->gaps));
	d->ngaps = 0;
	memfd_gap(d);
	userns_gap(d);
	fuse_gap(d);
	mount_gaps(d, true);
	for (size_t i = 0; i < d->ngaps; i++) {
		struct vd_gap *g = &d->gaps[i];

		if (g->state == VD_GAP_OPEN && g->judged && strict) {
			vlog_err("gap %s: %s", g->name, g->how ? g->how : "");
			refused++;
		} else if (g->state != VD_GAP_CLOSED && g->state != VD_GAP_OUTSIDE) {
			vlog(VLOG_WARNING, "gap %s %s: %s", g->name, state_name(g->state),
				  g->how ? g->how : "");
		}
	}
	if (refused)
		vlog_err("%d way%s around vigild %s open under a policy that judges execution in enforce "
		       "mode: not starting (close %s, or accept %s by name)", refused, refused > 1 ? "s" : "",
		       refused > 1 ? "are" : "is", refused > 1 ? "them" : "it", refused > 1 ? "them" : "it");
	return refused ? -1 : 0;
}

void vd_gaps_mounts_changed(struct vd *d)
{
	size_t k = 0;

	/* the mount gaps again, from the new table; the others as they were */
	for (size_t i = 0; i < d->ngaps; i++) {
		if (strncmp(d->gaps[i].name, "mount:", 6) != 0) {
			d->gaps[k++] = d->gaps[i];
		} else {
			free(d->gaps[i].how);
			d->gaps[i].how = NULL;
		}
	}
	for (size_t i = k; i < d->ngaps; i++)
		d->gaps[i].how = NULL;
	d->ngaps = k;
	mount_gaps(d, false);
	for (size_t i = k; i < d->ngaps; i++)
		if (d->gaps[i].state == VD_GAP_OPEN && d->gaps[i].judged)
			vlog(VLOG_WARNING, "gap %s open: %s", d->gaps[i].name,
				  d->gaps[i].how ? d->gaps[i].how : "");
}

int vd_gaps_close(struct vd *d)
{
	long v = 0;	/* read when r == 0; gcc -O3 cannot tell (-Wmaybe-uninitialized) */
	int r, failed = 0;

	if (d->mode != MODE_ENFORCE) {
		vlog(VLOG_INFO, "--close-gaps: not in enforce mode: no sysctl changed");
		return 0;
	}

	if (!accepted(d, "memfd") && memfd_scope(d) == SCOPE_JUDGE) {
		r = no_memfd_noexec(d) ? -ENOENT : sysctl_read(SYSCTL_MEMFD, &v);
		if (r == -ENOENT) {
			vlog_err("memfd: this kernel has no vm.memfd_noexec (Linux 6.3): cannot close; "
			       "accept it (--accept-gap memfd) or run a newer kernel");
			failed++;
		} else if (r == 0 && v < 2) {
			r = sysctl_write(SYSCTL_MEMFD, 2);
			if (r < 0) {
				vlog_err("vm.memfd_noexec = 2: %s", strerror(-r));
				failed++;
			} else {
				vlog(VLOG_INFO, "vm.memfd_noexec: %ld -> 2 (no memfd can be run)", v);
			}
		}
	}
	if (!accepted(d, "userns") && userns_scope(d) == SCOPE_JUDGE) {
		const char *path = SYSCTL_USERNS_CLONE;
		bool clone = true;

		r = sysctl_read(path, &v);
		if (r == -ENOENT) {
			path = SYSCTL_MAX_USERNS;
			clone = false;
			r = sysctl_read(path, &v);
		}
		if (r == 0 && v != 0) {
			r = sysctl_write(path, 0);
			if (r < 0) {
				vlog_err("%s = 0: %s", path + strlen("/proc/sys/"), strerror(-r));
				failed++;
			} else {
				vlog(VLOG_INFO, "%s: %ld -> 0 (no user namespaces %s)",
					  path + strlen("/proc/sys/"), v,
					  clone ? "for unprivileged users" : "for anyone");
			}
		}
	}
	return failed ? -1 : 0;
}

json_object *vd_gaps_json(const struct vd *d)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < d->ngaps; i++) {
		json_object *g = json_object_new_object();

		json_object_object_add(g, "name", json_object_new_string(d->gaps[i].name));
		json_object_object_add(g, "state", json_object_new_string(state_name(d->gaps[i].state)));
		json_object_object_add(g, "how", json_object_new_string(d->gaps[i].how ? d->gaps[i].how : ""));
		json_object_array_add(a, g);
	}
	return a;
}
