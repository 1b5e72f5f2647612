// SPDX-License-Identifier: MIT
/*
 * policy_validate.c - how the tokens of one rule go together, once
 * policy_parse.c has read them: ima_validate_rule() of
 * security/integrity/ima/ima_policy.c (which conditions and options each
 * func= and action allows), then vigil's own rules for its extensions
 * (access rules, path=, subj_exe=, appraisal, attr=). Each refusal names
 * the token at fault and its column.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "policy_internal.h"
#include "policy_parse.h"
#include "vigil/policy.h"

static const char *flag_key(uint32_t bit)
{
	switch (bit) {
	case VG_POLF_FUNC: return "func=";
	case VG_POLF_MASK: case VG_POLF_INMASK: return "mask=";
	case VG_POLF_FSMAGIC: return "fsmagic=";
	case VG_POLF_UID: return "uid";
	case VG_POLF_FOWNER: return "fowner";
	case VG_POLF_FSUUID: return "fsuuid=";
	case VG_POLF_EUID: return "euid";
	case VG_POLF_PCR: return "pcr=";
	case VG_POLF_FSNAME: return "fsname=";
	case VG_POLF_KEYRINGS: return "keyrings=";
	case VG_POLF_LABEL: return "label=";
	case VG_POLF_VALIDATE_ALGOS: return "appraise_algos=";
	case VG_POLF_GID: return "gid";
	case VG_POLF_EGID: return "egid";
	case VG_POLF_FGROUP: return "fgroup";
	case VG_POLF_DIGSIG_REQUIRED: case VG_POLF_CHECK_BLACKLIST: return "appraise_type=";
	case VG_POLF_PERMIT_DIRECTIO: return "permit_directio";
	case VG_POLF_MODSIG_ALLOWED: return "appraise_type=imasig|modsig";
	case VG_POLF_VERITY_REQUIRED: return "digest_type=verity";
	}
	return "?";
}

static bool has_lsm(const struct vg_policy_rule *r)
{
	for (int i = 0; i < VG_LSM__MAX; i++)
		if (r->lsm[i])
			return true;
	return false;
}

static unsigned int first_lsm_col(const struct parse *ps, const char **key)
{
	static const char *const k[VG_LSM__MAX] = { "obj_user=", "obj_role=", "obj_type=",
						    "subj_user=", "subj_role=", "subj_type=" };

	for (int i = 0; i < VG_LSM__MAX; i++)
		if (ps->r->lsm[i]) {
			*key = k[i];
			return ps->lsmcol[i];
		}
	*key = "";
	return ps->rule_col;
}

/* The first (lowest) bit of @bad, reported at its token. */
static int bad_flag(struct parse *ps, uint32_t bad, const char *fmt_func)
{
	uint32_t bit = bad & -bad;
	const char *fn = vg_policy_func_name(ps->r->func);

	if (ps->r->func == VG_FUNC_NONE) {
		if (bit == VG_POLF_KEYRINGS)
			return vg__policy_perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "keyrings= needs func=KEY_CHECK");
		if (bit == VG_POLF_LABEL)
			return vg__policy_perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "label= needs func=CRITICAL_DATA");
		if (bit == VG_POLF_MODSIG_ALLOWED)
			return vg__policy_perr(ps, ps->flagcol[bitno(bit)], -EINVAL,
					       "appraise_type=imasig|modsig needs func=MODULE_CHECK, KEXEC_KERNEL_CHECK or KEXEC_INITRAMFS_CHECK");
	}
	return vg__policy_perr(ps, ps->flagcol[bitno(bit)], -EINVAL, "%s does not go with %s%s",
			       flag_key(bit),
			       fmt_func, ps->r->func ? fn : "a rule without func=");
}

/* ima_validate_rule(), with the reason in words. */
int vg__policy_validate_kernel(struct parse *ps)
{
	struct vg_policy_rule *r = ps->r;
	uint32_t allowed, fl = r->flags;
	const char *key;
	unsigned int col;

	if (r->action != VG_POL_MEASURE && (fl & VG_POLF_PCR))
		return vg__policy_perr(ps, ps->flagcol[bitno(VG_POLF_PCR)], -EINVAL,
				       "pcr= is only valid with the action measure");
	if (r->action != VG_POL_APPRAISE && (fl & (VG_POLF_DIGSIG_REQUIRED | VG_POLF_MODSIG_ALLOWED |
						   VG_POLF_CHECK_BLACKLIST | VG_POLF_VALIDATE_ALGOS))) {
		uint32_t bit = (fl & VG_POLF_DIGSIG_REQUIRED) ? VG_POLF_DIGSIG_REQUIRED : VG_POLF_VALIDATE_ALGOS;

		return vg__policy_perr(ps, ps->flagcol[bitno(bit)], -EINVAL,
				       "%s is only valid with the action appraise",
				       flag_key(bit));
	}
	switch (r->func) {
	case VG_FUNC_NONE: case VG_FUNC_FILE_CHECK: case VG_FUNC_MMAP_CHECK:
	case VG_FUNC_MMAP_CHECK_REQPROT: case VG_FUNC_BPRM_CHECK: case VG_FUNC_CREDS_CHECK:
	case VG_FUNC_POST_SETATTR: case VG_FUNC_FIRMWARE_CHECK: case VG_FUNC_POLICY_CHECK:
		allowed = VG_POLF_FUNC | VG_POLF_MASK | VG_POLF_FSMAGIC | VG_POLF_UID | VG_POLF_FOWNER |
			  VG_POLF_FSUUID | VG_POLF_INMASK | VG_POLF_EUID | VG_POLF_PCR | VG_POLF_FSNAME |
			  VG_POLF_GID | VG_POLF_EGID | VG_POLF_FGROUP | VG_POLF_DIGSIG_REQUIRED |
			  VG_POLF_PERMIT_DIRECTIO | VG_POLF_VALIDATE_ALGOS | VG_POLF_CHECK_BLACKLIST |
			  VG_POLF_VERITY_REQUIRED;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC_MODULE_CHECK: case VG_FUNC_KEXEC_KERNEL_CHECK: case VG_FUNC_KEXEC_INITRAMFS_CHECK:
		allowed = VG_POLF_FUNC | VG_POLF_MASK | VG_POLF_FSMAGIC | VG_POLF_UID | VG_POLF_FOWNER |
			  VG_POLF_FSUUID | VG_POLF_INMASK | VG_POLF_EUID | VG_POLF_PCR | VG_POLF_FSNAME |
			  VG_POLF_GID | VG_POLF_EGID | VG_POLF_FGROUP | VG_POLF_DIGSIG_REQUIRED |
			  VG_POLF_PERMIT_DIRECTIO | VG_POLF_MODSIG_ALLOWED | VG_POLF_CHECK_BLACKLIST |
			  VG_POLF_VALIDATE_ALGOS;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC_KEXEC_CMDLINE:
		if (r->action & ~(VG_POL_MEASURE | VG_POL_DONT_MEASURE))
			return vg__policy_perr(ps, ps->actcol, -EINVAL,
					       "func=KEXEC_CMDLINE is only valid with measure or dont_measure");
		allowed = VG_POLF_FUNC | VG_POLF_FSMAGIC | VG_POLF_UID | VG_POLF_FOWNER | VG_POLF_FSUUID |
			  VG_POLF_EUID | VG_POLF_PCR | VG_POLF_FSNAME | VG_POLF_GID | VG_POLF_EGID |
			  VG_POLF_FGROUP;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC_KEY_CHECK:
	case VG_FUNC_CRITICAL_DATA: {
		const char *fn = vg_policy_func_name(r->func);

		if (r->action & ~(VG_POL_MEASURE | VG_POL_DONT_MEASURE))
			return vg__policy_perr(ps, ps->actcol, -EINVAL,
					       "func=%s is only valid with measure or dont_measure", fn);
		allowed = VG_POLF_FUNC | VG_POLF_UID | VG_POLF_GID | VG_POLF_PCR |
			  (r->func == VG_FUNC_KEY_CHECK ? VG_POLF_KEYRINGS : VG_POLF_LABEL);
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		if (has_lsm(r)) {
			col = first_lsm_col(ps, &key);
			return vg__policy_perr(ps, col, -EINVAL, "%s does not go with func=%s", key, fn);
		}
		break;
	}
	case VG_FUNC_SETXATTR_CHECK:
		if (r->action != VG_POL_APPRAISE)
			return vg__policy_perr(ps, ps->actcol, -EINVAL, "func=SETXATTR_CHECK is only valid with appraise");
		if (!(fl & VG_POLF_VALIDATE_ALGOS))
			return vg__policy_perr(ps, ps->flagcol[bitno(VG_POLF_FUNC)], -EINVAL,
					       "func=SETXATTR_CHECK needs appraise_algos=");
		allowed = VG_POLF_FUNC | VG_POLF_VALIDATE_ALGOS;
		if (fl & ~allowed)
			return bad_flag(ps, fl & ~allowed, "func=");
		break;
	case VG_FUNC__MAX:
		return vg__policy_perr(ps, ps->rule_col, -EINVAL, "internal: func");
	}
	/* fs-verity appraisal needs a signature (sigv3) */
	if (r->action == VG_POL_APPRAISE && (fl & VG_POLF_VERITY_REQUIRED) &&
	    !(fl & VG_POLF_DIGSIG_REQUIRED))
		return vg__policy_perr(ps, ps->flagcol[bitno(VG_POLF_VERITY_REQUIRED)], -EINVAL,
				       "appraise digest_type=verity needs appraise_type=sigv3");
	return 0;
}

static bool func_is_file_access(enum vg_func f)
{
	return f != VG_FUNC_KEXEC_CMDLINE && f != VG_FUNC_KEY_CHECK && f != VG_FUNC_CRITICAL_DATA &&
	       f != VG_FUNC_SETXATTR_CHECK;
}

static unsigned int first_x(const struct parse *ps, uint32_t bits, const char **key)
{
	static const char *const k[] = { "path=", "subj_exe=", "appraisal", "subj_appraisal", "attr=",
					 "trust=archive" };

	for (unsigned int i = 0; i < VG_ARRAY_SIZE(k); i++)
		if (bits & (1u << i)) {
			*key = k[i];
			return ps->xcol[i];
		}
	*key = "";
	return ps->rule_col;
}

/* vigil's rules for its extensions. */
int vg__policy_validate_vigil(struct parse *ps)
{
	struct vg_policy_rule *r = ps->r;
	bool access = vg_policy_action_class(r->action) == VG_CLASS_ACCESS;
	const char *key;
	unsigned int col;

	/*
	 * trust=archive lets a file without security.ima pass by the trust
	 * database: an appraise option. A rule that requires a signature
	 * (appraise_type=imasig, modsig, sigv3) says every file it covers
	 * carries one the keyring verifies; an unlabeled file passing there
	 * would break that promise, so the two are refused together.
	 */
	if (r->xflags & VG_POLX_TRUST_ARCHIVE) {
		col = ps->xcol[bitno(VG_POLX_TRUST_ARCHIVE)];
		if (r->action != VG_POL_APPRAISE)
			return vg__policy_perr(ps, col, -EINVAL,
					       "trust=archive is only valid after the action appraise");
		if (r->flags & VG_POLF_DIGSIG_REQUIRED)
			return vg__policy_perr(ps, col, -EINVAL,
					       "trust=archive does not go with appraise_type=%s: that rule "
					       "requires a signature label, trust=archive allows files "
					       "without one (write two rules)",
					       (r->flags & VG_POLF_VERITY_REQUIRED) ? "sigv3" : "imasig");
	}
	if (access) {
		uint32_t opts = r->flags & (VG_POLF_PCR | VG_POLF_KEYRINGS | VG_POLF_LABEL |
					    VG_POLF_VALIDATE_ALGOS | VG_POLF_OPTIONS);

		if (opts)
			return vg__policy_perr(ps, ps->flagcol[bitno(opts & -opts)], -EINVAL,
					       "%s does not go with an access rule (allow, deny, audit_access)",
					       flag_key(opts & -opts));
		if (r->appraise_flag)
			return vg__policy_perr(ps, ps->aflagcol, -EINVAL,
					       "appraise_flag= does not go with an access rule (allow, deny, audit_access)");
		if (!func_is_file_access(r->func))
			return vg__policy_perr(ps, ps->flagcol[bitno(VG_POLF_FUNC)], -EINVAL,
					       "func=%s is no file access: not valid in an access rule",
					       vg_policy_func_name(r->func));
		return 0;
	}
	if (r->xflags & (VG_POLX_APPRAISAL | VG_POLX_ATTR)) {
		col = first_x(ps, r->xflags & (VG_POLX_APPRAISAL | VG_POLX_ATTR), &key);
		return vg__policy_perr(ps, col, -EINVAL,
				       "%s is only valid in an access rule (allow, deny, audit_access)", key);
	}
	if (r->xflags && !func_is_file_access(r->func)) {
		col = first_x(ps, r->xflags, &key);
		return vg__policy_perr(ps, col, -EINVAL, "%s does not go with func=%s", key,
				       vg_policy_func_name(r->func));
	}
	return 0;
}
