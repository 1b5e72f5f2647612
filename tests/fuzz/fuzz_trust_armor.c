// SPDX-License-Identifier: MIT
/*
 * fuzz_trust_armor.c - vg_trust_dearmor (lib/trust/trust_gpgv.c): the
 * ASCII armor of a keyring (apt's trusted.gpg.d/\*.asc, a Signed-By key
 * block) decoded for gpgv. Sources files and keyrings are the admin's, but
 * a parser must not trust its input either.
 *
 * Properties: the result is 0, -EBADMSG, or -ENOMEM (only when out of
 * memory); a decoded result is not empty and not longer than 3/4 of the
 * input; armored again (64-character radix-64 lines between the header and
 * tail lines, with a blank line, a header and a CRC line that are not
 * checked), it decodes to the same bytes.
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "fuzz.h"
#include "vigil/trust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *out = NULL, *again = NULL;
	size_t n = 0, m = 0;
	char *text;
	size_t tl;
	int r = vg_trust_dearmor(data, size, &out, &n);

	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r)
		return 0;
	FUZZ_CHECK(out && n > 0 && n <= size / 4 * 3 + 3);
	/* armored again, by a writer of its own */
	tl = 80 + (n + 2) / 3 * 4 + (n + 47) / 48 + 64;
	text = malloc(tl);
	FUZZ_CHECK(text);
	{
		size_t w = (size_t)snprintf(text, tl, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n"
						      "Comment: again\n\n");

		for (size_t off = 0; off < n; off += 48) {
			size_t k = n - off < 48 ? n - off : 48;

			w += (size_t)EVP_EncodeBlock((unsigned char *)text + w, out + off, (int)k);
			text[w++] = '\n';
		}
		w += (size_t)snprintf(text + w, tl - w, "=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n");
		r = vg_trust_dearmor((const uint8_t *)text, w, &again, &m);
	}
	FUZZ_CHECK(r == 0 || r == -ENOMEM);
	if (r == 0)
		FUZZ_CHECK(m == n && memcmp(again, out, n) == 0);
	free(again);
	free(text);
	free(out);
	return 0;
}
