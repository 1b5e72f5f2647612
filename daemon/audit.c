// SPDX-License-Identifier: MIT
/*
 * audit.c - the audit trail: one JSON line per denial, would-deny, fix,
 * allow by the trust database (trust=archive, with the package) or
 * audited access, written before the access is answered (so the subject
 * is still there to be named by /proc/PID/exe). Nothing is written when
 * no --audit file was given. Paths go in as json_text.h says: a file name
 * that is not UTF-8 must not make its denial a line a SIEM drops.
 *
 * Every denial, would-deny and fail action also goes to the journal
 * (journal.h: a native entry with the record's fields, never waited for;
 * a journal that does not read loses entries, counted, not vigild's
 * answers), where `journalctl -u vigild` shows it as fapolicyd's and the
 * kernel's denials are shown. The time is formatted by utc.h: glibc's
 * gmtime_r would open a time-zone file from the thread that answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "journal.h"
#include "json_text.h"
#include "monitor.h"
#include "utc.h"

/* journalctl MESSAGE_ID=VD_DENIAL_ID: every denial, would-deny and fail action */
#define VD_DENIAL_ID "7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a"

/* Priority of @action in the journal, or NULL: not an entry there. */
static const char *journal_priority(const char *action)
{
	if (!strcmp(action, "deny") || !strcmp(action, "deny-on-failure") ||
	    !strcmp(action, "allow-on-failure") || !strcmp(action, "ran-before-ready"))
		return "4";	/* warning */
	if (!strcmp(action, "would-deny"))
		return "5";	/* notice */
	return NULL;
}

static void journal_entry(const struct vd *d, const char *prio, const char *action,
			  const char *reason, const char *path, const char *exe, const struct ev *e,
			  int64_t uid, const char *rule, long rule_line, const char *package)
{
	char msg[1024], pid[16], uids[24], dev[24], ino[24], line[16];
	const char *p = vg_text_show(path), *x = vg_text_show(exe);
	const char *event = e->mask & VD_EV_EXEC ? "exec" : "open";
	struct vjournal_field f[16];
	size_t n = 0;

	snprintf(msg, sizeof(msg), "%s %s of %s by pid %d uid %lld (%s): %s%s%s%s", action, event,
		 p ? p : "?", (int)e->pid, (long long)uid, x ? x : "?", reason, rule ? " (rule: " : "",
		 rule ? rule : "", rule ? ")" : "");
	snprintf(pid, sizeof(pid), "%d", (int)e->pid);
	snprintf(uids, sizeof(uids), "%lld", (long long)uid);
	snprintf(dev, sizeof(dev), "%llu", (unsigned long long)e->key.dev);
	snprintf(ino, sizeof(ino), "%llu", (unsigned long long)e->key.ino);
	snprintf(line, sizeof(line), "%ld", rule_line);
#define F(k, v) (f[n++] = (struct vjournal_field){ k, v, (size_t)-1 })
	F("PRIORITY", prio);
	F("SYSLOG_IDENTIFIER", "vigild");
	F("MESSAGE_ID", VD_DENIAL_ID);
	F("MESSAGE", msg);
	F("VIGIL_ACTION", action);
	F("VIGIL_REASON", reason);
	F("VIGIL_EVENT", event);
	F("VIGIL_PATH", path);
	F("VIGIL_PID", pid);
	F("VIGIL_UID", uids);
	F("VIGIL_EXE", exe);
	F("VIGIL_DEV", dev);
	F("VIGIL_INO", ino);
	F("VIGIL_MODE", vd_ctl_mode_names[d->mode]);
	if (rule) {
		F("VIGIL_RULE", rule);
		F("VIGIL_RULE_LINE", line);
	}
	if (package && n < sizeof(f) / sizeof(f[0]))
		F("VIGIL_PACKAGE", package);
#undef F
	(void)vjournal_send(f, n);
	if (p != path)
		free((char *)p);
	if (x != exe)
		free((char *)x);
}

void vd_audit(struct vd *d, struct ev *e, const char *action, const char *reason,
		  long rule)
{
	vd_audit_package(d, e, action, reason, rule, NULL);
}

void vd_audit_package(struct vd *d, struct ev *e, const char *action, const char *reason,
		      long rule, const char *package)
{
	const char *prio = vjournal_enabled() ? journal_priority(action) : NULL;
	json_object *o;
	char ts[VG_UTC_LEN], proc[64], *exe, text[512];
	const char *rule_text = NULL;
	long rule_line = -1;
	struct timespec now;

	if (d->audit < 0 && !prio)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	vg_utc_format(&now, ts, sizeof(ts));
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

		if (r) {
			vg_policy_rule_format(r, text, sizeof(text));
			rule_text = text;
			rule_line = (long)r->line;
			json_object_object_add(o, "rule", json_object_new_string(text));
			json_object_object_add(o, "rule_line", json_object_new_int((int)r->line));
		}
	}
	json_object_object_add(o, "reason", vg_prog_json_text(reason));
	if (package)
		json_object_object_add(o, "package", json_object_new_string(package));
	if (d->audit >= 0)
		dprintf(d->audit, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
									       JSON_C_TO_STRING_NOSLASHESCAPE));
	if (prio)
		journal_entry(d, prio, action, reason, vd_ev_path(e), exe ? exe : "?", e,
			      e->creds ? (int64_t)e->acc.uid : -1, rule_text, rule_line, package);
	json_object_put(o);
	free(exe);
}
