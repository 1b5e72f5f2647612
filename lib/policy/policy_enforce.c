// SPDX-License-Identifier: MIT
/*
 * policy_enforce.c - which rules vigild can enforce: the conditions a
 * fanotify enforcer observes, and a sentence for every one it cannot.
 *
 * vigild sees two permission events (docs/vigild.md): FAN_OPEN_EXEC_PERM,
 * an exec (BPRM_CHECK, MAY_EXEC), and FAN_OPEN_PERM, an open (FILE_CHECK,
 * treated as MAY_READ: the event does not carry the open flags). An open
 * by the dynamic loader (`ld.so PROG`) is matched as both an open and an
 * exec (vg_access.also_func). Of the task it reads the pid, the
 * credentials and /proc/PID/exe; of the file the inode (owner, group,
 * filesystem magic, name and UUID), its path and, for access rules, its
 * appraisal.
 *
 * A rule whose conditions name anything else (mmap, a kernel-internal
 * hook, the open flags, LSM contexts, ...)
 * would never match in vigild, or match on a value vigild never fills:
 * the parser records the first such condition of each rule
 * (vg_policy_rule.unenforced, .unenforced_col), so that `vigil policy
 * check` and vigild can refuse the rule instead of keeping a rule that
 * only looks enforced. What a kernel would do with the rule is not judged
 * here (that is the parser's job); this file judges vigild only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "policy_internal.h"
#include "vigil/policy.h"

#define KERNEL_HOOK(name) \
	"func=" name ": a hook inside the kernel that fanotify does not report, so vigild never sees it"

static const char *const func_why[VG_FUNC__MAX] = {
	[VG_FUNC_MMAP_CHECK] =
		"func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC) (fanotify has no mmap event); "
		"libraries the loader maps, LD_PRELOAD and dlopen() arrive as plain opens (FILE_CHECK)",
	[VG_FUNC_MMAP_CHECK_REQPROT] =
		"func=MMAP_CHECK_REQPROT: vigild cannot see mmap(PROT_EXEC) (fanotify has no mmap event); "
		"libraries the loader maps, LD_PRELOAD and dlopen() arrive as plain opens (FILE_CHECK)",
	[VG_FUNC_CREDS_CHECK] =
		"func=CREDS_CHECK: vigild sees an exec, not the credentials the new program will run with",
	[VG_FUNC_POST_SETATTR] = KERNEL_HOOK("POST_SETATTR"),
	[VG_FUNC_MODULE_CHECK] = KERNEL_HOOK("MODULE_CHECK"),
	[VG_FUNC_FIRMWARE_CHECK] = KERNEL_HOOK("FIRMWARE_CHECK"),
	[VG_FUNC_KEXEC_KERNEL_CHECK] = KERNEL_HOOK("KEXEC_KERNEL_CHECK"),
	[VG_FUNC_KEXEC_INITRAMFS_CHECK] = KERNEL_HOOK("KEXEC_INITRAMFS_CHECK"),
	[VG_FUNC_POLICY_CHECK] = KERNEL_HOOK("POLICY_CHECK"),
	[VG_FUNC_KEXEC_CMDLINE] = KERNEL_HOOK("KEXEC_CMDLINE"),
	[VG_FUNC_KEY_CHECK] = KERNEL_HOOK("KEY_CHECK"),
	[VG_FUNC_CRITICAL_DATA] = KERNEL_HOOK("CRITICAL_DATA"),
	[VG_FUNC_SETXATTR_CHECK] = KERNEL_HOOK("SETXATTR_CHECK"),
};

#define NO_FLAGS ": a permission event does not carry the open flags (an open for writing " \
	"arrives like one for reading), so vigild cannot tell"

static const char *const lsm_why[VG_LSM__MAX] = {
	"obj_user=: vigild does not read LSM contexts (not implemented), so the condition never holds",
	"obj_role=: vigild does not read LSM contexts (not implemented), so the condition never holds",
	"obj_type=: vigild does not read LSM contexts (not implemented), so the condition never holds",
	"subj_user=: vigild does not read LSM contexts (not implemented), so the condition never holds",
	"subj_role=: vigild does not read LSM contexts (not implemented), so the condition never holds",
	"subj_type=: vigild does not read LSM contexts (not implemented), so the condition never holds",
};

static bool template_written(const char *name)
{
	return !name || strcmp(name, "ima-ng") == 0 || strcmp(name, "ima-sig") == 0;
}

static const char *mask_why(uint32_t flags, unsigned int mask)
{
	bool in = flags & VG_POLF_INMASK;

	if (mask & VG_MAY_WRITE)
		return in ? "mask=^MAY_WRITE" NO_FLAGS : "mask=MAY_WRITE" NO_FLAGS;
	if (mask & VG_MAY_APPEND)
		return in ? "mask=^MAY_APPEND" NO_FLAGS : "mask=MAY_APPEND" NO_FLAGS;
	return NULL;
}

void vg__policy_unenforced(struct vg_policy_rule *r, const struct vg__policy_cols *c)
{
	const char *why = NULL;
	unsigned int col = r->col;

	r->unenforced = NULL;
	r->unenforced_col = 0;
	if (r->action == VG_POL_HASH) {
		why = "hash: vigild does not update security.ima when a file is written (the kernel's "
		      "IMA_HASH); use fix mode or `vigil label`";
		col = c->actcol;
	} else if ((r->flags & VG_POLF_FUNC) && func_why[r->func]) {
		why = func_why[r->func];
		col = r->func_col;
	} else if ((r->flags & (VG_POLF_MASK | VG_POLF_INMASK)) &&
		   (why = mask_why(r->flags, r->mask)) != NULL) {
		col = c->flagcol[__builtin_ctz(r->flags & VG_POLF_MASK ? VG_POLF_MASK : VG_POLF_INMASK)];
	} else if (!(r->flags & VG_POLF_FUNC) && (r->flags & (VG_POLF_MASK | VG_POLF_INMASK)) &&
		   r->mask == VG_MAY_EXEC) {
		/* what a kernel matches with it is exec and mmap(PROT_EXEC) alike */
		why = r->flags & VG_POLF_INMASK ?
		      "mask=^MAY_EXEC without func=: a kernel matches mmap(PROT_EXEC) with it too, which "
		      "vigild cannot see (write func=BPRM_CHECK)" :
		      "mask=MAY_EXEC without func=: a kernel matches mmap(PROT_EXEC) with it too, which "
		      "vigild cannot see (write func=BPRM_CHECK)";
		col = c->flagcol[__builtin_ctz(r->flags & VG_POLF_MASK ? VG_POLF_MASK : VG_POLF_INMASK)];
	} else if (r->flags & VG_POLF_VERITY_REQUIRED) {
		why = "digest_type=verity: vigild does not require fs-verity, so a file-hash signature "
		      "would pass";
		col = c->flagcol[__builtin_ctz(VG_POLF_VERITY_REQUIRED)];
	} else if (!template_written(r->template_name)) {
		why = "template=: vigild writes ima-ng and ima-sig entries only";
		col = c->tmplcol;
	} else if (r->xflags & VG_POLX_SUBJ_APPRAISAL) {
		why = "subj_appraisal: vigild does not appraise the task's executable for matching (not "
		      "implemented), so it would always see 'unknown'";
		col = c->xcol[__builtin_ctz(VG_POLX_SUBJ_APPRAISAL)];
	} else if (r->xflags & VG_POLX_ATTR) {
		why = "attr=: vigild does not give EVM-verified xattrs to the matcher (not implemented), "
		      "so the condition never holds";
		col = c->xcol[__builtin_ctz(VG_POLX_ATTR)];
	} else {
		for (unsigned int i = 0; i < VG_LSM__MAX && !why; i++)
			if (r->lsm[i]) {
				why = lsm_why[i];
				col = c->lsmcol[i];
			}
	}
	if (why) {
		r->unenforced = why;
		r->unenforced_col = col ? col : r->col;
	}
}

bool vg_policy_func_observable(enum vg_func f)
{
	return f == VG_FUNC_FILE_CHECK || f == VG_FUNC_BPRM_CHECK;
}

size_t vg_policy_unenforced_count(const struct vg_policy *p)
{
	size_t n = 0;

	for (size_t i = 0; p && i < p->n; i++)
		if (p->rules[i].unenforced)
			n++;
	return n;
}

int vg_policy_check_enforceable(const struct vg_policy *p, struct vg_policy_error *err)
{
	size_t n = vg_policy_unenforced_count(p);

	if (!n)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct vg_policy_rule *r = &p->rules[i];

		if (!r->unenforced)
			continue;
		if (err) {
			err->err = -EOPNOTSUPP;
			err->line = r->line;
			err->col = r->unenforced_col;
			snprintf(err->msg, sizeof(err->msg), "%s", r->unenforced);
		}
		break;
	}
	return -EOPNOTSUPP;
}
