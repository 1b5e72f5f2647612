// SPDX-License-Identifier: MIT
/*
 * cache.c - the monitor's verdict cache: one result per file version
 * (dev, ino, size, mtime, ctime), direct-mapped, valid only under the
 * lease generation it was made in (lease.c). The lookup is inline in
 * monitor.h (the event path); what changes the table is here.
 */
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

void vd_cache_clear(struct vd *d)
{
	for (size_t i = 0; i < CACHE_CAP; i++) {
		free(d->cache[i].sig);
		memset(&d->cache[i], 0, sizeof(d->cache[i]));
	}
}

struct result *vd_cache_put(struct vd *d, const struct vkey *k, uint32_t lease_gen)
{
	struct result *r = &d->cache[vd_key_slot(k)];

	free(r->sig);
	memset(r, 0, sizeof(*r));
	r->valid = true;
	r->key = *k;
	r->lease_gen = lease_gen;
	return r;
}
