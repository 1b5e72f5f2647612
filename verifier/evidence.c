// SPDX-License-Identifier: MIT
/*
 * evidence.c - POST /v1/verify/evidence: the evidence of one round judged
 * with no registered agent (Keylime's stateless endpoint, a verifier used
 * as an oracle). The same pipeline as a round (vg_attest_evidence_check)
 * from a fresh state: the quote with the AK sent, its nonce and PCRs, the
 * boot log if sent, the list from entry 0 replayed to the quoted PCR 10,
 * every entry judged by the policy sent or named. Nothing is stored.
 * With "ear": true, the verdict is answered as a signed EAR (ear.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"
#include "verifier.h"
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
	int status = 400, r;

	vg_attest_verdict_init(&v);
	vg_attest_verdict_init(&mbv);
	*ret = NULL;
	if (vg_attest_ak_load(e->ak, e->ak_len, &ak, &d) < 0) {
		snprintf(err, errlen, "evidence: tpm_ak: %s", d.msg);
		goto out;
	}
	if (e->policy) {
		/* linear in the document, and at most two parsed at once (as uploads) */
		if (atomic_fetch_add(&vf->policy_checks, 1) >= VF_POLICY_CHECKS_MAX) {
			atomic_fetch_sub(&vf->policy_checks, 1);
			snprintf(err, errlen, "two policies are being checked already: retry");
			status = 503;
			goto out;
		}
		r = vf_policy_load(vf, (const uint8_t *)e->policy, e->policy_len, &own, &d);
		atomic_fetch_sub(&vf->policy_checks, 1);
		if (r < 0) {
			snprintf(err, errlen, "evidence: runtime_policy: %s", d.msg);
			status = r == -ENOMEM ? 500 : 400;
			goto out;
		}
		pol = own;
	} else {
		pthread_mutex_lock(&vf->lock);
		pol = vf_policy_lookup(vf, e->policy_name, err, errlen);
		if (pol)
			held = vf_policy_hold(vf, pol);
		pthread_mutex_unlock(&vf->lock);
		if (!pol) {
			status = 404;
			goto out;
		}
	}
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
		status = vf_ear_evidence(vf, e, pol, &v, ret_ear, ear_len, err, errlen);
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
