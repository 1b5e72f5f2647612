// SPDX-License-Identifier: MIT
/*
 * token_reload.c - SIGHUP: the API's token list read again (a token
 * revoked without a restart), from the scheduler's loop, told to the
 * service manager (RELOADING=1, then READY=1).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "http_auth.h"
#include "notify.h"
#include "verifier.h"

/*
 * SIGHUP: read the token list again (revocation without a restart). A
 * list that does not load (missing, mode, syntax) keeps the old one.
 */
static void auth_load_again(struct verifier *vf)
{
	struct vg_auth *n = NULL, *old;
	char err[512];

	if (vf->no_auth || !vf->auth_path)
		return;
	if (http_auth_load(vf->auth_path, VG_AUTH_ADMIN | VG_AUTH_READ | VG_AUTH_AGENT, &n, err,
			   sizeof(err)) < 0) {
		vlog_warn("SIGHUP: %s; the tokens listed before stay valid",
			err);
		return;
	}
	pthread_rwlock_wrlock(&vf->auth_lock);
	old = vf->auth;
	vf->auth = n;
	pthread_rwlock_unlock(&vf->auth_lock);
	vg_auth_free(old);
	vlog_info("SIGHUP: %zu token(s) from %s", vg_auth_count(n),
		vf->auth_path);
}

/*
 * The reload, told to the service manager as systemd's protocol has it:
 * RELOADING=1 with the monotonic time, then READY=1 when done (put after
 * STATUS: a datagram that begins with READY=1 would also release a
 * --background parent, which the main thread alone does, at start).
 */
void vf_reload_tokens(struct verifier *vf)
{
	struct timespec ts;

	vf->reload = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	(void)notify_send("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the token list",
			  (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000u);
	auth_load_again(vf);
	(void)notify_send("STATUS=token list reloaded\nREADY=1");
}
