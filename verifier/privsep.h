/* SPDX-License-Identifier: MIT */
/*
 * privsep.h - vigil-verifier's processes, in the OpenBSD manner: a
 * process that parses holds nothing; a process that holds secrets parses
 * nothing. They are one table, vf_procs (privsep.c), started by
 * common/proc.h, speaking store_ipc.h's messages (common/ipc.h).
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
 *   key process (keyproc.c, "vigil-key"): with --api-key, forked before
 *     the store process; holds the API's TLS private key and signs the
 *     handshakes of the network process (KEY_* messages), parsing nothing
 *     else; with --ear-key (with or without --api-key) it holds the EAR
 *     signing key too and signs EARs (EAR_SIGN), the key never leaving it.
 */
#ifndef VIGIL_VERIFIER_PRIVSEP_H
#define VIGIL_VERIFIER_PRIVSEP_H

#include <stddef.h>
#include <stdint.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "proc.h"
#include "sandbox.h"
#include "store.h"

/* The processes, in vf_procs (privsep.c): what each is, above. */
enum vf_proc { VF_PROC_NET, VF_PROC_KEY, VF_PROC_STORE, VF_PROC_HOOK, VF_PROC__COUNT };

extern const struct proc vf_procs[VF_PROC__COUNT];
/* the network process's system calls (privsep.c) */
extern const struct sandbox_role vf_net_role;

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
 * vg_privsep_store_requests - the requests sent to the store process
 * since it started (each a database exchange, or a few: a claim with its
 * rows), for the metrics; 0 for a store that is not the store process's.
 */
uint64_t vg_privsep_store_requests(struct vg_store *s);

/*
 * vg_privsep_forget_url - overwrite the passwords of @url in place with
 * '*' (the URL keeps its shape for the log line) and wipe PGPASSWORD from
 * the environment.
 */
void vg_privsep_forget_url(char *url);

/*
 * vg_privsep_key_start - fork the key process, which imports @key_pem (the
 * API's TLS key, may be NULL) and @ear_pem (the EAR signing key, may be
 * NULL; its JWS algorithm is known here after: vg_privsep_ear_alg) and
 * signs for us; @key_pem is wiped here (only the key process has the key
 * after), @db's passwords in the key process. Call it before
 * vg_privsep_store_open and before any thread starts. Then give
 * libmicrohttpd vg_privsep_key_cert (MHD_OPTION_HTTPS_CERT_CALLBACK).
 * Return: 0, -EBADMSG (a certificate or key that does not import: the
 * diag says which), -errno.
 */
int vg_privsep_key_start(char *key_pem, const char *cert_pem, char *ear_pem, char *db,
			 struct vg_diag *diag);

/*
 * vg_privsep_ear_sign - a vg_jws_sign_fn (attest_ear.h): the key process
 * signs @in with the --ear-key. Thread-safe.
 * Return: 0, -ENOKEY (no --ear-key), -E2BIG (@in over SIPC_EAR_IN_MAX),
 * the signer's error.
 */
int vg_privsep_ear_sign(void *arg, const uint8_t *in, size_t len, uint8_t *sig, size_t *siglen);

/* Return: the --ear-key's JWS algorithm (enum vg_jws_alg), 0 without one. */
unsigned int vg_privsep_ear_alg(void);

/* a gnutls_certificate_retrieve_function2: @cert_pem's chain and the external key */
int vg_privsep_key_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
			const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
			gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey);

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
 * single thread (threads started later inherit the confinement), with
 * common/sandbox.h: no new privileges; Landlock with every filesystem
 * right the kernel knows handled and only reads (and /dev) allowed,
 * beneath system directories that do not contain the database, plus the
 * @n files @read (at most 15: CA bundles, client certificates, the token
 * list read again on SIGHUP); and vf_net_role's seccomp allow-list
 * (socket(AF_UNIX, ...) refused, io_uring refused, anything unlisted
 * kills the process).
 * @db is the --db URL (its directory, for SQLite, is left out).
 * Return: 0, 1 when the kernel has no Landlock (seccomp alone applied),
 * -EBUSY (more than one thread), -errno.
 */
int vg_privsep_sandbox(const char *db, const char *const *read, size_t n, struct vg_diag *diag);

#endif
