/* SPDX-License-Identifier: MIT */
/*
 * cmd_log.h - what the `vigil log` verbs share (cmd_log.c: show, convert
 * and the dispatch; cmd_log_replay.c: replay): the help text and the
 * measurement list read whole and decoded.
 */
#ifndef VIGIL_CLI_CMD_LOG_H
#define VIGIL_CLI_CMD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/imalog.h"

extern const char cli_log_help[];

/* A measurement list, binary or ascii (converted), ready to parse. */
struct input {
	uint8_t *raw;
	size_t raw_len;
	bool mapped;
	struct vg_imalog_buf conv;	/* ascii converted to binary */
	const uint8_t *buf;
	size_t len;
	unsigned int algo;
	bool ascii;
};

/* Read and decode the whole list at @path ("-": stdin). Return: 0, or EXIT_ERROR (reported). */
int cli_log_load(const char *path, struct input *in);
void cli_log_release(struct input *in);

/* `vigil log replay` (cmd_log_replay.c); @argv[0] is "replay". */
int cli_log_replay(int argc, char **argv);

#endif
