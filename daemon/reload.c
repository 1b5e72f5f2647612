// SPDX-License-Identifier: MIT
/*
 * reload.c - the policy: loaded and checked (rules vigild cannot enforce
 * are refused unless accepted), the facts the event path derives from it
 * (whether it names uids, the subject, paths; whether ignore marks may
 * cache its verdicts), its digest, and the reload on SIGHUP or `vigil
 * status --reload`. The monitor never opens a file while events may be
 * pending: a reload reads the policy on a short-lived thread, whose open
 * the loop answers like any own-process event, and hands the result over
 * through a pipe. A policy whose rules need a signature (appraise_type=
 * imasig) while no trusted key is loaded could never pass: it is refused
 * unless --allow-empty-keyring. `vigil status --reload` clients wait for
 * the result (applied, or the reason it was refused); the service manager
 * hears RELOADING=1, then READY=1. A policy with trust=archive brings its
 * trust database along (trust.c), read on the same thread: policy and
 * table are applied together or, when either is refused, neither (the
 * old policy and the old table stay).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor.h"
#include "notify.h"
#include "setup.h"

void vd_policy_facts(struct vd *d, struct vg_policy *p)
{
	unsigned int uses = vg_policy_uses(p);

	d->policy_uses_subject = uses & (VG_POLICY_USES_SUBJ_EXE | VG_POLICY_USES_SUBJ_APPRAISAL);
	d->policy_access = uses & VG_POLICY_USES_ACCESS_RULES;
	d->policy_uses_path = uses & VG_POLICY_USES_PATH;
	d->policy_uses_uid = false;
	for (size_t i = 0; i < vg_policy_count(p); i++)
		if (vg_policy_rule(p, i)->flags & (VG_POLF_UID | VG_POLF_EUID | VG_POLF_GID | VG_POLF_EGID))
			d->policy_uses_uid = true;
	/* a path is not a property of the inode (hard links, renames), nor is the subject */
	d->ignore_ok = !d->policy_uses_uid && !d->policy_uses_subject &&
		       !(uses & (VG_POLICY_USES_PATH | VG_POLICY_USES_SUBJ_LSM));
	d->ignore_open_ok = vd_loader_policy(&d->loaders, p);
	vd_fsinfo_policy(&d->fsinfo, p);
}

void vd_policy_digest(struct vg_policy *p, char out[65])
{
	char *text = NULL;
	size_t len = 0;
	struct vg_digest dg;

	out[0] = 0;
	if (vg_policy_format(p, &text, &len) == 0 && vg_hash_buf(VG_HASH_SHA256, text, len, &dg, NULL) == 0)
		vg_hex_encode(dg.bytes, dg.len, out);
	free(text);
}

/* The first rule that needs a signature: its index, or -1. */
static long sig_rule(const struct vg_policy *p)
{
	for (size_t i = 0; i < vg_policy_count(p); i++) {
		const struct vg_policy_rule *r = vg_policy_rule(p, i);

		if (r->action == VG_POL_APPRAISE && (r->flags & VG_POLF_DIGSIG_REQUIRED))
			return (long)i;
	}
	return -1;
}

int vd_policy_load(const struct vd *d, struct vg_policy **ret, char *msg, size_t cap)
{
	struct vg_policy_error err = { 0 };
	const char *path = d->policy_path;
	int r = vg_policy_load_file(path, 0, ret, &err);
	long k;

	if (r < 0) {
		if (err.line)
			snprintf(msg, cap, "%s:%u:%u: %s", path, err.line, err.col, err.msg);
		else
			snprintf(msg, cap, "%s: %s", path, err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	r = vd_policy_enforceable(*ret, path, d->accept_unenforced, msg, cap);
	if (r == 0 && !d->nkeys && !d->allow_empty_keyring && (k = sig_rule(*ret)) >= 0) {
		const struct vg_policy_rule *q = vg_policy_rule(*ret, (size_t)k);

		snprintf(msg, cap, "%s:%u:%u: this rule needs a signature (appraise_type=imasig) but no "
			 "trusted key is loaded (--keyring, or keyring in vigil.conf): every file it "
			 "covers would be denied; give the keyring, or --allow-empty-keyring", path,
			 q->line, q->col);
		r = -ENOKEY;
	}
	if (r < 0) {
		vg_policy_unref(*ret);
		*ret = NULL;
	}
	return r;
}

struct reload_msg {
	struct vg_policy *p;
	struct vd_trust *trust;
	char msg[640];
};

static void *reload_main(void *arg)
{
	struct vd *d = arg;
	struct reload_msg m = { 0 };

	if (vd_policy_load(d, &m.p, m.msg, sizeof(m.msg)) < 0) {
		m.p = NULL;
	} else if (vd_trust_load(d, m.p, &m.trust, m.msg, sizeof(m.msg)) < 0) {
		vg_policy_unref(m.p);
		m.p = NULL;
	}
	if (write(d->reload_pipe[1], &m, sizeof(m)) != (ssize_t)sizeof(m)) {
		vg_policy_unref(m.p);
		vd_trust_free(m.trust);
	}
	return NULL;
}

void vd_reload_start(struct vd *d)
{
	struct timespec ts;

	if (d->reloading || !d->policy_path)
		return;
	if (pthread_create(&d->reload_tid, NULL, reload_main, d) == 0) {
		d->reloading = true;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		(void)notify_send("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading %s",
				  (unsigned long long)ts.tv_sec * 1000000ull +
				  (unsigned long long)ts.tv_nsec / 1000u, d->policy_path);
	}
}

/* Every `vigil status --reload` client gets @o. */
static void answer_waiters(struct vd *d, json_object *o)
{
	for (unsigned int i = 0; i < d->nreload_waiters; i++) {
		(void)vd_ctl_answer_write(d->reload_waiters[i], o);
		close(d->reload_waiters[i]);
	}
	d->nreload_waiters = 0;
	json_object_put(o);
}

void vd_reload_done(struct vd *d)
{
	struct reload_msg m;

	if (read(d->reload_pipe[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
		return;
	pthread_join(d->reload_tid, NULL);
	d->reloading = false;
	if (!m.p) {
		vlog_err("policy reload refused, the old policy stays: %s", m.msg);
		answer_waiters(d, vd_ctl_reload_result_encode(false, 0, NULL, m.msg));
		(void)notify_send("READY=1\nSTATUS=policy reload refused, the old policy stays");
		return;
	}
	vg_policy_unref(d->policy);
	d->policy = m.p;
	vd_trust_free(d->trust);
	d->trust = m.trust;
	vd_policy_facts(d, d->policy);
	vd_policy_digest(d->policy, d->policy_digest);
	vd_cache_clear(d);		/* verdicts of the old policy */
	vd_fan_flush(d);
	vlog(VLOG_INFO, "policy reloaded (%zu rules, sha256 %.16s)", vg_policy_count(d->policy),
	       d->policy_digest);
	vd_policy_unenforced_log(d->policy, d->policy_path);
	if (d->trust)
		vlog(VLOG_INFO, "trust database %s: %zu files (%s)", vd_trust_db_path(d),
			  vg_trust_index_count(d->trust->idx), vg_hash_name(d->trust->algo));
	answer_waiters(d, vd_ctl_reload_result_encode(true, vg_policy_count(d->policy),
						       d->policy_digest, NULL));
	(void)notify_send("READY=1\nSTATUS=policy reloaded (%zu rules)", vg_policy_count(d->policy));
}
