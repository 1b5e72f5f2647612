/* SPDX-License-Identifier: MIT */
/*
 * json_text.h - text from elsewhere as a JSON string, for every program
 * that writes JSON (the CLI's --json, vigild's audit file, the verifier's
 * answers and hooks).
 *
 * A file name, an executable's path, a message naming one: the bytes an
 * unprivileged user chose. json-c writes a string's bytes as they are and
 * escapes only control characters, so a name that is not UTF-8 would make
 * the whole line or document invalid; a strict reader (Python's json.loads
 * of the bytes, a SIEM's ingest) then drops it, and with it the denial or
 * failure it records. Such text goes in vigil's escaped form instead
 * (vigil/text.h); UTF-8 text goes as it is.
 */
#ifndef VIGIL_COMMON_JSON_TEXT_H
#define VIGIL_COMMON_JSON_TEXT_H

#include <stdlib.h>

#include <json-c/json.h>

#include "vigil/text.h"

/* Return: a new JSON string of @s as vg_text_show() gives it ("?" if out of memory). */
static inline json_object *vg_prog_json_text(const char *s)
{
	const char *t = vg_text_show(s);
	json_object *o = json_object_new_string(t ? t : "?");

	if (t != s)
		free((char *)t);
	return o;
}

#endif
