/* SPDX-License-Identifier: MIT */
/*
 * verifier.h - the state of one vigil-verifier, passed explicitly to every
 * part of it, and the functions the parts call of each other:
 *
 *   vigil-verifier.c  options, start, main, stop (the store is opened there)
 *   verifier.c        struct verifier's defaults and locks; clock, buffer
 *   rest.c            the REST API (the only user of microhttpd.h here)
 *   register.c        registration of an agent, without HTTP
 *   api_json.c        the JSON bodies the API answers with
 *   scheduler.c       which agent is attested when, rounds on their threads
 *   sched_list.c      what the store says is due (scheduler_internal.h)
 *   round_pool.c      the threads rounds run on (at most --max-rounds, kept)
 *   heartbeat.c       this verifier's row among those sharing the store
 *   token_reload.c    SIGHUP: the token list read again
 *   round.c           one attestation round of one agent
 *   push.c            push mode: agents that register and send their evidence
 *   agent_client.c    HTTP(S) to agents and webhooks (the only user of libcurl)
 *   agent_conns.c     each agent's handle, so its connection, kept between rounds
 *   actions.c         what a verdict leaves: the history line
 *   notify.c          notices to the webhook and the command, from queues of their own
 *   bootlog_cache.c   agents' boot event logs, fetched and replayed once per boot
 *   policy_cache.c    reference policies, parsed once
 *   metrics.c         counters for GET /metrics (Prometheus text)
 *
 * Locks: vf->lock guards the store and the policy cache (order: the
 * policy parse lock, then vf->lock). The boot-log cache, the table of
 * rounds in flight and the last-trusted times each have their own lock,
 * taken alone, and so has each notice queue (vf_notify takes it under
 * vf->lock or none; nothing is sent under it).
 */
#ifndef VIGIL_VERIFIER_H
#define VIGIL_VERIFIER_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "vigil/attest.h"
#include "vigil/attest_api.h"
#include "vigil/attest_boot.h"
#include "vigil/attest_mbpolicy.h"
#include "http_client.h"
#include "metrics.h"
#include "vigil/auth.h"
#include "vigil/dsse.h"
#include "store.h"

#define VF_HISTORY_MAX 100
/* policy uploads parsed at once: the other API threads stay free for status */
#define VF_POLICY_CHECKS_MAX 2
/* a trusted agent whose round has not answered this long past --interval is unreachable */
#define VF_SILENT_SLACK_MS 1000
/* an agent whose round has not started this long after it was due is late */
#define VF_LATE_SLACK_MS 1000
/* rounds at once (one per agent): --max-rounds, its default and its largest value */
#define VF_ROUNDS_DEFAULT 16
#define VF_ROUNDS_MAX 1024
#define VF_API_CONNECTIONS_MAX 262144	/* --api-connections */
#define VF_API_CONNECTIONS_DEFAULT 1024
#define VF_BOOTC_BUCKETS 1024
#define VF_SCHED_BUCKETS 1024
/* a verifier beats into the store this often, and is alive while its last beat is this recent */
#define VF_BEAT_MS 1000
#define VF_BEAT_ALIVE_MS 5000
/*
 * a verifier that ran more than its share of the rounds of the last
 * interval and a half (agents / verifiers alive) claims an agent only once
 * it is due this long, so that one with fewer takes it first
 */
#define VF_YIELD_MS 150

/* An answer from a peer (agent_client.c): common/http_client.h's struct http_answer. */

struct verifier;

/*
 * An HTTP exchange with an agent (@agent: with the agent TLS settings and
 * our token) or a webhook: vf_fetch, or a test's stand-in.
 * Return: HTTP status, or -1 on transport failure (@err says).
 */
typedef long vf_fetch_fn(struct verifier *vf, const char *url, const char *body, bool agent,
			 size_t max, struct http_answer *out, char *err, size_t errlen);

struct vf_pcache;			/* policy_cache.c */

/*
 * trust_reload.c: a loaded trust database (--trust-db), shared by the
 * cached policies parsed with it (refs, under vf->lock)
 */
struct vf_trust {
	struct vf_trust *next;		/* retired ones */
	unsigned int refs;
	int64_t retired_ms;		/* wall ms it was replaced at (0: current) */
	struct vg_trust_index *idx;	/* its file digests */
	struct vg_trust_boot *boot;	/* its boot references */
	dev_t dev;			/* the file it was read from */
	ino_t ino;
	int64_t mtime_ns;
	off_t size;
};
struct vf_push;				/* push.c */
struct vg_store_agent;

/*
 * Where a round's evidence comes from (round.c): the agent's URL (pull),
 * or what the agent pushed (push.c). Everything else of a round is the
 * same code.
 */
struct vf_source {
	/*
	 * @path of agent @a ("/v1/quote?QUERY", "/v1/log?offset=N",
	 * "/v1/bootlog"), as vf_fetch answers it.
	 */
	long (*get)(struct vf_source *src, struct verifier *vf, const struct vg_store_agent *a,
		    const char *path, size_t max, struct http_answer *out, char *err, size_t errlen);
	/* The nonce the quote must sign, @len bytes. Return: 0, -1. */
	int (*nonce)(struct vf_source *src, uint8_t *nonce, size_t len);
	/* set by get: what was asked was not sent (push): nothing is judged, nothing stored */
	bool retry;
	/* set by get: the agent did not finish answering within --agent-timeout */
	bool timed_out;
};
struct vf_bootc;			/* bootlog_cache.c */
struct vf_ent;				/* scheduler.c */
struct vf_task;				/* round_pool.c */

/* round_pool.c: threads kept for the rounds, at most @max */
struct vf_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a task queued, or the stop */
	pthread_cond_t gone;		/* a thread ended */
	struct vf_task *head, *tail;	/* to run, in order */
	unsigned int queued, idle, threads, max;
	uint64_t made;			/* threads made since the start */
	uint64_t tasks;			/* tasks run */
	bool stop, ready;
};
struct vf_sink;				/* notify.c */

/* notify.c's targets */
enum { VF_SINK_WEBHOOK = 0, VF_SINK_HOOK, VF_SINKS };
/* notices each target's queue holds at most: --notify-queue's default */
#define VF_NOTIFY_QUEUE_DEFAULT 1024
#define VF_NOTIFY_QUEUE_MAX 1000000
/* --agent-connections: its default and its most */
#define VF_AGENT_CONNS_DEFAULT 4096
#define VF_AGENT_CONNS_MAX 1000000
/* a kept connection to an agent is made anew after this many seconds (its certificate checked) */
#define VF_AGENT_CONN_LIFE_S 600

struct verifier {
	/* configuration: set by the options, read-only once started */
	const char *ek_ca;
	const char *webhook;
	const char *on_fail;
	const char *agent_ca;		/* CA of agents' TLS server certificates */
	const char *client_cert, *client_key;	/* ours, for mutual TLS with agents */
	bool api_client_ca;		/* client certificates are asked for (either CA below) */
	struct http_ca *admin_ca;	/* --api-client-ca: a certificate from it is admin */
	struct http_ca *read_ca;	/* --api-read-client-ca: ... read */
	const char *auth_path;		/* the token list read at start, again on SIGHUP */
	bool no_auth;			/* --insecure-no-auth: every client is admin (tests only) */
	char agent_token[VG_AUTH_TOKEN_LEN + 1];	/* --agent-token-file: ours, for agents */
	struct vg_dsse_keys *policy_keys;	/* --policy-key: policies must be DSSE-signed */
	struct vg_trust_index *archive;	/* --trust-db: names the package of a digest not allowed
					   (trust->idx, under lock) */
	struct vf_trust *trust;		/* --trust-db as loaded now (trust_reload.c), NULL: none */
	struct vf_trust *trust_old;	/* replaced, freed once unused */
	const char *trust_path;
	uint8_t trust_key[128];		/* --trust-key, to open it again */
	size_t trust_key_len;
	bool trust_reload;		/* the sandbox lets us read it again */
	int64_t trust_checked_ms;
	uint64_t trust_reloads;
	unsigned int bank;
	uint32_t mask;
	unsigned int interval_ms;
	unsigned int max_rounds;	/* rounds at once: --max-rounds (VF_ROUNDS_DEFAULT) */
	unsigned int lease_ms;		/* --lease: how long a claimed agent is ours */
	char id[VG_STORE_VERIFIER_ID_MAX];	/* --verifier-id: whose leases and heartbeat */
	char host[256];			/* gethostname, for the heartbeat */
	int64_t started_ms;		/* wall ms */
	bool beaten;			/* our heartbeat row written once (heartbeat.c) */
	int64_t dup_pid;		/* a younger verifier under our id, said (heartbeat.c) */
	int exit_code;			/* what main returns once stopped: 2 when our id was another's */
	unsigned int agent_timeout;	/* s: whole exchange with an agent or webhook */
	unsigned int agent_conns;	/* --agent-connections: agents' connections kept */
	bool agent_conns_set;		/* given, not the default */
	size_t max_log;			/* bytes of one measurement-list answer */
	size_t max_body;		/* bytes of an API request body */
	vf_fetch_fn *fetch;		/* vf_fetch; a test's stand-in */
	struct http_ca *push_ca;	/* --push-client-ca: a certificate from it is an agent's */
	struct vf_push *push;		/* push_stale.c: the last listing of pushing agents */
	unsigned int notify_queue;	/* --notify-queue: notices waiting, per target */
	struct vf_sink *notify[VF_SINKS];	/* notify.c: NULL where not configured */

	/* the store and the policy cache, under lock */
	pthread_mutex_t lock;
	struct vg_store *store;
	struct vf_pcache *policies;
	uint64_t policy_gen;		/* policies uploaded so far */
	char store_msg[256];		/* the store's last error, said once */
	pthread_mutex_t parse_lock;	/* one policy parsed at a time (before lock) */

	/* bearer tokens, replaced on SIGHUP */
	struct vg_auth *auth;
	pthread_rwlock_t auth_lock;

	/* set by the signal handler */
	volatile sig_atomic_t stop;
	volatile sig_atomic_t reload;

	atomic_int api_busy;		/* API requests being answered (not those still arriving) */
	atomic_int policy_checks;	/* policy uploads being parsed (VF_POLICY_CHECKS_MAX) */

	/* bootlog_cache.c */
	pthread_mutex_t bootc_lock;
	struct vf_bootc *bootc_tab[VF_BOOTC_BUCKETS];

	/*
	 * scheduler.c: per agent its due time (the store is the queue), our
	 * round, whether it is late and when a round of ours last judged it
	 * trusted
	 */
	struct {
		pthread_mutex_t lock;
		struct vf_ent *tab[VF_SCHED_BUCKETS];
		unsigned int running;		/* rounds (slot threads) running */
		unsigned int notifying;		/* late and stale reports being sent */
		unsigned int late;		/* agents late now (any verifier's) */
		unsigned int due;		/* agents due and claimable, at the last tick */
		uint64_t rounds;		/* rounds we ran */
		bool leader;			/* we report late agents (the first alive by id) */
		unsigned int peers;		/* verifiers alive, us too (heartbeat.c) */
		bool yield;			/* more than our share: VF_YIELD_MS (tick) */
		uint64_t gen;			/* listings of the store */
		struct vf_pool pool;		/* the rounds' threads (round_pool.c) */
	} sched;

	/* metrics.c: GET /metrics */
	struct vf_metrics metrics;
};

/* Defaults and locks (verifier.c): before the options. Return: 0, -errno of pthread. */
int vf_init(struct verifier *vf);

/* Seconds, wall clock. */
int64_t vf_now(void);
/* Milliseconds, wall clock. */
int64_t vf_wall_ms(void);
/* Milliseconds, monotonic (what is measured on this host only: idle times). */
int64_t vf_mono_ms(void);

/* Room for @add more bytes and a NUL, growing geometrically. Return: 0, -ENOMEM. */
int vf_grow(uint8_t **p, size_t *cap, size_t len, size_t add);

/* ---- agent_client.c ---- */

/*
 * Once, before any thread starts: libcurl, and --client-cert and
 * --client-key parsed once for every connection to an agent.
 * Return: 0, -EIO, -EBADMSG, -ENOMEM (said in @err).
 */
int vf_client_init(const struct verifier *vf, char *err, size_t errlen);
void vf_client_cleanup(void);
/* The calling thread's libcurl handle (kept between its requests, vf_fetch) freed now. */
void vf_client_thread_end(void);
/*
 * Agents' connections kept now; since the start, agents' handles not kept
 * (--agent-connections reached) and connections made to agents (GET /metrics).
 */
void vf_client_counts(unsigned int *kept, uint64_t *full, uint64_t *made);
/*
 * vf_fetch - GET @url, or POST @body (JSON) to it. At most @max bytes of
 * answer (0: VG_API_MSG_MAX), vf->agent_timeout seconds in all, cut short
 * by vf->stop; redirects are not followed (an answer comes from the
 * registered URL or not at all). @out is always set; free out->p.
 * Return: HTTP status, or -1 on transport failure (@err says; out->timed_out
 * when the peer did not finish answering within vf->agent_timeout).
 */
long vf_fetch(struct verifier *vf, const char *url, const char *body, bool agent, size_t max,
	      struct http_answer *out, char *err, size_t errlen);

/* ---- policy_cache.c ---- */

/* A policy document, DSSE-signed when --policy-key is given. Return: as vg_refpolicy_load. */
int vf_policy_load(const struct verifier *vf, const uint8_t *doc, size_t len,
		   struct vg_refpolicy **ret, struct vg_diag *d);
/*
 * Called and returns under vf->lock, which it drops while a policy not
 * yet cached is parsed. Anything read under vf->lock before the call may
 * have changed when it returns.
 * Return: the parsed policy (cached), NULL if none/unparsable (*@err).
 */
struct vg_refpolicy *vf_policy_lookup(struct verifier *vf, const char *name, char *err,
				      size_t errlen);
/* Under vf->lock: a replaced policy leaves the cache (freed once unused). */
void vf_policy_forget(struct verifier *vf, const char *name);
/* Under vf->lock: every cached policy retired (the trust database changed). */
void vf_policy_forget_all(struct verifier *vf);
/* Under vf->lock: the boot references @p (cached) was parsed with, NULL: none. */
const struct vg_trust_boot *vf_policy_boot(struct verifier *vf, const struct vg_refpolicy *p);

/* ---- trust_reload.c ---- */

/* --trust-db @path with the raw key @keyfile, at start (NULL: none). Return: 0, -1 (said). */
int vf_trust_open(struct verifier *vf, const char *path, const char *keyfile);
/* From the scheduler's thread: the file changed? Loaded again, the policies retired. */
void vf_trust_check(struct verifier *vf, int64_t now_ms);
void vf_trust_free(struct verifier *vf);
/* Under vf->lock: @p (cached) stays valid until vf_policy_put. Return: the hold, NULL if none. */
struct vf_pcache *vf_policy_hold(struct verifier *vf, const struct vg_refpolicy *p);
/* The boot references of the trust database a held policy was parsed with (NULL: none). */
const struct vg_trust_boot *vf_pcache_boot(const struct vf_pcache *c);
/* Under vf->lock: the sha256 (hex) of the document @p (cached) was parsed from, "" if unknown. */
const char *vf_policy_digest(struct verifier *vf, const struct vg_refpolicy *p);
/* Takes vf->lock: a round is done with its policy. NULL-safe. */
void vf_policy_put(struct verifier *vf, struct vf_pcache *c);
/* At exit: every cached policy freed. */
void vf_policy_cache_free(struct verifier *vf);

/*
 * vf_evidence_judge - POST /v1/verify/evidence (evidence.c): @e judged as
 * a round from a fresh state, nothing stored. *@ret: {"valid", "claims",
 * "failures": [{"type", "context"}], "failure_count"[, "entries"]}; with
 * @e->ear, *@ret_ear (its length *@ear_len) the verdict as a signed EAR
 * instead (vf_ear_evidence). Return: the HTTP status: 200 (judged, *@ret
 * or *@ret_ear set), 501 (an EAR, and no --ear-key), 400 (the AK or the
 * policy sent does not load), 404 (no such policy name), 503, 500; @err
 * says why when not 200.
 */
int vf_evidence_judge(struct verifier *vf, const struct vg_api_evidence *e, json_object **ret,
		      char **ret_ear, size_t *ear_len, char *err, size_t errlen);

/* ---- ear.c: verdicts as signed EARs (docs/attest-ear.md) ---- */

/* an EAR's appraisal policy id: "NAME@sha256:HEX" of the stored document, "sha256:HEX" sent */
#define VF_EAR_POLICY_ID_MAX (VG_API_ID_MAX + 80)

/*
 * vf_ear_sign - @e's claims as a JWS signed by the key process
 * (--ear-key). *@ret malloc'd, its length in *@len.
 * Return: the HTTP status: 200, 501 (no --ear-key), 400 (the nonce), 500;
 * @err says why when not 200.
 */
int vf_ear_sign(const struct vg_ear *e, char **ret, size_t *len, char *err, size_t errlen);

/*
 * vf_ear_agent - agent @id's latest verdict as a signed EAR: its state,
 * its latest round's failures (the history's newest lines: the listed
 * ones) and their count (failure_count), its policy, @nonce (NULL none).
 * Return: as vf_ear_sign, and 404 (no such agent).
 */
int vf_ear_agent(struct verifier *vf, const char *id, const char *nonce, char **ret, size_t *len,
		 char *err, size_t errlen);

/*
 * @e's verdict @v as a signed EAR (evidence.c), its policy @policy_id
 * (VF_EAR_POLICY_ID_MAX, "" none). The AK sent is looked up
 * among the registered agents: a registered agent's is named and has its
 * registration's identity (VG_EAR_ID_EK_CA or _EK); another has none (no
 * instance-identity claim, never affirming). Return: as vf_ear_sign, and
 * 500 (the store).
 */
int vf_ear_evidence(struct verifier *vf, const struct vg_api_evidence *e, const char *policy_id,
		    const struct vg_attest_verdict *v, char **ret, size_t *len, char *err,
		    size_t errlen);

/* ---- actions.c ---- */

/*
 * Under vf->lock: @v into @id's history; *@h is the line (for vf_notify,
 * once the state it goes with is committed).
 * Return: 0, -1 (not written: said).
 */
int vf_history(struct verifier *vf, const char *id, const struct vg_attest_verdict *v,
	       struct vg_store_verdict *h);

/* ---- notify.c ---- */

/* What a target's queue did: queued, sent, failed attempts, dropped; waiting now. */
struct vf_notify_counts {
	uint64_t queued, sent, failed, dropped;
	size_t pending;
};

/* Before the rounds: a queue (of @max notices) and its thread per target configured. Return: 0, -errno. */
int vf_notify_start(struct verifier *vf, unsigned int max);
/*
 * The line @h of agent @id to --webhook and --on-fail (a reboot to
 * neither): queued, never sent here and never waited for; a full queue
 * drops it (counted, said). Call once the state it tells is committed.
 */
void vf_notify(struct verifier *vf, const char *id, const struct vg_store_verdict *h);
/* @sink's counters now (zeros when not configured). */
void vf_notify_counts(struct verifier *vf, unsigned int sink, struct vf_notify_counts *c);
/* "webhook", "hook". */
const char *vf_notify_sink_name(unsigned int sink);
/*
 * At the stop: the threads end their attempt (a command running is
 * waited for @grace_ms, then left to the exit); what waits is dropped
 * (said).
 */
void vf_notify_stop(struct verifier *vf, unsigned int grace_ms);
/*
 * Under vf->lock: say when the store starts failing (once per distinct
 * message) and when it answers again. @msg NULL: the call succeeded.
 */
void vf_store_status(struct verifier *vf, const char *msg);

/* ---- bootlog_cache.c ---- */

/* What the cache knows of an agent's boot log (used only by that agent's round). */
struct vf_bootc {
	struct vf_bootc *next;
	char id[VG_API_ID_MAX];
	uint8_t ak[32];			/* SHA-256 of the registered AK public */
	bool fetched;			/* asked for since the entry was made or reset */
	bool keyed;			/* reset/restart say which boot it is */
	bool have;			/* the agent serves a boot log (not 404) */
	bool malformed;			/* ... that does not decode: msg */
	uint32_t reset, restart;
	struct vg_attest_boot boot;
	char msg[512];
	/* the log's events judged by the policy's measured_boot section, once per log */
	bool mb_on;			/* ... judged with a section whose id is mbid */
	uint8_t mbid[32];
	struct vg_attest_verdict *mbv;	/* its failures; NULL: passed or not judged */
	/*
	 * a section with from_archive or announced (issue 45) is judged once the
	 * quote names the boot (vf_bootc_boot): the log kept until then, and the
	 * round's boot references (set by round.c)
	 */
	uint8_t *raw;
	size_t rawlen;
	const struct vg_trust_boot *archive;
};

/* Return: the entry of @a (made if new), NULL on no memory. */
struct vf_bootc *vf_bootc_get(struct verifier *vf, const struct vg_store_agent *a);
/*
 * GET /v1/bootlog (from @src) into @c: replayed, and its events judged by
 * @pol's measured_boot section (if any). Return: 0, -1 (communication: @v).
 */
int vf_bootc_fetch(struct verifier *vf, struct vf_source *src, const struct vg_store_agent *a,
		   const struct vg_refpolicy *pol, struct vf_bootc *c, struct vg_attest_verdict *v);
/* @c's events were judged by another measured_boot section than @pol's (or none). */
bool vf_bootc_stale(const struct vf_bootc *c, const struct vg_refpolicy *pol);
/*
 * The quote @q (verified) names the boot: a boot other than the one the
 * entry holds has its log fetched again.
 * Return: 0, -1 (communication: @v).
 */
int vf_bootc_boot(struct verifier *vf, struct vf_source *src, const struct vg_store_agent *a,
		  const struct vg_refpolicy *pol, struct vf_bootc *c, const struct vg_tpms_attest *q,
		  struct vg_attest_verdict *v);
void vf_bootc_free(struct verifier *vf);

/* ---- round.c ---- */

/*
 * One round for agent @id: evidence fetched from its URL, judged, the
 * store updated. @row: its row as the scheduler's claim read it
 * (vg_store_lease_take), judged in place (the round's scratch: the
 * caller frees it), or NULL: read here.
 */
void vf_round(struct verifier *vf, const char *id, struct vg_store_agent *row);
/*
 * The same round with its evidence from @src (push.c), for the agent whose
 * row the caller read into *@a (judged from it, as a claimed row is: the
 * commit is compare-and-set), in place. *@stored: the round's outcome was
 * stored, and *@a is the row as stored (else *@a is the round's scratch).
 * Return: 0 trusted, 1 failed, -1 no answer (agent.comm), -2 not judged
 * (no such agent, failed already, shutdown, or @src->retry).
 */
int vf_round_from(struct verifier *vf, struct vg_store_agent *a, struct vf_source *src,
		  bool *stored);

/* ---- round_pool.c ---- */

/* @p with no thread yet, at most @max (0: 1). Return: 0, -errno (pthread). */
int vf_pool_init(struct vf_pool *p, unsigned int max);
/*
 * @fn(@arg) on a thread of @p: an idle one, or one made when none is idle
 * and fewer than max exist (else it waits its turn, in order). The
 * caller keeps the tasks outstanding within max (the scheduler: one per
 * round slot). Return: 0, -ENOMEM, -ESHUTDOWN (stopping), -errno
 * (pthread_create, and no thread to take it).
 */
int vf_pool_run(struct vf_pool *p, void (*fn)(void *arg), void *arg);
/* The threads @p has now, and has made since it started. */
void vf_pool_counts(struct vf_pool *p, unsigned int *threads, uint64_t *made);
/*
 * The threads end once what is queued has run; waits up to @wait_ms for
 * them. Return: true when none is left.
 */
bool vf_pool_stop(struct vf_pool *p, unsigned int wait_ms);

/* ---- scheduler.c ---- */

/* A round of ours judged @id trusted at @ms (wall ms), for the silence watch. */
void vf_okc_set(struct verifier *vf, const char *id, int64_t ms);
/* At exit, once nothing is in flight. */
void vf_sched_free(struct verifier *vf);
/*
 * Rounds until vf->stop: each agent due --interval after its last round
 * started, claimed from the store (earliest due first) while fewer than
 * --max-rounds are running, late past due + VF_LATE_SLACK_MS; a
 * heartbeat every VF_BEAT_MS; SIGHUP (vf->reload) reloads the tokens.
 */
void vf_schedule(struct verifier *vf);
/*
 * heartbeat.c: our row in the store, every VF_BEAT_MS; vf->sched.leader from
 * the rows, read first. Our row written since our last beat by a verifier
 * that started before us: we stop (vf->stop, vf->exit_code 2).
 */
void vf_heartbeat(struct verifier *vf);
/*
 * heartbeat.c, before the first beat: that no verifier running beats under
 * our id (--verifier-id). A row of ours is read again every 250 ms until
 * its beat is VF_BEAT_ALIVE_MS old: a beat since is a verifier running
 * (refused), none a predecessor that stopped (ours now: said, as is a row
 * older than that). Return: 0, -EEXIST or -EIO with @diag.
 */
int vf_heartbeat_unique(struct verifier *vf, struct vg_diag *diag);
/* token_reload.c: SIGHUP (vf->reload): the token list read again, said to the service manager. */
void vf_reload_tokens(struct verifier *vf);
/* Return: rounds running and late reports being sent (what the stop waits for). */
size_t vf_rounds_in_flight(struct verifier *vf);
/* Rounds running, agents due and not claimed yet, agents late, now. */
void vf_sched_counts(struct verifier *vf, unsigned int *running, unsigned int *queued,
		     unsigned int *late);
/* Return: the due time (wall ms) @id is late against, 0 when it is not late. */
int64_t vf_sched_late(struct verifier *vf, const char *id);
/*
 * A round of ours of @id whose request timed out: when the round was
 * watched (its agent trusted) and the watch's deadline has passed, @v's
 * message becomes the one the silence watch gives (the watch reports it
 * no more): an agent that never finishes answering is reported in one way
 * whichever timer fires first. Return: true when @v was rewritten.
 */
bool vf_sched_timed_out(struct verifier *vf, const char *id, struct vg_attest_verdict *v);

/* ---- api_json.c ---- */

/* The body of an API answer and its HTTP status. */
struct vf_answer {
	unsigned int code;
	json_object *body;
};

/* An agent's status; @due: what vf_sched_late says of it (0: not late). */
json_object *vf_json_agent(const struct vg_store_agent *a, int64_t due);
/* A verifier's heartbeat row, as of @now (wall ms): alive while under VF_BEAT_ALIVE_MS old. */
json_object *vf_json_verifier(const struct vg_store_verifier *v, int64_t now);
/* vg_store_verdict_list's callback: @arg is a JSON array. */
int vf_json_verdict_cb(void *arg, const struct vg_store_verdict *v);
/* {"error": msg}. Return: the HTTP status @code. */
unsigned int vf_answer_error(struct vf_answer *ans, unsigned int code, const char *msg);
/* {"failure": id, "message": msg}. Return: @code. */
unsigned int vf_answer_failure(struct vf_answer *ans, unsigned int code, unsigned int fail,
			       const char *msg);

/* ---- rest.c ---- */

struct vf_api;
struct http_guard;
struct sockaddr_in;

struct vf_api_opts {
	const struct sockaddr_in *sa;
	const char *cert_pem;		/* HTTPS (the key is the key process's); NULL: HTTP */
	const char *ca_pem;		/* client certificates from these CAs are asked for */
	unsigned int timeout_s;		/* --api-timeout */
	unsigned int max_conn;		/* --api-max-conn, per client address */
	unsigned int idle_s;		/* --api-idle-timeout */
	unsigned int connections;	/* --api-connections, in all */
	struct http_guard *guard;	/* the reaper of slow requests and idle connections */
};

/* Serve the API on four threads. Return: 0, -ENOMEM, -EADDRNOTAVAIL (cannot listen). */
int vf_api_start(struct verifier *vf, const struct vf_api_opts *o, struct vf_api **ret);
/* Waits for the requests being answered. NULL-safe. */
void vf_api_stop(struct vf_api *api);

/* ---- register.c ---- */

/*
 * vf_register - POST /v1/agents: identity from the agent, EK certificate,
 * AK, credential activation, then the agent stored as registered.
 * Return (also in ans->code; ans->body is the answer, always set):
 * 201 (the agent), 400 (body), 403 (typed failure), 409 (EK changed),
 * 500, 502 (the agent did not answer).
 */
unsigned int vf_register(struct verifier *vf, const char *body, size_t len,
			 struct vf_answer *ans);
/*
 * vf_register_challenge - the checks of a registration of @id with the
 * identity @idn, by a pushing agent's credential @cred (NULL: pulled):
 * the bindings (a known id keeps its EK: 409 identity.ek_changed; an EK
 * registered under another id: 403 identity.ek_bound naming it; a push
 * credential that registered another id: 403 naming it), the EK
 * certificate against --ek-ca, the AK a restricted signing key; then
 * MakeCredential into @act and the proof the agent must give,
 * HMAC(secret, @id), into @mac.
 * Return: 0 (go on), or the HTTP status of the refusal in @ans.
 */
unsigned int vf_register_challenge(struct verifier *vf, const char *id,
				   const struct vg_api_identity *idn, const char *cred,
				   struct vg_api_activate *act, uint8_t mac[32],
				   struct vf_answer *ans);
/*
 * The proof was right: @id stored as registered, the bindings checked
 * again under the lock of the write (for @cred, a push registration, the
 * id must still be unknown). Return: 201; 403, 409 (refused), 500 (@ans).
 */
unsigned int vf_register_proven(struct verifier *vf, const char *id, const char *url,
				const char *policy, const struct vg_api_identity *idn,
				const char *cred, struct vf_answer *ans);

/* ---- push.c ---- */

/* A push agent's url in the store: "push:" and the credential it registered with. */
#define VF_PUSH_URL "push:"
/* a push agent not heard from for --interval + this is stale */
#define VF_STALE_SLACK_MS 2000
/* a challenge (nonce) is good for one push within this long */
#define VF_PUSH_NONCE_MS 30000
/* "token:ID" or "cert:SUBJECT", with the NUL: it fits the store's url after "push:" */
#define VF_PUSH_CRED_MAX 248

int vf_push_init(struct verifier *vf);
void vf_push_free(struct verifier *vf);
/* @a pushes its evidence (its url is VF_PUSH_URL...). */
bool vf_push_agent(const struct vg_store_agent *a);
/*
 * The four push routes, for the credential @cred ("token:ID" or
 * "cert:SUBJECT", rest.c) on agent @id. Return: the HTTP status (@ans).
 */
unsigned int vf_push_register(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans);
unsigned int vf_push_activate(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans);
unsigned int vf_push_nonce(struct verifier *vf, const char *cred, const char *id,
			   struct vf_answer *ans);
unsigned int vf_push_evidence(struct verifier *vf, const char *cred, const char *id,
			      const char *body, size_t len, struct vf_answer *ans);
/* The status of @a as the API shows it: vf_json_agent, late, and for push agents stale. */
json_object *vf_json_status(struct verifier *vf, const struct vg_store_agent *a);
/*
 * From the scheduler's listing of the store (scheduler.c: every pushing
 * agent, @n of them, failed ones too): those silent past their interval
 * become stale (once each).
 */
void vf_push_watch(struct verifier *vf, const struct vg_store_due *push, size_t n);
/* Push agents stale now (metrics). */
unsigned int vf_push_stale_count(struct verifier *vf);

#endif
