/* SPDX-License-Identifier: MIT */
/*
 * listen.h - a daemon's --listen ADDR:PORT checked before it says it is
 * ready, with the reason in words: not ADDR:PORT, not an IPv4 address,
 * a port out of range, a port in use (another process listens there),
 * an address this host does not have. vigil-agent and vigil-verifier
 * check it at start, before any process is forked, so that a setting
 * that cannot work is refused (exit 2) instead of failing later.
 */
#ifndef VIGIL_LISTEN_H
#define VIGIL_LISTEN_H

#include <stddef.h>
#include <netinet/in.h>

/*
 * listen_check - parse @s ("ADDR:PORT", IPv4, port 1-65535) into @sa and
 * try the address: a socket bound there with SO_REUSEADDR (as
 * libmicrohttpd binds it) and closed again.
 * Return: 0; -EINVAL malformed, -ERANGE port out of range, -EADDRINUSE
 * port in use, or bind()'s -errno; @why holds the sentence (without @s).
 */
int listen_check(const char *s, struct sockaddr_in *sa, char *why, size_t cap);

#endif
