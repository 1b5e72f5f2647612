// SPDX-License-Identifier: MIT
/*
 * http_auth.c - bearer tokens at the HTTP edge of the two daemons
 * (http_auth.h): the Authorization header checked against the token list
 * (vigil/auth.h does the parsing and the constant-time comparison), the
 * refusals, and the --create-token command that makes a token and lists
 * its hash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "http_auth.h"
#include "log.h"
#include "http_reply.h"

int http_auth_role(struct MHD_Connection *c, const struct vg_auth *a, char id[VG_AUTH_ID_LEN + 1])
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);

	id[0] = 0;
	return vg_auth_check(a, h, id);
}

enum MHD_Result http_auth_refuse(struct MHD_Connection *c, unsigned int code, const char *realm,
				 const char *msg)
{
	char body[512], www[128];
	struct MHD_Response *r;
	enum MHD_Result ret;

	snprintf(body, sizeof(body), "{\"error\":\"%s\"}", msg);
	r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	http_reply_harden(r, NULL);
	/* no credential, no connection kept open between requests (http_guard_idle) */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (code == MHD_HTTP_UNAUTHORIZED) {
		snprintf(www, sizeof(www), "Bearer realm=\"%s\"", realm);
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, www);
	}
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	if (ret == MHD_YES)
		http_reply_note_status(code);
	return ret;
}

int http_auth_load(const char *path, unsigned int roles, struct vg_auth **ret, char *err,
		   size_t errlen)
{
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r = vg_auth_read_file(path, VG_AUTH_FILE_MAX, &b, &n, &d);

	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, d.msg);
		return r;
	}
	r = vg_auth_load(b, n, roles, ret, &d);
	free(b);
	if (r < 0)
		snprintf(err, errlen, "%s: %s", path, d.msg[0] ? d.msg : strerror(-r));
	return r;
}

int http_auth_create_token(const char *role, unsigned int roles, const char *out,
			   const char *list)
{
	char tok[VG_AUTH_TOKEN_LEN + 2], id[VG_AUTH_ID_LEN + 1], line[160];
	unsigned int rl = 0;
	struct stat st;
	int ofd = -1, lfd = -1, n, rc = 2;

	for (unsigned int k = 1; k <= roles; k <<= 1)
		if ((roles & k) && strcmp(role, vg_auth_role_name(k)) == 0)
			rl = k;
	if (!rl) {
		vlog_err("--create-token %s: the role is one of %s%s%s%s", role,
			roles & VG_AUTH_ADMIN ? "admin " : "", roles & VG_AUTH_READ ? "read " : "",
			roles & VG_AUTH_VERIFIER ? "verifier " : "", roles & VG_AUTH_AGENT ? "agent" : "");
		return 2;
	}
	if (vg_auth_token_new(tok, id) < 0 || (n = vg_auth_token_line(tok, rl, line, sizeof(line))) < 0) {
		vlog_err("no randomness for a token");
		return 2;
	}
	/*
	 * The list first: a list we may not use must not leave a token file
	 * behind. O_NONBLOCK keeps a fifo from holding the open; on a regular
	 * file it fails only while a read lease is being broken (vigild keeps
	 * one on every file it has judged): the break is under way, try again.
	 */
	for (int tries = 0;; tries++) {
		lfd = open(list, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW,
			   0600);
		if (lfd >= 0 || errno != EWOULDBLOCK || tries == 100)
			break;
		usleep(10000);
	}
	if (lfd < 0 || fstat(lfd, &st) < 0) {
		vlog_err("%s: %s", list, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) ||
	    (st.st_uid != geteuid() && st.st_uid != 0)) {
		vlog_err("%s: %s", list, !S_ISREG(st.st_mode) ?
			"not a regular file" : (st.st_mode & 077) ?
			"group or other may access it; chmod 600 it" : "owned by another user");
		goto out;
	}
	ofd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (ofd < 0) {
		vlog_err("%s: %s%s", out, strerror(errno),
			errno == EEXIST ? " (a token is never written over an existing path)" : "");
		goto out;
	}
	tok[VG_AUTH_TOKEN_LEN] = '\n';
	if (write(ofd, tok, VG_AUTH_TOKEN_LEN + 1) != VG_AUTH_TOKEN_LEN + 1 || fsync(ofd) < 0) {
		vlog_err("%s: %s", out, strerror(errno));
		unlink(out);
		goto out;
	}
	if (write(lfd, line, (size_t)n) != n || fsync(lfd) < 0) {
		vlog_err("%s: %s", list, strerror(errno));
		unlink(out);
		goto out;
	}
	printf("%s\n", id);
	vlog_info("%s token %s written to %s, its hash listed in %s", vg_auth_role_name(rl), id, out,
		  list);
	rc = 0;
out:
	OPENSSL_cleanse(tok, sizeof(tok));
	if (ofd >= 0)
		close(ofd);
	if (lfd >= 0)
		close(lfd);
	return rc;
}
