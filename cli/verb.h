/* SPDX-License-Identifier: MIT */
/*
 * verb.h - the second level of the command line: `vigil log show`,
 * `vigil policy explain`, `vigil attest policy create`. A command that has
 * verbs lists them in a table, as vigil.c lists the commands, and looks
 * the verb up here instead of in a chain of strcmp().
 *
 * What a command says when no verb, --help or an unknown verb is given
 * stays the command's own (those messages are part of the CLI's contract):
 * cli_verb_main() covers the common shape and leaves the unknown verb to
 * the caller.
 */
#ifndef VIGIL_CLI_VERB_H
#define VIGIL_CLI_VERB_H

#include <stddef.h>

struct cli_verb {
	const char *name;
	/* argv[0] is the verb; the verb parses its own options */
	int (*run)(int argc, char **argv);
};

#define CLI_NVERBS(table) (sizeof(table) / sizeof((table)[0]))

/* Return: the entry of @verbs (@n of them) named @name, or NULL. */
const struct cli_verb *cli_verb_find(const struct cli_verb *verbs, size_t n, const char *name);

/*
 * cli_verb_main - dispatch `CMD VERB ARGS...` (@argv[0] is CMD): no verb
 * prints @help on stderr (EXIT_ERROR); --help or -h prints it on stdout
 * (EXIT_OK); a verb of @verbs runs with argv + 1.
 * Return: the exit code, or -1 when argv[1] is none of @verbs (nothing
 * printed: the caller names its verbs).
 */
int cli_verb_main(const struct cli_verb *verbs, size_t n, const char *help, int argc, char **argv);

#endif
