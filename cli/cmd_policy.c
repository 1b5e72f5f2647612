// SPDX-License-Identifier: MIT
/*
 * cmd_policy.c - `vigil policy check|show|explain`: the policy language
 * (the kernel's IMA grammar plus vigil's access rules, docs/policy.md).
 *
 *   check   [--kernel | --accept-unenforced] [--json] (FILE | --builtin NAMES)
 *   show    [--kernel] (FILE | --builtin NAMES)
 *   explain --func F [--mask M] [--uid U] [--path P] [--fowner O] ... (FILE | --builtin NAMES)
 *
 * Errors are printed as FILE:LINE:COL: message, one per bad rule (check
 * reads on after the first, so that one run lists them all); as in the
 * kernel, one bad rule makes the whole file invalid. check judges for
 * vigild unless --kernel: a rule vigild cannot enforce (it names what a
 * fanotify enforcer cannot observe; lib/policy_enforce.c) is an error,
 * or with --accept-unenforced a warning. Exit: 0 valid / done, 1 explain:
 * the access would be denied, 2 invalid policy (or one vigild cannot
 * enforce) or usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#include <json-c/json.h>

#include "cli.h"
#include "cmd_policy.h"
#include "verb.h"
#include "vigil/evm.h"
#include "vigil/hash.h"
#include "vigil/policy.h"

const char cli_policy_help[] =
	"usage: vigil policy check [--kernel | --accept-unenforced] [--json] (FILE | --builtin NAMES)\n"
	"       vigil policy show [--kernel] (FILE | --builtin NAMES)\n"
	"       vigil policy explain --func F [--mask M] [--uid U] [--path P] [--fowner O]\n"
	"                            [ACCESS OPTIONS] [-v] [--json] (FILE | --builtin NAMES)\n"
	"\n"
	"The policy language: the kernel's IMA policy grammar, with its meaning,\n"
	"plus vigil's access rules (allow, deny, audit_access; path=, subj_exe=,\n"
	"appraisal=, subj_appraisal=, attr=). See docs/policy.md.\n"
	"\n"
	"check    parse FILE as the kernel would; print every bad rule as\n"
	"         FILE:LINE:COL: message; then, unless --kernel, every rule vigild\n"
	"         cannot enforce (it names what vigild cannot observe), with the reason\n"
	"show     print the policy in canonical form (no comments, fixed order)\n"
	"explain  for one access, print which rule decides each action class\n"
	"         (measure, appraise, audit, hash, access) and why\n"
	"  -k, --kernel          the kernel's grammar only: vigil extensions are errors;\n"
	"                        a policy for a kernel, so vigild's limits are not judged\n"
	"  -A, --accept-unenforced  (check) rules vigild cannot enforce are warnings,\n"
	"                        not errors (as `vigild --accept-unenforced`)\n"
	"  -j, --json            (check) the verdict as one JSON object: policy, valid,\n"
	"                        rules, extensions, unenforced, diagnostics [{line, col,\n"
	"                        severity, message}] (the messages stay on stderr too)\n"
	"  -b, --builtin NAMES   a built-in policy instead of FILE: tcb, ima_tcb,\n"
	"                        appraise_tcb, secure_boot, critical_data ('|'-joined)\n"
	"explain's access (defaults in brackets):\n"
	"  -f, --func F          BPRM_CHECK, FILE_CHECK, MMAP_CHECK, ... (required)\n"
	"  -m, --mask M          MAY_READ|MAY_WRITE|MAY_APPEND|MAY_EXEC, '|' or ','\n"
	"                        joined [MAY_EXEC for BPRM_CHECK and MMAP_CHECK,\n"
	"                        MAY_READ for FILE_CHECK, none otherwise]\n"
	"  -u, --uid U           the task's uid [0]; --euid, --suid [uid]\n"
	"      --gid G           the task's gid [0]; --egid, --sgid [gid]\n"
	"      --cap-setuid, --cap-setgid   the task has CAP_SETUID / CAP_SETGID\n"
	"  -o, --fowner O        the file's owner [0]; --fgroup G [0]\n"
	"  -p, --path P          the file's path\n"
	"  -F, --file F          take path, owner, group, filesystem (magic, UUID) and\n"
	"                        security.selinux from the existing file F (its other\n"
	"                        xattrs are not EVM-verified here: use --attr)\n"
	"      --fsmagic M       filesystem magic, hex, or ext4, xfs, btrfs, tmpfs,\n"
	"                        proc, sysfs, ramfs, overlay, ... (also sets --fsname)\n"
	"      --fsname N        filesystem type name; --fsuuid UUID\n"
	"      --obj-ctx C       the file's LSM context (user:role:type:level)\n"
	"      --subj-ctx C      the task's LSM context\n"
	"      --data D          KEY_CHECK keyring / CRITICAL_DATA label\n"
	"  -e, --exe P           the task's executable (subj_exe=)\n"
	"      --loader          the task is the dynamic loader (ld.so PROG): a FILE_CHECK\n"
	"                        open is also the exec of the file (BPRM_CHECK), as in\n"
	"                        vigild; both decisions count (-v lists the open's)\n"
	"      --subj-appraisal S  pass, fail, nolabel, unknown [unknown]\n"
	"  -a, --appraisal S     the file's appraisal result [unknown]\n"
	"      --attr NAME=VALUE an EVM-verified xattr of the file (repeatable)\n"
	"  -v, --verbose         also list the rules of each class that did not match,\n"
	"                        with the first condition that failed\n"
	"  -j, --json            (explain) one JSON object: verdict, classes [{class,\n"
	"                        decision, rule {line, text}, skipped (-v)}], options\n"
	"Exit status: 0 valid / done, 1 (explain) the access would be denied,\n"
	"2 invalid policy (or a rule vigild cannot enforce), usage or operational error.\n";

/* check --json: every message also goes here, as {line, col, severity, message} */
static json_object *json_diags;

static void json_diag(unsigned int line, unsigned int col, const char *kind, const char *msg)
{
	json_object *d;

	if (!json_diags)
		return;
	d = json_object_new_object();
	if (line) {
		json_object_object_add(d, "line", json_object_new_int64(line));
		json_object_object_add(d, "col", json_object_new_int64(col));
	}
	json_object_object_add(d, "severity", json_object_new_string(*kind ? "warning" : "error"));
	json_object_object_add(d, "message", cli_json_path(msg));
	json_object_array_add(json_diags, d);
}

static void pos_err(const char *label, unsigned int line, unsigned int col, const char *kind,
		    const char *msg)
{
	cli_put_path(stderr, label);
	fprintf(stderr, ":%u:%u: %s%s\n", line, col, kind, msg);
	json_diag(line, col, kind, msg);
}

static void report(const struct src *s, const struct vg_policy_error *e)
{
	if (e->line) {
		pos_err(s->label, e->line, e->col, "", e->msg);
	} else {
		cli_file_err(s->label, "%s", e->msg);
		json_diag(0, 0, "", e->msg);
	}
}

/*
 * Every bad rule of @text: each line parsed on its own (a rule never
 * depends on another), so that one check lists them all.
 */
static int report_all(const struct src *s, const char *text, size_t len)
{
	size_t pos = 0;
	unsigned int line = 0;
	int bad = 0;

	while (pos < len) {
		const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - l) : len - pos;
		struct vg_policy *p = NULL;
		struct vg_policy_error e = { 0 };

		pos += ll + (nl != NULL);
		line++;
		if (vg_policy_parse(l, ll, s->flags | VG_POLICY_ALLOW_EMPTY, &p, &e) < 0) {
			if (e.err == -ENOMEM) {
				cli_err("out of memory");
				return -1;
			}
			pos_err(s->label, line, e.col, "", e.msg);
			bad++;
		}
		vg_policy_unref(p);
	}
	return bad;
}

struct vg_policy *cli_policy_load(const struct src *s, bool all_errors)
{
	struct vg_policy *p = NULL;
	struct vg_policy_error e = { 0 };
	char *text = NULL;
	size_t len = 0;
	int r;

	if (s->builtin) {
		if (vg_policy_builtin(s->builtin, &p, &e) < 0) {
			cli_err("--builtin: %s", e.msg);
			json_diag(0, 0, "", e.msg);
			return NULL;
		}
		return p;
	}
	r = cli_read_file(s->file, POLICY_MAX, (uint8_t **)&text, &len);
	if (r < 0) {
		cli_read_err(s->label, r, POLICY_MAX);
		json_diag(0, 0, "", r == -EFBIG ? "too large" : strerror(-r));
		return NULL;
	}
	if (vg_policy_parse(text, len, s->flags, &p, &e) < 0) {
		if (all_errors && e.line) {
			if (report_all(s, text, len) == 0)
				report(s, &e);
		} else {
			report(s, &e);
		}
		p = NULL;
	}
	free(text);
	return p;
}

int cli_policy_src_init(struct src *s, int argc, char **argv)
{
	if (s->builtin && optind < argc) {
		cli_err("give FILE or --builtin, not both");
		return -1;
	}
	if (!s->builtin && optind != argc - 1) {
		cli_err(optind >= argc ? "no FILE given" : "one FILE only");
		return -1;
	}
	s->file = s->builtin ? NULL : argv[optind];
	if (s->builtin) {
		size_t n = strlen(s->builtin) + 9;

		s->label = malloc(n);
		if (s->label)
			snprintf(s->label, n, "builtin:%s", s->builtin);
	} else {
		s->label = strdup(strcmp(s->file, "-") == 0 ? "<stdin>" : s->file);
	}
	if (!s->label) {
		cli_err("out of memory");
		return -1;
	}
	return 0;
}

/*
 * Rules vigild cannot enforce: errors, or with @accept warnings.
 * Return: the number of such rules.
 */
static size_t unenforced_rules(const struct src *s, const struct vg_policy *p, bool accept)
{
	size_t n = 0;

	for (size_t i = 0; i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);
		char msg[512];

		if (!r->unenforced)
			continue;
		n++;
		snprintf(msg, sizeof(msg), "%s; %s", r->unenforced,
			 accept ? "accepted, not enforced by vigild" :
			 "vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)");
		pos_err(s->label, r->line, r->unenforced_col, accept ? "warning: " : "", msg);
	}
	return n;
}

static void warn_rules(const struct src *s, const struct vg_policy *p)
{
	for (size_t i = 0; i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);

		if (r->appraise_flag)
			pos_err(s->label, r->line, r->col, "warning: ",
				"appraise_flag= is accepted and ignored, as by the kernel");
	}
}

int cli_policy_parse_common(int c, struct src *s)
{
	switch (c) {
	case O_BUILTIN:
		s->builtin = optarg;
		return 0;
	case O_KERNEL:
		s->flags |= VG_POLICY_KERNEL;
		return 0;
	}
	return -1;
}

/*
 * check --json: the verdict (docs/schemas/policy-check.schema.json); @p is
 * NULL when the policy was refused. Return: 0, or -1 when stdout fails.
 */
static int check_json(const struct src *s, const struct vg_policy *p, size_t unenforced)
{
	json_object *j = json_object_new_object();
	int r = 0;

	json_object_object_add(j, "policy", s->label ? cli_json_path(s->label)
						     : json_object_new_string(""));
	json_object_object_add(j, "valid", json_object_new_boolean(p != NULL));
	if (p) {
		json_object_object_add(j, "rules", json_object_new_int64((int64_t)vg_policy_count(p)));
		json_object_object_add(j, "extensions",
				       json_object_new_boolean(vg_policy_uses(p) & VG_POLICY_USES_EXTENSIONS));
	}
	json_object_object_add(j, "unenforced", json_object_new_int64((int64_t)unenforced));
	json_object_object_add(j, "diagnostics", json_diags);
	if (puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 ||
	    fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		r = -1;
	}
	json_object_put(j);
	return r;
}

static int policy_check_show(int argc, char **argv, bool show)
{
	static const struct option opts[] = {
		{ "kernel", no_argument, NULL, O_KERNEL },
		{ "builtin", required_argument, NULL, O_BUILTIN },
		{ "accept-unenforced", no_argument, NULL, O_ACCEPT },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct src s = { 0 };
	struct vg_policy *p = NULL;
	bool accept = false, json = false;
	size_t unenforced = 0;
	int c, rc = EXIT_ERROR;

	optind = 0;
	while ((c = getopt_long(argc, argv, show ? "kb:h" : "kb:Ajh", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cli_policy_help, stdout);
			return EXIT_OK;
		}
		if (c == O_ACCEPT && !show) {
			accept = true;
			continue;
		}
		if (c == 'j' && !show) {
			json = true;
			continue;
		}
		if (cli_policy_parse_common(c, &s) < 0) {
			fputs(cli_policy_help, stderr);
			return EXIT_ERROR;
		}
	}
	if (accept && (s.flags & VG_POLICY_KERNEL)) {
		cli_err("--kernel checks a policy for a kernel, --accept-unenforced one for vigild: give one");
		return EXIT_ERROR;
	}
	if (cli_policy_src_init(&s, argc, argv) < 0)
		goto out;
	if (json && !(json_diags = json_object_new_array())) {
		cli_err("out of memory");
		goto out;
	}
	p = cli_policy_load(&s, !show);
	if (!p)
		goto out;
	if (show) {
		char *t = NULL;
		size_t len;

		if (vg_policy_format(p, &t, &len) < 0) {
			cli_err("out of memory");
			goto out;
		}
		if (fwrite(t, 1, len, stdout) != len || fflush(stdout) != 0) {
			free(t);
			cli_err("writing the policy: %s", strerror(errno));
			goto out;
		}
		free(t);
	} else {
		unsigned int uses = vg_policy_uses(p);

		warn_rules(&s, p);
		if (!(s.flags & VG_POLICY_KERNEL)) {
			unenforced = unenforced_rules(&s, p, accept);
			if (unenforced && !accept)
				goto out;
		}
		if (json) {
			rc = EXIT_OK;
			goto out;
		}
		cli_put_path(stdout, s.label);
		printf(": ok, %zu rule%s%s", vg_policy_count(p), vg_policy_count(p) == 1 ? "" : "s",
		       (uses & VG_POLICY_USES_EXTENSIONS) ?
		       "; uses vigil extensions (a kernel would refuse it)" : "");
		if (unenforced)
			printf("; %zu not enforced by vigild (accepted)", unenforced);
		putchar('\n');
	}
	rc = EXIT_OK;
out:
	if (json_diags) {
		if (check_json(&s, rc == EXIT_OK ? p : NULL, unenforced) < 0)
			rc = EXIT_ERROR;
		json_diags = NULL;	/* put by check_json */
	}
	vg_policy_unref(p);
	free(s.label);
	return rc;
}

static int policy_check(int argc, char **argv)
{
	return policy_check_show(argc, argv, false);
}

static int policy_show(int argc, char **argv)
{
	return policy_check_show(argc, argv, true);
}

static const struct cli_verb verbs[] = {
	{ "check", policy_check },
	{ "show", policy_show },
	{ "explain", cli_policy_explain },
};

int cmd_policy(int argc, char **argv)
{
	int rc = cli_verb_main(verbs, CLI_NVERBS(verbs), cli_policy_help, argc, argv);

	if (rc < 0) {
		cli_err("'%s' is not a policy command (check, show, explain)", argv[1]);
		rc = EXIT_ERROR;
	}
	return rc;
}
