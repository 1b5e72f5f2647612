// SPDX-License-Identifier: MIT
/*
 * actions.c - what a verdict does besides changing the agent's state: a
 * line in its history (the store), and for a failure a JSON notice POSTed
 * to --webhook and --on-fail run (sh -c, by the hook process) with the
 * verdict in its environment. A reboot is history only. Also the one place that says the
 * store failed or answers again (once per distinct message).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "verifier.h"
#include "privsep.h"

static void webhook(struct verifier *vf, const struct vg_store_agent *a,
		    const struct vg_store_verdict *v, const char *fid)
{
	json_object *o = json_object_new_object();
	struct vf_buf b;
	char err[256];

	json_object_object_add(o, "agent", json_object_new_string(a->id));
	json_object_object_add(o, "failure", json_object_new_string(fid));
	json_object_object_add(o, "message", json_object_new_string(v->msg));
	json_object_object_add(o, "entry", json_object_new_int64(v->entry));
	json_object_object_add(o, "path", json_object_new_string(v->path));
	json_object_object_add(o, "digest", json_object_new_string(v->digest));
	json_object_object_add(o, "time", json_object_new_int64(v->time));
	if (vf->fetch(vf, vf->webhook, json_object_to_json_string(o), false, 0, &b, err,
		      sizeof(err)) < 0)
		vlog_warn("webhook: %s", err);
	free(b.p);
	json_object_put(o);
}

int vf_record(struct verifier *vf, struct vg_store_agent *a, const struct vg_attest_verdict *v)
{
	int r = 0;

	struct vg_store_verdict h = { .time = vf_now(), .fail = v->fail, .entry = v->entry };
	struct vg_diag d = { 0 };

	snprintf(h.path, sizeof(h.path), "%s", v->path);
	snprintf(h.digest, sizeof(h.digest), "%s", v->digest);
	snprintf(h.msg, sizeof(h.msg), "%s", v->msg);
	if (vg_store_verdict_add(vf->store, a->id, &h, &d) < 0) {
		vlog_err("%s: %s %s not recorded: %s", a->id,
			vg_attest_fail_id(v->fail), v->fail == VG_AF_REBOOT ? "event" : "failure", d.msg);
		r = -1;
	}
	if (v->fail != VG_AF_REBOOT) {
		const char *fid = vg_attest_fail_id(h.fail);

		if (vf->webhook)
			webhook(vf, a, &h, fid);
		if (vf->on_fail)	/* run by the hook process (privsep_hook.c) */
			vg_privsep_hook_run(a->id, fid, h.msg, h.path);
	}
	return r;
}

void vf_store_status(struct verifier *vf, const char *msg)
{
	char *last = vf->store_msg;

	if (msg && strcmp(msg, last) != 0) {
		vlog_err("store error: %s (agents are not attested, and no "
			"state changes, until the store answers)", msg);
		snprintf(last, sizeof(vf->store_msg), "%s", msg);
	} else if (!msg && last[0]) {
		vlog_info("store: answering again");
		last[0] = 0;
	}
}
