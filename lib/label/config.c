// SPDX-License-Identifier: MIT
/*
 * config.c - the vigil.conf parser and the selection rules (config.h).
 *
 * Every line is parsed completely or the whole file is refused: a typo in
 * a configuration that decides what gets labeled must not be skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vigil/config.h"
#include "vigil/fileio.h"
#include "vigil/hash.h"
#include "internal.h"

#define CONFIG_MAX_SIZE (1u << 20)

static const struct {
	const char *name;
	uint64_t magic;
} fstypes[] = {
	{ "ext2", 0xEF53 }, { "ext3", 0xEF53 }, { "ext4", 0xEF53 },
	{ "xfs", 0x58465342 }, { "btrfs", 0x9123683E }, { "tmpfs", 0x01021994 },
	{ "devtmpfs", 0x01021994 }, { "ramfs", 0x858458f6 }, { "proc", 0x9fa0 },
	{ "sysfs", 0x62656572 }, { "devpts", 0x1cd1 }, { "securityfs", 0x73636673 },
	{ "debugfs", 0x64626720 }, { "tracefs", 0x74726163 }, { "cgroup", 0x27e0eb },
	{ "cgroup2", 0x63677270 }, { "bpf", 0xcafe4a11 }, { "mqueue", 0x19800202 },
	{ "pstore", 0x6165676C }, { "efivarfs", 0xde5e81e4 }, { "configfs", 0x62656570 },
	{ "fuse", 0x65735546 }, { "overlay", 0x794c7630 }, { "squashfs", 0x73717368 },
	{ "vfat", 0x4d44 }, { "iso9660", 0x9660 }, { "nfs", 0x6969 },
	{ "smb2", 0xfe534d42 }, { "cifs", 0xff534d42 }, { "f2fs", 0xF2F52010 },
	{ "nsfs", 0x6e736673 }, { "autofs", 0x0187 }, { "hugetlbfs", 0x958458f6 },
	{ "binfmt_misc", 0x42494e4d }, { "selinuxfs", 0xf97cff8c }, { "zfs", 0x2fc12fc1 },
};

uint64_t vg_fstype_magic(const char *name)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(fstypes); i++)
		if (strcmp(fstypes[i].name, name) == 0)
			return fstypes[i].magic;
	return 0;
}

void vg_config_init(struct vg_config *c)
{
	memset(c, 0, sizeof(*c));
	c->algo = VG_HASH_SHA256;
	c->vigild_hold = -1;
	vg_evm_config_default(&c->evm);
}

void vg_config_release(struct vg_config *c)
{
	free(c->hmac_key);
	free(c->ima_key);
	free(c->evm_key);
	free(c->tcti);
	free(c->trust_db);
	for (size_t i = 0; i < c->nkeyrings; i++)
		free(c->keyrings[i]);
	for (size_t i = 0; i < c->nvigild_watch; i++)
		free(c->vigild_watch[i]);
	for (size_t i = 0; i < c->nvigild_accept_gap; i++)
		free(c->vigild_accept_gap[i]);
	free(c->vigild_mode);
	free(c->vigild_watch_mounts);
	for (size_t i = 0; i < c->nrules; i++)
		free(c->rules[i].path);
	free(c->rules);
	vg_scan_rules_free(c->scan_rules);
	vg_config_init(c);
}

struct parser {
	const char *name;
	unsigned int line;
	struct vg_diag *diag;
};

static int bad(struct parser *p, const char *fmt, const char *arg)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, arg);
	return vg_diag_set(p->diag, -EINVAL, "%s:%u: %s", p->name, p->line, what);
}

static int parse_u64(const char *s, uint64_t *ret, int base)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int set_string(struct parser *p, char **slot, const char *val)
{
	char *s;

	if (!*val)
		return bad(p, "%s needs a value", "setting");
	s = strdup(val);
	if (!s)
		return vg_diag_set(p->diag, -ENOMEM, "out of memory");
	free(*slot);
	*slot = s;
	return 0;
}

/* scan.group NAME = EXPR, scan.rule = [=|!]REGEX [EXPR], scan.baseline = trust|scan REGEX (scan_rules.h) */
static int parse_scan(struct vg_config *c, struct parser *p, const char *key, const char *val)
{
	int r;

	if (!c->scan_rules && vg_scan_rules_new(&c->scan_rules) < 0)
		return vg_diag_set(p->diag, -ENOMEM, "out of memory");
	if (strcmp(key, "scan.rule") == 0)
		return vg_scan_rules_add(c->scan_rules, val, p->name, p->line, p->diag);
	if (strcmp(key, "scan.baseline") == 0)
		return vg_scan_rules_baseline(c->scan_rules, val, p->name, p->line, p->diag);
	key += strlen("scan.group");
	while (isspace((unsigned char)*key))
		key++;
	if (!*key)
		return bad(p, "%s: scan.group NAME = ATTR+ATTR...", "a group needs a name");
	r = vg_scan_rules_group(c->scan_rules, key, val, p->name, p->line, p->diag);
	return r;
}

static int parse_setting(struct vg_config *c, struct parser *p, const char *key, const char *val)
{
	int r;

	if (strcmp(key, "scan.rule") == 0 || strcmp(key, "scan.baseline") == 0 ||
	    (strncmp(key, "scan.group", 10) == 0 && (!key[10] || isspace((unsigned char)key[10]))))
		return parse_scan(c, p, key, val);

	if (strcmp(key, "hash") == 0) {
		r = vg_hash_by_name(val);
		if (r < 0)
			return bad(p, "unknown hash algorithm '%s'", val);
		if (!vg_hash_available((unsigned int)r))
			return bad(p, "hash algorithm '%s' is not available in OpenSSL", val);
		c->algo = (unsigned int)r;
		return 0;
	}
	if (strcmp(key, "evm.xattr") == 0) {
		r = vg_evm_config_add(&c->evm, val);
		if (r == -EEXIST)
			return 0;
		if (r < 0)
			return bad(p, "cannot protect xattr '%s' (must be security.*, at most 32 names)",
				   val);
		return 0;
	}
	if (strcmp(key, "evm.uuid") == 0) {
		if (strcmp(val, "auto") == 0) {
			c->uuid = VG_CONFIG_UUID_AUTO;
		} else if (strcmp(val, "none") == 0) {
			c->uuid = VG_CONFIG_UUID_NONE;
		} else if (vg_uuid_parse(val, c->uuid_value) == 0) {
			c->uuid = VG_CONFIG_UUID_GIVEN;
		} else {
			return bad(p, "evm.uuid must be auto, none or a UUID, not '%s'", val);
		}
		return 0;
	}
	if (strcmp(key, "evm.type") == 0) {
		if (strcmp(val, "hmac") == 0)
			c->evm_type = 2;
		else if (strcmp(val, "sig") == 0)
			c->evm_type = 3;
		else if (strcmp(val, "portable") == 0)
			c->evm_type = 5;
		else
			return bad(p, "evm.type must be hmac, sig or portable, not '%s'", val);
		return 0;
	}
	if (strcmp(key, "key.hmac") == 0)
		return set_string(p, &c->hmac_key, val);
	if (strcmp(key, "key.ima") == 0)
		return set_string(p, &c->ima_key, val);
	if (strcmp(key, "key.evm") == 0)
		return set_string(p, &c->evm_key, val);
	if (strcmp(key, "tpm.tcti") == 0)
		return set_string(p, &c->tcti, val);
	if (strcmp(key, "trust.db") == 0)
		return set_string(p, &c->trust_db, val);
	if (strcmp(key, "keyring") == 0) {
		if (c->nkeyrings == VG_CONFIG_MAX_KEYRINGS)
			return bad(p, "more than %s keyring lines", "16");
		c->keyrings[c->nkeyrings] = NULL;
		r = set_string(p, &c->keyrings[c->nkeyrings], val);
		if (r == 0)
			c->nkeyrings++;
		return r;
	}
	if (strcmp(key, "vigild.watch") == 0 || strcmp(key, "vigild.accept_gap") == 0) {
		bool watch = key[7] == 'w';
		char **list = watch ? c->vigild_watch : c->vigild_accept_gap;
		size_t *n = watch ? &c->nvigild_watch : &c->nvigild_accept_gap;

		if (*n == VG_CONFIG_MAX_LIST)
			return bad(p, "more than %s lines of this key", "64");
		if (watch && val[0] != '/')
			return bad(p, "vigild.watch needs an absolute path, not '%s'", val);
		list[*n] = NULL;
		r = set_string(p, &list[*n], val);
		if (r == 0)
			(*n)++;
		return r;
	}
	if (strcmp(key, "vigild.mode") == 0) {
		if (strcmp(val, "enforce") && strcmp(val, "permissive") && strcmp(val, "fix"))
			return bad(p, "vigild.mode must be enforce, permissive or fix, not '%s'", val);
		return set_string(p, &c->vigild_mode, val);
	}
	if (strcmp(key, "vigild.hold") == 0) {
		if (strcmp(val, "yes") && strcmp(val, "no"))
			return bad(p, "vigild.hold must be yes or no, not '%s'", val);
		c->vigild_hold = strcmp(val, "yes") == 0;
		return 0;
	}
	if (strcmp(key, "vigild.watch_mounts") == 0) {
		if (val[0] != '/')
			return bad(p, "vigild.watch_mounts needs an absolute path (/: every mount), not '%s'",
				   val);
		return set_string(p, &c->vigild_watch_mounts, val);
	}
	return bad(p, "unknown setting '%s'", key);
}

static int parse_cond(struct parser *p, struct vg_select_rule *rule, char *cond)
{
	uint64_t v;
	char *val;

	if (strncmp(cond, "size>", 5) == 0) {
		if (parse_u64(cond + 5, &rule->size, 10) < 0)
			return bad(p, "size> needs a number of bytes, not '%s'", cond + 5);
		rule->conds |= VG_COND_SIZE_GT;
		return 0;
	}
	val = strchr(cond, '=');
	if (!val)
		return bad(p, "'%s' is no condition (path=, fstype=, uid=, gid=, mode=, size>)",
			   cond);
	*val++ = 0;
	if (strcmp(cond, "path") == 0) {
		size_t len = strlen(val);

		if (val[0] != '/')
			return bad(p, "path= needs an absolute path, not '%s'", val);
		while (len > 1 && val[len - 1] == '/')
			val[--len] = 0;
		if (rule->path)
			return bad(p, "%s given twice in one rule", "path=");
		rule->path = strdup(val);
		if (!rule->path)
			return vg_diag_set(p->diag, -ENOMEM, "out of memory");
		rule->path_len = len;
		rule->conds |= VG_COND_PATH;
	} else if (strcmp(cond, "fstype") == 0) {
		v = vg_fstype_magic(val);
		if (!v && (strncmp(val, "0x", 2) != 0 || parse_u64(val + 2, &v, 16) < 0))
			return bad(p, "unknown filesystem type '%s' (a name or 0xMAGIC)", val);
		rule->fsmagic = v;
		rule->conds |= VG_COND_FSTYPE;
	} else if (strcmp(cond, "uid") == 0 || strcmp(cond, "gid") == 0) {
		bool uid = cond[0] == 'u';

		if (parse_u64(val, &v, 10) < 0 || v > UINT32_MAX - 1)
			return bad(p, "%s= needs a numeric id", uid ? "uid" : "gid");
		if (uid) {
			rule->uid = (uid_t)v;
			rule->conds |= VG_COND_UID;
		} else {
			rule->gid = (gid_t)v;
			rule->conds |= VG_COND_GID;
		}
	} else if (strcmp(cond, "mode") == 0) {
		bool any = val[0] == '+';

		if (parse_u64(val + any, &v, 8) < 0 || v > 07777)
			return bad(p, "mode= needs octal permission bits (+BITS: any of them), not '%s'",
				   val);
		rule->mode = (mode_t)v;
		rule->conds |= any ? VG_COND_MODE_ANY : VG_COND_MODE_EQ;
	} else {
		return bad(p, "unknown condition '%s'", cond);
	}
	return 0;
}

static int parse_rule(struct vg_config *c, struct parser *p, char *line, bool skip)
{
	struct vg_select_rule rule = { .skip = skip, .line = p->line };
	struct vg_select_rule *nr;
	char *save = NULL;
	int r = 0;

	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (strcmp(tok, "all") == 0)
			continue;
		r = parse_cond(p, &rule, tok);
		if (r < 0)
			goto fail;
	}
	nr = realloc(c->rules, (c->nrules + 1) * sizeof(*nr));
	if (!nr) {
		r = vg_diag_set(p->diag, -ENOMEM, "out of memory");
		goto fail;
	}
	c->rules = nr;
	c->rules[c->nrules++] = rule;
	return 0;
fail:
	free(rule.path);
	return r;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int parse_line(struct vg_config *c, struct parser *p, char *line)
{
	char *eq, *s = trim(line);

	if (!*s || *s == '#')
		return 0;
	if (strncmp(s, "label", 5) == 0 && (s[5] == 0 || isspace((unsigned char)s[5])))
		return parse_rule(c, p, s + 5, false);
	if (strncmp(s, "skip", 4) == 0 && (s[4] == 0 || isspace((unsigned char)s[4])))
		return parse_rule(c, p, s + 4, true);
	eq = strchr(s, '=');
	if (!eq)
		return bad(p, "expected 'KEY = VALUE' or a label/skip rule, got '%s'", s);
	*eq = 0;
	return parse_setting(c, p, trim(s), trim(eq + 1));
}

int vg_config_parse(struct vg_config *c, const char *text, size_t len, const char *name,
		    struct vg_diag *diag)
{
	struct parser p = { .name = name ? name : "config", .diag = diag };
	char *copy, *line, *next;
	int r = 0;

	if (memchr(text, 0, len))
		return vg_diag_set(diag, -EINVAL, "%s: contains a NUL byte", p.name);
	copy = malloc(len + 1);
	if (!copy)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	memcpy(copy, text, len);
	copy[len] = 0;
	for (line = copy; line && r == 0; line = next) {
		char *hash;

		p.line++;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		hash = strstr(line, " #");
		if (hash)
			*hash = 0;
		if (strlen(line) > 4096) {
			r = bad(&p, "line longer than %s bytes", "4096");
			break;
		}
		r = parse_line(c, &p, line);
	}
	free(copy);
	return r;
}

int vg_config_load(struct vg_config *c, const char *path, bool optional, struct vg_diag *diag)
{
	struct stat st;
	uint8_t *buf;
	size_t len = 0;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && optional)
			return 1;
		return vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
	}
	/* a regular file, or /dev/null for "no configuration" */
	if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) ||
	    st.st_size > CONFIG_MAX_SIZE) {
		close(fd);
		return vg_diag_set(diag, -EINVAL, "%s: not a regular file of at most 1 MiB", path);
	}
	r = vg_fd_read_all(fd, CONFIG_MAX_SIZE, &buf, &len);
	close(fd);
	if (r == -ENOMEM)
		return vg_diag_set(diag, r, "out of memory");
	if (r == -EFBIG)
		return vg_diag_set(diag, r, "%s: larger than 1 MiB", path);
	if (r < 0)
		return vg_diag_set(diag, r, "%s: %s", path, strerror(-r));
	r = vg_config_parse(c, (const char *)buf, len, path, diag);
	free(buf);
	return r;
}

static bool rule_matches(const struct vg_select_rule *r, const char *path, uint64_t fsmagic,
			 uid_t uid, gid_t gid, mode_t mode, uint64_t size)
{
	if ((r->conds & VG_COND_PATH) &&
	    !(strncmp(path, r->path, r->path_len) == 0 &&
	      (path[r->path_len] == 0 || path[r->path_len] == '/' || r->path_len == 1)))
		return false;
	if ((r->conds & VG_COND_FSTYPE) && r->fsmagic != fsmagic)
		return false;
	if ((r->conds & VG_COND_UID) && r->uid != uid)
		return false;
	if ((r->conds & VG_COND_GID) && r->gid != gid)
		return false;
	if ((r->conds & VG_COND_MODE_ANY) && !(mode & r->mode))
		return false;
	if ((r->conds & VG_COND_MODE_EQ) && (mode & 07777) != r->mode)
		return false;
	if ((r->conds & VG_COND_SIZE_GT) && size <= r->size)
		return false;
	return true;
}

bool vg_config_select(const struct vg_config *c, const char *path, uint64_t fsmagic, uid_t uid,
		      gid_t gid, mode_t mode, uint64_t size)
{
	for (size_t i = 0; i < c->nrules; i++)
		if (rule_matches(&c->rules[i], path, fsmagic, uid, gid, mode, size))
			return !c->rules[i].skip;
	return true;
}
