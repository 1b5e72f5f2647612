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
 * every field again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>

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
static int ask_tpm(struct agent *a, const union agent_msg *rq, union agent_msg *rs,
		   uint32_t answer)
{
	int r;

	if (agent_msg_send(a->ipc, rq) < 0)
		return -EIO;
	do
		r = agent_msg_recv(a->ipc, rs, 1u << answer);
	while (r == -EINTR);
	if (r == -EPROTO) {
		vlog_err("malformed answer from the TPM process");
		_exit(2);
	}
	if (r <= 0)
		return -EIO;
	return 0;
}

static void add_b64(json_object *o, const char *key, const uint8_t *b, size_t n)
{
	char *s;

	if (vg_attest_b64_encode(b, n, &s) < 0)
		return;
	json_object_object_add(o, key, json_object_new_string(s));
	free(s);
}

enum MHD_Result agent_identity(struct agent *a, struct MHD_Connection *c)
{
	json_object *o = json_object_new_object();
	uint8_t cert[VG_ATPM_CERT_MAX], ak[VG_ATPM_PUB_MAX];
	size_t akl = a->ak_pub_len;

	memcpy(cert, a->ek_cert, a->ek_cert_len);
	memcpy(ak, a->ak_pub, a->ak_pub_len);
	agent_tamper_identity(a, cert, a->ek_cert_len, ak, &akl);
	json_object_object_add(o, "id", json_object_new_string(a->id));
	add_b64(o, "ek_pub", a->ek_pub, a->ek_pub_len);
	add_b64(o, "ek_cert", cert, a->ek_cert_len);
	add_b64(o, "ak_pub", ak, akl);
	return http_reply_json(c, MHD_HTTP_OK, o);
}

enum MHD_Result agent_activate(struct agent *a, struct MHD_Connection *c, const char *body,
			       size_t len)
{
	union agent_msg *rq = calloc(1, sizeof(*rq)), *rs = calloc(1, sizeof(*rs));
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct agent_msg_activate *q = rq ? &rq->activate : NULL;
	struct agent_msg_activate_answer *ans = rs ? &rs->activate_answer : NULL;
	struct vg_diag d = { 0 };
	enum MHD_Result ret;
	char *text = NULL;
	int n;

	if (!rq || !rs || !act) {
		ret = MHD_NO;
		goto out;
	}
	if (vg_api_activate_parse((const uint8_t *)body, len, act, &d) < 0) {
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		goto out;
	}
	if (act->id_len > sizeof(q->id_object) || act->es_len > sizeof(q->enc_secret)) {
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, "credential blob too large");
		goto out;
	}
	q->type = AGENT_MSG_ACTIVATE;
	q->id_len = (uint32_t)act->id_len;
	memcpy(q->id_object, act->id_object, act->id_len);
	q->es_len = (uint32_t)act->es_len;
	memcpy(q->enc_secret, act->enc_secret, act->es_len);
	snprintf(q->agent_id, sizeof(q->agent_id), "%s", a->id);
	n = ask_tpm(a, rq, rs, AGENT_MSG_ACTIVATE_ANSWER);
	if (n < 0) {
		ret = http_reply_error(c, MHD_HTTP_FORBIDDEN, "TPM process did not answer");
		goto out;
	}
	if (ans->err < 0) {
		ret = http_reply_error(c, MHD_HTTP_FORBIDDEN, ans->msg[0] ? ans->msg : "TPM");
		goto out;
	}
	if (vg_api_proof_build(ans->proof, &text) < 0) {
		ret = MHD_NO;
		goto out;
	}
	ret = http_reply_text(c, MHD_HTTP_OK, text);
out:
	free(text);
	free(rq);
	free(rs);
	free(act);
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

enum MHD_Result agent_quote(struct agent *a, struct MHD_Connection *c)
{
	const char *nh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
	const char *bs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "bank");
	const char *ms = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mask");
	union agent_msg *rq = calloc(1, sizeof(*rq)), *rs = calloc(1, sizeof(*rs));
	struct vg_api_quote *q = calloc(1, sizeof(*q));
	struct agent_msg_quote_answer *ans = rs ? &rs->quote_answer : NULL;
	struct vg_api_quote_req qr;
	struct vg_diag d = { 0 };
	const char *replay;
	enum MHD_Result ret;
	char *text = NULL;

	if (!rq || !rs || !q) {
		ret = MHD_NO;
		goto out;
	}
	if (vg_api_quote_query_parse(nh, bs, ms, &qr, &d) < 0) {
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		goto out;
	}
	replay = agent_tamper_quote(a, &qr);
	if (replay) {
		ret = http_reply_text(c, MHD_HTTP_OK, replay);
		goto out;
	}
	rq->quote.type = AGENT_MSG_QUOTE;
	rq->quote.nonce_len = (uint32_t)qr.nonce_len;
	memcpy(rq->quote.nonce, qr.nonce, qr.nonce_len);
	rq->quote.bank = qr.bank;
	rq->quote.mask = qr.mask;
	if (ask_tpm(a, rq, rs, AGENT_MSG_QUOTE_ANSWER) < 0) {
		ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "TPM process did not answer");
		goto out;
	}
	if (ans->err < 0) {
		ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       ans->msg[0] ? ans->msg : "TPM process");
		goto out;
	}
	if (ans->attest_len > sizeof(q->attest) || ans->sig_len > sizeof(q->sig)) {
		ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "TPM process: quote too large");
		goto out;
	}
	quote_fill(q, &qr, ans);
	if (vg_api_quote_build(q, &text) < 0) {
		ret = MHD_NO;
		goto out;
	}
	agent_tamper_quote_sent(a, text);
	ret = http_reply_text(c, MHD_HTTP_OK, text);
out:
	free(text);
	free(rq);
	free(rs);
	free(q);
	return ret;
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
	char size[32];
	struct vg_diag d = { 0 };
	struct stat st;
	int fd;

	if (vg_api_log_query_parse(os, &off, &d) < 0)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	fd = open(a->log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size > off) {
		len = (size_t)st.st_size - (size_t)off;
		buf = malloc(len);
		if (!buf || pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
			free(buf);
			close(fd);
			return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "log: read failed");
		}
	}
	snprintf(size, sizeof(size), "%lld", fd >= 0 ? (long long)st.st_size : 0LL);
	if (fd >= 0)
		close(fd);
	agent_tamper_log(a, buf, &len);
	return http_reply_bytes(c, MHD_HTTP_OK, buf, len, "X-Vigil-Log-Size", size);
}

/* The boot event log, read to its end (securityfs files have no size), at most 16 MiB. */
enum MHD_Result agent_bootlog(struct agent *a, struct MHD_Connection *c)
{
	int fd = a->boot_log ? open(a->boot_log, O_RDONLY | O_CLOEXEC) : -1;
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	if (fd < 0)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no boot event log on this host");
	r = vg_fd_read_all(fd, BOOT_LOG_MAX, &buf, &len);
	close(fd);
	if (r < 0)
		return http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, r == -EFBIG ?
					"boot log too large" : "boot log: read failed");
	if (!len) {
		free(buf);
		buf = NULL;
	}
	return http_reply_bytes(c, MHD_HTTP_OK, buf, len, NULL, NULL);
}
