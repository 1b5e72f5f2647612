// SPDX-License-Identifier: MIT
/*
 * trust_deb.c - a .deb, checked and read: the whole file is read into
 * memory once (so what is checked is what is read), its SHA-256 and size
 * compared with the Packages stanza that a verified InRelease vouches
 * for, and only then opened with libarchive: the ar container, the
 * conffiles and maintainer scripts of control.tar.* (under the paths dpkg
 * keeps and runs them from), every regular file (digested in each
 * algorithm asked for) and symbolic link of data.tar.*. Directories,
 * devices and fifos are not recorded. No tar or ar parser here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "vigil/authenticode.h"
#include "vigil/fileio.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"
#include "internal.h"
#include "trust_internal.h"

/* the largest .deb read (firmware and debug packages reach a few hundred MiB) */
#define DEB_MAX ((uint64_t)4 << 30)
/* the largest boot image kept in memory for its Authenticode digest (kernels: ~8 MiB) */
#define BOOT_IMAGE_MAX ((uint64_t)256 << 20)

void vg_trust_deb_release(struct vg_trust_deb *deb)
{
	if (!deb)
		return;
	for (size_t i = 0; i < deb->n; i++) {
		free(deb->files[i].path);
		free(deb->files[i].target);
		free(deb->files[i].uname);
		free(deb->files[i].gname);
	}
	free(deb->files);
	memset(deb, 0, sizeof(*deb));
}

/* "./usr/bin/x", "usr/bin/x", "/usr//bin/./x" -> "/usr/bin/x"; NULL for the root or "..". */
static char *norm_path(const char *in)
{
	size_t l = strlen(in), n = 0;
	char *out = malloc(l + 2);
	const char *p = in;

	if (!out)
		return NULL;
	while (*p) {
		const char *s;
		size_t sl;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		sl = (size_t)(p - s);
		if (sl == 0 || (sl == 1 && s[0] == '.'))
			continue;
		if (sl == 2 && s[0] == '.' && s[1] == '.') {
			free(out);
			return NULL;
		}
		out[n++] = '/';
		memcpy(out + n, s, sl);
		n += sl;
	}
	if (n == 0) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	return out;
}

/* a nested archive read from the current member of the outer one */
static la_ssize_t member_read(struct archive *a, void *arg, const void **buf)
{
	struct archive *outer = arg;
	size_t size = 0;
	la_int64_t off;
	int r = archive_read_data_block(outer, buf, &size, &off);

	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK) {
		archive_set_error(a, EIO, "%s", archive_error_string(outer) ?
							archive_error_string(outer) : "damaged member");
		return -1;
	}
	return (la_ssize_t)size;
}

static struct vg_trust_file *add_file(struct vg_trust_deb *deb)
{
	if (deb->n == deb->cap) {
		size_t ncap = deb->cap ? deb->cap * 2 : 64;
		struct vg_trust_file *f = realloc(deb->files, ncap * sizeof(*f));

		if (!f)
			return NULL;
		deb->files = f;
		deb->cap = ncap;
	}
	memset(&deb->files[deb->n], 0, sizeof(deb->files[0]));
	return &deb->files[deb->n++];
}

/* the maintainer scripts dpkg runs; tmp: also run from tmp.ci by an unpack */
static const struct {
	const char *name;
	bool tmp;
} scripts[] = {
	{ "preinst", true }, { "postinst", false }, { "prerm", true },
	{ "postrm", true },  { "config", false },
};
#define NSCRIPTS (sizeof(scripts) / sizeof(scripts[0]))

struct ctx {
	EVP_MD *md[VG_TRUST_MAX_ALGOS];
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	size_t nalgos;
	EVP_MD_CTX *mctx[VG_TRUST_MAX_ALGOS];
	char *conffiles;	/* the conffiles member, NUL-terminated */
	size_t conffiles_len;
	bool multiarch_same;	/* control: "Multi-Arch: same" */
	char *control;		/* the control member, NUL-terminated */
	bool have_script[NSCRIPTS];
	struct vg_trust_file script[NSCRIPTS];	/* digests, mode and size; no path yet */
	const char *member;	/* for messages */
};

/*
 * the digests of the current entry's content into @f; @keep (may be NULL):
 * the content too, whole (f->size bytes, allocated here)
 */
static int digest_entry(struct ctx *c, struct archive *in, struct vg_trust_file *f,
			uint8_t **keep, struct vg_diag *diag)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	uint64_t total = 0;
	int r;

	if (keep) {
		*keep = calloc(1, f->size ? (size_t)f->size : 1);
		if (!*keep)
			return vg_diag_set(diag, -ENOMEM, "out of memory");
	}

	for (size_t i = 0; i < c->nalgos; i++)
		if (!EVP_DigestInit_ex(c->mctx[i], c->md[i], NULL))
			return vg_diag_ssl(diag, -ENOMEM, "digest");
	while ((r = archive_read_data_block(in, &buf, &size, &off)) == ARCHIVE_OK) {
		/* sparse entries: the holes are zeros */
		static const uint8_t zeros[4096];

		while ((uint64_t)off > total) {
			size_t z = (uint64_t)off - total > sizeof(zeros) ? sizeof(zeros) :
									    (size_t)((uint64_t)off - total);

			for (size_t i = 0; i < c->nalgos; i++)
				EVP_DigestUpdate(c->mctx[i], zeros, z);
			total += z;
		}
		for (size_t i = 0; i < c->nalgos; i++)
			if (!EVP_DigestUpdate(c->mctx[i], buf, size))
				return vg_diag_ssl(diag, -ENOMEM, "digest");
		if (keep && (total > f->size || size > f->size - total))
			return vg_diag_set(diag, -EBADMSG, "%s: %s: more content than its size",
					   c->member, f->path);
		if (keep && size)
			memcpy(*keep + total, buf, size);
		total += size;
	}
	if (r != ARCHIVE_EOF)
		return vg_diag_set(diag, -EBADMSG, "%s: %s: %s", c->member, f->path,
				   archive_error_string(in) ? archive_error_string(in) : "damaged");
	while (total < f->size) {
		static const uint8_t zeros[4096];
		size_t z = f->size - total > sizeof(zeros) ? sizeof(zeros) : (size_t)(f->size - total);

		for (size_t i = 0; i < c->nalgos; i++)
			EVP_DigestUpdate(c->mctx[i], zeros, z);
		total += z;
	}
	for (size_t i = 0; i < c->nalgos; i++) {
		unsigned int len = 0;

		if (!EVP_DigestFinal_ex(c->mctx[i], f->dg[i].bytes, &len))
			return vg_diag_ssl(diag, -ENOMEM, "digest");
		f->dg[i].algo = (uint8_t)c->algos[i];
		f->dg[i].len = (uint8_t)len;
	}
	return 0;
}

/* the owner of the entry @e as the archive gives it (names and ids). Return: 0, -ENOMEM. */
static int take_owner(struct vg_trust_file *f, struct archive_entry *e)
{
	const char *un = archive_entry_uname(e), *gn = archive_entry_gname(e);

	f->have_owner = true;
	f->uid = (uint32_t)archive_entry_uid(e);
	f->gid = (uint32_t)archive_entry_gid(e);
	f->uname = un && *un ? strdup(un) : NULL;
	f->gname = gn && *gn ? strdup(gn) : NULL;
	return (un && *un && !f->uname) || (gn && *gn && !f->gname) ? -ENOMEM : 0;
}

static struct vg_trust_file *find_file(struct vg_trust_deb *deb, const char *path)
{
	for (size_t i = deb->n; i-- > 0;)
		if (strcmp(deb->files[i].path, path) == 0)
			return &deb->files[i];
	return NULL;
}

/*
 * a boot image (trust_boot.h): digested as any file, and kept whole for
 * its Authenticode digest; a file there that is no PE image (a kernel of
 * another architecture) is only a file
 */
static int boot_entry(struct ctx *c, struct archive *in, struct vg_trust_file *f,
		      struct vg_diag *diag)
{
	uint8_t *img = NULL;
	struct vg_digest ad;
	int r = digest_entry(c, in, f, &img, diag);

	if (r == 0 && vg_pe_is_image(img, (size_t)f->size) &&
	    vg_authenticode_digest(img, (size_t)f->size, VG_HASH_SHA256, &ad, NULL) == 0) {
		memcpy(f->boot_authenticode, ad.bytes, 32);
		r = vg__trust_sha256(img, (size_t)f->size, f->boot_sha256);
		if (r < 0)
			r = vg_diag_set(diag, -ENOMEM, "SHA-256");
		else
			f->boot = true;
	}
	free(img);
	return r;
}

/* data.tar.*: every regular file and symbolic link into @deb */
static int read_data(struct ctx *c, struct archive *in, struct vg_trust_deb *deb,
		     struct vg_diag *diag)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		const char *hl = archive_entry_hardlink(e);
		mode_t type = archive_entry_filetype(e);
		struct vg_trust_file *f;
		char *path;

		if (!name)
			return vg_diag_set(diag, -EBADMSG, "%s: an entry without a name", c->member);
		if (!hl && type != AE_IFREG && type != AE_IFLNK)
			continue;
		path = norm_path(name);
		if (!path) {
			if (strcmp(name, ".") == 0 || strcmp(name, "./") == 0)
				continue;
			return vg_diag_set(diag, -EBADMSG, "%s: unsafe path \"%s\"", c->member, name);
		}
		f = add_file(deb);
		if (!f) {
			free(path);
			return vg_diag_set(diag, -ENOMEM, "out of memory");
		}
		f->path = path;
		f->mode = (uint32_t)archive_entry_mode(e);
		if (take_owner(f, e) < 0)
			return vg_diag_set(diag, -ENOMEM, "out of memory");
		if (hl) {
			char *tp = norm_path(hl);
			struct vg_trust_file *t = tp ? find_file(deb, tp) : NULL;

			free(tp);
			if (!t || t == f || t->target)
				return vg_diag_set(diag, -EBADMSG, "%s: %s: a hard link to \"%s\", "
						   "not a file before it", c->member, path, hl);
			f->size = t->size;
			f->mode = (t->mode & ~(uint32_t)07777) | (f->mode & 07777);
			memcpy(f->dg, t->dg, sizeof(f->dg));
			continue;
		}
		if (type == AE_IFLNK) {
			const char *tg = archive_entry_symlink(e);

			f->target = strdup(tg ? tg : "");
			if (!f->target)
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			f->size = strlen(f->target);
			continue;
		}
		f->size = (uint64_t)archive_entry_size(e);
		if (vg_trust_boot_role(path) != VG_BOOT_NONE && f->size <= BOOT_IMAGE_MAX) {
			r = boot_entry(c, in, f, diag);
			if (r < 0)
				return r;
			continue;
		}
		r = digest_entry(c, in, f, NULL, diag);
		if (r < 0)
			return r;
	}
	if (r != ARCHIVE_EOF)
		return vg_diag_set(diag, -EBADMSG, "%s: %s", c->member,
				   archive_error_string(in) ? archive_error_string(in) : "damaged");
	return 0;
}

/* a control.tar member read whole, NUL-terminated (conffiles, control) */
static int read_small(struct ctx *c, struct archive *in, struct archive_entry *e,
		      const char *what, char **ret, size_t *ret_len, struct vg_diag *diag)
{
	uint8_t *buf;
	la_ssize_t got;
	size_t n = 0;

	if (archive_entry_size(e) < 0 || archive_entry_size(e) > (1 << 24))
		return vg_diag_set(diag, -EBADMSG, "%s: %s too large", c->member, what);
	buf = malloc((size_t)archive_entry_size(e) + 1);
	if (!buf)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	while (n < (size_t)archive_entry_size(e) &&
	       (got = archive_read_data(in, buf + n, (size_t)archive_entry_size(e) - n)) > 0)
		n += (size_t)got;
	if (n < (size_t)archive_entry_size(e)) {
		free(buf);
		return vg_diag_set(diag, -EBADMSG, "%s: %s: %s", c->member, what,
				   archive_error_string(in) ? archive_error_string(in) :
							      "truncated");
	}
	buf[n] = '\0';
	*ret = (char *)buf;
	*ret_len = n;
	return 0;
}

/* "Multi-Arch: same" in the control text (field names are case-insensitive) */
static bool control_multiarch_same(const char *t)
{
	for (const char *l = t; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *v;

		if (strncasecmp(l, "Multi-Arch:", 11) != 0)
			continue;
		v = l + 11;
		while (*v == ' ' || *v == '\t')
			v++;
		return strncmp(v, "same", 4) == 0 &&
		       (v[4] == '\n' || v[4] == '\0' || v[4] == ' ' || v[4] == '\t' || v[4] == '\r');
	}
	return false;
}

/* Whether control text @t's field @name (case-insensitive) is @want exactly; no such field: true. */
static bool control_field_is(const char *t, const char *name, const char *want)
{
	size_t nl = strlen(name), wl = strlen(want);

	for (const char *l = t; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *v, *end;

		if (strncasecmp(l, name, nl) != 0 || l[nl] != ':')
			continue;
		v = l + nl + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		end = v + strcspn(v, "\n");
		while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			end--;
		return (size_t)(end - v) == wl && memcmp(v, want, wl) == 0;
	}
	return true;
}

/* the member name without "./", or NULL */
static const char *control_name(const char *name)
{
	if (!name)
		return NULL;
	return strncmp(name, "./", 2) == 0 ? name + 2 : name;
}

/* control.tar.*: keep conffiles, Multi-Arch, and the maintainer scripts' digests */
static int read_control(struct ctx *c, struct archive *in, struct vg_diag *diag)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *name = control_name(archive_entry_pathname(e));
		char *buf = NULL;
		size_t n = 0;

		/* a link (hard or symbolic) carries no content of its own: not recorded */
		if (!name || archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e))
			continue;
		if (strcmp(name, "conffiles") == 0) {
			r = read_small(c, in, e, "conffiles", &buf, &n, diag);
			if (r < 0)
				return r;
			free(c->conffiles);
			c->conffiles = buf;
			c->conffiles_len = n;
			continue;
		}
		if (strcmp(name, "control") == 0) {
			r = read_small(c, in, e, "control", &buf, &n, diag);
			if (r < 0)
				return r;
			c->multiarch_same = control_multiarch_same(buf);
			free(c->control);
			c->control = (char *)buf;
			continue;
		}
		for (size_t i = 0; i < NSCRIPTS; i++) {
			struct vg_trust_file *f = &c->script[i];

			if (strcmp(name, scripts[i].name) != 0)
				continue;
			/* a script twice in control.tar: the last one, as tar would leave it */
			free(f->uname);
			free(f->gname);
			memset(f, 0, sizeof(*f));
			f->path = (char *)scripts[i].name;	/* for messages only */
			f->mode = (uint32_t)archive_entry_mode(e);
			if (take_owner(f, e) < 0)
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			f->size = (uint64_t)archive_entry_size(e);
			r = digest_entry(c, in, f, NULL, diag);
			f->path = NULL;
			if (r < 0)
				return r;
			c->have_script[i] = true;
		}
	}
	if (r != ARCHIVE_EOF)
		return vg_diag_set(diag, -EBADMSG, "%s: %s", c->member,
				   archive_error_string(in) ? archive_error_string(in) : "damaged");
	return 0;
}

/* one path component of a dpkg name: no '/', not empty, not "." or ".." */
static bool name_ok(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* the maintainer scripts as files, under info/ and (those an unpack runs) tmp.ci/ */
static int add_scripts(struct ctx *c, const struct vg_trust_pkg *want, struct vg_trust_deb *deb,
		       struct vg_diag *diag)
{
	for (size_t i = 0; i < NSCRIPTS; i++) {
		for (int tmp = 0; c->have_script[i] && tmp < 2; tmp++) {
			struct vg_trust_file *f;
			char *path;
			int n;

			if (tmp && !scripts[i].tmp)
				continue;
			if (!name_ok(want->package) || (c->multiarch_same && !name_ok(want->arch)))
				return vg_diag_set(diag, -EBADMSG, "package \"%s\" architecture \"%s\": "
						   "not a file name", want->package ? want->package : "",
						   want->arch ? want->arch : "");
			if (tmp)
				n = asprintf(&path, "%s%s", VG_TRUST_DPKG_TMPCI, scripts[i].name);
			else if (c->multiarch_same)
				n = asprintf(&path, "%s%s:%s.%s", VG_TRUST_DPKG_INFO, want->package,
					     want->arch, scripts[i].name);
			else
				n = asprintf(&path, "%s%s.%s", VG_TRUST_DPKG_INFO, want->package,
					     scripts[i].name);
			if (n < 0)
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			f = add_file(deb);
			if (!f) {
				free(path);
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			}
			*f = c->script[i];
			f->uname = c->script[i].uname ? strdup(c->script[i].uname) : NULL;
			f->gname = c->script[i].gname ? strdup(c->script[i].gname) : NULL;
			f->path = path;
			if ((c->script[i].uname && !f->uname) || (c->script[i].gname && !f->gname))
				return vg_diag_set(diag, -ENOMEM, "out of memory");
			f->kind = tmp ? VG_TRUST_KIND_SCRIPT_TMP : VG_TRUST_KIND_SCRIPT;
		}
	}
	return 0;
}

/* Flag the files the conffiles list names ("remove-on-upgrade" ones are not kept). */
static void mark_conffiles(struct ctx *c, struct vg_trust_deb *deb)
{
	char *p = c->conffiles;

	while (p && *p) {
		char *nl = strchr(p, '\n'), *path = p, *sp;

		if (nl)
			*nl = '\0';
		sp = strrchr(p, ' ');
		if (sp && strncmp(p, "remove-on-upgrade ", 18) == 0)
			path = NULL;
		else if (sp)
			path = sp + 1;
		if (path && path[0] == '/') {
			char *np = norm_path(path);

			for (size_t i = 0; np && i < deb->n; i++)
				if (deb->files[i].kind == VG_TRUST_KIND_FILE &&
				    strcmp(deb->files[i].path, np) == 0) {
					deb->files[i].conffile = true;
					deb->files[i].kind = VG_TRUST_KIND_CONFFILE;
				}
			free(np);
		}
		p = nl ? nl + 1 : NULL;
	}
}

static int read_member(struct ctx *c, struct archive *outer, bool data, struct vg_trust_deb *deb,
		       struct vg_diag *diag)
{
	struct archive *in = archive_read_new();
	int r;

	if (!in)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	archive_read_support_format_gnutar(in);
	if (archive_read_open(in, outer, NULL, member_read, NULL) != ARCHIVE_OK) {
		r = vg_diag_set(diag, -EBADMSG, "%s: %s", c->member,
				archive_error_string(in) ? archive_error_string(in) : "unreadable");
		archive_read_free(in);
		return r;
	}
	r = data ? read_data(c, in, deb, diag) : read_control(c, in, diag);
	archive_read_free(in);
	return r;
}

int vg_trust_deb_read(int fd, const struct vg_trust_pkg *want, const unsigned int *algos,
		      size_t nalgos, struct vg_trust_deb *ret, struct vg_diag *diag)
{
	struct vg_trust_deb deb = { 0 };
	struct ctx c = { .nalgos = nalgos };
	struct archive *a = NULL;
	struct archive_entry *e;
	uint8_t *data = NULL;
	size_t len = 0;
	bool seen_data = false;
	int r;

	if (nalgos == 0 || nalgos > VG_TRUST_MAX_ALGOS)
		return vg_diag_set(diag, -EINVAL, "%zu digest algorithms", nalgos);
	if (want->size > DEB_MAX)
		return vg_diag_set(diag, -EFBIG, "larger than %llu MiB",
				   (unsigned long long)(DEB_MAX >> 20));
	/* one byte more than the stanza says, to see a longer file */
	r = vg_fd_read_file(fd, (size_t)want->size + 1, &data, &len);
	if (r == -EFBIG || (r == 0 && len != want->size)) {
		if (r == 0)
			free(data);
		return vg_diag_set(diag, -EKEYREJECTED, "size differs from the signed index "
				   "(%llu bytes listed)", (unsigned long long)want->size);
	}
	if (r < 0)
		return vg_diag_set(diag, r, "%s", strerror(-r));
	if (vg__trust_sha256(data, len, deb.sha256) < 0) {
		r = vg_diag_set(diag, -ENOMEM, "SHA-256");
		goto out;
	}
	if (memcmp(deb.sha256, want->sha256, 32) != 0) {
		char hex[65];

		vg_hex_encode(deb.sha256, 32, hex);
		r = vg_diag_set(diag, -EKEYREJECTED, "sha256 %s differs from the signed index", hex);
		goto out;
	}
	deb.size = len;
	for (size_t i = 0; i < nalgos; i++) {
		c.algos[i] = algos[i];
		c.md[i] = vg__md_fetch(algos[i]);
		c.mctx[i] = EVP_MD_CTX_new();
		if (!c.md[i] || !c.mctx[i]) {
			r = vg_diag_ssl(diag, c.md[i] ? -ENOMEM : -EOPNOTSUPP, "digest %s",
					vg_hash_name(algos[i]) ? vg_hash_name(algos[i]) : "?");
			goto out;
		}
	}
	a = archive_read_new();
	if (!a) {
		r = vg_diag_set(diag, -ENOMEM, "out of memory");
		goto out;
	}
	archive_read_support_format_ar(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
		r = vg_diag_set(diag, -EBADMSG, "not an ar archive: %s",
				archive_error_string(a) ? archive_error_string(a) : "unreadable");
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);

		c.member = name ? name : "?";
		if (name && strncmp(name, "control.tar", 11) == 0) {
			r = read_member(&c, a, false, &deb, diag);
		} else if (name && strncmp(name, "data.tar", 8) == 0) {
			if (seen_data) {
				r = vg_diag_set(diag, -EBADMSG, "two data.tar members");
				goto out;
			}
			seen_data = true;
			r = read_member(&c, a, true, &deb, diag);
		} else {
			r = 0;
		}
		if (r < 0)
			goto out;
	}
	if (r != ARCHIVE_EOF) {
		r = vg_diag_set(diag, -EBADMSG, "%s",
				archive_error_string(a) ? archive_error_string(a) : "damaged");
		goto out;
	}
	if (!seen_data) {
		r = vg_diag_set(diag, -EBADMSG, "no data.tar member");
		goto out;
	}
	/* the package the bytes say they are is the one asked for */
	if (c.control) {
		static const char *const fields[] = { "Package", "Version", "Architecture" };
		const char *wants[] = { want->package, want->version, want->arch };

		for (size_t i = 0; i < 3; i++)
			if (wants[i] && !control_field_is(c.control, fields[i], wants[i])) {
				r = vg_diag_set(diag, -EKEYREJECTED, "its control file's %s is not "
						"\"%s\"", fields[i], wants[i]);
				goto out;
			}
	}
	mark_conffiles(&c, &deb);
	r = add_scripts(&c, want, &deb, diag);
	if (r < 0)
		goto out;
	*ret = deb;
	memset(&deb, 0, sizeof(deb));
	r = 0;
out:
	archive_read_free(a);
	for (size_t i = 0; i < nalgos; i++) {
		EVP_MD_CTX_free(c.mctx[i]);
		EVP_MD_free(c.md[i]);
	}
	for (size_t i = 0; i < NSCRIPTS; i++) {
		free(c.script[i].uname);
		free(c.script[i].gname);
	}
	free(c.conffiles);
	free(c.control);
	free(data);
	vg_trust_deb_release(&deb);
	return r;
}
