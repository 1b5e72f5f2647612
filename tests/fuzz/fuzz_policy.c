// SPDX-License-Identifier: MIT
/*
 * fuzz_policy.c - the policy parser (vg_policy_parse) on any bytes.
 *
 * Property: a text that parses prints in canonical form, the canonical form
 * parses again to an equal policy, and printing it again gives the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_policy *p = NULL, *q = NULL;
	struct vg_policy_error err;
	char *t1 = NULL, *t2 = NULL;
	size_t l1 = 0, l2 = 0;

	if (vg_policy_parse((const char *)data, size, VG_POLICY_ALLOW_EMPTY, &p, &err) == 0) {
		FUZZ_CHECK(vg_policy_format(p, &t1, &l1) == 0);
		FUZZ_CHECK(vg_policy_parse(t1, l1, VG_POLICY_ALLOW_EMPTY, &q, &err) == 0);
		FUZZ_CHECK(vg_policy_equal(p, q));
		FUZZ_CHECK(vg_policy_format(q, &t2, &l2) == 0);
		FUZZ_CHECK(l1 == l2 && memcmp(t1, t2, l1) == 0);
	}
	free(t1);
	free(t2);
	vg_policy_unref(p);
	vg_policy_unref(q);
	return 0;
}
