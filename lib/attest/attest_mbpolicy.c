// SPDX-License-Identifier: MIT
/*
 * attest_mbpolicy.c - the event-level measured-boot policy
 * (attest_mbpolicy.h): read from vigil's "measured_boot" section or from
 * Keylime's measured-boot reference state, learnt from a known-good boot
 * log, written back, and judged on the events of a boot log, one failure
 * per failing event.
 *
 * Event data is decoded field by field with bounds checks:
 *   UEFI_VARIABLE_DATA  VariableName GUID[16] | UnicodeNameLength u64 |
 *                       VariableDataLength u64 | UnicodeName[2n] | VariableData[]
 *   EFI_SIGNATURE_LIST  SignatureType GUID[16] | SignatureListSize u32 |
 *                       SignatureHeaderSize u32 | SignatureSize u32 |
 *                       header[] | {SignatureOwner GUID[16] | SignatureData[]}...
 *   UEFI_IMAGE_LOAD_EVENT  4 x u64 (the last: LengthOfDevicePath) | DevicePath[]
 * (all little-endian). Not here: PCR replay (attest_boot.c), the rest of
 * the reference policy (attest_policy*.c).
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "internal.h"
#include "attest_policy.h"
#include "vigil/attest_mbpolicy.h"

#define SHA256_LEN 32
#define TPM_ALG_SHA256 0x000b
#define MB_CMDLINE_MAX 4096

/* The digest sets, in the order of the JSON keys. */
enum mb_set {
	MB_PK, MB_KEK, MB_DB, MB_DBX, MB_AUTH, MB_SHIM, MB_GRUB, MB_KERNEL,
	MB_INITRD, MB_VMLINUZ, MB_MOK, MB_MOKX, MB_SCRTM, MB_FIRMWARE, MB__SETS
};

static const char *const set_key[MB__SETS] = {
	"pk", "kek", "db", "dbx", "authorities", "shim", "grub", "kernel",
	"initrd", "vmlinuz", "mok", "mokx", "scrtm", "platform_firmware",
};

struct dset {
	bool judged;			/* the key is there */
	size_t n, cap;
	uint8_t (*d)[SHA256_LEN];
};

struct strs {
	bool judged;
	size_t n;
	char **s;
};

struct vg_mbpolicy {
	int secure_boot;		/* -1 not judged, 0 must be off, 1 must be on */
	struct dset set[MB__SETS];
	struct strs cmdline;		/* literal command lines */
	struct strs cmdre;		/* their regexes (source) */
	regex_t *re;			/* compiled cmdre */
	uint8_t id[SHA256_LEN];
};

/* EFI_GLOBAL_VARIABLE 8be4df61-93ca-11d2-aa0d-00e098032b8c, as it is in memory */
static const uint8_t guid_global[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
					 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
/* EFI_IMAGE_SECURITY_DATABASE_GUID d719b2cb-3d3a-4596-a3bc-dad00e67656f */
static const uint8_t guid_imgsec[16] = { 0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45,
					 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f };

/* ---- sets ---- */

/* Appended; sorted and made unique by dset_sort before any lookup. */
static int dset_add(struct dset *s, const uint8_t d[SHA256_LEN])
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		void *n = realloc(s->d, cap * sizeof(*s->d));

		if (!n)
			return -ENOMEM;
		s->d = n;
		s->cap = cap;
	}
	memcpy(s->d[s->n++], d, SHA256_LEN);
	return 0;
}

static int dig_cmp(const void *a, const void *b)
{
	return memcmp(a, b, SHA256_LEN);
}

static void dset_sort(struct dset *s)
{
	size_t o = 0;

	if (!s->n)
		return;
	qsort(s->d, s->n, sizeof(*s->d), dig_cmp);
	for (size_t i = 1; i < s->n; i++)
		if (memcmp(s->d[i], s->d[o], SHA256_LEN) != 0)
			memmove(s->d[++o], s->d[i], SHA256_LEN);
	s->n = o + 1;
}

/* Return: the index of @d in the sorted @s, or -1. */
static long dset_find(const struct dset *s, const uint8_t *d)
{
	const uint8_t (*hit)[SHA256_LEN] = s->n ? bsearch(d, s->d, s->n, sizeof(*s->d), dig_cmp)
						 : NULL;

	return hit ? (long)(hit - s->d) : -1;
}

static bool dset_has(const struct dset *s, const uint8_t *d)
{
	return dset_find(s, d) >= 0;
}

static int strs_add(struct strs *s, const char *v)
{
	char **n;

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->s[i], v) == 0)
			return 0;
	n = realloc(s->s, (s->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->s = n;
	s->s[s->n] = strdup(v);
	if (!s->s[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->s[i]);
	free(s->s);
}

static int mb_new(struct vg_mbpolicy **ret)
{
	struct vg_mbpolicy *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->secure_boot = -1;
	*ret = p;
	return 0;
}

void vg_mbpolicy_free(struct vg_mbpolicy *p)
{
	if (!p)
		return;
	for (int i = 0; i < MB__SETS; i++)
		free(p->set[i].d);
	strs_free(&p->cmdline);
	if (p->re)
		for (size_t i = 0; i < p->cmdre.n; i++)
			regfree(&p->re[i]);
	free(p->re);
	strs_free(&p->cmdre);
	free(p);
}

const uint8_t *vg_mbpolicy_id(const struct vg_mbpolicy *p)
{
	return p->id;
}

static int sha256(const void *b, size_t n, uint8_t out[SHA256_LEN])
{
	struct vg_digest d;
	int r = vg_hash_buf(VG_HASH_SHA256, b, n, &d, NULL);

	if (r < 0)	/* OpenSSL has sha256: it failed for want of memory */
		return -ENOMEM;
	memcpy(out, d.bytes, SHA256_LEN);
	return 0;
}

/* ---- JSON ---- */

static json_object *to_obj(const struct vg_mbpolicy *p)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "version", json_object_new_int(1));
	if (p->secure_boot >= 0)
		json_object_object_add(o, "secure_boot", json_object_new_boolean(p->secure_boot));
	for (int k = 0; k < MB__SETS; k++) {
		json_object *a;

		if (!p->set[k].judged)
			continue;
		a = json_object_new_array();
		for (size_t i = 0; a && i < p->set[k].n; i++) {
			char s[8 + 2 * SHA256_LEN + 1] = "sha256:";

			vg_hex_encode(p->set[k].d[i], SHA256_LEN, s + 7);
			json_object_array_add(a, json_object_new_string(s));
		}
		json_object_object_add(o, set_key[k], a);
	}
	if (p->cmdline.judged) {
		json_object *a = json_object_new_array();

		for (size_t i = 0; a && i < p->cmdline.n; i++)
			json_object_array_add(a, json_object_new_string(p->cmdline.s[i]));
		json_object_object_add(o, "kernel_cmdline", a);
	}
	if (p->cmdre.judged) {
		json_object *a = json_object_new_array();

		for (size_t i = 0; a && i < p->cmdre.n; i++)
			json_object_array_add(a, json_object_new_string(p->cmdre.s[i]));
		json_object_object_add(o, "kernel_cmdline_regex", a);
	}
	return o;
}

static const char *obj_text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* The id, and the regexes compiled: what a loaded policy needs before use. */
static int mb_finish(struct vg_mbpolicy *p, struct vg_diag *diag)
{
	json_object *o;
	const char *s;
	int r;

	for (int k = 0; k < MB__SETS; k++)
		dset_sort(&p->set[k]);
	if (p->cmdre.n) {
		p->re = calloc(p->cmdre.n, sizeof(*p->re));
		if (!p->re)
			return -ENOMEM;
		for (size_t i = 0; i < p->cmdre.n; i++) {
			char *anch;
			size_t l = strlen(p->cmdre.s[i]);

			anch = malloc(l + 5);
			if (!anch)
				return -ENOMEM;
			snprintf(anch, l + 5, "^(%s)$", p->cmdre.s[i]);
			r = regcomp(&p->re[i], anch, REG_EXTENDED | REG_NOSUB);
			free(anch);
			if (r != 0) {
				for (size_t j = 0; j < i; j++)
					regfree(&p->re[j]);
				free(p->re);
				p->re = NULL;
				return vg_diag_set(diag, -EBADMSG, "measured_boot: kernel_cmdline_regex "
						   "%zu is not a POSIX extended regex", i);
			}
		}
	}
	o = to_obj(p);
	s = o ? obj_text(o) : NULL;
	r = s ? sha256(s, strlen(s), p->id) : -ENOMEM;
	json_object_put(o);
	return r;
}

long vg_mbpolicy_to_json(const struct vg_mbpolicy *p, char **ret)
{
	json_object *o = to_obj(p);
	const char *s = o ? obj_text(o) : NULL;
	long n = -ENOMEM;

	if (s) {
		*ret = strdup(s);
		if (*ret)
			n = (long)strlen(s);
	}
	json_object_put(o);
	return n;
}

json_object *vg__mbpolicy_json(const struct vg_mbpolicy *p)
{
	return to_obj(p);
}

/* "sha256:hex", "0xhex" or bare hex, 32 bytes. */
static int parse_sha256(const char *s, uint8_t out[SHA256_LEN])
{
	if (strncmp(s, "sha256:", 7) == 0)
		s += 7;
	else if (strncmp(s, "0x", 2) == 0)
		s += 2;
	return vg_hex_decode(s, out, SHA256_LEN) == SHA256_LEN ? 0 : -EBADMSG;
}

static int load_set(struct dset *s, const char *key, json_object *a, struct vg_diag *diag)
{
	if (!json_object_is_type(a, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "measured_boot: %s is not a list", key);
	s->judged = true;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		uint8_t d[SHA256_LEN];
		int r;

		if (!json_object_is_type(e, json_type_string) ||
		    parse_sha256(json_object_get_string(e), d) < 0)
			return vg_diag_set(diag, -EBADMSG, "measured_boot: %s %zu is not a sha256 "
					   "digest", key, i);
		r = dset_add(s, d);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_strs(struct strs *s, const char *key, json_object *a, struct vg_diag *diag)
{
	if (!json_object_is_type(a, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "measured_boot: %s is not a list", key);
	s->judged = true;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		int r;

		if (!json_object_is_type(e, json_type_string) ||
		    strlen(json_object_get_string(e)) > MB_CMDLINE_MAX)
			return vg_diag_set(diag, -EBADMSG, "measured_boot: %s %zu is not a string "
					   "(of at most 4096 bytes)", key, i);
		r = strs_add(s, json_object_get_string(e));
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_vigil(struct vg_mbpolicy *p, json_object *o, struct vg_diag *diag)
{
	json_object *v;
	int r;

	if (json_object_object_get_ex(o, "version", &v) &&
	    (!json_object_is_type(v, json_type_int) || json_object_get_int(v) != 1))
		return vg_diag_set(diag, -EBADMSG, "measured_boot: version is not 1");
	if (json_object_object_get_ex(o, "secure_boot", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return vg_diag_set(diag, -EBADMSG, "measured_boot: secure_boot is not "
					   "true or false");
		p->secure_boot = json_object_get_boolean(v);
	}
	for (int k = 0; k < MB__SETS; k++)
		if (json_object_object_get_ex(o, set_key[k], &v) &&
		    (r = load_set(&p->set[k], set_key[k], v, diag)) < 0)
			return r;
	if (json_object_object_get_ex(o, "kernel_cmdline", &v) &&
	    (r = load_strs(&p->cmdline, "kernel_cmdline", v, diag)) < 0)
		return r;
	if (json_object_object_get_ex(o, "kernel_cmdline_regex", &v) &&
	    (r = load_strs(&p->cmdre, "kernel_cmdline_regex", v, diag)) < 0)
		return r;
	json_object_object_foreach(o, k, val) {
		bool known = !strcmp(k, "version") || !strcmp(k, "secure_boot") ||
			     !strcmp(k, "kernel_cmdline") || !strcmp(k, "kernel_cmdline_regex");

		(void)val;
		for (int i = 0; i < MB__SETS; i++)
			known = known || !strcmp(k, set_key[i]);
		if (!known)	/* a misspelt key would silently judge nothing */
			return vg_diag_set(diag, -EBADMSG, "measured_boot: unknown key \"%.60s\"", k);
	}
	return 0;
}

/* ---- Keylime's measured-boot reference state ---- */

/* A Keylime digest {"sha256": "0xhex", ...}: its sha256 into @s (other banks not imported). */
static int kl_digest(struct dset *s, json_object *d, const char *what, struct vg_diag *diag)
{
	json_object *h;
	uint8_t b[SHA256_LEN];

	if (!json_object_is_type(d, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "keylime refstate: %s is not a digest", what);
	if (!json_object_object_get_ex(d, "sha256", &h))
		return 0;
	if (!json_object_is_type(h, json_type_string) ||
	    parse_sha256(json_object_get_string(h), b) < 0)
		return vg_diag_set(diag, -EBADMSG, "keylime refstate: %s sha256 is not 0xhex", what);
	return dset_add(s, b);
}

/* Keys [{"SignatureOwner": uuid, "SignatureData": "0xhex"}]: sha256 of each SignatureData. */
static int kl_keys(struct dset *s, json_object *a, const char *key, struct vg_diag *diag)
{
	if (!json_object_is_type(a, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "keylime refstate: %s is not a list", key);
	s->judged = true;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i), *sd;
		const char *hex;
		uint8_t *raw, d[SHA256_LEN];
		size_t hl;
		int n, r;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "SignatureData", &sd) ||
		    !json_object_is_type(sd, json_type_string))
			return vg_diag_set(diag, -EBADMSG, "keylime refstate: %s %zu has no "
					   "SignatureData", key, i);
		hex = json_object_get_string(sd);
		if (strncmp(hex, "0x", 2) == 0)
			hex += 2;
		hl = strlen(hex);
		raw = malloc(hl / 2 + 1);
		if (!raw)
			return -ENOMEM;
		n = vg_hex_decode(hex, raw, hl / 2 + 1);
		r = n < 0 ? vg_diag_set(diag, -EBADMSG, "keylime refstate: %s %zu SignatureData is "
					"not hex", key, i) : sha256(raw, (size_t)n, d);
		free(raw);
		if (r == 0)
			r = dset_add(s, d);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Keylime writes kernel_cmdline as re.escape(the line). A pattern that is
 * only escaped characters and plain ones is that literal line; anything
 * else stays a regex (POSIX ERE here, Python's re there).
 * Return: 1 literal in @out, 0 a regex.
 */
static int kl_unescape(const char *re, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *s = re; *s; s++) {
		if (o + 1 >= cap)
			return 0;
		if (*s == '\\') {
			s++;
			if (!*s || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
			    (*s >= 'A' && *s <= 'Z'))
				return 0;	/* \d, \1, ...: a real regex */
			out[o++] = *s;
		} else if (strchr(".^$*+?{}[]|()", *s)) {
			return 0;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
	return 1;
}

static int load_keylime(struct vg_mbpolicy *p, json_object *o, struct vg_diag *diag)
{
	static const struct { const char *kl; enum mb_set set; } keys[] = {
		{ "pk", MB_PK }, { "kek", MB_KEK }, { "db", MB_DB }, { "dbx", MB_DBX },
	};
	static const struct { const char *kl; enum mb_set set; } kdig[] = {
		{ "shim_authcode_sha256", MB_SHIM }, { "grub_authcode_sha256", MB_GRUB },
		{ "kernel_authcode_sha256", MB_KERNEL }, { "initrd_plain_sha256", MB_INITRD },
		{ "vmlinuz_plain_sha256", MB_VMLINUZ },
	};
	json_object *v;
	int r;

	p->secure_boot = 1;	/* Keylime's default when has_secureboot is absent */
	if (json_object_object_get_ex(o, "has_secureboot", &v))
		p->secure_boot = json_object_get_boolean(v);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		if (!json_object_object_get_ex(o, keys[k].kl, &v))
			return vg_diag_set(diag, -EBADMSG, "keylime refstate lacks %s", keys[k].kl);
		/* Keylime: without Secure Boot an empty list accepts anything */
		if (!p->secure_boot && json_object_is_type(v, json_type_array) &&
		    json_object_array_length(v) == 0)
			continue;
		r = kl_keys(&p->set[keys[k].set], v, keys[k].kl, diag);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(o, "scrtm_and_bios", &v)) {
		if (!json_object_is_type(v, json_type_array))
			return vg_diag_set(diag, -EBADMSG, "keylime refstate: scrtm_and_bios is not a list");
		p->set[MB_SCRTM].judged = p->set[MB_FIRMWARE].judged = true;
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *e = json_object_array_get_idx(v, i), *x;

			if (json_object_object_get_ex(e, "scrtm", &x) &&
			    (r = kl_digest(&p->set[MB_SCRTM], x, "scrtm", diag)) < 0)
				return r;
			if (json_object_object_get_ex(e, "platform_firmware", &x) &&
			    json_object_is_type(x, json_type_array))
				for (size_t j = 0; j < json_object_array_length(x); j++)
					if ((r = kl_digest(&p->set[MB_FIRMWARE],
							   json_object_array_get_idx(x, j),
							   "platform_firmware", diag)) < 0)
						return r;
		}
	}
	if (json_object_object_get_ex(o, "mokdig", &v) && json_object_is_type(v, json_type_array)) {
		p->set[MB_MOK].judged = true;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if ((r = kl_digest(&p->set[MB_MOK], json_object_array_get_idx(v, i), "mokdig",
					   diag)) < 0)
				return r;
	}
	if (json_object_object_get_ex(o, "mokxdig", &v) && json_object_is_type(v, json_type_array)) {
		p->set[MB_MOKX].judged = true;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if ((r = kl_digest(&p->set[MB_MOKX], json_object_array_get_idx(v, i), "mokxdig",
					   diag)) < 0)
				return r;
	}
	if (!json_object_object_get_ex(o, "kernels", &v) || !json_object_is_type(v, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "keylime refstate: kernels is not a list");
	for (size_t k = 0; k < sizeof(kdig) / sizeof(kdig[0]); k++)
		p->set[kdig[k].set].judged = kdig[k].set != MB_VMLINUZ || !p->secure_boot;
	if (!p->secure_boot)	/* GRUB verifies no kernel: no third application */
		p->set[MB_KERNEL].judged = false;
	p->cmdline.judged = true;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *kern = json_object_array_get_idx(v, i), *x;

		if (!json_object_is_type(kern, json_type_object))
			return vg_diag_set(diag, -EBADMSG, "keylime refstate: kernels %zu", i);
		for (size_t k = 0; k < sizeof(kdig) / sizeof(kdig[0]); k++) {
			uint8_t d[SHA256_LEN];

			if (!json_object_object_get_ex(kern, kdig[k].kl, &x))
				continue;
			if (!json_object_is_type(x, json_type_string) ||
			    parse_sha256(json_object_get_string(x), d) < 0)
				return vg_diag_set(diag, -EBADMSG, "keylime refstate: kernels %zu %s",
						   i, kdig[k].kl);
			if ((r = dset_add(&p->set[kdig[k].set], d)) < 0)
				return r;
		}
		if (json_object_object_get_ex(kern, "kernel_cmdline", &x) &&
		    json_object_is_type(x, json_type_string)) {
			const char *re = json_object_get_string(x);
			char lit[MB_CMDLINE_MAX + 1];

			if (kl_unescape(re, lit, sizeof(lit)))
				r = strs_add(&p->cmdline, lit);
			else {
				p->cmdre.judged = true;
				r = strs_add(&p->cmdre, re);
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static bool is_keylime(json_object *o)
{
	return json_object_object_get_ex(o, "has_secureboot", NULL) ||
	       (json_object_object_get_ex(o, "scrtm_and_bios", NULL) &&
		json_object_object_get_ex(o, "kernels", NULL));
}

int vg__mbpolicy_from_json(json_object *o, struct vg_mbpolicy **ret, struct vg_diag *diag)
{
	struct vg_mbpolicy *p;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return vg_diag_set(diag, -EBADMSG, "measured_boot is not an object");
	r = mb_new(&p);
	if (r < 0)
		return r;
	r = is_keylime(o) ? load_keylime(p, o, diag) : load_vigil(p, o, diag);
	if (r == 0)
		r = mb_finish(p, diag);
	if (r < 0) {
		vg_mbpolicy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

bool vg__mbpolicy_is_keylime(json_object *o)
{
	return json_object_is_type(o, json_type_object) && is_keylime(o);
}

int vg_mbpolicy_load(const uint8_t *buf, size_t len, struct vg_mbpolicy **ret,
		     struct vg_diag *diag)
{
	json_tokener *tok;
	json_object *root, *o;
	int r;

	if (len > INT32_MAX)
		return vg_diag_set(diag, -EBADMSG, "measured_boot: too long");
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
	json_tokener_free(tok);
	if (!root)
		return vg_diag_set(diag, -EBADMSG, "measured_boot: not JSON");
	if (json_object_object_get_ex(root, "measured_boot", &o))
		r = vg__mbpolicy_from_json(o, ret, diag);
	else if (json_object_object_get_ex(root, "vigil_refpolicy", NULL))
		r = vg_diag_set(diag, -ENOENT, "the policy has no measured_boot section");
	else
		r = vg__mbpolicy_from_json(root, ret, diag);
	json_object_put(root);
	return r;
}

/* ---- event data ---- */

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t le64(const uint8_t *b)
{
	return (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32;
}

struct uvar {
	const uint8_t *guid;
	char name[64];			/* ASCII of UnicodeName ('?' for others) */
	const uint8_t *data;
	size_t len;
};

/* Return: 0, -EBADMSG. */
static int uvar_decode(const uint8_t *b, size_t n, struct uvar *u)
{
	uint64_t nl, dl;

	if (n < 32)
		return -EBADMSG;
	nl = le64(b + 16);
	dl = le64(b + 24);
	if (nl > (n - 32) / 2 || dl > n - 32 - 2 * nl)
		return -EBADMSG;
	u->guid = b;
	for (uint64_t i = 0; i < nl && i < sizeof(u->name) - 1; i++) {
		uint16_t c = (uint16_t)(b[32 + 2 * i] | b[33 + 2 * i] << 8);

		u->name[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		u->name[i + 1] = 0;
	}
	if (nl == 0)
		u->name[0] = 0;
	u->data = b + 32 + 2 * nl;
	u->len = (size_t)dl;
	return 0;
}

/*
 * Do @e's digests of every bank vigil knows hash one of the two inputs?
 * Return: 1 yes, 0 no, -ENOMEM (a hash could not be computed).
 */
static int data_matches(const struct vg_eventlog *log, const struct vg_eventlog_event *e,
			const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	bool any = false;

	for (uint32_t i = 0; i < e->ndigests; i++) {
		const struct vg_eventlog_digest *dg = &log->digests[e->first_digest + i];
		int algo = vg_eventlog_tpm_algo(dg->tpm_alg);
		const uint8_t *in[2] = { a, b };
		size_t inl[2] = { al, bl };
		bool ok = false;

		if (algo < 0)
			continue;
		for (int k = 0; k < 2 && !ok && in[k]; k++) {
			struct vg_digest h;
			int r = vg_hash_buf((unsigned int)algo, in[k], inl[k], &h, NULL);

			if (r < 0)	/* vigil's algorithms are OpenSSL's: no memory */
				return -ENOMEM;
			ok = h.len == dg->len && memcmp(h.bytes, log->buf + dg->off, h.len) == 0;
		}
		if (!ok)
			return 0;
		any = true;
	}
	return any;
}

/* The first device path node is a firmware volume (PIWG, media type 4 subtype 7). */
static bool image_in_fv(const uint8_t *b, size_t n)
{
	uint64_t dpl;

	if (n < 32)
		return false;
	dpl = le64(b + 24);
	if (dpl < 4 || dpl > n - 32)
		return false;
	return b[32] == 0x04 && b[33] == 0x07;
}

/* The event's string, NULs at the end cut, into @out (truncated). Return: its length. */
static size_t ev_string(const uint8_t *b, size_t n, char *out, size_t cap)
{
	size_t l = n;

	while (l && b[l - 1] == 0)
		l--;
	if (l >= cap)
		l = cap - 1;
	memcpy(out, b, l);
	out[l] = 0;
	for (size_t i = 0; i < l; i++)
		if (out[i] == 0)
			out[i] = '?';
	return l;
}

static bool contains(const char *s, const char *w)
{
	return strstr(s, w) != NULL;
}

/* ---- judging ---- */

struct judge {
	const struct vg_mbpolicy *p;
	const struct vg_eventlog *log;
	struct vg_attest_verdict *v;
	int err;			/* -ENOMEM seen */
	bool seen_sb, seen_dbx, seen_cmdline;
	unsigned int apps;
	bool seen[MB__SETS];
};

static void jfail(struct judge *j, long idx, const struct vg_eventlog_event *e, const uint8_t *dig,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void jfail(struct judge *j, long idx, const struct vg_eventlog_event *e, const uint8_t *dig,
		  const char *fmt, ...)
{
	struct vg_attest_verdict f;
	char what[400];
	va_list ap;
	const char *tn;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	vg_attest_verdict_init(&f);
	if (e) {
		tn = vg_eventlog_type_name(e->type);
		vg_attest_fail(&f, VG_AF_BOOT_EVENT, "event %ld %s PCR %u: %s", idx,
			       tn ? tn : "EV_UNKNOWN", e->pcr, what);
		snprintf(f.path, sizeof(f.path), "%s", tn ? tn : "EV_UNKNOWN");
	} else {
		vg_attest_fail(&f, VG_AF_BOOT_EVENT, "%s", what);
	}
	f.entry = idx;
	if (dig) {
		memcpy(f.digest, "sha256:", 7);
		vg_hex_encode(dig, SHA256_LEN, f.digest + 7);
	}
	if (vg_attest_verdict_add(j->v, &f) < 0)
		j->err = -ENOMEM;
}

static const char *hexs(const uint8_t *d, char *buf)
{
	memcpy(buf, "sha256:", 7);
	vg_hex_encode(d, SHA256_LEN, buf + 7);
	return buf;
}

/*
 * Each EFI_SIGNATURE_DATA of @u's EFI_SIGNATURE_LISTs: allowed by the set
 * @set, or (@found, dbx) marked found among the set's entries.
 */
static void judge_siglists(struct judge *j, long idx, const struct vg_eventlog_event *e,
			   const struct uvar *u, enum mb_set set, bool *found)
{
	const struct dset *s = &j->p->set[set];
	size_t off = 0, k = 0;

	while (off < u->len) {
		const uint8_t *b = u->data + off;
		uint32_t ls, hs, ss;

		if (u->len - off < 28) {
			jfail(j, idx, e, NULL, "%s: EFI_SIGNATURE_LIST %zu is truncated", u->name, k);
			return;
		}
		ls = le32(b + 16);
		hs = le32(b + 20);
		ss = le32(b + 24);
		if (ls < 28 || ls > u->len - off || hs > ls - 28 || ss <= 16 ||
		    (ls - 28 - hs) % ss != 0) {
			jfail(j, idx, e, NULL, "%s: EFI_SIGNATURE_LIST at byte %zu is malformed",
			      u->name, off);
			return;
		}
		for (size_t at = 28 + hs; at < ls; at += ss, k++) {
			uint8_t d[SHA256_LEN];
			char h[80];

			if (sha256(b + at + 16, ss - 16, d) < 0) {
				j->err = -ENOMEM;
				return;
			}
			if (found) {
				long hit = dset_find(s, d);

				if (hit >= 0)
					found[hit] = true;
				continue;
			}
			if (!dset_has(s, d))
				jfail(j, idx, e, d, "%s entry %zu (SignatureData %s) is not one the "
				      "policy allows in %s", u->name, k, hexs(d, h), set_key[set]);
		}
		off += ls;
	}
}

static void judge_var(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	const uint8_t *b = j->log->buf + e->data_off;
	const struct vg_mbpolicy *p = j->p;
	struct uvar u;
	int set = -1, r;

	if (uvar_decode(b, e->data_len, &u) < 0) {
		jfail(j, idx, e, NULL, "the UEFI_VARIABLE_DATA does not decode");
		return;
	}
	if (memcmp(u.guid, guid_global, 16) == 0) {
		if (!strcmp(u.name, "SecureBoot")) {
			set = -2;
		} else if (!strcmp(u.name, "PK"))
			set = MB_PK;
		else if (!strcmp(u.name, "KEK"))
			set = MB_KEK;
	} else if (memcmp(u.guid, guid_imgsec, 16) == 0) {
		if (!strcmp(u.name, "db"))
			set = MB_DB;
		else if (!strcmp(u.name, "dbx"))
			set = MB_DBX;
	}
	if (set == -1 || (set >= 0 && !p->set[set].judged) || (set == -2 && p->secure_boot < 0))
		return;
	r = data_matches(j->log, e, b, e->data_len, u.data, u.len);
	if (r <= 0) {
		if (r < 0)
			j->err = r;
		else
			jfail(j, idx, e, NULL, "%s: the event data is not what its digests "
			      "measure", u.name);
		return;
	}
	if (set == -2) {
		int on = u.len >= 1 && u.data[0] == 1;

		j->seen_sb = true;
		if (on != p->secure_boot)
			jfail(j, idx, e, NULL, "SecureBoot=%u, the policy requires Secure Boot %s",
			      u.len ? u.data[0] : 0, p->secure_boot ? "on" : "off");
		return;
	}
	if (set == MB_DBX) {
		bool *found = calloc(p->set[MB_DBX].n + 1, sizeof(*found));
		char h[80];

		if (!found) {
			j->err = -ENOMEM;
			return;
		}
		j->seen_dbx = true;
		judge_siglists(j, idx, e, &u, MB_DBX, found);
		for (size_t i = 0; i < p->set[MB_DBX].n && !j->err; i++)
			if (!found[i])
				jfail(j, idx, e, p->set[MB_DBX].d[i], "dbx lacks the revocation %s the "
				      "policy requires", hexs(p->set[MB_DBX].d[i], h));
		free(found);
		return;
	}
	judge_siglists(j, idx, e, &u, (enum mb_set)set, NULL);
}

static void judge_authority(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	const uint8_t *b = j->log->buf + e->data_off;
	uint8_t d[SHA256_LEN];
	struct uvar u;
	char h[80];
	int r;

	if (!j->p->set[MB_AUTH].judged)
		return;
	if (uvar_decode(b, e->data_len, &u) < 0) {
		jfail(j, idx, e, NULL, "the UEFI_VARIABLE_DATA does not decode");
		return;
	}
	if (strcmp(u.name, "db") && strcmp(u.name, "vendor_db") && strcmp(u.name, "Shim") &&
	    strcmp(u.name, "MokList") && strcmp(u.name, "MokListRT"))
		return;		/* SbatLevel, MokListTrusted: not keys */
	r = data_matches(j->log, e, b, e->data_len, u.data, u.len);
	if (r <= 0) {
		if (r < 0)
			j->err = r;
		else
			jfail(j, idx, e, NULL, "%s: the event data is not what its digests "
			      "measure", u.name);
		return;
	}
	if (u.len <= 16) {
		jfail(j, idx, e, NULL, "%s: no EFI_SIGNATURE_DATA", u.name);
		return;
	}
	if (sha256(u.data + 16, u.len - 16, d) < 0) {
		j->err = -ENOMEM;
		return;
	}
	if (!dset_has(&j->p->set[MB_AUTH], d))
		jfail(j, idx, e, d, "an image was verified by %s certificate %s, not an authority "
		      "the policy allows", u.name, hexs(d, h));
}

/* The event's sha256 digest, or a failure. */
static const uint8_t *ev_sha256(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	size_t l;
	const uint8_t *d = vg_eventlog_event_digest(j->log, e, TPM_ALG_SHA256, &l);

	if (!d || l != SHA256_LEN) {
		jfail(j, idx, e, NULL, "no sha256 digest to judge");
		return NULL;
	}
	return d;
}

static void judge_digest(struct judge *j, long idx, const struct vg_eventlog_event *e,
			 enum mb_set set, const char *what)
{
	const uint8_t *d;
	char h[80];

	j->seen[set] = true;
	if (!j->p->set[set].judged || !(d = ev_sha256(j, idx, e)))
		return;
	if (!dset_has(&j->p->set[set], d))
		jfail(j, idx, e, d, "%s %s is not one the policy allows (%s)", what, hexs(d, h),
		      set_key[set]);
}

static void judge_ipl(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	const uint8_t *b = j->log->buf + e->data_off;
	const struct vg_mbpolicy *p = j->p;
	char s[MB_CMDLINE_MAX + 64];
	size_t l = ev_string(b, e->data_len, s, sizeof(s));
	int r;

	if (e->pcr == 8 && strncmp(s, "kernel_cmdline: ", 16) == 0) {
		const char *c = s + 16;
		bool ok = false;

		if (!p->cmdline.judged && !p->cmdre.judged)
			return;
		j->seen_cmdline = true;
		/* GRUB measures the line without its "kernel_cmdline: " prefix */
		r = data_matches(j->log, e, b + 16, l - 16, b, l);
		if (r <= 0) {
			if (r < 0)
				j->err = r;
			else
				jfail(j, idx, e, NULL, "the command line is not what its digests "
				      "measure");
			return;
		}
		for (size_t i = 0; !ok && i < p->cmdline.n; i++)
			ok = strcmp(p->cmdline.s[i], c) == 0;
		for (size_t i = 0; !ok && p->re && i < p->cmdre.n; i++)
			ok = regexec(&p->re[i], c, 0, NULL, 0) == 0;
		if (!ok)
			jfail(j, idx, e, NULL, "kernel command line \"%.300s\" is not one the "
			      "policy allows", c);
	} else if (e->pcr == 9) {
		if (contains(s, "initrd") || contains(s, "initramfs"))
			judge_digest(j, idx, e, MB_INITRD, "initrd");
		else if (contains(s, "vmlinuz"))
			judge_digest(j, idx, e, MB_VMLINUZ, "kernel file");
	} else if (e->pcr == 14) {
		if (!strcmp(s, "MokList"))
			judge_digest(j, idx, e, MB_MOK, "MokList");
		else if (!strcmp(s, "MokListX"))
			judge_digest(j, idx, e, MB_MOKX, "MokListX");
	}
}

static void judge_event(struct judge *j, size_t i)
{
	const struct vg_eventlog_event *e = &j->log->events[i];
	long idx = (long)i;

	switch (e->type) {
	case VG_EV_EFI_VARIABLE_DRIVER_CONFIG:
		if (e->pcr == 7)
			judge_var(j, idx, e);
		break;
	case VG_EV_EFI_VARIABLE_AUTHORITY:
		if (e->pcr == 7)
			judge_authority(j, idx, e);
		break;
	case VG_EV_EFI_BOOT_SERVICES_APPLICATION: {
		static const enum mb_set role[3] = { MB_SHIM, MB_GRUB, MB_KERNEL };
		static const char *const rname[3] = { "shim", "GRUB", "kernel" };
		unsigned int k;

		if (e->pcr != 4 || image_in_fv(j->log->buf + e->data_off, e->data_len))
			break;
		k = j->apps < 2 ? j->apps : 2;
		j->apps++;
		judge_digest(j, idx, e, role[k], rname[k]);
		break;
	}
	case VG_EV_IPL:
		judge_ipl(j, idx, e);
		break;
	case VG_EV_S_CRTM_VERSION:
		if (e->pcr == 0)
			judge_digest(j, idx, e, MB_SCRTM, "S-CRTM version");
		break;
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB:
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB2:
		if (e->pcr == 0)
			judge_digest(j, idx, e, MB_FIRMWARE, "firmware blob");
		break;
	default:
		break;
	}
}

int vg_mbpolicy_check(const struct vg_mbpolicy *p, const struct vg_eventlog *log,
		      struct vg_attest_verdict *v)
{
	struct judge j = { .p = p, .log = log, .v = v };
	static const enum mb_set need[] = { MB_SHIM, MB_GRUB, MB_KERNEL, MB_INITRD };
	uint64_t before = vg_attest_verdict_count(v);

	for (size_t i = 0; i < log->nevents && !j.err; i++)
		judge_event(&j, i);
	if (p->secure_boot == 1 && !j.seen_sb)
		jfail(&j, -1, NULL, NULL, "the boot log has no SecureBoot variable event, the "
		      "policy requires Secure Boot");
	if (p->set[MB_DBX].judged && p->set[MB_DBX].n && !j.seen_dbx)
		jfail(&j, -1, NULL, NULL, "the boot log has no dbx variable event, the policy "
		      "requires %zu revocations", p->set[MB_DBX].n);
	if ((p->cmdline.n || p->cmdre.n) && !j.seen_cmdline)
		jfail(&j, -1, NULL, NULL, "the boot log has no kernel_cmdline event, the policy "
		      "allows only certain command lines");
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++)
		if (p->set[need[k]].judged && p->set[need[k]].n && !j.seen[need[k]])
			jfail(&j, -1, NULL, NULL, "the boot log has no %s event, the policy "
			      "requires one", set_key[need[k]]);
	if (j.err)
		return j.err;
	return vg_attest_verdict_count(v) > before ? 1 : 0;
}

int vg_mbpolicy_check_buf(const struct vg_mbpolicy *p, const uint8_t *buf, size_t len,
			  struct vg_attest_verdict *v)
{
	struct vg_eventlog *log = NULL;
	struct vg_diag d = { 0 };
	int r = vg_eventlog_parse(buf, len, &log, &d);

	if (r == -EBADMSG)
		return vg_attest_fail(v, VG_AF_BOOT_MALFORMED, "boot log: %s", d.msg);
	if (r < 0)
		return r;
	r = vg_mbpolicy_check(p, log, v);
	vg_eventlog_free(log);
	return r;
}

/* ---- learning from a known-good log ---- */

static int learn_siglists(struct dset *s, const struct uvar *u)
{
	size_t off = 0;

	while (off < u->len) {
		const uint8_t *b = u->data + off;
		uint32_t ls, hs, ss;

		if (u->len - off < 28)
			return -EBADMSG;
		ls = le32(b + 16);
		hs = le32(b + 20);
		ss = le32(b + 24);
		if (ls < 28 || ls > u->len - off || hs > ls - 28 || ss <= 16 ||
		    (ls - 28 - hs) % ss != 0)
			return -EBADMSG;
		for (size_t at = 28 + hs; at < ls; at += ss) {
			uint8_t d[SHA256_LEN];
			int r = sha256(b + at + 16, ss - 16, d);

			if (r == 0)
				r = dset_add(s, d);
			if (r < 0)
				return r;
		}
		off += ls;
	}
	return 0;
}

static int learn_event(struct vg_mbpolicy *p, const struct vg_eventlog *log, size_t i,
		       unsigned int *apps, struct vg_diag *diag)
{
	const struct vg_eventlog_event *e = &log->events[i];
	const uint8_t *b = log->buf + e->data_off, *d;
	char s[MB_CMDLINE_MAX + 64];
	struct uvar u;
	size_t l;
	int set = -1, r;

	d = vg_eventlog_event_digest(log, e, TPM_ALG_SHA256, &l);
	if (d && l != SHA256_LEN)
		d = NULL;
	switch (e->type) {
	case VG_EV_EFI_VARIABLE_DRIVER_CONFIG:
	case VG_EV_EFI_VARIABLE_AUTHORITY:
		if (e->pcr != 7)
			return 0;
		if (uvar_decode(b, e->data_len, &u) < 0)
			return vg_diag_set(diag, -EBADMSG, "event %zu: UEFI_VARIABLE_DATA does not "
					   "decode", i);
		r = data_matches(log, e, b, e->data_len, u.data, u.len);
		if (r < 0)
			return r;
		if (r == 0)
			return vg_diag_set(diag, -EBADMSG, "event %zu (%s): the data is not what "
					   "its digests measure", i, u.name);
		if (e->type == VG_EV_EFI_VARIABLE_AUTHORITY) {
			uint8_t h[SHA256_LEN];

			if (strcmp(u.name, "db") && strcmp(u.name, "vendor_db") &&
			    strcmp(u.name, "Shim") && strcmp(u.name, "MokList") &&
			    strcmp(u.name, "MokListRT"))
				return 0;
			if (u.len <= 16)
				return vg_diag_set(diag, -EBADMSG, "event %zu: no signature data", i);
			r = sha256(u.data + 16, u.len - 16, h);
			return r < 0 ? r : dset_add(&p->set[MB_AUTH], h);
		}
		if (memcmp(u.guid, guid_global, 16) == 0) {
			if (!strcmp(u.name, "SecureBoot")) {
				p->secure_boot = u.len >= 1 && u.data[0] == 1;
				return 0;
			}
			set = !strcmp(u.name, "PK") ? MB_PK : !strcmp(u.name, "KEK") ? MB_KEK : -1;
		} else if (memcmp(u.guid, guid_imgsec, 16) == 0) {
			set = !strcmp(u.name, "db") ? MB_DB : !strcmp(u.name, "dbx") ? MB_DBX : -1;
		}
		if (set < 0)
			return 0;
		r = learn_siglists(&p->set[set], &u);
		if (r == -EBADMSG)
			return vg_diag_set(diag, -EBADMSG, "event %zu: %s: EFI_SIGNATURE_LIST "
					   "malformed", i, u.name);
		return r;
	case VG_EV_EFI_BOOT_SERVICES_APPLICATION: {
		static const enum mb_set role[3] = { MB_SHIM, MB_GRUB, MB_KERNEL };

		if (e->pcr != 4 || image_in_fv(b, e->data_len) || !d)
			return 0;
		set = role[*apps < 2 ? *apps : 2];
		(*apps)++;
		break;
	}
	case VG_EV_IPL:
		l = ev_string(b, e->data_len, s, sizeof(s));
		if (e->pcr == 8 && strncmp(s, "kernel_cmdline: ", 16) == 0) {
			r = data_matches(log, e, b + 16, l - 16, b, l);
			if (r < 0)
				return r;
			if (r == 0)
				return vg_diag_set(diag, -EBADMSG, "event %zu: the command line is "
						   "not what its digests measure", i);
			return strs_add(&p->cmdline, s + 16);
		}
		if (e->pcr == 9 && (contains(s, "initrd") || contains(s, "initramfs")))
			set = MB_INITRD;
		else if (e->pcr == 9 && contains(s, "vmlinuz"))
			set = MB_VMLINUZ;
		else if (e->pcr == 14 && !strcmp(s, "MokList"))
			set = MB_MOK;
		else if (e->pcr == 14 && !strcmp(s, "MokListX"))
			set = MB_MOKX;
		break;
	case VG_EV_S_CRTM_VERSION:
		set = e->pcr == 0 ? MB_SCRTM : -1;
		break;
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB:
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB2:
		set = e->pcr == 0 ? MB_FIRMWARE : -1;
		break;
	default:
		return 0;
	}
	if (set < 0 || !d)
		return 0;
	return dset_add(&p->set[set], d);
}

int vg_mbpolicy_from_log(const struct vg_eventlog *log, struct vg_mbpolicy **ret,
			 struct vg_diag *diag)
{
	struct vg_mbpolicy *p;
	unsigned int apps = 0;
	int r = mb_new(&p);

	if (r < 0)
		return r;
	for (int k = 0; k < MB__SETS; k++)
		p->set[k].judged = true;
	p->cmdline.judged = true;
	for (size_t i = 0; i < log->nevents && r >= 0; i++)
		r = learn_event(p, log, i, &apps, diag);
	if (r >= 0)
		r = mb_finish(p, diag);
	if (r < 0) {
		vg_mbpolicy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}
