/* SPDX-License-Identifier: MIT */
/*
 * evm.h - security.evm: the EVM digest exactly as the kernel's
 * evm_calc_hmac_or_hash() (security/integrity/evm/evm_crypto.c) builds it.
 *
 * Input, in order:
 *  1. the values (no names, no lengths) of the protected xattrs present on
 *     the file, in configuration order; HMAC (02) and inode-bound
 *     signatures (03) use only *enabled* entries, portable signatures (05)
 *     use every configured entry;
 *  2. struct h_misc, zero-filled, in native byte order:
 *     64-bit: u64 ino | u32 generation | u32 uid | u32 gid | u16 mode | pad2
 *     (24 bytes); 32-bit: u32 ino | u32 gen | uid | gid | u16 mode | pad2
 *     (20 bytes). Portable signatures zero ino and generation;
 *  3. for 02 and 03 when CONFIG_EVM_ATTR_FSUUID (default): the 16 bytes of
 *     the filesystem UUID.
 * 02 is HMAC-SHA1 keyed with the key zero-padded to 128 bytes (the
 * kernel's evmkey_len); 03/05 sign H_algo of the same bytes.
 */
#ifndef VIGIL_EVM_H
#define VIGIL_EVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"

#define VG_EVM_MAX_XATTRS 32
#define VG_EVM_NAME_MAX 255		/* XATTR_NAME_MAX */
#define VG_EVM_KEY_MAX 128		/* MAX_KEY_SIZE in evm_crypto.c */
#define VG_EVM_HMAC_LEN 21		/* 02 || HMAC-SHA1 */

struct vg_evm_config {
	size_t n;
	struct {
		char name[VG_EVM_NAME_MAX + 1];
		bool enabled;
	} x[VG_EVM_MAX_XATTRS];
	bool fsuuid;			/* CONFIG_EVM_ATTR_FSUUID */
	bool hmisc32;			/* 32-bit kernel h_misc layout */
};

/*
 * vg_evm_config_default - the kernel's evm_config_default_xattrnames, in
 * its order: security.selinux, security.SMACK64, security.SMACK64EXEC,
 * security.SMACK64TRANSMUTE, security.SMACK64MMAP, security.apparmor,
 * security.ima, security.capability. Enabled as on a Debian kernel
 * (SELinux, Smack, AppArmor, IMA appraisal, capabilities; not
 * EVM_EXTRA_SMACK_XATTRS), which is also evmctl's default list.
 * fsuuid on, h_misc layout of this build's unsigned long.
 */
void vg_evm_config_default(struct vg_evm_config *cfg);

/*
 * vg_evm_config_add - append a protected name (enabled), as writing it to
 * <securityfs>/integrity/evm/evm_xattrs does.
 * Return: 0; -EINVAL (not "security.*", too long); -EEXIST; -ENOSPC.
 */
int vg_evm_config_add(struct vg_evm_config *cfg, const char *name);

/* Return: 0, or -ENOENT if @name is not configured. */
int vg_evm_config_enable(struct vg_evm_config *cfg, const char *name, bool enabled);

/* Return: index of @name, or -1. */
int vg_evm_config_index(const struct vg_evm_config *cfg, const char *name);

/* Inode metadata the EVM digest binds. */
struct vg_evm_meta {
	uint64_t ino;
	uint32_t generation;
	uint32_t uid, gid;
	uint16_t mode;			/* full st_mode, type bits included */
	bool generation_known;		/* FS_IOC_GETVERSION answered */
	bool has_uuid;
	uint8_t uuid[16];
};

/*
 * vg_evm_meta_from_fd - fstat(), FS_IOC_GETVERSION (filesystems without
 * it, e.g. tmpfs, give generation 0 and generation_known false), and,
 * if @want_uuid, the filesystem UUID (vg_fs_uuid()).
 * Return: 0, a negative errno from fstat, or vg_fs_uuid()'s error.
 */
int vg_evm_meta_from_fd(int fd, bool want_uuid, struct vg_evm_meta *ret, struct vg_diag *diag);

/*
 * vg_fs_uuid - the UUID the kernel holds in the superblock of @fd's
 * filesystem: FS_IOC_GETFSUUID (Linux 6.5+), else the superblock read by
 * libblkid from the block device of st_dev.
 * Return: 0, -ENODATA (no way to learn it), or fstat's error.
 */
int vg_fs_uuid(int fd, uint8_t uuid[16], struct vg_diag *diag);

/* Return: 0, or -EINVAL if @s is not a 36-character UUID. */
int vg_uuid_parse(const char *s, uint8_t uuid[16]);

/* Values of the protected xattrs present on one file. */
struct vg_evm_xattrs {
	size_t n;			/* the config's n */
	int32_t len[VG_EVM_MAX_XATTRS];	/* -1: absent */
	size_t off[VG_EVM_MAX_XATTRS];
	uint8_t *buf;
	size_t used, cap;
};

void vg_evm_xattrs_init(struct vg_evm_xattrs *xs);
void vg_evm_xattrs_release(struct vg_evm_xattrs *xs);

/*
 * vg_evm_xattrs_read - fgetxattr() every configured name from @fd.
 * Return: number present; -EOPNOTSUPP (filesystem has no xattrs);
 * -ENOMEM; another negative errno from fgetxattr.
 */
int vg_evm_xattrs_read(int fd, const struct vg_evm_config *cfg, struct vg_evm_xattrs *xs,
		       struct vg_diag *diag);

/*
 * vg_evm_xattrs_set - replace (or add, @val NULL: remove) the value of
 * configured name @name, as the kernel does with the value being set.
 * Return: 0, -ENOENT (not protected), -ENOMEM, -E2BIG.
 */
int vg_evm_xattrs_set(struct vg_evm_xattrs *xs, const struct vg_evm_config *cfg,
		      const char *name, const uint8_t *val, size_t len);

/* Return: the value of @name and its length in *@len, or NULL if absent. */
const uint8_t *vg_evm_xattrs_get(const struct vg_evm_xattrs *xs, const struct vg_evm_config *cfg,
				 const char *name, size_t *len);

/*
 * vg_evm_digest - the EVM digest of @type (02, 03 or 05).
 * 02: HMAC-SHA1 with @key/@keylen (1..128 bytes); @algo is ignored.
 * 03/05: H_@algo of the input.
 * Return: 0; -ENODATA (no protected xattr present: the kernel's
 * INTEGRITY_NOXATTRS); -EPERM (05 without security.ima); -ENOKEY (02
 * without key); -EDESTADDRREQ (02/03 need the fs UUID and @meta has none);
 * -EOPNOTSUPP; -ENOMEM.
 */
int vg_evm_digest(const struct vg_evm_config *cfg, const struct vg_evm_xattrs *xs,
		  const struct vg_evm_meta *meta, uint8_t type, unsigned int algo,
		  const uint8_t *key, size_t keylen, struct vg_digest *ret,
		  struct vg_diag *diag);

/*
 * vg_evm_input - the exact bytes vg_evm_digest() hashes, for inspection
 * and tests. Writes at most @cap bytes. Return: the full length, or the
 * same errors as vg_evm_digest() (no key needed).
 */
int vg_evm_input(const struct vg_evm_config *cfg, const struct vg_evm_xattrs *xs,
		 const struct vg_evm_meta *meta, uint8_t type, uint8_t *out, size_t cap,
		 struct vg_diag *diag);

#endif
