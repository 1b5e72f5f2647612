/* SPDX-License-Identifier: MIT */
/*
 * authenticode.h - the Authenticode digest of a PE/COFF image: what UEFI
 * firmware and shim measure into PCR 4 (EV_EFI_BOOT_SERVICES_APPLICATION)
 * for each EFI application they start, and what a signature's
 * SpcIndirectDataContent signs. Computed as EDK2's HashPeImage and shim's
 * generate_hash compute it (Microsoft's "Windows Authenticode Portable
 * Executable Signature Format", "Calculating the PE Image Hash"):
 *
 *   the headers up to SizeOfHeaders, less the optional header's CheckSum
 *   (4 bytes) and the certificate table's data directory entry (8 bytes,
 *   when NumberOfRvaAndSizes has it); then each section's raw data, in
 *   the order of PointerToRawData, sections without raw data skipped;
 *   then what follows the last section up to the file's end, less the
 *   certificate table's size.
 *
 * Every field read is bounds-checked against the image; a structure that
 * points outside it, a section overlapping the headers, or a certificate
 * table larger than what follows the sections is malformed: the digest of
 * such an image is not computed (firmware would not start it either).
 * Nothing is allocated but the hash context; no global state.
 */
#ifndef VIGIL_AUTHENTICODE_H
#define VIGIL_AUTHENTICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"

/* PE/COFF limits (PE format: at most 96 sections) */
#define VG_PE_MAX_SECTIONS 96

/* The layout Authenticode hashes, as decoded (offsets into the image). */
struct vg_pe_layout {
	bool pe32plus;			/* optional header magic 0x20b (else 0x10b) */
	uint16_t machine;		/* COFF Machine (0x8664 x86-64, 0xaa64 arm64) */
	size_t checksum_off;		/* the optional header's CheckSum */
	size_t certdir_off;		/* the certificate table's directory entry; 0: none */
	size_t headers;			/* SizeOfHeaders */
	uint32_t cert_off, cert_size;	/* the certificate table (file offset, size); 0: none */
	size_t sum_hashed;		/* headers and section bytes hashed */
	size_t tail;			/* bytes hashed after the sections */
	unsigned int nsections;		/* with raw data */
};

/*
 * vg_pe_layout_parse - decode the DOS, COFF and optional headers and the
 * section table of the @len bytes @img, as vg_authenticode_digest hashes
 * them. Return: 0; -EBADMSG (not a PE image, or malformed: @diag names the
 * field and offset).
 */
int vg_pe_layout_parse(const uint8_t *img, size_t len, struct vg_pe_layout *ret,
		       struct vg_diag *diag);

/*
 * vg_authenticode_digest - the Authenticode digest of @img in @algo
 * (a vigil hash id, hash.h: VG_HASH_SHA256 as PCR 4's sha256 bank).
 * Return: 0 and *@ret; -EBADMSG (vg_pe_layout_parse); -EOPNOTSUPP
 * (@algo); -ENOMEM.
 */
int vg_authenticode_digest(const uint8_t *img, size_t len, unsigned int algo,
			   struct vg_digest *ret, struct vg_diag *diag);

/* Whether @img starts like a PE image ("MZ", and "PE\0\0" where e_lfanew points). */
bool vg_pe_is_image(const uint8_t *img, size_t len);

#endif
