// SPDX-License-Identifier: MIT
/*
 * api_json.c - the JSON bodies of the verifier's API answers: an agent's
 * status (with whether the scheduler has it late), a line of its history, an error, a typed failure. It builds
 * objects only; sending them is rest.c's (the only part that speaks
 * HTTP), so that registration (register.c) answers without HTTP.
 */
#include <stdint.h>

#include "json_text.h"
#include "verifier.h"

json_object *vf_json_agent(const struct vg_store_agent *a, int64_t due)
{
	int64_t late_ms = due ? vf_wall_ms() - due : 0;
	json_object *o = json_object_new_object();
	size_t nl;
	char name[2 * VG_ATTEST_NAME_MAX + 1] = "";
	struct vg_attest_ak *ak;

	if (vg_attest_ak_load(a->ak_pub, a->ak_pub_len, &ak, NULL) == 0) {
		const uint8_t *n = vg_attest_ak_name(ak, &nl);

		vg_hex_encode(n, nl, name);
		vg_attest_ak_free(ak);
	}
	json_object_object_add(o, "id", json_object_new_string(a->id));
	json_object_object_add(o, "url", vg_prog_json_text(a->url));
	json_object_object_add(o, "state", json_object_new_string(vg_agent_state_name(a->state)));
	/* late: due + VF_LATE_SLACK_MS passed and its round has not started (scheduler.c) */
	json_object_object_add(o, "late", json_object_new_boolean(due != 0));
	json_object_object_add(o, "late_ms", json_object_new_int64(late_ms > 0 ? late_ms : 0));
	json_object_object_add(o, "overdue_since", json_object_new_int64(due / 1000));
	json_object_object_add(o, "policy", json_object_new_string(a->policy));
	json_object_object_add(o, "ak_name", json_object_new_string(name));
	json_object_object_add(o, "rounds", json_object_new_int64((int64_t)a->rounds));
	json_object_object_add(o, "reboots", json_object_new_int64((int64_t)a->reboots));
	json_object_object_add(o, "log_entries", json_object_new_int64((int64_t)a->st.log.entries));
	json_object_object_add(o, "log_offset", json_object_new_int64((int64_t)a->st.log.offset));
	json_object_object_add(o, "reset_count", json_object_new_int64(a->st.clock.reset_count));
	json_object_object_add(o, "registered_at", json_object_new_int64(a->registered_at));
	json_object_object_add(o, "last_ok", json_object_new_int64(a->last_ok));
	json_object_object_add(o, "last_seen", json_object_new_int64(a->last_seen));
	json_object_object_add(o, "last_failure",
			       json_object_new_string(vg_attest_fail_id(a->last_fail)));
	json_object_object_add(o, "last_message", vg_prog_json_text(a->last_msg));
	/* the latest round's failures, those past the history's bound included */
	json_object_object_add(o, "failure_count", json_object_new_int64((int64_t)a->failure_count));
	return o;
}

json_object *vf_json_verifier(const struct vg_store_verifier *v, int64_t now)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(v->id));
	json_object_object_add(o, "host", vg_prog_json_text(v->host));
	json_object_object_add(o, "pid", json_object_new_int64(v->pid));
	json_object_object_add(o, "started", json_object_new_int64(v->started / 1000));
	json_object_object_add(o, "beat", json_object_new_int64(v->beat / 1000));
	json_object_object_add(o, "beat_age_ms", json_object_new_int64(now - v->beat));
	json_object_object_add(o, "alive", json_object_new_boolean(now - v->beat < VF_BEAT_ALIVE_MS));
	json_object_object_add(o, "max_rounds", json_object_new_int64(v->max_rounds));
	json_object_object_add(o, "running", json_object_new_int64(v->running));
	json_object_object_add(o, "rounds", json_object_new_int64(v->rounds));
	json_object_object_add(o, "late", json_object_new_int64(v->late));
	return o;
}

int vf_json_verdict_cb(void *arg, const struct vg_store_verdict *v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "time", json_object_new_int64(v->time));
	json_object_object_add(o, "failure", json_object_new_string(vg_attest_fail_id(v->fail)));
	json_object_object_add(o, "entry", json_object_new_int64(v->entry));
	json_object_object_add(o, "path", vg_prog_json_text(v->path));
	json_object_object_add(o, "digest", vg_prog_json_text(v->digest));
	json_object_object_add(o, "message", vg_prog_json_text(v->msg));
	json_object_array_add(arg, o);
	return 0;
}

unsigned int vf_answer_error(struct vf_answer *ans, unsigned int code, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "error", vg_prog_json_text(msg));
	ans->code = code;
	ans->body = o;
	return code;
}

unsigned int vf_answer_failure(struct vf_answer *ans, unsigned int code, unsigned int fail,
			       const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "failure", json_object_new_string(vg_attest_fail_id(fail)));
	json_object_object_add(o, "message", vg_prog_json_text(msg));
	ans->code = code;
	ans->body = o;
	return code;
}
