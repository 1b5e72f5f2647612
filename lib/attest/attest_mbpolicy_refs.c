// SPDX-License-Identifier: MIT
/*
 * attest_mbpolicy_refs.c - the measured-boot policy's keys whose allowed
 * values are not in the policy (issue 45): "from_archive" (shim, GRUB,
 * kernel and vmlinuz judged by the verifier's trust database, trust_boot.h)
 * and "announced" (initrd and command line judged by what earlier boots'
 * attested lists announced, attest_announce.h). Their JSON, and one
 * event's digest or line judged against them, with the sentence that says
 * why it is not allowed. The events are walked by attest_mbpolicy_event.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "vigil/attest_announce.h"
#include "vigil/trust_boot.h"
#include "internal.h"
#include "attest_mbpolicy_int.h"

static const struct {
	const char *name;
	unsigned int bit;
	bool archive;
} keys[] = {
	{ "shim", 1u << MB_SHIM, true },	 { "grub", 1u << MB_GRUB, true },
	{ "kernel", 1u << MB_KERNEL, true },	 { "vmlinuz", 1u << MB_VMLINUZ, true },
	{ "initrd", 1u << MB_INITRD, false },	 { "kernel_cmdline", MB_ANN_CMDLINE, false },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int load_names(struct vg_mbpolicy *p, json_object *a, bool archive, struct vg_diag *diag)
{
	const char *what = archive ? "from_archive" : "announced";

	if (!json_object_is_type(a, json_type_array))
		return vg_diag_set(diag, -EBADMSG, "measured_boot: %s is not a list", what);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) :
									    NULL;
		bool ok = false;

		for (size_t k = 0; s && k < NKEYS; k++)
			if (keys[k].archive == archive && strcmp(s, keys[k].name) == 0) {
				if (archive)
					p->archive |= keys[k].bit;
				else
					p->announced |= keys[k].bit;
				ok = true;
			}
		if (!ok)
			return vg_diag_set(diag, -EBADMSG, "measured_boot: %s %zu is not one of %s",
					   what, i, archive ? "shim, grub, kernel, vmlinuz" :
							      "initrd, kernel_cmdline");
	}
	return 0;
}

int vg__mb_refs_from_json(struct vg_mbpolicy *p, json_object *o, struct vg_diag *diag)
{
	json_object *v;
	int r;

	if (json_object_object_get_ex(o, "from_archive", &v) && (r = load_names(p, v, true, diag)) < 0)
		return r;
	if (json_object_object_get_ex(o, "announced", &v) && (r = load_names(p, v, false, diag)) < 0)
		return r;
	return 0;
}

void vg__mb_refs_to_json(const struct vg_mbpolicy *p, json_object *o)
{
	for (int archive = 1; archive >= 0; archive--) {
		unsigned int bits = archive ? p->archive : p->announced;
		json_object *a;

		if (!bits)
			continue;
		a = json_object_new_array();
		for (size_t k = 0; a && k < NKEYS; k++)
			if (keys[k].archive == (archive == 1) && (bits & keys[k].bit))
				json_object_array_add(a, json_object_new_string(keys[k].name));
		json_object_object_add(o, archive ? "from_archive" : "announced", a);
	}
}

bool vg_mbpolicy_uses_refs(const struct vg_mbpolicy *p)
{
	return p && (p->archive || p->announced);
}

int vg_mbpolicy_set_refs_keys(struct vg_mbpolicy *p, bool archive, bool announced)
{
	static const enum mb_set roles[] = { MB_SHIM, MB_GRUB, MB_KERNEL, MB_VMLINUZ };

	/* the archive's images replace the lists: a listed kernel would outlive its grace */
	for (size_t k = 0; archive && k < sizeof(roles) / sizeof(roles[0]); k++) {
		free(p->set[roles[k]].d);
		memset(&p->set[roles[k]], 0, sizeof(p->set[roles[k]]));
	}
	if (archive)
		p->archive = 1u << MB_SHIM | 1u << MB_GRUB | 1u << MB_KERNEL | 1u << MB_VMLINUZ;
	if (announced)
		p->announced = 1u << MB_INITRD | MB_ANN_CMDLINE;
	return vg__mb_finish_id(p);
}

static enum vg_boot_role role_of(enum mb_set set)
{
	return set == MB_SHIM ? VG_BOOT_SHIM : set == MB_GRUB ? VG_BOOT_GRUB : VG_BOOT_KERNEL;
}

static void when(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, cap, "%lld", (long long)t);
}

/* an image of the trust database's boot references */
static int judge_archive(const struct vg_mbrefs *refs, enum mb_set set, const uint8_t *d,
			 const char *what, char *why, size_t cap)
{
	enum vg_boot_digest which = set == MB_VMLINUZ ? VG_BOOT_FILE : VG_BOOT_AUTHENTICODE;
	const struct vg_trust_boot_ref *hit[1];
	char h[65], t[40];
	size_t n;

	vg_hex_encode(d, SHA256_LEN, h);
	if (!refs || !refs->archive) {
		snprintf(why, cap, "%s sha256:%s: the policy takes it from the archive, and the "
			 "verifier has no trust database (vigil-verifier --trust-db)", what, h);
		return 1;
	}
	n = vg_trust_boot_find(refs->archive, role_of(set), which, d, hit, 1);
	/* firmware that measured the kernel's file, not its PE image (shim's fallback) */
	if (!n && set == MB_KERNEL)
		n = vg_trust_boot_find(refs->archive, VG_BOOT_KERNEL, VG_BOOT_FILE, d, hit, 1);
	if (n && hit[0]->state != VG_BOOT_EXPIRED)
		return 0;
	if (n) {
		when(hit[0]->since, t, sizeof(t));
		snprintf(why, cap, "%s sha256:%s is %s %s's, superseded%s%s since %s and past the "
			 "trust database's grace: a downgrade", what, h, hit[0]->package,
			 hit[0]->version, hit[0]->newest ? " by " : "",
			 hit[0]->newest ? hit[0]->newest : "", t);
		return 1;
	}
	if (vg_trust_boot_find(refs->archive, VG_BOOT_NONE, which, d, hit, 1)) {
		snprintf(why, cap, "%s sha256:%s is the archive's %s of %s %s, where the %s must be "
			 "(the chain is shim, then GRUB, then the kernel)", what, h,
			 vg_trust_boot_role_name(hit[0]->role), hit[0]->package, hit[0]->version,
			 what);
		return 1;
	}
	snprintf(why, cap, "%s sha256:%s is no %s of the archive (no package of the trust "
		 "database ships it)", what, h, what);
	return 1;
}

/* an initrd digest or a command line that earlier boots announced */
static int judge_announced(const struct vg_mbrefs *refs, bool initrd, const uint8_t *d,
			   const char *line, char *why, size_t cap)
{
	struct vg_announcement a;
	size_t cur = 0;
	bool later = false;
	char h[65] = "";

	if (initrd)
		vg_hex_encode(d, SHA256_LEN, h);
	if (!refs || !refs->announced) {
		snprintf(why, cap, "%s%.300s%s: the policy takes it from the host's announcements, "
			 "and there are none here (a request without the agent's state)",
			 initrd ? "initrd sha256:" : "kernel command line \"", initrd ? h : line,
			 initrd ? "" : "\"");
		return 1;
	}
	while (vg_attest_announced_next(refs->announced, &cur, 0, &a)) {
		bool match = initrd ? a.kind == VG_ANNOUNCE_KIND_INITRD &&
					      memcmp(a.value, d, SHA256_LEN) == 0 :
				      a.kind == VG_ANNOUNCE_KIND_CMDLINE &&
					      a.value_len == strlen(line) &&
					      memcmp(a.value, line, a.value_len) == 0;

		if (!match)
			continue;
		if (!refs->boot || a.reset < refs->boot)
			return 0;
		later = true;
	}
	snprintf(why, cap, "%s%.300s%s was not announced by an earlier boot's attested "
		 "measurement list%s", initrd ? "initrd sha256:" : "kernel command line \"",
		 initrd ? h : line, initrd ? "" : "\"",
		 later ? " (only by this boot's, after it was loaded)" : " (vigil trust boot announce)");
	return 1;
}

int vg__mb_ref_judge(const struct vg_mbpolicy *p, const struct vg_mbrefs *refs, enum mb_set set,
		     const uint8_t *d, const char *line, const char *what, char *why, size_t cap)
{
	if (line)
		return (p->announced & MB_ANN_CMDLINE) ?
			       judge_announced(refs, false, NULL, line, why, cap) : -1;
	if (set == MB_INITRD)
		return (p->announced & (1u << MB_INITRD)) ?
			       judge_announced(refs, true, d, NULL, why, cap) : -1;
	if (p->archive & (1u << set))
		return judge_archive(refs, set, d, what, why, cap);
	return -1;
}
