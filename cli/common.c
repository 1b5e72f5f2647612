// SPDX-License-Identifier: MIT
/*
 * common.c - error reporting and the option parsers several commands share.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "vigil/hash.h"

const char *cli_cmdname = "";

static void prefix(void)
{
	if (cli_cmdname[0])
		fprintf(stderr, "vigil %s: ", cli_cmdname);
	else
		fputs("vigil: ", stderr);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	prefix();
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_put_path(FILE *f, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\\')
			fputs("\\\\", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

void cli_file_err(const char *path, const char *fmt, ...)
{
	va_list ap;

	prefix();
	cli_put_path(stderr, path);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_parse_algo(const char *name)
{
	int a = vg_hash_by_name(name);

	if (a < 0) {
		cli_err("unknown hash algorithm '%s' (kernel names: sha1, sha256, sha512, sm3, sha3-256, ...)",
			name);
		return -1;
	}
	if (!vg_hash_available((unsigned int)a)) {
		cli_err("hash algorithm '%s' is not provided by OpenSSL here", name);
		return -1;
	}
	return a;
}

int cli_parse_uuid(struct cli_uuid *u, const char *arg)
{
	if (vg_uuid_parse(arg, u->uuid) < 0) {
		cli_err("--uuid '%s' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", arg);
		return -1;
	}
	u->mode = VG_UUID_GIVEN;
	return 0;
}

int cli_evm_add(struct vg_evm_config *cfg, const char *name)
{
	int r = vg_evm_config_add(cfg, name);

	if (r == -EEXIST)
		return vg_evm_config_enable(cfg, name, true), 0;
	if (r == -EINVAL)
		cli_err("--evm-xattr '%s': protected names are security.* (at most 255 bytes)", name);
	else if (r == -ENOSPC)
		cli_err("--evm-xattr '%s': at most %d protected names", name, VG_EVM_MAX_XATTRS);
	return r < 0 ? -1 : 0;
}

int cli_load_hmac_key(const char *path, struct vg_hmac_key *key)
{
	struct vg_diag d = { 0 };

	if (vg_hmac_key_load_raw(path, key, &d) < 0) {
		cli_err("HMAC key %s", d.msg);
		return -1;
	}
	return 0;
}

int cli_keyring_add(struct vg_keyring *kr, const char *path)
{
	struct vg_diag d = { 0 };

	if (vg_keyring_add_file(kr, path, &d) < 0) {
		cli_err("keyring: %s", d.msg);
		return -1;
	}
	return 0;
}

int cli_load_signer(const char *path, const char *keyid_hex, struct vg_signer **ret)
{
	struct vg_diag d = { 0 };
	uint8_t id[4];

	if (keyid_hex && vg_hex_decode(keyid_hex, id, sizeof(id)) != 4) {
		cli_err("--keyid '%s' is not 8 hex digits", keyid_hex);
		return -1;
	}
	if (vg_signer_load(path, ret, &d) < 0) {
		cli_err("signing key %s", d.msg);
		return -1;
	}
	if (keyid_hex)
		vg_signer_set_keyid(*ret, (uint32_t)id[0] << 24 | (uint32_t)id[1] << 16 |
					  (uint32_t)id[2] << 8 | id[3]);
	return 0;
}

int cli_parse_meta(struct vg_meta_override *m, int which, const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' ||
	    (which == 'G' && v > UINT32_MAX)) {
		cli_err("--%s '%s' is not a decimal number%s", which == 'G' ? "generation" : "inode",
			arg, which == 'G' ? " below 2^32" : "");
		return -1;
	}
	if (which == 'G') {
		m->gen = (uint32_t)v;
		m->gen_set = true;
	} else {
		m->ino = v;
		m->ino_set = true;
	}
	return 0;
}
