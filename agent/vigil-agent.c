// SPDX-License-Identifier: MIT
/*
 * vigil-agent - the attested host's end of remote attestation: owns the
 * TPM (EK, AK), proves the AK with TPM2_ActivateCredential when the
 * verifier registers it, and serves quotes and the measurement list.
 *
 *   GET  /v1/identity                     {id, ek_pub, ek_cert, ak_pub} (base64)
 *   POST /v1/activate {id_object, enc_secret}   {proof: hex HMAC-SHA256(secret, id)}
 *   GET  /v1/quote?nonce=HEX&bank=ALGO&mask=HEX {attest, sig, bank, pcrs: {"10": hex}}
 *   GET  /v1/log?offset=N                  the binary list from byte N
 *   GET  /v1/bootlog                       the TCG boot event log (404 when none)
 *
 * Two processes. The parent holds the TPM and nothing else: it answers
 * fixed-size messages on a SOCK_SEQPACKET socketpair (quote: nonce <= 64
 * bytes, bank, mask < 2^24; activate: two blobs <= 512 bytes), checks the
 * exact size and every field, and exits on any violation; the
 * credential secret never leaves it (it returns only the HMAC proof). The
 * child, forked before the TPM is opened, parses HTTP (libmicrohttpd, one
 * internal thread, so the TPM has one client), reads the log file, and
 * runs with PR_SET_NO_NEW_PRIVS (and --user's uid/gid). HTTP on the
 * address given, or HTTPS with --tls-cert/--tls-key; with --tls-client-ca
 * every request must come with a client certificate that chains to it
 * (mutual TLS: the verifier's certificate), checked before any handler.
 * Every route needs a credential (docs/api-auth.md): that certificate, or
 * a bearer token listed with role "verifier" in --auth-tokens (default
 * /etc/vigil/agent-tokens, hashes only, made by `vigil-verifier
 * --create-token verifier`); without either the agent does not start,
 * unless --insecure-no-auth (tests). The path is decoded strictly
 * (vg_api_path_decode) before it is routed.
 *
 * --tamper-file FILE is for tests only: the first word of FILE, read per
 * request, makes the agent misbehave the way an attacker would (forged
 * AK, bad EK certificate, replayed quote, wrong nonce, altered or
 * truncated log), so the verifier's refusals can be tested end to end.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <json-c/json.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <tss2/tss2_mu.h>

#include "vigil/attest.h"
#include "vigil/attest_api.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"
#include "vigil/tpm_attest.h"
#include "vigil/auth.h"
#include "tcti.h"
#include "http_auth.h"
#include "http_guard.h"
#include "http_util.h"

#define BODY_MAX (64 * 1024)
#define AGENT_TOKENS "/etc/vigil/agent-tokens"

/* The only messages between the network process and the TPM process. */
enum { IPC_QUOTE = 1, IPC_ACTIVATE = 2 };

struct ipc_req {
	uint32_t type;
	uint32_t nonce_len;
	uint8_t nonce[VG_ATTEST_NONCE_MAX];
	uint32_t bank;
	uint32_t mask;
	uint32_t id_len;
	uint8_t id_object[512];
	uint32_t es_len;
	uint8_t enc_secret[512];
	char agent_id[128];
};

struct ipc_resp {
	int32_t err;			/* 0 or a negative errno */
	char msg[256];
	uint32_t attest_len;
	uint8_t attest[VG_ATPM_ATTEST_MAX];
	uint32_t sig_len;
	uint8_t sig[VG_ATPM_SIG_MAX];
	uint32_t have;			/* PCRs of @bank in @pcr */
	uint8_t pcr[VG_PCR_COUNT][VG_HASH_MAX_DIGEST];
	uint8_t proof[32];		/* activate: HMAC-SHA256(secret, agent_id) */
};

struct ipc_ident {
	uint32_t ek_pub_len, ek_cert_len, ak_pub_len;
	uint8_t ek_pub[VG_ATPM_PUB_MAX], ek_cert[VG_ATPM_CERT_MAX], ak_pub[VG_ATPM_PUB_MAX];
};

static struct {
	int ipc;			/* the network process's end of the socketpair */
	const char *id;
	const char *log;
	const char *boot_log;
	const char *tamper_file;
	uint8_t ek_pub[VG_ATPM_PUB_MAX], ek_cert[VG_ATPM_CERT_MAX], ak_pub[VG_ATPM_PUB_MAX];
	size_t ek_pub_len, ek_cert_len, ak_pub_len;
	char *first_quote;		/* tamper replay-quote: the first answer, replayed */
	bool need_client_cert;
	struct vg_auth *auth;		/* tokens of role verifier (hashes) */
	pthread_rwlock_t auth_lock;	/* ... replaced on SIGHUP */
	const char *auth_path;
	bool no_auth;			/* --insecure-no-auth */
} g = { .auth_lock = PTHREAD_RWLOCK_INITIALIZER };

static const char help[] =
	"usage: vigil-agent --listen ADDR:PORT --state DIR [--log FILE] [--id ID]\n"
	"                   [--tcti TCTI] [--ak ecc|rsa]\n"
	"Serve TPM quotes and the measurement list to vigil-verifier.\n"
	"  -L, --listen ADDR:PORT  address to listen on (e.g. 127.0.0.1:9002)\n"
	"  -s, --state DIR         keeps the AK blob (DIR/ak.blob) across restarts\n"
	"  -l, --log FILE          measurement list (default /run/vigil/binary_runtime_measurements)\n"
	"  -i, --id ID             agent id (default: the host name)\n"
	"  -t, --tcti TCTI         TPM (default $VIGIL_TCTI, else device:/dev/tpmrm0)\n"
	"  -a, --ak ecc|rsa        type of a new AK (default ecc: P-256, fast quotes)\n"
	"  -u, --user NAME         run the network process as NAME (the TPM process keeps\n"
	"                          its identity)\n"
	"      --boot-log FILE     TCG boot event log to serve (default: the kernel's, if any)\n"
	"      --tls-cert FILE     serve HTTPS with this PEM certificate (chain)\n"
	"      --tls-key FILE      and its PEM private key\n"
	"      --tls-client-ca FILE  a client certificate chaining to this PEM CA is a\n"
	"                          credential (mutual TLS)\n"
	"      --auth-tokens FILE  bearer tokens allowed to ask (ROLE ID SHA256 lines, role\n"
	"                          verifier; default /etc/vigil/agent-tokens; mode 600)\n"
	"      --insecure-no-auth  serve quotes, the lists and the boot log to anyone (tests)\n"
	"Without a credential scheme (--auth-tokens file or --tls-client-ca) the agent\n"
	"refuses to start.\n";

static void tamper(char *mode, size_t cap)
{
	FILE *f;

	mode[0] = 0;
	if (!g.tamper_file || !(f = fopen(g.tamper_file, "re")))
		return;
	if (fscanf(f, "%31s", mode) != 1)
		mode[0] = 0;
	fclose(f);
	mode[cap - 1] = 0;
}

/* Network side: one request, one answer. Return: 0, or -EIO (the TPM process is gone). */
static int ipc_call(const struct ipc_req *rq, struct ipc_resp *rs)
{
	ssize_t n;

	if (send(g.ipc, rq, sizeof(*rq), 0) != (ssize_t)sizeof(*rq))
		return -EIO;
	n = recv(g.ipc, rs, sizeof(*rs), 0);
	if (n != (ssize_t)sizeof(*rs)) {
		snprintf(rs->msg, sizeof(rs->msg), "TPM process did not answer");
		return -EIO;
	}
	rs->msg[sizeof(rs->msg) - 1] = 0;
	if (rs->attest_len > sizeof(rs->attest) || rs->sig_len > sizeof(rs->sig))
		return -EIO;
	return 0;
}

static volatile sig_atomic_t tpm_stop;
static volatile pid_t net_pid;		/* in the TPM process: the network process, where SIGHUP goes */

static void on_term(int sig)
{
	if (sig == SIGHUP) {
		if (net_pid > 0)
			kill(net_pid, SIGHUP);	/* the token list is the network process's */
		return;
	}
	tpm_stop = 1;
}

/* The network process, on SIGHUP: the token list again; one that does not load keeps the old. */
static void auth_reload(void)
{
	struct vg_auth *n = NULL, *old;
	char err[512];

	if (g.no_auth || !g.auth_path)
		return;
	if (http_auth_load(g.auth_path, VG_AUTH_VERIFIER, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "vigil-agent: SIGHUP: %s; the tokens listed before stay valid\n", err);
		return;
	}
	pthread_rwlock_wrlock(&g.auth_lock);
	old = g.auth;
	g.auth = n;
	pthread_rwlock_unlock(&g.auth_lock);
	vg_auth_free(old);
	fprintf(stderr, "vigil-agent: SIGHUP: %zu token(s) from %s\n", vg_auth_count(n), g.auth_path);
}

/*
 * The TPM process: answers the two fixed requests until the network
 * process hangs up or a request is malformed (then it exits: the
 * network side is not trusted to be sane).
 */
static int tpm_serve(struct vg_atpm *tpm, int fd)
{
	struct ipc_req *rq = malloc(sizeof(*rq));
	struct ipc_resp *rs = malloc(sizeof(*rs));
	int rc = 0;

	if (!rq || !rs) {
		free(rq);
		free(rs);
		return 2;
	}
	while (!tpm_stop) {
		ssize_t n = recv(fd, rq, sizeof(*rq), 0);
		struct vg_diag d = { 0 };
		int r;

		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = 2;
			break;
		}
		if (n != (ssize_t)sizeof(*rq) ||
		    (rq->type != IPC_QUOTE && rq->type != IPC_ACTIVATE) ||
		    rq->nonce_len > sizeof(rq->nonce) || rq->id_len > sizeof(rq->id_object) ||
		    rq->es_len > sizeof(rq->enc_secret) || rq->bank >= VG_HASH__LAST ||
		    rq->mask >= (1u << VG_PCR_COUNT) ||
		    memchr(rq->agent_id, 0, sizeof(rq->agent_id)) == NULL) {
			fprintf(stderr, "vigil-agent: malformed request from the network process\n");
			rc = 2;
			break;
		}
		memset(rs, 0, sizeof(*rs));
		if (rq->type == IPC_QUOTE) {
			struct vg_pcr_values *pv = calloc(1, sizeof(*pv));
			size_t al = sizeof(rs->attest), sl = sizeof(rs->sig);

			r = pv ? vg_atpm_quote(tpm, rq->nonce, rq->nonce_len, rq->bank, rq->mask,
					       rs->attest, &al, rs->sig, &sl, pv, &d) : -ENOMEM;
			if (r == 0) {
				rs->attest_len = (uint32_t)al;
				rs->sig_len = (uint32_t)sl;
				rs->have = pv->have[rq->bank];
				for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
					memcpy(rs->pcr[i], pv->v[rq->bank][i].bytes, pv->v[rq->bank][i].len);
			}
			free(pv);
		} else {
			uint8_t secret[64];
			unsigned int ml = 0;

			r = vg_atpm_activate(tpm, rq->id_object, rq->id_len, rq->enc_secret, rq->es_len,
					     secret, sizeof(secret), &d);
			if (r > 0) {
				HMAC(EVP_sha256(), secret, r, (const uint8_t *)rq->agent_id,
				     strlen(rq->agent_id), rs->proof, &ml);
				r = 0;
			}
			OPENSSL_cleanse(secret, sizeof(secret));
		}
		rs->err = r;
		snprintf(rs->msg, sizeof(rs->msg), "%s", r < 0 ? d.msg : "");
		if (send(fd, rs, sizeof(*rs), 0) != (ssize_t)sizeof(*rs)) {
			rc = 2;
			break;
		}
	}
	free(rq);
	free(rs);
	return rc;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), (void *)s,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	json_object_put(o);
	return ret;
}

/* A JSON text we built. */
static enum MHD_Result reply_raw(struct MHD_Connection *c, unsigned int code, const char *s)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), (void *)s,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned int code, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(msg));
	return reply(c, code, o);
}

static void add_b64(json_object *o, const char *key, const uint8_t *b, size_t n)
{
	char *s;

	if (vg_attest_b64_encode(b, n, &s) < 0)
		return;
	json_object_object_add(o, key, json_object_new_string(s));
	free(s);
}

/* tamper forge-ak: a software P-256 key dressed as a TPM AK (the TPM does not hold it) */
static size_t forged_ak(uint8_t *out, size_t cap)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	uint8_t pt[65];
	size_t ptl = 0, off = 0;
	TPM2B_PUBLIC pub = { 0 };

	if (!k)
		return 0;
	if (!EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &ptl) ||
	    ptl != 65) {
		EVP_PKEY_free(k);
		return 0;
	}
	EVP_PKEY_free(k);
	pub.publicArea.type = TPM2_ALG_ECC;
	pub.publicArea.nameAlg = TPM2_ALG_SHA256;
	pub.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					  TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
					  TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	pub.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
	pub.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
	pub.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
	pub.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
	pub.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	pub.publicArea.unique.ecc.x.size = 32;
	memcpy(pub.publicArea.unique.ecc.x.buffer, pt + 1, 32);
	pub.publicArea.unique.ecc.y.size = 32;
	memcpy(pub.publicArea.unique.ecc.y.buffer, pt + 33, 32);
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, out, cap, &off) != TSS2_RC_SUCCESS)
		return 0;
	return off;
}

static enum MHD_Result h_identity(struct MHD_Connection *c)
{
	json_object *o = json_object_new_object();
	uint8_t cert[VG_ATPM_CERT_MAX], ak[VG_ATPM_PUB_MAX];
	size_t akl = g.ak_pub_len;
	char mode[32];

	tamper(mode, sizeof(mode));
	memcpy(cert, g.ek_cert, g.ek_cert_len);
	memcpy(ak, g.ak_pub, g.ak_pub_len);
	if (strcmp(mode, "wrong-ek-cert") == 0 && g.ek_cert_len)
		cert[g.ek_cert_len - 1] ^= 1;	/* the issuer's signature no longer verifies */
	if (strcmp(mode, "forge-ak") == 0)
		akl = forged_ak(ak, sizeof(ak));
	json_object_object_add(o, "id", json_object_new_string(g.id));
	add_b64(o, "ek_pub", g.ek_pub, g.ek_pub_len);
	add_b64(o, "ek_cert", cert, g.ek_cert_len);
	add_b64(o, "ak_pub", ak, akl);
	return reply(c, MHD_HTTP_OK, o);
}

static enum MHD_Result h_activate(struct MHD_Connection *c, const char *body, size_t len)
{
	struct ipc_req *rq = calloc(1, sizeof(*rq));
	struct ipc_resp *rs = calloc(1, sizeof(*rs));
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char *ans = NULL;
	int n;

	if (!rq || !rs || !act) {
		ret = MHD_NO;
		goto out;
	}
	if (vg_api_activate_parse((const uint8_t *)body, len, act, &d) < 0) {
		ret = error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		goto out;
	}
	rq->type = IPC_ACTIVATE;
	rq->id_len = (uint32_t)act->id_len;
	memcpy(rq->id_object, act->id_object, act->id_len);
	rq->es_len = (uint32_t)act->es_len;
	memcpy(rq->enc_secret, act->enc_secret, act->es_len);
	snprintf(rq->agent_id, sizeof(rq->agent_id), "%s", g.id);
	n = ipc_call(rq, rs);
	if (n == 0)
		n = rs->err;
	if (n < 0) {
		ret = error(c, MHD_HTTP_FORBIDDEN, rs->msg[0] ? rs->msg : "TPM");
		goto out;
	}
	if (vg_api_proof_build(rs->proof, &ans) < 0) {
		ret = MHD_NO;
		goto out;
	}
	ret = reply_raw(c, MHD_HTTP_OK, ans);
out:
	free(ans);
	free(rq);
	free(rs);
	free(act);
	return ret;
}

static enum MHD_Result h_quote(struct MHD_Connection *c)
{
	const char *nh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
	const char *bs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "bank");
	const char *ms = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mask");
	struct ipc_req *rq = calloc(1, sizeof(*rq));
	struct ipc_resp *rs = calloc(1, sizeof(*rs));
	struct vg_api_quote *q = calloc(1, sizeof(*q));
	struct vg_api_quote_req qr;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char mode[32], *ans = NULL;
	int r;

	if (!rq || !rs || !q) {
		ret = MHD_NO;
		goto out;
	}
	if (vg_api_quote_query_parse(nh, bs, ms, &qr, &d) < 0) {
		ret = error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		goto out;
	}
	tamper(mode, sizeof(mode));
	if (strcmp(mode, "replay-quote") == 0 && g.first_quote) {
		ret = reply_raw(c, MHD_HTTP_OK, g.first_quote);
		goto out;
	}
	if (strcmp(mode, "wrong-nonce") == 0)
		qr.nonce[0] ^= 1;
	rq->type = IPC_QUOTE;
	rq->nonce_len = (uint32_t)qr.nonce_len;
	memcpy(rq->nonce, qr.nonce, qr.nonce_len);
	rq->bank = qr.bank;
	rq->mask = qr.mask;
	r = ipc_call(rq, rs);
	if (r == 0)
		r = rs->err;
	if (r < 0) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, rs->msg[0] ? rs->msg : "TPM process");
		goto out;
	}
	if (rs->attest_len > sizeof(q->attest) || rs->sig_len > sizeof(q->sig)) {
		ret = error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "TPM process: quote too large");
		goto out;
	}
	q->bank = qr.bank;
	q->attest_len = rs->attest_len;
	memcpy(q->attest, rs->attest, rs->attest_len);
	q->sig_len = rs->sig_len;
	memcpy(q->sig, rs->sig, rs->sig_len);
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		if (!(rs->have & (1u << i)))
			continue;
		q->pcr[i].algo = (uint8_t)qr.bank;
		q->pcr[i].len = (uint8_t)vg_hash_size(qr.bank);
		memcpy(q->pcr[i].bytes, rs->pcr[i], q->pcr[i].len);
		q->have |= 1u << i;
	}
	if (vg_api_quote_build(q, &ans) < 0) {
		ret = MHD_NO;
		goto out;
	}
	if (!g.first_quote)
		g.first_quote = strdup(ans);
	ret = reply_raw(c, MHD_HTTP_OK, ans);
out:
	free(ans);
	free(rq);
	free(rs);
	free(q);
	return ret;
}

static enum MHD_Result h_log(struct MHD_Connection *c)
{
	const char *os = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint64_t off;
	uint8_t *buf = NULL;
	size_t len = 0;
	char mode[32], size[32];
	struct vg_diag d = { 0 };
	struct stat st;
	int fd;

	if (vg_api_log_query_parse(os, &off, &d) < 0)
		return error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	fd = open(g.log, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size > off) {
		len = (size_t)st.st_size - (size_t)off;
		buf = malloc(len ? len : 1);
		if (!buf || pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
			free(buf);
			close(fd);
			return error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "log: read failed");
		}
	}
	snprintf(size, sizeof(size), "%lld", fd >= 0 ? (long long)st.st_size : 0LL);
	if (fd >= 0)
		close(fd);
	tamper(mode, sizeof(mode));
	if (len && (strcmp(mode, "alter-log") == 0 || strcmp(mode, "truncate-log") == 0)) {
		struct vg_imalog_parser p;
		struct vg_imalog_entry e, last = { 0 };
		bool any = false;

		vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
		while (vg_imalog_parser_next(&p, &e, NULL) == 1) {
			last = e;
			any = true;
		}
		if (any && strcmp(mode, "alter-log") == 0)
			((uint8_t *)last.f[0].data)[last.f[0].len - 1] ^= 1;	/* the file digest */
		else if (any)
			len = last.offset;
	}
	r = MHD_create_response_from_buffer(len, buf ? buf : (void *)"", buf ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	MHD_add_response_header(r, "X-Vigil-Log-Size", size);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result h_bootlog(struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = g.boot_log ? fopen(g.boot_log, "re") : NULL;

	if (!f)
		return error(c, MHD_HTTP_NOT_FOUND, "no boot event log on this host");
	/* securityfs files have no size: read to EOF, bounded */
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *nb = cap >= (16u << 20) ? NULL : realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "boot log too large");
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	r = MHD_create_response_from_buffer(len, buf ? buf : (void *)"", buf ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

struct upload {
	char *buf;
	size_t len;
	bool started;
	bool answered;			/* refused before the body */
	int path_err;
	char path[VG_API_PATH_MAX];	/* strictly decoded, or the reason it is not */
};

/* MHD_OPTION_URI_LOG_CALLBACK: the URI as sent, before MHD's decoding; becomes *con_cls. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct upload *u = calloc(1, sizeof(*u));

	(void)cls;
	(void)c;
	if (u)
		u->path_err = http_path_decode(uri, u->path, sizeof(u->path));
	return u;
}

/* Return: true when the request carries a credential of ours (else @ret is the refusal). */
static bool authorized(struct MHD_Connection *c, enum MHD_Result *ret)
{
	char id[VG_AUTH_ID_LEN + 1];
	int role;

	if (g.no_auth || (g.need_client_cert && http_client_cert_ok(c)))
		return true;
	pthread_rwlock_rdlock(&g.auth_lock);
	role = http_auth_role(c, g.auth, id);
	pthread_rwlock_unlock(&g.auth_lock);
	if (role == VG_AUTH_VERIFIER)
		return true;
	if (role != -ENOKEY)
		fprintf(stderr, "vigil-agent: refused %s%s\n", role == -EBADMSG ? "a malformed token" :
			"token ", role == -EBADMSG ? "" : id);
	*ret = http_auth_refuse(c, MHD_HTTP_UNAUTHORIZED, "vigil-agent", role == -ENOKEY ?
				"a credential is required: the verifier's bearer token or client "
				"certificate" : "the bearer token is not valid here");
	return false;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)url;			/* MHD's decoding stops at a %00: u->path is ours */
	if (!u)
		return MHD_NO;
	if (!u->started) {
		u->started = true;
		/* refused before a byte of the body is read */
		if (!authorized(c, &ret)) {
			u->answered = true;
			return ret;
		}
		if (u->path_err < 0) {
			u->answered = true;
			return error(c, MHD_HTTP_BAD_REQUEST, u->path);
		}
		if (http_guard_body_too_big(c, BODY_MAX)) {
			u->answered = true;
			return error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
		}
		return MHD_YES;
	}
	if (*data_len) {
		if (u->answered || *data_len > BODY_MAX - u->len)
			return MHD_NO;		/* chunked past the limit: the connection is closed */
		/* at most BODY_MAX: one allocation of the whole limit is cheaper than growing */
		if (!u->buf && !(u->buf = malloc(BODY_MAX + 1)))
			return MHD_NO;
		memcpy(u->buf + u->len, data, *data_len);
		u->len += *data_len;
		u->buf[u->len] = 0;
		*data_len = 0;
		return MHD_YES;
	}
	http_guard_busy(c);
	if (u->answered)
		return MHD_YES;			/* refusal already queued */
	url = u->path;
	if (strcmp(method, "GET") == 0 && strcmp(url, "/v1/identity") == 0)
		return h_identity(c);
	if (strcmp(method, "GET") == 0 && strcmp(url, "/v1/quote") == 0)
		return h_quote(c);
	if (strcmp(method, "GET") == 0 && strcmp(url, "/v1/log") == 0)
		return h_log(c);
	if (strcmp(method, "GET") == 0 && strcmp(url, "/v1/bootlog") == 0)
		return h_bootlog(c);
	if (strcmp(method, "POST") == 0 && strcmp(url, "/v1/activate") == 0)
		return h_activate(c, u->buf ? u->buf : "", u->len);
	return error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
		 enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls;
	(void)toe;
	if (u) {
		free(u->buf);
		free(u);
	}
	*con_cls = NULL;
	http_guard_rearm(c);
}

/* The TPM process's start: keys, then the identity to the network side. Return: 0 or -1. */
static int tpm_setup(struct vg_atpm **ret, const char *tcti, const char *state, bool rsa, int fd)
{
	struct ipc_ident *id = calloc(1, sizeof(*id));
	struct vg_atpm *tpm = NULL;
	struct vg_diag dg = { 0 };
	uint8_t blob[VG_ATPM_BLOB_MAX];
	size_t bl = sizeof(blob), a, b, c;
	char path[4200];
	int afd;

	if (!id)
		return -1;
	if (vg_atpm_open(vg_prog_tcti(tcti), &tpm, &dg) < 0) {
		fprintf(stderr, "vigil-agent: %s\n", dg.msg);
		goto fail;
	}
	a = sizeof(id->ek_pub);
	b = sizeof(id->ek_cert);
	if (vg_atpm_ek(tpm, id->ek_pub, &a, id->ek_cert, &b, &dg) < 0) {
		fprintf(stderr, "vigil-agent: EK: %s\n", dg.msg);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/ak.blob", state);
	afd = open(path, O_RDONLY | O_CLOEXEC);
	if (afd >= 0) {
		ssize_t n = read(afd, blob, sizeof(blob));

		close(afd);
		if (n <= 0 || vg_atpm_ak_load(tpm, blob, (size_t)n, &dg) < 0) {
			fprintf(stderr, "vigil-agent: %s: %s\n", path, n <= 0 ? "unreadable" : dg.msg);
			goto fail;
		}
	} else {
		if (vg_atpm_ak_create(tpm, rsa, blob, &bl, &dg) < 0) {
			fprintf(stderr, "vigil-agent: AK: %s\n", dg.msg);
			goto fail;
		}
		if (vg_outfile_put(path, blob, bl, 0600, 0, &dg) < 0) {
			fprintf(stderr, "vigil-agent: %s: %s\n", path, dg.msg);
			goto fail;
		}
	}
	OPENSSL_cleanse(blob, sizeof(blob));
	c = sizeof(id->ak_pub);
	if (vg_atpm_ak_public(tpm, id->ak_pub, &c) < 0)
		goto fail;
	id->ek_pub_len = (uint32_t)a;
	id->ek_cert_len = (uint32_t)b;
	id->ak_pub_len = (uint32_t)c;
	if (send(fd, id, sizeof(*id), 0) != (ssize_t)sizeof(*id))
		goto fail;
	free(id);
	*ret = tpm;
	return 0;
fail:
	vg_atpm_close(tpm);
	free(id);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'L' },
		{ "state", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "id", required_argument, NULL, 'i' },
		{ "tcti", required_argument, NULL, 't' },
		{ "ak", required_argument, NULL, 'a' },
		{ "user", required_argument, NULL, 'u' },
		{ "tamper-file", required_argument, NULL, 'X' },
		{ "boot-log", required_argument, NULL, 'B' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "tls-client-ca", required_argument, NULL, 'A' },
		{ "auth-tokens", required_argument, NULL, 'T' },
		{ "insecure-no-auth", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *listen = NULL, *state = NULL, *tcti = NULL, *user = NULL;
	const char *tls_cert = NULL, *tls_key = NULL, *tls_ca = NULL, *tokens = NULL;
	char *cert_pem = NULL, *key_pem = NULL, *ca_pem = NULL;
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	struct http_guard *guard = NULL;
	struct ipc_ident *id;
	struct sigaction act = { .sa_handler = on_term };
	char host[128];
	bool rsa = false;
	sigset_t set;
	int c, sig, sp[2], rc;
	pid_t pid;

	g.log = "/run/vigil/binary_runtime_measurements";
	if (access("/sys/kernel/security/tpm0/binary_bios_measurements", R_OK) == 0)
		g.boot_log = "/sys/kernel/security/tpm0/binary_bios_measurements";
	while ((c = getopt_long(argc, argv, "L:s:l:i:t:a:u:h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': listen = optarg; break;
		case 's': state = optarg; break;
		case 'l': g.log = optarg; break;
		case 'i': g.id = optarg; break;
		case 't': tcti = optarg; break;
		case 'a': rsa = strcmp(optarg, "rsa") == 0; break;
		case 'u': user = optarg; break;
		case 'X': g.tamper_file = optarg; break;
		case 'B': g.boot_log = optarg; break;
		case 'C': tls_cert = optarg; break;
		case 'K': tls_key = optarg; break;
		case 'A': tls_ca = optarg; break;
		case 'T': tokens = optarg; break;
		case 'I': g.no_auth = true; break;
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	if (!listen || !state || http_parse_listen(listen, &sa) < 0) {
		fprintf(stderr, "vigil-agent: --listen ADDR:PORT and --state DIR are required\n");
		return 2;
	}
	if (!!tls_cert != !!tls_key || (tls_ca && !tls_cert)) {
		fprintf(stderr, "vigil-agent: --tls-cert and --tls-key go together; --tls-client-ca needs them\n");
		return 2;
	}
	if (tls_cert && (!(cert_pem = http_slurp(tls_cert)) || !(key_pem = http_slurp(tls_key)) ||
			 (tls_ca && !(ca_pem = http_slurp(tls_ca))))) {
		fprintf(stderr, "vigil-agent: cannot read the TLS certificate, key or CA\n");
		return 2;
	}
	if (g.no_auth && (tokens || tls_ca)) {
		fprintf(stderr, "vigil-agent: --insecure-no-auth excludes --auth-tokens and "
			"--tls-client-ca\n");
		return 2;
	}
	if (!g.no_auth) {
		char err[512];
		int ar = http_auth_load(tokens ? tokens : AGENT_TOKENS, VG_AUTH_VERIFIER, &g.auth, err,
					sizeof(err));

		if (ar < 0 && (ar != -ENOENT || tokens || !tls_ca)) {
			fprintf(stderr, "vigil-agent: %s\n", err);
			if (ar == -ENOENT)
				fprintf(stderr, "vigil-agent: every route needs a credential: list the "
					"verifier's token (vigil-verifier --create-token verifier OUT "
					"--auth-tokens LIST, then copy LIST here) with --auth-tokens LIST, "
					"or give --tls-client-ca; for tests only, --insecure-no-auth\n");
			return 2;
		}
		g.auth_path = tokens ? tokens : AGENT_TOKENS;
		if (!tls_ca && !vg_auth_count(g.auth)) {
			fprintf(stderr, "vigil-agent: %s lists no token and there is no "
				"--tls-client-ca: nobody could ask for a quote\n",
				tokens ? tokens : AGENT_TOKENS);
			return 2;
		}
	}
	if (!g.id) {
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "agent");
		host[sizeof(host) - 1] = 0;
		g.id = host;
	}
	if (strlen(g.id) >= sizeof(((struct ipc_req *)0)->agent_id)) {
		fprintf(stderr, "vigil-agent: --id too long\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		fprintf(stderr, "vigil-agent: socketpair: %s\n", strerror(errno));
		return 2;
	}
	/* fork before the TPM is opened: the network process never has it */
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "vigil-agent: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid > 0) {
		struct vg_atpm *tpm;

		close(sp[1]);
		/* the TLS key belongs to the network process only */
		if (key_pem)
			OPENSSL_cleanse(key_pem, strlen(key_pem));
		free(cert_pem);
		free(key_pem);
		free(ca_pem);
		vg_auth_free(g.auth);
		g.auth = NULL;
		net_pid = pid;
		sigaction(SIGTERM, &act, NULL);
		sigaction(SIGINT, &act, NULL);
		sigaction(SIGHUP, &act, NULL);
		if (tpm_setup(&tpm, tcti, state, rsa, sp[0]) < 0) {
			kill(pid, SIGTERM);
			waitpid(pid, NULL, 0);
			return 2;
		}
		rc = tpm_serve(tpm, sp[0]);
		vg_atpm_close(tpm);		/* flushes EK and AK: swtpm has 3 slots */
		close(sp[0]);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return rc;
	}
	/* the network process */
	close(sp[0]);
	g.ipc = sp[1];
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	id = calloc(1, sizeof(*id));
	if (!id || recv(g.ipc, id, sizeof(*id), 0) != (ssize_t)sizeof(*id) ||
	    id->ek_pub_len > sizeof(id->ek_pub) || id->ek_cert_len > sizeof(id->ek_cert) ||
	    id->ak_pub_len > sizeof(id->ak_pub))
		_exit(2);
	memcpy(g.ek_pub, id->ek_pub, id->ek_pub_len);
	g.ek_pub_len = id->ek_pub_len;
	memcpy(g.ek_cert, id->ek_cert, id->ek_cert_len);
	g.ek_cert_len = id->ek_cert_len;
	memcpy(g.ak_pub, id->ak_pub, id->ak_pub_len);
	g.ak_pub_len = id->ak_pub_len;
	free(id);
	if (user) {
		struct passwd *pw = getpwnam(user);

		if (!pw || setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
			fprintf(stderr, "vigil-agent: cannot become %s\n", user);
			_exit(2);
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(2);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	g.need_client_cert = ca_pem != NULL;
	if (http_guard_start(10, &guard) < 0)
		_exit(2);
	{
		struct MHD_OptionItem tls[] = {
			{ MHD_OPTION_HTTPS_MEM_CERT, 0, cert_pem },
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, key_pem },
			{ ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, ca_pem },
			{ MHD_OPTION_END, 0, NULL },
		};

		if (!cert_pem)
			tls[0].option = MHD_OPTION_END;
		/*
		 * One thread (the TPM has one client). A request arrives whole
		 * within 10 s or its connection is shut (http_guard.h); 16
		 * connections per address, 64 in all, 16 KiB of headers.
		 */
		d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
				     (cert_pem ? MHD_USE_TLS : 0), 0, NULL, NULL, handler, NULL,
				     MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				     MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL,
				     MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, guard,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				     MHD_OPTION_CONNECTION_LIMIT, 64u,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, 16u,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16u << 10),
				     MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	}
	if (!d) {
		fprintf(stderr, "vigil-agent: cannot listen on %s%s\n", listen,
			cert_pem ? " (TLS setup failed?)" : "");
		_exit(2);
	}
	fprintf(stderr, "vigil-agent: %s listening on %s\n", g.id, listen);
	if (g.no_auth)
		fprintf(stderr, "vigil-agent: WARNING: --insecure-no-auth: anyone who reaches %s gets "
			"quotes, the measurement list and the boot log (tests only)\n", listen);
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
		auth_reload();
	MHD_stop_daemon(d);
	http_guard_stop(guard);
	close(g.ipc);
	free(g.first_quote);
	vg_auth_free(g.auth);
	if (key_pem)
		OPENSSL_cleanse(key_pem, strlen(key_pem));
	free(cert_pem);
	free(key_pem);
	free(ca_pem);
	return 0;
}
