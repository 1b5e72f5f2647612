// SPDX-License-Identifier: MIT
/*
 * args.c - vigild's command line: the options into struct vd, checked
 * (a bad value is refused before anything is opened), and the options
 * handed on to every appraiser.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "journal.h"
#include "monitor.h"
#include "setup.h"

static const char help[] =
	"usage: vigild [--config FILE] [--policy FILE] [--mode enforce|permissive|fix]\n"
	"              [--watch PATH]... [--watch-mounts PREFIX] [--accept-gap NAME]...\n"
	"              [--keyring CERT]... [--hmac-key FILE]\n"
	"              [--passphrase-file FILE] [--allow-empty-keyring] [--log FILE]\n"
	"              [--tcti STRING | --no-tpm] [--control SOCKET] [--audit FILE]\n"
	"              [--foreground | --background]\n"
	"              [--appraiser-user NAME] [--trust-db FILE] [--trust-key FILE]\n"
	"              [--trust-root DIR]\n"
	"\n"
	"Appraise and measure files at exec and open (fanotify permission events),\n"
	"and deny what fails, under an IMA-style policy with access rules.\n"
	"  -c, --config FILE      vigil.conf (keys, keyring, hash, EVM xattrs)\n"
	"  -p, --policy FILE      the policy (docs/policy.md); required\n"
	"  -m, --mode MODE        enforce (deny), permissive (log only), fix (label\n"
	"                         missing or wrong hashes, never over signatures)\n"
	"  -w, --watch PATH       mark the filesystem holding PATH (repeatable; default\n"
	"                         vigild.watch in the configuration)\n"
	"  -k, --keyring CERT     trusted certificate or public key (repeatable)\n"
	"  -H, --hmac-key FILE    EVM HMAC key (any vigil key file; a sealed key is\n"
	"                         unsealed with the TPM)\n"
	"      --passphrase-file FILE  the passphrase of a passphrase --hmac-key (first\n"
	"                         line; default $VIGIL_PASSPHRASE_FILE, else the systemd\n"
	"                         credential vigil-passphrase)\n"
	"      --allow-empty-keyring  start (and reload) a policy with appraise_type=imasig\n"
	"                         rules though no trusted key is loaded (refused by default:\n"
	"                         every file they cover would be denied)\n"
	"  -l, --log FILE         measurement list (binary ima-ng; default, when the policy\n"
	"                         measures, /run/vigil/binary_runtime_measurements); PCR\n"
	"                         extends go to the TPM, or to a software bank FILE.pcrs\n"
	"  -t, --tcti STRING      the TPM (default $VIGIL_TCTI, else device:/dev/tpmrm0;\n"
	"                         where that is absent, a software bank, not attestable)\n"
	"      --no-tpm           software PCR bank (not attestable)\n"
	"  -s, --control SOCKET   control socket for `vigil status` (default\n"
	"                         " VD_CTL_DEFAULT_SOCKET "; SOCKET.lock keeps a second\n"
	"                         vigild away)\n"
	"  -a, --audit FILE       audit records, JSON lines (default: none)\n"
	"      --metrics-file FILE  counters in the Prometheus text format, rewritten\n"
	"                         every 5 s and at exit (node_exporter textfile)\n"
	"      --watch-mounts PREFIX  also watch every filesystem mounted under PREFIX\n"
	"                         (/: all) that users could write and run programs from,\n"
	"                         now and as it is mounted; FUSE, network and stacked\n"
	"                         filesystems get a reader of their own\n"
	"      --accept-gap NAME  start though this way around vigild is open (memfd,\n"
	"                         userns, fuse, mount:PATH; repeatable): refused by default in\n"
	"                         enforce mode under a policy that judges execution\n"
	"      --hold             keep the fanotify group in a small process of its own that\n"
	"                         restarts the monitor when it dies: accesses wait, none is\n"
	"                         allowed unseen (vigild.hold; --no-hold: the kernel\n"
	"                         allows what waits when vigild dies)\n"
	"      --handoff SOCKET   under --hold: across `systemctl restart vigild` the\n"
	"                         holder hands the group to the new vigild through\n"
	"                         SOCKET instead of ending enforcement (the unit's\n"
	"                         /run/vigil/vigild.handoff); a stop still ends it\n"
	"      --close-gaps       set the sysctls that close memfd and userns (what the\n"
	"                         policy and mode need, not what is accepted), then exit\n"
	"                         (the unit's ExecStartPre)\n"
	"      --journal SOCKET   send every denial, would-deny and fail action to the\n"
	"                         journal's native socket SOCKET, never waiting (default\n"
	"                         under systemd: " VJOURNAL_SOCKET "; 'none': not at all)\n"
	"  -j, --workers N        appraiser processes (default 2)\n"
	"  -T, --timeout-ms N     decision deadline (default 5000), then the fail action;\n"
	"                         an appraiser still hashing then is killed and replaced;\n"
	"                         files of 16 MiB or more get 1 s per 200 MB on top, at\n"
	"                         most 12 deadlines in all\n"
	"      --max-file-size SIZE  files larger than SIZE (bytes, or with K, M, G, T)\n"
	"                         are not hashed: the fail action (default: no limit)\n"
	"      --fail-open        on timeout or appraiser failure allow (default: deny\n"
	"                         in enforce mode)\n"
	"      --accept-unenforced  keep policy rules vigild cannot enforce (mmap, open\n"
	"                         flags, kernel hooks, ...; refused by default), listed\n"
	"                         by `vigil status`\n"
	"      --loader PATH      also a dynamic loader (its opens count as execs);\n"
	"                         the system's are found (repeatable)\n"
	"      --version          print the version and exit\n"
	"      --appraiser-user NAME  the unprivileged user appraisers run as (default\n"
	"                         vigil; must exist and must not be root)\n"
	"      --trust-db FILE    the trust database (vigil trust build) that appraise\n"
	"                         rules with trust=archive consult for files without\n"
	"                         security.ima (default trust.db in vigil.conf, else\n"
	"                         " VD_TRUST_DB_DEFAULT "); authenticated with the HMAC key\n"
	"      --trust-key FILE   the key the trust database was built with, when it is\n"
	"                         not --hmac-key (any vigil key file)\n"
	"      --trust-root DIR   cut DIR off a file's path before the lookup (a\n"
	"                         container or chroot root; default /)\n"
	"  -f, --foreground       print 'vigild: ready' on stderr when the marks are set\n"
	"      --background       return once vigild is ready (0), or with its exit status\n"
	"                         when it stops before (2: a refused setting)\n"
	"Every setting is checked before vigild is ready (READY=1 to $NOTIFY_SOCKET);\n"
	"a refused one exits 2, naming the file and the problem.\n";

int vd_args_worker(struct vd *d, const char *a, const char *b)
{
	char **n = realloc(d->worker_args, (d->nworker_args + 3) * sizeof(*n));

	if (!n)
		return -1;
	d->worker_args = n;
	n[d->nworker_args++] = (char *)a;
	if (b)
		n[d->nworker_args++] = (char *)b;
	n[d->nworker_args] = NULL;
	return 0;
}

/* "123", "64K", "1G" (powers of 1024) */
static int parse_size(const char *s, uint64_t *ret)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v;
	const char *u;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		if (end[1] || !(u = strchr(units, *end)))
			return -EINVAL;
		for (long k = 0; k <= u - units; k++) {
			if (v > UINT64_MAX / 1024)
				return -EINVAL;
			v *= 1024;
		}
	}
	*ret = v;
	return 0;
}

/* options added for issue 15 item 5, apart from the enum below */
#define OPT_METRICS_FILE 0x300
#define OPT_JOURNAL 0x301
#define OPT_WATCH_MOUNTS 0x302
#define OPT_ACCEPT_GAP 0x303
#define OPT_CLOSE_GAPS 0x304
#define OPT_HOLD 0x305
#define OPT_NO_HOLD 0x306
#define OPT_HANDOFF 0x30f

int vd_args_parse(struct vd *d, int argc, char **argv)
{
	enum { OPT_NOTPM = 256, OPT_FAILOPEN, OPT_MAXSIZE, OPT_ACCEPT, OPT_LOADER, OPT_APPUSER,
	       OPT_PASSFILE, OPT_EMPTYKR, OPT_BACKGROUND, OPT_TRUSTDB, OPT_TRUSTROOT, OPT_TRUSTKEY };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "watch", required_argument, NULL, 'w' },
		{ "keyring", required_argument, NULL, 'k' },
		{ "hmac-key", required_argument, NULL, 'H' },
		{ "passphrase-file", required_argument, NULL, OPT_PASSFILE },
		{ "allow-empty-keyring", no_argument, NULL, OPT_EMPTYKR },
		{ "log", required_argument, NULL, 'l' },
		{ "tcti", required_argument, NULL, 't' },
		{ "no-tpm", no_argument, NULL, OPT_NOTPM },
		{ "control", required_argument, NULL, 's' },
		{ "audit", required_argument, NULL, 'a' },
		{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
		{ "journal", required_argument, NULL, OPT_JOURNAL },
		{ "watch-mounts", required_argument, NULL, OPT_WATCH_MOUNTS },
		{ "accept-gap", required_argument, NULL, OPT_ACCEPT_GAP },
		{ "hold", no_argument, NULL, OPT_HOLD },
		{ "no-hold", no_argument, NULL, OPT_NO_HOLD },
		{ "handoff", required_argument, NULL, OPT_HANDOFF },
		{ "close-gaps", no_argument, NULL, OPT_CLOSE_GAPS },
		{ "workers", required_argument, NULL, 'j' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "fail-open", no_argument, NULL, OPT_FAILOPEN },
		{ "max-file-size", required_argument, NULL, OPT_MAXSIZE },
		{ "accept-unenforced", no_argument, NULL, OPT_ACCEPT },
		{ "loader", required_argument, NULL, OPT_LOADER },
		{ "appraiser-user", required_argument, NULL, OPT_APPUSER },
		{ "trust-db", required_argument, NULL, OPT_TRUSTDB },
		{ "trust-root", required_argument, NULL, OPT_TRUSTROOT },
		{ "trust-key", required_argument, NULL, OPT_TRUSTKEY },
		{ "foreground", no_argument, NULL, 'f' },
		{ "background", no_argument, NULL, OPT_BACKGROUND },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *mode = NULL;
	int c;

	d->nworkers = 2;
	d->timeout_ms = 5000;
	d->appraiser_user = "vigil";
	while ((c = getopt_long(argc, argv, "c:p:m:w:k:H:l:t:s:a:j:T:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d->config = optarg;
			break;
		case 'p':
			d->policy_path = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'w':
			if (d->nwatch == MAX_WATCH) {
				vlog_err("at most %d --watch", MAX_WATCH);
				return -1;
			}
			d->watch[d->nwatch++] = optarg;
			break;
		case 'k':
			if (d->nkeyrings == 16) {
				vlog_err("at most 16 --keyring");
				return -1;
			}
			d->keyrings[d->nkeyrings++] = optarg;
			break;
		case 'H':
			d->hmac_key_path = optarg;
			break;
		case OPT_PASSFILE:
			d->passphrase_file = optarg;
			break;
		case OPT_EMPTYKR:
			d->allow_empty_keyring = true;
			break;
		case 'l':
			d->log_path = optarg;
			break;
		case 't':
			d->tcti = optarg;
			break;
		case OPT_NOTPM:
			d->no_tpm = true;
			break;
		case 's':
			d->control_path = optarg;
			break;
		case 'a':
			d->audit_path = optarg;
			break;
		case 'j':
			d->nworkers = (unsigned int)atoi(optarg);
			if (d->nworkers < 1 || d->nworkers > MAX_WORKERS) {
				vlog_err("--workers must be 1..%d", MAX_WORKERS);
				return -1;
			}
			break;
		case 'T':
			d->timeout_ms = (unsigned int)atoi(optarg);
			if (d->timeout_ms < 10) {
				vlog_err("--timeout-ms must be at least 10");
				return -1;
			}
			break;
		case OPT_FAILOPEN:
			d->fail_open = true;
			break;
		case OPT_MAXSIZE:
			if (parse_size(optarg, &d->max_size) < 0 || !d->max_size) {
				vlog_err("--max-file-size: '%s' is not a size (bytes, or a number with K, M, G or T)",
				       optarg);
				return -1;
			}
			break;
		case OPT_ACCEPT:
			d->accept_unenforced = true;
			break;
		case OPT_APPUSER:
			d->appraiser_user = optarg;
			break;
		case OPT_TRUSTDB:
			d->trust_db_path = optarg;
			break;
		case OPT_TRUSTROOT:
			d->trust_root = optarg;
			break;
		case OPT_TRUSTKEY:
			d->trust_key_path = optarg;
			break;
		case OPT_LOADER: {
			struct stat st;

			if (stat(optarg, &st) < 0 || !S_ISREG(st.st_mode)) {
				vlog_err("--loader %s: not a file", optarg);
				return -1;
			}
			if (d->nloader_paths == 8) {
				vlog_err("at most 8 --loader");
				return -1;
			}
			d->loader_paths[d->nloader_paths++] = optarg;
			break;
		}
		case OPT_METRICS_FILE:
			d->metrics_path = optarg;
			break;
		case OPT_JOURNAL:
			d->journal_path = optarg;
			break;
		case OPT_HOLD:
		case OPT_NO_HOLD:
			d->hold = c == OPT_HOLD ? 1 : 0;
			break;
		case OPT_HANDOFF:
			if (optarg[0] != '/' || strlen(optarg) >= 108) {
				vlog_err("--handoff needs an absolute socket path under 108 bytes, not '%s'", optarg);
				return -1;
			}
			d->handoff = optarg;
			break;
		case OPT_WATCH_MOUNTS:
			if (optarg[0] != '/') {
				vlog_err("--watch-mounts needs an absolute path (/: every mount), not '%s'", optarg);
				return -1;
			}
			d->watch_mounts = optarg;
			break;
		case OPT_ACCEPT_GAP:
			if (vd_gap_name_check(optarg) < 0) {
				vlog_err("--accept-gap %s: not a gap (memfd, userns, fuse or mount:PATH)", optarg);
				return -1;
			}
			if (d->naccept == MAX_ACCEPT) {
				vlog_err("at most %d --accept-gap", MAX_ACCEPT);
				return -1;
			}
			d->accept[d->naccept++] = optarg;
			break;
		case OPT_CLOSE_GAPS:
			d->close_gaps = true;
			break;
		case 'f':
			d->foreground = true;
			break;
		case OPT_BACKGROUND:
			d->background = true;
			break;
		case 'V':
			printf("vigild %s\n", VIGIL_VERSION);
			exit(0);
		case 'h':
			fputs(help, stdout);
			exit(0);
		default:
			fputs(help, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		vlog_err("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	d->mode = MODE_ENFORCE;
	d->mode_arg = mode;
	if (mode && vd_args_mode(d, mode, "--mode") < 0)
		return -1;
	if (!d->policy_path) {
		vlog_err("no --policy given");
		return -1;
	}
	if (!d->control_path)
		d->control_path = VD_CTL_DEFAULT_SOCKET;
	return 0;
}

int vd_args_mode(struct vd *d, const char *mode, const char *what)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(mode, vd_ctl_mode_names[i]) == 0) {
			d->mode = (enum mode)i;
			return 0;
		}
	vlog_err("%s must be enforce, permissive or fix, not '%s'", what, mode);
	return -1;
}

int vd_args_config(struct vd *d)
{
	const struct vg_config *c = &d->cfg;
	const char *name = d->config ? d->config : VG_CONFIG_DEFAULT;

	/* the command line wins; vigil.conf's vigild.* keys stand in for what it leaves out */
	if (!d->nwatch)
		for (size_t i = 0; i < c->nvigild_watch && d->nwatch < MAX_WATCH; i++)
			d->watch[d->nwatch++] = c->vigild_watch[i];
	if (!d->mode_arg && c->vigild_mode && vd_args_mode(d, c->vigild_mode, "vigild.mode") < 0)
		return -1;
	if (!d->watch_mounts)
		d->watch_mounts = c->vigild_watch_mounts;
	if (d->hold < 0)
		d->hold = c->vigild_hold > 0;
	if (d->hold && d->background) {
		vlog_err("--hold (vigild.hold in %s) and --background: the holder is the process a service "
		       "manager starts; run vigild in the foreground, or --no-hold", name);
		return -1;
	}
	for (size_t i = 0; i < c->nvigild_accept_gap; i++) {
		if (vd_gap_name_check(c->vigild_accept_gap[i]) < 0) {
			vlog_err("%s: vigild.accept_gap = %s: not a gap (memfd, userns, fuse or mount:PATH)", name,
			       c->vigild_accept_gap[i]);
			return -1;
		}
		if (d->naccept < MAX_ACCEPT)
			d->accept[d->naccept++] = c->vigild_accept_gap[i];
	}
	if (!d->nwatch && !d->watch_mounts && !d->close_gaps) {
		vlog_err("no --watch PATH given (nor vigild.watch in %s): nothing to mark", name);
		return -1;
	}
	return 0;
}

int vd_args_appraiser_user(struct vd *d)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(d->appraiser_user);
	if (!pw) {
		vlog_err("appraiser user '%s' %s: appraisers run as an unprivileged system user "
		       "(create it: useradd --system --no-create-home --shell /usr/sbin/nologin %s, "
		       "or name another with --appraiser-user)", d->appraiser_user,
		       errno ? strerror(errno) : "does not exist", d->appraiser_user);
		return -1;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		vlog_err("appraiser user '%s' has uid %u gid %u: appraisers parse what an attacker "
		       "writes and must not run as root (or with group root)", d->appraiser_user,
		       (unsigned int)pw->pw_uid, (unsigned int)pw->pw_gid);
		return -1;
	}
	d->app_uid = pw->pw_uid;
	d->app_gid = pw->pw_gid;
	snprintf(d->app_ids[0], sizeof(d->app_ids[0]), "%u", (unsigned int)d->app_uid);
	snprintf(d->app_ids[1], sizeof(d->app_ids[1]), "%u", (unsigned int)d->app_gid);
	if (vd_args_worker(d, "--uid", d->app_ids[0]) < 0 || vd_args_worker(d, "--gid", d->app_ids[1]) < 0)
		return -1;
	return 0;
}
