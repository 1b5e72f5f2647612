// SPDX-License-Identifier: MIT
/*
 * fleet_sim_host.c - the host side of vigil-fleet-sim's agents: what each
 * agent's host measures (a list that grows by --entries files before every
 * quote, extended into its PCR 10; entry j is file (j-1) mod --files, so a
 * list is computed, not stored) and the answers vigil-agent gives
 * (attest_api.h's builders): identity, the ActivateCredential proof, the
 * quote, the list from an offset. The same bytes whether the verifier
 * pulls them (fleet_sim.c's server) or the agent pushes them
 * (fleet_sim_push.c). Tampering (--tamper, --tamper-replay, and the
 * agents set tampering by SIGUSR1): from the next quote after it is set
 * (or the second quote), changed contents or a list that disagrees with
 * the PCR; the quote log marks the quotes that cover a tampered entry.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "vigil/attest.h"

#include "fleet_sim.h"

#define PATH_FMT "/usr/lib/fleet-sim/file-%06u"	/* every path the same length */

int64_t fsim_wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t fsim_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* TPM clock: ms since the simulator started */
static uint64_t sim_ms(const struct sim *s)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)((t.tv_sec - s->t0.tv_sec) * 1000 + (t.tv_nsec - s->t0.tv_nsec) / 1000000);
}

uint64_t fsim_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

struct sagent *fsim_agent_find(const struct sim *s, const char *id, size_t len)
{
	for (size_t h = fsim_hash(id, len) & (s->tab_size - 1);; h = (h + 1) & (s->tab_size - 1)) {
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

int fsim_lists_make(struct sim *s)
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

int fsim_policy_log_write(const struct sim *s, const char *path)
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

void fsim_qlog_write(struct sim *s, const char *id, const char *peer, bool tampered)
{
	int64_t now = fsim_wall_ms();

	if (!s->qlog)
		return;
	pthread_mutex_lock(&s->qlog_lock);
	fprintf(s->qlog, "%s %" PRId64 " %s%s\n", id, now, peer, tampered ? " tampered" : "");
	/* a tampered quote at once: bench/fleet times it against the verifier's verdict */
	if (tampered || now - s->qlog_flushed >= 1000) {
		fflush(s->qlog);
		s->qlog_flushed = now;
	}
	pthread_mutex_unlock(&s->qlog_lock);
}

int fsim_identity(const struct sagent *a, char **ret)
{
	struct vg_api_identity *idn = calloc(1, sizeof(*idn));
	int r;

	if (!idn)
		return -ENOMEM;
	snprintf(idn->id, sizeof(idn->id), "%s", a->id);
	memcpy(idn->ek_pub, a->tpm.ek_pub, a->tpm.ek_pub_len);
	idn->ek_pub_len = a->tpm.ek_pub_len;
	memcpy(idn->ek_cert, a->tpm.ek_cert, a->tpm.ek_cert_len);
	idn->ek_cert_len = a->tpm.ek_cert_len;
	memcpy(idn->ak_pub, a->tpm.ak_pub, a->tpm.ak_pub_len);
	idn->ak_pub_len = a->tpm.ak_pub_len;
	r = vg_api_identity_build(idn, ret);
	free(idn);
	return r < 0 ? r : 0;
}

int fsim_activate(struct sagent *a, const char *body, size_t len, char **ret, char *err,
		  size_t errlen)
{
	struct vg_api_activate *act = calloc(1, sizeof(*act));
	struct vg_diag d = { 0 };
	uint8_t secret[64], proof[32];
	unsigned int ml = 0;
	int r;

	if (!act)
		return -ENOMEM;
	r = vg_api_activate_parse((const uint8_t *)(body ? body : ""), len, act, &d);
	if (r < 0) {
		snprintf(err, errlen, "%s", d.msg);
		r = -EBADMSG;
		goto out;
	}
	r = fsim_tpm_activate(&a->tpm, act->id_object, act->id_len, act->enc_secret, act->es_len,
			      secret, sizeof(secret));
	if (r < 0) {
		snprintf(err, errlen, "%s", r == -EACCES ? "credential is not for this TPM's EK and AK" :
			 "ActivateCredential failed");
		goto out;
	}
	/* the proof vigil-agent's TPM process gives: HMAC-SHA256(secret, agent id) */
	HMAC(EVP_sha256(), secret, r, (const uint8_t *)a->id, strlen(a->id), proof, &ml);
	r = vg_api_proof_build(proof, ret) < 0 ? -ENOMEM : 0;
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	free(act);
	return r;
}

int fsim_quote(struct sim *s, struct sagent *a, const struct vg_api_quote_req *qr, char **ret,
	       bool *ret_tampered)
{
	struct vg_api_quote *q;
	uint8_t pcrs[24][32];
	uint64_t now;
	bool tampered;
	int r;

	if (qr->bank != VG_HASH_SHA256)
		return -EOPNOTSUPP;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	memset(pcrs, 0, sizeof(pcrs));
	pthread_mutex_lock(&a->lock);
	/* tampering starts with the second quote, or the next one after it was set */
	if (a->quotes >= 1 && a->tamper != T_NONE && a->tamper_from == UINT64_MAX)
		a->tamper_from = a->entries;
	/* the host ran: K more files measured, extended, then quoted */
	for (unsigned int k = 0; k < s->per_quote || a->entries == 0; k++) {
		const struct entry *served, *e = entry_of(s, a, a->entries, &served);
		uint8_t buf[64];

		memcpy(buf, a->pcr10, 32);
		memcpy(buf + 32, e->ext, 32);
		SHA256(buf, 64, a->pcr10);
		a->entries++;
	}
	tampered = a->tamper != T_NONE && a->entries > a->tamper_from;
	now = sim_ms(s);
	a->clock = a->clock + 1 > now ? a->clock + 1 : now;
	a->quotes++;
	memcpy(pcrs[10], a->pcr10, 32);
	q->attest_len = sizeof(q->attest);
	q->sig_len = sizeof(q->sig);
	r = fsim_tpm_quote(&a->tpm, qr->nonce, qr->nonce_len, qr->mask, (const uint8_t (*)[32])pcrs,
			   a->clock, q->attest, &q->attest_len, q->sig, &q->sig_len);
	pthread_mutex_unlock(&a->lock);
	if (r < 0) {
		r = -EIO;
		goto out;
	}
	q->bank = VG_HASH_SHA256;
	for (unsigned int i = 0; i < VG_PCR_COUNT && i < 24; i++) {
		if (!(qr->mask & (1u << i)))
			continue;
		q->pcr[i].algo = VG_HASH_SHA256;
		q->pcr[i].len = 32;
		memcpy(q->pcr[i].bytes, pcrs[i], 32);
		q->have |= 1u << i;
	}
	r = vg_api_quote_build(q, ret) < 0 ? -ENOMEM : 0;
	if (r == 0)
		*ret_tampered = tampered;
out:
	free(q);
	return r;
}

int fsim_log(const struct sim *s, struct sagent *a, uint64_t off, uint8_t **ret, size_t *ret_len,
	     uint64_t *ret_size)
{
	uint64_t n, size, j, skip;
	uint8_t *buf, *p;

	pthread_mutex_lock(&a->lock);
	n = a->entries;
	size = list_size(s, n);
	*ret_size = size;
	if (off >= size) {
		pthread_mutex_unlock(&a->lock);
		*ret = NULL;
		*ret_len = 0;
		return 0;
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
		return -ENOMEM;
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
	*ret = buf;
	*ret_len = (size_t)(p - buf);
	return 0;
}
