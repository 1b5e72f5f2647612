// SPDX-License-Identifier: MIT
/*
 * vigild_ctl.c - vigild's control protocol (vigild_ctl.h): request lines
 * and JSON answers, encoded and decoded from one table of names, so that
 * the daemon and `vigil status` cannot drift. No sockets are opened here
 * and nothing is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vigild_ctl.h"
#include "vigil/attest_announce.h"
#include "vigil/pcr.h"

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

static const char hexd[] = "0123456789abcdef";

/* (a space and) @len bytes of @p in hex at @buf + *@n; false when it does not fit */
static bool put_hex(char *buf, size_t cap, size_t *n, bool space, const void *p, size_t len)
{
	const uint8_t *b = p;

	if (*n + 1 + 2 * len >= cap)
		return false;
	if (space)
		buf[(*n)++] = ' ';
	for (size_t i = 0; i < len; i++) {
		buf[(*n)++] = hexd[b[i] >> 4];
		buf[(*n)++] = hexd[b[i] & 15];
	}
	buf[*n] = 0;
	return true;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* @n bytes from the 2 * @n lowercase hex digits at @h. Return: 0, -EPROTO. */
static int hex_exact(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(h[2 * i]), lo = hi < 0 ? -1 : hexval(h[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EPROTO;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/*
 * The next space-separated word of *@pp, lowercase hex of 1 to @cap bytes
 * (with @nul, @cap - 1 and a NUL after them, none inside), into @out.
 * Return: the bytes, or -EPROTO.
 */
static int take_hex(const char **pp, uint8_t *out, size_t cap, bool nul)
{
	const char *p = *pp, *e;
	size_t len, n;

	if (*p != ' ')
		return -EPROTO;
	p++;
	e = p + strcspn(p, " ");
	len = (size_t)(e - p);
	n = len / 2;
	if (len == 0 || len % 2 || n > cap - (nul ? 1 : 0))
		return -EPROTO;
	if (hex_exact(p, out, n) < 0 || (nul && memchr(out, 0, n)))
		return -EPROTO;
	if (nul)
		out[n] = 0;
	*pp = e;
	return (int)n;
}

/* An announcement the daemon takes: the shape in vigild_ctl.h. Return: 0, -EPROTO. */
static int announce_check(const struct vd_ctl_announce *a)
{
	size_t ll = strnlen(a->log, sizeof(a->log));

	if (a->pcr >= VG_PCR_COUNT || ll == 0 || ll >= sizeof(a->log) || a->log[0] != '/' ||
	    a->data_len >= sizeof(a->data) || a->data_len == 0 ||
	    memchr(a->data, 0, a->data_len) || a->data[a->data_len])
		return -EPROTO;
	if (a->kind == VD_CTL_ANN_INITRD)
		return a->data[0] == '/' ? 0 : -EPROTO;
	if (a->kind == VD_CTL_ANN_CMDLINE)
		return a->data_len <= VG_ANNOUNCE_CMDLINE_MAX ? 0 : -EPROTO;
	return -EPROTO;
}

static int announce_encode(const struct vd_ctl_announce *a, char *buf, size_t cap)
{
	size_t n;
	int k;

	if (announce_check(a) < 0)
		return -EINVAL;
	k = snprintf(buf, cap, "announce %s", a->kind == VD_CTL_ANN_INITRD ? "initrd" : "cmdline");
	if (k < 0 || (size_t)k >= cap)
		return -ENOBUFS;
	n = (size_t)k;
	if (!put_hex(buf, cap, &n, true, a->log, strlen(a->log)))
		return -ENOBUFS;
	k = snprintf(buf + n, cap - n, " %u", a->pcr);
	if (k < 0 || (size_t)k >= cap - n)
		return -ENOBUFS;
	n += (size_t)k;
	if (a->kind == VD_CTL_ANN_INITRD) {
		if (n + 8 >= cap)
			return -ENOBUFS;
		memcpy(buf + n, " sha256:", 8);
		n += 8;
		if (!put_hex(buf, cap, &n, false, a->sha256, sizeof(a->sha256)))
			return -ENOBUFS;
	}
	if (!put_hex(buf, cap, &n, true, a->data, a->data_len) || n + 2 > cap)
		return -ENOBUFS;
	buf[n++] = '\n';
	buf[n] = 0;
	return (int)n;
}

/* "announce " already taken: the rest of the line @p (NUL-terminated, no newline) */
static int announce_decode(const char *p, struct vd_ctl_announce *a)
{
	const char *e;
	unsigned long pcr = 0;
	int n;

	memset(a, 0, sizeof(*a));
	if (strncmp(p, "initrd ", 7) == 0) {
		a->kind = VD_CTL_ANN_INITRD;
		p += 6;
	} else if (strncmp(p, "cmdline ", 8) == 0) {
		a->kind = VD_CTL_ANN_CMDLINE;
		p += 7;
	} else {
		return -EPROTO;
	}
	if (take_hex(&p, (uint8_t *)a->log, sizeof(a->log), true) < 0 || *p != ' ')
		return -EPROTO;
	/* the PCR: 1 or 2 decimal digits, no sign, no leading zero but "0" itself */
	e = ++p;
	while (*e >= '0' && *e <= '9' && e - p < 3)
		pcr = pcr * 10 + (unsigned long)(*e++ - '0');
	if (e == p || e - p > 2 || (e - p == 2 && *p == '0') || *e != ' ')
		return -EPROTO;
	a->pcr = (unsigned int)pcr;
	p = e;
	if (a->kind == VD_CTL_ANN_INITRD) {
		if (strncmp(p, " sha256:", 8) != 0 || strcspn(p + 8, " ") != 64 ||
		    hex_exact(p + 8, a->sha256, sizeof(a->sha256)) < 0)
			return -EPROTO;
		p += 8 + 64;
	}
	n = take_hex(&p, (uint8_t *)a->data, sizeof(a->data), true);
	if (n < 0 || *p)
		return -EPROTO;
	a->data_len = (size_t)n;
	return announce_check(a);
}

bool vd_ctl_req_privileged(const char *buf)
{
	return strncmp(buf, "announce", 8) == 0;
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
	case VD_CTL_ANNOUNCE:
		return announce_encode(&q->ann, buf, cap);
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

	if (strncmp(buf, "announce ", 9) == 0) {
		char *l = len < VD_CTL_REQ_MAX ? strndup(buf + 9, len - 9) : NULL;

		if (!l)
			return -EPROTO;
		ret->op = VD_CTL_ANNOUNCE;
		m = announce_decode(l, &ret->ann);
		free(l);
		return m;
	}
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

json_object *vd_ctl_announce_result_encode(const char *why, bool not_this_list, uint64_t entries)
{
	json_object *o;

	if (why) {
		o = one("error", why);
		if (o)
			json_object_object_add(o, "announce", json_object_new_string(
						       not_this_list ? "not-this-list" : "refused"));
		return o;
	}
	o = one("announce", "committed");
	if (o)
		json_object_object_add(o, "entries", json_object_new_int64((int64_t)entries));
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
