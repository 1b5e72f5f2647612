// SPDX-License-Identifier: MIT
/*
 * cmd_scan.c - `vigil scan --init -o DB PATH...`, `vigil scan --check DB`
 * and `vigil scan --update DB`
 *
 * AIDE-style integrity scans for systems whose xattrs cannot be trusted or
 * stored: --init records every entry under PATH (type, mode, owner, size,
 * times, inode, xattrs, content digest, link target) in an HMAC'ed SQLite
 * database; --check walks the recorded roots again and reports what was
 * added, removed and changed, and in what, from which value to which;
 * --update checks and then replaces DB with what it found (the previous
 * database kept as DB.old). A database that was altered, or a key that
 * differs, is refused before anything is compared.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "cli.h"
#include "opts.h"
#include "tree.h"
#include "vigil/outfile.h"
#include "vigil/scan.h"

static const char help[] =
	"usage: vigil scan --init -o DB [--config FILE] [--hmac-key KEYFILE] [--algo ALGO] PATH...\n"
	"       vigil scan --check DB [--config FILE] [--hmac-key KEYFILE] [--json]\n"
	"       vigil scan --update DB [--config FILE] [--hmac-key KEYFILE] [--json]\n"
	"       vigil scan --compare DB1 DB2 [--config FILE] [--hmac-key KEYFILE] [--json]\n"
	"\n"
	"Record a tree in a database (--init), or compare the tree with it (--check):\n"
	"entries added, removed, and changed in type, content, size, mode, uid, gid,\n"
	"mtime, ctime, inode, xattrs or link target, each with its old and new value.\n"
	"Mount points are not crossed.\n"
	"The database is authenticated with an HMAC-SHA256 under a key derived from\n"
	"the HMAC key; an altered database is refused.\n"
	"  -i, --init             record PATH... into DB\n"
	"  -o, --output DB        the database to write (--init)\n"
	"  -C, --check DB         compare the recorded roots with DB\n"
	"  -U, --update DB        check, then replace DB with the tree as found (the\n"
	"                         previous database is kept as DB.old); nothing is\n"
	"                         written when an entry could not be read\n"
	"  -D, --compare DB1 DB2  what changed from DB1 to DB2 (two databases, no tree)\n"
	"      --report FILE      --check, --update: also write the report to FILE (replaced\n"
	"                         whole, mode 0640)\n"
	"      --on-change CMD    --check, --update: when something changed, run CMD with\n"
	"                         /bin/sh, the report on its stdin (as dailyaidecheck mails it)\n"
	"  -L, --limit PATH       --check, --update: only PATH and what is under it (as\n"
	"                         recorded: under one of the database's roots); --update\n"
	"                         keeps the records of the rest as they were\n"
	"  -H, --hmac-key FILE    key (default: key.hmac of the configuration); any key file\n"
	CLI_HELP_KEYOPTS
	CLI_HELP_CONFIG
	"  -a, --algo ALGO        content hash for --init (default from the config)\n"
	CLI_HELP_CROSS_MOUNTS
	"  -j, --json             --check, --update: one JSON object per change (old\n"
	"                         and new values in \"diff\"), then a summary\n"
	CLI_HELP_JOBS("J")
	"  -q, --quiet            no progress line, no summary\n"
	"Exit status: 0 recorded / no change, 1 changes found (--update: and recorded),\n"
	"2 usage or operational\n"
	"error (an altered database included).\n";

struct change {
	char *path;
	uint32_t what;		/* 0: added, UINT32_MAX: removed, else VG_SCAN_* */
	char xattrs[256];
	json_object *diff;	/* owned: {FIELD: {old, new}, xattrs: {NAME: {old, new}}} */
};

struct scan {
	bool check, json;
	unsigned int algo;
	struct vg_scan_db *db;
	struct vg_scan_db *next;	/* --update: the database being written */
	pthread_mutex_t lock;
	struct change *changes;
	size_t nchanges, cap;
	char **roots;
};

#define CH_ADDED 0u
#define CH_REMOVED UINT32_MAX

/* --update's change list takes @diff over (NULL for added and removed). */
static int add_change(struct scan *s, const char *path, uint32_t what, const char *xattrs,
		      json_object *diff)
{
	int r = 0;

	pthread_mutex_lock(&s->lock);
	if (s->nchanges == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct change *n = realloc(s->changes, cap * sizeof(*n));

		if (!n) {
			r = -ENOMEM;
			goto out;
		}
		s->changes = n;
		s->cap = cap;
	}
	s->changes[s->nchanges].path = strdup(path);
	if (!s->changes[s->nchanges].path) {
		r = -ENOMEM;
		goto out;
	}
	s->changes[s->nchanges].what = what;
	s->changes[s->nchanges].diff = diff;
	diff = NULL;
	snprintf(s->changes[s->nchanges].xattrs, sizeof(s->changes[0].xattrs), "%s",
		 xattrs ? xattrs : "");
	s->nchanges++;
out:
	pthread_mutex_unlock(&s->lock);
	json_object_put(diff);
	if (r < 0)
		cli_err("out of memory");
	return r;
}

static json_object *old_new(json_object *old, json_object *now)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "old", old);
	json_object_object_add(o, "new", now);
	return o;
}

/* an xattr value as hex, or JSON null when the name is absent on that side */
static json_object *hex_or_null(const uint8_t *v, size_t len)
{
	return v ? cli_json_hex(v, len) : NULL;
}

static int xattr_pair(void *ctx, const char *name, const uint8_t *old, size_t oldlen,
		      const uint8_t *now, size_t nowlen)
{
	json_object_object_add(ctx, name, old_new(hex_or_null(old, oldlen),
						   hex_or_null(now, nowlen)));
	return 0;
}

/* The old and new value of every field in @what. Return: the object, or NULL (no memory). */
static json_object *diff_of(const struct vg_scan_rec *then, const struct vg_scan_rec *now,
			    uint32_t what)
{
	size_t cap = 4 * (then->target_len > now->target_len ? then->target_len
							       : now->target_len) + 160;
	char *a = malloc(cap), *b = malloc(cap);
	json_object *o = json_object_new_object();

	if (!a || !b || !o) {
		free(a);
		free(b);
		json_object_put(o);
		return NULL;
	}
	for (unsigned int i = 0; i < VG_SCAN__NFIELDS; i++) {
		uint32_t bit = 1u << i;

		if (!(what & bit))
			continue;
		if (bit == VG_SCAN_XATTRS) {
			json_object *x = json_object_new_object();

			vg_scan_xattr_each(then, now, xattr_pair, x);
			json_object_object_add(o, "xattrs", x);
		} else if (vg_scan_field_text(then, bit, a, cap) == 0 &&
			   vg_scan_field_text(now, bit, b, cap) == 0) {
			json_object_object_add(o, vg_scan_field_name(bit),
					       old_new(json_object_new_string(a),
						       json_object_new_string(b)));
		}
	}
	free(a);
	free(b);
	return o;
}

/* --update: the record as found goes into the new database (@rec is left empty). */
static int record_next(struct tree *t, struct scan *s, struct vg_scan_rec *rec)
{
	struct vg_diag d = { 0 };

	if (!s->next || vg_scan_db_add(s->next, rec, &d) == 0)
		return 0;
	tree_lock(t);
	cli_err("%s", d.msg);
	tree_unlock(t);
	return -ECANCELED;
}

enum { JUDGED_SAME, JUDGED_ADDED, JUDGED_CHANGED };

/*
 * @now against its record in s->db (marked seen): a change, with its old
 * and new values, goes into the list. --check and --compare share it.
 * Return: JUDGED_*, or -1 (said: no memory).
 */
static int judge(struct scan *s, const struct vg_scan_rec *now)
{
	struct vg_scan_rec *then = vg_scan_db_lookup(s->db, now->path, now->path_len);
	char xs[256] = "";
	json_object *diff;
	uint32_t what;

	if (!then)
		return add_change(s, now->path, CH_ADDED, NULL, NULL) < 0 ? -1 : JUDGED_ADDED;
	then->seen = true;
	what = vg_scan_compare(then, now);
	if (!what)
		return JUDGED_SAME;
	if (what & VG_SCAN_XATTRS)
		vg_scan_xattr_diff(then, now, xs, sizeof(xs));
	diff = diff_of(then, now, what);
	if (!diff) {
		cli_err("out of memory");
		return -1;
	}
	return add_change(s, now->path, what, xs, diff) < 0 ? -1 : JUDGED_CHANGED;
}

/* Record @rec (init) or compare it with the database (check). */
static int handle(struct tree *t, struct scan *s, struct vg_scan_rec *rec)
{
	struct vg_diag d = { 0 };
	int r = 0;

	if (!s->check) {
		/* the error may be about another record of the batch: d.msg names it */
		r = vg_scan_db_add(s->db, rec, &d);
		if (r < 0) {
			tree_lock(t);
			cli_err("%s", d.msg);
			tree_unlock(t);
			return -ECANCELED;
		}
		tree_count(t, TREE_OK, NULL);
		return 0;
	}
	{
		int j = judge(s, rec);

		if (j < 0)
			return -ECANCELED;
		if (j == JUDGED_SAME)
			tree_count(t, TREE_OK, NULL);
		else
			tree_count(t, TREE_FAIL, j == JUDGED_ADDED ? "added" : "changed");
		return record_next(t, s, rec);
	}
}

static int scan_file(struct tree *t, void *arg, const struct tree_file *f)
{
	struct scan *s = arg;
	struct vg_scan_rec rec;
	struct vg_diag d = { 0 };
	uint64_t n = 0;
	int r;

	r = vg_scan_rec_fill(&rec, f->path, strlen(f->path), f->fd, -1, NULL, f->st, &d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		tree_file_err(t, f->path, "%s", d.msg);
		tree_count(t, TREE_ERROR, "xattr-error");
		return 0;
	}
	r = vg_hasher_file(f->hasher, f->fd, f->st, s->algo, &rec.digest, &n, &d);
	if (r < 0) {
		vg_scan_rec_release(&rec);
		if (r == -ENOMEM)
			return r;
		tree_file_err(t, f->path, "%s", d.msg);
		tree_count(t, TREE_ERROR, "read-error");
		return 0;
	}
	tree_add_bytes(t, n);
	r = handle(t, s, &rec);
	vg_scan_rec_release(&rec);
	return r;
}

static int scan_other(struct tree *t, void *arg, const struct vg_walk_entry *e)
{
	struct scan *s = arg;
	struct vg_scan_rec rec;
	struct vg_diag d = { 0 };
	struct stat st;
	int r;

	if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		tree_file_err(t, e->path, "cannot stat: %s", strerror(errno));
		tree_count(t, TREE_ERROR, errno == ENOENT ? "vanished" : "stat-error");
		return 0;
	}
	r = vg_scan_rec_fill(&rec, e->path, e->path_len, -1, e->dirfd, e->name, &st, &d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		tree_file_err(t, e->path, "%s", d.msg);
		tree_count(t, TREE_ERROR, "xattr-error");
		return 0;
	}
	r = handle(t, s, &rec);
	vg_scan_rec_release(&rec);
	return r;
}

static const struct tree_ops scan_ops = { .file = scan_file, .other = scan_other };

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct change *)a)->path, ((const struct change *)b)->path);
}

static void what_list(const struct change *c, char *out, size_t cap)
{
	size_t used = 0;

	out[0] = 0;
	for (unsigned int i = 0; i < VG_SCAN__NFIELDS; i++) {
		if (!(c->what & (1u << i)))
			continue;
		used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "",
					 vg_scan_field_name(1u << i));
		if ((1u << i) == VG_SCAN_XATTRS && c->xattrs[0])
			used += (size_t)snprintf(out + used, cap - used, ": %s", c->xattrs);
		if (used >= cap)
			break;
	}
}

/* "  FIELD: OLD -> NEW" lines, and "  xattr NAME: OLDHEX -> NEWHEX" ("(none)" when absent). */
static void print_diff(FILE *out, json_object *diff)
{
	if (!diff)
		return;
	json_object_object_foreach(diff, field, v) {
		json_object *old, *now;

		if (strcmp(field, "xattrs") == 0) {
			json_object_object_foreach(v, name, x) {
				json_object_object_get_ex(x, "old", &old);
				json_object_object_get_ex(x, "new", &now);
				fprintf(out, "  xattr %s: %s -> %s\n", name,
				       old ? json_object_get_string(old) : "(none)",
				       now ? json_object_get_string(now) : "(none)");
			}
			continue;
		}
		json_object_object_get_ex(v, "old", &old);
		json_object_object_get_ex(v, "new", &now);
		fprintf(out, "  %s: %s -> %s\n", field, json_object_get_string(old),
		       json_object_get_string(now));
	}
}

static void report(FILE *out, struct scan *s, size_t checked, bool quiet)
{
	size_t added = 0, removed = 0, changed = 0;

	if (s->nchanges)
		qsort(s->changes, s->nchanges, sizeof(*s->changes), cmp_change);
	for (size_t i = 0; i < s->nchanges; i++) {
		const struct change *c = &s->changes[i];
		char what[512];

		if (c->what == CH_ADDED)
			added++;
		else if (c->what == CH_REMOVED)
			removed++;
		else
			changed++;
		if (s->json) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "file", cli_json_path(c->path));
			json_object_object_add(o, "change", json_object_new_string(
				c->what == CH_ADDED ? "added" : c->what == CH_REMOVED ? "removed" : "changed"));
			if (c->what != CH_ADDED && c->what != CH_REMOVED) {
				json_object *a = json_object_new_array();

				for (unsigned int b = 0; b < VG_SCAN__NFIELDS; b++)
					if (c->what & (1u << b))
						json_object_array_add(a, json_object_new_string(
							vg_scan_field_name(1u << b)));
				json_object_object_add(o, "what", a);
				if (c->xattrs[0])
					json_object_object_add(o, "xattrs",
							       json_object_new_string(c->xattrs));
				if (c->diff)
					json_object_object_add(o, "diff", json_object_get(c->diff));
			}
			fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
			continue;
		}
		if (c->what == CH_ADDED) {
			fputs("added: ", out);
			cli_put_path(out, c->path);
			fputc('\n', out);
		} else if (c->what == CH_REMOVED) {
			fputs("removed: ", out);
			cli_put_path(out, c->path);
			fputc('\n', out);
		} else {
			what_list(c, what, sizeof(what));
			fputs("changed: ", out);
			cli_put_path(out, c->path);
			fprintf(out, " (%s)\n", what);
			print_diff(out, c->diff);
		}
	}
	if (s->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "summary", json_object_new_boolean(1));
		json_object_object_add(o, "checked", json_object_new_int64((int64_t)checked));
		json_object_object_add(o, "added", json_object_new_int64((int64_t)added));
		json_object_object_add(o, "removed", json_object_new_int64((int64_t)removed));
		json_object_object_add(o, "changed", json_object_new_int64((int64_t)changed));
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else if (!quiet) {
		fprintf(out, "%zu entries checked: %zu added, %zu removed, %zu changed\n", checked, added,
		       removed, changed);
	}
}

/*
 * The report on stdout, and where --report and --on-change send it: the
 * file replaced whole (0640: it names files and digests), the command run
 * by /bin/sh with the report on its stdin and VIGIL_SCAN_DB,
 * VIGIL_SCAN_CHANGES in its environment, only when something changed.
 * Return: 0, or -1 (said: the file could not be written, or the command
 * could not run or failed).
 */
static int deliver(struct scan *s, size_t checked, bool quiet, const char *db,
		   const char *file, const char *cmd)
{
	char *buf = NULL, n[32];
	size_t len = 0;
	struct vg_diag d = { 0 };
	FILE *m;
	int r = 0, st;

	if (!file && !cmd) {
		report(stdout, s, checked, quiet);
		return 0;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		cli_err("out of memory");
		return -1;
	}
	report(m, s, checked, false);	/* the file and the command get the summary */
	if (fclose(m) != 0) {
		free(buf);
		cli_err("out of memory");
		return -1;
	}
	if (quiet) {
		report(stdout, s, checked, true);
	} else {
		fwrite(buf, 1, len, stdout);
	}
	fflush(stdout);
	if (file && vg_outfile_put(file, buf, len, 0640, 0, &d) < 0) {
		cli_err("--report: %s", d.msg);
		r = -1;
	}
	if (cmd && s->nchanges) {
		FILE *p;

		snprintf(n, sizeof(n), "%zu", s->nchanges);
		setenv("VIGIL_SCAN_DB", db, 1);
		setenv("VIGIL_SCAN_CHANGES", n, 1);
		signal(SIGPIPE, SIG_IGN);	/* a command that does not read its stdin */
		p = popen(cmd, "w");
		if (!p) {
			cli_err("--on-change: cannot run '%s': %s", cmd, strerror(errno));
			free(buf);
			return -1;
		}
		fwrite(buf, 1, len, p);
		st = pclose(p);
		if (st != 0) {
			cli_err("--on-change: '%s' %s %d", cmd,
				st > 0 && WIFEXITED(st) ? "exited with status" : "failed:",
				st > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : st);
			r = -1;
		}
	}
	free(buf);
	return r;
}

/* Return: whether @path is @dir or under it (path components, as recorded). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == 0 || path[n] == '/' || (n && dir[n - 1] == '/');
}

/* --update --limit: a copy of @r, outside the limit, into @next. Return: 0, -1 (said). */
static int keep_rec(struct vg_scan_db *next, const struct vg_scan_rec *r)
{
	struct vg_scan_rec c = *r;
	struct vg_diag d = { 0 };

	c.path = strndup(r->path, r->path_len);
	c.xattrs = r->xattrs_len ? malloc(r->xattrs_len) : NULL;
	c.target = r->target_len ? malloc(r->target_len) : NULL;
	if (!c.path || (r->xattrs_len && !c.xattrs) || (r->target_len && !c.target)) {
		vg_scan_rec_release(&c);
		cli_err("out of memory");
		return -1;
	}
	if (r->xattrs_len)
		memcpy(c.xattrs, r->xattrs, r->xattrs_len);
	if (r->target_len)
		memcpy(c.target, r->target, r->target_len);
	if (vg_scan_db_add(next, &c, &d) < 0) {
		vg_scan_rec_release(&c);
		cli_err("%s", d.msg);
		return -1;
	}
	return 0;
}

/*
 * --compare DB1 DB2: the report --check would give had DB2's tree been
 * checked against DB1. Return: the exit status.
 */
static int compare_dbs(struct scan *s, const char *p1, const char *p2,
		       const struct vg_hmac_key *hk, bool quiet)
{
	struct vg_scan_db *b = NULL;
	struct vg_diag d = { 0 };
	int rc = EXIT_ERROR;

	if (vg_scan_db_open(p1, hk->key, hk->len, &s->db, &d) < 0 ||
	    vg_scan_db_open(p2, hk->key, hk->len, &b, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	for (size_t i = 0; i < vg_scan_db_count(b); i++) {
		if (judge(s, vg_scan_db_rec(b, i)) < 0)
			goto out;
	}
	for (size_t i = 0; i < vg_scan_db_count(s->db); i++) {
		struct vg_scan_rec *then = vg_scan_db_rec(s->db, i);

		if (!then->seen && add_change(s, then->path, CH_REMOVED, NULL, NULL) < 0)
			goto out;
	}
	report(stdout, s, vg_scan_db_count(b), quiet);
	rc = s->nchanges ? EXIT_NOTVERIFIED : EXIT_OK;
out:
	vg_scan_db_free(b);
	return rc;
}

/*
 * --update: keep DB as DB.old before the new one replaces it. A hard link
 * under a temporary name, renamed over DB.old: DB stays in place, and
 * DB.old is always a whole database. Return: 0, or -1 (said).
 */
static int keep_old(const char *db)
{
	size_t n = strlen(db);
	char *old = malloc(n + 5), *tmp = malloc(n + 24);
	int r = -1;

	if (!old || !tmp) {
		cli_err("out of memory");
		goto out;
	}
	snprintf(old, n + 5, "%s.old", db);
	snprintf(tmp, n + 24, "%s.old.vigil-tmp", db);
	(void)unlink(tmp);	/* a leftover of a killed --update */
	if (link(db, tmp) < 0) {
		cli_file_err(db, "cannot keep the previous database as %s: %s", old, strerror(errno));
		goto out;
	}
	if (rename(tmp, old) < 0) {
		cli_file_err(old, "%s", strerror(errno));
		(void)unlink(tmp);
		goto out;
	}
	r = 0;
out:
	free(old);
	free(tmp);
	return r;
}

int cmd_scan(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "init", no_argument, 'i', 'i' },
		CLI_OPT_OUTPUT('o'),
		{ "check", required_argument, 'C', 'C' },
		{ "update", required_argument, 'U', 'U' },
		{ "compare", required_argument, 'D', 'D' },
		{ "limit", required_argument, 'L', 'L' },
		{ "report", required_argument, 0, 'R' },
		{ "on-change", required_argument, 0, 'X' },
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_CONFIG('c'),
		CLI_OPT_ALGO('a'),
		CLI_OPT_CROSS_MOUNTS,
		CLI_OPT_JSON('j'),
		CLI_OPT_JOBS('J'),
		CLI_OPT_QUIET('q'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_HELP,
	};
	const char *check = NULL;
	bool update = false;
	const char *compare = NULL;
	char *limit = NULL;
	const char *report_file = NULL, *on_change = NULL;
	struct scan *s = NULL;
	struct vg_config cfg;
	struct vg_hmac_key hk = { 0 };
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_outargs o = { 0 };
	struct tree_opts to = { .recursive = true, .all_links = true };
	struct tree_stats st;
	struct tree t;
	struct vg_diag d = { 0 };
	bool init = false, have_tree = false;
	int c, rc = EXIT_ERROR;
	char **roots = NULL;
	int nroots = 0;
	const struct cli_groups gr = { .cfg = &cf, .tree = &to, .keys = &k, .out = &o };

	vg_config_init(&cfg);
	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'i':
			init = true;
			break;
		case 'D':
			compare = optarg;
			break;
		case 'L':
			limit = optarg;
			break;
		case 'R':
			report_file = optarg;
			break;
		case 'X':
			on_change = optarg;
			break;
		case 'C':
		case 'U':
			if (check) {
				cli_err("give one of --check DB or --update DB");
				goto out;
			}
			check = optarg;
			update = c == 'U';
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	if (compare && (init || check)) {
		cli_err("give one of --init, --check DB, --update DB or --compare DB1 DB2");
		goto out;
	}
	if ((limit || report_file || on_change) && !check) {
		cli_err("--limit, --report and --on-change go with --check DB or --update DB");
		goto out;
	}
	if (compare) {
		if (optind != argc - 1) {
			cli_err("--compare DB1 DB2: two databases");
			goto out;
		}
	} else if (init == !!check) {
		cli_err("give exactly one of --init, --check DB or --update DB");
		goto out;
	}
	if (init && !o.output) {
		cli_err("--init needs --output DB");
		goto out;
	}
	if (init && optind >= argc) {
		cli_err("--init needs a PATH to record");
		goto out;
	}
	if (check && optind < argc) {
		cli_err("--%s walks the roots recorded in the database; give no PATH",
			update ? "update" : "check");
		goto out;
	}
	if (cli_load_config(cf.config, &cfg) < 0)
		goto out;
	if (!k.hmac_key)
		k.hmac_key = cfg.hmac_key;
	if (!k.hmac_key) {
		cli_err("scan databases are authenticated: give --hmac-key KEYFILE or set key.hmac");
		goto out;
	}
	if (cli_keyargs_load_hmac(&k, &cfg, &hk) < 0)
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s) {
		cli_err("out of memory");
		goto out;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->json = o.json;
	if (compare) {
		rc = compare_dbs(s, compare, argv[optind], &hk, to.quiet);
		goto out;
	}
	if (init) {
		s->algo = cf.algo >= 0 ? (unsigned int)cf.algo : cfg.algo;
		roots = argv + optind;
		nroots = argc - optind;
		if (vg_scan_db_create(o.output, s->algo, roots, (size_t)nroots, hk.key, hk.len, &s->db,
				      &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
	} else {
		if (vg_scan_db_open(check, hk.key, hk.len, &s->db, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
		s->check = true;
		s->algo = vg_scan_db_algo(s->db);
		nroots = (int)vg_scan_db_nroots(s->db);
		roots = calloc((size_t)nroots + 1, sizeof(*roots));
		if (!roots) {
			cli_err("out of memory");
			goto out;
		}
		for (int i = 0; i < nroots; i++)
			roots[i] = (char *)vg_scan_db_root(s->db, (size_t)i);
		s->roots = roots;
		if (limit) {
			size_t ll = strlen(limit);
			int i;

			while (ll > 1 && limit[ll - 1] == '/')
				limit[--ll] = 0;
			for (i = 0; i < nroots && !under(limit, roots[i]); i++)
				;
			if (i == nroots) {
				cli_err("--limit %s: not under a root of %s (the roots are recorded as "
					"given to --init: %s%s)", limit, check, roots[0],
					nroots > 1 ? ", ..." : "");
				goto out;
			}
		}
		/* the new database is written beside DB and renamed over it at the end */
		if (update && vg_scan_db_create(check, s->algo, roots, (size_t)nroots, hk.key, hk.len,
						&s->next, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
	}
	to.config = &cfg;
	have_tree = true;
	if (tree_run(&to, &scan_ops, s, limit ? &limit : roots, limit ? 1 : nroots, &st, &t) < 0)
		goto out;
	if (init) {
		if (st.n[TREE_ERROR]) {
			cli_err("%llu entries could not be recorded; %s not written",
				(unsigned long long)st.n[TREE_ERROR], o.output);
			goto out;
		}
		if (vg_scan_db_commit(s->db, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
		if (!to.quiet)
			printf("recorded %llu entries (%llu files, %.1f MB) in %s\n",
			       (unsigned long long)st.n[TREE_OK], (unsigned long long)st.files,
			       (double)st.bytes / 1e6, o.output);
		rc = EXIT_OK;
	} else {
		size_t checked = (size_t)(st.n[TREE_OK] + st.n[TREE_FAIL]);

		for (size_t i = 0; i < vg_scan_db_count(s->db); i++) {
			struct vg_scan_rec *rec = vg_scan_db_rec(s->db, i);

			if (limit && !under(rec->path, limit)) {
				/* outside the limit: not looked at; --update keeps the record */
				if (s->next && keep_rec(s->next, rec) < 0)
					goto out;
				continue;
			}
			if (!rec->seen && add_change(s, rec->path, CH_REMOVED, NULL, NULL) < 0)
				goto out;
		}
		bool delivered = deliver(s, checked, to.quiet, check, report_file, on_change) == 0;

		rc = st.n[TREE_ERROR] || !delivered ? EXIT_ERROR
		     : s->nchanges ? EXIT_NOTVERIFIED : EXIT_OK;
		if (update && st.n[TREE_ERROR]) {
			cli_err("%llu entries could not be read; %s not updated",
				(unsigned long long)st.n[TREE_ERROR], check);
		} else if (update) {
			if (keep_old(check) < 0 || vg_scan_db_commit(s->next, &d) < 0) {
				if (d.msg[0])
					cli_err("%s", d.msg);
				rc = EXIT_ERROR;
				goto out;
			}
			if (!to.quiet && !s->json)
				printf("%s updated (%zu entries); the previous database is %s.old\n",
				       check, checked, check);
		}
	}
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
out:
	if (have_tree)
		tree_release(&t);
	if (s) {
		for (size_t i = 0; i < s->nchanges; i++) {
			free(s->changes[i].path);
			json_object_put(s->changes[i].diff);
		}
		vg_scan_db_free(s->next);
		free(s->changes);
		free(s->roots);
		vg_scan_db_free(s->db);
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
	vg_hmac_key_wipe(&hk);
	vg_config_release(&cfg);
	return rc;
}
