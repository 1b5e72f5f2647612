// SPDX-License-Identifier: MIT
/*
 * fuzz_sig_v2.c - signature v2 headers (vg_sig_v2_decode/encode) and the
 * signature bytes behind them (vg_sig_verify: OpenSSL's RSA and ECDSA DER
 * parsing).
 *
 * Properties:
 *  - decode agrees with a model of the kernel's checks (more than 9 bytes,
 *    sig_size = the rest, hash algo a known id), and encode(decode(x)) == x;
 *  - encode refuses a buffer one byte short;
 *  - verification with the test keyring (rsa2048, ecp256, rsa4096) of
 *    any header over a digest no vector signed never succeeds: a
 *    malformed or foreign signature is never "ok".
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"

static struct vg_keyring *kr;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const certs[] = {
		"keys/rsa2048.cert.pem", "keys/ecp256.cert.pem", "keys/rsa4096.cert.der",
	};

	(void)argc;
	(void)argv;
	if (vg_keyring_new(&kr) < 0)
		abort();
	for (size_t i = 0; i < sizeof(certs) / sizeof(certs[0]); i++)
		if (vg_keyring_add_file(kr, fuzz_vectors_path(certs[i]), NULL) != 1) {
			fprintf(stderr, "fuzz_sig_v2: cannot load %s\n", fuzz_vectors_path(certs[i]));
			abort();
		}
	return 0;
}

static int model(const uint8_t *data, size_t size)
{
	if (size <= VG_SIG_V2_HDR_LEN)
		return -EBADMSG;
	if ((size_t)(data[7] << 8 | data[8]) != size - VG_SIG_V2_HDR_LEN)
		return -EBADMSG;
	if (data[2] >= VG_HASH__LAST)
		return -EOPNOTSUPP;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[VG_SIG_V2_HDR_LEN + 65535];
	struct vg_diag diag = { 0 };
	struct vg_sig_v2 s;
	struct vg_digest d;
	int r = vg_sig_v2_decode(data, size, &s, &diag);

	FUZZ_CHECK(r == model(data, size));
	if (r < 0) {
		FUZZ_CHECK(diag.err == r && diag.msg[0]);
		return 0;
	}
	FUZZ_CHECK(s.type == data[0] && s.version == data[1] && s.hash_algo == data[2]);
	FUZZ_CHECK(s.sig == data + VG_SIG_V2_HDR_LEN);
	FUZZ_CHECK(vg_sig_v2_encode(&s, out, sizeof(out)) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
	FUZZ_CHECK(vg_sig_v2_encode(&s, out, size - 1) == -ENOBUFS);

	/* a digest of the header's algorithm that no test vector signed */
	memset(&d, 0, sizeof(d));
	d.algo = s.hash_algo;
	d.len = (uint8_t)vg_hash_size(s.hash_algo);
	memset(d.bytes, 0x5a, d.len);
	r = vg_sig_verify(kr, data, size, &d, &diag);
	FUZZ_CHECK(r < 0);
	FUZZ_CHECK(r == -EOPNOTSUPP || r == -ENOKEY || r == -EKEYREJECTED || r == -EIO);
	return 0;
}
