// SPDX-License-Identifier: MIT
/*
 * handoff.c - the holder across `systemctl restart vigild` (hold.h says
 * how): which job the service manager runs on its unit, the bridge that
 * keeps the group while the unit restarts and hands it on, and the new
 * holder's taking it over. The holder's loop is holder.c's.
 *
 * systemd is asked on its private socket, as systemctl does when no D-Bus
 * daemon runs (a minimal host has none): GetUnitByPID for this process,
 * the unit's Job, the job's JobType. A `systemctl restart`, try-restart
 * or reload-or-restart is a job of type "restart" for as long as the unit
 * stops; `systemctl stop`, the shutdown's conflict and a removal are
 * "stop". The messages to and from the bridge are hold.h's, sent with
 * vd_hold_send/vd_hold_recv (holder.c); this file only opens the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "hold.h"
#include "holder_internal.h"
#include "monitor.h"

#define SYSTEMD_PRIVATE "unix:path=/run/systemd/private"
#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define HANDOFF_BUS_TIMEOUT_US (2 * 1000 * 1000)

int vd_handoff_restarting(char *why, size_t n)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL, *job = NULL;
	const char *unit = NULL, *job_path = NULL;
	char *unit_copy = NULL, *type = NULL;
	sd_bus *bus = NULL;
	uint32_t id = 0;
	int r;

	snprintf(why, n, "no job");
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, SYSTEMD_PRIVATE);
	if (r >= 0)
		r = sd_bus_set_method_call_timeout(bus, HANDOFF_BUS_TIMEOUT_US);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		snprintf(why, n, "systemd's %s: %s", SYSTEMD_PRIVATE + 10, strerror(-r));
		goto out;
	}
	r = sd_bus_call_method(bus, SYSTEMD_DEST, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
			       "GetUnitByPID", &err, &reply, "u", (uint32_t)getpid());
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &unit);
	if (r >= 0 && !(unit_copy = strdup(unit)))
		r = -ENOMEM;
	if (r >= 0)
		r = sd_bus_get_property(bus, SYSTEMD_DEST, unit_copy, "org.freedesktop.systemd1.Unit", "Job", &err,
					&job, "(uo)");
	if (r >= 0)
		r = sd_bus_message_read(job, "(uo)", &id, &job_path);
	if (r >= 0 && id == 0) {
		r = 0;
		goto out;
	}
	if (r >= 0)
		r = sd_bus_get_property_string(bus, SYSTEMD_DEST, job_path, "org.freedesktop.systemd1.Job",
					       "JobType", &err, &type);
	if (r < 0) {
		snprintf(why, n, "systemd: %s", err.message ? err.message : strerror(-r));
		goto out;
	}
	snprintf(why, n, "job %u: %s", id, type);
	r = strstr(type, "restart") != NULL;
out:
	free(type);
	free(unit_copy);
	sd_bus_message_unref(job);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	sd_bus_flush_close_unref(bus);
	return r;
}

static int address(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	memcpy(a->sun_path, path, strlen(path));
	return 0;
}

int vd_handoff_listen(const char *path)
{
	struct sockaddr_un a;
	mode_t old;
	int fd, r = address(path, &a);

	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	(void)unlink(path);
	old = umask(0077);
	r = bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ? -errno : 0;
	umask(old);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int vd_handoff_connect(const char *path)
{
	struct sockaddr_un a;
	int fd, r = address(path, &a);

	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int vd_handoff_peer(int sock)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	return uc.uid == 0 ? (int)uc.pid : -EPERM;
}

/* the state of a holder, to its successor (hold.h: across a service restart) */
static int hand_over(struct holder *h, int sock)
{
	struct hold_msg m = { .type = HOLD_GROUP,
			      .flags = (h->fd_error ? HOLD_FD_ERROR : 0) | (h->stats >= 0 ? HOLD_HAS_STATS : 0),
			      .restarts = h->restarts, .denied = h->denied, .parked = h->parked,
			      .allowed = h->allowed };
	int fd, r = vd_hold_send(sock, &m, h->group);

	if (r == 0 && h->stats >= 0)
		r = vd_hold_send(sock, &(struct hold_msg){ .type = HOLD_STATS }, h->stats);

	for (size_t i = 0; r == 0 && i < h->npk; i++) {
		struct hold_msg pm = { .type = HOLD_PARKED, .no = h->pk[i].fd, .pid = h->pk[i].pid,
				       .mask = h->pk[i].mask };

		r = vd_hold_send(sock, &pm, h->pk[i].fd);
	}
	if (r == 0)
		r = vd_hold_send(sock, &(struct hold_msg){ .type = HOLD_END }, -1);
	if (r == 0) {
		struct pollfd p = { .fd = sock, .events = POLLIN };

		r = poll(&p, 1, 5000) == 1 ? vd_hold_recv(sock, &m, &fd) : -ETIMEDOUT;
		if (r == 0 && fd >= 0)
			close(fd);
		if (r == 0 && m.type != HOLD_DONE)
			r = -EPROTO;
	}
	return r;
}

/*
 * The service restarts (hold.h): the monitor is gone, its appraisers too;
 * we fork the bridge and end as the service manager expects. The bridge
 * reads the group until the new holder takes it, then ends.
 */
void vd_holder_bridge(struct holder *h)
{
	double until = vd_now() + HANDOFF_WAIT;
	int lfd = vd_handoff_listen(h->handoff);
	pid_t pid;

	if (lfd < 0) {
		vlog_err("--handoff %s: %s: the restart ends enforcement until the new vigild marks",
		       h->handoff, strerror(-lfd));
		exit(0);
	}
	lfd = vd_holder_own_fd(h, lfd);
	pid = lfd < 0 ? -1 : fork();
	if (pid != 0) {
		if (pid < 0)
			vlog_err("--handoff: fork: %s: the restart ends enforcement until the new vigild marks",
			       strerror(errno));
		else
			vlog(VLOG_INFO, "the service restarts: the group waits in pid %d for the new vigild "
				  "(%s); accesses but the restart's own wait", (int)pid, h->handoff);
		exit(0);
	}
	h->self = getpid();
	vd_holder_drop_fd(h, h->chan);
	vd_holder_drop_fd(h, h->chan_child);
	vd_holder_drop_fd(h, h->note);
	vd_holder_drop_fd(h, h->note_child);
	h->chan = h->chan_child = h->note = h->note_child = -1;
	while (vd_now() < until) {
		struct pollfd p[2] = { { .fd = lfd, .events = POLLIN }, { .fd = h->group, .events = POLLIN } };
		int c, peer, r;
		char cg[512];

		if (poll(p, 2, 250) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN)
			vd_holder_read_group(h);
		if (!(p[0].revents & POLLIN) || (c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		peer = vd_handoff_peer(c);
		if (peer > 0)
			vd_holder_cgroup_of(peer, cg, sizeof(cg));
		if (peer <= 0 || !h->cgroup[0] || strcmp(cg, h->cgroup) != 0) {
			close(c);	/* not the unit's new instance */
			continue;
		}
		r = hand_over(h, c);
		close(c);
		if (r == 0) {
			vlog(VLOG_INFO, "the group is with the new vigild (pid %d): %zu accesses waited for it",
				  peer, h->npk);
			(void)unlink(h->handoff);
			_exit(0);
		}
		vlog_err("--handoff: to pid %d: %s: the group stays here", peer, strerror(-r));
	}
	(void)unlink(h->handoff);
	vlog(VLOG_WARNING, "no new vigild took the group within %.0f s: vigild no longer enforces "
		  "(the kernel allows what waits)", HANDOFF_WAIT);
	_exit(1);
}

/* at our start: the group from the bridge of the instance before, if one waits (hold.h) */
int vd_holder_take_over(struct holder *h)
{
	int sock = vd_handoff_connect(h->handoff), fd, r;
	struct hold_msg m;

	if (sock == -ENOENT || sock == -ECONNREFUSED)
		return 0;
	if (sock < 0)
		return sock;
	sock = vd_holder_own_fd(h, sock);
	r = sock < 0 ? -EMFILE : vd_hold_recv(sock, &m, &fd);
	if (r == 0 && (m.type != HOLD_GROUP || fd < 0))
		r = -EPROTO;
	if (r == 0) {
		h->group = vd_holder_own_fd(h, fd);
		h->fd_error = m.flags & HOLD_FD_ERROR;
		h->restarts = m.restarts;
		h->denied = m.denied;
		h->parked = m.parked;
		h->allowed = m.allowed;
		r = h->group < 0 ? -EMFILE : 0;
	}
	if (r == 0 && (m.flags & HOLD_HAS_STATS)) {
		/* the counters of the instance before: ours from here on */
		r = vd_hold_recv(sock, &m, &fd);
		if (r == 0 && (m.type != HOLD_STATS || fd < 0))
			r = -EPROTO;
		if (r == 0 && (fd = vd_holder_own_fd(h, fd)) >= 0) {
			if (h->stats >= 0)
				vd_holder_drop_fd(h, h->stats);
			h->stats = fd;
		}
		fd = -1;
	}
	while (r == 0 && (r = vd_hold_recv(sock, &m, &fd)) == 0 && m.type == HOLD_PARKED) {
		/* kept at the number the kernel knows it by: no event we read can be numbered so */
		if (fd < 0 || m.no < h->base || (fd != m.no && dup2(fd, m.no) < 0)) {
			r = fd < 0 || m.no < h->base ? -EPROTO : -errno;
			break;
		}
		if (fd != m.no)
			close(fd);
		(void)fcntl(m.no, F_SETFD, FD_CLOEXEC);
		if (h->npk == h->cap) {
			size_t cap = h->cap ? h->cap * 2 : 256;
			struct parked *n = realloc(h->pk, cap * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				break;
			}
			h->pk = n;
			h->cap = cap;
		}
		h->pk[h->npk++] = (struct parked){ m.no, m.pid, m.mask };
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	if (r == 0 && m.type != HOLD_END)
		r = -EPROTO;
	if (r == 0)
		r = vd_hold_send(sock, &(struct hold_msg){ .type = HOLD_DONE }, -1);
	if (sock >= 0)
		vd_holder_drop_fd(h, sock);
	if (r < 0) {
		/* the bridge keeps the group and what waits: none of it is ours to read */
		for (size_t i = 0; i < h->npk; i++)
			close(h->pk[i].fd);
		h->npk = 0;
		if (h->group >= 0)
			vd_holder_drop_fd(h, h->group);
		h->group = -1;
		return r;
	}
	vlog(VLOG_INFO, "took the group over from the vigild before the restart: %zu accesses waited "
		  "for this one", h->npk);
	return 1;
}
