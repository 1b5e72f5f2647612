/* SPDX-License-Identifier: MIT */
/*
 * fleet_sim.h - what the parts of vigil-fleet-sim share: the simulated
 * agents (each its software TPM, fleet_sim_tpm.h, its PCR 10 and a list
 * that grows before every quote), the host side that makes their answers
 * (fleet_sim_host.c: identity, activation, quote, list; the same bytes
 * whether the verifier pulls them or the agent pushes them), the HTTP
 * server of pull mode (fleet_sim.c) and the pushing agents
 * (fleet_sim_push.c). Not installed: a load generator for bench/fleet.
 */
#ifndef VIGIL_FLEET_SIM_H
#define VIGIL_FLEET_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "vigil/attest_api.h"

#include "fleet_sim_tpm.h"

enum tamper { T_NONE, T_FILE, T_REPLAY };

struct sagent {
	pthread_mutex_t lock;
	char id[VG_API_ID_MAX];
	struct fsim_tpm tpm;
	uint64_t entries;		/* in the list */
	uint64_t tamper_from;		/* first entry index affected; UINT64_MAX none yet */
	uint64_t clock;			/* TPM clock, ms, strictly increasing */
	uint64_t quotes;
	uint8_t pcr10[32];
	enum tamper tamper;
	/* push mode (fleet_sim_push.c) */
	int64_t due;			/* next push, CLOCK_MONOTONIC ms */
	uint32_t interval_ms;		/* what the verifier's last challenge said */
	bool registered;
	char *push_cert, *push_key;	/* PEM: this agent's client certificate */
};

/* An entry as the list holds it, and the sha256 its template data extends PCR 10 with. */
struct entry {
	uint8_t bytes[128];
	size_t len;
	uint8_t ext[32];
};

struct sim {
	struct sagent *ag;
	size_t n;
	size_t *tab;			/* open addressing: agent index + 1, 0 empty */
	size_t tab_size;
	unsigned int files, per_quote;
	struct entry boot, *file, *changed;	/* changed: the --tamper contents */
	size_t entry_len;		/* of every file entry */
	FILE *qlog;
	FILE *rlog;			/* --request-log, under qlog_lock */
	pthread_mutex_t qlog_lock;
	int64_t qlog_flushed;
	struct timespec t0;
};

int64_t fsim_wall_ms(void);
int64_t fsim_mono_ms(void);
uint64_t fsim_hash(const char *s, size_t len);
struct sagent *fsim_agent_find(const struct sim *s, const char *id, size_t len);

/* The lists' entries (--files distinct files, and their changed contents). Return: 0, -ENOMEM. */
int fsim_lists_make(struct sim *s);
/* A list of every file measured, to @path (a new file). Return: 0, -errno. */
int fsim_policy_log_write(const struct sim *s, const char *path);

/* One line "ID WALL_MS PEER[ tampered]" to the quote log (--quote-log), if any. */
void fsim_qlog_write(struct sim *s, const char *id, const char *peer, bool tampered);

/* The answers of agent @a, as vigil-agent gives them (every text malloc'd, the caller frees). */
int fsim_identity(const struct sagent *a, char **ret);
/* The proof for an activation request @body. Return: 0, -EBADMSG (@err says), -EACCES, -EIO. */
int fsim_activate(struct sagent *a, const char *body, size_t len, char **ret, char *err,
		  size_t errlen);
/*
 * The host ran: --entries more files measured and extended, then quoted
 * for @qr. *@ret_tampered: the quote covers a tampered entry.
 * Return: 0, -EOPNOTSUPP (not sha256), -EIO.
 */
int fsim_quote(struct sim *s, struct sagent *a, const struct vg_api_quote_req *qr, char **ret,
	       bool *ret_tampered);
/* The list from byte @off to its size now (*@ret_size). Return: 0, -ENOMEM. */
int fsim_log(const struct sim *s, struct sagent *a, uint64_t off, uint8_t **ret, size_t *ret_len,
	     uint64_t *ret_size);

/* Push mode (fleet_sim_push.c) */
struct fsim_push_opts {
	const char *url;		/* the verifier: http(s)://HOST:PORT */
	const char *ca;			/* its certificate's CA (https) */
	const char *client_ca_out;	/* the agents' client certificates' CA, written here */
	unsigned int threads;
	bool keepalive;			/* an agent's connection kept between its pushes */
	FILE *log;			/* one line per evidence answered: ID WALL_MS CODE MS */
};
/* Each agent a client certificate (CN = its id) from a new CA written to o->client_ca_out. */
int fsim_push_certs(struct sim *s, const struct fsim_push_opts *o);
/* Start o->threads workers pushing every agent's evidence. Return: 0, -errno. */
int fsim_push_start(struct sim *s, const struct fsim_push_opts *o);
/* What they did so far, one line to @out. */
void fsim_push_stats(FILE *out);
/* Stop them; what they did to @out (one line). */
void fsim_push_stop(FILE *out);

#endif
