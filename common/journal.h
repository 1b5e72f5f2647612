/* SPDX-License-Identifier: MIT */
/*
 * journal.h - entries for the systemd journal in its native protocol
 * (systemd-journald.service(8): fields in one datagram on
 * /run/systemd/journal/socket), sent without ever waiting.
 *
 * sd_journal_send(3) sends on a blocking socket: when journald does not
 * read (it may itself wait to open a journal file on a filesystem vigild
 * watches, for vigild's answer) the sender waits with it. Here every
 * datagram is sent with MSG_DONTWAIT: a full socket drops the entry, which
 * is counted, and the caller goes on. A datagram is whole or not at all,
 * so no half entry ever reaches the journal. Safe from several threads.
 */
#ifndef VIGIL_COMMON_JOURNAL_H
#define VIGIL_COMMON_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VJOURNAL_SOCKET "/run/systemd/journal/socket"
#define VJOURNAL_MAX 32768	/* one entry's bytes at most: longer values are cut */

struct vjournal_field {
	const char *name;	/* upper case, digits and '_'; not starting with '_' */
	const char *value;	/* any bytes; newlines are sent in the binary form */
	size_t len;		/* (size_t)-1: strlen(value) */
};

/*
 * vjournal_open - connect to the journal's socket @path (NULL: the
 * standard one) and use it for vjournal_send from then on.
 * Return: 1 connected; 0 no journal there (nothing is sent, nothing
 * counted); -errno another failure.
 */
int vjournal_open(const char *path);

/* Return: whether entries go to a journal. */
bool vjournal_enabled(void);

/*
 * vjournal_send - one entry of @n fields, never waiting.
 * Return: 0 sent; -EAGAIN dropped (counted); -ENOTCONN no journal; another -errno.
 */
int vjournal_send(const struct vjournal_field *f, size_t n);

/* Entries sent and dropped since vjournal_open. */
uint64_t vjournal_sent(void);
uint64_t vjournal_dropped(void);

/* vjournal_encode - the datagram's bytes for @f (pure, for tests). Return: its length. */
size_t vjournal_encode(const struct vjournal_field *f, size_t n, char *buf, size_t cap);

void vjournal_close(void);

#endif
