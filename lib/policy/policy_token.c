// SPDX-License-Identifier: MIT
/*
 * policy_token.c - the words of the policy language: the token table the
 * parser matches against and the printer prints from, the names of funcs,
 * masks, actions and appraisal states, the attr= level names, and the
 * kernel's number syntax (kstrtoull()). The parser (policy_parse.c) and the
 * matcher (policy_match.c) both stand on this file; it calls neither.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "policy_internal.h"
#include "vigil/hash.h"
#include "vigil/policy.h"


/*
 * The token table (the kernel's policy_tokens, in the order of its enum
 * policy_opt; vigil's at the end): keyword, and the text between keyword
 * and value. The parser matches against it and the printer prints from it.
 */
const struct vg__token vg__policy_tokens[OPT__MAX] = {
	[OPT_MEASURE] = { "measure", NULL, false },
	[OPT_DONT_MEASURE] = { "dont_measure", NULL, false },
	[OPT_APPRAISE] = { "appraise", NULL, false },
	[OPT_DONT_APPRAISE] = { "dont_appraise", NULL, false },
	[OPT_AUDIT] = { "audit", NULL, false },
	[OPT_HASH] = { "hash", NULL, false },
	[OPT_DONT_HASH] = { "dont_hash", NULL, false },
	[OPT_OBJ_USER] = { "obj_user", "=", false },
	[OPT_OBJ_ROLE] = { "obj_role", "=", false },
	[OPT_OBJ_TYPE] = { "obj_type", "=", false },
	[OPT_SUBJ_USER] = { "subj_user", "=", false },
	[OPT_SUBJ_ROLE] = { "subj_role", "=", false },
	[OPT_SUBJ_TYPE] = { "subj_type", "=", false },
	[OPT_FUNC] = { "func", "=", false },
	[OPT_MASK] = { "mask", "=", false },
	[OPT_FSMAGIC] = { "fsmagic", "=", false },
	[OPT_FSNAME] = { "fsname", "=", false },
	[OPT_FSUUID] = { "fsuuid", "=", false },
	[OPT_UID_EQ] = { "uid", "=", false },
	[OPT_EUID_EQ] = { "euid", "=", false },
	[OPT_GID_EQ] = { "gid", "=", false },
	[OPT_EGID_EQ] = { "egid", "=", false },
	[OPT_FOWNER_EQ] = { "fowner", "=", false },
	[OPT_FGROUP_EQ] = { "fgroup", "=", false },
	[OPT_UID_GT] = { "uid", ">", false },
	[OPT_EUID_GT] = { "euid", ">", false },
	[OPT_GID_GT] = { "gid", ">", false },
	[OPT_EGID_GT] = { "egid", ">", false },
	[OPT_FOWNER_GT] = { "fowner", ">", false },
	[OPT_FGROUP_GT] = { "fgroup", ">", false },
	[OPT_UID_LT] = { "uid", "<", false },
	[OPT_EUID_LT] = { "euid", "<", false },
	[OPT_GID_LT] = { "gid", "<", false },
	[OPT_EGID_LT] = { "egid", "<", false },
	[OPT_FOWNER_LT] = { "fowner", "<", false },
	[OPT_FGROUP_LT] = { "fgroup", "<", false },
	[OPT_DIGEST_TYPE] = { "digest_type", "=", false },
	[OPT_APPRAISE_TYPE] = { "appraise_type", "=", false },
	[OPT_APPRAISE_FLAG] = { "appraise_flag", "=", false },
	[OPT_APPRAISE_ALGOS] = { "appraise_algos", "=", false },
	[OPT_PERMIT_DIRECTIO] = { "permit_directio", NULL, false },
	[OPT_PCR] = { "pcr", "=", false },
	[OPT_TEMPLATE] = { "template", "=", false },
	[OPT_KEYRINGS] = { "keyrings", "=", false },
	[OPT_LABEL] = { "label", "=", false },
	[OPT_ALLOW] = { "allow", NULL, true },
	[OPT_DENY] = { "deny", NULL, true },
	[OPT_AUDIT_ACCESS] = { "audit_access", NULL, true },
	[OPT_PATH] = { "path", "=", true },
	[OPT_SUBJ_EXE] = { "subj_exe", "=", true },
	[OPT_SUBJ_APPRAISAL_EQ] = { "subj_appraisal", "=", true },
	[OPT_SUBJ_APPRAISAL_NE] = { "subj_appraisal", "!=", true },
	[OPT_APPRAISAL_EQ] = { "appraisal", "=", true },
	[OPT_APPRAISAL_NE] = { "appraisal", "!=", true },
	[OPT_ATTR] = { "attr", "=", true },
	[OPT_TRUST] = { "trust", "=", true },
};

static const struct {
	enum vg__opt opt;
	unsigned int action;
} action_tokens[] = {
	{ OPT_MEASURE, VG_POL_MEASURE }, { OPT_DONT_MEASURE, VG_POL_DONT_MEASURE },
	{ OPT_APPRAISE, VG_POL_APPRAISE }, { OPT_DONT_APPRAISE, VG_POL_DONT_APPRAISE },
	{ OPT_AUDIT, VG_POL_AUDIT }, { OPT_HASH, VG_POL_HASH }, { OPT_DONT_HASH, VG_POL_DONT_HASH },
	{ OPT_ALLOW, VG_POL_ALLOW }, { OPT_DENY, VG_POL_DENY },
	{ OPT_AUDIT_ACCESS, VG_POL_AUDIT_ACCESS },
};

/* func_vg__policy_tokens[] (the __ima_hooks names), and the aliases ima_parse_rule() takes. */
static const char *const func_names[VG_FUNC__MAX] = {
	[VG_FUNC_NONE] = "NONE",
	[VG_FUNC_FILE_CHECK] = "FILE_CHECK",
	[VG_FUNC_MMAP_CHECK] = "MMAP_CHECK",
	[VG_FUNC_MMAP_CHECK_REQPROT] = "MMAP_CHECK_REQPROT",
	[VG_FUNC_BPRM_CHECK] = "BPRM_CHECK",
	[VG_FUNC_CREDS_CHECK] = "CREDS_CHECK",
	[VG_FUNC_POST_SETATTR] = "POST_SETATTR",
	[VG_FUNC_MODULE_CHECK] = "MODULE_CHECK",
	[VG_FUNC_FIRMWARE_CHECK] = "FIRMWARE_CHECK",
	[VG_FUNC_KEXEC_KERNEL_CHECK] = "KEXEC_KERNEL_CHECK",
	[VG_FUNC_KEXEC_INITRAMFS_CHECK] = "KEXEC_INITRAMFS_CHECK",
	[VG_FUNC_POLICY_CHECK] = "POLICY_CHECK",
	[VG_FUNC_KEXEC_CMDLINE] = "KEXEC_CMDLINE",
	[VG_FUNC_KEY_CHECK] = "KEY_CHECK",
	[VG_FUNC_CRITICAL_DATA] = "CRITICAL_DATA",
	[VG_FUNC_SETXATTR_CHECK] = "SETXATTR_CHECK",
};

static const struct {
	const char *name;
	enum vg_func func;
} func_parse[] = {
	{ "FILE_CHECK", VG_FUNC_FILE_CHECK },
	{ "PATH_CHECK", VG_FUNC_FILE_CHECK },	/* backwards compat */
	{ "MODULE_CHECK", VG_FUNC_MODULE_CHECK },
	{ "FIRMWARE_CHECK", VG_FUNC_FIRMWARE_CHECK },
	{ "FILE_MMAP", VG_FUNC_MMAP_CHECK },
	{ "MMAP_CHECK", VG_FUNC_MMAP_CHECK },
	{ "MMAP_CHECK_REQPROT", VG_FUNC_MMAP_CHECK_REQPROT },
	{ "BPRM_CHECK", VG_FUNC_BPRM_CHECK },
	{ "CREDS_CHECK", VG_FUNC_CREDS_CHECK },
	{ "KEXEC_KERNEL_CHECK", VG_FUNC_KEXEC_KERNEL_CHECK },
	{ "KEXEC_INITRAMFS_CHECK", VG_FUNC_KEXEC_INITRAMFS_CHECK },
	{ "POLICY_CHECK", VG_FUNC_POLICY_CHECK },
	{ "KEXEC_CMDLINE", VG_FUNC_KEXEC_CMDLINE },
	{ "KEY_CHECK", VG_FUNC_KEY_CHECK },	/* CONFIG_IMA_MEASURE_ASYMMETRIC_KEYS */
	{ "CRITICAL_DATA", VG_FUNC_CRITICAL_DATA },
	{ "SETXATTR_CHECK", VG_FUNC_SETXATTR_CHECK },
};

const struct vg__mask_name vg__policy_masks[4] = {
	{ "MAY_EXEC", VG_MAY_EXEC }, { "MAY_WRITE", VG_MAY_WRITE },
	{ "MAY_READ", VG_MAY_READ }, { "MAY_APPEND", VG_MAY_APPEND },
};


static const char *const integrity_names[VG_INTEGRITY__MAX] = {
	[VG_INTEGRITY_UNKNOWN] = "unknown",
	[VG_INTEGRITY_PASS] = "pass",
	[VG_INTEGRITY_FAIL] = "fail",
	[VG_INTEGRITY_NOLABEL] = "nolabel",
};

/* Level names for attr= values (security.vigil.integrity). */
static const char *const level_names[] = { "untrusted", "low", "medium", "high", "system" };

const char *vg_policy_func_name(enum vg_func f)
{
	return (unsigned int)f < VG_FUNC__MAX ? func_names[f] : NULL;
}

int vg_policy_func_by_name(const char *name)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(func_parse); i++)
		if (strcmp(func_parse[i].name, name) == 0)
			return (int)func_parse[i].func;
	return -ENOENT;
}

const char *vg_policy_action_name(unsigned int action)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(action_tokens); i++)
		if (action_tokens[i].action == action)
			return vg__policy_tokens[action_tokens[i].opt].key;
	return NULL;
}

unsigned int vg__policy_token_action(enum vg__opt t)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(action_tokens); i++)
		if (action_tokens[i].opt == t)
			return action_tokens[i].action;
	return 0;
}

const char *vg_policy_integrity_name(enum vg_integrity i)
{
	return (unsigned int)i < VG_INTEGRITY__MAX ? integrity_names[i] : NULL;
}

int vg_policy_integrity_by_name(const char *name)
{
	for (int i = 0; i < VG_INTEGRITY__MAX; i++)
		if (strcmp(integrity_names[i], name) == 0)
			return i;
	return -ENOENT;
}

int vg_policy_action_class(unsigned int action)
{
	switch (action) {
	case VG_POL_MEASURE:
	case VG_POL_DONT_MEASURE:
		return VG_CLASS_MEASURE;
	case VG_POL_APPRAISE:
	case VG_POL_DONT_APPRAISE:
		return VG_CLASS_APPRAISE;
	case VG_POL_AUDIT:
		return VG_CLASS_AUDIT;
	case VG_POL_HASH:
	case VG_POL_DONT_HASH:
		return VG_CLASS_HASH;
	case VG_POL_ALLOW:
	case VG_POL_DENY:
	case VG_POL_AUDIT_ACCESS:
		return VG_CLASS_ACCESS;
	}
	return -1;
}

int vg__policy_level(const char *s, size_t len, uint64_t *ret)
{
	for (size_t i = 0; i < VG_ARRAY_SIZE(level_names); i++)
		if (strlen(level_names[i]) == len && memcmp(level_names[i], s, len) == 0) {
			*ret = i;
			return 0;
		}
	return -ENOENT;
}

/*
 * kstrtoull(): optional '+', for base 16 an optional 0x/0X, at least one
 * digit, nothing after, no overflow. Return: 0, -EINVAL, -ERANGE.
 */
int vg__policy_strtou64(const char *s, size_t len, unsigned int base, uint64_t *ret)
{
	size_t i = 0;
	uint64_t v = 0;

	if (i < len && s[i] == '+')
		i++;
	if (base == 16 && i + 1 < len && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	if (i >= len)
		return -EINVAL;
	for (; i < len; i++) {
		int d = vg_hex_digit((unsigned char)s[i]);

		if (d < 0 || (unsigned int)d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - (unsigned int)d) / base)
			return -ERANGE;
		v = v * base + (unsigned int)d;
	}
	*ret = v;
	return 0;
}
