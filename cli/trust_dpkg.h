/* SPDX-License-Identifier: MIT */
/*
 * trust_dpkg.h - what dpkg's own state says about installed files beyond
 * the packages' contents, read under a root (trust_dpkg.c): diversions
 * (dpkg-divert), statoverrides (dpkg-statoverride), the alternatives'
 * links (update-alternatives), path-exclude/path-include (dpkg.cfg), and
 * the root's users and groups by name (dpkg gives a file the owner its
 * archive names, resolved on the system). `vigil trust verify` and the
 * archive baseline of `vigil scan` judge files as dpkg left them with it.
 * Not a library interface: the CLI's own.
 */
#ifndef VIGIL_CLI_TRUST_DPKG_H
#define VIGIL_CLI_TRUST_DPKG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trust_diversion {
	char *from, *to, *by;	/* by ":" for a local diversion */
};

struct trust_statoverride {
	char *path;
	uint32_t uid, gid, mode;	/* mode: permission bits (07777) */
	char *user, *group;		/* as written ("root", "#0") */
};

struct trust_idname {
	char *name;
	uint32_t id;
};

/* one link of an alternative: the master's or a slave's */
struct trust_altlink {
	char *path;		/* /usr/bin/awk */
	char *name;		/* awk: /etc/alternatives/awk */
	char **choices;		/* what /etc/alternatives/NAME may point to */
	size_t nchoices;
};

struct trust_dpkg {
	int rootfd;
	struct trust_diversion *div;
	size_t ndiv;
	char **excl;		/* "-GLOB" path-exclude, "+GLOB" path-include, in order */
	size_t nexcl;
	struct trust_statoverride *so;	/* sorted by path */
	size_t nso;
	struct trust_altlink *alt;	/* sorted by path */
	size_t nalt;
	struct trust_idname *users, *groups;	/* as in the root's /etc/passwd, /etc/group */
	size_t nusers, ngroups;
};

/*
 * trust_dpkg_load - read ROOT/var/lib/dpkg/{diversions,statoverride,
 * alternatives/}, ROOT/etc/dpkg/dpkg.cfg{,.d/}, ROOT/etc/{passwd,group}
 * under @rootfd (a link never leads out of it). What is absent is empty.
 * Return: 0, or -1 (said: the file and the problem).
 */
int trust_dpkg_load(struct trust_dpkg *d, int rootfd);
void trust_dpkg_release(struct trust_dpkg *d);

/* Open @path under the root (openat2 RESOLVE_IN_ROOT, O_NOFOLLOW). Return: fd, or -1 (errno). */
int trust_open_in_root(int rootfd, const char *path, int flags);

/* The diversion of @path by a package other than @pkg, or NULL. */
const struct trust_diversion *trust_dpkg_diverted(const struct trust_dpkg *d, const char *path,
						   const char *pkg);
/* A diversion whose "to" is @path, or NULL. */
const struct trust_diversion *trust_dpkg_diverted_to(const struct trust_dpkg *d, const char *path);
/* dpkg's rule: the last of path-exclude and path-include that matches decides. */
bool trust_dpkg_excluded(const struct trust_dpkg *d, const char *path);
/* The statoverride of @path, or NULL. */
const struct trust_statoverride *trust_dpkg_statoverride(const struct trust_dpkg *d,
							  const char *path);
/* The uid (gid) of user (group) @name in the root, as getpwnam would. Return: true if found. */
bool trust_dpkg_uid(const struct trust_dpkg *d, const char *name, uint32_t *ret);
bool trust_dpkg_gid(const struct trust_dpkg *d, const char *name, uint32_t *ret);
/* The name of @uid (@gid) in the root, or NULL. */
const char *trust_dpkg_user(const struct trust_dpkg *d, uint32_t uid);
const char *trust_dpkg_group(const struct trust_dpkg *d, uint32_t gid);

/*
 * trust_dpkg_alternative - whether @path is the link of an alternative
 * as update-alternatives made it: a symbolic link to /etc/alternatives/
 * NAME, itself a link to one of the alternative's registered choices.
 * Return: 1 it is (*@ret_name: NAME); 0 @path is no alternative's link;
 * -1 it is one, but not as made (@why says what differs).
 */
int trust_dpkg_alternative(const struct trust_dpkg *d, const char *path, const char **ret_name,
			   char *why, size_t whylen);

/*
 * trust_dpkg_expected - the mode (permission bits), owner and group dpkg
 * gives @path whose archive entry has @mode and, if @have_owner, the
 * names @uname/@gname and ids @uid/@gid: a statoverride replaces all
 * three; else a name the root knows gives its id, else the archive's id.
 * Return: what is known: bit 0 the owner and group, bit 1 a statoverride.
 */
unsigned int trust_dpkg_expected(const struct trust_dpkg *d, const char *path, uint32_t mode,
				 bool have_owner, const char *uname, const char *gname,
				 uint32_t uid, uint32_t gid, uint32_t *ret_mode,
				 uint32_t *ret_uid, uint32_t *ret_gid);
#define TRUST_DPKG_OWNER 1u
#define TRUST_DPKG_OVERRIDE 2u

#endif
