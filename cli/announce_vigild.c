// SPDX-License-Identifier: MIT
/*
 * announce_vigild.c - `vigil trust boot announce` through vigild: while
 * vigild runs it holds its measurement list (one writer, flock), so an
 * announcement for that list is sent over vigild's control socket
 * (common/vigild_ctl.h) and vigild's writer thread appends and commits
 * it, extending its TPM or software bank. One entry per connection, each
 * answered once it is committed. Whether the list is vigild's is vigild's
 * to say (it compares the canonical path of the list it holds); no socket,
 * a socket the caller may not open, or a vigild that does not know the
 * request leave the list to the caller (cmd_trust_boot.c writes it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "announce_vigild.h"
#include "cli.h"

int announce_vigild(const char *sock, const struct vd_ctl_announce *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	/* a commit waits for the disk and the TPM; a daemon that never answers is an error */
	struct timeval tv = { .tv_sec = 60 };
	struct vd_ctl_req q = { .op = VD_CTL_ANNOUNCE, .ann = *a };
	char *req = malloc(VD_CTL_REQ_MAX), buf[1024];
	json_object *o = NULL, *st;
	const char *why = NULL;
	size_t len = 0;
	ssize_t n;
	int s = -1, r, rc = -1;

	if (!req) {
		cli_err("out of memory");
		return -1;
	}
	r = vd_ctl_req_encode(&q, req, VD_CTL_REQ_MAX);
	if (r < 0) {
		cli_err("%s: not an announcement vigild takes", a->data);
		goto out;
	}
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		rc = 0;
		goto out;
	}
	strcpy(sa.sun_path, sock);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = 0;		/* no vigild here (or not ours to ask): the list is the caller's */
		goto out;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(s, req, (size_t)r) != r) {
		cli_err("%s: %s", sock, strerror(errno));
		goto out;
	}
	while (len < sizeof(buf) - 1 && (n = read(s, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	if (!len) {
		cli_err("%s: vigild closed the connection without an answer: the announcement may "
			"not be in its list", sock);
		goto out;
	}
	r = vd_ctl_answer_decode(buf, &o, &why);
	if (r == -EBADMSG) {
		cli_err("%s: vigild sent no valid answer", sock);
		goto out;
	}
	st = json_object_object_get(o, "announce");
	if (r < 0) {
		/* another list than vigild's, or a vigild that knows no announcement */
		if (!st || strcmp(json_object_get_string(st), "not-this-list") == 0)
			rc = 0;
		else
			cli_err("vigild refused the announcement: %s", why);
		goto out;
	}
	if (!st || strcmp(json_object_get_string(st), "committed") != 0) {
		cli_err("%s: vigild sent no valid answer", sock);
		goto out;
	}
	rc = 1;
out:
	json_object_put(o);
	if (s >= 0)
		close(s);
	free(req);
	return rc;
}
