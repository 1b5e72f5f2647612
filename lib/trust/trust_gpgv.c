// SPDX-License-Identifier: MIT
/*
 * trust_gpgv.c - gpgv run on an InRelease: fork and exec, no shell, a
 * fixed environment; its input a sealed memfd (what gpgv checks is what
 * the caller hashed), its --output (the signed text) read from a pipe,
 * its messages and its machine-readable status (--status-fd) each into a
 * memfd of their own.
 *
 * The verdict is apt's (methods/gpgv.cc), from the status lines, not
 * gpgv's exit status: verified when some signature is valid (VALIDSIG,
 * not by an expired or revoked key) by an accepted key and no signature
 * is bad (BADSIG). The archive signs each InRelease with two or three
 * keys, and gpgv exits 2 when a keyring lacks one of them although the
 * others verify. Accepted keys: any of the keyrings, or, when the source
 * names fingerprints (apt's Signed-By), a signature whose key or primary
 * key has one of them ("FPR!": that key only).
 *
 * A refusal gives gpgv's reason, which is on its last lines
 * ("Can't check signature: No public key", "BAD signature from ..."),
 * with the key gpgv named; never its first ("Signature made ...").
 *
 * Keyrings: binary ones are handed to gpgv by name. gpgv cannot read an
 * ASCII-armored one (apt's trusted.gpg.d holds .asc files, and a Signed-By
 * may hold a key block): its radix-64 is decoded (RFC 4880 6.2, the armor
 * only, as apt does) into a memfd gpgv reads as /dev/fd/N. No OpenPGP
 * packet is parsed here: gpgv reads the keys and the signatures.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vigil/fileio.h"
#include "vigil/trust.h"
#include "trust_internal.h"

/* gpgv's signed text is an InRelease's: a few hundred KiB, refused past this */
#define GPGV_OUT_MAX ((size_t)64 << 20)
/* a keyring file (debian-archive-keyring.gpg is 100 KiB) */
#define KEYRING_MAX ((size_t)16 << 20)

/*
 * Whether @p (@n bytes) is armored rather than binary: an OpenPGP packet
 * starts with a tag byte whose high bit is set (RFC 4880 4.2), text never
 * does (gpg decides so too). A binary keyring goes to gpgv as it is.
 */
static bool armored(const uint8_t *p, size_t n)
{
	return n && !(p[0] & 0x80);
}

int vg_trust_dearmor(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	const char *p = (const char *)in, *end = (const char *)in + len;
	uint8_t *out = malloc(len / 4 * 3 + 4);
	char *b64 = malloc(len + 1);
	size_t n = 0;
	int blocks = 0;

	if (!out || !b64) {
		free(out);
		free(b64);
		return -ENOMEM;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p), bl = 0;
		const char *next = nl ? nl + 1 : end;
		bool body = false;

		if (l < 15 || memcmp(p, "-----BEGIN PGP ", 15) != 0) {
			p = next;
			continue;
		}
		/* the armor headers ("Version: ...") end at the first blank line */
		for (p = next; p < end;) {
			nl = memchr(p, '\n', (size_t)(end - p));
			l = nl ? (size_t)(nl - p) : (size_t)(end - p);
			next = nl ? nl + 1 : end;
			while (l && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t'))
				l--;
			if (l >= 5 && memcmp(p, "-----", 5) == 0)
				break;	/* the tail line */
			if (!body) {
				body = l == 0;
				p = next;
				continue;
			}
			if (l == 5 && p[0] == '=' && p[1] != '=')
				;	/* the CRC-24 line: gpgv checks the packets themselves */
			else if (l)
				memcpy(b64 + bl, p, l), bl += l;
			p = next;
		}
		if (p >= end || !body || bl % 4) {
			free(out);
			free(b64);
			return -EBADMSG;
		}
		{
			int got = bl ? EVP_DecodeBlock(out + n, (const unsigned char *)b64, (int)bl) : 0;

			if (got < 0) {
				free(out);
				free(b64);
				return -EBADMSG;
			}
			/* EVP_DecodeBlock counts the '=' padding as zero bytes */
			if (bl >= 1 && b64[bl - 1] == '=')
				got--;
			if (bl >= 2 && b64[bl - 2] == '=')
				got--;
			n += (size_t)got;
		}
		blocks++;
		p = next;
	}
	free(b64);
	if (!blocks || !n) {
		free(out);
		return -EBADMSG;
	}
	*ret = out;
	*ret_len = n;
	return 0;
}

/* @len bytes into a new memfd at offset 0; sealed. Return: the fd, or -errno. */
static int memfd_of(const char *name, const uint8_t *p, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, p + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			close(fd);
			return -e;
		}
		off += (size_t)w;
	}
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	if (lseek(fd, 0, SEEK_SET) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * The keyring @name as gpgv is given it: its name ("./NAME" for a name
 * without a slash, which gpgv would look for in its home directory), or
 * for an armored one "/dev/fd/N" of a memfd holding its packets (*@ret_fd).
 * Return: 0; -errno (diag names the keyring).
 */
static int keyring_arg(const char *name, char **ret_arg, int *ret_fd, struct vg_diag *diag)
{
	uint8_t *data = NULL, *bin = NULL;
	size_t len = 0, blen = 0;
	int fd, r;

	*ret_fd = -1;
	if (asprintf(ret_arg, "%s%s", strchr(name, '/') ? "" : "./", name) < 0) {
		*ret_arg = NULL;
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	fd = open(*ret_arg, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return vg_diag_set(diag, -errno, "keyring %s: %s", name, strerror(errno));
	r = vg_fd_read_file(fd, KEYRING_MAX, &data, &len);
	close(fd);
	if (r < 0)
		return vg_diag_set(diag, r, "keyring %s: %s", name,
				   r == -EFBIG ? "larger than 16 MiB" : strerror(-r));
	if (!armored(data, len)) {
		free(data);
		return 0;
	}
	r = vg_trust_dearmor(data, len, &bin, &blen);
	free(data);
	if (r < 0)
		return vg_diag_set(diag, r, "keyring %s: %s", name,
				   r == -ENOMEM ? "out of memory" : "malformed ASCII armor");
	fd = memfd_of("vigil-keyring", bin, blen);
	free(bin);
	if (fd < 0)
		return vg_diag_set(diag, fd, "keyring %s: memfd: %s", name, strerror(-fd));
	free(*ret_arg);
	if (asprintf(ret_arg, "/dev/fd/%d", fd) < 0) {
		*ret_arg = NULL;
		close(fd);
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	}
	*ret_fd = fd;
	return 0;
}

/* the whole content of the memfd @fd, NUL-terminated; NULL when empty or on failure */
static char *slurp(int fd)
{
	struct stat st;
	char *s;
	ssize_t n;

	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (size_t)st.st_size > GPGV_OUT_MAX)
		return NULL;
	s = malloc((size_t)st.st_size + 1);
	if (!s)
		return NULL;
	n = pread(fd, s, (size_t)st.st_size, 0);
	if (n < 0) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

/* a hex fingerprint @want ("FPR" or "FPR!") against the signer's @fpr and its primary @primary */
static bool fpr_match(const char *want, const char *fpr, const char *primary)
{
	size_t wl = strlen(want);
	bool exact = wl && want[wl - 1] == '!';

	if (exact)
		wl--;
	if (wl == strlen(fpr) && strncasecmp(want, fpr, wl) == 0)
		return true;
	return !exact && primary && wl == strlen(primary) && strncasecmp(want, primary, wl) == 0;
}

/* what the status lines say */
struct verdict {
	unsigned int valid, bad, accepted;	/* signatures */
	char signer[80];			/* a valid signer not accepted (fingerprints) */
};

/*
 * gpgv's --status-fd lines, signature by signature (NEWSIG starts one):
 * VALIDSIG counts unless the same signature is EXPKEYSIG, REVKEYSIG or
 * EXPSIG; BADSIG always counts against.
 */
static void judge_status(char *status, const char *const *fprs, size_t nfpr, struct verdict *v)
{
	char fpr[80] = "", primary[80] = "", *save = NULL;
	bool valid = false, worthless = false;

	memset(v, 0, sizeof(*v));
	for (char *l = strtok_r(status, "\n", &save);; l = strtok_r(NULL, "\n", &save)) {
		if (!l || strncmp(l, "[GNUPG:] NEWSIG", 15) == 0) {
			if (valid && !worthless) {
				bool ok = nfpr == 0;

				v->valid++;
				for (size_t i = 0; !ok && i < nfpr; i++)
					ok = fpr_match(fprs[i], fpr, primary[0] ? primary : NULL);
				if (ok)
					v->accepted++;
				else
					snprintf(v->signer, sizeof(v->signer), "%s", fpr);
			}
			valid = worthless = false;
			fpr[0] = primary[0] = '\0';
			if (!l)
				break;
			continue;
		}
		if (strncmp(l, "[GNUPG:] VALIDSIG ", 18) == 0) {
			/* VALIDSIG FPR DATE TS EXPIRE VER RESERVED PKALGO HASHALGO CLASS [PRIMARY] */
			char f[10][80] = { 0 };
			int n = sscanf(l + 18, "%79s %79s %79s %79s %79s %79s %79s %79s %79s %79s", f[0],
				       f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]);

			if (n >= 1) {
				valid = true;
				snprintf(fpr, sizeof(fpr), "%s", f[0]);
				if (n == 10)
					snprintf(primary, sizeof(primary), "%s", f[9]);
			}
		} else if (strncmp(l, "[GNUPG:] BADSIG ", 16) == 0) {
			v->bad++;
		} else if (strncmp(l, "[GNUPG:] EXPKEYSIG ", 19) == 0 ||
			   strncmp(l, "[GNUPG:] REVKEYSIG ", 19) == 0 ||
			   strncmp(l, "[GNUPG:] EXPSIG ", 16) == 0) {
			worthless = true;
		}
	}
}

/*
 * gpgv's reason, from its messages: the "BAD signature" line when there
 * is one, else the last line (the failing signature's), each without
 * "gpgv: ", with the key of the "using ... key" line before it.
 */
static void reason(const char *msgs, char *out, size_t cap)
{
	char key[96] = "", last[200] = "", bad[200] = "", lkey[96] = "", bkey[96] = "";
	const char *p = msgs;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char line[200];
		const char *u;

		if (l >= sizeof(line))
			l = sizeof(line) - 1;
		memcpy(line, p, l);
		line[l] = '\0';
		p = nl ? nl + 1 : NULL;
		{
			char *s = strncmp(line, "gpgv: ", 6) == 0 ? line + 6 : line;

			while (*s == ' ')
				s++;
			if (!*s)
				continue;
			/* "using RSA key FPR": the key of the signature being checked */
			u = strncmp(s, "using ", 6) == 0 ? strstr(s, " key ") : NULL;
			if (u) {
				snprintf(key, sizeof(key), "%.*s%s", (int)(u - s - 6), s + 6, u);
				continue;
			}
			if (strncmp(s, "Signature made", 14) == 0)
				continue;
			snprintf(last, sizeof(last), "%s", s);
			snprintf(lkey, sizeof(lkey), "%s", key);
			if (strncmp(s, "BAD signature", 13) == 0) {
				snprintf(bad, sizeof(bad), "%s", s);
				snprintf(bkey, sizeof(bkey), "%s", key);
			}
		}
	}
	if (bad[0])
		snprintf(out, cap, "%s%s%s%s", bad, bkey[0] ? " (" : "", bkey, bkey[0] ? ")" : "");
	else if (last[0])
		snprintf(out, cap, "%s%s%s%s", last, lkey[0] ? " (" : "", lkey,
			 lkey[0] ? ")" : "");
	else
		snprintf(out, cap, "no message");
}

int vg__trust_gpgv(const char *gpgv, const char *const *keyrings, size_t nkr,
		   const char *const *fprs, size_t nfpr, const uint8_t *data, size_t len,
		   char **ret_out, size_t *ret_len, struct vg_diag *diag)
{
	char *argv[2 * VG_TRUST_MAX_KEYRINGS + 10];
	char *kr[VG_TRUST_MAX_KEYRINGS] = { 0 };
	int krfd[VG_TRUST_MAX_KEYRINGS];
	char statfd[16];
	size_t na = 0;
	char *const envp[] = { (char *)"LC_ALL=C", (char *)"PATH=/usr/bin:/bin",
			       (char *)"HOME=/nonexistent", NULL };
	int in = -1, err = memfd_create("vigil-gpgv-err", MFD_CLOEXEC);
	int st = memfd_create("vigil-gpgv-status", MFD_CLOEXEC);
	int pfd[2] = { -1, -1 };
	char *out = NULL, *status = NULL, *msgs = NULL;
	size_t n = 0, cap = 0;
	pid_t pid = -1;
	int wst = 0, r = 0;

	for (size_t i = 0; i < VG_TRUST_MAX_KEYRINGS; i++)
		krfd[i] = -1;
	if (nkr == 0 || nkr > VG_TRUST_MAX_KEYRINGS) {
		r = vg_diag_set(diag, -EINVAL, "%zu keyrings (1 to %d)", nkr, VG_TRUST_MAX_KEYRINGS);
		goto out;
	}
	if (err < 0 || st < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		r = vg_diag_set(diag, -errno, "cannot run gpgv: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < nkr; i++) {
		r = keyring_arg(keyrings[i], &kr[i], &krfd[i], diag);
		if (r < 0)
			goto out;
	}
	in = memfd_of("vigil-inrelease", data, len);
	if (in < 0) {
		r = vg_diag_set(diag, in, "cannot run gpgv: %s", strerror(-in));
		in = -1;
		goto out;
	}
	snprintf(statfd, sizeof(statfd), "%d", st);
	argv[na++] = (char *)"gpgv";
	argv[na++] = (char *)"--status-fd";
	argv[na++] = statfd;
	for (size_t i = 0; i < nkr; i++) {
		argv[na++] = (char *)"--keyring";
		argv[na++] = kr[i];
	}
	argv[na++] = (char *)"--output";
	argv[na++] = (char *)"-";
	argv[na++] = (char *)"-";
	argv[na] = NULL;
	pid = fork();
	if (pid < 0) {
		r = vg_diag_set(diag, -errno, "cannot run gpgv: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* dup2 clears FD_CLOEXEC on the copies; the status and key fds keep their numbers */
		if (dup2(in, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(err, 2) < 0 ||
		    fcntl(st, F_SETFD, 0) < 0)
			_exit(127);
		for (size_t i = 0; i < nkr; i++)
			if (krfd[i] >= 0 && fcntl(krfd[i], F_SETFD, 0) < 0)
				_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execve(gpgv, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	pfd[1] = -1;
	for (;;) {
		ssize_t rd;

		if (cap - n < 65536) {
			char *nb;

			if (cap >= GPGV_OUT_MAX) {
				r = vg_diag_set(diag, -EFBIG, "gpgv's output is larger than %zu MiB",
						GPGV_OUT_MAX >> 20);
				break;
			}
			nb = realloc(out, cap ? cap * 2 : 262144);
			if (!nb) {
				r = vg_diag_set(diag, -ENOMEM, "out of memory");
				break;
			}
			out = nb;
			cap = cap ? cap * 2 : 262144;
		}
		rd = read(pfd[0], out + n, cap - n - 1);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd <= 0)
			break;
		n += (size_t)rd;
	}
	close(pfd[0]);
	pfd[0] = -1;
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		goto out;
	if (WIFEXITED(wst) && WEXITSTATUS(wst) == 127) {
		r = vg_diag_set(diag, -ENOENT, "cannot run %s", gpgv);
		goto out;
	}
	status = slurp(st);
	msgs = slurp(err);
	{
		struct verdict v;
		char why[300];

		judge_status(status ? status : (char[]){ "" }, fprs, nfpr, &v);
		/* exit 0 or 2 (a key missing); 1 is a bad signature, a signal never good */
		if (!WIFEXITED(wst) || WEXITSTATUS(wst) == 1 || v.bad || !v.accepted) {
			if (v.valid && !v.bad && !v.accepted)
				snprintf(why, sizeof(why), "signed by %s, not by a key the source's "
					 "Signed-By names", v.signer);
			else
				reason(msgs ? msgs : "", why, sizeof(why));
			r = vg_diag_set(diag, -EKEYREJECTED, "signature not verified by gpgv: %s", why);
			goto out;
		}
	}
	out[n] = '\0';
	*ret_out = out;
	*ret_len = n;
	out = NULL;
out:
	free(out);
	free(status);
	free(msgs);
	for (size_t i = 0; i < VG_TRUST_MAX_KEYRINGS; i++) {
		free(kr[i]);
		if (krfd[i] >= 0)
			close(krfd[i]);
	}
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (in >= 0)
		close(in);
	if (err >= 0)
		close(err);
	if (st >= 0)
		close(st);
	return r;
}
