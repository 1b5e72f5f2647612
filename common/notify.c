// SPDX-License-Identifier: MIT
/*
 * notify.c - the sd_notify datagram protocol (notify.h): one connected
 * AF_UNIX datagram socket, opened before the daemon confines itself.
 * The address rules are systemd's: an absolute path, or '@' for the
 * abstract namespace; anything else is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "background.h"
#include "notify.h"

static int notify_sock = -1;

int notify_open(void)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n;
	int s;

	const char *inh = getenv("VIGIL_NOTIFY_FD");

	if (notify_sock >= 0)
		return 1;
	if (inh && *inh) {
		/*
		 * vigild's holder (daemon/holder.c) gave its monitor a socket of
		 * its own: what the monitor says goes to the holder, which passes
		 * it on and watches the loop's WATCHDOG=1
		 */
		char *end;
		long fd = strtol(inh, &end, 10);
		int type = 0;
		socklen_t tl = sizeof(type);

		unsetenv("VIGIL_NOTIFY_FD");
		if (*end || fd < 3 || fd > INT_MAX ||
		    getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_DGRAM)
			return -EBADF;
		(void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		notify_sock = (int)fd;
		unsetenv("NOTIFY_SOCKET");
		return 1;
	}
	if (!ns || !*ns)
		return 0;
	n = strlen(ns);
	if ((ns[0] != '/' && ns[0] != '@') || n >= sizeof(a.sun_path) || n < 2)
		return -EINVAL;
	memcpy(a.sun_path, ns, n);
	if (a.sun_path[0] == '@')
		a.sun_path[0] = 0;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0) {
		int e = errno;

		close(s);
		return -e;
	}
	notify_sock = s;
	unsetenv("NOTIFY_SOCKET");
	return 1;
}

double notify_watchdog_s(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (!us || (pid && strtol(pid, NULL, 10) != (long)getpid()))
		return 0;
	errno = 0;
	v = strtoull(us, &end, 10);
	if (errno || *end || v == 0)
		return 0;
	return (double)v / 1e6;
}

int notify_send(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	/* ready for the service manager is ready for a --background parent */
	if (strncmp(buf, "READY=1", 7) == 0)
		vg_background_ready();
	if (notify_sock < 0)
		return 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	/* never waits: the service manager may itself wait on a filesystem vigild watches */
	if (send(notify_sock, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}

int notify_fd(void)
{
	return notify_sock;
}

void notify_close(void)
{
	if (notify_sock >= 0)
		close(notify_sock);
	notify_sock = -1;
}
