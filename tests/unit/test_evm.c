// SPDX-License-Identifier: MIT
/*
 * test_evm.c - the EVM protected-xattr list, the exact input bytes of
 * evm_calc_hmac_or_hash(), and the HMAC against evmctl's vectors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vectors.h"
#include "vigil/evm.h"
#include "vigil/xattr_ima.h"

static void config_default_is_kernel_order(void **state)
{
	static const char *const names[] = {
		"security.selinux", "security.SMACK64", "security.SMACK64EXEC",
		"security.SMACK64TRANSMUTE", "security.SMACK64MMAP", "security.apparmor",
		"security.ima", "security.capability",
	};
	static const bool enabled[] = { true, true, false, false, false, true, true, true };
	struct vg_evm_config c;

	(void)state;
	vg_evm_config_default(&c);
	assert_int_equal(c.n, 8);
	for (size_t i = 0; i < 8; i++) {
		assert_string_equal(c.x[i].name, names[i]);
		assert_int_equal(c.x[i].enabled, enabled[i]);
	}
	assert_true(c.fsuuid);
	assert_int_equal(c.hmisc32, sizeof(unsigned long) == 4);
}

static void config_add_rules(void **state)
{
	struct vg_evm_config c;
	char longname[300];

	(void)state;
	vg_evm_config_default(&c);
	assert_int_equal(vg_evm_config_add(&c, "security.vigil.integrity"), 0);
	assert_int_equal(vg_evm_config_add(&c, "security.vigil.revision"), 0);
	assert_int_equal(c.n, 10);
	assert_string_equal(c.x[8].name, "security.vigil.integrity");
	assert_true(c.x[9].enabled);
	assert_int_equal(vg_evm_config_add(&c, "security.ima"), -EEXIST);
	assert_int_equal(vg_evm_config_add(&c, "user.vigil"), -EINVAL);
	assert_int_equal(vg_evm_config_add(&c, "security."), -EINVAL);
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "security.", 9);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(vg_evm_config_add(&c, longname), -EINVAL);
	for (int i = 0; c.n < VG_EVM_MAX_XATTRS; i++) {
		char n[32];

		snprintf(n, sizeof(n), "security.x%d", i);
		assert_int_equal(vg_evm_config_add(&c, n), 0);
	}
	assert_int_equal(vg_evm_config_add(&c, "security.full"), -ENOSPC);
	assert_int_equal(vg_evm_config_enable(&c, "security.SMACK64EXEC", true), 0);
	assert_true(c.x[2].enabled);
	assert_int_equal(vg_evm_config_enable(&c, "security.nope", true), -ENOENT);
}

static void uuid_parse(void **state)
{
	uint8_t u[16];

	(void)state;
	assert_int_equal(vg_uuid_parse("6a1f4e2c-3b5d-4c7e-9f80-112233445566", u), 0);
	assert_memory_equal(u, "\x6a\x1f\x4e\x2c\x3b\x5d\x4c\x7e\x9f\x80\x11\x22\x33\x44\x55\x66", 16);
	assert_int_equal(vg_uuid_parse("6a1f4e2c3b5d4c7e9f80112233445566", u), -EINVAL);
	assert_int_equal(vg_uuid_parse("6a1f4e2c-3b5d-4c7e-9f80-11223344556", u), -EINVAL);
	assert_int_equal(vg_uuid_parse("6a1f4e2c-3b5d-4c7e-9f80-11223344556g", u), -EINVAL);
	assert_int_equal(vg_uuid_parse("6a1f4e2c+3b5d-4c7e-9f80-112233445566", u), -EINVAL);
}

static void set_ima(struct vg_evm_xattrs *xs, const struct vg_evm_config *c,
		    const uint8_t *v, size_t len)
{
	assert_int_equal(vg_evm_xattrs_set(xs, c, VG_XATTR_IMA, v, len), 0);
}

/* ima-evm-formats.md §3.2, measured with evmctl -v: portable h_misc of a
 * 0644 root file, and the non-portable one with fixed metadata. */
static void input_bytes_match_kernel_layout(void **state)
{
	static const uint8_t ima[] = { 0x04, 0x04, 0xaa, 0xbb };
	static const uint8_t portable_misc[24] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa4, 0x81, 0, 0 };
	static const uint8_t fixed_misc[24] = {
		0x39, 0x30, 0, 0, 0, 0, 0, 0, 0x09, 0x03, 0, 0, 0xe8, 0x03, 0, 0,
		0xe9, 0x03, 0, 0, 0xed, 0x81, 0, 0 };
	struct vg_evm_config c;
	struct vg_evm_xattrs xs;
	struct vg_evm_meta m = { .ino = 99, .generation = 5, .uid = 0, .gid = 0, .mode = 0100644 };
	uint8_t out[128];
	int len;

	(void)state;
	if (sizeof(unsigned long) != 8)
		skip();
	vg_evm_config_default(&c);
	vg_evm_xattrs_init(&xs);
	set_ima(&xs, &c, ima, sizeof(ima));
	len = vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_PORTABLE_DIGSIG, out, sizeof(out), NULL);
	assert_int_equal(len, 4 + 24);
	assert_memory_equal(out, ima, 4);
	assert_memory_equal(out + 4, portable_misc, 24);

	m = (struct vg_evm_meta){ .ino = 12345, .generation = 777, .uid = 1000, .gid = 1001,
				  .mode = 33261, .has_uuid = true };
	memcpy(m.uuid, "0123456789abcdef", 16);
	len = vg_evm_input(&c, &xs, &m, VG_EVM_IMA_XATTR_DIGSIG, out, sizeof(out), NULL);
	assert_int_equal(len, 4 + 24 + 16);
	assert_memory_equal(out + 4, fixed_misc, 24);
	assert_memory_equal(out + 28, "0123456789abcdef", 16);
	/* HMAC: same input */
	assert_int_equal(vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_HMAC, out, sizeof(out), NULL), 44);
	/* without CONFIG_EVM_ATTR_FSUUID */
	c.fsuuid = false;
	assert_int_equal(vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_HMAC, out, sizeof(out), NULL), 28);
	/* 32-bit kernels: u32 inode, 20 bytes */
	c.hmisc32 = true;
	assert_int_equal(vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_HMAC, out, sizeof(out), NULL), 24);
	assert_memory_equal(out + 4, "\x39\x30\x00\x00\x09\x03\x00\x00", 8);
	vg_evm_xattrs_release(&xs);
}

/* Enabled entries for HMAC/03, every configured entry for portable (05). */
static void input_order_and_enabled_entries(void **state)
{
	struct vg_evm_config c;
	struct vg_evm_xattrs xs;
	struct vg_evm_meta m = { .has_uuid = true };
	uint8_t out[256];
	int len;

	(void)state;
	vg_evm_config_default(&c);
	assert_int_equal(vg_evm_config_add(&c, "security.vigil.revision"), 0);
	vg_evm_xattrs_init(&xs);
	/* set in scrambled order; input must follow the list */
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.vigil.revision", (const uint8_t *)"R", 1), 0);
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.capability", (const uint8_t *)"C", 1), 0);
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.SMACK64EXEC", (const uint8_t *)"E", 1), 0);
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.ima", (const uint8_t *)"I", 1), 0);
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.selinux", (const uint8_t *)"S", 1), 0);
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "user.other", (const uint8_t *)"x", 1), -ENOENT);

	len = vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_HMAC, out, sizeof(out), NULL);
	assert_int_equal(len, 4 + 24 + 16);
	assert_memory_equal(out, "SICR", 4);
	len = vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_PORTABLE_DIGSIG, out, sizeof(out), NULL);
	assert_int_equal(len, 5 + 24);
	assert_memory_equal(out, "SEICR", 5);
	/* removal */
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.selinux", NULL, 0), 0);
	len = vg_evm_input(&c, &xs, &m, VG_EVM_XATTR_HMAC, out, sizeof(out), NULL);
	assert_memory_equal(out, "ICR", 3);
	vg_evm_xattrs_release(&xs);
}

static void digest_rejects_what_the_kernel_rejects(void **state)
{
	struct vg_evm_config c;
	struct vg_evm_xattrs xs;
	struct vg_evm_meta m = { .mode = 0100644 };
	struct vg_digest d;
	struct vg_diag diag = { 0 };
	uint8_t key[32] = { 1 };

	(void)state;
	vg_evm_config_default(&c);
	vg_evm_xattrs_init(&xs);
	/* nothing protected present: INTEGRITY_NOXATTRS */
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_PORTABLE_DIGSIG, VG_HASH_SHA256,
				       NULL, 0, &d, &diag), -ENODATA);
	/* portable without security.ima: -EPERM */
	assert_int_equal(vg_evm_xattrs_set(&xs, &c, "security.capability", (const uint8_t *)"c", 1), 0);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_PORTABLE_DIGSIG, VG_HASH_SHA256,
				       NULL, 0, &d, &diag), -EPERM);
	/* HMAC and 03 need the UUID when fsuuid is on */
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, key, 32, &d,
				       &diag), -EDESTADDRREQ);
	assert_non_null(strstr(diag.msg, "UUID"));
	m.has_uuid = true;
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, NULL, 0, &d,
				       NULL), -ENOKEY);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, key, 129, &d,
				       NULL), -ENOKEY);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, key, 32, &d,
				       NULL), 0);
	assert_int_equal(d.len, 20);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, 0x04, VG_HASH_SHA256, NULL, 0, &d, NULL),
			 -EOPNOTSUPP);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_IMA_XATTR_DIGSIG, VG_HASH_TGR_128,
				       NULL, 0, &d, NULL), -EOPNOTSUPP);
	vg_evm_xattrs_release(&xs);
}

/* evmctl 1.4's `hmac -a sha1` (no UUID, real inode and generation). */
static void hmac_equals_evmctl_vectors(void **state)
{
	static const char *const cases[] = { "evm-hmac.empty.sha1", "evm-hmac.one.sha1",
					     "evm-hmac.page.sha1", "evm-hmac.big.sha1" };
	uint8_t key[128];
	long klen = vec_file("keys/evm-key-plain.bin", key, sizeof(key));

	(void)state;
	if (sizeof(unsigned long) != 8)
		skip();
	assert_int_equal(klen, 32);
	for (size_t i = 0; i < 4; i++) {
		struct vg_evm_config c;
		struct vg_evm_xattrs xs;
		struct vg_evm_meta m = { 0 };
		struct vg_digest d;
		uint8_t ima[128], evm[64];
		char col[64];
		int ilen = vec_xattr(cases[i], "security.ima", ima, sizeof(ima));
		int elen = vec_xattr(cases[i], "security.evm", evm, sizeof(evm));

		assert_true(ilen > 0);
		assert_int_equal(elen, VG_EVM_HMAC_LEN);
		assert_int_equal(vec_column(cases[i], 7, col, sizeof(col)), 0);
		m.ino = strtoull(col, NULL, 10);
		assert_int_equal(vec_column(cases[i], 8, col, sizeof(col)), 0);
		m.generation = (uint32_t)strtoul(col, NULL, 10);
		assert_int_equal(vec_column(cases[i], 3, col, sizeof(col)), 0);
		m.mode = (uint16_t)strtoul(col, NULL, 8);
		assert_int_equal(vec_column(cases[i], 4, col, sizeof(col)), 0);
		m.uid = (uint32_t)strtoul(col, NULL, 10);
		assert_int_equal(vec_column(cases[i], 5, col, sizeof(col)), 0);
		m.gid = (uint32_t)strtoul(col, NULL, 10);

		vg_evm_config_default(&c);
		c.fsuuid = false;
		vg_evm_xattrs_init(&xs);
		set_ima(&xs, &c, ima, (size_t)ilen);
		assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, key,
					       (size_t)klen, &d, NULL), 0);
		assert_int_equal(evm[0], VG_EVM_XATTR_HMAC);
		assert_memory_equal(d.bytes, evm + 1, 20);
		/* one bit of metadata changes it */
		m.mode ^= 1;
		assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, VG_HASH_SHA1, key,
					       (size_t)klen, &d, NULL), 0);
		assert_memory_not_equal(d.bytes, evm + 1, 20);
		vg_evm_xattrs_release(&xs);
	}
}

/* The key is zero-padded to 128 bytes: a key and its zero-extension agree. */
static void hmac_key_is_zero_padded_to_128(void **state)
{
	struct vg_evm_config c;
	struct vg_evm_xattrs xs;
	struct vg_evm_meta m = { .ino = 1 };
	struct vg_digest a, b;
	uint8_t key[128] = { 0 };

	(void)state;
	memset(key, 0x5a, 32);
	vg_evm_config_default(&c);
	c.fsuuid = false;
	vg_evm_xattrs_init(&xs);
	set_ima(&xs, &c, (const uint8_t *)"\x04\x04", 2);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, 0, key, 32, &a, NULL), 0);
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, 0, key, 128, &b, NULL), 0);
	assert_memory_equal(a.bytes, b.bytes, 20);
	key[127] = 1;
	assert_int_equal(vg_evm_digest(&c, &xs, &m, VG_EVM_XATTR_HMAC, 0, key, 128, &b, NULL), 0);
	assert_memory_not_equal(a.bytes, b.bytes, 20);
	vg_evm_xattrs_release(&xs);
}

static void xattrs_set_fails_cleanly_without_memory(void **state)
{
	struct vg_evm_config c;

	(void)state;
	vg_evm_config_default(&c);
	for (long n = 0;; n++) {
		struct vg_evm_xattrs xs;
		int r;

		vg_evm_xattrs_init(&xs);
		failalloc_arm(n);
		r = vg_evm_xattrs_set(&xs, &c, "security.ima", (const uint8_t *)"abc", 3);
		failalloc_disarm();
		vg_evm_xattrs_release(&xs);
		if (!failalloc_hit()) {
			assert_int_equal(r, 0);
			break;
		}
		assert_int_equal(r, -ENOMEM);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(config_default_is_kernel_order),
		cmocka_unit_test(config_add_rules),
		cmocka_unit_test(uuid_parse),
		cmocka_unit_test(input_bytes_match_kernel_layout),
		cmocka_unit_test(input_order_and_enabled_entries),
		cmocka_unit_test(digest_rejects_what_the_kernel_rejects),
		cmocka_unit_test(hmac_equals_evmctl_vectors),
		cmocka_unit_test(hmac_key_is_zero_padded_to_128),
		cmocka_unit_test(xattrs_set_fails_cleanly_without_memory),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
