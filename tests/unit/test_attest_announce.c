// SPDX-License-Identifier: MIT
/*
 * test_attest_announce.c - the next boot's announcements (attest_announce.h):
 * recognised in list entries (and refused when named like one but not
 * one), collected from the first N entries only, replaced by path or
 * kernel, the oldest giving way when the set is full, filtered by the boot
 * that made them, read back from the store exactly; and the measured_boot
 * keys that use them and the archive (from_archive, announced): read,
 * written back, unknown names refused. The two writers
 * (vg_attest_announce_initrd and _cmdline: `vigil trust boot announce`
 * and vigild's list writer) make entries the collector takes, and refuse
 * what no announcement may hold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vigil/attest_announce.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/mlog.h"
#include "vigil/pcrbank.h"

/* one entry appended to @b: ima-ng (@name, digest of @content) or ima-buf (@name, @content) */
static void entry(struct vg_imalog_buf *b, const char *name, const char *content, bool buf,
		  bool wrong_digest)
{
	struct vg_imalog_field f[3];
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_digest h, td;
	uint8_t dng[8 + 32] = "sha256:";
	size_t start = b->len;

	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, content, strlen(content), &h, NULL), 0);
	memcpy(dng + 8, h.bytes, 32);
	if (wrong_digest)
		dng[8] ^= 1;
	f[0] = (struct vg_imalog_field){ VG_IMAF_D_NG, sizeof(dng), dng };
	f[1] = (struct vg_imalog_field){ VG_IMAF_N_NG, (uint32_t)strlen(name) + 1,
					 (const uint8_t *)name };
	f[2] = (struct vg_imalog_field){ VG_IMAF_BUF, (uint32_t)strlen(content),
					 (const uint8_t *)content };
	assert_int_equal(vg_imalog_encode_fields(10, buf ? "ima-buf" : "ima-ng", f, buf ? 3 : 2, 20,
						 b), 0);
	/* the template digest, as a writer fills it in */
	vg_imalog_parser_init(&ps, b->data + start, b->len - start, VG_HASH_SHA1);
	assert_int_equal(vg_imalog_parser_next(&ps, &e, NULL), 1);
	assert_int_equal(vg_imalog_template_digest(&e, VG_HASH_SHA1, &td, NULL), 0);
	memcpy(b->data + start + 4, td.bytes, 20);
}

static void written_announcements_are_collected(void **state)
{
	char dir[] = "/tmp/test_attest_announce.XXXXXX", log[64], pcrs[64], line[1025];
	struct vg_mlog_opts mo = { .ops = &vg_pcrbank_ops, .pcr_sync = vg_pcrbank_sync_cb,
				   .no_sync = true };
	struct vg_attest_announced *ann = calloc(1, sizeof(*ann));
	struct vg_pcrbank *bank = NULL;
	struct vg_mlog *l = NULL;
	struct vg_announcement a;
	struct vg_diag d = { 0 };
	uint8_t dig[32], buf[4096];
	size_t cur = 0, len;
	FILE *f;

	(void)state;
	assert_non_null(ann);
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/ml", dir);
	snprintf(pcrs, sizeof(pcrs), "%s/ml.pcrs", dir);
	assert_int_equal(vg_pcrbank_open(pcrs, 1u << VG_HASH_SHA1 | 1u << VG_HASH_SHA256, &bank, &d), 0);
	mo.ops_ctx = bank;
	assert_int_equal(vg_mlog_open(log, &mo, &l, NULL, &d), 0);
	memset(dig, 0xa5, sizeof(dig));
	assert_int_equal(vg_attest_announce_initrd(l, 10, "/boot/initrd.img-6.1", dig, &d), 0);
	assert_int_equal(vg_attest_announce_cmdline(l, 10, "/boot/vmlinuz-6.1 ro", 20, &d), 0);
	/* what no announcement holds: refused, nothing queued */
	assert_int_equal(vg_attest_announce_initrd(l, 10, "boot/initrd.img", dig, &d), -EINVAL);
	assert_int_equal(vg_attest_announce_initrd(l, 10, "", dig, &d), -EINVAL);
	assert_int_equal(vg_attest_announce_cmdline(l, 10, "", 0, &d), -EINVAL);
	assert_int_equal(vg_attest_announce_cmdline(l, 10, "/v\0x", 4, &d), -EINVAL);
	memset(line, 'a', sizeof(line));
	assert_int_equal(vg_attest_announce_cmdline(l, 10, line, sizeof(line), &d), -EINVAL);
	assert_int_equal(vg_mlog_commit(l, &d), 2);
	vg_mlog_free(l);
	vg_pcrbank_free(bank);
	f = fopen(log, "rb");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* a new list starts with boot_aggregate: 3 entries */
	assert_int_equal(vg_attest_announce_collect(buf, len, VG_HASH_SHA1, 3, 3, ann), 2);
	assert_int_equal(vg_attest_announced_next(ann, &cur, 0, &a), 1);
	assert_int_equal(a.kind, VG_ANNOUNCE_KIND_INITRD);
	assert_int_equal(a.key_len, strlen("/boot/initrd.img-6.1"));
	assert_memory_equal(a.key, "/boot/initrd.img-6.1", a.key_len);
	assert_int_equal(a.value_len, 32);
	assert_memory_equal(a.value, dig, 32);
	assert_int_equal(vg_attest_announced_next(ann, &cur, 0, &a), 1);
	assert_int_equal(a.kind, VG_ANNOUNCE_KIND_CMDLINE);
	assert_memory_equal(a.key, "/boot/vmlinuz-6.1", a.key_len);
	assert_int_equal(a.value_len, 20);
	assert_int_equal(vg_attest_announced_next(ann, &cur, 0, &a), 0);
	unlink(log);
	unlink(pcrs);
	snprintf(log, sizeof(log), "%s/ml.boot", dir);
	unlink(log);
	snprintf(log, sizeof(log), "%s/ml.pcrs.lock", dir);
	unlink(log);
	assert_int_equal(rmdir(dir), 0);
	free(ann);
}

static int count(const struct vg_attest_announced *ann, uint32_t before, enum vg_announce_kind k)
{
	struct vg_announcement a;
	size_t cur = 0;
	int n = 0;

	while (vg_attest_announced_next(ann, &cur, before, &a))
		n += a.kind == k;
	return n;
}

static void collect_takes_announcements_of_the_attested_part(void **state)
{
	struct vg_imalog_buf b = { 0 };
	struct vg_attest_announced *ann = calloc(1, sizeof(*ann));

	(void)state;
	entry(&b, "/usr/bin/x", "x", false, false);
	entry(&b, VG_ANNOUNCE_INITRD "/boot/initrd.img-1", "initrd 1", false, false);
	entry(&b, VG_ANNOUNCE_CMDLINE, "/boot/vmlinuz-1 root=/dev/sda1 ro", true, false);
	entry(&b, VG_ANNOUNCE_CMDLINE, "/boot/vmlinuz-1 ro single", true, true);	/* not its digest */
	entry(&b, VG_ANNOUNCE_INITRD "/boot/initrd.img-2", "initrd 2", false, false);
	/* the first 3 entries attested */
	assert_int_equal(vg_attest_announce_collect(b.data, b.len, VG_HASH_SHA1, 3, 7, ann), 2);
	assert_int_equal(count(ann, 0, VG_ANNOUNCE_KIND_INITRD), 1);
	assert_int_equal(count(ann, 0, VG_ANNOUNCE_KIND_CMDLINE), 1);
	/* the boot that announced them (7) cannot use them; the next one can */
	assert_int_equal(count(ann, 7, VG_ANNOUNCE_KIND_INITRD), 0);
	assert_int_equal(count(ann, 8, VG_ANNOUNCE_KIND_INITRD), 1);
	/* all of them: the line with another digest is no announcement */
	assert_int_equal(vg_attest_announce_collect(b.data, b.len, VG_HASH_SHA1, 5, 7, ann), 3);
	assert_int_equal(count(ann, 0, VG_ANNOUNCE_KIND_INITRD), 2);
	assert_int_equal(count(ann, 0, VG_ANNOUNCE_KIND_CMDLINE), 1);
	vg_imalog_buf_release(&b);
	free(ann);
}

static void a_new_announcement_replaces_the_one_of_its_path(void **state)
{
	struct vg_attest_announced *ann = calloc(1, sizeof(*ann)), *back = calloc(1, sizeof(*back));
	uint8_t d1[32] = { 1 }, d2[32] = { 2 };
	struct vg_announcement a = { .kind = VG_ANNOUNCE_KIND_INITRD, .reset = 1, .key = "/b/i",
				     .key_len = 4, .value = d1, .value_len = 32 }, got;
	size_t cur = 0;

	(void)state;
	assert_int_equal(vg_attest_announced_add(ann, &a), 0);
	a.value = d2;
	a.reset = 2;
	assert_int_equal(vg_attest_announced_add(ann, &a), 0);
	assert_int_equal(count(ann, 0, VG_ANNOUNCE_KIND_INITRD), 1);
	assert_int_equal(vg_attest_announced_next(ann, &cur, 0, &got), 1);
	assert_memory_equal(got.value, d2, 32);
	assert_int_equal(got.reset, 2);
	/* through the store and back, exactly; a damaged record refused */
	assert_int_equal(vg_attest_announced_set(back, ann->buf, ann->len), 0);
	assert_memory_equal(back, ann, sizeof(*ann));
	ann->buf[0] = 9;
	assert_int_equal(vg_attest_announced_set(back, ann->buf, ann->len), -EBADMSG);
	assert_int_equal(back->len, 0);
	assert_int_equal(vg_attest_announced_set(back, NULL, 0), 0);
	free(ann);
	free(back);
}

static void the_oldest_give_way_when_full(void **state)
{
	struct vg_attest_announced *ann = calloc(1, sizeof(*ann));
	char key[32];
	uint8_t d[32] = { 0 };
	struct vg_announcement a = { .kind = VG_ANNOUNCE_KIND_INITRD, .value = d, .value_len = 32 };

	(void)state;
	for (uint32_t i = 0; i < 200; i++) {
		a.reset = i;
		a.key_len = (size_t)snprintf(key, sizeof(key), "/boot/initrd.img-%u", i);
		a.key = key;
		assert_int_equal(vg_attest_announced_add(ann, &a), 0);
		assert_true(ann->len <= VG_ANNOUNCE_MAX);
	}
	/* the newest is there, the first are gone */
	assert_int_equal(count(ann, 199, VG_ANNOUNCE_KIND_INITRD) + 1,
			 count(ann, 0, VG_ANNOUNCE_KIND_INITRD));
	assert_int_equal(count(ann, 150, VG_ANNOUNCE_KIND_INITRD), 0);
	assert_true(count(ann, 0, VG_ANNOUNCE_KIND_INITRD) > 20);	/* ~61 bytes a record */
	a.key_len = VG_ANNOUNCE_MAX;
	assert_int_equal(vg_attest_announced_add(ann, &a), -E2BIG);
	free(ann);
}

static void mbpolicy_reads_and_writes_the_refs_keys(void **state)
{
	static const char ok[] = "{\"version\": 1, \"from_archive\": [\"kernel\", \"shim\"],"
				 " \"announced\": [\"kernel_cmdline\"]}";
	static const char bad[] = "{\"from_archive\": [\"initrd\"]}";
	struct vg_mbpolicy *p = NULL, *q = NULL;
	struct vg_diag d = { 0 };
	char *js = NULL;
	long n;

	(void)state;
	assert_int_equal(vg_mbpolicy_load((const uint8_t *)ok, sizeof(ok) - 1, &p, &d), 0);
	assert_true(vg_mbpolicy_uses_refs(p));
	n = vg_mbpolicy_to_json(p, &js);
	assert_true(n > 0);
	assert_non_null(strstr(js, "\"from_archive\""));
	assert_int_equal(vg_mbpolicy_load((const uint8_t *)js, (size_t)n, &q, &d), 0);
	assert_memory_equal(vg_mbpolicy_id(p), vg_mbpolicy_id(q), 32);
	free(js);
	vg_mbpolicy_free(q);
	vg_mbpolicy_free(p);
	assert_int_equal(vg_mbpolicy_load((const uint8_t *)bad, sizeof(bad) - 1, &p, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "from_archive 0 is not one of"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(collect_takes_announcements_of_the_attested_part),
		cmocka_unit_test(written_announcements_are_collected),
		cmocka_unit_test(a_new_announcement_replaces_the_one_of_its_path),
		cmocka_unit_test(the_oldest_give_way_when_full),
		cmocka_unit_test(mbpolicy_reads_and_writes_the_refs_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
