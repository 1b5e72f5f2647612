/* SPDX-License-Identifier: MIT */
/*
 * fileio.h - the one bounded whole-file read of vigil (issue 18: it was
 * written seven times across lib/ and the programs).
 *
 * Every reader of a whole file (keys, policies, token lists, logs, PEM
 * bundles, request bodies read from disk) comes through here, so that each
 * has a size limit, retries EINTR and reports a file that is not a regular
 * file the same way. Writing a whole file is outfile.h's business.
 *
 * The buffer returned holds one more byte than the content, set to '\0', so
 * a text file can be used as a C string (content with a NUL inside is the
 * caller's to refuse). It is freed with free() (a secret: wiped first). A
 * buffer this code gives up on the way (grown, or dropped on an error) is
 * wiped before it is freed, so key and token files leave no copies behind.
 */
#ifndef VIGIL_FILEIO_H
#define VIGIL_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"

/*
 * vg_fd_read_all - the bytes of @fd from its current offset to its end
 * (a pipe or socket until EOF), at most @max.
 * Return: 0, -EFBIG past @max, -ENOMEM, or read()'s negative errno.
 */
int vg_fd_read_all(int fd, size_t max, uint8_t **ret, size_t *ret_len);

/*
 * vg_fd_read_file - as vg_fd_read_all, from offset 0 of the regular file
 * open on @fd (pread: the fd's offset is left alone), sized by fstat() so
 * one allocation suffices; a file that grows while read is read to its end
 * or to @max.
 * Return: 0, -EINVAL not a regular file, -EFBIG past @max, -ENOMEM, or the
 * negative errno of fstat()/pread().
 */
int vg_fd_read_file(int fd, size_t max, uint8_t **ret, size_t *ret_len);

/*
 * vg_file_read - the whole regular file at @path (opened O_RDONLY |
 * O_CLOEXEC | O_NOCTTY | O_NONBLOCK, so a fifo cannot block us), at most
 * @max bytes. "-" is not stdin here: that is the program's business.
 * Return: 0, or as vg_fd_read_file() and open(); the diag names the
 * problem ("not a regular file", "larger than N bytes", strerror) but not
 * @path, which the caller names.
 */
int vg_file_read(const char *path, size_t max, uint8_t **ret, size_t *ret_len,
		 struct vg_diag *diag);

#endif
