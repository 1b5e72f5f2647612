// SPDX-License-Identifier: MIT
/*
 * label_trusted.c - the trust database side of `vigil label --trusted`
 * (label_trusted.h): open and authenticate it, map a file to the path the
 * database records (vg_trust_root, lib/trust/trust_root.c: shared with
 * vigild), and judge a digest. It writes nothing; cmd_label.c
 * labels or reports.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "label_trusted.h"

int label_trusted_open(struct label_trusted *lt, const char *db, const uint8_t *key,
		       size_t keylen, const char *root, unsigned int algo, bool superseded)
{
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	struct vg_diag d = { 0 };
	size_t n;
	bool have = false;

	memset(lt, 0, sizeof(*lt));
	pthread_mutex_init(&lt->lock, NULL);
	lt->superseded = superseded;
	if (vg_trust_root_init(&lt->tr, root, &d) < 0) {
		cli_file_err(root ? root : "/", "--trusted-root: %s", strerror(-d.err));
		return -1;
	}
	if (vg_trust_db_open(db, key, keylen, &lt->db, &d) < 0) {
		cli_file_err(db, "%s", d.msg);
		return -1;
	}
	n = vg_trust_db_algos(lt->db, algos);
	for (size_t i = 0; i < n; i++)
		if (algos[i] == algo)
			have = true;
	if (!have) {
		cli_file_err(db, "records no %s digests (label with --algo one it records)",
			     vg_hash_name(algo));
		return -1;
	}
	return 0;
}

const char *label_trusted_dbpath(const struct label_trusted *lt, int fd, char *buf, size_t cap)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return vg_trust_root_path(&lt->tr, buf);
}

/* one path: 1 trusted, 0 not (c->verdict says why), -errno; under the lock */
static int judge(struct label_trusted_check *c, const char *path, const struct vg_digest *d)
{
	struct label_trusted *lt = c->lt;
	struct vg_diag diag = { 0 };
	int r;

	r = vg_trust_db_lookup(lt->db, path, d, &diag);
	if (r == 1 || (r == 2 && lt->superseded)) {
		c->verdict = LT_TRUSTED;
		r = 1;
	} else if (r == 2) {
		c->verdict = LT_SUPERSEDED;
		r = 0;
	} else if (r == 0) {
		r = vg_trust_db_recorded(lt->db, c->dbpath, d->algo, &c->recorded, &diag);
		c->verdict = r > 0 ? LT_DIFFERS : LT_NOT_IN_DB;
		r = r < 0 ? r : 0;
	}
	return r;
}

int label_trusted_gate(void *arg, const struct vg_digest *d)
{
	struct label_trusted_check *c = arg;
	struct label_trusted *lt = c->lt;
	const char *alias;
	int r;

	c->disk = *d;
	pthread_mutex_lock(&lt->lock);
	r = judge(c, c->dbpath, d);
	if (r == 0 && c->verdict == LT_NOT_IN_DB && (alias = vg_trust_root_alias(&lt->tr, c->dbpath))) {
		struct label_trusted_check a = *c;

		r = judge(&a, alias, d);
		if (r != 0 || a.verdict != LT_NOT_IN_DB) {
			*c = a;
			c->dbpath = alias;
		}
	}
	pthread_mutex_unlock(&lt->lock);
	return r;
}

const char *label_trusted_reason(enum label_trusted_verdict v)
{
	switch (v) {
	case LT_TRUSTED:
		return "trusted";
	case LT_NOT_IN_DB:
		return "not-in-database";
	case LT_DIFFERS:
		return "digest-differs";
	case LT_SUPERSEDED:
		return "superseded-version";
	case LT_OUTSIDE:
		return "outside-root";
	}
	return "error";
}

void label_trusted_release(struct label_trusted *lt)
{
	vg_trust_db_free(lt->db);
	lt->db = NULL;
	vg_trust_root_release(&lt->tr);
	pthread_mutex_destroy(&lt->lock);
}
