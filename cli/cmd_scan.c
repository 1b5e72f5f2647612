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
 * differs, is refused before anything is compared; one bound to a TPM NV
 * counter (--tpm-counter) and older than the counter says, too
 * (scan_counter.c). The scan rules of vigil.conf (vigil/scan_rules.h)
 * choose the attributes compared per path and the paths left out;
 * --explain and --import-aide are in scan_rules_cli.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "opts.h"
#include "scan_archive.h"
#include "scan_counter.h"
#include "scan_report.h"
#include "scan_rules_cli.h"
#include "scan_update.h"
#include "tree.h"
#include "vigil/outfile.h"
#include "vigil/scan.h"
#include "vigil/scan_rules.h"

static const char help[] =
	"usage: vigil scan --init -o DB [--config FILE] [--hmac-key KEYFILE] [--algo ALGO]\n"
	"                  [--tpm-counter[=NVINDEX]] PATH...\n"
	"       vigil scan --check DB [--config FILE] [--hmac-key KEYFILE] [--json]\n"
	"       vigil scan --update DB [--config FILE] [--hmac-key KEYFILE] [--json]\n"
	"       vigil scan --compare DB1 DB2 [--config FILE] [--hmac-key KEYFILE] [--json]\n"
	"       vigil scan --explain PATH [--config FILE] [--json]\n"
	"       vigil scan --import-aide AIDE.CONF [MORE.CONF...]\n"
	"\n"
	"Record a tree in a database (--init), or compare the tree with it (--check):\n"
	"entries added, removed, and changed in type, content, size, mode, uid, gid,\n"
	"mtime, ctime, inode, link count, xattrs or link target, each with its old\n"
	"and new value.\n"
	"Mount points are not crossed. The scan rules of the configuration (scan.group,\n"
	"scan.rule) choose the attributes compared per path, and the paths left out.\n"
	"The database is authenticated with an HMAC-SHA256 under a key derived from\n"
	"the HMAC key; an altered database is refused.\n"
	"  -i, --init             record PATH... into DB\n"
	"  -o, --output DB        the database to write (--init)\n"
	"  -C, --check DB         compare the recorded roots with DB\n"
	"  -U, --update DB        check, then replace DB with the tree as found (the\n"
	"                         previous database is kept as DB.old); nothing is\n"
	"                         written when an entry could not be read\n"
	"  -D, --compare DB1 DB2  what changed from DB1 to DB2 (two databases, no tree)\n"
	"      --explain PATH     which scan rule of the configuration decides for PATH\n"
	"                         (scan.rule, scan.group: docs/config.md) and why\n"
	"      --import-aide FILE translate aide.conf FILE (and the files after it, as\n"
	"                         aide.conf.d/*) into vigil.conf scan lines (stdout); what\n"
	"                         could not be is named on stderr (exit 1)\n"
	"      --report FILE      --check, --update: also write the report to FILE (replaced\n"
	"                         whole, mode 0640)\n"
	"      --on-change CMD    --check, --update: when something changed, run CMD with\n"
	"                         /bin/sh, the report on its stdin (as dailyaidecheck mails it)\n"
	"  -L, --limit PATH       --check, --update: only PATH and what is under it (as\n"
	"                         recorded: under one of the database's roots); --update\n"
	"                         keeps the records of the rest as they were\n"
	"      --tpm-counter[=NVINDEX]\n"
	"                         --init, --update: bind DB to a TPM NV counter (default\n"
	"                         0x01564753, defined if absent; the TPM of --tcti,\n"
	"                         tpm.tcti or $VIGIL_TCTI): an older copy is then\n"
	"                         refused as rolled-back; --check: require DB to be\n"
	"                         bound. A bound DB is always checked against the TPM\n"
	"      --ignore-tpm-counter  --check: check a bound DB without the TPM (a\n"
	"                         rolled-back copy is then not detected)\n"
	"  -H, --hmac-key FILE    key (default: key.hmac of the configuration); any key file\n"
	CLI_HELP_KEYOPTS
	CLI_HELP_CONFIG
	"  -a, --algo ALGO        content hash for --init (default from the config)\n"
	CLI_HELP_CROSS_MOUNTS
	"  -j, --json             --check, --update, --compare: one JSON object per change\n"
	"                         (old and new values in \"diff\"), then a summary;\n"
	"                         --explain: one JSON document\n"
	"      --format FMT       the report: text (the counts, then each entry, each\n"
	"                         change with its old and new values), json (as --json)\n"
	"                         or aide (AIDE 0.18's report layout, for its parsers)\n"
	CLI_HELP_JOBS("J")
	"  -q, --quiet            no progress line, no summary\n"
	"Exit status: 0 recorded / no change, 1 changes found (--update: and recorded),\n"
	"2 usage or operational\n"
	"error (an altered database included).\n";

struct scan {
	bool check, json;
	unsigned int algo;
	struct vg_scan_db *db;
	struct vg_scan_db *next;	/* --update: the database being written */
	struct scan_changes ch;
	char **roots;
	const struct vg_scan_rules *rules;	/* the config's scan rules; NULL: none */
	struct scan_archive *arch;	/* a "trust" baseline: the archive's database, or NULL */
	const char *limit;		/* --limit, or NULL */
	size_t nroots;
	atomic_size_t left;		/* --init: packaged files not recorded (the archive's) */
};

/* Return: whether a `!` scan rule excludes @path (st_mode @mode); @prune: and not to walk it. */
static bool excluded(const struct scan *s, const char *path, size_t len, uint32_t mode,
		     bool *prune)
{
	struct vg_scan_rule_info ri;

	if (vg_scan_rules_match(s->rules, path, len, mode, &ri) != VG_SCAN_SEL_NEGATIVE)
		return false;
	if (prune)
		*prune = ri.prune;
	return true;
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

enum { JUDGED_SAME, JUDGED_ADDED, JUDGED_CHANGED, JUDGED_EXCLUDED };

/*
 * @now against its record in s->db (marked seen): a change, with its old
 * and new values, goes into the list. --check and --compare share it.
 * Return: JUDGED_*, or -1 (said: no memory).
 */
static int judge(struct scan *s, const struct vg_scan_rec *now)
{
	struct vg_scan_rec *then = vg_scan_db_lookup(s->db, now->path, now->path_len);
	struct vg_scan_rule_info ri;
	uint32_t what;

	if (vg_scan_rules_match(s->rules, now->path, now->path_len, now->mode, &ri) ==
	    VG_SCAN_SEL_NEGATIVE) {
		if (then)
			then->seen = true;
		return JUDGED_EXCLUDED;
	}
	if (!then)
		return changes_add(&s->ch, now->path, CH_ADDED, now->mode) < 0 ? -1 : JUDGED_ADDED;
	then->seen = true;
	what = vg_scan_rules_filter(ri.mask, then, now, vg_scan_compare(then, now));
	if (!what)
		return JUDGED_SAME;
	return changes_add_diff(&s->ch, then, now, what) < 0 ? -1 : JUDGED_CHANGED;
}

/* Whether the archive judges @path: a "trust" baseline decides for it. */
static bool by_archive(const struct scan *s, const char *path, size_t len)
{
	return s->arch && vg_scan_rules_baseline_of(s->rules, path, len, NULL) ==
				  VG_SCAN_BASELINE_TRUST;
}

/*
 * --check: @rec judged by the archive when a package ships it (a
 * conffile that differs: by the scan's database after all, the admin's
 * to change). Return: 1 judged, 0 not the archive's, -ECANCELED (said).
 */
static int archive_judge(struct tree *t, struct scan *s, struct vg_scan_rec *rec, int fd,
			 struct vg_hasher *h)
{
	struct scan_verdict v;
	struct vg_scan_rec *then;
	int r;

	if (!by_archive(s, rec->path, rec->path_len))
		return 0;
	r = scan_archive_judge(s->arch, rec, fd, h, &v);
	if (r <= 0)
		return r < 0 ? -ECANCELED : 0;
	if (v.conffile && v.what) {
		scan_verdict_release(&v);
		return 0;
	}
	then = vg_scan_db_lookup(s->db, rec->path, rec->path_len);
	if (then)
		then->seen = true;	/* recorded before a package shipped it */
	if (!v.what) {
		tree_count(t, TREE_OK, NULL);
		scan_verdict_release(&v);
		/* a conffile as its package has it stays in the scan's database */
		return v.conffile ? (record_next(t, s, rec) < 0 ? -ECANCELED : 1) : 1;
	}
	tree_count(t, TREE_FAIL, "changed");
	{
		/* the disk's content in the archive's algorithm, beside the archive's */
		struct vg_scan_rec shown = *rec;

		if (v.disk.len)
			shown.digest = v.disk;
		r = changes_add_diff_archive(&s->ch, &v.then, &shown, v.what, v.pkg);
	}
	scan_verdict_release(&v);
	return r < 0 ? -ECANCELED : 1;
}

/* Record @rec (init) or compare it with the database (check). */
static int handle(struct tree *t, struct scan *s, struct vg_scan_rec *rec, int fd,
		  struct vg_hasher *h)
{
	struct vg_diag d = { 0 };
	int r = 0;

	if (!s->check) {
		/* a file a package ships, not a conffile: the archive is its record */
		if (by_archive(s, rec->path, rec->path_len) &&
		    scan_archive_ships(s->arch, rec->path, rec->path_len)) {
			atomic_fetch_add(&s->left, 1);
			return 0;
		}
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
	r = archive_judge(t, s, rec, fd, h);
	if (r)
		return r < 0 ? r : 0;
	{
		int j = judge(s, rec);

		if (j < 0)
			return -ECANCELED;
		if (j == JUDGED_EXCLUDED)
			return 0;
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

	if (excluded(s, f->path, strlen(f->path), f->st->st_mode, NULL)) {
		tree_count(t, TREE_SKIP, "excluded");
		return 0;
	}
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
	r = handle(t, s, &rec, f->fd, f->hasher);
	vg_scan_rec_release(&rec);
	return r;
}

static int scan_other(struct tree *t, void *arg, const struct vg_walk_entry *e)
{
	struct scan *s = arg;
	struct vg_scan_rec rec;
	struct vg_diag d = { 0 };
	struct stat st;
	bool prune = false;
	int r, serr;

	serr = fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
	if (excluded(s, e->path, e->path_len, serr ? 0 : st.st_mode, &prune)) {
		tree_count(t, TREE_SKIP, "excluded");
		return e->type == VG_WALK_DIR && prune ? VG_WALK_SKIP : 0;
	}
	if (serr) {
		tree_file_err(t, e->path, "cannot stat: %s", strerror(serr));
		tree_count(t, TREE_ERROR, serr == ENOENT ? "vanished" : "stat-error");
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
	r = handle(t, s, &rec, -1, NULL);
	vg_scan_rec_release(&rec);
	return r;
}

static const struct tree_ops scan_ops = { .file = scan_file, .other = scan_other };

/* Return: whether @path is @dir or under it (path components, as recorded). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == 0 || path[n] == '/' || (n && dir[n - 1] == '/');
}

/* the default trust database, as vigild's (trust.db in vigil.conf) */
#define SCAN_TRUST_DB "/var/lib/vigil/trust.db"

/* A "trust" baseline: the archive's database, authenticated with the scan's key. */
static int open_archive(struct scan *s, const struct vg_config *cfg, const struct vg_hmac_key *hk)
{
	if (!vg_scan_rules_has_trust(s->rules))
		return 0;
	s->ch.archive_db = cfg->trust_db ? cfg->trust_db : SCAN_TRUST_DB;
	return scan_archive_open(s->ch.archive_db, hk, s->algo, &s->arch);
}

/* A packaged file the walk never met: removed, if it is where this check looked. */
static int archive_unseen(void *arg, const char *path, const char *pkg, uint32_t mode)
{
	struct scan *s = arg;
	size_t len = strlen(path), i;

	for (i = 0; i < s->nroots && !under(path, s->roots[i]); i++)
		;
	if (i == s->nroots || (s->limit && !under(path, s->limit)) ||
	    !by_archive(s, path, len) || excluded(s, path, len, mode, NULL))
		return 0;
	return changes_add_archive(&s->ch, path, CH_REMOVED, mode, pkg) < 0 ? -1 : 0;
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

		if (!then->seen && !excluded(s, then->path, then->path_len, then->mode, NULL) &&
		    changes_add(&s->ch, then->path, CH_REMOVED, then->mode) < 0)
			goto out;
	}
	s->ch.checked = vg_scan_db_count(b);
	changes_report(stdout, &s->ch, quiet);
	rc = s->ch.n ? EXIT_NOTVERIFIED : EXIT_OK;
out:
	vg_scan_db_free(b);
	return rc;
}

int cmd_scan(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "init", no_argument, 'i', 'i' },
		CLI_OPT_OUTPUT('o'),
		{ "check", required_argument, 'C', 'C' },
		{ "update", required_argument, 'U', 'U' },
		{ "compare", required_argument, 'D', 'D' },
		{ "explain", required_argument, 0, 'E' },
		{ "import-aide", required_argument, 0, 'A' },
		{ "limit", required_argument, 'L', 'L' },
		{ "report", required_argument, 0, 'R' },
		{ "on-change", required_argument, 0, 'X' },
		{ "format", required_argument, 0, 'F' },
		{ "tpm-counter", optional_argument, 0, 'T' },
		{ "ignore-tpm-counter", no_argument, 0, 'I' },
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
	const char *compare = NULL, *explain = NULL, *import_aide = NULL;
	char *limit = NULL;
	const char *report_file = NULL, *on_change = NULL;
	int fmt = -1;	/* enum scan_format */
	struct scan *s = NULL;
	struct scan_counter ctr = { 0 };
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
		case 'E':
			explain = optarg;
			break;
		case 'A':
			import_aide = optarg;
			break;
		case 'R':
			report_file = optarg;
			break;
		case 'T':
			if (scan_counter_option(&ctr, optarg) < 0)
				goto out;
			break;
		case 'I':
			ctr.ignore = true;
			break;
		case 'X':
			on_change = optarg;
			break;
		case 'F':
			if (strcmp(optarg, "text") == 0) {
				fmt = SCAN_TEXT;
			} else if (strcmp(optarg, "json") == 0) {
				fmt = SCAN_JSON;
			} else if (strcmp(optarg, "aide") == 0) {
				fmt = SCAN_AIDE;
			} else {
				cli_err("--format %s: give text, json or aide", optarg);
				goto out;
			}
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
	if (explain || import_aide) {
		if (init || check || compare || limit || (explain && (optind < argc || import_aide))) {
			cli_err("--explain PATH and --import-aide FILE... go alone (with --config, --json)");
			goto out;
		}
		if (import_aide) {
			rc = scan_import_aide(import_aide, argv + optind, argc - optind);
			goto out;
		}
		if (cli_load_config(cf.config, &cfg) == 0)
			rc = scan_explain(&cfg, explain, o.json);
		goto out;
	}
	if (compare && (init || check)) {
		cli_err("give one of --init, --check DB, --update DB or --compare DB1 DB2");
		goto out;
	}
	if ((ctr.want && compare) || (ctr.ignore && (!check || update || ctr.want))) {
		cli_err("--tpm-counter goes with --init, --check or --update; "
			"--ignore-tpm-counter with --check alone");
		goto out;
	}
	if (fmt >= 0 && init) {
		cli_err("--format goes with --check, --update or --compare");
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
	if (init && strcmp(o.output, "-") == 0) {
		cli_err("-o -: a database is a file, not standard output");
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
	ctr.tcti = k.ko.tcti;
	s = calloc(1, sizeof(*s));
	if (!s) {
		cli_err("out of memory");
		goto out;
	}
	s->json = o.json;
	s->rules = cfg.scan_rules;
	changes_init(&s->ch, fmt >= 0 ? (enum scan_format)fmt : o.json ? SCAN_JSON : SCAN_TEXT,
		     compare ? compare : check);
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
		if (open_archive(s, &cfg, &hk) < 0)
			goto out;
		if (scan_counter_prepare(&ctr, s->db, true) < 0)
			goto out;
	} else {
		if (vg_scan_db_open(check, hk.key, hk.len, &s->db, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
		if (scan_counter_verify(&ctr, s->db, check, update) < 0)
			goto out;
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
		s->nroots = (size_t)nroots;
		s->limit = limit;
		if (open_archive(s, &cfg, &hk) < 0)
			goto out;
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
		if (update && scan_counter_prepare(&ctr, s->next, false) < 0)
			goto out;
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
		if (scan_counter_advance(&ctr, o.output) < 0)
			goto out;
		if (!to.quiet)
			printf("recorded %llu entries (%llu files, %.1f MB) in %s\n",
			       (unsigned long long)st.n[TREE_OK], (unsigned long long)st.files,
			       (double)st.bytes / 1e6, o.output);
		if (!to.quiet && s->arch)
			printf("%zu packaged files left to the archive (%s)\n",
			       atomic_load(&s->left), s->ch.archive_db);
		rc = EXIT_OK;
	} else {
		size_t checked = (size_t)(st.n[TREE_OK] + st.n[TREE_FAIL]);

		for (size_t i = 0; i < vg_scan_db_count(s->db); i++) {
			struct vg_scan_rec *rec = vg_scan_db_rec(s->db, i);

			if (limit && !under(rec->path, limit)) {
				/* outside the limit: not looked at; --update keeps the record */
				if (s->next && scan_keep_rec(s->next, rec) < 0)
					goto out;
				continue;
			}
			if (!rec->seen && !excluded(s, rec->path, rec->path_len, rec->mode, NULL) &&
			    changes_add(&s->ch, rec->path, CH_REMOVED, rec->mode) < 0)
				goto out;
		}
		if (s->arch && scan_archive_unseen(s->arch, archive_unseen, s) != 0)
			goto out;
		s->ch.checked = checked;
		s->ch.archive = s->arch ? scan_archive_judged(s->arch) : 0;
		bool delivered = changes_deliver(&s->ch, to.quiet, report_file, on_change) == 0;

		rc = st.n[TREE_ERROR] || !delivered ? EXIT_ERROR
		     : s->ch.n ? EXIT_NOTVERIFIED : EXIT_OK;
		if (update && st.n[TREE_ERROR]) {
			cli_err("%llu entries could not be read; %s not updated",
				(unsigned long long)st.n[TREE_ERROR], check);
		} else if (update) {
			if (scan_keep_old(check) < 0 || vg_scan_db_commit(s->next, &d) < 0) {
				if (d.msg[0])
					cli_err("%s", d.msg);
				rc = EXIT_ERROR;
				goto out;
			}
			if (scan_counter_advance(&ctr, check) < 0) {
				rc = EXIT_ERROR;
				goto out;
			}
			if (!to.quiet && s->ch.format == SCAN_TEXT)
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
		changes_release(&s->ch);
		scan_archive_free(s->arch);
		vg_scan_db_free(s->next);
		free(s->roots);
		vg_scan_db_free(s->db);
		free(s);
	}
	scan_counter_release(&ctr);
	vg_hmac_key_wipe(&hk);
	vg_config_release(&cfg);
	return rc;
}
