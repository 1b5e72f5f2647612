// SPDX-License-Identifier: MIT
/*
 * fuzz_attest_ak.c - an agent's AK (TPM2B_PUBLIC) through vg_attest_ak_load.
 *
 * Properties of every accepted key, each checked outside the library:
 *  - tss2-mu re-marshals the structure to exactly the input bytes (the
 *    Name the verifier binds with MakeCredential is over the bytes a TPM
 *    would hash);
 *  - the attributes are those of a TPM-resident restricted signing key;
 *  - the OpenSSL key is what the verifier supports: RSA of >= 2048 bits
 *    with the size the structure declares and an exponent > 2, or an EC
 *    key on P-256/P-384/P-521 that passes EVP_PKEY_public_check; the
 *    scheme is RSASSA/RSAPSS or ECDSA with SHA-256/384/512 or SM3;
 *  - the Name is nameAlg || H_nameAlg(TPMT_PUBLIC bytes), recomputed here
 *    with OpenSSL, and loading the same bytes again gives the same Name;
 *  - vg_attest_key_id (what the verifier binds an EK by) takes or refuses
 *    any input without harm, and for a loaded key is the SHA-256 of the
 *    DER SubjectPublicKeyInfo of the OpenSSL key.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <tss2/tss2_mu.h>

#include "fuzz.h"
#include "vigil/attest.h"

static const char *md_of(uint16_t alg)
{
	switch (alg) {
	case TPM2_ALG_SHA256: return "SHA256";
	case TPM2_ALG_SHA384: return "SHA384";
	case TPM2_ALG_SHA512: return "SHA512";
	case TPM2_ALG_SM3_256: return "SM3";
	default: return NULL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const TPMA_OBJECT want = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT |
				 TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				 TPMA_OBJECT_SENSITIVEDATAORIGIN;
	struct vg_attest_ak *ak = NULL, *ak2 = NULL;
	struct vg_diag d = { 0 };
	TPM2B_PUBLIC pub;
	uint8_t re[sizeof(TPM2B_PUBLIC) + 16], h[EVP_MAX_MD_SIZE], kid[32];
	size_t off = 0, nl, nl2;
	const uint8_t *name, *name2;
	const EVP_PKEY *k;
	uint16_t sig_alg, hash_alg;
	unsigned int hl = 0;
	const char *mdn;
	int r;

	r = vg_attest_key_id(data, size, kid, NULL);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
	r = vg_attest_ak_load(data, size, &ak, &d);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EOPNOTSUPP || r == -ENOMEM);
	if (r < 0) {
		FUZZ_CHECK(d.err == r && d.msg[0]);
		return 0;
	}
	/* the structure, independently */
	memset(&pub, 0, sizeof(pub));
	FUZZ_CHECK(Tss2_MU_TPM2B_PUBLIC_Unmarshal(data, size, &off, &pub) == TSS2_RC_SUCCESS);
	FUZZ_CHECK(off == size);
	off = 0;
	FUZZ_CHECK(Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, re, sizeof(re), &off) == TSS2_RC_SUCCESS);
	FUZZ_CHECK(off == size && memcmp(re, data, size) == 0);
	FUZZ_CHECK((pub.publicArea.objectAttributes & want) == want);
	FUZZ_CHECK(!(pub.publicArea.objectAttributes & TPMA_OBJECT_DECRYPT));

	/* the key and scheme */
	k = vg_attest_ak_pkey(ak);
	vg_attest_ak_scheme(ak, &sig_alg, &hash_alg);
	FUZZ_CHECK(md_of(hash_alg) != NULL);
	if (EVP_PKEY_is_a(k, "RSA")) {
		BIGNUM *e = NULL;

		FUZZ_CHECK(pub.publicArea.type == TPM2_ALG_RSA);
		FUZZ_CHECK(sig_alg == TPM2_ALG_RSASSA || sig_alg == TPM2_ALG_RSAPSS);
		FUZZ_CHECK(EVP_PKEY_get_bits(k) >= 2048);
		FUZZ_CHECK(EVP_PKEY_get_bits(k) == pub.publicArea.parameters.rsaDetail.keyBits);
		FUZZ_CHECK(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e) == 1);
		FUZZ_CHECK(BN_is_odd(e) && BN_num_bits(e) >= 2);
		BN_free(e);
	} else {
		char group[64];
		size_t gl = 0;
		EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, (EVP_PKEY *)k, NULL);

		FUZZ_CHECK(EVP_PKEY_is_a(k, "EC"));
		FUZZ_CHECK(pub.publicArea.type == TPM2_ALG_ECC && sig_alg == TPM2_ALG_ECDSA);
		FUZZ_CHECK(EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group,
							  sizeof(group), &gl) == 1);
		FUZZ_CHECK(strcmp(group, "prime256v1") == 0 || strcmp(group, "secp384r1") == 0 ||
			   strcmp(group, "secp521r1") == 0);
		FUZZ_CHECK(ctx && EVP_PKEY_public_check(ctx) == 1);
		EVP_PKEY_CTX_free(ctx);
	}

	/* the key id, recomputed */
	{
		uint8_t *der = NULL;
		int n = i2d_PUBKEY((EVP_PKEY *)k, &der);

		FUZZ_CHECK(n > 0 && EVP_Digest(der, (size_t)n, h, &hl, EVP_sha256(), NULL) == 1);
		OPENSSL_free(der);
		FUZZ_CHECK(vg_attest_key_id(data, size, kid, NULL) == 0 && memcmp(kid, h, 32) == 0);
	}

	/* the Name, recomputed, and stable */
	name = vg_attest_ak_name(ak, &nl);
	mdn = md_of(pub.publicArea.nameAlg);
	FUZZ_CHECK(mdn != NULL);
	{
		EVP_MD *md = EVP_MD_fetch(NULL, mdn, NULL);

		FUZZ_CHECK(md && EVP_Digest(data + 2, size - 2, h, &hl, md, NULL) == 1);
		EVP_MD_free(md);
	}
	FUZZ_CHECK(nl == 2 + hl && name[0] == data[4] && name[1] == data[5]);
	FUZZ_CHECK(memcmp(name + 2, h, hl) == 0);
	FUZZ_CHECK(vg_attest_ak_load(data, size, &ak2, NULL) == 0);
	name2 = vg_attest_ak_name(ak2, &nl2);
	FUZZ_CHECK(nl2 == nl && memcmp(name, name2, nl) == 0);
	vg_attest_ak_free(ak2);
	vg_attest_ak_free(ak);
	return 0;
}
