// SPDX-License-Identifier: MIT
/* test_hash.c - algorithm table, one-shot digests, the file hasher, hex. */
#include <errno.h>
#include <fcntl.h>
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
#include "vigil/hash.h"

static void hexeq(const struct vg_digest *d, const char *want)
{
	char hex[2 * VG_HASH_MAX_DIGEST + 1];

	vg_hex_encode(d->bytes, d->len, hex);
	assert_string_equal(hex, want);
}

/* include/uapi/linux/hash_info.h and crypto/hash_info.c, in full */
static void table_matches_kernel(void **state)
{
	static const struct { const char *name; size_t size; } k[] = {
		{ "md4", 16 }, { "md5", 16 }, { "sha1", 20 }, { "rmd160", 20 },
		{ "sha256", 32 }, { "sha384", 48 }, { "sha512", 64 }, { "sha224", 28 },
		{ "rmd128", 16 }, { "rmd256", 32 }, { "rmd320", 40 }, { "wp256", 32 },
		{ "wp384", 48 }, { "wp512", 64 }, { "tgr128", 16 }, { "tgr160", 20 },
		{ "tgr192", 24 }, { "sm3", 32 }, { "streebog256", 32 }, { "streebog512", 64 },
		{ "sha3-256", 32 }, { "sha3-384", 48 }, { "sha3-512", 64 },
	};

	(void)state;
	assert_int_equal(VG_HASH__LAST, 23);
	for (unsigned int i = 0; i < 23; i++) {
		assert_string_equal(vg_hash_name(i), k[i].name);
		assert_int_equal(vg_hash_size(i), k[i].size);
		assert_int_equal(vg_hash_by_name(k[i].name), (int)i);
	}
	assert_null(vg_hash_name(23));
	assert_int_equal(vg_hash_size(23), 0);
	assert_int_equal(vg_hash_by_name("SHA256"), -ENOENT);
	assert_int_equal(vg_hash_by_name("sha3_256"), -ENOENT);
	assert_int_equal(vg_hash_by_name(""), -ENOENT);
}

static void available_where_openssl_has_it(void **state)
{
	(void)state;
	assert_true(vg_hash_available(VG_HASH_SHA1));
	assert_true(vg_hash_available(VG_HASH_SHA256));
	assert_true(vg_hash_available(VG_HASH_SHA512));
	assert_true(vg_hash_available(VG_HASH_SHA3_256));
	assert_true(vg_hash_available(VG_HASH_SM3_256));
	assert_false(vg_hash_available(VG_HASH_RIPE_MD_128));
	assert_false(vg_hash_available(VG_HASH_STREEBOG_256));
	assert_false(vg_hash_available(99));
}

/* FIPS 180-2, FIPS 202 and GB/T 32905 answers for "abc" */
static void hash_buf_known_answers(void **state)
{
	struct vg_digest d;

	(void)state;
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "abc", 3, &d, NULL), 0);
	assert_int_equal(d.algo, VG_HASH_SHA256);
	hexeq(&d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(vg_hash_buf(VG_HASH_SHA1, "abc", 3, &d, NULL), 0);
	hexeq(&d, "a9993e364706816aba3e25717850c26c9cd0d89d");
	assert_int_equal(vg_hash_buf(VG_HASH_SM3_256, "abc", 3, &d, NULL), 0);
	hexeq(&d, "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
	assert_int_equal(vg_hash_buf(VG_HASH_SHA3_256, "abc", 3, &d, NULL), 0);
	hexeq(&d, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
	assert_int_equal(vg_hash_buf(VG_HASH_SHA224, "", 0, &d, NULL), 0);
	hexeq(&d, "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f");
}

static void hash_buf_rejects_unavailable(void **state)
{
	struct vg_digest d;
	struct vg_diag diag = { 0 };

	(void)state;
	assert_int_equal(vg_hash_buf(VG_HASH_TGR_192, "x", 1, &d, &diag), -EOPNOTSUPP);
	assert_int_equal(diag.err, -EOPNOTSUPP);
	assert_non_null(strstr(diag.msg, "tgr192"));
	assert_int_equal(vg_hash_buf(200, "x", 1, &d, &diag), -EOPNOTSUPP);
}

static int tmpfile_with(const uint8_t *data, size_t len)
{
	char path[] = "/tmp/vigil-hash-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, data + off, len - off);

		assert_true(n > 0);
		off += (size_t)n;
	}
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static void hasher_empty_file(void **state)
{
	struct vg_hasher *h;
	struct vg_digest d;
	uint64_t n = 99;
	int fd = tmpfile_with(NULL, 0);

	(void)state;
	assert_int_equal(vg_hasher_new(&h), 0);
	assert_int_equal(vg_hasher_fd(h, fd, VG_HASH_SHA256, &d, &n, NULL), 0);
	assert_int_equal(n, 0);
	hexeq(&d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	close(fd);
	vg_hasher_free(h);
}

/* Sizes around the 1 MiB read buffer must hash like one buffer. */
static void hasher_matches_oneshot_across_buffer_edges(void **state)
{
	static const size_t sizes[] = { 1, 4095, 4096, (1u << 20) - 1, 1u << 20,
					(1u << 20) + 1, 3u << 20 | 7 };
	size_t max = sizes[6];
	uint8_t *buf = malloc(max);
	struct vg_hasher *h;

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < max; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
	assert_int_equal(vg_hasher_new(&h), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct vg_digest a, b;
		uint64_t n;
		int fd = tmpfile_with(buf, sizes[i]);

		for (unsigned int algo = VG_HASH_SHA1; algo <= VG_HASH_SHA3_512; algo++) {
			if (!vg_hash_available(algo) || algo == VG_HASH_WP_512)
				continue;
			assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
			assert_int_equal(vg_hasher_fd(h, fd, algo, &a, &n, NULL), 0);
			assert_int_equal(n, sizes[i]);
			assert_int_equal(vg_hash_buf(algo, buf, sizes[i], &b, NULL), 0);
			assert_int_equal(a.len, vg_hash_size(algo));
			assert_memory_equal(a.bytes, b.bytes, a.len);
		}
		close(fd);
	}
	vg_hasher_free(h);
	free(buf);
}

static void hasher_reports_read_error(void **state)
{
	struct vg_hasher *h;
	struct vg_digest d;
	struct vg_diag diag = { 0 };
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(vg_hasher_new(&h), 0);
	assert_int_equal(vg_hasher_fd(h, fd, VG_HASH_SHA256, &d, NULL, &diag), -EISDIR);
	assert_non_null(strstr(diag.msg, "read"));
	assert_int_equal(vg_hasher_fd(h, fd, VG_HASH_RIPE_MD_320, &d, NULL, &diag), -EOPNOTSUPP);
	close(fd);
	vg_hasher_free(h);
}

static void hasher_new_fails_cleanly_without_memory(void **state)
{
	(void)state;
	for (long n = 0;; n++) {
		struct vg_hasher *h = NULL;
		int r;

		failalloc_arm(n);
		r = vg_hasher_new(&h);
		failalloc_disarm();
		if (!failalloc_hit()) {
			assert_int_equal(r, 0);
			vg_hasher_free(h);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_null(h);
	}
}

static void hex_round_trip_and_rejects(void **state)
{
	uint8_t b[4];
	char s[9];

	(void)state;
	assert_int_equal(vg_hex_decode("00ff7Aa1", b, sizeof(b)), 4);
	vg_hex_encode(b, 4, s);
	assert_string_equal(s, "00ff7aa1");
	assert_int_equal(vg_hex_decode("abc", b, sizeof(b)), -EINVAL);
	assert_int_equal(vg_hex_decode("zz", b, sizeof(b)), -EINVAL);
	assert_int_equal(vg_hex_decode("0011223344", b, sizeof(b)), -EINVAL);
	assert_int_equal(vg_hex_decode("", b, sizeof(b)), 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_matches_kernel),
		cmocka_unit_test(available_where_openssl_has_it),
		cmocka_unit_test(hash_buf_known_answers),
		cmocka_unit_test(hash_buf_rejects_unavailable),
		cmocka_unit_test(hasher_empty_file),
		cmocka_unit_test(hasher_matches_oneshot_across_buffer_edges),
		cmocka_unit_test(hasher_reports_read_error),
		cmocka_unit_test(hasher_new_fails_cleanly_without_memory),
		cmocka_unit_test(hex_round_trip_and_rejects),
	};

	failalloc_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
