// SPDX-License-Identifier: MIT
/*
 * verifier.c - the life of a struct verifier (defaults, locks) and the
 * small helpers every part uses: the wall clock and a growing buffer.
 * Parsing the options and starting the threads is vigil-verifier.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verifier.h"

int vf_init(struct verifier *vf)
{
	int r;

	memset(vf, 0, sizeof(*vf));
	vf->bank = VG_HASH_SHA256;
	vf->mask = 1u << VG_ATTEST_PCR_IMA;
	vf->interval_ms = 2000;
	vf->max_rounds = VF_ROUNDS_DEFAULT;
	vf->agent_conns = VF_AGENT_CONNS_DEFAULT;
	vf->agent_timeout = 30;
	vf->max_log = 64u << 20;
	vf->max_body = 32u << 20;
	vf->fetch = vf_fetch;
	r = pthread_mutex_init(&vf->lock, NULL);
	if (!r)
		r = pthread_mutex_init(&vf->parse_lock, NULL);
	if (!r)
		r = pthread_rwlock_init(&vf->auth_lock, NULL);
	if (!r)
		r = pthread_mutex_init(&vf->bootc_lock, NULL);
	if (!r)
		r = pthread_mutex_init(&vf->sched.lock, NULL);
	if (!r)
		r = -vf_pool_init(&vf->sched.pool, vf->max_rounds);
	return -r;
}

int64_t vf_now(void)
{
	return (int64_t)time(NULL);
}

static int64_t clock_ms(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t vf_wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

int64_t vf_mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

int vf_grow(uint8_t **p, size_t *cap, size_t len, size_t add)
{
	size_t want = len + add + 1, nc = *cap ? *cap : 4096;
	uint8_t *nb;

	if (want <= *cap)
		return 0;
	while (nc < want)
		nc = nc > SIZE_MAX / 2 ? want : nc * 2;
	nb = realloc(*p, nc);
	if (!nb)
		return -ENOMEM;
	*p = nb;
	*cap = nc;
	return 0;
}
