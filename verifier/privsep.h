/* SPDX-License-Identifier: MIT */
/*
 * privsep.h - vigil-verifier's processes, in the OpenBSD manner: a
 * process that parses holds nothing; a process that holds secrets parses
 * nothing.
 *
 *   network process (the original pid): libmicrohttpd (the REST API), the
 *     rounds and every outbound call (agents, webhooks); parses everything
 *     a peer sends. After startup it holds no database credential and
 *     cannot reach the database: vg_privsep_sandbox (Landlock, seccomp).
 *   store process (store_proc.c, "vigil-store"): forked first; holds the
 *     --db URL, the SQLite file, the libpq connection and its password;
 *     parses only the fixed, size-checked messages of store_ipc.h.
 *   hook process (privsep_hook.c, "vigil-hook"): forked before the
 *     sandbox when --on-fail is given, holds nothing; runs the operator's
 *     command (sh -c) outside the sandbox with the failure's four fields.
 *   A result-signing key, when there is one, gets a process of its own
 *   like the store's; the API's TLS key is still in the network process.
 */
#ifndef VIGIL_VERIFIER_PRIVSEP_H
#define VIGIL_VERIFIER_PRIVSEP_H

#include <stddef.h>

#include "store.h"

/*
 * vg_privsep_store_open - fork the store process, which opens @url
 * (vg_store_open) and answers store_ipc.h requests; *@ret is a store whose
 * every operation is forwarded to it (serialised by a mutex: callable from
 * any thread). Then @url's passwords are overwritten in place (it is
 * argv's copy) and PGPASSWORD is wiped from our environment. Call it
 * before any thread starts. Return: 0, the store's open error (its diag),
 * -errno (socketpair, fork).
 */
int vg_privsep_store_open(char *url, struct vg_store **ret, struct vg_diag *diag);

/*
 * vg_privsep_hook_start - fork the hook process that runs @cmd (sh -c)
 * for vg_privsep_hook_run. Call it before vg_privsep_sandbox and before
 * any thread starts. Return: 0, -errno.
 */
int vg_privsep_hook_start(const char *cmd, struct vg_diag *diag);

/*
 * vg_privsep_hook_run - run the hook with VIGIL_AGENT, VIGIL_FAILURE,
 * VIGIL_MESSAGE, VIGIL_PATH set, and wait for it (as a fork and waitpid
 * did before). Thread-safe. Return: its wait status, -ENOSYS (no hook
 * process), -errno.
 */
int vg_privsep_hook_run(const char *agent, const char *failure, const char *msg, const char *path);

/*
 * vg_privsep_sandbox - confine the calling process, which must have a
 * single thread (threads started later inherit the confinement): no new
 * privileges; Landlock with every filesystem right the kernel knows
 * handled and only reads (and /dev) allowed, beneath system directories
 * that do not contain the database, plus the @n files @read (CA bundles,
 * client certificates, the token list read again on SIGHUP); and a
 * seccomp filter that refuses socket(AF_UNIX, ...) and io_uring.
 * @db is the --db URL (its directory, for SQLite, is left out).
 * Return: 0, 1 when the kernel has no Landlock (seccomp alone applied),
 * -EBUSY (more than one thread), -errno.
 */
int vg_privsep_sandbox(const char *db, const char *const *read, size_t n, struct vg_diag *diag);

#endif
