// SPDX-License-Identifier: MIT
/*
 * test_trust_boot.c - the Authenticode digest (authenticode.h) against
 * pesign's (tests/vectors/authenticode/README.md), malformed images
 * refused, allocation failures; the boot references of a trust database
 * (trust_boot.h): roles by path, kernel series, the states settled over
 * builds (a newer kernel ABI supersedes, the grace expires it), carried,
 * loaded and looked up.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vigil/authenticode.h"
#include "vigil/fileio.h"
#include "vigil/hash.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"

static char dir[] = "/tmp/vigil-trust-boot.XXXXXX";
static const uint8_t key[32] = { 9 };

static const char *at(const char *name)
{
	static char buf[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static uint8_t *vec(const char *name, size_t *len)
{
	char p[PATH_MAX];
	const char *v = getenv("VECTORS");
	uint8_t *b = NULL;

	snprintf(p, sizeof(p), "%s/authenticode/%s", v ? v : "tests/vectors", name);
	assert_int_equal(vg_file_read(p, 1 << 20, &b, len, NULL), 0);
	return b;
}

static void digest_hex(const char *name, char *hex)
{
	struct vg_digest dg;
	size_t len;
	uint8_t *img = vec(name, &len);

	assert_int_equal(vg_authenticode_digest(img, len, VG_HASH_SHA256, &dg, NULL), 0);
	assert_int_equal(dg.len, 32);
	vg_hex_encode(dg.bytes, 32, hex);
	free(img);
}

static void digest_is_pesigns(void **state)
{
	char h[65];

	(void)state;
	digest_hex("small-signed.efi", h);
	assert_string_equal(h, "84ea84a1a8eb52a6da2cb47466bc6c09414aa9b0df6ef25bd7b765d9954a5143");
	digest_hex("small-unsigned.efi", h);
	assert_string_equal(h, "ffaead0469e30aa27653725e7a806e40e6a48f0bac8459eb31fc820091c659b1");
}

/* sections hashed in file order, as EDK2 and shim do (pesign: table order) */
static void digest_sorts_sections_by_file_offset(void **state)
{
	char h[65];

	(void)state;
	digest_hex("small-unordered.efi", h);
	assert_string_equal(h, "c46f1c2d4c918c6bf923776c0e4795bba41831a937e6a2d01f2b39366f2ad229");
}

static void digest_rejects_malformed_images(void **state)
{
	static const char *const bad[] = { "bad-cert-outside.efi", "bad-section-outside.efi",
					   "bad-truncated.efi" };
	struct vg_digest dg;
	struct vg_diag d = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len;
		uint8_t *img = vec(bad[i], &len);

		assert_int_equal(vg_authenticode_digest(img, len, VG_HASH_SHA256, &dg, &d), -EBADMSG);
		assert_true(strstr(d.msg, "outside") != NULL);
		free(img);
	}
	/* every length of a good image short of whole: refused or digested, never read past */
	{
		size_t len;
		uint8_t *img = vec("small-signed.efi", &len);

		for (size_t l = 0; l < len; l++) {
			uint8_t *c = malloc(l ? l : 1);

			memcpy(c, img, l);
			(void)vg_authenticode_digest(c, l, VG_HASH_SHA256, &dg, NULL);
			free(c);
		}
		assert_false(vg_pe_is_image(img, 0x3f));
		assert_true(vg_pe_is_image(img, len));
		free(img);
	}
}

static void digest_survives_allocation_failures(void **state)
{
	struct vg_digest dg;
	size_t len;
	uint8_t *img = vec("small-signed.efi", &len);
	int r;

	(void)state;
	for (long n = 0;; n++) {
		failalloc_arm(n);
		r = vg_authenticode_digest(img, len, VG_HASH_SHA256, &dg, NULL);
		failalloc_disarm();
		if (r == 0)
			break;
		assert_true(r == -ENOMEM || r == -EOPNOTSUPP);	/* EVP_MD_fetch failing is either */
	}
	free(img);
}

static void roles_and_series(void **state)
{
	char s[64];

	(void)state;
	assert_int_equal(vg_trust_boot_role("/usr/lib/shim/shimx64.efi.signed"), VG_BOOT_SHIM);
	assert_int_equal(vg_trust_boot_role("/usr/lib/shim/mmx64.efi.signed"), VG_BOOT_EFI);
	assert_int_equal(vg_trust_boot_role("/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed"),
			 VG_BOOT_GRUB);
	assert_int_equal(vg_trust_boot_role("/boot/vmlinuz-6.1.0-57-amd64"), VG_BOOT_KERNEL);
	assert_int_equal(vg_trust_boot_role("/usr/lib/shim/shimx64.efi"), VG_BOOT_NONE);
	assert_int_equal(vg_trust_boot_role("/boot/config-6.1.0-57-amd64"), VG_BOOT_NONE);
	assert_int_equal(vg_trust_boot_role("/boot/x/vmlinuz-1"), VG_BOOT_NONE);
	assert_true(vg_trust_boot_series("linux-image-6.1.0-57-amd64", s, sizeof(s)) > 0);
	assert_string_equal(s, "linux-image-amd64");
	assert_true(vg_trust_boot_series("linux-image-6.1.0-57-cloud-amd64", s, sizeof(s)) > 0);
	assert_string_equal(s, "linux-image-cloud-amd64");
	assert_true(vg_trust_boot_series("linux-image-amd64", s, sizeof(s)) > 0);
	assert_string_equal(s, "linux-image-amd64");
	assert_true(vg_trust_boot_series("grub-efi-amd64-signed", s, sizeof(s)) > 0);
	assert_string_equal(s, "grub-efi-amd64-signed");
	assert_int_equal(vg_trust_boot_series("grub-efi-amd64-signed", s, 4), -ENOSPC);
}

/* one build: the kernel packages @kernels (ABI, version) and a GRUB, over @old, at @now */
static void build(const char *path, const char *const (*kernels)[2], size_t nk,
		  struct vg_trust_db *old, int64_t now, int64_t grace, int expect_expired)
{
	static const unsigned int algos[] = { VG_HASH_SHA256 };
	struct vg_trust_release rel = { .origin = (char *)"Debian", .suite = (char *)"stable",
					.codename = (char *)"bookworm", .date = now };
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };
	int64_t rid;

	assert_int_equal(vg_trust_db_create(path, algos, 1, key, sizeof(key), &db, &d), 0);
	rid = vg_trust_db_add_release(db, &rel, &d);
	assert_true(rid > 0);
	for (size_t i = 0; i <= nk; i++) {
		char name[64], p[64];
		struct vg_trust_pkgrow row = { .arch = "amd64" };
		struct vg_trust_file f = { .mode = 0100644, .size = 1, .boot = true };
		struct vg_trust_deb deb = { .files = &f, .n = 1, .cap = 1 };

		if (i < nk) {
			snprintf(name, sizeof(name), "linux-image-%s", kernels[i][0]);
			snprintf(p, sizeof(p), "/boot/vmlinuz-%s", kernels[i][0]);
			row.version = kernels[i][1];
		} else {
			snprintf(name, sizeof(name), "grub-efi-amd64-signed");
			snprintf(p, sizeof(p), "/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed");
			row.version = "2.06";
		}
		row.name = name;
		f.path = p;
		/* a kernel's digests: its ABI number (50: 0x32..., file 0xb2...); GRUB's 0xee */
		memset(f.boot_authenticode, i < nk ? atoi(kernels[i][0] + 6) : 0xee, 32);
		memset(f.boot_sha256, i < nk ? 0x80 + atoi(kernels[i][0] + 6) : 0xef, 32);
		assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "x", 1, &f.dg[0], NULL), 0);
		assert_int_equal(vg_trust_db_add_package(db, rid, &row, &deb, &d), 0);
	}
	if (old)
		assert_true(vg_trust_db_carry(db, old, now, grace, &d) >= 0);
	assert_int_equal(vg_trust_db_boot_settle(db, now, grace, &d), expect_expired);
	assert_int_equal(vg_trust_db_commit(db, &d), 0);
}

static struct vg_trust_boot *load(const char *path)
{
	struct vg_trust_db *db = NULL;
	struct vg_trust_boot *b = NULL;
	struct vg_diag d = { 0 };

	assert_int_equal(vg_trust_db_open(path, key, sizeof(key), &db, &d), 0);
	assert_int_equal(vg_trust_boot_load(db, &b, &d), 0);
	vg_trust_db_free(db);
	return b;
}

static const struct vg_trust_boot_ref *kernel(const struct vg_trust_boot *b, int n)
{
	const struct vg_trust_boot_ref *r[4];
	uint8_t a[32];

	memset(a, n, 32);
	assert_int_equal(vg_trust_boot_find(b, VG_BOOT_KERNEL, VG_BOOT_AUTHENTICODE, a, r, 4), 1);
	return r[0];
}

static void settle_supersedes_expires_and_names(void **state)
{
	static const char *const k1[][2] = { { "6.1.0-50-amd64", "6.1.176-1" } };
	static const char *const k2[][2] = { { "6.1.0-57-amd64", "6.1.192-3" } };
	struct vg_trust_db *old = NULL;
	struct vg_trust_boot *b;
	const struct vg_trust_boot_ref *r[4];
	struct vg_diag d = { 0 };
	uint8_t a[32];

	(void)state;
	/* t=1000: kernel -50 and GRUB, current */
	build(at("a.db"), k1, 1, NULL, 1000, 100, 0);
	b = load(at("a.db"));
	assert_int_equal(vg_trust_boot_count(b), 2);
	assert_int_equal(kernel(b, 50)->state, VG_BOOT_CURRENT);
	assert_string_equal(kernel(b, 50)->package, "linux-image-6.1.0-50-amd64");
	memset(a, 0x80 + 50, 32);
	assert_int_equal(vg_trust_boot_find(b, VG_BOOT_KERNEL, VG_BOOT_FILE, a, r, 4), 1);
	assert_int_equal(vg_trust_boot_find(b, VG_BOOT_GRUB, VG_BOOT_FILE, a, r, 4), 0);
	vg_trust_boot_free(b);
	/* t=1050: the -57 kernel only (apt's hook); -50 carried, superseded in its series */
	assert_int_equal(vg_trust_db_open(at("a.db"), key, sizeof(key), &old, &d), 0);
	build(at("b.db"), k2, 1, old, 1050, 100, 0);
	vg_trust_db_free(old);
	b = load(at("b.db"));
	assert_int_equal(vg_trust_boot_count(b), 3);
	assert_int_equal(kernel(b, 50)->state, VG_BOOT_SUPERSEDED);
	assert_int_equal(kernel(b, 50)->since, 1050);
	assert_string_equal(kernel(b, 50)->newest, "6.1.192-3");
	assert_int_equal(kernel(b, 57)->state, VG_BOOT_CURRENT);
	memset(a, 0xee, 32);
	assert_int_equal(vg_trust_boot_find(b, VG_BOOT_NONE, VG_BOOT_AUTHENTICODE, a, r, 4), 1);
	assert_int_equal(r[0]->role, VG_BOOT_GRUB);
	vg_trust_boot_free(b);
	/* t=1200: past the grace: expired, kept to be named */
	assert_int_equal(vg_trust_db_open(at("b.db"), key, sizeof(key), &old, &d), 0);
	build(at("c.db"), k2, 1, old, 1200, 100, 1);
	vg_trust_db_free(old);
	b = load(at("c.db"));
	assert_int_equal(kernel(b, 50)->state, VG_BOOT_EXPIRED);
	assert_int_equal(kernel(b, 50)->since, 1050);
	vg_trust_boot_free(b);
	/* both kernels in one build (an archive listing both): the older superseded at once */
	{
		static const char *const k3[][2] = { { "6.1.0-50-amd64", "6.1.176-1" },
						     { "6.1.0-57-amd64", "6.1.192-3" } };

		build(at("d.db"), k3, 2, NULL, 5000, 100, 0);
		b = load(at("d.db"));
		assert_int_equal(kernel(b, 50)->state, VG_BOOT_SUPERSEDED);
		assert_int_equal(kernel(b, 57)->state, VG_BOOT_CURRENT);
		vg_trust_boot_free(b);
	}
}

static int setup(void **state)
{
	(void)state;
	failalloc_install();
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const f[] = { "a.db", "b.db", "c.db", "d.db" };

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		unlink(at(f[i]));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(digest_is_pesigns),
		cmocka_unit_test(digest_sorts_sections_by_file_offset),
		cmocka_unit_test(digest_rejects_malformed_images),
		cmocka_unit_test(digest_survives_allocation_failures),
		cmocka_unit_test(roles_and_series),
		cmocka_unit_test(settle_supersedes_expires_and_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
