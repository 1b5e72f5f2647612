// SPDX-License-Identifier: MIT
/*
 * trust_unpackaged.c - the files under /usr/bin, /usr/sbin and /usr/lib
 * that no package ships (trust_unpackaged.h). Not reported, each counted:
 * a file of a package the database does not record (dpkg lists it: its
 * chain did not hold); Python byte code a postinst compiled from a
 * packaged module; a diverted package file (the "to" of a diversion of a
 * packaged path); an alternative's link as update-alternatives made it
 * (a link to /etc/alternatives/NAME, which leads to one of the
 * alternative's registered choices). An alternative's link that leads
 * elsewhere, or is no link, is reported with what differs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "trust_unpackaged.h"

int trust_unpackaged_init(struct trust_unpackaged *u, int rootfd, const struct trust_dpkg *d,
			  bool json, bool verbose)
{
	memset(u, 0, sizeof(*u));
	u->rootfd = rootfd;
	u->dpkg = d;
	u->json = json;
	u->verbose = verbose;
	u->list = json_object_new_array();
	if (!u->list || trust_pathset_init(&u->recorded, rootfd) < 0 ||
	    trust_pathset_init(&u->listed, rootfd) < 0 || trust_pathset_add_dpkg(&u->listed) < 0) {
		cli_err("out of memory");
		return -1;
	}
	return 0;
}

int trust_unpackaged_record(struct trust_unpackaged *u, const char *path)
{
	return trust_pathset_add(&u->recorded, path);
}

void trust_unpackaged_release(struct trust_unpackaged *u)
{
	trust_pathset_release(&u->recorded);
	trust_pathset_release(&u->listed);
	json_object_put(u->list);
	u->list = NULL;
}

static bool packaged(const struct trust_unpackaged *u, const char *path)
{
	return trust_pathset_has(&u->recorded, path) || trust_pathset_has(&u->listed, path);
}

/*
 * DIR/__pycache__/NAME.TAG.pyc (or NAME.TAG.opt-N.pyc) whose DIR/NAME.py a
 * recorded package, or dpkg, ships: written by the package's postinst.
 */
static bool compiled_from_packaged(const struct trust_unpackaged *u, const char *path)
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
	return packaged(u, src);
}

/*
 * @path the "to" of a diversion of a packaged path: a package's file
 * dpkg put aside (verify checks it there). On a merged /usr the
 * diversion may name /bin/x for the /usr/bin/x walked.
 */
static bool diverted_file(const struct trust_unpackaged *u, const char *path)
{
	/* trust_paths.c's order: bit i of a path set's merged */
	static const char *const tops[] = { "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
					    "/libx32/" };
	const struct trust_diversion *dv = trust_dpkg_diverted_to(u->dpkg, path);

	for (size_t i = 0; !dv && strncmp(path, "/usr/", 5) == 0 && i < sizeof(tops) / sizeof(tops[0]);
	     i++)
		if ((u->recorded.merged & (1u << i)) && strncmp(path + 4, tops[i], strlen(tops[i])) == 0)
			dv = trust_dpkg_diverted_to(u->dpkg, path + 4);
	return dv && packaged(u, dv->from);
}

static void say(const struct trust_unpackaged *u, const char *what, const char *path,
		const char *why)
{
	if (u->json)
		return;
	printf("%s: ", what);
	cli_put_path(stdout, path);
	if (why)
		printf(" (%s)", why);
	putchar('\n');
}

static void one(struct trust_unpackaged *u, const char *path)
{
	const char *name = NULL;
	char why[512] = "";
	int a;

	if (trust_pathset_has(&u->recorded, path))
		return;
	/* byte code py3compile wrote at install for a packaged module */
	if (compiled_from_packaged(u, path)) {
		u->generated++;
		if (u->verbose)
			say(u, "generated", path, NULL);
		return;
	}
	/* a package's file, but no package of the database: its chain did not hold */
	if (trust_pathset_has(&u->listed, path)) {
		u->unverified++;
		if (u->verbose)
			say(u, "unverified", path, NULL);
		return;
	}
	if (diverted_file(u, path)) {
		u->diverted++;
		if (u->verbose)
			say(u, "diverted", path, NULL);
		return;
	}
	a = trust_dpkg_alternative(u->dpkg, path, &name, why, sizeof(why));
	if (a > 0) {
		u->alternatives++;
		if (u->verbose)
			say(u, "alternative", path, name);
		return;
	}
	u->unpackaged++;
	json_object_array_add(u->list, cli_json_path(path));
	say(u, "unpackaged", path, a < 0 ? why : NULL);
}

static void walk(struct trust_unpackaged *u, int dfd, char *path, size_t len, size_t cap, int depth)
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
				walk(u, sub, path, len + 1 + nl, cap, depth + 1);
			continue;
		}
		if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			one(u, path);
	}
	path[len] = '\0';
	closedir(d);
}

void trust_unpackaged_walk(struct trust_unpackaged *u)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/sbin", "/usr/lib" };
	char path[4096];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int fd = trust_open_in_root(u->rootfd, dirs[i], O_RDONLY | O_DIRECTORY);

		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "%s", dirs[i]);
		walk(u, fd, path, strlen(path), sizeof(path), 0);
	}
}
