// SPDX-License-Identifier: MIT
/*
 * store_secret.c - the passwords of store URLs: where they are
 * (vg_store_url_secrets), the URL without them for logs
 * (vg_store_url_scrub), and keeping them out of the messages a database
 * library writes: the passwords are remembered as written and
 * %-decoded (store_secrets_remember), and every occurrence of either in a
 * message is replaced by "***" (store_secrets_clean). The PostgreSQL
 * backend passes every libpq message through it; moved out of store_pg.c.
 */
#include <stdbool.h>
#include <string.h>

#include <openssl/crypto.h>

#include "vigil/hash.h"

#include "store_row.h"
#include "store_secret.h"

static void add_secret(struct store_secrets *q, const char *p, size_t len, bool decode)
{
	char *s;
	size_t n = 0;

	if (q->n == STORE_SECRETS_MAX || len == 0 || len >= sizeof(q->s[0]))
		return;
	s = q->s[q->n++];
	for (size_t i = 0; i < len; i++) {
		int hi = decode && p[i] == '%' && i + 2 < len ? vg_hex_digit((unsigned char)p[i + 1]) : -1;
		int lo = hi >= 0 ? vg_hex_digit((unsigned char)p[i + 2]) : -1;

		if (lo >= 0) {
			s[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else if (decode && p[i] == '\'' && (i == 0 || i == len - 1)) {
			continue;	/* conninfo quotes */
		} else {
			s[n++] = p[i];
		}
	}
	s[n] = 0;
}

void store_secrets_remember(struct store_secrets *q, const char *url)
{
	struct vg_store_span sp[4];
	size_t n = vg_store_url_secrets(url, sp, STORE_NELEM(sp));

	if (n > STORE_NELEM(sp))
		n = STORE_NELEM(sp);
	for (size_t i = 0; i < n; i++) {
		add_secret(q, url + sp[i].off, sp[i].len, false);
		add_secret(q, url + sp[i].off, sp[i].len, true);
	}
}

void store_secrets_clean(const struct store_secrets *q, const char *in, char *out, size_t cap)
{
	char line[1024];
	size_t n = 0, o = 0;

	for (const char *p = in ? in : ""; *p && n + 3 < sizeof(line); p++) {
		if (*p == '\n' || *p == '\r') {
			while (p[1] == '\n' || p[1] == '\r' || p[1] == '\t' || p[1] == ' ')
				p++;
			if (p[1]) {
				line[n++] = ';';
				line[n++] = ' ';
			}
			continue;
		}
		line[n++] = *p == '\t' ? ' ' : *p;
	}
	line[n] = 0;
	for (size_t i = 0; i < n && o + 1 < cap; ) {
		size_t hit = 0;

		for (size_t k = 0; k < q->n; k++) {	/* the longest that matches here */
			size_t sl = strlen(q->s[k]);

			if (sl > hit && strncmp(line + i, q->s[k], sl) == 0)
				hit = sl;
		}
		if (!hit) {
			out[o++] = line[i++];
			continue;
		}
		for (const char *m = "***"; *m && o + 1 < cap; m++)
			out[o++] = *m;
		i += hit;
	}
	if (cap)
		out[o] = 0;
	OPENSSL_cleanse(line, sizeof(line));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

size_t vg_store_url_secrets(const char *url, struct vg_store_span *spans, size_t max)
{
	const char *sep = strstr(url, "://"), *p;
	size_t n = 0;

#define ADD(b, e) do { if (n < max) { spans[n].off = (size_t)((b) - url); \
			spans[n].len = (size_t)((e) - (b)); } n++; } while (0)
	if (sep && (size_t)(sep - url) < 16 && !memchr(url, '=', (size_t)(sep - url))) {
		/* URI: scheme://[user[:password]@]host.../db?k=v&password=v */
		const char *a = sep + 3, *e = a + strcspn(a, "/?#"), *at = NULL, *q;

		for (p = a; p < e; p++)
			if (*p == '@')
				at = p;
		if (at) {
			const char *colon = memchr(a, ':', (size_t)(at - a));

			if (colon)
				ADD(colon + 1, at);
		}
		q = strchr(e, '?');
		for (p = q; p && *p; ) {
			const char *k = p + 1, *end = k + strcspn(k, "&#");

			if (strncmp(k, "password=", 9) == 0)
				ADD(k + 9, end);
			p = *end == '&' ? end : NULL;
		}
		return n;
	}
	/* libpq conninfo: keyword = value | keyword = 'quoted \' value' */
	for (p = url; *p; ) {
		const char *k, *v;
		size_t kl;

		while (is_space(*p))
			p++;
		k = p;
		while (*p && *p != '=' && !is_space(*p))
			p++;
		kl = (size_t)(p - k);
		while (is_space(*p))
			p++;
		if (*p != '=')
			break;
		p++;
		while (is_space(*p))
			p++;
		v = p;
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else {
			while (*p && !is_space(*p))
				p++;
		}
		if (kl == 8 && strncmp(k, "password", 8) == 0)
			ADD(v, p);
	}
#undef ADD
	return n;
}

size_t vg_store_url_scrub(const char *url, char *out, size_t cap)
{
	struct vg_store_span s[8];
	size_t n = vg_store_url_secrets(url, s, STORE_NELEM(s)), len = 0, from = 0;

	if (n > STORE_NELEM(s))
		n = STORE_NELEM(s);
#define PUT(p, l) do { for (size_t _i = 0; _i < (l); _i++, len++) \
			if (len + 1 < cap) out[len] = (p)[_i]; } while (0)
	for (size_t i = 0; i < n; i++) {
		PUT(url + from, s[i].off - from);
		PUT("***", 3);
		from = s[i].off + s[i].len;
	}
	PUT(url + from, strlen(url + from));
#undef PUT
	if (cap)
		out[len < cap ? len : cap - 1] = 0;
	return len;
}
