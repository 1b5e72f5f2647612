/* SPDX-License-Identifier: MIT */
/*
 * announce_vigild.h - an announcement of the next boot sent to vigild,
 * whose list it is (announce_vigild.c).
 */
#ifndef VIGIL_CLI_ANNOUNCE_VIGILD_H
#define VIGIL_CLI_ANNOUNCE_VIGILD_H

#include "vigild_ctl.h"

/*
 * announce_vigild - @a (its log the list's canonical path) to the vigild
 * listening on @sock. Return: 1 committed in vigild's list; 0 the list is
 * not vigild's (no vigild on @sock, one that is not to be reached by this
 * user, another list, a vigild without announcements): the caller writes
 * it; -1 refused or failed (said on stderr).
 */
int announce_vigild(const char *sock, const struct vd_ctl_announce *a);

#endif
