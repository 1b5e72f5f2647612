// SPDX-License-Identifier: MIT
/*
 * scan_report.c - the change list of `vigil scan` and its reports: text
 * (the counts first, as AIDE's summary, then added, removed and changed
 * entries, each change with its old and new values), JSON lines, and
 * AIDE 0.18's report layout (--format aide).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "cli.h"
#include "scan_report.h"
#include "vigil/outfile.h"

void changes_init(struct scan_changes *c, enum scan_format format, const char *db)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->format = format;
	c->db = db;
	clock_gettime(CLOCK_REALTIME, &c->start);
}

void changes_release(struct scan_changes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].pkg);
		json_object_put(c->v[i].diff);
	}
	free(c->v);
	pthread_mutex_destroy(&c->lock);
}

/* Append; takes @diff over. Return: 0, -1 (said). */
static int push(struct scan_changes *c, const char *path, uint32_t what, uint32_t then,
		uint32_t now, const char *xattrs, json_object *diff, const char *pkg)
{
	struct change *ch;
	int r = -1;

	pthread_mutex_lock(&c->lock);
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct change *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			goto out;
		c->v = v;
		c->cap = cap;
	}
	ch = &c->v[c->n];
	ch->path = strdup(path);
	ch->pkg = pkg ? strdup(pkg) : NULL;
	if (!ch->path || (pkg && !ch->pkg)) {
		free(ch->path);
		free(ch->pkg);
		goto out;
	}
	ch->what = what;
	ch->mode_then = then;
	ch->mode_now = now;
	ch->diff = diff;
	diff = NULL;
	snprintf(ch->xattrs, sizeof(ch->xattrs), "%s", xattrs ? xattrs : "");
	c->n++;
	r = 0;
out:
	pthread_mutex_unlock(&c->lock);
	json_object_put(diff);
	if (r < 0)
		cli_err("out of memory");
	return r;
}

int changes_add(struct scan_changes *c, const char *path, uint32_t what, uint32_t mode)
{
	return push(c, path, what, what == CH_REMOVED ? mode : 0, what == CH_ADDED ? mode : 0,
		    NULL, NULL, NULL);
}

int changes_add_archive(struct scan_changes *c, const char *path, uint32_t what, uint32_t mode,
			const char *pkg)
{
	return push(c, path, what, what == CH_REMOVED ? mode : 0, what == CH_ADDED ? mode : 0,
		    NULL, NULL, pkg);
}

static json_object *old_new(json_object *old, json_object *now)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "old", old);
	json_object_object_add(o, "new", now);
	return o;
}

static int xattr_pair(void *ctx, const char *name, const uint8_t *old, size_t oldlen,
		      const uint8_t *now, size_t nowlen)
{
	/* hex, or JSON null on the side where the name is absent */
	json_object_object_add(ctx, name, old_new(old ? cli_json_hex(old, oldlen) : NULL,
						   now ? cli_json_hex(now, nowlen) : NULL));
	return 0;
}

static int add_diff(struct scan_changes *c, const struct vg_scan_rec *then,
		    const struct vg_scan_rec *now, uint32_t what, const char *pkg)
{
	size_t cap = 4 * (then->target_len > now->target_len ? then->target_len
							       : now->target_len) + 160;
	char *a = malloc(cap), *b = malloc(cap), xs[256] = "";
	json_object *o = json_object_new_object();

	if (!a || !b || !o) {
		free(a);
		free(b);
		json_object_put(o);
		cli_err("out of memory");
		return -1;
	}
	for (unsigned int i = 0; i < VG_SCAN__NFIELDS; i++) {
		uint32_t bit = 1u << i;

		if (!(what & bit))
			continue;
		if (bit == VG_SCAN_XATTRS) {
			json_object *x = json_object_new_object();

			vg_scan_xattr_each(then, now, xattr_pair, x);
			json_object_object_add(o, "xattrs", x);
			vg_scan_xattr_diff(then, now, xs, sizeof(xs));
		} else if (vg_scan_field_text(then, bit, a, cap) == 0 &&
			   vg_scan_field_text(now, bit, b, cap) == 0) {
			json_object_object_add(o, vg_scan_field_name(bit),
					       old_new(json_object_new_string(a),
						       json_object_new_string(b)));
		}
	}
	free(a);
	free(b);
	return push(c, now->path, what, then->mode, now->mode, xs, o, pkg);
}

int changes_add_diff(struct scan_changes *c, const struct vg_scan_rec *then,
		     const struct vg_scan_rec *now, uint32_t what)
{
	return add_diff(c, then, now, what, NULL);
}

int changes_add_diff_archive(struct scan_changes *c, const struct vg_scan_rec *then,
			     const struct vg_scan_rec *now, uint32_t what, const char *pkg)
{
	return add_diff(c, then, now, what, pkg);
}

/* Added first, then removed, then changed; by path within each. */
static int rank(const struct change *c)
{
	return c->what == CH_ADDED ? 0 : c->what == CH_REMOVED ? 1 : 2;
}

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;

	if (rank(x) != rank(y))
		return rank(x) - rank(y);
	return strcmp(x->path, y->path);
}

static const char *json_str(json_object *o, const char *k1, const char *k2)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, k1, &v) || !json_object_object_get_ex(v, k2, &v))
		return NULL;
	return json_object_get_string(v);
}

/* ---- text and JSON ---- */

static void what_list(const struct change *c, char *out, size_t cap)
{
	size_t used = 0;

	out[0] = 0;
	for (unsigned int i = 0; i < VG_SCAN__NFIELDS; i++) {
		if (!(c->what & (1u << i)))
			continue;
		used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "",
					 vg_scan_field_name(1u << i));
		if ((1u << i) == VG_SCAN_XATTRS && c->xattrs[0])
			used += (size_t)snprintf(out + used, cap - used, ": %s", c->xattrs);
		if (used >= cap)
			break;
	}
}

/* "  FIELD: OLD -> NEW" lines, and "  xattr NAME: OLDHEX -> NEWHEX" ("(none)" when absent). */
static void print_diff(FILE *out, json_object *diff)
{
	if (!diff)
		return;
	json_object_object_foreach(diff, field, v) {
		if (strcmp(field, "xattrs") == 0) {
			json_object_object_foreach(v, name, x) {
				const char *o = json_str(v, name, "old"), *n = json_str(v, name, "new");

				(void)x;
				fprintf(out, "  xattr %s: %s -> %s\n", name, o ? o : "(none)",
					n ? n : "(none)");
			}
			continue;
		}
		fprintf(out, "  %s: %s -> %s\n", field, json_str(diff, field, "old"),
			json_str(diff, field, "new"));
	}
}

static void json_line(FILE *out, json_object *o)
{
	fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void report_json(FILE *out, const struct scan_changes *c, const size_t count[3])
{
	json_object *o;

	for (size_t i = 0; i < c->n; i++) {
		const struct change *ch = &c->v[i];

		o = json_object_new_object();
		json_object_object_add(o, "file", cli_json_path(ch->path));
		json_object_object_add(o, "change", json_object_new_string(
			(const char *[]){ "added", "removed", "changed" }[rank(ch)]));
		if (c->archive_db)
			json_object_object_add(o, "baseline",
					       json_object_new_string(ch->pkg ? "archive" : "scan"));
		if (ch->pkg)
			json_object_object_add(o, "package", json_object_new_string(ch->pkg));
		if (rank(ch) == 2) {
			json_object *a = json_object_new_array();

			for (unsigned int b = 0; b < VG_SCAN__NFIELDS; b++)
				if (ch->what & (1u << b))
					json_object_array_add(a, json_object_new_string(
						vg_scan_field_name(1u << b)));
			json_object_object_add(o, "what", a);
			if (ch->xattrs[0])
				json_object_object_add(o, "xattrs", json_object_new_string(ch->xattrs));
			if (ch->diff)
				json_object_object_add(o, "diff", json_object_get(ch->diff));
		}
		json_line(out, o);
	}
	o = json_object_new_object();
	json_object_object_add(o, "summary", json_object_new_boolean(1));
	json_object_object_add(o, "checked", json_object_new_int64((int64_t)c->checked));
	json_object_object_add(o, "added", json_object_new_int64((int64_t)count[0]));
	json_object_object_add(o, "removed", json_object_new_int64((int64_t)count[1]));
	json_object_object_add(o, "changed", json_object_new_int64((int64_t)count[2]));
	if (c->archive_db)
		json_object_object_add(o, "archive", json_object_new_int64((int64_t)c->archive));
	json_line(out, o);
}

static void report_text(FILE *out, const struct scan_changes *c, const size_t count[3],
			bool quiet)
{
	static const char *const kind[] = { "added", "removed", "changed" };
	char what[512];

	if (!quiet) {
		fprintf(out, "%zu entries checked: %zu added, %zu removed, %zu changed",
			c->checked, count[0], count[1], count[2]);
		if (c->archive_db) {
			fprintf(out, "; %zu of them judged by the archive (", c->archive);
			cli_put_path(out, c->archive_db);
			fputc(')', out);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct change *ch = &c->v[i];

		fprintf(out, "%s: ", kind[rank(ch)]);
		cli_put_path(out, ch->path);
		if (rank(ch) == 2) {
			what_list(ch, what, sizeof(what));
			fprintf(out, " (%s)", what);
		}
		/* the baseline that judged it: the archive says so, the scan's database says nothing */
		if (ch->pkg)
			fprintf(out, " [archive: %s]", ch->pkg);
		fputc('\n', out);
		if (rank(ch) == 2)
			print_diff(out, ch->diff);
	}
}

/* ---- AIDE 0.18's layout ---- */

#define AIDE_RULE "---------------------------------------------------\n"

static char aide_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	default: return '!';
	}
}

static const char *aide_kind(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "File";
	case S_IFDIR: return "Directory";
	case S_IFLNK: return "Link";
	case S_IFCHR: return "Character device";
	case S_IFBLK: return "Block device";
	case S_IFIFO: return "FIFO";
	case S_IFSOCK: return "Socket";
	default: return "Unknown file type";
	}
}

static void aide_time(char *out, size_t cap, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%d %H:%M:%S +0000", &tm);
}

/*
 * The 18-character summary of a changed entry, "YlZbpugamcinHAXSEC": the
 * type, then per attribute its letter when it changed, '.' when compared
 * and equal, ' ' when vigil does not record it (block count, atime, ACLs
 * apart from their xattr, SELinux apart from its xattr, e2fs attributes,
 * capabilities apart from their xattr). Size is '<', '>' or '='.
 */
static void aide_summary(const struct change *ch, char s[19])
{
	bool reg = S_ISREG(ch->mode_now), lnk = S_ISLNK(ch->mode_now);
	const char *so = json_str(ch->diff, "size", "old"), *sn = json_str(ch->diff, "size", "new");
	char z = '=';

	if (so && sn) {
		unsigned long long a = strtoull(so, NULL, 10), b = strtoull(sn, NULL, 10);

		z = b > a ? '>' : b < a ? '<' : '=';
	}
	memset(s, ' ', 18);
	s[18] = 0;
	s[0] = aide_type(ch->mode_now);
	s[1] = lnk ? (ch->what & VG_SCAN_TARGET ? 'l' : '.') : ' ';
	s[2] = z;
	s[4] = ch->what & VG_SCAN_MODE ? 'p' : '.';
	s[5] = ch->what & VG_SCAN_UID ? 'u' : '.';
	s[6] = ch->what & VG_SCAN_GID ? 'g' : '.';
	s[8] = ch->what & VG_SCAN_MTIME ? 'm' : '.';
	s[9] = ch->what & VG_SCAN_CTIME ? 'c' : '.';
	s[10] = ch->what & VG_SCAN_INODE ? 'i' : '.';
	s[11] = ch->what & VG_SCAN_NLINK ? 'n' : '.';
	s[12] = reg ? (ch->what & VG_SCAN_CONTENT ? 'H' : '.') : ' ';
	s[14] = ch->what & VG_SCAN_XATTRS ? 'X' : '.';
}

/*
 * " Name      : old-column                       | new", long values wrapped
 * at 32; @now NULL: one column, " Name      : value".
 */
static void aide_line(FILE *out, const char *name, const char *old, const char *now)
{
	size_t lo = strlen(old), ln = now ? strlen(now) : 0;

	for (size_t off = 0; off == 0 || off < lo || off < ln; off += 32) {
		char a[33] = "", b[33] = "";

		if (off < lo)
			snprintf(a, sizeof(a), "%.32s", old + off);
		if (off < ln)
			snprintf(b, sizeof(b), "%.32s", now + off);
		if (off == 0)
			fprintf(out, " %-9s : ", name);
		else
			fputs("             ", out);
		if (now)
			fprintf(out, "%-32s | %s\n", a, b);
		else
			fprintf(out, "%s\n", a);
	}
}

/* "sha256:HEX" as AIDE shows a digest: base64, the algorithm upper case as its label. */
static void aide_digest(const char *v, char *label, size_t lcap, char *out, size_t cap)
{
	const char *colon = strchr(v, ':');
	uint8_t bin[64];
	int n;

	out[0] = 0;
	snprintf(label, lcap, "%.*s", colon ? (int)(colon - v) : 0, v);
	for (char *p = label; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	if (!colon)
		return;
	n = vg_hex_decode(colon + 1, bin, sizeof(bin));
	if (n > 0 && cap >= 4 * ((size_t)n + 2) / 3 + 1)
		EVP_EncodeBlock((unsigned char *)out, bin, n);
}

static void aide_perm(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISCHR(mode) ? 'c' :
		 S_ISBLK(mode) ? 'b' : S_ISFIFO(mode) ? 'p' : S_ISSOCK(mode) ? 's' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (1u << (8 - i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = mode & S_IXUSR ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = mode & S_IXGRP ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = mode & S_IXOTH ? 't' : 'T';
	out[10] = 0;
}

/* vigil's "2026-12-04T01:30:41.731713380Z" as AIDE's "2026-12-04 01:30:41 +0000" */
static void aide_iso(const char *v, char *out, size_t cap)
{
	snprintf(out, cap, "%.10s %.8s +0000", v, strlen(v) >= 19 ? v + 11 : "");
}

static void aide_details(FILE *out, const struct change *ch)
{
	static const struct { uint32_t bit; const char *name; } order[] = {
		{ VG_SCAN_TYPE, "File type" }, { VG_SCAN_TARGET, "Lname" },
		{ VG_SCAN_SIZE, "Size" }, { VG_SCAN_MODE, "Perm" },
		{ VG_SCAN_UID, "Uid" }, { VG_SCAN_GID, "Gid" },
		{ VG_SCAN_MTIME, "Mtime" }, { VG_SCAN_CTIME, "Ctime" },
		{ VG_SCAN_INODE, "Inode" },
		{ VG_SCAN_NLINK, "Linkcount" },
		{ VG_SCAN_CONTENT, NULL }, { VG_SCAN_XATTRS, "XAttrs" },
	};

	fprintf(out, "%s: ", aide_kind(ch->mode_now));
	cli_put_path(out, ch->path);
	fputc('\n', out);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *field = vg_scan_field_name(order[i].bit);
		const char *o = json_str(ch->diff, field, "old"), *n = json_str(ch->diff, field, "new");
		char a[200], b[200], label[16];

		if (!(ch->what & order[i].bit))
			continue;
		if (order[i].bit == VG_SCAN_XATTRS) {
			json_object *x = NULL;

			json_object_object_get_ex(ch->diff, "xattrs", &x);
			json_object_object_foreach(x, name, v) {
				const char *xo = json_str(x, name, "old"), *xn = json_str(x, name, "new");
				char *l = NULL, *r = NULL;

				(void)v;
				if ((xo && asprintf(&l, "%s=%s", name, xo) < 0) ||
				    (xn && asprintf(&r, "%s=%s", name, xn) < 0)) {
					free(l);
					l = r = NULL;
				}
				aide_line(out, order[i].name, l ? l : "(none)", r ? r : "(none)");
				free(l);
				free(r);
			}
			continue;
		}
		if (!o || !n)
			continue;
		if (order[i].bit == VG_SCAN_CONTENT) {
			aide_digest(o, label, sizeof(label), a, sizeof(a));
			aide_digest(n, label, sizeof(label), b, sizeof(b));
			aide_line(out, label, a, b);
		} else if (order[i].bit == VG_SCAN_MODE) {
			aide_perm(ch->mode_then, a);
			aide_perm(ch->mode_now, b);
			aide_line(out, order[i].name, a, b);
		} else if (order[i].bit == VG_SCAN_MTIME || order[i].bit == VG_SCAN_CTIME) {
			aide_iso(o, a, sizeof(a));
			aide_iso(n, b, sizeof(b));
			aide_line(out, order[i].name, a, b);
		} else {
			aide_line(out, order[i].name, o, n);
		}
	}
	fputc('\n', out);
}

/* The database's SHA-256 (base64), as AIDE's trailer lists its database's digests. */
static void aide_trailer(FILE *out, const char *db)
{
	uint8_t buf[65536], md[EVP_MAX_MD_SIZE];
	char b64[100];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int fd = db ? open(db, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t n = 0;
	bool ok = ctx && fd >= 0 && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;

	while (ok && (n = read(fd, buf, sizeof(buf))) > 0)
		ok = EVP_DigestUpdate(ctx, buf, (size_t)n) == 1;
	ok = ok && n == 0 && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1;
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return;
	EVP_EncodeBlock((unsigned char *)b64, md, (int)mdlen);
	fputs("\n" AIDE_RULE "The attributes of the database(s):\n" AIDE_RULE "\n", out);
	cli_put_path(out, db);
	fputc('\n', out);
	aide_line(out, "SHA256", b64, NULL);
}

static void aide_section(FILE *out, const char *title)
{
	fprintf(out, "\n" AIDE_RULE "%s:\n" AIDE_RULE "\n", title);
}

static void report_aide(FILE *out, const struct scan_changes *c, const size_t count[3])
{
	static const char *const title[] = { "Added entries", "Removed entries",
					     "Changed entries" };
	char t[40];
	struct timespec end;
	long secs;

	clock_gettime(CLOCK_REALTIME, &end);
	aide_time(t, sizeof(t), c->start.tv_sec);
	fprintf(out, "Start timestamp: %s (vigil %s)\n", t, VIGIL_VERSION);
	if (!c->n) {
		fprintf(out, "AIDE found NO differences between database and filesystem. "
			"Looks okay!!\n\nNumber of entries:\t%zu\n", c->checked);
	} else {
		fprintf(out, "AIDE found differences between database and filesystem!!\n\n"
			"Summary:\n  Total number of entries:\t%zu\n  Added entries:\t\t%zu\n"
			"  Removed entries:\t\t%zu\n  Changed entries:\t\t%zu\n",
			c->checked, count[0], count[1], count[2]);
	}
	for (int k = 0; k < 3; k++) {
		if (!count[k])
			continue;
		aide_section(out, title[k]);
		for (size_t i = 0; i < c->n; i++) {
			const struct change *ch = &c->v[i];
			char s[19];

			if (rank(ch) != k)
				continue;
			if (k == 2) {
				aide_summary(ch, s);
			} else {
				memset(s, k == 0 ? '+' : '-', 18);
				s[0] = aide_type(k == 0 ? ch->mode_now : ch->mode_then);
				s[18] = 0;
			}
			fprintf(out, "%s: ", s);
			cli_put_path(out, ch->path);
			fputc('\n', out);
		}
	}
	if (count[2]) {
		aide_section(out, "Detailed information about changes");
		for (size_t i = 0; i < c->n; i++)
			if (rank(&c->v[i]) == 2)
				aide_details(out, &c->v[i]);
	}
	aide_trailer(out, c->db);
	aide_time(t, sizeof(t), end.tv_sec);
	secs = (long)(end.tv_sec - c->start.tv_sec);
	fprintf(out, "\n\nEnd timestamp: %s (run time: %ldm %lds)\n", t, secs / 60, secs % 60);
}

void changes_report(FILE *out, struct scan_changes *c, bool quiet)
{
	size_t count[3] = { 0 };

	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_change);
	for (size_t i = 0; i < c->n; i++)
		count[rank(&c->v[i])]++;
	if (c->format == SCAN_JSON)
		report_json(out, c, count);
	else if (c->format == SCAN_AIDE)
		report_aide(out, c, count);
	else
		report_text(out, c, count, quiet);
}

int changes_deliver(struct scan_changes *c, bool quiet, const char *file, const char *cmd)
{
	char *buf = NULL, n[32];
	size_t len = 0;
	struct vg_diag d = { 0 };
	FILE *m;
	int r = 0, st;

	if (!file && !cmd) {
		changes_report(stdout, c, quiet);
		return 0;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		cli_err("out of memory");
		return -1;
	}
	changes_report(m, c, false);	/* the file and the command get the summary */
	if (fclose(m) != 0) {
		free(buf);
		cli_err("out of memory");
		return -1;
	}
	if (quiet)
		changes_report(stdout, c, true);
	else
		fwrite(buf, 1, len, stdout);
	fflush(stdout);
	if (file && vg_outfile_put(file, buf, len, 0640, 0, &d) < 0) {
		cli_err("--report: %s", d.msg);
		r = -1;
	}
	if (cmd && c->n) {
		FILE *p;

		snprintf(n, sizeof(n), "%zu", c->n);
		setenv("VIGIL_SCAN_DB", c->db, 1);
		setenv("VIGIL_SCAN_CHANGES", n, 1);
		signal(SIGPIPE, SIG_IGN);	/* a command that does not read its stdin */
		p = popen(cmd, "w");
		if (!p) {
			cli_err("--on-change: cannot run '%s': %s", cmd, strerror(errno));
			free(buf);
			return -1;
		}
		fwrite(buf, 1, len, p);
		st = pclose(p);
		if (st != 0) {
			cli_err("--on-change: '%s' %s %d", cmd,
				st > 0 && WIFEXITED(st) ? "exited with status" : "failed:",
				st > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : st);
			r = -1;
		}
	}
	free(buf);
	return r;
}
