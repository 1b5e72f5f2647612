/* SPDX-License-Identifier: MIT */
/*
 * trust_internal.h - what the trust files share. Not installed.
 */
#ifndef VIGIL_TRUST_INTERNAL_H
#define VIGIL_TRUST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256 of @len bytes. Return: 0 or -ENOMEM. */
int vg__trust_sha256(const void *p, size_t len, uint8_t out[32]);

#endif
