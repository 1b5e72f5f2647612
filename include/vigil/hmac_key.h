/* SPDX-License-Identifier: MIT */
/*
 * hmac_key.h - the EVM HMAC key in memory, and loading it from a key file.
 *
 * A raw key file holds the key bytes themselves, 32 to 128 of them, like
 * the payload of the kernel's "evm-key" encrypted key or evmctl's
 * /etc/keys/evm-key-plain. The key is wiped when released.
 */
#ifndef VIGIL_HMAC_KEY_H
#define VIGIL_HMAC_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/evm.h"

#define VG_HMAC_KEY_MIN 32

struct vg_hmac_key {
	uint8_t key[VG_EVM_KEY_MAX];
	size_t len;
};

/*
 * vg_hmac_key_load_raw - read a raw key file.
 * Return: 0; -EINVAL (size outside 32..128 bytes); -errno from open/read.
 */
int vg_hmac_key_load_raw(const char *path, struct vg_hmac_key *ret, struct vg_diag *diag);

/* Wipe the key. NULL-safe. */
void vg_hmac_key_wipe(struct vg_hmac_key *k);

#endif
