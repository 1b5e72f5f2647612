/* SPDX-License-Identifier: MIT */
/*
 * vigild.h - what the two vigild processes share: the fixed-size messages
 * between the monitor (holds the fanotify group, the TPM, the log, the
 * audit file and the control socket; parses only kernel structures and
 * these messages) and the appraiser (receives one open file descriptor per
 * request, reads content and xattrs, which an attacker controls; holds
 * only the EVM HMAC key, the trusted keyring and a write-only copy of the
 * group for the allows it is asked to write (VD_ANSWER); runs as an unprivileged
 * user (--appraiser-user) with no capability, under Landlock with no
 * filesystem or network access and a seccomp allow-list, sandbox.c). In
 * fix mode the appraiser computes the labels and the monitor writes them
 * (writing security.ima needs CAP_SYS_ADMIN), then asks again.
 *
 * Every message is checked for its exact size and magic by the receiver;
 * a violation ends the connection (the monitor then answers the
 * appraiser's pending events with the fail action and starts a new one).
 */
#ifndef VIGILD_H
#define VIGILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "vigil/appraise.h"
#include "vigil/hash.h"
#include "vigil/policy.h"

#define VD_MAGIC_INIT 0x76643031u	/* "vd01" */
#define VD_MAGIC_REQ 0x76643032u
#define VD_MAGIC_REP 0x76643033u
#define VD_MAGIC_HELLO 0x76643034u	/* the appraiser is confined and serves */

/* request flags */
#define VD_APPRAISE 0x1u	/* full appraisal (EVM, then content against security.ima) */
#define VD_FIX 0x2u		/* fix mode: write a missing or wrong hash label, never over a signature */
#define VD_REQUIRE_SIG 0x4u	/* appraise_type=imasig */
#define VD_ANSWER 0x8u		/* a clean pass may be answered here (see vd_req.answer_fd) */

/*
 * The appraiser's descriptors: its socket to the monitor, and a copy of
 * the fanotify permission group, only ever written to (an allow for the
 * event a request names). Its seccomp filter kills it on any read or
 * fcntl of VD_APPRAISER_GROUP_FD (sandbox.c); dup, dup2 and dup3 are not
 * on its list at all, so no other number can reach the group.
 */
#define VD_APPRAISER_SOCK_FD 3
#define VD_APPRAISER_GROUP_FD 4

struct vd_init {
	uint32_t magic;
	uint32_t keylen;		/* 0: no HMAC key */
	uint8_t key[128];
};

/*
 * The appraiser's first message, once it holds its keyring and key and is
 * confined: until it arrives the appraiser has not started, and one that
 * dies before it counts towards the crash-loop limit (pool.c).
 */
struct vd_hello {
	uint32_t magic;
	uint32_t pid;
};

struct vd_req {
	uint32_t magic;
	uint32_t id;
	uint32_t flags;
	uint32_t algo;			/* hash for a measurement without appraisal, and of a file
					 * without security.ima (trust=archive: the trust index's) */
	uint32_t allowed_algos;		/* appraise_algos=; 0: any */
	/*
	 * With VD_ANSWER: the event's descriptor number in the monitor, which
	 * names the event to the kernel. The monitor sets VD_ANSWER only when
	 * its own decision would be an allow exactly when the appraisal
	 * passes (no measurement, audit, access rule or fix mode to come
	 * first); the appraiser then writes that allow to the group itself,
	 * saving the opener the wait for the monitor's wake-up, and says so in
	 * vd_rep.answered. It answers nothing else: a failure, an error or a
	 * request without VD_ANSWER is decided by the monitor as before.
	 */
	int32_t answer_fd;
	/*
	 * The file as the monitor's fstat() saw it at the event (what its
	 * verdict is cached under): the appraiser does not ask again. The
	 * EVM HMAC covers the inode number, owner, group and mode.
	 */
	uint32_t uid, gid, mode;
	uint64_t dev, ino;
	int64_t size;
	/* the event's file descriptor travels as SCM_RIGHTS */
};

struct vd_rep {
	uint32_t magic;
	uint32_t id;
	int32_t err;			/* < 0: the file could not be judged (detail says why) */
	uint32_t status;		/* enum vg_status */
	uint32_t appraised;		/* 1: full appraisal; 0: hashed only */
	uint32_t fixed;			/* fix mode wrote a label */
	uint32_t answered;		/* VD_ANSWER: the appraiser wrote the allow to the group */
	uint64_t size;			/* bytes hashed */
	uint8_t digest_algo, digest_len;
	uint8_t digest[VG_HASH_MAX_DIGEST];
	uint16_t siglen;		/* security.ima when it is a signature (ima-sig) */
	uint8_t sig[1024];
	char cause[40];
	char detail[VG_DIAG_MAX];
	/* fix mode: labels to write (monitor), then the request is sent again without VD_FIX */
	uint8_t fix_ima_len, fix_evm_len;
	uint8_t fix_ima[2 + VG_HASH_MAX_DIGEST];	/* security.ima, hash form */
	uint8_t fix_evm[64];			/* security.evm over it (02 HMAC) */
};

/*
 * A status that lets the access go on: what the appraiser answers itself
 * (VD_ANSWER) and what the monitor allows must be one predicate.
 */
static inline bool vd_status_pass(uint32_t status)
{
	return status == VG_ST_PASS || status == VG_ST_PASS_IMMUTABLE;
}

/*
 * vd_fan_answer - write the answer for the event whose descriptor number
 * (in the process that read it) is @fd to the permission group @group
 * (fanotify.c, the only user of <sys/fanotify.h>). Return: 0 or -errno
 * (-ENOENT: no such event is waiting, it was answered already).
 */
int vd_fan_answer(int group, int fd, bool allow);

/* The appraiser's main: @sock is its end of the socketpair. */
int vd_worker_main(int sock, int argc, char **argv);

/*
 * vd_sandbox_enter - confine the calling appraiser for good: become
 * @uid/@gid (never 0) with no supplementary groups and no capability,
 * PR_SET_NO_NEW_PRIVS, Landlock with every right the kernel knows, a
 * seccomp allow-list that kills on anything else (sandbox.c, the
 * appraiser's role on common/sandbox.h).
 * Return: 0, or -errno with what failed in @msg (the caller must exit).
 */
int vd_sandbox_enter(uid_t uid, gid_t gid, char *msg, size_t cap);

/* ---- the dynamic loader (loader.c) ---- */

#define VD_MAX_LOADERS 16

/* The system's loaders, by inode. */
struct vd_loaders {
	bool policy_execs;	/* a rule of the policy can match an exec (vd_loader_policy) */
	size_t n;
	struct {
		dev_t dev;
		ino_t ino;
	} id[VD_MAX_LOADERS];
};

/*
 * vd_loaders_init - the loaders: vigild's own PT_INTERP, the common glibc
 * and musl loaders that exist, and @extra (--loader PATH, each must exist).
 * Call before the marks are set. Return: how many, or -errno for an @extra.
 */
int vd_loaders_init(struct vd_loaders *l, const char *const *extra, size_t nextra);
/* Is @pid's executable (/proc/PID/exe) one of them? Return: 1, 0, -ESRCH (@pid is 0: not visible). */
int vd_loader_is(const struct vd_loaders *l, pid_t pid);
/* Can rule @r match an exec (BPRM_CHECK, MAY_EXEC), its other conditions taken as met? (loader.c) */
bool vd_rule_may_match_exec(const struct vg_policy_rule *r);
/*
 * vd_loader_policy - note whether a rule of @p can match an exec (when
 * none can, the loader's opens are plain opens and /proc is not asked).
 * Return: whether an open's allow may be cached as a kernel ignore mark:
 * not when a rule can match an exec, for the same inode opened by the
 * loader must still raise its event.
 */
bool vd_loader_policy(struct vd_loaders *l, const struct vg_policy *p);

/* ---- filesystem facts for fsname= and fsuuid= (fsinfo.c) ---- */

#define VD_MAX_FS 64

struct vd_fs {
	dev_t dev;
	char name[32];		/* sb->s_type->name; "" unknown */
	bool has_uuid;
	uint8_t uuid[16];
};

struct vd_fsinfo {
	bool want_name, want_uuid;	/* the policy names fsname= / fsuuid= */
	size_t n;
	struct vd_fs fs[VD_MAX_FS];	/* entries never move or change */
};

/* Note what the policy @p asks for (call at every load). */
void vd_fsinfo_policy(struct vd_fsinfo *fi, const struct vg_policy *p);
/*
 * vd_fsinfo_access - fill @a's fsname and fsuuid for the file @fd on
 * device @dev, looked up at the first event from @dev; @a->fsname points
 * into @fi, valid as long as @fi.
 */
void vd_fsinfo_access(struct vd_fsinfo *fi, int fd, dev_t dev, struct vg_access *a);

/* ---- rules vigild cannot enforce (unenforced.c) ---- */

/*
 * vd_policy_enforceable - refuse @p (read from @path) when a rule names
 * what vigild cannot observe, unless @accept.
 * Return: 0, or -EOPNOTSUPP with FILE:LINE:COL: reason in @msg.
 */
int vd_policy_enforceable(const struct vg_policy *p, const char *path, bool accept, char *msg,
			  size_t cap);
/* Log each accepted unenforced rule of @p (common/log.h). */
void vd_policy_unenforced_log(const struct vg_policy *p, const char *path);
/* {"total": N, "rules": [{"line", "col", "rule", "why"}, ... at most 32]} */
json_object *vd_policy_unenforced_json(const struct vg_policy *p);

#endif
