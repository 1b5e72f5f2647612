// SPDX-License-Identifier: MIT
/*
 * fuzz_authenticode.c - vigil/authenticode.h over any bytes: the PE
 * images of a .deb are the archive's, but a boot image a verifier or the
 * CLI is handed (vigil trust boot hash) may be anyone's. Properties: the
 * digest is computed or the image refused with -EBADMSG (never another
 * error, never a read outside the input: the input is copied into a
 * buffer of exactly its size for ASan); a layout that parses has its
 * headers, sections and tail inside the input; computed twice, the digest
 * is the same; vg_pe_is_image holds for every image that parses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/authenticode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *img = malloc(size ? size : 1);
	struct vg_pe_layout pl;
	struct vg_digest a, b;
	int r;

	if (!img)
		return 0;
	memcpy(img, data, size);
	r = vg_pe_layout_parse(img, size, &pl, NULL);
	if (r == 0) {
		FUZZ_CHECK(vg_pe_is_image(img, size));
		FUZZ_CHECK(pl.headers <= size && pl.checksum_off + 4 <= pl.headers);
		FUZZ_CHECK(!pl.certdir_off || (pl.certdir_off > pl.checksum_off &&
						pl.certdir_off + 8 <= pl.headers));
		FUZZ_CHECK(pl.tail == 0 || (pl.sum_hashed < size &&
					     pl.tail + pl.cert_size + pl.sum_hashed == size));
		FUZZ_CHECK(pl.nsections <= VG_PE_MAX_SECTIONS);
	} else {
		FUZZ_CHECK(r == -EBADMSG);
	}
	r = vg_authenticode_digest(img, size, VG_HASH_SHA256, &a, NULL);
	FUZZ_CHECK(r == 0 || r == -EBADMSG);
	if (r == 0) {
		FUZZ_CHECK(a.len == 32 && a.algo == VG_HASH_SHA256);
		FUZZ_CHECK(vg_authenticode_digest(img, size, VG_HASH_SHA256, &b, NULL) == 0);
		FUZZ_CHECK(memcmp(a.bytes, b.bytes, 32) == 0);
	}
	free(img);
	return 0;
}
