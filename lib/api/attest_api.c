// SPDX-License-Identifier: MIT
/*
 * attest_api.c - the REST messages between vigil-verifier, vigil-agent and
 * operators (attest_api.h): strict parsers of what a peer sends and the
 * builders of what we send, with no HTTP and no I/O, so that the daemons
 * stay thin and every byte a hostile peer controls is parsed in one place
 * that a fuzzer can reach.
 *
 * JSON goes through json-c with JSON_TOKENER_STRICT, one object per
 * buffer, at most VG_API_MSG_MAX bytes; base64 through vg_attest_b64_decode
 * into fixed-size fields (a value that does not fit is refused, never
 * truncated): attest_api_json.c. Here the messages of registration and
 * rounds; the routes are attest_api_routes.c's, the stateless evidence
 * attest_api_evidence.c's, push mode's attest_api_push.c's.
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

bool vg_api_id_ok(const char *s, size_t len)
{
	if (!s || len == 0 || len >= VG_API_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* ---- operator -> verifier ---- */

static bool url_ok(const char *u)
{
	const char *host;

	if (strncmp(u, "http://", 7) == 0)
		host = u + 7;
	else if (strncmp(u, "https://", 8) == 0)
		host = u + 8;
	else
		return false;
	if (!*host || *host == '/' || *host == ':')
		return false;
	for (const char *c = u; *c; c++)
		if (*c <= 0x20 || *c >= 0x7f || *c == '?' || *c == '#' || *c == '\\')
			return false;
	return true;
}

static const struct vg__api_field register_fields[] = {
	/* absent or "": the verifier takes the id the agent's identity says */
	VG__API_TEXT(struct vg_api_register, id, "id", VG__API_ID, false),
	VG__API_TEXT(struct vg_api_register, url, "url", VG__API_STR, true),
	VG__API_TEXT(struct vg_api_register, policy, "policy", VG__API_ID, false),
};

int vg_api_register_parse(const uint8_t *body, size_t len, struct vg_api_register *ret,
			  struct vg_diag *diag)
{
	struct vg_api_register a;
	int r = vg__api_decode_body(body, len, "register", register_fields, VG_ARRAY_SIZE(register_fields), &a,
				    sizeof(a), diag);

	if (r == 0 && !url_ok(a.url))
		r = vg_diag_set(diag, -EBADMSG, "register: url: http://HOST[:PORT] or https://, "
				"printable, without spaces, query or fragment");
	if (r == 0)
		*ret = a;
	return r;
}

struct policy_assign {
	char name[VG_API_ID_MAX];
};

static const struct vg__api_field policy_assign_fields[] = {
	VG__API_TEXT(struct policy_assign, name, "policy", VG__API_ID, true),
};

int vg_api_policy_assign_parse(const uint8_t *body, size_t len, char name[VG_API_ID_MAX],
			       struct vg_diag *diag)
{
	struct policy_assign a;
	int r = vg__api_decode_body(body, len, "policy", policy_assign_fields,
				    VG_ARRAY_SIZE(policy_assign_fields), &a, sizeof(a), diag);

	if (r == 0)
		memcpy(name, a.name, sizeof(a.name));
	return r;
}

/* ---- verifier -> agent ---- */

int vg_api_quote_query_parse(const char *nonce, const char *bank, const char *mask,
			     struct vg_api_quote_req *ret, struct vg_diag *diag)
{
	struct vg_api_quote_req q;
	size_t nl, ml;
	int b;

	if (!nonce || !bank || !mask)
		return vg_diag_set(diag, -EBADMSG, "quote: nonce, bank and mask are required");
	memset(&q, 0, sizeof(q));
	nl = strlen(nonce);
	if (nl % 2 || nl / 2 < VG_API_NONCE_MIN || nl / 2 > VG_ATTEST_NONCE_MAX)
		return vg_diag_set(diag, -EBADMSG, "quote: nonce must be %d to %d bytes in hex",
				   VG_API_NONCE_MIN, VG_ATTEST_NONCE_MAX);
	for (size_t i = 0; i < nl / 2; i++) {
		int hi = vg_hex_digit((unsigned char)nonce[2 * i]);
		int lo = vg_hex_digit((unsigned char)nonce[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return vg_diag_set(diag, -EBADMSG, "quote: nonce is not hex");
		q.nonce[i] = (uint8_t)(hi << 4 | lo);
	}
	q.nonce_len = nl / 2;
	b = vg_hash_by_name(bank);
	if (b < 0 || !vg_attest_tpm_alg((unsigned int)b))
		return vg_diag_set(diag, -EBADMSG, "quote: bank: sha1, sha256, sha384, sha512 or sm3-256");
	q.bank = (unsigned int)b;
	ml = strlen(mask);
	if (ml == 0 || ml > 6)
		return vg_diag_set(diag, -EBADMSG, "quote: mask: 1 to 6 hex digits (PCRs 0-23)");
	for (size_t i = 0; i < ml; i++) {
		int v = vg_hex_digit((unsigned char)mask[i]);

		if (v < 0)
			return vg_diag_set(diag, -EBADMSG, "quote: mask is not hex");
		q.mask = q.mask << 4 | (uint32_t)v;
	}
	if (!q.mask)
		return vg_diag_set(diag, -EBADMSG, "quote: mask selects no PCR");
	*ret = q;
	return 0;
}

int vg_api_quote_query_build(const struct vg_api_quote_req *q, char *buf, size_t cap)
{
	char hex[2 * VG_ATTEST_NONCE_MAX + 1];
	int n;

	if (q->nonce_len > VG_ATTEST_NONCE_MAX)
		return -ENOSPC;
	vg_hex_encode(q->nonce, q->nonce_len, hex);
	n = snprintf(buf, cap, "nonce=%s&bank=%s&mask=%" PRIx32, hex, vg_hash_name(q->bank),
		     q->mask);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

int vg_api_log_query_parse(const char *s, uint64_t *ret, struct vg_diag *diag)
{
	uint64_t v = 0;

	if (!s) {
		*ret = 0;
		return 0;
	}
	if (!*s)
		return vg_diag_set(diag, -EBADMSG, "log: offset is empty");
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return vg_diag_set(diag, -EBADMSG, "log: offset must be decimal digits");
		if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)(*c - '0')) / 10)
			return vg_diag_set(diag, -EBADMSG, "log: offset larger than 2^63-1");
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*ret = v;
	return 0;
}

static const struct vg__api_field activate_fields[] = {
	VG__API_BYTES(struct vg_api_activate, id_object, id_len, "id_object", true),
	VG__API_BYTES(struct vg_api_activate, enc_secret, es_len, "enc_secret", true),
};

int vg_api_activate_parse(const uint8_t *body, size_t len, struct vg_api_activate *ret,
			  struct vg_diag *diag)
{
	return vg__api_decode_body(body, len, "activate", activate_fields, VG_ARRAY_SIZE(activate_fields), ret,
				   sizeof(*ret), diag);
}

long vg_api_activate_build(const struct vg_api_activate *a, char **ret)
{
	json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM;

	if (!r)
		r = vg__api_add_b64(o, "id_object", a->id_object, a->id_len);
	if (!r)
		r = vg__api_add_b64(o, "enc_secret", a->enc_secret, a->es_len);
	return vg__api_finish(o, r, ret);
}

/* ---- agent -> verifier ---- */

static const struct vg__api_field identity_fields[] = {
	VG__API_TEXT(struct vg_api_identity, id, "id", VG__API_ID, false),
	VG__API_BYTES(struct vg_api_identity, ek_pub, ek_pub_len, "ek_pub", true),
	VG__API_BYTES(struct vg_api_identity, ek_cert, ek_cert_len, "ek_cert", false),
	VG__API_BYTES(struct vg_api_identity, ak_pub, ak_pub_len, "ak_pub", true),
};

int vg_api_identity_parse(const uint8_t *buf, size_t len, struct vg_api_identity *ret,
			  struct vg_diag *diag)
{
	struct vg_api_identity *a = malloc(sizeof(*a));	/* a few KiB: not on the stack */
	int r = a ? vg__api_decode_body(buf, len, "identity", identity_fields, VG_ARRAY_SIZE(identity_fields),
					a, sizeof(*a), diag) : -ENOMEM;

	if (r == 0)
		*ret = *a;
	free(a);
	return r;
}

long vg_api_identity_build(const struct vg_api_identity *id, char **ret)
{
	json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM;

	if (!r && id->id[0])
		r = vg__api_add_str(o, "id", id->id);
	if (!r)
		r = vg__api_add_b64(o, "ek_pub", id->ek_pub, id->ek_pub_len);
	if (!r)
		r = vg__api_add_b64(o, "ek_cert", id->ek_cert, id->ek_cert_len);
	if (!r)
		r = vg__api_add_b64(o, "ak_pub", id->ak_pub, id->ak_pub_len);
	return vg__api_finish(o, r, ret);
}

struct proof {
	char hex[2 * 32 + 1];
};

static const struct vg__api_field proof_fields[] = {
	VG__API_TEXT(struct proof, hex, "proof", VG__API_STR, true),
};

int vg_api_proof_parse(const uint8_t *buf, size_t len, uint8_t proof[32], struct vg_diag *diag)
{
	struct proof p;
	int r = vg__api_decode_body(buf, len, "activate answer", proof_fields, VG_ARRAY_SIZE(proof_fields), &p,
				    sizeof(p), diag);

	if (r == 0 && (strlen(p.hex) != 64 || vg_hex_decode(p.hex, proof, 32) != 32))
		r = vg_diag_set(diag, -EBADMSG, "activate answer: proof is not 32 bytes of hex");
	return r;
}

long vg_api_proof_build(const uint8_t proof[32], char **ret)
{
	json_object *o = json_object_new_object();
	char hex[2 * 32 + 1];
	int r = o ? 0 : -ENOMEM;

	vg_hex_encode(proof, 32, hex);
	if (!r)
		r = vg__api_add_str(o, "proof", hex);
	return vg__api_finish(o, r, ret);
}

/* "0".."23", no sign, no leading zero. Return: the PCR, -1. */
static int pcr_key(const char *k)
{
	if (k[0] < '0' || k[0] > '9')
		return -1;
	if (!k[1])
		return k[0] - '0';
	if (k[0] == '0' || k[1] < '0' || k[1] > '9' || k[2])
		return -1;
	int n = (k[0] - '0') * 10 + (k[1] - '0');

	return n < VG_PCR_COUNT ? n : -1;
}

int vg_api_quote_parse(const uint8_t *buf, size_t len, unsigned int bank, struct vg_api_quote *ret,
		       struct vg_diag *diag)
{
	static const char what[] = "quote answer";
	struct vg_api_quote *q;
	json_object *o = NULL, *pcrs;
	size_t hs = vg_hash_size(bank);
	char bn[32];
	long n;
	int r = 0;

	if (!hs || !vg_attest_tpm_alg(bank))
		return vg_diag_set(diag, -EINVAL, "quote answer: bank %u", bank);
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	r = vg__api_parse_object(buf, len, what, &o, diag);
	if (r < 0) {
		free(q);
		return r;
	}
	q->bank = bank;
	n = vg__api_get_b64(o, what, "attest", q->attest, sizeof(q->attest), diag);
	if (n == 0 || n == -ENOENT)
		n = vg_diag_set(diag, -EBADMSG, "quote answer: \"attest\" (base64) is required");
	if (n > 0) {
		q->attest_len = (size_t)n;
		n = vg__api_get_b64(o, what, "sig", q->sig, sizeof(q->sig), diag);
		if (n == 0 || n == -ENOENT)
			n = vg_diag_set(diag, -EBADMSG, "quote answer: \"sig\" (base64) is required");
		q->sig_len = n > 0 ? (size_t)n : 0;
	}
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	r = vg__api_get_str(o, what, "bank", bn, sizeof(bn), diag);
	if (r == -ENOENT)
		r = 0;
	else if (r >= 0 && vg_hash_by_name(bn) != (int)bank)
		r = vg_diag_set(diag, -EBADMSG, "quote answer: bank \"%s\", %s was asked for", bn,
				vg_hash_name(bank));
	if (r < 0)
		goto out;
	r = 0;
	if (!json_object_object_get_ex(o, "pcrs", &pcrs) || !json_object_is_type(pcrs, json_type_object)) {
		r = vg_diag_set(diag, -EBADMSG, "quote answer: \"pcrs\" (an object) is required");
		goto out;
	}
	json_object_object_foreach(pcrs, k, val) {
		int i = pcr_key(k);
		struct vg_digest *d;

		if (i < 0) {
			r = vg_diag_set(diag, -EBADMSG, "quote answer: PCR \"%.8s\" is not 0-23", k);
			goto out;
		}
		if (!json_object_is_type(val, json_type_string) ||
		    (size_t)json_object_get_string_len(val) != 2 * hs) {
			r = vg_diag_set(diag, -EBADMSG, "quote answer: PCR %d is not %zu bytes of hex", i,
					hs);
			goto out;
		}
		d = &q->pcr[i];
		if (vg_hex_decode(json_object_get_string(val), d->bytes, sizeof(d->bytes)) != (int)hs) {
			r = vg_diag_set(diag, -EBADMSG, "quote answer: PCR %d is not hex", i);
			goto out;
		}
		d->algo = (uint8_t)bank;
		d->len = (uint8_t)hs;
		q->have |= 1u << i;
	}
	*ret = *q;
out:
	json_object_put(o);
	free(q);
	return r < 0 ? r : 0;
}

long vg_api_quote_build(const struct vg_api_quote *q, char **ret)
{
	json_object *o = json_object_new_object(), *pcrs = json_object_new_object();
	int r = o && pcrs ? 0 : -ENOMEM;

	if (!r)
		r = vg__api_add_b64(o, "attest", q->attest, q->attest_len);
	if (!r)
		r = vg__api_add_b64(o, "sig", q->sig, q->sig_len);
	if (!r)
		r = vg__api_add_str(o, "bank", vg_hash_name(q->bank));
	for (unsigned int i = 0; !r && i < VG_PCR_COUNT; i++) {
		char k[4], hex[2 * VG_HASH_MAX_DIGEST + 1];

		if (!(q->have & (1u << i)))
			continue;
		snprintf(k, sizeof(k), "%u", i);
		vg_hex_encode(q->pcr[i].bytes, q->pcr[i].len, hex);
		r = vg__api_add_str(pcrs, k, hex);
	}
	if (!r) {
		if (json_object_object_add(o, "pcrs", pcrs) < 0)
			r = -ENOMEM;
		else
			pcrs = NULL;
	}
	json_object_put(pcrs);
	return vg__api_finish(o, r, ret);
}

void vg_api_quote_pcrs(const struct vg_api_quote *q, struct vg_pcr_values *pv)
{
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		if (!(q->have & (1u << i)))
			continue;
		pv->v[q->bank][i] = q->pcr[i];
		pv->have[q->bank] |= 1u << i;
	}
}

