// SPDX-License-Identifier: MIT
/*
 * fuzz_mbpolicy.c - the event-level measured-boot policy
 * (attest_mbpolicy.h) on bytes from outside: the first byte chooses
 *   'P'  the rest is a policy document (vigil's section, a reference
 *        policy, Keylime's reference state): whatever loads exports to
 *        JSON that loads to the same policy (same id, same text);
 *   else the rest is a boot log (an agent's): a log that parses is judged
 *        by a fixed policy with every key, and by the policy learnt from it
 *        (vg_mbpolicy_from_log), without error; the judge's verdict lists
 *        only boot.event failures with an entry in range, and judging twice
 *        gives the same count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/eventlog.h"

static const char fixed[] =
	"{\"secure_boot\": true, \"pk\": [], \"kek\": [], \"db\": [], \"dbx\": "
	"[\"sha256:0000000000000000000000000000000000000000000000000000000000000000\"], "
	"\"authorities\": [], \"shim\": [], \"grub\": [], \"kernel\": [], \"initrd\": [], "
	"\"vmlinuz\": [], \"mok\": [], \"mokx\": [], \"scrtm\": [], \"platform_firmware\": [], "
	"\"kernel_cmdline\": [\"ro quiet\"], \"kernel_cmdline_regex\": [\"ro .*\"]}";

static void judge(const struct vg_mbpolicy *p, const struct vg_eventlog *log)
{
	struct vg_attest_verdict v, w;
	int r, r2;

	vg_attest_verdict_init(&v);
	vg_attest_verdict_init(&w);
	r = vg_mbpolicy_check(p, log, &v);
	FUZZ_CHECK(r == 0 || r == 1);
	for (size_t i = 0; i < vg_attest_verdict_listed(&v); i++) {
		const struct vg_attest_verdict *f = vg_attest_verdict_nth(&v, i);

		FUZZ_CHECK(f->fail == VG_AF_BOOT_EVENT);
		FUZZ_CHECK(f->entry >= -1 && f->entry < (int64_t)log->nevents);
	}
	r2 = vg_mbpolicy_check(p, log, &w);
	FUZZ_CHECK(r2 == r && vg_attest_verdict_count(&w) == vg_attest_verdict_count(&v));
	vg_attest_verdict_release(&v);
	vg_attest_verdict_release(&w);
}

static void round_trip(const struct vg_mbpolicy *p)
{
	struct vg_mbpolicy *q = NULL;
	char *s = NULL, *t = NULL;
	long n = vg_mbpolicy_to_json(p, &s);

	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(vg_mbpolicy_load((const uint8_t *)s, (size_t)n, &q, NULL) == 0);
	FUZZ_CHECK(memcmp(vg_mbpolicy_id(p), vg_mbpolicy_id(q), 32) == 0);
	FUZZ_CHECK(vg_mbpolicy_to_json(q, &t) == n && strcmp(s, t) == 0);
	free(s);
	free(t);
	vg_mbpolicy_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_mbpolicy *p = NULL, *fp = NULL;
	struct vg_eventlog *log = NULL;

	if (size < 1)
		return 0;
	if (data[0] == 'P') {
		if (vg_mbpolicy_load(data + 1, size - 1, &p, NULL) == 0) {
			round_trip(p);
			vg_mbpolicy_free(p);
		}
		return 0;
	}
	if (vg_eventlog_parse(data + 1, size - 1, &log, NULL) < 0)
		return 0;
	FUZZ_CHECK(vg_mbpolicy_load((const uint8_t *)fixed, sizeof(fixed) - 1, &fp, NULL) == 0);
	judge(fp, log);
	if (vg_mbpolicy_from_log(log, &p, NULL) == 0) {
		round_trip(p);
		judge(p, log);
	}
	vg_mbpolicy_free(p);
	vg_mbpolicy_free(fp);
	vg_eventlog_free(log);
	return 0;
}
