/* SPDX-License-Identifier: MIT */
/*
 * imalog_internal.h - what the measurement list parser (imalog.c) and its
 * writers (imalog_write.c) share: the template fields and their show
 * formats, and the list's little-endian integers. Not installed.
 */
#ifndef VIGIL_IMALOG_INTERNAL_H
#define VIGIL_IMALOG_INTERNAL_H

#include <stdint.h>

#include "vigil/imalog.h"

enum field_fmt { FMT_DIGEST, FMT_DIGEST_ALGO, FMT_STRING, FMT_HEX, FMT_UINT };

/* ima_template.c supported_fields[], with the show format of each (imalog.c). */
struct vg__imalog_field_info {
	const char *id;
	uint8_t fmt;		/* enum field_fmt */
	uint8_t uint_len;	/* FMT_UINT: bytes the kernel stores */
};
extern const struct vg__imalog_field_info vg__imalog_fields[VG_IMAF__COUNT];

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#endif
