// SPDX-License-Identifier: MIT
/*
 * mmapflip.c - the shared-mapping attack on a verdict cache, as the
 * attacker runs it (an unprivileged user who may write the file): open
 * O_RDWR, mmap(MAP_SHARED), change bytes through the mapping, munmap,
 * close, and at once (no pause) use the file. A page written through a
 * mapping updates no time stamp when already dirty and raises no
 * write(2) notification, so a cache keyed on (dev, ino, size, mtime,
 * ctime) or a kernel ignore mark dropped on FS_MODIFY sees nothing.
 *
 *   mmapflip exec FILE OFFSET GOOD EVIL N
 *     N rounds: write EVIL at OFFSET, execve FILE (must be denied), write
 *     GOOD back, execve FILE (must run). FILE is a script that exits with
 *     the digit at OFFSET, so the exit status says which content ran.
 *   mmapflip open OFFSET EVIL FILE...
 *     per FILE: open+read (must pass: a verdict is now cached), write EVIL,
 *     open+read (must be denied).
 *   mmapflip hold FILE OFFSET GOOD EVIL N
 *     the writer keeps FILE open and mapped; N rounds: write EVIL, open+read
 *     (must be denied), write GOOD, open+read (must pass).
 *
 * Prints one line of counts; exit 0 when every use was decided right.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int map_write(const char *path, long off, const char *bytes)
{
	struct stat st;
	char *p;
	int fd = open(path, O_RDWR);

	if (fd < 0 || fstat(fd, &st) < 0 || off + (long)strlen(bytes) > st.st_size) {
		fprintf(stderr, "mmapflip: %s: %s\n", path, strerror(errno));
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mmapflip: mmap %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	memcpy(p + off, bytes, strlen(bytes));
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}

/* The exit status of FILE run as a program, or 126 when exec was refused. */
static int run(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { NULL };

		execve(path, argv, envp);
		_exit(126);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* 1: read, and @want found at @off; 0: open refused; -1: read other content */
static int read_check(const char *path, long off, char want)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return errno == EPERM || errno == EACCES ? 0 : -1;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	return n > off && buf[off] == want ? 1 : -1;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "exec") == 0) {
		const char *f = argv[2], *good = argv[4], *evil = argv[5];
		long off = atol(argv[3]), n = atol(argv[6]);
		long evil_denied = 0, evil_ran = 0, good_ran = 0, good_denied = 0, other = 0;

		for (long i = 0; i < n; i++) {
			int rc;

			if (map_write(f, off, evil) < 0)
				return 2;
			rc = run(f);
			if (rc == 126)
				evil_denied++;
			else if (rc == evil[0] - '0')
				evil_ran++;
			else
				other++;
			if (map_write(f, off, good) < 0)
				return 2;
			rc = run(f);
			if (rc == good[0] - '0')
				good_ran++;
			else if (rc == 126)
				good_denied++;
			else
				other++;
		}
		printf("evil_denied=%ld evil_ran=%ld good_ran=%ld good_denied=%ld other=%ld\n",
		       evil_denied, evil_ran, good_ran, good_denied, other);
		return evil_ran || good_denied || other ? 1 : 0;
	}
	if (argc >= 5 && strcmp(argv[1], "open") == 0) {
		long off = atol(argv[2]), first_ok = 0, evil_denied = 0, evil_read = 0, other = 0;
		const char *evil = argv[3];

		for (int i = 4; i < argc; i++) {
			char orig;
			int fd = open(argv[i], O_RDONLY), r;

			if (fd < 0 || pread(fd, &orig, 1, off) != 1) {
				other++;
				if (fd >= 0)
					close(fd);
				continue;
			}
			close(fd);
			r = read_check(argv[i], off, orig);
			first_ok += r == 1;
			other += r != 1;
			if (map_write(argv[i], off, evil) < 0)
				return 2;
			r = read_check(argv[i], off, evil[0]);
			if (r == 0)
				evil_denied++;
			else if (r == 1)
				evil_read++;
			else
				other++;
		}
		printf("first_ok=%ld evil_denied=%ld evil_read=%ld other=%ld\n", first_ok, evil_denied,
		       evil_read, other);
		return evil_read || other ? 1 : 0;
	}
	if (argc == 7 && strcmp(argv[1], "hold") == 0) {
		/* the writer keeps its mapping: every other open must see what is there now */
		const char *f = argv[2], *good = argv[4], *evil = argv[5];
		long off = atol(argv[3]), n = atol(argv[6]);
		long evil_denied = 0, evil_read = 0, good_read = 0, good_denied = 0, other = 0;
		struct stat st;
		char *p;
		int fd = open(f, O_RDWR);

		if (fd < 0 || fstat(fd, &st) < 0)
			return 2;
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 2;
		for (long i = 0; i < n; i++) {
			int r;

			memcpy(p + off, evil, strlen(evil));
			r = read_check(f, off, evil[0]);
			evil_denied += r == 0;
			evil_read += r == 1;
			other += r < 0;
			memcpy(p + off, good, strlen(good));
			r = read_check(f, off, good[0]);
			good_read += r == 1;
			good_denied += r == 0;
			other += r < 0;
		}
		munmap(p, (size_t)st.st_size);
		close(fd);
		printf("evil_denied=%ld evil_read=%ld good_read=%ld good_denied=%ld other=%ld\n",
		       evil_denied, evil_read, good_read, good_denied, other);
		return evil_read || good_denied || other ? 1 : 0;
	}
	fprintf(stderr, "usage: mmapflip exec FILE OFFSET GOOD EVIL N | open OFFSET EVIL FILE...\n"
			"       | hold FILE OFFSET GOOD EVIL N\n");
	return 2;
}
