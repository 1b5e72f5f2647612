// SPDX-License-Identifier: MIT
/*
 * cmd_trust_verify.c - `vigil trust verify DB`: the installed files
 * against the digests a trust database recorded from the signed archive
 * (cmd_trust_build.c), as `dpkg --verify` against dpkg's MD5 sums: every
 * file of every current package is opened under --root (openat2
 * RESOLVE_IN_ROOT: a symbolic link in the tree cannot lead out of it)
 * and its content digested, or its link target read. Reported: modified,
 * missing; separately, with the package's digest and the disk's, changed
 * conffiles and files another package diverted (dpkg-divert); and with
 * --unpackaged the files under /usr/bin, /usr/sbin and /usr/lib that no
 * recorded package ships. Files that dpkg's path-exclude left out are not
 * missing. The database is authenticated before anything is compared.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_trust.h"
#include "opts.h"
#include "trust_paths.h"
#include "vigil/fileio.h"
#include "vigil/trust.h"

static const char help[] =
	"usage: vigil trust verify DB [--root DIR] [--unpackaged] [--hmac-key KEYFILE]\n"
	"                          [--json] [--verbose]\n"
	"\n"
	"Compare the files of the current packages of DB (vigil trust build) with the\n"
	"disk: each regular file's digest, each symbolic link's target. The database\n"
	"is authenticated first; an altered one, or another key, is refused.\n"
	"Reported: modified and missing files; separately, with the package's digest\n"
	"and the disk's, changed conffiles and files diverted by another package.\n"
	"Files dpkg's path-exclude (ROOT/etc/dpkg/dpkg.cfg.d) keeps out are not missing.\n"
	"  -r, --root DIR         the system's root (default /); links resolve inside it\n"
	"  -u, --unpackaged       also report files under /usr/bin, /usr/sbin, /usr/lib\n"
	"                         that no package of DB ships\n"
	"  -H, --hmac-key FILE    key (default: key.hmac of the configuration); any key file\n"
	CLI_HELP_KEYOPTS
	CLI_HELP_CONFIG
	"  -j, --json             one JSON document: summary, modified, missing,\n"
	"                         conffiles, diverted, unpackaged\n"
	"  -v, --verbose          also print each file that matches\n"
	"Exit status: 0 every file matches (changed conffiles and diversions are\n"
	"listed, not counted), 1 modified, missing or unpackaged files, 2 usage or\n"
	"operational error (an altered database included).\n";

struct diversion {
	char *from, *to, *by;
};

struct verify {
	int rootfd;
	const char *root;
	bool json, verbose;
	struct vg_hasher *h;
	struct diversion *div;
	size_t ndiv;
	char **excl;		/* "-GLOB" path-exclude, "+GLOB" path-include, in order */
	size_t nexcl;
	uint64_t ok, modified, missing, conf, diverted, excluded, unpackaged, errors;
	json_object *jmod, *jmiss, *jconf, *jdiv, *jun;
	/* --unpackaged: every recorded path, and every path dpkg lists */
	struct trust_pathset recorded, dpkg;
	bool unpack;
	uint64_t unverified, generated;
};

static int open_in_root(const struct verify *v, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, v->rootfd, path, &how, sizeof(how));
}

static void jadd(json_object *o, const char *k, json_object *val)
{
	json_object_object_add(o, k, val);
}

static json_object *jdigest(const struct vg_digest *dg)
{
	char hex[2 * VG_HASH_MAX_DIGEST + 1], *s = NULL;
	json_object *j;

	if (!dg)
		return NULL;
	vg_hex_encode(dg->bytes, dg->len, hex);
	if (asprintf(&s, "%s:%s", vg_hash_name(dg->algo), hex) < 0)
		return NULL;
	j = json_object_new_string(s);
	free(s);
	return j;
}

static void print_digest(const char *what, const struct vg_digest *dg)
{
	char hex[2 * VG_HASH_MAX_DIGEST + 1];

	if (!dg) {
		printf(" %s -", what);
		return;
	}
	vg_hex_encode(dg->bytes, dg->len, hex);
	printf(" %s %s:%s", what, vg_hash_name(dg->algo), hex);
}

/* ROOT/var/lib/dpkg/diversions: records of three lines (from, to, package) */
static int load_diversions(struct verify *v)
{
	int fd = open_in_root(v, "/var/lib/dpkg/diversions", O_RDONLY | O_NONBLOCK);
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	char *lines[3], *save = NULL, *p;
	int r;

	if (fd < 0)
		return 0;
	r = vg_fd_read_file(fd, CLI_DOC_MAX, &buf, &len);
	close(fd);
	if (r < 0) {
		cli_file_err("/var/lib/dpkg/diversions", "%s", strerror(-r));
		return -1;
	}
	p = strtok_r((char *)buf, "\n", &save);
	while (p) {
		int i;

		for (i = 0; i < 3 && p; i++, p = strtok_r(NULL, "\n", &save))
			lines[i] = p;
		if (i < 3)
			break;
		if (v->ndiv == cap) {
			struct diversion *n = realloc(v->div, (cap = cap ? cap * 2 : 32) * sizeof(*n));

			if (!n)
				goto nomem;
			v->div = n;
		}
		v->div[v->ndiv] = (struct diversion){ strdup(lines[0]), strdup(lines[1]),
						      strdup(lines[2]) };
		if (!v->div[v->ndiv].from || !v->div[v->ndiv].to || !v->div[v->ndiv].by)
			goto nomem;
		v->ndiv++;
	}
	free(buf);
	return 0;
nomem:
	free(buf);
	cli_err("out of memory");
	return -1;
}

/* path-exclude / path-include lines of ROOT/etc/dpkg/dpkg.cfg and dpkg.cfg.d/ */
static int load_excludes_from(struct verify *v, int fd)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char *save = NULL;
	int r = vg_fd_read_file(fd, CLI_SMALL_MAX, &buf, &len);

	if (r < 0)
		return 0;	/* not a regular file, too large: not dpkg's either */
	for (char *l = strtok_r((char *)buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		bool ex = strncmp(l, "path-exclude", 12) == 0, in = strncmp(l, "path-include", 12) == 0;
		char *pat = l + 12, *e;
		char **n;

		if (!ex && !in)
			continue;
		while (*pat == ' ' || *pat == '=' || *pat == '\t')
			pat++;
		e = pat + strcspn(pat, " \t\r");
		*e = '\0';
		n = realloc(v->excl, (v->nexcl + 1) * sizeof(*n));
		if (!n || asprintf(&n[v->nexcl], "%c%s", ex ? '-' : '+', pat) < 0) {
			if (n)
				v->excl = n;
			free(buf);
			cli_err("out of memory");
			return -1;
		}
		v->excl = n;
		v->nexcl++;
	}
	free(buf);
	return 0;
}

/* qsort's elements are char *: compare the strings they point to */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_excludes(struct verify *v)
{
	int fd = open_in_root(v, "/etc/dpkg/dpkg.cfg", O_RDONLY | O_NONBLOCK), dfd;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	if (fd >= 0) {
		r = load_excludes_from(v, fd);
		close(fd);
	}
	dfd = open_in_root(v, "/etc/dpkg/dpkg.cfg.d", O_RDONLY | O_DIRECTORY);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	/* dpkg reads them in name order */
	while ((e = readdir(d))) {
		char **nn;

		if (e->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn)
			break;
		names = nn;
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++) {
		int f = openat(dirfd(d), names[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

		if (f >= 0 && r == 0)
			r = load_excludes_from(v, f);
		if (f >= 0)
			close(f);
		free(names[i]);
	}
	free(names);
	closedir(d);
	return r;
}

/* dpkg's rule: the last matching of path-exclude and path-include decides */
static bool excluded(const struct verify *v, const char *path)
{
	bool ex = false;

	for (size_t i = 0; i < v->nexcl; i++)
		if (fnmatch(v->excl[i] + 1, path, 0) == 0)
			ex = v->excl[i][0] == '-';
	return ex;
}

static const struct diversion *diverted(const struct verify *v, const char *path, const char *pkg)
{
	for (size_t i = 0; i < v->ndiv; i++)
		if (strcmp(v->div[i].from, path) == 0 && strcmp(v->div[i].by, pkg) != 0)
			return &v->div[i];
	return NULL;
}

enum state { ST_OK, ST_CHANGED, ST_MISSING, ST_ERROR };

/*
 * @f as found at @path under the root: ST_OK, ST_CHANGED (*@disk: the
 * content's digest, when a regular file), ST_MISSING, ST_ERROR (@why).
 */
static enum state judge(struct verify *v, const struct vg_trust_filerow *f, const char *path,
			struct vg_digest *disk, bool *have_disk, char *why, size_t whylen)
{
	struct stat st;
	struct vg_diag d = { 0 };
	int fd;

	*have_disk = false;
	if (f->target) {
		char buf[4096];
		ssize_t n;

		fd = open_in_root(v, path, O_PATH);
		if (fd < 0)
			return errno == ENOENT || errno == ENOTDIR ? ST_MISSING : ST_ERROR;
		if (fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode)) {
			close(fd);
			return ST_CHANGED;
		}
		n = readlinkat(fd, "", buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			return ST_ERROR;
		}
		buf[n] = '\0';
		return strcmp(buf, f->target) == 0 ? ST_OK : ST_CHANGED;
	}
	fd = open_in_root(v, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return ST_MISSING;
		if (errno == ELOOP)
			return ST_CHANGED;	/* a symbolic link where a file was */
		snprintf(why, whylen, "%s", strerror(errno));
		return ST_ERROR;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ST_CHANGED;
	}
	if (vg_hasher_file(v->h, fd, &st, f->dg[0].algo, disk, NULL, &d) < 0) {
		close(fd);
		snprintf(why, whylen, "%s", d.msg);
		return ST_ERROR;
	}
	close(fd);
	*have_disk = true;
	return disk->len == f->dg[0].len && memcmp(disk->bytes, f->dg[0].bytes, disk->len) == 0 ?
		       ST_OK :
		       ST_CHANGED;
}

static const char *const state_name[] = { "ok", "changed", "missing", "error" };

static json_object *jentry(const struct vg_trust_filerow *f, const char *path)
{
	json_object *j = json_object_new_object();

	jadd(j, "file", cli_json_path(path));
	jadd(j, "package", json_object_new_string(f->pkg->name));
	jadd(j, "version", json_object_new_string(f->pkg->version));
	jadd(j, "arch", json_object_new_string(f->pkg->arch));
	return j;
}

static void line(const char *what, const struct vg_trust_filerow *f, const char *path)
{
	printf("%s: ", what);
	cli_put_path(stdout, path);
	printf(" (%s %s %s)", f->pkg->name, f->pkg->version, f->pkg->arch);
}

static int one(void *arg, const struct vg_trust_filerow *f)
{
	struct verify *v = arg;
	const struct diversion *dv = diverted(v, f->path, f->pkg->name);
	const char *path = dv ? dv->to : f->path;
	struct vg_digest disk;
	bool have_disk;
	char why[256] = "";
	enum state s;

	/* the new version's scripts in tmp.ci exist only during an unpack */
	if (f->kind == VG_TRUST_KIND_SCRIPT_TMP)
		return 0;
	if (v->unpack && trust_pathset_add(&v->recorded, f->path) < 0)
		return -ENOMEM;
	if (!f->target && f->ndg == 0)
		return 0;
	s = judge(v, f, path, &disk, &have_disk, why, sizeof(why));
	if (s == ST_MISSING && !dv && excluded(v, f->path)) {
		v->excluded++;
		return 0;
	}
	if (s == ST_ERROR) {
		v->errors++;
		cli_file_err(path, "%s", why[0] ? why : "cannot read");
		return 0;
	}
	if (dv || f->conffile) {
		json_object *j = jentry(f, f->path);

		if (dv) {
			v->diverted++;
			jadd(j, "diverted_to", cli_json_path(dv->to));
			jadd(j, "diverted_by", json_object_new_string(dv->by));
		} else if (s != ST_OK) {
			v->conf++;
		} else {
			v->ok++;
		}
		if (!dv && s == ST_OK) {
			json_object_put(j);
			return 0;
		}
		jadd(j, "state", json_object_new_string(state_name[s]));
		jadd(j, "package_digest", f->target ? json_object_new_string(f->target) :
						      jdigest(&f->dg[0]));
		jadd(j, "disk_digest", have_disk ? jdigest(&disk) : NULL);
		json_object_array_add(dv ? v->jdiv : v->jconf, j);
		if (!v->json) {
			line(dv ? "diverted" : "conffile", f, f->path);
			if (dv) {
				printf(" to ");
				cli_put_path(stdout, dv->to);
				printf(" by %s", dv->by);
			}
			printf(" %s;", state_name[s]);
			if (f->target)
				printf(" package -> %s", f->target);
			else
				print_digest("package", &f->dg[0]);
			print_digest("disk", have_disk ? &disk : NULL);
			putchar('\n');
		}
		return 0;
	}
	if (s == ST_OK) {
		v->ok++;
		if (v->verbose && !v->json) {
			line("ok", f, f->path);
			putchar('\n');
		}
		return 0;
	}
	{
		json_object *j = jentry(f, f->path);

		if (s == ST_MISSING) {
			v->missing++;
			json_object_array_add(v->jmiss, j);
		} else {
			v->modified++;
			if (f->target)
				jadd(j, "package_target", json_object_new_string(f->target));
			else
				jadd(j, "package_digest", jdigest(&f->dg[0]));
			jadd(j, "disk_digest", have_disk ? jdigest(&disk) : NULL);
			json_object_array_add(v->jmod, j);
		}
		if (!v->json) {
			line(s == ST_MISSING ? "missing" : "modified", f, f->path);
			if (s == ST_CHANGED && !f->target) {
				print_digest("package", &f->dg[0]);
				print_digest("disk", have_disk ? &disk : NULL);
			}
			putchar('\n');
		}
	}
	return 0;
}

/*
 * DIR/__pycache__/NAME.TAG.pyc (or NAME.TAG.opt-N.pyc) whose DIR/NAME.py a
 * recorded package, or dpkg, ships: written by the package's postinst.
 */
static bool compiled_from_packaged(const struct verify *v, const char *path)
{
	const char *slash = strrchr(path, '/'), *dot;
	char src[4096];
	size_t dl;

	if (!slash || (size_t)(slash - path) < 12 || strncmp(slash - 12, "/__pycache__", 12) != 0)
		return false;
	dl = (size_t)(slash - 12 - path);
	dot = strchr(slash + 1, '.');
	if (!dot || strlen(path) < 4 || strcmp(path + strlen(path) - 4, ".pyc") != 0 ||
	    dl + 1 + (size_t)(dot - slash - 1) + 4 >= sizeof(src))
		return false;
	snprintf(src, sizeof(src), "%.*s/%.*s.py", (int)dl, path, (int)(dot - slash - 1), slash + 1);
	return trust_pathset_has(&v->recorded, src) || trust_pathset_has(&v->dpkg, src);
}

static void walk(struct verify *v, int dfd, char *path, size_t len, size_t cap, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    len + 1 + nl + 1 > cap)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, nl + 1);
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = depth < 64 ? openat(dirfd(d), e->d_name,
						      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
					       -1;

			if (sub >= 0)
				walk(v, sub, path, len + 1 + nl, cap, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			continue;
		if (trust_pathset_has(&v->recorded, path))
			continue;
		/* byte code py3compile wrote at install for a packaged module */
		if (compiled_from_packaged(v, path)) {
			v->generated++;
			if (v->verbose && !v->json) {
				printf("generated: ");
				cli_put_path(stdout, path);
				putchar('\n');
			}
			continue;
		}
		/* a package's file, but no package of the database: its chain did not hold */
		if (trust_pathset_has(&v->dpkg, path)) {
			v->unverified++;
			if (v->verbose && !v->json) {
				printf("unverified: ");
				cli_put_path(stdout, path);
				putchar('\n');
			}
			continue;
		}
		{
			v->unpackaged++;
			json_object_array_add(v->jun, cli_json_path(path));
			if (!v->json) {
				printf("unpackaged: ");
				cli_put_path(stdout, path);
				putchar('\n');
			}
		}
	}
	path[len] = '\0';
	closedir(d);
}

static void unpackaged(struct verify *v)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/sbin", "/usr/lib" };
	char path[4096];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int fd = open_in_root(v, dirs[i], O_RDONLY | O_DIRECTORY);

		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "%s", dirs[i]);
		walk(v, fd, path, strlen(path), sizeof(path), 0);
	}
}

int cmd_trust_verify(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "root", required_argument, 'r', 'r' },
		{ "unpackaged", no_argument, 'u', 'u' },
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_CONFIG('c'),
		CLI_OPT_JSON('j'),
		CLI_OPT_VERBOSE('v'),
		CLI_OPT_HELP,
	};
	struct verify v = { .rootfd = -1, .root = "/" };
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .keys = &k, .out = &o };
	struct vg_hmac_key hk = { 0 };
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };
	bool unpack = false;
	const char *dbpath;
	int c, r, rc = EXIT_ERROR;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'r':
			v.root = optarg;
			break;
		case 'u':
			unpack = true;
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	v.json = o.json;
	v.verbose = o.verbose;
	if (optind != argc - 1) {
		cli_err("verify needs one DB");
		goto out;
	}
	dbpath = argv[optind];
	v.rootfd = open(v.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v.rootfd < 0) {
		cli_file_err(v.root, "%s", strerror(errno));
		goto out;
	}
	if (trust_load_key(&k, cf.config, &hk) < 0)
		goto out;
	if (vg_trust_db_open(dbpath, hk.key, hk.len, &db, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	if (vg_hasher_new(&v.h) < 0) {
		cli_err("out of memory");
		goto out;
	}
	if (load_diversions(&v) < 0 || load_excludes(&v) < 0)
		goto out;
	v.unpack = unpack;
	if (unpack && (trust_pathset_init(&v.recorded, v.rootfd) < 0 ||
		       trust_pathset_init(&v.dpkg, v.rootfd) < 0 ||
		       trust_pathset_add_dpkg(&v.dpkg) < 0)) {
		cli_err("out of memory");
		goto out;
	}
	v.jmod = json_object_new_array();
	v.jmiss = json_object_new_array();
	v.jconf = json_object_new_array();
	v.jdiv = json_object_new_array();
	v.jun = json_object_new_array();
	r = vg_trust_db_files(db, true, one, &v, &d);
	if (r < 0) {
		cli_err("%s", r == -ENOMEM ? "out of memory" : d.msg);
		goto out;
	}
	if (unpack)
		unpackaged(&v);
	if (v.json) {
		json_object *j = json_object_new_object(), *s = json_object_new_object();

		jadd(j, "db", cli_json_path(dbpath));
		jadd(j, "root", cli_json_path(v.root));
		jadd(s, "ok", json_object_new_int64((int64_t)v.ok));
		jadd(s, "modified", json_object_new_int64((int64_t)v.modified));
		jadd(s, "missing", json_object_new_int64((int64_t)v.missing));
		jadd(s, "conffiles_changed", json_object_new_int64((int64_t)v.conf));
		jadd(s, "diverted", json_object_new_int64((int64_t)v.diverted));
		jadd(s, "excluded", json_object_new_int64((int64_t)v.excluded));
		jadd(s, "unpackaged", unpack ? json_object_new_int64((int64_t)v.unpackaged) : NULL);
		jadd(s, "unverified", unpack ? json_object_new_int64((int64_t)v.unverified) : NULL);
		jadd(s, "generated", unpack ? json_object_new_int64((int64_t)v.generated) : NULL);
		jadd(s, "errors", json_object_new_int64((int64_t)v.errors));
		jadd(j, "summary", s);
		jadd(j, "modified", v.jmod);
		jadd(j, "missing", v.jmiss);
		jadd(j, "conffiles", v.jconf);
		jadd(j, "diverted", v.jdiv);
		jadd(j, "unpackaged", unpack ? v.jun : NULL);
		if (!unpack)
			json_object_put(v.jun);
		v.jmod = v.jmiss = v.jconf = v.jdiv = v.jun = NULL;
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
	} else {
		printf("%" PRIu64 " ok, %" PRIu64 " modified, %" PRIu64 " missing, %" PRIu64
		       " conffiles changed, %" PRIu64 " diverted, %" PRIu64 " excluded by dpkg",
		       v.ok, v.modified, v.missing, v.conf, v.diverted, v.excluded);
		if (unpack)
			printf(", %" PRIu64 " unpackaged, %" PRIu64 " of packages not in the database, %" PRIu64
			       " generated at install", v.unpackaged, v.unverified, v.generated);
		if (v.errors)
			printf(", %" PRIu64 " unreadable", v.errors);
		putchar('\n');
	}
	rc = v.errors ? EXIT_ERROR :
	     v.modified || v.missing || v.unpackaged ? EXIT_NOTVERIFIED : EXIT_OK;
out:
	json_object_put(v.jmod);
	json_object_put(v.jmiss);
	json_object_put(v.jconf);
	json_object_put(v.jdiv);
	json_object_put(v.jun);
	for (size_t i = 0; i < v.ndiv; i++) {
		free(v.div[i].from);
		free(v.div[i].to);
		free(v.div[i].by);
	}
	free(v.div);
	for (size_t i = 0; i < v.nexcl; i++)
		free(v.excl[i]);
	free(v.excl);
	trust_pathset_release(&v.recorded);
	trust_pathset_release(&v.dpkg);
	vg_hasher_free(v.h);
	vg_trust_db_free(db);
	if (v.rootfd >= 0)
		close(v.rootfd);
	vg_hmac_key_wipe(&hk);
	return rc;
}
