// SPDX-License-Identifier: MIT
/*
 * register.c - registration of an agent (POST /v1/agents), as a function
 * of the request body that returns the answer, so that it is tested
 * without HTTP (tests/unit/test_verifier_register.c). The protocol: the
 * agent's identity (EK public, EK certificate, AK public) from its
 * /v1/identity; the bindings (bind_check: a known id keeps its EK, an EK
 * is one agent id's, a pushing agent's credential registers one id); the
 * EK certificate must match the EK and chain to --ek-ca when given; the AK
 * must be a restricted signing key; then MakeCredential for the AK's name
 * under the EK, and the agent must prove with HMAC(secret, id) that its
 * TPM activated it (ActivateCredential: the AK is in the TPM of this EK).
 * Only then is the agent stored, as registered, with the verifier's bank
 * and PCRs, the bindings checked again under the lock of that write. Pull
 * and push registration (push.c) are these same functions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "verifier.h"

/* HTTP statuses of the answers (rest.c sends them) */
enum {
	ST_CREATED = 201,
	ST_BAD_REQUEST = 400,
	ST_FORBIDDEN = 403,
	ST_CONFLICT = 409,
	ST_INTERNAL = 500,
	ST_BAD_GATEWAY = 502,
};

/* The agent record of a registration that passed. */
static void agent_fill(const struct verifier *vf, const struct vg_api_register *rq,
		       const struct vg_api_identity *idn, struct vg_store_agent *a)
{
	snprintf(a->id, sizeof(a->id), "%s", rq->id);
	snprintf(a->url, sizeof(a->url), "%s", rq->url);
	snprintf(a->policy, sizeof(a->policy), "%s", rq->policy);
	memcpy(a->ek_pub, idn->ek_pub, idn->ek_pub_len);
	a->ek_pub_len = idn->ek_pub_len;
	memcpy(a->ek_cert, idn->ek_cert, idn->ek_cert_len);
	a->ek_cert_len = idn->ek_cert_len;
	memcpy(a->ak_pub, idn->ak_pub, idn->ak_pub_len);
	a->ak_pub_len = idn->ak_pub_len;
	a->state = VG_AGENT_REGISTERED;
	a->bank = vf->bank;
	a->mask = vf->mask;
	vg_attest_logstate_init(&a->st.log, vf->bank);
	a->registered_at = vf_now();
}

/*
 * Under vf->lock: may @id be registered with the identity @idn, by the
 * pushing agent's credential @cred (NULL: pulled, by an operator)?
 *  - a known id keeps its EK (409 identity.ek_changed);
 *  - an EK is one agent id's: another id holding it is named (403
 *    identity.ek_bound; an operator removes that agent to enroll the TPM
 *    under another id);
 *  - a push credential registers one agent id: another id registered with
 *    it is named (403; "none", no authentication at all, binds nothing);
 *  - @fresh (push, the proof given): the id must still be unknown (409).
 * Return: 0, or the HTTP status of the refusal (@ans).
 */
static unsigned int bind_check(struct verifier *vf, const char *id,
			       const struct vg_api_identity *idn, const char *cred, bool fresh,
			       struct vf_answer *ans)
{
	struct vg_store_agent *o = malloc(sizeof(*o));
	struct vg_diag d = { 0 };
	char url[VG_API_URL_MAX], msg[512];
	int r;

	if (!o)
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	/* store round trip (store_client.c) */
	r = vg_store_agent_get(vf->store, id, o, &d);
	if (r == 0 && (o->ek_pub_len != idn->ek_pub_len ||
		       memcmp(o->ek_pub, idn->ek_pub, idn->ek_pub_len) != 0)) {
		vf_answer_failure(ans, ST_CONFLICT, VG_AF_EK_CHANGED, "agent id is registered with "
				  "another EK: remove it first");
		goto out;
	}
	if (r == 0 && fresh) {
		vf_answer_error(ans, ST_CONFLICT, "this agent id was registered meanwhile");
		goto out;
	}
	if (r == -ENOENT || r == 0)
		/* store round trip (store_client.c) */
		r = vg_store_agent_find(vf->store, VG_STORE_KEY_EK, idn->ek_pub, idn->ek_pub_len, id,
					o, &d);
	if (r == 0) {
		snprintf(msg, sizeof(msg), "this TPM's EK is registered as agent '%s': one TPM is "
			 "one agent (an operator removes '%s' to enroll it under another id)", o->id,
			 o->id);
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_EK_BOUND, msg);
		goto out;
	}
	if (r == -ENOENT && cred && strcmp(cred, "none") != 0) {
		snprintf(url, sizeof(url), "%s%s", VF_PUSH_URL, cred);
		/* store round trip (store_client.c) */
		r = vg_store_agent_find(vf->store, VG_STORE_KEY_URL, (const uint8_t *)url, strlen(url),
					id, o, &d);
		if (r == 0) {
			snprintf(msg, sizeof(msg), "this credential registered agent '%s': a push "
				 "credential registers one agent id (an operator removes '%s' to let "
				 "it register another)", o->id, o->id);
			vf_answer_error(ans, ST_FORBIDDEN, msg);
			goto out;
		}
	}
	if (r != -ENOENT) {
		vf_answer_error(ans, ST_INTERNAL, d.msg[0] ? d.msg : "store");
		goto out;
	}
	ans->code = 0;
out:
	free(o);
	return ans->code;
}

unsigned int vf_register_challenge(struct verifier *vf, const char *id,
				   const struct vg_api_identity *idn, const char *cred,
				   struct vg_api_activate *act, uint8_t mac[32],
				   struct vf_answer *ans)
{
	size_t idl = sizeof(act->id_object), esl = sizeof(act->enc_secret), nl;
	struct vg_attest_verdict v;
	struct vg_attest_ak *ak = NULL;
	struct vg_diag d = { 0 };
	uint8_t secret[32];
	unsigned int ml = 0;
	const uint8_t *name;

	vg_attest_verdict_init(&v);
	ans->code = 0;
	pthread_mutex_lock(&vf->lock);
	(void)bind_check(vf, id, idn, cred, false, ans);
	pthread_mutex_unlock(&vf->lock);
	if (ans->code)
		goto out;
	if (idn->ek_cert_len == 0) {
		if (vf->ek_ca) {
			vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_EK_CERT, "the TPM has no EK "
					  "certificate and --ek-ca requires one");
			goto out;
		}
	} else if (vg_attest_ek_check(idn->ek_pub, idn->ek_pub_len, idn->ek_cert, idn->ek_cert_len,
				      vf->ek_ca, &v) != 0) {
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_EK_CERT, v.msg);
		goto out;
	}
	if (vg_attest_ak_load(idn->ak_pub, idn->ak_pub_len, &ak, &d) < 0) {
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_AK, d.msg);
		goto out;
	}
	name = vg_attest_ak_name(ak, &nl);
	if (RAND_bytes(secret, sizeof(secret)) != 1 ||
	    vg_attest_make_credential(idn->ek_pub, idn->ek_pub_len, name, nl, secret, sizeof(secret),
				      act->id_object, &idl, act->enc_secret, &esl, &d) < 0) {
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_EK_CERT,
				  d.msg[0] ? d.msg : "MakeCredential");
		goto out;
	}
	act->id_len = idl;
	act->es_len = esl;
	/* what the agent must answer: only the TPM of this EK can recover the secret */
	if (!HMAC(EVP_sha256(), secret, sizeof(secret), (const uint8_t *)id, strlen(id), mac, &ml) ||
	    ml != 32)
		vf_answer_error(ans, ST_INTERNAL, "HMAC");
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	vg_attest_ak_free(ak);
	vg_attest_verdict_release(&v);
	return ans->code;
}

unsigned int vf_register_proven(struct verifier *vf, const char *id, const char *url,
				const char *policy, const struct vg_api_identity *idn,
				const char *cred, struct vf_answer *ans)
{
	struct vg_store_agent *a = calloc(1, sizeof(*a));
	struct vg_api_register rq = { 0 };
	struct vg_diag d = { 0 };
	int r = 0;

	if (!a)
		return vf_answer_error(ans, ST_INTERNAL, "out of memory");
	snprintf(rq.id, sizeof(rq.id), "%s", id);
	snprintf(rq.url, sizeof(rq.url), "%s", url);
	snprintf(rq.policy, sizeof(rq.policy), "%s", policy);
	agent_fill(vf, &rq, idn, a);
	ans->code = 0;
	/* the bindings again, with the write: two registrations at once do not both pass */
	pthread_mutex_lock(&vf->lock);
	if (!bind_check(vf, id, idn, cred, cred != NULL, ans))
		/* store round trip (store_client.c) */
		r = vg_store_agent_put(vf->store, a, &d);
	pthread_mutex_unlock(&vf->lock);
	if (ans->code) {
		/* refused: said */
	} else if (r < 0) {
		vf_answer_error(ans, ST_INTERNAL, d.msg);
	} else {
		ans->code = ST_CREATED;
		ans->body = vf_json_agent(a, 0);
	}
	free(a);
	return ans->code;
}

unsigned int vf_register(struct verifier *vf, const char *body, size_t len,
			 struct vf_answer *ans)
{
	struct vg_api_identity *idn = calloc(1, sizeof(*idn));
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct vg_api_register rq;
	uint8_t mac[32], proof[32];
	long code;
	struct vg_diag d = { 0 };
	struct http_answer b = { 0 };
	char u[1024], err[512], said[161], *ab = NULL;

	ans->code = 0;
	ans->body = NULL;
	if (!idn || !act) {
		vf_answer_error(ans, ST_INTERNAL, "out of memory");
		goto out;
	}
	if (vg_api_register_parse((const uint8_t *)body, len, &rq, &d) < 0) {
		vf_answer_error(ans, d.err == -ENOMEM ? ST_INTERNAL : ST_BAD_REQUEST, d.msg);
		goto out;
	}
	snprintf(u, sizeof(u), "%s/v1/identity", rq.url);
	code = vf->fetch(vf, u, NULL, true, 0, &b, err, sizeof(err));
	if (code != 200) {
		if (code > 0) {
			http_said(&b, said, sizeof(said));
			snprintf(err, sizeof(err), "identity: HTTP %ld: %s", code, said);
		}
		vf_answer_failure(ans, ST_BAD_GATEWAY, VG_AF_COMM, err);
		goto out;
	}
	if (vg_api_identity_parse(b.p, b.len, idn, &d) < 0) {
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_MALFORMED, d.msg);
		goto out;
	}
	/* the id is the agent's: learnt from it, or the operator's when they agree */
	if (!rq.id[0] && !idn->id[0]) {
		vf_answer_error(ans, ST_BAD_REQUEST, "the agent does not say its id: give one "
				"(the agent's --id)");
		goto out;
	}
	if (!rq.id[0]) {
		memcpy(rq.id, idn->id, sizeof(rq.id));
	} else if (idn->id[0] && strcmp(rq.id, idn->id) != 0) {
		snprintf(err, sizeof(err), "agent id mismatch: registering '%.127s', but the agent at "
			 "%.150s says it is '%.127s' (its --id; default the host name)", rq.id, rq.url,
			 idn->id);
		vf_answer_error(ans, ST_CONFLICT, err);
		goto out;
	}
	if (vf_register_challenge(vf, rq.id, idn, NULL, act, mac, ans))
		goto out;
	if (vg_api_activate_build(act, &ab) < 0) {
		vf_answer_error(ans, ST_INTERNAL, "out of memory");
		goto out;
	}
	snprintf(u, sizeof(u), "%s/v1/activate", rq.url);
	free(b.p);
	code = vf->fetch(vf, u, ab, true, 0, &b, err, sizeof(err));
	if (code != 200 || vg_api_proof_parse(b.p, b.len, proof, &d) < 0 ||
	    CRYPTO_memcmp(proof, mac, sizeof(mac)) != 0) {
		if (code < 0)
			snprintf(said, sizeof(said), "%.150s", err);
		else if (code != 200)
			http_said(&b, said, sizeof(said));
		else
			snprintf(said, sizeof(said), "%.150s", d.msg[0] ? d.msg : "wrong answer");
		snprintf(err, sizeof(err), "the agent did not prove the AK is in the TPM of this EK "
			 "(ActivateCredential: %s)", said);
		vf_answer_failure(ans, ST_FORBIDDEN, VG_AF_CREDENTIAL, err);
		goto out;
	}
	vf_register_proven(vf, rq.id, rq.url, rq.policy, idn, NULL, ans);
out:
	OPENSSL_cleanse(mac, sizeof(mac));
	free(ab);
	free(b.p);
	free(idn);
	free(act);
	return ans->code;
}
