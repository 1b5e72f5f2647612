// SPDX-License-Identifier: MIT
/*
 * trust_lists.c - the InReleases `vigil trust build` verifies and the
 * Packages lists each vouches for (trust_build.h): apt's repositories,
 * each with its own keys (trust_apt.c); a directory of apt's lists
 * (--lists DIR: *_InRelease and the lists whose names start like it); or
 * a repository tree (--lists REPO with REPO/dists/CODENAME/InRelease, or
 * a dists/CODENAME directory itself), whose lists are the InRelease's own
 * entries found beside it (plain or compressed). Each InRelease is
 * verified by gpgv, refused when its Date is older than the one the
 * existing database recorded for its source (a replayed older InRelease,
 * unless --allow-older), and only then are its lists loaded, each matched
 * to an entry by digest and size.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "trust_build.h"

static void jadd(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

int trust_release_add(struct build *b, char *file)
{
	struct release *n = realloc(b->rels, (b->nrels + 1) * sizeof(*n));

	if (!n)
		return -1;
	b->rels = n;
	memset(&n[b->nrels], 0, sizeof(*n));
	n[b->nrels].file = file;
	n[b->nrels].keyfd = -1;
	b->nrels++;
	return 0;
}

void trust_releases_free(struct build *b)
{
	for (size_t i = 0; i < b->nrels; i++) {
		struct release *r = &b->rels[i];

		free(r->file);
		free(r->entry);
		free(r->dir);
		trust_free_names(r->lists, (ssize_t)r->nlists);
		trust_free_names(r->keyrings, (ssize_t)r->nkr);
		trust_free_names(r->fprs, (ssize_t)r->nfpr);
		if (r->keyfd >= 0)
			close(r->keyfd);
		vg_trust_release_release(&r->rel);
	}
	free(b->rels);
	b->rels = NULL;
	b->nrels = 0;
	trust_free_names(b->trusted, (ssize_t)b->ntrusted);
	b->trusted = NULL;
	b->ntrusted = 0;
}

static bool is_inrelease(const char *name)
{
	return trust_ends_with(name, "_InRelease");
}

static bool is_packages(const char *name)
{
	static const char *const ext[] = { "_Packages", "_Packages.lz4", "_Packages.gz",
					   "_Packages.xz", "_Packages.bz2", "_Packages.zst" };

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (trust_ends_with(name, ext[i]))
			return true;
	return false;
}

/* apt's lists directory: each *_InRelease with the lists whose names start like it */
static int flat_releases(struct build *b)
{
	char **rn = NULL, **pn = NULL;
	ssize_t nr = trust_list_dir(b->lists, is_inrelease, &rn), np;
	int rc = -1;

	if (nr < 0)
		return -1;
	np = trust_list_dir(b->lists, is_packages, &pn);
	if (np < 0)
		goto out;
	for (ssize_t i = 0; i < nr; i++) {
		size_t plen = strlen(rn[i]) - strlen("InRelease");
		char *file = trust_join(b->lists, rn[i]);
		struct release *r;

		if (!file || trust_release_add(b, file) < 0) {
			free(file);
			cli_err("out of memory");
			goto out;
		}
		r = &b->rels[b->nrels - 1];
		for (ssize_t j = 0; j < np; j++) {
			char **nl;

			if (strncmp(pn[j], rn[i], plen) != 0)
				continue;
			nl = realloc(r->lists, (r->nlists + 1) * sizeof(*nl));
			if (!nl || !(nl[r->nlists] = trust_join(b->lists, pn[j]))) {
				if (nl)
					r->lists = nl;
				cli_err("out of memory");
				goto out;
			}
			r->lists = nl;
			r->nlists++;
		}
	}
	rc = 0;
out:
	trust_free_names(rn, nr);
	if (np > 0)
		trust_free_names(pn, np);
	return rc;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* one dists/CODENAME directory of a repository tree */
static int tree_release(struct build *b, const char *dir)
{
	char *file = trust_join(dir, "InRelease"), *d = strdup(dir);

	if (!file || !d || trust_release_add(b, file) < 0) {
		free(file);
		free(d);
		cli_err("out of memory");
		return -1;
	}
	b->rels[b->nrels - 1].dir = d;
	return 0;
}

static bool any_name(const char *name)
{
	return name[0] != '.';
}

/* REPO/dists/CODENAME/InRelease (or --lists a dists/CODENAME directory itself) */
static int tree_releases(struct build *b)
{
	char *dists, *in = trust_join(b->lists, "InRelease"), **names = NULL;
	ssize_t n;
	int rc = 0;

	if (!in) {
		cli_err("out of memory");
		return -1;
	}
	if (access(in, F_OK) == 0) {
		free(in);
		return tree_release(b, b->lists);
	}
	free(in);
	dists = trust_join(b->lists, "dists");
	if (!dists) {
		cli_err("out of memory");
		return -1;
	}
	n = trust_list_dir(dists, any_name, &names);
	for (ssize_t i = 0; rc == 0 && i < n; i++) {
		char *d = trust_join(dists, names[i]), *f = d ? trust_join(d, "InRelease") : NULL;

		if (!f) {
			cli_err("out of memory");
			rc = -1;
		} else if (access(f, F_OK) == 0) {
			rc = tree_release(b, d);
		}
		free(f);
		free(d);
	}
	if (n > 0)
		trust_free_names(names, n);
	free(dists);
	return n < 0 ? -1 : rc;
}

bool trust_lists_is_tree(const char *dir)
{
	char *in = trust_join(dir, "InRelease"), *d = trust_join(dir, "dists");
	bool tree = (in && access(in, F_OK) == 0) || (d && is_dir(d));

	free(in);
	free(d);
	return tree;
}

/*
 * A tree's release: the Packages lists its InRelease lists, each found
 * beside it plain or compressed (the first that exists; the digest
 * decides whether it is the one listed).
 */
static int tree_lists(struct release *r)
{
	static const char *const ext[] = { "", ".xz", ".gz", ".bz2", ".zst", ".lz4" };

	for (size_t i = 0; i < r->rel.nfiles; i++) {
		const char *p = r->rel.files[i].path;
		size_t l = strlen(p);

		if (!(l == 8 && strcmp(p, "Packages") == 0) &&
		    !(l > 9 && strcmp(p + l - 9, "/Packages") == 0))
			continue;
		if (strstr(p, "../") || p[0] == '/')
			continue;	/* the signed text names paths under the release only */
		for (size_t e = 0; e < sizeof(ext) / sizeof(ext[0]); e++) {
			char *f = NULL, **nl;

			if (asprintf(&f, "%s/%s%s", r->dir, p, ext[e]) < 0)
				return -1;
			if (access(f, R_OK) != 0) {
				free(f);
				continue;
			}
			nl = realloc(r->lists, (r->nlists + 1) * sizeof(*nl));
			if (!nl) {
				free(f);
				return -1;
			}
			r->lists = nl;
			nl[r->nlists++] = f;
			break;
		}
	}
	return 0;
}

static void date_text(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	strftime(out, cap, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&tt, &tm));
}

/*
 * The name a source's Date is kept under: where its InRelease is. apt's
 * list name (the URI's) for apt's and a lists directory's, whatever
 * directory holds them (the host's view of a chroot's included); a tree's
 * InRelease path.
 */
const char *trust_release_name(const struct release *r)
{
	const char *s = strrchr(r->file, '/');

	return r->dir || !s ? r->file : s + 1;
}

/* @r's Date against the one @old recorded for its source. Return: 0 fine, -1 refused (said). */
static int replay_check(struct build *b, struct vg_trust_db *old, struct release *r,
			json_object *jr)
{
	struct vg_diag d = { 0 };
	int64_t date = 0;
	int k;
	char was[40], now[40], msg[512];

	if (!old)
		return 0;
	k = vg_trust_db_source_date(old, trust_release_name(r), &r->rel, &date, &d);
	if (k < 0) {
		cli_err("%s", d.msg);
		return -1;
	}
	if (k == 0 || r->rel.date >= date)
		return 0;
	date_text(r->rel.date, now, sizeof(now));
	date_text(date, was, sizeof(was));
	snprintf(msg, sizeof(msg), "Date %s is older than %s, the Date of the newest InRelease "
		 "the database recorded for %s %s (a replayed older InRelease?)",
		 now, was, r->rel.origin ? r->rel.origin : "", r->rel.codename ? r->rel.codename :
		 r->rel.suite ? r->rel.suite : "");
	if (b->allow_older) {
		cli_file_err(r->file, "%s; accepted (--allow-older)", msg);
		return 0;
	}
	cli_file_err(r->file, "%s; its lists are not used (--allow-older accepts it)", msg);
	jadd(jr, "verified", json_object_new_boolean(0));
	jadd(jr, "error", cli_json_path(msg));
	jadd(jr, "older", json_object_new_boolean(1));
	return -1;
}

int trust_load_releases(struct build *b, struct vg_trust_db *old, int64_t now, unsigned int flags)
{
	size_t verified = 0, lists = 0;
	int r0 = b->apt ? trust_apt_releases(b) :
		 trust_lists_is_tree(b->lists) ? tree_releases(b) : flat_releases(b);

	if (r0 < 0 && !b->nlocal)
		return -1;
	if (r0 < 0)
		return 1;
	for (size_t i = 0; i < b->nrels; i++) {
		struct release *r = &b->rels[i];
		struct vg_diag d = { 0 };
		json_object *jr = json_object_new_object();
		const struct vg_trust_keys k = {
			.keyrings = r->nkr ? (const char *const *)r->keyrings : b->keyrings,
			.nkr = r->nkr ? r->nkr : b->nkr,
			.fprs = (const char *const *)r->fprs,
			.nfpr = r->nfpr,
		};

		jadd(jr, "file", cli_json_path(r->file));
		if (r->entry)
			jadd(jr, "source", cli_json_path(r->entry));
		if (vg_trust_release_verify_keys(r->file, &k, NULL, now, flags, &r->rel, &d) < 0) {
			cli_file_err(r->file, "%s; its lists are not used", d.msg);
			jadd(jr, "verified", json_object_new_boolean(0));
			jadd(jr, "error", cli_json_path(d.msg));
			json_object_array_add(b->jrels, jr);
			continue;
		}
		if (replay_check(b, old, r, jr) < 0) {
			json_object_array_add(b->jrels, jr);
			b->older++;
			continue;
		}
		r->ok = true;
		verified++;
		jadd(jr, "verified", json_object_new_boolean(1));
		jadd(jr, "origin", json_object_new_string(r->rel.origin ? r->rel.origin : ""));
		jadd(jr, "suite", json_object_new_string(r->rel.suite ? r->rel.suite : ""));
		jadd(jr, "codename", json_object_new_string(r->rel.codename ? r->rel.codename : ""));
		jadd(jr, "date", json_object_new_int64(r->rel.date));
		jadd(jr, "valid_until", json_object_new_int64(r->rel.valid_until));
		json_object_array_add(b->jrels, jr);
		if (r->dir && tree_lists(r) < 0) {
			cli_err("out of memory");
			return -1;
		}
		for (size_t j = 0; j < r->nlists; j++) {
			const struct vg_trust_relfile *ent = NULL;
			json_object *jl = json_object_new_object();

			jadd(jl, "file", cli_json_path(r->lists[j]));
			if (vg_trust_packages_load(&b->pk, r->lists[j], &r->rel, (uint32_t)i, &ent,
						   &d) < 0) {
				cli_file_err(r->lists[j], "%s; not used", d.msg);
				jadd(jl, "verified", json_object_new_boolean(0));
				jadd(jl, "error", cli_json_path(d.msg));
			} else {
				jadd(jl, "verified", json_object_new_boolean(1));
				jadd(jl, "listed_as", cli_json_path(ent->path));
				lists++;
			}
			json_object_array_add(b->jlists, jl);
		}
	}
	/* only --local-deb packages then: the archive vouches for nothing here */
	if (!verified && b->nlocal)
		return 1;
	if (!verified) {
		cli_err("%s: no InRelease verified (%zu found): nothing to build from",
			b->apt ? "apt's repositories" : b->lists, b->nrels);
		return -1;
	}
	if (!lists && b->nlocal)
		return 1;
	if (!lists) {
		cli_err("%s: no Packages list matches a verified InRelease: nothing to build from",
			b->apt ? "apt's repositories" : b->lists);
		return -1;
	}
	return 0;
}
