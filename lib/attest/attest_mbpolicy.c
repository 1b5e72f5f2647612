// SPDX-License-Identifier: MIT
/*
 * attest_mbpolicy.c - the event-level measured-boot policy
 * (attest_mbpolicy.h): read from vigil's "measured_boot" section or from
 * Keylime's measured-boot reference state, and written back; its events'
 * side, judged on a boot log one failure per failing event and learnt from
 * a known-good one, is attest_mbpolicy_event.c.
 *
 * Not here: the events (attest_mbpolicy_event.c), PCR replay
 * (attest_boot.c), the rest of the reference policy (attest_policy*.c).
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
#include "attest_mbpolicy_int.h"

const char *const vg__mb_set_key[MB__SETS] = {
	"pk", "kek", "db", "dbx", "authorities", "shim", "grub", "kernel",
	"initrd", "vmlinuz", "mok", "mokx", "scrtm", "platform_firmware", "vendor_db",
};

const uint8_t vg__mb_guid_global[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
					 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
const uint8_t vg__mb_guid_imgsec[16] = { 0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45,
					 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f };

/* ---- sets ---- */

/* Appended; sorted and made unique by dset_sort before any lookup. */
int vg__mb_dset_add(struct dset *s, const uint8_t d[SHA256_LEN])
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
long vg__mb_dset_find(const struct dset *s, const uint8_t *d)
{
	const uint8_t (*hit)[SHA256_LEN] = s->n ? bsearch(d, s->d, s->n, sizeof(*s->d), dig_cmp)
						 : NULL;

	return hit ? (long)(hit - s->d) : -1;
}

bool vg__mb_dset_has(const struct dset *s, const uint8_t *d)
{
	return vg__mb_dset_find(s, d) >= 0;
}

int vg__mb_strs_add(struct strs *s, const char *v)
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

int vg__mb_new(struct vg_mbpolicy **ret)
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

int vg__mb_sha256(const void *b, size_t n, uint8_t out[SHA256_LEN])
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
		json_object_object_add(o, vg__mb_set_key[k], a);
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
	vg__mb_refs_to_json(p, o);
	return o;
}

static const char *obj_text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* The id, and the regexes compiled: what a loaded policy needs before use. */
int vg__mb_finish(struct vg_mbpolicy *p, struct vg_diag *diag)
{
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
	return vg__mb_finish_id(p);
}

int vg__mb_finish_id(struct vg_mbpolicy *p)
{
	json_object *o = to_obj(p);
	const char *s = o ? obj_text(o) : NULL;
	int r = s ? vg__mb_sha256(s, strlen(s), p->id) : -ENOMEM;

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
		r = vg__mb_dset_add(s, d);
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
		r = vg__mb_strs_add(s, json_object_get_string(e));
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
		if (json_object_object_get_ex(o, vg__mb_set_key[k], &v) &&
		    (r = load_set(&p->set[k], vg__mb_set_key[k], v, diag)) < 0)
			return r;
	if (json_object_object_get_ex(o, "kernel_cmdline", &v) &&
	    (r = load_strs(&p->cmdline, "kernel_cmdline", v, diag)) < 0)
		return r;
	if (json_object_object_get_ex(o, "kernel_cmdline_regex", &v) &&
	    (r = load_strs(&p->cmdre, "kernel_cmdline_regex", v, diag)) < 0)
		return r;
	r = vg__mb_refs_from_json(p, o, diag);
	if (r < 0)
		return r;
	json_object_object_foreach(o, k, val) {
		bool known = !strcmp(k, "version") || !strcmp(k, "secure_boot") ||
			     !strcmp(k, "kernel_cmdline") || !strcmp(k, "kernel_cmdline_regex") ||
			     !strcmp(k, "from_archive") || !strcmp(k, "announced");

		(void)val;
		for (int i = 0; i < MB__SETS; i++)
			known = known || !strcmp(k, vg__mb_set_key[i]);
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
	return vg__mb_dset_add(s, b);
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
					"not hex", key, i) : vg__mb_sha256(raw, (size_t)n, d);
		free(raw);
		if (r == 0)
			r = vg__mb_dset_add(s, d);
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
	/*
	 * vendor_db (shim's, newer reference states): the vendor_db variable's
	 * entries and the vendor_db authority that verified an image must be
	 * listed. Keylime reads a reference state without it as an empty list:
	 * under Secure Boot a log with vendor_db events then fails, without it
	 * (and empty) anything passes.
	 */
	if (json_object_object_get_ex(o, "vendor_db", &v)) {
		if (p->secure_boot || !json_object_is_type(v, json_type_array) ||
		    json_object_array_length(v) != 0) {
			r = kl_keys(&p->set[MB_VENDOR_DB], v, "vendor_db", diag);
			if (r < 0)
				return r;
		}
	} else if (p->secure_boot) {
		p->set[MB_VENDOR_DB].judged = true;
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
			if ((r = vg__mb_dset_add(&p->set[kdig[k].set], d)) < 0)
				return r;
		}
		if (json_object_object_get_ex(kern, "kernel_cmdline", &x) &&
		    json_object_is_type(x, json_type_string)) {
			const char *re = json_object_get_string(x);
			char lit[MB_CMDLINE_MAX + 1];

			if (kl_unescape(re, lit, sizeof(lit)))
				r = vg__mb_strs_add(&p->cmdline, lit);
			else {
				p->cmdre.judged = true;
				r = vg__mb_strs_add(&p->cmdre, re);
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
	r = vg__mb_new(&p);
	if (r < 0)
		return r;
	r = is_keylime(o) ? load_keylime(p, o, diag) : load_vigil(p, o, diag);
	if (r == 0)
		r = vg__mb_finish(p, diag);
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
