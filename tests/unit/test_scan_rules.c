// SPDX-License-Identifier: MIT
/*
 * test_scan_rules.c - `vigil scan`'s per-path rules (scan_rules.h): the
 * attribute table and expressions, the matching table (regular, equals,
 * negative; deepest, then first), pruning, growing, refusals with
 * FILE:LINE, and every allocation failing in turn.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vigil/scan_rules.h"

#define META (VG_SCAN_MODE | VG_SCAN_UID | VG_SCAN_GID)

static uint32_t expr(const struct vg_scan_rules *r, const char *e)
{
	uint32_t m = 0xdeadbeef;
	char bad[64];

	assert_int_equal(vg_scan_rules_expr(r, e, &m, bad, sizeof(bad)), 0);
	return m;
}

static void expr_maps_aide_letters_and_names(void **state)
{
	char bad[64];
	uint32_t m;

	(void)state;
	assert_int_equal(expr(NULL, "p+u+g"), META);
	assert_int_equal(expr(NULL, "mode+uid+gid"), META);
	assert_int_equal(expr(NULL, "sha256"), VG_SCAN_CONTENT);
	assert_int_equal(expr(NULL, "md5+H"), VG_SCAN_CONTENT);
	assert_int_equal(expr(NULL, "l+i+ftype+s+m+c"), VG_SCAN_TARGET | VG_SCAN_INODE |
			 VG_SCAN_TYPE | VG_SCAN_SIZE | VG_SCAN_MTIME | VG_SCAN_CTIME);
	assert_int_equal(expr(NULL, "X"), VG_SCAN_XATTRS);
	assert_int_equal(expr(NULL, "E"), 0);
	assert_int_equal(expr(NULL, "all"), VG_SCAN_ALL);
	assert_int_equal(expr(NULL, "R-content-inode"),
			 expr(NULL, "R") & ~(uint32_t)(VG_SCAN_CONTENT | VG_SCAN_INODE));
	assert_int_equal(expr(NULL, "S"), VG_SCAN_SIZE | VG_SCAN_GROWING);
	assert_int_equal(expr(NULL, ">") & (VG_SCAN_SIZE | VG_SCAN_GROWING | VG_SCAN_CONTENT),
			 VG_SCAN_SIZE | VG_SCAN_GROWING);
	assert_int_equal(expr(NULL, " p + u "), VG_SCAN_MODE | VG_SCAN_UID);
	assert_int_equal(vg_scan_rules_expr(NULL, "p+acl", &m, bad, sizeof(bad)), -EOPNOTSUPP);
	assert_string_equal(bad, "acl");
	assert_int_equal(vg_scan_rules_expr(NULL, "p+nosuch", &m, bad, sizeof(bad)), -ENOENT);
	assert_string_equal(bad, "nosuch");
	assert_int_equal(vg_scan_rules_expr(NULL, "", &m, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(vg_scan_rules_expr(NULL, "p++u", &m, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(vg_scan_rules_expr(NULL, "p u", &m, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(vg_scan_attr_aide("p"), "mode");
	assert_string_equal(vg_scan_attr_aide("sha512"), "content");
	assert_string_equal(vg_scan_attr_aide("R"), "R");
	assert_null(vg_scan_attr_aide("selinux"));
}

static struct vg_scan_rules *build(const char *const *lines)
{
	struct vg_scan_rules *r;
	struct vg_diag d = { 0 };
	unsigned int line = 0;

	assert_int_equal(vg_scan_rules_new(&r), 0);
	for (const char *const *l = lines; *l; l++) {
		line++;
		if (strncmp(*l, "group ", 6) == 0) {
			char name[32];
			const char *eq = strchr(*l, '=');

			snprintf(name, sizeof(name), "%.*s", (int)(eq - *l - 7), *l + 6);
			assert_int_equal(vg_scan_rules_group(r, name, eq + 2, "t.conf", line, &d), 0);
		} else {
			assert_int_equal(vg_scan_rules_add(r, *l, "t.conf", line, &d), 0);
		}
	}
	return r;
}

static void match_table(void **state)
{
	static const char *const lines[] = {
		"group META = p+u+g",		/* 1 */
		"/ R",				/* 2 */
		"/usr all-inode",		/* 3 */
		"=/etc META",			/* 4 */
		"/var/log/.* META+size+growing", /* 5 */
		"!/proc",			/* 6 */
		"!/var/cache",			/* 7 */
		"/var/cache/keep R",		/* 8 */
		"/usr/lib/[a-z]+\\.so content",	/* 9 */
		"/usr/lib/x\\.so mode",		/* 10: deeper than 9 */
		"/srv/a mode",			/* 11 */
		"/srv/a uid",			/* 12: same node: the first wins */
		"=/srv/a/eq gid",		/* 13 */
		"/srv/a/eq%20sp size",		/* 14 */
		NULL,
	};
	static const struct {
		const char *path;
		enum vg_scan_sel sel;
		unsigned int line;
		bool prune;
	} cases[] = {
		{ "/", VG_SCAN_SEL_REGULAR, 2, false },
		{ "/bin/sh", VG_SCAN_SEL_REGULAR, 2, false },
		{ "/usr", VG_SCAN_SEL_REGULAR, 3, false },
		{ "/usr/bin/ls", VG_SCAN_SEL_REGULAR, 3, false },
		{ "/usrx", VG_SCAN_SEL_REGULAR, 2, false },	/* not under /usr */
		{ "/etc", VG_SCAN_SEL_EQUALS, 4, false },
		{ "/etc/passwd", VG_SCAN_SEL_REGULAR, 2, false },	/* = is the path only */
		{ "/var/log", VG_SCAN_SEL_REGULAR, 2, false },	/* .* needs a '/' after log */
		{ "/var/log/syslog", VG_SCAN_SEL_REGULAR, 5, false },
		{ "/var/log/apt/history.log", VG_SCAN_SEL_REGULAR, 5, false },
		{ "/proc", VG_SCAN_SEL_NEGATIVE, 6, true },
		{ "/proc/1/maps", VG_SCAN_SEL_NEGATIVE, 6, true },
		{ "/procx", VG_SCAN_SEL_REGULAR, 2, false },
		{ "/var/cache", VG_SCAN_SEL_NEGATIVE, 7, false },	/* a deeper rule below */
		{ "/var/cache/apt", VG_SCAN_SEL_NEGATIVE, 7, true },
		{ "/var/cache/keep", VG_SCAN_SEL_REGULAR, 8, false },
		{ "/var/cache/keep/a/b", VG_SCAN_SEL_REGULAR, 8, false },
		{ "/usr/lib/libc.so", VG_SCAN_SEL_REGULAR, 9, false },
		{ "/usr/lib/x.so", VG_SCAN_SEL_REGULAR, 10, false },
		{ "/usr/lib/xyso", VG_SCAN_SEL_REGULAR, 3, false },	/* \. is a dot */
		{ "/srv/a/f", VG_SCAN_SEL_REGULAR, 11, false },
		{ "/srv/a/eq", VG_SCAN_SEL_EQUALS, 13, false },
		{ "/srv/a/eq/child", VG_SCAN_SEL_REGULAR, 11, false },
		{ "/srv/a/eq sp", VG_SCAN_SEL_REGULAR, 14, false },
	};
	struct vg_scan_rules *r = build(lines);
	struct vg_scan_rule_info ri;

	(void)state;
	assert_int_equal(vg_scan_rules_count(r), 13);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum vg_scan_sel sel = vg_scan_rules_match(r, cases[i].path, strlen(cases[i].path),
							   S_IFDIR, &ri);

		if (sel != cases[i].sel || ri.line != cases[i].line || ri.prune != cases[i].prune)
			fail_msg("%s: got sel %d line %u prune %d, want %d %u %d", cases[i].path,
				 sel, ri.line, ri.prune, cases[i].sel, cases[i].line,
				 cases[i].prune);
		assert_string_equal(ri.file, "t.conf");
	}
	vg_scan_rules_match(r, "/etc", 4, S_IFREG, &ri);
	assert_int_equal(ri.mask, META);
	assert_string_equal(ri.expr, "META");
	assert_string_equal(ri.regex, "/etc");
	vg_scan_rules_match(r, "/usr/bin", 8, S_IFREG, &ri);
	assert_int_equal(ri.mask, VG_SCAN_ALL & ~(uint32_t)VG_SCAN_INODE);
	vg_scan_rules_match(r, "/proc", 5, S_IFREG, &ri);
	assert_int_equal(ri.mask, 0);
	assert_null(ri.expr);
	vg_scan_rules_free(r);
}

/* the shortcuts (literal prefix, plain rules without regexec) agree with the regex */
static void match_shortcuts(void **state)
{
	static const char *const lines[] = {
		"/opt/x? p",		/* 1: the x may be left out */
		"/alt/a|/alt/b u",	/* 2: an alternative: no literal prefix */
		"/esc/a\\.b g",	/* 3: plain, with an escaped dot */
		"=/eq s",		/* 4: plain equals */
		"/d/ m",		/* 5: plain, ending in '/' */
		"/star/ab* c",		/* 6 */
		NULL,
	};
	static const struct {
		const char *path;
		unsigned int line;	/* 0: no rule */
	} cases[] = {
		{ "/opt/", 1 }, { "/opt/x", 1 }, { "/opt/x/y", 1 }, { "/opt/xx", 0 },
		{ "/alt/a", 2 }, { "/alt/b/c", 2 }, { "/alt/c", 0 },
		{ "/esc/a.b", 3 }, { "/esc/a.b/c", 3 }, { "/esc/aXb", 0 }, { "/esc/a.bc", 0 },
		{ "/eq", 4 }, { "/eq/x", 0 }, { "/eqx", 0 },
		{ "/d/x", 5 }, { "/d/", 5 }, { "/d", 0 },
		{ "/star/a", 6 }, { "/star/abbb", 6 }, { "/star/ac", 0 },
	};
	struct vg_scan_rules *r = build(lines);
	struct vg_scan_rule_info ri;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vg_scan_rules_match(r, cases[i].path, strlen(cases[i].path), S_IFREG, &ri);
		if (ri.line != cases[i].line)
			fail_msg("%s: got line %u, want %u", cases[i].path, ri.line, cases[i].line);
	}
	vg_scan_rules_free(r);
}

/* AIDE's restricted rules: REGEX TYPES EXPR, !REGEX TYPES */
static void match_restricted_to_types(void **state)
{
	static const char *const lines[] = {
		"/r R",			/* 1 */
		"/r f,l p",		/* 2: same node, after 1: never decides */
		"/r/x d u",		/* 3 */
		"/r/x 0 g",		/* 4: 0, every type */
		"!/r/y p,s",		/* 5: fifos and sockets */
		NULL,
	};
	static const struct {
		const char *path;
		uint32_t mode;
		unsigned int line;
	} cases[] = {
		{ "/r/a", S_IFREG, 1 },
		{ "/r/x", S_IFDIR, 3 }, { "/r/x", S_IFREG, 4 }, { "/r/x", 0, 4 },
		{ "/r/x/f", S_IFLNK, 4 },
		{ "/r/y", S_IFIFO, 5 }, { "/r/y/s", S_IFSOCK, 5 }, { "/r/y", S_IFREG, 1 },
		{ "/r/y", 0, 1 },	/* type unknown: restricted rules not considered */
	};
	struct vg_scan_rules *r = build(lines);
	struct vg_scan_rule_info ri;

	(void)state;
	assert_true(vg_scan_rules_typed(r));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vg_scan_rules_match(r, cases[i].path, strlen(cases[i].path), cases[i].mode, &ri);
		if (ri.line != cases[i].line)
			fail_msg("%s (%o): got line %u, want %u", cases[i].path, cases[i].mode, ri.line,
				 cases[i].line);
	}
	vg_scan_rules_match(r, "/r/x", 4, S_IFDIR, &ri);
	assert_string_equal(ri.types, "d");
	vg_scan_rules_match(r, "/r/a", 4, S_IFREG, &ri);
	assert_null(ri.types);
	vg_scan_rules_free(r);
}

static void no_rules_compare_everything(void **state)
{
	struct vg_scan_rules *r;
	struct vg_scan_rule_info ri;

	(void)state;
	assert_int_equal(vg_scan_rules_match(NULL, "/x", 2, S_IFREG, &ri), VG_SCAN_SEL_NONE);
	assert_int_equal(ri.mask, VG_SCAN_ALL);
	assert_int_equal(vg_scan_rules_new(&r), 0);
	assert_false(vg_scan_rules_typed(r));
	assert_int_equal(vg_scan_rules_match(r, "/x", 2, S_IFREG, &ri), VG_SCAN_SEL_NONE);
	assert_int_equal(ri.mask, VG_SCAN_ALL);
	assert_null(ri.file);
	vg_scan_rules_free(r);
	vg_scan_rules_free(NULL);
}

static void unmatched_path_compares_everything(void **state)
{
	static const char *const lines[] = { "/etc p", NULL };
	struct vg_scan_rules *r = build(lines);
	struct vg_scan_rule_info ri;

	(void)state;
	assert_int_equal(vg_scan_rules_match(r, "/usr/x", 6, S_IFREG, &ri), VG_SCAN_SEL_NONE);
	assert_int_equal(ri.mask, VG_SCAN_ALL);
	vg_scan_rules_free(r);
}

static void filter_growing(void **state)
{
	struct vg_scan_rec then = { .size = 100, .mtime_ns = 10, .ctime_ns = 10, .mode = 0100644 };
	struct vg_scan_rec grew = then, shrank = then;
	uint32_t all = VG_SCAN_SIZE | VG_SCAN_MTIME | VG_SCAN_CTIME | VG_SCAN_CONTENT;

	(void)state;
	grew.size = 200;
	grew.mtime_ns = grew.ctime_ns = 20;
	shrank.size = 50;
	shrank.mtime_ns = shrank.ctime_ns = 20;
	assert_int_equal(vg_scan_rules_filter(VG_SCAN_ALL, &then, &grew, all), all);
	assert_int_equal(vg_scan_rules_filter(VG_SCAN_SIZE | VG_SCAN_GROWING, &then, &grew, all), 0);
	assert_int_equal(vg_scan_rules_filter(VG_SCAN_SIZE | VG_SCAN_GROWING, &then, &shrank, all),
			 VG_SCAN_SIZE);
	assert_int_equal(vg_scan_rules_filter(VG_SCAN_ALL | VG_SCAN_GROWING, &then, &grew, all),
			 VG_SCAN_CONTENT);	/* content is still compared */
	assert_int_equal(vg_scan_rules_filter(META, &then, &grew, all | VG_SCAN_MODE),
			 VG_SCAN_MODE);
}

static void attrs_text(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(vg_scan_attrs_text(META | VG_SCAN_GROWING, out, sizeof(out)), 0);
	assert_string_equal(out, "mode+uid+gid+growing");
	assert_int_equal(vg_scan_attrs_text(0, out, sizeof(out)), 0);
	assert_string_equal(out, "none");
	assert_int_equal(vg_scan_attrs_text(META, out, 6), -ENOSPC);
}

static void refusals_name_file_and_line(void **state)
{
	static const struct {
		const char *rule;
		const char *msg;
	} bad[] = {
		{ "/x nosuch", "t.conf:7: unknown attribute or group 'nosuch'" },
		{ "/x p+acl", "t.conf:7: AIDE attribute 'acl'" },
		{ "/x( p", "t.conf:7: bad regular expression '/x('" },
		{ "!/x p+u", "t.conf:7: 'p+u' is no list of file types (f,d,l,c,b,p,s or 0); a ! "
			    "rule takes no attributes" },
		{ "/x f,q p", "t.conf:7: 'f,q' is no list of file types" },
		{ "/x f p + u", "t.conf:7: after the regular expression: [TYPES] and one" },
		{ "/x", "t.conf:7: the rule needs a group" },
		{ "x p", "t.conf:7: a scan rule is [=|!]REGEX [GROUP]" },
		{ "", "t.conf:7: a scan rule is" },
	};
	struct vg_scan_rules *r;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_scan_rules_new(&r), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&d, 0, sizeof(d));
		assert_int_equal(vg_scan_rules_add(r, bad[i].rule, "t.conf", 7, &d), -EINVAL);
		if (strncmp(d.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
			fail_msg("'%s': got '%s'", bad[i].rule, d.msg);
	}
	assert_int_equal(vg_scan_rules_group(r, "R", "p", "t.conf", 8, &d), -EINVAL);
	assert_string_equal(d.msg, "t.conf:8: 'R' is an attribute or a built-in group");
	assert_int_equal(vg_scan_rules_group(r, "mode", "p", "t.conf", 8, &d), -EINVAL);
	assert_int_equal(vg_scan_rules_group(r, "a-b", "p", "t.conf", 8, &d), -EINVAL);
	assert_int_equal(vg_scan_rules_group(r, "G", "p", "t.conf", 9, &d), 0);
	assert_int_equal(vg_scan_rules_group(r, "G", "u", "t.conf", 10, &d), 0); /* as aide.conf */
	assert_int_equal(expr(r, "G"), VG_SCAN_UID);
	assert_int_equal(vg_scan_rules_count(r), 0);
	vg_scan_rules_free(r);
}

/* scan.baseline: trust or scan, among baseline rules only, deepest then first */
static void baseline_deepest_then_first(void **state)
{
	static const struct {
		const char *path;
		enum vg_scan_baseline want;
	} t[] = {
		{ "/usr/bin/x", VG_SCAN_BASELINE_TRUST },   { "/etc/passwd", VG_SCAN_BASELINE_TRUST },
		{ "/usr/local", VG_SCAN_BASELINE_SCAN },    { "/usr/local/bin/y", VG_SCAN_BASELINE_SCAN },
		{ "/usr/local/lib/vg/z", VG_SCAN_BASELINE_TRUST },
		{ "/usr/localx", VG_SCAN_BASELINE_TRUST },  { "/var/tmp/a", VG_SCAN_BASELINE_SCAN },
	};
	struct vg_scan_rules *r;
	struct vg_scan_rule_info ri;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_scan_rules_new(&r), 0);
	assert_false(vg_scan_rules_has_trust(r));
	assert_int_equal(vg_scan_rules_baseline_of(r, "/usr/bin/x", 10, &ri), VG_SCAN_BASELINE_SCAN);
	assert_int_equal(vg_scan_rules_baseline(r, "scan /", "t.conf", 1, &d), 0);
	assert_false(vg_scan_rules_has_trust(r));
	assert_int_equal(vg_scan_rules_baseline(r, "trust /usr/local/lib/vg", "t.conf", 2, &d), 0);
	assert_int_equal(vg_scan_rules_baseline(r, "scan /usr/local", "t.conf", 3, &d), 0);
	assert_int_equal(vg_scan_rules_add(r, "/usr p", "t.conf", 4, &d), 0);
	/* a deeper node first; the same node: the first line */
	assert_int_equal(vg_scan_rules_baseline(r, "trust /usr", "t.conf", 5, &d), 0);
	assert_int_equal(vg_scan_rules_baseline(r, "trust /etc", "t.conf", 6, &d), 0);
	assert_int_equal(vg_scan_rules_baseline(r, "scan /etc", "t.conf", 7, &d), 0);
	assert_true(vg_scan_rules_has_trust(r));
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(vg_scan_rules_baseline_of(r, t[i].path, strlen(t[i].path), NULL),
				 t[i].want);
	assert_int_equal(vg_scan_rules_baseline_of(r, "/usr/bin/x", 10, &ri), VG_SCAN_BASELINE_TRUST);
	assert_int_equal(ri.line, 5);
	/* baseline lines are no selection rules: the attribute rules are unchanged */
	assert_int_equal(vg_scan_rules_count(r), 1);
	assert_int_equal(vg_scan_rules_match(r, "/etc/passwd", 11, S_IFREG, &ri), VG_SCAN_SEL_NONE);
	assert_int_equal(vg_scan_rules_match(r, "/usr/bin/x", 10, S_IFREG, &ri), VG_SCAN_SEL_REGULAR);
	assert_int_equal(ri.mask, VG_SCAN_MODE);
	/* refused, naming the line */
	static const char *const bad[] = { "archive /", "trust", "trust usr", "trust / extra", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vg_scan_rules_baseline(r, bad[i], "t.conf", 9, &d), -EINVAL);
		assert_non_null(strstr(d.msg, "t.conf:9: a baseline rule is"));
	}
	assert_int_equal(vg_scan_rules_baseline(r, "trust /(", "t.conf", 10, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "t.conf:10: bad regular expression"));
	vg_scan_rules_free(r);
}

static void survives_every_allocation_failure(void **state)
{
	static const char *const lines[] = { "/ R", "=/etc p+u", "!/proc", NULL };

	(void)state;
	for (long n = 0;; n++) {
		struct vg_scan_rules *r = NULL;
		struct vg_diag d = { 0 };
		int e;

		failalloc_arm(n);
		e = vg_scan_rules_new(&r);
		if (e == 0)
			e = vg_scan_rules_group(r, "G", "p+u", "t.conf", 1, &d);
		for (const char *const *l = lines; e == 0 && *l; l++)
			e = vg_scan_rules_add(r, *l, "t.conf", 2, &d);
		failalloc_disarm();
		vg_scan_rules_free(r);
		if (e == 0)
			break;
		assert_int_equal(e, -ENOMEM);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expr_maps_aide_letters_and_names),
		cmocka_unit_test(match_table),
		cmocka_unit_test(match_shortcuts),
		cmocka_unit_test(match_restricted_to_types),
		cmocka_unit_test(no_rules_compare_everything),
		cmocka_unit_test(unmatched_path_compares_everything),
		cmocka_unit_test(filter_growing),
		cmocka_unit_test(attrs_text),
		cmocka_unit_test(refusals_name_file_and_line),
		cmocka_unit_test(baseline_deepest_then_first),
		cmocka_unit_test(survives_every_allocation_failure),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
