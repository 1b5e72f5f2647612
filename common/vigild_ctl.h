/* SPDX-License-Identifier: MIT */
/*
 * vigild_ctl.h - vigild's control protocol, the one definition that the
 * daemon (daemon/control.c) and `vigil status` (cli/cmd_status.c) share.
 *
 * The wire format: the client connects to the control socket (a unix
 * stream socket, mode 0600, VD_CTL_DEFAULT_SOCKET unless vigild was told
 * otherwise) and writes one request line, `status`,
 * `mode enforce|permissive|fix`, `reload` or `announce ...` (below); the
 * daemon answers one line of JSON and closes. An answer with an "error"
 * member is a refusal.
 * An announcement (`vigil trust boot announce`, attest_announce.h) is one
 * entry for vigild's measurement list, every variable part in lowercase
 * hex so that no byte of a path or a command line can end the line:
 *   announce initrd LOG PCR sha256:DIGEST PATH
 *   announce cmdline LOG PCR LINE
 * LOG the list the client means (its canonical path: vigild takes only
 * its own), PCR a decimal below VG_PCR_COUNT, DIGEST 64 hex digits, PATH
 * the initrd's absolute path (below PATH_MAX bytes), LINE the command line
 * (1 to VG_ANNOUNCE_CMDLINE_MAX bytes); none may hold a NUL. vigild builds
 * the entry itself (next-boot-initrd:PATH ima-ng, next-boot-cmdline
 * ima-buf with the line's SHA-256) and answers when it is committed:
 * {"announce": "committed", "entries": N}; or refuses: {"error": WHY,
 * "announce": "refused"}, and {"error": WHY, "announce": "not-this-list"}
 * when LOG is not its list (the client then writes the list itself).
 * Only root (SO_PEERCRED uid 0) may announce.
 * A reload is answered when it is done: {"reload": "applied",
 * "policy_rules": N, "policy_sha256": HEX}, or {"error": WHY, "reload":
 * "refused"} with the parse error (FILE:LINE:COL: why); the old policy
 * then stays.
 * The status answer's members, in this order: mode, policy_sha256,
 * policy_rules, unenforced_rules {total, rules [{line, col, rule, why}]},
 * marks [...], pending, measurements, counters {the names of
 * vd_ctl_counter_names in order, then denied_by_reason {reason: n}},
 * latency_p50_us, latency_p99_us, latency_buckets_us [32 counts: bucket b
 * holds the decisions that took at most 2^b us and more than 2^(b-1), the
 * last one also every longer one], latency_sum_us, trust_db (the trust
 * database's path when the policy has trust=archive, else null).
 *
 * The encoder and the decoder are here; what is printed for a human is
 * the CLI's, what the numbers mean is the daemon's.
 */
#ifndef VIGILD_CTL_H
#define VIGILD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define VD_CTL_DEFAULT_SOCKET "/run/vigil/vigild.sock"

enum vd_ctl_mode { VD_CTL_ENFORCE, VD_CTL_PERMISSIVE, VD_CTL_FIX, VD_CTL_NMODES };

/* "enforce", "permissive", "fix", indexed by enum vd_ctl_mode */
extern const char *const vd_ctl_mode_names[VD_CTL_NMODES];

/* Return: the mode named @s, or -EINVAL. */
int vd_ctl_mode_parse(const char *s);

enum vd_ctl_op { VD_CTL_STATUS, VD_CTL_MODE, VD_CTL_RELOAD, VD_CTL_ANNOUNCE };

enum vd_ctl_announce_kind { VD_CTL_ANN_INITRD = 1, VD_CTL_ANN_CMDLINE = 2 };

/* the longest request line: an initrd's, both paths at their longest */
#define VD_CTL_REQ_MAX (128 + 4 * VD_CTL_PATH_MAX)
#define VD_CTL_PATH_MAX 4096	/* PATH_MAX, with its NUL */

struct vd_ctl_announce {
	enum vd_ctl_announce_kind kind;
	unsigned int pcr;
	uint8_t sha256[32];		/* initrd: its file digest */
	char log[VD_CTL_PATH_MAX];	/* the list meant (NUL-terminated) */
	char data[VD_CTL_PATH_MAX];	/* initrd: its path; cmdline: the line (NUL-terminated) */
	size_t data_len;
};

struct vd_ctl_req {
	enum vd_ctl_op op;
	enum vd_ctl_mode mode;	/* VD_CTL_MODE */
	struct vd_ctl_announce ann;	/* VD_CTL_ANNOUNCE */
};

/*
 * vd_ctl_req_encode - the request line (with its newline) into @buf
 * (VD_CTL_REQ_MAX holds any). An announcement is checked as the decoder
 * checks it. Return: its length, -EINVAL (an announcement the daemon
 * would refuse), or -ENOBUFS.
 */
int vd_ctl_req_encode(const struct vd_ctl_req *q, char *buf, size_t cap);

/*
 * vd_ctl_req_decode - one request line (@buf, NUL-terminated; anything
 * from the first CR or LF on is ignored).
 * Return: 0; -EINVAL a mode request naming no mode (answer "unknown
 * mode"); -EPROTO an announcement that is not well formed (its shape
 * above: field count, hex, lengths, PCR, kind); -EBADMSG anything else
 * (answer "unknown request").
 */
int vd_ctl_req_decode(const char *buf, struct vd_ctl_req *ret);

/* Return: whether the request line @buf asks for what only root may (an announcement). */
bool vd_ctl_req_privileged(const char *buf);

/* The status counters, in wire order. */
enum vd_ctl_counter {
	VD_CTL_EVENTS, VD_CTL_ALLOWED, VD_CTL_DENIED, VD_CTL_WOULD_DENY, VD_CTL_OWN,
	VD_CTL_CACHE_HITS, VD_CTL_CACHE_MISSES, VD_CTL_HASHED_BYTES, VD_CTL_TIMEOUTS,
	VD_CTL_WORKER_RESTARTS, VD_CTL_OVERFLOWS, VD_CTL_MEASURED, VD_CTL_FIXED, VD_CTL_ERRORS,
	VD_CTL_IGNORE_MARKS, VD_CTL_IGNORE_FLUSHES, VD_CTL_MEASURE_FAILURES, VD_CTL_LEASE_BREAKS,
	VD_CTL_LEASE_WRITERS, VD_CTL_LEASE_ERRORS, VD_CTL_TOO_LARGE, VD_CTL_APPRAISER_KILLS,
	VD_CTL_WORKER_SPAWNS, VD_CTL_APPRAISERS, VD_CTL_LEASES,
	VD_CTL_TRUSTED_ARCHIVE,	/* unlabeled files allowed by trust=archive */
	VD_CTL_TRUST_FILES,	/* files in the trust database's table (gauge) */
	VD_CTL_APPRAISER_ANSWERS,	/* allows an appraiser wrote to the group itself */
	VD_CTL_APPRAISALS,	/* full appraisals (EVM and content) the appraisers made */
	VD_CTL_OPEN_ERRORS,	/* events the kernel refused: the file could not be opened for vigild */
	VD_CTL_JOURNAL_SENT,	/* denials sent to the journal */
	VD_CTL_JOURNAL_DROPPED,	/* ... dropped: the journal was not reading */
	VD_CTL_RAN_BEFORE_READY,	/* processes running when vigild started (gauge) */
	VD_CTL_RAN_BEFORE_READY_FAILED,	/* ... whose program failed its appraisal */
	VD_CTL_NCOUNTERS
};

extern const char *const vd_ctl_counter_names[VD_CTL_NCOUNTERS];

#define VD_CTL_MAX_REASONS 32
#define VD_CTL_MAX_MARKS 256
#define VD_CTL_MAX_UNENFORCED 32
#define VD_CTL_LAT_BUCKETS 32

struct vd_ctl_unenforced {
	int line, col;
	char rule[512];
	char why[256];
};

struct vd_ctl_status {
	bool has_mode, has_policy, has_rules, has_marks, has_counters, has_p50, has_p99;
	char mode[16];
	char policy_sha256[65];
	int64_t policy_rules;
	int unenforced_total;
	size_t nunenforced;
	struct vd_ctl_unenforced *unenforced;	/* encode: unused (see below) */
	size_t nmarks;
	const char *marks[VD_CTL_MAX_MARKS];	/* decode: point into the decoded object */
	int pending;
	int64_t measurements;
	bool has_counter[VD_CTL_NCOUNTERS];
	uint64_t counters[VD_CTL_NCOUNTERS];
	size_t nreasons;
	struct {
		char reason[40];
		uint64_t n;
	} reasons[VD_CTL_MAX_REASONS];
	double p50_us, p99_us;
	/* appended: the decision latency histogram (latency_buckets_us, latency_sum_us) */
	bool has_latency;
	uint64_t latency[VD_CTL_LAT_BUCKETS];	/* [b]: decisions in (2^(b-1), 2^b] us; the last: the rest */
	double latency_sum_us;
	/* appended: trust=archive's database (NULL: the policy has none); decode: into the object */
	const char *trust_db;
};

/*
 * vd_ctl_status_encode - the status answer (without newline) for @s,
 * with @unenforced (the daemon's {total, rules} object; reference taken)
 * in its place. Return: a JSON object (json_object_put it), or NULL.
 */
json_object *vd_ctl_status_encode(const struct vd_ctl_status *s, json_object *unenforced);

/* The other answers: {"mode": M}, {"error": WHY}. */
json_object *vd_ctl_mode_encode(enum vd_ctl_mode m);
json_object *vd_ctl_error_encode(const char *why);

/*
 * vd_ctl_reload_result_encode - a reload's answer: applied (@ok, with the
 * new policy's @rules and @sha256) or refused (@why).
 * Return: a JSON object (json_object_put it), or NULL.
 */
json_object *vd_ctl_reload_result_encode(bool ok, size_t rules, const char *sha256, const char *why);

/*
 * vd_ctl_announce_result_encode - an announcement's answer: committed
 * (@why NULL; @entries in the list after it), refused (@why), or
 * @not_this_list. Return: a JSON object (json_object_put it), or NULL.
 */
json_object *vd_ctl_announce_result_encode(const char *why, bool not_this_list, uint64_t entries);

/*
 * vd_ctl_answer_write - one answer line on @fd (JSON, plain, newline).
 * Return: 0 or -errno.
 */
int vd_ctl_answer_write(int fd, json_object *o);

/*
 * vd_ctl_answer_decode - an answer read from the socket (@buf, NUL-terminated).
 * Return: 0 with *@ret (json_object_put it); -EBADMSG not JSON; -EPERM
 * the daemon refused: *@ret holds the answer, *@ret_why its reason.
 */
int vd_ctl_answer_decode(const char *buf, json_object **ret, const char **ret_why);

/*
 * vd_ctl_status_decode - the members of a status answer @o into @s
 * (strings truncated to their fields; marks point into @o; unenforced
 * rules into @rules, at most @cap). Members absent leave has_* false.
 */
void vd_ctl_status_decode(json_object *o, struct vd_ctl_status *s,
			  struct vd_ctl_unenforced *rules, size_t cap);

#endif
