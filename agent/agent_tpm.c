// SPDX-License-Identifier: MIT
/*
 * agent_tpm.c - vigil-agent's TPM process (the parent): the only holder of
 * the TPM. It opens it after the fork, loads the AK from the state
 * directory (or creates and stores one), sends the identity, then answers
 * the network process's quote and activate messages (agent_proto.h) one
 * at a time. The credential secret of TPM2_ActivateCredential never leaves
 * it: only the HMAC proof does. A malformed message ends it: the network
 * side is not trusted to be sane. It parses no HTTP and reads no log.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "log.h"
#include "vigil/fileio.h"
#include "vigil/outfile.h"
#include "vigil/tpm_attest.h"
#include "tcti.h"

#include "agent.h"
#include "agent_proto.h"

static volatile sig_atomic_t tpm_stop;
static volatile pid_t net_pid;		/* the network process, where SIGHUP goes */

static void on_signal(int sig)
{
	if (sig == SIGHUP) {
		if (net_pid > 0)
			kill(net_pid, SIGHUP);	/* the token list is the network process's */
		return;
	}
	tpm_stop = 1;
}

/*
 * The AK of @state/ak.blob (ak-TYPE.blob under an ECC EK) into @tpm, or a
 * new one stored there. Return: 0 or -1 (logged).
 */
static int ak_ready(struct vg_atpm *tpm, const char *state, bool rsa, unsigned int ek_type)
{
	uint8_t *blob = NULL, fresh[VG_ATPM_BLOB_MAX];
	size_t bl = 0, fl = sizeof(fresh);
	struct vg_diag dg = { 0 };
	char path[4200];
	int r;

	if (ek_type == VG_ATPM_EK_RSA2048)
		snprintf(path, sizeof(path), "%s/ak.blob", state);
	else
		snprintf(path, sizeof(path), "%s/ak-%s.blob", state, vg_atpm_ek_type_name(ek_type));
	r = vg_file_read(path, VG_ATPM_BLOB_MAX, &blob, &bl, &dg);
	if (r == 0) {
		r = bl ? vg_atpm_ak_load(tpm, blob, bl, &dg) : -ENODATA;
		if (r < 0)
			vlog_err("%s: %s", path, bl ? dg.msg : "unreadable");
		OPENSSL_clear_free(blob, bl);
		return r < 0 ? -1 : 0;
	}
	if (r != -ENOENT) {
		vlog_err("%s: unreadable (%s)", path, dg.msg);
		return -1;
	}
	r = vg_atpm_ak_create(tpm, rsa, fresh, &fl, &dg);
	if (r < 0)
		vlog_err("AK: %s", dg.msg);
	else if ((r = vg_outfile_put(path, fresh, fl, 0600, 0, &dg)) < 0)
		vlog_err("%s: %s", path, dg.msg);
	OPENSSL_cleanse(fresh, sizeof(fresh));
	return r < 0 ? -1 : 0;
}

/* Keys, then the identity to the network side. Return: 0 or -1 (logged). */
static int tpm_setup(struct vg_atpm **ret, const char *tcti, const char *state, bool rsa,
		     unsigned int ek_type, struct ipc_chan *ch)
{
	union agent_msg *m = calloc(1, sizeof(*m));
	struct agent_msg_identity *id = m ? &m->identity : NULL;
	struct vg_atpm *tpm = NULL;
	struct vg_diag dg = { 0 };
	size_t a, b, c;

	if (!m)
		return -1;
	if (vg_atpm_open(vg_prog_tcti(tcti), &tpm, &dg) < 0) {
		vlog_err("%s", dg.msg);
		/* the default device absent: say how a host without a TPM runs the agent */
		if (!vg_prog_tcti(tcti) && access("/dev/tpmrm0", F_OK) < 0)
			vlog_err("this host has no TPM (/dev/tpmrm0): a software one runs as "
				 "vigil-swtpm.service (systemctl enable --now vigil-swtpm), reached with "
				 "tpm.tcti = %s in /etc/vigil/vigil.conf (the unit's --config); "
				 "README.Debian, \"No TPM\"", VG_SWTPM_TCTI);
		goto fail;
	}
	(void)vg_atpm_set_ek_type(tpm, ek_type);	/* checked by the option parser */
	a = sizeof(id->ek_pub);
	b = sizeof(id->ek_cert);
	if (vg_atpm_ek(tpm, id->ek_pub, &a, id->ek_cert, &b, &dg) < 0) {
		vlog_err("EK: %s", dg.msg);
		goto fail;
	}
	if (ak_ready(tpm, state, rsa, ek_type) < 0)
		goto fail;
	c = sizeof(id->ak_pub);
	if (vg_atpm_ak_public(tpm, id->ak_pub, &c) < 0)
		goto fail;
	id->ek_pub_len = (uint32_t)a;
	id->ek_cert_len = (uint32_t)b;
	id->ak_pub_len = (uint32_t)c;
	if (ipc_send_fixed(ch, AGENT_MSG_IDENTITY, id, sizeof(*id), -1) < 0)
		goto fail;
	free(m);
	*ret = tpm;
	return 0;
fail:
	vg_atpm_close(tpm);
	free(m);
	return -1;
}

static void quote(struct vg_atpm *tpm, const struct agent_msg_quote *q,
		  struct agent_msg_quote_answer *a)
{
	struct vg_pcr_values *pv = calloc(1, sizeof(*pv));
	size_t al = sizeof(a->attest), sl = sizeof(a->sig);
	struct vg_diag d = { 0 };
	int r;

	r = pv ? vg_atpm_quote(tpm, q->nonce, q->nonce_len, q->bank, q->mask, a->attest, &al, a->sig,
			       &sl, pv, &d) : -ENOMEM;
	if (r == 0) {
		a->attest_len = (uint32_t)al;
		a->sig_len = (uint32_t)sl;
		a->have = pv->have[q->bank];
		for (unsigned int i = 0; i < VG_PCR_COUNT; i++)
			memcpy(a->pcr[i], pv->v[q->bank][i].bytes, pv->v[q->bank][i].len);
	}
	free(pv);
	a->err = r < 0 ? r : 0;
	snprintf(a->msg, sizeof(a->msg), "%s", r < 0 ? d.msg : "");
}

static void activate(struct vg_atpm *tpm, const struct agent_msg_activate *q,
		     struct agent_msg_activate_answer *a)
{
	uint8_t secret[64];
	unsigned int ml = 0;
	struct vg_diag d = { 0 };
	int r;

	r = vg_atpm_activate(tpm, q->id_object, q->id_len, q->enc_secret, q->es_len, secret,
			     sizeof(secret), &d);
	if (r > 0) {
		HMAC(EVP_sha256(), secret, r, (const uint8_t *)q->agent_id, strlen(q->agent_id),
		     a->proof, &ml);
		r = 0;
	}
	OPENSSL_cleanse(secret, sizeof(secret));
	a->err = r;
	snprintf(a->msg, sizeof(a->msg), "%s", r < 0 ? d.msg : "");
}

/* Answers until the network process hangs up or a request is malformed. Return: 0 or 2. */
static int tpm_serve(struct vg_atpm *tpm, struct ipc_chan *ch)
{
	union agent_msg *rq = malloc(sizeof(*rq)), *rs = malloc(sizeof(*rs));
	int rc = 0;

	while (rq && rs && !tpm_stop) {
		uint32_t type, answer;
		size_t len;
		int r = ipc_recv_fixed(ch, 1u << AGENT_MSG_QUOTE | 1u << AGENT_MSG_ACTIVATE, &type, rq,
				       sizeof(*rq), NULL);

		if (r == 0)
			break;
		if (r == -EINTR)
			continue;
		if (r < 0) {
			if (r == -EPROTO)
				vlog_err("malformed request from the network "
					"process (%s)", ch->why);
			rc = 2;
			break;
		}
		memset(rs, 0, sizeof(*rs));
		if (type == AGENT_MSG_QUOTE) {
			quote(tpm, &rq->quote, &rs->quote_answer);
			answer = AGENT_MSG_QUOTE_ANSWER;
			len = sizeof(rs->quote_answer);
		} else {
			activate(tpm, &rq->activate, &rs->activate_answer);
			answer = AGENT_MSG_ACTIVATE_ANSWER;
			len = sizeof(rs->activate_answer);
		}
		if (ipc_send_fixed(ch, answer, rs, len, -1) < 0) {
			rc = 2;
			break;
		}
	}
	if (!rq || !rs)
		rc = 2;
	free(rq);
	free(rs);
	return rc;
}

int agent_tpm_main(int fd, pid_t net, const char *tcti, const char *state, bool rsa,
		   unsigned int ek_type)
{
	struct sigaction act = { .sa_handler = on_signal };
	struct vg_atpm *tpm;
	struct ipc_chan ch;
	int rc;

	net_pid = net;
	if (agent_chan(&ch, fd, "TPM process") < 0)
		return 2;
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGHUP, &act, NULL);
	if (tpm_setup(&tpm, tcti, state, rsa, ek_type, &ch) < 0) {
		kill(net, SIGTERM);
		waitpid(net, NULL, 0);
		return 2;
	}
	rc = tpm_serve(tpm, &ch);
	vg_atpm_close(tpm);		/* flushes EK and AK: swtpm has 3 slots */
	close(fd);
	kill(net, SIGTERM);
	waitpid(net, NULL, 0);
	return rc;
}
