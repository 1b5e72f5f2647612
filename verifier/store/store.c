// SPDX-License-Identifier: MIT
/*
 * store.c - the backend-neutral half of store.h: vg_store_open() choosing
 * a backend by URL and the wrappers over its ops table. It knows the backends only by their
 * open functions (store.h); what the backends share between themselves,
 * the row encoding, is store_row.c, which this file does not include.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const state_names[] = { "registered", "trusted", "failed", "unreachable" };

const char *vg_agent_state_name(unsigned int s)
{
	return s < NELEM(state_names) ? state_names[s] : NULL;
}

/* ---- backend choice and wrappers ---- */

int vg_store_open(const char *url, struct vg_store **ret, struct vg_diag *diag)
{
	if (strncmp(url, "sqlite:", 7) == 0)
		return vg_store_sqlite_open(url + 7, ret, diag);
	if (strncmp(url, "postgresql:", 11) == 0 || strncmp(url, "postgres:", 9) == 0)
		return vg_store_pg_open(url, ret, diag);
	return vg_store_sqlite_open(url, ret, diag);
}

void vg_store_close(struct vg_store *s)
{
	if (!s)
		return;
	s->ops->close(s->ctx);
	free(s);
}

void vg_store_set_timeout(struct vg_store *s, unsigned int ms)
{
	s->ops->set_timeout(s->ctx, ms);
}

int vg_store_agent_put(struct vg_store *s, const struct vg_store_agent *a, struct vg_diag *diag)
{
	return s->ops->agent_put(s->ctx, a, diag);
}

int vg_store_agent_get(struct vg_store *s, const char *id, struct vg_store_agent *ret,
		       struct vg_diag *diag)
{
	return s->ops->agent_get(s->ctx, id, ret, diag);
}

int vg_store_agent_del(struct vg_store *s, const char *id, struct vg_diag *diag)
{
	return s->ops->agent_del(s->ctx, id, diag);
}

int vg_store_agent_update(struct vg_store *s, const struct vg_store_agent *old,
			  const struct vg_store_agent *a, struct vg_diag *diag)
{
	return s->ops->agent_update(s->ctx, old, a, diag);
}

int vg_store_agent_list(struct vg_store *s, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	return s->ops->agent_list(s->ctx, cb, arg, diag);
}

int vg_store_agent_find(struct vg_store *s, unsigned int key, const uint8_t *val, size_t len,
			const char *except, struct vg_store_agent *ret, struct vg_diag *diag)
{
	if (key >= VG_STORE_KEY__COUNT)
		return vg_diag_set(diag, -EINVAL, "store: agent find: key %u", key);
	return s->ops->agent_find(s->ctx, key, val, len, except ? except : "", ret, diag);
}

int vg_store_policy_put(struct vg_store *s, const char *name, const char *doc, size_t len,
			struct vg_diag *diag)
{
	return s->ops->policy_put(s->ctx, name, doc, len, diag);
}

int vg_store_policy_get(struct vg_store *s, const char *name, char **ret, size_t *len,
			struct vg_diag *diag)
{
	return s->ops->policy_get(s->ctx, name, ret, len, diag);
}

int vg_store_policy_del(struct vg_store *s, const char *name, struct vg_diag *diag)
{
	return s->ops->policy_del(s->ctx, name, diag);
}

int vg_store_verdict_add(struct vg_store *s, const char *id, const struct vg_store_verdict *v,
			 struct vg_diag *diag)
{
	return s->ops->verdict_add(s->ctx, id, v, diag);
}

int vg_store_verdict_list(struct vg_store *s, const char *id, size_t max, vg_store_verdict_cb cb,
			  void *arg, struct vg_diag *diag)
{
	return s->ops->verdict_list(s->ctx, id, max, cb, arg, diag);
}

int vg_store_lease_claim(struct vg_store *s, const char *owner, int64_t now, int64_t lease_ms,
			 unsigned int max, vg_store_lease_cb cb, void *arg, struct vg_diag *diag)
{
	return s->ops->lease_claim(s->ctx, owner, now, lease_ms, max, cb, arg, diag);
}

int vg_store_lease_release(struct vg_store *s, const char *id, const char *owner, int64_t next_due,
			   struct vg_diag *diag)
{
	return s->ops->lease_release(s->ctx, id, owner, next_due, diag);
}

int vg_store_verifier_beat(struct vg_store *s, const struct vg_store_verifier *v,
			   struct vg_diag *diag)
{
	return s->ops->verifier_beat(s->ctx, v, diag);
}

int vg_store_verifier_list(struct vg_store *s, vg_store_verifier_cb cb, void *arg,
			   struct vg_diag *diag)
{
	return s->ops->verifier_list(s->ctx, cb, arg, diag);
}
