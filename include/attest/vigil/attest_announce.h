/* SPDX-License-Identifier: MIT */
/*
 * attest_announce.h - what a host announces, in its measurement list,
 * about its next boot (issue 45): the two parts of the boot chain the
 * archive cannot know, built on the host.
 *
 *   next-boot-initrd:PATH   ima-ng, its file digest the SHA-256 of the
 *                           initrd update-initramfs wrote at PATH (what
 *                           GRUB will extend into PCR 9 when it loads it)
 *   next-boot-cmdline       ima-buf, its buffer a kernel command line as
 *                           GRUB will measure it into PCR 8 (without the
 *                           "kernel_cmdline: " prefix), its digest the
 *                           buffer's SHA-256
 *
 * written by `vigil trust boot announce` (the initramfs-tools hook runs
 * it), into the list itself or, when vigild holds the list, through
 * vigild's control socket (common/vigild_ctl.h), whose writer thread
 * appends them with the same two functions below. A
 * verifier takes an announcement only from the attested part of a round
 * that passed (its quote verified, its list replayed to PCR 10, every
 * entry judged) and keeps it, with the TPM's resetCount of the boot that
 * made it, across reboots; a boot log is then judged against the
 * announcements of earlier boots only (vg_attest_announced_for). A later
 * announcement of the same initrd path, or of the same kernel's command
 * line (the line's first word, GRUB's path of the kernel), replaces the
 * earlier one: an initrd rebuilt makes the old one unacceptable.
 *
 * The kept set is bounded (VG_ANNOUNCE_MAX bytes, a store column): the
 * oldest records give way to new ones. No global state.
 */
#ifndef VIGIL_ATTEST_ANNOUNCE_H
#define VIGIL_ATTEST_ANNOUNCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/imalog.h"
#include "vigil/mlog.h"

#define VG_ANNOUNCE_INITRD "next-boot-initrd:"
#define VG_ANNOUNCE_CMDLINE "next-boot-cmdline"
#define VG_ANNOUNCE_MAX 2048		/* bytes of records kept per agent */
#define VG_ANNOUNCE_CMDLINE_MAX 1024	/* the longest command line kept */

enum vg_announce_kind { VG_ANNOUNCE_KIND_INITRD = 1, VG_ANNOUNCE_KIND_CMDLINE = 2 };

/*
 * The kept announcements: records of u8 kind | u32 reset (big-endian) |
 * u16 key length | key | u16 value length | value, oldest first; for an
 * initrd key = PATH, value = the 32-byte SHA-256; for a command line key =
 * its first word, value = the line. Unused bytes are zero.
 */
struct vg_attest_announced {
	uint32_t len;
	uint8_t buf[VG_ANNOUNCE_MAX];
};

/* one announcement, decoded */
struct vg_announcement {
	enum vg_announce_kind kind;
	uint32_t reset;			/* TPM resetCount of the boot that announced it */
	const char *key;		/* not NUL-terminated: key_len */
	size_t key_len;
	const uint8_t *value;
	size_t value_len;
};

/*
 * vg_attest_announce_entry - whether the list entry @e is an announcement,
 * and which. Return: 1 (*@ret set; reset 0), 0 not one, -EBADMSG (named
 * like one, but its template, digest or buffer are not an announcement's).
 */
int vg_attest_announce_entry(const struct vg_imalog_entry *e, struct vg_announcement *ret);

/*
 * vg_attest_announce_initrd - queue on @l (vg_mlog_append_file) the
 * announcement of the initrd at @path (absolute, fewer than PATH_MAX bytes)
 * whose SHA-256 is @sha256, for @pcr.
 * Return: 0, -EINVAL (@path is not one an announcement may name), or
 * vg_mlog_append_file's error.
 */
int vg_attest_announce_initrd(struct vg_mlog *l, unsigned int pcr, const char *path,
			      const uint8_t sha256[32], struct vg_diag *diag);

/*
 * vg_attest_announce_cmdline - queue on @l the announcement of the command
 * line @line (@len bytes, 1 to VG_ANNOUNCE_CMDLINE_MAX, no NUL): ima-buf,
 * its digest the line's SHA-256, for @pcr.
 * Return: 0, -EINVAL (not a line an announcement may hold), -ENOMEM, or
 * vg_mlog_append's error.
 */
int vg_attest_announce_cmdline(struct vg_mlog *l, unsigned int pcr, const char *line, size_t len,
			       struct vg_diag *diag);

/* Return: whether the event name @name (@len bytes) is an announcement's. */
bool vg_attest_announce_name(const char *name, size_t len);

/*
 * vg_attest_announce_collect - the announcements among the first @n
 * entries of the binary list @log (template digests of bank @algo) into
 * @ann, made by the boot @reset. Entries that do not parse end it.
 * Return: the announcements taken, -ENOMEM never (bounded), -EBADMSG.
 */
int vg_attest_announce_collect(const uint8_t *log, size_t len, unsigned int algo, uint64_t n,
			       uint32_t reset, struct vg_attest_announced *ann);

/* Add one (replacing the one of the same kind and key). Return: 0, -E2BIG (too long). */
int vg_attest_announced_add(struct vg_attest_announced *ann, const struct vg_announcement *a);

/*
 * vg_attest_announced_next - the @i-th record (0 first); with @before
 * non-zero, records of boots before that resetCount only. Return: 1 (*@ret),
 * 0 none left.
 */
int vg_attest_announced_next(const struct vg_attest_announced *ann, size_t *cursor,
			     uint32_t before, struct vg_announcement *ret);

/* @len bytes from the store into @ann: records must decode exactly. Return: 0, -EBADMSG (emptied). */
int vg_attest_announced_set(struct vg_attest_announced *ann, const uint8_t *buf, size_t len);

#endif
