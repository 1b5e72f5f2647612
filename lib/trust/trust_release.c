// SPDX-License-Identifier: MIT
/*
 * trust_release.c - a Debian InRelease file, verified: gpgv
 * (trust_gpgv.c) checks the OpenPGP signature against the keyrings and
 * writes the signed text; only that text is parsed (Origin, Label, Suite,
 * Codename, Date, Valid-Until, and the SHA256 section). What lies outside
 * the signature never reaches the parser. No OpenPGP here: gpgv is the
 * one home of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	const struct vg_trust_keys k = { .keyrings = keyrings, .nkr = nkr };

	return vg_trust_release_verify_keys(path, &k, gpgv, now, flags, ret, diag);
}

int vg_trust_release_verify_keys(const char *path, const struct vg_trust_keys *k,
				 const char *gpgv, int64_t now, unsigned int flags,
				 struct vg_trust_release *ret, struct vg_diag *diag)
{
	struct vg_trust_release rel;
	uint8_t *data = NULL;
	size_t len = 0, tlen = 0;
	char *text = NULL;
	int r;

	if (k->nkr == 0 || k->nkr > VG_TRUST_MAX_KEYRINGS)
		return vg_diag_set(diag, -EINVAL, "%zu keyrings (1 to %d)", k->nkr,
				   VG_TRUST_MAX_KEYRINGS);
	r = vg_file_read(path, RELEASE_MAX, &data, &len, diag);
	if (r < 0)
		return r;
	r = vg__trust_gpgv(gpgv ? gpgv : VG_TRUST_GPGV, k->keyrings, k->nkr, k->fprs, k->nfpr,
			   data, len, &text, &tlen, diag);
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
	return r;
}
