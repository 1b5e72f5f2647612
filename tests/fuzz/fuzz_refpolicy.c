// SPDX-License-Identifier: MIT
/*
 * fuzz_refpolicy.c - reference policies (vg_refpolicy_load) on any bytes:
 * vigil's JSON, Keylime runtime policies (plain and DSSE), flat allowlists.
 *
 * A policy that loads judges a fixed set of real measurement-list entries
 * (Keylime's ima-ng, ima-sig with good and bad signatures, ima-buf
 * keyrings, and ima-evm-utils' test list: tests/vectors):
 *  - twice, with the same verdicts (deterministic);
 *  - exported (vg_refpolicy_to_json) and loaded again, with the same
 *    verdicts and the same number of paths; exporting that gives the
 *    same text (the export is a fixed point).
 * Every refusal is -EBADMSG with a message (or -ENOMEM).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/attest.h"
#include "vigil/imalog.h"

#define MAXE 32

static struct {
	bool ready;
	struct vg_imalog_buf bin[8];
	unsigned int algo[8];
	size_t nbin;
} K;

static const char *const lists[] = {
	"attest/keylime__test_ima_verification__MEASUREMENTS.ima",
	"attest/keylime__test_ima_verification__SIGNATURES.ima",
	"attest/keylime__test_ima_verification__BAD_SIGNATURES.ima",
	"attest/keylime__test_ima_verification__KEYRINGS.ima",
	"imalog/ima-evm-utils-test_ascii_runtime_measurements",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *v = getenv("VECTORS");

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char path[4096], *txt;
		FILE *f;
		long n;

		snprintf(path, sizeof(path), "%s/%s", v && *v ? v : VG_FUZZ_VECTORS, lists[i]);
		f = fopen(path, "rb");
		FUZZ_CHECK(f != NULL);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		txt = malloc((size_t)n + 1);
		FUZZ_CHECK(txt && fread(txt, 1, (size_t)n, f) == (size_t)n);
		fclose(f);
		memset(&K.bin[K.nbin], 0, sizeof(K.bin[0]));
		FUZZ_CHECK(vg_imalog_from_ascii(txt, (size_t)n, &K.bin[K.nbin], &K.algo[K.nbin], NULL) > 0);
		K.nbin++;
		free(txt);
	}
	K.ready = true;
	return 0;
}

struct verdicts {
	size_t n;
	int r[MAXE];
	unsigned int fail[MAXE];
};

static void judge(const struct vg_refpolicy *p, struct verdicts *out)
{
	out->n = 0;
	for (size_t b = 0; b < K.nbin; b++) {
		struct vg_imalog_parser ps;
		struct vg_imalog_entry e;

		vg_imalog_parser_init(&ps, K.bin[b].data, K.bin[b].len, K.algo[b]);
		while (out->n < MAXE && vg_imalog_parser_next(&ps, &e, NULL) == 1) {
			struct vg_attest_verdict v;

			vg_attest_verdict_init(&v);
			out->r[out->n] = vg_refpolicy_check_entry(p, &e, out->n, &v);
			FUZZ_CHECK(out->r[out->n] == 0 || out->r[out->n] == 1);
			out->fail[out->n] = out->r[out->n] ? v.fail : 0;
			FUZZ_CHECK(out->r[out->n] == 0 || (v.fail != VG_AF_NONE && v.msg[0]));
			out->n++;
		}
	}
}

static bool same(const struct verdicts *a, const struct verdicts *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i] != b->r[i] || a->fail[i] != b->fail[i]) {
			fprintf(stderr, "entry %zu: %d/%s vs %d/%s\n", i, a->r[i],
				vg_attest_fail_id(a->fail[i]), b->r[i], vg_attest_fail_id(b->fail[i]));
			return false;
		}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_refpolicy *p = NULL, *q = NULL;
	struct verdicts v1, v2, v3;
	struct vg_diag d = { 0 };
	char *j1 = NULL, *j2 = NULL;
	long l1, l2;
	int r;

	if (!K.ready)
		LLVMFuzzerInitialize(NULL, NULL);
	r = vg_refpolicy_load(data, size, &p, &d);
	if (r < 0) {
		FUZZ_CHECK(r == -EBADMSG || r == -ENOMEM);
		/*
		 * -ENOMEM may come without a message, and a PEM block that OpenSSL
		 * refuses without an error on its queue is -ENOMEM (keyring.c's
		 * pem_stop_reason cannot tell it from OpenSSL 3.0's silent allocation
		 * failures): corpus/refpolicy/regress-pem-silent-enomem
		 */
		FUZZ_CHECK(r == -ENOMEM || (d.err == r && d.msg[0]));
		return 0;
	}
	judge(p, &v1);
	judge(p, &v2);
	FUZZ_CHECK(same(&v1, &v2));
	l1 = vg_refpolicy_to_json(p, &j1);
	FUZZ_CHECK(l1 > 0);
	r = vg_refpolicy_load((const uint8_t *)j1, (size_t)l1, &q, &d);
	if (r != 0)
		fprintf(stderr, "export does not load: %s\n%s\n", d.msg, j1);
	FUZZ_CHECK(r == 0);
	judge(q, &v3);
	FUZZ_CHECK(same(&v1, &v3));
	FUZZ_CHECK(vg_refpolicy_paths(p) == vg_refpolicy_paths(q));
	l2 = vg_refpolicy_to_json(q, &j2);
	FUZZ_CHECK(l2 == l1 && memcmp(j1, j2, (size_t)l1) == 0);
	free(j1);
	free(j2);
	vg_refpolicy_free(p);
	vg_refpolicy_free(q);
	return 0;
}
