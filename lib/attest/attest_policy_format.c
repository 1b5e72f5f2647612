// SPDX-License-Identifier: MIT
/*
 * attest_policy_format.c - the formats of a reference policy: reads
 * vigil's own JSON, Keylime's runtime policy (v1, plain or inside a DSSE
 * envelope whose signature is NOT checked here) and Keylime's legacy flat
 * allowlist; writes vigil's JSON. What each entry means is the policy's
 * (attest_policy.c); this file only turns text into its calls and back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include <json-c/json.h>
#include <openssl/buffer.h>
#include <openssl/evp.h>

#include "internal.h"
#include "attest_policy.h"
#include "vigil/attest.h"
#include "vigil/attest_boot.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"

/*
 * "algo:hex" (vigil) or bare hex, algorithm implied by its length (Keylime).
 * With @p, an algorithm name vigil does not know (Keylime's "sm3_256",
 * anything else spelled [a-z0-9_-]) is kept as an uncheckable digest of
 * that name (attest_policy.h); without, it is malformed (boot PCR pins
 * must be checkable). A known algorithm with a digest of another length
 * is malformed. Return: 0, -EBADMSG, -E2BIG (too many unknown names), -ENOMEM.
 */
static int parse_digest(struct vg_refpolicy *p, const char *s, struct pdig *d)
{
	const char *colon = strchr(s, ':');
	const char *hex = s;
	bool unknown = false;
	int n;

	memset(d, 0, sizeof(*d));
	d->algo = VG_HASH__LAST;
	if (colon) {
		char name[PDIG_NAME_MAX];
		int a;

		if (colon == s || (size_t)(colon - s) >= sizeof(name))
			return -EBADMSG;
		memcpy(name, s, (size_t)(colon - s));
		name[colon - s] = 0;
		a = vg_hash_by_name(name);
		if (a < 0) {
			if (!p || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(name))
				return -EBADMSG;
			a = vg__refpolicy_ualgo(p, name);
			if (a < 0)
				return a;
			unknown = true;
		}
		d->algo = (uint8_t)a;
		hex = colon + 1;
	}
	n = vg_hex_decode(hex, d->bytes, sizeof(d->bytes));
	if (n < (unknown ? 1 : 20))
		return -EBADMSG;
	if (!unknown && d->algo != VG_HASH__LAST && (size_t)n != vg_hash_size(d->algo))
		return -EBADMSG;
	d->len = (uint8_t)n;
	return 0;
}

static int add_digest_list(struct vg_refpolicy *p, struct table *t, const char *path,
			   json_object *arr, struct vg_diag *diag)
{
	size_t n;
	int r;

	if (!json_object_is_type(arr, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "policy: digests of \"%.200s\" are not a list", path);
	n = json_object_array_length(arr);
	r = vg__reftab_add(t, path, NULL);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		struct pdig d;

		if (!json_object_is_type(o, json_type_string))
			return vg_diag_set(diag, -EBADMSG, "policy: bad digest for \"%.200s\"", path);
		r = parse_digest(p, json_object_get_string(o), &d);
		if (r == -E2BIG)
			return vg_diag_set(diag, -EBADMSG, "policy: more than %u algorithm names vigil "
					   "does not know", PDIG_UNCHECKED_NAMES);
		if (r < 0 && r != -ENOMEM)
			return vg_diag_set(diag, -EBADMSG, "policy: bad digest for \"%.200s\"", path);
		if (r < 0)
			return r;
		r = vg__reftab_add(t, path, &d);
		if (r == -E2BIG)
			return vg_diag_set(diag, r, "policy: more than %u digests (the limit)",
					   VG_REFPOLICY_DIGESTS_MAX);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_digest_map(struct vg_refpolicy *p, struct table *t, json_object *map,
			  const char *what, struct vg_diag *diag)
{
	if (!map)
		return 0;
	if (!json_object_is_type(map, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "policy: \"%s\" is not an object", what);
	json_object_object_foreach(map, k, val) {
		int r = add_digest_list(p, t, k, val, diag);

		if (r < 0)
			return r;
	}
	return 0;
}

long vg_attest_b64_encode(const uint8_t *buf, size_t len, char **ret)
{
	char *out;

	if (len > (1u << 30))
		return -EINVAL;
	out = malloc(4 * ((len + 2) / 3) + 1);
	if (!out)
		return -ENOMEM;
	*ret = out;
	return EVP_EncodeBlock((unsigned char *)out, buf, (int)len);
}

static long b64_decode(const char *s, uint8_t **ret);

long vg_attest_b64_decode(const char *s, uint8_t **ret)
{
	return b64_decode(s, ret);
}

/* Base64 → malloc'd bytes. Return: length, or -EBADMSG/-ENOMEM. */
static long b64_decode(const char *s, uint8_t **ret)
{
	size_t n = strlen(s), pad = 0, j = 0;
	char *clean = malloc(n + 1);
	uint8_t *out;
	int r;

	if (!clean)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\n' && s[i] != '\r' && s[i] != ' ')
			clean[j++] = s[i];
	clean[j] = 0;
	if (j % 4) {
		free(clean);
		return -EBADMSG;
	}
	if (j && clean[j - 1] == '=')
		pad++;
	if (j > 1 && clean[j - 2] == '=')
		pad++;
	out = malloc(j / 4 * 3 + 1);
	if (!out) {
		free(clean);
		return -ENOMEM;
	}
	r = EVP_DecodeBlock(out, (const unsigned char *)clean, (int)j);
	free(clean);
	if (r < 0) {
		free(out);
		return -EBADMSG;
	}
	*ret = out;
	return r - (long)pad;
}

/* Keylime "verification-keys": a JSON string {"pubkeys": [b64 DER SPKI, ...]}. */
static int load_keylime_keys(struct vg_refpolicy *p, json_object *vk, struct vg_diag *diag)
{
	json_object *doc, *arr;
	const char *s;
	int r = 0;

	if (!vk || !json_object_is_type(vk, json_type_string))
		return 0;
	s = json_object_get_string(vk);
	if (!*s)
		return 0;
	doc = json_tokener_parse(s);
	if (!doc)
		return vg_diag_set(diag, -EBADMSG, "policy: verification-keys is not JSON");
	if (json_object_object_get_ex(doc, "pubkeys", &arr) &&
	    json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr) && r >= 0; i++) {
			json_object *o = json_object_array_get_idx(arr, i);
			uint8_t *der;
			long n;

			if (!json_object_is_type(o, json_type_string)) {
				r = vg_diag_set(diag, -EBADMSG, "policy: verification key %zu", i);
				break;
			}
			n = b64_decode(json_object_get_string(o), &der);
			if (n < 0) {
				r = vg_diag_set(diag, (int)n, "policy: verification key %zu base64", i);
				break;
			}
			r = vg_refpolicy_add_key(p, der, (size_t)n, diag);
			free(der);
		}
	}
	json_object_put(doc);
	return r < 0 ? r : 0;
}

static int load_json(struct vg_refpolicy *p, json_object *root, int depth, struct vg_diag *diag);

/* "boot_pcrs": {"0": "hex" | "algo:hex" | [...], ...}: PCR 0-23 but 10 (IMA's). */
static int load_boot_pcrs(struct vg_refpolicy *p, json_object *o, struct vg_diag *diag)
{
	if (!json_object_is_type(o, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs is not an object");
	json_object_object_foreach(o, k, val) {
		char *end;
		unsigned long pcr = strtoul(k, &end, 10);
		bool list = json_object_is_type(val, json_type_array);
		size_t n = list ? json_object_array_length(val) : 1;

		if (!*k || *end || k[0] == '+' || k[0] == '-' || (k[0] == '0' && k[1]) ||
		    pcr >= 24 || pcr == 10)
			return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs: \"%.40s\" is not a PCR "
					   "0-23 other than 10", k);
		if (list && n == 0)
			return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs %lu: no value", pcr);
		for (size_t i = 0; i < n; i++) {
			json_object *e = list ? json_object_array_get_idx(val, i) : val;
			struct pdig d;
			int r;

			if (!json_object_is_type(e, json_type_string) ||
			    parse_digest(NULL, json_object_get_string(e), &d) < 0 ||
			    (d.algo == VG_HASH__LAST && d.len != 20 && d.len != 32 && d.len != 48 &&
			     d.len != 64))
				return vg_diag_set(diag, -EBADMSG, "policy: boot_pcrs %lu: value %zu is "
						   "not [ALGO:]HEX of a PCR", pcr, i);
			r = vg__refpolicy_pin_add(p, (unsigned int)pcr, &d);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int load_dsse(struct vg_refpolicy *p, json_object *root, int depth, struct vg_diag *diag)
{
	json_object *pl, *doc;
	uint8_t *raw;
	long n;
	int r;

	if (!json_object_object_get_ex(root, "payload", &pl) ||
	    !json_object_is_type(pl, json_type_string))
		return vg_diag_set(diag, -EBADMSG, "policy: DSSE envelope without payload");
	n = b64_decode(json_object_get_string(pl), &raw);
	if (n < 0)
		return vg_diag_set(diag, (int)n, "policy: DSSE payload is not base64");
	{
		json_tokener *tok = json_tokener_new();

		if (!tok) {
			free(raw);
			return -ENOMEM;
		}
		doc = json_tokener_parse_ex(tok, (const char *)raw, (int)n);
		json_tokener_free(tok);
	}
	free(raw);
	if (!doc)
		return vg_diag_set(diag, -EBADMSG, "policy: DSSE payload is not JSON");
	r = load_json(p, doc, depth + 1, diag);
	json_object_put(doc);
	return r;
}

static int load_json(struct vg_refpolicy *p, json_object *root, int depth, struct vg_diag *diag)
{
	json_object *o;
	int r;

	if (depth > 2 || !json_object_is_type(root, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "policy: not a JSON object");
	if (json_object_object_get_ex(root, "payloadType", &o))
		return load_dsse(p, root, depth, diag);
	/* Keylime's measured-boot reference state: a policy of boot events only */
	if (vg__mbpolicy_is_keylime(root)) {
		struct vg_mbpolicy *mb;

		r = vg__mbpolicy_from_json(root, &mb, diag);
		if (r < 0)
			return r;
		vg_refpolicy_set_mbpolicy(p, mb);
		return 0;
	}
	/*
	 * ima-sig: vigil's own policies read it strictly unless they say
	 * "ima_sig": "keylime" (what an imported Keylime policy exports as);
	 * anything else is a Keylime runtime policy and means what Keylime does
	 */
	if (json_object_object_get_ex(root, "vigil_refpolicy", &o)) {
		if (json_object_object_get_ex(root, "ima_sig", &o)) {
			const char *m = json_object_get_string(o);

			if (!json_object_is_type(o, json_type_string) ||
			    (strcmp(m, "keylime") != 0 && strcmp(m, "strict") != 0))
				return vg_diag_set(diag, -EBADMSG, "policy: ima_sig is \"strict\" or "
						   "\"keylime\"");
			p->sig_keylime = strcmp(m, "keylime") == 0;
		}
		/* an export from before "keyrings": a Keylime policy's keyrings are in "ima_buf" */
		p->keyrings_legacy = p->sig_keylime &&
				     !json_object_object_get_ex(root, "keyrings", &o);
	} else {
		p->sig_keylime = true;
	}
	if (json_object_object_get_ex(root, "digests", &o)) {
		r = add_digest_map(p, &p->files, o, "digests", diag);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "boot_aggregate", &o)) {
		r = add_digest_list(p, &p->files, "boot_aggregate", o, diag);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "excludes", &o)) {
		if (!json_object_is_type(o, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "policy: excludes is not a list");
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			json_object *e = json_object_array_get_idx(o, i);

			if (!json_object_is_type(e, json_type_string))
				return vg_diag_set(diag, -EBADMSG, "policy: exclude %zu", i);
			r = vg_refpolicy_exclude(p, json_object_get_string(e), diag);
			if (r == -EINVAL && diag)
				diag->err = -EBADMSG;	/* the diag says what the caller gets (fuzz_refpolicy) */
			if (r < 0)
				return r == -EINVAL ? -EBADMSG : r;
		}
	}
	/*
	 * vigil: "ima_buf"; Keylime: "ima-buf"; both: "keyrings" (digest of a
	 * keyring entry's buffer: the keys that may be learned, attest_keys.c)
	 */
	if (json_object_object_get_ex(root, "ima_buf", &o) &&
	    (r = add_digest_map(p, &p->bufs, o, "ima_buf", diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "ima-buf", &o) &&
	    (r = add_digest_map(p, &p->bufs, o, "ima-buf", diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "keyrings", &o) &&
	    (r = add_digest_map(p, &p->keyrings, o, "keyrings", diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "keys", &o)) {
		if (!json_object_is_type(o, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "policy: keys is not a list");
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			json_object *k = json_object_array_get_idx(o, i);
			const char *s = json_object_get_string(k);

			if (!json_object_is_type(k, json_type_string))
				return vg_diag_set(diag, -EBADMSG, "policy: key %zu", i);
			r = vg_refpolicy_add_key(p, (const uint8_t *)s, strlen(s), diag);
			if (r < 0)
				return r;
		}
	}
	if (json_object_object_get_ex(root, "verification-keys", &o) &&
	    (r = load_keylime_keys(p, o, diag)) < 0)
		return r;
	/* Keylime: "ima": {"ignored_keyrings": [...]}; vigil: "ignored_keyrings" */
	{
		json_object *ik = NULL, *ima;

		if (json_object_object_get_ex(root, "ima", &ima) &&
		    json_object_is_type(ima, json_type_object))
			json_object_object_get_ex(ima, "ignored_keyrings", &ik);
		if (!ik)
			json_object_object_get_ex(root, "ignored_keyrings", &ik);
		if (ik && !json_object_is_type(ik, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "policy: ignored_keyrings is not a list");
		for (size_t i = 0; ik && i < json_object_array_length(ik); i++) {
			json_object *k = json_object_array_get_idx(ik, i);

			if (!json_object_is_type(k, json_type_string))
				return vg_diag_set(diag, -EBADMSG, "policy: ignored keyring %zu", i);
			r = vg__reftab_add(&p->ignored, json_object_get_string(k), NULL);
			if (r < 0)
				return r;
		}
	}
	if (json_object_object_get_ex(root, "ignore_violations", &o))
		p->ignore_violations = json_object_get_boolean(o);
	if (json_object_object_get_ex(root, "boot_pcrs", &o) && (r = load_boot_pcrs(p, o, diag)) < 0)
		return r;
	if (json_object_object_get_ex(root, "measured_boot", &o)) {
		struct vg_mbpolicy *mb;

		r = vg__mbpolicy_from_json(o, &mb, diag);
		if (r < 0)
			return r;
		vg_refpolicy_set_mbpolicy(p, mb);
	}
	return 0;
}

/* Keylime's legacy flat allowlist: "<hex digest>  <path>" per line, '#' comments. */
static int load_flat(struct vg_refpolicy *p, const char *s, size_t len, struct vg_diag *diag)
{
	size_t line = 0;

	while (len) {
		const char *nl = memchr(s, '\n', len);
		size_t ll = nl ? (size_t)(nl - s) : len;
		char buf[4200], *sp, *path;
		struct pdig d;
		int r;

		line++;
		if (ll >= sizeof(buf))
			return vg_diag_set(diag, -EBADMSG, "allowlist line %zu too long", line);
		memcpy(buf, s, ll);
		buf[ll] = 0;
		if (ll && buf[ll - 1] == '\r')
			buf[ll - 1] = 0;
		s += ll + (nl ? 1 : 0);
		len -= ll + (nl ? 1 : 0);
		if (!buf[0] || buf[0] == '#')
			continue;
		sp = strpbrk(buf, " \t");
		if (!sp)
			return vg_diag_set(diag, -EBADMSG, "allowlist line %zu: no path", line);
		*sp = 0;
		path = sp + 1;
		while (*path == ' ' || *path == '\t')
			path++;
		r = *path ? parse_digest(p, buf, &d) : -EBADMSG;
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return vg_diag_set(diag, -EBADMSG, "allowlist line %zu: bad digest or path", line);
		r = vg__reftab_add(&p->files, path, &d);
		if (r == -E2BIG)
			return vg_diag_set(diag, r, "allowlist line %zu: more than %u digests (the "
					   "limit)", line, VG_REFPOLICY_DIGESTS_MAX);
		if (r < 0)
			return r;
	}
	return 0;
}

int vg_refpolicy_load(const uint8_t *buf, size_t len, struct vg_refpolicy **ret,
		      struct vg_diag *diag)
{
	struct vg_refpolicy *p;
	size_t i = 0;
	int r;

	if (len > (256u << 20))
		return vg_diag_set(diag, -EBADMSG, "policy: %zu bytes, too large", len);
	r = vg_refpolicy_new(&p);
	if (r < 0)
		return r;
	while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r'))
		i++;
	if (i < len && buf[i] == '{') {
		json_tokener *tok = json_tokener_new();
		json_object *root;

		if (!tok) {
			r = -ENOMEM;
			goto fail;
		}
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		root = len > INT32_MAX ? NULL : json_tokener_parse_ex(tok, (const char *)buf, (int)len);
		if (!root || json_tokener_get_parse_end(tok) < len) {
			size_t end = json_tokener_get_parse_end(tok);

			/* trailing whitespace is fine */
			while (root && end < len && (buf[end] == ' ' || buf[end] == '\n' ||
						     buf[end] == '\r' || buf[end] == '\t'))
				end++;
			if (!root || end < len) {
				json_object_put(root);
				json_tokener_free(tok);
				r = vg_diag_set(diag, -EBADMSG, "policy: not valid JSON (byte %zu)",
						json_tokener_get_parse_end(tok));
				goto fail;
			}
		}
		json_tokener_free(tok);
		r = load_json(p, root, 0, diag);
		json_object_put(root);
	} else {
		p->sig_keylime = true;	/* Keylime's legacy allowlist */
		r = load_flat(p, (const char *)buf, len, diag);
	}
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	vg_refpolicy_free(p);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp((*(const struct pent *const *)a)->path, (*(const struct pent *const *)b)->path);
}

static json_object *digests_json(const struct vg_refpolicy *p, const struct pent *e)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < e->n; i++) {
		char s[PDIG_NAME_MAX + 2 + 2 * VG_HASH_MAX_DIGEST + 1], *h = s;
		const char *an = vg__refpolicy_algo_name(p, &e->d[i]);

		if (an)
			h += sprintf(s, "%s:", an);
		vg_hex_encode(e->d[i].bytes, e->d[i].len, h);
		json_object_array_add(arr, json_object_new_string(s));
	}
	return arr;
}

static json_object *table_json(const struct vg_refpolicy *p, const struct table *t, bool skip_ba)
{
	json_object *o = json_object_new_object();
	struct pent **v = t->count ? malloc(t->count * sizeof(*v)) : NULL;
	size_t n = 0;

	if (!o || (t->count && !v)) {
		json_object_put(o);
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < t->nb; i++)
		for (struct pent *e = t->b[i]; e; e = e->next)
			if (!skip_ba || strcmp(e->path, "boot_aggregate") != 0)
				v[n++] = e;
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, v[i]->path, digests_json(p, v[i]));
	free(v);
	return o;
}

long vg_refpolicy_to_json(const struct vg_refpolicy *p, char **ret)
{
	json_object *root = json_object_new_object(), *ex, *ba;
	const struct pent *b = vg__reftab_find(&p->files, "boot_aggregate");
	const char *s;
	long n = -ENOMEM;

	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "vigil_refpolicy", json_object_new_int(1));
	json_object_object_add(root, "digests", table_json(p, &p->files, true));
	/* absent stays absent: an empty list would be a path with no digest (fuzz_refpolicy) */
	if (b) {
		ba = digests_json(p, b);
		json_object_object_add(root, "boot_aggregate", ba);
	}
	ex = json_object_new_array();
	for (size_t i = 0; ex && i < p->nex; i++)
		json_object_array_add(ex, json_object_new_string(p->ex_src[i]));
	json_object_object_add(root, "excludes", ex);
	json_object_object_add(root, "ima_buf", table_json(p, &p->bufs, false));
	/* a Keylime reading exports its keyrings even empty: absent means legacy */
	if (p->keyrings.count || (p->sig_keylime && !p->keyrings_legacy))
		json_object_object_add(root, "keyrings", table_json(p, &p->keyrings, false));
	{
		json_object *ik = table_json(p, &p->ignored, false), *arr = json_object_new_array();

		json_object_object_foreach(ik, k, val) {
			(void)val;
			json_object_array_add(arr, json_object_new_string(k));
		}
		json_object_put(ik);
		json_object_object_add(root, "ignored_keyrings", arr);
	}
	json_object_object_add(root, "ignore_violations",
			       json_object_new_boolean(p->ignore_violations));
	/* absent means strict: the policies vigil wrote before say nothing */
	if (p->sig_keylime)
		json_object_object_add(root, "ima_sig", json_object_new_string("keylime"));
	if (p->nkey_pem) {
		json_object *ks = json_object_new_array();

		for (size_t i = 0; ks && i < p->nkey_pem; i++)
			json_object_array_add(ks, json_object_new_string(p->key_pem[i]));
		json_object_object_add(root, "keys", ks);
	}
	if (p->npins) {
		json_object *bp = json_object_new_object();

		for (unsigned int pcr = 0; bp && pcr < 24; pcr++) {
			json_object *arr = NULL;
			char key[4];

			for (size_t i = 0; i < p->npins; i++) {
				const struct pdig *d = &p->pins[i].d;
				char hs[32 + 2 * VG_HASH_MAX_DIGEST + 1], *h = hs;

				if (p->pins[i].pcr != pcr)
					continue;
				if (!arr)
					arr = json_object_new_array();
				if (d->algo != VG_HASH__LAST)
					h += sprintf(hs, "%s:", vg_hash_name(d->algo));
				vg_hex_encode(d->bytes, d->len, h);
				json_object_array_add(arr, json_object_new_string(hs));
			}
			if (!arr)
				continue;
			snprintf(key, sizeof(key), "%u", pcr);
			json_object_object_add(bp, key, arr);
		}
		json_object_object_add(root, "boot_pcrs", bp);
	}
	if (p->mb) {
		json_object *mb = vg__mbpolicy_json(p->mb);

		if (!mb) {
			json_object_put(root);
			return -ENOMEM;
		}
		json_object_object_add(root, "measured_boot", mb);
	}
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s) {
		*ret = strdup(s);
		n = *ret ? (long)strlen(s) : -ENOMEM;
	}
	json_object_put(root);
	return n;
}
