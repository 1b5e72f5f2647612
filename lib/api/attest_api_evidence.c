// SPDX-License-Identifier: MIT
/*
 * attest_api_evidence.c - POST /v1/verify/evidence's request in Keylime's
 * shape (attest_api.h: vg_api_evidence_parse): the quote (Keylime's
 * r<attest>:<sig>:<pcrs> string or vigil-agent's object), the nonce, the
 * AK, tpm_policy's mask, the runtime policy (a document or a held one's
 * name), mb_policy (a measured-boot reference state), the ascii list, the
 * boot log; vigil's "ear" and "eat_nonce".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "internal.h"
#include "attest_api_json.h"
#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/hash.h"

int vg_api_keylime_quote_parse(const char *s, struct vg_api_evidence *e, struct vg_diag *diag)
{
	static const char what[] = "Keylime quote";
	const char *c1, *c2;
	uint8_t *b[3] = { NULL };
	long n[3] = { 0 };
	int r = 0;

	if (s[0] != 'r' || !(c1 = strchr(s + 1, ':')) || !(c2 = strchr(c1 + 1, ':')) ||
	    strchr(c2 + 1, ':'))
		return vg_diag_set(diag, -EBADMSG, "%s: not 'r<base64>:<base64>:<base64>'", what);
	{
		char *part[3] = { strndup(s + 1, (size_t)(c1 - s - 1)),
				  strndup(c1 + 1, (size_t)(c2 - c1 - 1)), strdup(c2 + 1) };

		for (int i = 0; i < 3; i++) {
			n[i] = part[i] ? vg_attest_b64_decode(part[i], &b[i]) : -ENOMEM;
			free(part[i]);
			if (n[i] <= 0 && r == 0)
				r = n[i] == -ENOMEM ? -ENOMEM : -EBADMSG;
		}
	}
	if (r == -ENOMEM) {
		r = vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	} else if (r < 0) {
		r = vg_diag_set(diag, -EBADMSG, "%s: a part is not base64", what);
	} else if ((size_t)n[0] > sizeof(e->attest) || (size_t)n[1] > sizeof(e->sig)) {
		r = vg_diag_set(diag, -EBADMSG, "%s: attest or signature too large", what);
	} else {
		memcpy(e->attest, b[0], (size_t)n[0]);
		e->attest_len = (size_t)n[0];
		memcpy(e->sig, b[1], (size_t)n[1]);
		e->sig_len = (size_t)n[1];
		r = vg_attest_pcrs_tpm2tools(b[2], (size_t)n[2], &e->pcrs, diag);
		if (r < 0)
			r = vg_diag_set(diag, -EBADMSG, "%s: PCR values: %s", what,
					diag ? diag->msg : "malformed");
	}
	for (int i = 0; i < 3; i++)
		free(b[i]);
	return r;
}

/* Keylime's tpm_policy: {"mask": "0x..."} and nothing vigil would not enforce */
static int tpm_policy(const char *s, uint32_t *mask, struct vg_diag *diag)
{
	static const char what[] = "evidence: tpm_policy";
	json_object *o = NULL;
	int r = vg__api_parse_object((const uint8_t *)s, strlen(s), what, &o, diag);

	if (r < 0)
		return r;
	json_object_object_foreach(o, k, v) {
		const char *m;
		char *end;
		unsigned long x;

		if (strcmp(k, "mask") != 0) {
			r = vg_diag_set(diag, -EBADMSG, "%s: PCR %s: pinned PCR values are not judged "
					"here (pin boot PCRs in the runtime policy's \"boot_pcrs\")",
					what, k);
			break;
		}
		m = json_object_get_string(v);
		if (!json_object_is_type(v, json_type_string) || strncmp(m, "0x", 2) != 0 ||
		    !m[2] || strlen(m) > 8) {
			r = vg_diag_set(diag, -EBADMSG, "%s: mask is \"0x\" and hex", what);
			break;
		}
		x = strtoul(m + 2, &end, 16);
		if (*end || x == 0 || x >= (1ul << 24)) {
			r = vg_diag_set(diag, -EBADMSG, "%s: mask is not PCRs 0-23", what);
			break;
		}
		*mask = (uint32_t)x;
	}
	json_object_put(o);
	return r;
}

int vg_api_evidence_parse(const uint8_t *body, size_t len, struct vg_api_evidence *e,
			  struct vg_diag *diag)
{
	static const char what[] = "evidence";
	json_object *o = NULL, *data, *q;
	char type[16], hash[32], *s = NULL;
	long n;
	int r, bank;

	memset(e, 0, sizeof(*e));
	r = vg__api_parse_object_max(body, len, VG_API_EVIDENCE_MAX, what, &o, diag);
	if (r < 0)
		return r;
	r = vg__api_get_str(o, what, "type", type, sizeof(type), diag);
	if (r == -ENOENT || (r >= 0 && strcmp(type, "tpm") != 0)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: \"type\" must be \"tpm\"");
		goto out;
	}
	if (r < 0)
		goto out;
	if (!json_object_object_get_ex(o, "data", &data) ||
	    !json_object_is_type(data, json_type_object)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: \"data\" (an object) is required");
		goto out;
	}
	/* vigil's own: the verdict as a signed EAR, with the caller's nonce */
	if (json_object_object_get_ex(o, "ear", &q)) {
		if (!json_object_is_type(q, json_type_boolean)) {
			r = vg_diag_set(diag, -EBADMSG, "evidence: \"ear\" is not a boolean");
			goto out;
		}
		e->ear = json_object_get_boolean(q);
	}
	r = vg__api_get_str(o, what, "eat_nonce", e->eat_nonce, sizeof(e->eat_nonce), diag);
	if (r >= 0 && !vg_ear_nonce_ok(e->eat_nonce))
		r = vg_diag_set(diag, -EBADMSG, "evidence: \"eat_nonce\" must be %d to %d characters "
				"of [A-Za-z0-9._~-]", VG_EAR_NONCE_MIN, VG_EAR_NONCE_MAX);
	if (r == -ENOENT)
		e->eat_nonce[0] = 0;
	else if (r < 0)
		goto out;
	/* hash_alg: the bank of the quote's PCRs */
	r = vg__api_get_str(data, what, "hash_alg", hash, sizeof(hash), diag);
	if (r == -ENOENT)
		r = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"hash_alg\"");
	if (r < 0)
		goto out;
	bank = vg_hash_by_name(hash);
	if (bank < 0 || !vg_attest_tpm_alg((unsigned int)bank)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: hash_alg \"%s\" is not a TPM bank", hash);
		goto out;
	}
	e->bank = (unsigned int)bank;
	/* the AK: TPM2B_PUBLIC */
	n = vg__api_get_b64(data, what, "tpm_ak", e->ak, sizeof(e->ak), diag);
	if (n == -ENOENT || n == 0)
		n = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"tpm_ak\"");
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	e->ak_len = (size_t)n;
	/* the nonce: its bytes are the quote's extraData (Keylime); or nonce_hex */
	if (json_object_object_get_ex(data, "nonce_hex", &q)) {
		const char *h = json_object_get_string(q);
		int k = json_object_is_type(q, json_type_string) ?
			vg_hex_decode(h, e->nonce, sizeof(e->nonce)) : -1;

		if (k <= 0) {
			r = vg_diag_set(diag, -EBADMSG, "evidence: nonce_hex is not hex of 1-%d bytes",
					VG_ATTEST_NONCE_MAX);
			goto out;
		}
		e->nonce_len = (size_t)k;
	} else {
		char nt[VG_ATTEST_NONCE_MAX + 1];

		r = vg__api_get_str(data, what, "nonce", nt, sizeof(nt), diag);
		if (r == -ENOENT || r == 0)
			r = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"nonce\"");
		if (r < 0)
			goto out;
		memcpy(e->nonce, nt, (size_t)r);
		e->nonce_len = (size_t)r;
	}
	/* the quote: Keylime's string, or the object vigil-agent answers */
	if (!json_object_object_get_ex(data, "quote", &q)) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: missing parameter \"quote\"");
		goto out;
	}
	if (json_object_is_type(q, json_type_string)) {
		r = vg_api_keylime_quote_parse(json_object_get_string(q), e, diag);
	} else if (json_object_is_type(q, json_type_object)) {
		const char *t = json_object_to_json_string_ext(q, JSON_C_TO_STRING_PLAIN);
		struct vg_api_quote *vq = calloc(1, sizeof(*vq));

		r = vq && t ? vg_api_quote_parse((const uint8_t *)t, strlen(t), e->bank, vq, diag) :
			      vg_diag_set(diag, -ENOMEM, "evidence: out of memory");
		if (r == 0) {
			memcpy(e->attest, vq->attest, vq->attest_len);
			e->attest_len = vq->attest_len;
			memcpy(e->sig, vq->sig, vq->sig_len);
			e->sig_len = vq->sig_len;
			vg_api_quote_pcrs(vq, &e->pcrs);
		}
		free(vq);
	} else {
		r = vg_diag_set(diag, -EBADMSG, "evidence: quote is a string or an object");
	}
	if (r < 0)
		goto out;
	/* what was asked for */
	n = vg__api_dup_str(data, what, "tpm_policy", &s, diag);
	if (n > 0) {
		r = tpm_policy(s, &e->mask, diag);
		free(s);
		s = NULL;
		if (r < 0)
			goto out;
	} else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	/* Keylime's measured-boot reference state: judged as a measured_boot section */
	n = vg__api_dup_str(data, what, "mb_policy", &e->mb_policy, diag);
	if (n > 0)
		e->mb_policy_len = (size_t)n;
	else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	/* the policy: a document, or the name of one the verifier holds */
	n = vg__api_dup_str(data, what, "runtime_policy", &e->policy, diag);
	if (n > 0)
		e->policy_len = (size_t)n;
	else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	r = vg__api_get_str(data, what, "runtime_policy_name", e->policy_name, sizeof(e->policy_name), diag);
	if (r >= 0 && !vg_api_id_ok(e->policy_name, (size_t)r))
		r = vg_diag_set(diag, -EBADMSG, "evidence: runtime_policy_name is not a policy name");
	if (r < 0 && r != -ENOENT)
		goto out;
	if (e->policy && e->policy_name[0]) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: give one of runtime_policy and "
				"runtime_policy_name");
		goto out;
	}
	if (!e->policy && !e->policy_name[0] && !e->mb_policy) {
		r = vg_diag_set(diag, -EBADMSG, "evidence: give runtime_policy, runtime_policy_name "
				"or mb_policy");
		goto out;
	}
	n = vg__api_dup_str(data, what, "ima_measurement_list", &e->log, diag);
	if (n > 0)
		e->log_len = (size_t)n;
	else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	n = vg__api_dup_str(data, what, "mb_log", &s, diag);
	if (n > 0) {
		n = vg_attest_b64_decode(s, &e->mb_log);
		if (n <= 0) {
			r = vg_diag_set(diag, n == -ENOMEM ? -ENOMEM : -EBADMSG,
					"evidence: mb_log is not base64");
			goto out;
		}
		e->mb_len = (size_t)n;
	} else if (n != -ENOENT) {
		r = (int)n;
		goto out;
	}
	r = 0;
out:
	free(s);
	json_object_put(o);
	if (r < 0)
		vg_api_evidence_release(e);
	return r;
}

void vg_api_evidence_release(struct vg_api_evidence *e)
{
	if (!e)
		return;
	free(e->policy);
	free(e->log);
	free(e->mb_log);
	free(e->mb_policy);
	e->policy = e->log = e->mb_policy = NULL;
	e->mb_log = NULL;
	e->policy_len = e->log_len = e->mb_len = e->mb_policy_len = 0;
}
