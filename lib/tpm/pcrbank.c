// SPDX-License-Identifier: MIT
/*
 * pcrbank.c - the software PCR store and the text form of PCR values.
 *
 * Extends are computed like the TPM's (new = H_bank(old || digest)) in
 * memory; vg_pcrbank_sync() replaces the file atomically (outfile.h:
 * locked temporary, fsync, rename, directory fsync; a bank path that is a
 * symbolic link or not a regular file is refused). Nothing here is
 * attestable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "internal.h"
#include "vigil/fileio.h"
#include "vigil/outfile.h"
#include "vigil/pcrbank.h"

static int algo_of_hexlen(size_t n)
{
	switch (n) {
	case 40:
		return VG_HASH_SHA1;
	case 64:
		return VG_HASH_SHA256;
	case 96:
		return VG_HASH_SHA384;
	case 128:
		return VG_HASH_SHA512;
	default:
		return -1;
	}
}

int vg_pcr_values_parse(struct vg_pcr_values *pv, const char *text, size_t len, int default_algo,
			struct vg_diag *diag)
{
	size_t i = 0, lineno = 0;
	int n = 0;

	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		char line[512], *p, *hex, *colon;
		unsigned long pcr;
		int algo;

		lineno++;
		i += l + (nl ? 1 : 0);
		if (l >= sizeof(line))
			return vg_diag_set(diag, -EBADMSG, "line %zu: too long", lineno);
		memcpy(line, text + i - l - (nl ? 1 : 0), l);
		line[l] = '\0';
		while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r'))
			line[--l] = '\0';
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		if (strncmp(p, "PCR-", 4) != 0 || p[4] < '0' || p[4] > '9')
			return vg_diag_set(diag, -EBADMSG, "line %zu: expected 'PCR-NN HEX'", lineno);
		pcr = strtoul(p + 4, &hex, 10);
		if (pcr >= VG_PCR_COUNT || (*hex != ' ' && *hex != '\t') || hex - p > 6)
			return vg_diag_set(diag, -EBADMSG, "line %zu: bad PCR index", lineno);
		while (*hex == ' ' || *hex == '\t')
			hex++;
		colon = strchr(hex, ':');
		if (colon) {
			*colon = '\0';
			algo = vg_hash_by_name(hex);
			if (algo < 0)
				return vg_diag_set(diag, -EBADMSG, "line %zu: unknown bank '%s'", lineno, hex);
			hex = colon + 1;
			if (strlen(hex) != 2 * vg_hash_size((unsigned int)algo))
				return vg_diag_set(diag, -EBADMSG, "line %zu: not a %s value", lineno,
						   vg_hash_name((unsigned int)algo));
		} else if (default_algo >= 0 &&
			   strlen(hex) == 2 * vg_hash_size((unsigned int)default_algo)) {
			algo = default_algo;
		} else {
			algo = algo_of_hexlen(strlen(hex));
			if (algo < 0)
				return vg_diag_set(diag, -EBADMSG, "line %zu: value of %zu hex digits",
						   lineno, strlen(hex));
		}
		if (vg_hex_decode(hex, pv->v[algo][pcr].bytes, VG_HASH_MAX_DIGEST) !=
		    (int)vg_hash_size((unsigned int)algo))
			return vg_diag_set(diag, -EBADMSG, "line %zu: bad hex", lineno);
		pv->v[algo][pcr].algo = (uint8_t)algo;
		pv->v[algo][pcr].len = (uint8_t)vg_hash_size((unsigned int)algo);
		pv->have[algo] |= 1u << pcr;
		n++;
	}
	return n;
}

struct vg_pcrbank {
	char *path;
	int lockfd;
	uint32_t banks;
	EVP_MD *md[VG_HASH__LAST];
	EVP_MD_CTX *ctx;
	struct vg_pcr_values pv;
};

void vg_pcrbank_free(struct vg_pcrbank *b)
{
	if (!b)
		return;
	for (unsigned int a = 0; a < VG_HASH__LAST; a++)
		EVP_MD_free(b->md[a]);
	EVP_MD_CTX_free(b->ctx);
	if (b->lockfd >= 0)
		close(b->lockfd);
	free(b->path);
	free(b);
}

int vg_pcrbank_sync(struct vg_pcrbank *b, struct vg_diag *diag)
{
	struct vg_diag d = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	fputs("# vigil software PCR bank: NOT ATTESTABLE (no TPM); it only keeps the\n"
	      "# measurement log beside it self-consistent.\n", f);
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(b->banks & (1u << a)))
			continue;
		for (unsigned int p = 0; p < VG_PCR_COUNT; p++) {
			char hex[2 * VG_HASH_MAX_DIGEST + 1];

			vg_hex_encode(b->pv.v[a][p].bytes, b->pv.v[a][p].len, hex);
			fprintf(f, "PCR-%02u %s:%s\n", p, vg_hash_name(a), hex);
		}
	}
	if (fclose(f) != 0) {
		free(text);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	r = vg_outfile_put(b->path, text, len, 0600, 0, &d);
	free(text);
	if (r < 0)
		return vg_diag_set(diag, r, "%s: %s", b->path, d.msg);
	return 0;
}

int vg_pcrbank_sync_cb(void *ctx, struct vg_diag *diag)
{
	return vg_pcrbank_sync(ctx, diag);
}

int vg_pcrbank_open(const char *path, uint32_t banks, struct vg_pcrbank **ret,
		    struct vg_diag *diag)
{
	struct vg_pcrbank *b = calloc(1, sizeof(*b));
	size_t plen = strlen(path);
	char *lockpath = NULL;
	bool created = false;
	int fd, r;

	if (!b)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	b->lockfd = -1;
	b->path = strdup(path);
	lockpath = malloc(plen + 6);
	b->ctx = EVP_MD_CTX_new();
	if (!b->path || !lockpath || !b->ctx) {
		r = vg_diag_ssl(diag, -ENOMEM, "out of memory");
		goto fail;
	}
	/* the lock lives on a side file: the bank file itself is replaced by rename */
	memcpy(lockpath, path, plen);
	memcpy(lockpath + plen, ".lock", 6);
	b->lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (b->lockfd < 0) {
		r = vg_diag_set(diag, -errno, "%s: %s", lockpath, strerror(errno));
		goto fail;
	}
	if (flock(b->lockfd, LOCK_EX | LOCK_NB) != 0) {
		r = vg_diag_set(diag, errno == EWOULDBLOCK ? -EBUSY : -errno,
				"%s: the software PCR bank is in use by another process", path);
		goto fail;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		uint8_t *text = NULL;
		size_t len = 0;
		struct vg_diag pd = { 0 };

		r = vg_fd_read_all(fd, (1u << 20) - 1, &text, &len);
		close(fd);
		if (r < 0) {
			r = vg_diag_set(diag, r, "%s: %s", path,
					r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
			goto fail;
		}
		r = vg_pcr_values_parse(&b->pv, (const char *)text, len, -1, &pd);
		free(text);
		if (r < 0) {
			r = vg_diag_set(diag, r, "%s: %s (not resetting it)", path, pd.msg);
			goto fail;
		}
		b->banks = 0;
		for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
			if (!b->pv.have[a])
				continue;
			if (b->pv.have[a] != (1u << VG_PCR_COUNT) - 1) {
				r = vg_diag_set(diag, -EBADMSG, "%s: bank %s does not list all %d PCRs "
						"(not resetting it)", path, vg_hash_name(a), VG_PCR_COUNT);
				goto fail;
			}
			b->banks |= 1u << a;
		}
		if (!b->banks) {
			r = vg_diag_set(diag, -EBADMSG, "%s: no PCR values (not resetting it)", path);
			goto fail;
		}
	} else if (errno == ENOENT) {
		if (!banks) {
			r = vg_diag_set(diag, -EINVAL, "%s: a new bank needs at least one hash", path);
			goto fail;
		}
		created = true;
		b->banks = banks;
		for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
			if (!(banks & (1u << a)))
				continue;
			for (unsigned int p = 0; p < VG_PCR_COUNT; p++) {
				b->pv.v[a][p].algo = (uint8_t)a;
				b->pv.v[a][p].len = (uint8_t)vg_hash_size(a);
			}
			b->pv.have[a] = (1u << VG_PCR_COUNT) - 1;
		}
	} else {
		r = vg_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
		if (!(b->banks & (1u << a)))
			continue;
		b->md[a] = vg__md_fetch(a);
		if (!b->md[a]) {
			r = vg_diag_ssl(diag, -EOPNOTSUPP, "bank %s: hash not available",
					vg_hash_name(a) ? vg_hash_name(a) : "(unknown)");
			goto fail;
		}
	}
	if (created) {
		r = vg_pcrbank_sync(b, diag);
		if (r < 0)
			goto fail;
	}
	free(lockpath);
	*ret = b;
	return 0;
fail:
	free(lockpath);
	vg_pcrbank_free(b);
	return r;
}

static int bank_extend(void *ctx, unsigned int pcr, const struct vg_digest *d, size_t n,
		       struct vg_diag *diag)
{
	struct vg_pcrbank *b = ctx;

	if (pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EINVAL, "PCR %u out of range", pcr);
	for (size_t i = 0; i < n; i++) {
		struct vg_digest *v;
		unsigned int len = 0;

		if (d[i].algo >= VG_HASH__LAST || !(b->banks & (1u << d[i].algo)))
			continue;	/* as a TPM ignores banks it does not have */
		v = &b->pv.v[d[i].algo][pcr];
		if (d[i].len != v->len)
			return vg_diag_set(diag, -EINVAL, "%s digest of %u bytes",
					   vg_hash_name(d[i].algo), d[i].len);
		if (!EVP_DigestInit_ex2(b->ctx, b->md[d[i].algo], NULL) ||
		    !EVP_DigestUpdate(b->ctx, v->bytes, v->len) ||
		    !EVP_DigestUpdate(b->ctx, d[i].bytes, d[i].len) ||
		    !EVP_DigestFinal_ex(b->ctx, v->bytes, &len))
			return vg_diag_ssl(diag, -EIO, "extend");
	}
	return 0;
}

static int bank_read(void *ctx, unsigned int pcr, unsigned int algo, struct vg_digest *ret,
		     struct vg_diag *diag)
{
	struct vg_pcrbank *b = ctx;

	if (pcr >= VG_PCR_COUNT)
		return vg_diag_set(diag, -EINVAL, "PCR %u out of range", pcr);
	if (algo >= VG_HASH__LAST || !(b->banks & (1u << algo)))
		return vg_diag_set(diag, -ENOENT, "no %s bank", vg_hash_name(algo) ? vg_hash_name(algo) : "such");
	*ret = b->pv.v[algo][pcr];
	return 0;
}

static uint32_t bank_banks(void *ctx)
{
	return ((struct vg_pcrbank *)ctx)->banks;
}

const struct vg_pcr_ops vg_pcrbank_ops = {
	.extend = bank_extend,
	.read = bank_read,
	.banks = bank_banks,
	.attestable = false,
};
