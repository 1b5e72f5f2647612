// SPDX-License-Identifier: MIT
/*
 * actions.c - what a verdict leaves besides the agent's state: a line in
 * its history (the store; notify.c sends it on to --webhook and --on-fail
 * once the state is committed). A reboot is history only; an agent the
 * scheduler has late (state.late) or stale is history and notices, like a
 * failure. Also the one place that says the store failed or answers
 * again (once per distinct message).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "verifier.h"

int vf_history(struct verifier *vf, const char *id, const struct vg_attest_verdict *v,
	       struct vg_store_verdict *h)
{
	struct vg_diag d = { 0 };

	*h = (struct vg_store_verdict){ .time = vf_now(), .fail = v->fail, .entry = v->entry };
	snprintf(h->path, sizeof(h->path), "%s", v->path);
	snprintf(h->digest, sizeof(h->digest), "%s", v->digest);
	snprintf(h->msg, sizeof(h->msg), "%s", v->msg);
	/* store round trip (store_client.c) */
	if (vg_store_verdict_add(vf->store, id, h, &d) < 0) {
		vlog_err("%s: %s %s not recorded: %s", id, vg_attest_fail_id(v->fail),
			 v->fail == VG_AF_REBOOT || v->fail == VG_AF_LATE || v->fail == VG_AF_STALE ?
			 "event" : "failure",
			 d.msg);
		return -1;
	}
	return 0;
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
