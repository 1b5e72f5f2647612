/* SPDX-License-Identifier: MIT */
/*
 * trust_paths.h - a set of paths for `vigil trust verify --unpackaged`
 * (trust_paths.c): the paths the database records, and those dpkg lists
 * (ROOT/var/lib/dpkg/info/PKG.list), each also under /usr when the root
 * has a merged /usr (/bin -> usr/bin: a package's /bin/ls is /usr/bin/ls).
 */
#ifndef VIGIL_CLI_TRUST_PATHS_H
#define VIGIL_CLI_TRUST_PATHS_H

#include <stdbool.h>
#include <stddef.h>

struct trust_pathset {
	char **slot;		/* open addressing, FNV-1a; NULL empty */
	size_t cap, n;
	int rootfd;		/* where /bin, /sbin, /lib... are looked at */
	unsigned int merged;	/* bit i: tops[i] is a link into /usr (trust_paths.c) */
};

/* Return: 0, or -ENOMEM. */
int trust_pathset_init(struct trust_pathset *s, int rootfd);
/* Add @path (and its /usr alias). Return: 0, or -ENOMEM. */
int trust_pathset_add(struct trust_pathset *s, const char *path);
bool trust_pathset_has(const struct trust_pathset *s, const char *path);
/* Every path of ROOT/var/lib/dpkg/info/\*.list (none: no dpkg database). Return: 0, -ENOMEM. */
int trust_pathset_add_dpkg(struct trust_pathset *s);
void trust_pathset_release(struct trust_pathset *s);

#endif
