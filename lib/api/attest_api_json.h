/* SPDX-License-Identifier: MIT */
/*
 * attest_api_json.h - what the attest_api*.c files share to read and
 * write JSON (attest_api_json.c); internal to the attest subsystem.
 */
#ifndef VIGIL_ATTEST_API_JSON_H
#define VIGIL_ATTEST_API_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "vigil/diag.h"

/* One JSON object filling @buf (trailing whitespace allowed), at most @max bytes. Return: 0, -EBADMSG, -ENOMEM. */
int vg__api_parse_object_max(const uint8_t *buf, size_t len, size_t max, const char *what,
			     json_object **ret, struct vg_diag *diag);
/* ... at most VG_API_MSG_MAX bytes. */
int vg__api_parse_object(const uint8_t *buf, size_t len, const char *what, json_object **ret,
			 struct vg_diag *diag);
/* String member @key into @out (cap with the NUL). Return: its length; -ENOENT (no diag), -EBADMSG. */
int vg__api_get_str(json_object *o, const char *what, const char *key, char *out, size_t cap,
		    struct vg_diag *diag);
/* Base64 member @key into @out (at most @cap bytes). Return: length; -ENOENT, -EBADMSG, -ENOMEM. */
long vg__api_get_b64(json_object *o, const char *what, const char *key, uint8_t *out,
		     size_t cap, struct vg_diag *diag);
/* String member @key, or an object member as its JSON text, malloc'd. Return: length; -ENOENT, -EBADMSG, -ENOMEM. */
long vg__api_dup_str(json_object *o, const char *what, const char *key, char **ret,
		     struct vg_diag *diag);
/*
 * A message's members as a table (vg__api_decode): each member's key, its
 * kind, whether it is required, and where it goes in the message's
 * struct. What a table cannot say (a URL's shape, hex) the parser checks
 * after it.
 */
enum vg__api_kind {
	VG__API_STR,	/* text without NUL, shorter than the buffer */
	VG__API_ID,	/* text of vg_api_id_ok (an id, a policy name), or "" */
	VG__API_B64,	/* base64 bytes; its length to the size_t at len_off; "" counts as absent */
};

struct vg__api_field {
	const char *key;
	enum vg__api_kind kind;
	bool required;		/* else absent leaves the member empty */
	size_t off, cap;	/* the buffer in the struct, its size */
	size_t len_off;		/* VG__API_B64: where its length goes */
};

#define VG__API_TEXT(type, member, key, kind, req) \
	{ key, kind, req, offsetof(type, member), sizeof(((type *)0)->member), 0 }
#define VG__API_BYTES(type, member, len, key, req) \
	{ key, VG__API_B64, req, offsetof(type, member), sizeof(((type *)0)->member), offsetof(type, len) }

/*
 * The members of @o named by @fields into the struct at @out (zeroed
 * first). A required one absent: "@what: \"KEY\" is required". Return:
 * 0, -EBADMSG (diag names the member), -ENOMEM.
 */
int vg__api_decode(json_object *o, const char *what, const struct vg__api_field *fields, size_t n,
		   void *out, size_t size, struct vg_diag *diag);
/* One JSON object of at most VG_API_MSG_MAX bytes in @buf, decoded by vg__api_decode. */
int vg__api_decode_body(const uint8_t *buf, size_t len, const char *what,
			const struct vg__api_field *fields, size_t n, void *out, size_t size,
			struct vg_diag *diag);

/* A base64 / a string member added. Return: 0, -ENOMEM. */
int vg__api_add_b64(json_object *o, const char *key, const uint8_t *b, size_t n);
int vg__api_add_str(json_object *o, const char *key, const char *s);
/* @o (consumed) serialised, when @r is 0, into a malloc'd string. Return: length, -ENOMEM. */
long vg__api_finish(json_object *o, int r, char **ret);

#endif
