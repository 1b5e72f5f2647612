// SPDX-License-Identifier: MIT
/*
 * attest_api_push.c - push mode's messages (attest_api.h): the challenge
 * the verifier hands a pushing agent and the evidence it pushes back,
 * parsed strictly and built.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "internal.h"
#include "attest_api_json.h"
#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/hash.h"

/* A boolean member. Return: 0/1, -ENOENT, -EBADMSG. */
static int get_bool(json_object *o, const char *what, const char *key, struct vg_diag *diag)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_boolean))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not true or false", what, key);
	return json_object_get_boolean(v) ? 1 : 0;
}

/* "log_offset": decimal digits in a string (64 bits do not fit a JSON number everywhere). */
static int get_offset(json_object *o, const char *what, uint64_t *ret, struct vg_diag *diag)
{
	char s[24];
	int r = vg__api_get_str(o, what, "log_offset", s, sizeof(s), diag);

	if (r == -ENOENT)
		return vg_diag_set(diag, -EBADMSG, "%s: no \"log_offset\"", what);
	if (r < 0)
		return r;
	if (vg_api_log_query_parse(s, ret, NULL) < 0)
		return vg_diag_set(diag, -EBADMSG, "%s: \"log_offset\" is not a decimal offset "
				   "below 2^63", what);
	return 0;
}

int vg_api_challenge_parse(const uint8_t *buf, size_t len, struct vg_api_challenge *ret,
			   struct vg_diag *diag)
{
	static const char what[] = "challenge";
	char nonce[2 * VG_ATTEST_NONCE_MAX + 1], bank[16], mask[8];
	struct vg_api_challenge c = { 0 };
	json_object *o = NULL, *iv;
	struct vg_diag qd = { 0 };
	int r = vg__api_parse_object(buf, len, what, &o, diag);

	if (r < 0)
		return r;
	if ((r = vg__api_get_str(o, what, "nonce", nonce, sizeof(nonce), diag)) == -ENOENT ||
	    (r >= 0 && (r = vg__api_get_str(o, what, "bank", bank, sizeof(bank), diag)) == -ENOENT) ||
	    (r >= 0 && (r = vg__api_get_str(o, what, "mask", mask, sizeof(mask), diag)) == -ENOENT)) {
		r = vg_diag_set(diag, -EBADMSG, "%s: nonce, bank and mask are required", what);
		goto out;
	}
	if (r < 0)
		goto out;
	if (vg_api_quote_query_parse(nonce, bank, mask, &c.q, &qd) < 0) {
		r = vg_diag_set(diag, -EBADMSG, "%s: %s", what, qd.msg);
		goto out;
	}
	r = get_offset(o, what, &c.log_offset, diag);
	if (r < 0)
		goto out;
	r = get_bool(o, what, "boot_log", diag);
	if (r == -EBADMSG)
		goto out;
	c.boot_log = r == 1;
	if (json_object_object_get_ex(o, "interval_ms", &iv)) {
		int64_t ms = json_object_get_int64(iv);

		if (!json_object_is_type(iv, json_type_int) || ms < 0 || ms > INT32_MAX) {
			r = vg_diag_set(diag, -EBADMSG, "%s: \"interval_ms\" is not a number of ms",
					what);
			goto out;
		}
		c.interval_ms = (uint32_t)ms;
	}
	*ret = c;
	r = 0;
out:
	json_object_put(o);
	return r;
}

long vg_api_challenge_build(const struct vg_api_challenge *c, char **ret)
{
	json_object *o = json_object_new_object();
	char hex[2 * VG_ATTEST_NONCE_MAX + 1], mask[16], off[24];
	int r = o ? 0 : -ENOMEM;

	if (c->q.nonce_len > VG_ATTEST_NONCE_MAX) {
		json_object_put(o);
		return -ENOSPC;
	}
	vg_hex_encode(c->q.nonce, c->q.nonce_len, hex);
	snprintf(mask, sizeof(mask), "%" PRIx32, c->q.mask);
	snprintf(off, sizeof(off), "%" PRIu64, c->log_offset);
	if (!r)
		r = vg__api_add_str(o, "nonce", hex);
	if (!r)
		r = vg__api_add_str(o, "bank", vg_hash_name(c->q.bank));
	if (!r)
		r = vg__api_add_str(o, "mask", mask);
	if (!r)
		r = vg__api_add_str(o, "log_offset", off);
	if (!r && json_object_object_add(o, "boot_log", json_object_new_boolean(c->boot_log)) < 0)
		r = -ENOMEM;
	if (!r && json_object_object_add(o, "interval_ms",
					 json_object_new_int64(c->interval_ms)) < 0)
		r = -ENOMEM;
	return vg__api_finish(o, r, ret);
}

/* Base64 member @key, any size (the body's bound holds it). Return: 0, -ENOENT, -EBADMSG, -ENOMEM. */
static int get_b64_dup(json_object *o, const char *what, const char *key, uint8_t **ret,
		       size_t *len, struct vg_diag *diag)
{
	json_object *v;
	uint8_t *raw = NULL;
	long n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	if (json_object_get_string_len(v) == 0) {
		*ret = NULL;
		*len = 0;
		return 0;
	}
	n = vg_attest_b64_decode(json_object_get_string(v), &raw);
	if (n == -ENOMEM)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	if (n < 0) {
		free(raw);
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not base64", what, key);
	}
	*ret = raw;
	*len = (size_t)n;
	return 0;
}

int vg_api_push_parse(const uint8_t *buf, size_t len, size_t max, struct vg_api_push *ret,
		      struct vg_diag *diag)
{
	static const char what[] = "evidence";
	char nonce[2 * VG_ATTEST_NONCE_MAX + 1];
	struct vg_api_push p = { 0 };
	json_object *o = NULL;
	long ql;
	int r = vg__api_parse_object_max(buf, len, max, what, &o, diag), n;

	if (r < 0)
		return r;
	n = vg__api_get_str(o, what, "nonce", nonce, sizeof(nonce), diag);
	if (n == -ENOENT) {
		r = vg_diag_set(diag, -EBADMSG, "%s: no \"nonce\"", what);
		goto fail;
	}
	if (n < 0 || n % 2 || n / 2 < VG_API_NONCE_MIN ||
	    vg_hex_decode(nonce, p.nonce, (size_t)n / 2) != n / 2) {
		r = n < 0 ? n : vg_diag_set(diag, -EBADMSG, "%s: nonce must be %d to %d bytes in hex",
					    what, VG_API_NONCE_MIN, VG_ATTEST_NONCE_MAX);
		goto fail;
	}
	p.nonce_len = (size_t)n / 2;
	ql = vg__api_dup_str(o, what, "quote", &p.quote, diag);
	if (ql == -ENOENT) {
		r = vg_diag_set(diag, -EBADMSG, "%s: no \"quote\"", what);
		goto fail;
	}
	if (ql < 0) {
		r = (int)ql;
		goto fail;
	}
	p.quote_len = (size_t)ql;
	r = get_offset(o, what, &p.log_offset, diag);
	if (r < 0)
		goto fail;
	r = get_b64_dup(o, what, "log", &p.log, &p.log_len, diag);
	if (r < 0 && r != -ENOENT)
		goto fail;
	p.have_log = r == 0;
	r = get_b64_dup(o, what, "boot_log", &p.boot_log, &p.boot_len, diag);
	if (r < 0 && r != -ENOENT)
		goto fail;
	p.have_boot = r == 0;
	json_object_put(o);
	*ret = p;
	return 0;
fail:
	json_object_put(o);
	vg_api_push_release(&p);
	return r;
}

long vg_api_push_build(const struct vg_api_push *p, char **ret)
{
	json_object *o = json_object_new_object();
	char hex[2 * VG_ATTEST_NONCE_MAX + 1], off[24];
	int r = o ? 0 : -ENOMEM;

	if (p->nonce_len > VG_ATTEST_NONCE_MAX) {
		json_object_put(o);
		return -ENOSPC;
	}
	vg_hex_encode(p->nonce, p->nonce_len, hex);
	snprintf(off, sizeof(off), "%" PRIu64, p->log_offset);
	if (!r)
		r = vg__api_add_str(o, "nonce", hex);
	if (!r)
		r = vg__api_add_str(o, "quote", p->quote ? p->quote : "");
	if (!r)
		r = vg__api_add_str(o, "log_offset", off);
	if (!r && p->have_log)
		r = vg__api_add_b64(o, "log", p->log, p->log_len);
	if (!r && p->have_boot)
		r = vg__api_add_b64(o, "boot_log", p->boot_log, p->boot_len);
	return vg__api_finish(o, r, ret);
}

void vg_api_push_release(struct vg_api_push *p)
{
	if (!p)
		return;
	free(p->quote);
	free(p->log);
	free(p->boot_log);
	p->quote = NULL;
	p->log = p->boot_log = NULL;
}
