// SPDX-License-Identifier: MIT
/*
 * vigild_ctl.c - vigild's control protocol (vigild_ctl.h): request lines
 * and JSON answers, encoded and decoded from one table of names, so that
 * the daemon and `vigil status` cannot drift. No sockets are opened here
 * and nothing is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vigild_ctl.h"

const char *const vd_ctl_mode_names[VD_CTL_NMODES] = { "enforce", "permissive", "fix" };

const char *const vd_ctl_counter_names[VD_CTL_NCOUNTERS] = {
	"events", "allowed", "denied", "would_deny", "own", "cache_hits", "cache_misses",
	"hashed_bytes", "timeouts", "worker_restarts", "overflows", "measured", "fixed", "errors",
	"ignore_marks", "ignore_flushes", "measure_failures", "lease_breaks", "lease_writers",
	"lease_errors", "too_large", "appraiser_kills", "worker_spawns", "appraisers", "leases",
	"trusted_archive", "trust_files", "appraiser_answers", "appraisals", "open_errors",
	"journal_sent", "journal_dropped", "ran_before_ready", "ran_before_ready_failed",
};

int vd_ctl_mode_parse(const char *s)
{
	for (int i = 0; i < VD_CTL_NMODES; i++)
		if (strcmp(s, vd_ctl_mode_names[i]) == 0)
			return i;
	return -EINVAL;
}

int vd_ctl_req_encode(const struct vd_ctl_req *q, char *buf, size_t cap)
{
	int n;

	switch (q->op) {
	case VD_CTL_STATUS:
		n = snprintf(buf, cap, "status\n");
		break;
	case VD_CTL_RELOAD:
		n = snprintf(buf, cap, "reload\n");
		break;
	case VD_CTL_MODE:
		if ((unsigned int)q->mode >= VD_CTL_NMODES)
			return -EINVAL;
		n = snprintf(buf, cap, "mode %s\n", vd_ctl_mode_names[q->mode]);
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= cap ? -ENOBUFS : n;
}

int vd_ctl_req_decode(const char *buf, struct vd_ctl_req *ret)
{
	size_t len = strcspn(buf, "\r\n");
	char line[256];
	int m;

	if (len >= sizeof(line))
		return -EBADMSG;
	memcpy(line, buf, len);
	line[len] = 0;
	if (strcmp(line, "status") == 0) {
		*ret = (struct vd_ctl_req){ .op = VD_CTL_STATUS };
	} else if (strcmp(line, "reload") == 0) {
		*ret = (struct vd_ctl_req){ .op = VD_CTL_RELOAD };
	} else if (strncmp(line, "mode ", 5) == 0) {
		m = vd_ctl_mode_parse(line + 5);
		if (m < 0)
			return -EINVAL;
		*ret = (struct vd_ctl_req){ .op = VD_CTL_MODE, .mode = (enum vd_ctl_mode)m };
	} else {
		return -EBADMSG;
	}
	return 0;
}

json_object *vd_ctl_status_encode(const struct vd_ctl_status *s, json_object *unenforced)
{
	json_object *o = json_object_new_object(), *c = json_object_new_object();
	json_object *marks = json_object_new_array(), *reasons = json_object_new_object();

	json_object_object_add(o, "mode", json_object_new_string(s->mode));
	json_object_object_add(o, "policy_sha256", json_object_new_string(s->policy_sha256));
	json_object_object_add(o, "policy_rules", json_object_new_int64(s->policy_rules));
	json_object_object_add(o, "unenforced_rules", unenforced);
	for (size_t i = 0; i < s->nmarks; i++)
		json_object_array_add(marks, json_object_new_string(s->marks[i]));
	json_object_object_add(o, "marks", marks);
	json_object_object_add(o, "pending", json_object_new_int(s->pending));
	json_object_object_add(o, "measurements", json_object_new_int64(s->measurements));
	for (size_t i = 0; i < VD_CTL_NCOUNTERS; i++)
		json_object_object_add(c, vd_ctl_counter_names[i],
				       json_object_new_int64((int64_t)s->counters[i]));
	for (size_t i = 0; i < s->nreasons; i++)
		json_object_object_add(reasons, s->reasons[i].reason,
				       json_object_new_int64((int64_t)s->reasons[i].n));
	json_object_object_add(c, "denied_by_reason", reasons);
	json_object_object_add(o, "counters", c);
	json_object_object_add(o, "latency_p50_us", json_object_new_double(s->p50_us));
	json_object_object_add(o, "latency_p99_us", json_object_new_double(s->p99_us));
	c = json_object_new_array();
	for (size_t i = 0; i < VD_CTL_LAT_BUCKETS; i++)
		json_object_array_add(c, json_object_new_int64((int64_t)s->latency[i]));
	json_object_object_add(o, "latency_buckets_us", c);
	json_object_object_add(o, "latency_sum_us", json_object_new_double(s->latency_sum_us));
	json_object_object_add(o, "trust_db", s->trust_db ? json_object_new_string(s->trust_db) : NULL);
	return o;
}

static json_object *one(const char *key, const char *value)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, key, json_object_new_string(value));
	return o;
}

json_object *vd_ctl_mode_encode(enum vd_ctl_mode m)
{
	return one("mode", vd_ctl_mode_names[m]);
}

json_object *vd_ctl_reload_result_encode(bool ok, size_t rules, const char *sha256, const char *why)
{
	json_object *o;

	if (!ok) {
		o = one("error", why ? why : "policy refused");
		if (o)
			json_object_object_add(o, "reload", json_object_new_string("refused"));
		return o;
	}
	o = one("reload", "applied");
	if (o) {
		json_object_object_add(o, "policy_rules", json_object_new_int64((int64_t)rules));
		json_object_object_add(o, "policy_sha256", json_object_new_string(sha256 ? sha256 : ""));
	}
	return o;
}

json_object *vd_ctl_error_encode(const char *why)
{
	return one("error", why);
}

int vd_ctl_answer_write(int fd, json_object *o)
{
	return dprintf(fd, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0 ? -EIO
												    : 0;
}

int vd_ctl_answer_decode(const char *buf, json_object **ret, const char **ret_why)
{
	json_object *o = json_tokener_parse(buf), *err;

	if (!o)
		return -EBADMSG;
	*ret = o;
	if (json_object_object_get_ex(o, "error", &err)) {
		*ret_why = json_object_get_string(err);
		return -EPERM;
	}
	return 0;
}

static void copy_str(char *dst, size_t cap, json_object *v)
{
	snprintf(dst, cap, "%s", json_object_get_string(v) ? json_object_get_string(v) : "");
}

void vd_ctl_status_decode(json_object *o, struct vd_ctl_status *s,
			  struct vd_ctl_unenforced *rules, size_t cap)
{
	json_object *v, *c, *r;

	memset(s, 0, sizeof(*s));
	s->unenforced = rules;
	if ((s->has_mode = json_object_object_get_ex(o, "mode", &v)))
		copy_str(s->mode, sizeof(s->mode), v);
	if ((s->has_policy = json_object_object_get_ex(o, "policy_sha256", &v)))
		copy_str(s->policy_sha256, sizeof(s->policy_sha256), v);
	if ((s->has_rules = json_object_object_get_ex(o, "policy_rules", &v)))
		s->policy_rules = json_object_get_int(v);
	if (json_object_object_get_ex(o, "unenforced_rules", &v)) {
		s->unenforced_total = json_object_get_int(json_object_object_get(v, "total"));
		r = json_object_object_get(v, "rules");
		for (size_t i = 0; r && i < json_object_array_length(r) && s->nunenforced < cap; i++) {
			json_object *e = json_object_array_get_idx(r, i);
			struct vd_ctl_unenforced *u = &rules[s->nunenforced++];

			u->line = json_object_get_int(json_object_object_get(e, "line"));
			u->col = json_object_get_int(json_object_object_get(e, "col"));
			copy_str(u->rule, sizeof(u->rule), json_object_object_get(e, "rule"));
			copy_str(u->why, sizeof(u->why), json_object_object_get(e, "why"));
		}
	}
	if ((s->has_marks = json_object_object_get_ex(o, "marks", &v)))
		for (size_t i = 0; i < json_object_array_length(v) && s->nmarks < VD_CTL_MAX_MARKS; i++)
			s->marks[s->nmarks++] = json_object_get_string(json_object_array_get_idx(v, i));
	if (json_object_object_get_ex(o, "pending", &v))
		s->pending = json_object_get_int(v);
	if (json_object_object_get_ex(o, "measurements", &v))
		s->measurements = json_object_get_int64(v);
	if ((s->has_counters = json_object_object_get_ex(o, "counters", &c))) {
		for (size_t i = 0; i < VD_CTL_NCOUNTERS; i++)
			if ((s->has_counter[i] = json_object_object_get_ex(c, vd_ctl_counter_names[i], &v)))
				s->counters[i] = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(c, "denied_by_reason", &r)) {
			json_object_object_foreach(r, rk, rv) {
				if (s->nreasons == VD_CTL_MAX_REASONS)
					break;
				snprintf(s->reasons[s->nreasons].reason, sizeof(s->reasons[0].reason), "%s", rk);
				s->reasons[s->nreasons++].n = (uint64_t)json_object_get_int64(rv);
			}
		}
	}
	if ((s->has_p50 = json_object_object_get_ex(o, "latency_p50_us", &v)))
		s->p50_us = json_object_get_double(v);
	if ((s->has_p99 = json_object_object_get_ex(o, "latency_p99_us", &v)))
		s->p99_us = json_object_get_double(v);
	if ((s->has_latency = json_object_object_get_ex(o, "latency_buckets_us", &v) &&
			      json_object_is_type(v, json_type_array) &&
			      json_object_array_length(v) == VD_CTL_LAT_BUCKETS))
		for (size_t i = 0; i < VD_CTL_LAT_BUCKETS; i++)
			s->latency[i] = (uint64_t)json_object_get_int64(json_object_array_get_idx(v, i));
	if (json_object_object_get_ex(o, "latency_sum_us", &v))
		s->latency_sum_us = json_object_get_double(v);
	if (json_object_object_get_ex(o, "trust_db", &v) && json_object_is_type(v, json_type_string))
		s->trust_db = json_object_get_string(v);
}
