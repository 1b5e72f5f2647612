// SPDX-License-Identifier: MIT
/*
 * trust_release.c - a Debian InRelease file, verified: gpgv (fork and
 * exec, no shell, a fixed environment) checks the OpenPGP signature
 * against the archive keyring and writes the signed text; only that text
 * is parsed (Origin, Label, Suite, Codename, Date, Valid-Until, and the
 * SHA256 section). What lies outside the signature never reaches the
 * parser. No OpenPGP here: gpgv is the one home of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vigil/fileio.h"
#include "vigil/hash.h"
#include "vigil/trust.h"
#include "trust_internal.h"

/* InRelease files are a few hundred KiB; refuse what is not one */
#define RELEASE_MAX ((size_t)64 << 20)

void vg_trust_release_release(struct vg_trust_release *rel)
{
	if (!rel)
		return;
	free(rel->origin);
	free(rel->label);
	free(rel->suite);
	free(rel->codename);
	for (size_t i = 0; i < rel->nfiles; i++)
		free(rel->files[i].path);
	free(rel->files);
	memset(rel, 0, sizeof(*rel));
}

/* "Wed, 02 Dec 2026 23:13:43 UTC" (or +0000). Return: 0 or -EBADMSG. */
static int parse_date(const char *s, int64_t *ret)
{
	struct tm tm = { 0 };
	const char *end = strptime(s, "%a, %d %b %Y %H:%M:%S", &tm);

	if (!end)
		return -EBADMSG;
	while (*end == ' ')
		end++;
	if (*end && strcmp(end, "UTC") != 0 && strcmp(end, "GMT") != 0 && strcmp(end, "Z") != 0 &&
	    strcmp(end, "+0000") != 0)
		return -EBADMSG;
	*ret = (int64_t)timegm(&tm);
	return 0;
}

static int add_file(struct vg_trust_release *rel, const char *line, size_t len, size_t *cap)
{
	char hex[65], *path;
	unsigned long long size;
	int off = 0;
	char buf[1024];

	if (len >= sizeof(buf))
		return -EBADMSG;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, " %64s %llu %n", hex, &size, &off) != 2 || off <= 0 || !buf[off] ||
	    strlen(hex) != 64)
		return -EBADMSG;
	if (rel->nfiles == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct vg_trust_relfile *f = realloc(rel->files, ncap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		rel->files = f;
		*cap = ncap;
	}
	path = strdup(buf + off);
	if (!path)
		return -ENOMEM;
	path[strcspn(path, " \t")] = '\0';
	if (vg_hex_decode(hex, rel->files[rel->nfiles].sha256, 32) != 32) {
		free(path);
		return -EBADMSG;
	}
	rel->files[rel->nfiles].path = path;
	rel->files[rel->nfiles].size = size;
	rel->nfiles++;
	return 0;
}

int vg_trust_release_parse(const char *text, size_t len, struct vg_trust_release *ret,
			   struct vg_diag *diag)
{
	struct vg_trust_release rel = { 0 };
	const char *p = text, *end = text + len;
	size_t cap = 0, lineno = 0;
	bool in_sha256 = false, seen_sha256 = false;
	int r = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char field[64], value[512];
		const char *colon;

		lineno++;
		if (l && p[l - 1] == '\r')
			l--;
		if (l == 0) {
			p = nl ? nl + 1 : end;
			in_sha256 = false;
			continue;
		}
		if (memchr(p, '\0', l)) {
			r = -EBADMSG;
			goto bad;
		}
		if (p[0] == ' ' || p[0] == '\t') {
			if (in_sha256) {
				r = add_file(&rel, p, l, &cap);
				if (r < 0)
					goto bad;
			}
			p = nl ? nl + 1 : end;
			continue;
		}
		in_sha256 = false;
		colon = memchr(p, ':', l);
		if (!colon || (size_t)(colon - p) >= sizeof(field)) {
			r = -EBADMSG;
			goto bad;
		}
		memcpy(field, p, (size_t)(colon - p));
		field[colon - p] = '\0';
		{
			const char *v = colon + 1;
			size_t vl = l - (size_t)(v - p);

			while (vl && (*v == ' ' || *v == '\t')) {
				v++;
				vl--;
			}
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			if (vl >= sizeof(value))
				vl = sizeof(value) - 1;
			memcpy(value, v, vl);
			value[vl] = '\0';
		}
		if (strcasecmp(field, "SHA256") == 0) {
			if (seen_sha256 || value[0]) {
				r = -EBADMSG;
				goto bad;
			}
			in_sha256 = seen_sha256 = true;
		} else {
			char **slot = strcasecmp(field, "Origin") == 0	   ? &rel.origin :
				      strcasecmp(field, "Label") == 0	   ? &rel.label :
				      strcasecmp(field, "Suite") == 0	   ? &rel.suite :
				      strcasecmp(field, "Codename") == 0 ? &rel.codename :
									   NULL;

			if (slot) {
				free(*slot);
				*slot = strdup(value);
				if (!*slot) {
					r = -ENOMEM;
					goto bad;
				}
			} else if (strcasecmp(field, "Date") == 0) {
				if (parse_date(value, &rel.date) < 0) {
					r = -EBADMSG;
					goto bad;
				}
			} else if (strcasecmp(field, "Valid-Until") == 0) {
				if (parse_date(value, &rel.valid_until) < 0) {
					r = -EBADMSG;
					goto bad;
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!seen_sha256 || !rel.nfiles) {
		vg_trust_release_release(&rel);
		return vg_diag_set(diag, -EBADMSG, "no SHA256 section");
	}
	*ret = rel;
	return 0;
bad:
	vg_trust_release_release(&rel);
	if (r == -ENOMEM)
		return vg_diag_set(diag, r, "out of memory");
	return vg_diag_set(diag, r, "line %zu of the signed text is malformed", lineno);
}

const struct vg_trust_relfile *vg_trust_release_find(const struct vg_trust_release *rel,
						     const uint8_t sha256[32], uint64_t size)
{
	for (size_t i = 0; i < rel->nfiles; i++)
		if (rel->files[i].size == size && memcmp(rel->files[i].sha256, sha256, 32) == 0)
			return &rel->files[i];
	return NULL;
}

/* The first line of @fd's content (a memfd at its end), into @buf. */
static void first_line(int fd, char *buf, size_t cap)
{
	ssize_t n = pread(fd, buf, cap - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	/* gpgv's lines start with "gpgv: " */
	if (strncmp(buf, "gpgv: ", 6) == 0)
		memmove(buf, buf + 6, strlen(buf + 6) + 1);
}

/*
 * Run gpgv on @data (@len bytes) with the @nkr keyrings @kr (a --keyring
 * each; gpgv accepts a signature by a key of any): its stdin a sealed memfd
 * holding the data, its stderr another memfd, its stdout a pipe read here
 * to the end. Return: 0 (*ret_out, *ret_len: the signed text), or -errno.
 */
static int run_gpgv(const char *gpgv, char *const *kr, size_t nkr, const uint8_t *data,
		    size_t len, char **ret_out, size_t *ret_len, struct vg_diag *diag)
{
	char *argv[2 * VG_TRUST_MAX_KEYRINGS + 6];
	size_t na = 0;
	char *const envp[] = { (char *)"LC_ALL=C", (char *)"PATH=/usr/bin:/bin",
			       (char *)"HOME=/nonexistent", NULL };
	int in = memfd_create("vigil-inrelease", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err = memfd_create("vigil-gpgv-err", MFD_CLOEXEC);
	int pfd[2] = { -1, -1 };
	char *out = NULL;
	size_t n = 0, cap = 0;
	pid_t pid = -1;
	int status = 0, r = 0;

	argv[na++] = (char *)"gpgv";
	for (size_t i = 0; i < nkr; i++) {
		argv[na++] = (char *)"--keyring";
		argv[na++] = kr[i];
	}
	argv[na++] = (char *)"--output";
	argv[na++] = (char *)"-";
	argv[na++] = (char *)"-";
	argv[na] = NULL;
	if (in < 0 || err < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		r = vg_diag_set(diag, -errno, "cannot run gpgv: %s", strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(in, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = vg_diag_set(diag, -EIO, "cannot run gpgv: %s", strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	(void)fcntl(in, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	if (lseek(in, 0, SEEK_SET) < 0) {
		r = vg_diag_set(diag, -errno, "cannot run gpgv: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = vg_diag_set(diag, -errno, "cannot run gpgv: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* dup2 clears FD_CLOEXEC on the copies; everything else closes at exec */
		if (dup2(in, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execve(gpgv, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	pfd[1] = -1;
	for (;;) {
		ssize_t rd;

		if (cap - n < 65536) {
			char *nb;

			if (cap >= RELEASE_MAX) {
				r = vg_diag_set(diag, -EFBIG, "gpgv's output is larger than %zu MiB",
						RELEASE_MAX >> 20);
				break;
			}
			nb = realloc(out, cap ? cap * 2 : 262144);
			if (!nb) {
				r = vg_diag_set(diag, -ENOMEM, "out of memory");
				break;
			}
			out = nb;
			cap = cap ? cap * 2 : 262144;
		}
		rd = read(pfd[0], out + n, cap - n - 1);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd <= 0)
			break;
		n += (size_t)rd;
	}
	close(pfd[0]);
	pfd[0] = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		goto out;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		r = vg_diag_set(diag, -ENOENT, "cannot run %s", gpgv);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char line[200];

		first_line(err, line, sizeof(line));
		r = vg_diag_set(diag, -EKEYREJECTED, "signature not verified by gpgv (%s)",
				line[0] ? line : "no message");
		goto out;
	}
	out[n] = '\0';
	*ret_out = out;
	*ret_len = n;
	out = NULL;
out:
	free(out);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (in >= 0)
		close(in);
	if (err >= 0)
		close(err);
	return r;
}

int vg_trust_release_verify(const char *path, const char *keyring, const char *gpgv,
			    int64_t now, unsigned int flags, struct vg_trust_release *ret,
			    struct vg_diag *diag)
{
	const char *one[1] = { keyring ? keyring : VG_TRUST_KEYRING };

	return vg_trust_release_verify_keyrings(path, one, 1, gpgv, now, flags, ret, diag);
}

int vg_trust_release_verify_keyrings(const char *path, const char *const *keyrings, size_t nkr,
				     const char *gpgv, int64_t now, unsigned int flags,
				     struct vg_trust_release *ret, struct vg_diag *diag)
{
	struct vg_trust_release rel;
	uint8_t *data = NULL;
	size_t len = 0, tlen = 0;
	char *text = NULL;
	char *kr[VG_TRUST_MAX_KEYRINGS] = { 0 };
	int r;

	if (nkr == 0 || nkr > VG_TRUST_MAX_KEYRINGS)
		return vg_diag_set(diag, -EINVAL, "%zu keyrings (1 to %d)", nkr,
				   VG_TRUST_MAX_KEYRINGS);
	for (size_t i = 0; i < nkr; i++) {
		const char *k = keyrings[i];

		/* gpgv takes a name without a slash as one in its home directory */
		if (asprintf(&kr[i], "%s%s", strchr(k, '/') ? "" : "./", k) < 0) {
			kr[i] = NULL;
			r = vg_diag_set(diag, -ENOMEM, "out of memory");
			goto out;
		}
		if (access(kr[i], R_OK) < 0) {
			r = vg_diag_set(diag, -errno, "keyring %s: %s", k, strerror(errno));
			goto out;
		}
	}
	r = vg_file_read(path, RELEASE_MAX, &data, &len, diag);
	if (r < 0)
		return r;
	r = run_gpgv(gpgv ? gpgv : VG_TRUST_GPGV, kr, nkr, data, len, &text, &tlen, diag);
	if (r < 0)
		goto out;
	r = vg_trust_release_parse(text, tlen, &rel, diag);
	if (r < 0)
		goto out;
	if (rel.valid_until && rel.valid_until < now && !(flags & VG_TRUST_ALLOW_EXPIRED)) {
		char when[64];
		time_t t = (time_t)rel.valid_until;
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t, &tm));
		vg_trust_release_release(&rel);
		r = vg_diag_set(diag, -EKEYEXPIRED, "expired: Valid-Until %s has passed", when);
		goto out;
	}
	if (vg__trust_sha256(data, len, rel.sha256) < 0) {
		vg_trust_release_release(&rel);
		r = vg_diag_set(diag, -ENOMEM, "SHA-256");
		goto out;
	}
	*ret = rel;
out:
	free(text);
	free(data);
	for (size_t i = 0; i < nkr && i < VG_TRUST_MAX_KEYRINGS; i++)
		free(kr[i]);
	return r;
}
