// SPDX-License-Identifier: MIT
/*
 * test_trust.c - lib/trust's parsers and the gpgv step on real archive
 * data (tests/vectors/trust/README.md): the signed text of an InRelease
 * (fields, the whole SHA256 section), gpgv on the InRelease itself and on
 * a copy with one byte changed, Packages stanzas (fields, missing or
 * repeated ones), and a list matched by the digest and size of its bytes
 * only. Allocation failures of the parsers end in -ENOMEM, never a crash.
 * The database: written and read back, looked up by path and digest,
 * another key refused, an upgrade kept as superseded for its grace and
 * then dropped with its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "failalloc.h"
#include "vigil/hash.h"
#include "vigil/trust.h"

static char dir[] = "/tmp/vigil-trust.XXXXXX";

static char *vec(const char *name, size_t *len)
{
	char path[PATH_MAX];
	const char *v = getenv("VECTORS");
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/trust/%s", v ? v : "tests/vectors", name);
	f = fopen(path, "rb");
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

static const char *vec_path(const char *name)
{
	static char path[PATH_MAX];
	const char *v = getenv("VECTORS");

	snprintf(path, sizeof(path), "%s/trust/%s", v ? v : "tests/vectors", name);
	return path;
}

static const char *at(const char *name)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void put(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	fclose(f);
}

/* the SHA256 lines of @text, counted independently of the parser */
static size_t count_sha256_lines(const char *text)
{
	const char *p = strstr(text, "\nSHA256:\n");
	size_t n = 0;

	assert_non_null(p);
	p += 9;
	while (*p == ' ') {
		n++;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return n;
}

static void release_parse_reads_the_signed_text(void **state)
{
	struct vg_trust_release rel;
	struct vg_diag d = { 0 };
	size_t len;
	char *text = vec("bookworm-updates.Release", &len);
	const struct vg_trust_relfile *f = NULL;
	uint8_t want[32];

	(void)state;
	assert_int_equal(vg_trust_release_parse(text, len, &rel, &d), 0);
	assert_string_equal(rel.origin, "Debian");
	assert_string_equal(rel.label, "Debian");
	assert_string_equal(rel.suite, "oldstable-updates");
	assert_string_equal(rel.codename, "bookworm-updates");
	assert_int_equal(rel.valid_until, 0);
	assert_true(rel.date > 1700000000);
	assert_int_equal(rel.nfiles, count_sha256_lines(text));
	/* the entry of main/binary-amd64/Packages, as its line says */
	{
		const char *l = strstr(text, " main/binary-amd64/Packages\n");
		char hex[65];
		unsigned long long size;

		assert_non_null(l);
		while (l[-1] != '\n')
			l--;
		assert_int_equal(sscanf(l, " %64s %llu", hex, &size), 2);
		assert_int_equal(vg_hex_decode(hex, want, 32), 32);
		f = vg_trust_release_find(&rel, want, size);
		assert_non_null(f);
		assert_string_equal(f->path, "main/binary-amd64/Packages");
		assert_null(vg_trust_release_find(&rel, want, size + 1));
	}
	vg_trust_release_release(&rel);
	free(text);
}

static void release_parse_reads_valid_until(void **state)
{
	static const char text[] = "Origin: Debian\nSuite: oldstable-security\n"
				   "Date: Wed, 02 Dec 2026 23:13:43 UTC\n"
				   "Valid-Until: Wed, 09 Dec 2026 23:13:43 UTC\n"
				   "SHA256:\n"
				   " e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 a/Packages\n";
	struct vg_trust_release rel;

	(void)state;
	assert_int_equal(vg_trust_release_parse(text, sizeof(text) - 1, &rel, NULL), 0);
	assert_int_equal(rel.valid_until, 1796858023);
	assert_int_equal(rel.date, 1796858023 - 7 * 86400);
	assert_int_equal(rel.nfiles, 1);
	assert_int_equal(rel.files[0].size, 0);
	assert_string_equal(rel.files[0].path, "a/Packages");
	vg_trust_release_release(&rel);
}

static void release_parse_rejects_malformed(void **state)
{
	static const char *const bad[] = {
		"Origin: Debian\n",						/* no SHA256 */
		"Origin: Debian\nSHA256:\n",					/* an empty one */
		"SHA256:\n zz 12 a/Packages\n",					/* not hex */
		"SHA256:\n e3b0c44298fc1c149afbf4c8996fb924 12 a/Packages\n",	/* short */
		"SHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 x a\n",
		"SHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 1\n",
		"no colon here\nSHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 1 a\n",
		"Valid-Until: someday\nSHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 1 a\n",
		"SHA256: inline\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 1 a\n",
	};
	struct vg_trust_release rel;
	struct vg_diag d = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vg_trust_release_parse(bad[i], strlen(bad[i]), &rel, &d), -EBADMSG);
		assert_int_equal(d.err, -EBADMSG);
	}
}

static void release_verify_runs_gpgv_on_the_inrelease(void **state)
{
	struct vg_trust_release a, b;
	struct vg_diag d = { 0 };
	size_t len, ilen;
	char *text = vec("bookworm-updates.Release", &len);
	char *in = vec("bookworm-updates.InRelease", &ilen);
	struct vg_digest dg;

	(void)state;
	assert_int_equal(vg_trust_release_verify(vec_path("bookworm-updates.InRelease"), NULL, NULL,
						 0, 0, &a, &d), 0);
	assert_int_equal(vg_trust_release_parse(text, len, &b, NULL), 0);
	assert_string_equal(a.codename, b.codename);
	assert_int_equal(a.nfiles, b.nfiles);
	for (size_t i = 0; i < a.nfiles; i++) {
		assert_string_equal(a.files[i].path, b.files[i].path);
		assert_memory_equal(a.files[i].sha256, b.files[i].sha256, 32);
	}
	/* the digest recorded is that of the InRelease file, signature included */
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, in, ilen, &dg, NULL), 0);
	assert_memory_equal(a.sha256, dg.bytes, 32);
	vg_trust_release_release(&a);
	vg_trust_release_release(&b);
	free(text);
	free(in);
}

static void release_verify_rejects_a_changed_byte(void **state)
{
	struct vg_trust_release rel;
	struct vg_diag d = { 0 };
	size_t len;
	char *in = vec("bookworm-updates.InRelease", &len);
	char *p = strstr(in, "Codename: bookworm-updates");

	(void)state;
	assert_non_null(p);
	p[10] ^= 0x20;	/* bookworm -> Bookworm */
	put(at("tampered"), in, len);
	assert_int_equal(vg_trust_release_verify(at("tampered"), NULL, NULL, 0, 0, &rel, &d),
			 -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "gpgv"));
	/* text outside the signature is not parsed, and does not verify either */
	put(at("plain"), "Origin: Debian\nSHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934"
			 "ca495991b7852b855 0 a/Packages\n", 103);
	assert_int_equal(vg_trust_release_verify(at("plain"), NULL, NULL, 0, 0, &rel, &d),
			 -EKEYREJECTED);
	/* the removed keys do not verify today's archive */
	assert_int_equal(vg_trust_release_verify(vec_path("bookworm-updates.InRelease"),
						 "/usr/share/keyrings/debian-archive-removed-keys.gpg",
						 NULL, 0, 0, &rel, &d),
			 -EKEYREJECTED);
	/* no such keyring: said before gpgv runs */
	assert_int_equal(vg_trust_release_verify(vec_path("bookworm-updates.InRelease"),
						 at("none.gpg"), NULL, 0, 0, &rel, &d),
			 -ENOENT);
	unlink(at("tampered"));
	unlink(at("plain"));
	free(in);
}

/* several keyrings: one gpgv run, a key of any of them verifies */
static void release_verify_keyrings_any_of_them(void **state)
{
	static const char *const removed = "/usr/share/keyrings/debian-archive-removed-keys.gpg";
	const char *two[2] = { removed, VG_TRUST_KEYRING };
	const char *many[VG_TRUST_MAX_KEYRINGS + 1];
	struct vg_trust_release rel;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_trust_release_verify_keyrings(vec_path("bookworm-updates.InRelease"),
							  two, 2, NULL, 0, 0, &rel, &d), 0);
	assert_string_equal(rel.codename, "bookworm-updates");
	vg_trust_release_release(&rel);
	assert_int_equal(vg_trust_release_verify_keyrings(vec_path("bookworm-updates.InRelease"),
							  two, 1, NULL, 0, 0, &rel, &d),
			 -EKEYREJECTED);
	/* a missing one is said, whichever it is */
	two[0] = at("none.gpg");
	assert_int_equal(vg_trust_release_verify_keyrings(vec_path("bookworm-updates.InRelease"),
							  two, 2, NULL, 0, 0, &rel, &d), -ENOENT);
	assert_non_null(strstr(d.msg, "none.gpg"));
	for (size_t i = 0; i < VG_TRUST_MAX_KEYRINGS + 1; i++)
		many[i] = VG_TRUST_KEYRING;
	assert_int_equal(vg_trust_release_verify_keyrings(vec_path("bookworm-updates.InRelease"),
							  many, VG_TRUST_MAX_KEYRINGS + 1, NULL, 0, 0,
							  &rel, &d), -EINVAL);
	assert_int_equal(vg_trust_release_verify_keyrings(vec_path("bookworm-updates.InRelease"),
							  many, 0, NULL, 0, 0, &rel, &d), -EINVAL);
}

/* text before or after the signed block never reaches the parser */
static void release_verify_ignores_unsigned_text(void **state)
{
	static const char inject[] = "Origin: Evil\nSHA256:\n "
				     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
				     " 0 evil/binary-amd64/Packages\n";
	struct vg_trust_release a, rel;
	struct vg_diag d = { 0 };
	size_t len;
	char *in = vec("bookworm-updates.InRelease", &len);
	char *buf = malloc(len + 2 * sizeof(inject));
	int r;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(vg_trust_release_verify(vec_path("bookworm-updates.InRelease"), NULL, NULL,
						 0, 0, &a, &d), 0);
	/* appended after the signature */
	memcpy(buf, in, len);
	memcpy(buf + len, inject, sizeof(inject) - 1);
	put(at("appended"), buf, len + sizeof(inject) - 1);
	r = vg_trust_release_verify(at("appended"), NULL, NULL, 0, 0, &rel, &d);
	if (r == 0) {
		assert_string_equal(rel.origin, "Debian");
		assert_int_equal(rel.nfiles, a.nfiles);
		for (size_t i = 0; i < rel.nfiles; i++)
			assert_null(strstr(rel.files[i].path, "evil"));
		vg_trust_release_release(&rel);
	} else {
		assert_int_equal(r, -EKEYREJECTED);
	}
	/* prepended before it */
	memcpy(buf, inject, sizeof(inject) - 1);
	memcpy(buf + sizeof(inject) - 1, in, len);
	put(at("prepended"), buf, len + sizeof(inject) - 1);
	r = vg_trust_release_verify(at("prepended"), NULL, NULL, 0, 0, &rel, &d);
	if (r == 0) {
		assert_string_equal(rel.origin, "Debian");
		assert_int_equal(rel.nfiles, a.nfiles);
		vg_trust_release_release(&rel);
	} else {
		assert_int_equal(r, -EKEYREJECTED);
	}
	vg_trust_release_release(&a);
	unlink(at("appended"));
	unlink(at("prepended"));
	free(buf);
	free(in);
}

static void packages_parse_reads_stanzas(void **state)
{
	struct vg_trust_packages pk = { 0 };
	const struct vg_trust_pkg *p = NULL;
	size_t len;
	char *text = vec("Packages.excerpt", &len);
	const char *s = strstr(text, "Package: hostname\n");
	char version[64], filename[256], hex[65];
	unsigned long long size;
	uint8_t sha[32];

	(void)state;
	assert_non_null(s);
	assert_int_equal(sscanf(strstr(s, "\nVersion: "), "\nVersion: %63s", version), 1);
	assert_int_equal(sscanf(strstr(s, "\nFilename: "), "\nFilename: %255s", filename), 1);
	assert_int_equal(sscanf(strstr(s, "\nSize: "), "\nSize: %llu", &size), 1);
	assert_int_equal(sscanf(strstr(s, "\nSHA256: "), "\nSHA256: %64s", hex), 1);
	assert_int_equal(vg_hex_decode(hex, sha, 32), 32);
	assert_int_equal(vg_trust_packages_parse(&pk, text, len, 7, NULL), 0);
	assert_int_equal(pk.n, 3);
	assert_int_equal(vg_trust_packages_find(&pk, "hostname", version, "amd64", &p), 1);
	assert_string_equal(p->filename, filename);
	assert_int_equal(p->size, size);
	assert_memory_equal(p->sha256, sha, 32);
	assert_int_equal(p->release, 7);
	assert_int_equal(vg_trust_packages_find(&pk, "hostname", version, NULL, &p), 1);
	assert_int_equal(vg_trust_packages_find(&pk, "hostname", version, "arm64", &p), 0);
	assert_int_equal(vg_trust_packages_find(&pk, "hostname", "0", NULL, &p), 0);
	assert_int_equal(vg_trust_packages_find(&pk, "adduser", "3.134", "all", &p), 1);
	vg_trust_packages_release(&pk);
	free(text);
}

static void packages_parse_rejects_incomplete_stanzas(void **state)
{
	static const char *const bad[] = {
		/* no SHA256 */
		"Package: a\nVersion: 1\nArchitecture: all\nFilename: a.deb\nSize: 1\n",
		/* no Size */
		"Package: a\nVersion: 1\nArchitecture: all\nFilename: a.deb\n"
		"SHA256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
		/* Package twice */
		"Package: a\nPackage: b\nVersion: 1\nArchitecture: all\nFilename: a.deb\nSize: 1\n"
		"SHA256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
		/* a negative size */
		"Package: a\nVersion: 1\nArchitecture: all\nFilename: a.deb\nSize: -1\n"
		"SHA256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
		/* a short digest */
		"Package: a\nVersion: 1\nArchitecture: all\nFilename: a.deb\nSize: 1\n"
		"SHA256: e3b0c44298fc1c149afbf4c8996fb924\n",
		/* a line without a colon */
		"Package: a\nVersion 1\n",
	};
	static const char good[] =
		"Package: a\nVersion: 1\nArchitecture: all\nFilename: a.deb\nSize: 1\n"
		"Description: one\n more\n"
		"SHA256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n\n\n";
	struct vg_diag d = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vg_trust_packages pk = { 0 };

		assert_int_equal(vg_trust_packages_parse(&pk, bad[i], strlen(bad[i]), 0, &d), -EBADMSG);
		vg_trust_packages_release(&pk);
	}
	{
		struct vg_trust_packages pk = { 0 };

		assert_int_equal(vg_trust_packages_parse(&pk, good, strlen(good), 0, &d), 0);
		assert_int_equal(pk.n, 1);
		vg_trust_packages_release(&pk);
	}
}

static void packages_load_needs_a_listed_digest(void **state)
{
	struct vg_trust_packages pk = { 0 };
	struct vg_trust_relfile files[2] = { 0 };
	struct vg_trust_release rel = { .files = files, .nfiles = 2 };
	const struct vg_trust_relfile *e = NULL;
	struct vg_diag d = { 0 };
	struct vg_digest dg;
	size_t len;
	char *text = vec("Packages.excerpt", &len);

	(void)state;
	put(at("Packages"), text, len);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, text, len, &dg, NULL), 0);
	/* the right digest under a name that is not a Packages list */
	files[0] = (struct vg_trust_relfile){ .path = (char *)"main/Contents-amd64", .size = len };
	memcpy(files[0].sha256, dg.bytes, 32);
	/* a Packages list of another size */
	files[1] = (struct vg_trust_relfile){ .path = (char *)"main/binary-amd64/Packages",
					      .size = len + 1 };
	memcpy(files[1].sha256, dg.bytes, 32);
	assert_int_equal(vg_trust_packages_load(&pk, at("Packages"), &rel, 0, &e, &d), -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "not listed by the InRelease"));
	assert_int_equal(pk.n, 0);
	files[1].size = len;
	assert_int_equal(vg_trust_packages_load(&pk, at("Packages"), &rel, 3, &e, &d), 0);
	assert_ptr_equal(e, &files[1]);
	assert_int_equal(pk.n, 3);
	assert_int_equal(pk.pkgs[0].release, 3);
	vg_trust_packages_release(&pk);
	/* one byte changed: not the list InRelease names */
	text[len / 2] ^= 1;
	put(at("Packages"), text, len);
	assert_int_equal(vg_trust_packages_load(&pk, at("Packages"), &rel, 0, &e, &d), -EKEYREJECTED);
	assert_int_equal(vg_trust_packages_load(&pk, at("absent"), &rel, 0, &e, &d), -ENOENT);
	unlink(at("Packages"));
	free(text);
}

static void parsers_fail_allocations_cleanly(void **state)
{
	size_t len, plen;
	char *text = vec("bookworm-updates.Release", &len);
	char *pkgs = vec("Packages.excerpt", &plen);
	bool hit = true;

	(void)state;
	for (long n = 0; hit && n < 100000; n++) {
		struct vg_trust_release rel;
		struct vg_trust_packages pk = { 0 };
		int r1, r2;

		failalloc_arm(n);
		r1 = vg_trust_release_parse(text, len, &rel, NULL);
		r2 = vg_trust_packages_parse(&pk, pkgs, plen, 0, NULL);
		hit = failalloc_hit();
		failalloc_disarm();
		assert_true(r1 == 0 || r1 == -ENOMEM);
		assert_true(r2 == 0 || r2 == -ENOMEM);
		if (r1 == 0)
			vg_trust_release_release(&rel);
		vg_trust_packages_release(&pk);
	}
	free(text);
	free(pkgs);
}

/* a package of two files and a link, as vg_trust_deb_read() would give it */
static void fake_deb(struct vg_trust_deb *deb, const char *content)
{
	static char p1[] = "/usr/bin/tool", p2[] = "/etc/tool.conf", p3[] = "/usr/bin/t",
		    t3[] = "tool";

	memset(deb, 0, sizeof(*deb));
	deb->files = calloc(3, sizeof(*deb->files));
	assert_non_null(deb->files);
	deb->n = deb->cap = 3;
	deb->files[0] = (struct vg_trust_file){ .path = strdup(p1), .mode = 0100755, .size = 4 };
	deb->files[1] = (struct vg_trust_file){ .path = strdup(p2), .mode = 0100644, .size = 4,
						.conffile = true };
	deb->files[2] = (struct vg_trust_file){ .path = strdup(p3), .target = strdup(t3),
						.mode = 0120777, .size = 4 };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(vg_hash_buf(VG_HASH_SHA256, content, strlen(content),
					     &deb->files[i].dg[0], NULL), 0);
		assert_int_equal(vg_hash_buf(VG_HASH_SHA512, content, strlen(content),
					     &deb->files[i].dg[1], NULL), 0);
	}
	memset(deb->sha256, content[0], 32);
}

static void db_write(const char *path, const uint8_t *key, const char *version,
		     const char *content, struct vg_trust_db *old, int64_t now, int64_t grace,
		     int want_dropped)
{
	static const unsigned int algos[] = { VG_HASH_SHA256, VG_HASH_SHA512 };
	struct vg_trust_release rel = { .origin = (char *)"Debian", .suite = (char *)"stable",
					.codename = (char *)"bookworm", .label = (char *)"Debian" };
	struct vg_trust_pkgrow row = { .name = "tool", .version = version, .arch = "amd64" };
	struct vg_trust_db *db = NULL;
	struct vg_trust_deb deb;
	struct vg_diag d = { 0 };
	int64_t rid;

	memset(rel.sha256, version[0], 32);
	fake_deb(&deb, content);
	assert_int_equal(vg_trust_db_create(path, algos, 2, key, 32, &db, &d), 0);
	rid = vg_trust_db_add_release(db, &rel, &d);
	assert_true(rid > 0);
	assert_int_equal(vg_trust_db_add_release(db, &rel, &d), rid);	/* once per InRelease */
	assert_int_equal(vg_trust_db_add_package(db, rid, &row, &deb, &d), 0);
	if (old)
		assert_int_equal(vg_trust_db_carry(db, old, now, grace, &d), want_dropped);
	assert_int_equal(vg_trust_db_commit(db, &d), 0);
	vg_trust_deb_release(&deb);
}

static int collect(void *arg, const struct vg_trust_filerow *f)
{
	char *out = arg;

	snprintf(out + strlen(out), 1024 - strlen(out), "%s %s %s %zu %d %s;", f->path,
		 f->pkg->version, f->target ? f->target : "-", f->ndg, f->conffile,
		 f->pkg->origin);
	return 0;
}

static void db_round_trip_and_lookup(void **state)
{
	uint8_t key[32] = { 1 }, other[32] = { 2 };
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };
	struct vg_digest good, bad;
	char rows[1024] = "";
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	uint64_t cur, sup, files;

	(void)state;
	db_write(at("t.db"), key, "1.0", "v1\n", NULL, 0, 0, 0);
	assert_int_equal(vg_trust_db_open(at("t.db"), other, 32, &db, &d), -EKEYREJECTED);
	assert_non_null(strstr(d.msg, "MAC mismatch"));
	assert_int_equal(vg_trust_db_open(at("t.db"), key, 32, &db, &d), 0);
	assert_int_equal(vg_trust_db_algos(db, algos), 2);
	assert_int_equal(algos[0], VG_HASH_SHA256);
	assert_int_equal(algos[1], VG_HASH_SHA512);
	assert_int_equal(vg_trust_db_files(db, true, collect, rows, &d), 0);
	assert_string_equal(rows, "/etc/tool.conf 1.0 - 2 1 Debian;/usr/bin/t 1.0 tool 0 0 Debian;"
				  "/usr/bin/tool 1.0 - 2 0 Debian;");
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v1\n", 3, &good, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v2\n", 3, &bad, NULL), 0);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &good, &d), 1);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &bad, &d), 0);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/other", &good, &d), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA512, "v1\n", 3, &good, NULL), 0);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &good, &d), 1);
	/* what is recorded for a path, to say why a digest is not trusted */
	{
		struct vg_digest rec = { 0 }, want;

		assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v1\n", 3, &want, NULL), 0);
		assert_int_equal(vg_trust_db_recorded(db, "/usr/bin/tool", VG_HASH_SHA256, &rec, &d), 1);
		assert_int_equal(rec.algo, VG_HASH_SHA256);
		assert_int_equal(rec.len, 32);
		assert_memory_equal(rec.bytes, want.bytes, 32);
		assert_int_equal(vg_trust_db_recorded(db, "/usr/bin/tool", VG_HASH_SHA512, &rec, &d), 1);
		assert_int_equal(rec.len, 64);
		assert_memory_equal(rec.bytes, good.bytes, 64);
		assert_int_equal(vg_trust_db_recorded(db, "/usr/bin/other", VG_HASH_SHA256, &rec, &d), 0);
		assert_int_equal(vg_trust_db_recorded(db, "/usr/bin/tool", VG_HASH_SHA1, NULL, &d), 0);
		/* a symbolic link has no digest */
		assert_int_equal(vg_trust_db_recorded(db, "/usr/bin/t", VG_HASH_SHA256, NULL, &d), 0);
	}
	vg_trust_db_counts(db, &cur, &sup, &files);
	assert_int_equal(cur, 1);
	assert_int_equal(sup, 0);
	assert_int_equal(files, 3);
	vg_trust_db_free(db);
	unlink(at("t.db"));
}

static void db_supersedes_then_drops_after_the_grace(void **state)
{
	uint8_t key[32] = { 1 };
	struct vg_trust_db *old = NULL, *db = NULL;
	struct vg_diag d = { 0 };
	struct vg_digest v1, v2;
	char rows[1024] = "";
	uint64_t cur, sup, files;

	(void)state;
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v1\n", 3, &v1, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v2\n", 3, &v2, NULL), 0);
	db_write(at("a.db"), key, "1.0", "v1\n", NULL, 0, 0, 0);
	/* the upgrade, seen at t=1000, grace 100: 1.0 kept as superseded */
	assert_int_equal(vg_trust_db_open(at("a.db"), key, 32, &old, &d), 0);
	db_write(at("b.db"), key, "2.0", "v2\n", old, 1000, 100, 0);
	vg_trust_db_free(old);
	assert_int_equal(vg_trust_db_open(at("b.db"), key, 32, &db, &d), 0);
	vg_trust_db_counts(db, &cur, &sup, &files);
	assert_int_equal(cur, 1);
	assert_int_equal(sup, 1);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &v2, &d), 1);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &v1, &d), 2);
	{
		struct vg_digest rec = { 0 };

		/* the current version's digest, though a superseded one is kept */
		assert_int_equal(vg_trust_db_recorded(db, "/usr/bin/tool", VG_HASH_SHA256, &rec, &d), 1);
		assert_memory_equal(rec.bytes, v2.bytes, 32);
	}
	/* verify sees the current version only */
	assert_int_equal(vg_trust_db_files(db, true, collect, rows, &d), 0);
	assert_null(strstr(rows, " 1.0 "));
	rows[0] = '\0';
	assert_int_equal(vg_trust_db_files(db, false, collect, rows, &d), 0);
	assert_non_null(strstr(rows, "/usr/bin/tool 1.0 "));
	/* a rebuild at t=1099 keeps it (since 1000, not since 1099) */
	db_write(at("c.db"), key, "2.0", "v2\n", db, 1099, 100, 0);
	vg_trust_db_free(db);
	assert_int_equal(vg_trust_db_open(at("c.db"), key, 32, &db, &d), 0);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &v1, &d), 2);
	/* at t=1100 the grace is over: dropped, files and all */
	db_write(at("d.db"), key, "2.0", "v2\n", db, 1100, 100, 1);
	vg_trust_db_free(db);
	assert_int_equal(vg_trust_db_open(at("d.db"), key, 32, &db, &d), 0);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &v1, &d), 0);
	assert_int_equal(vg_trust_db_lookup(db, "/usr/bin/tool", &v2, &d), 1);
	vg_trust_db_counts(db, &cur, &sup, &files);
	assert_int_equal(cur, 1);
	assert_int_equal(sup, 0);
	assert_int_equal(files, 3);
	vg_trust_db_free(db);
	unlink(at("a.db"));
	unlink(at("b.db"));
	unlink(at("c.db"));
	unlink(at("d.db"));
}

static void index_looks_up_path_and_digest(void **state)
{
	uint8_t key[32] = { 1 };
	struct vg_trust_db *old = NULL, *db = NULL;
	struct vg_trust_index *x = NULL;
	struct vg_diag d = { 0 };
	struct vg_digest v1, v2, v1_512;
	const char *pkg = NULL;

	(void)state;
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v1\n", 3, &v1, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v2\n", 3, &v2, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA512, "v1\n", 3, &v1_512, NULL), 0);
	db_write(at("a.db"), key, "1.0", "v1\n", NULL, 0, 0, 0);
	assert_int_equal(vg_trust_db_open(at("a.db"), key, 32, &old, &d), 0);
	db_write(at("b.db"), key, "2.0", "v2\n", old, 1000, 100, 0);
	vg_trust_db_free(old);
	assert_int_equal(vg_trust_db_open(at("b.db"), key, 32, &db, &d), 0);
	assert_int_equal(vg_trust_index_load(db, VG_HASH_SHA1, &x, &d), -EOPNOTSUPP);
	assert_non_null(strstr(d.msg, "records no sha1 digests"));
	assert_int_equal(vg_trust_index_load(db, VG_HASH_SHA256, &x, &d), 0);
	vg_trust_db_free(db);	/* the index needs nothing of it */
	assert_int_equal(vg_trust_index_algo(x), VG_HASH_SHA256);
	assert_int_equal(vg_trust_index_count(x), 4);	/* two files of two versions; no link */
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/tool", &v2, &pkg), 1);
	assert_string_equal(pkg, "tool");
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/tool", &v1, NULL), 2);
	assert_int_equal(vg_trust_index_lookup(x, "/etc/tool.conf", &v2, NULL), 1);
	/* the path is part of the key; a link has no digest; another algorithm never matches */
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/too", &v2, NULL), 0);
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/toolx", &v2, NULL), 0);
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/t", &v2, NULL), 0);
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/other", &v2, NULL), 0);
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/tool", &v1_512, NULL), 0);
	v2.bytes[31] ^= 1;
	assert_int_equal(vg_trust_index_lookup(x, "/usr/bin/tool", &v2, NULL), 0);
	vg_trust_index_free(x);
	assert_int_equal(vg_trust_index_count(NULL), 0);
	vg_trust_index_free(NULL);
	unlink(at("a.db"));
	unlink(at("b.db"));
}

static void root_cuts_prefix_and_maps_merged_usr(void **state)
{
	struct vg_trust_root tr;
	struct vg_diag d = { 0 };
	char r[PATH_MAX], name[PATH_MAX + 32];

	(void)state;
	snprintf(r, sizeof(r), "%s", at("root"));
	assert_int_equal(mkdir(r, 0755), 0);
	assert_int_equal(mkdir(at("root/usr"), 0755), 0);
	assert_int_equal(mkdir(at("root/usr/bin"), 0755), 0);
	assert_int_equal(symlink("usr/bin", at("root/bin")), 0);
	assert_int_equal(symlink("/usr/sbin", at("root/sbin")), 0);
	assert_int_equal(symlink("elsewhere/lib", at("root/lib")), 0);
	assert_int_equal(vg_trust_root_init(&tr, r, &d), 0);
	snprintf(name, sizeof(name), "%s/usr/bin/x", r);
	assert_string_equal(vg_trust_root_path(&tr, name), "/usr/bin/x");
	assert_string_equal(vg_trust_root_alias(&tr, "/usr/bin/x"), "/bin/x");
	assert_string_equal(vg_trust_root_alias(&tr, "/usr/sbin/x"), "/sbin/x");
	assert_null(vg_trust_root_alias(&tr, "/usr/lib/x"));	/* not a link to usr/lib */
	assert_null(vg_trust_root_alias(&tr, "/usr/binx/x"));
	assert_null(vg_trust_root_alias(&tr, "/bin/x"));
	snprintf(name, sizeof(name), "%sx/usr/bin/x", r);	/* a sibling with the root as prefix */
	assert_null(vg_trust_root_path(&tr, name));
	snprintf(name, sizeof(name), "%s/usr/bin/x (deleted)", r);
	assert_null(vg_trust_root_path(&tr, name));
	assert_null(vg_trust_root_path(&tr, "usr/bin/x"));
	assert_null(vg_trust_root_path(&tr, NULL));
	vg_trust_root_release(&tr);
	assert_int_equal(vg_trust_root_init(&tr, NULL, &d), 0);
	assert_string_equal(vg_trust_root_path(&tr, "/usr/bin/x"), "/usr/bin/x");
	vg_trust_root_release(&tr);
	assert_int_equal(vg_trust_root_init(&tr, at("absent"), &d), -ENOENT);
	assert_non_null(strstr(d.msg, "absent"));
	unlink(at("root/bin"));
	unlink(at("root/sbin"));
	unlink(at("root/lib"));
	rmdir(at("root/usr/bin"));
	rmdir(at("root/usr"));
	rmdir(r);
}

static void db_refuses_what_is_not_one(void **state)
{
	uint8_t key[32] = { 1 };
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };

	(void)state;
	put(at("junk"), "SQLite format 3", 15);
	assert_int_equal(vg_trust_db_open(at("junk"), key, 32, &db, &d), -EBADMSG);
	put(at("empty"), "", 0);
	assert_int_equal(vg_trust_db_open(at("empty"), key, 32, &db, &d), -EBADMSG);
	assert_non_null(strstr(d.msg, "not a vigil trust database"));
	assert_int_equal(vg_trust_db_open(at("absent"), key, 32, &db, &d), -ENOENT);
	assert_int_equal(vg_trust_db_open(dir, key, 32, &db, &d), -EINVAL);
	unlink(at("junk"));
	unlink(at("empty"));
}

/* the order dpkg --compare-versions gives (checked with dpkg 1.21 on bookworm) */
static void version_cmp_orders_as_dpkg(void **state)
{
	static const struct { const char *a, *b; int want; } t[] = {
		{ "1.0", "1.0-1", -1 },
		{ "1.0~rc1", "1.0", -1 },
		{ "1:0.1", "2.0", 1 },
		{ "1.0-1", "1.0-1+deb12u1", -1 },
		{ "7.88.1-10+deb12u5", "7.88.1-10+deb12u15", -1 },
		{ "1.0a", "1.0", 1 },
		{ "1.0+", "1.0.", -1 },
		{ "2.5.0-1+deb12u2", "2.5.0-1~bpo", 1 },
		{ "0:1.2", "1.2", 0 },
		{ "1.2-3", "1.2-03", 0 },
		{ "1.10", "1.9", 1 },
		{ "1.0~~", "1.0~", -1 },
		{ "1.0-0", "1.0", 0 },
		{ "1:9.2p1-2+deb12u7", "1:9.2p1-2+deb12u10", -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = vg_trust_version_cmp(t[i].a, t[i].b), q = vg_trust_version_cmp(t[i].b, t[i].a);

		assert_int_equal(r < 0 ? -1 : r > 0, t[i].want);
		assert_int_equal(q < 0 ? -1 : q > 0, -t[i].want);
	}
}

/* every (path, digest) in memory: both versions of an upgrade, newest first */
static void index_names_the_packages_of_a_digest(void **state)
{
	uint8_t key[32] = { 1 };
	struct vg_trust_db *old = NULL, *db = NULL;
	struct vg_trust_index *idx = NULL;
	struct vg_trust_hit hit[2];
	struct vg_diag d = { 0 };
	struct vg_digest v1, v2, v1s;

	(void)state;
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v1\n", 3, &v1, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA256, "v2\n", 3, &v2, NULL), 0);
	assert_int_equal(vg_hash_buf(VG_HASH_SHA512, "v1\n", 3, &v1s, NULL), 0);
	db_write(at("i1.db"), key, "1.0", "v1\n", NULL, 0, 0, 0);
	assert_int_equal(vg_trust_db_open(at("i1.db"), key, 32, &old, &d), 0);
	db_write(at("i2.db"), key, "1.0+deb12u1", "v2\n", old, 1000, 100, 0);
	vg_trust_db_free(old);
	assert_int_equal(vg_trust_db_open(at("i2.db"), key, 32, &db, &d), 0);
	assert_int_equal(vg_trust_db_algo_pick(db, VG_HASH_SHA1), VG_HASH_SHA256);
	assert_int_equal(vg_trust_db_algo_pick(db, VG_HASH_SHA512), VG_HASH_SHA512);
	assert_int_equal(vg_trust_index_load(db, VG_HASH_SHA256, &idx, &d), 0);
	vg_trust_db_free(db);
	/* 2 regular files x 2 versions; the link has no digest */
	assert_int_equal(vg_trust_index_count(idx), 4);
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/tool", &v2, hit, 2), 1);
	assert_string_equal(hit[0].package, "tool");
	assert_string_equal(hit[0].version, "1.0+deb12u1");
	assert_int_equal(hit[0].state, VG_TRUST_CURRENT);
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/tool", &v1, hit, 2), 1);
	assert_string_equal(hit[0].version, "1.0");
	assert_int_equal(hit[0].state, VG_TRUST_SUPERSEDED);
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/tool", &v1, hit, 0), 1);
	/* another algorithm than the index's: nothing */
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/tool", &v1s, hit, 2), 0);
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/other", &v1, hit, 2), 0);
	assert_int_equal(vg_trust_index_find(idx, "/etc/tool.conf", &v2, hit, 2), 1);
	vg_trust_index_free(idx);
	/* a third version with the second's content: both named, the newest first */
	assert_int_equal(vg_trust_db_open(at("i2.db"), key, 32, &old, &d), 0);
	db_write(at("i3.db"), key, "1.0+deb12u2", "v2\n", old, 1000, 100, 0);
	vg_trust_db_free(old);
	assert_int_equal(vg_trust_db_open(at("i3.db"), key, 32, &db, &d), 0);
	assert_int_equal(vg_trust_index_load(db, VG_HASH_SHA256, &idx, &d), 0);
	vg_trust_db_free(db);
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/tool", &v2, hit, 2), 2);
	assert_string_equal(hit[0].version, "1.0+deb12u2");
	assert_string_equal(hit[1].version, "1.0+deb12u1");
	assert_string_equal(hit[0].arch, "amd64");
	assert_int_equal(vg_trust_index_find(idx, "/usr/bin/tool", &v2, hit, 1), 2);
	assert_string_equal(hit[0].version, "1.0+deb12u2");
	vg_trust_index_free(idx);
	vg_trust_index_free(NULL);
	unlink(at("i1.db"));
	unlink(at("i2.db"));
	unlink(at("i3.db"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(release_parse_reads_the_signed_text),
		cmocka_unit_test(release_parse_reads_valid_until),
		cmocka_unit_test(release_parse_rejects_malformed),
		cmocka_unit_test(release_verify_runs_gpgv_on_the_inrelease),
		cmocka_unit_test(release_verify_rejects_a_changed_byte),
		cmocka_unit_test(release_verify_keyrings_any_of_them),
		cmocka_unit_test(release_verify_ignores_unsigned_text),
		cmocka_unit_test(packages_parse_reads_stanzas),
		cmocka_unit_test(packages_parse_rejects_incomplete_stanzas),
		cmocka_unit_test(packages_load_needs_a_listed_digest),
		cmocka_unit_test(parsers_fail_allocations_cleanly),
		cmocka_unit_test(db_round_trip_and_lookup),
		cmocka_unit_test(db_supersedes_then_drops_after_the_grace),
		cmocka_unit_test(db_refuses_what_is_not_one),
		cmocka_unit_test(version_cmp_orders_as_dpkg),
		cmocka_unit_test(index_names_the_packages_of_a_digest),
		cmocka_unit_test(index_looks_up_path_and_digest),
		cmocka_unit_test(root_cuts_prefix_and_maps_merged_usr),
	};
	int r;

	failalloc_install();
	if (!mkdtemp(dir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return r;
}
