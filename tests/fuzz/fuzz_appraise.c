// SPDX-License-Identifier: MIT
/*
 * fuzz_appraise.c - a whole appraisal (vg_appraise_fd) of a file whose
 * security.ima, security.evm, security.selinux and content come from the
 * input: the path through lib/appraise.c that reads and decodes the
 * labels, as vigil appraise and vigild run it. Needs root and a
 * filesystem with security.* xattrs: $VIGIL_TESTDIR, else /dev/shm.
 *
 * Input: flags u8 | (be16 len | bytes) for security.ima, security.evm and
 * security.selinux | content. A zero length removes the xattr, unless
 * flag EMPTY_* asks for an empty value. Metadata is pinned as in the
 * evmctl vectors' fixed-metadata cases (inode 123456, generation
 * 987654321, UUID 6a1f4e2c-3b5d-4c7e-9f80-112233445566, uid 0, gid 0,
 * mode 0644 or 0755), so seeds made from those vectors pass.
 *
 * The oracle ("never a wrong ok"): a PASS is rechecked independently of
 * appraise.c: the content digest recomputed in one shot must match the
 * hash or verify the signature in security.ima; an EVM PASS must be the
 * HMAC or signature over an EVM input rebuilt here from the xattr values
 * and the pinned metadata; "imasig" and the algorithm allowlist must hold;
 * an EVM failure is never an overall PASS; a PASS has no cause and any
 * other verdict has one.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "fuzz.h"
#include "vigil/appraise.h"
#include "vigil/hmac_key.h"
#include "vigil/keyring.h"
#include "vigil/sig.h"
#include "vigil/xattr_evm.h"
#include "vigil/xattr_ima.h"

enum {
	F_EXEC = 1 << 0,	/* mode 0755 */
	F_HMAC_KEY = 1 << 1,
	F_REQUIRE_SIG = 1 << 2,
	F_EVM_REQUIRED = 1 << 3,
	F_NO_UUID = 1 << 4,	/* kernel without EVM_ATTR_FSUUID */
	F_SHA256_ONLY = 1 << 5,
	F_EMPTY_IMA = 1 << 6,
	F_EMPTY_EVM = 1 << 7,
};

#define INO 123456u
#define GEN 987654321u
static const uint8_t uuid[16] = { 0x6a, 0x1f, 0x4e, 0x2c, 0x3b, 0x5d, 0x4c, 0x7e,
				  0x9f, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66 };

static struct vg_keyring *kr;
static struct vg_hasher *hasher;
static struct vg_hmac_key hkey;
static int fd = -1;
static bool verbose;		/* $VG_FUZZ_VERBOSE: print each verdict */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const certs[] = {
		"keys/rsa2048.cert.pem", "keys/ecp256.cert.der", "keys/rsa4096.pub.pem",
	};
	const char *dir = getenv("VIGIL_TESTDIR");
	char path[4096];

	(void)argc;
	(void)argv;
	verbose = getenv("VG_FUZZ_VERBOSE") != NULL;
	if (vg_keyring_new(&kr) < 0 || vg_hasher_new(&hasher) < 0)
		abort();
	for (size_t i = 0; i < sizeof(certs) / sizeof(certs[0]); i++)
		if (vg_keyring_add_file(kr, fuzz_vectors_path(certs[i]), NULL) != 1)
			abort();
	if (vg_hmac_key_load_raw(fuzz_vectors_path("keys/evm-key-plain.bin"), &hkey, NULL) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/vigil-fuzz-appraise.XXXXXX", dir && *dir ? dir : "/dev/shm");
	fd = mkstemp(path);
	if (fd < 0 || unlink(path) < 0 || fsetxattr(fd, VG_XATTR_IMA, "\x01", 1, 0) < 0) {
		fprintf(stderr, "fuzz_appraise: %s: needs root and security.* xattrs: %s\n", path,
			strerror(errno));
		abort();
	}
	return 0;
}

struct chunk {
	const uint8_t *p;
	size_t len;
	bool present;
};

static bool take(const uint8_t **d, size_t *n, bool empty_ok, struct chunk *c)
{
	size_t len;

	if (*n < 2)
		return false;
	len = (size_t)((*d)[0] << 8 | (*d)[1]);
	if (*n - 2 < len)
		return false;
	c->p = *d + 2;
	c->len = len;
	c->present = len > 0 || empty_ok;
	*d += 2 + len;
	*n -= 2 + len;
	return true;
}

static void put_xattr(const char *name, const struct chunk *c)
{
	if (c->present)
		FUZZ_CHECK(fsetxattr(fd, name, c->p, c->len, 0) == 0);
	else
		FUZZ_CHECK(fremovexattr(fd, name) == 0 || errno == ENODATA);
}

/* The EVM input of evm.h, rebuilt from scratch: selinux, ima, h_misc, uuid. */
static size_t model_input(const struct chunk *sel, const struct chunk *ima, uint8_t type,
			  bool fsuuid, mode_t mode, uint8_t *out)
{
	bool portable = type == VG_EVM_XATTR_PORTABLE_DIGSIG;
	uint64_t ino = portable ? 0 : INO;
	uint32_t gen = portable ? 0 : GEN, zero = 0;
	uint16_t m = (uint16_t)(S_IFREG | mode), pad = 0;
	size_t n = 0;

	if (sel->present) {
		memcpy(out + n, sel->p, sel->len);
		n += sel->len;
	}
	memcpy(out + n, ima->p, ima->len);
	n += ima->len;
	memcpy(out + n, &ino, 8);
	memcpy(out + n + 8, &gen, 4);
	memcpy(out + n + 12, &zero, 4);
	memcpy(out + n + 16, &zero, 4);
	memcpy(out + n + 20, &m, 2);
	memcpy(out + n + 22, &pad, 2);
	n += 24;
	if (!portable && fsuuid) {
		memcpy(out + n, uuid, 16);
		n += 16;
	}
	return n;
}

static void check_evm_pass(const struct vg_appraise_result *res, const struct chunk *ima,
			   const struct chunk *evm, const struct chunk *sel, uint8_t flags)
{
	static uint8_t in[2 * 65536 + 64];
	struct vg_evm_xattr ex;
	struct vg_digest d;
	size_t n;

	FUZZ_CHECK(ima->present && evm->present);
	FUZZ_CHECK(vg_evm_xattr_decode(evm->p, evm->len, &ex, NULL) == 0);
	n = model_input(sel, ima, ex.type, !(flags & F_NO_UUID),
			flags & F_EXEC ? 0755 : 0644, in);
	if (ex.type == VG_EVM_XATTR_HMAC) {
		uint8_t k[VG_EVM_KEY_MAX] = { 0 }, mac[20];
		unsigned int ml = 0;

		FUZZ_CHECK(res->evm_status == VG_ST_PASS && (flags & F_HMAC_KEY));
		memcpy(k, hkey.key, hkey.len);
		FUZZ_CHECK(HMAC(EVP_sha1(), k, sizeof(k), in, n, mac, &ml) && ml == 20);
		FUZZ_CHECK(memcmp(mac, ex.hmac, 20) == 0);
		return;
	}
	FUZZ_CHECK(res->evm_status ==
		   (ex.type == VG_EVM_XATTR_PORTABLE_DIGSIG ? VG_ST_PASS_IMMUTABLE : VG_ST_PASS));
	FUZZ_CHECK(vg_hash_buf(ex.sig.hash_algo, in, n, &d, NULL) == 0);
	FUZZ_CHECK(vg_sig_verify(kr, evm->p, evm->len, &d, NULL) == 0);
}

static void check_pass(const struct vg_appraise_result *res, const struct chunk *ima,
		       const uint8_t *content, size_t clen, uint8_t flags)
{
	struct vg_ima_xattr x;
	struct vg_digest d;

	FUZZ_CHECK(res->cause == NULL && ima->present);
	FUZZ_CHECK(vg_ima_xattr_decode(ima->p, ima->len, &x, NULL) == 0);
	FUZZ_CHECK(vg_hash_buf(x.algo, content, clen, &d, NULL) == 0);
	FUZZ_CHECK(res->content_hashed && res->size == clen);
	FUZZ_CHECK(res->digest.len == d.len && memcmp(res->digest.bytes, d.bytes, d.len) == 0);
	switch (x.type) {
	case VG_IMA_XATTR_DIGEST:
	case VG_IMA_XATTR_DIGEST_NG:
		FUZZ_CHECK(x.digest_len >= d.len && memcmp(x.digest, d.bytes, d.len) == 0);
		FUZZ_CHECK(!(flags & F_REQUIRE_SIG) || res->evm_status == VG_ST_PASS_IMMUTABLE);
		break;
	case VG_EVM_IMA_XATTR_DIGSIG:
		FUZZ_CHECK(vg_sig_verify(kr, ima->p, ima->len, &d, NULL) == 0);
		break;
	case VG_IMA_VERITY_DIGSIG: {
		/* sigv3 signs H(06 || algo || digest); the version byte is not signed */
		static uint8_t v2[VG_SIG_V2_HDR_LEN + 65535];
		uint8_t id[2 + VG_HASH_MAX_DIGEST];
		struct vg_digest fid;

		id[0] = VG_IMA_VERITY_DIGSIG;
		id[1] = d.algo;
		memcpy(id + 2, d.bytes, d.len);
		FUZZ_CHECK(vg_hash_buf(d.algo, id, 2 + (size_t)d.len, &fid, NULL) == 0);
		memcpy(v2, ima->p, ima->len);
		v2[1] = 2;
		FUZZ_CHECK(x.sig.version == 3 && vg_sig_verify(kr, v2, ima->len, &fid, NULL) == 0);
		break;
	}
	default:
		FUZZ_CHECK(!"PASS with an unknown security.ima type");
	}
	FUZZ_CHECK(!(flags & F_SHA256_ONLY) || x.algo == VG_HASH_SHA256);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_evm_config cfg;
	struct vg_appraise_opts o = { 0 };
	struct vg_appraise_result res;
	struct vg_diag diag = { 0 };
	struct chunk ima, evm, sel;
	uint8_t flags;
	int r;

	if (size < 1)
		return 0;
	flags = data[0];
	data++;
	size--;
	if (!take(&data, &size, flags & F_EMPTY_IMA, &ima) ||
	    !take(&data, &size, flags & F_EMPTY_EVM, &evm) || !take(&data, &size, false, &sel))
		return 0;

	FUZZ_CHECK(ftruncate(fd, 0) == 0);
	FUZZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	FUZZ_CHECK(fchmod(fd, flags & F_EXEC ? 0755 : 0644) == 0);
	put_xattr(VG_XATTR_IMA, &ima);
	put_xattr(VG_XATTR_EVM, &evm);
	put_xattr("security.selinux", &sel);

	vg_evm_config_default(&cfg);
	cfg.fsuuid = !(flags & F_NO_UUID);
	o.evm = &cfg;
	o.ima_keys = kr;
	o.evm_keys = kr;
	if (flags & F_HMAC_KEY) {
		o.hmac_key = hkey.key;
		o.hmac_key_len = hkey.len;
	}
	o.evm_required = flags & F_EVM_REQUIRED;
	o.require_sig = flags & F_REQUIRE_SIG;
	o.allowed_algos = flags & F_SHA256_ONLY ? 1u << VG_HASH_SHA256 : 0;
	o.uuid_mode = VG_UUID_GIVEN;
	memcpy(o.uuid, uuid, 16);
	o.meta = (struct vg_meta_override){ .ino_set = true, .gen_set = true, .ino = INO,
					    .gen = GEN };

	r = vg_appraise_fd(hasher, fd, &o, &res, &diag);
	FUZZ_CHECK(r == 0);	/* every input gets a verdict; only I/O fails */
	if (verbose)
		fprintf(stderr, "fuzz_appraise: %s evm %s cause %s\n", vg_status_name(res.status),
			vg_status_name(res.evm_status), res.cause ? res.cause : "-");
	FUZZ_CHECK(memchr(res.detail.msg, '\0', sizeof(res.detail.msg)));
	if (res.evm_status == VG_ST_PASS || res.evm_status == VG_ST_PASS_IMMUTABLE)
		check_evm_pass(&res, &ima, &evm, &sel, flags);
	/* EVM left undecided only without a label to judge or a key to judge it */
	if (res.evm_status == VG_ST_UNKNOWN && ima.len > 0)
		FUZZ_CHECK(evm.present ? res.hmac_unchecked
				       : !(flags & (F_HMAC_KEY | F_EVM_REQUIRED)));
	if (res.status == VG_ST_PASS) {
		FUZZ_CHECK(res.evm_status == VG_ST_PASS || res.evm_status == VG_ST_PASS_IMMUTABLE ||
			   res.evm_status == VG_ST_UNKNOWN);
		check_pass(&res, &ima, data, size, flags);
	} else {
		FUZZ_CHECK(res.cause && res.cause[0]);
	}
	return 0;
}
