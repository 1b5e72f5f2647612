// SPDX-License-Identifier: MIT
/*
 * trust_local_debs.c - `vigil trust build --local-deb FILE`: a .deb that no
 * signed list vouches for, recorded because the administrator names it:
 * vigil's own packages when they are installed from files, a site's own
 * packages. Naming the file is the act of trust, as `fapolicyd-cli --file
 * add` is; nothing else can vouch for it (a package's own postinst cannot
 * vouch for itself). Its name, version and architecture are its control
 * file's (dpkg-deb --field), its SHA-256 and size the file's own, read
 * once: the .deb is then read with libarchive against exactly those
 * (vg_trust_deb_read), so a file swapped meanwhile is refused. Such a
 * package is recorded under a release of origin "local" (docs/trust.md),
 * and apt's hook never records one by itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cli.h"
#include "trust_build.h"

/* @path's Package, Version, Architecture (dpkg-deb --field). Return: 0, -1 (reported). */
static int control_fields(const char *path, char **name, char **version, char **arch)
{
	char *const argv[] = { (char *)"dpkg-deb", (char *)"--field", (char *)path, (char *)"Package",
			       (char *)"Version", (char *)"Architecture", NULL };
	char *out = NULL, *line, *save = NULL;
	size_t len = 0;
	int rc = trust_run(argv, NULL, &out, &len);

	*name = *version = *arch = NULL;
	if (rc != 0 || !out) {
		cli_err("--local-deb %s: dpkg-deb cannot read its control file (%s)", path,
			rc < 0 ? "it did not run" : "not a .deb?");
		free(out);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char **slot = !strncmp(line, "Package: ", 9) ? name : !strncmp(line, "Version: ", 9) ? version :
			      !strncmp(line, "Architecture: ", 14) ? arch : NULL;

		if (slot && !*slot)
			*slot = strdup(strchr(line, ' ') + 1);
	}
	free(out);
	if (!*name || !*version || !*arch) {
		cli_err("--local-deb %s: its control file lacks Package, Version or Architecture", path);
		free(*name);
		free(*version);
		free(*arch);
		return -1;
	}
	return 0;
}

int trust_local_add(struct build *b, const char *path)
{
	struct local_deb l = { 0 }, *n;

	if (!path[0]) {
		cli_err("--local-deb: an empty file name");
		return -1;
	}
	if (access(path, R_OK) < 0) {
		cli_err("--local-deb %s: %s", path, strerror(errno));
		return -1;
	}
	if (control_fields(path, &l.name, &l.version, &l.arch) < 0)
		return -1;
	n = realloc(b->local, (b->nlocal + 1) * sizeof(*n));
	if (!n || !(l.path = strdup(path))) {
		if (n)
			b->local = n;
		free(l.name);
		free(l.version);
		free(l.arch);
		cli_err("out of memory");
		return -1;
	}
	b->local = n;
	b->local[b->nlocal++] = l;
	return 0;
}

bool trust_local_names(const struct build *b, const char *name, const char *version, const char *arch)
{
	for (size_t i = 0; i < b->nlocal; i++)
		if (!strcmp(b->local[i].name, name) && !strcmp(b->local[i].version, version) &&
		    !strcmp(b->local[i].arch, arch))
			return true;
	return false;
}

void trust_local_free(struct build *b)
{
	for (size_t i = 0; i < b->nlocal; i++) {
		free(b->local[i].path);
		free(b->local[i].name);
		free(b->local[i].version);
		free(b->local[i].arch);
	}
	free(b->local);
	b->local = NULL;
	b->nlocal = 0;
}

/* SHA-256 and size of the file open on @fd. Return: 0, -errno. */
static int whole_digest(int fd, uint8_t out[32], uint64_t *size)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	uint8_t buf[65536];
	unsigned int n = 0;
	ssize_t r;
	int err = 0;

	*size = 0;
	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		return -ENOMEM;
	}
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		EVP_DigestUpdate(c, buf, (size_t)r);
		*size += (uint64_t)r;
	}
	if (r < 0)
		err = -errno;
	else if (EVP_DigestFinal_ex(c, out, &n) != 1 || n != 32)
		err = -EIO;
	EVP_MD_CTX_free(c);
	return err;
}

int trust_local_record(struct build *b, struct vg_trust_db *db)
{
	struct vg_trust_release rel = { .origin = (char *)"local", .label = (char *)"local",
					.suite = (char *)"local", .codename = (char *)"local",
					.date = (int64_t)time(NULL) };
	int64_t relid = 0;

	for (size_t i = 0; i < b->nlocal; i++) {
		const char *path = b->local[i].path;
		struct vg_trust_pkg want = { .package = b->local[i].name, .version = b->local[i].version,
					     .arch = b->local[i].arch };
		struct vg_trust_deb deb = { 0 };
		struct vg_diag d = { 0 };
		struct stat st;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), r;

		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			cli_err("--local-deb %s: %s", path, fd < 0 ? strerror(errno) : "not a regular file");
			if (fd >= 0)
				close(fd);
			return -1;
		}
		/* the digest of these bytes, which vg_trust_deb_read then reads, control file and all */
		if (whole_digest(fd, want.sha256, &want.size) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
			cli_err("--local-deb %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		r = vg_trust_deb_read(fd, &want, b->algos, b->nalgos, &deb, &d);
		close(fd);
		if (r == 0 && !relid && (relid = vg_trust_db_add_release(db, &rel, &d)) < 0)
			r = (int)relid;
		if (r == 0) {
			struct vg_trust_pkgrow row = { .name = want.package, .version = want.version,
						       .arch = want.arch };

			memcpy(row.deb_sha256, want.sha256, 32);
			/*
			 * its files, not boot images: a measured_boot section's from_archive
			 * takes only what the archive's key signed (issue 45); a site's own
			 * kernel is listed in the policy by its digest
			 */
			for (size_t k = 0; k < deb.n; k++)
				deb.files[k].boot = false;
			r = vg_trust_db_add_package(db, relid, &row, &deb, &d);
		}
		if (r < 0)
			cli_err("--local-deb %s: %s", path, d.msg[0] ? d.msg : strerror(-r));
		else if (!b->json)
			printf("trusted by name: %s %s %s (%s, %zu files)\n", want.package, want.version,
			       want.arch, path, deb.n);
		if (r == 0) {
			b->recorded++;
			b->files += deb.n;
			b->local_recorded++;
		}
		vg_trust_deb_release(&deb);
		if (r < 0)
			return -1;
	}
	return 0;
}
