/* SPDX-License-Identifier: MIT */
/*
 * http_auth.h - bearer tokens (vigil/auth.h) at the HTTP edge of
 * vigil-verifier and vigil-agent: who is asking, the 401/403 answers, the
 * token list read at start, and --create-token (docs/api-auth.md).
 */
#ifndef VIGIL_HTTP_AUTH_H
#define VIGIL_HTTP_AUTH_H

#include <stddef.h>

#include <microhttpd.h>

#include "vigil/auth.h"

/*
 * The role the request's Authorization header proves against @a, or a
 * negative errno of vg_auth_check (-ENOKEY no credential, -EBADMSG
 * malformed, -EKEYREJECTED unknown or wrong). @id gets the token's id
 * ("" if none) for logs.
 */
int http_auth_role(struct MHD_Connection *c, const struct vg_auth *a, char id[VG_AUTH_ID_LEN + 1]);

/*
 * Answer 401 (with WWW-Authenticate: Bearer) or 403 and a JSON
 * {"error": @msg}; @msg is one of our constant sentences (not escaped).
 */
enum MHD_Result http_auth_refuse(struct MHD_Connection *c, unsigned int code, const char *realm,
				 const char *msg);

/*
 * A token list (ROLE ID SHA256HEX lines) with roles within @roles.
 * Return: 0; -ENOENT (absent: the caller decides); other -errno with
 * @err naming the file and the problem ("FILE:LINE: ..." for syntax).
 */
int http_auth_load(const char *path, unsigned int roles, struct vg_auth **ret, char *err,
		   size_t errlen);

/*
 * --create-token ROLE OUT: a new token written to OUT (created 0600,
 * O_EXCL: an existing path, device or link is never written), its hash
 * line appended to @list (created 0600 if absent; refused if others may
 * access it). Prints the id on stdout. Return: a process exit code (0, or
 * 2 after a message through vlog naming the file and the problem).
 */
int http_auth_create_token(const char *role, unsigned int roles, const char *out,
			   const char *list);

#endif
