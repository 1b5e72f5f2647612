// SPDX-License-Identifier: MIT
/*
 * bootlog_cache.c - per agent: whether it serves a boot event log and
 * that log's replay (attest_boot.h), for the boot identified by the
 * quote's resetCount/restartCount and the registered AK. A round costs a
 * comparison of ten digests; the log is fetched again on a new boot, or
 * after a boot.* failure (so that a reactivated agent is looked at anew).
 * The events of the log are judged by the policy's measured_boot section
 * (attest_mbpolicy.h) when it is fetched, and the failures kept: a round
 * adds them to its verdict; another section (an updated policy) has the
 * log fetched and judged again.
 * Not persisted: a restarted verifier fetches each log once more. The
 * table is locked; an entry is used only by its agent's round (one at a
 * time) and is freed only at exit, so it needs no lock of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier.h"

struct vf_bootc *vf_bootc_get(struct verifier *vf, const struct vg_store_agent *a)
{
	struct vg_digest h;
	uint64_t fnv = 1469598103934665603ull;
	struct vf_bootc **pp, *c;

	if (vg_hash_buf(VG_HASH_SHA256, a->ak_pub, a->ak_pub_len, &h, NULL) < 0)
		return NULL;
	for (const char *s = a->id; *s; s++)
		fnv = (fnv ^ (uint8_t)*s) * 1099511628211ull;
	pthread_mutex_lock(&vf->bootc_lock);
	pp = &vf->bootc_tab[fnv % VF_BOOTC_BUCKETS];
	for (c = *pp; c; c = c->next)
		if (strcmp(c->id, a->id) == 0)
			break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (c) {
			snprintf(c->id, sizeof(c->id), "%s", a->id);
			c->next = *pp;
			*pp = c;
		}
	}
	pthread_mutex_unlock(&vf->bootc_lock);
	if (!c)
		return NULL;
	if (memcmp(c->ak, h.bytes, sizeof(c->ak)) != 0) {	/* new or re-registered */
		c->fetched = c->keyed = false;
		memcpy(c->ak, h.bytes, sizeof(c->ak));
	}
	return c;
}

bool vf_bootc_stale(const struct vf_bootc *c, const struct vg_refpolicy *pol)
{
	const struct vg_mbpolicy *mb = vg_refpolicy_mbpolicy(pol);

	if (!mb)
		return c->mb_on;
	return !c->mb_on || memcmp(c->mbid, vg_mbpolicy_id(mb), sizeof(c->mbid)) != 0;
}

static void mb_drop(struct vf_bootc *c)
{
	if (c->mbv) {
		vg_attest_verdict_release(c->mbv);
		free(c->mbv);
		c->mbv = NULL;
	}
	c->mb_on = false;
	free(c->raw);
	c->raw = NULL;
	c->rawlen = 0;
}

/*
 * The events of the log @buf judged by @mb, the failures kept; @refs: the
 * archive's boot references and the announcements of the boots before this
 * one (NULL: the section uses neither). Return: 0, -ENOMEM.
 */
static int mb_judge(struct vf_bootc *c, const struct vg_mbpolicy *mb, const uint8_t *buf,
		    size_t len, const struct vg_mbrefs *refs)
{
	struct vg_attest_verdict *mv = malloc(sizeof(*mv));
	int r;

	if (!mv)
		return -ENOMEM;
	vg_attest_verdict_init(mv);
	r = vg_mbpolicy_check_buf_refs(mb, buf, len, refs, mv);
	if (r < 0) {
		vg_attest_verdict_release(mv);
		free(mv);
		return r;
	}
	if (r == 0) {
		free(mv);
		mv = NULL;
	}
	c->mbv = mv;
	c->mb_on = true;
	memcpy(c->mbid, vg_mbpolicy_id(mb), sizeof(c->mbid));
	return 0;
}

int vf_bootc_fetch(struct verifier *vf, struct vf_source *src, const struct vg_store_agent *a,
		   const struct vg_refpolicy *pol, struct vf_bootc *c, struct vg_attest_verdict *v)
{
	const struct vg_mbpolicy *mb = vg_refpolicy_mbpolicy(pol);
	struct vg_attest_verdict bv;
	char err[512], said[161];
	struct http_answer b = { 0 };
	long code;
	int r;

	code = src->get(src, vf, a, "/v1/bootlog", vf->max_log, &b, err, sizeof(err));
	if (code != 200 && code != 404) {
		if (code > 0)
			http_said(&b, said, sizeof(said));
		vg_attest_fail(v, VG_AF_COMM, "boot log: %s%s", code < 0 ? err : "HTTP error: ",
			       code < 0 ? "" : said);
		free(b.p);
		return -1;
	}
	c->fetched = true;
	c->keyed = false;
	c->have = code == 200;
	c->malformed = false;
	if (c->have) {
		vg_attest_verdict_init(&bv);
		r = vg_attest_boot_load(b.p ? b.p : (const uint8_t *)"", b.len, a->bank, &c->boot, &bv);
		if (r < 0) {
			free(b.p);
			c->fetched = false;
			vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(-r));
			return -1;
		}
		if (r == 1) {
			c->malformed = true;
			snprintf(c->msg, sizeof(c->msg), "%s", bv.msg);
		}
	}
	mb_drop(c);
	if (c->have && !c->malformed && mb && vg_mbpolicy_uses_refs(mb)) {
		/* judged by vf_bootc_boot, once the quote says which boot this is */
		memcpy(c->mbid, vg_mbpolicy_id(mb), sizeof(c->mbid));
		c->raw = b.p;
		c->rawlen = b.len;
		return 0;
	}
	if (c->have && !c->malformed && mb && mb_judge(c, mb, b.p ? b.p : (const uint8_t *)"",
						      b.len, NULL) < 0) {
		free(b.p);
		c->fetched = false;
		vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(ENOMEM));
		return -1;
	}
	free(b.p);
	return 0;
}

int vf_bootc_boot(struct verifier *vf, struct vf_source *src, const struct vg_store_agent *a,
		  const struct vg_refpolicy *pol, struct vf_bootc *c, const struct vg_tpms_attest *q,
		  struct vg_attest_verdict *v)
{
	/* another boot (or resume): its log, replayed once */
	if (c->keyed && (q->reset_count != c->reset || q->restart_count != c->restart) &&
	    vf_bootc_fetch(vf, src, a, pol, c, v) < 0)
		return -1;
	if (!c->keyed) {
		c->keyed = true;
		c->reset = q->reset_count;
		c->restart = q->restart_count;
	}
	/* from_archive, announced: the archive of this round, what earlier boots announced */
	if (c->raw || (c->have && !c->malformed && !c->mb_on && vg_mbpolicy_uses_refs(
							  vg_refpolicy_mbpolicy(pol)))) {
		const struct vg_mbpolicy *mb = vg_refpolicy_mbpolicy(pol);
		struct vg_mbrefs refs = { .archive = c->archive, .announced = &a->st.ann,
					  .boot = q->reset_count };
		uint8_t *raw = c->raw;
		size_t rawlen = c->rawlen;

		c->raw = NULL;
		if (!raw) {
			/* an entry whose log was fetched before the section used them: again */
			free(raw);
			return vf_bootc_fetch(vf, src, a, pol, c, v) < 0 ? -1 :
			       vf_bootc_boot(vf, src, a, pol, c, q, v);
		}
		if (mb && mb_judge(c, mb, raw, rawlen, &refs) < 0) {
			free(raw);
			c->fetched = false;
			vg_attest_fail(v, VG_AF_COMM, "verifier error: %s", strerror(ENOMEM));
			return -1;
		}
		free(raw);
	}
	return 0;
}

void vf_bootc_free(struct verifier *vf)
{
	for (size_t i = 0; i < VF_BOOTC_BUCKETS; i++)
		while (vf->bootc_tab[i]) {
			struct vf_bootc *n = vf->bootc_tab[i]->next;

			mb_drop(vf->bootc_tab[i]);
			free(vf->bootc_tab[i]);
			vf->bootc_tab[i] = n;
		}
}
