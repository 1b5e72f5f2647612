/* SPDX-License-Identifier: MIT */
/*
 * trust_build.h - what `vigil trust build` (cmd_trust_build.c) keeps while
 * it runs, and where its packages and .debs come from (trust_sources.c:
 * dpkg-query, a directory of .debs, apt-get download). Not a library
 * interface: the CLI's own.
 */
#ifndef VIGIL_CLI_TRUST_BUILD_H
#define VIGIL_CLI_TRUST_BUILD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "vigil/trust.h"

/* an InRelease, where it comes from, its keys and lists (trust_lists.c, trust_apt.c) */
struct release {
	char *file;
	char *entry;		/* apt's sources entry ("FILE:N"), or NULL */
	char *dir;		/* a repository tree's dists/CODENAME, or NULL */
	char **lists;		/* the Packages lists it vouches for */
	size_t nlists;
	char **keyrings;	/* its own (Signed-By, apt's trusted); none: build's --keyring */
	size_t nkr;
	char **fprs;		/* Signed-By fingerprints */
	size_t nfpr;
	int keyfd;		/* a Signed-By key block (a memfd), or -1 */
	struct vg_trust_release rel;
	bool ok;
	int64_t dbid;	/* 0: not recorded yet */
};

struct target {
	char *name, *version, *arch;
	char *deb;	/* --all-debs: the file in --debs; --deb: the path as given */
	bool given;	/* --deb, --deb-list */
};

/* --local-deb FILE: the file and its control file's Package, Version, Architecture */
struct local_deb {
	char *path, *name, *version, *arch;
};

struct build {
	const char *lists, *debs;
	const char *keyrings[VG_TRUST_MAX_KEYRINGS];
	size_t nkr;
	char **given;	/* --deb, --deb-list: paths */
	size_t ngiven;
	struct local_deb *local;	/* --local-deb (trust_local_debs.c) */
	size_t nlocal;
	uint64_t local_recorded;
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	size_t nalgos;
	bool json, verbose, all_debs;
	bool apt;		/* the repositories apt is configured with (no --lists, --keyring) */
	bool allow_older;	/* --allow-older */
	bool downloaded;	/* --download: b->debs is apt-get download's */
	pid_t dlpid;		/* ... still running while the .debs are read (0: not) */
	atomic_int dldone;	/* set when it has exited */
	int dlstatus;		/* its exit status (-1: killed) */
	char **trusted;		/* apt's trusted keyrings, once asked */
	size_t ntrusted;
	bool trusted_loaded;
	struct release *rels;
	size_t nrels;
	struct vg_trust_packages pk;
	struct target *t;
	size_t nt, tcap;
	json_object *jrels, *jlists, *jfailed;
	uint64_t recorded, files, unverified, nodeb;
	uint64_t superseded;	/* installed versions the archive lists a newer one of */
	uint64_t older;		/* InReleases older than the database's (refused) */
	uint64_t fetched;	/* --download: asked of apt-get */
};

/* --local-deb FILE: read its control file and remember it (trust_local_debs.c). Return: 0, -1 (reported). */
int trust_local_add(struct build *b, const char *path);
/* Whether a --local-deb is the package NAME VERSION ARCH (which the archive is then not asked for). */
bool trust_local_names(const struct build *b, const char *name, const char *version, const char *arch);
void trust_local_free(struct build *b);
/* Record every --local-deb into @db, under a release of origin "local". Return: 0, -1 (reported). */
int trust_local_record(struct build *b, struct vg_trust_db *db);

/* Add a package to build (copies the strings). Return: 0, or -1 (out of memory). */
int trust_add_target(struct build *b, const char *name, const char *version, const char *arch,
		     const char *deb);
void trust_target_free(struct target *t);
/* The names in @dir that @keep accepts, sorted. Return: their count, or -1 (reported). */
ssize_t trust_list_dir(const char *dir, bool (*keep)(const char *name), char ***ret);
void trust_free_names(char **v, ssize_t n);
/* qsort's comparison of char * elements */
int trust_cmp_str(const void *a, const void *b);
bool trust_ends_with(const char *s, const char *suffix);
/* "@dir/@name", or NULL. */
char *trust_join(const char *dir, const char *name);
/*
 * Run @argv (execvp, no shell) in @cwd, stdin from /dev/null, stdout into
 * *@out (NUL-terminated) or /dev/null, stderr ours. Return: its exit status, or -1.
 */
int trust_run(char *const argv[], const char *cwd, char **out, size_t *outlen);
/* The installed packages (dpkg state ?i: ii, hi), those of @want (NAME or NAME:ARCH) if any. Return: 0 or -1 (reported). */
int trust_installed(struct build *b, char **want, int nwant);
/* Every NAME_VERSION_ARCH.deb of b->debs (those of @want if any). Return: 0 or -1 (reported). */
int trust_all_debs(struct build *b, char **want, int nwant);
/*
 * Start one apt-get download of every target a verified list has, into a
 * new temporary directory apt's _apt user owns; b->dlpid is the running
 * apt-get (0 when nothing was asked). Return: the directory, or NULL (reported).
 */
char *trust_download(struct build *b);
/* The name apt-get download gives @t's .deb (the epoch's ':' as %3a), in b->debs. Return: it, or NULL. */
char *trust_apt_deb_name(const struct build *b, const struct target *t, const char *arch);
/* Remove what apt-get download put in @dir, then @dir. */
void trust_remove_download(char *dir);
/* (trust_given_debs.c) --deb @path: add it to b->given. Return: 0 or -1 (reported). */
int trust_given_add(struct build *b, const char *path);
/*
 * --deb-list @path ("-": stdin): one .deb path a line (apt's
 * Pre-Install-Pkgs, Version 1), empty lines ignored; any other line is
 * an error naming it, and nothing is added. Return: 0 or -1 (reported).
 */
int trust_given_list(struct build *b, const char *path);
/*
 * Each of b->given as a target: the verified stanza (b->pk) with its
 * SHA-256 and size, else its file name's package. Return: 0 or -1 (reported).
 */
int trust_given_debs(struct build *b);

/* (trust_lists.c) Append an InRelease @file (taken over on success). Return: 0, -1 (no memory). */
int trust_release_add(struct build *b, char *file);
/* Whether @dir is a repository tree (DIR/dists/, or DIR/InRelease). */
bool trust_lists_is_tree(const char *dir);
/*
 * Every InRelease (apt's repositories, b->lists flat or a tree) verified
 * with its keys, refused when older than @old records for its source
 * (unless b->allow_older), and its lists loaded into b->pk.
 * Return: 0, -1 (said; nothing verified included).
 */
int trust_load_releases(struct build *b, struct vg_trust_db *old, int64_t now, unsigned int flags);
void trust_releases_free(struct build *b);
/* The name @r's source's Date is kept under in the database (apt's list name, a tree's path). */
const char *trust_release_name(const struct release *r);
/* (trust_apt.c) apt's repositories into b->rels, each with its Signed-By. Return: 0, -1 (said). */
int trust_apt_releases(struct build *b);

#endif
