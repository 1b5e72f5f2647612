// SPDX-License-Identifier: MIT
/*
 * agent_tamper.c - the attacker simulation of vigil-agent-tamper, the test
 * build (agent_tamper.h lists the modes). Compiled only into that
 * executable; the shipped vigil-agent has none of it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <tss2/tss2_mu.h>

#include "vigil/fileio.h"
#include "vigil/imalog.h"

#include "agent_tamper.h"

#ifndef VIGIL_AGENT_TAMPER
#error "agent_tamper.c is only built into vigil-agent-tamper"
#endif

/* The first word of --tamper-file (read per request), or "". */
static void mode_of(const struct agent *a, char *mode, size_t cap)
{
	uint8_t *b = NULL;
	size_t n = 0;

	mode[0] = 0;
	if (!a->tamper_file || vg_file_read(a->tamper_file, 4096, &b, &n, NULL) < 0)
		return;
	if (sscanf((const char *)b, "%31s", mode) != 1)
		mode[0] = 0;
	mode[cap - 1] = 0;
	free(b);
}

/* forge-ak: a software P-256 key dressed as a TPM AK (the TPM does not hold it) */
static size_t forged_ak(uint8_t *out, size_t cap)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	uint8_t pt[65];
	size_t ptl = 0, off = 0;
	TPM2B_PUBLIC pub = { 0 };

	if (!k)
		return 0;
	if (!EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt), &ptl) ||
	    ptl != 65) {
		EVP_PKEY_free(k);
		return 0;
	}
	EVP_PKEY_free(k);
	pub.publicArea.type = TPM2_ALG_ECC;
	pub.publicArea.nameAlg = TPM2_ALG_SHA256;
	pub.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					  TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
					  TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	pub.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
	pub.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
	pub.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
	pub.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
	pub.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	pub.publicArea.unique.ecc.x.size = 32;
	memcpy(pub.publicArea.unique.ecc.x.buffer, pt + 1, 32);
	pub.publicArea.unique.ecc.y.size = 32;
	memcpy(pub.publicArea.unique.ecc.y.buffer, pt + 33, 32);
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, out, cap, &off) != TSS2_RC_SUCCESS)
		return 0;
	return off;
}

void agent_tamper_identity(struct agent *a, uint8_t *cert, size_t cert_len, uint8_t *ak,
			   size_t *ak_len)
{
	char mode[32];

	mode_of(a, mode, sizeof(mode));
	if (strcmp(mode, "wrong-ek-cert") == 0 && cert_len)
		cert[cert_len - 1] ^= 1;	/* the issuer's signature no longer verifies */
	if (strcmp(mode, "forge-ak") == 0)
		*ak_len = forged_ak(ak, VG_ATPM_PUB_MAX);
}

const char *agent_tamper_quote(struct agent *a, struct vg_api_quote_req *qr)
{
	char mode[32];

	mode_of(a, mode, sizeof(mode));
	if (strcmp(mode, "replay-quote") == 0 && a->first_quote)
		return a->first_quote;
	if (strcmp(mode, "wrong-nonce") == 0)
		qr->nonce[0] ^= 1;
	return NULL;
}

void agent_tamper_quote_sent(struct agent *a, const char *ans)
{
	if (!a->first_quote)
		a->first_quote = strdup(ans);
}

void agent_tamper_log(struct agent *a, uint8_t *buf, size_t *len)
{
	struct vg_imalog_parser p;
	struct vg_imalog_entry e, last = { 0 };
	bool any = false;
	char mode[32];

	mode_of(a, mode, sizeof(mode));
	if (!*len || (strcmp(mode, "alter-log") != 0 && strcmp(mode, "truncate-log") != 0))
		return;
	vg_imalog_parser_init(&p, buf, *len, VG_HASH_SHA1);
	while (vg_imalog_parser_next(&p, &e, NULL) == 1) {
		last = e;
		any = true;
	}
	if (any && strcmp(mode, "alter-log") == 0)
		((uint8_t *)last.f[0].data)[last.f[0].len - 1] ^= 1;	/* the file digest */
	else if (any)
		*len = last.offset;
}

void agent_tamper_release(struct agent *a)
{
	free(a->first_quote);
	a->first_quote = NULL;
}
