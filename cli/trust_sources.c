// SPDX-License-Identifier: MIT
/*
 * trust_sources.c - where `vigil trust build` gets its packages and their
 * .debs (trust_build.h): the installed ones from dpkg-query, every
 * NAME_VERSION_ARCH.deb of a directory, or apt-get download into a
 * temporary directory it makes and removes. Programs run by fork and
 * exec, never a shell.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "trust_build.h"

void trust_target_free(struct target *t)
{
	free(t->name);
	free(t->version);
	free(t->arch);
	free(t->deb);
}

int trust_add_target(struct build *b, const char *name, const char *version, const char *arch,
		      const char *deb)
{
	struct target *t;

	if (b->nt == b->tcap) {
		size_t ncap = b->tcap ? b->tcap * 2 : 256;
		struct target *n = realloc(b->t, ncap * sizeof(*n));

		if (!n)
			return -1;
		b->t = n;
		b->tcap = ncap;
	}
	t = &b->t[b->nt];
	t->name = strdup(name);
	t->version = strdup(version);
	t->arch = strdup(arch);
	t->deb = deb ? strdup(deb) : NULL;
	t->given = false;
	if (!t->name || !t->version || !t->arch || (deb && !t->deb)) {
		trust_target_free(t);
		return -1;
	}
	b->nt++;
	return 0;
}

int trust_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in @dir accepted by @keep, sorted. Return: their count, or -1 (reported). */
ssize_t trust_list_dir(const char *dir, bool (*keep)(const char *name), char ***ret)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;

	if (!d) {
		cli_file_err(dir, "%s", strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (!keep(e->d_name))
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*nv));

			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n] = strdup(e->d_name);
		if (!v[n])
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), trust_cmp_str);
	*ret = v;
	return (ssize_t)n;
nomem:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	cli_err("out of memory");
	return -1;
}

void trust_free_names(char **v, ssize_t n)
{
	for (ssize_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

bool trust_ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), sl = strlen(suffix);

	return l >= sl && strcmp(s + l - sl, suffix) == 0;
}

static bool is_deb(const char *name)
{
	return name[0] != '.' && trust_ends_with(name, ".deb");
}

char *trust_join(const char *dir, const char *name)
{
	char *p = NULL;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Run @argv (stdout into *@out if not NULL, else /dev/null) in @cwd. Return: exit status or -1. */
int trust_run(char *const argv[], const char *cwd, char **out, size_t *outlen)
{
	int pfd[2] = { -1, -1 }, status = 0;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if ((cwd && chdir(cwd) < 0) || null < 0 || dup2(null, 0) < 0 ||
		    dup2(out ? pfd[1] : null, 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!nb)
				break;
			buf = nb;
		}
		r = read(pfd[0], buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (buf)
		buf[n] = '\0';
	if (out) {
		*out = buf;
		*outlen = n;
	} else {
		free(buf);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* @name (NAME or NAME:ARCH) among @want? (none given: everything is) */
static bool wanted(char **want, int nwant, const char *name, const char *arch)
{
	if (nwant == 0)
		return true;
	for (int i = 0; i < nwant; i++) {
		const char *c = strchr(want[i], ':');
		size_t l = c ? (size_t)(c - want[i]) : strlen(want[i]);

		if (strlen(name) == l && strncmp(want[i], name, l) == 0 &&
		    (!c || strcmp(c + 1, arch) == 0))
			return true;
	}
	return false;
}

/* The installed packages (dpkg-query), those of @want if any. */
int trust_installed(struct build *b, char **want, int nwant)
{
	char *const argv[] = { (char *)"dpkg-query", (char *)"-W",
			       (char *)"-f=${db:Status-Abbrev}\t${Package}\t${Version}\t${Architecture}\n",
			       NULL };
	char *out = NULL, *line, *save = NULL;
	size_t len = 0;
	int st = trust_run(argv, NULL, &out, &len);

	if (st != 0 || !out) {
		cli_err("dpkg-query -W failed (exit %d): cannot list the installed packages", st);
		free(out);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4], *p = line;

		for (int i = 0; i < 4; i++) {
			f[i] = strsep(&p, "\t");
			if (!f[i])
				break;
		}
		if (!f[3] || strlen(f[0]) < 2 || f[0][1] != 'i' || !wanted(want, nwant, f[1], f[3]))
			continue;
		/* named by --local-deb: that file vouches for it, not the archive */
		if (trust_local_names(b, f[1], f[2], f[3]))
			continue;
		if (trust_add_target(b, f[1], f[2], f[3], NULL) < 0) {
			free(out);
			cli_err("out of memory");
			return -1;
		}
	}
	free(out);
	for (int i = 0; i < nwant; i++) {
		bool found = false;

		for (size_t j = 0; j < b->nt && !found; j++)
			found = wanted(&want[i], 1, b->t[j].name, b->t[j].arch);
		if (!found) {
			cli_err("%s: not installed (give --all-debs to record .debs that are not)",
				want[i]);
			return -1;
		}
	}
	return 0;
}

/* "%3a" -> ':' in place (apt's cache names an epoch so) */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '%' && r[1] && r[2] && vg_hex_digit(r[1]) >= 0 &&
		    vg_hex_digit(r[2]) >= 0) {
			*w++ = (char)(vg_hex_digit(r[1]) << 4 | vg_hex_digit(r[2]));
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* --all-debs: every NAME_VERSION_ARCH.deb of b->debs (of @want if any). */
int trust_all_debs(struct build *b, char **want, int nwant)
{
	char **names = NULL;
	ssize_t n = trust_list_dir(b->debs, is_deb, &names);

	if (n < 0)
		return -1;
	for (ssize_t i = 0; i < n; i++) {
		char *s = strdup(names[i]), *u1, *u2;

		if (!s) {
			trust_free_names(names, n);
			cli_err("out of memory");
			return -1;
		}
		s[strlen(s) - 4] = '\0';
		u1 = strchr(s, '_');
		u2 = strrchr(s, '_');
		if (!u1 || u1 == u2) {
			cli_file_err(names[i], "not named NAME_VERSION_ARCH.deb; skipped");
			free(s);
			continue;
		}
		*u1 = *u2 = '\0';
		unescape(u1 + 1);
		if (wanted(want, nwant, s, u2 + 1) && trust_add_target(b, s, u1 + 1, u2 + 1, names[i]) < 0) {
			free(s);
			trust_free_names(names, n);
			cli_err("out of memory");
			return -1;
		}
		free(s);
	}
	trust_free_names(names, n);
	return 0;
}

/*
 * Whether apt's sandbox user @pw can read, write and enter @dir (its
 * ancestors included): apt downloads as root, saying so, when it cannot.
 * Asked of the kernel by a child that becomes that user.
 */
static bool sandbox_reaches(const struct passwd *pw, const char *dir)
{
	int st = 0;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		if (setgroups(1, &pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
		    setuid(pw->pw_uid) < 0)
			_exit(2);
		_exit(access(dir, R_OK | W_OK | X_OK) == 0 ? 0 : 1);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/*
 * --download: one apt-get download of every target a verified list has,
 * into a new directory apt's sandbox user (_apt) owns, so that apt
 * downloads as that user; the versions no list has are not asked for
 * (record() names them, superseded or unlisted). Return: the directory,
 * or NULL (said).
 */
char *trust_download(struct build *b)
{
	const char *tmp = getenv("TMPDIR");
	const struct passwd *pw = getpwnam("_apt");
	char *dir = NULL;
	char **argv = calloc(b->nt + 4, sizeof(*argv));
	size_t n = 0;

	if (!argv || asprintf(&dir, "%s/vigil-trust-debs.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		free(argv);
		cli_err("out of memory");
		return NULL;
	}
	if (!mkdtemp(dir)) {
		cli_file_err(dir, "%s", strerror(errno));
		free(dir);
		free(argv);
		return NULL;
	}
	/* apt fetches as its sandbox user: it must own where the files go */
	if (pw && (chown(dir, pw->pw_uid, 0) < 0 || chmod(dir, 0700) < 0))
		cli_file_err(dir, "cannot give it to %s: %s", pw->pw_name, strerror(errno));
	else if (pw && !sandbox_reaches(pw, dir))
		cli_file_err(dir, "apt's user %s cannot reach it (a directory above is closed to it): "
			     "apt downloads as root (set TMPDIR to a directory it can reach)",
			     pw->pw_name);
	argv[n++] = (char *)"apt-get";
	argv[n++] = (char *)"download";
	argv[n++] = (char *)"-q";
	for (size_t i = 0; i < b->nt; i++) {
		char *a = NULL;

		/* only what a verified list has: apt-get stops at the first version it lacks */
		if (!vg_trust_packages_find(&b->pk, b->t[i].name, b->t[i].version, b->t[i].arch, NULL))
			continue;
		if (asprintf(&a, "%s:%s=%s", b->t[i].name, b->t[i].arch, b->t[i].version) < 0)
			break;
		argv[n++] = a;
	}
	b->downloaded = true;
	b->fetched = n - 3;
	atomic_init(&b->dldone, 1);
	/* it runs while the .debs it has fetched are read (record_all waits for each) */
	if (n > 3) {
		pid_t pid = fork();

		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);

			if (chdir(dir) < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
				_exit(127);
			execvp(argv[0], argv);
			_exit(127);
		}
		if (pid < 0) {
			cli_err("cannot run apt-get download: %s", strerror(errno));
		} else {
			b->dlpid = pid;
			atomic_store(&b->dldone, 0);
		}
	}
	for (size_t i = 3; i < n; i++)
		free(argv[i]);
	free(argv);
	return dir;
}

char *trust_apt_deb_name(const struct build *b, const struct target *t, const char *arch)
{
	char *ver = malloc(strlen(t->version) * 3 + 1), *w = ver, *p = NULL;

	if (!ver)
		return NULL;
	for (const char *r = t->version; *r; r++) {
		if (*r == ':') {
			memcpy(w, "%3a", 3);
			w += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	if (asprintf(&p, "%s/%s_%s_%s.deb", b->debs, t->name, ver, arch) < 0)
		p = NULL;
	free(ver);
	return p;
}

/* remove what apt-get download put in @dir, then @dir */
void trust_remove_download(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	if (rmdir(dir) < 0)
		cli_file_err(dir, "cannot remove: %s", strerror(errno));
}
