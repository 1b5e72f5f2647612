// SPDX-License-Identifier: MIT
/*
 * keyproc.c - the key process: the API's TLS private key (--api-key)
 * lives only here. The network process gives libmicrohttpd a GnuTLS
 * external key (gnutls_privkey_import_ext4) through
 * MHD_OPTION_HTTPS_CERT_CALLBACK; its sign and info callbacks are
 * requests over a socketpair (store_ipc.h: KEY_INFO, KEY_SIGN_DATA,
 * KEY_SIGN_HASH, each answered by KEY_ANSWER), serialised by a mutex
 * (libmicrohttpd's four threads handshake at once). The key process
 * parses the key file once at start, then only those fixed messages: a
 * network process taken over can have handshake data signed, but cannot
 * carry the key away.
 *
 * The EAR signing key (--ear-key) lives here too: EAR_SIGN asks for the
 * JWS signature of an EAR's signing input (attest_ear.h), answered by
 * KEY_ANSWER. The key process is started when either key is given; each
 * request for a key it does not hold ends it (a protocol violation).
 *
 * Forked before the store process, so that the store process never has
 * the key in its memory (the network process wipes its copy right after
 * the fork); it forgets the --db URL's passwords itself (privsep.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>

#include "vigil/attest_ear.h"

#include "log.h"
#include "privsep.h"
#include "store_ipc.h"

#define WHO "key process"
#define PCERTS_MAX 16

static struct ipc_chan key_ch = { .fd = -1 };
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static gnutls_pcert_st pcerts[PCERTS_MAX];
static unsigned int npcerts;
static gnutls_privkey_t ext_key;
static unsigned int ear_alg;		/* the --ear-key's JWS algorithm, 0: none */

static int info(gnutls_privkey_t key, unsigned int flags)
{
	unsigned int bits = 0;
	int pk = gnutls_privkey_get_pk_algorithm(key, &bits);

	if (flags & GNUTLS_PRIVKEY_INFO_PK_ALGO)
		return pk;
	if (flags & GNUTLS_PRIVKEY_INFO_PK_ALGO_BITS)
		return (int)bits;
	if (flags & GNUTLS_PRIVKEY_INFO_HAVE_SIGN_ALGO)
		return gnutls_sign_supports_pk_algorithm(GNUTLS_FLAGS_TO_SIGN_ALGO(flags),
							 (gnutls_pk_algorithm_t)pk) ? 1 : 0;
	return 0;	/* GNUTLS_PRIVKEY_INFO_SIGN_ALGO: no preference */
}

static void answer(struct ipc_chan *ch, int r, const gnutls_datum_t *sig)
{
	struct ipc_out o = { 0 };
	bool ok = sig && r == 0 && sig->size <= SIPC_SIG_MAX;

	if (sig && r == 0 && !ok)
		r = GNUTLS_E_INTERNAL_ERROR;	/* a signature over SIPC_SIG_MAX */
	ipc_put_u32(&o, (uint32_t)r);
	ipc_put_bytes(&o, ok ? sig->data : NULL, ok ? sig->size : 0);
	if (ipc_send(ch, SIPC_KEY_ANSWER, &o, -1) < 0)
		_exit(0);
}

/* EAR_SIGN: the JWS signature of the signing input */
static void ear_sign(struct ipc_chan *ch, struct ipc_in *in, EVP_PKEY *ear)
{
	uint8_t sig[VG_JWS_SIG_MAX];
	gnutls_datum_t sd = { sig, 0 };
	const uint8_t *p;
	size_t len, sl = 0;
	int r;

	p = ipc_get_bytes(in, SIPC_EAR_IN_MAX, &len);
	ipc_end(in);
	r = vg_jws_sign_pkey(ear, ear_alg, p, len, sig, &sl, NULL);
	sd.size = (unsigned int)sl;
	answer(ch, r, &sd);
}

static _Noreturn void key_main(int fd, gnutls_privkey_t key, EVP_PKEY *ear)
{
	struct ipc_chan ch;

	/* set up by proc_start (vf_procs[VF_PROC_KEY]): nothing of the parent's but stdio and fd */
	sipc_chan(&ch, fd, WHO);
	for (;;) {
		struct ipc_in in;
		gnutls_datum_t d, sig = { 0 };
		uint32_t algo, flags;
		size_t len;
		int r;

		if (ipc_recv(&ch, &in) < 0)
			break;
		if (in.type == SIPC_EAR_SIGN) {
			if (!ear)
				ipc_die(WHO, "an EAR to sign, and no --ear-key");
			ear_sign(&ch, &in, ear);
			ipc_in_free(&in);
			continue;
		}
		if (!key)
			ipc_die(WHO, "a TLS request, and no --api-key");
		if (in.type == SIPC_KEY_INFO) {
			flags = ipc_get_u32(&in);
			ipc_end(&in);
			answer(&ch, info(key, flags), NULL);
			ipc_in_free(&in);
			continue;
		}
		if (in.type != SIPC_KEY_SIGN_DATA && in.type != SIPC_KEY_SIGN_HASH)
			ipc_die(WHO, "not a key request");
		algo = ipc_get_u32(&in);
		flags = ipc_get_u32(&in);
		d.data = (unsigned char *)ipc_get_bytes(&in, SIPC_SIGN_IN_MAX, &len);
		d.size = (unsigned int)len;
		ipc_end(&in);
		if (in.type == SIPC_KEY_SIGN_DATA)
			r = gnutls_privkey_sign_data2(key, (gnutls_sign_algorithm_t)algo, flags, &d, &sig);
		else
			r = gnutls_privkey_sign_hash2(key, (gnutls_sign_algorithm_t)algo, flags, &d, &sig);
		answer(&ch, r, &sig);
		gnutls_free(sig.data);
		ipc_in_free(&in);
	}
	if (key)
		gnutls_privkey_deinit(key);
	EVP_PKEY_free(ear);
	_exit(0);
}

/* one request, its KEY_ANSWER: Return: its result; *@sig gnutls_malloc'd when given */
static int ask(uint32_t t, uint32_t algo, uint32_t flags, const gnutls_datum_t *d, gnutls_datum_t *sig)
{
	struct ipc_out o = { 0 };
	struct ipc_in in;
	const uint8_t *p;
	size_t len;
	int r;

	if (t == SIPC_KEY_INFO) {
		ipc_put_u32(&o, flags);
	} else {
		if (d->size > SIPC_SIGN_IN_MAX)
			return GNUTLS_E_INVALID_REQUEST;
		ipc_put_u32(&o, algo);
		ipc_put_u32(&o, flags);
		ipc_put_bytes(&o, d->data, d->size);
	}
	pthread_mutex_lock(&key_lock);
	if (ipc_send(&key_ch, t, &o, -1) < 0 || ipc_recv(&key_ch, &in) < 0) {
		vlog_err("the key process is gone");
		_exit(2);
	}
	pthread_mutex_unlock(&key_lock);
	if (in.type != SIPC_KEY_ANSWER)
		ipc_die("the key process's answer", "not a KEY_ANSWER");
	r = (int)ipc_get_u32(&in);
	p = ipc_get_bytes(&in, SIPC_SIG_MAX, &len);
	ipc_end(&in);
	if (sig && r == 0) {
		sig->data = gnutls_malloc(len ? len : 1);
		sig->size = (unsigned int)len;
		if (!sig->data)
			r = GNUTLS_E_MEMORY_ERROR;
		else if (len)
			memcpy(sig->data, p, len);
	}
	ipc_in_free(&in);
	return r;
}

static int ext_sign_data(gnutls_privkey_t key, gnutls_sign_algorithm_t algo, void *arg,
			 unsigned int flags, const gnutls_datum_t *data, gnutls_datum_t *sig)
{
	(void)key;
	(void)arg;
	return ask(SIPC_KEY_SIGN_DATA, (uint32_t)algo, flags, data, sig);
}

static int ext_sign_hash(gnutls_privkey_t key, gnutls_sign_algorithm_t algo, void *arg,
			 unsigned int flags, const gnutls_datum_t *hash, gnutls_datum_t *sig)
{
	(void)key;
	(void)arg;
	return ask(SIPC_KEY_SIGN_HASH, (uint32_t)algo, flags, hash, sig);
}

static int ext_info(gnutls_privkey_t key, unsigned int flags, void *arg)
{
	(void)key;
	(void)arg;
	return ask(SIPC_KEY_INFO, 0, flags, NULL, NULL);
}

int vg_privsep_key_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
			const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
			gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
	(void)session;
	(void)req_ca_dn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	*pcert = pcerts;
	*pcert_length = npcerts;
	*pkey = ext_key;
	return 0;
}

int vg_privsep_ear_sign(void *arg, const uint8_t *in, size_t len, uint8_t *sig, size_t *siglen)
{
	struct ipc_out o = { 0 };
	struct ipc_in ans;
	const uint8_t *p;
	size_t n;
	int r;

	(void)arg;
	if (!ear_alg)
		return -ENOKEY;
	if (len > SIPC_EAR_IN_MAX)
		return -E2BIG;
	ipc_put_bytes(&o, in, len);
	pthread_mutex_lock(&key_lock);
	if (ipc_send(&key_ch, SIPC_EAR_SIGN, &o, -1) < 0 || ipc_recv(&key_ch, &ans) < 0) {
		vlog_err("the key process is gone");
		_exit(2);
	}
	pthread_mutex_unlock(&key_lock);
	if (ans.type != SIPC_KEY_ANSWER)
		ipc_die("the key process's answer", "not a KEY_ANSWER");
	r = (int)ipc_get_u32(&ans);
	p = ipc_get_bytes(&ans, SIPC_SIG_MAX, &n);
	ipc_end(&ans);
	if (r == 0 && n > VG_JWS_SIG_MAX)
		ipc_die("the key process's answer", "a signature too long");
	if (r == 0) {
		memcpy(sig, p, n);
		*siglen = n;
	}
	ipc_in_free(&ans);
	return r < 0 ? r : 0;
}

unsigned int vg_privsep_ear_alg(void)
{
	return ear_alg;
}

/* @pem's private key, and its JWS algorithm in *@alg; @pem wiped. Return: the key, NULL (diag). */
static EVP_PKEY *ear_load(char *pem, unsigned int *alg, struct vg_diag *diag)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	int r;

	BIO_free(b);
	OPENSSL_cleanse(pem, strlen(pem));
	if (!k) {
		vg_diag_ssl(diag, -EBADMSG, "--ear-key: not a PEM private key");
		return NULL;
	}
	r = vg_jws_alg_for_key(k, false, diag);
	if (r < 0) {
		char why[sizeof(diag->msg)];

		snprintf(why, sizeof(why), "%s", diag->msg);
		vg_diag_set(diag, r, "--ear-key: %s, which cannot sign EARs", why);
		EVP_PKEY_free(k);
		return NULL;
	}
	*alg = (unsigned int)r;
	return k;
}

int vg_privsep_key_start(char *key_pem, const char *cert_pem, char *ear_pem, char *db,
			 struct vg_diag *diag)
{
	gnutls_privkey_t key = NULL;
	EVP_PKEY *ear = NULL;
	unsigned int alg = 0;
	int fd, r;
	pid_t pid;

	if (ear_pem && !(ear = ear_load(ear_pem, &alg, diag)))
		return diag ? diag->err : -EBADMSG;
	if (key_pem) {
		gnutls_datum_t kd = { (unsigned char *)key_pem, (unsigned int)strlen(key_pem) };
		gnutls_datum_t cd = { (unsigned char *)cert_pem, (unsigned int)strlen(cert_pem) };

		npcerts = PCERTS_MAX;
		r = gnutls_pcert_list_import_x509_raw(pcerts, &npcerts, &cd, GNUTLS_X509_FMT_PEM, 0);
		if (r < 0) {
			EVP_PKEY_free(ear);
			return vg_diag_set(diag, -EBADMSG, "--api-cert: %s", gnutls_strerror(r));
		}
		if (gnutls_privkey_init(&key) < 0) {
			EVP_PKEY_free(ear);
			return vg_diag_set(diag, -ENOMEM, "key process");
		}
		r = gnutls_privkey_import_x509_raw(key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
		OPENSSL_cleanse(key_pem, kd.size);	/* from here on, only the key process has it */
		if (r < 0) {
			gnutls_privkey_deinit(key);
			EVP_PKEY_free(ear);
			return vg_diag_set(diag, -EBADMSG, "--api-key: %s", gnutls_strerror(r));
		}
	}
	pid = proc_start(&vf_procs[VF_PROC_KEY], &fd);
	if (pid == 0) {
		vg_privsep_forget_url(db);
		ear_alg = alg;
		key_main(fd, key, ear);
	}
	if (key)
		gnutls_privkey_deinit(key);	/* our copies */
	EVP_PKEY_free(ear);
	if (pid < 0)
		return vg_diag_set(diag, (int)pid, "key process: %s", strerror(-(int)pid));
	sipc_chan(&key_ch, fd, "the key process's answer");
	ear_alg = alg;
	if (key_pem &&
	    (gnutls_privkey_init(&ext_key) < 0 ||
	     gnutls_privkey_import_ext4(ext_key, NULL, ext_sign_data, ext_sign_hash, NULL, NULL,
					ext_info, 0) < 0))
		return vg_diag_set(diag, -EIO, "key process: the external key");
	return 0;
}
