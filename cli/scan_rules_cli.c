// SPDX-License-Identifier: MIT
/*
 * scan_rules_cli.c - `vigil scan --explain PATH` (which scan rule of
 * vigil.conf decides for a path, and why) and `vigil scan --import-aide
 * AIDE.CONF` (aide.conf's common subset as vigil.conf scan lines).
 *
 * The importer translates group definitions, regular, equals and negative
 * selection lines (restricted to file types or not) and comments; it
 * names on stderr, with its line number, each line it could not
 * translate, or translated only in part: macros, database and report
 * options, attributes vigil does not record. Every line it writes is checked by the same
 * parser vigil.conf goes through (vigil/scan_rules.h), so its output loads.
 * The rule engine itself is libvigil's; nothing here matches paths.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "cli.h"
#include "scan_rules_cli.h"
#include "vigil/scan_rules.h"

static const char *const sel_names[] = {
	[VG_SCAN_SEL_NONE] = "none",
	[VG_SCAN_SEL_REGULAR] = "regular",
	[VG_SCAN_SEL_EQUALS] = "equals",
	[VG_SCAN_SEL_NEGATIVE] = "negative",
};

static const char *const sel_words[] = {
	[VG_SCAN_SEL_NONE] = "no rule",
	[VG_SCAN_SEL_REGULAR] = "regular selection (the path and what is under it)",
	[VG_SCAN_SEL_EQUALS] = "equals selection (this path only)",
	[VG_SCAN_SEL_NEGATIVE] = "excluded",
};

static void explain_json(const char *path, const struct vg_scan_rule_info *ri,
			 const struct vg_scan_rules *rules)
{
	struct vg_scan_rule_info bi;
	enum vg_scan_baseline base = vg_scan_rules_baseline_of(rules, path, strlen(path), &bi);
	struct json_object *j = json_object_new_object(), *a = json_object_new_array(), *rule;

	json_object_object_add(j, "path", cli_json_path(path));
	json_object_object_add(j, "selection", json_object_new_string(sel_names[ri->sel]));
	json_object_object_add(j, "excluded",
			       json_object_new_boolean(ri->sel == VG_SCAN_SEL_NEGATIVE));
	if (ri->sel == VG_SCAN_SEL_NONE) {
		rule = NULL;
	} else {
		rule = json_object_new_object();
		json_object_object_add(rule, "file", cli_json_path(ri->file));
		json_object_object_add(rule, "line", json_object_new_int((int)ri->line));
		json_object_object_add(rule, "regex", json_object_new_string(ri->regex));
		json_object_object_add(rule, "types",
				       ri->types ? json_object_new_string(ri->types) : NULL);
		json_object_object_add(rule, "group",
				       ri->expr ? json_object_new_string(ri->expr) : NULL);
	}
	json_object_object_add(j, "rule", rule);
	for (unsigned int b = 0; b < VG_SCAN__NFIELDS; b++)
		if (ri->mask & (1u << b))
			json_object_array_add(a, json_object_new_string(vg_scan_field_name(1u << b)));
	json_object_object_add(j, "attributes", a);
	json_object_object_add(j, "growing", json_object_new_boolean(ri->mask & VG_SCAN_GROWING));
	json_object_object_add(j, "walked", json_object_new_boolean(!ri->prune));
	if (vg_scan_rules_has_trust(rules))
		json_object_object_add(j, "baseline",
				       json_object_new_string(base == VG_SCAN_BASELINE_TRUST ?
							      "archive" : "scan"));
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

int scan_explain(const struct vg_config *cfg, const char *path, bool json)
{
	struct vg_scan_rule_info ri;
	char attrs[512];
	size_t len = strlen(path);

	/* as recorded: no trailing '/' but for the root */
	while (len > 1 && path[len - 1] == '/')
		len--;
	char *p = strndup(path, len);

	if (!p) {
		cli_err("out of memory");
		return EXIT_ERROR;
	}
	struct stat st;
	bool typed = lstat(p, &st) == 0;

	/* the type of what is there now, for rules restricted to file types */
	vg_scan_rules_match(cfg->scan_rules, p, len, typed ? st.st_mode : 0, &ri);
	if (json) {
		explain_json(p, &ri, cfg->scan_rules);
		free(p);
		return EXIT_OK;
	}
	(void)vg_scan_attrs_text(ri.mask, attrs, sizeof(attrs));
	cli_put_path(stdout, p);
	if (ri.sel == VG_SCAN_SEL_NONE) {
		printf(": no rule: every attribute (%s)\n", attrs);
	} else if (ri.sel == VG_SCAN_SEL_NEGATIVE) {
		printf(": excluded by %s:%u: scan.rule = !%s%s%s\n", ri.file, ri.line, ri.regex,
		       ri.types ? " " : "", ri.types ? ri.types : "");
		printf("  neither recorded nor reported%s\n",
		       ri.prune ? "; a directory is not walked"
				: "; walked, for a deeper rule that selects below it");
	} else {
		printf(": %s by %s:%u: scan.rule = %s%s %s%s%s\n", sel_words[ri.sel], ri.file,
		       ri.line, ri.sel == VG_SCAN_SEL_EQUALS ? "=" : "", ri.regex,
		       ri.types ? ri.types : "", ri.types ? " " : "", ri.expr);
		printf("  group: %s\n  attributes: %s\n", ri.expr, attrs);
		if (ri.mask & VG_SCAN_GROWING)
			puts("  growing: a size, mtime or ctime that grew is no change");
	}
	if (!typed && vg_scan_rules_typed(cfg->scan_rules))
		puts("  (not found here: the rules restricted to file types were not considered)");
	if (vg_scan_rules_has_trust(cfg->scan_rules)) {
		struct vg_scan_rule_info bi;

		if (vg_scan_rules_baseline_of(cfg->scan_rules, p, len, &bi) == VG_SCAN_BASELINE_TRUST)
			printf("  baseline: the archive (%s:%u: scan.baseline = trust %s): judged against "
			       "the trust database if a current package ships it (a conffile that "
			       "differs from its package: by this database)\n", bi.file, bi.line,
			       bi.regex);
		else if (bi.sel != VG_SCAN_SEL_NONE)
			printf("  baseline: this database (%s:%u: scan.baseline = scan %s)\n", bi.file,
			       bi.line, bi.regex);
		else
			puts("  baseline: this database (no scan.baseline rule decides for it)");
	}
	free(p);
	return EXIT_OK;
}

/* ---- --import-aide ---- */

struct importer {
	const char *file;
	unsigned int line;
	unsigned int untranslated;	/* lines not (wholly) translated */
	struct vg_scan_rules *check;	/* what was written, parsed again */
	bool noted;			/* this line already counted */
};

/* vg_diag's "FILE:LINE: problem" without the place, which note() gives */
static const char *problem(const struct vg_diag *d)
{
	const char *m = strstr(d->msg, ": ");

	return m ? m + 2 : d->msg;
}

static void note(struct importer *im, const char *fmt, const char *arg)
{
	fprintf(stderr, "vigil scan: %s:%u: not translated: ", im->file, im->line);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	if (!im->noted)
		im->untranslated++;
	im->noted = true;
}

/* Why an AIDE attribute has no vigil counterpart. */
static const char *why_not(const char *name)
{
	static const struct {
		const char *name, *why;
	} w[] = {
		{ "a", "vigil does not record atime" },
		{ "b", "vigil does not record block counts" },
		{ "n", "vigil does not record link counts" },
		{ "acl", "ACLs are xattrs: compared with xattrs, not alone" },
		{ "selinux", "SELinux labels are xattrs: compared with xattrs, not alone" },
		{ "caps", "capabilities are xattrs: compared with xattrs, not alone" },
		{ "e2fsattrs", "vigil does not record ext2 file attributes (chattr)" },
		{ "I", "vigil does not follow renamed files" },
		{ "ANF", "added files are always reported" },
		{ "ARF", "removed files are always reported" },
		{ "compressed", "vigil does not look into compressed files" },
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (strcmp(name, w[i].name) == 0)
			return w[i].why;
	return "vigil records no such attribute";
}

/* AIDE settings that are not group definitions (theirs have no '_'). */
static bool aide_option(const char *name)
{
	static const char *const plain[] = { "verbose", "grouped", "database", "summarize_changes" };

	if (strchr(name, '_'))
		return true;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (strcmp(name, plain[i]) == 0)
			return true;
	return false;
}

/*
 * Translate the AIDE attribute expression @expr into @out: each attribute
 * by its vigil name, groups kept, what vigil cannot compare dropped (and
 * noted). Return: 0, -1 (not translatable: noted).
 */
static int translate_expr(struct importer *im, const char *expr, char *out, size_t cap)
{
	const char *p = expr;
	size_t n = 0;
	bool first = true;

	out[0] = 0;
	while (*p) {
		char name[64], op = '+';
		const char *v;
		size_t k = 0;
		uint32_t dummy;

		if (*p == '+' || *p == '-')
			op = *p++;
		if (*p == '>') {
			name[k++] = *p++;
		} else {
			while (*p && *p != '+' && *p != '-' && k < sizeof(name) - 1)
				name[k++] = *p++;
		}
		name[k] = 0;
		if (!k) {
			note(im, "malformed attribute expression '%s'", expr);
			return -1;
		}
		v = vg_scan_attr_aide(name);
		if (!v && vg_scan_rules_expr(im->check, name, &dummy, NULL, 0) == 0)
			v = name;	/* a group defined before */
		if (!v) {
			if (vg_scan_rules_expr(NULL, name, &dummy, NULL, 0) == -EOPNOTSUPP) {
				char msg[160];

				snprintf(msg, sizeof(msg), "attribute '%s' dropped (%s)", name,
					 why_not(name));
				note(im, "%s", msg);
			} else {
				note(im, "unknown attribute or group '%s' dropped", name);
			}
			continue;
		}
		int w = snprintf(out + n, cap - n, "%s%s", first && op == '+' ? "" :
				 first ? "E-" : op == '+' ? "+" : "-", v);

		if (w < 0 || (size_t)w >= cap - n) {
			note(im, "attribute expression too long: '%s'", expr);
			return -1;
		}
		n += (size_t)w;
		first = false;
	}
	if (first)
		snprintf(out, cap, "E");
	return 0;
}

static void import_group(struct importer *im, char *name, char *expr)
{
	char out[512];
	struct vg_diag d = { 0 };

	if (aide_option(name)) {
		note(im, "option '%s' has no vigil.conf counterpart", name);
		return;
	}
	if (translate_expr(im, expr, out, sizeof(out)) < 0)
		return;
	if (vg_scan_rules_group(im->check, name, out, im->file, im->line, &d) < 0) {
		note(im, "%s", problem(&d));
		return;
	}
	printf("scan.group %s = %s\n", name, out);
}

static void import_rule(struct importer *im, char *s)
{
	char *save = NULL, *re = strtok_r(s, " \t", &save);
	char *a = strtok_r(NULL, " \t", &save), *b = strtok_r(NULL, " \t", &save);
	char *types = NULL, *expr = a;
	char out[512], line[4400];
	struct vg_diag d = { 0 };

	if (strtok_r(NULL, " \t", &save) || (re[0] == '!' && b)) {
		note(im, "'%s': more words than a rule has", re);
		return;
	}
	if (re[0] == '!' || b) {	/* restricted: REGEX TYPES [EXPR] */
		types = a;
		expr = re[0] == '!' ? NULL : b;
	}
	if (re[0] != '!' && !expr) {
		note(im, "selection line '%s' without attributes", re);
		return;
	}
	if (types && strpbrk(types, "DP")) {
		note(im, "'%s': Solaris doors and event ports (D, P) do not exist on Linux", types);
		return;
	}
	if (re[0] == '=' && re[strlen(re) - 1] == '/') {
		note(im, "'%s': an equals rule for a directory and its entries has no vigil "
		     "counterpart (=REGEX is the path only)", re);
		return;
	}
	if (expr && translate_expr(im, expr, out, sizeof(out)) < 0)
		return;
	snprintf(line, sizeof(line), "%s%s%s%s%s", re, types ? " " : "", types ? types : "",
		 expr ? " " : "", expr ? out : "");
	if (vg_scan_rules_add(im->check, line, im->file, im->line, &d) < 0) {
		note(im, "%s", problem(&d));
		return;
	}
	printf("scan.rule = %s\n", line);
}

static void import_line(struct importer *im, char *s)
{
	char *eq, *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	if (!*s) {
		putchar('\n');
		return;
	}
	if (*s == '#') {
		puts(s);
		return;
	}
	if (strncmp(s, "@@", 2) == 0) {
		note(im, "macro line '%s' (vigil.conf has no macros: expand it by hand)", s);
		return;
	}
	if (strstr(s, "@@{")) {
		note(im, "'%s' uses a macro variable", s);
		return;
	}
	if (*s == '/' || *s == '=' || *s == '!') {
		if (strlen(s) > 4096) {
			note(im, "line longer than %s bytes", "4096");
			return;
		}
		import_rule(im, s);
		return;
	}
	eq = strchr(s, '=');
	if (!eq) {
		note(im, "'%s' is neither a definition nor a selection line", s);
		return;
	}
	*eq = 0;
	e = eq;
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	eq++;
	while (isspace((unsigned char)*eq))
		eq++;
	import_group(im, s, eq);
}

/* One file into @im (its groups stay for the next file). Return: 0, -1 (said). */
static int import_file(struct importer *im, const char *file)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char *line, *next;
	int r;

	im->file = file;
	im->line = 0;
	r = cli_read_file(file, CLI_SMALL_MAX, &buf, &len);
	if (r < 0) {
		cli_read_err(file, r, CLI_SMALL_MAX);
		return -1;
	}
	if (memchr(buf, 0, len)) {
		cli_file_err(file, "contains a NUL byte: not an aide.conf");
		free(buf);
		return -1;
	}
	if (len > 2 && buf[0] == '#' && buf[1] == '!') {
		im->line = 1;
		im->noted = false;
		note(im, "%s", "an executable configuration (AIDE runs it and reads what it "
		     "prints): import its output instead");
		free(buf);
		return 0;
	}
	printf("# translated from %s by vigil scan --import-aide\n", file);
	for (line = (char *)buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		im->line++;
		im->noted = false;
		import_line(im, line);
	}
	free(buf);
	return 0;
}

int scan_import_aide(const char *file, char *const *more, int nmore)
{
	struct importer im = { 0 };
	int rc = EXIT_OK;

	if (vg_scan_rules_new(&im.check) < 0) {
		cli_err("out of memory");
		return EXIT_ERROR;
	}
	if (import_file(&im, file) < 0)
		rc = EXIT_ERROR;
	for (int i = 0; i < nmore && rc == EXIT_OK; i++)
		if (import_file(&im, more[i]) < 0)
			rc = EXIT_ERROR;
	vg_scan_rules_free(im.check);
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		return EXIT_ERROR;
	}
	if (rc != EXIT_OK)
		return rc;
	if (im.untranslated)
		fprintf(stderr, "vigil scan: %s%s: %u line%s not (wholly) translated\n", file,
			nmore ? " and the files after it" : "", im.untranslated,
			im.untranslated == 1 ? "" : "s");
	return im.untranslated ? EXIT_NOTVERIFIED : EXIT_OK;
}
