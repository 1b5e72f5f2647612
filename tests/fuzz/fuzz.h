/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what every harness in tests/fuzz/ shares.
 *
 * A harness is one file fuzz_NAME.c defining LLVMFuzzerTestOneInput() (and,
 * if it needs keys or files, LLVMFuzzerInitialize()). It is linked two ways
 * (tests/fuzz/meson.build):
 *  - with libFuzzer (meson -Dfuzz=true, clang): `make fuzz`;
 *  - with driver.c, a plain main() that replays corpus/NAME/ and a fixed
 *    number of deterministic mutations of it: a test of `make test`, under
 *    the ASan/UBSan build with gcc.
 * A property that does not hold is a crash (FUZZ_CHECK aborts), so both
 * ways report it the same way, with the input that broke it.
 */
#ifndef VIGIL_FUZZ_H
#define VIGIL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__, \
				__LINE__, #cond);                                     \
			abort();                                                      \
		}                                                                     \
	} while (0)

/*
 * fuzz_vectors_path - @rel under tests/vectors/evmctl ($VECTORS/evmctl when
 * set, else the source tree this harness was built from). Static buffer.
 */
static inline const char *fuzz_vectors_path(const char *rel)
{
	static char buf[4096];
	const char *v = getenv("VECTORS");

	snprintf(buf, sizeof(buf), "%s/evmctl/%s", v && *v ? v : VG_FUZZ_VECTORS, rel);
	return buf;
}

#endif
