// SPDX-License-Identifier: MIT
/*
 * attest_log.c - incremental verification of an agent's measurement list
 * against a quoted PCR, and one whole round of evidence.
 *
 * The verifier keeps, per agent, how many entries (and bytes) of the list
 * it has verified and the PCR value they replay to. Each round it gets the
 * entries after that point, replays them from the saved value (imalog.h
 * does the template digests) and stops counting at the first prefix whose
 * replay equals the quoted PCR: the quote may lag the log, because the
 * writer appends before it extends. Entries after the match are judged by
 * the policy but counted next time. A quote that keeps lagging while new
 * entries arrive is refused (Keylime's quote_progress rule).
 *
 * A round (vg_attest_evidence_check) is two steps that a verifier may also
 * call apart: the quote, verified and decoded once, decides whether the
 * agent rebooted and where the list must start; then the boot log and the
 * list are judged and the state is committed, only on success.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <stdlib.h>

#include "attest_policy.h"
#include "vigil/attest.h"
#include "vigil/attest_boot.h"
#include "vigil/keyring.h"
#include "vigil/attest_mbpolicy.h"

void vg_attest_logstate_init(struct vg_attest_logstate *st, unsigned int bank)
{
	memset(st, 0, sizeof(*st));
	st->pcr.algo = (uint8_t)bank;
	st->pcr.len = (uint8_t)vg_hash_size(bank);
}

static bool dig_eq(const struct vg_digest *a, const struct vg_digest *b)
{
	return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/*
 * A failure more for @v (may be NULL): the list keeps the first ones,
 * the count all. Return: 1, -ENOMEM.
 */
static int add_fail(struct vg_attest_verdict *v, const struct vg_attest_verdict *f)
{
	return v ? vg_attest_verdict_add(v, f) : 1;
}

int vg_attest_log_check(const struct vg_refpolicy *pol, const uint8_t *log, size_t len,
			unsigned int log_algo, unsigned int pcr, const struct vg_digest *quoted,
			struct vg_attest_logstate *st, struct vg_attest_verdict *v)
{
	unsigned int bank = st->pcr.algo;
	struct vg_imalog_replay *rp = NULL;
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };
	struct vg_digest cur = st->pcr, m_pcr = st->pcr;
	/* one entry's judgement; its fields are written by the policy check itself */
	struct vg_attest_verdict f;
	uint64_t n = 0, m_n = 0, m_off = 0;
	bool matched, failed = false;
	/* keys learned: the state's, then this round's (a copy made on the first new one) */
	struct vg_keyring *kr = NULL;
	struct vg_attest_learned *nk = NULL;
	uint32_t m_klen = st->keys.len;
	struct vg__learn learn;
	int r;

	if (pcr >= VG_PCR_COUNT || !vg_hash_size(bank))
		return -EINVAL;
	/* @v is this check's: an earlier verdict in it goes, as a failure overwrote it before */
	if (v && v->fail != VG_AF_NONE)
		vg_attest_verdict_release(v);
	r = vg_imalog_replay_new(1u << bank, 0, &rp, &d);
	if (r < 0)
		return r;
	r = vg_imalog_replay_set(rp, pcr, &st->pcr);
	if (r < 0)
		goto out;
	if (pol && st->keys.len) {
		r = vg__attest_learned_keyring(&st->keys, &kr);
		if (r < 0)
			goto out;
	}
	f.fail = VG_AF_NONE;
	f.failures = 0;
	f.nmore = 0;
	f.more = NULL;
	matched = quoted && dig_eq(&st->pcr, quoted);
	vg_imalog_parser_init(&ps, log, len, log_algo);
	for (;;) {
		uint64_t idx = st->entries + n;

		r = vg_imalog_parser_next(&ps, &e, &d);
		if (r == 0 || r == -EMSGSIZE)	/* a torn tail is still being written */
			break;
		if (r < 0) {
			/* nothing after this entry can be read: the round ends here */
			vg_attest_verdict_init(&f);
			vg_attest_fail(&f, VG_AF_LOG_MALFORMED, "entry %" PRIu64 ": %s", idx, d.msg);
			f.entry = (int64_t)idx;
			r = add_fail(v, &f);
			goto out;
		}
		r = vg_imalog_replay_entry(rp, &e, idx, &d);
		if (r == -EILSEQ || r == -EBADMSG) {
			vg_attest_verdict_init(&f);
			/* name the file if the entry says one */
			if (pol && v)
				vg_refpolicy_check_entry(pol, &e, idx, &f);
			f.failures = 0;
			vg_attest_fail(&f, r == -EILSEQ ? VG_AF_LOG_ENTRY : VG_AF_LOG_MALFORMED,
				       "entry %" PRIu64 " was altered: %s", idx, d.msg);
			f.entry = (int64_t)idx;
			r = add_fail(v, &f);
			goto out;
		}
		if (r < 0)
			goto out;
		/* every entry is judged: a round reports all its failing entries */
		if (pol && vg__refpolicy_judge(pol, &e, idx, kr, &learn, v ? &f : NULL)) {
			failed = true;
			r = add_fail(v, &f);
			if (r < 0)
				goto out;
			f.fail = VG_AF_NONE;
			f.failures = 0;
		} else if (pol && learn.len) {
			/* a key for the entries after this one (Keylime's order) */
			if (!nk) {
				nk = malloc(sizeof(*nk));
				if (!nk) {
					r = -ENOMEM;
					goto out;
				}
				*nk = st->keys;
			}
			if (!kr && vg_keyring_new(&kr) < 0) {
				r = -ENOMEM;
				goto out;
			}
			if (vg__attest_learned_add(nk, learn.buf, learn.len) == 1)
				(void)vg_keyring_add_mem(kr, learn.buf, learn.len, "learned from the log",
							 NULL);
		}
		n++;
		if (e.pcr != pcr)
			continue;
		if (quoted && !matched) {
			r = vg_imalog_replay_get(rp, pcr, bank, &cur);
			if (r < 0)
				goto out;
			if (dig_eq(&cur, quoted)) {
				matched = true;
				m_n = n;
				m_off = ps.off;
				m_pcr = cur;
				m_klen = nk ? nk->len : st->keys.len;
			}
		}
	}
	if (quoted && !matched) {
		char want[2 * VG_HASH_MAX_DIGEST + 1], got[2 * VG_HASH_MAX_DIGEST + 1];

		r = vg_imalog_replay_get(rp, pcr, bank, &cur);
		if (r < 0)
			goto out;
		vg_hex_encode(quoted->bytes, quoted->len, want);
		vg_hex_encode(cur.bytes, cur.len, got);
		vg_attest_verdict_init(&f);
		vg_attest_fail(&f, VG_AF_LOG_PCR, "entries %" PRIu64 "..%" PRIu64 " replay PCR %u "
			       "(%s) to %.16s..., never to the quoted %.16s...: the list is "
			       "truncated or altered", st->entries, st->entries + n, pcr,
			       vg_hash_name(bank), got, want);
		r = add_fail(v, &f);
		goto out;
	}
	if (!quoted) {
		m_n = n;
		m_off = ps.off;
		m_klen = nk ? nk->len : st->keys.len;
		r = vg_imalog_replay_get(rp, pcr, bank, &m_pcr);
		if (r < 0)
			m_pcr = st->pcr;
	}
	if (quoted && st->lag > 0 && n > 0 && m_n < st->lag) {
		vg_attest_verdict_init(&f);
		vg_attest_fail(&f, VG_AF_LOG_PROGRESS, "the quote covers %" PRIu64 " new entries, "
			       "the previous round left %" PRIu64 " unquoted: it does not catch up",
			       m_n, st->lag);
		r = add_fail(v, &f);
		goto out;
	}
	if (failed) {
		r = 1;
		goto out;
	}
	st->entries += m_n;
	st->offset += m_off;
	st->pcr = m_pcr;
	st->lag = n - m_n;
	if (nk && m_klen > st->keys.len) {
		memcpy(st->keys.buf + st->keys.len, nk->buf + st->keys.len, m_klen - st->keys.len);
		st->keys.len = m_klen;
	}
	r = 0;
out:
	free(nk);
	vg_keyring_free(kr);
	if (r < 0 && failed && v)
		vg_attest_verdict_release(v);	/* an operational error, not a judgement */
	vg_imalog_replay_free(rp);
	return r;
}

int vg_attest_evidence_quote(const struct vg_attest_ak *ak, const struct vg_attest_request *req,
			     const struct vg_attest_evidence *ev, const struct vg_attest_state *st,
			     struct vg_attest_quoted *ret, struct vg_attest_verdict *v)
{
	struct vg_attest_quoted q = { .from = st->clock, .clock = st->clock };
	int r;

	if (req->bank >= VG_HASH__LAST || !vg_hash_size(req->bank))
		return -EINVAL;
	r = vg_attest_quote_verify(ak, ev->attest, ev->attest_len, ev->sig, ev->sig_len, req,
				   &ev->pcrs, &q.quote, v);
	if (r)
		return r;
	r = vg_attest_clock_check(&q.clock, &q.quote, &q.reboot, v);
	if (r)
		return r;
	q.restart_log = q.reboot || st->log.pcr.algo != req->bank;
	q.log_offset = q.restart_log ? 0 : st->log.offset;
	*ret = q;
	return 0;
}

int vg_attest_evidence_judge(const struct vg_refpolicy *pol, const struct vg_attest_request *req,
			     const struct vg_attest_evidence *ev, const struct vg_attest_quoted *q,
			     struct vg_attest_state *st, struct vg_attest_verdict *v)
{
	struct vg_attest_logstate ls = st->log;
	int r;

	if (q->from.valid != st->clock.valid || q->from.clock != st->clock.clock ||
	    q->from.reset_count != st->clock.reset_count ||
	    q->from.restart_count != st->clock.restart_count)
		return -EINVAL;
	if (q->restart_log)
		vg_attest_logstate_init(&ls, req->bank);
	r = vg_attest_boot_check(ev->boot, pol, req, &ev->pcrs, v);
	if (r)
		return r;
	/* events to judge and no log to judge them in: hiding the log must not pass */
	if (!ev->boot && vg_refpolicy_mbpolicy(pol))
		return vg_attest_fail(v, VG_AF_BOOT_EVENT, "no boot event log: the policy's "
				      "measured_boot section judges its events");
	if (req->mask & (1u << VG_ATTEST_PCR_IMA)) {
		if (ev->log_offset != ls.offset)
			return vg_attest_fail(v, VG_AF_LOG_PCR, "the list sent starts at byte %" PRIu64
					      ", the verified part ends at %" PRIu64,
					      ev->log_offset, ls.offset);
		if (ev->boot && ls.offset == 0) {
			r = vg_attest_boot_aggregate_check(ev->boot, ev->log, ev->log_len,
							   ev->log_algo, v);
			if (r)
				return r;
		}
		r = vg_attest_log_check(pol, ev->log, ev->log_len, ev->log_algo, VG_ATTEST_PCR_IMA,
					&ev->pcrs.v[req->bank][VG_ATTEST_PCR_IMA], &ls, v);
		if (r < 0)
			return r;
	}
	/* the boot log's events, proven by the PCRs just compared */
	if (ev->boot && ev->boot_events && ev->boot_events->fail != VG_AF_NONE) {
		size_t listed = vg_attest_verdict_listed(ev->boot_events);

		for (size_t i = 0; i < listed; i++) {
			int a = vg_attest_verdict_add(v, vg_attest_verdict_nth(ev->boot_events, i));

			if (a < 0)
				return a;
		}
		if (v)	/* those past the bound: counted, as the judge counted them */
			v->failures += vg_attest_verdict_count(ev->boot_events) - listed;
		r = 1;
	}
	if (r)
		return r;
	/* announcements of the next boot, from the part of the list just attested */
	if ((req->mask & (1u << VG_ATTEST_PCR_IMA)) && ev->log) {
		uint64_t from = q->restart_log ? 0 : st->log.entries;

		if (ls.entries > from)
			(void)vg_attest_announce_collect(ev->log, ev->log_len, ev->log_algo,
							 ls.entries - from, q->clock.reset_count,
							 &st->ann);
	}
	st->clock = q->clock;
	st->log = ls;
	return 0;
}

int vg_attest_evidence_check(const struct vg_attest_ak *ak, const struct vg_refpolicy *pol,
			     const struct vg_attest_request *req,
			     const struct vg_attest_evidence *ev, struct vg_attest_state *st,
			     bool *reboot, struct vg_attest_verdict *v)
{
	struct vg_attest_quoted q;
	int r;

	*reboot = false;
	r = vg_attest_evidence_quote(ak, req, ev, st, &q, v);
	if (r)
		return r;
	*reboot = q.reboot;
	return vg_attest_evidence_judge(pol, req, ev, &q, st, v);
}
