// SPDX-License-Identifier: MIT
/*
 * fuzz_hex.c - hex and UUID text (vg_hex_decode, vg_uuid_parse): keyids,
 * UUIDs and digests given on command lines, in manifests and, later, in
 * policies and JSON.
 *
 * The input is a string up to its first NUL; the byte after that NUL, if
 * any, picks the output capacity. Properties: decode agrees with a model
 * (even length, hex digits, fits), hex_encode(decode(s)) is s in lower
 * case, and a UUID parses exactly when it has the 8-4-4-4-12 form, and
 * prints back the same.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/evm.h"
#include "vigil/hash.h"

static int model(const char *s, size_t cap)
{
	size_t len = strlen(s);

	if (len % 2 || len / 2 > cap)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
	return (int)(len / 2);
}

static bool uuid_form(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *lower, *enc;
	size_t len, cap;
	uint8_t *out, uuid[16];
	int r;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	cap = len + 1 < size ? data[len + 1] : len / 2;
	out = malloc(cap ? cap : 1);
	lower = malloc(len + 1);
	enc = malloc(len + 1);
	if (!out || !lower || !enc)
		goto out;

	r = vg_hex_decode(s, out, cap);
	FUZZ_CHECK(r == model(s, cap));
	if (r >= 0) {
		for (size_t i = 0; i <= len; i++)
			lower[i] = (char)tolower((unsigned char)s[i]);
		vg_hex_encode(out, (size_t)r, enc);
		FUZZ_CHECK(strcmp(enc, lower) == 0);
	}

	r = vg_uuid_parse(s, uuid);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK((r == 0) == uuid_form(s));
	if (r == 0) {
		char back[37];

		vg_hex_encode(uuid, 4, back);
		back[8] = '-';
		vg_hex_encode(uuid + 4, 2, back + 9);
		back[13] = '-';
		vg_hex_encode(uuid + 6, 2, back + 14);
		back[18] = '-';
		vg_hex_encode(uuid + 8, 2, back + 19);
		back[23] = '-';
		vg_hex_encode(uuid + 10, 6, back + 24);
		for (size_t i = 0; i < 36; i++)
			FUZZ_CHECK(back[i] == tolower((unsigned char)s[i]));
	}
out:
	free(enc);
	free(lower);
	free(out);
	free(s);
	return 0;
}
