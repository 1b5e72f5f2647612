// SPDX-License-Identifier: MIT
/*
 * authenticode.c - the Authenticode digest of a PE/COFF image
 * (authenticode.h), as EDK2's DxeImageVerificationLib HashPeImage and
 * shim's generate_hash compute it: the digest firmware and shim extend
 * into PCR 4 for an EFI application, and the one a trust database
 * records for every EFI image and kernel of the archive (the boot
 * references, trust_boot.c). The image is decoded field by field, every
 * offset checked against its length before it is read; it is never cast
 * to a struct. It does not verify signatures (the certificate table is
 * only skipped), nor load or relocate the image.
 *
 * Layout read (little-endian):
 *   DOS header     "MZ" | ... | e_lfanew u32 at 0x3c
 *   at e_lfanew    "PE\0\0" | COFF: Machine u16 | NumberOfSections u16 |
 *                  TimeDateStamp u32 | PointerToSymbolTable u32 |
 *                  NumberOfSymbols u32 | SizeOfOptionalHeader u16 |
 *                  Characteristics u16
 *   optional hdr   Magic u16 (0x10b, 0x20b) | ... SizeOfHeaders u32 at +60 |
 *                  CheckSum u32 at +64 | NumberOfRvaAndSizes u32 at +92
 *                  (PE32+: +108) | data directories (8 bytes each) at +96
 *                  (PE32+: +112): index 4 the certificate table
 *                  (file offset u32, size u32)
 *   section table  after the optional header, 40 bytes each:
 *                  SizeOfRawData u32 at +16, PointerToRawData u32 at +20
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "vigil/authenticode.h"
#include "internal.h"

#define OPT_OFF(lfanew) ((size_t)(lfanew) + 24)
#define CERT_DIR_INDEX 4

static uint16_t le16(const uint8_t *b)
{
	return (uint16_t)(b[0] | b[1] << 8);
}

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

bool vg_pe_is_image(const uint8_t *img, size_t len)
{
	uint32_t lf;

	if (len < 0x40 || img[0] != 'M' || img[1] != 'Z')
		return false;
	lf = le32(img + 0x3c);
	return lf <= len - 4 && memcmp(img + lf, "PE\0\0", 4) == 0;
}

/* a range [off, off + n) inside @len */
static bool in(size_t off, size_t n, size_t len)
{
	return off <= len && n <= len - off;
}

/* the section table's (PointerToRawData, SizeOfRawData) of those with raw data, sorted */
struct sect {
	uint32_t ptr, size;
};

static int parse(const uint8_t *img, size_t len, struct vg_pe_layout *pl, struct sect *sec,
		 struct vg_diag *diag)
{
	size_t opt, dd, stab;
	uint32_t lf, nrva;
	uint16_t nsec, optsz, magic;
	unsigned int n = 0;

	memset(pl, 0, sizeof(*pl));
	if (len < 0x40 || img[0] != 'M' || img[1] != 'Z')
		return vg_diag_set(diag, -EBADMSG, "not a PE image (no MZ header)");
	lf = le32(img + 0x3c);
	if (!in(lf, 24, len) || memcmp(img + lf, "PE\0\0", 4) != 0)
		return vg_diag_set(diag, -EBADMSG, "not a PE image (no PE signature at e_lfanew "
				   "0x%x)", lf);
	pl->machine = le16(img + lf + 4);
	nsec = le16(img + lf + 6);
	optsz = le16(img + lf + 20);
	opt = OPT_OFF(lf);
	if (!in(opt, optsz, len) || optsz < 2)
		return vg_diag_set(diag, -EBADMSG, "optional header (%u bytes at 0x%zx) outside "
				   "the image", optsz, opt);
	magic = le16(img + opt);
	if (magic == 0x20b) {
		pl->pe32plus = true;
		dd = opt + 112;
		if (optsz < 112)
			return vg_diag_set(diag, -EBADMSG, "PE32+ optional header of %u bytes", optsz);
		nrva = le32(img + opt + 108);
	} else if (magic == 0x10b) {
		dd = opt + 96;
		if (optsz < 96)
			return vg_diag_set(diag, -EBADMSG, "PE32 optional header of %u bytes", optsz);
		nrva = le32(img + opt + 92);
	} else {
		return vg_diag_set(diag, -EBADMSG, "optional header magic 0x%x (not PE32 or PE32+)",
				   magic);
	}
	pl->headers = le32(img + opt + 60);
	pl->checksum_off = opt + 64;
	if (nrva > (optsz - (dd - opt)) / 8)
		return vg_diag_set(diag, -EBADMSG, "%u data directories do not fit the optional "
				   "header", nrva);
	if (nrva > CERT_DIR_INDEX) {
		pl->certdir_off = dd + 8 * CERT_DIR_INDEX;
		pl->cert_off = le32(img + pl->certdir_off);
		pl->cert_size = le32(img + pl->certdir_off + 4);
	}
	if (pl->headers > len || pl->headers < (pl->certdir_off ? pl->certdir_off + 8 :
							      pl->checksum_off + 4))
		return vg_diag_set(diag, -EBADMSG, "SizeOfHeaders %zu (image %zu bytes)",
				   pl->headers, len);
	if (nsec > VG_PE_MAX_SECTIONS)
		return vg_diag_set(diag, -EBADMSG, "%u sections (at most %d)", nsec,
				   VG_PE_MAX_SECTIONS);
	stab = opt + optsz;
	if (!in(stab, (size_t)nsec * 40, len))
		return vg_diag_set(diag, -EBADMSG, "section table (%u sections at 0x%zx) outside "
				   "the image", nsec, stab);
	if (pl->cert_size && !in(pl->cert_off, pl->cert_size, len))
		return vg_diag_set(diag, -EBADMSG, "certificate table (%u bytes at 0x%x) outside "
				   "the image", pl->cert_size, pl->cert_off);
	pl->sum_hashed = pl->headers;
	for (unsigned int i = 0; i < nsec; i++) {
		const uint8_t *s = img + stab + 40 * i;
		struct sect x = { le32(s + 20), le32(s + 16) };
		unsigned int k;

		if (x.size == 0)
			continue;
		if (!in(x.ptr, x.size, len))
			return vg_diag_set(diag, -EBADMSG, "section %u (%u bytes at 0x%x) outside "
					   "the image", i, x.size, x.ptr);
		/* insertion sort by PointerToRawData, as EDK2 (stable for equal pointers) */
		for (k = n; k > 0 && sec[k - 1].ptr > x.ptr; k--)
			sec[k] = sec[k - 1];
		sec[k] = x;
		n++;
		pl->sum_hashed += x.size;
	}
	pl->nsections = n;
	if (len > pl->sum_hashed) {
		if (len - pl->sum_hashed < pl->cert_size)
			return vg_diag_set(diag, -EBADMSG, "certificate table of %u bytes larger than "
					   "the %zu bytes after the sections", pl->cert_size,
					   len - pl->sum_hashed);
		pl->tail = len - pl->sum_hashed - pl->cert_size;
	}
	return 0;
}

int vg_pe_layout_parse(const uint8_t *img, size_t len, struct vg_pe_layout *ret,
		       struct vg_diag *diag)
{
	struct sect sec[VG_PE_MAX_SECTIONS];
	struct vg_pe_layout pl;
	int r = parse(img, len, &pl, sec, diag);

	if (r == 0)
		*ret = pl;
	return r;
}

int vg_authenticode_digest(const uint8_t *img, size_t len, unsigned int algo,
			   struct vg_digest *ret, struct vg_diag *diag)
{
	struct sect sec[VG_PE_MAX_SECTIONS];
	struct vg_pe_layout pl;
	EVP_MD *md;
	EVP_MD_CTX *ctx;
	unsigned int dl = 0;
	bool ok;
	int r = parse(img, len, &pl, sec, diag);

	if (r < 0)
		return r;
	md = vg__md_fetch(algo);
	if (!md)
		return vg_diag_set(diag, -EOPNOTSUPP, "digest algorithm %u", algo);
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, md, NULL) &&
	     EVP_DigestUpdate(ctx, img, pl.checksum_off);
	if (pl.certdir_off)
		ok = ok && EVP_DigestUpdate(ctx, img + pl.checksum_off + 4,
					    pl.certdir_off - pl.checksum_off - 4) &&
		     EVP_DigestUpdate(ctx, img + pl.certdir_off + 8, pl.headers - pl.certdir_off - 8);
	else
		ok = ok && EVP_DigestUpdate(ctx, img + pl.checksum_off + 4,
					    pl.headers - pl.checksum_off - 4);
	for (unsigned int i = 0; ok && i < pl.nsections; i++)
		ok = EVP_DigestUpdate(ctx, img + sec[i].ptr, sec[i].size);
	if (ok && pl.tail)
		ok = EVP_DigestUpdate(ctx, img + pl.sum_hashed, pl.tail);
	ok = ok && EVP_DigestFinal_ex(ctx, ret->bytes, &dl);
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	if (!ok)
		return vg_diag_ssl(diag, -ENOMEM, "Authenticode digest");
	ret->algo = (uint8_t)algo;
	ret->len = (uint8_t)dl;
	return 0;
}
