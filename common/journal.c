// SPDX-License-Identifier: MIT
/*
 * journal.c - the journal's native datagram protocol, non-blocking
 * (journal.h). A field is NAME=VALUE and a newline; a value holding a
 * newline goes as NAME, a newline, its length as 64-bit little endian,
 * the bytes and a newline (the protocol's binary form).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "journal.h"

static int journal_fd = -1;
static atomic_uint_fast64_t journal_sent, journal_dropped;

size_t vjournal_encode(const struct vjournal_field *f, size_t n, char *buf, size_t cap)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len = f[i].len == (size_t)-1 ? strlen(f[i].value) : f[i].len;
		size_t name = strlen(f[i].name), room = cap - at;
		bool bin;

		/* the longest framing: NAME, newline, 8 length bytes, value, newline */
		if (name + 10 + len > room) {
			if (room < name + 10 + 16)
				break;		/* not even a cut value fits: the fields before it go */
			len = room - name - 10;	/* a long value is cut, its field kept whole */
		}
		bin = memchr(f[i].value, '\n', len) != NULL;
		memcpy(buf + at, f[i].name, name);
		at += name;
		if (bin) {
			buf[at++] = '\n';
			for (int k = 0; k < 8; k++)
				buf[at++] = (char)(uint8_t)((uint64_t)len >> (8 * k));
		} else {
			buf[at++] = '=';
		}
		memcpy(buf + at, f[i].value, len);
		at += len;
		buf[at++] = '\n';
	}
	return at;
}

int vjournal_open(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s;

	if (!path)
		path = VJOURNAL_SOCKET;
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(s);
		return e == ENOENT || e == ECONNREFUSED ? 0 : -e;
	}
	vjournal_close();
	journal_fd = s;
	return 1;
}

bool vjournal_enabled(void)
{
	return journal_fd >= 0;
}

int vjournal_send(const struct vjournal_field *f, size_t n)
{
	char buf[VJOURNAL_MAX];
	size_t len;

	if (journal_fd < 0)
		return -ENOTCONN;
	len = vjournal_encode(f, n, buf, sizeof(buf));
	if (send(journal_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		int e = errno;

		atomic_fetch_add(&journal_dropped, 1);
		return e == EWOULDBLOCK ? -EAGAIN : -e;
	}
	atomic_fetch_add(&journal_sent, 1);
	return 0;
}

uint64_t vjournal_sent(void)
{
	return atomic_load(&journal_sent);
}

uint64_t vjournal_dropped(void)
{
	return atomic_load(&journal_dropped);
}

void vjournal_close(void)
{
	if (journal_fd >= 0)
		close(journal_fd);
	journal_fd = -1;
}
