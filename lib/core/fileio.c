// SPDX-License-Identifier: MIT
/*
 * fileio.c - bounded whole-file reads (contracts in vigil/fileio.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vigil/fileio.h"

/*
 * Key and token files come through here: a buffer that is given up (grown,
 * or dropped on an error) is wiped first, so no copy of a secret is left
 * in freed memory.
 */
static void drop(uint8_t *buf, size_t len)
{
	explicit_bzero(buf, len);
	free(buf);
}

/* @buf of @len bytes used, moved to a new block of @cap + 1 bytes. Return: NULL: -ENOMEM. */
static uint8_t *grow(uint8_t *buf, size_t len, size_t cap)
{
	uint8_t *nb = malloc(cap + 1);

	if (nb)
		memcpy(nb, buf, len);
	drop(buf, len);
	return nb;
}

/*
 * Read @fd to its end into a buffer of @cap (+1) bytes first, grown by
 * doubling up to @max + 1: one byte past @max tells input that is too long.
 * @positional: pread from offset 0 (the fd's offset is left alone), else
 * read from where the fd is.
 */
static int read_to_end(int fd, size_t max, size_t cap, bool positional, uint8_t **ret,
		       size_t *ret_len)
{
	uint8_t *buf = malloc(cap + 1);
	size_t len = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap > max / 2 ? max + 1 : cap * 2;

			if (len > max) {
				drop(buf, len);
				return -EFBIG;
			}
			buf = grow(buf, len, ncap);
			if (!buf)
				return -ENOMEM;
			cap = ncap;
		}
		n = positional ? pread(fd, buf + len, cap - len, (off_t)len)
			       : read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;

			drop(buf, len);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		drop(buf, len);
		return -EFBIG;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int vg_fd_read_all(int fd, size_t max, uint8_t **ret, size_t *ret_len)
{
	return read_to_end(fd, max, max < 8192 ? max + 1 : 8192, false, ret, ret_len);
}

int vg_fd_read_file(int fd, size_t max, uint8_t **ret, size_t *ret_len)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	/* one byte more than fstat says, so growth past @max is seen */
	return read_to_end(fd, max, (size_t)st.st_size + 1, true, ret, ret_len);
}

int vg_file_read(const char *path, size_t max, uint8_t **ret, size_t *ret_len,
		 struct vg_diag *diag)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int r;

	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s", strerror(errno));
	r = vg_fd_read_file(fd, max, ret, ret_len);
	close(fd);
	if (r == -EINVAL)
		return vg_diag_set(diag, r, "not a regular file");
	if (r == -EFBIG)
		return vg_diag_set(diag, r, "larger than %zu bytes", max);
	if (r < 0)
		return vg_diag_set(diag, r, "%s", strerror(-r));
	return 0;
}
