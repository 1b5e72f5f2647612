// SPDX-License-Identifier: MIT
/*
 * trust_packages.c - a Packages index, as apt keeps it in
 * /var/lib/apt/lists (compressed: lz4 on Debian 12, or gz, xz, or plain):
 * libarchive's filters decompress it (raw format, no hand-written
 * decompressor), SHA-256 and size are taken of the uncompressed bytes,
 * which is what InRelease lists, and only a list that a verified
 * InRelease names is parsed. The stanza parser keeps Package, Version,
 * Architecture, Filename, Size and SHA256; it does not judge the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <archive.h>
#include <openssl/evp.h>

#include "vigil/hash.h"
#include "vigil/trust.h"
#include "trust_internal.h"

/* the largest uncompressed list accepted (bookworm main amd64: 50 MB) */
#define PACKAGES_MAX ((size_t)1 << 30)

int vg__trust_sha256(const void *p, size_t len, uint8_t out[32])
{
	unsigned int outlen = 0;

	return EVP_Digest(p, len, out, &outlen, EVP_sha256(), NULL) ? 0 : -ENOMEM;
}

void vg_trust_packages_release(struct vg_trust_packages *pk)
{
	if (!pk)
		return;
	for (size_t i = 0; i < pk->n; i++) {
		free(pk->pkgs[i].package);
		free(pk->pkgs[i].version);
		free(pk->pkgs[i].arch);
		free(pk->pkgs[i].filename);
	}
	free(pk->pkgs);
	memset(pk, 0, sizeof(*pk));
}

static void pkg_free(struct vg_trust_pkg *p)
{
	free(p->package);
	free(p->version);
	free(p->arch);
	free(p->filename);
	memset(p, 0, sizeof(*p));
}

/* @v (@vl bytes) as a new string. */
static char *dupn(const char *v, size_t vl)
{
	char *s = malloc(vl + 1);

	if (s) {
		memcpy(s, v, vl);
		s[vl] = '\0';
	}
	return s;
}

/* Stanza @cur complete? Return: 0 complete, -EBADMSG not. */
static int complete(const struct vg_trust_pkg *cur, bool have_size, bool have_sha)
{
	return cur->package && cur->version && cur->arch && cur->filename && have_size &&
			       have_sha ?
		       0 :
		       -EBADMSG;
}

int vg_trust_packages_parse(struct vg_trust_packages *pk, const char *text, size_t len,
			    uint32_t release, struct vg_diag *diag)
{
	const char *p = text, *end = text + len;
	struct vg_trust_pkg cur = { 0 };
	bool in = false, have_size = false, have_sha = false;
	size_t stanza = 0;

	for (;;) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t l = p < end ? (nl ? (size_t)(nl - p) : (size_t)(end - p)) : 0;

		if (l && p[l - 1] == '\r')
			l--;
		if (l == 0) {
			/* a blank line, or the end: the stanza is over */
			if (in) {
				if (complete(&cur, have_size, have_sha) < 0) {
					pkg_free(&cur);
					return vg_diag_set(diag, -EBADMSG,
							   "stanza %zu lacks Package, Version, "
							   "Architecture, Filename, Size or SHA256",
							   stanza);
				}
				if (pk->n == pk->cap) {
					size_t ncap = pk->cap ? pk->cap * 2 : 1024;
					struct vg_trust_pkg *np = realloc(pk->pkgs, ncap * sizeof(*np));

					if (!np) {
						pkg_free(&cur);
						return vg_diag_set(diag, -ENOMEM, "out of memory");
					}
					pk->pkgs = np;
					pk->cap = ncap;
				}
				cur.release = release;
				pk->pkgs[pk->n++] = cur;
				pk->sorted = false;
				memset(&cur, 0, sizeof(cur));
				in = have_size = have_sha = false;
			}
			if (p >= end)
				break;
			p = nl ? nl + 1 : end;
			continue;
		}
		if (!in) {
			in = true;
			stanza++;
		}
		if (memchr(p, '\0', l)) {
			pkg_free(&cur);
			return vg_diag_set(diag, -EBADMSG, "stanza %zu: a NUL byte", stanza);
		}
		if (p[0] != ' ' && p[0] != '\t') {
			const char *colon = memchr(p, ':', l);
			const char *v;
			size_t fl, vl;
			char **slot = NULL;

			if (!colon) {
				pkg_free(&cur);
				return vg_diag_set(diag, -EBADMSG, "stanza %zu: a line without ':'",
						   stanza);
			}
			fl = (size_t)(colon - p);
			v = colon + 1;
			vl = l - fl - 1;
			while (vl && (*v == ' ' || *v == '\t')) {
				v++;
				vl--;
			}
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
#define IS(name) (fl == sizeof(name) - 1 && strncasecmp(p, name, fl) == 0)
			if (IS("Package"))
				slot = &cur.package;
			else if (IS("Version"))
				slot = &cur.version;
			else if (IS("Architecture"))
				slot = &cur.arch;
			else if (IS("Filename"))
				slot = &cur.filename;
			else if (IS("Size")) {
				char num[32], *e;

				if (vl == 0 || vl >= sizeof(num))
					goto bad;
				memcpy(num, v, vl);
				num[vl] = '\0';
				errno = 0;
				cur.size = strtoull(num, &e, 10);
				if (*e || errno || num[0] == '-')
					goto bad;
				have_size = true;
			} else if (IS("SHA256")) {
				char hex[65];

				if (vl != 64)
					goto bad;
				memcpy(hex, v, 64);
				hex[64] = '\0';
				if (vg_hex_decode(hex, cur.sha256, 32) != 32)
					goto bad;
				have_sha = true;
			}
#undef IS
			if (slot) {
				if (*slot || vl == 0)
					goto bad;
				*slot = dupn(v, vl);
				if (!*slot) {
					pkg_free(&cur);
					return vg_diag_set(diag, -ENOMEM, "out of memory");
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
bad:
	pkg_free(&cur);
	return vg_diag_set(diag, -EBADMSG, "stanza %zu: a malformed or repeated field", stanza);
}

/*
 * The uncompressed content of @path through libarchive (any filter, raw
 * format). Return: 0, -EBADMSG (libarchive's reason in diag), -EFBIG,
 * -ENOMEM.
 */
static int decompress(const char *path, char **ret, size_t *ret_len, struct vg_diag *diag)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	if (!a)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		r = vg_diag_set(diag, archive_errno(a) == ENOENT ? -ENOENT : -EBADMSG, "%s",
				archive_error_string(a) ? archive_error_string(a) : "unreadable");
		goto out;
	}
	for (;;) {
		la_ssize_t got;

		if (cap - n < 65536) {
			size_t ncap = cap ? cap * 2 : (size_t)1 << 20;
			char *nb;

			if (ncap > PACKAGES_MAX + 65536) {
				r = vg_diag_set(diag, -EFBIG, "larger than %zu MiB uncompressed",
						PACKAGES_MAX >> 20);
				goto out;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				r = vg_diag_set(diag, -ENOMEM, "out of memory");
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		got = archive_read_data(a, buf + n, cap - n - 1);
		if (got < 0) {
			r = vg_diag_set(diag, -EBADMSG, "%s",
					archive_error_string(a) ? archive_error_string(a) : "damaged");
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_len = n;
	buf = NULL;
out:
	free(buf);
	archive_read_free(a);
	return r;
}

static bool is_packages(const char *path)
{
	size_t l = strlen(path);

	return (l == 8 && strcmp(path, "Packages") == 0) ||
	       (l > 9 && strcmp(path + l - 9, "/Packages") == 0);
}

int vg_trust_packages_load(struct vg_trust_packages *pk, const char *path,
			   const struct vg_trust_release *rel, uint32_t release,
			   const struct vg_trust_relfile **ret_entry, struct vg_diag *diag)
{
	const struct vg_trust_relfile *e = NULL;
	uint8_t dg[32];
	char *text = NULL;
	size_t len = 0;
	int r = decompress(path, &text, &len, diag);

	if (r < 0)
		return r;
	if (vg__trust_sha256(text, len, dg) < 0) {
		free(text);
		return vg_diag_set(diag, -ENOMEM, "SHA-256");
	}
	for (size_t i = 0; i < rel->nfiles && !e; i++)
		if (rel->files[i].size == len && memcmp(rel->files[i].sha256, dg, 32) == 0 &&
		    is_packages(rel->files[i].path))
			e = &rel->files[i];
	if (!e) {
		char hex[65];

		vg_hex_encode(dg, 32, hex);
		free(text);
		return vg_diag_set(diag, -EKEYREJECTED,
				   "not listed by the InRelease (uncompressed sha256 %s, %zu bytes)",
				   hex, len);
	}
	r = vg_trust_packages_parse(pk, text, len, release, diag);
	free(text);
	if (r == 0 && ret_entry)
		*ret_entry = e;
	return r;
}

static int pkg_cmp(const void *a, const void *b)
{
	const struct vg_trust_pkg *x = a, *y = b;
	int c = strcmp(x->package, y->package);

	if (!c)
		c = strcmp(x->version, y->version);
	if (!c)
		c = strcmp(x->arch, y->arch);
	/* the same version in several releases: in the caller's order of releases */
	if (!c)
		c = (x->release > y->release) - (x->release < y->release);
	return c;
}

size_t vg_trust_packages_find(struct vg_trust_packages *pk, const char *package,
			      const char *version, const char *arch,
			      const struct vg_trust_pkg **ret_first)
{
	size_t lo = 0, hi, first, n = 0;

	if (!pk->sorted) {
		if (pk->n)
			qsort(pk->pkgs, pk->n, sizeof(*pk->pkgs), pkg_cmp);
		pk->sorted = true;
	}
	/* the first stanza with this package and version (any architecture) */
	hi = pk->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(pk->pkgs[mid].package, package);

		if (!c)
			c = strcmp(pk->pkgs[mid].version, version);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (first < pk->n && strcmp(pk->pkgs[first].package, package) == 0 &&
	       strcmp(pk->pkgs[first].version, version) == 0 && arch &&
	       strcmp(pk->pkgs[first].arch, arch) != 0)
		first++;
	for (size_t i = first; i < pk->n && strcmp(pk->pkgs[i].package, package) == 0 &&
			       strcmp(pk->pkgs[i].version, version) == 0 &&
			       (!arch || strcmp(pk->pkgs[i].arch, arch) == 0);
	     i++)
		n++;
	if (n && ret_first)
		*ret_first = &pk->pkgs[first];
	return n;
}

const char *vg_trust_packages_newest(struct vg_trust_packages *pk, const char *package,
				     const char *arch)
{
	const struct vg_trust_pkg *first = NULL;
	const char *best = NULL;
	size_t lo = 0, hi;

	(void)vg_trust_packages_find(pk, "", "", NULL, &first);	/* sorted */
	hi = pk->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(pk->pkgs[mid].package, package) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < pk->n && strcmp(pk->pkgs[i].package, package) == 0; i++)
		if ((!arch || strcmp(pk->pkgs[i].arch, arch) == 0) &&
		    (!best || vg_trust_version_cmp(pk->pkgs[i].version, best) > 0))
			best = pk->pkgs[i].version;
	return best;
}
