// SPDX-License-Identifier: MIT
/*
 * fuzz_keyring.c - certificates and public keys as bytes
 * (vg_keyring_add_mem: PEM blocks, else one DER certificate or
 * SubjectPublicKeyInfo), then a signature check with every key found, so
 * that odd keys (tiny moduli, explicit curves) reach EVP_PKEY_verify.
 *
 * Properties: the return is the number of keys added, or one of the
 * documented errors; every key added can be found by its keyid and has a
 * type name and the source given; loading the same bytes twice adds the
 * same keys again; a failure adds no key at all; nothing leaks
 * (LeakSanitizer) when the keyring is freed.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_diag diag = { 0 };
	struct vg_keyring *kr;
	size_t n;
	int r;

	if (vg_keyring_new(&kr) < 0)
		return 0;
	r = vg_keyring_add_mem(kr, data, size, "fuzz", &diag);
	n = vg_keyring_count(kr);
	if (r < 0) {
		FUZZ_CHECK(r == -EBADMSG || r == -EOPNOTSUPP || r == -EIO || r == -ENOMEM);
		FUZZ_CHECK(diag.err == r || r == -ENOMEM);
		FUZZ_CHECK(n == 0);	/* all or nothing */
	} else {
		FUZZ_CHECK(r >= 1 && (size_t)r == n);
		FUZZ_CHECK(vg_keyring_add_mem(kr, data, size, "again", NULL) == r);
		FUZZ_CHECK(vg_keyring_count(kr) == 2 * n);
	}
	for (size_t i = 0; i < n; i++) {
		const struct vg_keyinfo *ki = vg_keyring_info(kr, i);
		uint8_t blob[VG_SIG_V2_HDR_LEN + 64];
		struct vg_sig_v2 s = { .type = 3, .version = 2, .hash_algo = VG_HASH_SHA256,
				       .sig_size = 64, .sig = data };
		struct vg_digest d = { .algo = VG_HASH_SHA256, .len = 32 };
		uint8_t filler[64];

		FUZZ_CHECK(ki && ki->type && ki->type[0] && strcmp(ki->source, "fuzz") == 0);
		FUZZ_CHECK(vg_keyring_find(kr, ki->keyid) != NULL);
		FUZZ_CHECK(!ki->skid_missing || ki->from_cert);
		if (size < 64) {
			memset(filler, 0x30, sizeof(filler));
			s.sig = filler;
		}
		s.keyid = ki->keyid;
		memset(d.bytes, 0x5a, d.len);
		FUZZ_CHECK(vg_sig_v2_encode(&s, blob, sizeof(blob)) == (int)sizeof(blob));
		(void)vg_sig_verify(kr, blob, sizeof(blob), &d, NULL);
	}
	FUZZ_CHECK(vg_keyring_info(kr, vg_keyring_count(kr)) == NULL);
	vg_keyring_free(kr);
	return 0;
}
