/* SPDX-License-Identifier: MIT */
/*
 * config.h - vigil.conf: the hash algorithm, the EVM protected xattr list,
 * where keys live, and which files the tree commands select.
 *
 * The format (docs/config.md) is line based: '#' starts a comment,
 * "KEY = VALUE" sets a setting, and selection rules read
 * "label|skip COND..." where every COND (path=PREFIX, fstype=NAME|0xMAGIC,
 * uid=N, gid=N, mode=+BITS (any of), mode=BITS (exactly), size>N) must
 * hold. Rules are tried in order and the first that matches decides; a
 * file no rule matches is labeled. "scan.group NAME = EXPR" and
 * "scan.rule = [=|!]REGEX [EXPR]" are `vigil scan`'s per-path attribute
 * rules (scan_rules.h).
 */
#ifndef VIGIL_CONFIG_H
#define VIGIL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vigil/diag.h"
#include "vigil/evm.h"
#include "vigil/scan_rules.h"

#define VG_CONFIG_DEFAULT "/etc/vigil/vigil.conf"
#define VG_CONFIG_MAX_KEYRINGS 16
#define VG_CONFIG_MAX_LIST 64	/* vigild.watch, vigild.accept_gap */

enum {
	VG_COND_PATH = 1u << 0,
	VG_COND_FSTYPE = 1u << 1,
	VG_COND_UID = 1u << 2,
	VG_COND_GID = 1u << 3,
	VG_COND_MODE_ANY = 1u << 4,
	VG_COND_MODE_EQ = 1u << 5,
	VG_COND_SIZE_GT = 1u << 6,
};

struct vg_select_rule {
	bool skip;
	uint32_t conds;		/* VG_COND_* present */
	char *path;		/* a prefix, matched at a '/' boundary */
	size_t path_len;
	uint64_t fsmagic;
	uid_t uid;
	gid_t gid;
	mode_t mode;
	uint64_t size;
	unsigned int line;
};

enum vg_config_uuid { VG_CONFIG_UUID_AUTO, VG_CONFIG_UUID_NONE, VG_CONFIG_UUID_GIVEN };

struct vg_config {
	unsigned int algo;			/* hash = ; default sha256 */
	struct vg_evm_config evm;		/* kernel defaults + evm.xattr = */
	enum vg_config_uuid uuid;		/* evm.uuid = auto|none|UUID */
	uint8_t uuid_value[16];
	uint8_t evm_type;			/* evm.type = hmac|sig|portable; 0: from keys */
	char *hmac_key;				/* key.hmac = */
	char *ima_key;				/* key.ima = (signing) */
	char *evm_key;				/* key.evm = (signing) */
	char *tcti;				/* tpm.tcti = (for sealed HMAC keys) */
	char *trust_db;				/* trust.db = (vigild's trust=archive) */
	char *keyrings[VG_CONFIG_MAX_KEYRINGS];	/* keyring = (repeatable) */
	size_t nkeyrings;
	/* vigild's (docs/config.md): its command line's options, which win over them */
	char *vigild_watch[VG_CONFIG_MAX_LIST];	/* vigild.watch = PATH (repeatable): --watch */
	size_t nvigild_watch;
	char *vigild_mode;			/* vigild.mode = enforce|permissive|fix: --mode */
	char *vigild_watch_mounts;		/* vigild.watch_mounts = PREFIX: --watch-mounts */
	char *vigild_accept_gap[VG_CONFIG_MAX_LIST];	/* vigild.accept_gap = NAME (repeatable) */
	size_t nvigild_accept_gap;
	int vigild_hold;			/* vigild.hold = yes|no: --hold, --no-hold; -1: unset */
	struct vg_select_rule *rules;
	size_t nrules;
	struct vg_scan_rules *scan_rules;	/* scan.group, scan.rule; NULL: none */
};

void vg_config_init(struct vg_config *c);
void vg_config_release(struct vg_config *c);

/*
 * vg_config_parse - parse @len bytes of @text (from a file called @name,
 * for messages) into @c, which must have been initialised.
 * Return: 0, or -EINVAL with diag "NAME:LINE: problem"; -ENOMEM.
 */
int vg_config_parse(struct vg_config *c, const char *text, size_t len, const char *name,
		    struct vg_diag *diag);

/*
 * vg_config_load - read and parse @path. A missing file is not an error
 * when @optional (the defaults stay). Return: 0, 1 if absent and
 * optional, or a negative errno (diag names the file).
 */
int vg_config_load(struct vg_config *c, const char *path, bool optional, struct vg_diag *diag);

/* Return: true if the rules select a file with these properties for labeling. */
bool vg_config_select(const struct vg_config *c, const char *path, uint64_t fsmagic, uid_t uid,
		      gid_t gid, mode_t mode, uint64_t size);

/* Return: the magic of a filesystem type name ("ext4", "tmpfs", ...) or 0. */
uint64_t vg_fstype_magic(const char *name);

#endif
