// SPDX-License-Identifier: MIT
/*
 * trust_apt.c - the repositories apt is configured with, each with its
 * own keys (trust_build.h: trust_apt_releases). `apt-get indextargets`
 * names every Packages list apt keeps (its file in the lists directory)
 * and the sources entry it comes from ("FILE:N": a stanza of a deb822
 * .sources file, a line of a one-line .list); that entry's Signed-By
 * (signed-by=) gives the source's keyrings and fingerprints, or a key
 * block of its own; without one, apt's trusted keyrings
 * (Dir::Etc::Trusted, Dir::Etc::TrustedParts: `apt-config shell`) are the
 * source's, as apt uses them. The InRelease of a list is the lists
 * directory's file apt names after the same URI (the list's name without
 * its MetaKey, then "InRelease"). Programs run by fork and exec, never a
 * shell; sources files are read, never executed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "trust_build.h"

/* a sources file: a few KiB */
#define SOURCES_MAX ((size_t)1 << 20)

static int nomem(void)
{
	cli_err("out of memory");
	return -1;
}

static int push(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strndup(s, len);
	if (!nv[*n])
		return -1;
	(*n)++;
	return 0;
}

/* apt's trusted keyrings: Dir::Etc::Trusted and TrustedParts' *.gpg, *.asc. Return: 0, -1 (said). */
static int trusted_parts(struct build *b)
{
	char *const argv[] = { (char *)"apt-config", (char *)"shell", (char *)"T",
			       (char *)"Dir::Etc::Trusted/f", (char *)"D",
			       (char *)"Dir::Etc::TrustedParts/d", NULL };
	char *out = NULL, *save = NULL, *t = NULL, *d = NULL;
	size_t len = 0;
	int st;

	if (b->trusted_loaded)
		return 0;
	b->trusted_loaded = true;
	st = trust_run(argv, NULL, &out, &len);
	if (st != 0 || !out) {
		free(out);
		cli_err("apt-config shell failed (exit %d): cannot find apt's trusted keyrings", st);
		return -1;
	}
	/* T='/etc/apt/trusted.gpg' D='/etc/apt/trusted.gpg.d/' */
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(l);

		if (n < 4 || l[1] != '=' || l[2] != '\'' || l[n - 1] != '\'')
			continue;
		l[n - 1] = '\0';
		if (l[0] == 'T')
			t = l + 3;
		else if (l[0] == 'D')
			d = l + 3;
	}
	if (t && access(t, R_OK) == 0 && push(&b->trusted, &b->ntrusted, t, strlen(t)) < 0)
		goto nomem;
	if (d) {
		char **names = NULL;
		DIR *dd = opendir(d);
		struct dirent *e;
		size_t nn = 0;

		while (dd && (e = readdir(dd))) {
			if (e->d_name[0] == '.' || (!trust_ends_with(e->d_name, ".gpg") &&
						    !trust_ends_with(e->d_name, ".asc")))
				continue;
			if (push(&names, &nn, e->d_name, strlen(e->d_name)) < 0) {
				closedir(dd);
				trust_free_names(names, (ssize_t)nn);
				goto nomem;
			}
		}
		if (dd)
			closedir(dd);
		if (nn)
			qsort(names, nn, sizeof(*names), trust_cmp_str);
		for (size_t i = 0; i < nn; i++) {
			char *p = NULL;

			if (asprintf(&p, "%s%s%s", d, d[strlen(d) - 1] == '/' ? "" : "/", names[i]) < 0 ||
			    push(&b->trusted, &b->ntrusted, p, strlen(p)) < 0) {
				free(p);
				trust_free_names(names, (ssize_t)nn);
				goto nomem;
			}
			free(p);
		}
		trust_free_names(names, (ssize_t)nn);
	}
	free(out);
	return 0;
nomem:
	free(out);
	return nomem();
}

/*
 * The Signed-By value @v into @r: each absolute path a keyring, any other
 * word a fingerprint; an armored key block the source's own keyring (a
 * memfd). Return: 0, -1 (said).
 */
static int signed_by(struct release *r, const char *v)
{
	const char *p = v;

	if (strstr(v, "-----BEGIN PGP PUBLIC KEY BLOCK-----")) {
		int fd = memfd_create("vigil-signed-by", MFD_CLOEXEC);
		char path[32];

		if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v)) {
			if (fd >= 0)
				close(fd);
			cli_err("%s: its Signed-By key block: %s", r->entry, strerror(errno));
			return -1;
		}
		r->keyfd = fd;
		snprintf(path, sizeof(path), "/dev/fd/%d", fd);
		return push(&r->keyrings, &r->nkr, path, strlen(path)) < 0 ? nomem() : 0;
	}
	while (*p) {
		size_t n;

		p += strspn(p, " \t\n,");
		n = strcspn(p, " \t\n,");
		if (!n)
			break;
		if (push(p[0] == '/' ? &r->keyrings : &r->fprs, p[0] == '/' ? &r->nkr : &r->nfpr, p,
			 n) < 0)
			return nomem();
		p += n;
	}
	return 0;
}

/* deb822 stanza @want of @text: its Signed-By (continuation lines joined, " ." an empty line) */
static char *deb822_signed_by(const char *text, unsigned long want)
{
	unsigned long stanza = 0;
	bool in = false, grab = false;
	char *val = NULL;
	size_t vl = 0;
	FILE *f = NULL;

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l && p[0] == '#') {
			;	/* a comment, inside a stanza or not */
		} else if (l == 0 || strspn(p, " \t") == l) {
			in = grab = false;
		} else if (p[0] == ' ' || p[0] == '\t') {
			if (grab) {
				const char *c = p + strspn(p, " \t");
				size_t cl = l - (size_t)(c - p);

				fputc('\n', f);
				if (!(cl == 1 && c[0] == '.'))
					fwrite(c, 1, cl, f);
			}
		} else {
			if (!in) {
				in = true;
				stanza++;
			}
			grab = false;
			if (stanza == want && l >= 10 && strncasecmp(p, "Signed-By:", 10) == 0) {
				const char *c = p + 10 + strspn(p + 10, " \t");

				if (!f)
					f = open_memstream(&val, &vl);
				if (!f)
					return NULL;
				fwrite(c, 1, l - (size_t)(c - p), f);
				grab = true;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	if (f)
		fclose(f);
	return val;
}

/* line @want of a one-line sources file: its [signed-by=...] option, or NULL */
static char *oneline_signed_by(const char *text, unsigned long want)
{
	unsigned long n = 1;
	const char *p = text, *nl, *o, *e;

	while (n < want && p && (p = strchr(p, '\n')))
		p++, n++;
	if (!p)
		return NULL;
	nl = strchr(p, '\n');
	if (!nl)
		nl = p + strlen(p);
	o = memchr(p, '[', (size_t)(nl - p));
	e = o ? memchr(o, ']', (size_t)(nl - o)) : NULL;
	if (!e)
		return NULL;
	for (const char *q = o + 1; q < e;) {
		size_t l;

		q += strspn(q, " \t");
		l = strcspn(q, " \t]");
		if (l > 10 && strncasecmp(q, "signed-by=", 10) == 0)
			return strndup(q + 10, l - 10);
		q += l ? l : 1;
	}
	return NULL;
}

/* @r's keys from its sources entry ("FILE:N"). Return: 0, -1 (said). */
static int source_keys(struct build *b, struct release *r)
{
	char *colon = strrchr(r->entry, ':'), *end = NULL, *file, *v;
	uint8_t *text = NULL;
	size_t len = 0;
	unsigned long n = 0;
	int rc = 0;

	errno = 0;
	if (colon)
		n = strtoul(colon + 1, &end, 10);
	if (!colon || errno || *end || !n) {
		cli_err("apt names the sources entry \"%s\": not FILE:N", r->entry);
		return -1;
	}
	file = strndup(r->entry, (size_t)(colon - r->entry));
	if (!file)
		return nomem();
	rc = cli_read_file(file, SOURCES_MAX, &text, &len);
	if (rc < 0) {
		cli_read_err(file, rc, SOURCES_MAX);
		free(file);
		return -1;
	}
	text = realloc(text, len + 1);
	if (!text) {
		free(file);
		return nomem();
	}
	text[len] = '\0';
	v = trust_ends_with(file, ".sources") ? deb822_signed_by((char *)text, n) :
						 oneline_signed_by((char *)text, n);
	free(text);
	free(file);
	if (v) {
		rc = signed_by(r, v);
		free(v);
		if (rc < 0)
			return rc;
	}
	/* no keyring of its own: apt's trusted ones (restricted to the fingerprints, if any) */
	if (!r->nkr) {
		if (trusted_parts(b) < 0)
			return -1;
		for (size_t i = 0; i < b->ntrusted; i++)
			if (push(&r->keyrings, &r->nkr, b->trusted[i], strlen(b->trusted[i])) < 0)
				return nomem();
		if (!r->nkr) {
			cli_err("%s: no Signed-By, and apt has no trusted keyring", r->entry);
			return -1;
		}
	}
	if (r->nkr > VG_TRUST_MAX_KEYRINGS) {
		cli_err("%s: %zu keyrings (at most %d)", r->entry, r->nkr, VG_TRUST_MAX_KEYRINGS);
		return -1;
	}
	return 0;
}

static const char *const compressions[] = { ".lz4", ".gz", ".xz", ".bz2", ".zst", ".lzma" };

/* the list @file's InRelease: its name without the escaped @metakey (and compression), then "InRelease" */
static char *inrelease_of(const char *file, const char *metakey)
{
	char *s = strdup(file), *key = strdup(metakey), *out = NULL;
	size_t sl, kl;

	if (!s || !key)
		goto out;
	for (char *c = key; *c; c++)
		if (*c == '/')
			*c = '_';
	sl = strlen(s);
	for (size_t i = 0; i < sizeof(compressions) / sizeof(compressions[0]); i++)
		if (trust_ends_with(s, compressions[i])) {
			sl -= strlen(compressions[i]);
			s[sl] = '\0';
			break;
		}
	kl = strlen(key);
	if (sl > kl && strcmp(s + sl - kl, key) == 0) {
		s[sl - kl] = '\0';
		if (asprintf(&out, "%sInRelease", s) < 0)
			out = NULL;
	}
out:
	free(s);
	free(key);
	return out;
}

int trust_apt_releases(struct build *b)
{
	char *const argv[] = { (char *)"apt-get", (char *)"indextargets", (char *)"--format",
			       (char *)"$(FILENAME)\t$(SOURCESENTRY)\t$(METAKEY)\t$(IDENTIFIER)\t"
				       "$(TARGET_OF)",
			       NULL };
	char *out = NULL, *save = NULL;
	size_t len = 0;
	int st = trust_run(argv, NULL, &out, &len);

	if (st != 0 || !out) {
		free(out);
		cli_err("apt-get indextargets failed (exit %d): cannot list apt's repositories "
			"(give --lists and --keyring)", st);
		return -1;
	}
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *f[5], *p = l, *in;
		struct release *r = NULL;
		int i;

		for (i = 0; i < 5 && (f[i] = strsep(&p, "\t")); i++)
			;
		if (i < 5 || strcmp(f[3], "Packages") != 0 || strcmp(f[4], "deb") != 0)
			continue;
		if (access(f[0], R_OK) != 0) {
			cli_file_err(f[0], "%s (apt-get update?); its packages are not verified",
				     strerror(errno));
			continue;
		}
		in = inrelease_of(f[0], f[2]);
		if (!in) {
			cli_file_err(f[0], "not named after its MetaKey %s; not used", f[2]);
			continue;
		}
		for (size_t k = 0; k < b->nrels && !r; k++)
			if (strcmp(b->rels[k].file, in) == 0)
				r = &b->rels[k];
		if (r) {
			free(in);
		} else {
			if (trust_release_add(b, in) < 0) {
				free(in);
				free(out);
				return nomem();
			}
			r = &b->rels[b->nrels - 1];
			r->entry = strdup(f[1]);
			if (!r->entry || source_keys(b, r) < 0) {
				free(out);
				return r->entry ? -1 : nomem();
			}
		}
		if (push(&r->lists, &r->nlists, f[0], strlen(f[0])) < 0) {
			free(out);
			return nomem();
		}
	}
	free(out);
	if (!b->nrels && b->nlocal)
		return -1;	/* only --local-deb packages: said by trust_load_releases' caller */
	if (!b->nrels) {
		cli_err("apt names no Packages list of a deb source (apt-get update?): "
			"nothing to build from");
		return -1;
	}
	return 0;
}
