// SPDX-License-Identifier: MIT
/*
 * trust_paths.c - the path sets of `vigil trust verify --unpackaged`
 * (trust_paths.h): open addressing with FNV-1a, paths owned by the set;
 * dpkg's file lists read under the root (openat, no link followed at
 * the last component), bounded like every whole-file read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "trust_paths.h"
#include "vigil/fileio.h"

static const char *const tops[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

/* ROOT/top is a link to usr/top (or /usr/top) */
static bool merged(int rootfd, const char *top)
{
	char buf[64];
	ssize_t n = readlinkat(rootfd, top + 1, buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return (strncmp(buf, "usr/", 4) == 0 || strncmp(buf, "/usr/", 5) == 0) &&
	       strcmp(buf + (buf[0] == '/' ? 5 : 4), top + 1) == 0;
}

int trust_pathset_init(struct trust_pathset *s, int rootfd)
{
	memset(s, 0, sizeof(*s));
	s->rootfd = rootfd;
	s->cap = 1024;
	s->slot = calloc(s->cap, sizeof(*s->slot));
	if (!s->slot)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (merged(rootfd, tops[i]))
			s->merged |= 1u << i;
	return 0;
}

void trust_pathset_release(struct trust_pathset *s)
{
	for (size_t i = 0; s->slot && i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

bool trust_pathset_has(const struct trust_pathset *s, const char *path)
{
	if (!s->slot)
		return false;
	for (size_t i = fnv(path) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i])
			return false;
		if (strcmp(s->slot[i], path) == 0)
			return true;
	}
}

/* @path (taken over) into @s. Return: 0, or -ENOMEM. */
static int put(struct trust_pathset *s, char *path)
{
	size_t i;

	if (trust_pathset_has(s, path)) {
		free(path);
		return 0;
	}
	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap * 2;
		char **n = calloc(ncap, sizeof(*n));

		if (!n) {
			free(path);
			return -ENOMEM;
		}
		for (size_t k = 0; k < s->cap; k++) {
			if (!s->slot[k])
				continue;
			for (i = fnv(s->slot[k]) & (ncap - 1); n[i]; i = (i + 1) & (ncap - 1))
				;
			n[i] = s->slot[k];
		}
		free(s->slot);
		s->slot = n;
		s->cap = ncap;
	}
	for (i = fnv(path) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		;
	s->slot[i] = path;
	s->n++;
	return 0;
}

int trust_pathset_add(struct trust_pathset *s, const char *path)
{
	char *p = strdup(path);

	if (!p || put(s, p) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		size_t l = strlen(tops[i]);

		if ((s->merged & (1u << i)) && strncmp(path, tops[i], l) == 0 && path[l] == '/') {
			if (asprintf(&p, "/usr%s", path) < 0)
				return -ENOMEM;
			if (put(s, p) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int trust_pathset_add_dpkg(struct trust_pathset *s)
{
	int dfd = openat(s->rootfd, "var/lib/dpkg/info", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (r == 0 && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		uint8_t *buf = NULL;
		size_t len = 0;
		char *save = NULL;
		int fd;

		if (l < 6 || strcmp(e->d_name + l - 5, ".list") != 0)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (vg_fd_read_file(fd, CLI_DOC_MAX, &buf, &len) == 0) {
			for (char *p = strtok_r((char *)buf, "\n", &save); p && r == 0;
			     p = strtok_r(NULL, "\n", &save))
				if (p[0] == '/')
					r = trust_pathset_add(s, p);
			free(buf);
		}
		close(fd);
	}
	closedir(d);
	return r;
}
