/* SPDX-License-Identifier: MIT */
/*
 * store.h - the attestation verifier's persistent state behind one
 * interface: agents (identity keys, policy, attestation state: TPM clock
 * and counters, verified log offset and PCR), named reference policies,
 * and the verdict history.
 *
 * A backend is a struct vg_store_ops; SQLite (lib/store_sqlite.c) is the
 * default, and a PostgreSQL backend implements the same operations (the
 * schema in store_sqlite.c uses only types and statements both accept:
 * TEXT, BLOB/BYTEA, INTEGER/BIGINT, INSERT ... ON CONFLICT).
 *
 * A store handle is not thread-safe: callers serialise (the verifier
 * holds a mutex around every call). Every write is one transaction.
 *
 * Errors: -ENOENT (no such agent/policy), -EBADMSG (a row that does not
 * decode), -EOPNOTSUPP (backend not built in), -EIO (the database).
 */
#ifndef VIGIL_STORE_H
#define VIGIL_STORE_H

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

struct vg_store_agent {
	char id[128];
	char url[256];			/* http://host:port of the agent */
	char policy[128];		/* reference policy name ("" = none: every entry fails) */
	uint8_t ek_pub[1024];
	size_t ek_pub_len;
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
};

struct vg_store_verdict {
	int64_t time;
	unsigned int fail;		/* enum vg_attest_fail (VG_AF_REBOOT: an event) */
	int64_t entry;
	char path[1024];
	char digest[2 * VG_HASH_MAX_DIGEST + 16];
	char msg[512];
};

typedef int (*vg_store_agent_cb)(void *arg, const struct vg_store_agent *a);
typedef int (*vg_store_verdict_cb)(void *arg, const struct vg_store_verdict *v);

struct vg_store_ops {
	int (*agent_put)(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag);
	int (*agent_get)(void *ctx, const char *id, struct vg_store_agent *ret, struct vg_diag *diag);
	int (*agent_del)(void *ctx, const char *id, struct vg_diag *diag);
	/* calls @cb for each agent in id order; a non-zero return from @cb stops and is returned */
	int (*agent_list)(void *ctx, vg_store_agent_cb cb, void *arg, struct vg_diag *diag);
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
	void (*close)(void *ctx);
};

struct vg_store {
	const struct vg_store_ops *ops;
	void *ctx;
};

/*
 * vg_store_open - "sqlite:PATH", or a bare PATH (SQLite); "postgresql://"
 * URLs name the PostgreSQL backend (-EOPNOTSUPP until it is built).
 * Creates the schema when missing.
 * Return: 0, -EOPNOTSUPP, -EIO, -ENOMEM.
 */
int vg_store_open(const char *url, struct vg_store **ret, struct vg_diag *diag);
void vg_store_close(struct vg_store *s);

/* The SQLite backend directly. */
int vg_store_sqlite_open(const char *path, struct vg_store **ret, struct vg_diag *diag);

/* Convenience wrappers over s->ops. */
int vg_store_agent_put(struct vg_store *s, const struct vg_store_agent *a, struct vg_diag *diag);
int vg_store_agent_get(struct vg_store *s, const char *id, struct vg_store_agent *ret,
		       struct vg_diag *diag);
int vg_store_agent_del(struct vg_store *s, const char *id, struct vg_diag *diag);
int vg_store_agent_list(struct vg_store *s, vg_store_agent_cb cb, void *arg, struct vg_diag *diag);
int vg_store_policy_put(struct vg_store *s, const char *name, const char *doc, size_t len,
			struct vg_diag *diag);
int vg_store_policy_get(struct vg_store *s, const char *name, char **ret, size_t *len,
			struct vg_diag *diag);
int vg_store_policy_del(struct vg_store *s, const char *name, struct vg_diag *diag);
int vg_store_verdict_add(struct vg_store *s, const char *id, const struct vg_store_verdict *v,
			 struct vg_diag *diag);
int vg_store_verdict_list(struct vg_store *s, const char *id, size_t max, vg_store_verdict_cb cb,
			  void *arg, struct vg_diag *diag);

#endif
