/* SPDX-License-Identifier: MIT */
/*
 * hold.h - vigild --hold: the holder and its monitor (issue 41).
 *
 * Without a holder, vigild's monitor owns the fanotify group; when it
 * dies the kernel releases the group and allows every access that waited
 * on it, and every access after it until a new vigild has marked again: a
 * window anyone who can make vigild die can use. With --hold (vigild.hold
 * = yes, the shipped vigil.conf), the process the service manager starts
 * is a holder (holder.c): it starts the monitor (the vigild of main.c, as
 * its child), keeps a copy of the monitor's permission group, and does
 * nothing else while the monitor lives. When the monitor dies the group
 * stays, and with it every mark: the holder
 *   1. waits for the monitor's appraisers to end (they die with it), so
 *      that no late answer of theirs can reach an event the holder reads;
 *   2. denies every event the dead monitor had read and not answered: the
 *      kernel keeps them pending, known only by the descriptor number the
 *      monitor had (fanotify matches an answer by that number alone), so
 *      the holder answers FAN_DENY for each number the monitor could have
 *      held (its RLIMIT_NOFILE, which the holder sets);
 *   3. reads the group itself: what vigild's own restart needs (its own
 *      processes, PID 1, journald, the software TPM's and its own unit's
 *      processes) is allowed; every other access waits, parked, its
 *      descriptor kept;
 *   4. starts a new monitor, which takes the group over (HELLO/GROUP),
 *      flushes the dead monitor's ignore marks, marks as usual, then asks
 *      for the parked events (TAKE): each is judged like any event and
 *      answered by the holder's number; once all are (DONE) the holder
 *      closes its copies.
 * The two never read the same group at once. Their descriptor numbers
 * cannot meet either: the monitor's are below HOLD_BASE (its limit), the
 * holder's events' above it (the holder fills its table below first), so
 * an answer by number always reaches the event it was meant for.
 *
 * The monitor's sd_notify messages go to the holder (VIGIL_NOTIFY_FD, a
 * datagram socket), which passes them on to the service manager; the
 * monitor's WATCHDOG=1 tells the holder its loop turns, and the holder
 * kills a monitor whose loop stopped (then as above) instead of letting
 * the service manager kill the holder and with it the group.
 *
 * Across `systemctl restart vigild` (--handoff SOCKET, the unit's): the
 * holder asks systemd which job stops it (handoff.c). A stop (`systemctl
 * stop`, shutdown, removal) ends enforcement, said so. A restart: the
 * monitor drains and ends as for SIGUSR1, and the holder forks a bridge,
 * then ends as the service manager expects (KillMode=process leaves the
 * bridge running). The bridge reads the group as in step 3 (the new
 * instance's processes are in the unit's cgroup: allowed) and listens on
 * SOCKET; the new holder connects first thing, and the bridge hands it the
 * group, its counters and every parked event with the number the kernel
 * knows it by (HOLD_GROUP, HOLD_PARKED..., HOLD_END; DONE back), then
 * ends. The new holder keeps each event at that very number in its own
 * table (its own descriptors are below HOLD_BASE, its events above), so
 * no event it reads later can be numbered like one in flight. A bridge no
 * successor reaches within HANDOFF_WAIT seconds ends, and enforcement
 * with it, said so.
 */
#ifndef VIGILD_HOLD_H
#define VIGILD_HOLD_H

#include <stdint.h>

/* the environment of a monitor started by a holder */
#define HOLD_ENV_FD "VIGILD_HOLDER_FD"	/* SOCK_SEQPACKET to the holder */

enum hold_msg_type {
	HOLD_HELLO = 1,	/* monitor -> holder: is there a group? */
	HOLD_GROUP,	/* holder -> monitor: the group (a descriptor) or none; monitor -> holder: keep it */
	HOLD_TAKE,	/* monitor -> holder: stop reading, send what waits */
	HOLD_PARKED,	/* holder -> monitor: one waiting event (a descriptor; no: the number to answer) */
	HOLD_END,	/* holder -> monitor: nothing more waits */
	HOLD_DONE,	/* monitor -> holder: every parked event is answered */
	HOLD_RELEASE,	/* monitor -> holder: it reads the group no more (its exit): the holder reads */
	HOLD_STATS,	/* holder -> monitor, bridge -> holder: the counters' memory (a memfd) */
};

#define HOLD_FD_ERROR 0x1u	/* the group reports FAN_REPORT_FD_ERROR */
#define HOLD_WANT_STATS 0x2u	/* HOLD_HELLO: the monitor keeps its counters in the holder's memory */
#define HOLD_HAS_STATS 0x4u	/* HOLD_GROUP: a HOLD_STATS follows (a holder that knows it) */

/*
 * The counters outlive a monitor (and, through the bridge, a restart of
 * the service): the holder owns a memfd of HOLD_STATS_BYTES, each monitor
 * maps it, starts from what it holds when the layout is its own, and
 * copies its counters there as its loop turns (held.c).
 */
#define HOLD_STATS_BYTES 65536

struct hold_msg {
	uint32_t type;		/* enum hold_msg_type */
	uint32_t flags;		/* HOLD_GROUP: HOLD_FD_ERROR */
	int32_t no;		/* HOLD_PARKED: the holder's descriptor number for the event */
	int32_t pid;		/* HOLD_PARKED: the opener */
	uint64_t mask;		/* HOLD_PARKED: the event's mask (VD_EV_*) */
	uint64_t restarts;	/* HOLD_GROUP: monitors started after a death, so far */
	uint64_t denied;	/* HOLD_GROUP: events in flight at deaths, denied */
	uint64_t parked;	/* HOLD_GROUP: events that waited for this monitor */
	uint64_t allowed;	/* HOLD_GROUP: accesses of the restart's own, allowed meanwhile */
};

/* one message, with a descriptor or none (-1). Return: 0 or -errno */
int vd_hold_send(int sock, const struct hold_msg *m, int fd);
/* one message; *fd: the descriptor it carried, else -1. Return: 0, -EPIPE (closed), -EPROTO, -errno */
int vd_hold_recv(int sock, struct hold_msg *m, int *fd);
/* the holder's process (holder.c): never returns but through exit; @handoff: --handoff or NULL */
int vd_holder_main(int argc, char **argv, const char *handoff);

/* ---- handoff.c: the holder across a service restart ---- */

#define HANDOFF_WAIT 30.0	/* s: a bridge waits this long for the new vigild */

/*
 * Whether the service manager is restarting this process's unit: asks
 * systemd (its private socket, /run/systemd/private: no D-Bus daemon
 * needed) for the job on the unit this process is in.
 * @why: the job's type or the reason there is none, for the log
 * Return: 1 a restart, 0 another job (stop) or none, -errno (no systemd)
 */
int vd_handoff_restarting(char *why, size_t n);
/* a listening socket at @path (the old one replaced), root's only. Return: the descriptor or -errno */
int vd_handoff_listen(const char *path);
/* the successor at @path, connected, or -errno (-ENOENT / -ECONNREFUSED: no bridge waits) */
int vd_handoff_connect(const char *path);
/* the process at the other end of @sock: its pid if it is root, else -EPERM or -errno */
int vd_handoff_peer(int sock);

#endif
