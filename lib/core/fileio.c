// SPDX-License-Identifier: MIT
/*
 * fileio.c - bounded whole-file reads (contracts in vigil/fileio.h).
 */
#include <errno.h>
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

int vg_fd_read_all(int fd, size_t max, uint8_t **ret, size_t *ret_len)
{
	size_t cap = max < 8192 ? max + 1 : 8192, len = 0;
	uint8_t *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap > max / 2 ? max + 1 : cap * 2;
			uint8_t *nb;

			/* one byte past @max tells a stream that is too long */
			if (len > max) {
				drop(buf, len);
				return -EFBIG;
			}
			nb = grow(buf, len, ncap);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
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

int vg_fd_read_file(int fd, size_t max, uint8_t **ret, size_t *ret_len)
{
	struct stat st;
	size_t want, len = 0;
	uint8_t *buf;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	/* one byte more than fstat says, so growth past @max is seen */
	want = (size_t)st.st_size + 1;
	buf = malloc(want + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == want) {
			size_t nwant = want > max / 2 ? max + 1 : want * 2;
			uint8_t *nb;

			if (len > max) {
				drop(buf, len);
				return -EFBIG;
			}
			nb = grow(buf, len, nwant);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			want = nwant;
		}
		n = pread(fd, buf + len, want - len, (off_t)len);
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
