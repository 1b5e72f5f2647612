/* SPDX-License-Identifier: MIT */
/*
 * trust_build.h - what `vigil trust build` (cmd_trust_build.c) keeps while
 * it runs, and where its packages and .debs come from (trust_sources.c:
 * dpkg-query, a directory of .debs, apt-get download). Not a library
 * interface: the CLI's own.
 */
#ifndef VIGIL_CLI_TRUST_BUILD_H
#define VIGIL_CLI_TRUST_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "vigil/trust.h"

struct release {
	char *file;
	struct vg_trust_release rel;
	bool ok;
	int64_t dbid;	/* 0: not recorded yet */
};

struct target {
	char *name, *version, *arch;
	char *deb;	/* --all-debs: the file in --debs; --deb: the path as given */
	bool given;	/* --deb, --deb-list */
};

struct build {
	const char *lists, *debs;
	const char *keyrings[VG_TRUST_MAX_KEYRINGS];
	size_t nkr;
	char **given;	/* --deb, --deb-list: paths */
	size_t ngiven;
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	size_t nalgos;
	bool json, verbose, all_debs;
	struct release *rels;
	size_t nrels;
	struct vg_trust_packages pk;
	struct target *t;
	size_t nt, tcap;
	json_object *jrels, *jlists, *jfailed;
	uint64_t recorded, files, unverified, nodeb;
};

/* Add a package to build (copies the strings). Return: 0, or -1 (out of memory). */
int trust_add_target(struct build *b, const char *name, const char *version, const char *arch,
		     const char *deb);
void trust_target_free(struct target *t);
/* The names in @dir that @keep accepts, sorted. Return: their count, or -1 (reported). */
ssize_t trust_list_dir(const char *dir, bool (*keep)(const char *name), char ***ret);
void trust_free_names(char **v, ssize_t n);
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
/* apt-get download every target into a new temporary directory. Return: it, or NULL (reported). */
char *trust_download(struct build *b);
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

#endif
