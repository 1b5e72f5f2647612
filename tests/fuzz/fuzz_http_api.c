// SPDX-License-Identifier: MIT
/*
 * fuzz_http_api.c - every REST message a hostile peer sends (attest_api.h),
 * and the measurement-list chunk of a round (vg_attest_log_check).
 *
 * The first byte picks the parser (mod 13), the rest is its input:
 *  0 vg_api_route (a method byte, then the URL)   accepted ⇒ the URL is
 *    rebuilt from (endpoint, id) exactly; ids always vg_api_id_ok; and
 *    vg_api_path_decode of the same URL: accepted ⇒ no control byte, as
 *    many '/' as the path had (none decoded), the length returned
 *  1 vg_api_register_parse       accepted ⇒ id/url/policy well formed,
 *    and re-serialised JSON parses to the same struct
 *  2 vg_api_policy_assign_parse  the same
 *  3 vg_api_quote_query_parse (NUL-separated nonce, bank, mask)
 *    accepted ⇒ sizes in range; build → parse gives the same request
 *  4 vg_api_log_query_parse      accepted ⇒ digits only, value = strtoull
 *  5 vg_api_activate_parse       parse(build(x)) == x
 *  6 vg_api_identity_parse       parse(build(x)) == x
 *  7 vg_api_proof_parse          parse(build(x)) == x
 *  8 vg_api_quote_parse (bank from the next byte)   parse(build(x)) == x,
 *    every PCR value of the bank's size
 *  9 vg_attest_log_check on a chunk (no policy, nothing quoted)
 *    accepted ⇒ every entry the parser sees is counted, the offset is
 *    inside the chunk, and quoting the PCR value it reached is accepted
 *    again with the same value
 * 10 vg_api_evidence_parse       accepted ⇒ sizes in range, a policy or
 *    a policy name (one), a nonce; released without a leak
 * 11 vg_api_challenge_parse (push mode, the agent's side)
 *    parse(build(x)) == x
 * 12 vg_api_push_parse (push mode, the verifier's side)   accepted ⇒
 *    nonce and quote sizes in range; parse(build(x)) == x; released
 *    without a leak
 * Every refusal is -EBADMSG (-ENOMEM) with a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz.h"
#include "vigil/attest.h"
#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/imalog.h"

/* a NUL-terminated copy */
static char *str(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1);

	FUZZ_CHECK(s != NULL);
	memcpy(s, d, n);
	s[n] = 0;
	return s;
}

static void refused(int r, const struct vg_diag *d)
{
	FUZZ_CHECK(r == -EBADMSG || r == -ENOMEM);
	FUZZ_CHECK(d->err == r && d->msg[0]);
}

static void t_route(const uint8_t *d, size_t n)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "DELETE", "PATCH" };
	static const char *const subs[] = { [VG_API_AGENT_HISTORY] = "/history",
					    [VG_API_AGENT_REACTIVATE] = "/reactivate",
					    [VG_API_AGENT_POLICY] = "/policy",
					    [VG_API_AGENT_EAR] = "/ear",
					    [VG_API_PUSH_REGISTER] = "/register",
					    [VG_API_PUSH_ACTIVATE] = "/activate",
					    [VG_API_PUSH_NONCE] = "/nonce",
					    [VG_API_PUSH_EVIDENCE] = "/evidence" };
	struct vg_api_route rt;
	struct vg_diag dg = { 0 };
	char *url, back[512];
	int r;

	if (n < 1)
		return;
	url = str(d + 1, n - 1);
	r = vg_api_route(methods[d[0] % 5], url, &rt, &dg);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EBADMSG || r == -EOPNOTSUPP);
	if (r == 0 || r == -EOPNOTSUPP) {
		FUZZ_CHECK(rt.ep >= VG_API_AGENTS && rt.ep <= VG_API_PUSH_EVIDENCE);
		if (r == 0)	/* the role is the table's (vg_api_routes) */
			FUZZ_CHECK(rt.role == 0 || rt.role == VG_AUTH_READ ||
				   rt.role == VG_AUTH_ADMIN || rt.role == VG_AUTH_AGENT);
		if (rt.ep == VG_API_VERIFY_EVIDENCE) {
			FUZZ_CHECK(strcmp(url, "/v1/verify/evidence") == 0);
		} else if (rt.ep == VG_API_METRICS) {
			FUZZ_CHECK(strcmp(url, "/metrics") == 0);
		} else if (rt.ep >= VG_API_UI_PAGE) {
			FUZZ_CHECK(strncmp(url, "/ui/", 4) == 0 && !strpbrk(url + 4, "/%"));
		} else if (rt.ep == VG_API_AGENTS) {
			FUZZ_CHECK(strcmp(url, "/v1/agents") == 0 || strcmp(url, "/v1/agents/") == 0);
		} else {
			FUZZ_CHECK(vg_api_id_ok(rt.id, strlen(rt.id)));
			if (rt.ep == VG_API_POLICY)
				snprintf(back, sizeof(back), "/v1/policies/%s", rt.id);
			else if (rt.ep >= VG_API_PUSH_REGISTER)
				snprintf(back, sizeof(back), "/v1/push/%s%s", rt.id, subs[rt.ep]);
			else
				snprintf(back, sizeof(back), "/v1/agents/%s%s", rt.id,
					 rt.ep == VG_API_AGENT ? "" : subs[rt.ep]);
			FUZZ_CHECK(strcmp(back, url) == 0);
		}
	}
	if (r == -EBADMSG || r == -EOPNOTSUPP)
		FUZZ_CHECK(dg.err == r && dg.msg[0]);
	{
		char path[VG_API_PATH_MAX];
		size_t slashes = 0, out_slashes = 0;
		struct vg_diag pd = { 0 };
		int pr = vg_api_path_decode(url, path, sizeof(path), &pd);

		FUZZ_CHECK(pr >= 0 || pr == -EBADMSG || pr == -ENAMETOOLONG);
		if (pr < 0) {
			FUZZ_CHECK(pd.err == pr && pd.msg[0]);
		} else {
			FUZZ_CHECK(strlen(path) == (size_t)pr);
			for (const char *c = url; *c && *c != '?' && *c != '#'; c++)
				slashes += *c == '/';
			for (const char *c = path; *c; c++) {
				FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
				out_slashes += *c == '/';
			}
			FUZZ_CHECK(slashes == out_slashes);
		}
	}
	free(url);
}

static void t_register(const uint8_t *d, size_t n)
{
	struct vg_api_register a, b;
	struct vg_diag dg = { 0 };
	json_object *o;
	const char *s;
	int r = vg_api_register_parse(d, n, &a, &dg);

	if (r < 0) {
		refused(r, &dg);
		return;
	}
	FUZZ_CHECK(!a.id[0] || vg_api_id_ok(a.id, strlen(a.id)));	/* "": the agent's own */
	FUZZ_CHECK(!a.policy[0] || vg_api_id_ok(a.policy, strlen(a.policy)));
	FUZZ_CHECK(strncmp(a.url, "http://", 7) == 0 || strncmp(a.url, "https://", 8) == 0);
	for (const char *c = a.url; *c; c++)
		FUZZ_CHECK(*c > 0x20 && *c < 0x7f);
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(a.id));
	json_object_object_add(o, "url", json_object_new_string(a.url));
	json_object_object_add(o, "policy", json_object_new_string(a.policy));
	s = json_object_to_json_string(o);
	FUZZ_CHECK(vg_api_register_parse((const uint8_t *)s, strlen(s), &b, NULL) == 0);
	FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	json_object_put(o);
}

static void t_assign(const uint8_t *d, size_t n)
{
	char name[VG_API_ID_MAX], name2[VG_API_ID_MAX];
	struct vg_diag dg = { 0 };
	json_object *o;
	const char *s;
	int r = vg_api_policy_assign_parse(d, n, name, &dg);

	if (r < 0) {
		refused(r, &dg);
		return;
	}
	FUZZ_CHECK(!name[0] || vg_api_id_ok(name, strlen(name)));
	o = json_object_new_object();
	json_object_object_add(o, "policy", json_object_new_string(name));
	s = json_object_to_json_string(o);
	FUZZ_CHECK(vg_api_policy_assign_parse((const uint8_t *)s, strlen(s), name2, NULL) == 0);
	FUZZ_CHECK(strcmp(name, name2) == 0);
	json_object_put(o);
}

static void t_quote_query(const uint8_t *d, size_t n)
{
	char *s = str(d, n), *parts[3] = { NULL, NULL, NULL }, *p = s, q[512];
	struct vg_api_quote_req a, b;
	struct vg_diag dg = { 0 };
	int r;

	/* NUL-separated; a part not given is a parameter not sent */
	for (int i = 0; i < 3 && p <= s + n; i++) {
		parts[i] = p;
		p += strlen(p) + 1;
	}
	r = vg_api_quote_query_parse(parts[0], parts[1], parts[2], &a, &dg);
	if (r < 0) {
		refused(r, &dg);
		free(s);
		return;
	}
	FUZZ_CHECK(a.nonce_len >= VG_API_NONCE_MIN && a.nonce_len <= VG_ATTEST_NONCE_MAX);
	FUZZ_CHECK(a.mask && a.mask < (1u << 24) && vg_attest_tpm_alg(a.bank));
	FUZZ_CHECK(vg_api_quote_query_build(&a, q, sizeof(q)) > 0);
	/* split the query back the way libmicrohttpd does */
	{
		char *nv = strstr(q, "nonce="), *bv = strstr(q, "&bank="), *mv = strstr(q, "&mask=");

		FUZZ_CHECK(nv == q && bv && mv);
		*bv = *mv = 0;
		FUZZ_CHECK(vg_api_quote_query_parse(nv + 6, bv + 6, mv + 6, &b, NULL) == 0);
	}
	FUZZ_CHECK(a.nonce_len == b.nonce_len && memcmp(a.nonce, b.nonce, a.nonce_len) == 0);
	FUZZ_CHECK(a.bank == b.bank && a.mask == b.mask);
	free(s);
}

static void t_log_query(const uint8_t *d, size_t n)
{
	char *s = str(d, n);
	struct vg_diag dg = { 0 };
	uint64_t v;
	int r = vg_api_log_query_parse(s, &v, &dg);

	if (r < 0) {
		refused(r, &dg);
	} else {
		FUZZ_CHECK(*s && strspn(s, "0123456789") == strlen(s));
		FUZZ_CHECK(v == strtoull(s, NULL, 10) && v <= INT64_MAX);
	}
	free(s);
}

static void t_activate(const uint8_t *d, size_t n)
{
	struct vg_api_activate *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct vg_diag dg = { 0 };
	char *j = NULL;
	long l;
	int r;

	FUZZ_CHECK(a && b);
	r = vg_api_activate_parse(d, n, a, &dg);
	if (r < 0) {
		refused(r, &dg);
	} else {
		FUZZ_CHECK(a->id_len >= 1 && a->id_len <= VG_API_BLOB_MAX);
		FUZZ_CHECK(a->es_len >= 1 && a->es_len <= VG_API_BLOB_MAX);
		l = vg_api_activate_build(a, &j);
		FUZZ_CHECK(l > 0);
		FUZZ_CHECK(vg_api_activate_parse((const uint8_t *)j, (size_t)l, b, NULL) == 0);
		FUZZ_CHECK(memcmp(a, b, sizeof(*a)) == 0);
	}
	free(j);
	free(a);
	free(b);
}

static void t_identity(const uint8_t *d, size_t n)
{
	struct vg_api_identity *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct vg_diag dg = { 0 };
	char *j = NULL;
	long l;
	int r;

	FUZZ_CHECK(a && b);
	r = vg_api_identity_parse(d, n, a, &dg);
	if (r < 0) {
		refused(r, &dg);
	} else {
		FUZZ_CHECK(a->ek_pub_len >= 1 && a->ak_pub_len >= 1);
		FUZZ_CHECK(!a->id[0] || strlen(a->id) < VG_API_ID_MAX);
		l = vg_api_identity_build(a, &j);
		FUZZ_CHECK(l > 0);
		FUZZ_CHECK(vg_api_identity_parse((const uint8_t *)j, (size_t)l, b, NULL) == 0);
		FUZZ_CHECK(memcmp(a, b, sizeof(*a)) == 0);
	}
	free(j);
	free(a);
	free(b);
}

static void t_proof(const uint8_t *d, size_t n)
{
	uint8_t p[32], p2[32];
	struct vg_diag dg = { 0 };
	char *j = NULL;
	long l;
	int r = vg_api_proof_parse(d, n, p, &dg);

	if (r < 0) {
		refused(r, &dg);
		return;
	}
	l = vg_api_proof_build(p, &j);
	FUZZ_CHECK(l > 0);
	FUZZ_CHECK(vg_api_proof_parse((const uint8_t *)j, (size_t)l, p2, NULL) == 0);
	FUZZ_CHECK(memcmp(p, p2, 32) == 0);
	free(j);
}

static void t_quote(const uint8_t *d, size_t n)
{
	static const unsigned int banks[] = { VG_HASH_SHA1, VG_HASH_SHA256, VG_HASH_SHA384,
					      VG_HASH_SHA512 };
	struct vg_api_quote *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct vg_pcr_values *pv = calloc(1, sizeof(*pv));
	struct vg_diag dg = { 0 };
	unsigned int bank;
	char *j = NULL;
	long l;
	int r;

	FUZZ_CHECK(a && b && pv);
	if (n < 1)
		goto out;
	bank = banks[d[0] % 4];
	r = vg_api_quote_parse(d + 1, n - 1, bank, a, &dg);
	if (r < 0) {
		refused(r, &dg);
		goto out;
	}
	FUZZ_CHECK(a->bank == bank && a->attest_len >= 1 && a->sig_len >= 1);
	FUZZ_CHECK(a->attest_len <= VG_API_ATTEST_MAX && a->sig_len <= VG_API_SIG_MAX);
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
		if (a->have & (1u << i))
			FUZZ_CHECK(a->pcr[i].len == vg_hash_size(bank) && a->pcr[i].algo == bank);
	FUZZ_CHECK(a->have < (1u << VG_PCR_COUNT));
	vg_api_quote_pcrs(a, pv);
	FUZZ_CHECK(pv->have[bank] == a->have);
	l = vg_api_quote_build(a, &j);
	FUZZ_CHECK(l > 0);
	FUZZ_CHECK(vg_api_quote_parse((const uint8_t *)j, (size_t)l, bank, b, NULL) == 0);
	FUZZ_CHECK(memcmp(a, b, sizeof(*a)) == 0);
out:
	free(j);
	free(a);
	free(b);
	free(pv);
}

static void t_log(const uint8_t *d, size_t n)
{
	struct vg_attest_logstate st, st2;
	struct vg_attest_verdict v;
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	uint64_t count = 0;
	int r;

	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	vg_attest_verdict_init(&v);
	r = vg_attest_log_check(NULL, d, n, VG_HASH_SHA1, VG_ATTEST_PCR_IMA, NULL, &st, &v);
	FUZZ_CHECK(r == 0 || r == 1);
	if (r == 1) {
		FUZZ_CHECK(v.fail == VG_AF_LOG_MALFORMED || v.fail == VG_AF_LOG_ENTRY);
		return;
	}
	vg_imalog_parser_init(&ps, d, n, VG_HASH_SHA1);
	while (vg_imalog_parser_next(&ps, &e, NULL) == 1)
		count++;
	FUZZ_CHECK(st.entries == count && st.offset <= n && st.lag == 0);
	vg_attest_logstate_init(&st2, VG_HASH_SHA256);
	r = vg_attest_log_check(NULL, d, n, VG_HASH_SHA1, VG_ATTEST_PCR_IMA, &st.pcr, &st2, &v);
	FUZZ_CHECK(r == 0);
	FUZZ_CHECK(st2.entries <= st.entries && st2.offset <= st.offset);
	FUZZ_CHECK(st2.pcr.len == st.pcr.len && memcmp(st2.pcr.bytes, st.pcr.bytes, st.pcr.len) == 0);
}

static void t_evidence(const uint8_t *d, size_t n)
{
	struct vg_api_evidence *e = malloc(sizeof(*e));
	struct vg_diag dg = { 0 };
	int r;

	FUZZ_CHECK(e != NULL);
	r = vg_api_evidence_parse(d, n, e, &dg);
	if (r < 0) {
		refused(r, &dg);
		FUZZ_CHECK(!e->policy && !e->log && !e->mb_log);
	} else {
		FUZZ_CHECK(e->attest_len >= 1 && e->attest_len <= sizeof(e->attest));
		FUZZ_CHECK(e->sig_len >= 1 && e->sig_len <= sizeof(e->sig));
		FUZZ_CHECK(e->ak_len >= 1 && e->ak_len <= sizeof(e->ak));
		FUZZ_CHECK(e->nonce_len >= 1 && e->nonce_len <= sizeof(e->nonce));
		FUZZ_CHECK(!e->policy != !e->policy_name[0]);
		FUZZ_CHECK(!e->policy || strlen(e->policy) == e->policy_len);
		FUZZ_CHECK(!e->log || strlen(e->log) == e->log_len);
		FUZZ_CHECK(e->mask < (1u << 24));
		vg_api_evidence_release(e);
	}
	free(e);
}

static void t_challenge(const uint8_t *d, size_t n)
{
	struct vg_api_challenge a, b;
	struct vg_diag dg = { 0 };
	char *s = NULL;
	int r = vg_api_challenge_parse(d, n, &a, &dg);

	if (r < 0) {
		refused(r, &dg);
		return;
	}
	FUZZ_CHECK(a.q.nonce_len >= VG_API_NONCE_MIN && a.q.nonce_len <= VG_ATTEST_NONCE_MAX);
	FUZZ_CHECK(a.q.mask && a.q.mask < (1u << 24));
	FUZZ_CHECK(vg_api_challenge_build(&a, &s) > 0);
	FUZZ_CHECK(vg_api_challenge_parse((const uint8_t *)s, strlen(s), &b, NULL) == 0);
	FUZZ_CHECK(a.q.nonce_len == b.q.nonce_len &&
		   memcmp(a.q.nonce, b.q.nonce, a.q.nonce_len) == 0 && a.q.bank == b.q.bank &&
		   a.q.mask == b.q.mask && a.log_offset == b.log_offset &&
		   a.boot_log == b.boot_log && a.interval_ms == b.interval_ms);
	free(s);
}

static void t_push(const uint8_t *d, size_t n)
{
	struct vg_api_push a, b;
	struct vg_diag dg = { 0 };
	char *s = NULL;
	int r = vg_api_push_parse(d, n, VG_API_MSG_MAX, &a, &dg);

	if (r < 0) {
		refused(r, &dg);
		return;
	}
	FUZZ_CHECK(a.nonce_len >= VG_API_NONCE_MIN && a.nonce_len <= VG_ATTEST_NONCE_MAX);
	FUZZ_CHECK(a.quote && strlen(a.quote) == a.quote_len);
	FUZZ_CHECK(a.have_log || !a.log);
	FUZZ_CHECK(a.have_boot || !a.boot_log);
	FUZZ_CHECK(vg_api_push_build(&a, &s) > 0);
	FUZZ_CHECK(vg_api_push_parse((const uint8_t *)s, strlen(s), (size_t)-1, &b, NULL) == 0);
	FUZZ_CHECK(a.nonce_len == b.nonce_len && memcmp(a.nonce, b.nonce, a.nonce_len) == 0);
	FUZZ_CHECK(a.quote_len == b.quote_len && memcmp(a.quote, b.quote, a.quote_len) == 0);
	FUZZ_CHECK(a.log_offset == b.log_offset && a.have_log == b.have_log &&
		   a.have_boot == b.have_boot && a.log_len == b.log_len && a.boot_len == b.boot_len);
	FUZZ_CHECK(!a.log_len || memcmp(a.log, b.log, a.log_len) == 0);
	FUZZ_CHECK(!a.boot_len || memcmp(a.boot_log, b.boot_log, a.boot_len) == 0);
	vg_api_push_release(&a);
	vg_api_push_release(&b);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 13) {
	case 0: t_route(data + 1, size - 1); break;
	case 1: t_register(data + 1, size - 1); break;
	case 2: t_assign(data + 1, size - 1); break;
	case 3: t_quote_query(data + 1, size - 1); break;
	case 4: t_log_query(data + 1, size - 1); break;
	case 5: t_activate(data + 1, size - 1); break;
	case 6: t_identity(data + 1, size - 1); break;
	case 7: t_proof(data + 1, size - 1); break;
	case 8: t_quote(data + 1, size - 1); break;
	case 9: t_log(data + 1, size - 1); break;
	case 10: t_evidence(data + 1, size - 1); break;
	case 11: t_challenge(data + 1, size - 1); break;
	default: t_push(data + 1, size - 1); break;
	}
	return 0;
}
