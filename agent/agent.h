/* SPDX-License-Identifier: MIT */
/*
 * agent.h - what vigil-agent's files share: the network process's state
 * (struct agent) and the entry points of the TPM process, the HTTP server
 * and the routes.
 *
 *   vigil-agent.c   options, the fork, the network process's start
 *   agent_privsep.c the two processes' table, the network process's sandbox
 *   agent_tpm.c     the TPM process: keys, quotes, credential activation
 *   agent_proto.c   the messages between the two (agent_proto.h: a table)
 *   agent_http.c    the HTTP server: credentials, the request, the routing
 *   agent_routes.c  the five endpoints, and their answers as bodies
 *   agent_push.c    push mode: the agent sends those bodies to the verifier
 *   agent_tamper.c  the attacker simulation, only in the test build
 *                   vigil-agent-tamper (-DVIGIL_AGENT_TAMPER, agent_tamper.h)
 */
#ifndef VIGIL_AGENT_H
#define VIGIL_AGENT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "vigil/attest_api.h"
#include "vigil/auth.h"
#include "vigil/tpm_attest.h"

#include "ipc.h"
#include "proc.h"
#include "sandbox.h"

struct http_guard;

#define AGENT_BODY_MAX (64 * 1024)
#define AGENT_TOKENS "/etc/vigil/agent-tokens"

/* Push mode (--push URL, agent_push.c): the verifier and our credentials for it. */
struct agent_push {
	const char *url;		/* NULL: pull mode (serve HTTP) */
	const char *ca;			/* --push-ca: the verifier's certificate chains to it */
	const char *cert, *key;		/* --push-cert/--push-key: our client certificate */
	char token[VG_AUTH_TOKEN_LEN + 1];	/* --push-token-file: role agent there */
	bool registered;
	void *curl;			/* agent_push.c's one libcurl handle: its connection kept */
};

/* The network process's state: no TPM, no secret but the TLS key MHD holds. */
struct agent {
	struct ipc_chan ipc;		/* its end of the socketpair to the TPM process */
	const char *id;
	const char *log;
	const char *boot_log;
	uint8_t ek_pub[VG_ATPM_PUB_MAX], ek_cert[VG_ATPM_CERT_MAX], ak_pub[VG_ATPM_PUB_MAX];
	size_t ek_pub_len, ek_cert_len, ak_pub_len;
	bool need_client_cert;		/* --tls-client-ca: a client certificate is a credential */
	bool no_auth;			/* --insecure-no-auth */
	struct vg_auth *auth;		/* tokens of role verifier (hashes) */
	pthread_rwlock_t auth_lock;	/* ... replaced on SIGHUP */
	const char *auth_path;
	struct agent_push push;
#ifdef VIGIL_AGENT_TAMPER
	const char *tamper_file;	/* --tamper-file */
	char *first_quote;		/* tamper replay-quote: the first answer, replayed */
#endif
};

/* The processes, in agent_procs (agent_privsep.c). */
enum agent_proc { AGENT_PROC_TPM, AGENT_PROC_NET, AGENT_PROC__COUNT };

extern const struct proc agent_procs[AGENT_PROC__COUNT];
extern const struct sandbox_role agent_net_role;

/*
 * agent_net_sandbox - confine the network process (agent_privsep.c): as
 * @user when given, Landlock (reads; TCP: bind @listen_port in pull
 * mode, connect to the push URL's port in push mode), agent_net_role.
 * Call it with one thread. Return: 0, 1 (no Landlock on this kernel:
 * the rest applied), -errno with @msg.
 */
int agent_net_sandbox(const struct agent *a, const char *user, uint16_t listen_port, char *msg,
		      size_t cap);

/*
 * agent_tpm_main - the TPM process: opens the TPM, makes the EK of type
 * @ek_type (enum vg_atpm_ek_type), loads or creates the AK under it
 * (@state/ak.blob for the RSA EK, @state/ak-TYPE.blob for the others:
 * an AK is its EK's child), sends the identity on @fd, then answers requests
 * until the network process @net hangs up, a request is malformed, or
 * SIGTERM/SIGINT (SIGHUP is passed on to @net). Stops @net before it
 * returns. Return: the process's exit code (0, or 2).
 */
int agent_tpm_main(int fd, pid_t net, const char *tcti, const char *state, bool rsa,
		   unsigned int ek_type);

/*
 * agent_http_start - serve @a on @sa (HTTPS when @cert_pem is given; with
 * @ca_pem a client certificate chaining to it is a credential), one
 * thread, requests bounded by @guard, a connection kept open @idle_s
 * between requests. Return: the daemon, or NULL.
 */
struct MHD_Daemon *agent_http_start(struct agent *a, const void *sa, const char *cert_pem,
				    const char *key_pem, const char *ca_pem, unsigned int idle_s,
				    struct http_guard *guard);

/*
 * agent_push_main - push mode in the network process: register, then push
 * evidence every interval until SIGTERM/SIGINT (in @set, blocked).
 * Return: the exit code.
 */
int agent_push_main(struct agent *a, const sigset_t *set);

/* On SIGHUP: the token list again; one that does not load keeps the old. */
void agent_auth_reload(struct agent *a);

/*
 * The answers (agent_routes.c), made once for both modes: served by the
 * routes below (pull), or sent by agent_push.c. The *_body functions
 * return 0 / MHD_HTTP_OK or an error (@err says); *@ret is malloc'd.
 */
int agent_identity_body(struct agent *a, char **ret);
unsigned int agent_activate_body(struct agent *a, const char *body, size_t len, char **ret,
				 char *err, size_t errlen);
/* @qr may be changed by the tamper build (wrong-nonce). */
unsigned int agent_quote_body(struct agent *a, struct vg_api_quote_req *qr, char **ret,
			      char *err, size_t errlen);
/* The list from byte @off; *@size: the file's size. Return: 0, -EIO. */
int agent_log_body(struct agent *a, uint64_t off, uint8_t **ret, size_t *len, long long *size);
/* Return: 0 (*@ret NULL when empty), -ENOENT (no boot log), -EFBIG, -errno. */
int agent_bootlog_body(struct agent *a, uint8_t **ret, size_t *len);

/* The routes (agent_routes.c), each queueing its answer. */
enum MHD_Result agent_identity(struct agent *a, struct MHD_Connection *c);
enum MHD_Result agent_activate(struct agent *a, struct MHD_Connection *c, const char *body,
			       size_t len);
enum MHD_Result agent_quote(struct agent *a, struct MHD_Connection *c);
enum MHD_Result agent_log(struct agent *a, struct MHD_Connection *c);
enum MHD_Result agent_bootlog(struct agent *a, struct MHD_Connection *c);

#endif
