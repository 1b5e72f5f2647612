// SPDX-License-Identifier: MIT
/*
 * fuzz_attest_keys.c - keys learned from an agent's measurement list
 * (attest.h: struct vg_attest_learned): the bytes are the buffer of an
 * ima-buf entry of the ".ima" keyring, which the agent controls. The entry
 * is made consistent (its d-ng digest and template digest computed), put
 * before the two ima-sig entries of tests/vectors/attest/learned-keys.ima,
 * and the list is judged by a Keylime-format policy that excludes the
 * keyring's name, so that whatever parses as a key is learned and used
 * for the signatures after it:
 *  - the judgement is 0 or 1, and a failure has an id and a message;
 *  - judging the same list again from a fresh state gives the same result;
 *  - the learned keys never exceed their bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/attest.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"

static struct {
	bool ready;
	struct vg_refpolicy *pol;
	char *rest;		/* the vector's ima-sig lines */
} K;

static char *slurp(const char *name, long *ret_len)
{
	const char *v = getenv("VECTORS");
	char path[4096], *txt;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", v && *v ? v : VG_FUZZ_VECTORS, name);
	f = fopen(path, "rb");
	FUZZ_CHECK(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	txt = malloc((size_t)n + 1);
	FUZZ_CHECK(txt && fread(txt, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	txt[n] = 0;
	*ret_len = n;
	return txt;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vg_diag d = { 0 };
	long n;
	char *pol, *list, *nl;

	(void)argc;
	(void)argv;
	pol = slurp("attest/learned-keys-policy-excluded.json", &n);
	FUZZ_CHECK(vg_refpolicy_load((const uint8_t *)pol, (size_t)n, &K.pol, &d) == 0);
	free(pol);
	list = slurp("attest/learned-keys.ima", &n);
	nl = strchr(list, '\n');	/* line 1 is the keyring entry this harness replaces */
	FUZZ_CHECK(nl != NULL);
	K.rest = strdup(nl + 1);
	FUZZ_CHECK(K.rest != NULL);
	free(list);
	K.ready = true;
	return 0;
}

/* The list: a consistent ".ima" ima-buf entry carrying @buf, then the vector's ima-sig entries. */
static int make_list(const uint8_t *buf, size_t len, struct vg_imalog_buf *out, unsigned int *algo)
{
	static const char hx[] = "0123456789abcdef";
	struct vg_digest dg;
	size_t cap = 256 + 2 * len + strlen(K.rest), k;
	char *text = malloc(cap);
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	long r;

	if (!text)
		return -ENOMEM;
	FUZZ_CHECK(vg_hash_buf(VG_HASH_SHA256, buf, len, &dg, NULL) == 0);
	k = (size_t)snprintf(text, cap, "10 %040d ima-buf sha256:", 0);
	for (size_t i = 0; i < dg.len; i++) {
		text[k++] = hx[dg.bytes[i] >> 4];
		text[k++] = hx[dg.bytes[i] & 15];
	}
	k += (size_t)snprintf(text + k, cap - k, " .ima ");
	for (size_t i = 0; i < len; i++) {
		text[k++] = hx[buf[i] >> 4];
		text[k++] = hx[buf[i] & 15];
	}
	k += (size_t)snprintf(text + k, cap - k, "\n%s", K.rest);
	r = vg_imalog_from_ascii(text, k, out, algo, NULL);
	free(text);
	if (r < 0)
		return (int)r;
	/* the template digest of the first entry, computed: the entry is the agent's, consistent */
	vg_imalog_parser_init(&ps, out->data, out->len, *algo);
	FUZZ_CHECK(vg_imalog_parser_next(&ps, &e, NULL) == 1);
	FUZZ_CHECK(vg_imalog_template_digest(&e, *algo, &dg, NULL) == 0);
	memcpy(out->data + e.offset + 4, dg.bytes, dg.len);
	return 0;
}

static int judge(const struct vg_imalog_buf *l, unsigned int algo, unsigned int *fail,
		 uint64_t *failures, size_t *keys)
{
	struct vg_attest_logstate st;
	struct vg_attest_verdict v;
	int r;

	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	vg_attest_verdict_init(&v);
	r = vg_attest_log_check(K.pol, l->data, l->len, algo, VG_ATTEST_PCR_IMA, NULL, &st, &v);
	FUZZ_CHECK(r == 0 || r == 1 || r == -ENOMEM);
	FUZZ_CHECK(r != 1 || (v.fail != VG_AF_NONE && v.msg[0]));
	FUZZ_CHECK(st.keys.len <= sizeof(st.keys.buf));
	*fail = v.fail;
	*failures = vg_attest_verdict_count(&v);
	*keys = st.keys.len;
	vg_attest_verdict_release(&v);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_imalog_buf l = { 0 };
	unsigned int algo, f1, f2;
	uint64_t n1, n2;
	size_t k1, k2;
	int r1, r2;

	if (!K.ready || size > 8192)
		return 0;
	if (make_list(data, size, &l, &algo) < 0) {
		vg_imalog_buf_release(&l);
		return 0;
	}
	r1 = judge(&l, algo, &f1, &n1, &k1);
	r2 = judge(&l, algo, &f2, &n2, &k2);
	FUZZ_CHECK(r1 == r2 && f1 == f2 && n1 == n2 && k1 == k2);
	vg_imalog_buf_release(&l);
	return 0;
}
