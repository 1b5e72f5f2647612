// SPDX-License-Identifier: MIT
/*
 * agent_push.c - push mode of vigil-agent (--push URL, docs/attest-push.md),
 * in the network process instead of the HTTP server: the agent opens
 * every connection, so a verifier that cannot reach it (NAT, firewall)
 * attests it. Registration first (its identity; the verifier answers with
 * MakeCredential, the TPM process activates it, the proof goes back),
 * then every interval the verifier says: a challenge (nonce, PCRs, the
 * list offset the verifier has, whether it wants the boot log), the
 * quote, and the evidence. Every body is the one the routes serve in
 * pull mode (agent_routes.c). A 409 with "retry" (the verifier needs
 * another offset, PCRs or the boot log) asks a new challenge at once.
 *
 * The verifier is authenticated by its TLS certificate (--push-ca); the
 * agent by its client certificate (--push-cert/--push-key) and/or the
 * token of role agent in --push-token-file. The only user of libcurl in
 * vigil-agent. It parses what the verifier says with attest_api.h.
 *
 * One libcurl handle for the agent's life, so one connection (one TCP
 * and TLS handshake) carries every exchange and is kept between pushes;
 * the handle only ever talks to --push's URL (libcurl reuses a connection
 * for the same scheme, host, port and TLS settings only). A connection
 * the verifier closed meanwhile (--api-idle-timeout, a restart) is seen
 * dead before a request goes out, or at its first byte of answer, and
 * libcurl connects again and sends the request once more; a push that
 * fails anyway drops the handle, and the next exchange starts afresh.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/crypto.h>

#include "http_client.h"
#include "log.h"
#include "vigil/attest_api.h"

#include "agent.h"

#define PUSH_ANSWER_MAX (1u << 20)
#define PUSH_TIMEOUT_S 30		/* one exchange with the verifier, all in */
#define PUSH_RETRY_MS 2000		/* after a failure, at most (the interval when shorter) */
#define PUSH_RETRIES 3			/* challenges asked again at once after a 409 retry */

/*
 * POST @body (JSON, may be NULL: empty) to @what of this agent
 * (URL/v1/push/ID/@what), on the agent's one handle (made here when there
 * is none), its connection kept for the next exchange. A transport
 * failure drops the handle and its connection.
 * Return: the HTTP status, -1 (transport: @err).
 */
static long post(struct agent_push *pc, const char *id, const char *what, const char *body,
		 struct http_answer *out, char *err, size_t errlen)
{
	const struct http_peer peer = { .ca = pc->ca, .cert = pc->cert, .key = pc->key, .token = pc->token };
	const struct http_limits lim = { .timeout_s = PUSH_TIMEOUT_S, .timeout_name = "the push's deadline" };
	char url[1024];
	long code;

	out->max = PUSH_ANSWER_MAX;
	if (!pc->curl)
		pc->curl = curl_easy_init();
	if (!pc->curl) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "libcurl init");
		return -1;
	}
	snprintf(url, sizeof(url), "%s/v1/push/%s/%s", pc->url, id, what);
	/*
	 * a connection is made anew after 10 minutes: the verifier checks our
	 * certificate again, and one renewed in --push-cert is presented
	 */
	curl_easy_setopt(pc->curl, CURLOPT_MAXLIFETIME_CONN, 600L);
	code = http_request(pc->curl, url, body ? body : "", &peer, &lim, out, err, errlen);
	if (code < 0) {
		curl_easy_cleanup(pc->curl);
		pc->curl = NULL;
	}
	return code;
}

/* Registered (or already). Return: 0, -1 (logged: try again later). */
static int push_register(struct agent *a)
{
	struct http_answer b = { 0 }, b2 = { 0 };
	char *idt = NULL, *proof = NULL, err[512], msg[256];
	long code;
	int r = -1;

	if (agent_identity_body(a, &idt) < 0)
		return -1;
	code = post(&a->push, a->id, "register", idt, &b, err, sizeof(err));
	if (code == 200) {
		r = 0;			/* known with this AK */
		goto out;
	}
	if (code != 202) {
		if (code > 0)
			http_said(&b, msg, sizeof(msg));
		vlog_err("push: register: %s%s", code < 0 ? err : "refused: ", code < 0 ? "" : msg);
		goto out;
	}
	/* the verifier's MakeCredential: only our TPM can answer it */
	if (agent_activate_body(a, (const char *)b.p, b.len, &proof, err, sizeof(err)) != 200) {
		vlog_err("push: activate: %s", err);
		goto out;
	}
	code = post(&a->push, a->id, "activate", proof, &b2, err, sizeof(err));
	if (code != 201) {
		if (code > 0)
			http_said(&b2, msg, sizeof(msg));
		vlog_err("push: activate: %s%s", code < 0 ? err : "refused: ", code < 0 ? "" : msg);
		goto out;
	}
	vlog_info("push: registered with %s as %s", a->push.url, a->id);
	r = 0;
out:
	free(idt);
	free(proof);
	free(b.p);
	free(b2.p);
	return r;
}

/*
 * One push: a challenge, the quote, the evidence.
 * Return: 0 (judged), 1 (the verifier asks again: retry now), -1 (logged).
 * *@interval_ms: what the verifier said.
 */
static int push_once(struct agent *a, uint32_t *interval_ms)
{
	struct http_answer b = { 0 }, b2 = { 0 };
	struct vg_api_challenge ch;
	struct vg_api_push p = { 0 };
	struct vg_diag d = { 0 };
	char *ev = NULL, err[512], msg[256];
	long long size;
	long code;
	int r = -1;

	code = post(&a->push, a->id, "nonce", NULL, &b, err, sizeof(err));
	if (code != 200) {
		if (code > 0)
			http_said(&b, msg, sizeof(msg));
		vlog_err("push: nonce: %s%s", code < 0 ? err : "refused: ", code < 0 ? "" : msg);
		if (code == 404)
			a->push.registered = false;	/* removed by an operator: register again */
		goto out;
	}
	if (vg_api_challenge_parse((const uint8_t *)b.p, b.len, &ch, &d) < 0) {
		vlog_err("push: %s", d.msg);
		goto out;
	}
	if (ch.interval_ms)
		*interval_ms = ch.interval_ms;
	memcpy(p.nonce, ch.q.nonce, ch.q.nonce_len);
	p.nonce_len = ch.q.nonce_len;
	if (agent_quote_body(a, &ch.q, &p.quote, err, sizeof(err)) != 200) {
		vlog_err("push: quote: %s", err);
		goto out;
	}
	p.quote_len = strlen(p.quote);
	p.log_offset = ch.log_offset;
	if (agent_log_body(a, ch.log_offset, &p.log, &p.log_len, &size) < 0) {
		vlog_err("push: %s: read failed", a->log);
		goto out;
	}
	p.have_log = true;
	if (ch.boot_log) {
		int br = agent_bootlog_body(a, &p.boot_log, &p.boot_len);

		if (br < 0 && br != -ENOENT) {
			vlog_err("push: boot log: %s", strerror(-br));
			goto out;
		}
		p.have_boot = true;	/* empty: the host has none */
	}
	if (vg_api_push_build(&p, &ev) < 0) {
		vlog_err("push: out of memory");
		goto out;
	}
	code = post(&a->push, a->id, "evidence", ev, &b2, err, sizeof(err));
	if (code == 200) {
		r = 0;
		goto out;
	}
	if (code > 0)
		http_said(&b2, msg, sizeof(msg));
	if (code == 409 && b2.p && strstr((const char *)b2.p, "\"retry\":true")) {
		vlog_info("push: %s", msg);
		r = 1;
		goto out;
	}
	vlog_err("push: evidence: %s%s", code < 0 ? err : "refused: ", code < 0 ? "" : msg);
out:
	vg_api_push_release(&p);
	free(ev);
	free(b.p);
	free(b2.p);
	return r;
}

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Wait @ms for a signal in @set. Return: the signal, 0 (time is up). */
static int wait_signal(const sigset_t *set, uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	int s;

	do
		s = sigtimedwait(set, NULL, &ts);
	while (s < 0 && errno == EINTR);
	return s < 0 ? 0 : s;
}

int agent_push_main(struct agent *a, const sigset_t *set)
{
	uint32_t interval = PUSH_RETRY_MS;
	int sig;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		vlog_err("push: libcurl init");
		return 2;
	}
	vlog_info("%s pushing to %s", a->id, a->push.url);
	for (;;) {
		uint32_t wait = PUSH_RETRY_MS;
		int64_t start = mono_ms(), took;

		if (!a->push.registered && push_register(a) == 0)
			a->push.registered = true;
		if (a->push.registered) {
			int r = 1;

			for (int i = 0; i < PUSH_RETRIES && r == 1; i++)
				r = push_once(a, &interval);
			wait = r == 0 ? interval : (interval < PUSH_RETRY_MS ? interval : PUSH_RETRY_MS);
			/* an interval from the start of this push to the next: the verifier's clock */
			took = mono_ms() - start;
			wait = took >= wait ? 1 : wait - (uint32_t)took;
		}
		sig = wait_signal(set, wait);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		/* SIGHUP: nothing to reload (the token file is read at start) */
	}
	if (a->push.curl)
		curl_easy_cleanup(a->push.curl);
	a->push.curl = NULL;
	curl_global_cleanup();
	return 0;
}
