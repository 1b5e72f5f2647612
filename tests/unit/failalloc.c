// SPDX-License-Identifier: MIT
/*
 * failalloc.c - see failalloc.h. Not thread-safe: unit tests are serial.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "failalloc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
char *__wrap_strdup(const char *s);

static long countdown = -1;
static bool hit;

static bool should_fail(void)
{
	if (countdown < 0)
		return false;
	if (countdown == 0) {
		hit = true;
		return true;
	}
	countdown--;
	return false;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? (errno = ENOMEM, NULL) : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return should_fail() ? (errno = ENOMEM, NULL) : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? (errno = ENOMEM, NULL) : __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	return should_fail() ? (errno = ENOMEM, NULL) : __real_aligned_alloc(a, n);
}

char *__wrap_strdup(const char *s)
{
	return should_fail() ? (errno = ENOMEM, NULL) : __real_strdup(s);
}

static void *ossl_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return should_fail() ? NULL : __real_malloc(n);
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return should_fail() ? NULL : __real_realloc(p, n);
}

static void ossl_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

void failalloc_install(void)
{
	CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free);
}

void failalloc_arm(long n)
{
	countdown = n;
	hit = false;
}

void failalloc_disarm(void)
{
	countdown = -1;
}

bool failalloc_hit(void)
{
	return hit;
}
