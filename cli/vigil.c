// SPDX-License-Identifier: MIT
/*
 * vigil.c - the command table and dispatch. Each command lives in its own
 * cmd_<name>.c and parses its own options; nothing here is shared state
 * but the command name used in messages.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_cmd commands[] = {
	{ "hash", cmd_hash, "print file digests; --write stores them in security.ima" },
	{ "sign", cmd_sign, "store a signature v2 of file content in security.ima" },
	{ "evm", cmd_evm, "store an HMAC or signature over protected metadata in security.evm" },
	{ "label", cmd_label, "label whole trees: security.ima, then security.evm, on all CPUs" },
	{ "appraise", cmd_appraise, "check content against security.ima and metadata against security.evm" },
	{ "status", cmd_status, "ask a running vigild for its mode and counters; switch mode, reload" },
	{ "scan", cmd_scan, "AIDE-style scans: record a tree in an HMAC'ed database, then report changes" },
	{ "key", cmd_key, "EVM HMAC keys: create from a passphrase or sealed by the TPM, unseal, reseal, show" },
	{ "log", cmd_log, "show, replay and convert kernel IMA measurement lists" },
	{ "measure", cmd_measure, "append file measurements to a log and extend a PCR" },
	{ "attest", cmd_attest, "remote attestation: register agents with vigil-verifier, policies, status" },
	{ "policy", cmd_policy, "check, print and explain IMA policies and vigil access rules" },
	{ "trust", cmd_trust, "a trust database from the signed Debian archive; verify files against it" },
};

static void usage(FILE *f)
{
	fputs("usage: vigil [--version] [--help] COMMAND [ARGS]\n\n"
	      "Linux file integrity in the kernel's IMA/EVM formats.\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'vigil COMMAND --help' describes a command.\n"
	      "Exit status: 0 verified/done, 1 not verified, 2 usage or operational error.\n", f);
}

int main(int argc, char **argv)
{
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return EXIT_ERROR;
	}
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			char *hargv[] = { argv[2], (char *)"--help", NULL };

			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (strcmp(commands[i].name, argv[2]) == 0) {
					cli_cmdname = commands[i].name;
					return commands[i].run(2, hargv);
				}
			fprintf(stderr, "vigil: '%s' is not a command; see 'vigil --help'\n", argv[2]);
			return EXIT_ERROR;
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(name, "--version") == 0) {
		printf("vigil %s\n", VIGIL_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name) == 0) {
			cli_cmdname = commands[i].name;
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "vigil: '%s' is not a command; see 'vigil --help'\n", name);
	return EXIT_ERROR;
}
