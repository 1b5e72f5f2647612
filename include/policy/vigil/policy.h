/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the policy language: the kernel's IMA policy grammar with the
 * kernel's meaning, plus vigil's integrity-based access control (IBAC).
 *
 * Parsing follows ima_parse_rule() and ima_validate_rule()
 * (security/integrity/ima/ima_policy.c) token by token: one rule per line,
 * tokens separated by blanks, '#' starts a comment (a whole line, or from
 * a token that begins with '#'), exactly one action per rule, the same
 * duplicate checks, number syntax (kstrtoul), the same per-func
 * restrictions. One bad rule rejects the whole text, as the kernel
 * rejects the whole write. The printer uses the same token table as the
 * parser, so the two cannot drift; print(parse(x)) parses back to the
 * same policy.
 *
 * Matching follows ima_match_policy(): rules are scanned in order, and
 * each action class (measure/dont_measure, appraise/dont_appraise, audit,
 * hash/dont_hash) is decided by the first rule of that class whose
 * conditions all hold. vigil's access rules (allow/deny/audit_access)
 * form one more class, decided the same way.
 *
 * vigil extensions, never accepted with VG_POLICY_KERNEL: the actions
 * allow, deny, audit_access; the conditions path=, subj_exe=,
 * subj_appraisal=, subj_appraisal!= (any rule), appraisal=, appraisal!=,
 * attr= (access rules only); the appraise option trust=archive (a file
 * without security.ima passes when the trust database records its path
 * and content digest, vigild only). See docs/policy.md.
 *
 * A parsed struct vg_policy is immutable and holds no global state; it is
 * reference counted (atomically), so a daemon can publish a new policy
 * with an atomic pointer swap and drop the old one when its last reader
 * is done. Matching allocates nothing and is safe from any thread.
 */
#ifndef VIGIL_POLICY_H
#define VIGIL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* enum ima_hooks, in the kernel's order (func_tokens[]). */
enum vg_func {
	VG_FUNC_NONE = 0,
	VG_FUNC_FILE_CHECK,
	VG_FUNC_MMAP_CHECK,
	VG_FUNC_MMAP_CHECK_REQPROT,
	VG_FUNC_BPRM_CHECK,
	VG_FUNC_CREDS_CHECK,
	VG_FUNC_POST_SETATTR,
	VG_FUNC_MODULE_CHECK,
	VG_FUNC_FIRMWARE_CHECK,
	VG_FUNC_KEXEC_KERNEL_CHECK,
	VG_FUNC_KEXEC_INITRAMFS_CHECK,
	VG_FUNC_POLICY_CHECK,
	VG_FUNC_KEXEC_CMDLINE,
	VG_FUNC_KEY_CHECK,
	VG_FUNC_CRITICAL_DATA,
	VG_FUNC_SETXATTR_CHECK,
	VG_FUNC__MAX,
};

/* The kernel's MAY_* bits (include/linux/fs.h). */
#define VG_MAY_EXEC	0x1u
#define VG_MAY_WRITE	0x2u
#define VG_MAY_READ	0x4u
#define VG_MAY_APPEND	0x8u

/* Actions: the kernel's values, then vigil's access actions. */
#define VG_POL_MEASURE		0x0001u
#define VG_POL_DONT_MEASURE	0x0002u
#define VG_POL_APPRAISE		0x0004u
#define VG_POL_DONT_APPRAISE	0x0008u
#define VG_POL_AUDIT		0x0040u
#define VG_POL_HASH		0x0100u
#define VG_POL_DONT_HASH	0x0200u
#define VG_POL_ALLOW		0x10000u	/* vigil */
#define VG_POL_DENY		0x20000u	/* vigil */
#define VG_POL_AUDIT_ACCESS	0x40000u	/* vigil */

/* Rule flags: the kernel's IMA_* condition and option bits, same values. */
#define VG_POLF_FUNC		0x0001u
#define VG_POLF_MASK		0x0002u
#define VG_POLF_FSMAGIC		0x0004u
#define VG_POLF_UID		0x0008u
#define VG_POLF_FOWNER		0x0010u
#define VG_POLF_FSUUID		0x0020u
#define VG_POLF_INMASK		0x0040u
#define VG_POLF_EUID		0x0080u
#define VG_POLF_PCR		0x0100u
#define VG_POLF_FSNAME		0x0200u
#define VG_POLF_KEYRINGS	0x0400u
#define VG_POLF_LABEL		0x0800u
#define VG_POLF_VALIDATE_ALGOS	0x1000u
#define VG_POLF_GID		0x2000u
#define VG_POLF_EGID		0x4000u
#define VG_POLF_FGROUP		0x8000u
#define VG_POLF_DIGSIG_REQUIRED	0x01000000u
#define VG_POLF_PERMIT_DIRECTIO	0x02000000u
#define VG_POLF_MODSIG_ALLOWED	0x20000000u
#define VG_POLF_CHECK_BLACKLIST	0x40000000u
#define VG_POLF_VERITY_REQUIRED	0x80000000u
/* IMA_NONACTION_FLAGS: what a matching rule adds to the decision */
#define VG_POLF_OPTIONS		0xff000000u

/* vigil extension flags (struct vg_policy_rule.xflags) */
#define VG_POLX_PATH		0x01u
#define VG_POLX_SUBJ_EXE	0x02u
#define VG_POLX_APPRAISAL	0x04u
#define VG_POLX_SUBJ_APPRAISAL	0x08u
#define VG_POLX_ATTR		0x10u
#define VG_POLX_TRUST_ARCHIVE	0x20u	/* trust=archive (appraise rules, vigild) */

enum vg_policy_op {
	VG_POL_OP_EQ = 0,	/* =  */
	VG_POL_OP_GT,		/* >  */
	VG_POL_OP_LT,		/* <  */
	VG_POL_OP_NE,		/* != (attr=, appraisal) */
	VG_POL_OP_GE,		/* >= (attr=) */
	VG_POL_OP_LE,		/* <= (attr=) */
};

/* LSM condition slots, in the kernel's order (enum lsm_rule_types). */
enum vg_policy_lsm {
	VG_LSM_OBJ_USER = 0,
	VG_LSM_OBJ_ROLE,
	VG_LSM_OBJ_TYPE,
	VG_LSM_SUBJ_USER,
	VG_LSM_SUBJ_ROLE,
	VG_LSM_SUBJ_TYPE,
	VG_LSM__MAX,
};

/* A file's (or a process executable's) integrity as vigil appraised it. */
enum vg_integrity {
	VG_INTEGRITY_UNKNOWN = 0,	/* not appraised, or unknown */
	VG_INTEGRITY_PASS,		/* INTEGRITY_PASS, PASS_IMMUTABLE */
	VG_INTEGRITY_FAIL,		/* INTEGRITY_FAIL, FAIL_IMMUTABLE */
	VG_INTEGRITY_NOLABEL,		/* INTEGRITY_NOLABEL, NOXATTRS */
	VG_INTEGRITY__MAX,
};

/* attr=NAME OP VALUE */
struct vg_policy_attr_cond {
	char *name;			/* "security.vigil.revision" */
	enum vg_policy_op op;
	bool numeric;			/* value is a number or level name */
	uint64_t num;
	char *value;			/* as written */
};

/*
 * One parsed rule. Read-only for callers; every string is NUL-terminated.
 * Fields whose flag is clear are zero / NULL.
 */
struct vg_policy_rule {
	unsigned int line, col;		/* where the rule starts (1-based) */
	unsigned int func_col;		/* column of func=, 0 without */
	unsigned int action;		/* one VG_POL_* */
	uint32_t flags;			/* VG_POLF_* */
	uint32_t xflags;		/* VG_POLX_* */
	enum vg_func func;
	unsigned int mask;		/* one VG_MAY_* (MASK: equals, INMASK: contains) */
	uint64_t fsmagic;
	char *fsname;
	uint8_t fsuuid[16];
	uint32_t uid;			/* uid= or euid= (the kernel keeps one) */
	uint32_t gid;			/* gid= or egid= */
	uint32_t fowner, fgroup;
	enum vg_policy_op uid_op, gid_op, fowner_op, fgroup_op;	/* EQ, GT, LT */
	int pcr;
	uint32_t allowed_algos;		/* bit per enum vg_hash_algo */
	char *lsm[VG_LSM__MAX];		/* NULL: no such condition */
	char **keyrings;		/* keyrings=a|b */
	size_t nkeyrings;
	char **labels;			/* label=a|b */
	size_t nlabels;
	const char *template_name;	/* canonical name, NULL: none */
	char *appraise_flag;		/* kept as written; the kernel ignores it */
	/* vigil extensions */
	char *path;			/* pattern, decoded */
	char *subj_exe;			/* pattern, decoded */
	uint8_t appraisal;		/* bit per enum vg_integrity */
	bool appraisal_neg;		/* appraisal!= */
	uint8_t subj_appraisal;
	bool subj_appraisal_neg;
	struct vg_policy_attr_cond *attrs;
	size_t nattrs;
	/*
	 * Why vigild (a fanotify enforcer) cannot enforce this rule, one
	 * sentence naming the first condition it cannot observe, and that
	 * token's column; NULL / 0 when it can (policy_enforce.c).
	 */
	const char *unenforced;
	unsigned int unenforced_col;
};

struct vg_policy;

/* Parse flags */
#define VG_POLICY_KERNEL	0x1u	/* the kernel's grammar only: extensions are errors */
#define VG_POLICY_ALLOW_EMPTY	0x2u	/* a text with no rule is a valid, empty policy */

/* Where and why a text was refused. */
struct vg_policy_error {
	int err;			/* the negative errno also returned */
	unsigned int line, col;		/* 1-based; 0 when not tied to a position */
	char msg[256];
};

/*
 * vg_policy_parse - parse a policy text. Safe on untrusted bytes of any
 * length (the fuzzing entry point). @text need not be NUL-terminated.
 * Return: 0 and *@ret (reference count 1); -EINVAL with @err filled
 * (line, column, message) for the first bad rule; -ENOMEM.
 */
int vg_policy_parse(const char *text, size_t len, unsigned int flags,
		    struct vg_policy **ret, struct vg_policy_error *err);

/*
 * vg_policy_builtin - the kernel's built-in policies by name, as
 * `ima_policy=` takes them: "tcb", "appraise_tcb", "secure_boot",
 * "critical_data", "ima_tcb" (the original tcb), several joined by '|'
 * (rules in the kernel's order whatever the order of names).
 * Return: 0, -ENOENT (unknown name, @err filled), -ENOMEM.
 */
int vg_policy_builtin(const char *names, struct vg_policy **ret, struct vg_policy_error *err);

/* vg_policy_builtin_text - the text of one built-in set. Return: NULL if unknown. */
const char *vg_policy_builtin_text(const char *name);

/*
 * vg_policy_load_file - read @path and parse it.
 * Return: as vg_policy_parse(), or the negative errno of open/read
 * (err->line 0).
 */
int vg_policy_load_file(const char *path, unsigned int flags, struct vg_policy **ret,
			struct vg_policy_error *err);

/* Take / drop a reference (atomic). vg_policy_unref(NULL) does nothing. */
struct vg_policy *vg_policy_ref(struct vg_policy *p);
void vg_policy_unref(struct vg_policy *p);

size_t vg_policy_count(const struct vg_policy *p);
/* Return: rule @i, or NULL when out of range. */
const struct vg_policy_rule *vg_policy_rule(const struct vg_policy *p, size_t i);

/* What a policy's conditions look at, so a caller gathers only that. */
#define VG_POLICY_USES_PATH		0x001u
#define VG_POLICY_USES_SUBJ_EXE		0x002u
#define VG_POLICY_USES_OBJ_LSM		0x004u
#define VG_POLICY_USES_SUBJ_LSM		0x008u
#define VG_POLICY_USES_APPRAISAL	0x010u
#define VG_POLICY_USES_SUBJ_APPRAISAL	0x020u
#define VG_POLICY_USES_ATTR		0x040u
#define VG_POLICY_USES_FSUUID		0x080u
#define VG_POLICY_USES_FSNAME		0x100u
#define VG_POLICY_USES_ACCESS_RULES	0x200u	/* has allow/deny/audit_access */
#define VG_POLICY_USES_EXTENSIONS	0x400u	/* not loadable into a kernel */
#define VG_POLICY_USES_TRUST_ARCHIVE	0x800u	/* an appraise rule has trust=archive */
unsigned int vg_policy_uses(const struct vg_policy *p);

/*
 * vg_policy_rule_format - the canonical text of one rule (no newline),
 * snprintf-style: writes at most @cap bytes including the NUL.
 * Return: the length the full text needs (excluding the NUL).
 */
size_t vg_policy_rule_format(const struct vg_policy_rule *r, char *buf, size_t cap);

/*
 * vg_policy_format - the whole policy in canonical form, one rule a line,
 * no comments. Return: 0 and a malloc'd NUL-terminated *@ret_text (its
 * length in *@ret_len if not NULL), or -ENOMEM.
 */
int vg_policy_format(const struct vg_policy *p, char **ret_text, size_t *ret_len);

/* Same rules, same meaning (compares canonical forms). */
bool vg_policy_equal(const struct vg_policy *a, const struct vg_policy *b);

/* Names */
const char *vg_policy_func_name(enum vg_func f);	/* "FILE_CHECK"; NULL out of range */
int vg_policy_func_by_name(const char *name);		/* aliases too; -ENOENT */
const char *vg_policy_action_name(unsigned int action);	/* "measure"; NULL unknown */
const char *vg_policy_integrity_name(enum vg_integrity i);	/* "pass" */
int vg_policy_integrity_by_name(const char *name);	/* -ENOENT */
/* Hooks a userspace enforcer (fanotify) observes: FILE_CHECK (open), BPRM_CHECK (exec). */
bool vg_policy_func_observable(enum vg_func f);

/*
 * vg_policy_check_enforceable - can vigild enforce every rule of @p? A
 * rule that names what vigild cannot observe (mmap, a kernel-internal
 * hook, the open flags MAY_WRITE / MAY_APPEND, LSM contexts, ...;
 * docs/policy.md has the table) would never match, or match
 * on a value vigild never fills: each such rule carries the reason in
 * vg_policy_rule.unenforced. A caller refuses the policy, or accepts it
 * knowingly and reports those rules.
 * Return: 0 when every rule is enforced; -EOPNOTSUPP with @err (line,
 * column, the sentence) naming the first rule that is not.
 */
int vg_policy_check_enforceable(const struct vg_policy *p, struct vg_policy_error *err);

/* The number of rules of @p vigild cannot enforce. */
size_t vg_policy_unenforced_count(const struct vg_policy *p);

/* ---- matching ---- */

/* An xattr value given to the matcher for attr= conditions. */
struct vg_access_attr {
	const char *name;		/* "security.vigil.integrity" */
	const uint8_t *value;
	size_t len;
	bool protected;			/* covered by a security.evm that verified */
};

/*
 * One access, as the enforcer sees it. Zero-initialise, then fill what is
 * known; a condition on something not given (NULL path, no LSM context,
 * no attribute) does not hold, as a kernel rule with an LSM label the LSM
 * does not know never matches.
 */
struct vg_access {
	enum vg_func func;		/* BPRM_CHECK for exec, FILE_CHECK for open, ... */
	unsigned int mask;		/* VG_MAY_*: exec MAY_EXEC; open MAY_READ/WRITE/APPEND */
	const char *path;		/* the file, absolute */
	uint64_t fsmagic;		/* statfs f_type */
	const char *fsname;		/* /proc/self/mountinfo fs type */
	bool fsuuid_set;
	uint8_t fsuuid[16];
	uint32_t uid, euid, suid, gid, egid, sgid;	/* the task's credentials */
	bool cap_setuid, cap_setgid;	/* euid=/egid= then also match suid, uid */
	uint32_t fowner, fgroup;	/* the inode's owner and group */
	const char *obj_ctx;		/* security.selinux of the file ("u:r:t:s0"), or a Smack label */
	const char *subj_ctx;		/* the task's context (/proc/PID/attr/current) */
	const char *func_data;		/* KEY_CHECK: keyring name; CRITICAL_DATA: label */
	/* vigil extensions */
	const char *subj_exe;		/* the task's executable, absolute */
	enum vg_integrity subj_appraisal;	/* of that executable */
	enum vg_integrity appraisal;	/* of this file (access rules) */
	const struct vg_access_attr *attrs;	/* the file's security.* xattrs (access rules) */
	size_t nattrs;
	/*
	 * A second hook this one access also is (VG_FUNC_NONE: none), with
	 * its mask: an open by the dynamic loader (`ld.so PROG`) is an open
	 * (FILE_CHECK) and the exec of PROG (BPRM_CHECK, MAY_EXEC). Each class
	 * is decided for both as two separate hook calls and the decisions
	 * are merged: any measure / appraise / audit holds, deny over audit
	 * over allow (vg_policy_match).
	 */
	enum vg_func also_func;
	unsigned int also_mask;
};

/* Action classes, each decided by its first matching rule. */
enum vg_policy_class {
	VG_CLASS_MEASURE = 0,
	VG_CLASS_APPRAISE,
	VG_CLASS_AUDIT,
	VG_CLASS_HASH,
	VG_CLASS_ACCESS,		/* vigil: allow / deny / audit_access */
	VG_CLASS__MAX,
};
#define VG_CLASSES_IMA		0x0fu	/* measure, appraise, audit, hash */
#define VG_CLASSES_ALL		0x1fu

enum vg_verdict {
	VG_VERDICT_ALLOW = 0,		/* also when no access rule matched */
	VG_VERDICT_DENY,
	VG_VERDICT_AUDIT,		/* allow, and record the access */
};

#define VG_POLICY_DEFAULT_PCR 10	/* CONFIG_IMA_MEASURE_PCR_IDX */

struct vg_decision {
	bool measure, appraise, audit, hash;
	uint32_t flags;			/* VG_POLF_OPTIONS bits of the matching rules */
	int pcr;			/* VG_POLICY_DEFAULT_PCR unless pcr= */
	const char *template_name;	/* NULL: the default template */
	uint32_t allowed_algos;		/* appraise_algos= of the appraise rule; 0: any */
	/*
	 * trust=archive on the appraise rule: a file without security.ima
	 * may pass by the trust database (vigild). With a loader's second
	 * hook, only when every appraise rule that decided has it.
	 */
	bool trust_archive;
	enum vg_verdict verdict;
	long rule[VG_CLASS__MAX];	/* index of the deciding rule, -1: none */
};

/*
 * vg_policy_match - decide @classes (bits 1 << enum vg_policy_class) for
 * access @a, as ima_match_policy(). A daemon calls it first with
 * VG_CLASSES_IMA (which needs no integrity facts), appraises when told
 * to, fills @a->appraisal and @a->attrs, then calls it again with
 * 1 << VG_CLASS_ACCESS. Classes not asked for are left undecided.
 * Never allocates. Return: 0, or -EINVAL for a NULL argument.
 */
int vg_policy_match(const struct vg_policy *p, const struct vg_access *a, unsigned int classes,
		    struct vg_decision *ret);

/*
 * vg_policy_rule_matches - do all conditions of @r hold for @a
 * (ima_match_rules())? When not, and @ret_why is not NULL, *@ret_why
 * names the first condition that fails ("func", "mask", "uid", "path" ...).
 */
bool vg_policy_rule_matches(const struct vg_policy_rule *r, const struct vg_access *a,
			    const char **ret_why);

/* Class of an action (VG_CLASS_*), or -1. */
int vg_policy_action_class(unsigned int action);

#endif
