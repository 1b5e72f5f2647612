// SPDX-License-Identifier: MIT
/*
 * mlog.c - the measurement log writer: group commit (write, one
 * fdatasync, extend in order, store sync) and reconciliation of the file
 * with the PCR store on open. See mlog.h for the crash argument.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "internal.h"
#include "vigil/fileio.h"
#include "vigil/mlog.h"
#include "vigil/outfile.h"

/* what a failed commit left to put right before the next one */
enum mlog_fail {
	MLOG_OK,
	MLOG_FAIL_FILE,		/* write or sync failed: the store has not seen the commit */
	MLOG_FAIL_STORE,	/* the file has the commit, the store some prefix of it */
};

#define BOOT_RECORD_MAX 4096

struct pending {
	uint32_t pcr;
	unsigned int nd;
	struct vg_digest d[VG_HASH__LAST];
};

struct vg_mlog {
	int fd;
	struct vg_mlog_opts o;
	uint32_t banks;
	uint64_t entries;
	uint64_t size;			/* committed bytes */
	struct vg_imalog_buf q;		/* queued entries, binary layout */
	struct pending *pend;
	size_t npend, cappend;
	enum mlog_fail failed;
	bool have_reset;		/* the store has a reset counter (a TPM) */
	uint32_t reset_count;		/* ... and it was this at open */
};

void vg_mlog_free(struct vg_mlog *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	vg_imalog_buf_release(&l->q);
	free(l->pend);
	free(l);
}

uint64_t vg_mlog_entries(const struct vg_mlog *l)
{
	return l->entries;
}

/*
 * Is the unparsable rest of the file (from an entry start) what an
 * interrupted append leaves: a prefix of one entry (the parser said
 * -EMSGSIZE), zeros (blocks allocated but never written), or a prefix of
 * an entry followed by zeros? Anything else is damage.
 */
static bool torn_tail(const uint8_t *rest, size_t n, int parse_err)
{
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	size_t z = n;

	if (parse_err == -EMSGSIZE)
		return true;
	while (z && rest[z - 1] == 0)
		z--;
	if (z == 0)
		return true;
	vg_imalog_parser_init(&p, rest, z, VG_HASH_SHA1);
	return vg_imalog_parser_next(&p, &e, NULL) == -EMSGSIZE;
}

/* Does the replay state equal the store for every PCR in @used? */
static int state_matches(const struct vg_mlog *l, const struct vg_imalog_replay *r, uint32_t used,
			 const struct vg_digest store[VG_PCR_COUNT][VG_HASH__LAST])
{
	for (unsigned int p = 0; p < VG_PCR_COUNT; p++) {
		if (!(used & (1u << p)))
			continue;
		for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
			struct vg_digest v;

			if (!(l->banks & (1u << a)))
				continue;
			if (vg_imalog_replay_get(r, p, a, &v) < 0)
				return 0;
			if (memcmp(v.bytes, store[p][a].bytes, v.len) != 0)
				return 0;
		}
	}
	return 1;
}

static int extend_entry(struct vg_mlog *l, const struct vg_imalog_entry *e, struct vg_diag *diag)
{
	struct vg_digest d[VG_HASH__LAST];
	int n = vg_imalog_entry_bank_digests(e, l->banks, false, d, diag);

	if (n < 0)
		return n;
	return l->o.ops->extend(l->o.ops_ctx, e->pcr, d, (size_t)n, diag);
}

/*
 * Parse the file, find a torn tail, find the prefix the store has seen,
 * truncate the tail and extend what the store lacks.
 */
static int reconcile(struct vg_mlog *l, const uint8_t *buf, size_t len, bool need_match,
		     struct vg_mlog_recovery *rec, struct vg_diag *diag)
{
	struct vg_digest (*store)[VG_HASH__LAST] = NULL;
	struct vg_imalog_replay *rp = NULL;
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_diag pd = { 0 };
	uint64_t n = 0, k = 0;
	uint32_t used = 0;
	bool matched;
	size_t valid;
	int r;

	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	while ((r = vg_imalog_parser_next(&p, &e, &pd)) == 1) {
		used |= 1u << e.pcr;
		n++;
	}
	valid = p.off;
	if (r < 0 && !torn_tail(buf + valid, len - valid, r))
		return vg_diag_set(diag, r, "%s; the log is damaged before its end, not repairing it",
				   pd.msg);
	store = calloc(VG_PCR_COUNT, sizeof(*store));
	if (!store)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	for (unsigned int pc = 0; pc < VG_PCR_COUNT; pc++) {
		if (!(used & (1u << pc)))
			continue;
		for (unsigned int a = 0; a < VG_HASH__LAST; a++) {
			if (!(l->banks & (1u << a)))
				continue;
			r = l->o.ops->read(l->o.ops_ctx, pc, a, &store[pc][a], diag);
			if (r < 0)
				goto out;
		}
	}
	r = vg_imalog_replay_new(l->banks, 0, &rp, diag);
	if (r < 0)
		goto out;
	matched = state_matches(l, rp, used, store);
	vg_imalog_parser_init(&p, buf, valid, VG_HASH_SHA1);
	while ((r = vg_imalog_parser_next(&p, &e, diag)) == 1) {
		r = vg_imalog_replay_entry(rp, &e, p.index - 1, diag);
		if (r < 0)
			goto out;
		if (state_matches(l, rp, used, store)) {
			matched = true;
			k = p.index;
		}
	}
	if (r < 0)
		goto out;
	if (!matched) {
		char want[2 * VG_HASH_MAX_DIGEST + 1], got[2 * VG_HASH_MAX_DIGEST + 1];
		unsigned int pc = 0, a = 0;
		struct vg_digest v = { 0 };

		for (pc = 0; pc < VG_PCR_COUNT; pc++)
			if (used & (1u << pc))
				break;
		for (a = 0; a < VG_HASH__LAST; a++)
			if (l->banks & (1u << a))
				break;
		(void)vg_imalog_replay_get(rp, pc, a, &v);
		vg_hex_encode(v.bytes, v.len, want);
		vg_hex_encode(store[pc][a].bytes, v.len, got);
		r = vg_diag_set(diag, -ESTALE, "the PCRs match no prefix of the log (%" PRIu64
				" entries): PCR %u %s is %s, the log replays to %s; refusing to write",
				n, pc, vg_hash_name(a), got, want);
		goto out;
	}
	/*
	 * The first commit of a list is its boot_aggregate alone, extended
	 * before anything else is written: a list of two or more entries of
	 * which the PCRs have seen none was extended into PCRs that were reset
	 * since (a reboot, or a TPM Restart), never into these.
	 */
	if (need_match && n >= 2 && k == 0) {
		r = vg_diag_set(diag, -ESTALE, "the list belongs to an earlier boot: the TPM's PCRs "
				"have seen none of its %" PRIu64 " entries (they are at their reset "
				"values: the TPM was reset since it was written); move it aside (the "
				"writer does not rename or delete it), a new list is then started at "
				"this path", n);
		goto out;
	}
	if (valid < len) {
		if (ftruncate(l->fd, (off_t)valid) != 0 || fsync(l->fd) != 0) {
			r = vg_diag_set(diag, -errno, "truncating the torn tail: %s", strerror(errno));
			goto out;
		}
		if (rec)
			rec->truncated = len - valid;
	}
	/* crash between sync and extend: the store lacks entries k..n-1 */
	vg_imalog_parser_init(&p, buf, valid, VG_HASH_SHA1);
	while ((r = vg_imalog_parser_next(&p, &e, diag)) == 1) {
		if (p.index <= k)
			continue;
		r = extend_entry(l, &e, diag);
		if (r < 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if (n > k && l->o.pcr_sync) {
		r = l->o.pcr_sync(l->o.ops_ctx, diag);
		if (r < 0)
			goto out;
	}
	if (rec)
		rec->extended = n - k;
	l->entries = n;
	l->size = valid;
	r = 0;
out:
	vg_imalog_replay_free(rp);
	free(store);
	return r;
}

/* The boot_aggregate of the store's PCRs now in @algo (zeros if not attestable). */
static int current_aggregate(struct vg_mlog *l, unsigned int algo, struct vg_digest *agg,
			     struct vg_diag *diag)
{
	struct vg_digest pcrs[10];
	int r;

	*agg = (struct vg_digest){ .algo = (uint8_t)algo, .len = (uint8_t)vg_hash_size(algo) };
	if (!l->o.ops->attestable)
		return 0;	/* zeros, as the kernel records without a TPM */
	for (unsigned int i = 0; i < 10; i++) {
		r = l->o.ops->read(l->o.ops_ctx, i, algo, &pcrs[i], diag);
		if (r < 0)
			return r;
	}
	return vg_imalog_boot_aggregate(algo, pcrs, agg, diag);
}

static int boot_aggregate(struct vg_mlog *l, struct vg_diag *diag)
{
	unsigned int algo = l->banks & (1u << VG_HASH_SHA256) ? VG_HASH_SHA256 : VG_HASH_SHA1;
	struct vg_digest agg;
	int r = current_aggregate(l, algo, &agg, diag);

	if (r < 0)
		return r;
	return vg_mlog_append_file(l, VG_IMALOG_PCR_DEFAULT, &agg, "boot_aggregate", NULL, 0, diag);
}

/*
 * Is the list's first entry, if it is a boot_aggregate in a bank the
 * store has, the boot_aggregate of the store's PCRs 0-9 now?
 * Return: 0 (yes, or nothing to compare), -ESTALE (another boot's), or an
 * error of the store.
 */
static int aggregate_check(struct vg_mlog *l, const uint8_t *buf, size_t len,
			   struct vg_diag *diag)
{
	const struct vg_imalog_field *fn = NULL, *fd = NULL;
	char have[2 * VG_HASH_MAX_DIGEST + 1], now[2 * VG_HASH_MAX_DIGEST + 1];
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct vg_digest agg;
	const uint8_t *dig;
	unsigned int algo;
	size_t dl;
	int r;

	vg_imalog_parser_init(&p, buf, len, VG_HASH_SHA1);
	if (vg_imalog_parser_next(&p, &e, NULL) != 1)
		return 0;	/* reconcile() judges a list that does not parse */
	for (unsigned int i = 0; i < e.tmpl.nfields; i++) {
		if (e.f[i].id == VG_IMAF_N_NG)
			fn = &e.f[i];
		if (e.f[i].id == VG_IMAF_D_NG)
			fd = &e.f[i];
	}
	if (!fn || !fd || fn->len != 15 || memcmp(fn->data, "boot_aggregate", 15) != 0 ||
	    vg_imalog_field_digest(fd, &algo, &dig, &dl, NULL) < 0 || !(l->banks & (1u << algo)))
		return 0;
	r = current_aggregate(l, algo, &agg, diag);
	if (r < 0)
		return r;
	if (agg.len == dl && memcmp(agg.bytes, dig, dl) == 0)
		return 0;
	vg_hex_encode(dig, dl, have);
	vg_hex_encode(agg.bytes, agg.len, now);
	return vg_diag_set(diag, -ESTALE, "the list belongs to an earlier boot: its boot_aggregate "
			   "%s:%s is not this boot's %s (the TPM's PCRs 0-%u); move it aside (the "
			   "writer does not rename or delete it), a new list is then started at "
			   "this path", vg_hash_name(algo), have, now, algo == VG_HASH_SHA1 ? 7 : 9);
}

/*
 * The boot record beside the list (LOG.boot): the TPM's resetCount when
 * the list was started. Return: 1 and *@ret, 0 (no record), -EBADMSG, -errno.
 */
static int boot_record_read(const char *bpath, uint32_t *ret, struct vg_diag *diag)
{
	char buf[BOOT_RECORD_MAX + 1], *line, *end;
	int fd = open(bpath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return vg_diag_set(diag, -errno, "boot record %s: %s", bpath, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return vg_diag_set(diag, -EBADMSG, "boot record %s: not a regular file", bpath);
	}
	n = read(fd, buf, BOOT_RECORD_MAX);
	close(fd);
	if (n < 0)
		return vg_diag_set(diag, -errno, "boot record %s: %s", bpath, strerror(errno));
	buf[n] = 0;
	for (line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long v;

		if (strncmp(line, "resetCount ", 11) != 0)
			continue;
		errno = 0;
		v = strtoul(line + 11, &end, 10);
		if (errno || end == line + 11 || (*end != '\n' && *end) || v > UINT32_MAX)
			break;
		*ret = (uint32_t)v;
		return 1;
	}
	return vg_diag_set(diag, -EBADMSG, "boot record %s: no 'resetCount N' line", bpath);
}

static int boot_record_write(const char *bpath, uint32_t count, struct vg_diag *diag)
{
	struct vg_diag d = { 0 };
	char text[256];
	int n = snprintf(text, sizeof(text), "# vigil: the TPM boot (clockInfo.resetCount) the "
			 "measurement list beside this file was started in\nresetCount %" PRIu32
			 "\n", count);
	int r = vg_outfile_put(bpath, text, (size_t)n, 0600, 0, &d);

	if (r < 0)
		return vg_diag_set(diag, r, "boot record %s: %s", bpath, d.msg);
	return 0;
}

/*
 * A list kept across a TPM reset would be replayed into the fresh PCRs as
 * if measured in this boot: refuse it. A boot record with this resetCount
 * settles it: this boot's (PCRs 0-9 extended since the list began do not
 * make it another's). Without one (a list of an older vigil) its
 * boot_aggregate must be this boot's. Return: 1 (a boot record matched),
 * 0 (no record, the boot_aggregate matched or is not there to compare),
 * -ESTALE, or another error.
 */
static int boot_check(struct vg_mlog *l, const char *bpath, const uint8_t *buf, size_t len,
		      struct vg_diag *diag)
{
	uint32_t was;
	int r = boot_record_read(bpath, &was, diag);

	if (r < 0)
		return r;
	if (r == 1 && was != l->reset_count)
		return vg_diag_set(diag, -ESTALE, "the list belongs to an earlier boot: it was started "
				   "at the TPM's resetCount %" PRIu32 " (%s), the TPM is at resetCount %"
				   PRIu32 " now; move the list and its boot record aside (the writer "
				   "does not rename or delete them), a new list is then started at "
				   "this path", was, bpath, l->reset_count);
	if (r == 1)
		return 1;
	return aggregate_check(l, buf, len, diag);
}

int vg_mlog_open(const char *path, const struct vg_mlog_opts *opts, struct vg_mlog **ret,
		 struct vg_mlog_recovery *rec, struct vg_diag *diag)
{
	struct vg_mlog *l;
	uint8_t *buf = NULL;
	char *bpath = NULL;
	bool recorded = false;
	size_t len = 0;
	struct stat st;
	uint32_t have;
	int r;

	if (!opts || !opts->ops)
		return vg_diag_set(diag, -EINVAL, "no PCR store");
	if (rec)
		*rec = (struct vg_mlog_recovery){ 0 };
	l = calloc(1, sizeof(*l));
	if (!l)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	l->o = *opts;
	/* a link in the log's directory would have the writer (root) append to any file */
	l->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (l->fd < 0) {
		r = vg_diag_set(diag, -errno, "%s", errno == ELOOP ? "a symbolic link: name the log itself" :
				strerror(errno));
		goto fail;
	}
	if (fstat(l->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = vg_diag_set(diag, -EINVAL, "not a regular file: a log is appended to and "
				"synced, and read back after a crash");
		goto fail;
	}
	if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
		r = vg_diag_set(diag, errno == EWOULDBLOCK ? -EBUSY : -errno,
				"another writer has the log open");
		goto fail;
	}
	have = opts->ops->banks(opts->ops_ctx);
	for (unsigned int a = 0; a < VG_HASH__LAST; a++)
		if (have & (1u << a) && vg_hash_available(a))
			l->banks |= 1u << a;
	if (!l->banks) {
		r = vg_diag_set(diag, -EOPNOTSUPP, "the PCR store has no bank this OpenSSL can hash");
		goto fail;
	}
	if (opts->ops->attestable && opts->ops->reset_count) {
		r = opts->ops->reset_count(opts->ops_ctx, &l->reset_count, diag);
		if (r < 0)
			goto fail;
		l->have_reset = true;
		if (asprintf(&bpath, "%s.boot", path) < 0) {
			bpath = NULL;
			r = vg_diag_set(diag, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	r = vg_fd_read_file(l->fd, SIZE_MAX / 2, &buf, &len);
	if (r < 0) {
		r = vg_diag_set(diag, r, "reading: %s", strerror(-r));
		goto fail;
	}
	if (len > 0 && l->have_reset) {
		r = boot_check(l, bpath, buf, len, diag);
		if (r < 0) {
			free(buf);
			goto fail;
		}
		recorded = r == 1;
	}
	r = reconcile(l, buf, len, l->have_reset, rec, diag);
	free(buf);
	if (r < 0)
		goto fail;
	/*
	 * No record but the PCRs had seen a non-empty prefix (a list of an
	 * older vigil), or a new list: record this boot, before its first entry.
	 */
	if (l->have_reset && !recorded) {
		r = boot_record_write(bpath, l->reset_count, diag);
		if (r < 0)
			goto fail;
	}
	if (l->entries == 0) {
		r = boot_aggregate(l, diag);
		if (r < 0)
			goto fail;
		r = vg_mlog_commit(l, diag);
		if (r < 0)
			goto fail;
		if (rec)
			rec->created = true;
	}
	if (rec)
		rec->entries = l->entries;
	free(bpath);
	*ret = l;
	return 0;
fail:
	free(bpath);
	vg_mlog_free(l);
	return r;
}

/*
 * Bring the file and the store back in step after a failed commit, whose
 * entries were never acknowledged. A failed write or sync: the store never
 * saw the commit, so the file is cut back to what it had seen and the cut
 * synced (no re-reading: cheap enough to retry on every access while a
 * disk stays full). A failed extend or store sync: the store holds some
 * prefix of the file: reconciled as on open, and the store synced.
 */
static int recover(struct vg_mlog *l, struct vg_diag *diag)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	l->q.len = 0;
	l->npend = 0;
	if (l->failed == MLOG_FAIL_FILE) {
		if (ftruncate(l->fd, (off_t)l->size) != 0 || (!l->o.no_sync && fdatasync(l->fd) != 0))
			return vg_diag_set(diag, -errno, "the log writer failed earlier and cannot "
					   "recover yet: cutting the log back to its acknowledged "
					   "entries: %s", strerror(errno));
		l->failed = MLOG_OK;
		return 0;
	}
	if (l->have_reset) {
		uint32_t now;

		r = l->o.ops->reset_count(l->o.ops_ctx, &now, diag);
		if (r < 0)
			return r;
		if (now != l->reset_count)
			return vg_diag_set(diag, -ESTALE, "the TPM was reset (resetCount %" PRIu32
					   " to %" PRIu32 ") while the list was open: the list is an "
					   "earlier boot's; move it aside and restart the writer",
					   l->reset_count, now);
	}
	r = vg_fd_read_file(l->fd, SIZE_MAX / 2, &buf, &len);
	if (r < 0)
		return vg_diag_set(diag, r, "reading the log back: %s", strerror(-r));
	r = reconcile(l, buf, len, false, NULL, diag);
	free(buf);
	if (r < 0)
		return r;
	/* reconcile() syncs the store only if it extended: the failure may have been that sync */
	if (l->o.pcr_sync) {
		r = l->o.pcr_sync(l->o.ops_ctx, diag);
		if (r < 0)
			return r;
	}
	l->failed = MLOG_OK;
	return 0;
}

int vg_mlog_recover(struct vg_mlog *l, struct vg_diag *diag)
{
	if (l->failed == MLOG_OK)
		return 0;
	return recover(l, diag);
}

bool vg_mlog_failed(const struct vg_mlog *l)
{
	return l->failed != MLOG_OK;
}

int vg_mlog_append(struct vg_mlog *l, unsigned int pcr, const char *tmpl,
		   const struct vg_imalog_field *f, unsigned int n, struct vg_diag *diag)
{
	struct vg_imalog_parser p;
	struct vg_imalog_entry e;
	struct pending *pe;
	struct vg_diag pd = { 0 };
	size_t start = l->q.len;
	int r;

	if (l->failed != MLOG_OK) {
		r = recover(l, diag);
		if (r < 0)
			return r;
	}
	if (l->npend == l->cappend) {
		size_t cap = l->cappend ? l->cappend * 2 : 64;
		struct pending *np = realloc(l->pend, cap * sizeof(*np));

		if (!np)
			return vg_diag_set(diag, -ENOMEM, "out of memory");
		l->pend = np;
		l->cappend = cap;
	}
	r = vg_imalog_encode_fields(pcr, tmpl, f, n, 20, &l->q);
	if (r < 0) {
		l->q.len = start;
		return vg_diag_set(diag, r, r == -ENOMEM ? "out of memory"
				   : "fields do not fit template %s", tmpl);
	}
	vg_imalog_parser_init(&p, l->q.data + start, l->q.len - start, VG_HASH_SHA1);
	if (vg_imalog_parser_next(&p, &e, &pd) != 1) {
		l->q.len = start;
		return vg_diag_set(diag, -EINVAL, "entry does not parse: %s", pd.msg);
	}
	e.violation = false;
	pe = &l->pend[l->npend];
	pe->pcr = pcr;
	{
		struct vg_digest sha1;

		r = vg_imalog_template_digest(&e, VG_HASH_SHA1, &sha1, diag);
		if (r >= 0)
			r = vg_imalog_entry_bank_digests(&e, l->banks, false, pe->d, diag);
		if (r < 0) {
			l->q.len = start;
			return r;
		}
		pe->nd = (unsigned int)r;
		memcpy(l->q.data + start + 4, sha1.bytes, 20);
	}
	l->npend++;
	return 0;
}

int vg_mlog_append_file(struct vg_mlog *l, unsigned int pcr, const struct vg_digest *file_digest,
			const char *path, const uint8_t *sig, size_t siglen, struct vg_diag *diag)
{
	const char *an = vg_hash_name(file_digest->algo);
	size_t al = an ? strlen(an) : 0, pl = strlen(path);
	uint8_t dng[32 + VG_HASH_MAX_DIGEST];
	struct vg_imalog_field f[3];
	uint8_t *name;
	int r;

	if (!an || al + 2 + file_digest->len > sizeof(dng) ||
	    file_digest->len != vg_hash_size(file_digest->algo))
		return vg_diag_set(diag, -EINVAL, "bad file digest");
	if (pl > VG_IMALOG_DATA_MAX / 2 || siglen > VG_IMALOG_DATA_MAX / 2)
		return vg_diag_set(diag, -EINVAL, "name or signature too long");
	memcpy(dng, an, al);
	dng[al] = ':';
	dng[al + 1] = '\0';
	memcpy(dng + al + 2, file_digest->bytes, file_digest->len);
	name = malloc(pl + 1);
	if (!name)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	/* ima_write_template_field_data: spaces in strings become '_' */
	for (size_t i = 0; i < pl; i++)
		name[i] = path[i] == ' ' ? '_' : (uint8_t)path[i];
	name[pl] = '\0';
	f[0] = (struct vg_imalog_field){ VG_IMAF_D_NG, (uint32_t)(al + 2 + file_digest->len), dng };
	f[1] = (struct vg_imalog_field){ VG_IMAF_N_NG, (uint32_t)(pl + 1), name };
	f[2] = (struct vg_imalog_field){ VG_IMAF_SIG, (uint32_t)siglen, sig };
	r = vg_mlog_append(l, pcr, sig ? "ima-sig" : "ima-ng", f, sig ? 3 : 2, diag);
	free(name);
	return r;
}

/* A commit failed: its entries are dropped (never acknowledged); recover() runs next. */
static int commit_failed(struct vg_mlog *l, enum mlog_fail how, int r)
{
	if (how == MLOG_FAIL_FILE)
		(void)!ftruncate(l->fd, (off_t)l->size);	/* recover() cuts and syncs again */
	l->q.len = 0;
	l->npend = 0;
	l->failed = how;
	return r;
}

int vg_mlog_commit(struct vg_mlog *l, struct vg_diag *diag)
{
	size_t done = 0;
	int r, n;

	if (l->failed != MLOG_OK) {
		/* queued after a failure is impossible (append recovers first): nothing pending */
		r = recover(l, diag);
		if (r < 0)
			return r;
	}
	if (l->npend == 0)
		return 0;
	while (done < l->q.len) {
		ssize_t w = write(l->fd, l->q.data + done, l->q.len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = vg_diag_set(diag, w < 0 ? -errno : -EIO, "appending to the log: %s",
					w < 0 ? strerror(errno) : "short write");
			return commit_failed(l, MLOG_FAIL_FILE, r);
		}
		done += (size_t)w;
	}
	/*
	 * Never retry a failed sync on the same data (the page cache may have
	 * dropped it): the entries are cut away and the cut synced instead.
	 */
	if (!l->o.no_sync && fdatasync(l->fd) != 0) {
		r = vg_diag_set(diag, -errno, "syncing the log: %s", strerror(errno));
		return commit_failed(l, MLOG_FAIL_FILE, r);
	}
	for (size_t i = 0; i < l->npend; i++) {
		r = l->o.ops->extend(l->o.ops_ctx, l->pend[i].pcr, l->pend[i].d, l->pend[i].nd, diag);
		if (r < 0)
			return commit_failed(l, MLOG_FAIL_STORE, r);
	}
	if (l->o.pcr_sync) {
		r = l->o.pcr_sync(l->o.ops_ctx, diag);
		if (r < 0)
			return commit_failed(l, MLOG_FAIL_STORE, r);
	}
	n = (int)l->npend;
	l->entries += l->npend;
	l->size += l->q.len;
	l->q.len = 0;
	l->npend = 0;
	return n;
}
