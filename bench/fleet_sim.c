// SPDX-License-Identifier: MIT
/*
 * vigil-fleet-sim - N simulated vigil-agents in one process, on one
 * loopback port, for bench/fleet: agent ID answers at
 * http://127.0.0.1:PORT/a/ID exactly what vigil-agent answers at its root
 * (agent/agent_routes.c; the JSON is attest_api.h's builders):
 *
 *   GET  /a/ID/v1/identity      {id, ek_pub, ek_cert, ak_pub}
 *   POST /a/ID/v1/activate      {proof: HMAC-SHA256(secret, ID)}
 *   GET  /a/ID/v1/quote?nonce=&bank=sha256&mask=   {attest, sig, bank, pcrs}
 *   GET  /a/ID/v1/log?offset=N  the binary ima-ng list from byte N
 *   GET  /a/ID/v1/bootlog       404 (no boot event log)
 *
 * Each agent has its own software TPM (fleet_sim_tpm.h: RSA-2048 EK with a
 * certificate from the CA written to --ek-ca-out, RSA-2048 AK, PCR 10)
 * and its own measurement list, which grows by --entries new entries
 * (extended into its PCR 10) before every quote it serves: every round
 * has new entries to replay and judge, and every quote signs the
 * verifier's nonce over a new PCR value. Registration is the real one
 * (MakeCredential by the verifier, ActivateCredential here with the EK's
 * private key). The lists hold --files distinct files (the same for every
 * agent), written once as a list to --policy-log so that `vigil attest
 * policy create --log` makes the reference policy that trusts them all;
 * entry j of every list is file (j-1) mod --files, so a list is computed,
 * not stored: an agent costs its keys and 64 bytes of state.
 *
 * --tamper ID: from its second quote on, agent ID measures a changed
 * content of its files (a new digest, extended and logged as the kernel
 * would): its round fails policy (policy.digest). --tamper-replay ID:
 * from its second quote on, the list it serves names other files (ones
 * the policy allows) than the ones its PCR 10 was extended with: its round
 * fails the replay (log.pcr_mismatch). --tamper-every K: every K-th
 * agent tampered as by --tamper (a fleet with failing agents among it).
 *
 * --quote-log FILE: one line per quote served, "ID WALL_MS PEER_ADDR:PORT",
 * written at least every second and at exit. --request-log FILE: the same
 * for every request to an agent, with its path: "ID WALL_MS PEER PATH"
 * (which requests came over one connection).
 *
 * It checks no credential (a verifier's token is accepted and ignored)
 * and listens on 127.0.0.1 only. Not installed: a load generator.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "http_reply.h"
#include "vigil/attest.h"
#include "vigil/attest_api.h"

#include "fleet_sim_tpm.h"

#define BODY_MAX (64 * 1024)
#define TAMPER_MAX 16
#define PATH_FMT "/usr/lib/fleet-sim/file-%06u"	/* every path the same length */

static const char help[] =
	"usage: vigil-fleet-sim --agents N --port PORT --ek-ca-out FILE [options]\n"
	"N simulated vigil-agents at http://127.0.0.1:PORT/a/ID (bench/fleet_sim.c).\n"
	"  -n, --agents N          agents (default 50)\n"
	"      --prefix P          agent ids P00000, P00001, ... (default sim)\n"
	"  -p, --port PORT         port on 127.0.0.1 (required)\n"
	"  -k, --entries K         new list entries per quote served (default 5)\n"
	"      --files F           distinct files the lists measure (default 1000)\n"
	"      --ek-ca-out FILE    write the EK CA certificate there (new file; required)\n"
	"      --policy-log FILE   write a list of every file measured there (new file), for\n"
	"                          `vigil attest policy create --log FILE`\n"
	"      --quote-log FILE    one line per quote served: ID WALL_MS PEER_ADDR:PORT\n"
	"      --request-log FILE  one line per request to an agent: ID WALL_MS PEER PATH\n"
	"      --tamper ID         from its second quote on, ID measures changed files\n"
	"      --tamper-replay ID  from its second quote on, ID's list disagrees with its PCR\n"
	"      --tamper-every K    every K-th agent (P0000K-1, P0000(2K-1), ...) as --tamper\n"
	"      --threads T         HTTP threads (default 2)\n"
	"      --independent-keys  one EVP keygen per key (slow) instead of the prime pool\n";

enum tamper { T_NONE, T_FILE, T_REPLAY };

struct sagent {
	pthread_mutex_t lock;
	char id[VG_API_ID_MAX];
	struct fsim_tpm tpm;
	uint64_t entries;		/* in the list */
	uint64_t tamper_from;		/* first entry index affected; UINT64_MAX none yet */
	uint64_t clock;			/* TPM clock, ms, strictly increasing */
	uint64_t quotes;
	uint8_t pcr10[32];
	enum tamper tamper;
};

/* An entry as the list holds it, and the sha256 its template data extends PCR 10 with. */
struct entry {
	uint8_t bytes[128];
	size_t len;
	uint8_t ext[32];
};

struct sim {
	struct sagent *ag;
	size_t n;
	size_t *tab;			/* open addressing: agent index + 1, 0 empty */
	size_t tab_size;
	unsigned int files, per_quote;
	struct entry boot, *file, *changed;	/* changed: the --tamper contents */
	size_t entry_len;		/* of every file entry */
	FILE *qlog;
	FILE *rlog;			/* --request-log, under qlog_lock */
	pthread_mutex_t qlog_lock;
	int64_t qlog_flushed;
	struct timespec t0;
};

struct upload {
	char *buf;
	size_t len;
	bool big;
};

static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint64_t mono_ms(const struct sim *s)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)((t.tv_sec - s->t0.tv_sec) * 1000 + (t.tv_nsec - s->t0.tv_nsec) / 1000000);
}

static uint64_t fnv(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static struct sagent *agent_find(const struct sim *s, const char *id, size_t len)
{
	for (size_t h = fnv(id, len) & (s->tab_size - 1);; h = (h + 1) & (s->tab_size - 1)) {
		size_t i = s->tab[h];

		if (!i)
			return NULL;
		if (strlen(s->ag[i - 1].id) == len && memcmp(s->ag[i - 1].id, id, len) == 0)
			return &s->ag[i - 1];
	}
}

static void le32(uint8_t **p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

/* An ima-ng entry of PCR 10 for @path with the sha256 file digest @fd (bench/mklog.py's layout). */
static void entry_make(struct entry *e, const char *path, const uint8_t fd[32])
{
	uint8_t data[96], *p = data, *q = e->bytes;
	size_t pl = strlen(path) + 1, dl;

	le32(&p, 40);
	memcpy(p, "sha256:", 8);
	memcpy(p + 8, fd, 32);
	p += 40;
	le32(&p, (uint32_t)pl);
	memcpy(p, path, pl);
	p += pl;
	dl = (size_t)(p - data);
	le32(&q, 10);
	SHA1(data, dl, q);
	q += 20;
	le32(&q, 6);
	memcpy(q, "ima-ng", 6);
	q += 6;
	le32(&q, (uint32_t)dl);
	memcpy(q, data, dl);
	q += dl;
	e->len = (size_t)(q - e->bytes);
	SHA256(data, dl, e->ext);
}

/* Entry @j of @a's list: what is served (*@ret_served) and what PCR 10 was extended with. */
static const struct entry *entry_of(const struct sim *s, const struct sagent *a, uint64_t j,
				    const struct entry **ret_served)
{
	const struct entry *e, *c;

	if (j == 0) {
		*ret_served = &s->boot;
		return &s->boot;
	}
	e = &s->file[(j - 1) % s->files];
	if (a->tamper == T_NONE || j < a->tamper_from) {
		*ret_served = e;
		return e;
	}
	if (a->tamper == T_FILE) {
		c = &s->changed[(j - 1) % s->files];
		*ret_served = c;
		return c;
	}
	/* T_REPLAY: another file the policy allows is served, not the one extended */
	*ret_served = &s->file[j % s->files];
	return e;
}

static uint64_t list_size(const struct sim *s, uint64_t n)
{
	return n ? s->boot.len + (n - 1) * s->entry_len : 0;
}

static void peer_name(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
		MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr_in *sin = ci ? (const struct sockaddr_in *)ci->client_addr : NULL;
	char ip[INET_ADDRSTRLEN];

	if (!sin || sin->sin_family != AF_INET || !inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)))
		snprintf(out, cap, "?");
	else
		snprintf(out, cap, "%s:%u", ip, ntohs(sin->sin_port));
}

static void qlog_write(struct sim *s, const char *id, struct MHD_Connection *c)
{
	char peer[64];
	int64_t now = wall_ms();

	if (!s->qlog)
		return;
	peer_name(c, peer, sizeof(peer));
	pthread_mutex_lock(&s->qlog_lock);
	fprintf(s->qlog, "%s %" PRId64 " %s\n", id, now, peer);
	if (now - s->qlog_flushed >= 1000) {
		fflush(s->qlog);
		s->qlog_flushed = now;
	}
	pthread_mutex_unlock(&s->qlog_lock);
}

static void rlog_write(struct sim *s, const char *id, size_t idlen, const char *path,
		       struct MHD_Connection *c)
{
	char peer[64];
	int64_t now = wall_ms();

	if (!s->rlog)
		return;
	peer_name(c, peer, sizeof(peer));
	pthread_mutex_lock(&s->qlog_lock);
	fprintf(s->rlog, "%.*s %" PRId64 " %s %s\n", (int)idlen, id, now, peer, path);
	fflush(s->rlog);
	pthread_mutex_unlock(&s->qlog_lock);
}

static enum MHD_Result do_identity(struct sagent *a, struct MHD_Connection *c)
{
	struct vg_api_identity *idn = calloc(1, sizeof(*idn));
	enum MHD_Result ret;
	char *text = NULL;

	if (!idn)
		return MHD_NO;
	snprintf(idn->id, sizeof(idn->id), "%s", a->id);
	memcpy(idn->ek_pub, a->tpm.ek_pub, a->tpm.ek_pub_len);
	idn->ek_pub_len = a->tpm.ek_pub_len;
	memcpy(idn->ek_cert, a->tpm.ek_cert, a->tpm.ek_cert_len);
	idn->ek_cert_len = a->tpm.ek_cert_len;
	memcpy(idn->ak_pub, a->tpm.ak_pub, a->tpm.ak_pub_len);
	idn->ak_pub_len = a->tpm.ak_pub_len;
	ret = vg_api_identity_build(idn, &text) < 0 ? MHD_NO : http_reply_text(c, MHD_HTTP_OK, text);
	free(text);
	free(idn);
	return ret;
}

static enum MHD_Result do_activate(struct sagent *a, struct MHD_Connection *c,
				   const struct upload *u)
{
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct vg_diag d = { 0 };
	uint8_t secret[64], proof[32];
	unsigned int ml = 0;
	enum MHD_Result ret;
	char *text = NULL;
	int r;

	if (!act)
		return MHD_NO;
	if (vg_api_activate_parse((const uint8_t *)(u->buf ? u->buf : ""), u->len, act, &d) < 0) {
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		goto out;
	}
	r = fsim_tpm_activate(&a->tpm, act->id_object, act->id_len, act->enc_secret, act->es_len,
			      secret, sizeof(secret));
	if (r < 0) {
		ret = http_reply_error(c, MHD_HTTP_FORBIDDEN, r == -EACCES ?
				       "credential is not for this TPM's EK and AK" :
				       "ActivateCredential failed");
		goto out;
	}
	/* the proof vigil-agent's TPM process gives: HMAC-SHA256(secret, agent id) */
	HMAC(EVP_sha256(), secret, r, (const uint8_t *)a->id, strlen(a->id), proof, &ml);
	ret = vg_api_proof_build(proof, &text) < 0 ? MHD_NO : http_reply_text(c, MHD_HTTP_OK, text);
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	free(text);
	free(act);
	return ret;
}

static enum MHD_Result do_quote(struct sim *s, struct sagent *a, struct MHD_Connection *c)
{
	const char *nh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
	const char *bs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "bank");
	const char *ms = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mask");
	struct vg_api_quote *q = calloc(1, sizeof(*q));
	struct vg_api_quote_req qr;
	struct vg_diag d = { 0 };
	uint8_t pcrs[24][32];
	enum MHD_Result ret;
	char *text = NULL;
	int r;

	if (!q)
		return MHD_NO;
	if (vg_api_quote_query_parse(nh, bs, ms, &qr, &d) < 0) {
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
		goto out;
	}
	if (qr.bank != VG_HASH_SHA256) {
		ret = http_reply_error(c, MHD_HTTP_BAD_REQUEST, "vigil-fleet-sim: bank sha256 only");
		goto out;
	}
	memset(pcrs, 0, sizeof(pcrs));
	pthread_mutex_lock(&a->lock);
	/* the host ran: K more files measured, extended, then quoted */
	if (a->quotes == 1 && a->tamper != T_NONE)
		a->tamper_from = a->entries;
	for (unsigned int k = 0; k < s->per_quote || a->entries == 0; k++) {
		const struct entry *served, *e = entry_of(s, a, a->entries, &served);
		uint8_t buf[64];

		memcpy(buf, a->pcr10, 32);
		memcpy(buf + 32, e->ext, 32);
		SHA256(buf, 64, a->pcr10);
		a->entries++;
	}
	a->clock = a->clock + 1 > mono_ms(s) ? a->clock + 1 : mono_ms(s);
	a->quotes++;
	memcpy(pcrs[10], a->pcr10, 32);
	q->attest_len = sizeof(q->attest);
	q->sig_len = sizeof(q->sig);
	r = fsim_tpm_quote(&a->tpm, qr.nonce, qr.nonce_len, qr.mask, (const uint8_t (*)[32])pcrs,
			   a->clock, q->attest, &q->attest_len, q->sig, &q->sig_len);
	pthread_mutex_unlock(&a->lock);
	if (r < 0) {
		ret = http_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "quote: signing failed");
		goto out;
	}
	q->bank = VG_HASH_SHA256;
	for (unsigned int i = 0; i < VG_PCR_COUNT && i < 24; i++) {
		if (!(qr.mask & (1u << i)))
			continue;
		q->pcr[i].algo = VG_HASH_SHA256;
		q->pcr[i].len = 32;
		memcpy(q->pcr[i].bytes, pcrs[i], 32);
		q->have |= 1u << i;
	}
	if (vg_api_quote_build(q, &text) < 0) {
		ret = MHD_NO;
		goto out;
	}
	qlog_write(s, a->id, c);
	ret = http_reply_text(c, MHD_HTTP_OK, text);
out:
	free(text);
	free(q);
	return ret;
}

/* The list from byte ?offset= to its size now, and that size in X-Vigil-Log-Size. */
static enum MHD_Result do_log(struct sim *s, struct sagent *a, struct MHD_Connection *c)
{
	const char *os = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
	struct vg_diag d = { 0 };
	uint64_t off, n, size, j, skip;
	uint8_t *buf = NULL, *p;
	char hv[32];

	if (vg_api_log_query_parse(os, &off, &d) < 0)
		return http_reply_error(c, MHD_HTTP_BAD_REQUEST, d.msg);
	pthread_mutex_lock(&a->lock);
	n = a->entries;
	size = list_size(s, n);
	snprintf(hv, sizeof(hv), "%" PRIu64, size);
	if (off >= size) {
		pthread_mutex_unlock(&a->lock);
		return http_reply_bytes(c, MHD_HTTP_OK, NULL, 0, "X-Vigil-Log-Size", hv);
	}
	if (off < s->boot.len) {
		j = 0;
		skip = off;
	} else {
		j = 1 + (off - s->boot.len) / s->entry_len;
		skip = (off - s->boot.len) % s->entry_len;
	}
	buf = malloc((size_t)(size - off) + s->entry_len);
	if (!buf) {
		pthread_mutex_unlock(&a->lock);
		return MHD_NO;
	}
	p = buf;
	for (; j < n; j++) {
		const struct entry *served;

		entry_of(s, a, j, &served);
		memcpy(p, served->bytes + skip, served->len - skip);
		p += served->len - skip;
		skip = 0;
	}
	pthread_mutex_unlock(&a->lock);
	return http_reply_bytes(c, MHD_HTTP_OK, buf, (size_t)(p - buf), "X-Vigil-Log-Size", hv);
}

static enum MHD_Result route(struct sim *s, struct MHD_Connection *c, const char *url,
			     const char *method, const struct upload *u)
{
	const char *id, *slash;
	struct sagent *a;
	bool get = strcmp(method, "GET") == 0;

	if (strncmp(url, "/a/", 3) != 0 || !(slash = strchr(url + 3, '/')))
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint: /a/ID/v1/...");
	id = url + 3;
	a = agent_find(s, id, (size_t)(slash - id));
	if (!a)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such agent");
	rlog_write(s, id, (size_t)(slash - id), slash, c);
	if (get && strcmp(slash, "/v1/identity") == 0)
		return do_identity(a, c);
	if (get && strcmp(slash, "/v1/quote") == 0)
		return do_quote(s, a, c);
	if (get && strcmp(slash, "/v1/log") == 0)
		return do_log(s, a, c);
	if (get && strcmp(slash, "/v1/bootlog") == 0)
		return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no boot event log on this host");
	if (strcmp(method, "POST") == 0 && strcmp(slash, "/v1/activate") == 0)
		return do_activate(a, c, u);
	return http_reply_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;

	(void)version;
	if (!u) {
		u = calloc(1, sizeof(*u));
		*con_cls = u;
		return u ? MHD_YES : MHD_NO;
	}
	if (*data_len) {
		if (u->len + *data_len > BODY_MAX) {
			u->big = true;
		} else {
			char *nb = realloc(u->buf, u->len + *data_len + 1);

			if (!nb)
				return MHD_NO;
			u->buf = nb;
			memcpy(u->buf + u->len, data, *data_len);
			u->len += *data_len;
			u->buf[u->len] = 0;
		}
		*data_len = 0;
		return MHD_YES;
	}
	if (u->big)
		return http_reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
	return route(cls, c, url, method, u);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls, (void)c, (void)toe;
	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}

static int lists_make(struct sim *s)
{
	uint8_t fd[32];
	char path[64], seed[64];

	s->file = calloc(s->files, sizeof(*s->file));
	s->changed = calloc(s->files, sizeof(*s->changed));
	if (!s->file || !s->changed)
		return -ENOMEM;
	memset(fd, 0, sizeof(fd));
	entry_make(&s->boot, "boot_aggregate", fd);
	for (unsigned int i = 0; i < s->files; i++) {
		snprintf(path, sizeof(path), PATH_FMT, i);
		snprintf(seed, sizeof(seed), "vigil-fleet-sim file %u", i);
		SHA256((const uint8_t *)seed, strlen(seed), fd);
		entry_make(&s->file[i], path, fd);
		snprintf(seed, sizeof(seed), "vigil-fleet-sim file %u, changed", i);
		SHA256((const uint8_t *)seed, strlen(seed), fd);
		entry_make(&s->changed[i], path, fd);
	}
	s->entry_len = s->file[0].len;
	return 0;
}

/* The list of every file measured, as a host's would read: for `vigil attest policy create`. */
static int policy_log_write(const struct sim *s, const char *path)
{
	FILE *f = fopen(path, "wx");
	int bad;

	if (!f)
		return -errno;
	fwrite(s->boot.bytes, 1, s->boot.len, f);
	for (unsigned int i = 0; i < s->files; i++)
		fwrite(s->file[i].bytes, 1, s->file[i].len, f);
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "vigil-fleet-sim: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static unsigned long num(const char *s, unsigned long lo, unsigned long hi, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi)
		die("%s: out of range or not a number", what);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "agents", required_argument, NULL, 'n' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "port", required_argument, NULL, 'p' },
		{ "entries", required_argument, NULL, 'k' },
		{ "files", required_argument, NULL, 'F' },
		{ "ek-ca-out", required_argument, NULL, 'C' },
		{ "policy-log", required_argument, NULL, 'L' },
		{ "quote-log", required_argument, NULL, 'Q' },
		{ "request-log", required_argument, NULL, 'r' },
		{ "tamper", required_argument, NULL, 'T' },
		{ "tamper-replay", required_argument, NULL, 'R' },
		{ "tamper-every", required_argument, NULL, 'E' },
		{ "threads", required_argument, NULL, 't' },
		{ "independent-keys", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prefix = "sim", *ca_out = NULL, *policy_log = NULL, *quote_log = NULL,
		   *request_log = NULL;
	const char *tamper[TAMPER_MAX];
	enum tamper tamper_kind[TAMPER_MAX];
	unsigned int ntamper = 0, threads = 2, port = 0, every = 0;
	bool independent = false;
	struct sim s = { .n = 50, .files = 1000, .per_quote = 5 };
	struct fsim_keypool *kp = NULL;
	struct fsim_ca ca;
	struct MHD_Daemon *d;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timespec ta, tb;
	sigset_t sigs;
	int opt, sig;

	while ((opt = getopt_long(argc, argv, "n:p:k:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			s.n = num(optarg, 1, 1000000, "--agents");
			break;
		case 'P':
			prefix = optarg;
			break;
		case 'p':
			port = (unsigned int)num(optarg, 1, 65535, "--port");
			break;
		case 'k':
			s.per_quote = (unsigned int)num(optarg, 0, 10000, "--entries");
			break;
		case 'F':
			s.files = (unsigned int)num(optarg, 1, 999999, "--files");
			break;
		case 'C':
			ca_out = optarg;
			break;
		case 'L':
			policy_log = optarg;
			break;
		case 'Q':
			quote_log = optarg;
			break;
		case 'r':
			request_log = optarg;
			break;
		case 'T':
		case 'R':
			if (ntamper == TAMPER_MAX)
				die("at most %s agents tampered", "16");
			tamper_kind[ntamper] = opt == 'T' ? T_FILE : T_REPLAY;
			tamper[ntamper++] = optarg;
			break;
		case 'E':
			every = (unsigned int)num(optarg, 1, 1000000, "--tamper-every");
			break;
		case 't':
			threads = (unsigned int)num(optarg, 1, 64, "--threads");
			break;
		case 'I':
			independent = true;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			fputs(help, stderr);
			return 2;
		}
	}
	if (optind != argc || !port || !ca_out) {
		fputs(help, stderr);
		return 2;
	}
	if (strlen(prefix) + 8 >= VG_API_ID_MAX || !vg_api_id_ok(prefix, strlen(prefix)))
		die("--prefix %s: [A-Za-z0-9._-], shorter", prefix);
	clock_gettime(CLOCK_MONOTONIC, &s.t0);
	if (lists_make(&s) < 0)
		die("%s", "out of memory");
	if (policy_log && policy_log_write(&s, policy_log) < 0)
		die("--policy-log %s: cannot create it (it must not exist)", policy_log);
	if (fsim_ca_new(&ca, ca_out) < 0)
		die("--ek-ca-out %s: cannot create it (it must not exist)", ca_out);
	if (quote_log) {
		s.qlog = fopen(quote_log, "wx");
		if (!s.qlog)
			die("--quote-log %s: cannot create it (it must not exist)", quote_log);
		setvbuf(s.qlog, NULL, _IOFBF, 1u << 20);
	}
	if (request_log) {
		s.rlog = fopen(request_log, "wx");
		if (!s.rlog)
			die("--request-log %s: cannot create it (it must not exist)", request_log);
	}
	pthread_mutex_init(&s.qlog_lock, NULL);
	/* every agent's keys: 2N RSA-2048 keys */
	clock_gettime(CLOCK_MONOTONIC, &ta);
	if (!independent && fsim_keypool_new(2 * s.n, 2, &kp) < 0)
		die("%s", "prime pool: OpenSSL failed");
	s.ag = calloc(s.n, sizeof(*s.ag));
	for (s.tab_size = 16; s.tab_size < 2 * s.n; s.tab_size *= 2)
		;
	s.tab = calloc(s.tab_size, sizeof(*s.tab));
	if (!s.ag || !s.tab)
		die("%s", "out of memory");
	for (size_t i = 0; i < s.n; i++) {
		struct sagent *a = &s.ag[i];
		EVP_PKEY *ek = NULL, *ak = NULL;
		size_t h;

		snprintf(a->id, sizeof(a->id), "%s%05zu", prefix, i);
		if (independent) {
			ek = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
			ak = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
		} else {
			fsim_keypool_key(kp, 2 * i, &ek);
			fsim_keypool_key(kp, 2 * i + 1, &ak);
		}
		if (!ek || !ak || fsim_tpm_init(&a->tpm, ek, ak, &ca, 1000 + i) < 0)
			die("%s: keys or EK certificate: OpenSSL failed", a->id);
		pthread_mutex_init(&a->lock, NULL);
		a->tamper_from = UINT64_MAX;
		if (every && i % every == every - 1)
			a->tamper = T_FILE;
		for (h = fnv(a->id, strlen(a->id)) & (s.tab_size - 1); s.tab[h];
		     h = (h + 1) & (s.tab_size - 1))
			;
		s.tab[h] = i + 1;
	}
	fsim_keypool_free(kp);
	fsim_ca_release(&ca);
	for (unsigned int i = 0; i < ntamper; i++) {
		struct sagent *a = agent_find(&s, tamper[i], strlen(tamper[i]));

		if (!a)
			die("--tamper %s: no such agent", tamper[i]);
		a->tamper = tamper_kind[i];
	}
	clock_gettime(CLOCK_MONOTONIC, &tb);
	/* signals to the main thread only, before MHD's threads exist */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
			     0, NULL, NULL, handler, &s,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			     MHD_OPTION_THREAD_POOL_SIZE, threads,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
			     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
			     MHD_OPTION_CONNECTION_LIMIT, 16384u,
			     MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "vigil-fleet-sim: cannot listen on 127.0.0.1:%u\n", port);
		return 2;
	}
	printf("vigil-fleet-sim: %zu agents at http://127.0.0.1:%u/a/%s%05u .. %s%05zu "
	       "(keys and EK certificates in %.1f s)\n", s.n, port, prefix, 0u, prefix, s.n - 1,
	       (double)(tb.tv_sec - ta.tv_sec) + (double)(tb.tv_nsec - ta.tv_nsec) / 1e9);
	fflush(stdout);
	while (sigwait(&sigs, &sig) != 0)
		;
	MHD_stop_daemon(d);
	if (s.qlog)
		fclose(s.qlog);
	if (s.rlog)
		fclose(s.rlog);
	for (size_t i = 0; i < s.n; i++)
		fsim_tpm_release(&s.ag[i].tpm);
	free(s.ag);
	free(s.tab);
	free(s.file);
	free(s.changed);
	return 0;
}
