/* SPDX-License-Identifier: MIT */
/*
 * options.h - vigil-verifier's command line (options.c).
 */
#ifndef VIGIL_VERIFIER_OPTIONS_H
#define VIGIL_VERIFIER_OPTIONS_H

#include <stdbool.h>

#include "verifier.h"

/* What the options name besides the verifier's own settings. */
struct vf_args {
	const char *listen, *db, *api_cert, *api_key, *api_ca, *read_ca, *push_ca;
	const char *tokens, *create_role, *agent_token_file, *trust_db, *trust_key;
	const char *verifier_id, *ear_key;
	unsigned int api_timeout, api_max_conn, db_timeout, lease;
	unsigned int api_idle_timeout, api_connections;	/* kept-alive API connections */
	char *cert_pem, *key_pem, *ca_pem;	/* read from api_cert, api_key, the CAs */
	char *ear_pem;				/* read from ear_key */
	bool background;
};

/* --help's text */
extern const char vf_help[];

/*
 * The options into @vf and @a (their defaults set by the caller).
 * Return: -1 to go on, else the exit status (help, --version: 0; a usage
 * error: 2, said).
 */
int vf_parse_args(struct verifier *vf, struct vf_args *a, int argc, char **argv);

#endif
