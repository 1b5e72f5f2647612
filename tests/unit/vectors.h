/* SPDX-License-Identifier: MIT */
/*
 * vectors.h - read values from the evmctl interop vectors
 * (tests/vectors/evmctl/manifest.tsv; made by evmctl 1.4, see its README).
 */
#ifndef TEST_VECTORS_H
#define TEST_VECTORS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/hash.h"

/* Path of a file under tests/vectors/evmctl. Static buffer. */
static inline const char *vec_path(const char *rel)
{
	static char buf[4096];
	const char *v = getenv("VECTORS");

	snprintf(buf, sizeof(buf), "%s/evmctl/%s", v ? v : "tests/vectors", rel);
	return buf;
}

/* Value of xattr @x in case @c, decoded into @out. Return: length, or -1. */
static inline int vec_xattr(const char *c, const char *x, uint8_t *out, size_t cap)
{
	FILE *f = fopen(vec_path("manifest.tsv"), "r");
	char line[8192];
	int r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *col[11];
		char *p = line;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		while (n < 11 && (col[n] = strsep(&p, "\t")))
			n++;
		if (n == 11 && strcmp(col[0], c) == 0 && strcmp(col[9], x) == 0) {
			r = vg_hex_decode(col[10], out, cap);
			break;
		}
	}
	fclose(f);
	return r;
}

/* Column @col (0-based) of the first row of case @c. Return: 0 or -1. */
static inline int vec_column(const char *c, int col, char *out, size_t cap)
{
	FILE *f = fopen(vec_path("manifest.tsv"), "r");
	char line[8192];
	int r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *cols[11];
		char *p = line;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		while (n < 11 && (cols[n] = strsep(&p, "\t")))
			n++;
		if (n == 11 && strcmp(cols[0], c) == 0) {
			snprintf(out, cap, "%s", cols[col]);
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

/* Read a whole (small) vector file. Return: length, or -1. */
static inline long vec_file(const char *rel, uint8_t *out, size_t cap)
{
	FILE *f = fopen(vec_path(rel), "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(out, 1, cap, f);
	fclose(f);
	return (long)n;
}

#endif
