/* SPDX-License-Identifier: MIT */
/*
 * auth.h - bearer tokens of the attestation API (docs/api-auth.md): their
 * format, their hash, and the token file a daemon checks them against.
 *
 *   token      vg1.<id>.<secret>   id: 8 lowercase hex (names the token in
 *                                  logs), secret: 64 lowercase hex (32
 *                                  random bytes); sent as
 *                                  "Authorization: Bearer <token>"
 *   token file one line per token: ROLE ID SHA256HEX, where SHA256HEX is
 *              sha256 of the whole token text; '#' starts a comment line;
 *              the daemons never hold a token, only its hash
 *   roles      admin (every route; implies read), read (GET routes of the
 *              verifier), verifier (the token a verifier presents to agents),
 *              agent (a pushing agent's token: its own push routes on the
 *              verifier, nothing else)
 *
 * Functions over bytes, and the one reader of these files with their mode
 * checks (vg_auth_read_file); HTTP headers are the daemons' business
 * (common/http_auth.c).
 */
#ifndef VIGIL_AUTH_H
#define VIGIL_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"

#define VG_AUTH_ID_LEN 8
#define VG_AUTH_SECRET_LEN 64
/* "vg1." id "." secret */
#define VG_AUTH_TOKEN_LEN (4 + VG_AUTH_ID_LEN + 1 + VG_AUTH_SECRET_LEN)
#define VG_AUTH_FILE_MAX (1u << 20)	/* bytes of a token file */
#define VG_AUTH_TOKENS_MAX 4096		/* lines with a token in one file */

enum vg_auth_role {
	VG_AUTH_READ = 1,
	VG_AUTH_ADMIN = 2,
	VG_AUTH_VERIFIER = 4,
	VG_AUTH_AGENT = 8,	/* a pushing agent: its own push routes only (verifier) */
};

struct vg_auth;

/* "admin", "read", "verifier", "agent"; "?" for anything else. */
const char *vg_auth_role_name(unsigned int role);

/*
 * vg_auth_token_new - a fresh token from RAND_bytes: @token gets
 * VG_AUTH_TOKEN_LEN characters and a NUL, @id (may be NULL) its id and a
 * NUL. Return: 0, -EIO (no randomness).
 */
int vg_auth_token_new(char token[VG_AUTH_TOKEN_LEN + 1], char id[VG_AUTH_ID_LEN + 1]);

/*
 * vg_auth_token_parse - @s (@len bytes) is exactly a token (no spaces, no
 * newline); its id into @id (may be NULL). Return: 0, -EBADMSG (diag says
 * what is wrong, never a secret).
 */
int vg_auth_token_parse(const char *s, size_t len, char id[VG_AUTH_ID_LEN + 1],
			struct vg_diag *diag);

/*
 * vg_auth_token_line - the token file line for @token (already parsed)
 * with @role: "ROLE ID SHA256HEX\n" into @out (at least 96 bytes).
 * Return: its length, -EBADMSG (not a token or role), -EIO (digest failed).
 */
int vg_auth_token_line(const char *token, unsigned int role, char *out, size_t cap);

/*
 * vg_auth_load - parse a token file: each line ROLE ID SHA256HEX, roles
 * within @roles (a mask), ids unique; blank lines and '#' comments
 * skipped; anything else refused naming the line (and, since no line may
 * be ignored, so is a NUL byte or an unknown role).
 * Return: 0 and *@ret (free with vg_auth_free), -EBADMSG (diag: "line N:
 * ..."), -E2BIG (more than VG_AUTH_TOKENS_MAX tokens or VG_AUTH_FILE_MAX
 * bytes), -ENOMEM.
 */
int vg_auth_load(const uint8_t *buf, size_t len, unsigned int roles, struct vg_auth **ret,
		 struct vg_diag *diag);

void vg_auth_free(struct vg_auth *a);

/* Tokens in the file. */
size_t vg_auth_count(const struct vg_auth *a);

/*
 * vg_auth_check - the role of the token in an Authorization header value
 * (@header: "Bearer <token>", may be NULL = no header). The token's hash
 * is compared with CRYPTO_memcmp. @id (may be NULL) gets the token's id
 * when it is well formed, whether or not it is listed (for logs).
 * Return: the role (> 0), -ENOKEY (no header or not a bearer token),
 * -EBADMSG (malformed token), -EKEYREJECTED (well formed, not listed or
 * wrong secret).
 */
int vg_auth_check(const struct vg_auth *a, const char *header, char id[VG_AUTH_ID_LEN + 1]);

/*
 * vg_auth_read_file - the bytes of a token file or of a file holding a
 * token: a regular file (links followed), owned by the caller or root,
 * with no permission for group or other (as ssh checks its keys), at most
 * @max bytes. Return: 0 with *@ret (free it, OPENSSL_clear_free for a
 * token) and *@len; -ENOENT; -EPERM (mode or owner: diag says which);
 * -EINVAL (not a regular file); -EFBIG; -ENOMEM; other -errno.
 */
int vg_auth_read_file(const char *path, size_t max, uint8_t **ret, size_t *len,
		      struct vg_diag *diag);

/*
 * vg_auth_token_read - the token held by file @path (vg_auth_read_file's
 * checks; the token, then at most a newline). Return: 0, the errors of
 * vg_auth_read_file, -EBADMSG (diag).
 */
int vg_auth_token_read(const char *path, char token[VG_AUTH_TOKEN_LEN + 1], struct vg_diag *diag);

#endif
