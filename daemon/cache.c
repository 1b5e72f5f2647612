// SPDX-License-Identifier: MIT
/*
 * cache.c - the monitor's verdict cache: one result per file version
 * (dev, ino, size, mtime, ctime), direct-mapped, valid only under the
 * lease generation it was made in (lease.c). The lookup is inline in
 * monitor.h (the event path); what changes the table is here.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "monitor.h"

void *vd_table_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *c = p;

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, len, MADV_DONTFORK);
	/* huge pages where the kernel has them: a hashed lookup misses the TLB less */
	(void)madvise(p, len, MADV_HUGEPAGE);
	for (size_t i = 0; i < len; i += 4096)
		c[i] = 0;
	return p;
}

void vd_table_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

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
