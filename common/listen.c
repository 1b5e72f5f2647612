// SPDX-License-Identifier: MIT
/*
 * listen.c - --listen ADDR:PORT parsed and tried (listen.h). The bind is
 * a probe: the socket is closed at once and libmicrohttpd binds its own,
 * so a port taken in between is still reported by the daemon's start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "listen.h"

int listen_check(const char *s, struct sockaddr_in *sa, char *why, size_t cap)
{
	const char *colon = strrchr(s, ':');
	char host[64], *end;
	unsigned long port;
	int fd, one = 1, r = 0;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host) || !colon[1]) {
		snprintf(why, cap, "not ADDR:PORT (e.g. 127.0.0.1:8881)");
		return -EINVAL;
	}
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (*end || colon[1] < '0' || colon[1] > '9') {
		snprintf(why, cap, "the port '%s' is not a number", colon + 1);
		return -EINVAL;
	}
	if (errno || port == 0 || port > 65535) {
		snprintf(why, cap, "port out of range (%s; 1-65535)", colon + 1);
		return -ERANGE;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		snprintf(why, cap, "'%s' is not an IPv4 address", host);
		return -EINVAL;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(why, cap, "socket: %s", strerror(errno));
		return r;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0) {
		r = -errno;
		if (errno == EADDRINUSE)
			snprintf(why, cap, "port %lu in use (another process listens there)", port);
		else if (errno == EADDRNOTAVAIL)
			snprintf(why, cap, "%s is not an address of this host", host);
		else if (errno == EACCES)
			snprintf(why, cap, "port %lu needs privilege: %s", port, strerror(errno));
		else
			snprintf(why, cap, "%s", strerror(errno));
	}
	close(fd);
	return r;
}
