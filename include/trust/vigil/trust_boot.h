/* SPDX-License-Identifier: MIT */
/*
 * trust_boot.h - the boot references of a trust database (issue 45): for
 * every EFI image and kernel of a verified .deb (shim-signed's shim,
 * grub-efi-*-signed's GRUB, linux-image-*'s vmlinuz), its Authenticode
 * SHA-256 (what firmware and shim extend into PCR 4 when they start it,
 * authenticode.h) and its plain SHA-256 (what GRUB extends into PCR 9
 * when it reads the kernel file), with the package, version and
 * architecture that ship it, so that a verifier knows every boot chain the
 * archive allows, the next boot's included, before the host reboots.
 *
 * Each reference has a state, settled at every build
 * (vg_trust_db_boot_settle) with the same grace as packages:
 *   current     its package is current and no image of the same role in
 *               the same series has a higher version: a package's later
 *               version, or for kernels a later ABI of the same flavour
 *               (linux-image-6.1.0-41-amd64 supersedes -37-amd64, which
 *               the archive keeps listing until its next point release)
 *   superseded  since a time: accepted while within the grace
 *   expired     past the grace: kept, never accepted, so that a
 *               downgrade is named ("superseded by ... since ...")
 *
 * The database table (format 4, trust_db.h): boot(name, version, arch,
 * path, role, series, authenticode, sha256, state, since).
 *
 * No global state, no logging; negative errno and a vg_diag.
 */
#ifndef VIGIL_TRUST_BOOT_H
#define VIGIL_TRUST_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/trust.h"

/* what a boot image is, by where its package puts it */
enum vg_boot_role {
	VG_BOOT_NONE = 0,
	VG_BOOT_SHIM = 1,	/* /usr/lib/shim/shim*.efi.signed (shim-signed) */
	VG_BOOT_GRUB = 2,	/* the .efi.signed images of /usr/lib/grub/PLATFORM-efi-signed */
	VG_BOOT_KERNEL = 3,	/* /boot/vmlinuz-* (linux-image-*) */
	VG_BOOT_EFI = 4,	/* another EFI application of shim's: MokManager, fallback */
};
#define VG_BOOT_ROLE_MAX VG_BOOT_EFI

enum vg_boot_state { VG_BOOT_CURRENT = 0, VG_BOOT_SUPERSEDED = 1, VG_BOOT_EXPIRED = 2 };

/* Return: the role of the file @path (absolute, normalised) of a package. */
enum vg_boot_role vg_trust_boot_role(const char *path);
/* Return: "shim", "GRUB", "kernel", "EFI application", "" for NONE. */
const char *vg_trust_boot_role_name(enum vg_boot_role r);

/*
 * vg_trust_boot_series - the series in which versions of @package's boot
 * images supersede each other: the package name, except a kernel
 * "linux-image-ABI-FLAVOUR" (ABI digits, dots and one dash: 6.1.0-41),
 * whose series is "linux-image-FLAVOUR". Return: its length, or -ENOSPC.
 */
int vg_trust_boot_series(const char *package, char *out, size_t cap);

/*
 * vg_trust_db_boot_settle - in a database being written, after every
 * package was added and the previous database carried: each reference's
 * state (above) at @now, superseded ones past @grace seconds expired.
 * Return: the references that expired now, or -errno.
 */
int vg_trust_db_boot_settle(struct vg_trust_db *db, int64_t now, int64_t grace,
			    struct vg_diag *diag);

/* ---- in memory, for a verifier ---- */

struct vg_trust_boot;

struct vg_trust_boot_ref {
	const char *package, *version, *arch, *path, *series;	/* valid while the set is */
	enum vg_boot_role role;
	enum vg_boot_state state;
	int64_t since;			/* superseded since (0: current) */
	const char *newest;		/* the series' newest current version, NULL: none */
	uint8_t authenticode[32], sha256[32];
};

/*
 * vg_trust_boot_load - every boot reference of the opened (authenticated)
 * @db, immutable once loaded (any number of threads may look up); a
 * database before format 4 has none. Return: 0 and *@ret; -ENOMEM; -errno.
 */
int vg_trust_boot_load(struct vg_trust_db *db, struct vg_trust_boot **ret,
		       struct vg_diag *diag);

/* which digest vg_trust_boot_find compares */
enum vg_boot_digest { VG_BOOT_AUTHENTICODE = 0, VG_BOOT_FILE = 1 };

/*
 * vg_trust_boot_find - the references whose Authenticode (or file)
 * SHA-256 is @sha256, of role @role (VG_BOOT_NONE: any): up to @max in
 * @ret, the accepted ones (current, then superseded) first.
 * Return: how many there are (may exceed @max).
 */
size_t vg_trust_boot_find(const struct vg_trust_boot *b, enum vg_boot_role role,
			  enum vg_boot_digest which, const uint8_t sha256[32],
			  const struct vg_trust_boot_ref **ret, size_t max);

/* Return: the references in @b (0 for NULL); *@ret_ref (may be NULL) the @i-th. */
size_t vg_trust_boot_count(const struct vg_trust_boot *b);
const struct vg_trust_boot_ref *vg_trust_boot_at(const struct vg_trust_boot *b, size_t i);

void vg_trust_boot_free(struct vg_trust_boot *b);

#endif
