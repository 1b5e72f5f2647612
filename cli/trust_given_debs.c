// SPDX-License-Identifier: MIT
/*
 * trust_given_debs.c - `vigil trust build --deb FILE` and `--deb-list
 * FILE`: .debs named one by one (apt's DPkg::Pre-Install-Pkgs hook hands
 * them over, one path a line, with DPkg::Tools::Options::CMD::Version
 * "1"). Each becomes a build target: the package, version and
 * architecture of the verified Packages stanza whose SHA-256 and size are
 * the file's (nothing of the file is parsed to name it); a file no
 * verified stanza lists keeps the name its file name gives
 * (NAME_VERSION_ARCH.deb) and fails as --all-debs' would (`unlisted`,
 * or `chain` when that version is listed with another digest). record()
 * then reads it again and checks it against the stanza as for any .deb.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "trust_build.h"
#include "vigil/hash.h"

/* the longest --deb-list read (apt lists a few thousand paths at most) */
#define DEB_LIST_MAX ((size_t)16 << 20)

int trust_given_add(struct build *b, const char *path)
{
	char **n;

	if (!path[0]) {
		cli_err("--deb: an empty file name");
		return -1;
	}
	n = realloc(b->given, (b->ngiven + 1) * sizeof(*n));
	if (!n) {
		cli_err("out of memory");
		return -1;
	}
	b->given = n;
	b->given[b->ngiven] = strdup(path);
	if (!b->given[b->ngiven]) {
		cli_err("out of memory");
		return -1;
	}
	b->ngiven++;
	return 0;
}

int trust_given_list(struct build *b, const char *path)
{
	const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
	uint8_t *data = NULL;
	size_t len = 0, lineno = 0;
	char *p, *end;
	int r = cli_read_file(path, DEB_LIST_MAX, &data, &len);

	if (r < 0) {
		cli_read_err(name, r, DEB_LIST_MAX);
		return -1;
	}
	if (memchr(data, '\0', len)) {
		cli_file_err(name, "a NUL byte: not a list of .deb files");
		free(data);
		return -1;
	}
	p = (char *)data;
	end = p + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *line = p;
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		p = nl ? nl + 1 : end;
		if (l && line[l - 1] == '\r')
			l--;
		if (l == 0)
			continue;
		line[l] = '\0';
		if (l < 5 || strcmp(line + l - 4, ".deb") != 0) {
			cli_file_err(name, "line %zu: \"%s\" is not a .deb file name", lineno, line);
			free(data);
			return -1;
		}
		if (trust_given_add(b, line) < 0) {
			free(data);
			return -1;
		}
	}
	free(data);
	return 0;
}

/* the stanza whose SHA-256 and size are the file's, or NULL */
static const struct vg_trust_pkg *by_digest(const struct build *b, const struct vg_digest *dg,
					    uint64_t size)
{
	for (size_t i = 0; i < b->pk.n; i++)
		if (b->pk.pkgs[i].size == size && memcmp(b->pk.pkgs[i].sha256, dg->bytes, 32) == 0)
			return &b->pk.pkgs[i];
	return NULL;
}

static bool have_target(const struct build *b, const char *n, const char *v, const char *a)
{
	for (size_t i = 0; i < b->nt; i++)
		if (strcmp(b->t[i].name, n) == 0 && strcmp(b->t[i].version, v) == 0 &&
		    strcmp(b->t[i].arch, a) == 0)
			return true;
	return false;
}

/* NAME_VERSION_ARCH.deb of @path's last component ("%3a" as ':'); else the name, "?", "?" */
static int add_by_name(struct build *b, const char *path)
{
	const char *base = strrchr(path, '/');
	char *s = strdup(base ? base + 1 : path), *u1, *u2;
	int r;

	if (!s)
		return -1;
	s[strlen(s) - 4] = '\0';
	u1 = strchr(s, '_');
	u2 = strrchr(s, '_');
	if (u1 && u1 != u2) {
		char *w;

		*u1 = *u2 = '\0';
		w = u1 + 1;
		for (char *rd = u1 + 1; *rd; rd++) {
			if (strncmp(rd, "%3a", 3) == 0) {
				*w++ = ':';
				rd += 2;
			} else {
				*w++ = *rd;
			}
		}
		*w = '\0';
		r = trust_add_target(b, s, u1 + 1, u2 + 1, path);
	} else {
		r = trust_add_target(b, s, "?", "?", path);
	}
	free(s);
	if (r == 0)
		b->t[b->nt - 1].given = true;
	return r;
}

int trust_given_debs(struct build *b)
{
	struct vg_hasher *h = NULL;
	int rc = -1;

	if (vg_hasher_new(&h) < 0) {
		cli_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < b->ngiven; i++) {
		const char *path = b->given[i];
		const struct vg_trust_pkg *s = NULL;
		struct vg_digest dg = { 0 };
		struct vg_diag d = { 0 };
		struct stat st;
		uint64_t n = 0;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    vg_hasher_file(h, fd, &st, VG_HASH_SHA256, &dg, &n, &d) == 0)
			s = by_digest(b, &dg, n);
		if (fd >= 0)
			close(fd);
		if (s) {
			if (have_target(b, s->package, s->version, s->arch))
				continue;
			if (trust_add_target(b, s->package, s->version, s->arch, path) < 0) {
				cli_err("out of memory");
				goto out;
			}
			b->t[b->nt - 1].given = true;
			continue;
		}
		/* unreadable or unlisted: record() names the file and the reason */
		if (add_by_name(b, path) < 0) {
			cli_err("out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	vg_hasher_free(h);
	return rc;
}
