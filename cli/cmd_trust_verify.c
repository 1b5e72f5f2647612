// SPDX-License-Identifier: MIT
/*
 * cmd_trust_verify.c - `vigil trust verify DB`: the installed files
 * against what a trust database recorded from the signed archive
 * (cmd_trust_build.c), as `dpkg --verify` against dpkg's MD5 sums: every
 * file of every current package is opened under --root (openat2
 * RESOLVE_IN_ROOT: a symbolic link in the tree cannot lead out of it),
 * its content digested or its link target read, and its permission bits,
 * owner and group compared with those dpkg gave it (the archive's, with
 * dpkg-statoverride's applied: trust_dpkg.c). The files are judged by one
 * thread per CPU and reported by this one in the database's order.
 * Reported: modified (each difference with the package's value and the
 * disk's), missing; separately, changed conffiles and files another
 * package diverted (dpkg-divert); with --unpackaged the files under
 * /usr/bin, /usr/sbin and /usr/lib that no recorded package ships
 * (trust_unpackaged.c). Files that dpkg's path-exclude left out are not
 * missing. The database is authenticated before anything is compared.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_trust.h"
#include "opts.h"
#include "trust_dpkg.h"
#include "trust_unpackaged.h"
#include "vigil/trust.h"

static const char help[] =
	"usage: vigil trust verify DB [--root DIR] [--unpackaged] [--hmac-key KEYFILE]\n"
	"                          [--jobs N] [--json] [--verbose]\n"
	"\n"
	"Compare the files of the current packages of DB (vigil trust build) with the\n"
	"disk: each regular file's digest, each symbolic link's target, and their\n"
	"permission bits (setuid, setgid, sticky included), owner and group as dpkg\n"
	"gives them (the archive's, dpkg-statoverride's where it has one). The database\n"
	"is authenticated first; an altered one, or another key, is refused.\n"
	"Reported: modified files (each difference, the package's value and the disk's)\n"
	"and missing ones; separately, changed conffiles and files diverted by another\n"
	"package. Files dpkg's path-exclude (ROOT/etc/dpkg/dpkg.cfg.d) keeps out are not\n"
	"missing.\n"
	"  -r, --root DIR         the system's root (default /); links resolve inside it\n"
	"  -u, --unpackaged       also report files under /usr/bin, /usr/sbin, /usr/lib\n"
	"                         that no package of DB ships (alternatives' links,\n"
	"                         diverted files and byte code compiled at install aside)\n"
	"  -H, --hmac-key FILE    key (default: key.hmac of the configuration); any key file\n"
	CLI_HELP_KEYOPTS
	CLI_HELP_CONFIG
	CLI_HELP_JOBS("J")
	"  -j, --json             one JSON document: summary, modified, missing,\n"
	"                         conffiles, diverted, unpackaged\n"
	"  -v, --verbose          also print each file that matches\n"
	"Exit status: 0 every file matches (changed conffiles and diversions are\n"
	"listed, not counted), 1 modified, missing or unpackaged files, 2 usage or\n"
	"operational error (an altered database included).\n";

enum state { ST_OK, ST_CHANGED, ST_MISSING, ST_ERROR };
static const char *const state_name[] = { "ok", "changed", "missing", "error" };

/* what differs (ST_CHANGED) */
enum {
	D_CONTENT = 1u << 0,
	D_TYPE = 1u << 1,
	D_TARGET = 1u << 2,
	D_MODE = 1u << 3,
	D_OWNER = 1u << 4,
	D_GROUP = 1u << 5,
};
static const char *const diff_name[] = { "content", "type", "target", "mode", "owner", "group" };
#define NDIFF (sizeof(diff_name) / sizeof(diff_name[0]))

/* one file of the database, then what its judge found */
struct entry {
	char *path, *target, *uname, *gname;
	const char *pkg, *version, *arch;	/* the database's, valid while it is open */
	uint32_t mode, uid, gid;
	enum vg_trust_kind kind;
	bool have_owner;
	struct vg_digest dg;			/* the first of its algorithms */
	/* the judge's, written by one worker before done */
	atomic_int done;
	bool excluded;
	enum state s;
	uint32_t diff;
	const struct trust_diversion *dv;
	bool have_disk, override;
	struct vg_digest disk;
	uint32_t want_mode, want_uid, want_gid, disk_mode, disk_uid, disk_gid;
	char *disk_target, *why;
};

struct verify {
	int rootfd;
	const char *root;
	bool json, verbose;
	struct trust_dpkg dpkg;
	struct entry *e;
	size_t n, cap;
	uint64_t ok, modified, missing, conf, diverted, excluded, errors;
	json_object *jmod, *jmiss, *jconf, *jdiv;
	bool unpack;
	struct trust_unpackaged up;
	/* the judges */
	atomic_size_t next;
	atomic_size_t waiting;	/* the entry this thread waits for */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void jadd(json_object *o, const char *k, json_object *val)
{
	json_object_object_add(o, k, val);
}

static json_object *jdigest(const struct vg_digest *dg)
{
	char hex[2 * VG_HASH_MAX_DIGEST + 1], *s = NULL;
	json_object *j;

	vg_hex_encode(dg->bytes, dg->len, hex);
	if (asprintf(&s, "%s:%s", vg_hash_name(dg->algo), hex) < 0)
		return NULL;
	j = json_object_new_string(s);
	free(s);
	return j;
}

static int collect(void *arg, const struct vg_trust_filerow *f)
{
	struct verify *v = arg;
	struct entry *e;

	/* the new version's scripts in tmp.ci exist only during an unpack */
	if (f->kind == VG_TRUST_KIND_SCRIPT_TMP)
		return 0;
	if (v->unpack && trust_unpackaged_record(&v->up, f->path) < 0)
		return -ENOMEM;
	if (!f->target && f->ndg == 0)
		return 0;
	if (v->n == v->cap) {
		size_t ncap = v->cap ? 2 * v->cap : 4096;
		struct entry *n = realloc(v->e, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->e = n;
		v->cap = ncap;
	}
	e = &v->e[v->n];
	memset(e, 0, sizeof(*e));
	v->n++;
	e->pkg = f->pkg->name;
	e->version = f->pkg->version;
	e->arch = f->pkg->arch;
	e->mode = f->mode;
	e->kind = f->kind;
	e->have_owner = f->have_owner;
	e->uid = f->uid;
	e->gid = f->gid;
	if (f->ndg)
		e->dg = f->dg[0];
	e->path = strdup(f->path);
	e->target = f->target ? strdup(f->target) : NULL;
	e->uname = f->uname ? strdup(f->uname) : NULL;
	e->gname = f->gname ? strdup(f->gname) : NULL;
	if (!e->path || (f->target && !e->target) || (f->uname && !e->uname) ||
	    (f->gname && !e->gname))
		return -ENOMEM;
	return 0;
}

static void entry_free(struct entry *e)
{
	free(e->path);
	free(e->target);
	free(e->uname);
	free(e->gname);
	free(e->disk_target);
	free(e->why);
}

/* the permission bits, owner and group of @st against what dpkg gives @e (maintainer scripts: content only) */
static void judge_meta(const struct verify *v, struct entry *e, const struct stat *st, bool link)
{
	unsigned int k;

	if (e->kind == VG_TRUST_KIND_SCRIPT)
		return;
	k = trust_dpkg_expected(&v->dpkg, e->path, e->mode, e->have_owner, e->uname, e->gname,
				e->uid, e->gid, &e->want_mode, &e->want_uid, &e->want_gid);
	e->override = k & TRUST_DPKG_OVERRIDE;
	e->disk_mode = st->st_mode & 07777;
	e->disk_uid = st->st_uid;
	e->disk_gid = st->st_gid;
	/* a symbolic link's own mode means nothing; dpkg sets its owner (lchown) */
	if (!link && e->disk_mode != e->want_mode)
		e->diff |= D_MODE;
	if ((k & TRUST_DPKG_OWNER) && e->disk_uid != e->want_uid)
		e->diff |= D_OWNER;
	if ((k & TRUST_DPKG_OWNER) && e->disk_gid != e->want_gid)
		e->diff |= D_GROUP;
}

/* @e as found under the root (where a diversion sent it): its state, and what differs */
static void judge(struct verify *v, struct vg_hasher *h, struct entry *e)
{
	const char *path;
	struct stat st;
	struct vg_diag d = { 0 };
	int fd;

	e->dv = trust_dpkg_diverted(&v->dpkg, e->path, e->pkg);
	path = e->dv ? e->dv->to : e->path;
	if (e->target) {
		char buf[4096];
		ssize_t n;

		fd = trust_open_in_root(v->rootfd, path, O_PATH);
		if (fd < 0) {
			e->s = errno == ENOENT || errno == ENOTDIR ? ST_MISSING : ST_ERROR;
			if (e->s == ST_ERROR && asprintf(&e->why, "%s", strerror(errno)) < 0)
				e->why = NULL;
			goto out;
		}
		if (fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode)) {
			close(fd);
			e->diff = D_TYPE;
			goto out;
		}
		n = readlinkat(fd, "", buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0) {
			e->s = ST_ERROR;
			if (asprintf(&e->why, "%s", strerror(errno)) < 0)
				e->why = NULL;
			goto out;
		}
		buf[n] = '\0';
		if (strcmp(buf, e->target) != 0) {
			e->diff |= D_TARGET;
			e->disk_target = strdup(buf);
		}
		judge_meta(v, e, &st, true);
		goto out;
	}
	fd = trust_open_in_root(v->rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			e->s = ST_MISSING;
		} else if (errno == ELOOP) {
			e->diff = D_TYPE;	/* a symbolic link where a file was */
		} else {
			e->s = ST_ERROR;
			if (asprintf(&e->why, "%s", strerror(errno)) < 0)
				e->why = NULL;
		}
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		e->diff = D_TYPE;
		goto out;
	}
	if (vg_hasher_file(h, fd, &st, e->dg.algo, &e->disk, NULL, &d) < 0) {
		close(fd);
		e->s = ST_ERROR;
		e->why = strdup(d.msg);
		goto out;
	}
	close(fd);
	e->have_disk = true;
	if (e->disk.len != e->dg.len || memcmp(e->disk.bytes, e->dg.bytes, e->dg.len) != 0)
		e->diff |= D_CONTENT;
	judge_meta(v, e, &st, false);
out:
	if (e->s == ST_MISSING && !e->dv && trust_dpkg_excluded(&v->dpkg, e->path))
		e->excluded = true;
	if (e->s == ST_OK && e->diff)
		e->s = ST_CHANGED;
}

struct judge {
	struct verify *v;
	struct vg_hasher *h;
	pthread_t th;
};

static void *judges(void *arg)
{
	struct judge *jg = arg;
	struct verify *v = jg->v;
	size_t i;

	while ((i = atomic_fetch_add(&v->next, 1)) < v->n) {
		judge(v, jg->h, &v->e[i]);
		atomic_store(&v->e[i].done, 1);
		/* the reporting thread waits for this one: wake it */
		if (atomic_load(&v->waiting) == i) {
			pthread_mutex_lock(&v->lock);
			pthread_cond_signal(&v->cond);
			pthread_mutex_unlock(&v->lock);
		}
	}
	return NULL;
}

/* "0 (root)": an id and its name in the root */
static void id_text(char *out, size_t cap, uint32_t id, const char *name)
{
	if (name)
		snprintf(out, cap, "%u (%s)", id, name);
	else
		snprintf(out, cap, "%u", id);
}

/* the differences of @e, text: "package sha256:X disk sha256:Y; mode 0755 -> 4755; ..." */
static void print_diff(const struct verify *v, const struct entry *e)
{
	char hex[2 * VG_HASH_MAX_DIGEST + 1], a[160], b[160];
	const char *sep = "";

	if (e->diff & D_TYPE) {
		printf("%snot a %s", sep, e->target ? "symbolic link" : "regular file");
		sep = "; ";
	}
	if (!e->target && (e->diff & D_CONTENT || e->dv || e->kind == VG_TRUST_KIND_CONFFILE)) {
		vg_hex_encode(e->dg.bytes, e->dg.len, hex);
		printf("%spackage %s:%s", sep, vg_hash_name(e->dg.algo), hex);
		if (e->have_disk) {
			vg_hex_encode(e->disk.bytes, e->disk.len, hex);
			printf(" disk %s:%s", vg_hash_name(e->disk.algo), hex);
		} else {
			printf(" disk -");
		}
		sep = "; ";
	}
	if (e->target && (e->diff & D_TARGET || e->dv)) {
		printf("%starget ", sep);
		cli_put_path(stdout, e->target);
		if (e->diff & D_TARGET) {
			printf(" -> ");
			cli_put_path(stdout, e->disk_target ? e->disk_target : "?");
		}
		sep = "; ";
	}
	if (e->diff & D_MODE) {
		printf("%smode %04o%s -> %04o", sep, e->want_mode, e->override ? " (statoverride)" : "",
		       e->disk_mode);
		sep = "; ";
	}
	if (e->diff & D_OWNER) {
		id_text(a, sizeof(a), e->want_uid, trust_dpkg_user(&v->dpkg, e->want_uid));
		id_text(b, sizeof(b), e->disk_uid, trust_dpkg_user(&v->dpkg, e->disk_uid));
		printf("%sowner %s%s -> %s", sep, a, e->override ? " (statoverride)" : "", b);
		sep = "; ";
	}
	if (e->diff & D_GROUP) {
		id_text(a, sizeof(a), e->want_gid, trust_dpkg_group(&v->dpkg, e->want_gid));
		id_text(b, sizeof(b), e->disk_gid, trust_dpkg_group(&v->dpkg, e->disk_gid));
		printf("%sgroup %s%s -> %s", sep, a, e->override ? " (statoverride)" : "", b);
	}
}

static json_object *old_new(json_object *old, json_object *now)
{
	json_object *o = json_object_new_object();

	jadd(o, "old", old);
	jadd(o, "new", now);
	return o;
}

static json_object *jid(uint32_t id, const char *name)
{
	json_object *o = json_object_new_object();

	jadd(o, "id", json_object_new_int64(id));
	jadd(o, "name", name ? json_object_new_string(name) : NULL);
	return o;
}

/* "changed" and each difference's old (the package's) and new (the disk's) value */
static void jdiff(const struct verify *v, const struct entry *e, json_object *j)
{
	json_object *c = json_object_new_array();
	char m[8], n[8];

	for (size_t i = 0; i < NDIFF; i++)
		if (e->diff & (1u << i))
			json_object_array_add(c, json_object_new_string(diff_name[i]));
	jadd(j, "changed", c);
	if (e->diff & D_TARGET)
		jadd(j, "target", old_new(cli_json_path(e->target),
					  cli_json_path(e->disk_target ? e->disk_target : "")));
	if (e->diff & D_MODE) {
		snprintf(m, sizeof(m), "%04o", e->want_mode);
		snprintf(n, sizeof(n), "%04o", e->disk_mode);
		jadd(j, "mode", old_new(json_object_new_string(m), json_object_new_string(n)));
	}
	if (e->diff & D_OWNER)
		jadd(j, "owner", old_new(jid(e->want_uid, trust_dpkg_user(&v->dpkg, e->want_uid)),
					 jid(e->disk_uid, trust_dpkg_user(&v->dpkg, e->disk_uid))));
	if (e->diff & D_GROUP)
		jadd(j, "group", old_new(jid(e->want_gid, trust_dpkg_group(&v->dpkg, e->want_gid)),
					 jid(e->disk_gid, trust_dpkg_group(&v->dpkg, e->disk_gid))));
	if (e->diff & (D_MODE | D_OWNER | D_GROUP))
		jadd(j, "statoverride", json_object_new_boolean(e->override));
}

static json_object *jentry(const struct entry *e)
{
	json_object *j = json_object_new_object();

	jadd(j, "file", cli_json_path(e->path));
	jadd(j, "package", json_object_new_string(e->pkg));
	jadd(j, "version", json_object_new_string(e->version));
	jadd(j, "arch", json_object_new_string(e->arch));
	return j;
}

static void line(const char *what, const struct entry *e)
{
	printf("%s: ", what);
	cli_put_path(stdout, e->path);
	printf(" (%s %s %s)", e->pkg, e->version, e->arch);
}

/* @e judged: counted, listed, printed */
static void report(struct verify *v, const struct entry *e)
{
	json_object *j;

	if (e->excluded) {
		v->excluded++;
		return;
	}
	if (e->s == ST_ERROR) {
		v->errors++;
		cli_file_err(e->dv ? e->dv->to : e->path, "%s", e->why ? e->why : "cannot read");
		return;
	}
	if (e->dv || e->kind == VG_TRUST_KIND_CONFFILE) {
		if (e->dv)
			v->diverted++;
		else if (e->s != ST_OK)
			v->conf++;
		else
			v->ok++;
		if (!e->dv && e->s == ST_OK)
			return;
		j = jentry(e);
		if (e->dv) {
			jadd(j, "diverted_to", cli_json_path(e->dv->to));
			jadd(j, "diverted_by", json_object_new_string(e->dv->by));
		}
		jadd(j, "state", json_object_new_string(state_name[e->s]));
		jadd(j, "package_digest", e->target ? json_object_new_string(e->target) :
						      jdigest(&e->dg));
		jadd(j, "disk_digest", e->have_disk ? jdigest(&e->disk) : NULL);
		if (e->s == ST_CHANGED)
			jdiff(v, e, j);
		json_object_array_add(e->dv ? v->jdiv : v->jconf, j);
		if (!v->json) {
			line(e->dv ? "diverted" : "conffile", e);
			if (e->dv) {
				printf(" to ");
				cli_put_path(stdout, e->dv->to);
				printf(" by %s", e->dv->by);
			}
			printf(" %s; ", state_name[e->s]);
			print_diff(v, e);
			if (e->target && !e->dv && !(e->diff & D_TARGET))
				printf("%starget %s", e->diff ? "; " : "", e->target);
			putchar('\n');
		}
		return;
	}
	if (e->s == ST_OK) {
		v->ok++;
		if (v->verbose && !v->json) {
			line("ok", e);
			putchar('\n');
		}
		return;
	}
	j = jentry(e);
	if (e->s == ST_MISSING) {
		v->missing++;
		json_object_array_add(v->jmiss, j);
	} else {
		v->modified++;
		if (e->target)
			jadd(j, "package_target", json_object_new_string(e->target));
		else
			jadd(j, "package_digest", jdigest(&e->dg));
		jadd(j, "disk_digest", e->have_disk ? jdigest(&e->disk) : NULL);
		jdiff(v, e, j);
		json_object_array_add(v->jmod, j);
	}
	if (!v->json) {
		line(e->s == ST_MISSING ? "missing" : "modified", e);
		if (e->s == ST_CHANGED) {
			putchar(' ');
			print_diff(v, e);
		}
		putchar('\n');
	}
}

/*
 * Every entry judged by one thread per CPU (@jobs if given), reported
 * here in order. Return: 0, or -1 (said: no memory for the judges).
 */
static int run(struct verify *v, unsigned int jobs)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nth = jobs ? jobs : ncpu < 1 ? 1 : ncpu > 16 ? 16 : (size_t)ncpu, started = 0;
	struct judge *jg = calloc(nth, sizeof(*jg));

	for (size_t i = 0; jg && i < nth; i++) {
		jg[i].v = v;
		if (vg_hasher_new(&jg[i].h) < 0) {
			for (size_t k = 0; k < i; k++)
				vg_hasher_free(jg[k].h);
			free(jg);
			jg = NULL;
		}
	}
	if (!jg) {
		cli_err("out of memory");
		return -1;
	}
	atomic_init(&v->next, 0);
	atomic_init(&v->waiting, SIZE_MAX);
	for (size_t i = 0; i < nth; i++)
		if (pthread_create(&jg[started].th, NULL, judges, &jg[started]) == 0)
			started++;
	if (!started)
		judges(&jg[0]);	/* no thread: judged here first, then reported */
	for (size_t i = 0; i < v->n; i++) {
		if (!atomic_load(&v->e[i].done)) {
			pthread_mutex_lock(&v->lock);
			atomic_store(&v->waiting, i);
			while (!atomic_load(&v->e[i].done))
				pthread_cond_wait(&v->cond, &v->lock);
			atomic_store(&v->waiting, SIZE_MAX);
			pthread_mutex_unlock(&v->lock);
		}
		report(v, &v->e[i]);
		entry_free(&v->e[i]);
	}
	for (size_t i = 0; i < started; i++)
		pthread_join(jg[i].th, NULL);
	for (size_t i = 0; i < nth; i++)
		vg_hasher_free(jg[i].h);
	free(jg);
	return 0;
}

static void summary(struct verify *v, const char *dbpath, bool owners)
{
	if (v->json) {
		json_object *j = json_object_new_object(), *s = json_object_new_object();

		jadd(j, "db", cli_json_path(dbpath));
		jadd(j, "root", cli_json_path(v->root));
		jadd(s, "ok", json_object_new_int64((int64_t)v->ok));
		jadd(s, "modified", json_object_new_int64((int64_t)v->modified));
		jadd(s, "missing", json_object_new_int64((int64_t)v->missing));
		jadd(s, "conffiles_changed", json_object_new_int64((int64_t)v->conf));
		jadd(s, "diverted", json_object_new_int64((int64_t)v->diverted));
		jadd(s, "excluded", json_object_new_int64((int64_t)v->excluded));
		jadd(s, "unpackaged", v->unpack ? json_object_new_int64((int64_t)v->up.unpackaged) : NULL);
		jadd(s, "unverified", v->unpack ? json_object_new_int64((int64_t)v->up.unverified) : NULL);
		jadd(s, "generated", v->unpack ? json_object_new_int64((int64_t)v->up.generated) : NULL);
		jadd(s, "alternatives", v->unpack ? json_object_new_int64((int64_t)v->up.alternatives) :
						    NULL);
		jadd(s, "diverted_files", v->unpack ? json_object_new_int64((int64_t)v->up.diverted) :
						      NULL);
		jadd(s, "owners", json_object_new_boolean(owners));
		jadd(s, "errors", json_object_new_int64((int64_t)v->errors));
		jadd(j, "summary", s);
		jadd(j, "modified", v->jmod);
		jadd(j, "missing", v->jmiss);
		jadd(j, "conffiles", v->jconf);
		jadd(j, "diverted", v->jdiv);
		jadd(j, "unpackaged", v->unpack ? json_object_get(v->up.list) : NULL);
		v->jmod = v->jmiss = v->jconf = v->jdiv = NULL;
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
		return;
	}
	printf("%" PRIu64 " ok, %" PRIu64 " modified, %" PRIu64 " missing, %" PRIu64
	       " conffiles changed, %" PRIu64 " diverted, %" PRIu64 " excluded by dpkg",
	       v->ok, v->modified, v->missing, v->conf, v->diverted, v->excluded);
	if (v->unpack)
		printf(", %" PRIu64 " unpackaged, %" PRIu64 " of packages not in the database, %" PRIu64
		       " generated at install, %" PRIu64 " alternatives, %" PRIu64 " diverted files",
		       v->up.unpackaged, v->up.unverified, v->up.generated, v->up.alternatives,
		       v->up.diverted);
	if (v->errors)
		printf(", %" PRIu64 " unreadable", v->errors);
	putchar('\n');
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
		CLI_OPT_JOBS('J'),
		CLI_OPT_JSON('j'),
		CLI_OPT_VERBOSE('v'),
		CLI_OPT_HELP,
	};
	struct verify v = { .rootfd = -1, .root = "/", .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .keys = &k, .out = &o };
	struct vg_hmac_key hk = { 0 };
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };
	bool loaded = false, uinit = false, owners;
	unsigned int jobs = 0;
	const char *dbpath;
	int c, r, rc = EXIT_ERROR;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'r':
			v.root = optarg;
			break;
		case 'u':
			v.unpack = true;
			break;
		case CLI_O_JOBS:
			if (cli_parse_jobs(optarg, &jobs) < 0)
				goto out;
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
	owners = vg_trust_db_format(db) >= 3;
	if (!owners)
		cli_file_err(dbpath, "format %u: the owners of files are not recorded, and not "
			     "compared (vigil trust build writes format 4)", vg_trust_db_format(db));
	loaded = true;
	if (trust_dpkg_load(&v.dpkg, v.rootfd) < 0)
		goto out;
	if (v.unpack) {
		uinit = true;
		if (trust_unpackaged_init(&v.up, v.rootfd, &v.dpkg, v.json, v.verbose) < 0)
			goto out;
	}
	r = vg_trust_db_files(db, true, collect, &v, &d);
	if (r < 0) {
		cli_err("%s", r == -ENOMEM ? "out of memory" : d.msg);
		goto out;
	}
	v.jmod = json_object_new_array();
	v.jmiss = json_object_new_array();
	v.jconf = json_object_new_array();
	v.jdiv = json_object_new_array();
	if (run(&v, jobs) < 0)
		goto out;
	v.n = 0;
	if (v.unpack)
		trust_unpackaged_walk(&v.up);
	summary(&v, dbpath, owners);
	rc = v.errors ? EXIT_ERROR :
	     v.modified || v.missing || (v.unpack && v.up.unpackaged) ? EXIT_NOTVERIFIED : EXIT_OK;
out:
	for (size_t i = 0; i < v.n; i++)
		entry_free(&v.e[i]);
	free(v.e);
	json_object_put(v.jmod);
	json_object_put(v.jmiss);
	json_object_put(v.jconf);
	json_object_put(v.jdiv);
	if (uinit)
		trust_unpackaged_release(&v.up);
	if (loaded)
		trust_dpkg_release(&v.dpkg);
	vg_trust_db_free(db);
	if (v.rootfd >= 0)
		close(v.rootfd);
	vg_hmac_key_wipe(&hk);
	return rc;
}
