// SPDX-License-Identifier: MIT
/*
 * fuzz_eventlog.c - the TCG boot event log decoder (vg_eventlog_parse) and
 * its use by the verifier (vg_attest_boot_load), on bytes an agent sends.
 *
 * Properties of every log that parses:
 *  - encode(parse(x)) == x, byte for byte (nothing skipped or misread);
 *  - the records tile the buffer: the first at 0, each starting where the
 *    previous ended, the last ending at the end; every digest and event
 *    data inside its record; digest sizes those of the Spec ID event;
 *  - a prefix cut at a record boundary parses to exactly those records;
 *  - replay is deterministic, touches only PCRs that records extend (or
 *    PCR 0 for StartupLocality), and every bank replays;
 *  - vg_attest_boot_load accepts exactly the logs that parse and have a
 *    sha256 bank, and then holds that replay's PCRs 0-9.
 * A log that does not parse is refused by vg_attest_boot_load too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/attest_boot.h"
#include "vigil/eventlog.h"

static void check_layout(const struct vg_eventlog *log, const uint8_t *data, size_t size)
{
	size_t at = 0;

	FUZZ_CHECK(log->nevents >= 1 && log->len == size && memcmp(log->buf, data, size) == 0);
	FUZZ_CHECK(log->nalgs >= 1 && log->nalgs <= VG_EVENTLOG_ALGS_MAX);
	for (size_t i = 0; i < log->nevents; i++) {
		const struct vg_eventlog_event *e = &log->events[i];

		FUZZ_CHECK(e->offset == at && e->size > 0 && e->size <= size - at);
		FUZZ_CHECK(e->data_off >= e->offset && e->data_off + e->data_len == e->offset + e->size);
		FUZZ_CHECK(e->ndigests <= log->nalgs && e->first_digest + e->ndigests <= log->ndigests);
		for (uint32_t k = 0; k < e->ndigests; k++) {
			const struct vg_eventlog_digest *d = &log->digests[e->first_digest + k];
			const struct vg_eventlog_alg *a = vg_eventlog_alg(log, d->tpm_alg);

			FUZZ_CHECK(i == 0 || (a && a->size == d->len));
			FUZZ_CHECK(d->off >= e->offset && d->off + d->len <= e->data_off);
		}
		if (e->type != VG_EV_NO_ACTION)
			FUZZ_CHECK(e->pcr < VG_PCR_COUNT);
		at += e->size;
	}
	FUZZ_CHECK(at == size);
}

static void check_replay(const struct vg_eventlog *log)
{
	static struct vg_eventlog_pcrs a, b;
	uint32_t extended = log->startup_locality >= 0 ? 1u : 0;
	uint32_t banks = vg_eventlog_banks(log);

	for (size_t i = 0; i < log->nevents; i++)
		if (log->events[i].type != VG_EV_NO_ACTION)
			extended |= 1u << log->events[i].pcr;
	for (unsigned int algo = 0; algo < VG_HASH__LAST; algo++) {
		int r1, r2;

		if (!(banks & (1u << algo))) {
			FUZZ_CHECK(vg_eventlog_replay(log, algo, &a, NULL) == -ENOENT);
			continue;
		}
		if (!vg_hash_available(algo))
			continue;
		r1 = vg_eventlog_replay(log, algo, &a, NULL);
		r2 = vg_eventlog_replay(log, algo, &b, NULL);
		FUZZ_CHECK(r1 == 0 && r2 == 0);
		FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
		FUZZ_CHECK((a.touched & ~extended) == 0);
	}
}

static void check_prefix(const struct vg_eventlog *log)
{
	size_t k = log->nevents / 2;
	const struct vg_eventlog_event *e = &log->events[k];
	struct vg_eventlog *p = NULL;
	int r = vg_eventlog_parse(log->buf, e->offset + e->size, &p, NULL);

	FUZZ_CHECK(r == 0 || r == -ENOMEM);
	if (r < 0)
		return;
	FUZZ_CHECK(p->nevents == k + 1 && p->agile == log->agile && p->nalgs == log->nalgs);
	for (size_t i = 0; i <= k; i++)
		FUZZ_CHECK(memcmp(&p->events[i], &log->events[i], sizeof(p->events[i])) == 0);
	vg_eventlog_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vg_attest_boot boot;
	struct vg_attest_verdict v;
	struct vg_eventlog *log = NULL;
	uint8_t *enc = NULL;
	int r, rb;
	long n;

	r = vg_eventlog_parse(data, size, &log, NULL);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
	vg_attest_verdict_init(&v);
	rb = vg_attest_boot_load(data, size, VG_HASH_SHA256, &boot, &v);
	if (r < 0) {
		FUZZ_CHECK(rb == 1 || rb == -ENOMEM);
		if (rb == 1)
			FUZZ_CHECK(v.fail == VG_AF_BOOT_MALFORMED);
		return 0;
	}
	check_layout(log, data, size);
	n = vg_eventlog_encode(log, &enc);
	FUZZ_CHECK(n == (long)size || n == -ENOMEM);
	if (n >= 0)
		FUZZ_CHECK(memcmp(enc, data, size) == 0);
	free(enc);
	check_replay(log);
	check_prefix(log);
	if (vg_eventlog_banks(log) & (1u << VG_HASH_SHA256)) {
		struct vg_eventlog_pcrs p;

		FUZZ_CHECK(rb == 0 || rb == -ENOMEM);
		if (rb == 0 && vg_eventlog_replay(log, VG_HASH_SHA256, &p, NULL) == 0)
			FUZZ_CHECK(memcmp(boot.pcr, p.pcr, sizeof(boot.pcr)) == 0 &&
				   boot.events == log->nevents);
	} else {
		FUZZ_CHECK(rb == 1 && v.fail == VG_AF_BOOT_MALFORMED);
	}
	vg_eventlog_free(log);
	return 0;
}
