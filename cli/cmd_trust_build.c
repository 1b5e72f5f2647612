// SPDX-License-Identifier: MIT
/*
 * cmd_trust_build.c - `vigil trust build -o DB [PACKAGE...]`: verify each
 * InRelease of apt's lists with gpgv, each Packages list against its
 * InRelease, each .deb against its Packages stanza, and record every file
 * of the packages whose chain holds (vigil/trust.h). A package whose
 * chain does not hold is named, counted and contributes nothing. An
 * existing DB is read first (and must be a trust database under the same
 * key: nothing else is written over): the packages it records in another
 * version than this build's are kept as superseded for --grace seconds,
 * then dropped. --deb and --deb-list (trust_given_debs.c) name the .debs
 * themselves: apt's Pre-Install-Pkgs hook records what it is about to
 * install before dpkg unpacks it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_trust.h"
#include "opts.h"
#include "trust_build.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"

static const char help[] =
	"usage: vigil trust build -o DB [--hmac-key KEYFILE] [--lists DIR] [--debs DIR]\n"
	"                         [--download] [--all-debs] [--deb FILE]... [--deb-list FILE]\n"
	"                         [--local-deb FILE]...\n"
	"                         [--keyring FILE]... [--algo A[,B...]]\n"
	"                         [--grace SECONDS] [--allow-expired] [--allow-older]\n"
	"                         [--valid-at SECONDS]\n"
	"                         [--json] [--verbose] [PACKAGE[:ARCH]...]\n"
	"\n"
	"Record the files of the installed packages (dpkg-query), or of PACKAGE...,\n"
	"or of the .debs named by --deb/--deb-list, with their digests, package,\n"
	"version, architecture, origin and conffile flag, and their maintainer\n"
	"scripts, from a verified chain: InRelease (gpgv; each repository apt is\n"
	"configured with, with its Signed-By keys; an older Date than recorded refused) ->\n"
	"Packages (SHA-256 and size in InRelease, of the uncompressed list) -> .deb\n"
	"(SHA-256 and size in the Packages stanza) -> data.tar, control.tar. A\n"
	"package whose chain does not hold is named on stderr and contributes nothing.\n"
	"  -o, --output DB        the database (replaced whole; an existing DB must be a\n"
	"                         trust database under the same key: its packages in\n"
	"                         another version are kept as superseded, see --grace)\n"
	"  -H, --hmac-key FILE    key (default: key.hmac of the configuration); any key file\n"
	CLI_HELP_KEYOPTS
	CLI_HELP_CONFIG
	"  -l, --lists DIR        these lists, not apt's repositories: apt's lists\n"
	"                         directory (*_InRelease and the Packages lists named like\n"
	"                         it), or a repository tree (DIR/dists/CODENAME/InRelease\n"
	"                         and the lists it names), checked with --keyring\n"
	"  -d, --debs DIR         where the .debs are (default /var/cache/apt/archives)\n"
	"      --download         fetch the .debs with one apt-get download of every\n"
	"                         version a verified list has, into a new temporary\n"
	"                         directory apt's _apt user owns (removed afterwards)\n"
	"      --all-debs         record every NAME_VERSION_ARCH.deb of --debs (or those\n"
	"                         of PACKAGE...), installed or not\n"
	"      --deb FILE         record this .deb (repeatable): the package of the\n"
	"                         verified stanza with its SHA-256 and size; only the\n"
	"                         named .debs are built, the rest of -o is carried over\n"
	"      --local-deb FILE   also record this .deb, which no signed list vouches for\n"
	"                         (repeatable): the administrator's explicit trust, for\n"
	"                         local packages (vigil's own installed from a file);\n"
	"                         its name, version and architecture from its control\n"
	"                         file, under origin 'local'; later builds keep it\n"
	"      --deb-list FILE    the same for each line of FILE (\"-\": standard input),\n"
	"                         one .deb path a line, as apt's DPkg::Pre-Install-Pkgs\n"
	"                         hook gets them (Version 1); empty lines are ignored\n"
	"  -k, --keyring FILE     OpenPGP keyring gpgv checks every InRelease with, not\n"
	"                         each repository's own (with --lists, default\n"
	"                         " VG_TRUST_KEYRING "); repeatable: a signature by a\n"
	"                         key of any of them verifies\n"
	"  -a, --algo A[,B...]    digest algorithms recorded per file (default sha256;\n"
	"                         at most 4)\n"
	"      --grace SECONDS    how long a superseded version stays trusted (default\n"
	"                         604800, a week; 0 drops it at once)\n"
	"      --allow-expired    accept an InRelease whose Valid-Until has passed\n"
	"      --allow-older      accept an InRelease older than the Date DB recorded for\n"
	"                         its repository (a replay, otherwise refused)\n"
	"      --valid-at SECONDS judge Valid-Until at this time (seconds since the\n"
	"                         epoch) instead of now\n"
	"  -j, --json             one JSON document: releases, lists, counts, failures\n"
	"  -v, --verbose          name the packages without a .deb too\n"
	"Exit status: 0 written (packages that could not be verified are reported and\n"
	"counted), 2 usage or operational error (no InRelease verified included).\n";

enum { O_DOWNLOAD = 1, O_ALL_DEBS, O_GRACE, O_ALLOW_EXPIRED, O_VALID_AT, O_DEB, O_DEB_LIST,
       O_ALLOW_OLDER, O_LOCAL_DEB };

static void jadd(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static void fail(struct build *b, const struct target *t, const char *file, const char *kind,
		 const char *why)
{
	json_object *j = json_object_new_object();

	jadd(j, "package", json_object_new_string(t->name));
	jadd(j, "version", json_object_new_string(t->version));
	jadd(j, "arch", json_object_new_string(t->arch));
	if (file)
		jadd(j, "file", cli_json_path(file));
	jadd(j, "reason", json_object_new_string(kind));
	jadd(j, "error", json_object_new_string(why));
	json_object_array_add(b->jfailed, j);
	if (strcmp(kind, "no-deb") == 0) {
		b->nodeb++;
		/* a .deb apt-get download was asked for and did not fetch is always named */
		if (!b->verbose && !b->downloaded)
			return;
	} else {
		b->unverified++;
	}
	if (file)
		cli_err("%s %s %s: %s: %s; nothing recorded", t->name, t->version, t->arch, file, why);
	else
		cli_err("%s %s %s: %s; nothing recorded", t->name, t->version, t->arch, why);
}

/*
 * @t's version is in no verified list: superseded when a newer one is
 * (the remedy: upgrade it), else named as what the lists do have.
 */
static void unlisted(struct build *b, const struct target *t)
{
	const char *newest = t->given ? NULL : vg_trust_packages_newest(&b->pk, t->name, t->arch);
	char why[512];

	if (newest && vg_trust_version_cmp(newest, t->version) > 0) {
		snprintf(why, sizeof(why), "superseded: the archive lists %s; upgrade it "
			 "(apt-get install --only-upgrade %s), then build again", newest, t->name);
		b->superseded++;
		fail(b, t, NULL, "superseded", why);
		json_object_object_add(json_object_array_get_idx(b->jfailed,
								 json_object_array_length(b->jfailed) - 1),
				       "newer", json_object_new_string(newest));
		return;
	}
	if (newest)
		snprintf(why, sizeof(why), "no verified Packages list has this version (the archive "
			 "lists %s, older: a local build?)", newest);
	else if (t->given)
		snprintf(why, sizeof(why), "no verified Packages list has its SHA-256 and size, nor "
			 "this version");
	else
		snprintf(why, sizeof(why), "no verified Packages list has this package (not from a "
			 "verified repository)");
	fail(b, t, t->given ? t->deb : NULL, "unlisted", why);
}

/* The .deb of @t in b->debs: --all-debs' file, the pool's name, or apt's cache name. */
static char *find_deb(const struct build *b, const struct target *t, const struct vg_trust_pkg *s)
{
	const char *base = strrchr(s->filename, '/');
	char *p = NULL;
	struct stat st;

	if (t->given)
		return strdup(t->deb);
	if (t->deb)
		return trust_join(b->debs, t->deb);
	p = trust_join(b->debs, base ? base + 1 : s->filename);
	if (p && lstat(p, &st) == 0)
		return p;
	free(p);
	/* apt's cache and apt-get download: the epoch's ':' as "%3a" */
	p = trust_apt_deb_name(b, t, s->arch);
	if (p && lstat(p, &st) == 0)
		return p;
	free(p);
	return NULL;
}

/*
 * --download: wait until apt-get has written @t's .deb whole (its final
 * name, the stanza's size) or has exited; what it did not fetch is then
 * missing, and a file that differs fails its digest as any.
 */
static void wait_deb(const struct build *b, const struct target *t, const struct vg_trust_pkg *s)
{
	const struct timespec tick = { .tv_nsec = 5 * 1000 * 1000 };
	char *p;

	if (!b->dlpid || atomic_load((atomic_int *)&b->dldone))
		return;
	p = trust_apt_deb_name(b, t, s->arch);
	while (p) {
		struct stat st;

		if ((lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == s->size) ||
		    atomic_load((atomic_int *)&b->dldone))
			break;
		nanosleep(&tick, NULL);
	}
	free(p);
}

/*
 * One target's .deb found, checked against its stanza and read: the part
 * of a build that costs (reading, hashing and unpacking the .deb), done
 * by several threads at once. Nothing of @b is written here.
 */
struct readout {
	enum { RO_READ, RO_UNLISTED, RO_NODEB, RO_OPEN, RO_BAD } what;
	const struct vg_trust_pkg *s;	/* the stanza the .deb matched (RO_READ) */
	char *path;
	struct vg_trust_deb deb;
	int err;			/* RO_OPEN: errno; RO_BAD: the last -errno */
	struct vg_diag d;
};

static void read_target(const struct build *b, const struct target *t, struct readout *o)
{
	const struct vg_trust_pkg *s = NULL;
	/* b->pk is sorted before the readers start: the lookup only reads it */
	size_t ns = vg_trust_packages_find((struct vg_trust_packages *)&b->pk, t->name, t->version,
					   t->arch, &s);
	int fd, r = -EKEYREJECTED;

	memset(o, 0, sizeof(*o));
	if (ns == 0) {
		o->what = RO_UNLISTED;
		return;
	}
	wait_deb(b, t, s);
	o->path = find_deb(b, t, s);
	if (!o->path) {
		o->what = RO_NODEB;
		return;
	}
	fd = open(o->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		o->what = RO_OPEN;
		o->err = errno;
		return;
	}
	/* the same version may be listed by several releases: the first that matches */
	for (size_t i = 0; i < ns && r == -EKEYREJECTED; i++) {
		r = vg_trust_deb_read(fd, &s[i], b->algos, b->nalgos, &o->deb, &o->d);
		if (r == 0)
			o->s = &s[i];
	}
	close(fd);
	o->what = r == 0 ? RO_READ : RO_BAD;
	o->err = r;
}

/* Record what read_target found, or say why not, in the targets' order. Return: 0, -1 (said). */
static int write_target(struct build *b, struct vg_trust_db *db, const struct target *t,
			struct readout *o)
{
	struct release *rel;
	struct vg_trust_pkgrow row = { .name = t->name, .version = t->version };
	struct vg_diag d = { 0 };
	int r = 0;

	switch (o->what) {
	case RO_UNLISTED:
		unlisted(b, t);
		goto out;
	case RO_NODEB:
		fail(b, t, NULL, "no-deb", b->downloaded ? "apt-get download did not fetch it" :
							   "no .deb in the --debs directory");
		goto out;
	case RO_OPEN:
		fail(b, t, o->path, "error", strerror(o->err));
		goto out;
	case RO_BAD:
		fail(b, t, o->path, o->err == -EKEYREJECTED ? "chain" : "error", o->d.msg);
		goto out;
	case RO_READ:
		break;
	}
	rel = &b->rels[o->s->release];
	row.arch = o->s->arch;
	if (!rel->dbid) {
		int64_t id = vg_trust_db_add_release(db, &rel->rel, &d);

		if (id < 0) {
			cli_err("%s", d.msg);
			r = -1;
			goto out;
		}
		rel->dbid = id;
	}
	if (vg_trust_db_add_package(db, rel->dbid, &row, &o->deb, &d) < 0) {
		cli_err("%s", d.msg);
		r = -1;
		goto out;
	}
	b->recorded++;
	b->files += o->deb.n;
out:
	vg_trust_deb_release(&o->deb);
	free(o->path);
	o->path = NULL;
	return r;
}

/* the readers of one batch of targets */
struct readers {
	const struct build *b;
	struct readout *out;
	size_t base, n;
	atomic_size_t next;
};

static void *reader(void *arg)
{
	struct readers *rd = arg;
	size_t i;

	while ((i = atomic_fetch_add(&rd->next, 1)) < rd->n)
		read_target(rd->b, &rd->b->t[rd->base + i], &rd->out[i]);
	return NULL;
}

/*
 * Every target, in batches: the .debs of a batch read by one thread per
 * CPU (at most TRUST_READERS), then recorded in order by this thread, so
 * the database and the messages are those of a serial build. A batch
 * holds a few file lists, never the .debs' content. Return: 0, -1 (said).
 */
#define TRUST_READERS 8
#define TRUST_BATCH 32

/* --download: apt-get reaped here, and the readers told when it is done */
static void *download_waiter(void *arg)
{
	struct build *b = arg;
	int st = 0;

	while (waitpid(b->dlpid, &st, 0) < 0 && errno == EINTR)
		;
	b->dlstatus = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	atomic_store(&b->dldone, 1);
	return NULL;
}

static int record_all(struct build *b, struct vg_trust_db *db)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = ncpu < 1 ? 1 : ncpu > TRUST_READERS ? TRUST_READERS : (size_t)ncpu;
	struct readout *out = calloc(TRUST_BATCH, sizeof(*out));
	const struct vg_trust_pkg *unused;
	pthread_t waiter;
	bool waiting = false;
	int rc = 0;

	if (b->dlpid > 0) {
		waiting = pthread_create(&waiter, NULL, download_waiter, b) == 0;
		if (!waiting)
			download_waiter(b);	/* no thread: apt-get first, then the .debs */
	}
	if (!out) {
		cli_err("out of memory");
		rc = -1;
	}
	/* sorted once, here: the readers' lookups then only read */
	(void)vg_trust_packages_find(&b->pk, "", "", NULL, &unused);
	for (size_t base = 0; base < b->nt && rc == 0; base += TRUST_BATCH) {
		struct readers rd = { .b = b, .out = out, .base = base,
				      .n = b->nt - base < TRUST_BATCH ? b->nt - base : TRUST_BATCH };
		pthread_t th[TRUST_READERS];
		size_t started = 0;

		atomic_init(&rd.next, 0);
		for (size_t i = 1; i < nthreads && i < rd.n; i++)
			if (pthread_create(&th[started], NULL, reader, &rd) == 0)
				started++;
		reader(&rd);
		for (size_t i = 0; i < started; i++)
			pthread_join(th[i], NULL);
		for (size_t i = 0; i < rd.n; i++) {
			if (rc == 0) {
				rc = write_target(b, db, &b->t[base + i], &out[i]);
				continue;
			}
			/* after an error: only freed */
			vg_trust_deb_release(&out[i].deb);
			free(out[i].path);
		}
	}
	free(out);
	if (waiting)
		pthread_join(waiter, NULL);
	if (b->dlpid > 0 && b->dlstatus != 0)
		cli_err("apt-get download of %" PRIu64 " packages exited %d: those it did not fetch are "
			"named (no .deb)", b->fetched, b->dlstatus);
	b->dlpid = 0;
	return rc;
}

/* "sha256,sha512" into b->algos. Return: 0, or -1 (reported). */
static int parse_algos(struct build *b, const char *arg)
{
	char *s = strdup(arg), *save = NULL;

	b->nalgos = 0;
	for (char *a = s ? strtok_r(s, ",", &save) : NULL; a; a = strtok_r(NULL, ",", &save)) {
		int id = cli_parse_algo(a);

		if (id < 0) {
			free(s);
			return -1;
		}
		if (b->nalgos == VG_TRUST_MAX_ALGOS) {
			cli_err("--algo: at most %d algorithms", VG_TRUST_MAX_ALGOS);
			free(s);
			return -1;
		}
		for (size_t i = 0; i < b->nalgos; i++)
			if (b->algos[i] == (unsigned int)id) {
				cli_err("--algo: %s twice", a);
				free(s);
				return -1;
			}
		b->algos[b->nalgos++] = (unsigned int)id;
	}
	free(s);
	if (!b->nalgos) {
		cli_err("--algo: give one or more algorithms, comma-separated");
		return -1;
	}
	return 0;
}

static int parse_seconds(const char *opt, const char *arg, int64_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0) {
		cli_err("%s %s: give a number of seconds", opt, arg);
		return -1;
	}
	*ret = v;
	return 0;
}

/*
 * An existing -o: a trust database under this key (opened into *@ret), or
 * refused; absent or not a regular file: nothing to carry (vg_outfile
 * judges the rest). Return: 0, or -1 (reported).
 */
static int open_previous(const char *out, const struct vg_hmac_key *hk, struct vg_trust_db **ret)
{
	struct vg_diag d = { 0 };
	struct stat st;

	*ret = NULL;
	if (lstat(out, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (vg_trust_db_open(out, hk->key, hk->len, ret, &d) < 0) {
		cli_err("%s; not overwritten", d.msg);
		return -1;
	}
	return 0;
}

static void summary(struct build *b, const char *out, int dropped, uint64_t sup)
{
	if (b->json) {
		json_object *j = json_object_new_object();

		jadd(j, "output", cli_json_path(out));
		jadd(j, "releases", b->jrels);
		jadd(j, "lists", b->jlists);
		jadd(j, "recorded", json_object_new_int64((int64_t)b->recorded));
		jadd(j, "files", json_object_new_int64((int64_t)b->files));
		jadd(j, "unverified", json_object_new_int64((int64_t)b->unverified));
		jadd(j, "without_deb", json_object_new_int64((int64_t)b->nodeb));
		jadd(j, "installed_superseded", json_object_new_int64((int64_t)b->superseded));
		jadd(j, "releases_older", json_object_new_int64((int64_t)b->older));
		jadd(j, "downloaded", b->downloaded ? json_object_new_int64((int64_t)b->fetched) : NULL);
		jadd(j, "superseded_kept", json_object_new_int64((int64_t)sup));
		jadd(j, "superseded_dropped", json_object_new_int64(dropped));
		jadd(j, "failed", b->jfailed);
		b->jrels = b->jlists = b->jfailed = NULL;
		puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
		return;
	}
	printf("%s: %" PRIu64 " packages, %" PRIu64 " files recorded; %" PRIu64
	       " not verified (%" PRIu64 " installed versions superseded in the archive: upgrade "
	       "them), %" PRIu64 " without a .deb; superseded: %" PRIu64 " kept, %d dropped",
	       out, b->recorded, b->files, b->unverified, b->superseded, b->nodeb, sup, dropped);
	if (b->older)
		printf("; %" PRIu64 " InReleases older than recorded, refused", b->older);
	putchar('\n');
}

int cmd_trust_build(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_OUTPUT('o'),
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_CONFIG('c'),
		{ "lists", required_argument, 'l', 'l' },
		{ "debs", required_argument, 'd', 'd' },
		{ "download", no_argument, 0, O_DOWNLOAD },
		{ "all-debs", no_argument, 0, O_ALL_DEBS },
		{ "keyring", required_argument, 'k', 'k' },
		{ "deb", required_argument, 0, O_DEB },
		{ "deb-list", required_argument, 0, O_DEB_LIST },
		{ "local-deb", required_argument, 0, O_LOCAL_DEB },
		{ "algo", required_argument, 'a', 'a' },
		{ "grace", required_argument, 0, O_GRACE },
		{ "allow-expired", no_argument, 0, O_ALLOW_EXPIRED },
		{ "allow-older", no_argument, 0, O_ALLOW_OLDER },
		{ "valid-at", required_argument, 0, O_VALID_AT },
		CLI_OPT_JSON('j'),
		CLI_OPT_VERBOSE('v'),
		CLI_OPT_HELP,
	};
	struct build b = { .lists = "/var/lib/apt/lists", .debs = "/var/cache/apt/archives",
			   .algos = { VG_HASH_SHA256 }, .nalgos = 1 };
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .keys = &k, .out = &o };
	struct vg_hmac_key hk = { 0 };
	struct vg_trust_db *db = NULL, *old = NULL;
	struct vg_diag d = { 0 };
	int64_t grace = TRUST_GRACE_DEFAULT, now = (int64_t)time(NULL), valid_at = -1;
	unsigned int flags = 0;
	bool dl = false, given = false, lists_given = false;
	char *dldir = NULL;
	int c, r, rc = EXIT_ERROR, dropped = 0;
	uint64_t cur = 0, sup = 0, nfiles = 0;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'l':
			b.lists = optarg;
			lists_given = true;
			break;
		case 'd':
			b.debs = optarg;
			break;
		case 'k':
			if (b.nkr == VG_TRUST_MAX_KEYRINGS) {
				cli_err("--keyring: at most %d", VG_TRUST_MAX_KEYRINGS);
				goto out;
			}
			b.keyrings[b.nkr++] = optarg;
			break;
		case O_DEB:
			given = true;
			if (trust_given_add(&b, optarg) < 0)
				goto out;
			break;
		case O_DEB_LIST:
			given = true;
			if (trust_given_list(&b, optarg) < 0)
				goto out;
			break;
		case O_LOCAL_DEB:
			if (trust_local_add(&b, optarg) < 0)
				goto out;
			break;
		case 'a':
			if (parse_algos(&b, optarg) < 0)
				goto out;
			break;
		case O_DOWNLOAD:
			dl = true;
			break;
		case O_ALL_DEBS:
			b.all_debs = true;
			break;
		case O_GRACE:
			if (parse_seconds("--grace", optarg, &grace) < 0)
				goto out;
			break;
		case O_ALLOW_EXPIRED:
			flags |= VG_TRUST_ALLOW_EXPIRED;
			break;
		case O_ALLOW_OLDER:
			b.allow_older = true;
			break;
		case O_VALID_AT:
			if (parse_seconds("--valid-at", optarg, &valid_at) < 0)
				goto out;
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	b.json = o.json;
	b.verbose = o.verbose;
	if (!o.output) {
		cli_err("build needs --output DB");
		goto out;
	}
	if (strcmp(o.output, "-") == 0) {
		cli_err("-o -: a database is a file, not standard output");
		goto out;
	}
	if (given && (dl || b.all_debs || optind < argc)) {
		cli_err("--deb and --deb-list name the .debs: no --download, --all-debs or PACKAGE");
		goto out;
	}
	/* neither: the repositories apt is configured with, each with its own keys */
	b.apt = !lists_given && !b.nkr;
	if (!b.nkr)
		b.keyrings[b.nkr++] = VG_TRUST_KEYRING;
	if (dl && b.all_debs) {
		cli_err("--download fetches the installed versions; --all-debs records a directory: "
			"give one");
		goto out;
	}
	if (trust_load_key(&k, cf.config, &hk) < 0)
		goto out;
	if (open_previous(o.output, &hk, &old) < 0)
		goto out;
	b.jrels = json_object_new_array();
	b.jlists = json_object_new_array();
	b.jfailed = json_object_new_array();
	r = trust_load_releases(&b, old, valid_at >= 0 ? valid_at : now, flags);
	if (r < 0)
		goto out;
	if (r == 1) {
		/* no verified list: the --local-deb packages alone (and what DB held, carried over) */
		if (!b.json)
			fprintf(stderr, "vigil trust: no verified Packages list: recording the --local-deb "
				"packages only\n");
	} else if (given ? trust_given_debs(&b) :
		   b.all_debs ? trust_all_debs(&b, argv + optind, argc - optind) :
				trust_installed(&b, argv + optind, argc - optind)) {
		goto out;
	}
	if (vg_trust_db_create(o.output, b.algos, b.nalgos, hk.key, hk.len, &db, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	/* apt-get runs while the .debs it has fetched are read: started last, waited for in record_all */
	if (dl) {
		dldir = trust_download(&b);
		if (!dldir)
			goto out;
		b.debs = dldir;
	}
	/* each source's Date, the newest a later build compares an InRelease's with */
	for (size_t i = 0; i < b.nrels; i++)
		if (b.rels[i].ok && vg_trust_db_set_source(db, trust_release_name(&b.rels[i]),
							   &b.rels[i].rel, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
	if (record_all(&b, db) < 0 || trust_local_record(&b, db) < 0)
		goto out;
	if (old) {
		dropped = vg_trust_db_carry(db, old, now, grace, &d);
		if (dropped < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
	}
	/* the boot images' states: a newer shim, GRUB or kernel ABI supersedes (trust_boot.h) */
	if (vg_trust_db_boot_settle(db, now, grace, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	if (vg_trust_db_commit(db, &d) < 0) {
		db = NULL;
		cli_err("%s", d.msg);
		goto out;
	}
	db = NULL;
	/* what was written, as a reader sees it */
	if (vg_trust_db_open(o.output, hk.key, hk.len, &db, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	vg_trust_db_counts(db, &cur, &sup, &nfiles);
	summary(&b, o.output, dropped, sup);
	rc = EXIT_OK;
out:
	if (dldir) {
		trust_remove_download(dldir);
		free(dldir);
	}
	vg_trust_db_free(db);
	vg_trust_db_free(old);
	trust_releases_free(&b);
	for (size_t i = 0; i < b.nt; i++)
		trust_target_free(&b.t[i]);
	free(b.t);
	for (size_t i = 0; i < b.ngiven; i++)
		free(b.given[i]);
	free(b.given);
	trust_local_free(&b);
	vg_trust_packages_release(&b.pk);
	json_object_put(b.jrels);
	json_object_put(b.jlists);
	json_object_put(b.jfailed);
	vg_hmac_key_wipe(&hk);
	return rc;
}
