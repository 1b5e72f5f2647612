/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the vigil commands share: the command table entry, error
 * reporting (once, at the boundary, naming the command and the file), and
 * the parsers of single option values (hash names, UUIDs, key files). The
 * option groups built on them are opts.h's; verb tables are verb.h's.
 *
 * Exit codes: 0 verified / done, 1 not verified, 2 usage or operational
 * error.
 */
#ifndef VIGIL_CLI_H
#define VIGIL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vigil/appraise.h"
#include "vigil/evm.h"
#include "vigil/hmac_key.h"
#include "vigil/keyring.h"

enum { EXIT_OK = 0, EXIT_NOTVERIFIED = 1, EXIT_ERROR = 2 };

struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

/* Set by main() to the running command's name, for messages. */
extern const char *cli_cmdname;

/* "vigil CMD: <message>\n" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "vigil CMD: FILE: <message>\n" on stderr, the path shown escaped. */
void cli_file_err(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * cli_read_file - the whole of @path ("-": stdin), regular file or not
 * (pipes, devices, /proc), into a new buffer with a NUL after the last
 * byte. Return: 0, -EFBIG (more than @max bytes: /dev/zero ends), -errno.
 */
int cli_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len);
/* Open a regular file to read its content. Return: the fd, or -1 (reported). */
int cli_open_regular(const char *path);
/* cli_file_err() for cli_read_file()'s @err: "larger than N MiB", or strerror. */
void cli_read_err(const char *path, int err, size_t max);
/* The limits of what commands read whole. */
#define CLI_LOG_MAX ((size_t)1 << 30)		/* measurement lists */
#define CLI_DOC_MAX ((size_t)256 << 20)		/* reference policies, quotes, keys */
#define CLI_SMALL_MAX ((size_t)1 << 20)		/* PCR value files */

/*
 * cli_write_out - @len bytes as the whole content of @path, the one way
 * commands write an output file (vigil/outfile.h: a temporary renamed over
 * a regular file; symbolic links, directories, sockets and block devices
 * refused; a character device or fifo written in place with
 * VG_OUTFILE_STREAM, else refused). With VG_OUTFILE_STREAM, @path NULL,
 * "-" or "/dev/stdout" is standard output. Return: 0, or -1 (reported,
 * naming the file; nothing written).
 */
int cli_write_out(const char *path, const void *data, size_t len, unsigned int mode,
		  unsigned int flags);

/* Print @path with control characters and backslashes escaped (\n, \xHH). */
void cli_put_path(FILE *f, const char *path);
/* @path (or any text from elsewhere) as a JSON string (json-c); escaped as above only if
 * it is not valid UTF-8 (vigil/text.h). */
struct json_object *cli_json_path(const char *path);

/* @n bytes at @p as a JSON string of lowercase hex (vg_hex_encode). Return: it, or NULL. */
struct json_object *cli_json_hex(const uint8_t *p, size_t n);

/* Add "algo" (the kernel's name) and "digest" (hex) of @dg to the object @o. */
void cli_json_add_digest(struct json_object *o, const struct vg_digest *dg);

/* Parse a kernel hash name that OpenSSL can compute. Return: id or -1 (reported). */
int cli_parse_algo(const char *name);

/* --uuid / --no-uuid handling shared by evm and appraise. */
struct cli_uuid {
	enum vg_uuid_mode mode;
	uint8_t uuid[16];
	bool omit;			/* --no-uuid */
};
/* Return: 0, or -1 (reported). */
int cli_parse_uuid(struct cli_uuid *u, const char *arg);

/* --inode N / --generation N. Return: 0, or -1 (reported). */
int cli_parse_meta(struct vg_meta_override *m, int which, const char *arg);

/* Protected xattr list: kernel defaults plus --evm-xattr names. */
int cli_evm_add(struct vg_evm_config *cfg, const char *name);

/*
 * Load an HMAC key file of any kind (raw, passphrase, TPM-sealed: the file
 * says). The TCTI is --tcti, else $VIGIL_TCTI, else the default; the
 * passphrase --passphrase-file, else $VIGIL_PASSPHRASE_FILE, else the
 * terminal. Return: 0, or -1 (reported; an unavailable key names why).
 */
int cli_load_hmac_key(const char *path, struct vg_hmac_key *key);
/* --tcti STRING / --passphrase-file FILE of commands that take a key (keyload.c). */
struct cli_keyopts {
	const char *tcti;
	const char *passphrase_file;
};
int cli_load_hmac_key_opts(const char *path, const struct cli_keyopts *ko, struct vg_hmac_key *key);
/* Read a passphrase for @what; @confirm asks twice on a terminal. Return: length or -1 (reported). */
int cli_read_passphrase(const struct cli_keyopts *ko, const char *what, bool confirm,
			char *buf, size_t cap);
struct vg_tpm;
/* Open the TPM (quiets tpm2-tss's own stderr logging). Return: 0, or -1 (reported). */
int cli_tpm_open(const char *tcti, struct vg_tpm **ret);
int cmd_key(int argc, char **argv);

/* Load one more keyring file. Return: 0, or -1 (reported). */
int cli_keyring_add(struct vg_keyring *kr, const char *path);

/* Load a signing key, with an optional keyid override (hex). Return: 0 or -1. */
int cli_load_signer(const char *path, const char *keyid_hex, struct vg_signer **ret);

int cmd_hash(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_evm(int argc, char **argv);
int cmd_appraise(int argc, char **argv);
int cmd_label(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_log(int argc, char **argv);
/* `vigil log boot ...` (cmd_log_boot.c): @argv[0] is "boot". */
int cmd_log_boot(int argc, char **argv);
int cmd_measure(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_attest(int argc, char **argv);
int cmd_trust(int argc, char **argv);

struct vg_config;
/* Load @path, or the default config if it exists (@path NULL). Return: 0 or -1 (reported). */
int cli_load_config(const char *path, struct vg_config *cfg);
/* --jobs N (1..64). Return: 0 or -1 (reported). */
int cli_parse_jobs(const char *arg, unsigned int *ret);

#endif
