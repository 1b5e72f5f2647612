/* SPDX-License-Identifier: MIT */
/*
 * diag.h - error detail for callers of libvigil.
 *
 * Library functions return negative errno values in the kernel's vocabulary
 * (-ENODATA no xattr, -EBADMSG malformed, -ENOKEY no key for this keyid,
 * -EKEYREJECTED bad signature, -EOPNOTSUPP unsupported algorithm, -ENOMEM).
 * When the caller passes a struct vg_diag, the function also leaves a
 * human-readable sentence there: which field, which offset, which OpenSSL
 * reason. A diag is written only on failure; the library never prints.
 */
#ifndef VIGIL_DIAG_H
#define VIGIL_DIAG_H

#include <stddef.h>

/* room for the longest sentence the library writes, a path or two in it (issue 40: none is cut) */
#define VG_DIAG_MAX 1024

struct vg_diag {
	int err;		/* the negative errno also returned */
	char msg[VG_DIAG_MAX];	/* NUL-terminated, never contains a secret */
};

/*
 * vg_diag_set - record a failure and hand its code back.
 * @d may be NULL. @err is a negative errno.
 * Return: @err, so that `return vg_diag_set(d, -EBADMSG, "...")` reads well.
 */
int vg_diag_set(struct vg_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * vg_diag_ssl - like vg_diag_set, and append OpenSSL's first queued reason.
 * Empties OpenSSL's error queue of this thread either way.
 */
int vg_diag_ssl(struct vg_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* vg_diag_clear - drop OpenSSL's error queue of this thread (no diag). */
void vg_ssl_clear(void);

#endif
