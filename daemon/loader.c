// SPDX-License-Identifier: MIT
/*
 * loader.c - the dynamic loader as a way to run a program: `ld.so PROG`
 * (/lib64/ld-linux-x86-64.so.2 /mnt/prog) execs the loader, and the
 * loader opens PROG with a plain open() and maps it executable. fanotify
 * reports that open as FAN_OPEN_PERM, like any read: without this file
 * vigild would match it as FILE_CHECK and a program that exec would
 * refuse runs unappraised.
 *
 * The signal: the opener's executable (/proc/PID/exe, stat()ed: the inode
 * it links to, no open, no event) is one of the system's loaders. Then the
 * open is matched as an open (FILE_CHECK, MAY_READ) and as the exec of
 * the file (BPRM_CHECK, MAY_EXEC), both decided and merged
 * (vg_access.also_func). Every file such a process opens counts: the
 * program, the libraries the loader maps for it, and the files the
 * program itself opens once it runs (vigild cannot tell these apart), so
 * its data on a marked filesystem needs what an exec needs. /proc is
 * asked only when the answer changes the decision (decide.c asks for it).
 *
 * The loaders, by inode, taken at start (before the marks): the PT_INTERP
 * of vigild's own executable (the system's loader for its own ABI), the
 * glibc and musl loaders of the common ABIs where they exist, and each
 * --loader PATH. A copy of a loader, or any program that maps a file
 * itself, is not recognised: it must itself be run, and on a marked
 * filesystem its exec is appraised (an unprivileged copy has no label);
 * what runs from an unmarked filesystem vigild does not guard anyway.
 *
 * Kernels: /proc/PID/exe and FAN_OPEN_PERM with the opener's pid are as
 * old as fanotify (2.6.37); FAN_OPEN_EXEC_PERM, which vigild needs for
 * exec, is 5.0. Nothing here needs more: Debian 12's 6.1 does it all.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "vigil/policy.h"
#include "vigild.h"

static const char *const known_loaders[] = {
	"/lib64/ld-linux-x86-64.so.2",	/* x86_64 glibc */
	"/lib/ld-linux.so.2",		/* i386 glibc */
	"/libx32/ld-linux-x32.so.2",	/* x32 glibc */
	"/lib/ld-linux-aarch64.so.1",	/* arm64 glibc */
	"/lib/ld-linux-armhf.so.3",	/* armhf glibc */
	"/lib/ld-musl-x86_64.so.1",	/* musl */
	"/lib/ld-musl-aarch64.so.1",
};

static void add(struct vd_loaders *l, const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (l->id[i].dev == st.st_dev && l->id[i].ino == st.st_ino)
			return;
	if (l->n < VD_MAX_LOADERS) {
		l->id[l->n].dev = st.st_dev;
		l->id[l->n].ino = st.st_ino;
		l->n++;
	}
}

/* PT_INTERP of the running executable, from its program headers in memory. */
static const char *own_interp(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = (size_t)getauxval(AT_PHNUM);
	uintptr_t bias = 0;

	if (!ph)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			bias = (uintptr_t)ph - ph[i].p_vaddr;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return (const char *)(bias + ph[i].p_vaddr);
	return NULL;
}

int vd_loaders_init(struct vd_loaders *l, const char *const *extra, size_t nextra)
{
	struct stat st;

	memset(l, 0, sizeof(*l));
	add(l, own_interp());
	for (size_t i = 0; i < sizeof(known_loaders) / sizeof(known_loaders[0]); i++)
		add(l, known_loaders[i]);
	for (size_t i = 0; i < nextra; i++) {
		if (stat(extra[i], &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode))
			return -EINVAL;
		add(l, extra[i]);
	}
	return (int)l->n;
}

/* stat(2) of @path's dev and inode, not asking the filesystem's server (AT_STATX_DONT_SYNC) */
static int vd_loader_stat(const char *path, struct stat *st)
{
	struct statx x;

	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &x) < 0)
		return -1;
	st->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
	st->st_ino = x.stx_ino;
	return 0;
}

int vd_loader_is(const struct vd_loaders *l, pid_t pid)
{
	char link[64];
	struct stat st;

	/* pid 0: an opener outside vigild's pid namespace, not to be looked up */
	if (pid <= 0)
		return -ESRCH;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	/*
	 * procfs is never marked: no event. No executable (a thread group
	 * whose first thread has exited): not the loader, which opens the
	 * program before any thread of it runs. Not asking the program's
	 * filesystem (a FUSE server could hold the loop): statx DONT_SYNC.
	 */
	if (vd_loader_stat(link, &st) < 0)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->id[i].dev == st.st_dev && l->id[i].ino == st.st_ino)
			return 1;
	return 0;
}

/*
 * An open's verdict depends on who opens (the loader or not) when a rule
 * can match an exec: a kernel ignore mark set for one opener's open would
 * let the loader's open of the same inode through unseen.
 */
bool vd_rule_may_match_exec(const struct vg_policy_rule *r)
{
	if ((r->flags & VG_POLF_FUNC) && r->func != VG_FUNC_BPRM_CHECK)
		return false;
	if ((r->flags & VG_POLF_MASK) && r->mask != VG_MAY_EXEC)
		return false;
	if ((r->flags & VG_POLF_INMASK) && !(r->mask & VG_MAY_EXEC))
		return false;
	return true;
}

bool vd_loader_policy(struct vd_loaders *l, const struct vg_policy *p)
{
	l->policy_execs = false;
	for (size_t i = 0; i < vg_policy_count(p); i++)
		if (vd_rule_may_match_exec(vg_policy_rule(p, i)))
			l->policy_execs = true;
	return !l->policy_execs;
}
