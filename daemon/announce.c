// SPDX-License-Identifier: MIT
/*
 * announce.c - the next boot's initrd and command lines announced through
 * the control socket (`vigil trust boot announce`, attest_announce.h):
 * vigild holds its measurement list while it runs, so the host's
 * announcements are vigild's to append. A new way into a root daemon:
 * only root's connections are taken (SO_PEERCRED, whatever the socket's
 * mode), the request is decoded field by field with every length bounded
 * (common/vigild_ctl.c) and names the list it is meant for; vigild builds
 * the entry itself (only the two announcement shapes exist) and hands it
 * to the list's writer (commit.c), which appends, syncs and extends it
 * as it does every measurement; the connection is answered from the loop
 * when the writer is done. Nothing here waits: the loop never does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "setup.h"

int vd_announce_setup(struct vd *d)
{
	if (!d->mlog)
		return 0;
	d->log_real = realpath(d->log_path, NULL);
	if (!d->log_real) {
		vlog_err("measurement log %s: %s", d->log_path, strerror(errno));
		return -1;
	}
	return 0;
}

json_object *vd_announce(struct vd *d, int c, const struct vd_ctl_announce *a, uid_t uid, pid_t pid)
{
	if (uid != 0 || !a) {
		vlog(VLOG_WARNING, "announcement from uid %u (pid %d) refused: only root may "
			  "announce", (unsigned int)uid, (int)pid);
		return vd_ctl_announce_result_encode("only root may announce", false, 0);
	}
	if (!d->mlog || !d->log_real || strcmp(a->log, d->log_real) != 0)
		return vd_ctl_announce_result_encode(d->mlog ? "not vigild's measurement list" :
						     "vigild keeps no measurement list", true, 0);
	if (!d->committing)
		return vd_ctl_announce_result_encode("the measurement list's writer is not running",
						     false, 0);
	if (d->nannounce_waiters == VD_ANNOUNCE_WAITERS)
		return vd_ctl_announce_result_encode("too many announcements waiting", false, 0);
	if (vd_commit_submit_announce(d, a, c) < 0)
		return vd_ctl_announce_result_encode("out of memory", false, 0);
	d->nannounce_waiters++;
	return NULL;
}
