// SPDX-License-Identifier: MIT
/*
 * fuzz_imalog.c - the measurement-list codec (vg_imalog_load): binary and
 * ascii lists as an agent or a disk hands them over.
 *
 * Property: a list that loads prints, entry by entry, as the kernel's ascii
 * list, and that ascii list either loads again to the same number of
 * entries or is refused: a binary list can hold names the ascii form
 * cannot carry (a blank in an event name: the kernel stores '_' there,
 * corpus/imalog/regress-blank-in-name), but it is never misread.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/imalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_imalog_buf scratch = { 0 }, ascii = { 0 }, scratch2 = { 0 };
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	const uint8_t *buf, *buf2;
	size_t len, len2;
	unsigned int algo, algo2;
	long n, n2, k = 0;

	n = vg_imalog_load(data, size, &scratch, &buf, &len, &algo, NULL);
	if (n >= 0) {
		vg_imalog_parser_init(&p, buf, len, algo);
		while (vg_imalog_parser_next(&p, &e, NULL) == 1) {
			FUZZ_CHECK(vg_imalog_format_ascii(&e, &ascii) == 0);
			k++;
		}
		FUZZ_CHECK(k == n);
		if (ascii.len) {
			n2 = vg_imalog_load(ascii.data, ascii.len, &scratch2, &buf2, &len2, &algo2, NULL);
			FUZZ_CHECK(n2 == n || n2 < 0);
		}
	}
	vg_imalog_buf_release(&scratch);
	vg_imalog_buf_release(&scratch2);
	vg_imalog_buf_release(&ascii);
	return 0;
}
