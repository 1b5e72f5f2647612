// SPDX-License-Identifier: MIT
/*
 * cmd_policy_explain.c - `vigil policy explain`: one access (function,
 * mask, task and file facts, from options or from an existing file) put
 * to a policy, printing which rule decides each action class and why.
 * The policy source and the options every verb takes are cmd_policy.c's.
 *
 * Exit: 0 the access is allowed, 1 it would be denied, 2 invalid policy
 * or usage.
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
#include "vigil/evm.h"
#include "vigil/hash.h"
#include "vigil/policy.h"

/* What --file gives; strings owned here. */
struct from_file {
	char *path;
	char ctx[256];
};

static int parse_u32(const char *opt, const char *arg, uint32_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v > UINT32_MAX) {
		cli_err("--%s '%s' is not a decimal id", opt, arg);
		return -1;
	}
	*ret = (uint32_t)v;
	return 0;
}

static int parse_mask(const char *arg, unsigned int *ret)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} names[] = {
		{ "MAY_EXEC", VG_MAY_EXEC }, { "MAY_WRITE", VG_MAY_WRITE },
		{ "MAY_READ", VG_MAY_READ }, { "MAY_APPEND", VG_MAY_APPEND },
	};
	unsigned int m = 0;
	const char *s = arg;

	while (*s) {
		size_t n = strcspn(s, "|,");
		bool found = false;

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (n == strlen(names[i].name) && strncmp(s, names[i].name, n) == 0) {
				m |= names[i].bit;
				found = true;
			}
		if (!found) {
			cli_err("--mask '%s': names are MAY_READ, MAY_WRITE, MAY_APPEND, MAY_EXEC", arg);
			return -1;
		}
		s += n + (s[n] != '\0');
	}
	*ret = m;
	return 0;
}

static const struct {
	const char *name;
	uint64_t magic;
} fs_magics[] = {
	{ "ext4", 0xef53 }, { "ext3", 0xef53 }, { "ext2", 0xef53 }, { "xfs", 0x58465342 },
	{ "btrfs", 0x9123683e }, { "tmpfs", 0x01021994 }, { "ramfs", 0x858458f6 },
	{ "proc", 0x9fa0 }, { "sysfs", 0x62656572 }, { "debugfs", 0x64626720 },
	{ "devpts", 0x1cd1 }, { "securityfs", 0x73636673 }, { "selinuxfs", 0xf97cff8c },
	{ "cgroup", 0x27e0eb }, { "cgroup2", 0x63677270 }, { "nsfs", 0x6e736673 },
	{ "efivarfs", 0xde5e81e4 }, { "overlay", 0x794c7630 }, { "squashfs", 0x73717368 },
	{ "vfat", 0x4d44 }, { "nfs", 0x6969 }, { "fuse", 0x65735546 },
};

static int parse_fsmagic(const char *arg, struct vg_access *a)
{
	char *end;
	unsigned long long v;

	for (size_t i = 0; i < sizeof(fs_magics) / sizeof(fs_magics[0]); i++)
		if (strcmp(arg, fs_magics[i].name) == 0) {
			a->fsmagic = fs_magics[i].magic;
			a->fsname = fs_magics[i].name;
			return 0;
		}
	errno = 0;
	v = strtoull(arg, &end, 16);
	if (errno || end == arg || *end || arg[0] == '-') {
		cli_err("--fsmagic '%s' is neither hexadecimal nor a known filesystem (ext4, xfs, btrfs, tmpfs, proc, ...)",
			arg);
		return -1;
	}
	a->fsmagic = v;
	return 0;
}

/* --file: the facts of an existing file, as vigild would gather them. Return: 0 or -1 (reported). */
static int access_from_file(const char *file, struct vg_access *a, struct from_file *ff)
{
	struct stat st;
	struct statfs sf;
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0 && errno == ELOOP)
		fd = open(file, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0) {
		cli_file_err(file, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ff->path = realpath(file, NULL);
	a->path = ff->path ? ff->path : file;
	a->fowner = st.st_uid;
	a->fgroup = st.st_gid;
	a->fsmagic = (uint64_t)(unsigned long)sf.f_type;
	for (size_t i = 0; i < sizeof(fs_magics) / sizeof(fs_magics[0]); i++)
		if (fs_magics[i].magic == a->fsmagic) {
			a->fsname = fs_magics[i].name;
			break;
		}
	if (vg_fs_uuid(fd, a->fsuuid, NULL) == 0)
		a->fsuuid_set = true;
	n = fgetxattr(fd, "security.selinux", ff->ctx, sizeof(ff->ctx) - 1);
	if (n > 0) {
		ff->ctx[n] = '\0';
		a->obj_ctx = ff->ctx;
	}
	close(fd);
	return 0;
}

static int parse_integrity(const char *opt, const char *arg, enum vg_integrity *ret)
{
	int i = vg_policy_integrity_by_name(arg);

	if (i < 0) {
		cli_err("--%s '%s': pass, fail, nolabel or unknown", opt, arg);
		return -1;
	}
	*ret = (enum vg_integrity)i;
	return 0;
}

static const char *mask_text(unsigned int m, char *buf, size_t cap)
{
	static const char *const n[] = { "MAY_EXEC", "MAY_WRITE", "MAY_READ", "MAY_APPEND" };
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < 4; i++)
		if (m & (1u << i))
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "|" : "", n[i]);
	if (!len)
		snprintf(buf, cap, "0");
	return buf;
}

static void print_access(const struct vg_access *a)
{
	char m[64];

	printf("access: func=%s mask=%s uid=%u euid=%u gid=%u egid=%u fowner=%u fgroup=%u fsmagic=0x%llx",
	       vg_policy_func_name(a->func), mask_text(a->mask, m, sizeof(m)), a->uid, a->euid, a->gid,
	       a->egid, a->fowner, a->fgroup, (unsigned long long)a->fsmagic);
	if (a->also_func)
		printf(" also=%s", vg_policy_func_name(a->also_func));
	if (a->fsname)
		printf(" fsname=%s", a->fsname);
	if (a->path) {
		fputs(" path=", stdout);
		cli_put_path(stdout, a->path);
	}
	if (a->subj_exe) {
		fputs(" exe=", stdout);
		cli_put_path(stdout, a->subj_exe);
	}
	if (a->obj_ctx)
		printf(" obj_ctx=%s", a->obj_ctx);
	if (a->subj_ctx)
		printf(" subj_ctx=%s", a->subj_ctx);
	if (a->func_data)
		printf(" data=%s", a->func_data);
	printf(" appraisal=%s subj_appraisal=%s", vg_policy_integrity_name(a->appraisal),
	       vg_policy_integrity_name(a->subj_appraisal));
	for (size_t i = 0; i < a->nattrs; i++)
		printf(" %s=%.*s", a->attrs[i].name, (int)a->attrs[i].len, (const char *)a->attrs[i].value);
	putchar('\n');
}

static void print_rule(const struct vg_policy *p, long i)
{
	char buf[1024];
	const struct vg_policy_rule *r = vg_policy_rule(p, (size_t)i);

	vg_policy_rule_format(r, buf, sizeof(buf));
	printf("line %u: %s\n", r->line, buf);
}

static void explain_class(const struct vg_policy *p, const struct vg_access *a,
			  const struct vg_decision *d, int cls, bool verbose)
{
	static const char *const names[] = { "measure", "appraise", "audit", "hash", "access" };
	long at = d->rule[cls];
	const char *word;

	switch (cls) {
	case VG_CLASS_MEASURE: word = d->measure ? "yes" : "no"; break;
	case VG_CLASS_APPRAISE: word = d->appraise ? "yes" : "no"; break;
	case VG_CLASS_AUDIT: word = d->audit ? "yes" : "no"; break;
	case VG_CLASS_HASH: word = d->hash ? "yes" : "no"; break;
	default:
		word = d->verdict == VG_VERDICT_DENY ? "deny" :
		       d->verdict == VG_VERDICT_AUDIT ? "audit" : "allow";
	}
	printf("%-9s %-6s", names[cls], word);
	if (at >= 0)
		print_rule(p, at);
	else
		puts(cls == VG_CLASS_ACCESS ? "no access rule matched (default allow)" : "no rule matched");
	if (cls == VG_CLASS_HASH && at >= 0 && !d->hash &&
	    vg_policy_rule(p, (size_t)at)->action == VG_POL_HASH)
		printf("%-16s(cleared by the appraise rule that matched after it, as in the kernel)\n", "");
	if (!verbose)
		return;
	for (size_t i = 0; i < vg_policy_count(p) && (at < 0 || (long)i < at); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);
		const char *why = NULL;

		if (vg_policy_action_class(r->action) != cls)
			continue;
		if (!vg_policy_rule_matches(r, a, &why))
			printf("%-16sline %u: skipped, %s does not hold\n", "", r->line, why ? why : "?");
	}
}

static void explain_options(const struct vg_decision *d)
{
	printf("options:  pcr=%d template=%s", d->pcr, d->template_name ? d->template_name : "(default)");
	if (d->flags & VG_POLF_VERITY_REQUIRED)
		fputs(" digest_type=verity", stdout);
	if (d->flags & VG_POLF_DIGSIG_REQUIRED)
		printf(" appraise_type=%s", (d->flags & VG_POLF_VERITY_REQUIRED) ? "sigv3" :
		       (d->flags & VG_POLF_MODSIG_ALLOWED) ? "imasig|modsig" : "imasig");
	if (d->flags & VG_POLF_PERMIT_DIRECTIO)
		fputs(" permit_directio", stdout);
	if (d->appraise && d->trust_archive)
		fputs(" trust=archive", stdout);
	if (d->allowed_algos) {
		bool first = true;

		fputs(" appraise_algos=", stdout);
		for (unsigned int i = 0; i < VG_HASH__LAST; i++)
			if (d->allowed_algos & (1u << i)) {
				printf("%s%s", first ? "" : ",", vg_hash_name(i));
				first = false;
			}
	}
	putchar('\n');
}

/*
 * --json (docs/schemas/policy-explain.schema.json): {verdict, classes:
 * [{class, decision, rule: {line, text} | null, skipped: [{line, why}]
 * (with -v)}], options: {pcr, template}}
 */
static void explain_json(const struct vg_policy *p, const struct vg_access *a,
			 const struct vg_decision *d, bool verbose)
{
	static const char *const names[] = { "measure", "appraise", "audit", "hash", "access" };
	const bool yes[] = { d->measure, d->appraise, d->audit, d->hash };
	json_object *j = json_object_new_object(), *cl = json_object_new_array(), *o;
	const char *verdict = d->verdict == VG_VERDICT_DENY ? "deny" :
			      d->verdict == VG_VERDICT_AUDIT ? "audit" : "allow";

	json_object_object_add(j, "verdict", json_object_new_string(verdict));
	for (int cls = 0; cls < VG_CLASS__MAX; cls++) {
		json_object *c = json_object_new_object(), *rule = NULL;
		long at = d->rule[cls];

		json_object_object_add(c, "class", json_object_new_string(names[cls]));
		json_object_object_add(c, "decision", json_object_new_string(
			cls == VG_CLASS_ACCESS ? verdict : yes[cls] ? "yes" : "no"));
		if (at >= 0) {
			char buf[1024];
			const struct vg_policy_rule *r = vg_policy_rule(p, (size_t)at);

			vg_policy_rule_format(r, buf, sizeof(buf));
			rule = json_object_new_object();
			json_object_object_add(rule, "line", json_object_new_int64(r->line));
			json_object_object_add(rule, "text", json_object_new_string(buf));
		}
		json_object_object_add(c, "rule", rule);
		if (verbose) {
			json_object *sk = json_object_new_array();

			for (size_t i = 0; i < vg_policy_count(p) && (at < 0 || (long)i < at); i++) {
				const struct vg_policy_rule *r = vg_policy_rule(p, i);
				const char *why = NULL;

				if (vg_policy_action_class(r->action) != cls ||
				    vg_policy_rule_matches(r, a, &why))
					continue;
				o = json_object_new_object();
				json_object_object_add(o, "line", json_object_new_int64(r->line));
				json_object_object_add(o, "why", json_object_new_string(why ? why : "?"));
				json_object_array_add(sk, o);
			}
			json_object_object_add(c, "skipped", sk);
		}
		json_object_array_add(cl, c);
	}
	json_object_object_add(j, "classes", cl);
	o = json_object_new_object();
	json_object_object_add(o, "pcr", json_object_new_int(d->pcr));
	json_object_object_add(o, "template", d->template_name ?
			       json_object_new_string(d->template_name) : NULL);
	json_object_object_add(j, "options", o);
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

int cli_policy_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", no_argument, NULL, O_KERNEL },
		{ "builtin", required_argument, NULL, O_BUILTIN },
		{ "func", required_argument, NULL, 'f' },
		{ "mask", required_argument, NULL, 'm' },
		{ "uid", required_argument, NULL, 'u' },
		{ "euid", required_argument, NULL, O_EUID },
		{ "suid", required_argument, NULL, O_SUID },
		{ "gid", required_argument, NULL, O_GID },
		{ "egid", required_argument, NULL, O_EGID },
		{ "sgid", required_argument, NULL, O_SGID },
		{ "cap-setuid", no_argument, NULL, O_CAPU },
		{ "cap-setgid", no_argument, NULL, O_CAPG },
		{ "fowner", required_argument, NULL, 'o' },
		{ "fgroup", required_argument, NULL, O_FGROUP },
		{ "path", required_argument, NULL, 'p' },
		{ "file", required_argument, NULL, 'F' },
		{ "fsmagic", required_argument, NULL, O_FSMAGIC },
		{ "fsname", required_argument, NULL, O_FSNAME },
		{ "fsuuid", required_argument, NULL, O_FSUUID },
		{ "obj-ctx", required_argument, NULL, O_OBJ },
		{ "subj-ctx", required_argument, NULL, O_SUBJ },
		{ "data", required_argument, NULL, O_DATA },
		{ "exe", required_argument, NULL, 'e' },
		{ "loader", no_argument, NULL, O_LOADER },
		{ "subj-appraisal", required_argument, NULL, O_SUBJAPP },
		{ "appraisal", required_argument, NULL, 'a' },
		{ "attr", required_argument, NULL, O_ATTR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false;
	struct vg_access a = { 0 };
	struct from_file ff = { 0 };
	struct vg_access_attr attrs[16];
	char *attr_names[16] = { 0 };
	size_t nattrs = 0;
	struct src s = { 0 };
	struct vg_policy *p = NULL;
	struct vg_decision d;
	bool have_func = false, have_mask = false, verbose = false, loader = false;
	bool have_euid = false, have_suid = false, have_egid = false, have_sgid = false;
	int c, f, rc = EXIT_ERROR;

	optind = 0;
	while ((c = getopt_long(argc, argv, "kb:f:m:u:o:p:F:e:a:vjh", opts, NULL)) != -1) {
		switch (c) {
		case O_KERNEL:
		case O_BUILTIN:
			cli_policy_parse_common(c, &s);
			break;
		case 'f':
			f = vg_policy_func_by_name(optarg);
			if (f < 0) {
				cli_err("--func '%s' is not a hook (BPRM_CHECK, FILE_CHECK, MMAP_CHECK, MODULE_CHECK, ...)",
					optarg);
				goto out;
			}
			a.func = (enum vg_func)f;
			have_func = true;
			break;
		case 'm':
			if (parse_mask(optarg, &a.mask) < 0)
				goto out;
			have_mask = true;
			break;
		case 'u':
			if (parse_u32("uid", optarg, &a.uid) < 0)
				goto out;
			break;
		case O_EUID:
			if (parse_u32("euid", optarg, &a.euid) < 0)
				goto out;
			have_euid = true;
			break;
		case O_SUID:
			if (parse_u32("suid", optarg, &a.suid) < 0)
				goto out;
			have_suid = true;
			break;
		case O_GID:
			if (parse_u32("gid", optarg, &a.gid) < 0)
				goto out;
			break;
		case O_EGID:
			if (parse_u32("egid", optarg, &a.egid) < 0)
				goto out;
			have_egid = true;
			break;
		case O_SGID:
			if (parse_u32("sgid", optarg, &a.sgid) < 0)
				goto out;
			have_sgid = true;
			break;
		case O_CAPU:
			a.cap_setuid = true;
			break;
		case O_CAPG:
			a.cap_setgid = true;
			break;
		case 'o':
			if (parse_u32("fowner", optarg, &a.fowner) < 0)
				goto out;
			break;
		case O_FGROUP:
			if (parse_u32("fgroup", optarg, &a.fgroup) < 0)
				goto out;
			break;
		case 'p':
			a.path = optarg;
			break;
		case 'F':
			free(ff.path);
			ff.path = NULL;
			if (access_from_file(optarg, &a, &ff) < 0)
				goto out;
			break;
		case O_FSMAGIC:
			if (parse_fsmagic(optarg, &a) < 0)
				goto out;
			break;
		case O_FSNAME:
			a.fsname = optarg;
			break;
		case O_FSUUID:
			if (vg_uuid_parse(optarg, a.fsuuid) < 0) {
				cli_err("--fsuuid '%s' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", optarg);
				goto out;
			}
			a.fsuuid_set = true;
			break;
		case O_OBJ:
			a.obj_ctx = optarg;
			break;
		case O_SUBJ:
			a.subj_ctx = optarg;
			break;
		case O_DATA:
			a.func_data = optarg;
			break;
		case 'e':
			a.subj_exe = optarg;
			break;
		case O_LOADER:
			loader = true;
			break;
		case O_SUBJAPP:
			if (parse_integrity("subj-appraisal", optarg, &a.subj_appraisal) < 0)
				goto out;
			break;
		case 'a':
			if (parse_integrity("appraisal", optarg, &a.appraisal) < 0)
				goto out;
			break;
		case O_ATTR: {
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || strncmp(optarg, "security.", 9) != 0) {
				cli_err("--attr '%s' is not security.NAME=VALUE", optarg);
				goto out;
			}
			if (nattrs == sizeof(attrs) / sizeof(attrs[0])) {
				cli_err("--attr: at most %zu", nattrs);
				goto out;
			}
			attr_names[nattrs] = strndup(optarg, (size_t)(eq - optarg));
			if (!attr_names[nattrs]) {
				cli_err("out of memory");
				goto out;
			}
			attrs[nattrs] = (struct vg_access_attr){ attr_names[nattrs], (const uint8_t *)eq + 1,
								 strlen(eq + 1), true };
			nattrs++;
			break;
		}
		case 'j':
			json = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			fputs(cli_policy_help, stdout);
			rc = EXIT_OK;
			goto out;
		default:
			fputs(cli_policy_help, stderr);
			goto out;
		}
	}
	if (!have_func) {
		cli_err("explain needs --func (BPRM_CHECK, FILE_CHECK, MMAP_CHECK, ...)");
		goto out;
	}
	if (!have_mask)
		a.mask = (a.func == VG_FUNC_BPRM_CHECK || a.func == VG_FUNC_MMAP_CHECK) ? VG_MAY_EXEC :
			 a.func == VG_FUNC_FILE_CHECK ? VG_MAY_READ : 0;
	if (loader) {
		if (a.func != VG_FUNC_FILE_CHECK) {
			cli_err("--loader is for an open (--func FILE_CHECK): the loader's opens are what vigild sees");
			goto out;
		}
		a.also_func = VG_FUNC_BPRM_CHECK;
		a.also_mask = VG_MAY_EXEC;
	}
	if (!have_euid)
		a.euid = a.uid;
	if (!have_suid)
		a.suid = a.uid;
	if (!have_egid)
		a.egid = a.gid;
	if (!have_sgid)
		a.sgid = a.gid;
	a.attrs = attrs;
	a.nattrs = nattrs;
	if (cli_policy_src_init(&s, argc, argv) < 0)
		goto out;
	p = cli_policy_load(&s, false);
	if (!p)
		goto out;
	if (vg_policy_match(p, &a, VG_CLASSES_ALL, &d) < 0) {
		cli_err("matching failed");
		goto out;
	}
	if (json) {
		explain_json(p, &a, &d, verbose);
	} else {
		print_access(&a);
		for (int cls = 0; cls < VG_CLASS__MAX; cls++)
			explain_class(p, &a, &d, cls, verbose);
		explain_options(&d);
	}
	rc = d.verdict == VG_VERDICT_DENY ? EXIT_NOTVERIFIED : EXIT_OK;
out:
	for (size_t i = 0; i < nattrs; i++)
		free(attr_names[i]);
	free(ff.path);
	vg_policy_unref(p);
	free(s.label);
	return rc;
}
