// SPDX-License-Identifier: MIT
/*
 * auth.c - bearer tokens of the attestation API (auth.h): generation,
 * strict syntax, the sha256 a token file keeps, and the check of an
 * Authorization header against such a file. No files and no HTTP here.
 *
 * A token is looked up by its id (not secret: it names the token in logs)
 * and then accepted only if sha256 of the whole presented text equals the
 * stored hash (CRYPTO_memcmp). The file holds no secret: a stolen file
 * lets nobody in, and an altered one changes who may, which is why the
 * daemons refuse one that others can read or write. A file holding a
 * token is a secret: the same checks apply.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <unistd.h>
#include <sys/stat.h>

#include "vigil/auth.h"
#include "vigil/fileio.h"
#include "vigil/hash.h"

struct tok {
	unsigned int role;
	char id[VG_AUTH_ID_LEN + 1];
	uint8_t hash[32];
};

struct vg_auth {
	struct tok *t;
	size_t n;
};

const char *vg_auth_role_name(unsigned int role)
{
	switch (role) {
	case VG_AUTH_READ: return "read";
	case VG_AUTH_ADMIN: return "admin";
	case VG_AUTH_VERIFIER: return "verifier";
	case VG_AUTH_AGENT: return "agent";
	default: return "?";
	}
}

static unsigned int role_by_name(const char *s, size_t n)
{
	static const unsigned int roles[] = { VG_AUTH_READ, VG_AUTH_ADMIN, VG_AUTH_VERIFIER,
					      VG_AUTH_AGENT };

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		const char *name = vg_auth_role_name(roles[i]);

		if (strlen(name) == n && memcmp(name, s, n) == 0)
			return roles[i];
	}
	return 0;
}

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int vg_auth_token_new(char token[VG_AUTH_TOKEN_LEN + 1], char id[VG_AUTH_ID_LEN + 1])
{
	uint8_t r[VG_AUTH_ID_LEN / 2 + VG_AUTH_SECRET_LEN / 2];
	char hid[VG_AUTH_ID_LEN + 1], hs[VG_AUTH_SECRET_LEN + 1];

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -EIO;
	vg_hex_encode(r, VG_AUTH_ID_LEN / 2, hid);
	vg_hex_encode(r + VG_AUTH_ID_LEN / 2, VG_AUTH_SECRET_LEN / 2, hs);
	OPENSSL_cleanse(r, sizeof(r));
	snprintf(token, VG_AUTH_TOKEN_LEN + 1, "vg1.%s.%s", hid, hs);
	OPENSSL_cleanse(hs, sizeof(hs));
	if (id)
		memcpy(id, hid, sizeof(hid));
	return 0;
}

int vg_auth_token_parse(const char *s, size_t len, char id[VG_AUTH_ID_LEN + 1],
			struct vg_diag *diag)
{
	if (len != VG_AUTH_TOKEN_LEN || memcmp(s, "vg1.", 4) != 0 || s[4 + VG_AUTH_ID_LEN] != '.')
		return vg_diag_set(diag, -EBADMSG, "not a vigil token (vg1.<8 hex>.<64 hex>, %d "
				   "characters)", VG_AUTH_TOKEN_LEN);
	if (!lower_hex(s + 4, VG_AUTH_ID_LEN) ||
	    !lower_hex(s + 5 + VG_AUTH_ID_LEN, VG_AUTH_SECRET_LEN))
		return vg_diag_set(diag, -EBADMSG, "token id or secret is not lowercase hex");
	if (id) {
		memcpy(id, s + 4, VG_AUTH_ID_LEN);
		id[VG_AUTH_ID_LEN] = 0;
	}
	return 0;
}

static int token_hash(const char *s, size_t len, uint8_t out[32])
{
	unsigned int n = 0;

	if (EVP_Digest(s, len, out, &n, EVP_sha256(), NULL) != 1 || n != 32)
		return -EIO;
	return 0;
}

int vg_auth_token_line(const char *token, unsigned int role, char *out, size_t cap)
{
	char id[VG_AUTH_ID_LEN + 1], hex[65];
	uint8_t h[32];
	int n;

	if (!token || vg_auth_token_parse(token, strlen(token), id, NULL) < 0 ||
	    !strcmp(vg_auth_role_name(role), "?"))
		return -EBADMSG;
	if (token_hash(token, VG_AUTH_TOKEN_LEN, h) < 0)
		return -EIO;
	vg_hex_encode(h, sizeof(h), hex);
	n = snprintf(out, cap, "%s %s %s\n", vg_auth_role_name(role), id, hex);
	if (n < 0 || (size_t)n >= cap)
		return -EBADMSG;
	return n;
}

/* The next space-separated word of [*p, end) on this line. */
static const char *word(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *w;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	w = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*n = (size_t)(s - w);
	*p = s;
	return w;
}

int vg_auth_load(const uint8_t *buf, size_t len, unsigned int roles, struct vg_auth **ret,
		 struct vg_diag *diag)
{
	struct vg_auth *a;
	const char *s = (const char *)buf, *end = s + len;
	size_t lineno = 0, cap = 0;
	int r = 0;

	if (len > VG_AUTH_FILE_MAX)
		return vg_diag_set(diag, -E2BIG, "larger than %u bytes", VG_AUTH_FILE_MAX);
	if (memchr(buf, 0, len))
		return vg_diag_set(diag, -EBADMSG, "a NUL byte: not a token file");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *le = nl ? nl : end, *p = s;
		const char *w[4];
		size_t wl[4];
		unsigned int role;
		struct tok *t;

		lineno++;
		s = nl ? nl + 1 : end;
		if (le > p && le[-1] == '\r')
			le--;
		for (int i = 0; i < 4; i++)
			w[i] = word(&p, le, &wl[i]);
		if (!wl[0] || w[0][0] == '#')
			continue;
		for (const char *c = w[0]; c < le; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t') {
				r = vg_diag_set(diag, -EBADMSG, "line %zu: a control character", lineno);
				goto fail;
			}
		if (!wl[1] || !wl[2] || wl[3]) {
			r = vg_diag_set(diag, -EBADMSG, "line %zu: expected ROLE ID SHA256HEX", lineno);
			goto fail;
		}
		role = role_by_name(w[0], wl[0]);
		if (!role || !(role & roles)) {
			r = vg_diag_set(diag, -EBADMSG, "line %zu: role '%.*s' is not one of this "
					"daemon's (%s%s%s%s)", lineno, (int)(wl[0] > 16 ? 16 : wl[0]), w[0],
					roles & VG_AUTH_ADMIN ? "admin " : "",
					roles & VG_AUTH_READ ? "read " : "",
					roles & VG_AUTH_VERIFIER ? "verifier " : "",
					roles & VG_AUTH_AGENT ? "agent" : "");
			goto fail;
		}
		if (wl[1] != VG_AUTH_ID_LEN || !lower_hex(w[1], wl[1])) {
			r = vg_diag_set(diag, -EBADMSG, "line %zu: the id is not %d lowercase hex "
					"characters", lineno, VG_AUTH_ID_LEN);
			goto fail;
		}
		if (wl[2] != 64 || !lower_hex(w[2], wl[2])) {
			r = vg_diag_set(diag, -EBADMSG, "line %zu: the hash is not 64 lowercase hex "
					"characters (sha256 of the token)", lineno);
			goto fail;
		}
		for (size_t i = 0; i < a->n; i++)
			if (memcmp(a->t[i].id, w[1], VG_AUTH_ID_LEN) == 0) {
				r = vg_diag_set(diag, -EBADMSG, "line %zu: id %.8s is listed twice",
						lineno, w[1]);
				goto fail;
			}
		if (a->n == VG_AUTH_TOKENS_MAX) {
			r = vg_diag_set(diag, -E2BIG, "line %zu: more than %d tokens", lineno,
					VG_AUTH_TOKENS_MAX);
			goto fail;
		}
		if (a->n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct tok *nt = realloc(a->t, nc * sizeof(*nt));

			if (!nt) {
				r = -ENOMEM;
				goto fail;
			}
			a->t = nt;
			cap = nc;
		}
		t = &a->t[a->n++];
		t->role = role;
		memcpy(t->id, w[1], VG_AUTH_ID_LEN);
		t->id[VG_AUTH_ID_LEN] = 0;
		{
			char hex[65];

			memcpy(hex, w[2], 64);
			hex[64] = 0;
			vg_hex_decode(hex, t->hash, sizeof(t->hash));
		}
	}
	*ret = a;
	return 0;
fail:
	vg_auth_free(a);
	return r;
}

void vg_auth_free(struct vg_auth *a)
{
	if (!a)
		return;
	if (a->t)
		OPENSSL_cleanse(a->t, a->n * sizeof(*a->t));
	free(a->t);
	free(a);
}

size_t vg_auth_count(const struct vg_auth *a)
{
	return a ? a->n : 0;
}

int vg_auth_check(const struct vg_auth *a, const char *header, char id[VG_AUTH_ID_LEN + 1])
{
	char tid[VG_AUTH_ID_LEN + 1];
	const char *tok;
	uint8_t h[32];
	size_t n;

	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return -ENOKEY;
	tok = header + 7;
	while (*tok == ' ')
		tok++;
	n = strlen(tok);
	while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
		n--;
	if (vg_auth_token_parse(tok, n, tid, NULL) < 0)
		return -EBADMSG;
	if (id)
		memcpy(id, tid, sizeof(tid));
	if (token_hash(tok, n, h) < 0)
		return -EKEYREJECTED;
	for (size_t i = 0; a && i < a->n; i++)
		if (memcmp(a->t[i].id, tid, VG_AUTH_ID_LEN) == 0)
			return CRYPTO_memcmp(a->t[i].hash, h, sizeof(h)) == 0 ? (int)a->t[i].role :
									    -EKEYREJECTED;
	return -EKEYREJECTED;
}

int vg_auth_read_file(const char *path, size_t max, uint8_t **ret, size_t *len,
		      struct vg_diag *diag)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	int r;

	if (fd < 0)
		return vg_diag_set(diag, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		r = vg_diag_set(diag, -errno, "%s", strerror(errno));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return vg_diag_set(diag, -EINVAL, "not a regular file");
	}
	if (st.st_mode & 077) {
		close(fd);
		return vg_diag_set(diag, -EPERM, "mode %04o: group or other may access it; "
				   "chmod 600 it", (unsigned int)(st.st_mode & 07777));
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		return vg_diag_set(diag, -EPERM, "owned by uid %u, neither root nor us (%u)",
				   (unsigned int)st.st_uid, (unsigned int)geteuid());
	}
	r = vg_fd_read_file(fd, max, ret, len);
	close(fd);
	if (r == -EFBIG)
		return vg_diag_set(diag, r, "larger than %zu bytes", max);
	if (r < 0 && r != -ENOMEM)
		return vg_diag_set(diag, r, "%s", strerror(-r));
	return r;
}

int vg_auth_token_read(const char *path, char token[VG_AUTH_TOKEN_LEN + 1], struct vg_diag *diag)
{
	uint8_t *b;
	size_t n, size;
	int r = vg_auth_read_file(path, 256, &b, &n, diag);

	if (r < 0)
		return r;
	size = n + 1;
	if (n && b[n - 1] == '\n')
		n--;
	if (n && b[n - 1] == '\r')
		n--;
	r = vg_auth_token_parse((const char *)b, n, NULL, diag);
	if (r == 0) {
		memcpy(token, b, VG_AUTH_TOKEN_LEN);
		token[VG_AUTH_TOKEN_LEN] = 0;
	}
	OPENSSL_clear_free(b, size);
	return r;
}
