// SPDX-License-Identifier: MIT
/*
 * trust_root.c - the path a trust database records for a file, from the
 * kernel's name of it (/proc/self/fd/N, fanotify's descriptor): a root
 * prefix cut off (a tree extracted with dpkg-deb -x, a container or a
 * chroot on the host: ROOT/usr/bin/x is /usr/bin/x), and on a merged-/usr
 * root (ROOT/bin a link to usr/bin; sbin, lib, lib32, lib64, libx32
 * likewise) the other name a package may ship the file under: the walk
 * and the kernel say /usr/bin/x, bookworm's packages still ship /bin/x.
 * Used by `vigil label --trusted` and vigild's trust=archive. Reads two
 * things only: realpath() of the root and readlink() of its merged
 * directories; never opens a file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vigil/trust.h"

static const char *const merged[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };

int vg_trust_root_init(struct vg_trust_root *tr, const char *root, struct vg_diag *diag)
{
	char want[32], got[32];

	memset(tr, 0, sizeof(*tr));
	tr->root = realpath(root ? root : "/", NULL);
	if (!tr->root)
		return vg_diag_set(diag, -errno, "%s: %s", root ? root : "/", strerror(errno));
	tr->rootlen = strcmp(tr->root, "/") == 0 ? 0 : strlen(tr->root);
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++) {
		char link[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", tr->rootlen ? tr->root : "", merged[i]);
		n = readlink(link, got, sizeof(got) - 1);
		if (n <= 0)
			continue;
		got[n] = '\0';
		snprintf(want, sizeof(want), "usr/%s", merged[i]);
		if (strcmp(got, want) == 0 || (got[0] == '/' && strcmp(got + 1, want) == 0))
			tr->merged |= 1u << i;
	}
	return 0;
}

const char *vg_trust_root_path(const struct vg_trust_root *tr, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || name[0] != '/')
		return NULL;
	/* unlinked since it was opened: it is at no path the database could name */
	if (n > 10 && strcmp(name + n - 10, " (deleted)") == 0)
		return NULL;
	if (!tr->rootlen)
		return name;
	if (strncmp(name, tr->root, tr->rootlen) != 0 || name[tr->rootlen] != '/')
		return NULL;
	return name + tr->rootlen;
}

const char *vg_trust_root_alias(const struct vg_trust_root *tr, const char *path)
{
	if (!path || strncmp(path, "/usr/", 5) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++) {
		size_t n = strlen(merged[i]);

		if ((tr->merged & (1u << i)) && strncmp(path + 5, merged[i], n) == 0 &&
		    path[5 + n] == '/')
			return path + 4;
	}
	return NULL;
}

void vg_trust_root_release(struct vg_trust_root *tr)
{
	free(tr->root);
	memset(tr, 0, sizeof(*tr));
}
