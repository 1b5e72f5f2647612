/* SPDX-License-Identifier: MIT */
/*
 * text.h - bytes from elsewhere (a file name in a measurement list, a
 * field of an agent's log) made safe to show: in a message, a report, a
 * JSON document, a terminal.
 *
 * A file name is bytes, not text: it need not be UTF-8, and it may hold
 * control characters (an escape sequence for the operator's terminal, a
 * newline that starts a forged line). An unprivileged user on an attested
 * host chooses such names, and the verifier's reports name the files that
 * failed. Written raw, a name that is not UTF-8 makes a JSON document that
 * strict parsers refuse (Python's json.loads of the bytes does), so a hook
 * or a relying party that parses it misses the failure it reports.
 *
 * The escaped form is vigil's, as in policy paths (docs/policy.md) and the
 * CLI's output: a backslash is "\\", a newline "\n", any other control
 * character (below 0x20, and 0x7f) "\xHH", and every byte that does not
 * belong to a valid UTF-8 sequence (a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF, a truncated sequence) "\xHH"; valid
 * UTF-8 characters stay as they are. The result is valid UTF-8 without
 * control characters, and the original bytes can be read back from it.
 */
#ifndef VIGIL_TEXT_H
#define VIGIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Room that vg_text_escape() needs for all of a string of @n bytes. */
#define VG_TEXT_ESCAPED_MAX(n) (4 * (size_t)(n) + 1)

/* Return: whether @s (NUL-terminated) is valid UTF-8 in full. */
bool vg_text_is_utf8(const char *s);

/* Return: whether @s is valid UTF-8 without control characters (shown as is). */
bool vg_text_is_clean(const char *s);

/*
 * vg_text_escape - @s in the escaped form above, into @out of @cap bytes
 * (@cap > 0), always NUL-terminated. What does not fit is left out at a
 * whole character or escape, never half of one.
 * Return: the length written (without the NUL).
 */
size_t vg_text_escape(const char *s, char *out, size_t cap);

/*
 * vg_text_show - @s as it may be shown where only UTF-8 goes (JSON): @s
 * itself when it is valid UTF-8 (a JSON writer escapes control characters
 * itself), else a malloc()ed copy in the escaped form, which the caller
 * frees when it differs from @s.
 * Return: that string, or NULL when the copy cannot be allocated.
 */
const char *vg_text_show(const char *s);

#endif
