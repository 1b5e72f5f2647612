// SPDX-License-Identifier: MIT
/*
 * agent_routes.c - vigil-agent's five endpoints, in the network process
 * (the request is already authorised, its path decoded, its body whole):
 *
 *   GET  /v1/identity                     {id, ek_pub, ek_cert, ak_pub} (base64)
 *   POST /v1/activate {id_object, enc_secret}   {proof: hex HMAC-SHA256(secret, id)}
 *   GET  /v1/quote?nonce=HEX&bank=ALGO&mask=HEX {attest, sig, bank, pcrs: {"10": hex}}
 *   GET  /v1/log?offset=N                  the binary list from byte N
 *   GET  /v1/bootlog                       the TCG boot event log (404 when none)
 *
 * The JSON is parsed and built by vigil/attest_api.h; quotes and
 * activation are asked of the TPM process (agent_proto.h), which checks
 * every field again. Each answer is made by an agent_*_body function,
 * which push mode (agent_push.c) sends as it is: the same bytes, the same
 * tamper hooks, whoever opens the connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "log.h"
#include "vigil/attest.h"
#include "vigil/attest_api.h"
#include "vigil/fileio.h"

#include "agent.h"
#include "agent_proto.h"
#include "agent_tamper.h"
#include "http_reply.h"

#define BOOT_LOG_MAX (16u << 20)

/*
 * One request to the TPM process, its answer of type @answer in @rs.
 * Return: 0, or -EIO (the TPM process is gone: @rs's message says so). A
 * malformed answer ends this process: the TPM side is broken.
 */
static int ask_tpm(struct agent *a, uint32_t type, const void *rq, size_t len,
		   union agent_msg *rs, uint32_t answer)
{
	uint32_t got;
	int r;

	if (ipc_send_fixed(&a->ipc, type, rq, len, -1) < 0)
		return -EIO;
	do
		r = ipc_recv_fixed(&a->ipc, 1u << answer, &got, rs, sizeof(*rs), NULL);
	while (r == -EINTR);
	if (r == -EPROTO) {
		vlog_err("malformed answer from the TPM process (%s)", a->ipc.why);
		_exit(2);
	}
	if (r <= 0)
		return -EIO;
	return 0;
}

int agent_identity_body(struct agent *a, char **ret)
{
	struct vg_api_identity *id = calloc(1, sizeof(*id));
	long n;

	if (!id)
		return -ENOMEM;
	snprintf(id->id, sizeof(id->id), "%s", a->id);
	memcpy(id->ek_pub, a->ek_pub, a->ek_pub_len);
	id->ek_pub_len = a->ek_pub_len;
	memcpy(id->ek_cert, a->ek_cert, a->ek_cert_len);
	id->ek_cert_len = a->ek_cert_len;
	memcpy(id->ak_pub, a->ak_pub, a->ak_pub_len);
	id->ak_pub_len = a->ak_pub_len;
	agent_tamper_identity(a, id->ek_cert, id->ek_cert_len, id->ak_pub, &id->ak_pub_len);
	n = vg_api_identity_build(id, ret);
	free(id);
	return n < 0 ? -ENOMEM : 0;
}

enum MHD_Result agent_identity(struct agent *a, struct MHD_Connection *c)
{
	char *text = NULL;
	enum MHD_Result ret;

	if (agent_identity_body(a, &text) < 0)
		return MHD_NO;
	ret = http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	return ret;
}

unsigned int agent_activate_body(struct agent *a, const char *body, size_t len, char **ret,
				 char *err, size_t errlen)
{
	union agent_msg *rq = calloc(1, sizeof(*rq)), *rs = calloc(1, sizeof(*rs));
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct agent_msg_activate *q = rq ? &rq->activate : NULL;
	struct agent_msg_activate_answer *ans = rs ? &rs->activate_answer : NULL;
	struct vg_diag d = { 0 };
	unsigned int code = MHD_HTTP_OK;

	if (!rq || !rs || !act) {
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (vg_api_activate_parse((const uint8_t *)body, len, act, &d) < 0) {
		code = MHD_HTTP_BAD_REQUEST;
		snprintf(err, errlen, "%s", d.msg);
		goto out;
	}
	if (act->id_len > sizeof(q->id_object) || act->es_len > sizeof(q->enc_secret)) {
		code = MHD_HTTP_BAD_REQUEST;
		snprintf(err, errlen, "credential blob too large");
		goto out;
	}
	q->id_len = (uint32_t)act->id_len;
	memcpy(q->id_object, act->id_object, act->id_len);
	q->es_len = (uint32_t)act->es_len;
	memcpy(q->enc_secret, act->enc_secret, act->es_len);
	snprintf(q->agent_id, sizeof(q->agent_id), "%s", a->id);
	if (ask_tpm(a, AGENT_MSG_ACTIVATE, q, sizeof(*q), rs, AGENT_MSG_ACTIVATE_ANSWER) < 0) {
		code = MHD_HTTP_FORBIDDEN;
		snprintf(err, errlen, "TPM process did not answer");
		goto out;
	}
	if (ans->err < 0) {
		code = MHD_HTTP_FORBIDDEN;
		snprintf(err, errlen, "%s", ans->msg[0] ? ans->msg : "TPM");
		goto out;
	}
	if (vg_api_proof_build(ans->proof, ret) < 0) {
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		snprintf(err, errlen, "out of memory");
	}
out:
	free(rq);
	free(rs);
	free(act);
	return code;
}

enum MHD_Result agent_activate(struct agent *a, struct MHD_Connection *c, const char *body,
			       size_t len)
{
	char *text = NULL, err[300];
	unsigned int code = agent_activate_body(a, body, len, &text, err, sizeof(err));
	enum MHD_Result ret;

	if (code != MHD_HTTP_OK)
		return code == MHD_HTTP_INTERNAL_SERVER_ERROR ? MHD_NO :
		       http_reply_error(c, code, err);
	ret = http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	return ret;
}

/* The TPM's answer @ans to @qr as the API's quote. */
static void quote_fill(struct vg_api_quote *q, const struct vg_api_quote_req *qr,
		       const struct agent_msg_quote_answer *ans)
{
	q->bank = qr->bank;
	q->attest_len = ans->attest_len;
	memcpy(q->attest, ans->attest, ans->attest_len);
	q->sig_len = ans->sig_len;
	memcpy(q->sig, ans->sig, ans->sig_len);
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		if (!(ans->have & (1u << i)))
			continue;
		q->pcr[i].algo = (uint8_t)qr->bank;
		q->pcr[i].len = (uint8_t)vg_hash_size(qr->bank);
		memcpy(q->pcr[i].bytes, ans->pcr[i], q->pcr[i].len);
		q->have |= 1u << i;
	}
}

unsigned int agent_quote_body(struct agent *a, struct vg_api_quote_req *qr, char **ret,
			      char *err, size_t errlen)
{
	union agent_msg *rq = calloc(1, sizeof(*rq)), *rs = calloc(1, sizeof(*rs));
	struct vg_api_quote *q = calloc(1, sizeof(*q));
	struct agent_msg_quote_answer *ans = rs ? &rs->quote_answer : NULL;
	unsigned int code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	const char *replay;

	if (!rq || !rs || !q) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	replay = agent_tamper_quote(a, qr);
	if (replay) {
		*ret = strdup(replay);
		code = *ret ? MHD_HTTP_OK : code;
		goto out;
	}
	rq->quote.nonce_len = (uint32_t)qr->nonce_len;
	memcpy(rq->quote.nonce, qr->nonce, qr->nonce_len);
	rq->quote.bank = qr->bank;
	rq->quote.mask = qr->mask;
	if (ask_tpm(a, AGENT_MSG_QUOTE, &rq->quote, sizeof(rq->quote), rs, AGENT_MSG_QUOTE_ANSWER) < 0) {
		snprintf(err, errlen, "TPM process did not answer");
		goto out;
	}
	if (ans->err < 0) {
		snprintf(err, errlen, "%s", ans->msg[0] ? ans->msg : "TPM process");
		goto out;
	}
	if (ans->attest_len > sizeof(q->attest) || ans->sig_len > sizeof(q->sig)) {
		snprintf(err, errlen, "TPM process: quote too large");
		goto out;
	}
	quote_fill(q, qr, ans);
	if (vg_api_quote_build(q, ret) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	agent_tamper_quote_sent(a, *ret);
	code = MHD_HTTP_OK;
out:
	free(rq);
	free(rs);
	free(q);
	return code;
}

enum MHD_Result agent_quote(struct agent *a, struct MHD_Connection *c)
{
	const char *nh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
	const char *bs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "bank");
	const char *ms = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mask");
	struct vg_api_quote_req qr;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char *text = NULL, err[300];

	if (vg_api_quote_query_parse(nh, bs, ms, &qr, &d) < 0)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	if (agent_quote_body(a, &qr, &text, err, sizeof(err)) != MHD_HTTP_OK)
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, err);
	ret = http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	return ret;
}

int agent_log_body(struct agent *a, uint64_t off, uint8_t **ret, size_t *len, long long *size)
{
	uint8_t *buf = NULL;
	struct stat st;
	int fd;

	*len = 0;
	fd = open(a->log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size > off) {
		*len = (size_t)st.st_size - (size_t)off;
		buf = malloc(*len);
		if (!buf || pread(fd, buf, *len, (off_t)off) != (ssize_t)*len) {
			free(buf);
			close(fd);
			return -EIO;
		}
	}
	*size = fd >= 0 ? (long long)st.st_size : 0LL;
	if (fd >= 0)
		close(fd);
	agent_tamper_log(a, buf, len);
	*ret = buf;
	return 0;
}

/*
 * The list from byte ?offset= to the size fstat() gave, and that size in
 * X-Vigil-Log-Size (0 when the list is absent). One pread of a known
 * range: a list that grows meanwhile is served up to that size.
 */
enum MHD_Result agent_log(struct agent *a, struct MHD_Connection *c)
{
	const char *os = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
	uint64_t off;
	uint8_t *buf = NULL;
	size_t len = 0;
	long long sz = 0;
	char size[32];
	struct vg_diag d = { 0 };

	if (vg_api_log_query_parse(os, &off, &d) < 0)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	if (agent_log_body(a, off, &buf, &len, &sz) < 0)
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "log: read failed");
	snprintf(size, sizeof(size), "%lld", sz);
	return http_reply_bytes(c, MHD_HTTP_OK, buf, len, "X-Vigil-Log-Size", size);
}

int agent_bootlog_body(struct agent *a, uint8_t **ret, size_t *len)
{
	int fd = a->boot_log ? open(a->boot_log, O_RDONLY | O_CLOEXEC) : -1;
	uint8_t *buf = NULL;
	int r;

	*ret = NULL;
	*len = 0;
	if (fd < 0)
		return -ENOENT;
	r = vg_fd_read_all(fd, BOOT_LOG_MAX, &buf, len);
	close(fd);
	if (r < 0)
		return r;
	if (!*len) {
		free(buf);
		buf = NULL;
	}
	*ret = buf;
	return 0;
}

/* The boot event log, read to its end (securityfs files have no size), at most 16 MiB. */
enum MHD_Result agent_bootlog(struct agent *a, struct MHD_Connection *c)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int r = agent_bootlog_body(a, &buf, &len);

	if (r == -ENOENT)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no boot event log on this host");
	if (r < 0)
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, r == -EFBIG ?
					"boot log too large" : "boot log: read failed");
	return http_reply_bytes(c, MHD_HTTP_OK, buf, len, NULL, NULL);
}
