// SPDX-License-Identifier: MIT
/*
 * keyload.c - what every command taking an HMAC key shares: loading any
 * key file (raw, passphrase, TPM-sealed), reading a passphrase (file,
 * $VIGIL_PASSPHRASE_FILE, or the terminal with echo off) and opening the
 * TPM (--tcti, else $VIGIL_TCTI, else the default). Passphrases live in
 * stack buffers that are wiped before return, and are never printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "vigil/tpm.h"
#include "tcti.h"

/* Read up to the first newline of @fd into @buf. Return: length, or -1 (errno). */
static int read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = read(fd, buf + n, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0 || buf[n] == '\n')
			break;
		n++;
	}
	if (n == cap) {
		errno = E2BIG;
		return -1;
	}
	if (n && buf[n - 1] == '\r')
		n--;
	return (int)n;
}

static int tty_read(int fd, const char *prompt, char *buf, size_t cap)
{
	struct termios old, quiet;
	int n, e;

	if (tcgetattr(fd, &old) < 0)
		return -1;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	if (write(fd, prompt, strlen(prompt)) < 0 || tcsetattr(fd, TCSAFLUSH, &quiet) < 0)
		return -1;
	n = read_line(fd, buf, cap);
	e = errno;
	tcsetattr(fd, TCSAFLUSH, &old);
	if (write(fd, "\n", 1) < 0) {
		/* the newline is cosmetic */
	}
	errno = e;
	return n;
}

int cli_read_passphrase(const struct cli_keyopts *ko, const char *what, bool confirm,
			char *buf, size_t cap)
{
	const char *file = ko && ko->passphrase_file ? ko->passphrase_file : getenv("VIGIL_PASSPHRASE_FILE");
	char prompt[512], again[1024];
	int fd, n, m;

	if (file && *file) {
		fd = strcmp(file, "-") == 0 ? 0 : open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_file_err(file, "passphrase file: %s", strerror(errno));
			return -1;
		}
		n = read_line(fd, buf, cap);
		if (n < 0)
			cli_file_err(file, "passphrase file: %s", errno == E2BIG ? "line too long" : strerror(errno));
		else if (n == 0)
			cli_file_err(file, "passphrase file: empty passphrase");
		if (fd)
			close(fd);
		if (n <= 0)
			OPENSSL_cleanse(buf, cap);
		return n > 0 ? n : -1;
	}
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		cli_err("%s needs a passphrase: give --passphrase-file FILE (or $VIGIL_PASSPHRASE_FILE), "
			"or run on a terminal", what);
		return -1;
	}
	snprintf(prompt, sizeof(prompt), "Passphrase for %s: ", what);
	n = tty_read(fd, prompt, buf, cap);
	if (n > 0 && confirm) {
		m = tty_read(fd, "Again: ", again, n + 1 < (int)sizeof(again) ? (size_t)n + 1 : sizeof(again));
		if (m != n || memcmp(again, buf, (size_t)n) != 0) {
			cli_err("the passphrases differ");
			n = -2;
		}
		OPENSSL_cleanse(again, sizeof(again));
	}
	close(fd);
	if (n == -1)
		cli_err("reading the passphrase from the terminal: %s", strerror(errno));
	else if (n == 0)
		cli_err("empty passphrase");
	if (n <= 0)
		OPENSSL_cleanse(buf, cap);
	return n > 0 ? n : -1;
}

int cli_tpm_open(const char *tcti, struct vg_tpm **ret)
{
	struct vg_diag d = { 0 };

	/* tpm2-tss prints TPM errors itself; vigil reports them once, decoded */
	setenv("TSS2_LOG", "all+none", 0);
	if (vg_tpm_open(vg_prog_tcti(tcti), ret, &d) < 0) {
		cli_err("%s", d.msg);
		return -1;
	}
	return 0;
}

struct pass_arg {
	const struct cli_keyopts *ko;
	bool failed;
};

static int pass_cb(void *arg, const char *path, char *buf, size_t cap)
{
	struct pass_arg *a = arg;
	int n = cli_read_passphrase(a->ko, path, false, buf, cap);

	if (n < 0)
		a->failed = true;
	return n < 0 ? -ENOKEY : n;
}

int cli_load_hmac_key_opts(const char *path, const struct cli_keyopts *ko, struct vg_hmac_key *key)
{
	struct pass_arg pa = { .ko = ko };
	struct vg_key_source src = { .tcti = vg_prog_tcti(ko ? ko->tcti : NULL), .passphrase = pass_cb, .arg = &pa };
	struct vg_diag d = { 0 };
	enum vg_key_kind kind = VG_KEY_RAW;

	setenv("TSS2_LOG", "all+none", 0);
	if (vg_hmac_key_load(path, &src, key, &kind, &d) < 0) {
		if (!pa.failed)
			cli_err("HMAC key %s", d.msg);
		return -1;
	}
	return 0;
}

int cli_load_hmac_key(const char *path, struct vg_hmac_key *key)
{
	return cli_load_hmac_key_opts(path, NULL, key);
}
