// SPDX-License-Identifier: MIT
/*
 * verb.c - looking a command's verb up in its table (verb.h). Nothing here
 * parses options: each verb does that itself.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "verb.h"

const struct cli_verb *cli_verb_find(const struct cli_verb *verbs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

int cli_verb_main(const struct cli_verb *verbs, size_t n, const char *help, int argc, char **argv)
{
	const struct cli_verb *v;

	if (argc < 2) {
		fputs(help, stderr);
		return EXIT_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	v = cli_verb_find(verbs, n, argv[1]);
	return v ? v->run(argc - 1, argv + 1) : -1;
}
