// SPDX-License-Identifier: MIT
/*
 * attest_mbpolicy_event.c - the measured-boot policy's events' side
 * (attest_mbpolicy.h): every event of a boot log judged by the policy
 * (vg_mbpolicy_check, one boot.event failure per failing event), and the
 * policy a known-good log allows learnt from it (vg_mbpolicy_from_log).
 * The policy itself (its sets, JSON, Keylime's reference state) is
 * attest_mbpolicy.c's.
 *
 * Event data is decoded field by field with bounds checks:
 *   UEFI_VARIABLE_DATA  VariableName GUID[16] | UnicodeNameLength u64 |
 *                       VariableDataLength u64 | UnicodeName[2n] | VariableData[]
 *   EFI_SIGNATURE_LIST  SignatureType GUID[16] | SignatureListSize u32 |
 *                       SignatureHeaderSize u32 | SignatureSize u32 |
 *                       header[] | {SignatureOwner GUID[16] | SignatureData[]}...
 *   UEFI_IMAGE_LOAD_EVENT  4 x u64 (the last: LengthOfDevicePath) | DevicePath[]
 * (all little-endian).
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "attest_mbpolicy_int.h"

/* ---- event data ---- */

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t le64(const uint8_t *b)
{
	return (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32;
}

struct uvar {
	const uint8_t *guid;
	char name[64];			/* ASCII of UnicodeName ('?' for others) */
	const uint8_t *data;
	size_t len;
};

/* Return: 0, -EBADMSG. */
static int uvar_decode(const uint8_t *b, size_t n, struct uvar *u)
{
	uint64_t nl, dl;

	if (n < 32)
		return -EBADMSG;
	nl = le64(b + 16);
	dl = le64(b + 24);
	if (nl > (n - 32) / 2 || dl > n - 32 - 2 * nl)
		return -EBADMSG;
	u->guid = b;
	for (uint64_t i = 0; i < nl && i < sizeof(u->name) - 1; i++) {
		uint16_t c = (uint16_t)(b[32 + 2 * i] | b[33 + 2 * i] << 8);

		u->name[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		u->name[i + 1] = 0;
	}
	if (nl == 0)
		u->name[0] = 0;
	u->data = b + 32 + 2 * nl;
	u->len = (size_t)dl;
	return 0;
}

/*
 * Do @e's digests of every bank vigil knows hash one of the two inputs?
 * Return: 1 yes, 0 no, -ENOMEM (a hash could not be computed).
 */
static int data_matches(const struct vg_eventlog *log, const struct vg_eventlog_event *e,
			const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	bool any = false;

	for (uint32_t i = 0; i < e->ndigests; i++) {
		const struct vg_eventlog_digest *dg = &log->digests[e->first_digest + i];
		int algo = vg_eventlog_tpm_algo(dg->tpm_alg);
		const uint8_t *in[2] = { a, b };
		size_t inl[2] = { al, bl };
		bool ok = false;

		if (algo < 0)
			continue;
		for (int k = 0; k < 2 && !ok && in[k]; k++) {
			struct vg_digest h;
			int r = vg_hash_buf((unsigned int)algo, in[k], inl[k], &h, NULL);

			if (r < 0)	/* vigil's algorithms are OpenSSL's: no memory */
				return -ENOMEM;
			ok = h.len == dg->len && memcmp(h.bytes, log->buf + dg->off, h.len) == 0;
		}
		if (!ok)
			return 0;
		any = true;
	}
	return any;
}

/* The first device path node is a firmware volume (PIWG, media type 4 subtype 7). */
static bool image_in_fv(const uint8_t *b, size_t n)
{
	uint64_t dpl;

	if (n < 32)
		return false;
	dpl = le64(b + 24);
	if (dpl < 4 || dpl > n - 32)
		return false;
	return b[32] == 0x04 && b[33] == 0x07;
}

/* The event's string, NULs at the end cut, into @out (truncated). Return: its length. */
static size_t ev_string(const uint8_t *b, size_t n, char *out, size_t cap)
{
	size_t l = n;

	while (l && b[l - 1] == 0)
		l--;
	if (l >= cap)
		l = cap - 1;
	memcpy(out, b, l);
	out[l] = 0;
	for (size_t i = 0; i < l; i++)
		if (out[i] == 0)
			out[i] = '?';
	return l;
}

static bool contains(const char *s, const char *w)
{
	return strstr(s, w) != NULL;
}

/* ---- judging ---- */

struct judge {
	const struct vg_mbpolicy *p;
	const struct vg_mbrefs *refs;	/* from_archive, announced (NULL: none) */
	const struct vg_eventlog *log;
	struct vg_attest_verdict *v;
	int err;			/* -ENOMEM seen */
	bool seen_sb, seen_dbx, seen_cmdline;
	unsigned int apps;
	bool seen[MB__SETS];
};

static void jfail(struct judge *j, long idx, const struct vg_eventlog_event *e, const uint8_t *dig,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void jfail(struct judge *j, long idx, const struct vg_eventlog_event *e, const uint8_t *dig,
		  const char *fmt, ...)
{
	struct vg_attest_verdict f;
	char what[400];
	va_list ap;
	const char *tn;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	vg_attest_verdict_init(&f);
	if (e) {
		tn = vg_eventlog_type_name(e->type);
		vg_attest_fail(&f, VG_AF_BOOT_EVENT, "event %ld %s PCR %u: %s", idx,
			       tn ? tn : "EV_UNKNOWN", e->pcr, what);
		snprintf(f.path, sizeof(f.path), "%s", tn ? tn : "EV_UNKNOWN");
	} else {
		vg_attest_fail(&f, VG_AF_BOOT_EVENT, "%s", what);
	}
	f.entry = idx;
	if (dig) {
		memcpy(f.digest, "sha256:", 7);
		vg_hex_encode(dig, SHA256_LEN, f.digest + 7);
	}
	if (vg_attest_verdict_add(j->v, &f) < 0)
		j->err = -ENOMEM;
}

static const char *hexs(const uint8_t *d, char *buf)
{
	memcpy(buf, "sha256:", 7);
	vg_hex_encode(d, SHA256_LEN, buf + 7);
	return buf;
}

/*
 * Each EFI_SIGNATURE_DATA of @u's EFI_SIGNATURE_LISTs: allowed by the set
 * @set, or (@found, dbx) marked found among the set's entries.
 */
static void judge_siglists(struct judge *j, long idx, const struct vg_eventlog_event *e,
			   const struct uvar *u, enum mb_set set, bool *found)
{
	const struct dset *s = &j->p->set[set];
	size_t off = 0, k = 0;

	while (off < u->len) {
		const uint8_t *b = u->data + off;
		uint32_t ls, hs, ss;

		if (u->len - off < 28) {
			jfail(j, idx, e, NULL, "%s: EFI_SIGNATURE_LIST %zu is truncated", u->name, k);
			return;
		}
		ls = le32(b + 16);
		hs = le32(b + 20);
		ss = le32(b + 24);
		if (ls < 28 || ls > u->len - off || hs > ls - 28 || ss <= 16 ||
		    (ls - 28 - hs) % ss != 0) {
			jfail(j, idx, e, NULL, "%s: EFI_SIGNATURE_LIST at byte %zu is malformed",
			      u->name, off);
			return;
		}
		for (size_t at = 28 + hs; at < ls; at += ss, k++) {
			uint8_t d[SHA256_LEN];
			char h[80];

			if (vg__mb_sha256(b + at + 16, ss - 16, d) < 0) {
				j->err = -ENOMEM;
				return;
			}
			if (found) {
				long hit = vg__mb_dset_find(s, d);

				if (hit >= 0)
					found[hit] = true;
				continue;
			}
			if (!vg__mb_dset_has(s, d))
				jfail(j, idx, e, d, "%s entry %zu (SignatureData %s) is not one the "
				      "policy allows in %s", u->name, k, hexs(d, h), vg__mb_set_key[set]);
		}
		off += ls;
	}
}

static void judge_var(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	const uint8_t *b = j->log->buf + e->data_off;
	const struct vg_mbpolicy *p = j->p;
	struct uvar u;
	int set = -1, r;

	if (uvar_decode(b, e->data_len, &u) < 0) {
		jfail(j, idx, e, NULL, "the UEFI_VARIABLE_DATA does not decode");
		return;
	}
	if (memcmp(u.guid, vg__mb_guid_global, 16) == 0) {
		if (!strcmp(u.name, "SecureBoot")) {
			set = -2;
		} else if (!strcmp(u.name, "PK"))
			set = MB_PK;
		else if (!strcmp(u.name, "KEK"))
			set = MB_KEK;
	} else if (memcmp(u.guid, vg__mb_guid_imgsec, 16) == 0) {
		if (!strcmp(u.name, "db"))
			set = MB_DB;
		else if (!strcmp(u.name, "dbx"))
			set = MB_DBX;
		else if (!strcmp(u.name, "vendor_db"))
			set = MB_VENDOR_DB;
	}
	if (set == -1 || (set >= 0 && !p->set[set].judged) || (set == -2 && p->secure_boot < 0))
		return;
	r = data_matches(j->log, e, b, e->data_len, u.data, u.len);
	if (r <= 0) {
		if (r < 0)
			j->err = r;
		else
			jfail(j, idx, e, NULL, "%s: the event data is not what its digests "
			      "measure", u.name);
		return;
	}
	if (set == -2) {
		int on = u.len >= 1 && u.data[0] == 1;

		j->seen_sb = true;
		if (on != p->secure_boot)
			jfail(j, idx, e, NULL, "SecureBoot=%u, the policy requires Secure Boot %s",
			      u.len ? u.data[0] : 0, p->secure_boot ? "on" : "off");
		return;
	}
	if (set == MB_DBX) {
		bool *found = calloc(p->set[MB_DBX].n + 1, sizeof(*found));
		char h[80];

		if (!found) {
			j->err = -ENOMEM;
			return;
		}
		j->seen_dbx = true;
		judge_siglists(j, idx, e, &u, MB_DBX, found);
		for (size_t i = 0; i < p->set[MB_DBX].n && !j->err; i++)
			if (!found[i])
				jfail(j, idx, e, p->set[MB_DBX].d[i], "dbx lacks the revocation %s the "
				      "policy requires", hexs(p->set[MB_DBX].d[i], h));
		free(found);
		return;
	}
	judge_siglists(j, idx, e, &u, (enum mb_set)set, NULL);
}

/* The authorities whose certificate verified an image (SbatLevel, MokListTrusted: not keys). */
static bool auth_key(const char *name)
{
	return !strcmp(name, "db") || !strcmp(name, "vendor_db") || !strcmp(name, "Shim") ||
	       !strcmp(name, "MokList") || !strcmp(name, "MokListRT");
}

/*
 * An EV_EFI_VARIABLE_AUTHORITY: the certificate that verified an image
 * must be one "authorities" lists; one of vendor_db also one "vendor_db"
 * lists (Keylime's SignatureSetMember). One failure per event.
 */
static void judge_authority(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	const uint8_t *b = j->log->buf + e->data_off;
	const struct dset *auth = &j->p->set[MB_AUTH], *vdb = &j->p->set[MB_VENDOR_DB];
	uint8_t d[SHA256_LEN];
	struct uvar u;
	bool is_vdb;
	char h[80];
	int r;

	if (!auth->judged && !vdb->judged)
		return;
	if (uvar_decode(b, e->data_len, &u) < 0) {
		jfail(j, idx, e, NULL, "the UEFI_VARIABLE_DATA does not decode");
		return;
	}
	is_vdb = !strcmp(u.name, "vendor_db");
	if (!(auth->judged && auth_key(u.name)) && !(vdb->judged && is_vdb))
		return;
	r = data_matches(j->log, e, b, e->data_len, u.data, u.len);
	if (r <= 0) {
		if (r < 0)
			j->err = r;
		else
			jfail(j, idx, e, NULL, "%s: the event data is not what its digests "
			      "measure", u.name);
		return;
	}
	if (u.len <= 16) {
		jfail(j, idx, e, NULL, "%s: no EFI_SIGNATURE_DATA", u.name);
		return;
	}
	if (vg__mb_sha256(u.data + 16, u.len - 16, d) < 0) {
		j->err = -ENOMEM;
		return;
	}
	if (auth->judged && auth_key(u.name) && !vg__mb_dset_has(auth, d))
		jfail(j, idx, e, d, "an image was verified by %s certificate %s, not an authority "
		      "the policy allows", u.name, hexs(d, h));
	else if (vdb->judged && is_vdb && !vg__mb_dset_has(vdb, d))
		jfail(j, idx, e, d, "an image was verified by vendor_db certificate %s, not one "
		      "the policy's vendor_db allows", hexs(d, h));
}

/* The event's sha256 digest, or a failure. */
static const uint8_t *ev_sha256(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	size_t l;
	const uint8_t *d = vg_eventlog_event_digest(j->log, e, TPM_ALG_SHA256, &l);

	if (!d || l != SHA256_LEN) {
		jfail(j, idx, e, NULL, "no sha256 digest to judge");
		return NULL;
	}
	return d;
}

/* a key of from_archive or announced judges @set */
static bool by_refs(const struct vg_mbpolicy *p, enum mb_set set)
{
	return (p->archive | p->announced) & (1u << set);
}

static void judge_digest(struct judge *j, long idx, const struct vg_eventlog_event *e,
			 enum mb_set set, const char *what)
{
	const uint8_t *d;
	char h[80], why[400];

	j->seen[set] = true;
	if ((!j->p->set[set].judged && !by_refs(j->p, set)) || !(d = ev_sha256(j, idx, e)))
		return;
	if (j->p->set[set].judged && vg__mb_dset_has(&j->p->set[set], d))
		return;
	/* not listed: the archive's, or announced? */
	switch (vg__mb_ref_judge(j->p, j->refs, set, d, NULL, what, why, sizeof(why))) {
	case 0:
		return;
	case 1:
		jfail(j, idx, e, d, "%s", why);
		return;
	default:
		jfail(j, idx, e, d, "%s %s is not one the policy allows (%s)", what, hexs(d, h),
		      vg__mb_set_key[set]);
	}
}

static void judge_ipl(struct judge *j, long idx, const struct vg_eventlog_event *e)
{
	const uint8_t *b = j->log->buf + e->data_off;
	const struct vg_mbpolicy *p = j->p;
	char s[MB_CMDLINE_MAX + 64];
	size_t l = ev_string(b, e->data_len, s, sizeof(s));
	int r;

	if (e->pcr == 8 && strncmp(s, "kernel_cmdline: ", 16) == 0) {
		const char *c = s + 16;
		bool ok = false;

		if (!p->cmdline.judged && !p->cmdre.judged && !(p->announced & MB_ANN_CMDLINE))
			return;
		j->seen_cmdline = true;
		/* GRUB measures the line without its "kernel_cmdline: " prefix */
		r = data_matches(j->log, e, b + 16, l - 16, b, l);
		if (r <= 0) {
			if (r < 0)
				j->err = r;
			else
				jfail(j, idx, e, NULL, "the command line is not what its digests "
				      "measure");
			return;
		}
		for (size_t i = 0; !ok && i < p->cmdline.n; i++)
			ok = strcmp(p->cmdline.s[i], c) == 0;
		for (size_t i = 0; !ok && p->re && i < p->cmdre.n; i++)
			ok = regexec(&p->re[i], c, 0, NULL, 0) == 0;
		if (!ok) {
			char why[400];

			r = vg__mb_ref_judge(p, j->refs, MB__SETS, NULL, c, NULL, why, sizeof(why));
			if (r == 1)
				jfail(j, idx, e, NULL, "%s", why);
			else if (r != 0)
				jfail(j, idx, e, NULL, "kernel command line \"%.300s\" is not one the "
				      "policy allows", c);
		}
	} else if (e->pcr == 9) {
		if (contains(s, "initrd") || contains(s, "initramfs"))
			judge_digest(j, idx, e, MB_INITRD, "initrd");
		else if (contains(s, "vmlinuz"))
			judge_digest(j, idx, e, MB_VMLINUZ, "kernel file");
	} else if (e->pcr == 14) {
		if (!strcmp(s, "MokList"))
			judge_digest(j, idx, e, MB_MOK, "MokList");
		else if (!strcmp(s, "MokListX"))
			judge_digest(j, idx, e, MB_MOKX, "MokListX");
	}
}

static void judge_event(struct judge *j, size_t i)
{
	const struct vg_eventlog_event *e = &j->log->events[i];
	long idx = (long)i;

	switch (e->type) {
	case VG_EV_EFI_VARIABLE_DRIVER_CONFIG:
		if (e->pcr == 7)
			judge_var(j, idx, e);
		break;
	case VG_EV_EFI_VARIABLE_AUTHORITY:
		if (e->pcr == 7)
			judge_authority(j, idx, e);
		break;
	case VG_EV_EFI_BOOT_SERVICES_APPLICATION: {
		static const enum mb_set role[3] = { MB_SHIM, MB_GRUB, MB_KERNEL };
		static const char *const rname[3] = { "shim", "GRUB", "kernel" };
		unsigned int k;

		if (e->pcr != 4 || image_in_fv(j->log->buf + e->data_off, e->data_len))
			break;
		k = j->apps < 2 ? j->apps : 2;
		j->apps++;
		judge_digest(j, idx, e, role[k], rname[k]);
		break;
	}
	case VG_EV_IPL:
		judge_ipl(j, idx, e);
		break;
	case VG_EV_S_CRTM_VERSION:
		if (e->pcr == 0)
			judge_digest(j, idx, e, MB_SCRTM, "S-CRTM version");
		break;
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB:
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB2:
		if (e->pcr == 0)
			judge_digest(j, idx, e, MB_FIRMWARE, "firmware blob");
		break;
	default:
		break;
	}
}

int vg_mbpolicy_check(const struct vg_mbpolicy *p, const struct vg_eventlog *log,
		      struct vg_attest_verdict *v)
{
	return vg_mbpolicy_check_refs(p, log, NULL, v);
}

int vg_mbpolicy_check_refs(const struct vg_mbpolicy *p, const struct vg_eventlog *log,
			   const struct vg_mbrefs *refs, struct vg_attest_verdict *v)
{
	struct judge j = { .p = p, .refs = refs, .log = log, .v = v };
	static const enum mb_set need[] = { MB_SHIM, MB_GRUB, MB_KERNEL, MB_INITRD };
	uint64_t before = vg_attest_verdict_count(v);

	for (size_t i = 0; i < log->nevents && !j.err; i++)
		judge_event(&j, i);
	if (p->secure_boot == 1 && !j.seen_sb)
		jfail(&j, -1, NULL, NULL, "the boot log has no SecureBoot variable event, the "
		      "policy requires Secure Boot");
	if (p->set[MB_DBX].judged && p->set[MB_DBX].n && !j.seen_dbx)
		jfail(&j, -1, NULL, NULL, "the boot log has no dbx variable event, the policy "
		      "requires %zu revocations", p->set[MB_DBX].n);
	if ((p->cmdline.n || p->cmdre.n || (p->announced & MB_ANN_CMDLINE)) && !j.seen_cmdline)
		jfail(&j, -1, NULL, NULL, "the boot log has no kernel_cmdline event, the policy "
		      "allows only certain command lines");
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++)
		if (((p->set[need[k]].judged && p->set[need[k]].n) || by_refs(p, need[k])) &&
		    !j.seen[need[k]])
			jfail(&j, -1, NULL, NULL, "the boot log has no %s event, the policy "
			      "requires one", vg__mb_set_key[need[k]]);
	if (j.err)
		return j.err;
	return vg_attest_verdict_count(v) > before ? 1 : 0;
}

int vg_mbpolicy_check_buf(const struct vg_mbpolicy *p, const uint8_t *buf, size_t len,
			  struct vg_attest_verdict *v)
{
	return vg_mbpolicy_check_buf_refs(p, buf, len, NULL, v);
}

int vg_mbpolicy_check_buf_refs(const struct vg_mbpolicy *p, const uint8_t *buf, size_t len,
			       const struct vg_mbrefs *refs, struct vg_attest_verdict *v)
{
	struct vg_eventlog *log = NULL;
	struct vg_diag d = { 0 };
	int r = vg_eventlog_parse(buf, len, &log, &d);

	if (r == -EBADMSG)
		return vg_attest_fail(v, VG_AF_BOOT_MALFORMED, "boot log: %s", d.msg);
	if (r < 0)
		return r;
	r = vg_mbpolicy_check_refs(p, log, refs, v);
	vg_eventlog_free(log);
	return r;
}

/* ---- learning from a known-good log ---- */

static int learn_siglists(struct dset *s, const struct uvar *u)
{
	size_t off = 0;

	while (off < u->len) {
		const uint8_t *b = u->data + off;
		uint32_t ls, hs, ss;

		if (u->len - off < 28)
			return -EBADMSG;
		ls = le32(b + 16);
		hs = le32(b + 20);
		ss = le32(b + 24);
		if (ls < 28 || ls > u->len - off || hs > ls - 28 || ss <= 16 ||
		    (ls - 28 - hs) % ss != 0)
			return -EBADMSG;
		for (size_t at = 28 + hs; at < ls; at += ss) {
			uint8_t d[SHA256_LEN];
			int r = vg__mb_sha256(b + at + 16, ss - 16, d);

			if (r == 0)
				r = vg__mb_dset_add(s, d);
			if (r < 0)
				return r;
		}
		off += ls;
	}
	return 0;
}

static int learn_event(struct vg_mbpolicy *p, const struct vg_eventlog *log, size_t i,
		       unsigned int *apps, struct vg_diag *diag)
{
	const struct vg_eventlog_event *e = &log->events[i];
	const uint8_t *b = log->buf + e->data_off, *d;
	char s[MB_CMDLINE_MAX + 64];
	struct uvar u;
	size_t l;
	int set = -1, r;

	d = vg_eventlog_event_digest(log, e, TPM_ALG_SHA256, &l);
	if (d && l != SHA256_LEN)
		d = NULL;
	switch (e->type) {
	case VG_EV_EFI_VARIABLE_DRIVER_CONFIG:
	case VG_EV_EFI_VARIABLE_AUTHORITY:
		if (e->pcr != 7)
			return 0;
		if (uvar_decode(b, e->data_len, &u) < 0)
			return vg_diag_set(diag, -EBADMSG, "event %zu: UEFI_VARIABLE_DATA does not "
					   "decode", i);
		r = data_matches(log, e, b, e->data_len, u.data, u.len);
		if (r < 0)
			return r;
		if (r == 0)
			return vg_diag_set(diag, -EBADMSG, "event %zu (%s): the data is not what "
					   "its digests measure", i, u.name);
		if (e->type == VG_EV_EFI_VARIABLE_AUTHORITY) {
			uint8_t h[SHA256_LEN];

			if (!auth_key(u.name))
				return 0;
			if (u.len <= 16)
				return vg_diag_set(diag, -EBADMSG, "event %zu: no signature data", i);
			r = vg__mb_sha256(u.data + 16, u.len - 16, h);
			if (r == 0 && !strcmp(u.name, "vendor_db"))	/* as Keylime's create_mb_policy */
				r = vg__mb_dset_add(&p->set[MB_VENDOR_DB], h);
			return r < 0 ? r : vg__mb_dset_add(&p->set[MB_AUTH], h);
		}
		if (memcmp(u.guid, vg__mb_guid_global, 16) == 0) {
			if (!strcmp(u.name, "SecureBoot")) {
				p->secure_boot = u.len >= 1 && u.data[0] == 1;
				return 0;
			}
			set = !strcmp(u.name, "PK") ? MB_PK : !strcmp(u.name, "KEK") ? MB_KEK : -1;
		} else if (memcmp(u.guid, vg__mb_guid_imgsec, 16) == 0) {
			set = !strcmp(u.name, "db") ? MB_DB : !strcmp(u.name, "dbx") ? MB_DBX :
			      !strcmp(u.name, "vendor_db") ? MB_VENDOR_DB : -1;
		}
		if (set < 0)
			return 0;
		r = learn_siglists(&p->set[set], &u);
		if (r == -EBADMSG)
			return vg_diag_set(diag, -EBADMSG, "event %zu: %s: EFI_SIGNATURE_LIST "
					   "malformed", i, u.name);
		return r;
	case VG_EV_EFI_BOOT_SERVICES_APPLICATION: {
		static const enum mb_set role[3] = { MB_SHIM, MB_GRUB, MB_KERNEL };

		if (e->pcr != 4 || image_in_fv(b, e->data_len) || !d)
			return 0;
		set = role[*apps < 2 ? *apps : 2];
		(*apps)++;
		break;
	}
	case VG_EV_IPL:
		l = ev_string(b, e->data_len, s, sizeof(s));
		if (e->pcr == 8 && strncmp(s, "kernel_cmdline: ", 16) == 0) {
			r = data_matches(log, e, b + 16, l - 16, b, l);
			if (r < 0)
				return r;
			if (r == 0)
				return vg_diag_set(diag, -EBADMSG, "event %zu: the command line is "
						   "not what its digests measure", i);
			return vg__mb_strs_add(&p->cmdline, s + 16);
		}
		if (e->pcr == 9 && (contains(s, "initrd") || contains(s, "initramfs")))
			set = MB_INITRD;
		else if (e->pcr == 9 && contains(s, "vmlinuz"))
			set = MB_VMLINUZ;
		else if (e->pcr == 14 && !strcmp(s, "MokList"))
			set = MB_MOK;
		else if (e->pcr == 14 && !strcmp(s, "MokListX"))
			set = MB_MOKX;
		break;
	case VG_EV_S_CRTM_VERSION:
		set = e->pcr == 0 ? MB_SCRTM : -1;
		break;
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB:
	case VG_EV_EFI_PLATFORM_FIRMWARE_BLOB2:
		set = e->pcr == 0 ? MB_FIRMWARE : -1;
		break;
	default:
		return 0;
	}
	if (set < 0 || !d)
		return 0;
	return vg__mb_dset_add(&p->set[set], d);
}

int vg_mbpolicy_from_log(const struct vg_eventlog *log, struct vg_mbpolicy **ret,
			 struct vg_diag *diag)
{
	struct vg_mbpolicy *p;
	unsigned int apps = 0;
	int r = vg__mb_new(&p);

	if (r < 0)
		return r;
	for (int k = 0; k < MB__SETS; k++)
		p->set[k].judged = true;
	p->cmdline.judged = true;
	for (size_t i = 0; i < log->nevents && r >= 0; i++)
		r = learn_event(p, log, i, &apps, diag);
	if (r >= 0)
		r = vg__mb_finish(p, diag);
	if (r < 0) {
		vg_mbpolicy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}
