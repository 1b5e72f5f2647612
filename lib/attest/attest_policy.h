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

struct pdig {
	uint8_t algo;			/* vg algo; VG_HASH__LAST: any algo of this length */
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
	struct table bufs;		/* ima-buf event name → digests */
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
};

/* The entry of @path in @t, or NULL. */
struct pent *vg__reftab_find(const struct table *t, const char *path);
/* Allow @d for @path (a digest already there is not added twice). Return: 0, -ENOMEM, -E2BIG. */
int vg__reftab_add(struct table *t, const char *path, const struct pdig *d);
/* Free what @t holds and zero it. */
void vg__reftab_free(struct table *t);
/* @e allows @len bytes @b of algorithm @algo. */
bool vg__reftab_match(const struct table *t, const struct pent *e, unsigned int algo,
		      const uint8_t *b, size_t len);

/* Allow @d for boot PCR @pcr (attest_policy.c). Return: 0 or -ENOMEM. */
int vg__refpolicy_pin_add(struct vg_refpolicy *p, unsigned int pcr, const struct pdig *d);

#endif
