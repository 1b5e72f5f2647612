// SPDX-License-Identifier: MIT
/*
 * test_outfile.c - vg_outfile: what each kind of target gets (a regular
 * file replaced by rename, a fifo written in place or refused, a symbolic
 * link, directory and socket refused with nothing created), abort leaving
 * the target as it was, dead writers' temporaries removed and live ones
 * kept, and allocation failures. Unprivileged: no device nodes here (the
 * CLI test t0091 has them, in its own tmpfs).
 */
#include <dirent.h>
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
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cmocka.h>

#include "failalloc.h"
#include "vigil/outfile.h"

static char dir[] = "/tmp/vigil-outfile.XXXXXX";

static const char *at(const char *name)
{
	static char buf[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* Entries of the directory whose names contain the temporary infix. */
static int temps(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strstr(e->d_name, VG_OUTFILE_TMP_INFIX) != NULL;
	closedir(d);
	return n;
}

static void slurp_eq(const char *path, const char *want)
{
	char buf[256] = { 0 };
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), (ssize_t)strlen(want));
	close(fd);
	assert_string_equal(buf, want);
}

static void put_creates_and_replaces_regular_files(void **state)
{
	struct stat st, st2;

	(void)state;
	assert_int_equal(vg_outfile_put(at("a"), "one\n", 4, 0600, 0, NULL), 0);
	slurp_eq(at("a"), "one\n");
	assert_int_equal(stat(at("a"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(vg_outfile_put(at("a"), "two\n", 4, 0600, VG_OUTFILE_STREAM, NULL), 0);
	slurp_eq(at("a"), "two\n");
	assert_int_equal(stat(at("a"), &st2), 0);
	assert_true(st.st_ino != st2.st_ino);	/* renamed over, not rewritten */
	assert_int_equal(temps(), 0);
	unlink(at("a"));
}

static void refuses_links_directories_sockets_and_unwanted_fifos(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vg_diag d = { 0 };
	struct stat st;
	int s;

	(void)state;
	assert_int_equal(vg_outfile_put(at("target"), "keep", 4, 0600, 0, NULL), 0);
	assert_int_equal(symlink("target", at("link")), 0);
	assert_int_equal(vg_outfile_put(at("link"), "x", 1, 0600, VG_OUTFILE_STREAM, &d), -ELOOP);
	assert_non_null(strstr(d.msg, "symbolic link"));
	assert_int_equal(lstat(at("link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	slurp_eq(at("target"), "keep");
	/* a dangling link too: nothing created where it points */
	assert_int_equal(symlink("nowhere", at("dangling")), 0);
	assert_int_equal(vg_outfile_put(at("dangling"), "x", 1, 0600, 0, NULL), -ELOOP);
	assert_int_equal(access(at("nowhere"), F_OK), -1);

	assert_int_equal(mkdir(at("dir"), 0700), 0);
	assert_int_equal(vg_outfile_put(at("dir"), "x", 1, 0600, VG_OUTFILE_STREAM, &d), -EISDIR);
	assert_string_equal(d.msg, "not a regular file (directory)");

	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(vg_outfile_put(at("fifo"), "x", 1, 0600, 0, &d), -EINVAL);
	assert_string_equal(d.msg, "not a regular file (fifo)");
	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	s = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("sock"));
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(vg_outfile_put(at("sock"), "x", 1, 0600, VG_OUTFILE_STREAM, &d), -EINVAL);
	assert_string_equal(d.msg, "not a regular file (socket)");
	close(s);
	assert_int_equal(temps(), 0);
	unlink(at("sock"));
	unlink(at("fifo"));
	rmdir(at("dir"));
	unlink(at("dangling"));
	unlink(at("link"));
	unlink(at("target"));
}

static void writes_a_fifo_in_place(void **state)
{
	char buf[16] = { 0 };
	struct stat st;
	int r;

	(void)state;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	r = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	assert_true(r >= 0);
	assert_int_equal(vg_outfile_put(at("fifo"), "piped", 5, 0600, VG_OUTFILE_STREAM, NULL), 0);
	assert_int_equal(read(r, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "piped");
	close(r);
	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(temps(), 0);
	unlink(at("fifo"));
}

static void abort_leaves_the_target(void **state)
{
	struct vg_outfile o;

	(void)state;
	assert_int_equal(vg_outfile_put(at("t"), "old", 3, 0600, 0, NULL), 0);
	assert_int_equal(vg_outfile_open(&o, at("t"), 0600, 0, NULL), 0);
	assert_int_equal(vg_outfile_write(&o, "new!", 4, NULL), 0);
	assert_int_equal(temps(), 1);
	vg_outfile_abort(&o);
	vg_outfile_abort(&o);	/* twice is harmless */
	assert_int_equal(temps(), 0);
	slurp_eq(at("t"), "old");
	unlink(at("t"));
}

static void removes_dead_writers_temporaries_only(void **state)
{
	struct vg_outfile o;
	int live, dead, other;

	(void)state;
	dead = open(at(".db.vigil-tmp.DeAd01"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	live = open(at(".db.vigil-tmp.LiVe01"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	other = open(at(".dbx.vigil-tmp.DeAd02"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(dead >= 0 && live >= 0 && other >= 0);
	close(dead);
	close(other);
	assert_int_equal(flock(live, LOCK_EX), 0);	/* a writer still at work */
	assert_int_equal(vg_outfile_open(&o, at("db"), 0600, 0, NULL), 0);
	assert_int_equal(o.stale, 1);
	assert_int_equal(access(at(".db.vigil-tmp.DeAd01"), F_OK), -1);
	assert_int_equal(access(at(".db.vigil-tmp.LiVe01"), F_OK), 0);
	assert_int_equal(access(at(".dbx.vigil-tmp.DeAd02"), F_OK), 0);	/* another target's */
	/* our own temporary is locked: another writer of the target leaves it */
	{
		struct vg_outfile o2;

		assert_int_equal(vg_outfile_open(&o2, at("db"), 0600, 0, NULL), 0);
		assert_int_equal(o2.stale, 0);
		assert_int_equal(vg_outfile_commit(&o2, NULL), 0);
	}
	assert_int_equal(access(o.tmp, F_OK), 0);
	assert_int_equal(vg_outfile_write(&o, "last", 4, NULL), 0);
	assert_int_equal(vg_outfile_commit(&o, NULL), 0);
	slurp_eq(at("db"), "last");
	close(live);
	unlink(at(".db.vigil-tmp.LiVe01"));
	unlink(at(".dbx.vigil-tmp.DeAd02"));
	unlink(at("db"));
	assert_int_equal(temps(), 0);
}

static void long_names_fit(void **state)
{
	char name[NAME_MAX + 1];

	(void)state;
	memset(name, 'n', NAME_MAX);
	name[NAME_MAX] = 0;
	assert_int_equal(vg_outfile_put(at(name), "x", 1, 0600, 0, NULL), 0);
	slurp_eq(at(name), "x");
	unlink(at(name));
	assert_int_equal(vg_outfile_put(at("nodir/x"), "x", 1, 0600, 0, NULL), -ENOENT);
	assert_int_equal(temps(), 0);
}

static void survives_allocation_failures(void **state)
{
	(void)state;
	for (long n = 0;; n++) {
		int r;

		failalloc_arm(n);
		r = vg_outfile_put(at("m"), "x", 1, 0600, 0, NULL);
		failalloc_disarm();
		assert_int_equal(temps(), 0);
		if (r == 0)
			break;
		assert_int_equal(r, -ENOMEM);
	}
	slurp_eq(at("m"), "x");
	unlink(at("m"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put_creates_and_replaces_regular_files),
		cmocka_unit_test(refuses_links_directories_sockets_and_unwanted_fifos),
		cmocka_unit_test(writes_a_fifo_in_place),
		cmocka_unit_test(abort_leaves_the_target),
		cmocka_unit_test(removes_dead_writers_temporaries_only),
		cmocka_unit_test(long_names_fit),
		cmocka_unit_test(survives_allocation_failures),
	};
	int r;

	if (!mkdtemp(dir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return r;
}
