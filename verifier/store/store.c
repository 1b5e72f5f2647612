// SPDX-License-Identifier: MIT
/*
 * store.c - the backend-neutral half of store.h: vg_store_open() choosing
 * a backend by URL and the wrappers over its ops table. It knows the backends only by their
 * open functions (store.h); what the backends share between themselves,
 * the row encoding, is store_row.c, which this file does not include.
 */
#include <errno.h>
#include <stdbool.h>
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

/* the ids of the agents stored before ek_key (an EK and no key made of it) */
typedef char agent_id[sizeof(((struct vg_store_agent *)0)->id)];

struct keyless {
	agent_id *id;
	size_t n, cap;
};

static int keyless_cb(void *arg, const struct vg_store_agent *a)
{
	struct keyless *k = arg;

	if (!a->ek_pub_len || a->ek_key_len)
		return 0;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		void *p = realloc(k->id, cap * sizeof(*k->id));

		if (!p)
			return -ENOMEM;
		k->id = p;
		k->cap = cap;
	}
	snprintf(k->id[k->n++], sizeof(*k->id), "%s", a->id);
	return 0;
}

/*
 * A store written before ek_key: each agent's is made now, so that
 * agent_find finds its EK from the first registration on (an agent whose
 * row changed meanwhile was written by a verifier that made it).
 */
static int ek_keys_backfill(struct vg_store *s, struct vg_diag *diag)
{
	struct keyless k = { 0 };
	struct vg_store_agent *a = malloc(sizeof(*a));
	int r = a ? vg_store_agent_list(s, keyless_cb, &k, diag) : -ENOMEM;

	for (size_t i = 0; r >= 0 && i < k.n; i++) {
		r = vg_store_agent_get(s, k.id[i], a, diag);
		if (r == 0)
			r = vg_store_agent_update(s, a, a, diag);
		if (r == -ENOENT || r == -ESTALE)
			r = 0;		/* removed, or written (with its key) meanwhile */
	}
	free(k.id);
	free(a);
	return r == -ENOMEM ? vg_diag_set(diag, r, "store: making the EK keys: out of memory") : r;
}

int vg_store_open(const char *url, struct vg_store **ret, struct vg_diag *diag)
{
	int r;

	if (strncmp(url, "sqlite:", 7) == 0)
		r = vg_store_sqlite_open(url + 7, ret, diag);
	else if (strncmp(url, "postgresql:", 11) == 0 || strncmp(url, "postgres:", 9) == 0)
		r = vg_store_pg_open(url, ret, diag);
	else
		r = vg_store_sqlite_open(url, ret, diag);
	if (r < 0)
		return r;
	r = ek_keys_backfill(*ret, diag);
	if (r < 0) {
		vg_store_close(*ret);
		*ret = NULL;
	}
	return r;
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

/*
 * @a with its ek_key made from its ek_pub (always on a put, when missing on
 * an update: a row written before the column): *@copy is then a copy to
 * free. Return: the agent to write.
 */
static const struct vg_store_agent *with_ek_key(const struct vg_store_agent *a, bool always,
						struct vg_store_agent **copy)
{
	struct vg_store_agent *c;

	*copy = NULL;
	if (!a->ek_pub_len || (a->ek_key_len && !always) || !(c = malloc(sizeof(*c))))
		return a;
	*c = *a;
	c->ek_key_len = vg_attest_key_id(c->ek_pub, c->ek_pub_len, c->ek_key, NULL) == 0 ?
			sizeof(c->ek_key) : 0;
	*copy = c;
	return c;
}

int vg_store_agent_put(struct vg_store *s, const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct vg_store_agent *c;
	int r = s->ops->agent_put(s->ctx, with_ek_key(a, true, &c), diag);

	free(c);
	return r;
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
	struct vg_store_agent *c;
	int r = s->ops->agent_update(s->ctx, old, with_ek_key(a, false, &c), diag);

	free(c);
	return r;
}

int vg_store_agent_list(struct vg_store *s, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	return s->ops->agent_list(s->ctx, cb, arg, diag);
}

int vg_store_agent_due(struct vg_store *s, int64_t before, vg_store_due_cb cb, void *arg,
		       struct vg_diag *diag)
{
	return s->ops->agent_due(s->ctx, before, cb, arg, diag);
}

int vg_store_agent_states(struct vg_store *s, uint64_t n[VG_STORE_STATES], struct vg_diag *diag)
{
	memset(n, 0, VG_STORE_STATES * sizeof(*n));
	return s->ops->agent_states(s->ctx, n, diag);
}

int vg_store_agent_find(struct vg_store *s, unsigned int key, const uint8_t *val, size_t len,
			const char *except, struct vg_store_agent *ret, struct vg_diag *diag)
{
	uint8_t id[32];

	if (key >= VG_STORE_KEY__COUNT)
		return vg_diag_set(diag, -EINVAL, "store: agent find: key %u", key);
	/* an EK by its key: the same key sent with other attributes is the same EK */
	if (key == VG_STORE_KEY_EK) {
		if (vg_attest_key_id(val, len, id, NULL) < 0)
			return -ENOENT;		/* no key: no agent has it */
		val = id;
		len = sizeof(id);
	}
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

int vg_store_lease_drop(struct vg_store *s, const char *id, const char *owner, int64_t lease_until,
			struct vg_diag *diag)
{
	return s->ops->lease_drop(s->ctx, id, owner, lease_until, diag);
}

/* the ids a claim took, for vg_store_lease_take's reads */
struct taken {
	char (*id)[sizeof(((struct vg_store_agent *)0)->id)];
	size_t n, cap;
};

static int take_id(void *arg, const char *id, int64_t due)
{
	struct taken *t = arg;

	(void)due;			/* the row read after the claim has it */
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		void *n = realloc(t->id, cap * sizeof(*t->id));

		if (!n)
			return -ENOMEM;	/* the rest stays leased until the lease ends */
		t->id = n;
		t->cap = cap;
	}
	snprintf(t->id[t->n++], sizeof(*t->id), "%s", id);
	return 0;
}

int vg_store_lease_take(struct vg_store *s, const char *done, int64_t next_due, const char *owner,
			int64_t now, int64_t lease_ms, unsigned int max, vg_store_agent_cb cb,
			void *arg, struct vg_diag *diag)
{
	struct taken t = { 0 };
	struct vg_store_agent *a = NULL;
	int r, n = 0, ret = 0;

	if (s->ops->lease_take)
		return s->ops->lease_take(s->ctx, done, next_due, owner, now, lease_ms, max, cb, arg,
					  diag);
	if (done && done[0]) {
		r = s->ops->lease_release(s->ctx, done, owner, next_due, diag);
		if (r < 0 && r != -ESTALE && r != -ENOENT)
			return r;
	}
	if (!max)
		return 0;
	r = s->ops->lease_claim(s->ctx, owner, now, lease_ms, max, take_id, &t, diag);
	if (r < 0 && !t.n) {
		free(t.id);
		return r;
	}
	a = malloc(sizeof(*a));
	for (size_t i = 0; i < t.n && !ret; i++) {
		struct vg_diag d = { 0 };

		r = a ? s->ops->agent_get(s->ctx, t.id[i], a, &d) : -ENOMEM;
		if (r == -ENOENT)
			continue;	/* removed since the claim */
		if (r < 0) {
			/* given back, due now: claimed again by whoever can read it */
			(void)s->ops->lease_release(s->ctx, t.id[i], owner, now, &d);
			continue;
		}
		ret = cb(arg, a);
		n += !ret;
	}
	free(a);
	free(t.id);
	return ret ? ret : n;
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

int vg_store_push(struct vg_store *s, unsigned int verb, struct vg_store_push_req *rq,
		  struct vg_diag *diag)
{
	if (verb >= VG_STORE_PUSH__COUNT || rq->col >= VG_STORE_PUSH_COL__COUNT ||
	    rq->st.nonce_len > sizeof(rq->st.nonce) || rq->reg.idn_len >= sizeof(rq->reg.idn))
		return vg_diag_set(diag, -EINVAL, "store: push: verb %u", verb);
	rq->changed = false;
	return s->ops->push(s->ctx, verb, rq, diag);
}
