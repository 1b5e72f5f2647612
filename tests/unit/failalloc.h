/* SPDX-License-Identifier: MIT */
/*
 * failalloc.h - a test allocator that fails the N-th allocation.
 *
 * Unit tests are linked with -Wl,--wrap=malloc (and calloc, realloc,
 * aligned_alloc, strdup), so every allocation libvigil makes passes
 * through here; failalloc_install() also routes OpenSSL's allocations
 * through it with CRYPTO_set_mem_functions(). Counting starts at
 * failalloc_arm(n): allocation number n (0-based) and every later one
 * fail until failalloc_disarm().
 */
#ifndef FAILALLOC_H
#define FAILALLOC_H

#include <stdbool.h>

/* Call first thing in main(), before OpenSSL allocates. */
void failalloc_install(void);
void failalloc_arm(long n);
void failalloc_disarm(void);
/* Return: true if an allocation failed since the last arm. */
bool failalloc_hit(void);

#endif
