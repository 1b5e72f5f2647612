/* SPDX-License-Identifier: MIT */
/*
 * trust_unpackaged.h - `vigil trust verify --unpackaged` (trust_unpackaged.c):
 * the files under /usr/bin, /usr/sbin and /usr/lib of a root that no
 * package ships, apart from what dpkg's standard mechanisms put there
 * (an alternative's link as update-alternatives made it, a diverted
 * package file, Python byte code compiled at install) and the files of
 * packages the database does not record. Not a library interface.
 */
#ifndef VIGIL_CLI_TRUST_UNPACKAGED_H
#define VIGIL_CLI_TRUST_UNPACKAGED_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "trust_dpkg.h"
#include "trust_paths.h"

struct trust_unpackaged {
	int rootfd;
	const struct trust_dpkg *dpkg;
	struct trust_pathset recorded;	/* every path the database records */
	struct trust_pathset listed;	/* every path dpkg's lists name */
	bool json, verbose;
	uint64_t unpackaged, unverified, generated, alternatives, diverted;
	json_object *list;		/* the unpackaged paths */
};

/* Return: 0, or -1 (said). */
int trust_unpackaged_init(struct trust_unpackaged *u, int rootfd, const struct trust_dpkg *d,
			  bool json, bool verbose);
/* A path the database records. Return: 0, -ENOMEM. */
int trust_unpackaged_record(struct trust_unpackaged *u, const char *path);
/* Walk the root's /usr/bin, /usr/sbin, /usr/lib: each unpackaged file printed (text) and listed. */
void trust_unpackaged_walk(struct trust_unpackaged *u);
void trust_unpackaged_release(struct trust_unpackaged *u);

#endif
