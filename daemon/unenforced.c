// SPDX-License-Identifier: MIT
/*
 * unenforced.c - vigild and the rules it cannot enforce.
 *
 * A policy rule that names what vigild cannot observe (mmap, a kernel
 * hook, the open flags, ...; lib/policy_enforce.c decides and says why)
 * would never match: vigild refuses such a policy, at start (exit 2) and
 * at reload (the old policy stays), with FILE:LINE:COL and the reason.
 * With --accept-unenforced the administrator keeps such rules knowingly:
 * they are logged at every load and listed by `vigil status`.
 */
#include <errno.h>
#include <stdio.h>

#include <json-c/json.h>

#include "log.h"
#include "vigil/policy.h"
#include "vigild.h"

/* at most this many listed in the status answer (its reader takes 64 KiB) */
#define STATUS_MAX 32

int vd_policy_enforceable(const struct vg_policy *p, const char *path, bool accept, char *msg,
			  size_t cap)
{
	struct vg_policy_error err = { 0 };
	size_t n;

	if (accept || vg_policy_check_enforceable(p, &err) == 0)
		return 0;
	n = vg_policy_unenforced_count(p);
	if (n > 1)
		snprintf(msg, cap, "%s:%u:%u: %s; vigild cannot enforce this rule (nor %zu more: "
			 "`vigil policy check` lists them; --accept-unenforced keeps such rules as "
			 "documentation)", path, err.line, err.col, err.msg, n - 1);
	else
		snprintf(msg, cap, "%s:%u:%u: %s; vigild cannot enforce this rule "
			 "(--accept-unenforced keeps it as documentation)", path, err.line, err.col,
			 err.msg);
	return -EOPNOTSUPP;
}

void vd_policy_unenforced_log(const struct vg_policy *p, const char *path)
{
	for (size_t i = 0; i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);

		if (r->unenforced)
			vlog_err("%s:%u:%u: warning: %s; accepted, not enforced", path, r->line,
			    r->unenforced_col, r->unenforced);
	}
}

json_object *vd_policy_unenforced_json(const struct vg_policy *p)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t n = 0;

	for (size_t i = 0; i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);
		json_object *e;
		char text[512];

		if (!r->unenforced)
			continue;
		if (n++ >= STATUS_MAX)
			continue;
		vg_policy_rule_format(r, text, sizeof(text));
		e = json_object_new_object();
		json_object_object_add(e, "line", json_object_new_int((int)r->line));
		json_object_object_add(e, "col", json_object_new_int((int)r->unenforced_col));
		json_object_object_add(e, "rule", json_object_new_string(text));
		json_object_object_add(e, "why", json_object_new_string(r->unenforced));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "total", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "rules", a);
	return o;
}
