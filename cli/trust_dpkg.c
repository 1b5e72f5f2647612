// SPDX-License-Identifier: MIT
/*
 * trust_dpkg.c - dpkg's state beyond the packages' contents, read under a
 * root (trust_dpkg.h): diversions, statoverrides, the alternatives'
 * links, path-exclude and path-include, and the root's users and groups.
 * Every file is opened with openat2(RESOLVE_IN_ROOT) and read whole with
 * a bound; the formats are dpkg's (diversions: three lines a record;
 * statoverride: "USER GROUP MODE PATH"; alternatives/NAME: status, link,
 * slaves, a blank line, then each choice with its priority and slave
 * paths) and the passwd(5)/group(5) lines. Names are looked up in the
 * root's files, never through NSS: the root may be another system's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "trust_dpkg.h"
#include "vigil/fileio.h"

#define ALTDIR "/etc/alternatives/"

int trust_open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	struct stat r, s;
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

	/*
	 * openat2 answered ENOSYS by a seccomp filter (systemd's
	 * RestrictSUIDSGID=, which vigil-scan.service has, cannot see the mode
	 * in struct open_how): when the root is the system's own, a link
	 * resolves the same either way, so openat does; any other root needs
	 * RESOLVE_IN_ROOT, and the error stays
	 */
	if (fd < 0 && errno == ENOSYS && fstat(rootfd, &r) == 0 && stat("/", &s) == 0 &&
	    r.st_dev == s.st_dev && r.st_ino == s.st_ino)
		fd = openat(rootfd, path[0] == '/' ? path + 1 : path, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd;
}

/* ROOT@path read whole (NUL-terminated). Return: 1 read, 0 absent, -1 (said). */
static int read_in_root(int rootfd, const char *path, size_t max, char **ret)
{
	int fd = trust_open_in_root(rootfd, path, O_RDONLY | O_NONBLOCK);
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : (cli_file_err(path, "%s",
									 strerror(errno)), -1);
	r = vg_fd_read_file(fd, max, &buf, &len);
	close(fd);
	if (r < 0) {
		cli_file_err(path, "%s", r == -EFBIG ? "too large" : strerror(-r));
		return -1;
	}
	*ret = (char *)buf;
	return 1;
}

static int nomem(void)
{
	cli_err("out of memory");
	return -1;
}

static int load_diversions(struct trust_dpkg *d)
{
	char *buf = NULL, *lines[3], *save = NULL, *p;
	size_t cap = 0;
	int r = read_in_root(d->rootfd, "/var/lib/dpkg/diversions", CLI_DOC_MAX, &buf);

	if (r <= 0)
		return r;
	p = strtok_r(buf, "\n", &save);
	while (p) {
		int i;

		for (i = 0; i < 3 && p; i++, p = strtok_r(NULL, "\n", &save))
			lines[i] = p;
		if (i < 3)
			break;
		if (d->ndiv == cap) {
			struct trust_diversion *n = realloc(d->div, (cap = cap ? cap * 2 : 32) * sizeof(*n));

			if (!n)
				goto nomem;
			d->div = n;
		}
		d->div[d->ndiv] = (struct trust_diversion){ strdup(lines[0]), strdup(lines[1]),
							    strdup(lines[2]) };
		d->ndiv++;
		if (!d->div[d->ndiv - 1].from || !d->div[d->ndiv - 1].to || !d->div[d->ndiv - 1].by)
			goto nomem;
	}
	free(buf);
	return 0;
nomem:
	free(buf);
	return nomem();
}

/* path-exclude / path-include lines of one dpkg configuration file */
static int load_excludes_from(struct trust_dpkg *d, char *buf)
{
	char *save = NULL;

	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		bool ex = strncmp(l, "path-exclude", 12) == 0, in = strncmp(l, "path-include", 12) == 0;
		char *pat = l + 12, *e, **n;

		if (!ex && !in)
			continue;
		while (*pat == ' ' || *pat == '=' || *pat == '\t')
			pat++;
		e = pat + strcspn(pat, " \t\r");
		*e = '\0';
		n = realloc(d->excl, (d->nexcl + 1) * sizeof(*n));
		if (!n)
			return nomem();
		d->excl = n;
		if (asprintf(&n[d->nexcl], "%c%s", ex ? '-' : '+', pat) < 0)
			return nomem();
		d->nexcl++;
	}
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in ROOT@dir (no dot files), sorted. Return: their count, -1 (said). */
static ssize_t list_in_root(int rootfd, const char *dir, char ***ret, int *ret_dfd)
{
	int dfd = trust_open_in_root(rootfd, dir, O_RDONLY | O_DIRECTORY);
	DIR *dd = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	*ret = NULL;
	*ret_dfd = -1;
	if (!dd) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while ((e = readdir(dd))) {
		char **nn;

		if (e->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn || !(nn[n] = strdup(e->d_name))) {
			names = nn ? nn : names;
			for (size_t i = 0; i < n; i++)
				free(names[i]);
			free(names);
			closedir(dd);
			return nomem();
		}
		names = nn;
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	*ret_dfd = dup(dirfd(dd));
	closedir(dd);
	*ret = names;
	return (ssize_t)n;
}

static int load_excludes(struct trust_dpkg *d)
{
	char *buf = NULL, **names = NULL;
	int r = read_in_root(d->rootfd, "/etc/dpkg/dpkg.cfg", CLI_SMALL_MAX, &buf), dfd = -1;
	ssize_t n;

	if (r < 0)
		return r;
	if (r > 0) {
		r = load_excludes_from(d, buf);
		free(buf);
		if (r < 0)
			return r;
	}
	/* dpkg reads them in name order */
	n = list_in_root(d->rootfd, "/etc/dpkg/dpkg.cfg.d", &names, &dfd);
	if (n < 0)
		return -1;
	for (ssize_t i = 0; i < n; i++) {
		char path[512];

		snprintf(path, sizeof(path), "/etc/dpkg/dpkg.cfg.d/%s", names[i]);
		buf = NULL;
		if (r == 0 && read_in_root(d->rootfd, path, CLI_SMALL_MAX, &buf) > 0) {
			r = load_excludes_from(d, buf);
			free(buf);
		}
		free(names[i]);
	}
	free(names);
	if (dfd >= 0)
		close(dfd);
	return r;
}

/* "name:x:id:..." lines of passwd(5) or group(5) */
static int load_ids(struct trust_dpkg *d, const char *path, struct trust_idname **ret, size_t *ret_n)
{
	char *buf = NULL, *save = NULL;
	size_t n = 0;
	int r = read_in_root(d->rootfd, path, CLI_DOC_MAX, &buf);

	if (r <= 0)
		return r;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *name = l, *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *end;
		unsigned long id;
		struct trust_idname *nv;

		if (!c2 || l[0] == '+' || l[0] == '-' || l[0] == '#')
			continue;
		*c1 = '\0';
		errno = 0;
		id = strtoul(c2 + 1, &end, 10);
		if (errno || end == c2 + 1 || *end != ':' || id > UINT32_MAX)
			continue;
		nv = realloc(*ret, (n + 1) * sizeof(*nv));
		if (!nv || !(nv[n].name = strdup(name))) {
			if (nv)
				*ret = nv;
			*ret_n = n;
			free(buf);
			return nomem();
		}
		nv[n].id = (uint32_t)id;
		*ret = nv;
		n++;
	}
	*ret_n = n;
	free(buf);
	return 0;
}

static bool id_of(const struct trust_idname *v, size_t n, const char *name, uint32_t *ret)
{
	/* the first line wins, as getpwnam's files backend */
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0) {
			*ret = v[i].id;
			return true;
		}
	return false;
}

static const char *name_of(const struct trust_idname *v, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return v[i].name;
	return NULL;
}

bool trust_dpkg_uid(const struct trust_dpkg *d, const char *name, uint32_t *ret)
{
	return id_of(d->users, d->nusers, name, ret);
}

bool trust_dpkg_gid(const struct trust_dpkg *d, const char *name, uint32_t *ret)
{
	return id_of(d->groups, d->ngroups, name, ret);
}

const char *trust_dpkg_user(const struct trust_dpkg *d, uint32_t uid)
{
	return name_of(d->users, d->nusers, uid);
}

const char *trust_dpkg_group(const struct trust_dpkg *d, uint32_t gid)
{
	return name_of(d->groups, d->ngroups, gid);
}

static int cmp_so(const void *a, const void *b)
{
	return strcmp(((const struct trust_statoverride *)a)->path,
		      ((const struct trust_statoverride *)b)->path);
}

/* "#ID" or a name the root knows, as dpkg-statoverride writes them */
static bool resolve(const struct trust_dpkg *d, const char *s, bool user, uint32_t *ret)
{
	if (s[0] == '#') {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(s + 1, &end, 10);
		if (errno || end == s + 1 || *end || v > UINT32_MAX)
			return false;
		*ret = (uint32_t)v;
		return true;
	}
	return user ? trust_dpkg_uid(d, s, ret) : trust_dpkg_gid(d, s, ret);
}

static int load_statoverrides(struct trust_dpkg *d)
{
	static const char file[] = "/var/lib/dpkg/statoverride";
	char *buf = NULL, *save = NULL;
	size_t lineno = 0, cap = 0;
	int r = read_in_root(d->rootfd, file, CLI_DOC_MAX, &buf);

	if (r <= 0)
		return r;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *f[4], *p = l, *end;
		struct trust_statoverride *o;
		unsigned long mode;
		int i;

		lineno++;
		for (i = 0; i < 3; i++) {
			f[i] = strsep(&p, " ");
			if (!p)
				break;
		}
		f[3] = p;
		errno = 0;
		mode = i == 3 && f[3] && f[3][0] == '/' ? strtoul(f[2], &end, 8) : 0;
		if (i < 3 || !f[3] || f[3][0] != '/' || errno || end == f[2] || *end || mode > 07777) {
			cli_file_err(file, "line %zu is not \"USER GROUP MODE PATH\"", lineno);
			free(buf);
			return -1;
		}
		if (d->nso == cap) {
			struct trust_statoverride *n = realloc(d->so, (cap = cap ? 2 * cap : 16) * sizeof(*n));

			if (!n) {
				free(buf);
				return nomem();
			}
			d->so = n;
		}
		o = &d->so[d->nso];
		memset(o, 0, sizeof(*o));
		o->mode = (uint32_t)mode;
		if (!resolve(d, f[0], true, &o->uid) || !resolve(d, f[1], false, &o->gid)) {
			cli_file_err(file, "line %zu: %s %s unknown in the root's /etc/passwd or "
				     "/etc/group", lineno, f[0], f[1]);
			free(buf);
			return -1;
		}
		o->path = strdup(f[3]);
		o->user = strdup(f[0]);
		o->group = strdup(f[1]);
		d->nso++;
		if (!o->path || !o->user || !o->group) {
			free(buf);
			return nomem();
		}
	}
	free(buf);
	if (d->nso)
		qsort(d->so, d->nso, sizeof(*d->so), cmp_so);
	return 0;
}

const struct trust_statoverride *trust_dpkg_statoverride(const struct trust_dpkg *d,
							  const char *path)
{
	struct trust_statoverride key = { .path = (char *)path };

	return d->nso ? bsearch(&key, d->so, d->nso, sizeof(*d->so), cmp_so) : NULL;
}

static int cmp_alt(const void *a, const void *b)
{
	return strcmp(((const struct trust_altlink *)a)->path,
		      ((const struct trust_altlink *)b)->path);
}

static struct trust_altlink *add_link(struct trust_dpkg *d, size_t *cap, const char *path,
				      const char *name)
{
	struct trust_altlink *l;

	if (d->nalt == *cap) {
		struct trust_altlink *n = realloc(d->alt, (*cap = *cap ? 2 * *cap : 64) * sizeof(*n));

		if (!n)
			return NULL;
		d->alt = n;
	}
	l = &d->alt[d->nalt];
	memset(l, 0, sizeof(*l));
	l->path = strdup(path);
	l->name = strdup(name);
	d->nalt++;
	return l->path && l->name ? l : NULL;
}

static int add_choice(struct trust_altlink *l, const char *path)
{
	char **n;

	if (!*path)
		return 0;	/* a choice without this slave */
	n = realloc(l->choices, (l->nchoices + 1) * sizeof(*n));
	if (!n)
		return -1;
	l->choices = n;
	n[l->nchoices] = strdup(path);
	return n[l->nchoices++] ? 0 : -1;
}

/* ROOT/var/lib/dpkg/alternatives/@name (update-alternatives' format) */
static int load_alternative(struct trust_dpkg *d, const char *name, size_t *cap)
{
	char path[512], *buf = NULL, **ln = NULL;
	size_t n = 0, i, nslaves = 0, first;
	int r;

	snprintf(path, sizeof(path), "/var/lib/dpkg/alternatives/%s", name);
	r = read_in_root(d->rootfd, path, CLI_SMALL_MAX, &buf);
	if (r <= 0)
		return r;
	/* the lines, empty ones kept: they end the slaves and the file */
	for (char *p = buf; p && *p;) {
		char *nl = strchr(p, '\n'), **nv = realloc(ln, (n + 1) * sizeof(*nv));

		if (!nv) {
			free(ln);
			free(buf);
			return nomem();
		}
		ln = nv;
		if (nl)
			*nl = '\0';
		ln[n++] = p;
		p = nl ? nl + 1 : NULL;
	}
	r = 0;
	if (n < 3 || ln[1][0] != '/')
		goto out;	/* not one update-alternatives wrote: its links are not excused */
	first = d->nalt;
	if (!add_link(d, cap, ln[1], name)) {
		r = nomem();
		goto out;
	}
	for (i = 2; i + 1 < n && ln[i][0]; i += 2, nslaves++)
		if (!add_link(d, cap, ln[i + 1], ln[i])) {
			r = nomem();
			goto out;
		}
	/* the choices: path, priority, then one line per slave */
	for (i++; i + 1 < n && ln[i][0]; i += 2 + nslaves) {
		if (add_choice(&d->alt[first], ln[i]) < 0) {
			r = nomem();
			goto out;
		}
		for (size_t s = 0; s < nslaves && i + 2 + s < n; s++)
			if (add_choice(&d->alt[first + 1 + s], ln[i + 2 + s]) < 0) {
				r = nomem();
				goto out;
			}
	}
out:
	free(ln);
	free(buf);
	return r;
}

static int load_alternatives(struct trust_dpkg *d)
{
	char **names = NULL;
	int dfd = -1, r = 0;
	size_t cap = 0;
	ssize_t n = list_in_root(d->rootfd, "/var/lib/dpkg/alternatives", &names, &dfd);

	if (n < 0)
		return -1;
	for (ssize_t i = 0; i < n; i++) {
		if (r == 0)
			r = load_alternative(d, names[i], &cap);
		free(names[i]);
	}
	free(names);
	if (dfd >= 0)
		close(dfd);
	if (r == 0 && d->nalt)
		qsort(d->alt, d->nalt, sizeof(*d->alt), cmp_alt);
	return r;
}

int trust_dpkg_load(struct trust_dpkg *d, int rootfd)
{
	memset(d, 0, sizeof(*d));
	d->rootfd = rootfd;
	if (load_ids(d, "/etc/passwd", &d->users, &d->nusers) < 0 ||
	    load_ids(d, "/etc/group", &d->groups, &d->ngroups) < 0 || load_diversions(d) < 0 ||
	    load_excludes(d) < 0 || load_statoverrides(d) < 0 || load_alternatives(d) < 0)
		return -1;
	return 0;
}

static void free_ids(struct trust_idname *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

void trust_dpkg_release(struct trust_dpkg *d)
{
	for (size_t i = 0; i < d->ndiv; i++) {
		free(d->div[i].from);
		free(d->div[i].to);
		free(d->div[i].by);
	}
	free(d->div);
	for (size_t i = 0; i < d->nexcl; i++)
		free(d->excl[i]);
	free(d->excl);
	for (size_t i = 0; i < d->nso; i++) {
		free(d->so[i].path);
		free(d->so[i].user);
		free(d->so[i].group);
	}
	free(d->so);
	for (size_t i = 0; i < d->nalt; i++) {
		free(d->alt[i].path);
		free(d->alt[i].name);
		for (size_t c = 0; c < d->alt[i].nchoices; c++)
			free(d->alt[i].choices[c]);
		free(d->alt[i].choices);
	}
	free(d->alt);
	free_ids(d->users, d->nusers);
	free_ids(d->groups, d->ngroups);
	memset(d, 0, sizeof(*d));
	d->rootfd = -1;
}

const struct trust_diversion *trust_dpkg_diverted(const struct trust_dpkg *d, const char *path,
						   const char *pkg)
{
	for (size_t i = 0; i < d->ndiv; i++)
		if (strcmp(d->div[i].from, path) == 0 && strcmp(d->div[i].by, pkg) != 0)
			return &d->div[i];
	return NULL;
}

const struct trust_diversion *trust_dpkg_diverted_to(const struct trust_dpkg *d, const char *path)
{
	for (size_t i = 0; i < d->ndiv; i++)
		if (strcmp(d->div[i].to, path) == 0)
			return &d->div[i];
	return NULL;
}

bool trust_dpkg_excluded(const struct trust_dpkg *d, const char *path)
{
	bool ex = false;

	for (size_t i = 0; i < d->nexcl; i++)
		if (fnmatch(d->excl[i] + 1, path, 0) == 0)
			ex = d->excl[i][0] == '-';
	return ex;
}

/* the target of the link ROOT@path. Return: its length, -1 not a link (errno). */
static ssize_t link_in_root(int rootfd, const char *path, char *buf, size_t cap)
{
	int fd = trust_open_in_root(rootfd, path, O_PATH);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = readlinkat(fd, "", buf, cap - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int trust_dpkg_alternative(const struct trust_dpkg *d, const char *path, const char **ret_name,
			   char *why, size_t whylen)
{
	struct trust_altlink key = { .path = (char *)path }, *l;
	char t[4096], alt[4096 + sizeof(ALTDIR)];

	l = d->nalt ? bsearch(&key, d->alt, d->nalt, sizeof(*d->alt), cmp_alt) : NULL;
	if (!l)
		return 0;
	*ret_name = l->name;
	snprintf(alt, sizeof(alt), ALTDIR "%s", l->name);
	if (link_in_root(d->rootfd, path, t, sizeof(t)) < 0) {
		snprintf(why, whylen, "the link of alternative %s, but not a symbolic link", l->name);
		return -1;
	}
	if (strcmp(t, alt) != 0) {
		snprintf(why, whylen, "the link of alternative %s, but points to %s, not %s", l->name,
			 t, alt);
		return -1;
	}
	if (link_in_root(d->rootfd, alt, t, sizeof(t)) < 0) {
		snprintf(why, whylen, "alternative %s: %s is not a symbolic link", l->name, alt);
		return -1;
	}
	for (size_t i = 0; i < l->nchoices; i++)
		if (strcmp(t, l->choices[i]) == 0)
			return 1;
	snprintf(why, whylen, "alternative %s: %s points to %s, none of its registered choices",
		 l->name, alt, t);
	return -1;
}

unsigned int trust_dpkg_expected(const struct trust_dpkg *d, const char *path, uint32_t mode,
				 bool have_owner, const char *uname, const char *gname,
				 uint32_t uid, uint32_t gid, uint32_t *ret_mode,
				 uint32_t *ret_uid, uint32_t *ret_gid)
{
	const struct trust_statoverride *o = trust_dpkg_statoverride(d, path);

	if (o) {
		*ret_mode = o->mode;
		*ret_uid = o->uid;
		*ret_gid = o->gid;
		return TRUST_DPKG_OWNER | TRUST_DPKG_OVERRIDE;
	}
	*ret_mode = mode & 07777;
	if (!have_owner)
		return 0;
	/* dpkg's tar_entry_update_from_system: the name if the system has it, else the id */
	if (!uname || !trust_dpkg_uid(d, uname, ret_uid))
		*ret_uid = uid;
	if (!gname || !trust_dpkg_gid(d, gname, ret_gid))
		*ret_gid = gid;
	return TRUST_DPKG_OWNER;
}
