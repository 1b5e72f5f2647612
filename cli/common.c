// SPDX-License-Identifier: MIT
/*
 * common.c - error reporting and the option parsers several commands share.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "cli.h"
#include "vigil/fileio.h"
#include "vigil/hash.h"
#include "vigil/outfile.h"
#include "json_text.h"
#include "vigil/text.h"

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
	size_t cap = VG_TEXT_ESCAPED_MAX(strlen(path));
	char small[1024], *buf = cap <= sizeof(small) ? small : malloc(cap);

	if (!buf) {
		fputs("?", f);
		return;
	}
	vg_text_escape(path, buf, cap);
	fputs(buf, f);
	if (buf != small)
		free(buf);
}

struct json_object *cli_json_path(const char *path)
{
	/* JSON escapes control characters itself; only bytes that are not
	 * UTF-8 need vigil's \xHH escaping to keep the output valid */
	return vg_prog_json_text(path);
}

struct json_object *cli_json_hex(const uint8_t *p, size_t n)
{
	char *h = malloc(2 * n + 1);
	json_object *o;

	if (!h)
		return NULL;
	vg_hex_encode(p, n, h);
	o = json_object_new_string(h);
	free(h);
	return o;
}

void cli_json_add_digest(struct json_object *o, const struct vg_digest *dg)
{
	json_object_object_add(o, "algo", json_object_new_string(vg_hash_name(dg->algo)));
	json_object_object_add(o, "digest", cli_json_hex(dg->bytes, dg->len));
}

int cli_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int r;

	if (fd < 0)
		return -errno;
	/* a regular file is read in one allocation; pipes, devices and /proc
	 * files (no size, or not the one fstat() gives) to their end */
	if (fd && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		r = vg_fd_read_file(fd, max, ret, ret_len);
	else
		r = vg_fd_read_all(fd, max, ret, ret_len);
	if (fd)
		close(fd);
	return r;
}

int cli_open_regular(const char *path)
{
	/* O_NONBLOCK: a fifo must not hold open() up; cleared once it is known regular */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		cli_file_err(path, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_file_err(path, "not a regular file (IMA measures and labels file content only)");
		close(fd);
		return -1;
	}
	(void)fcntl(fd, F_SETFL, 0);
	return fd;
}

int cli_write_out(const char *path, const void *data, size_t len, unsigned int mode,
		  unsigned int flags)
{
	struct vg_diag d = { 0 };

	if ((flags & VG_OUTFILE_STREAM) &&
	    (!path || strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)) {
		if ((len && fwrite(data, 1, len, stdout) != len) || fflush(stdout) != 0) {
			cli_err("writing output: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (!path) {
		cli_err("no output file");
		return -1;
	}
	if (vg_outfile_put(path, data, len, (mode_t)mode, flags, &d) < 0) {
		cli_file_err(path, "%s", d.msg);
		return -1;
	}
	return 0;
}

void cli_read_err(const char *path, int err, size_t max)
{
	if (err == -EFBIG && max % (1u << 30) == 0)
		cli_file_err(path, "larger than %zu GiB", max >> 30);
	else if (err == -EFBIG && max % (1u << 20) == 0)
		cli_file_err(path, "larger than %zu MiB", max >> 20);
	else if (err == -EFBIG)
		cli_file_err(path, "larger than %zu bytes", max);
	else
		cli_file_err(path, "%s", strerror(-err));
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

/* cli_load_hmac_key: keyload.c (raw, passphrase and TPM-sealed key files) */

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
