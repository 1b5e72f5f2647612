// SPDX-License-Identifier: MIT
/*
 * policy_builtin.c - the kernel's built-in policies (ima_policy.c
 * dont_measure_rules[], default_measurement_rules[],
 * original_measurement_rules[], secure_boot_rules[],
 * default_appraise_rules[], critical_data_rules[]) as policy text, parsed
 * like any other. Config-dependent rules are left out:
 * CONFIG_IMA_WRITE_POLICY's `appraise func=POLICY_CHECK`, and
 * CONFIG_IMA_APPRAISE_SIGNED_INIT's signature requirement on `appraise
 * fowner=0`; arch and build-time rules are not in any named set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "policy_internal.h"

static int berr(struct vg_policy_error *err, int e, const char *msg, const char *item, size_t n)
{
	if (err) {
		err->err = e;
		err->line = 0;
		err->col = 0;
		snprintf(err->msg, sizeof(err->msg), msg, (int)(n > 64 ? 64 : n), item);
	}
	return e;
}

/*
 * dont_measure_rules[]: proc, sysfs, debugfs, tmpfs (FILE_CHECK only, as in
 * current mainline; older kernels exclude tmpfs for every
 * hook), devpts, binfmt_misc, securityfs, selinuxfs, smackfs, cgroup,
 * cgroup2, nsfs, efivarfs.
 */
#define DONT_MEASURE_TEXT \
	"dont_measure fsmagic=0x9fa0\n" \
	"dont_measure fsmagic=0x62656572\n" \
	"dont_measure fsmagic=0x64626720\n" \
	"dont_measure func=FILE_CHECK fsmagic=0x1021994\n" \
	"dont_measure fsmagic=0x1cd1\n" \
	"dont_measure fsmagic=0x42494e4d\n" \
	"dont_measure fsmagic=0x73636673\n" \
	"dont_measure fsmagic=0xf97cff8c\n" \
	"dont_measure fsmagic=0x43415d53\n" \
	"dont_measure fsmagic=0x27e0eb\n" \
	"dont_measure fsmagic=0x63677270\n" \
	"dont_measure fsmagic=0x6e736673\n" \
	"dont_measure fsmagic=0xde5e81e4\n"

#define TCB_TEXT \
	"measure func=MMAP_CHECK mask=MAY_EXEC\n" \
	"measure func=BPRM_CHECK mask=MAY_EXEC\n" \
	"measure func=FILE_CHECK mask=^MAY_READ euid=0\n" \
	"measure func=FILE_CHECK mask=^MAY_READ uid=0\n" \
	"measure func=MODULE_CHECK\n" \
	"measure func=FIRMWARE_CHECK\n" \
	"measure func=POLICY_CHECK\n"

#define ORIGINAL_TCB_TEXT \
	"measure func=MMAP_CHECK mask=MAY_EXEC\n" \
	"measure func=BPRM_CHECK mask=MAY_EXEC\n" \
	"measure func=FILE_CHECK mask=MAY_READ uid=0\n" \
	"measure func=MODULE_CHECK\n" \
	"measure func=FIRMWARE_CHECK\n"

static const char dont_measure_text[] = DONT_MEASURE_TEXT;
static const char tcb_text[] = TCB_TEXT;
static const char original_tcb_text[] = ORIGINAL_TCB_TEXT;
static const char tcb_full[] = DONT_MEASURE_TEXT TCB_TEXT;
static const char orig_full[] = DONT_MEASURE_TEXT ORIGINAL_TCB_TEXT;

/* secure_boot_rules[]; the text form adds CHECK_BLACKLIST, as any imasig rule */
static const char secure_boot_text[] =
	"appraise func=MODULE_CHECK appraise_type=imasig\n"
	"appraise func=FIRMWARE_CHECK appraise_type=imasig\n"
	"appraise func=KEXEC_KERNEL_CHECK appraise_type=imasig\n"
	"appraise func=POLICY_CHECK appraise_type=imasig\n";

/* default_appraise_rules[] without CONFIG_IMA_WRITE_POLICY / _APPRAISE_SIGNED_INIT */
static const char appraise_tcb_text[] =
	"dont_appraise fsmagic=0x9fa0\n"
	"dont_appraise fsmagic=0x62656572\n"
	"dont_appraise fsmagic=0x64626720\n"
	"dont_appraise fsmagic=0x1021994\n"
	"dont_appraise fsmagic=0x858458f6\n"		/* RAMFS_MAGIC */
	"dont_appraise fsmagic=0x1cd1\n"
	"dont_appraise fsmagic=0x42494e4d\n"
	"dont_appraise fsmagic=0x73636673\n"
	"dont_appraise fsmagic=0xf97cff8c\n"
	"dont_appraise fsmagic=0x43415d53\n"
	"dont_appraise fsmagic=0x6e736673\n"
	"dont_appraise fsmagic=0xde5e81e4\n"
	"dont_appraise fsmagic=0x27e0eb\n"
	"dont_appraise fsmagic=0x63677270\n"
	"appraise fowner=0\n";

static const char critical_data_text[] = "measure func=CRITICAL_DATA\n";

enum { B_TCB = 1, B_ORIG = 2, B_SECURE = 4, B_APPRAISE = 8, B_CRITICAL = 16 };

static const struct {
	const char *name;
	unsigned int bit;
} builtin_names[] = {
	{ "tcb", B_TCB }, { "ima_tcb", B_ORIG }, { "secure_boot", B_SECURE },
	{ "appraise_tcb", B_APPRAISE }, { "critical_data", B_CRITICAL },
};

const char *vg_policy_builtin_text(const char *name)
{
	if (strcmp(name, "tcb") == 0)
		return tcb_full;
	if (strcmp(name, "ima_tcb") == 0)
		return orig_full;
	if (strcmp(name, "secure_boot") == 0)
		return secure_boot_text;
	if (strcmp(name, "appraise_tcb") == 0)
		return appraise_tcb_text;
	if (strcmp(name, "critical_data") == 0)
		return critical_data_text;
	return NULL;
}

int vg_policy_builtin(const char *names, struct vg_policy **ret, struct vg_policy_error *err)
{
	unsigned int set = 0;
	const char *s = names;
	char *text;
	size_t len = 0;
	int e;

	while (*s) {
		size_t n = strcspn(s, "| ");
		bool found = false;

		for (size_t i = 0; n && i < VG_ARRAY_SIZE(builtin_names); i++)
			if (strlen(builtin_names[i].name) == n && strncmp(builtin_names[i].name, s, n) == 0) {
				set |= builtin_names[i].bit;
				found = true;
			}
		if (n && !found)
			return berr(err, -ENOENT,
				    "no built-in policy '%.*s' (tcb, ima_tcb, appraise_tcb, secure_boot, critical_data)",
				    s, n);
		s += n + (s[n] != '\0');
	}
	if (!set)
		return berr(err, -ENOENT, "no built-in policy named%.*s", "", 0);
	if ((set & B_TCB) && (set & B_ORIG))
		return berr(err, -EINVAL, "tcb and ima_tcb exclude each other%.*s", "", 0);
	text = malloc(sizeof(dont_measure_text) + sizeof(tcb_text) + sizeof(secure_boot_text) +
		      sizeof(appraise_tcb_text) + sizeof(critical_data_text));
	if (!text)
		return berr(err, -ENOMEM, "out of memory%.*s", "", 0);
	text[0] = '\0';
	/* ima_init_policy()'s order */
	if (set & (B_TCB | B_ORIG))
		strcat(text, dont_measure_text);
	if (set & B_TCB)
		strcat(text, tcb_text);
	if (set & B_ORIG)
		strcat(text, original_tcb_text);
	if (set & B_SECURE)
		strcat(text, secure_boot_text);
	if (set & B_APPRAISE)
		strcat(text, appraise_tcb_text);
	if (set & B_CRITICAL)
		strcat(text, critical_data_text);
	len = strlen(text);
	e = vg_policy_parse(text, len, VG_POLICY_KERNEL, ret, err);
	free(text);
	return e;
}
