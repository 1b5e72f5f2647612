// SPDX-License-Identifier: MIT
/*
 * attest_boot.c - measured boot for the verifier (attest_boot.h): an
 * agent's boot event log replayed once per boot into a small record, the
 * quoted boot PCRs compared with it every round, pinned PCR values of the
 * reference policy, and IMA's boot_aggregate recomputed from the log.
 *
 * Not here: fetching and caching (the verifier keys the record on the
 * quote's resetCount/restartCount), policies on individual events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/attest_boot.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/imalog.h"

static const uint8_t agg_algos[VG_ATTEST_BOOT_AGGS] = {
	VG_HASH_SHA1, VG_HASH_SHA256, VG_HASH_SHA384, VG_HASH_SHA512
};

static void hexd(const struct vg_digest *d, char *out)
{
	int k = sprintf(out, "%s:", vg_hash_name(d->algo) ? vg_hash_name(d->algo) : "?");

	vg_hex_encode(d->bytes, d->len, out + k);
}

int vg_attest_boot_load(const uint8_t *buf, size_t len, unsigned int bank,
			struct vg_attest_boot *ret, struct vg_attest_verdict *v)
{
	struct vg_attest_boot b = { .bank = bank };
	struct vg_eventlog *log = NULL;
	struct vg_eventlog_pcrs *p = NULL;
	struct vg_diag d = { 0 };
	int r;

	r = vg_eventlog_parse(buf, len, &log, &d);
	if (r == -EBADMSG)
		return vg_attest_fail(v, VG_AF_BOOT_MALFORMED, "boot log: %s", d.msg);
	if (r < 0)
		return r;
	p = malloc(sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	b.events = (uint32_t)log->nevents;
	r = vg_eventlog_replay(log, bank, p, &d);
	if (r == -ENOENT || r == -EOPNOTSUPP) {
		r = vg_attest_fail(v, VG_AF_BOOT_MALFORMED, "boot log: %s (the quoted bank)", d.msg);
		goto out;
	}
	if (r < 0)
		goto out;
	memcpy(b.pcr, p->pcr, sizeof(b.pcr));
	b.mok = p->pcr[VG_ATTEST_MOK_PCR];
	b.touched = p->touched & (VG_ATTEST_BOOT_MASK | 1u << VG_ATTEST_MOK_PCR);
	for (unsigned int i = 0; i < VG_ATTEST_BOOT_AGGS; i++) {
		unsigned int a = agg_algos[i];

		if (!(vg_eventlog_banks(log) & (1u << a)))
			continue;
		r = vg_eventlog_replay(log, a, p, &d);
		if (r == 0)
			r = vg_imalog_boot_aggregate(a, p->pcr, &b.aggregate[i], &d);
		/* SHA-1 and SHA-2 are always there: a failure is memory, not a missing bank */
		if (r < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	*ret = b;
	r = 0;
out:
	free(p);
	vg_eventlog_free(log);
	return r;
}

/* Quoted PCR @i must be @want, the boot log's replay. Return: 0, 1 (@v: boot.pcr_mismatch). */
static int replayed(const struct vg_attest_boot *boot, const struct vg_attest_request *req,
		    const struct vg_pcr_values *quoted, unsigned int i, const struct vg_digest *want,
		    const char *what, struct vg_attest_verdict *v)
{
	const struct vg_digest *qv = &quoted->v[req->bank][i];
	char q[2 * VG_HASH_MAX_DIGEST + 16], w[2 * VG_HASH_MAX_DIGEST + 16];

	if (!(req->mask & (1u << i)) || !(quoted->have[req->bank] & (1u << i)))
		return vg_attest_fail(v, VG_AF_BOOT_PCR, "PCR %u is not quoted: %s cannot be checked",
				      i, what);
	if (qv->len == want->len && memcmp(qv->bytes, want->bytes, qv->len) == 0)
		return 0;
	hexd(qv, q);
	hexd(want, w);
	if (v)
		snprintf(v->digest, sizeof(v->digest), "%s", q);
	return vg_attest_fail(v, VG_AF_BOOT_PCR, "PCR %u: the quote has %s, the boot log (%" PRIu32
			      " events) replays to %s", i, q, boot->events, w);
}

uint32_t vg_attest_boot_mask(const struct vg_refpolicy *pol)
{
	return VG_ATTEST_BOOT_MASK | (vg_refpolicy_mbpolicy(pol) ? 1u << VG_ATTEST_MOK_PCR : 0);
}

int vg_attest_boot_check(const struct vg_attest_boot *boot, const struct vg_refpolicy *pol,
			 const struct vg_attest_request *req, const struct vg_pcr_values *quoted,
			 struct vg_attest_verdict *v)
{
	uint32_t pins = vg_refpolicy_boot_mask(pol);
	char q[2 * VG_HASH_MAX_DIGEST + 16];
	int failed = 0;

	if (boot) {
		if (boot->bank != req->bank)
			return vg_attest_fail(v, VG_AF_BOOT_PCR, "boot log replayed in %s, the quote is "
					      "%s", vg_hash_name(boot->bank), vg_hash_name(req->bank));
		for (unsigned int i = 0; i < VG_ATTEST_BOOT_PCRS; i++)
			if (replayed(boot, req, quoted, i, &boot->pcr[i], "the boot log", v))
				return 1;
		/* the MOK lists that a measured_boot section judges: proven, not as the log says */
		if ((vg_attest_boot_mask(pol) & 1u << VG_ATTEST_MOK_PCR) &&
		    replayed(boot, req, quoted, VG_ATTEST_MOK_PCR, &boot->mok,
			     "the MOK lists the measured_boot section judges", v))
			return 1;
	}
	/* every pinned PCR that differs is a failure of its own, as Keylime lists them */
	for (unsigned int i = 0; i < VG_PCR_COUNT; i++) {
		const struct vg_digest *qv = &quoted->v[req->bank][i];
		struct vg_attest_verdict f;
		int r;

		if (!(pins & (1u << i)))
			continue;
		vg_attest_verdict_init(&f);
		if (!(req->mask & (1u << i)) || !(quoted->have[req->bank] & (1u << i))) {
			vg_attest_fail(&f, VG_AF_BOOT_VALUE, "PCR %u is pinned by the policy but not "
				       "quoted", i);
		} else {
			r = vg_refpolicy_boot_allows(pol, i, qv);
			if (r == 1)
				continue;
			hexd(qv, q);
			snprintf(f.digest, sizeof(f.digest), "%s", q);
			if (r == -ENOENT)
				vg_attest_fail(&f, VG_AF_BOOT_VALUE, "PCR %u: the policy pins no %s "
					       "value (the quote has %s)", i, vg_hash_name(req->bank), q);
			else
				vg_attest_fail(&f, VG_AF_BOOT_VALUE, "PCR %u: %s is not a value the "
					       "policy allows", i, q);
		}
		if (vg_attest_verdict_add(v, &f) < 0)
			return -ENOMEM;
		failed = 1;
	}
	return failed;
}

int vg_attest_boot_aggregate_check(const struct vg_attest_boot *boot, const uint8_t *log,
				   size_t len, unsigned int log_algo, struct vg_attest_verdict *v)
{
	const struct vg_imalog_field *fn = NULL, *fd = NULL;
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };
	const struct vg_digest *want = NULL;
	char have[2 * VG_HASH_MAX_DIGEST + 16], w[2 * VG_HASH_MAX_DIGEST + 16];
	const uint8_t *dig;
	unsigned int algo;
	size_t dl;
	int r;

	vg_imalog_parser_init(&ps, log, len, log_algo);
	r = vg_imalog_parser_next(&ps, &e, &d);
	if (r == 0)
		return 0;
	if (r < 0)	/* the list check reports it, with its own failure type */
		return 0;
	if (v)
		v->entry = 0;
	for (unsigned int i = 0; i < e.tmpl.nfields; i++) {
		if (e.f[i].id == VG_IMAF_N_NG || (e.f[i].id == VG_IMAF_N && !fn))
			fn = &e.f[i];
		if (e.f[i].id == VG_IMAF_D_NG || e.f[i].id == VG_IMAF_D_NGV2 ||
		    (e.f[i].id == VG_IMAF_D && !fd))
			fd = &e.f[i];
	}
	if (!fn || !fd || fn->len < 14 || memcmp(fn->data, "boot_aggregate", 14) != 0 ||
	    (fn->len > 14 && (fn->len != 15 || fn->data[14] != 0)))
		return vg_attest_fail(v, VG_AF_BOOT_AGG, "entry 0 of the measurement list is not "
				      "boot_aggregate");
	if (v)
		snprintf(v->path, sizeof(v->path), "boot_aggregate");
	if (vg_imalog_field_digest(fd, &algo, &dig, &dl, &d) < 0)
		return vg_attest_fail(v, VG_AF_BOOT_AGG, "boot_aggregate: %s", d.msg);
	for (unsigned int i = 0; i < VG_ATTEST_BOOT_AGGS; i++)
		if (agg_algos[i] == algo && boot->aggregate[i].len == dl)
			want = &boot->aggregate[i];
	{
		struct vg_digest hd = { .algo = (uint8_t)algo, .len = (uint8_t)dl };

		memcpy(hd.bytes, dig, dl);
		hexd(&hd, have);
	}
	if (v)
		snprintf(v->digest, sizeof(v->digest), "%s", have);
	if (!want)
		return vg_attest_fail(v, VG_AF_BOOT_AGG, "boot_aggregate %s: the boot log has no %s "
				      "bank to compute it from", have, vg_hash_name(algo));
	if (memcmp(want->bytes, dig, dl) == 0)
		return 0;
	hexd(want, w);
	return vg_attest_fail(v, VG_AF_BOOT_AGG, "boot_aggregate %s is not %s, the one the boot "
			      "log's PCRs give (%s PCR 0-%u)", have, w, vg_hash_name(algo),
			      algo == VG_HASH_SHA1 ? 7 : 9);
}
