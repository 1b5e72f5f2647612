// SPDX-License-Identifier: MIT
/*
 * attest_api_json.c - the JSON every REST message of attest_api.h is read
 * and written with (attest_api_json.h): one strict object per buffer
 * (JSON_TOKENER_STRICT, a size limit), string, base64 and document members
 * into fixed-size or malloc'd fields (a value that does not fit is
 * refused, never truncated), and the builders' serialisation.
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

/* One JSON object filling @buf (trailing whitespace allowed). Return: 0, -EBADMSG, -ENOMEM. */
int vg__api_parse_object_max(const uint8_t *buf, size_t len, size_t max, const char *what,
			     json_object **ret, struct vg_diag *diag)
{
	json_tokener *tok;
	json_object *o;
	size_t end;

	if (!buf || len == 0)
		return vg_diag_set(diag, -EBADMSG, "%s: empty body (a JSON object is expected)", what);
	if (len > max || len > INT32_MAX)
		return vg_diag_set(diag, -EBADMSG, "%s: %zu bytes, more than %zu", what, len, max);
	tok = json_tokener_new();
	if (!tok)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!o) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		int r = vg_diag_set(diag, -EBADMSG, "%s: not valid JSON at byte %zu (%s)", what, end,
				    e == json_tokener_continue || e == json_tokener_success ?
				    "unexpected end" : json_tokener_error_desc(e));

		json_tokener_free(tok);
		return r;
	}
	json_tokener_free(tok);
	while (end < len && (buf[end] == ' ' || buf[end] == '\n' || buf[end] == '\r' ||
			     buf[end] == '\t'))
		end++;
	if (end < len) {
		json_object_put(o);
		return vg_diag_set(diag, -EBADMSG, "%s: %zu bytes after the JSON value", what, len - end);
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return vg_diag_set(diag, -EBADMSG, "%s: not a JSON object", what);
	}
	*ret = o;
	return 0;
}

int vg__api_parse_object(const uint8_t *buf, size_t len, const char *what, json_object **ret,
			 struct vg_diag *diag)
{
	return vg__api_parse_object_max(buf, len, VG_API_MSG_MAX, what, ret, diag);
}

/*
 * String member @key into @out (cap with the NUL). Return: its length;
 * -ENOENT missing (no diag), -EBADMSG wrong type, too long or with a NUL.
 */
int vg__api_get_str(json_object *o, const char *what, const char *key, char *out, size_t cap,
		    struct vg_diag *diag)
{
	json_object *v;
	const char *s;
	int n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	s = json_object_get_string(v);
	n = json_object_get_string_len(v);
	if (n < 0 || (size_t)n >= cap)
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" longer than %zu bytes", what, key,
				   cap - 1);
	if (memchr(s, 0, (size_t)n))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" contains a NUL", what, key);
	memcpy(out, s, (size_t)n);
	out[n] = 0;
	return n;
}

/* Base64 member @key into @out (at most @cap bytes). Return: length; -ENOENT, -EBADMSG, -ENOMEM. */
long vg__api_get_b64(json_object *o, const char *what, const char *key, uint8_t *out,
		     size_t cap, struct vg_diag *diag)
{
	json_object *v;
	uint8_t *raw = NULL;
	long n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	/* 4 characters per 3 bytes: anything longer cannot fit, do not decode it */
	if ((size_t)json_object_get_string_len(v) > 4 * ((cap + 2) / 3) + 64)
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" longer than %zu bytes", what, key, cap);
	n = vg_attest_b64_decode(json_object_get_string(v), &raw);
	if (n == -ENOMEM)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	if (n < 0) {
		free(raw);
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not base64", what, key);
	}
	if ((size_t)n > cap) {
		free(raw);
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is %ld bytes, more than %zu", what, key,
				   n, cap);
	}
	memcpy(out, raw, (size_t)n);
	free(raw);
	return n;
}

int vg__api_decode(json_object *o, const char *what, const struct vg__api_field *fields, size_t n,
		   void *out, size_t size, struct vg_diag *diag)
{
	uint8_t *base = out;

	memset(out, 0, size);
	for (size_t i = 0; i < n; i++) {
		const struct vg__api_field *f = &fields[i];
		long r;

		if (f->kind == VG__API_B64) {
			r = vg__api_get_b64(o, what, f->key, base + f->off, f->cap, diag);
			if (r == 0)
				r = -ENOENT;	/* "" is no bytes: absent */
			if (r > 0)
				*(size_t *)(void *)(base + f->len_off) = (size_t)r;
		} else {
			r = vg__api_get_str(o, what, f->key, (char *)base + f->off, f->cap, diag);
			if (r > 0 && f->kind == VG__API_ID && !vg_api_id_ok((char *)base + f->off, (size_t)r))
				return vg_diag_set(diag, -EBADMSG, "%s: %s: 1 to %d characters of [A-Za-z0-9._-]",
						   what, f->key, VG_API_ID_MAX - 1);
		}
		if (r == -ENOENT && f->required)
			return vg_diag_set(diag, -EBADMSG, "%s: \"%s\"%s is required", what, f->key,
					   f->kind == VG__API_B64 ? " (base64)" : "");
		if (r < 0 && r != -ENOENT)
			return (int)r;
	}
	return 0;
}

int vg__api_decode_body(const uint8_t *buf, size_t len, const char *what,
			const struct vg__api_field *fields, size_t n, void *out, size_t size,
			struct vg_diag *diag)
{
	json_object *o = NULL;
	int r = vg__api_parse_object(buf, len, what, &o, diag);

	if (r < 0)
		return r;
	r = vg__api_decode(o, what, fields, n, out, size, diag);
	json_object_put(o);
	return r;
}

/* Add a base64 string member. Return: 0, -ENOMEM. */
int vg__api_add_b64(json_object *o, const char *key, const uint8_t *b, size_t n)
{
	char *s = NULL;
	json_object *v;

	if (vg_attest_b64_encode(b, n, &s) < 0)
		return -ENOMEM;
	v = json_object_new_string(s);
	free(s);
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int vg__api_add_str(json_object *o, const char *key, const char *s)
{
	json_object *v = json_object_new_string(s);

	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* Serialise @o (consumed) into a malloc'd string. Return: length, -ENOMEM. */
long vg__api_finish(json_object *o, int r, char **ret)
{
	const char *s;
	long n = -ENOMEM;

	if (r == 0 && o) {
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
		if (s && (*ret = strdup(s)))
			n = (long)strlen(s);
	}
	json_object_put(o);
	return n;
}

/*
 * String member @key, or an object member as its JSON text, into a malloc'd
 * NUL-terminated *@ret. Return: its length; -ENOENT missing or "", -EBADMSG,
 * -ENOMEM.
 */
long vg__api_dup_str(json_object *o, const char *what, const char *key, char **ret,
		     struct vg_diag *diag)
{
	json_object *v;
	int n;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (json_object_is_type(v, json_type_object)) {
		/* a document given as JSON rather than as a string of it */
		const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);

		*ret = t ? strdup(t) : NULL;
		return *ret ? (long)strlen(*ret) : vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	}
	if (!json_object_is_type(v, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" is not a string", what, key);
	n = json_object_get_string_len(v);
	if (n <= 0)
		return -ENOENT;		/* "" is absent, as Keylime reads it */
	if (memchr(json_object_get_string(v), 0, (size_t)n))
		return vg_diag_set(diag, -EBADMSG, "%s: \"%s\" contains a NUL", what, key);
	*ret = malloc((size_t)n + 1);
	if (!*ret)
		return vg_diag_set(diag, -ENOMEM, "%s: out of memory", what);
	memcpy(*ret, json_object_get_string(v), (size_t)n + 1);
	return n;
}
