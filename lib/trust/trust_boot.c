// SPDX-License-Identifier: MIT
/*
 * trust_boot.c - the boot references of a trust database (trust_boot.h):
 * which files of a package are boot images (by path), the series their
 * versions supersede each other in, their states settled at each build,
 * and the references loaded into memory for a verifier, looked up by
 * Authenticode or file digest. The digests themselves are computed where
 * the .deb is read (trust_deb.c, authenticode.c); rows are written by
 * trust_db.c.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "vigil/trust.h"
#include "vigil/trust_boot.h"
#include "trust_db.h"

enum vg_boot_role vg_trust_boot_role(const char *path)
{
	static const struct {
		const char *glob;
		enum vg_boot_role role;
	} map[] = {
		/* shim-signed; shim-helpers-*-signed's MokManager and fallback */
		{ "/usr/lib/shim/shim*.efi.signed", VG_BOOT_SHIM },
		{ "/usr/lib/shim/mm*.efi.signed", VG_BOOT_EFI },
		{ "/usr/lib/shim/fb*.efi.signed", VG_BOOT_EFI },
		/* grub-efi-amd64-signed, grub-efi-arm64-signed, ... */
		{ "/usr/lib/grub/*-efi-signed/*.efi.signed", VG_BOOT_GRUB },
		/* linux-image-*: an EFI-stub kernel (a PE image) */
		{ "/boot/vmlinuz-*", VG_BOOT_KERNEL },
	};

	if (!path)
		return VG_BOOT_NONE;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (fnmatch(map[i].glob, path, FNM_PATHNAME) == 0)
			return map[i].role;
	return VG_BOOT_NONE;
}

const char *vg_trust_boot_role_name(enum vg_boot_role r)
{
	static const char *const n[] = { "", "shim", "GRUB", "kernel", "EFI application" };

	return (unsigned int)r <= VG_BOOT_ROLE_MAX ? n[r] : "";
}

int vg_trust_boot_series(const char *package, char *out, size_t cap)
{
	const char *p = package;
	int n;

	/* linux-image-ABI-FLAVOUR, ABI = [0-9.]+-[0-9]+ (6.1.0-41); +bpo and the like stay in FLAVOUR */
	if (strncmp(p, "linux-image-", 12) == 0) {
		const char *a = p + 12, *q = a;

		while (*q && ((*q >= '0' && *q <= '9') || *q == '.'))
			q++;
		if (q > a && *q == '-' && q[1] >= '0' && q[1] <= '9') {
			q++;
			while (*q >= '0' && *q <= '9')
				q++;
			if (*q == '-' && q[1]) {
				n = snprintf(out, cap, "linux-image-%s", q + 1);
				return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
			}
		}
	}
	n = snprintf(out, cap, "%s", package);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

/* ---- settled at each build ---- */

struct row {
	char *name, *version, *arch, *series;
	void *path;
	int plen;
	int role, state;
	int64_t since;
	bool pkg_current;
};

static void rows_free(struct row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].name);
		free(r[i].version);
		free(r[i].arch);
		free(r[i].series);
		free(r[i].path);
	}
	free(r);
}

static char *col(sqlite3_stmt *st, int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);

	return strdup(s ? s : "");
}

/* every boot row of @db, with whether its package is current. Return: 0, -errno. */
static int rows_load(struct vg_trust_db *db, struct row **ret, size_t *ret_n, struct vg_diag *diag)
{
	sqlite3_stmt *st = NULL;
	struct row *r = NULL;
	size_t n = 0, cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db->db, "SELECT b.name, b.version, b.arch, b.path, b.role, b.series,"
				       " b.state, b.since, EXISTS(SELECT 1 FROM packages p WHERE"
				       " p.name = b.name AND p.version = b.version AND"
				       " p.arch = b.arch AND p.state = 0) FROM boot b",
			       -1, &st, NULL) != SQLITE_OK)
		return vg__trust_db_err(db, diag, -EIO, "reading the boot images");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct row *x;

		if (n == cap) {
			struct row *nr = realloc(r, (cap = cap ? cap * 2 : 16) * sizeof(*nr));

			if (!nr)
				goto nomem;
			r = nr;
		}
		x = &r[n++];
		memset(x, 0, sizeof(*x));
		x->name = col(st, 0);
		x->version = col(st, 1);
		x->arch = col(st, 2);
		x->plen = sqlite3_column_bytes(st, 3);
		x->path = malloc((size_t)x->plen + 1);
		x->series = col(st, 5);
		if (!x->name || !x->version || !x->arch || !x->path || !x->series)
			goto nomem;
		if (x->plen)
			memcpy(x->path, sqlite3_column_blob(st, 3), (size_t)x->plen);
		x->role = sqlite3_column_int(st, 4);
		x->state = sqlite3_column_int(st, 6);
		x->since = sqlite3_column_int64(st, 7);
		x->pkg_current = sqlite3_column_int(st, 8) != 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rows_free(r, n);
		return vg__trust_db_err(db, diag, -EIO, "reading the boot images");
	}
	*ret = r;
	*ret_n = n;
	return 0;
nomem:
	sqlite3_finalize(st);
	rows_free(r, n);
	return vg_diag_set(diag, -ENOMEM, "out of memory");
}

int vg_trust_db_boot_settle(struct vg_trust_db *db, int64_t now, int64_t grace,
			    struct vg_diag *diag)
{
	sqlite3_stmt *up = NULL;
	struct row *r = NULL;
	size_t n = 0;
	int expired = 0, res;

	if (!db->writing)
		return vg_diag_set(diag, -EINVAL, "%s: not being written", db->path);
	res = rows_load(db, &r, &n, diag);
	if (res < 0)
		return res;
	if (sqlite3_prepare_v2(db->db, "UPDATE boot SET state = ?, since = ? WHERE name = ? AND"
				       " version = ? AND arch = ? AND path = ?", -1, &up,
			       NULL) != SQLITE_OK) {
		rows_free(r, n);
		return vg__trust_db_err(db, diag, -EIO, "settling the boot images");
	}
	for (size_t i = 0; i < n && res >= 0; i++) {
		struct row *x = &r[i];
		bool cur = x->pkg_current;
		int state = x->state;
		int64_t since = x->since;

		/* a higher version of the same role in the series, its package current */
		for (size_t k = 0; cur && k < n; k++)
			if (k != i && r[k].pkg_current && r[k].role == x->role &&
			    strcmp(r[k].series, x->series) == 0 && strcmp(r[k].arch, x->arch) == 0 &&
			    vg_trust_version_cmp(r[k].version, x->version) > 0)
				cur = false;
		if (cur) {
			state = VG_BOOT_CURRENT;
			since = 0;
		} else {
			if (state == VG_BOOT_CURRENT) {
				state = VG_BOOT_SUPERSEDED;
				since = now;
			}
			if (state == VG_BOOT_SUPERSEDED && now - since >= grace) {
				state = VG_BOOT_EXPIRED;
				expired++;
			}
		}
		if (state == x->state && since == x->since)
			continue;
		sqlite3_reset(up);
		if (sqlite3_bind_int(up, 1, state) != SQLITE_OK ||
		    sqlite3_bind_int64(up, 2, since) != SQLITE_OK ||
		    sqlite3_bind_text(up, 3, x->name, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_bind_text(up, 4, x->version, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_bind_text(up, 5, x->arch, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_bind_blob(up, 6, x->path, x->plen, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_step(up) != SQLITE_DONE)
			res = vg__trust_db_err(db, diag, -EIO, "settling the boot images");
	}
	sqlite3_finalize(up);
	rows_free(r, n);
	return res < 0 ? res : expired;
}

/* ---- in memory ---- */

struct vg_trust_boot {
	struct vg_trust_boot_ref *refs;
	size_t n;
	char *strings;			/* every string of refs, one block */
};

size_t vg_trust_boot_count(const struct vg_trust_boot *b)
{
	return b ? b->n : 0;
}

const struct vg_trust_boot_ref *vg_trust_boot_at(const struct vg_trust_boot *b, size_t i)
{
	return b && i < b->n ? &b->refs[i] : NULL;
}

void vg_trust_boot_free(struct vg_trust_boot *b)
{
	if (!b)
		return;
	free(b->refs);
	free(b->strings);
	free(b);
}

int vg_trust_boot_load(struct vg_trust_db *db, struct vg_trust_boot **ret, struct vg_diag *diag)
{
	struct vg_trust_boot *b = calloc(1, sizeof(*b));
	sqlite3_stmt *st = NULL;
	size_t cap = 0, slen = 0, scap = 0;
	size_t (*off)[5] = NULL;	/* string offsets per ref: package, version, arch, path, series */
	int rc, r = 0;

	if (!b)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	if (db->format < 4) {
		*ret = b;
		return 0;
	}
	if (sqlite3_prepare_v2(db->db, "SELECT name, version, arch, path, role, series, authenticode,"
				       " sha256, state, since FROM boot ORDER BY name, version, path",
			       -1, &st, NULL) != SQLITE_OK) {
		free(b);
		return vg__trust_db_err(db, diag, -EIO, "reading the boot images");
	}
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct vg_trust_boot_ref *x;

		if (sqlite3_column_bytes(st, 6) != 32 || sqlite3_column_bytes(st, 7) != 32 ||
		    sqlite3_column_int(st, 4) < 1 || sqlite3_column_int(st, 4) > VG_BOOT_ROLE_MAX ||
		    sqlite3_column_int(st, 8) < 0 || sqlite3_column_int(st, 8) > VG_BOOT_EXPIRED) {
			r = vg_diag_set(diag, -EBADMSG, "%s: a boot image row that is not one", db->path);
			break;
		}
		if (b->n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct vg_trust_boot_ref *nr = realloc(b->refs, nc * sizeof(*nr));
			size_t (*no)[5] = nr ? realloc(off, nc * sizeof(*no)) : NULL;

			if (nr)
				b->refs = nr;
			if (!no) {
				r = vg_diag_set(diag, -ENOMEM, "out of memory");
				break;
			}
			off = no;
			cap = nc;
		}
		x = &b->refs[b->n];
		memset(x, 0, sizeof(*x));
		x->role = (enum vg_boot_role)sqlite3_column_int(st, 4);
		x->state = (enum vg_boot_state)sqlite3_column_int(st, 8);
		x->since = sqlite3_column_int64(st, 9);
		memcpy(x->authenticode, sqlite3_column_blob(st, 6), 32);
		memcpy(x->sha256, sqlite3_column_blob(st, 7), 32);
		for (int k = 0; k < 5 && r == 0; k++) {
			static const int c[5] = { 0, 1, 2, 3, 5 };
			const void *v = sqlite3_column_blob(st, c[k]);
			size_t l = (size_t)sqlite3_column_bytes(st, c[k]);

			if (slen + l + 1 > scap) {
				size_t ns = (slen + l + 1) * 2 + 256;
				char *s = realloc(b->strings, ns);

				if (!s) {
					r = vg_diag_set(diag, -ENOMEM, "out of memory");
					break;
				}
				b->strings = s;
				scap = ns;
			}
			if (l)
				memcpy(b->strings + slen, v, l);
			b->strings[slen + l] = '\0';
			off[b->n][k] = slen;
			slen += l + 1;
		}
		if (r == 0)
			b->n++;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = vg__trust_db_err(db, diag, -EIO, "reading the boot images");
	sqlite3_finalize(st);
	if (r < 0) {
		free(off);
		vg_trust_boot_free(b);
		return r;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct vg_trust_boot_ref *x = &b->refs[i];

		x->package = b->strings + off[i][0];
		x->version = b->strings + off[i][1];
		x->arch = b->strings + off[i][2];
		x->path = b->strings + off[i][3];
		x->series = b->strings + off[i][4];
	}
	free(off);
	/* each reference's series' newest current version, to name what superseded it */
	for (size_t i = 0; i < b->n; i++)
		for (size_t k = 0; k < b->n; k++) {
			const struct vg_trust_boot_ref *y = &b->refs[k];
			struct vg_trust_boot_ref *x = &b->refs[i];

			if (y->state == VG_BOOT_CURRENT && y->role == x->role &&
			    strcmp(y->series, x->series) == 0 && strcmp(y->arch, x->arch) == 0 &&
			    (!x->newest || vg_trust_version_cmp(y->version, x->newest) > 0))
				x->newest = y->version;
		}
	*ret = b;
	return 0;
}

size_t vg_trust_boot_find(const struct vg_trust_boot *b, enum vg_boot_role role,
			  enum vg_boot_digest which, const uint8_t sha256[32],
			  const struct vg_trust_boot_ref **ret, size_t max)
{
	size_t found = 0;

	if (!b)
		return 0;
	/* accepted ones first: current, superseded, then expired */
	for (int s = VG_BOOT_CURRENT; s <= VG_BOOT_EXPIRED; s++)
		for (size_t i = 0; i < b->n; i++) {
			const struct vg_trust_boot_ref *x = &b->refs[i];

			if ((int)x->state != s || (role != VG_BOOT_NONE && x->role != role) ||
			    memcmp(which == VG_BOOT_FILE ? x->sha256 : x->authenticode, sha256, 32))
				continue;
			if (found < max)
				ret[found] = x;
			found++;
		}
	return found;
}
