// SPDX-License-Identifier: MIT
/*
 * test_trust_gpgv.c - lib/trust's gpgv step (trust_gpgv.c) on real
 * archive data (tests/vectors/trust/README.md): apt's verdict (a
 * signature by a key the keyrings lack does not fail the others), the
 * reason quoted from gpgv's last lines, an ASCII-armored keyring as apt's
 * trusted.gpg.d holds them, and a source's Signed-By fingerprints.
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

#include "vigil/trust.h"

/* the two keys that signed the vector (bookworm-updates.InRelease) */
#define BOOKWORM_PRIMARY "B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8"
#define BOOKWORM_SUBKEY "4CB50190207B4758A3F73A796ED0E7B82643E131"
#define REMOVED "/usr/share/keyrings/debian-archive-removed-keys.gpg"
#define BOOKWORM_GPG "/usr/share/keyrings/debian-archive-bookworm-automatic.gpg"

static char dir[] = "/tmp/vigil-gpgv.XXXXXX";

static const char *vec(const char *name)
{
	static char path[4][PATH_MAX];
	static int i;
	const char *v = getenv("VECTORS");

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/trust/%s", v ? v : "tests/vectors", name);
	return path[i];
}

static const char *at(const char *name)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void put(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	fclose(f);
}

static int verify(const char *in, const char *const *kr, size_t nkr, const char *const *fprs,
		  size_t nfpr, struct vg_diag *d)
{
	const struct vg_trust_keys k = { kr, nkr, fprs, nfpr };
	struct vg_trust_release rel = { 0 };
	int r = vg_trust_release_verify_keys(in, &k, NULL, 0, 0, &rel, d);

	if (r == 0) {
		assert_string_equal(rel.codename, "bookworm-updates");
		vg_trust_release_release(&rel);
	}
	return r;
}

/* gpgv exits 2 when a keyring lacks one of the signers; apt accepts, and so does vigil */
static void gpgv_one_good_signature_of_two_verifies(void **state)
{
	const char *kr[] = { BOOKWORM_GPG };
	struct vg_diag d = { 0 };

	(void)state;
	if (access(BOOKWORM_GPG, R_OK) != 0)
		skip();
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, NULL, 0, &d), 0);
}

/* the reason is on gpgv's last lines, never its first ("Signature made") */
static void gpgv_reason_is_quoted(void **state)
{
	const char *removed[] = { REMOVED }, *all[] = { VG_TRUST_KEYRING };
	struct vg_diag d = { 0 };
	size_t len;
	char *in = slurp(vec("bookworm-updates.InRelease"), &len), *p;

	(void)state;
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), removed, 1, NULL, 0, &d),
			 -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "signature not verified by gpgv: Can't check signature: "
				      "No public key"));
	assert_null(strstr(d.msg, "Signature made"));
	/* the key gpgv named, with the reason */
	assert_non_null(strstr(d.msg, "key "));
	p = strstr(in, "Codename: bookworm-updates");
	assert_non_null(p);
	p[10] ^= 0x20;
	put(at("tampered"), in, len);
	assert_int_equal(verify(at("tampered"), all, 1, NULL, 0, &d), -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "signature not verified by gpgv: BAD signature from \"Debian"));
	free(in);
	unlink(at("tampered"));
}

/* an ASCII-armored keyring (the .asc files of apt's trusted.gpg.d) is read; malformed armor is refused */
static void gpgv_reads_an_armored_keyring(void **state)
{
	const char *kr[] = { vec("bookworm-automatic.asc") };
	struct vg_diag d = { 0 };
	size_t len;
	char *asc = slurp(vec("bookworm-automatic.asc"), &len), *p;

	(void)state;
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, NULL, 0, &d), 0);
	/* two armored keys in one file, text around them: both read */
	{
		size_t tl = 2 * len + 64;
		char *two = malloc(tl);

		assert_non_null(two);
		tl = (size_t)snprintf(two, tl, "a comment\n%s\n%s", asc, asc);
		put(at("two.asc"), two, tl);
		kr[0] = at("two.asc");
		assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, NULL, 0, &d), 0);
		free(two);
	}
	/* one radix-64 character dropped: the block is malformed, said with the keyring */
	p = strstr(asc, "\n\n");
	assert_non_null(p);
	memmove(p + 2, p + 3, strlen(p + 3) + 1);
	put(at("bad.asc"), asc, strlen(asc));
	kr[0] = at("bad.asc");
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, NULL, 0, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "bad.asc"));
	assert_non_null(strstr(d.msg, "armor"));
	free(asc);
	unlink(at("two.asc"));
	unlink(at("bad.asc"));
}

/* Signed-By fingerprints: the signing key, its primary key, "!" for the key itself only */
static void gpgv_signed_by_fingerprints(void **state)
{
	const char *kr[] = { VG_TRUST_KEYRING };
	const char *primary[] = { BOOKWORM_PRIMARY }, *primary_only[] = { BOOKWORM_PRIMARY "!" };
	const char *subkey_only[] = { BOOKWORM_SUBKEY "!" };
	const char *other[] = { "0123456789ABCDEF0123456789ABCDEF01234567" };
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, primary, 1, &d), 0);
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, subkey_only, 1, &d), 0);
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, primary_only, 1, &d),
			 -EKEYREJECTED);
	assert_int_equal(verify(vec("bookworm-updates.InRelease"), kr, 1, other, 1, &d),
			 -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "not by a key the source's Signed-By names"));
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpgv_one_good_signature_of_two_verifies),
		cmocka_unit_test(gpgv_reason_is_quoted),
		cmocka_unit_test(gpgv_reads_an_armored_keyring),
		cmocka_unit_test(gpgv_signed_by_fingerprints),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
