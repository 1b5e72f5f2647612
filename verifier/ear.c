// SPDX-License-Identifier: MIT
/*
 * ear.c - verdicts as signed EARs, on request (docs/attest-ear.md): an
 * agent's latest verdict (GET /v1/agents/ID/ear) from its row and its
 * history, a stateless judgement's (POST /v1/verify/evidence with "ear"),
 * their claims built by libvigil (attest_ear.h) and signed by the key
 * process (keyproc.c, --ear-key): the key never is in this process. A
 * round signs nothing: the cost is the request's. What the claims say of
 * the instance's identity is what this verifier proved of the AK
 * (ak_identity): an AK no registration proved gets no identity claim.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier.h"
#include "privsep.h"

#define EAR_BUILD "vigil-verifier " VIGIL_VERSION

int vf_ear_sign(const struct vg_ear *e, char **ret, size_t *len, char *err, size_t errlen)
{
	unsigned int alg = vg_privsep_ear_alg();
	struct vg_diag d = { 0 };
	char *claims = NULL;
	int r;

	if (!alg) {
		snprintf(err, errlen, "no EAR signing key: start vigil-verifier with --ear-key FILE");
		return 501;
	}
	r = vg_ear_claims(e, &claims, &d);
	if (r < 0) {
		snprintf(err, errlen, "EAR: %s", d.msg);
		return r == -EINVAL ? 400 : 500;
	}
	r = vg_jws_compact(alg, "JWT", (const uint8_t *)claims, (size_t)r, vg_privsep_ear_sign, NULL,
			   ret, &d);
	free(claims);
	if (r < 0) {
		snprintf(err, errlen, "EAR: %s", d.msg);
		return 500;
	}
	*len = (size_t)r;
	return 200;
}

struct hist {
	struct vg_store_verdict *v;
	size_t n, max;
};

/* the round's failures, newest first (the first failure is the newest line) */
static int hist_cb(void *arg, const struct vg_store_verdict *v)
{
	struct hist *h = arg;

	/* events of the agent, not failures of its round */
	if (v->fail == VG_AF_REBOOT || v->fail == VG_AF_LATE || v->fail == VG_AF_STALE)
		return 0;
	if (h->n < h->max)
		h->v[h->n++] = *v;
	return 0;
}

/*
 * What this verifier proved of @a's AK (docs/attest-ear.md): every stored
 * agent proved it by ActivateCredential to its EK at registration
 * (register.c); the EK's certificate, kept with it, is checked against
 * --ek-ca now (as the CA is now: an agent registered before --ek-ca was
 * given, or whose EK no longer chains, is not certified).
 */
static unsigned int ak_identity(const struct verifier *vf, const struct vg_store_agent *a)
{
	struct vg_attest_verdict v;
	int r;

	if (!vf->ek_ca || !a->ek_cert_len)
		return VG_EAR_ID_EK;
	vg_attest_verdict_init(&v);
	r = vg_attest_ek_check(a->ek_pub, a->ek_pub_len, a->ek_cert, a->ek_cert_len, vf->ek_ca, &v);
	vg_attest_verdict_release(&v);
	return r == 0 ? VG_EAR_ID_EK_CA : VG_EAR_ID_EK;
}

static void policy_id(struct verifier *vf, const char *name, char *out, size_t cap)
{
	char err[256];
	struct vg_refpolicy *p;

	out[0] = 0;
	if (!*name)
		return;
	p = vf_policy_lookup(vf, name, err, sizeof(err));
	snprintf(out, cap, "%s@sha256:%s", name, p ? vf_policy_digest(vf, p) : "");
}

int vf_ear_agent(struct verifier *vf, const char *id, const char *nonce, char **ret, size_t *len,
		 char *err, size_t errlen)
{
	struct vg_store_agent *a = malloc(sizeof(*a));
	struct hist h = { 0 };
	struct vg_attest_verdict v;
	struct vg_diag d = { 0 };
	struct vg_ear e = { .submod = id, .agent_id = id, .developer = "vigil", .build = EAR_BUILD,
			    .nonce = nonce, .iat = vf_now(), .v = &v };
	char pid[VF_EAR_POLICY_ID_MAX];
	int r, status = 500;

	vg_attest_verdict_init(&v);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	if (!vg_privsep_ear_alg())
		return free(a), vf_ear_sign(&e, ret, len, err, errlen);	/* 501 */
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, a, &d);
	if (r == 0 && a->state == VG_AGENT_FAILED && a->failure_count) {
		h.max = a->failure_count < VG_ATTEST_FAILURES_MAX ? (size_t)a->failure_count :
								    VG_ATTEST_FAILURES_MAX;
		h.v = calloc(h.max, sizeof(*h.v));
		/* a few more lines, for events recorded after the failure */
		/* store round trip (store_client.c), the rows streamed back */
		r = h.v ? vg_store_verdict_list(vf->store, id, h.max + 8, hist_cb, &h, &d) : -ENOMEM;
	}
	if (r == 0)
		policy_id(vf, a->policy, pid, sizeof(pid));
	pthread_mutex_unlock(&vf->lock);
	if (r < 0) {
		snprintf(err, errlen, "%s", r == -ENOENT ? "no such agent" :
			 r == -ENOMEM ? "out of memory" : d.msg);
		status = r == -ENOENT ? 404 : 500;
		goto out;
	}
	e.state = vg_agent_state_name(a->state);
	e.policy_id = pid[0] ? pid : NULL;
	e.identity = ak_identity(vf, a);
	if (a->state == VG_AGENT_REGISTERED) {
		e.subject = VG_EAR_NOT_YET;
	} else if (a->state == VG_AGENT_UNREACHABLE) {
		struct vg_attest_verdict c;

		e.subject = VG_EAR_UNREACHABLE;
		vg_attest_verdict_init(&c);
		vg_attest_fail(&c, VG_AF_COMM, "%s", a->last_msg);
		if (vg_attest_verdict_add(&v, &c) < 0)
			goto oom;
	} else if (a->state == VG_AGENT_FAILED) {
		for (size_t i = 0; i < h.n; i++) {
			struct vg_attest_verdict f;

			vg_attest_verdict_init(&f);
			f.fail = h.v[i].fail;
			f.entry = h.v[i].entry;
			memcpy(f.path, h.v[i].path, sizeof(f.path));
			memcpy(f.digest, h.v[i].digest, sizeof(f.digest));
			memcpy(f.msg, h.v[i].msg, sizeof(f.msg));
			if (vg_attest_verdict_add(&v, &f) < 0)
				goto oom;
		}
		if (!h.n) {
			/* no history line (a store written before failure_count): the row's */
			struct vg_attest_verdict f;

			vg_attest_verdict_init(&f);
			vg_attest_fail(&f, a->last_fail, "%s", a->last_msg);
			if (vg_attest_verdict_add(&v, &f) < 0)
				goto oom;
		}
		if (a->failure_count > v.failures)
			v.failures = a->failure_count;	/* those past the list's bound */
	}
	status = vf_ear_sign(&e, ret, len, err, errlen);
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
	status = 500;
out:
	vg_attest_verdict_release(&v);
	free(h.v);
	free(a);
	return status;
}

int vf_ear_evidence(struct verifier *vf, const struct vg_api_evidence *e, const char *policy_id,
		    const struct vg_attest_verdict *v, char **ret, size_t *len, char *err,
		    size_t errlen)
{
	struct vg_ear ear = { .submod = "evidence", .developer = "vigil", .build = EAR_BUILD,
			      .nonce = e->eat_nonce[0] ? e->eat_nonce : NULL, .iat = vf_now(),
			      .policy_id = policy_id && *policy_id ? policy_id : NULL, .v = v };
	struct vg_store_agent *a = malloc(sizeof(*a));
	struct vg_diag d = { 0 };
	int r, status;

	/* the AK sent: a registered agent's (proven at its registration), or nobody's */
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	pthread_mutex_lock(&vf->lock);
	/* store round trip (store_client.c) */
	r = vg_store_agent_find(vf->store, VG_STORE_KEY_AK, e->ak, e->ak_len, "", a, &d);
	pthread_mutex_unlock(&vf->lock);
	if (r < 0 && r != -ENOENT) {
		snprintf(err, errlen, "%s", d.msg[0] ? d.msg : "store");
		free(a);
		return 500;
	}
	if (r == 0) {
		ear.identity = ak_identity(vf, a);
		ear.agent_id = a->id;
	}
	status = vf_ear_sign(&ear, ret, len, err, errlen);
	free(a);
	return status;
}
