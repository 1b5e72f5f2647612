/* SPDX-License-Identifier: MIT */
/*
 * attest_policy.h - what the files of a reference policy share; not
 * installed. attest_policy.c holds the policy (what is allowed, excluded,
 * trusted, pinned) and its lookup, attest_policy_index.c the per-path
 * digest table, attest_policy_format.c the formats read and written.
 */
#ifndef VIGIL_ATTEST_POLICY_H
#define VIGIL_ATTEST_POLICY_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/attest.h"
#include "vigil/hash.h"
#include "vigil/keyring.h"

/*
 * A digest of an algorithm vigil does not know (Keylime's "sm3_256", any
 * other name) is kept, uncheckable: its algo is PDIG_UNCHECKED + the index
 * of its name in vg_refpolicy.ualgo. It never matches a log entry's digest;
 * an entry whose path has only such digests fails with
 * VG_AF_DIGEST_UNSUPPORTED.
 */
#define PDIG_UNCHECKED 0x80
#define PDIG_UNCHECKED_NAMES 127	/* distinct unknown algorithm names of one policy */
#define PDIG_NAME_MAX 32

struct pdig {
	uint8_t algo;			/* vg algo; VG_HASH__LAST: any algo of this length;
					   >= PDIG_UNCHECKED: an unknown algorithm */
	uint8_t len;
	uint8_t bytes[VG_HASH_MAX_DIGEST];
};

struct pent {
	struct pent *next;
	uint64_t hash;
	size_t n, cap;
	struct pdig *d;
	uint32_t *ix;			/* slots: index into d + 1, 0 empty; NULL below IX_MIN */
	size_t ixcap;			/* a power of two, more than twice n */
	char path[];
};

struct table {
	struct pent **b;
	size_t nb, count;
	size_t ndig;			/* digests in all entries, at most VG_REFPOLICY_DIGESTS_MAX */
	uint64_t key[2];		/* SipHash key of this policy */
};

struct bootpin {
	uint8_t pcr;
	struct pdig d;
};

struct vg_refpolicy {
	struct table files;		/* path → digests (incl. "boot_aggregate") */
	struct table bufs;		/* ima-buf event name → digests ("ima-buf", "ima_buf") */
	struct table keyrings;		/* keyring name → digests of key buffers ("keyrings"): the
					   keys that may be learned from the log (attest_keys.c) */
	struct table ignored;		/* keyrings whose ima-buf entries pass ("*": all) */
	regex_t *ex;
	char **ex_src;
	size_t nex;
	struct vg_keyring *keys;
	size_t nkeys;
	char **key_pem;			/* each vg_refpolicy_add_key() as PEM, for the export */
	size_t nkey_pem;
	bool ignore_violations;
	struct bootpin *pins;		/* "boot_pcrs": allowed values per boot PCR */
	size_t npins;
	char (*ualgo)[PDIG_NAME_MAX];	/* names of the unknown algorithms of uncheckable digests */
	size_t nualgo;
	const struct vg_trust_index *archive;	/* vg_refpolicy_set_archive, or NULL */
	struct vg_mbpolicy *mb;		/* "measured_boot" (attest_mbpolicy.c), or NULL */
	bool sig_keylime;		/* ima-sig read as Keylime does: a signature that verifies
					   passes whatever the digest list says, one that does not
					   falls back to it (Keylime-format policies; "ima_sig") */
	bool keyrings_legacy;		/* vigil JSON exported before "keyrings" was its own
					   section (a Keylime policy's keyrings are in "ima_buf"):
					   keyring entries judged by those digests, no key learned */
};

/* The name of the algorithm of @d ("sha256", an unknown one's name), NULL for a wildcard. */
const char *vg__refpolicy_algo_name(const struct vg_refpolicy *p, const struct pdig *d);
/*
 * The index of the unknown algorithm @name in @p, added if new.
 * Return: PDIG_UNCHECKED + index, -E2BIG (too many names), -ENOMEM.
 */
int vg__refpolicy_ualgo(struct vg_refpolicy *p, const char *name);

/* The entry of @path in @t, or NULL. */
struct pent *vg__reftab_find(const struct table *t, const char *path);
/* Allow @d for @path (a digest already there is not added twice). Return: 0, -ENOMEM, -E2BIG. */
int vg__reftab_add(struct table *t, const char *path, const struct pdig *d);
/* Free what @t holds and zero it. */
void vg__reftab_free(struct table *t);
/* @e allows @len bytes @b of algorithm @algo. */
bool vg__reftab_match(const struct table *t, const struct pent *e, unsigned int algo,
		      const uint8_t *b, size_t len);

/*
 * vg__refpolicy_judge - vg_refpolicy_check_entry with the keys learned so
 * far (@learned, may be NULL) also trusted for ima-sig; when @learn is
 * given and the entry passes as a keyring entry whose key may be learned,
 * *@learn gets the key's buffer (into the entry), else {NULL, 0}.
 * Return: 0, 1 (@v).
 */
struct vg__learn {
	const uint8_t *buf;
	size_t len;
};
int vg__refpolicy_judge(const struct vg_refpolicy *p, const struct vg_imalog_entry *e,
			uint64_t index, const struct vg_keyring *learned, struct vg__learn *learn,
			struct vg_attest_verdict *v);

/* attest_keys.c. Return: 1 an RSA or EC key (certificate or public key, DER or PEM), 0 no key, -EOPNOTSUPP a key of another type. */
int vg__attest_buf_key(const uint8_t *buf, size_t len);
/* Return: 1 added, 0 already there, -ENOSPC (no room: not learned). */
int vg__attest_learned_add(struct vg_attest_learned *k, const uint8_t *buf, size_t len);
/* A keyring of the keys of @k. Return: 0, -EBADMSG, -ENOMEM. */
int vg__attest_learned_keyring(const struct vg_attest_learned *k, struct vg_keyring **ret);
/* The measured-boot section from JSON (attest_mbpolicy.c). Return: 0, -EBADMSG, -ENOMEM. */
struct json_object;
struct vg_mbpolicy;
int vg__mbpolicy_from_json(struct json_object *o, struct vg_mbpolicy **ret, struct vg_diag *diag);
/* Return: a new JSON object of @p's section, NULL on no memory. */
struct json_object *vg__mbpolicy_json(const struct vg_mbpolicy *p);
/* @o is Keylime's measured-boot reference state (has_secureboot, scrtm_and_bios + kernels). */
bool vg__mbpolicy_is_keylime(struct json_object *o);

/* Allow @d for boot PCR @pcr (attest_policy.c). Return: 0 or -ENOMEM. */
int vg__refpolicy_pin_add(struct vg_refpolicy *p, unsigned int pcr, const struct pdig *d);

#endif
