// SPDX-License-Identifier: MIT
/*
 * privsep_hook.c - the hook process: --on-fail CMD runs outside the
 * network process's sandbox (an operator's command may log through
 * /dev/log, write a file beside the database, or call setuid helpers,
 * none of which the sandbox allows). Forked before the sandbox and after
 * the store process, it holds no credential: only CMD. It reads one
 * message type, HOOK_RUN (store_ipc.h: four capped, NUL-free fields),
 * runs `sh -c CMD` with them in VIGIL_AGENT, VIGIL_FAILURE,
 * VIGIL_MESSAGE and VIGIL_PATH, waits for it and answers HOOK_DONE with
 * its wait status, so that vg_privsep_hook_run waits as the fork and
 * waitpid in the network process did.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "privsep.h"
#include "store_ipc.h"

static struct ipc_chan hook = { .fd = -1 };
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

static _Noreturn void hook_main(int fd, const char *cmd)
{
	static char f[4][SIPC_HOOK_FIELD_MAX + 1];
	struct ipc_chan ch;

	/* set up by proc_start (vf_procs[VF_PROC_HOOK]): nothing of the parent's but stdio and fd */
	sipc_chan(&ch, fd, "hook process");
	for (;;) {
		struct ipc_in in;
		struct ipc_out o = { 0 };
		int st = -1;
		pid_t pid;

		if (ipc_recv(&ch, &in) < 0)
			_exit(0);
		if (in.type != SIPC_HOOK_RUN)
			ipc_die("hook process", "not a HOOK_RUN");
		for (int i = 0; i < 4; i++)
			ipc_get_name(&in, f[i], sizeof(f[i]));
		ipc_end(&in);
		ipc_in_free(&in);
		pid = fork();
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
			signal(SIGPIPE, SIG_DFL);
			close(fd);
			setenv("VIGIL_AGENT", f[0], 1);
			setenv("VIGIL_FAILURE", f[1], 1);
			setenv("VIGIL_MESSAGE", f[2], 1);
			setenv("VIGIL_PATH", f[3], 1);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
		ipc_put_u32(&o, (uint32_t)st);
		if (ipc_send(&ch, SIPC_HOOK_DONE, &o, -1) < 0)
			_exit(0);
	}
}

int vg_privsep_hook_start(const char *cmd, struct vg_diag *diag)
{
	int fd;
	pid_t pid = proc_start(&vf_procs[VF_PROC_HOOK], &fd);

	if (pid == 0)
		hook_main(fd, cmd);
	if (pid < 0)
		return vg_diag_set(diag, (int)pid, "hook process: %s", strerror(-(int)pid));
	sipc_chan(&hook, fd, "the hook process's answer");	/* the process ends when we do: the socket closes */
	return 0;
}

static void put_field(struct ipc_out *o, const char *s)
{
	s = s ? s : "";
	ipc_put_bytes(o, s, strnlen(s, SIPC_HOOK_FIELD_MAX));
}

int vg_privsep_hook_run(const char *agent, const char *failure, const char *msg, const char *path)
{
	struct ipc_out o = { 0 };
	struct ipc_in in;
	int r;

	if (hook.fd < 0)
		return -ENOSYS;
	put_field(&o, agent);
	put_field(&o, failure);
	put_field(&o, msg);
	put_field(&o, path);
	pthread_mutex_lock(&hook_lock);
	r = ipc_send(&hook, SIPC_HOOK_RUN, &o, -1);
	if (!r)
		r = ipc_recv(&hook, &in);
	if (!r) {
		if (in.type != SIPC_HOOK_DONE)
			ipc_die("the hook process's answer", "not a HOOK_DONE");
		r = (int)ipc_get_u32(&in);
		ipc_end(&in);
		ipc_in_free(&in);
	}
	pthread_mutex_unlock(&hook_lock);
	return r;
}
