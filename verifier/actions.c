// SPDX-License-Identifier: MIT
/*
 * actions.c - what a verdict does besides changing the agent's state: a
 * line in its history (the store), and for a failure a JSON notice POSTed
 * to --webhook and --on-fail run (sh -c, by the hook process) with the
 * verdict in its environment. A reboot is history only; an agent the
 * scheduler has late (state.late) is history and both hooks, like a failure. Also the one place that says the
 * store failed or answers again (once per distinct message).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"
#include "log.h"
#include "verifier.h"
#include "privsep.h"

static void webhook(struct verifier *vf, const char *id, const struct vg_store_verdict *v,
		    const char *fid)
{
	json_object *o = json_object_new_object();
	struct vf_buf b;
	char err[256];

	json_object_object_add(o, "agent", json_object_new_string(id));
	json_object_object_add(o, "failure", json_object_new_string(fid));
	json_object_object_add(o, "message", vg_prog_json_text(v->msg));
	json_object_object_add(o, "entry", json_object_new_int64(v->entry));
	json_object_object_add(o, "path", vg_prog_json_text(v->path));
	json_object_object_add(o, "digest", vg_prog_json_text(v->digest));
	json_object_object_add(o, "time", json_object_new_int64(v->time));
	if (vf->fetch(vf, vf->webhook, json_object_to_json_string(o), false, 0, &b, err,
		      sizeof(err)) < 0)
		vlog_warn("webhook: %s", err);
	free(b.p);
	json_object_put(o);
}

int vf_history(struct verifier *vf, const char *id, const struct vg_attest_verdict *v,
	       struct vg_store_verdict *h)
{
	struct vg_diag d = { 0 };

	*h = (struct vg_store_verdict){ .time = vf_now(), .fail = v->fail, .entry = v->entry };
	snprintf(h->path, sizeof(h->path), "%s", v->path);
	snprintf(h->digest, sizeof(h->digest), "%s", v->digest);
	snprintf(h->msg, sizeof(h->msg), "%s", v->msg);
	if (vg_store_verdict_add(vf->store, id, h, &d) < 0) {
		vlog_err("%s: %s %s not recorded: %s", id, vg_attest_fail_id(v->fail),
			 v->fail == VG_AF_REBOOT || v->fail == VG_AF_LATE || v->fail == VG_AF_STALE ?
			 "event" : "failure",
			 d.msg);
		return -1;
	}
	return 0;
}

void vf_notify(struct verifier *vf, const char *id, const struct vg_store_verdict *h)
{
	const char *fid = vg_attest_fail_id(h->fail);

	if (h->fail == VG_AF_REBOOT)
		return;
	if (vf->webhook)
		webhook(vf, id, h, fid);
	if (vf->on_fail)	/* run by the hook process (privsep_hook.c) */
		vg_privsep_hook_run(id, fid, h->msg, h->path);
}

int vf_record(struct verifier *vf, struct vg_store_agent *a, const struct vg_attest_verdict *v)
{
	struct vg_store_verdict h;
	int r = vf_history(vf, a->id, v, &h);

	vf_notify(vf, a->id, &h);
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
