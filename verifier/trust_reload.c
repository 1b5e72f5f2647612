// SPDX-License-Identifier: MIT
/*
 * trust_reload.c - the verifier's own trust database (--trust-db,
 * --trust-key): its file digests (policy.package_newer's names) and its
 * boot references (a measured_boot section's from_archive, trust_boot.h),
 * read whole into memory at start and again whenever the file changes
 * (issue 45: apt's hook or a `vigil trust build` replaces it when the
 * archive moves on), checked at most once a second by the scheduler's
 * tick. A database that does not open (altered, another key, half
 * written) is said and the loaded one kept.
 *
 * A loaded set is shared by the cached policies parsed with it (each holds
 * a reference: policy_cache.c); a new set retires the cached policies, so
 * that every later round judges by it. A retired set is freed once no
 * cached policy holds it and VF_TRUST_LINGER_MS have passed (a request
 * that parsed a policy of its own, the stateless evidence endpoint, is
 * bounded by the request deadline, far shorter).
 *
 * The network process reads the file after the sandbox: Landlock allows
 * reading the database's directory, unless the SQLite store, the API's TLS
 * key or the EAR key is there too (then the set is never reloaded, and the
 * start says so: vigil-verifier.c). The network process keeps --trust-key
 * to authenticate each new file: a forged database needs it and a write
 * to the file, which the sandbox does not allow.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "log.h"
#include "verifier.h"
#include "vigil/hmac_key.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"

#define VF_TRUST_LINGER_MS (5 * 60 * 1000)

static void set_free(struct vf_trust *t)
{
	if (!t)
		return;
	vg_trust_index_free(t->idx);
	vg_trust_boot_free(t->boot);
	free(t);
}

/* @path read into a new set. Return: it, or NULL (@d says why). */
static struct vf_trust *set_load(struct verifier *vf, const char *path, struct vg_diag *d)
{
	struct vf_trust *t = calloc(1, sizeof(*t));
	struct vg_trust_db *db = NULL;
	struct stat st;
	int r;

	if (!t) {
		vg_diag_set(d, -ENOMEM, "out of memory");
		return NULL;
	}
	if (stat(path, &st) < 0) {
		vg_diag_set(d, -errno, "%s", strerror(errno));
		free(t);
		return NULL;
	}
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	t->size = st.st_size;
	r = vg_trust_db_open(path, vf->trust_key, vf->trust_key_len, &db, d);
	if (r == 0)
		r = vg_trust_index_load(db, vg_trust_db_algo_pick(db, VG_HASH_SHA256), &t->idx, d);
	if (r == 0)
		r = vg_trust_boot_load(db, &t->boot, d);
	vg_trust_db_free(db);
	if (r < 0) {
		set_free(t);
		return NULL;
	}
	return t;
}

int vf_trust_open(struct verifier *vf, const char *path, const char *keyfile)
{
	struct vg_hmac_key hk = { 0 };
	struct vg_diag d = { 0 };

	if (!path)
		return 0;
	if (vg_hmac_key_load_raw(keyfile, &hk, &d) < 0) {
		vlog_err("--trust-key %s: %s", keyfile, d.msg);
		return -1;
	}
	if (hk.len > sizeof(vf->trust_key)) {
		vg_hmac_key_wipe(&hk);
		vlog_err("--trust-key %s: longer than %zu bytes", keyfile, sizeof(vf->trust_key));
		return -1;
	}
	memcpy(vf->trust_key, hk.key, hk.len);
	vf->trust_key_len = hk.len;
	vg_hmac_key_wipe(&hk);
	vf->trust_path = path;
	vf->trust = set_load(vf, path, &d);
	if (!vf->trust) {
		vlog_err("--trust-db %s: %s", path, d.msg);
		return -1;
	}
	vf->archive = vf->trust->idx;
	vlog_info("trust database %s: %zu file digests, %zu boot images", path,
		  vg_trust_index_count(vf->trust->idx), vg_trust_boot_count(vf->trust->boot));
	return 0;
}

/* Under vf->lock: free the retired sets no policy holds any more and old enough. */
static void sweep(struct verifier *vf, int64_t now_ms, bool all)
{
	for (struct vf_trust **pp = &vf->trust_old; *pp;) {
		struct vf_trust *t = *pp;

		if (all || (!t->refs && now_ms - t->retired_ms >= VF_TRUST_LINGER_MS)) {
			*pp = t->next;
			set_free(t);
			continue;
		}
		pp = &t->next;
	}
}

void vf_trust_check(struct verifier *vf, int64_t now_ms)
{
	struct vf_trust *t, *old;
	struct vg_diag d = { 0 };
	struct stat st;

	if (!vf->trust || !vf->trust_reload)
		return;
	pthread_mutex_lock(&vf->lock);
	sweep(vf, now_ms, false);
	pthread_mutex_unlock(&vf->lock);
	if (now_ms - vf->trust_checked_ms < 1000)
		return;
	vf->trust_checked_ms = now_ms;
	if (stat(vf->trust_path, &st) < 0 ||
	    (st.st_dev == vf->trust->dev && st.st_ino == vf->trust->ino &&
	     (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == vf->trust->mtime_ns &&
	     st.st_size == vf->trust->size))
		return;
	t = set_load(vf, vf->trust_path, &d);
	if (!t) {
		/* said once per version of the file: the next check compares with this one */
		vf->trust->dev = st.st_dev;
		vf->trust->ino = st.st_ino;
		vf->trust->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		vf->trust->size = st.st_size;
		vlog_err("--trust-db %s changed and does not load, the one loaded before is kept: %s",
			 vf->trust_path, d.msg);
		return;
	}
	pthread_mutex_lock(&vf->lock);
	old = vf->trust;
	old->retired_ms = now_ms;
	old->next = vf->trust_old;
	vf->trust_old = old;
	vf->trust = t;
	vf->archive = t->idx;
	/* every cached policy was parsed with the old set: parsed again with this one */
	vf->policy_gen++;
	vf_policy_forget_all(vf);
	pthread_mutex_unlock(&vf->lock);
	vf->trust_reloads++;
	vlog_info("trust database %s reloaded: %zu file digests, %zu boot images", vf->trust_path,
		  vg_trust_index_count(t->idx), vg_trust_boot_count(t->boot));
}

void vf_trust_free(struct verifier *vf)
{
	sweep(vf, 0, true);
	set_free(vf->trust);
	vf->trust = NULL;
	vf->archive = NULL;
	OPENSSL_cleanse(vf->trust_key, sizeof(vf->trust_key));
}
