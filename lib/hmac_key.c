// SPDX-License-Identifier: MIT
/*
 * hmac_key.c - raw EVM HMAC key files. The read goes straight into the
 * caller's key struct so no copy of the secret is left elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "vigil/hmac_key.h"

int vg_hmac_key_load_raw(const char *path, struct vg_hmac_key *ret, struct vg_diag *diag)
{
	struct vg_hmac_key k = { 0 };
	uint8_t extra;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
	do
		n = read(fd, k.key, sizeof(k.key));
	while (n < 0 && errno == EINTR);
	if (n >= 0 && (size_t)n == sizeof(k.key) && read(fd, &extra, 1) > 0)
		n = (ssize_t)sizeof(k.key) + 1;
	if (n < 0) {
		int e = errno;

		close(fd);
		return vg_diag_set(diag, -e, "%s: read: %s", path, strerror(e));
	}
	close(fd);
	if (n < VG_HMAC_KEY_MIN || (size_t)n > sizeof(k.key)) {
		OPENSSL_cleanse(&k, sizeof(k));
		return vg_diag_set(diag, -EINVAL, "%s: an EVM HMAC key is %d to %d bytes, this file has %s%zd",
				   path, VG_HMAC_KEY_MIN, VG_EVM_KEY_MAX,
				   (size_t)n > sizeof(k.key) ? "more than " : "",
				   (size_t)n > sizeof(k.key) ? (ssize_t)sizeof(k.key) : n);
	}
	k.len = (size_t)n;
	*ret = k;
	OPENSSL_cleanse(&k, sizeof(k));
	return 0;
}

void vg_hmac_key_wipe(struct vg_hmac_key *k)
{
	if (k)
		OPENSSL_cleanse(k, sizeof(*k));
}
