// SPDX-License-Identifier: MIT
/*
 * attest_ear.c - a verdict as an EAR (draft-ietf-rats-ear): its claims
 * with the AR4SI trustworthiness vector (vg_ear_claims), and the JWS
 * compact serialisation that signs them (vg_jws_compact through a signer
 * callback; vg_jws_sign_pkey and vg_jws_verify_pkey for an EVP_PKEY). It
 * neither reads keys nor knows where the signer lives: the verifier's key
 * process signs (verifier/keyproc.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>

#include "vigil/attest_ear.h"
#include "vigil/text.h"

static const char *const alg_names[] = {
	[VG_JWS_ES256] = "ES256", [VG_JWS_ES384] = "ES384", [VG_JWS_ES512] = "ES512",
	[VG_JWS_PS256] = "PS256", [VG_JWS_RS256] = "RS256", [VG_JWS_EDDSA] = "EdDSA",
};

const char *vg_jws_alg_name(unsigned int alg)
{
	return alg < sizeof(alg_names) / sizeof(alg_names[0]) ? alg_names[alg] : NULL;
}

int vg_jws_alg_for_key(EVP_PKEY *pk, bool rsa_pkcs1, struct vg_diag *diag)
{
	char group[64] = "";

	if (!pk)
		return vg_diag_set(diag, -EINVAL, "no key");
	if (EVP_PKEY_is_a(pk, "RSA")) {
		if (EVP_PKEY_get_bits(pk) < 2048)
			return vg_diag_set(diag, -EOPNOTSUPP, "an RSA key of %d bits (2048 at least)",
					   EVP_PKEY_get_bits(pk));
		return rsa_pkcs1 ? VG_JWS_RS256 : VG_JWS_PS256;
	}
	if (EVP_PKEY_is_a(pk, "ED25519"))
		return VG_JWS_EDDSA;
	if (!EVP_PKEY_is_a(pk, "EC"))
		return vg_diag_set(diag, -EOPNOTSUPP, "a %s key (EC P-256/384/521, RSA or Ed25519)",
				   EVP_PKEY_get0_type_name(pk));
	if (!EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
					    NULL))
		return vg_diag_set(diag, -EOPNOTSUPP, "an EC key without a named curve");
	if (strcmp(group, "prime256v1") == 0)
		return VG_JWS_ES256;
	if (strcmp(group, "secp384r1") == 0)
		return VG_JWS_ES384;
	if (strcmp(group, "secp521r1") == 0)
		return VG_JWS_ES512;
	return vg_diag_set(diag, -EOPNOTSUPP, "an EC key on %s (P-256, P-384 or P-521)", group);
}

/* the digest of @alg (NULL for EdDSA) and, for ECDSA, the size of r and of s */
static const EVP_MD *alg_md(unsigned int alg, size_t *ec_n)
{
	*ec_n = 0;
	switch (alg) {
	case VG_JWS_ES256:
		*ec_n = 32;
		return EVP_sha256();
	case VG_JWS_ES384:
		*ec_n = 48;
		return EVP_sha384();
	case VG_JWS_ES512:
		*ec_n = 66;
		return EVP_sha512();
	case VG_JWS_PS256:
	case VG_JWS_RS256:
		return EVP_sha256();
	default:
		return NULL;
	}
}

/* does @alg go with @pk? */
static bool alg_fits(EVP_PKEY *pk, unsigned int alg)
{
	int want = vg_jws_alg_for_key(pk, alg == VG_JWS_RS256, NULL);

	return want > 0 && (unsigned int)want == alg;
}

/* a context for @pk under @alg, for signing or verifying */
static EVP_MD_CTX *alg_ctx(EVP_PKEY *pk, unsigned int alg, bool sign)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	size_t n;
	const EVP_MD *md = alg_md(alg, &n);
	int r;

	if (!ctx)
		return NULL;
	r = sign ? EVP_DigestSignInit(ctx, &pctx, md, NULL, pk)
		 : EVP_DigestVerifyInit(ctx, &pctx, md, NULL, pk);
	if (r != 1)
		goto fail;
	if (alg == VG_JWS_PS256 &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1 ||
	     EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) != 1))
		goto fail;
	if (alg == VG_JWS_RS256 && EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1)
		goto fail;
	return ctx;
fail:
	EVP_MD_CTX_free(ctx);
	return NULL;
}

int vg_jws_sign_pkey(EVP_PKEY *pk, unsigned int alg, const uint8_t *in, size_t len,
		     uint8_t sig[VG_JWS_SIG_MAX], size_t *siglen, struct vg_diag *diag)
{
	uint8_t der[VG_JWS_SIG_MAX + 16];
	size_t dl = sizeof(der), n;
	EVP_MD_CTX *ctx;
	ECDSA_SIG *es;
	const BIGNUM *r, *s;
	const unsigned char *p = der;
	int ok;

	if (!alg_fits(pk, alg))
		return vg_diag_set(diag, -EOPNOTSUPP, "%s is not this key's algorithm",
				   vg_jws_alg_name(alg) ? vg_jws_alg_name(alg) : "?");
	alg_md(alg, &n);
	ctx = alg_ctx(pk, alg, true);
	if (!ctx)
		return vg_diag_ssl(diag, -EIO, "signing");
	/* EdDSA signs in one shot; the others could stream, but one call serves all */
	if (EVP_DigestSign(ctx, NULL, &dl, in, len) != 1 || dl > sizeof(der))
		ok = 0;
	else
		ok = EVP_DigestSign(ctx, der, &dl, in, len);
	EVP_MD_CTX_free(ctx);
	if (ok != 1)
		return vg_diag_ssl(diag, -EIO, "signing");
	if (!n) {
		if (dl > VG_JWS_SIG_MAX)
			return vg_diag_set(diag, -EIO, "a signature of %zu bytes", dl);
		memcpy(sig, der, dl);
		*siglen = dl;
		return 0;
	}
	/* ECDSA: DER SEQUENCE { r, s } -> r || s, each the curve's size (RFC 7518 3.4) */
	es = d2i_ECDSA_SIG(NULL, &p, (long)dl);
	if (!es)
		return vg_diag_ssl(diag, -EIO, "ECDSA signature");
	ECDSA_SIG_get0(es, &r, &s);
	ok = BN_bn2binpad(r, sig, (int)n) == (int)n && BN_bn2binpad(s, sig + n, (int)n) == (int)n;
	ECDSA_SIG_free(es);
	if (!ok)
		return vg_diag_set(diag, -EIO, "ECDSA signature: r or s too long");
	*siglen = 2 * n;
	return 0;
}

size_t vg_b64url_encode(const uint8_t *in, size_t len, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0, i;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = t[v >> 18];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = t[(v >> 6) & 63];
		out[o++] = t[v & 63];
	}
	if (len - i == 1) {
		out[o++] = t[in[i] >> 2];
		out[o++] = t[(in[i] & 3) << 4];
	} else if (len - i == 2) {
		out[o++] = t[in[i] >> 2];
		out[o++] = t[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		out[o++] = t[(in[i + 1] & 15) << 2];
	}
	out[o] = 0;
	return o;
}

static int b64url_val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

int vg_b64url_decode(const char *in, size_t len, uint8_t *out)
{
	uint32_t acc = 0;
	unsigned int bits = 0;
	size_t o = 0;

	if (len % 4 == 1)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		int v = b64url_val(in[i]);

		if (v < 0)
			return -EBADMSG;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (acc)			/* non-zero padding bits: not the canonical encoding */
		return -EBADMSG;
	return (int)o;
}

int vg_jws_compact(unsigned int alg, const char *typ, const uint8_t *payload, size_t len,
		   vg_jws_sign_fn sign, void *arg, char **ret, struct vg_diag *diag)
{
	json_object *h;
	const char *hs;
	size_t hl, n = 0, cap;
	uint8_t sig[VG_JWS_SIG_MAX];
	size_t sl = 0;
	char *out;
	int r;

	if (!vg_jws_alg_name(alg))
		return vg_diag_set(diag, -EINVAL, "no JWS algorithm");
	h = json_object_new_object();
	if (!h)
		return vg_diag_set(diag, -ENOMEM, "JWS header");
	json_object_object_add(h, "alg", json_object_new_string(vg_jws_alg_name(alg)));
	if (typ)
		json_object_object_add(h, "typ", json_object_new_string(typ));
	hs = json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE);
	hl = hs ? strlen(hs) : 0;
	cap = (hl + 2) / 3 * 4 + 1 + (len + 2) / 3 * 4 + 1 + (VG_JWS_SIG_MAX + 2) / 3 * 4 + 1;
	out = hs ? malloc(cap) : NULL;
	if (!out) {
		json_object_put(h);
		return vg_diag_set(diag, -ENOMEM, "JWS");
	}
	n = vg_b64url_encode((const uint8_t *)hs, hl, out);
	json_object_put(h);
	out[n++] = '.';
	n += vg_b64url_encode(payload, len, out + n);
	r = sign(arg, (const uint8_t *)out, n, sig, &sl);
	if (r < 0 || sl > VG_JWS_SIG_MAX) {
		free(out);
		return vg_diag_set(diag, r < 0 ? r : -EIO, "signing the EAR");
	}
	out[n++] = '.';
	n += vg_b64url_encode(sig, sl, out + n);
	*ret = out;
	return (int)n;
}

int vg_jws_verify_pkey(EVP_PKEY *pk, const char *jws, size_t len, char **ret_payload,
		       struct vg_diag *diag)
{
	const char *d1 = memchr(jws, '.', len), *d2;
	uint8_t *hdr = NULL, *pl = NULL, sig[VG_JWS_SIG_MAX + 8], der[VG_JWS_SIG_MAX + 16];
	json_object *h = NULL, *a;
	unsigned int alg = 0;
	size_t n, sl_max;
	int hl, pll, sl, r = -EBADMSG;
	EVP_MD_CTX *ctx = NULL;
	const uint8_t *sp;
	size_t spl;

	d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - jws)) : NULL;
	if (!d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - jws)))
		return vg_diag_set(diag, -EBADMSG, "not a JWS compact serialisation");
	sl_max = len - (size_t)(d2 + 1 - jws);
	if (sl_max / 4 * 3 > sizeof(sig) - 4)
		return vg_diag_set(diag, -EBADMSG, "JWS: signature too long");
	hdr = malloc((size_t)(d1 - jws) / 4 * 3 + 4);
	pl = malloc((size_t)(d2 - d1) / 4 * 3 + 4);
	if (!hdr || !pl) {
		r = vg_diag_set(diag, -ENOMEM, "JWS");
		goto out;
	}
	hl = vg_b64url_decode(jws, (size_t)(d1 - jws), hdr);
	pll = vg_b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), pl);
	sl = vg_b64url_decode(d2 + 1, sl_max, sig);
	if (hl < 0 || pll < 0 || sl < 0) {
		r = vg_diag_set(diag, -EBADMSG, "JWS: not base64url");
		goto out;
	}
	hdr[hl] = 0;
	h = json_tokener_parse((const char *)hdr);
	if (!h || !json_object_object_get_ex(h, "alg", &a) || !json_object_is_type(a, json_type_string)) {
		r = vg_diag_set(diag, -EBADMSG, "JWS: a header without alg");
		goto out;
	}
	for (unsigned int i = 1; i < sizeof(alg_names) / sizeof(alg_names[0]); i++)
		if (strcmp(json_object_get_string(a), alg_names[i]) == 0)
			alg = i;
	if (!alg || !alg_fits(pk, alg)) {
		r = vg_diag_set(diag, -EKEYREJECTED, "JWS: alg %s is not this key's",
				json_object_get_string(a));
		goto out;
	}
	alg_md(alg, &n);
	sp = sig;
	spl = (size_t)sl;
	if (n) {
		/* r || s -> DER for OpenSSL */
		ECDSA_SIG *es = ECDSA_SIG_new();
		BIGNUM *br, *bs;
		unsigned char *q = der;
		int dl;

		if ((size_t)sl != 2 * n || !es) {
			ECDSA_SIG_free(es);
			r = vg_diag_set(diag, -EKEYREJECTED, "JWS: an ECDSA signature of %d bytes", sl);
			goto out;
		}
		br = BN_bin2bn(sig, (int)n, NULL);
		bs = BN_bin2bn(sig + n, (int)n, NULL);
		if (!br || !bs || ECDSA_SIG_set0(es, br, bs) != 1) {
			BN_free(br);
			BN_free(bs);
			ECDSA_SIG_free(es);
			r = vg_diag_set(diag, -ENOMEM, "JWS");
			goto out;
		}
		dl = i2d_ECDSA_SIG(es, &q);
		ECDSA_SIG_free(es);
		if (dl <= 0) {
			r = vg_diag_set(diag, -ENOMEM, "JWS");
			goto out;
		}
		sp = der;
		spl = (size_t)dl;
	}
	ctx = alg_ctx(pk, alg, false);
	if (!ctx) {
		r = vg_diag_ssl(diag, -ENOMEM, "JWS");
		goto out;
	}
	if (EVP_DigestVerify(ctx, sp, spl, (const uint8_t *)jws, (size_t)(d2 - jws)) != 1) {
		r = vg_diag_ssl(diag, -EKEYREJECTED, "JWS: the signature does not verify");
		goto out;
	}
	pl[pll] = 0;
	r = pll;
	if (ret_payload) {
		*ret_payload = (char *)pl;
		pl = NULL;
	}
out:
	EVP_MD_CTX_free(ctx);
	json_object_put(h);
	free(hdr);
	free(pl);
	return r;
}

/* ---- the EAR claims ---- */

static const char *const claim_names[VG_EAR__CLAIMS] = {
	"instance-identity", "configuration", "executables", "file-system",
	"hardware", "runtime-opaque", "storage-opaque", "sourced-data",
};

const char *vg_ear_claim_name(unsigned int c)
{
	return c < VG_EAR__CLAIMS ? claim_names[c] : NULL;
}

const char *vg_ear_tier_name(unsigned int t)
{
	static const char *const n[] = { "none", "affirming", "warning", "contraindicated" };

	return t < sizeof(n) / sizeof(n[0]) ? n[t] : NULL;
}

unsigned int vg_ear_tier_of(int value)
{
	if (value >= 96)
		return VG_EAR_TIER_CONTRAINDICATED;
	if (value >= 32)
		return VG_EAR_TIER_WARNING;
	if (value >= 2)
		return VG_EAR_TIER_AFFIRMING;
	return value <= -2 ? VG_EAR_TIER_CONTRAINDICATED : VG_EAR_TIER_NONE;
}

/*
 * AR4SI values used (draft-ietf-rats-ar4si section 2.3): 2 affirming in
 * every claim; 32 unsafe hardware; 33 unrecognized runtime; 96
 * contraindicated (untrustworthy instance, unsupportable configuration,
 * contraindicated runtime or files); 97 unrecognized instance or
 * hardware; 99 cryptographic validation of the evidence failed.
 */
bool vg_ear_claim(unsigned int fail, unsigned int *claim, int *value)
{
	unsigned int c = VG_EAR_EXECUTABLES;
	int v = 96;

	switch (fail) {
	case VG_AF_NONE:
	case VG_AF_REBOOT:
	case VG_AF_COMM:
	case VG_AF_LATE:
	case VG_AF_STALE:
		return false;
	case VG_AF_MALFORMED:
	case VG_AF_SIG_SCHEME:
	case VG_AF_SIGNATURE:
	case VG_AF_NOT_QUOTE:
	case VG_AF_PCR_DIGEST:
	case VG_AF_CREDENTIAL:
		c = VG_EAR_INSTANCE_IDENTITY, v = 99;
		break;
	case VG_AF_NONCE:
	case VG_AF_CLOCK:
	case VG_AF_AK:
		c = VG_EAR_INSTANCE_IDENTITY, v = 96;
		break;
	case VG_AF_EK_CHANGED:
	case VG_AF_EK_BOUND:
		c = VG_EAR_INSTANCE_IDENTITY, v = 97;
		break;
	case VG_AF_PCR_SELECTION:
	case VG_AF_BOOT_EVENT:
		c = VG_EAR_CONFIGURATION, v = 96;
		break;
	case VG_AF_UNSAFE:
		c = VG_EAR_HARDWARE, v = 32;
		break;
	case VG_AF_EK_CERT:
		c = VG_EAR_HARDWARE, v = 97;
		break;
	case VG_AF_LOG_MALFORMED:
	case VG_AF_LOG_ENTRY:
	case VG_AF_LOG_PCR:
	case VG_AF_BOOT_MALFORMED:
	case VG_AF_BOOT_PCR:
	case VG_AF_BOOT_AGG:
		v = 99;
		break;
	case VG_AF_NOT_IN_POLICY:
	case VG_AF_DIGEST_UNSUPPORTED:
	case VG_AF_PACKAGE_NEWER:
		v = 33;
		break;
	case VG_AF_VIOLATION:
		c = VG_EAR_FILE_SYSTEM;
		break;
	default:
		/* policy.digest, policy.signature, policy.boot_aggregate, log.progress,
		 * boot.pcr_value, policy.keyring_key, and any failure added later: a
		 * contraindicated runtime */
		break;
	}
	*claim = c;
	*value = v;
	return true;
}

bool vg_ear_nonce_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < VG_EAR_NONCE_MIN || n > VG_EAR_NONCE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("._~-", s[i])))
			return false;
	return true;
}

/* Text from the attested host (a path, a message) as a JSON string: vigil/text.h. */
static json_object *json_text(const char *s)
{
	const char *t = vg_text_show(s);
	json_object *o = json_object_new_string(t ? t : "?");

	if (t != s)
		free((char *)t);
	return o;
}

static json_object *failure_json(const struct vg_attest_verdict *f)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(vg_attest_fail_id(f->fail)));
	if (f->entry >= 0)
		json_object_object_add(o, "entry", json_object_new_int64(f->entry));
	if (f->path[0])
		json_object_object_add(o, "path", json_text(f->path));
	if (f->digest[0])
		json_object_object_add(o, "digest", json_text(f->digest));
	json_object_object_add(o, "message", json_text(f->msg));
	return o;
}

int vg_ear_claims(const struct vg_ear *e, char **ret, struct vg_diag *diag)
{
	int vec[VG_EAR__CLAIMS] = { 0 };
	bool has[VG_EAR__CLAIMS] = { false }, identity_ok = true;
	uint64_t count = e->v ? vg_attest_verdict_count(e->v) : 0;
	size_t listed = e->v ? vg_attest_verdict_listed(e->v) : 0;
	unsigned int tier = VG_EAR_TIER_NONE;
	json_object *root, *sub, *subs, *tv, *vid, *arr;
	const char *s;
	char *out;

	if (!e->submod || !*e->submod)
		return vg_diag_set(diag, -EINVAL, "EAR: no submodule name");
	if (e->nonce && !vg_ear_nonce_ok(e->nonce))
		return vg_diag_set(diag, -EINVAL, "eat_nonce: %d to %d characters of "
				   "[A-Za-z0-9._~-]", VG_EAR_NONCE_MIN, VG_EAR_NONCE_MAX);
	for (size_t i = 0; i < listed; i++) {
		const struct vg_attest_verdict *f = vg_attest_verdict_nth(e->v, i);
		unsigned int c;
		int v;

		if (f->fail >= VG_AF_MALFORMED && f->fail <= VG_AF_CREDENTIAL)
			identity_ok = false;
		if (!vg_ear_claim(f->fail, &c, &v))
			continue;
		if (!has[c] || vg_ear_tier_of(v) > vg_ear_tier_of(vec[c]))
			vec[c] = v;
		has[c] = true;
	}
	if (e->subject == VG_EAR_JUDGED) {
		/* identity is claimed only where this verifier proved the AK to a certified EK */
		if (identity_ok && !has[VG_EAR_INSTANCE_IDENTITY] && e->identity == VG_EAR_ID_EK_CA)
			vec[VG_EAR_INSTANCE_IDENTITY] = 2, has[VG_EAR_INSTANCE_IDENTITY] = true;
		if (!count)
			vec[VG_EAR_EXECUTABLES] = 2, has[VG_EAR_EXECUTABLES] = true;
		for (unsigned int c = 0; c < VG_EAR__CLAIMS; c++)
			if (has[c] && vg_ear_tier_of(vec[c]) > tier)
				tier = vg_ear_tier_of(vec[c]);
		if (count)
			tier = VG_EAR_TIER_CONTRAINDICATED;
		else if (tier == VG_EAR_TIER_AFFIRMING && e->identity != VG_EAR_ID_EK_CA)
			tier = e->identity == VG_EAR_ID_EK ? VG_EAR_TIER_WARNING : VG_EAR_TIER_NONE;
	}
	root = json_object_new_object();
	sub = json_object_new_object();
	subs = json_object_new_object();
	tv = json_object_new_object();
	vid = json_object_new_object();
	arr = json_object_new_array();
	if (!root || !sub || !subs || !tv || !vid || !arr) {
		json_object_put(root);
		json_object_put(sub);
		json_object_put(subs);
		json_object_put(tv);
		json_object_put(vid);
		json_object_put(arr);
		return vg_diag_set(diag, -ENOMEM, "EAR");
	}
	json_object_object_add(root, "eat_profile", json_object_new_string(VG_EAR_PROFILE));
	json_object_object_add(root, "iat", json_object_new_int64(e->iat));
	if (e->nonce)
		json_object_object_add(root, "eat_nonce", json_object_new_string(e->nonce));
	json_object_object_add(vid, "developer",
			       json_object_new_string(e->developer ? e->developer : "vigil"));
	json_object_object_add(vid, "build", json_object_new_string(e->build ? e->build : ""));
	json_object_object_add(root, "ear.verifier-id", vid);
	json_object_object_add(sub, "ear.status", json_object_new_string(vg_ear_tier_name(tier)));
	for (unsigned int c = 0; c < VG_EAR__CLAIMS; c++)
		if (has[c])
			json_object_object_add(tv, claim_names[c], json_object_new_int(vec[c]));
	json_object_object_add(sub, "ear.trustworthiness-vector", tv);
	if (e->policy_id)
		json_object_object_add(sub, "ear.appraisal-policy-id",
				       json_object_new_string(e->policy_id));
	if (e->agent_id)
		json_object_object_add(sub, "vigil.agent-id", json_object_new_string(e->agent_id));
	if (e->state)
		json_object_object_add(sub, "vigil.state", json_object_new_string(e->state));
	json_object_object_add(sub, "vigil.failure-count", json_object_new_int64((int64_t)count));
	for (size_t i = 0; i < listed; i++)
		json_object_array_add(arr, failure_json(vg_attest_verdict_nth(e->v, i)));
	json_object_object_add(sub, "vigil.failures", arr);
	json_object_object_add(subs, e->submod, sub);
	json_object_object_add(root, "submods", subs);
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	out = s ? strdup(s) : NULL;
	json_object_put(root);
	if (!out)
		return vg_diag_set(diag, -ENOMEM, "EAR");
	*ret = out;
	return (int)strlen(out);
}
