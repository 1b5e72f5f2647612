// SPDX-License-Identifier: MIT
/*
 * lsan_canary.c - leaks on purpose (unless given "clean"), so that
 * lsan-canary.sh can show LeakSanitizer really reports leaks under the
 * conditions the CLI tests run vigil in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *p = malloc(77);

	if (!p)
		return 2;
	snprintf(p, 77, "canary");
	if (argc > 1 && strcmp(argv[1], "clean") == 0)
		free(p);
	p = NULL;
	return 0;
}
