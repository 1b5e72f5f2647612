/* SPDX-License-Identifier: MIT */
/*
 * store.h - the attestation verifier's persistent state behind one
 * interface: agents (identity keys, policy, attestation state: TPM clock
 * and counters, verified log offset and PCR), named reference policies,
 * and the verdict history.
 *
 * A backend is a struct vg_store_ops; SQLite (store_sqlite.c) is the
 * default, PostgreSQL (store_pg.c) serves a fleet of verifiers. Both
 * give the same results for the same sequence of operations (one test
 * body runs against both, tests/unit/test_store.c); what they share, the
 * row encoding of these structs, lives in store_row.c.
 *
 * A store handle is not thread-safe: callers serialise (the verifier
 * holds a mutex around every call). Every write is one transaction.
 * Agent ids and policy names are ordered bytewise (agent_list).
 *
 * In vigil-verifier every call is a round trip to the store process
 * (verifier/store_client.c: one request, its rows streamed back, its
 * DONE; one mutex for all threads), then the database's own: each call
 * site says so with a "store round trip" comment, so a loop of them is
 * seen as what it costs.
 *
 * Errors: -ENOENT (no such agent/policy), -EBADMSG (a row that does not
 * decode), -ESTALE (agent_update: the row changed meanwhile), -EOPNOTSUPP
 * (backend not built in), -EIO (the database; the diag carries its
 * message, never a password).
 */
#ifndef VIGIL_STORE_H
#define VIGIL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"
#include "vigil/diag.h"

enum vg_agent_state {
	VG_AGENT_REGISTERED = 0,	/* identity proven, no quote yet */
	VG_AGENT_TRUSTED = 1,		/* last round passed */
	VG_AGENT_FAILED = 2,		/* a round failed: not polled until reactivated */
	VG_AGENT_UNREACHABLE = 3,	/* communication failing, still polled */
};

/* Return: "registered", "trusted", "failed", "unreachable", or NULL. */
const char *vg_agent_state_name(unsigned int s);

#define VG_STORE_VERIFIER_ID_MAX 64	/* a verifier's id, with the NUL */

/* the states agent_states counts: every enum vg_agent_state */
#define VG_STORE_STATES (VG_AGENT_UNREACHABLE + 1)

struct vg_store_agent {
	char id[128];
	char url[256];			/* http://host:port of the agent */
	char policy[128];		/* reference policy name ("" = none: every entry fails) */
	uint8_t ek_pub[1024];
	size_t ek_pub_len;
	uint8_t ek_key[32];		/* vg_attest_key_id of ek_pub: the EK's key whatever its encoding
					 * (made by the store from ek_pub on every write; 0 long: none) */
	size_t ek_key_len;
	uint8_t ek_cert[4096];
	size_t ek_cert_len;
	uint8_t ak_pub[1024];
	size_t ak_pub_len;
	unsigned int state;		/* enum vg_agent_state */
	unsigned int bank;		/* PCR bank quoted (vg hash algo) */
	uint32_t mask;			/* PCRs quoted */
	struct vg_attest_state st;
	uint64_t rounds;		/* successful rounds */
	uint64_t reboots;
	uint32_t comm_errors;		/* consecutive */
	int64_t registered_at, last_ok, last_seen;	/* unix seconds */
	unsigned int last_fail;		/* enum vg_attest_fail of the last failure */
	char last_msg[512];
	uint64_t failure_count;		/* failures of the latest round, those past the list's bound
					 * included (0: passed or none yet; agent.comm: 1) */
	/*
	 * Scheduling, shared by the verifiers of one store: read by agent_get
	 * and agent_list, written only by lease_claim and lease_release
	 * (agent_put and agent_update leave them as they are; a new agent is
	 * due at once).
	 */
	int64_t next_due;		/* wall ms its next round is due (0: at once) */
	char lease_owner[VG_STORE_VERIFIER_ID_MAX];	/* the verifier attesting it now, "" none */
	int64_t lease_until;		/* wall ms that verifier's lease ends */
};

/* One verifier sharing the store: its heartbeat (verifier_beat). */
struct vg_store_verifier {
	char id[VG_STORE_VERIFIER_ID_MAX];	/* [A-Za-z0-9._-], --verifier-id */
	char host[256];			/* its host name */
	int64_t pid;
	int64_t started;		/* wall ms */
	int64_t beat;			/* wall ms of its last heartbeat */
	int64_t max_rounds;		/* --max-rounds */
	int64_t running;		/* rounds running at the beat */
	int64_t rounds;			/* rounds it ran since it started */
	int64_t late;			/* agents it counted late at the beat */
};

struct vg_store_verdict {
	int64_t time;
	unsigned int fail;		/* enum vg_attest_fail (VG_AF_REBOOT: an event) */
	int64_t entry;
	char path[1024];
	char digest[2 * VG_HASH_MAX_DIGEST + 16];
	char msg[512];
};

/*
 * What the scheduler knows of an agent (agent_due): a few columns, not
 * the row (a row is kilobytes: keys, EK certificate, PCR, message).
 */
struct vg_store_due {
	char id[128];
	unsigned int state;		/* enum vg_agent_state */
	bool push;			/* url "push:...": it sends its evidence */
	int64_t registered_at, last_ok, last_seen;	/* unix seconds */
	int64_t next_due, lease_until;	/* wall ms */
	char lease_owner[VG_STORE_VERIFIER_ID_MAX];	/* whose lease, "" none */
	/* a pushing agent's push state (struct vg_store_push; 0 when it has none) */
	bool stale;
	int64_t quiet_ms, pushed_ms;
};

/*
 * Push mode (verifier/push.c): what is kept of a pushing agent between
 * its requests, in the store so that any verifier sharing it answers any
 * request. Two tables: push_state, a row per pushing agent (removed with
 * it), and push_regs, a registration between its two steps (bounded,
 * expired rows removed by the next registration).
 */
#define VG_STORE_PUSH_CRED_MAX 256	/* a credential ("token:ID", "cert:SUBJECT"), with the NUL */
#define VG_STORE_PUSH_NONCE_MAX 32
#define VG_STORE_PUSH_IDN_MAX 16384	/* an identity as JSON, with the NUL */
#define VG_STORE_PUSH_QUIET_FAILED (-1)	/* quiet_ms: seen failed, not seen since */

struct vg_store_push {
	char id[128];
	char cred[VG_STORE_PUSH_CRED_MAX];	/* the credential the challenge was handed to */
	/* the challenge handed out, until taken or replaced */
	uint8_t nonce[VG_STORE_PUSH_NONCE_MAX];
	size_t nonce_len;		/* 0: none */
	unsigned int bank;
	uint32_t mask;
	int64_t issued_ms;		/* wall ms */
	int64_t busy_until;		/* wall ms: a push of it is judged until then (a lease) */
	/* what the last push lacked: the next challenge asks for it */
	uint32_t want_mask;
	bool want_boot, want_offset;
	uint64_t offset;
	/* stale: reported once per episode (the flag), silence counted from */
	bool stale;
	int64_t quiet_ms;		/* VG_STORE_PUSH_QUIET_FAILED, or wall ms it was seen reactivated */
	int64_t pushed_ms;		/* wall ms of the challenge of the last push judged */
};

/* a registration between its two steps */
struct vg_store_push_reg {
	char id[128];
	char cred[VG_STORE_PUSH_CRED_MAX];	/* the credential that registered */
	uint8_t proof_hash[32];		/* SHA-256 of the expected ActivateCredential proof */
	int64_t reg_ms;			/* wall ms */
	char idn[VG_STORE_PUSH_IDN_MAX];	/* the identity (vg_api_identity_build's JSON) */
	size_t idn_len;
};

enum vg_store_push_verb {
	/*
	 * REG_PUT: @reg made or replaced (whatever credential had it); the
	 * registrations older than @now - @age_ms and those of @reg.cred for
	 * another id (a credential registers one id) removed first. -ENOSPC:
	 * @max others in progress.
	 */
	VG_STORE_PUSH_REG_PUT = 0,
	/* REG_TAKE: @reg.id's registration by @reg.cred removed and returned in @reg: once. -ENOENT */
	VG_STORE_PUSH_REG_TAKE,
	/*
	 * CHAL_PUT: @st's challenge (cred, nonce, bank, mask, issued_ms)
	 * replaces the one before; @st gets the row back: mask with the
	 * wanted PCRs added, want_boot, want_offset, offset. -ENOENT: no such
	 * agent.
	 */
	VG_STORE_PUSH_CHAL_PUT,
	/*
	 * CHAL_TAKE: the challenge of @st.id whose credential is @st.cred and
	 * nonce @st.nonce, issued at or after @now - @age_ms, no push of it
	 * judged (busy_until <= @now): taken (its nonce removed, busy_until
	 * @now + @lease_ms), one statement, so that of verifiers taking it at
	 * once one does; @st gets the row. Else nothing changes: -ENOENT
	 * (unknown or used), -ETIME (expired), -EBUSY (being judged).
	 */
	VG_STORE_PUSH_CHAL_TAKE,
	/*
	 * DONE: the push of @st.id judged (its lease @st.busy_until ends if
	 * still its): @retry: want_mask |= @st.want_mask, want_boot, want_offset,
	 * offset as @st's; else want_boot and want_offset cleared and, @judged,
	 * pushed_ms = @st.pushed_ms and not stale. @st gets the row. -ENOENT.
	 */
	VG_STORE_PUSH_DONE,
	/*
	 * CAS: column @col (VG_STORE_PUSH_COL_*) of @st.id set to @value if
	 * it is @expect and pushed_ms still @st.pushed_ms (a row made if
	 * none, and the agent is there): @changed says whether it was.
	 */
	VG_STORE_PUSH_CAS,
	VG_STORE_PUSH__COUNT
};

enum { VG_STORE_PUSH_COL_STALE = 0, VG_STORE_PUSH_COL_QUIET, VG_STORE_PUSH_COL__COUNT };

/* one push op's parameters and results */
struct vg_store_push_req {
	int64_t now, age_ms, lease_ms;
	uint32_t max;
	uint32_t col;
	int64_t expect, value;
	bool retry, judged;
	bool changed;			/* out: CAS */
	struct vg_store_push st;
	struct vg_store_push_reg reg;
};

typedef int (*vg_store_agent_cb)(void *arg, const struct vg_store_agent *a);
typedef int (*vg_store_due_cb)(void *arg, const struct vg_store_due *a);
typedef int (*vg_store_verdict_cb)(void *arg, const struct vg_store_verdict *v);
/* a claimed agent and the time it was due */
typedef int (*vg_store_lease_cb)(void *arg, const char *id, int64_t due);
typedef int (*vg_store_verifier_cb)(void *arg, const struct vg_store_verifier *v);

/* The column agent_find looks an agent up by. */
enum vg_store_key {
	VG_STORE_KEY_EK = 0,		/* an EK's TPM2B_PUBLIC: matched by its key (ek_key), not its bytes */
	VG_STORE_KEY_AK,		/* ak_pub */
	VG_STORE_KEY_URL,		/* url ("push:" and a credential for a push agent) */
	VG_STORE_KEY__COUNT
};

struct vg_store_ops {
	int (*agent_put)(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag);
	int (*agent_get)(void *ctx, const char *id, struct vg_store_agent *ret, struct vg_diag *diag);
	int (*agent_del)(void *ctx, const char *id, struct vg_diag *diag);
	/* calls @cb for each agent in id order; a non-zero return from @cb stops and is returned */
	int (*agent_list)(void *ctx, vg_store_agent_cb cb, void *arg, struct vg_diag *diag);
	/*
	 * write @a (a->id) only if the stored row still has @old's attestation
	 * state: AK, policy, state, clock and counters, log position, PCR and
	 * lag, rounds. One statement (compare-and-set), so that of several
	 * verifiers that judged the same state only the first one's result is
	 * kept. Return: 0, -ESTALE (changed or removed meanwhile), -EIO.
	 */
	int (*agent_update)(void *ctx, const struct vg_store_agent *old,
			    const struct vg_store_agent *a, struct vg_diag *diag);
	/*
	 * agent_find - the first agent by id, other than @except ("" none),
	 * whose @key column (enum vg_store_key) is the @len bytes of @val
	 * exactly, into *@ret (an index serves each). Return: 0, -ENOENT,
	 * -EINVAL (@key), -EIO.
	 */
	int (*agent_find)(void *ctx, unsigned int key, const uint8_t *val, size_t len,
			  const char *except, struct vg_store_agent *ret, struct vg_diag *diag);
	/*
	 * agent_due - what a scheduler looks at: the agents that are not
	 * failed, do not push (url "push:...") and are due by @before (wall
	 * ms; next_due's index serves it), then every pushing agent (url's
	 * index), failed ones too; a struct vg_store_due each, to @cb.
	 * Return: 0, -EIO, or what @cb returned (non-zero stops).
	 */
	int (*agent_due)(void *ctx, int64_t before, vg_store_due_cb cb, void *arg,
			 struct vg_diag *diag);
	/*
	 * agent_states - how many agents are in each state: @n[state] for
	 * every enum vg_agent_state (counted in the database, no row read
	 * out; a stored state beyond them is not counted). Return: 0, -EIO.
	 */
	int (*agent_states)(void *ctx, uint64_t n[VG_STORE_STATES], struct vg_diag *diag);
	int (*policy_put)(void *ctx, const char *name, const char *doc, size_t len,
			  struct vg_diag *diag);
	/* *@ret is malloc'd and NUL-terminated */
	int (*policy_get)(void *ctx, const char *name, char **ret, size_t *len, struct vg_diag *diag);
	int (*policy_del)(void *ctx, const char *name, struct vg_diag *diag);
	int (*verdict_add)(void *ctx, const char *id, const struct vg_store_verdict *v,
			   struct vg_diag *diag);
	/* the newest @max verdicts of @id, newest first */
	int (*verdict_list)(void *ctx, const char *id, size_t max, vg_store_verdict_cb cb, void *arg,
			    struct vg_diag *diag);
	/*
	 * lease_claim - at most @max agents due at @now (wall ms), not failed,
	 * not pushing their evidence (url "push:..."), not leased (their
	 * lease_until <= @now), earliest due first (then by
	 * id), leased to @owner until @now + @lease_ms: one statement, so that
	 * of verifiers claiming at once each agent goes to one (PostgreSQL:
	 * FOR UPDATE SKIP LOCKED, no verifier waits for another's claim).
	 * @cb gets each claimed agent and its due time. Return: agents
	 * claimed, -EIO.
	 */
	int (*lease_claim)(void *ctx, const char *owner, int64_t now, int64_t lease_ms,
			   unsigned int max, vg_store_lease_cb cb, void *arg, struct vg_diag *diag);
	/*
	 * lease_release - @owner is done with @id: its lease ends and its next
	 * round is due at @next_due. Nothing when another verifier holds it
	 * now (ours expired and it was claimed again). Return: 0, -ESTALE
	 * (not ours any more, or removed), -EIO.
	 */
	int (*lease_release)(void *ctx, const char *id, const char *owner, int64_t next_due,
			     struct vg_diag *diag);
	/*
	 * lease_drop - @owner's lease of @id that ends at @lease_until, and
	 * only that one, ends now; the due time is left as it is. For a lease
	 * under @owner that none of its rounds holds: one the store still
	 * holds after its release was answered (a database that lost
	 * acknowledged writes: a crash with synchronous_commit off, a failover
	 * to an asynchronous standby), or a claim it took and never answered,
	 * or a predecessor's under the same id. Return: 0, -ESTALE (no such
	 * lease: released, expired, claimed again, removed), -EIO.
	 */
	int (*lease_drop)(void *ctx, const char *id, const char *owner, int64_t lease_until,
			  struct vg_diag *diag);
	/*
	 * push - push state op @verb (enum vg_store_push_verb) on @rq.
	 * Return: 0, -EINVAL (@verb), the verb's errors, -EIO.
	 */
	int (*push)(void *ctx, unsigned int verb, struct vg_store_push_req *rq, struct vg_diag *diag);
	/* a verifier's heartbeat, its row made or replaced; rows silent for a day go */
	int (*verifier_beat)(void *ctx, const struct vg_store_verifier *v, struct vg_diag *diag);
	/* every verifier's last heartbeat, by id */
	int (*verifier_list)(void *ctx, vg_store_verifier_cb cb, void *arg, struct vg_diag *diag);
	void (*close)(void *ctx);
	void (*set_timeout)(void *ctx, unsigned int ms);
	/*
	 * lease_take - optional (NULL: vg_store_lease_take does it with the
	 * calls above): the store process's client does it in one exchange.
	 */
	int (*lease_take)(void *ctx, const char *done, int64_t next_due, const char *owner,
			  int64_t now, int64_t lease_ms, unsigned int max, vg_store_agent_cb cb,
			  void *arg, struct vg_diag *diag);
};

struct vg_store {
	const struct vg_store_ops *ops;
	void *ctx;
};

/*
 * vg_store_open - "sqlite:PATH", or a bare PATH (SQLite); "postgresql://"
 * and "postgres://" URLs (libpq's URI syntax, any libpq parameter in the
 * query string: ?host=/run/postgresql&sslmode=verify-full) name the
 * PostgreSQL backend. Creates the schema when missing.
 * Return: 0, -EOPNOTSUPP, -EIO, -EINVAL (a postgresql: URL that is not one), -ENOMEM.
 */
int vg_store_open(const char *url, struct vg_store **ret, struct vg_diag *diag);
void vg_store_close(struct vg_store *s);

/*
 * vg_store_set_timeout - how long one call may wait for the database:
 * SQLite's busy timeout (another process holds the lock), PostgreSQL's
 * answer to a statement (a server that hangs: the call fails with
 * -ETIMEDOUT and the next one reconnects). Default 10 s for both.
 */
void vg_store_set_timeout(struct vg_store *s, unsigned int ms);

/* The SQLite backend directly. */
int vg_store_sqlite_open(const char *path, struct vg_store **ret, struct vg_diag *diag);

/*
 * vg_store_pg_open - the PostgreSQL backend directly: @url is a libpq URI
 * or conninfo string. The password comes from the URL, PGPASSWORD or the
 * password file (PGPASSFILE, ~/.pgpass). Connects (connect_timeout 10 s
 * unless the URL says otherwise), creates the schema when missing under an
 * advisory lock (two verifiers may start at once), prepares the statements.
 * A connection lost later is re-established once per call (PQreset) and
 * the statement retried once; failing that the call returns -EIO.
 * Return: 0, -EIO (the diag names the URL with its password as ***), -EINVAL
 * (neither a postgresql:// URL nor a conninfo string), -ENOMEM.
 */
int vg_store_pg_open(const char *url, struct vg_store **ret, struct vg_diag *diag);

/* A byte range of a string. */
struct vg_store_span {
	size_t off, len;
};

/*
 * vg_store_url_secrets - where the passwords are in a store URL: the
 * password of a URI's user info, every `password=` of its query string,
 * or every `password` keyword of a libpq conninfo string. Fills up to @max
 * spans in order. Return: how many there are (may exceed @max).
 */
size_t vg_store_url_secrets(const char *url, struct vg_store_span *spans, size_t max);

/*
 * vg_store_url_scrub - @url with every password replaced by "***", for
 * messages and logs; truncated to @cap - 1 bytes, always NUL-terminated
 * when @cap > 0. Return: the length of the whole scrubbed URL (like snprintf).
 */
size_t vg_store_url_scrub(const char *url, char *out, size_t cap);

/* Convenience wrappers over s->ops. */
int vg_store_agent_put(struct vg_store *s, const struct vg_store_agent *a, struct vg_diag *diag);
int vg_store_agent_get(struct vg_store *s, const char *id, struct vg_store_agent *ret,
		       struct vg_diag *diag);
int vg_store_agent_del(struct vg_store *s, const char *id, struct vg_diag *diag);
int vg_store_agent_update(struct vg_store *s, const struct vg_store_agent *old,
			  const struct vg_store_agent *a, struct vg_diag *diag);
int vg_store_agent_list(struct vg_store *s, vg_store_agent_cb cb, void *arg, struct vg_diag *diag);
int vg_store_agent_due(struct vg_store *s, int64_t before, vg_store_due_cb cb, void *arg,
		       struct vg_diag *diag);
int vg_store_agent_states(struct vg_store *s, uint64_t n[VG_STORE_STATES], struct vg_diag *diag);
int vg_store_agent_find(struct vg_store *s, unsigned int key, const uint8_t *val, size_t len,
			const char *except, struct vg_store_agent *ret, struct vg_diag *diag);
int vg_store_policy_put(struct vg_store *s, const char *name, const char *doc, size_t len,
			struct vg_diag *diag);
int vg_store_policy_get(struct vg_store *s, const char *name, char **ret, size_t *len,
			struct vg_diag *diag);
int vg_store_policy_del(struct vg_store *s, const char *name, struct vg_diag *diag);
int vg_store_verdict_add(struct vg_store *s, const char *id, const struct vg_store_verdict *v,
			 struct vg_diag *diag);
int vg_store_verdict_list(struct vg_store *s, const char *id, size_t max, vg_store_verdict_cb cb,
			  void *arg, struct vg_diag *diag);
int vg_store_lease_claim(struct vg_store *s, const char *owner, int64_t now, int64_t lease_ms,
			 unsigned int max, vg_store_lease_cb cb, void *arg, struct vg_diag *diag);
int vg_store_lease_release(struct vg_store *s, const char *id, const char *owner, int64_t next_due,
			   struct vg_diag *diag);
int vg_store_lease_drop(struct vg_store *s, const char *id, const char *owner, int64_t lease_until,
			struct vg_diag *diag);
/*
 * vg_store_lease_take - the store calls a scheduler makes between two
 * rounds, as one: @done's lease released (lease_release; @done NULL or
 * "": none; -ESTALE, not ours any more, is no error), then at most @max
 * agents claimed (lease_claim) and each one's row as agent_get reads it
 * after the claim (next_due: the due time it was claimed at) to @cb, so
 * that the round needs no agent_get of its own. A claimed agent removed
 * before its row was read is skipped; one whose row cannot be read is
 * given back (due at @now). Return: the rows handed to @cb, -errno of
 * the release (nothing claimed then) or of the claim, or what @cb
 * returned (non-zero stops; the agents not handed over are given back).
 */
int vg_store_lease_take(struct vg_store *s, const char *done, int64_t next_due, const char *owner,
			int64_t now, int64_t lease_ms, unsigned int max, vg_store_agent_cb cb,
			void *arg, struct vg_diag *diag);
int vg_store_verifier_beat(struct vg_store *s, const struct vg_store_verifier *v,
			   struct vg_diag *diag);
int vg_store_push(struct vg_store *s, unsigned int verb, struct vg_store_push_req *rq,
		  struct vg_diag *diag);
int vg_store_verifier_list(struct vg_store *s, vg_store_verifier_cb cb, void *arg,
			   struct vg_diag *diag);

#endif
