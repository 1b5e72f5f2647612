// SPDX-License-Identifier: MIT
/*
 * test_label.c - the tree commands' per-file path: vg_label_file(),
 * vg_appraise_file(), vg_hasher_file() and the hasher's cached HMAC
 * context, each checked against the one-shot functions it must agree with.
 * Runs on a private tmpfs ($VIGIL_TESTDIR, see privns.sh).
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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/appraise.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"
#include "vigil/xattr_ima.h"

struct fx {
	struct vg_hasher *h;
	struct vg_evm_config cfg;
	struct vg_evm_label_opts eo;
	uint8_t key[32];
	char path[4096];
	int fd;
};

static const char content[] = "the content of a labeled file\n";

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *dir = getenv("VIGIL_TESTDIR");
	static int seq;

	if (!f || !dir)
		return -1;
	assert_int_equal(vg_hasher_new(&f->h), 0);
	vg_evm_config_default(&f->cfg);
	f->cfg.fsuuid = false;
	memset(f->key, 0x5a, sizeof(f->key));
	f->eo = (struct vg_evm_label_opts){ .evm = &f->cfg, .type = VG_EVM_XATTR_HMAC,
					    .hmac_key = f->key, .hmac_key_len = sizeof(f->key) };
	snprintf(f->path, sizeof(f->path), "%s/l%d", dir, seq++);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(f->fd >= 0);
	assert_int_equal(write(f->fd, content, sizeof(content) - 1), sizeof(content) - 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	close(f->fd);
	unlink(f->path);
	vg_hasher_free(f->h);
	free(f);
	return 0;
}

static ssize_t get(struct fx *f, const char *name, uint8_t *buf, size_t cap)
{
	return fgetxattr(f->fd, name, buf, cap);
}

static struct vg_label_result label(struct fx *f, const struct vg_evm_label_opts *eo)
{
	struct vg_label_result res;
	struct vg_diag d = { 0 };
	struct stat st;

	assert_int_equal(fstat(f->fd, &st), 0);
	if (vg_label_file(f->h, f->fd, &st, VG_HASH_SHA256, NULL, eo, &res, &d) < 0)
		fail_msg("vg_label_file: %s", d.msg);
	return res;
}

static enum vg_status appraise(struct fx *f, bool with_stat)
{
	struct vg_appraise_opts o = { .evm = &f->cfg, .hmac_key = f->key,
				      .hmac_key_len = sizeof(f->key),
				      .default_algo = VG_HASH_SHA256 };
	struct vg_appraise_result r;
	struct vg_diag d = { 0 };
	struct stat st;

	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(vg_appraise_file(f->h, f->fd, with_stat ? &st : NULL, &o, &r, &d), 0);
	return r.status;
}

/* The labels equal those of vg_label_ima_fd() + vg_label_evm_fd() on the same inode. */
static void same_labels_as_single_file_path(void **state)
{
	struct fx *f = *state;
	uint8_t ima[512], evm[512], ima2[512], evm2[512];
	ssize_t il, el, il2, el2;
	struct vg_label_result res = label(f, &f->eo);

	assert_true(res.ima_done && res.ima_written && res.evm_written);
	il = get(f, "security.ima", ima, sizeof(ima));
	el = get(f, "security.evm", evm, sizeof(evm));
	assert_true(il == 34 && el == 21);
	assert_int_equal(appraise(f, true), VG_ST_PASS);
	assert_int_equal(appraise(f, false), VG_ST_PASS);

	assert_int_equal(fremovexattr(f->fd, "security.ima"), 0);
	assert_int_equal(fremovexattr(f->fd, "security.evm"), 0);
	assert_int_equal(vg_label_ima_fd(f->h, f->fd, VG_HASH_SHA256, NULL, NULL, NULL), 0);
	assert_int_equal(vg_label_evm_fd(f->fd, &f->eo, NULL), 0);
	il2 = get(f, "security.ima", ima2, sizeof(ima2));
	el2 = get(f, "security.evm", evm2, sizeof(evm2));
	assert_true(il == il2 && el == el2);
	assert_memory_equal(ima, ima2, (size_t)il);
	assert_memory_equal(evm, evm2, (size_t)el);
}

/* A label that is already right is not written again: no ctime change. */
static void unchanged_labels_are_left_alone(void **state)
{
	struct fx *f = *state;
	struct vg_label_result res;
	struct stat a, b;

	label(f, &f->eo);
	assert_int_equal(fstat(f->fd, &a), 0);
	usleep(20000);
	res = label(f, &f->eo);
	assert_true(res.ima_done);
	assert_false(res.ima_written);
	assert_false(res.evm_written);
	assert_int_equal(fstat(f->fd, &b), 0);
	assert_true(a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec);

	/* metadata changed: only security.evm needs writing */
	assert_int_equal(fchmod(f->fd, 0600), 0);
	assert_int_equal(appraise(f, true), VG_ST_FAIL);
	res = label(f, &f->eo);
	assert_false(res.ima_written);
	assert_true(res.evm_written);
	assert_int_equal(appraise(f, true), VG_ST_PASS);

	/* content changed: both */
	assert_int_equal(pwrite(f->fd, "X", 1, 3), 1);
	assert_int_equal(appraise(f, true), VG_ST_FAIL);
	res = label(f, &f->eo);
	assert_true(res.ima_written && res.evm_written);
	assert_int_equal(appraise(f, true), VG_ST_PASS);

	/* another key: same security.ima, new security.evm */
	memset(f->key, 0x11, sizeof(f->key));
	res = label(f, &f->eo);
	assert_false(res.ima_written);
	assert_true(res.evm_written);
	assert_int_equal(appraise(f, true), VG_ST_PASS);
}

/* A size or mtime other than the caller's fstat: nothing written, -ESTALE. */
static void changed_while_hashed_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct vg_label_result res;
	struct stat st;
	uint8_t v[64];

	assert_int_equal(fstat(f->fd, &st), 0);
	st.st_mtim.tv_nsec ^= 1;
	assert_int_equal(vg_label_file(f->h, f->fd, &st, VG_HASH_SHA256, NULL, &f->eo, &res, NULL),
			 -ESTALE);
	assert_false(res.ima_done);
	assert_true(get(f, "security.ima", v, sizeof(v)) < 0 && errno == ENODATA);
	assert_true(get(f, "security.evm", v, sizeof(v)) < 0 && errno == ENODATA);
}

/* the gate of vg_label_file_if: what it saw, what it answers */
struct gate_seen {
	struct vg_digest d;
	int calls, answer;
};

static int gate_check(void *arg, const struct vg_digest *d)
{
	struct gate_seen *g = arg;

	g->d = *d;
	g->calls++;
	return g->answer;
}

/*
 * The gate gets the digest of the content that is labeled; refused, or
 * failing, nothing is written and a label already there stays byte for
 * byte; accepted, the label is that digest's.
 */
static void label_if_gate_decides(void **state)
{
	struct fx *f = *state;
	struct gate_seen g = { .answer = 0 };
	struct vg_label_gate gate = { gate_check, &g };
	struct vg_label_result res;
	struct vg_digest want;
	struct vg_diag d = { 0 };
	uint8_t ima[512], evm[512], v[512];
	ssize_t il, el;

	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, content, sizeof(content) - 1, &want, NULL), 0);
	/* refused on an unlabeled file: nothing written */
	assert_int_equal(vg_label_file_if(f->h, f->fd, NULL, VG_HASH_SHA256, NULL, &f->eo, &gate,
					  &res, &d), VG_LABEL_REFUSED);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.d.algo, VG_HASH_SHA256);
	assert_memory_equal(g.d.bytes, want.bytes, 32);
	assert_false(res.ima_done);
	assert_true(get(f, "security.ima", v, sizeof(v)) < 0 && errno == ENODATA);
	assert_true(get(f, "security.evm", v, sizeof(v)) < 0 && errno == ENODATA);

	/* a label of other content already there: refused leaves it as it was */
	(void)label(f, &f->eo);
	il = get(f, "security.ima", ima, sizeof(ima));
	el = get(f, "security.evm", evm, sizeof(evm));
	assert_true(il > 0 && el > 0);
	assert_int_equal(pwrite(f->fd, "T", 1, 0), 1);
	assert_int_equal(vg_label_file_if(f->h, f->fd, NULL, VG_HASH_SHA256, NULL, &f->eo, &gate,
					  &res, &d), VG_LABEL_REFUSED);
	assert_false(memcmp(g.d.bytes, want.bytes, 32) == 0);	/* the new content's */
	assert_int_equal(get(f, "security.ima", v, sizeof(v)), il);
	assert_memory_equal(v, ima, (size_t)il);
	assert_int_equal(get(f, "security.evm", v, sizeof(v)), el);
	assert_memory_equal(v, evm, (size_t)el);

	/* the gate's error: returned, nothing written */
	g.answer = -EIO;
	assert_int_equal(vg_label_file_if(f->h, f->fd, NULL, VG_HASH_SHA256, NULL, &f->eo, &gate,
					  &res, &d), -EIO);
	assert_int_equal(get(f, "security.ima", v, sizeof(v)), il);
	assert_memory_equal(v, ima, (size_t)il);

	/* accepted: labeled with the digest the gate saw */
	g.answer = 1;
	assert_int_equal(vg_label_file_if(f->h, f->fd, NULL, VG_HASH_SHA256, NULL, &f->eo, &gate,
					  &res, &d), 0);
	assert_true(res.ima_done && res.ima_written && res.evm_written);
	assert_int_equal(get(f, "security.ima", v, sizeof(v)), 34);
	assert_memory_equal(v + 2, g.d.bytes, 32);
	assert_int_equal(appraise(f, true), VG_ST_PASS);
}

/* changed while hashed: -ESTALE before the gate is asked */
static void label_if_stale_skips_gate(void **state)
{
	struct fx *f = *state;
	struct gate_seen g = { .answer = 1 };
	struct vg_label_gate gate = { gate_check, &g };
	struct vg_label_result res;
	struct stat st;

	assert_int_equal(fstat(f->fd, &st), 0);
	st.st_size++;
	assert_int_equal(vg_label_file_if(f->h, f->fd, &st, VG_HASH_SHA256, NULL, &f->eo, &gate,
					  &res, NULL), -ESTALE);
	assert_int_equal(g.calls, 0);
	assert_false(res.ima_done);
}

/* security.ima done, security.evm impossible: reported as such, ima kept. */
static void evm_failure_after_ima(void **state)
{
	struct fx *f = *state;
	struct vg_evm_label_opts eo = f->eo;
	struct vg_label_result res;
	struct vg_diag d = { 0 };
	uint8_t v[64];

	eo.type = VG_EVM_IMA_XATTR_DIGSIG;	/* no signer */
	assert_int_equal(vg_label_file(f->h, f->fd, NULL, VG_HASH_SHA256, NULL, &eo, &res, &d),
			 -ENOKEY);
	assert_true(res.ima_done);
	assert_true(get(f, "security.ima", v, sizeof(v)) == 34);
	assert_true(get(f, "security.evm", v, sizeof(v)) < 0 && errno == ENODATA);
	/* labeling again with a usable EVM configuration completes it */
	res = label(f, &f->eo);
	assert_false(res.ima_written);
	assert_true(res.evm_written);
	assert_int_equal(appraise(f, true), VG_ST_PASS);
}

/* Whole content whatever the offset; a file grown after fstat is read to its end; pipes. */
static void hasher_file_reads_everything(void **state)
{
	struct fx *f = *state;
	struct vg_digest want, got;
	char big[3000];
	struct stat st;
	uint64_t n = 0;
	int p[2];

	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, content, sizeof(content) - 1, &want, NULL), 0);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_true(lseek(f->fd, 7, SEEK_SET) == 7);
	assert_int_equal(vg_hasher_file(f->h, f->fd, &st, VG_HASH_SHA256, &got, &n, NULL), 0);
	assert_int_equal(n, sizeof(content) - 1);
	assert_memory_equal(want.bytes, got.bytes, 32);
	assert_int_equal(vg_hasher_file(f->h, f->fd, NULL, VG_HASH_SHA256, &got, NULL, NULL), 0);
	assert_memory_equal(want.bytes, got.bytes, 32);

	/* grown since the fstat: all of it, not st_size bytes */
	memset(big, 'g', sizeof(big));
	memcpy(big, content, sizeof(content) - 1);
	assert_int_equal(pwrite(f->fd, big + sizeof(content) - 1, sizeof(big) - sizeof(content) + 1,
				sizeof(content) - 1),
			 (ssize_t)(sizeof(big) - sizeof(content) + 1));
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, big, sizeof(big), &want, NULL), 0);
	assert_int_equal(vg_hasher_file(f->h, f->fd, &st, VG_HASH_SHA256, &got, &n, NULL), 0);
	assert_int_equal(n, sizeof(big));
	assert_memory_equal(want.bytes, got.bytes, 32);

	/* a pipe is read from where it is */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], content, sizeof(content) - 1), sizeof(content) - 1);
	close(p[1]);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, content, sizeof(content) - 1, &want, NULL), 0);
	assert_int_equal(vg_hasher_file(f->h, p[0], NULL, VG_HASH_SHA256, &got, &n, NULL), 0);
	assert_int_equal(n, sizeof(content) - 1);
	assert_memory_equal(want.bytes, got.bytes, 32);
	close(p[0]);
}

/* The cached, re-initialised HMAC context agrees with a fresh one, key after key. */
static void cached_hmac_matches_one_shot(void **state)
{
	struct fx *f = *state;
	static const uint8_t keys[3][16] = { { 1 }, { 2 }, { 1 } };
	struct vg_appraise_opts o = { .evm = &f->cfg, .default_algo = VG_HASH_SHA256 };
	struct vg_evm_label_opts eo = f->eo;
	struct vg_appraise_result r;

	for (int round = 0; round < 2; round++) {
		for (size_t k = 0; k < 3; k++) {
			eo.hmac_key = keys[k];
			eo.hmac_key_len = sizeof(keys[k]);
			/* written with the one-shot HMAC, checked with the cached one */
			assert_int_equal(vg_label_ima_fd(f->h, f->fd, VG_HASH_SHA256, NULL, NULL,
							 NULL),
					 0);
			assert_int_equal(vg_label_evm_fd(f->fd, &eo, NULL), 0);
			o.hmac_key = keys[k];
			o.hmac_key_len = sizeof(keys[k]);
			assert_int_equal(vg_appraise_file(f->h, f->fd, NULL, &o, &r, NULL), 0);
			assert_int_equal(r.status, VG_ST_PASS);
			o.hmac_key = keys[(k + 1) % 2];	/* the other key fails */
			assert_int_equal(vg_appraise_file(f->h, f->fd, NULL, &o, &r, NULL), 0);
			assert_int_equal(r.status, VG_ST_FAIL);
		}
	}
}

/* Every allocation failure gives -ENOMEM (or an error verdict), never a false pass. */
static void allocation_failures(void **state)
{
	struct fx *f = *state;
	long failures = 0;

	for (long n = 0;; n++) {
		struct vg_label_result res;
		int rc;

		assert_int_equal(fremovexattr(f->fd, "security.ima") == 0 || errno == ENODATA, 1);
		assert_int_equal(fremovexattr(f->fd, "security.evm") == 0 || errno == ENODATA, 1);
		vg_hasher_free(f->h);
		assert_int_equal(vg_hasher_new(&f->h), 0);
		failalloc_arm(n);
		rc = vg_label_file(f->h, f->fd, NULL, VG_HASH_SHA256, NULL, &f->eo, &res, NULL);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(rc, 0);
			break;
		}
		failures++;
		if (rc != -ENOMEM && rc != -EIO)
			fail_msg("allocation %ld failed: vg_label_file gave %d", n, rc);
	}
	assert_true(failures > 0);
	for (long n = 0;; n++) {
		struct vg_appraise_opts o = { .evm = &f->cfg, .hmac_key = f->key,
					      .hmac_key_len = sizeof(f->key) };
		struct vg_appraise_result r;
		int rc;

		vg_hasher_free(f->h);
		assert_int_equal(vg_hasher_new(&f->h), 0);
		failalloc_arm(n);
		rc = vg_appraise_file(f->h, f->fd, NULL, &o, &r, NULL);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(rc, 0);
			assert_int_equal(r.status, VG_ST_PASS);
			break;
		}
		if (rc == 0)
			assert_int_not_equal(r.status, VG_ST_PASS);
		else
			assert_true(rc == -ENOMEM || rc == -EIO);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(same_labels_as_single_file_path, setup, teardown),
		cmocka_unit_test_setup_teardown(unchanged_labels_are_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(changed_while_hashed_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(evm_failure_after_ima, setup, teardown),
		cmocka_unit_test_setup_teardown(label_if_gate_decides, setup, teardown),
		cmocka_unit_test_setup_teardown(label_if_stale_skips_gate, setup, teardown),
		cmocka_unit_test_setup_teardown(hasher_file_reads_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(cached_hmac_matches_one_shot, setup, teardown),
		cmocka_unit_test_setup_teardown(allocation_failures, setup, teardown),
	};

	failalloc_install();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
