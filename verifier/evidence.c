// SPDX-License-Identifier: MIT
/*
 * evidence.c - POST /v1/verify/evidence: the evidence of one round judged
 * with no registered agent (Keylime's stateless endpoint, a verifier used
 * as an oracle). The same pipeline as a round (vg_attest_evidence_check)
 * from a fresh state: the quote with the AK sent, its nonce and PCRs, the
 * boot log if sent, the list from entry 0 replayed to the quoted PCR 10,
 * every entry judged by the policy sent or named, the boot log's events
 * by an mb_policy sent (Keylime's reference state, judged as the
 * policy's measured_boot section). Nothing is stored.
 * With "ear": true, the verdict is answered as a signed EAR (ear.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "json_text.h"
#include "verifier.h"
#include "vigil/hash.h"
#include "vigil/attest_boot.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/imalog.h"

/* The PCRs the quote says it covers in @bank (0: it does not decode, or none there). */
static uint32_t quoted_mask(const struct vg_api_evidence *e)
{
	struct vg_tpms_attest q;
	uint16_t alg = vg_attest_tpm_alg(e->bank);
	uint32_t m = 0;

	if (vg_attest_quote_decode(e->attest, e->attest_len, &q, NULL) < 0)
		return 0;
	for (uint32_t i = 0; i < q.nsel; i++)
		if (q.sel[i].alg == alg)
			for (unsigned int b = 0; b < q.sel[i].size && b < 3; b++)
				m |= (uint32_t)q.sel[i].bits[b] << (8 * b);
	return m;
}

/* {"valid", "claims", "failures": [{"type", "context": {...}}], "failure_count"} */
static json_object *result_json(const struct vg_attest_verdict *v, bool valid,
				const struct vg_attest_state *st)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t n = valid ? 0 : vg_attest_verdict_listed(v);

	json_object_object_add(o, "valid", json_object_new_boolean(valid));
	json_object_object_add(o, "claims", json_object_new_object());
	for (size_t i = 0; i < n; i++) {
		const struct vg_attest_verdict *f = vg_attest_verdict_nth(v, i);
		json_object *e = json_object_new_object(), *ctx = json_object_new_object();

		json_object_object_add(e, "type", json_object_new_string(vg_attest_fail_id(f->fail)));
		json_object_object_add(ctx, "message", vg_prog_json_text(f->msg));
		if (f->entry >= 0)
			json_object_object_add(ctx, "entry", json_object_new_int64(f->entry));
		if (f->path[0])
			json_object_object_add(ctx, "path", vg_prog_json_text(f->path));
		if (f->digest[0])
			json_object_object_add(ctx, "digest", vg_prog_json_text(f->digest));
		json_object_object_add(e, "context", ctx);
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "failures", arr);
	json_object_object_add(o, "failure_count",
			       json_object_new_int64(valid ? 0 : (int64_t)vg_attest_verdict_count(v)));
	if (valid)
		json_object_object_add(o, "entries", json_object_new_int64((int64_t)st->log.entries));
	return o;
}

/*
 * A policy document sent or stored, parsed as an upload is (DSSE-checked
 * with --policy-key; at most VF_POLICY_CHECKS_MAX at once): into *@ret.
 * Return: 200, 400 (@err names @what), 503, 500.
 */
static int load_doc(struct verifier *vf, const char *doc, size_t len, const char *what,
		    struct vg_refpolicy **ret, char *err, size_t errlen)
{
	struct vg_diag d = { 0 };
	int r;

	/* linear in the document, and at most two parsed at once (as uploads) */
	if (atomic_fetch_add(&vf->policy_checks, 1) >= VF_POLICY_CHECKS_MAX) {
		atomic_fetch_sub(&vf->policy_checks, 1);
		snprintf(err, errlen, "two policies are being checked already: retry");
		return 503;
	}
	r = vf_policy_load(vf, (const uint8_t *)doc, len, ret, &d);
	atomic_fetch_sub(&vf->policy_checks, 1);
	if (r < 0) {
		snprintf(err, errlen, "evidence: %s: %s", what, d.msg);
		return r == -ENOMEM ? 500 : 400;
	}
	return 200;
}

/* "sha256:HEX" of @len bytes of @doc into @out. */
static void doc_id(const char *prefix, const char *doc, size_t len, char *out, size_t cap)
{
	uint8_t md[32];
	char hex[2 * sizeof(md) + 1] = "";

	if (EVP_Digest(doc, len, md, NULL, EVP_sha256(), NULL) == 1)
		vg_hex_encode(md, sizeof(md), hex);
	snprintf(out, cap, "%ssha256:%s", prefix, hex);
}

/*
 * The policy @e is judged by, and its id for an EAR (@pid: "sha256:HEX"
 * of a document sent, "NAME@sha256:HEX" of a stored one, with
 * "+mb_policy@sha256:HEX" when an mb_policy is its measured_boot
 * section): a document sent (*@own), a stored one held from the cache
 * (*@held), or, with an mb_policy, a copy of it (*@own) or an empty one
 * that takes the mb_policy's section. Return: 200 (*@ret), 400, 404, 503,
 * 500 (@err).
 */
static int evidence_policy(struct verifier *vf, const struct vg_api_evidence *e,
			   struct vg_refpolicy **own, struct vf_pcache **held,
			   struct vg_refpolicy **ret, char *pid, size_t pcap, char *err, size_t errlen)
{
	struct vg_refpolicy *mbdoc = NULL, *pol = NULL;
	struct vg_diag d = { 0 };
	char *doc = NULL, mbid[96] = "";
	size_t len = 0;
	int status = 200, r;

	pid[0] = 0;
	if (e->mb_policy) {
		/* Keylime's reference state (or a policy's measured_boot section) */
		status = load_doc(vf, e->mb_policy, e->mb_policy_len, "mb_policy", &mbdoc, err, errlen);
		if (status != 200)
			goto out;
		if (!vg_refpolicy_mbpolicy(mbdoc)) {
			snprintf(err, errlen, "evidence: mb_policy: no measured-boot reference state in it "
				 "(Keylime's, or a policy's \"measured_boot\" section)");
			status = 400;
			goto out;
		}
		doc_id("+mb_policy@", e->mb_policy, e->mb_policy_len, mbid, sizeof(mbid));
	}
	if (e->policy) {
		status = load_doc(vf, e->policy, e->policy_len, "runtime_policy", own, err, errlen);
		doc_id("", e->policy, e->policy_len, pid, pcap);
	} else if (e->policy_name[0] && mbdoc) {
		/* a copy of the stored policy, which the mb_policy's section goes into */
		pthread_mutex_lock(&vf->lock);
		/* store round trip (store_client.c) */
		r = vg_store_policy_get(vf->store, e->policy_name, &doc, &len, &d);
		pthread_mutex_unlock(&vf->lock);
		if (r < 0) {
			snprintf(err, errlen, "%s", r == -ENOENT ? "no such policy" : d.msg);
			status = r == -ENOENT ? 404 : 500;
			goto out;
		}
		status = load_doc(vf, doc, len, "runtime_policy_name", own, err, errlen);
		doc_id("@", doc, len, pid + snprintf(pid, pcap, "%s", e->policy_name),
		       pcap - strlen(e->policy_name));
	} else if (e->policy_name[0]) {
		pthread_mutex_lock(&vf->lock);
		pol = vf_policy_lookup(vf, e->policy_name, err, errlen);
		if (pol) {
			*held = vf_policy_hold(vf, pol);
			snprintf(pid, pcap, "%s@sha256:%s", e->policy_name, vf_policy_digest(vf, pol));
		}
		pthread_mutex_unlock(&vf->lock);
		status = pol ? 200 : 404;
	} else if (vg_refpolicy_new(own) < 0) {
		snprintf(err, errlen, "out of memory");	/* the mb_policy alone: no runtime policy */
		status = 500;
	}
	if (status != 200)
		goto out;
	if (mbdoc) {
		vg_refpolicy_set_mbpolicy(*own, vg_refpolicy_take_mbpolicy(mbdoc));
		snprintf(pid + strlen(pid), pcap - strlen(pid), "%s", pid[0] ? mbid : mbid + 1);
	}
	*ret = *own ? *own : pol;
out:
	vg_refpolicy_free(mbdoc);
	free(doc);
	return status;
}

int vf_evidence_judge(struct verifier *vf, const struct vg_api_evidence *e, json_object **ret,
		      char **ret_ear, size_t *ear_len, char *err, size_t errlen)
{
	struct vg_attest_ak *ak = NULL;
	struct vg_refpolicy *own = NULL, *pol = NULL;
	struct vf_pcache *held = NULL;
	struct vg_imalog_buf bin = { 0 };
	struct vg_attest_boot *boot = NULL;
	struct vg_attest_request req = { .nonce = e->nonce, .nonce_len = e->nonce_len,
					 .bank = e->bank, .mask = e->mask };
	struct vg_attest_evidence ev = { .attest = e->attest, .attest_len = e->attest_len,
					 .sig = e->sig, .sig_len = e->sig_len, .pcrs = e->pcrs };
	struct vg_attest_state st;
	struct vg_attest_verdict v, mbv;
	struct vg_diag d = { 0 };
	bool reboot = false;
	char pid[VF_EAR_POLICY_ID_MAX + 96];
	int status = 400, r;

	vg_attest_verdict_init(&v);
	vg_attest_verdict_init(&mbv);
	*ret = NULL;
	if (vg_attest_ak_load(e->ak, e->ak_len, &ak, &d) < 0) {
		snprintf(err, errlen, "evidence: tpm_ak: %s", d.msg);
		goto out;
	}
	status = evidence_policy(vf, e, &own, &held, &pol, pid, sizeof(pid), err, errlen);
	if (status != 200)
		goto out;
	/* no tpm_policy: what the quote covers (its signature and pcrDigest still checked) */
	if (!req.mask)
		req.mask = quoted_mask(e);
	memset(&st, 0, sizeof(st));
	vg_attest_logstate_init(&st.log, e->bank);
	status = 200;
	if (e->log) {
		unsigned int algo;

		if (vg_imalog_from_ascii(e->log, e->log_len, &bin, &algo, &d) < 0) {
			vg_attest_fail(&v, VG_AF_LOG_MALFORMED, "ima_measurement_list: %s", d.msg);
			goto judged;
		}
		if (!(req.mask & (1u << VG_ATTEST_PCR_IMA))) {
			vg_attest_fail(&v, VG_AF_PCR_SELECTION, "the quote does not cover PCR %d: the "
				       "measurement list cannot be checked", VG_ATTEST_PCR_IMA);
			goto judged;
		}
		ev.log = bin.data;
		ev.log_len = bin.len;
		ev.log_algo = algo;
	}
	if (e->mb_log) {
		boot = calloc(1, sizeof(*boot));
		if (!boot) {
			status = 500;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		r = vg_attest_boot_load(e->mb_log, e->mb_len, e->bank, boot, &v);
		if (r < 0) {
			status = 500;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		if (r == 1)
			goto judged;
		ev.boot = boot;
		if (vg_refpolicy_mbpolicy(pol)) {
			r = vg_mbpolicy_check_buf(vg_refpolicy_mbpolicy(pol), e->mb_log, e->mb_len,
						  &mbv);
			if (r < 0) {
				status = 500;
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			ev.boot_events = &mbv;
		}
	}
	r = vg_attest_evidence_check(ak, pol, &req, &ev, &st, &reboot, &v);
	if (r < 0) {
		status = 500;
		snprintf(err, errlen, "judging: %s", strerror(-r));
		goto out;
	}
	if (r == 0)
		vg_attest_verdict_release(&v);	/* passed: no failure to tell */
	goto answer;
judged:
	r = 1;
answer:
	if (e->ear)
		status = vf_ear_evidence(vf, e, pid, &v, ret_ear, ear_len, err, errlen);
	else
		*ret = result_json(&v, r == 0, &st);
out:
	vf_policy_put(vf, held);	/* takes the lock */
	vg_refpolicy_free(own);
	vg_attest_ak_free(ak);
	vg_imalog_buf_release(&bin);
	free(boot);
	vg_attest_verdict_release(&v);
	vg_attest_verdict_release(&mbv);
	if (status == 200 && !e->ear && !*ret) {
		snprintf(err, errlen, "out of memory");
		status = 500;
	}
	return status;
}
