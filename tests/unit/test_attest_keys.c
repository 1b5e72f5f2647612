// SPDX-License-Identifier: MIT
/*
 * test_attest_keys.c - keys learned from a measurement list's keyring
 * entries (attest_keys.c, attest_policy.c, attest_log.c), on the vectors
 * of tests/vectors/attest/make-learned-keys.py (an ima-buf ".ima" entry
 * with a certificate, then ima-sig entries signed by its key) whose
 * verdicts Keylime's own code gives too (keylime-ima-verdicts.json).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vigil/attest.h"
#include "vigil/imalog.h"

static uint8_t *slurp(const char *rel, size_t *len)
{
	char path[4096];
	const char *v = getenv("VECTORS");
	struct stat st;
	uint8_t *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/attest/%s", v ? v : "tests/vectors", rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("cannot open %s", path);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	buf[st.st_size] = 0;
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static struct vg_refpolicy *policy_file(const char *rel)
{
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	size_t n;
	uint8_t *b = slurp(rel, &n);

	if (vg_refpolicy_load(b, n, &p, &d) < 0)
		fail_msg("%s: %s", rel, d.msg);
	free(b);
	return p;
}

static struct vg_refpolicy *policy_text(const char *s)
{
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };

	if (vg_refpolicy_load((const uint8_t *)s, strlen(s), &p, &d) < 0)
		fail_msg("%s", d.msg);
	return p;
}

/* A list as the binary list vg_attest_log_check takes. */
struct list {
	uint8_t *raw;
	struct vg_imalog_buf scratch;
	const uint8_t *buf;
	size_t len;
	unsigned int algo;
};

static void list_load(struct list *l, const char *rel)
{
	struct vg_diag d = { 0 };
	size_t n;

	memset(l, 0, sizeof(*l));
	l->raw = slurp(rel, &n);
	assert_true(vg_imalog_load(l->raw, n, &l->scratch, &l->buf, &l->len, &l->algo, &d) >= 0);
}

static void list_free(struct list *l)
{
	vg_imalog_buf_release(&l->scratch);
	free(l->raw);
}

/* Bytes of the first @n entries of @l. */
static size_t list_prefix(const struct list *l, unsigned int n)
{
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };

	vg_imalog_parser_init(&ps, l->buf, l->len, l->algo);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(vg_imalog_parser_next(&ps, &e, &d), 1);
	return ps.off;
}

/* Judge @l from @st (quoted: NULL, all attested). Return: the first failure, VG_AF_NONE. */
static unsigned int judge(const struct vg_refpolicy *p, const uint8_t *buf, size_t len,
			  unsigned int algo, const struct vg_digest *quoted,
			  struct vg_attest_logstate *st, uint64_t *failures)
{
	struct vg_attest_verdict v;
	unsigned int f;
	int r;

	vg_attest_verdict_init(&v);
	r = vg_attest_log_check(p, buf, len, algo, VG_ATTEST_PCR_IMA, quoted, st, &v);
	assert_true(r == 0 || r == 1);
	f = r ? v.fail : VG_AF_NONE;
	if (failures)
		*failures = vg_attest_verdict_count(&v);
	vg_attest_verdict_release(&v);
	return f;
}

static unsigned int judge_all(const char *pol, const char *log, uint64_t *failures,
			      size_t *learned)
{
	struct vg_refpolicy *p = policy_file(pol);
	struct vg_attest_logstate st;
	struct list l;
	unsigned int f;

	list_load(&l, log);
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	f = judge(p, l.buf, l.len, l.algo, NULL, &st, failures);
	if (learned)
		*learned = f == VG_AF_NONE ? vg_attest_learned_count(&st.keys) : 0;
	list_free(&l);
	vg_refpolicy_free(p);
	return f;
}

static void keylime_policy_keyrings_teach_keys(void **state)
{
	uint64_t n;
	size_t k;

	(void)state;
	/* the keyring's buffer allowed: its key verifies the two signed files after it */
	assert_int_equal(judge_all("learned-keys-policy.json", "learned-keys.ima", &n, &k),
			 VG_AF_NONE);
	assert_int_equal(k, 1);
	/* no keyring in the policy: the entry and both files fail (Keylime: 3 not_in_allowlist) */
	assert_int_equal(judge_all("learned-keys-policy-nokeyring.json", "learned-keys.ima", &n,
				   NULL), VG_AF_NOT_IN_POLICY);
	assert_int_equal(n, 3);
	/* another digest for .ima: runtime_policy_hash, then both files unverified */
	assert_int_equal(judge_all("learned-keys-policy-wrongdigest.json", "learned-keys.ima", &n,
				   NULL), VG_AF_DIGEST);
	assert_int_equal(n, 3);
	/* an ignored keyring passes and teaches nothing */
	assert_int_equal(judge_all("learned-keys-policy-ignored.json", "learned-keys.ima", &n, NULL),
			 VG_AF_NOT_IN_POLICY);
	assert_int_equal(n, 2);
	/* Keylime: an excluded keyring name passes, and its key is learned */
	assert_int_equal(judge_all("learned-keys-policy-excluded.json", "learned-keys.ima", &n, &k),
			 VG_AF_NONE);
	assert_int_equal(k, 1);
	/* a key that cannot verify signatures (Ed25519): Keylime's invalid_key */
	assert_int_equal(judge_all("learned-keys-ed25519-policy.json", "learned-keys-ed25519.ima", &n,
				   NULL), VG_AF_KEYRING_KEY);
	assert_int_equal(n, 1);
	/* a key verifies only the entries after it */
	assert_int_equal(judge_all("learned-keys-policy.json", "learned-keys-sig-first.ima", &n,
				   NULL), VG_AF_NOT_IN_POLICY);
	assert_int_equal(n, 1);
}

static void learned_keys_persist_with_the_attested_part(void **state)
{
	struct vg_refpolicy *p = policy_file("learned-keys-policy.json");
	struct vg_attest_logstate st, first, none;
	struct list l;
	size_t off1;

	(void)state;
	list_load(&l, "learned-keys.ima");
	off1 = list_prefix(&l, 1);
	/* round 1: only the keyring entry */
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	assert_int_equal(judge(p, l.buf, off1, l.algo, NULL, &st, NULL), VG_AF_NONE);
	assert_int_equal(st.entries, 1);
	assert_int_equal(vg_attest_learned_count(&st.keys), 1);
	first = st;
	/* round 2: the signed files, judged with the key the state kept */
	assert_int_equal(judge(p, l.buf + off1, l.len - off1, l.algo, NULL, &st, NULL), VG_AF_NONE);
	assert_int_equal(st.entries, 3);
	assert_int_equal(vg_attest_learned_count(&st.keys), 1);
	/* the same round from a state without the key fails both files */
	none = first;
	memset(&none.keys, 0, sizeof(none.keys));
	{
		uint64_t n;

		assert_int_equal(judge(p, l.buf + off1, l.len - off1, l.algo, NULL, &none, &n),
				 VG_AF_NOT_IN_POLICY);
		assert_int_equal(n, 2);
	}
	/*
	 * a quote that covers only the keyring entry: the round passes (its
	 * later entries judged with the key), the key is kept with entry 0
	 */
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	assert_int_equal(judge(p, l.buf, l.len, l.algo, &first.pcr, &st, NULL), VG_AF_NONE);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.lag, 2);
	assert_int_equal(vg_attest_learned_count(&st.keys), 1);
	assert_memory_equal(&st.keys, &first.keys, sizeof(st.keys));
	/* a quote that covers nothing yet: no key is kept */
	{
		struct vg_digest zero;

		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		zero = st.pcr;
		assert_int_equal(judge(p, l.buf, l.len, l.algo, &zero, &st, NULL), VG_AF_NONE);
		assert_int_equal(st.entries, 0);
		assert_int_equal(vg_attest_learned_count(&st.keys), 0);
		assert_int_equal(st.keys.len, 0);
	}
	list_free(&l);
	vg_refpolicy_free(p);
}

static void strict_policies_learn_only_from_listed_digests(void **state)
{
	struct vg_refpolicy *p = policy_file("learned-keys-policy.json"), *q;
	struct vg_attest_logstate st;
	struct list l;
	char *json, *strict, *at;
	long n;

	(void)state;
	list_load(&l, "learned-keys.ima");
	/* the export keeps the keyrings and Keylime's reading */
	n = vg_refpolicy_to_json(p, &json);
	assert_true(n > 0);
	assert_non_null(strstr(json, "\"keyrings\""));
	q = policy_text(json);
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	assert_int_equal(judge(q, l.buf, l.len, l.algo, NULL, &st, NULL), VG_AF_NONE);
	vg_refpolicy_free(q);
	/* vigil's strict reading with the same keyrings learns the key too */
	strict = strdup(json);
	at = strstr(strict, "\"keylime\"");
	assert_non_null(at);
	memcpy(at, "\"strict\" ", 9);
	q = policy_text(strict);
	vg_attest_logstate_init(&st, VG_HASH_SHA256);
	assert_int_equal(judge(q, l.buf, l.len, l.algo, NULL, &st, NULL), VG_AF_NONE);
	assert_int_equal(vg_attest_learned_count(&st.keys), 1);
	vg_refpolicy_free(q);
	/* strict: an exclude that matches the keyring teaches nothing */
	q = policy_text("{\"vigil_refpolicy\": 1, \"digests\": {}, \"excludes\": [\"\\\\.ima\"]}");
	{
		uint64_t f;

		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		assert_int_equal(judge(q, l.buf, l.len, l.algo, NULL, &st, &f), VG_AF_NOT_IN_POLICY);
		assert_int_equal(f, 3);
	}
	vg_refpolicy_free(q);
	/* strict: an ignored keyring passes and teaches nothing */
	q = policy_text("{\"vigil_refpolicy\": 1, \"digests\": {}, \"ignored_keyrings\": [\".ima\"],"
			"\"keyrings\": {\".ima\": [\"sha256:6901c997acde2d1aa1e3f7ec61d8f403e2f6403d5c4"
			"ac7febde8cef2c34dc137\"]}}");
	{
		uint64_t f;

		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		assert_int_equal(judge(q, l.buf, l.len, l.algo, NULL, &st, &f), VG_AF_NOT_IN_POLICY);
		assert_int_equal(f, 2);
	}
	vg_refpolicy_free(q);
	/*
	 * an export from before "keyrings" (a Keylime policy's keyrings were
	 * in "ima_buf"): its keyring entries pass as before, no key learned
	 */
	q = policy_text("{\"vigil_refpolicy\": 1, \"ima_sig\": \"keylime\", \"digests\": {},"
			"\"ima_buf\": {\".ima\": [\"6901c997acde2d1aa1e3f7ec61d8f403e2f6403d5c4ac7febde8"
			"cef2c34dc137\"]}}");
	{
		struct vg_attest_verdict v;
		uint64_t f;
		char *again;

		vg_attest_logstate_init(&st, VG_HASH_SHA256);
		assert_int_equal(judge(q, l.buf, l.len, l.algo, NULL, &st, &f), VG_AF_NOT_IN_POLICY);
		assert_int_equal(f, 2);
		vg_attest_verdict_init(&v);
		assert_int_equal(vg_attest_log_check(q, l.buf, l.len, l.algo, VG_ATTEST_PCR_IMA, NULL,
						     &st, &v), 1);
		assert_int_equal(v.entry, 1);	/* the keyring entry passed */
		vg_attest_verdict_release(&v);
		/* and its export stays what it was */
		assert_true(vg_refpolicy_to_json(q, &again) > 0);
		assert_null(strstr(again, "\"keyrings\""));
		free(again);
	}
	vg_refpolicy_free(q);
	free(strict);
	free(json);
	list_free(&l);
	vg_refpolicy_free(p);
}

static void learned_records_decode_exactly(void **state)
{
	struct vg_attest_learned k;
	size_t n;
	uint8_t *der = slurp("learned-keys-cert.der", &n);
	uint8_t rec[2048];

	(void)state;
	assert_true(n + 2 <= sizeof(rec));
	rec[0] = (uint8_t)(n >> 8);
	rec[1] = (uint8_t)n;
	memcpy(rec + 2, der, n);
	assert_int_equal(vg_attest_learned_set(&k, rec, n + 2), 0);
	assert_int_equal(vg_attest_learned_count(&k), 1);
	assert_int_equal(vg_attest_learned_set(&k, rec, n + 1), -EBADMSG);	/* truncated */
	assert_int_equal(k.len, 0);
	assert_int_equal(vg_attest_learned_set(&k, rec, 1), -EBADMSG);
	assert_int_equal(vg_attest_learned_set(&k, NULL, 0), 0);
	assert_int_equal(vg_attest_learned_count(&k), 0);
	free(der);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keylime_policy_keyrings_teach_keys),
		cmocka_unit_test(learned_keys_persist_with_the_attested_part),
		cmocka_unit_test(strict_policies_learn_only_from_listed_digests),
		cmocka_unit_test(learned_records_decode_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
