// SPDX-License-Identifier: MIT
/*
 * policy_cache.c - the reference policies the rounds and the API use,
 * parsed once from the store and kept until one is replaced. A large
 * policy takes seconds to parse: it is parsed outside vf->lock (the API
 * and the other rounds go on meanwhile), one at a time, so that a burst of
 * rounds does not parse the same document twenty times. A replaced policy
 * stays alive while a round still uses it (reference counted).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "verifier.h"
#include "vigil/hash.h"

struct vf_pcache {
	struct vf_pcache *next;
	char name[128];
	struct vg_refpolicy *p;
	unsigned int refs;		/* rounds using it right now */
	bool retired;			/* replaced: freed when refs drops to 0 */
	struct vf_trust *trust;		/* the trust database it was parsed with (a reference) */
	char digest[2 * 32 + 1];	/* sha256 of the stored document, hex (an EAR's policy id) */
};

int vf_policy_load(const struct verifier *vf, const uint8_t *doc, size_t len,
		   struct vg_refpolicy **ret, struct vg_diag *d)
{
	int r = vf->policy_keys ? vg_refpolicy_load_dsse(vf->policy_keys, doc, len, ret, d) :
				  vg_refpolicy_load(doc, len, ret, d);

	if (r == 0)
		vg_refpolicy_set_archive(*ret, vf->archive);
	return r;
}

static struct vf_pcache *pcache_find(struct verifier *vf, const char *name)
{
	for (struct vf_pcache *c = vf->policies; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

struct vg_refpolicy *vf_policy_lookup(struct verifier *vf, const char *name, char *err,
				      size_t errlen)
{
	struct vg_diag d = { 0 };
	struct vf_pcache *c = pcache_find(vf, name);
	uint64_t gen;
	char *doc = NULL;
	size_t len;
	int r;

	if (c)
		return c->p;
	pthread_mutex_unlock(&vf->lock);
	pthread_mutex_lock(&vf->parse_lock);
	pthread_mutex_lock(&vf->lock);
again:
	c = pcache_find(vf, name);	/* parsed by another thread meanwhile */
	if (c) {
		pthread_mutex_unlock(&vf->parse_lock);
		return c->p;
	}
	gen = vf->policy_gen;
	/* store round trip (store_client.c) */
	r = vg_store_policy_get(vf->store, name, &doc, &len, &d);
	if (r < 0) {
		pthread_mutex_unlock(&vf->parse_lock);
		snprintf(err, errlen, "policy %s: %s", name, r == -ENOENT ? "not found" : d.msg);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		uint8_t md[32];

		/* once per parse, which costs far more: an EAR names the document it judged by */
		if (EVP_Digest(doc, len, md, NULL, EVP_sha256(), NULL) == 1)
			vg_hex_encode(md, sizeof(md), c->digest);
	}
	pthread_mutex_unlock(&vf->lock);
	r = c ? vf_policy_load(vf, (const uint8_t *)doc, len, &c->p, &d) : -ENOMEM;
	free(doc);
	pthread_mutex_lock(&vf->lock);
	if (r == 0 && gen != vf->policy_gen) {
		/* a policy was uploaded while we parsed: this document may be the old one */
		vg_refpolicy_free(c->p);
		free(c);
		goto again;
	}
	pthread_mutex_unlock(&vf->parse_lock);
	if (r < 0) {
		snprintf(err, errlen, "policy %s: %s", name, c ? d.msg : "out of memory");
		free(c);
		return NULL;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	/* parsed with vf->trust: a reload since would have moved policy_gen on */
	c->trust = vf->trust;
	if (c->trust)
		c->trust->refs++;
	c->next = vf->policies;
	vf->policies = c;
	return c->p;
}

static void pcache_free(struct vf_pcache *c)
{
	if (c->trust)
		c->trust->refs--;
	vg_refpolicy_free(c->p);
	free(c);
}

void vf_policy_forget(struct verifier *vf, const char *name)
{
	for (struct vf_pcache **pp = &vf->policies; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct vf_pcache *c = *pp;

			*pp = c->next;
			c->retired = true;
			if (!c->refs)
				pcache_free(c);
			return;
		}
}

void vf_policy_forget_all(struct verifier *vf)
{
	while (vf->policies) {
		struct vf_pcache *c = vf->policies;

		vf->policies = c->next;
		c->retired = true;
		if (!c->refs)
			pcache_free(c);
	}
}

/* Under vf->lock: the cache entry of @p, for reference counting. */
static struct vf_pcache *pcache_of(struct verifier *vf, const struct vg_refpolicy *p)
{
	for (struct vf_pcache *c = vf->policies; c; c = c->next)
		if (c->p == p)
			return c;
	return NULL;
}

const struct vg_trust_boot *vf_policy_boot(struct verifier *vf, const struct vg_refpolicy *p)
{
	struct vf_pcache *c = p ? pcache_of(vf, p) : NULL;

	return c && c->trust ? c->trust->boot : NULL;
}

const struct vg_trust_boot *vf_pcache_boot(const struct vf_pcache *c)
{
	return c && c->trust ? c->trust->boot : NULL;
}

const char *vf_policy_digest(struct verifier *vf, const struct vg_refpolicy *p)
{
	struct vf_pcache *c = p ? pcache_of(vf, p) : NULL;

	return c ? c->digest : "";
}

struct vf_pcache *vf_policy_hold(struct verifier *vf, const struct vg_refpolicy *p)
{
	struct vf_pcache *c = p ? pcache_of(vf, p) : NULL;

	if (c)
		c->refs++;
	return c;
}

void vf_policy_put(struct verifier *vf, struct vf_pcache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&vf->lock);
	if (--c->refs == 0 && c->retired)
		pcache_free(c);
	pthread_mutex_unlock(&vf->lock);
}

void vf_policy_cache_free(struct verifier *vf)
{
	while (vf->policies) {
		struct vf_pcache *n = vf->policies->next;

		pcache_free(vf->policies);
		vf->policies = n;
	}
}
