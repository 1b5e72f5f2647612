// SPDX-License-Identifier: MIT
/*
 * bench/verifier_bench.c - what one core of vigil-verifier does per second:
 * whole rounds of evidence (quote signature, nonce, pcrDigest, clock,
 * PCR 10 replay, reference policy on every new entry) through
 * vg_attest_evidence_check, on a generated kernel-format list.
 *
 *   vigil-bench-verifier LIST [INCREMENT]
 *
 * LIST: a binary ima-ng list (bench/mklog.py). The AK is a software key
 * in a TPM2B_PUBLIC with AK attributes and the quotes are built and
 * signed here, before the timed loops, exactly as a TPM lays them out:
 * the verifier cannot tell and no TPM jitter enters the figures.
 * Scenarios: first attestation of the whole list; steady state (INCREMENT
 * new entries per quote, default 10) with and without the SQLite store
 * read+write each round (what the verifier daemon does), and with the
 * PostgreSQL store when VIGIL_BENCH_PG is a libpq URL (bench/verifier
 * starts a throwaway cluster on a unix socket); the store's get+put alone
 * for each backend (wall time: PostgreSQL's work is in the server
 * process, not in our CPU time); quote only (no
 * new entries) for ECDSA P-256 and RSA-2048 AKs; policy JSON parse; and
 * memory: the policy's heap, and per agent the store row.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "vigil/attest.h"
#include "vigil/imalog.h"
#include "store.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU time of this (single-threaded) process: "per core" even on a loaded machine */
static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *m)
{
	fprintf(stderr, "bench: %s\n", m);
	exit(2);
}

struct key {
	EVP_PKEY *k;
	bool rsa;
	uint8_t pub[1024];
	size_t pub_len;
	struct vg_attest_ak *ak;
};

static void make_key(struct key *k, bool rsa)
{
	TPM2B_PUBLIC p = { 0 };
	size_t off = 0;

	k->rsa = rsa;
	k->k = rsa ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
		   : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!k->k)
		die("keygen");
	p.publicArea.nameAlg = TPM2_ALG_SHA256;
	p.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
					TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	if (rsa) {
		BIGNUM *n = NULL;

		p.publicArea.type = TPM2_ALG_RSA;
		p.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
		p.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
		p.publicArea.parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
		p.publicArea.parameters.rsaDetail.keyBits = 2048;
		EVP_PKEY_get_bn_param(k->k, OSSL_PKEY_PARAM_RSA_N, &n);
		p.publicArea.unique.rsa.size = 256;
		BN_bn2binpad(n, p.publicArea.unique.rsa.buffer, 256);
		BN_free(n);
	} else {
		uint8_t pt[65];
		size_t l;

		p.publicArea.type = TPM2_ALG_ECC;
		p.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
		p.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
		p.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
		p.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		p.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
		EVP_PKEY_get_octet_string_param(k->k, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &l);
		p.publicArea.unique.ecc.x.size = 32;
		memcpy(p.publicArea.unique.ecc.x.buffer, pt + 1, 32);
		p.publicArea.unique.ecc.y.size = 32;
		memcpy(p.publicArea.unique.ecc.y.buffer, pt + 33, 32);
	}
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&p, k->pub, sizeof(k->pub), &off) != TSS2_RC_SUCCESS)
		die("marshal AK");
	k->pub_len = off;
	if (vg_attest_ak_load(k->pub, k->pub_len, &k->ak, NULL) < 0)
		die("AK load");
}

struct quote {
	uint8_t attest[256], sig[600];
	size_t alen, slen;
	uint8_t nonce[20];
	struct vg_digest pcr10;
};

static void put(uint8_t **p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

/* A TPMS_ATTEST quote over sha256 PCR 10 = @pcr and its TPMT_SIGNATURE. */
static void make_quote(const struct key *k, const struct vg_digest *pcr, uint64_t clock,
		       struct quote *q)
{
	uint8_t *p = q->attest, dig[32], der[600];
	size_t nl, dl = sizeof(der);
	const uint8_t *name = vg_attest_ak_name(k->ak, &nl);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	for (int i = 0; i < 20; i++)
		q->nonce[i] = (uint8_t)rand();
	q->pcr10 = *pcr;
	EVP_Digest(pcr->bytes, pcr->len, dig, NULL, EVP_sha256(), NULL);
	put(&p, TPM2_GENERATED_VALUE, 4);
	put(&p, TPM2_ST_ATTEST_QUOTE, 2);
	put(&p, nl, 2);
	memcpy(p, name, nl);
	p += nl;
	put(&p, 20, 2);
	memcpy(p, q->nonce, 20);
	p += 20;
	put(&p, clock, 8);
	put(&p, 1, 4);
	put(&p, 0, 4);
	put(&p, 1, 1);
	put(&p, 0x2019102300163636ull, 8);
	put(&p, 1, 4);
	put(&p, TPM2_ALG_SHA256, 2);
	put(&p, 3, 1);
	put(&p, 0, 1);
	put(&p, 0x04, 1);
	put(&p, 0, 1);
	put(&p, 32, 2);
	memcpy(p, dig, 32);
	p += 32;
	q->alen = (size_t)(p - q->attest);
	if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k->k) <= 0 ||
	    EVP_DigestSign(md, der, &dl, q->attest, q->alen) <= 0)
		die("sign");
	EVP_MD_CTX_free(md);
	p = q->sig;
	if (k->rsa) {
		put(&p, TPM2_ALG_RSASSA, 2);
		put(&p, TPM2_ALG_SHA256, 2);
		put(&p, dl, 2);
		memcpy(p, der, dl);
		p += dl;
	} else {
		const uint8_t *dp = der;
		ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &dp, (long)dl);
		uint8_t r[32], s[32];

		BN_bn2binpad(ECDSA_SIG_get0_r(es), r, 32);
		BN_bn2binpad(ECDSA_SIG_get0_s(es), s, 32);
		ECDSA_SIG_free(es);
		put(&p, TPM2_ALG_ECDSA, 2);
		put(&p, TPM2_ALG_SHA256, 2);
		put(&p, 32, 2);
		memcpy(p, r, 32);
		p += 32;
		put(&p, 32, 2);
		memcpy(p, s, 32);
		p += 32;
	}
	q->slen = (size_t)(p - q->sig);
}

static int check(const struct key *k, const struct vg_refpolicy *pol, const struct quote *q,
		 const uint8_t *log, size_t len, uint64_t off, struct vg_attest_state *st)
{
	struct vg_attest_request req = { q->nonce, 20, VG_HASH_SHA256, 1u << 10 };
	struct vg_attest_evidence ev = { .attest = q->attest, .attest_len = q->alen, .sig = q->sig,
					 .sig_len = q->slen, .log = log, .log_len = len,
					 .log_offset = off, .log_algo = VG_HASH_SHA1 };
	struct vg_attest_verdict v;
	bool reboot;
	int r;

	ev.pcrs.v[VG_HASH_SHA256][10] = q->pcr10;
	ev.pcrs.have[VG_HASH_SHA256] = 1u << 10;
	vg_attest_verdict_init(&v);
	r = vg_attest_evidence_check(k->ak, pol, &req, &ev, st, &reboot, &v);
	if (r != 0) {
		fprintf(stderr, "bench: evidence refused: %s %s\n", vg_attest_fail_id(v.fail), v.msg);
		exit(1);
	}
	return r;
}

static size_t heap(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

int main(int argc, char **argv)
{
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_imalog_replay *rp;
	struct vg_refpolicy *pol;
	struct key ec, rsa;
	struct stat sb;
	uint8_t *log;
	size_t n = 0, len, inc = argc > 2 ? strtoul(argv[2], NULL, 10) : 10, h0;
	size_t *offs;
	struct vg_digest *pcrs;
	double t, best, w, bestw;
	int fd;

	if (argc < 2)
		die("usage: vigil-bench-verifier LIST [INCREMENT]");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) < 0)
		die("cannot open the list");
	len = (size_t)sb.st_size;
	log = malloc(len);
	if (!log || read(fd, log, len) != (ssize_t)len)
		die("read");
	close(fd);
	/* entry boundaries and the sha256 PCR 10 after each entry */
	vg_imalog_parser_init(&ps, log, len, VG_HASH_SHA1);
	while (vg_imalog_parser_next(&ps, &e, NULL) == 1)
		n++;
	offs = malloc((n + 1) * sizeof(*offs));
	pcrs = malloc((n + 1) * sizeof(*pcrs));
	if (!offs || !pcrs || vg_imalog_replay_new(1u << VG_HASH_SHA256, 0, &rp, NULL) < 0)
		die("memory");
	h0 = heap();
	vg_refpolicy_new(&pol);
	vg_imalog_parser_init(&ps, log, len, VG_HASH_SHA1);
	offs[0] = 0;
	memset(&pcrs[0], 0, sizeof(pcrs[0]));
	pcrs[0].algo = VG_HASH_SHA256;
	pcrs[0].len = 32;
	for (size_t i = 0; i < n; i++) {
		struct vg_digest fd_;
		const uint8_t *db;
		size_t dl;
		unsigned int algo;
		char path[4096];
		size_t pl = e.f[1].len;

		vg_imalog_parser_next(&ps, &e, NULL);
		vg_imalog_replay_entry(rp, &e, i, NULL);
		vg_imalog_replay_get(rp, 10, VG_HASH_SHA256, &pcrs[i + 1]);
		offs[i + 1] = ps.off;
		vg_imalog_field_digest(&e.f[0], &algo, &db, &dl, NULL);
		fd_.algo = (uint8_t)algo;
		fd_.len = (uint8_t)dl;
		memcpy(fd_.bytes, db, dl);
		pl = e.f[1].len - 1;
		memcpy(path, e.f[1].data, pl);
		path[pl] = 0;
		vg_refpolicy_allow(pol, path, &fd_);
	}
	vg_imalog_replay_free(rp);
	printf("## bench/verifier — one core, %zu-entry ima-ng list (%zu bytes), policy of %zu paths\n\n",
	       n, len, vg_refpolicy_paths(pol));
	printf("| scenario | CPU per round | per core | wall per round |\n|---|---|---|---|\n");
	make_key(&ec, false);
	make_key(&rsa, true);

	/* first attestation: whole list, ECDSA AK */
	best = 1e9;
	bestw = 1e9;
	for (int rep = 0; rep < 5; rep++) {
		struct vg_attest_state st = { 0 };
		struct quote q;

		vg_attest_logstate_init(&st.log, VG_HASH_SHA256);
		make_quote(&ec, &pcrs[n], 1000, &q);
		t = cpu();
		w = now();
		check(&ec, pol, &q, log, len, 0, &st);
		t = cpu() - t;
		w = now() - w;
		if (t < best)
			best = t;
		if (w < bestw)
			bestw = w;
	}
	printf("| first attestation, %zu entries (quote + replay + policy) | %.1f ms | %.0f entries/s | %.1f ms |\n",
	       n, best * 1e3, (double)n / best, bestw * 1e3);

	/* steady state: INCREMENT new entries per quote, from the middle of the list */
	{
		size_t start = n / 2, rounds = (n - start) / (inc ? inc : 1);
		struct quote *qs;
		struct vg_attest_state st = { 0 };
		struct vg_store *store;
		struct vg_store_agent *a = calloc(1, sizeof(*a));
		char dbpath[64] = "/tmp/vigil-bench-XXXXXX";	/* + "/v.db" */

		if (rounds > 20000)
			rounds = 20000;
		if (inc == 0)
			rounds = 20000;
		qs = malloc(rounds * sizeof(*qs));
		if (!qs || !a)
			die("memory");
		const char *pg = getenv("VIGIL_BENCH_PG");

		for (int pass = 0; pass < (pg && *pg ? 3 : 2); pass++) {
			bool with_store = pass >= 1;

			vg_attest_logstate_init(&st.log, VG_HASH_SHA256);
			st.clock.valid = false;
			{
				struct quote q0;

				make_quote(&ec, &pcrs[start], 1000, &q0);
				check(&ec, pol, &q0, log, offs[start], 0, &st);
			}
			for (size_t r = 0; r < rounds; r++)
				make_quote(&ec, &pcrs[start + (r + 1) * inc], 2000 + r, &qs[r]);
			if (pass == 2) {
				struct vg_diag dg = { 0 };

				if (vg_store_open(pg, &store, &dg) < 0)
					die(dg.msg);
			} else if (with_store) {
				if (!mkdtemp(dbpath))
					die("mkdtemp");
				strcat(dbpath, "/v.db");
				if (vg_store_open(dbpath, &store, NULL) < 0)
					die("store");
			}
			if (with_store) {
				snprintf(a->id, sizeof(a->id), "agent");
				memcpy(a->ak_pub, ec.pub, ec.pub_len);
				a->ak_pub_len = ec.pub_len;
				a->st = st;
				vg_store_agent_put(store, a, NULL);
			}
			t = cpu();
			w = now();
			for (size_t r = 0; r < rounds; r++) {
				size_t o0 = offs[start + r * inc], o1 = offs[start + (r + 1) * inc];

				if (with_store) {
					vg_store_agent_get(store, "agent", a, NULL);
					st = a->st;
				}
				check(&ec, pol, &qs[r], log + o0, o1 - o0, o0, &st);
				if (with_store) {
					a->st = st;
					a->rounds++;
					vg_store_agent_put(store, a, NULL);
				}
			}
			t = cpu() - t;
			w = now() - w;
			printf("| steady state, %zu new entries per quote%s | %.1f µs | %.0f quotes+logs/s | %.1f µs |\n",
			       inc, pass == 2 ? ", PostgreSQL get+put per round (wall time is the figure)"
			       : with_store ? ", SQLite get+put per round" : "",
			       t / (double)rounds * 1e6, (double)rounds / (pass == 2 ? w : t),
			       w / (double)rounds * 1e6);
			if (with_store) {
				char *slash = strrchr(dbpath, '/');
				struct timespec s0, s1;
				const int reps = 2000;
				double sw;

				/* the store alone: one agent's get+put, what each round adds */
				clock_gettime(CLOCK_MONOTONIC, &s0);
				for (int k = 0; k < reps; k++) {
					vg_store_agent_get(store, "agent", a, NULL);
					a->rounds++;
					vg_store_agent_put(store, a, NULL);
				}
				clock_gettime(CLOCK_MONOTONIC, &s1);
				sw = (double)(s1.tv_sec - s0.tv_sec) + (double)(s1.tv_nsec - s0.tv_nsec) / 1e9;
				printf("| store alone, %s: agent get+put | — | %.0f rounds/s | %.1f µs |\n",
				       pass == 2 ? "PostgreSQL (local socket)" : "SQLite (WAL)", reps / sw,
				       sw / reps * 1e6);
				if (pass == 2) {
					vg_store_agent_del(store, "agent", NULL);
					vg_store_close(store);
					continue;
				}
				vg_store_close(store);
				unlink(dbpath);
				*slash = 0;
				rmdir(dbpath);
			}
		}
		free(qs);
		free(a);
	}

	/* quote only, no new entries */
	for (int kk = 0; kk < 2; kk++) {
		struct key *k = kk ? &rsa : &ec;
		size_t rounds = 5000;
		struct quote *qs = malloc(rounds * sizeof(*qs));
		struct vg_attest_state st = { 0 };

		vg_attest_logstate_init(&st.log, VG_HASH_SHA256);
		st.log.pcr = pcrs[n];
		st.log.entries = n;
		st.log.offset = len;
		for (size_t r = 0; r < rounds; r++)
			make_quote(k, &pcrs[n], 10 + r, &qs[r]);
		t = cpu();
		w = now();
		for (size_t r = 0; r < rounds; r++)
			check(k, pol, &qs[r], log + len, 0, len, &st);
		t = cpu() - t;
		w = now() - w;
		printf("| quote only (%s AK), no new entries | %.1f µs | %.0f quotes/s | %.1f µs |\n",
		       kk ? "RSA-2048" : "ECDSA P-256", t / (double)rounds * 1e6, (double)rounds / t,
		       w / (double)rounds * 1e6);
		free(qs);
	}

	/* policy document: serialise, parse */
	{
		char *json;
		long jl = vg_refpolicy_to_json(pol, &json);
		struct vg_refpolicy *p2;
		size_t h1 = heap();

		t = cpu();
		w = now();
		if (vg_refpolicy_load((const uint8_t *)json, (size_t)jl, &p2, NULL) < 0)
			die("policy parse");
		t = cpu() - t;
		w = now() - w;
		printf("| policy JSON parse (%ld bytes; once per upload or verifier start, not per quote) | %.1f ms | — | %.1f ms |\n",
		       jl, t * 1e3, w * 1e3);
		printf("\nmemory: the policy of %zu paths takes %.1f MiB of heap (%.0f bytes/path), "
		       "shared by every agent using it;\n", vg_refpolicy_paths(pol),
		       (double)(heap() - h1) / 1048576.0, (double)(heap() - h1) / (double)n);
		vg_refpolicy_free(p2);
		free(json);
		(void)h0;
	}
	/* per agent: its store row (nothing stays in memory between rounds) */
	{
		char dir[] = "/tmp/vigil-bench-XXXXXX", path[64];
		struct vg_store *s;
		struct vg_store_agent *a = calloc(1, sizeof(*a));
		struct stat st;
		const int agents = 10000;

		if (!mkdtemp(dir) || !a)
			die("mkdtemp");
		snprintf(path, sizeof(path), "%s/v.db", dir);
		vg_store_open(path, &s, NULL);
		memcpy(a->ak_pub, ec.pub, ec.pub_len);
		a->ak_pub_len = ec.pub_len;
		a->ek_pub_len = 314;
		a->ek_cert_len = 1016;
		vg_attest_logstate_init(&a->st.log, VG_HASH_SHA256);
		for (int i = 0; i < agents; i++) {
			snprintf(a->id, sizeof(a->id), "agent-%05d", i);
			vg_store_agent_put(s, a, NULL);
		}
		vg_store_close(s);
		stat(path, &st);
		printf("per agent: %.0f bytes in the SQLite store (%d agents, EK cert included); the "
		       "round itself holds %zu bytes of state plus the transient list\n",
		       (double)st.st_size / agents, agents, sizeof(struct vg_attest_state));
		unlink(path);
		snprintf(path, sizeof(path), "%s/v.db-wal", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/v.db-shm", dir);
		unlink(path);
		rmdir(dir);
		free(a);
	}
	vg_refpolicy_free(pol);
	vg_attest_ak_free(ec.ak);
	vg_attest_ak_free(rsa.ak);
	EVP_PKEY_free(ec.k);
	EVP_PKEY_free(rsa.k);
	free(offs);
	free(pcrs);
	free(log);
	return 0;
}
