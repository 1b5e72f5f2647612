/* SPDX-License-Identifier: MIT */
/*
 * notify.h - readiness for the service manager: the documented sd_notify
 * datagram protocol (a datagram of "KEY=VALUE\n..." to the AF_UNIX
 * socket named by $NOTIFY_SOCKET, a path or "@abstract"), without
 * libsystemd. vigild, vigil-agent and vigil-verifier send READY=1 (and
 * STATUS=) only when they can serve, RELOADING=1 / READY=1 around a
 * reload, STOPPING=1 when they stop. Nothing is sent when $NOTIFY_SOCKET
 * is unset (not started by systemd): that is not an error.
 *
 * The socket is created and connected once, by notify_open(), before a
 * daemon confines itself (the verifier's seccomp filter refuses new
 * AF_UNIX sockets); afterwards notify_send() only calls send(). This is
 * the program layer: the one descriptor is process state, not a library's.
 */
#ifndef VIGIL_NOTIFY_H
#define VIGIL_NOTIFY_H

/*
 * notify_open - connect to $NOTIFY_SOCKET (close-on-exec) and remove the
 * variable from the environment, so that children (vigild's appraisers)
 * never speak for the daemon.
 * Return: 1 connected; 0 no $NOTIFY_SOCKET; -errno (a malformed value or
 * a socket that cannot be reached: the caller reports it and goes on,
 * as systemd would time the start out).
 */
int notify_open(void);

/*
 * notify_watchdog_s - the service manager's watchdog period for this
 * process ($WATCHDOG_USEC, when $WATCHDOG_PID is unset or ours), in
 * seconds; 0 when there is none or the value is malformed.
 */
double notify_watchdog_s(void);

/*
 * notify_send - one datagram: @fmt's text, e.g. "READY=1\nSTATUS=ready".
 * Return: 0 (also when there is no socket), or -errno.
 */
int notify_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Return: the connected descriptor, or -1 (a child that must keep it open, or close it). */
int notify_fd(void);

/* Close the socket (idempotent). */
void notify_close(void);

#endif
