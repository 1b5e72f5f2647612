// SPDX-License-Identifier: MIT
/*
 * audit.c - the audit file: one JSON line per denial, would-deny, fix,
 * allow by the trust database (trust=archive, with the package) or
 * audited access, written before the access is answered (so the subject
 * is still there to be named by /proc/PID/exe). Nothing is written when
 * no --audit file was given. Paths go in as json_text.h says: a file name
 * that is not UTF-8 must not make its denial a line a SIEM drops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "json_text.h"
#include "monitor.h"

void vd_audit(struct vd *d, struct ev *e, const char *action, const char *reason,
		  long rule)
{
	vd_audit_package(d, e, action, reason, rule, NULL);
}

void vd_audit_package(struct vd *d, struct ev *e, const char *action, const char *reason,
		      long rule, const char *package)
{
	json_object *o;
	char ts[64], proc[64], *exe;
	struct timespec now;
	struct tm tm;

	if (d->audit < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%06ldZ", now.tv_nsec / 1000);
	snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)e->pid);
	exe = e->subj_exe ? strdup(e->subj_exe) : vd_readlink(proc);
	o = json_object_new_object();
	json_object_object_add(o, "time", json_object_new_string(ts));
	json_object_object_add(o, "pid", json_object_new_int(e->pid));
	json_object_object_add(o, "exe", vg_prog_json_text(exe ? exe : "?"));
	/* the subject's real uid, read now unless the policy needed it at the event; -1: it is gone */
	if (!e->creds)
		e->creds = vd_task_creds(e->pid, &e->acc);
	json_object_object_add(o, "uid", json_object_new_int64(e->creds ? (int64_t)e->acc.uid : -1));
	json_object_object_add(o, "path", vg_prog_json_text(vd_ev_path(e)));
	json_object_object_add(o, "dev", json_object_new_int64((int64_t)e->key.dev));
	json_object_object_add(o, "ino", json_object_new_int64((int64_t)e->key.ino));
	json_object_object_add(o, "event", json_object_new_string(
		e->mask & VD_EV_EXEC ? "exec" : "open"));
	json_object_object_add(o, "action", json_object_new_string(action));
	json_object_object_add(o, "mode", json_object_new_string(vd_ctl_mode_names[d->mode]));
	if (rule >= 0 && d->policy) {
		const struct vg_policy_rule *r = vg_policy_rule(d->policy, (size_t)rule);
		char text[512];

		if (r) {
			vg_policy_rule_format(r, text, sizeof(text));
			json_object_object_add(o, "rule", json_object_new_string(text));
			json_object_object_add(o, "rule_line", json_object_new_int((int)r->line));
		}
	}
	json_object_object_add(o, "reason", vg_prog_json_text(reason));
	if (package)
		json_object_object_add(o, "package", json_object_new_string(package));
	dprintf(d->audit, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	free(exe);
}
