// SPDX-License-Identifier: MIT
/*
 * cmd_attest_policy.c - `vigil attest policy create|check|import`: the
 * reference policies of remote attestation, offline. create builds one
 * from a known-good measurement list, a tree of files, a boot event
 * log and trust databases (the digests the Debian archive signed); import
 * converts a Keylime runtime policy; check, which judges a measurement
 * list against one, is cmd_attest_policy_check.c's. The verifier's copies
 * (policy set|get|assign) are cmd_attest_remote.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "attest_sig.h"
#include "cli.h"
#include "cmd_attest.h"
#include "cmd_trust.h"
#include "vigil/attest.h"
#include "vigil/attest_mbpolicy.h"
#include "vigil/attest_boot.h"
#include "vigil/dsse.h"
#include "vigil/eventlog.h"
#include "vigil/hash.h"
#include "vigil/imalog.h"
#include "vigil/outfile.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"

/* NULL, "-", /dev/stdout: standard output; a fifo or device in place (cli_write_out) */
static int write_out(const char *path, const char *data, size_t len)
{
	return cli_write_out(path, data, len, 0644, VG_OUTFILE_STREAM);
}

/*
 * What a policy made here leaves out unless --no-default-excludes: vigil's
 * own state and credentials. Root reads them (the shipped vigild.policy
 * measures what root reads), and they change: the databases, the agent's
 * and the software TPM's state, the list itself, the audit trail, the
 * operator's token read by every `vigil attest`. Each matches from the
 * path's start, as every exclude does.
 */
static const char *const default_excludes[] = {
	"/var/lib/vigil/",
	"/run/vigil/",
	"/run/vigil-swtpm/",
	"/var/log/vigil/",
	"/etc/vigil/[^/]*-tokens?$",
};

struct tree_ctx {
	struct vg_refpolicy *p;
	struct vg_hasher *h;
	const char *dir;
	const char *root;
	unsigned int algo;
	int err;
};

static struct tree_ctx *tctx;		/* nftw has no user pointer */

static int tree_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct vg_digest dg;
	struct vg_diag d = { 0 };
	char key[4200];
	size_t dl = strlen(tctx->dir);
	int fd;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		cli_file_err(path, "%s", strerror(errno));
		tctx->err = -1;
		return 0;
	}
	if (vg_hasher_fd(tctx->h, fd, tctx->algo, &dg, NULL, &d) < 0) {
		cli_file_err(path, "%s", d.msg);
		tctx->err = -1;
		close(fd);
		return 0;
	}
	close(fd);
	snprintf(key, sizeof(key), "%s%s%s", strcmp(tctx->root, "/") ? tctx->root : "",
		 path[dl] == '/' ? "" : "/", path + dl);
	for (char *c = key; *c; c++)
		if (*c == ' ')
			*c = '_';		/* as the kernel names events */
	if (vg_refpolicy_allow(tctx->p, key, &dg) < 0)
		tctx->err = -1;
	return 0;
}

/* --trusted: one database's files into the policy */
struct trusted_ctx {
	struct vg_refpolicy *p;
	const char *root;		/* --root PREFIX; "/" none */
	unsigned int algo;
	bool merged_usr;
	uint64_t files, digests;
	int err;
};

/* merged /usr: /bin/x is also found (and measured) as /usr/bin/x */
static bool merged_dir(const char *path)
{
	static const char *const dirs[] = { "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
					    "/libx32/" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

static int trusted_allow(struct trusted_ctx *c, const char *usr, const char *path,
			 const struct vg_digest *dg)
{
	char key[4200];
	int n = snprintf(key, sizeof(key), "%s%s%s", strcmp(c->root, "/") ? c->root : "", usr,
			 path);

	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;	/* longer than an event name can be */
	for (char *k = key; *k; k++)
		if (*k == ' ')
			*k = '_';	/* as the kernel names events */
	if (vg_refpolicy_allow(c->p, key, dg) < 0) {
		cli_err("out of memory");
		return -ENOMEM;
	}
	c->digests++;
	return 0;
}

static int trusted_one(void *arg, const struct vg_trust_filerow *f)
{
	struct trusted_ctx *c = arg;
	int r;

	if (f->target || !S_ISREG(f->mode))
		return 0;	/* symbolic links are not measured */
	for (size_t i = 0; i < f->ndg; i++) {
		if (f->dg[i].algo != c->algo)
			continue;
		c->files++;
		r = trusted_allow(c, "", f->path, &f->dg[i]);
		if (r == 0 && c->merged_usr && merged_dir(f->path))
			r = trusted_allow(c, "/usr", f->path, &f->dg[i]);
		return r;
	}
	return 0;
}

/* Return: 0, -1 (reported). */
static int policy_from_trusted(struct trusted_ctx *c, const char *path,
			       const struct vg_hmac_key *hk, bool superseded)
{
	unsigned int algos[VG_TRUST_MAX_ALGOS];
	struct vg_trust_db *db = NULL;
	struct vg_diag d = { 0 };
	size_t n;
	bool have = false;
	int r;

	if (vg_trust_db_open(path, hk->key, hk->len, &db, &d) < 0) {
		cli_file_err(path, "%s", d.msg);
		return -1;
	}
	n = vg_trust_db_algos(db, algos);
	for (size_t i = 0; i < n; i++)
		if (algos[i] == c->algo)
			have = true;
	if (!have) {
		cli_file_err(path, "records no %s digests (give --algo one it records)",
			     vg_hash_name(c->algo));
		vg_trust_db_free(db);
		return -1;
	}
	r = vg_trust_db_files(db, !superseded, trusted_one, c, &d);
	vg_trust_db_free(db);
	if (r < 0) {
		if (r != -ENOMEM)
			cli_file_err(path, "%s", d.msg[0] ? d.msg : strerror(-r));
		return -1;
	}
	return 0;
}

static int policy_from_log(struct vg_refpolicy *p, const char *path)
{
	struct vg_imalog_buf scratch = { 0 };
	struct vg_imalog_parser ps;
	struct vg_imalog_entry e;
	struct vg_diag d = { 0 };
	const uint8_t *buf;
	uint8_t *raw;
	size_t rl, len;
	unsigned int algo;
	long n;
	int r, rc = -1;

	if (cli_attest_read(path, &raw, &rl) < 0)
		return -1;
	n = vg_imalog_load(raw, rl, &scratch, &buf, &len, &algo, &d);
	if (n < 0) {
		cli_file_err(path, "%s", d.msg);
		goto out;
	}
	vg_imalog_parser_init(&ps, buf, len, algo);
	while ((r = vg_imalog_parser_next(&ps, &e, &d)) == 1) {
		const struct vg_imalog_field *fn = NULL, *fd = NULL;
		struct vg_digest dg;
		const uint8_t *db;
		size_t dlen, pl;
		unsigned int da;
		char name[4200];

		for (unsigned int i = 0; i < e.tmpl.nfields; i++) {
			if (e.f[i].id == VG_IMAF_N_NG || e.f[i].id == VG_IMAF_N)
				fn = &e.f[i];
			if (e.f[i].id == VG_IMAF_D_NG || e.f[i].id == VG_IMAF_D || e.f[i].id == VG_IMAF_D_NGV2)
				fd = &e.f[i];
		}
		if (!fn || !fd || e.violation)
			continue;
		for (unsigned int i = 0; i < e.tmpl.nfields; i++)
			if (e.f[i].id == VG_IMAF_BUF)
				fn = NULL;	/* ima-buf: not a file */
		if (!fn || vg_imalog_field_digest(fd, &da, &db, &dlen, &d) < 0)
			continue;
		pl = fn->len;
		if (pl && fn->data[pl - 1] == 0)
			pl--;
		if (pl >= sizeof(name))
			continue;
		memcpy(name, fn->data, pl);
		name[pl] = 0;
		dg.algo = (uint8_t)da;
		dg.len = (uint8_t)dlen;
		memcpy(dg.bytes, db, dlen);
		if (vg_refpolicy_allow(p, name, &dg) < 0)
			goto out;
	}
	if (r < 0 && r != -EMSGSIZE) {
		cli_file_err(path, "%s", d.msg);
		goto out;
	}
	rc = 0;
out:
	vg_imalog_buf_release(&scratch);
	free(raw);
	return rc;
}

static int emit_policy(const struct vg_refpolicy *p, const char *out)
{
	char *json;
	long n = vg_refpolicy_to_json(p, &json);
	int r;

	if (n < 0) {
		cli_err("out of memory");
		return -1;
	}
	json[n] = '\n';		/* replaces the NUL: write n + 1 bytes */
	r = write_out(out, json, (size_t)n + 1);
	free(json);
	return r;
}

/*
 * --boot-log: the event-level measured-boot policy a known-good boot log
 * allows ("measured_boot"), unless @no_mb, and, unless @no_pins, PCRs 0-7
 * pinned to its replay. Return: 0, -1 (reported).
 */
static int policy_boot_pins(struct vg_refpolicy *p, const char *path, unsigned int bank,
			    bool no_pins, bool no_mb, bool refs)
{
	struct vg_mbpolicy *mb = NULL;
	struct vg_eventlog *log = NULL;
	struct vg_eventlog_pcrs pcrs;
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r;

	if (cli_attest_read(path, &b, &n) < 0)
		return -1;
	r = vg_eventlog_parse(b, n, &log, &d);
	free(b);
	if (r == 0 && !no_mb)
		r = vg_mbpolicy_from_log(log, &mb, &d);
	/* --boot: the archive's shim, GRUB and kernels; what the host announces */
	if (r == 0 && !no_mb && refs)
		r = vg_mbpolicy_set_refs_keys(mb, true, true);
	if (r == 0 && !no_mb)
		vg_refpolicy_set_mbpolicy(p, mb);
	else
		vg_mbpolicy_free(mb);
	if (r == 0 && !no_pins)
		r = vg_eventlog_replay(log, bank, &pcrs, &d);
	for (unsigned int i = 0; r == 0 && !no_pins && i < 8; i++)
		r = vg_refpolicy_boot_pin(p, i, &pcrs.pcr[i]);
	vg_eventlog_free(log);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg[0] ? d.msg : strerror(-r));
		return -1;
	}
	return 0;
}

/*
 * --boot: the trust databases must know a shim, a GRUB and a kernel (their
 * boot references: trust_boot.h), or every boot would fail. Return: 0, -1
 * (reported).
 */
static int policy_boot_check_db(const char *const *dbs, size_t n, const struct vg_hmac_key *hk)
{
	unsigned int roles = 0;

	for (size_t i = 0; i < n; i++) {
		struct vg_trust_db *db = NULL;
		struct vg_trust_boot *b = NULL;
		struct vg_diag d = { 0 };

		if (vg_trust_db_open(dbs[i], hk->key, hk->len, &db, &d) < 0 ||
		    vg_trust_boot_load(db, &b, &d) < 0) {
			vg_trust_db_free(db);
			cli_err("%s", d.msg);
			return -1;
		}
		for (size_t k = 0; k < vg_trust_boot_count(b); k++)
			if (vg_trust_boot_at(b, k)->state != VG_BOOT_EXPIRED)
				roles |= 1u << vg_trust_boot_at(b, k)->role;
		vg_trust_boot_free(b);
		vg_trust_db_free(db);
	}
	if ((roles & (1u << VG_BOOT_SHIM | 1u << VG_BOOT_GRUB | 1u << VG_BOOT_KERNEL)) !=
	    (1u << VG_BOOT_SHIM | 1u << VG_BOOT_GRUB | 1u << VG_BOOT_KERNEL)) {
		cli_err("--boot: the trust database%s record%s no %s: build %s with shim-signed, "
			"grub-efi-*-signed and a linux-image-* package (vigil trust build)",
			n > 1 ? "s" : "", n > 1 ? "" : "s",
			!(roles & 1u << VG_BOOT_SHIM) ? "shim" : !(roles & 1u << VG_BOOT_GRUB) ?
			"GRUB" : "kernel", n > 1 ? "them" : "it");
		return -1;
	}
	return 0;
}

/* --boot without --boot-log: a section of from_archive and announced alone. Return: 0, -1. */
static int policy_boot_refs_only(struct vg_refpolicy *p)
{
	static const char empty[] = "{\"version\": 1}";
	struct vg_mbpolicy *mb = NULL;
	struct vg_diag d = { 0 };

	if (vg_mbpolicy_load((const uint8_t *)empty, sizeof(empty) - 1, &mb, &d) < 0 ||
	    vg_mbpolicy_set_refs_keys(mb, true, true) < 0) {
		vg_mbpolicy_free(mb);
		cli_err("out of memory");
		return -1;
	}
	vg_refpolicy_set_mbpolicy(p, mb);
	return 0;
}

int cli_attest_policy_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "tree", required_argument, NULL, 't' },
		{ "root", required_argument, NULL, 'r' },
		{ "algo", required_argument, NULL, 'a' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "key", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ "boot-log", required_argument, NULL, 'B' },
		{ "boot-bank", required_argument, NULL, 'K' },
		{ "no-boot-pins", no_argument, NULL, 'P' },
		{ "no-measured-boot", no_argument, NULL, 'E' },
		{ "no-default-excludes", no_argument, NULL, 'X' },
		{ "trusted", required_argument, NULL, 'T' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "trusted-superseded", no_argument, NULL, 'S' },
		{ "merged-usr", no_argument, NULL, 'M' },
		{ "boot", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *log = NULL, *tree = NULL, *root = "/", *out = NULL, *boot = NULL;
	const char *trusted[8];
	size_t ntrusted = 0;
	bool superseded = false, merged_usr = false, no_pins = false, no_mb = false;
	bool boot_refs = false;
	bool no_default_excludes = false;
	struct cli_keyargs ka = { 0 };
	struct vg_hmac_key hk = { 0 };
	int boot_bank = VG_HASH_SHA256;
	struct tree_ctx tc = { 0 };
	struct vg_refpolicy *p;
	struct vg_diag d = { 0 };
	int c, algo = VG_HASH_SHA256, rc = EXIT_ERROR;

	if (vg_refpolicy_new(&p) < 0)
		return EXIT_ERROR;
	while ((c = getopt_long(argc, argv, "l:t:r:a:x:k:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': log = optarg; break;
		case 't': tree = optarg; break;
		case 'r': root = optarg; break;
		case 'a':
			algo = cli_parse_algo(optarg);
			if (algo < 0)
				goto out;
			break;
		case 'x':
			if (vg_refpolicy_exclude(p, optarg, &d) < 0) {
				cli_err("--exclude: %s", d.msg);
				goto out;
			}
			break;
		case 'k': {
			uint8_t *k;
			size_t kl;

			if (cli_attest_read(optarg, &k, &kl) < 0)
				goto out;
			if (vg_refpolicy_add_key(p, k, kl, &d) < 0) {
				cli_file_err(optarg, "%s", d.msg);
				free(k);
				goto out;
			}
			free(k);
			break;
		}
		case 'o': out = optarg; break;
		case 'B': boot = optarg; break;
		case 'P': no_pins = true; break;
		case 'E': no_mb = true; break;
		case 'X': no_default_excludes = true; break;
		case 'K':
			boot_bank = cli_parse_algo(optarg);
			if (boot_bank < 0)
				goto out;
			break;
		case 'T':
			if (ntrusted == sizeof(trusted) / sizeof(trusted[0])) {
				cli_err("too many --trusted (at most %zu)",
					sizeof(trusted) / sizeof(trusted[0]));
				goto out;
			}
			trusted[ntrusted++] = optarg;
			break;
		case 'H': ka.hmac_key = optarg; break;
		case 'S': superseded = true; break;
		case 'M': merged_usr = true; break;
		case 'O': boot_refs = true; break;
		case 'h': fputs(cli_attest_help, stdout); rc = EXIT_OK; goto out;
		default: goto out;
		}
	}
	for (size_t i = 0; !no_default_excludes && i < sizeof(default_excludes) / sizeof(*default_excludes);
	     i++)
		if (vg_refpolicy_exclude(p, default_excludes[i], &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
	if ((!log && !tree && !boot && !ntrusted) || optind != argc) {
		cli_err("policy create needs --log LOG, --tree DIR, --boot-log FILE, --trusted DB, "
			"or several");
		goto out;
	}
	if (!ntrusted && (ka.hmac_key || superseded || merged_usr)) {
		cli_err("--hmac-key, --trusted-superseded and --merged-usr need --trusted DB");
		goto out;
	}
	if (ntrusted) {
		struct trusted_ctx xc = { .p = p, .root = root, .algo = (unsigned int)algo,
					  .merged_usr = merged_usr };

		if (trust_load_key(&ka, NULL, &hk) < 0)
			goto out;
		for (size_t i = 0; i < ntrusted; i++)
			if (policy_from_trusted(&xc, trusted[i], &hk, superseded) < 0)
				goto out;
		if (!xc.files) {
			cli_err("the trust databases record no regular file");
			goto out;
		}
	}
	if (log && policy_from_log(p, log) < 0)
		goto out;
	if ((no_pins || no_mb) && !boot) {
		cli_err("%s needs --boot-log FILE", no_pins ? "--no-boot-pins" : "--no-measured-boot");
		goto out;
	}
	if (no_pins && no_mb) {
		cli_err("--no-boot-pins and --no-measured-boot: nothing left of --boot-log FILE");
		goto out;
	}
	if (boot_refs && (!ntrusted || no_mb)) {
		cli_err("--boot needs --trusted DB (the archive's boot images), and a measured_boot "
			"section (not --no-measured-boot)");
		goto out;
	}
	if (boot_refs && policy_boot_check_db(trusted, ntrusted, &hk) < 0)
		goto out;
	if (boot && policy_boot_pins(p, boot, (unsigned int)boot_bank, no_pins, no_mb,
				     boot_refs) < 0)
		goto out;
	if (boot_refs && !boot && policy_boot_refs_only(p) < 0)
		goto out;
	if (tree) {
		tc.p = p;
		tc.dir = tree;
		tc.root = root;
		tc.algo = (unsigned int)algo;
		if (vg_hasher_new(&tc.h) < 0)
			goto out;
		tctx = &tc;
		if (nftw(tree, tree_one, 32, FTW_PHYS | FTW_MOUNT) != 0) {
			cli_file_err(tree, "%s", strerror(errno));
			tc.err = -1;
		}
		vg_hasher_free(tc.h);
		tctx = NULL;
		if (tc.err)
			goto out;
	}
	if (emit_policy(p, out) == 0)
		rc = EXIT_OK;
out:
	vg_hmac_key_wipe(&hk);
	vg_refpolicy_free(p);
	return rc;
}

/* --policy-key FILE: add FILE's keys to *@keys. Return: 0, or -1 (reported). */
int cli_attest_policy_key_add(struct vg_dsse_keys **keys, const char *file)
{
	struct vg_diag d = { 0 };
	uint8_t *b;
	size_t n;
	int r;

	if (!*keys && vg_dsse_keys_new(keys) < 0) {
		cli_err("out of memory");
		return -1;
	}
	if (cli_attest_read(file, &b, &n) < 0)
		return -1;
	r = vg_dsse_keys_add(*keys, b, n, &d);
	free(b);
	if (r < 0) {
		cli_file_err(file, "%s", d.msg);
		return -1;
	}
	return 0;
}

/*
 * @keys NULL: any policy form (an envelope unwrapped unchecked); else a
 * DSSE envelope signed by one of @keys. Return: 0; 1 bad signature; -1
 * other errors (all reported).
 */
/*
 * --allowlist-sig SIG --allowlist-sig-key KEY: @b (the policy file @path as
 * read, the bytes that are then loaded) must carry a good detached
 * signature. Return: 0; 1 not a good signature; -1 other errors (reported).
 */
static int check_detached(const char *path, const uint8_t *b, size_t n, const char *sigf,
			  const char *keyf)
{
	uint8_t *sig = NULL, *key = NULL;
	size_t sl, kl;
	char why[512];
	int r;

	if (cli_attest_read(sigf, &sig, &sl) < 0 || cli_attest_read(keyf, &key, &kl) < 0) {
		free(sig);
		return -1;
	}
	r = attest_sig_verify(key, kl, sig, sl, b, n, why, sizeof(why));
	free(sig);
	free(key);
	if (r == -EKEYREJECTED) {
		cli_err("%s: signature %s does not verify with key %s: %s", path, sigf, keyf, why);
		return 1;
	}
	if (r < 0) {
		cli_err("%s: cannot check signature %s with key %s: %s", path, sigf, keyf, why);
		return -1;
	}
	return 0;
}

int cli_attest_policy_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "policy-key", required_argument, NULL, 'K' },
		{ "allowlist-sig", required_argument, NULL, 'S' },
		{ "allowlist-sig-key", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL, *sigf = NULL, *keyf = NULL;
	struct vg_dsse_keys *keys = NULL;
	struct vg_refpolicy *p = NULL;
	struct vg_diag d = { 0 };
	uint8_t *b = NULL;
	size_t n;
	int c, r, rc = EXIT_ERROR;

	while ((c = getopt_long(argc, argv, "o:K:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'S': sigf = optarg; break;
		case 'k': keyf = optarg; break;
		case 'K':
			if (cli_attest_policy_key_add(&keys, optarg) < 0)
				goto done;
			break;
		case 'h': fputs(cli_attest_help, stdout); rc = EXIT_OK; goto done;
		default: goto done;
		}
	}
	if (optind != argc - 1) {
		cli_err("policy import needs one FILE");
		goto done;
	}
	if (!sigf != !keyf) {
		cli_err("--allowlist-sig and --allowlist-sig-key go together");
		goto done;
	}
	if (cli_attest_read(argv[optind], &b, &n) < 0)
		goto done;
	if (sigf) {
		r = check_detached(argv[optind], b, n, sigf, keyf);
		if (r > 0)
			rc = EXIT_NOTVERIFIED;
		if (r != 0)
			goto done;
	}
	r = keys ? vg_refpolicy_load_dsse(keys, b, n, &p, &d) : vg_refpolicy_load(b, n, &p, &d);
	if (r < 0) {
		cli_file_err(argv[optind], "%s", d.msg);
		if (r == -EKEYREJECTED)
			rc = EXIT_NOTVERIFIED;
		goto done;
	}
	if (emit_policy(p, out) == 0)
		rc = EXIT_OK;
done:
	free(b);
	vg_refpolicy_free(p);
	vg_dsse_keys_free(keys);
	return rc;
}
