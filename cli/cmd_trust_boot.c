// SPDX-License-Identifier: MIT
/*
 * cmd_trust_boot.c - `vigil trust boot show DB` (the boot references a
 * trust database records: every shim, GRUB and kernel of the archive with
 * its Authenticode and file digests and its state, trust_boot.h) and
 * `vigil trust boot hash FILE...` (the Authenticode digest of a PE image,
 * what firmware and shim measure into PCR 4: authenticode.h; pesign -h
 * prints the same), and `vigil trust boot announce` (the next boot's
 * initrd and command line, what the archive cannot know, into the host's
 * measurement list: attest_announce.h; the initramfs-tools hook runs it;
 * while vigild holds the list, each entry goes to vigild, which appends
 * it: announce_vigild.c).
 * It judges nothing: `vigil attest policy create --trusted DB --boot` and
 * the verifier use the references and the announcements.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "announce_vigild.h"
#include "cmd_trust.h"
#include "opts.h"
#include "verb.h"
#include "vigil/attest_announce.h"
#include "vigil/authenticode.h"
#include "vigil/mlog.h"
#include "vigil/pcrbank.h"
#include "vigil/tpm.h"
#include "vigil/trust.h"
#include "vigil/trust_boot.h"
#include "tcti.h"

#define DEFAULT_LOG "/run/vigil/binary_runtime_measurements"

static const char help[] =
	"usage: vigil trust boot show DB [--hmac-key KEYFILE] [--json]\n"
	"       vigil trust boot hash [--algo ALGO] [--json] FILE...\n"
	"       vigil trust boot announce [--log FILE] [--tpm[=TCTI] | --pcrs FILE] [--pcr N]\n"
	"                 [--initrd FILE]... [--cmdline LINE]... [--grub-cfg FILE] [--dry-run]\n"
	"                 [--control SOCKET]\n"
	"\n"
	"show   the boot references of a trust database: each EFI image and kernel\n"
	"       of its packages (shim, GRUB, kernel, EFI application) with package,\n"
	"       version, state (current, superseded SINCE, expired SINCE), its\n"
	"       Authenticode SHA-256 (PCR 4) and its file SHA-256 (GRUB's PCR 9)\n"
	"hash   the Authenticode digest of each PE image FILE (what firmware and\n"
	"       shim measure; pesign -h prints the same), 'ALGO:HEX  FILE'\n"
	"announce  tell the verifier, through the attested measurement list, the\n"
	"       next boot's initrd (its SHA-256: GRUB's PCR 9) and kernel command\n"
	"       lines (as GRUB measures them into PCR 8): entries next-boot-initrd:PATH\n"
	"       (ima-ng) and next-boot-cmdline (ima-buf), appended as vigil measure\n"
	"       appends (docs/attest-measured-boot.md); while vigild holds the list,\n"
	"       through its control socket: vigild appends them (root only)\n"
	"  -l, --log FILE          announce: the list (default " DEFAULT_LOG ")\n"
	"  -T, --tpm[=TCTI]        extend the TPM (attestable), as vigil measure --tpm\n"
	"  -p, --pcrs FILE         the software PCR bank (default LOG.pcrs; not attestable)\n"
	"  -n, --pcr N             PCR to extend (default 10)\n"
	"      --initrd FILE       an initrd to announce (repeatable)\n"
	"      --cmdline LINE      a command line to announce, as GRUB measures it:\n"
	"                          the kernel's path and its arguments (repeatable)\n"
	"      --grub-cfg FILE     announce the command line of every linux line of\n"
	"                          FILE (/boot/grub/grub.cfg), as GRUB 2.06 builds it\n"
	"      --dry-run           print what would be announced, append nothing\n"
	"      --control SOCKET    vigild's control socket (default " VD_CTL_DEFAULT_SOCKET "):\n"
	"                          a list vigild holds is appended by vigild\n"
	"  -H, --hmac-key KEYFILE  the database's key (else vigil.conf's key.hmac)\n"
	"  -a, --algo ALGO         digest algorithm (default sha256)\n"
	"  -j, --json              show: one JSON object per reference; hash: one\n"
	"                          per FILE {file, algo, digest} or {file, error}\n"
	"Exit status: 0 done, 2 an error (a FILE that is no PE image, a database\n"
	"that does not open).\n";

static const char *state_name(enum vg_boot_state s)
{
	return s == VG_BOOT_CURRENT ? "current" : s == VG_BOOT_SUPERSEDED ? "superseded" : "expired";
}

static int boot_show(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_HMAC_KEY('H'),
		CLI_OPT_PASSPHRASE_FILE,
		CLI_OPT_TCTI,
		CLI_OPT_CONFIG('c'),
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_keyargs k = { 0 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .keys = &k, .out = &o };
	struct vg_hmac_key hk = { 0 };
	struct vg_trust_db *db = NULL;
	struct vg_trust_boot *b = NULL;
	struct vg_diag d = { 0 };
	int c, rc = EXIT_ERROR;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		rc = cli_opts_stop(help, c);
		goto out;
	}
	if (optind != argc - 1) {
		cli_err("boot show needs one DB");
		goto out;
	}
	if (trust_load_key(&k, cf.config, &hk) < 0)
		goto out;
	if (vg_trust_db_open(argv[optind], hk.key, hk.len, &db, &d) < 0 ||
	    vg_trust_boot_load(db, &b, &d) < 0) {
		cli_err("%s", d.msg);
		goto out;
	}
	for (size_t i = 0; i < vg_trust_boot_count(b); i++) {
		const struct vg_trust_boot_ref *x = vg_trust_boot_at(b, i);
		char ah[65], fh[65];

		vg_hex_encode(x->authenticode, 32, ah);
		vg_hex_encode(x->sha256, 32, fh);
		if (o.json) {
			json_object *j = json_object_new_object();

			json_object_object_add(j, "package", json_object_new_string(x->package));
			json_object_object_add(j, "version", json_object_new_string(x->version));
			json_object_object_add(j, "arch", json_object_new_string(x->arch));
			json_object_object_add(j, "path", cli_json_path(x->path));
			json_object_object_add(j, "role", json_object_new_string(
							     vg_trust_boot_role_name(x->role)));
			json_object_object_add(j, "series", json_object_new_string(x->series));
			json_object_object_add(j, "state", json_object_new_string(
							      state_name(x->state)));
			json_object_object_add(j, "since", json_object_new_int64(x->since));
			json_object_object_add(j, "authenticode", json_object_new_string(ah));
			json_object_object_add(j, "sha256", json_object_new_string(fh));
			puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
			json_object_put(j);
			continue;
		}
		printf("%s %s %s %s %s", vg_trust_boot_role_name(x->role), x->package, x->version,
		       x->arch, state_name(x->state));
		if (x->state != VG_BOOT_CURRENT)
			printf(" since %lld", (long long)x->since);
		printf(" authenticode:sha256:%s file:sha256:%s ", ah, fh);
		cli_put_path(stdout, x->path);
		putchar('\n');
	}
	rc = EXIT_OK;
out:
	vg_trust_boot_free(b);
	vg_trust_db_free(db);
	vg_hmac_key_wipe(&hk);
	return rc;
}

static int boot_hash(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_ALGO('a'),
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = -1 };
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .out = &o };
	int c, rc = EXIT_ERROR;

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1)
		return cli_opts_stop(help, c);
	if (optind >= argc) {
		cli_err("boot hash needs a FILE");
		return EXIT_ERROR;
	}
	rc = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		struct vg_digest dg;
		struct vg_diag d = { 0 };
		uint8_t *img = NULL;
		size_t len = 0;
		char hex[2 * VG_HASH_MAX_DIGEST + 1];
		int r = cli_read_file(argv[i], CLI_DOC_MAX, &img, &len);

		if (r < 0) {
			cli_read_err(argv[i], r, CLI_DOC_MAX);
			rc = EXIT_ERROR;
			continue;
		}
		r = vg_authenticode_digest(img, len, cf.algo >= 0 ? (unsigned int)cf.algo :
						    VG_HASH_SHA256, &dg, &d);
		free(img);
		if (r < 0) {
			if (o.json) {
				json_object *j = json_object_new_object();

				json_object_object_add(j, "file", cli_json_path(argv[i]));
				json_object_object_add(j, "error", json_object_new_string(d.msg));
				puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
				json_object_put(j);
			}
			cli_file_err(argv[i], "%s", d.msg);
			rc = EXIT_ERROR;
			continue;
		}
		if (o.json) {
			json_object *j = json_object_new_object();

			json_object_object_add(j, "file", cli_json_path(argv[i]));
			cli_json_add_digest(j, &dg);
			puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
			json_object_put(j);
			continue;
		}
		vg_hex_encode(dg.bytes, dg.len, hex);
		printf("%s:%s  ", vg_hash_name(dg.algo), hex);
		cli_put_path(stdout, argv[i]);
		putchar('\n');
	}
	return rc;
}

/* ---- announce ---- */

/*
 * One word of a GRUB script line at *@pp into @out (GRUB's lexer, the part
 * grub.cfg's linux lines use: blanks split, '...' literal, "..." with \
 * escapes, \ escapes). Return: 1 a word, 0 none left, -1 a variable ($)
 * or an unclosed quote: a line vigil cannot read as GRUB would.
 */
static int grub_word(const char **pp, char *out, size_t cap)
{
	const char *p = *pp;
	size_t n = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '#')
		return 0;
	while (*p && *p != ' ' && *p != '\t') {
		char q = *p;

		if (q == '$')
			return -1;
		if (q == '\'' || q == '"') {
			p++;
			while (*p && *p != q) {
				if (q == '"' && *p == '$')
					return -1;
				if (q == '"' && *p == '\\' && p[1])
					p++;
				if (n + 1 < cap)
					out[n++] = *p;
				p++;
			}
			if (*p != q)
				return -1;
			p++;
			continue;
		}
		if (q == '\\' && p[1])
			p++;
		if (n + 1 < cap)
			out[n++] = *p;
		p++;
	}
	out[n] = 0;
	*pp = p;
	return 1;
}

/* GRUB 2.06's grub_create_loader_cmdline: one argument appended to @l */
static void grub_arg(char *l, size_t cap, const char *a)
{
	size_t n = strlen(l);
	bool space = strchr(a, ' ') != NULL;

	if (n && n + 1 < cap)
		l[n++] = ' ';
	if (space && n + 1 < cap)
		l[n++] = '"';
	for (const char *c = a; *c && n + 2 < cap; c++) {
		if (c[0] == '\\' && c[1] == 'x' && isxdigit((unsigned char)c[2]) &&
		    isxdigit((unsigned char)c[3])) {
			for (int k = 0; k < 4 && n + 1 < cap; k++)
				l[n++] = *c++;
			c--;
			continue;
		}
		if (*c == '\\' || *c == '\'' || *c == '"')
			l[n++] = '\\';
		l[n++] = *c;
	}
	if (space && n + 1 < cap)
		l[n++] = '"';
	l[n] = 0;
}

/* the command lines of @cfg's linux lines, as GRUB measures them, through @fn */
static int grub_cfg_lines(const char *cfg, int (*fn)(void *arg, const char *line), void *arg)
{
	FILE *f = fopen(cfg, "re");
	char buf[8192];
	int n = 0;

	if (!f) {
		cli_file_err(cfg, "%s", strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		const char *p = buf;
		char w[VG_ANNOUNCE_CMDLINE_MAX], line[VG_ANNOUNCE_CMDLINE_MAX] = "";
		int r;

		buf[strcspn(buf, "\n")] = 0;
		if (grub_word(&p, w, sizeof(w)) != 1 || (strcmp(w, "linux") && strcmp(w, "linuxefi")))
			continue;
		while ((r = grub_word(&p, w, sizeof(w))) == 1)
			grub_arg(line, sizeof(line), w);
		if (r < 0) {
			cli_file_err(cfg, "a linux line with a variable or an open quote is not "
				     "announced: %.80s", buf);
			continue;
		}
		if (!line[0])
			continue;
		if (fn(arg, line) < 0) {
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* what is announced, collected before anything is written: all of it or none is refused */
struct ann {
	struct vd_ctl_announce *e;
	size_t n, cap;
};

static struct vd_ctl_announce *ann_add(struct ann *a, enum vd_ctl_announce_kind kind,
				       const char *data)
{
	struct vd_ctl_announce *x;
	size_t len = strlen(data);

	if (len >= sizeof(x->data))
		return NULL;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 4;

		x = realloc(a->e, cap * sizeof(*x));
		if (!x)
			return NULL;
		a->e = x;
		a->cap = cap;
	}
	x = &a->e[a->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	memcpy(x->data, data, len + 1);
	x->data_len = len;
	return x;
}

static int announce_line(void *arg, const char *line)
{
	size_t len = strlen(line);

	if (!len || len > VG_ANNOUNCE_CMDLINE_MAX) {
		cli_err("--cmdline: from 1 to %d bytes", VG_ANNOUNCE_CMDLINE_MAX);
		return -1;
	}
	if (!ann_add(arg, VD_CTL_ANN_CMDLINE, line)) {
		cli_err("out of memory");
		return -1;
	}
	return 0;
}

static int announce_initrd(struct ann *a, const char *path)
{
	char real[PATH_MAX];
	struct vg_digest dg;
	struct vg_diag d = { 0 };
	struct vg_hasher *h = NULL;
	struct vd_ctl_announce *x;
	int fd = cli_open_regular(path), r;

	if (fd < 0)
		return -1;
	r = vg_hasher_new(&h);
	if (r == 0)
		r = !realpath(path, real) ? -errno :
		    vg_hasher_fd(h, fd, VG_HASH_SHA256, &dg, NULL, &d);
	vg_hasher_free(h);
	close(fd);
	if (r < 0) {
		cli_file_err(path, "%s", d.msg[0] ? d.msg : strerror(-r));
		return -1;
	}
	x = ann_add(a, VD_CTL_ANN_INITRD, real);
	if (!x) {
		cli_err("out of memory");
		return -1;
	}
	memcpy(x->sha256, dg.bytes, 32);
	return 0;
}

static void announce_print(const struct vd_ctl_announce *x)
{
	char hex[65];

	if (x->kind == VD_CTL_ANN_CMDLINE) {
		printf("cmdline %s\n", x->data);
		return;
	}
	vg_hex_encode(x->sha256, 32, hex);
	printf("initrd sha256:%s  %s\n", hex, x->data);
}

/*
 * Through vigild, when the list is the one it holds: each entry committed
 * by vigild's writer. Return: 1 done, 0 the list is not vigild's, -1
 * failed (reported).
 */
static int announce_through_vigild(struct ann *a, const char *log, const char *sock,
				   unsigned long pcr)
{
	char real[PATH_MAX];

	if (!realpath(log, real))
		return 0;	/* no list yet: not vigild's, which holds its own open */
	for (size_t i = 0; i < a->n; i++) {
		struct vd_ctl_announce *x = &a->e[i];
		int r;

		memcpy(x->log, real, strlen(real) + 1);
		x->pcr = (unsigned int)pcr;
		r = announce_vigild(sock, x);
		if (r == 0 && i == 0)
			return 0;
		if (r <= 0) {
			if (r == 0)
				cli_err("%s: vigild stopped taking announcements for %s", sock, real);
			return -1;
		}
		announce_print(x);
	}
	return 1;
}

/* The list written here, as vigil measure writes it: every entry committed at once. */
static int announce_direct(struct ann *a, const char *log, unsigned long pcr, bool tpm,
			   const char *tcti, const char *bankpath)
{
	struct vg_mlog_opts mo = { .ops = &vg_pcrbank_ops, .pcr_sync = vg_pcrbank_sync_cb };
	struct vg_mlog *l = NULL;
	struct vg_pcrbank *bank = NULL;
	struct vg_tpm *t = NULL;
	struct vg_diag d = { 0 };
	char *bp = NULL;
	int rc = -1;

	if (tpm) {
		if (vg_tpm_open(vg_prog_tcti(tcti), &t, &d) < 0) {
			cli_err("TPM: %s", d.msg);
			goto out;
		}
		mo.ops = &vg_tpm_pcr_ops;
		mo.ops_ctx = t;
		mo.pcr_sync = NULL;
	} else {
		if (!bankpath && asprintf(&bp, "%s.pcrs", log) < 0) {
			cli_err("out of memory");
			goto out;
		}
		if (vg_pcrbank_open(bankpath ? bankpath : bp, 1u << VG_HASH_SHA1 |
				    1u << VG_HASH_SHA256, &bank, &d) < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
		mo.ops_ctx = bank;
	}
	if (vg_mlog_open(log, &mo, &l, NULL, &d) < 0) {
		/* -EBUSY: another writer holds it (a vigild that did not answer as its owner) */
		cli_file_err(log, "%s", d.msg);
		goto out;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct vd_ctl_announce *x = &a->e[i];
		int r = x->kind == VD_CTL_ANN_INITRD ?
			vg_attest_announce_initrd(l, (unsigned int)pcr, x->data, x->sha256, &d) :
			vg_attest_announce_cmdline(l, (unsigned int)pcr, x->data, x->data_len, &d);

		if (r < 0) {
			cli_err("%s", d.msg);
			goto out;
		}
		announce_print(x);
	}
	if (vg_mlog_commit(l, &d) < 0) {
		cli_file_err(log, "commit: %s", d.msg);
		goto out;
	}
	rc = 0;
out:
	vg_mlog_free(l);
	vg_pcrbank_free(bank);
	vg_tpm_close(t);
	free(bp);
	return rc;
}

static int boot_announce(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ "log", required_argument, 'l', 'l' },
		{ "pcrs", required_argument, 'p', 'p' },
		{ "pcr", required_argument, 'n', 'n' },
		{ "tpm", optional_argument, 'T', 'T' },
		{ "initrd", required_argument, 0, 'i' },
		{ "cmdline", required_argument, 0, 'c' },
		{ "grub-cfg", required_argument, 0, 'g' },
		{ "dry-run", no_argument, 0, 'D' },
		{ "control", required_argument, 0, 's' },
		CLI_OPT_HELP,
	};
	const char *log = DEFAULT_LOG, *tcti = NULL, *bankpath = NULL, *sock = VD_CTL_DEFAULT_SOCKET;
	const char **initrd = calloc((size_t)argc, sizeof(*initrd));
	const char **lines = calloc((size_t)argc, sizeof(*lines));
	const char **cfgs = calloc((size_t)argc, sizeof(*cfgs));
	size_t ni = 0, nl = 0, ncfg = 0;
	unsigned long pcr = VG_IMALOG_PCR_DEFAULT;
	struct ann a = { 0 };
	struct cli_getopt g;
	char *end;
	bool tpm = false, dry = false;
	int c, r, rc = EXIT_ERROR;

	if (!initrd || !lines || !cfgs) {
		cli_err("out of memory");
		goto out;
	}
	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), NULL);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'l':
			log = optarg;
			break;
		case 'p':
			bankpath = optarg;
			break;
		case 'n':
			errno = 0;
			pcr = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || pcr >= VG_PCR_COUNT) {
				cli_err("--pcr '%s': a PCR number below %d", optarg, VG_PCR_COUNT);
				goto out;
			}
			break;
		case 'T':
			tpm = true;
			tcti = optarg;
			break;
		case 'i':
			initrd[ni++] = optarg;
			break;
		case 'c':
			lines[nl++] = optarg;
			break;
		case 'g':
			cfgs[ncfg++] = optarg;
			break;
		case 'D':
			dry = true;
			break;
		case 's':
			sock = optarg;
			break;
		default:
			rc = cli_opts_stop(help, c);
			goto out;
		}
	}
	if (optind != argc || !(ni + nl + ncfg)) {
		cli_err("announce needs --initrd, --cmdline or --grub-cfg, and no other argument");
		goto out;
	}
	for (size_t i = 0; i < ni; i++)
		if (announce_initrd(&a, initrd[i]) < 0)
			goto out;
	for (size_t i = 0; i < nl; i++)
		if (announce_line(&a, lines[i]) < 0)
			goto out;
	for (size_t i = 0; i < ncfg; i++)
		if (grub_cfg_lines(cfgs[i], announce_line, &a) < 0)
			goto out;
	if (dry) {
		for (size_t i = 0; i < a.n; i++)
			announce_print(&a.e[i]);
		rc = EXIT_OK;
		goto out;
	}
	/* vigild's list first: its TPM (a swtpm takes one client) is not opened here then */
	r = a.n ? announce_through_vigild(&a, log, sock, pcr) : 1;
	if (r == 0)
		r = announce_direct(&a, log, pcr, tpm, tcti, bankpath);
	if (r >= 0)
		rc = EXIT_OK;
out:
	free(a.e);
	free(initrd);
	free(lines);
	free(cfgs);
	return rc;
}

static const struct cli_verb verbs[] = {
	{ "show", boot_show },
	{ "hash", boot_hash },
	{ "announce", boot_announce },
};

int cmd_trust_boot(int argc, char **argv)
{
	int rc = cli_verb_main(verbs, CLI_NVERBS(verbs), help, argc, argv);

	if (rc < 0) {
		cli_err("'%s' is not a trust boot command (show, hash, announce)", argv[1]);
		rc = EXIT_ERROR;
	}
	return rc;
}
