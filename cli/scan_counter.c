// SPDX-License-Identifier: MIT
/*
 * scan_counter.c - `vigil scan`'s rollback protection through a TPM NV
 * counter (scan_counter.h, docs/scan.md "Rollback"): the four cases of a
 * bound database's counter against the TPM's, each refusal saying what
 * to do, and the write order of --init and --update (the new database
 * records TPM + 1, is renamed into place, then the TPM's counter is
 * advanced). The TPM calls are lib/tpm/nvcounter.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scan_counter.h"
#include "vigil/tpm.h"

int scan_counter_option(struct scan_counter *c, const char *arg)
{
	char *end;
	unsigned long v;

	c->want = true;
	c->index = VG_TPM_COUNTER_DEFAULT;
	if (!arg)
		return 0;
	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || v < 0x01000000ul || v > 0x01fffffful) {
		cli_err("--tpm-counter=%s: give an NV index, 0x01000000 to 0x01ffffff (the owner's "
			"range is 0x01000000 to 0x013fffff; default 0x%08x)", arg,
			VG_TPM_COUNTER_DEFAULT);
		return -1;
	}
	c->index = (uint32_t)v;
	c->named = true;
	return 0;
}

static int open_tpm(struct scan_counter *c, const char *path)
{
	if (c->tpm)
		return 0;
	if (cli_tpm_open(c->tcti, &c->tpm) == 0)
		return 0;
	if (path)
		cli_file_err(path, "bound to TPM NV counter 0x%08x, and the TPM cannot be reached: "
			     "refused (--ignore-tpm-counter checks it without the TPM, a rolled-back "
			     "copy then undetected)", c->bound_index);
	return -1;
}

/* "vigil scan --init --tpm-counter=0xI -o DB ROOT..." into @out. */
static void init_command(char *out, size_t cap, uint32_t index, const char *path,
			 const struct vg_scan_db *db)
{
	size_t n = (size_t)snprintf(out, cap, "vigil scan --init --tpm-counter=0x%08x -o %s",
				    index, path);

	for (size_t i = 0; i < vg_scan_db_nroots(db) && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, " %s", vg_scan_db_root(db, i));
}

int scan_counter_verify(struct scan_counter *c, struct vg_scan_db *db, const char *path,
			bool update)
{
	struct vg_diag d = { 0 };
	char again[1024];
	uint32_t index;
	uint64_t v, t;
	int r;

	if (!vg_scan_db_counter(db, &index, &v)) {
		if (c->want && !update) {
			cli_file_err(path, "not bound to a TPM counter (database format %u), and "
				     "--tpm-counter requires one: refused (an older, unbound copy?); "
				     "`vigil scan --update %s --tpm-counter` binds the current one",
				     vg_scan_db_format(db), path);
			return -1;
		}
		c->bind = c->want;
		c->bound_index = c->index;
		return 0;
	}
	c->bound_index = index;
	c->bind = true;
	if (c->named && c->index != index) {
		cli_file_err(path, "bound to TPM NV counter 0x%08x, not 0x%08x: refused", index,
			     c->index);
		return -1;
	}
	if (c->ignore) {
		cli_file_err(path, "bound to TPM NV counter 0x%08x (%" PRIu64 "): not checked "
			     "(--ignore-tpm-counter): a rolled-back copy would not be detected",
			     index, v);
		return 0;
	}
	if (open_tpm(c, path) < 0)
		return -1;
	init_command(again, sizeof(again), index, path, db);
	r = vg_tpm_counter_read(c->tpm, index, &t, &d);
	if (r == -ENOENT || r == -ENODATA || r == -EMEDIUMTYPE) {
		cli_file_err(path, "refused: %s: the TPM was cleared, or this is not the TPM the "
			     "database was written with. Check the system by other means (a "
			     "trusted medium, the package manager's checksums), then record a new "
			     "database: %s", d.msg, again);
		return -1;
	}
	if (r < 0) {
		cli_file_err(path, "reading TPM NV counter 0x%08x: %s", index, d.msg);
		return -1;
	}
	if (v == t)
		return 0;
	if (t != UINT64_MAX && v == t + 1) {
		if (vg_tpm_counter_increment(c->tpm, index, &d) < 0) {
			cli_file_err(path, "advancing TPM NV counter 0x%08x: %s", index, d.msg);
			return -1;
		}
		cli_file_err(path, "its counter (%" PRIu64 ") was one ahead of TPM NV counter "
			     "0x%08x (%" PRIu64 "): the last --init or --update was stopped before "
			     "advancing it; advanced now", v, index, t);
		return 0;
	}
	if (v < t) {
		cli_file_err(path, "rolled-back: its counter is %" PRIu64 ", TPM NV counter 0x%08x "
			     "is %" PRIu64 ": a newer database was written since (this is an older "
			     "copy). Put the current database back if you have it; otherwise check "
			     "the system by other means (a trusted medium, the package manager's "
			     "checksums), then record a new database: %s", v, index, t, again);
		return -1;
	}
	cli_file_err(path, "refused: its counter is %" PRIu64 ", more than one ahead of TPM NV "
		     "counter 0x%08x (%" PRIu64 "): not written with this TPM, or the counter was "
		     "redefined. Check the system by other means, then record a new database: %s",
		     v, index, t, again);
	return -1;
}

int scan_counter_prepare(struct scan_counter *c, struct vg_scan_db *next, bool init)
{
	struct vg_diag d = { 0 };
	uint64_t t;
	int r;

	if (init) {
		c->bind = c->want;
		c->bound_index = c->index;
	}
	if (!c->bind)
		return 0;
	if (open_tpm(c, NULL) < 0)
		return -1;
	r = vg_tpm_counter_define(c->tpm, c->bound_index, &d);
	if (r == 1)
		cli_err("defined TPM NV counter 0x%08x (owner hierarchy)", c->bound_index);
	if (r >= 0) {
		r = vg_tpm_counter_read(c->tpm, c->bound_index, &t, &d);
		/* a new counter has no value until incremented (then the TPM's highest ever) */
		if (r == -ENODATA && (r = vg_tpm_counter_increment(c->tpm, c->bound_index, &d)) == 0)
			r = vg_tpm_counter_read(c->tpm, c->bound_index, &t, &d);
	}
	if (r == 0 && t == UINT64_MAX)
		r = vg_diag_set(&d, -EOVERFLOW, "TPM NV counter 0x%08x is at its maximum",
				c->bound_index);
	if (r < 0) {
		cli_err("TPM NV counter 0x%08x: %s", c->bound_index, d.msg);
		return -1;
	}
	c->written = t + 1;
	vg_scan_db_set_counter(next, c->bound_index, c->written);
	return 0;
}

int scan_counter_advance(struct scan_counter *c, const char *path)
{
	struct vg_diag d = { 0 };

	if (!c->bind)
		return 0;
	if (vg_tpm_counter_increment(c->tpm, c->bound_index, &d) < 0) {
		cli_file_err(path, "written with counter %" PRIu64 ", but TPM NV counter 0x%08x "
			     "could not be advanced (%s): the next check advances it",
			     c->written, c->bound_index, d.msg);
		return -1;
	}
	return 0;
}

void scan_counter_release(struct scan_counter *c)
{
	vg_tpm_close(c->tpm);
	c->tpm = NULL;
}
