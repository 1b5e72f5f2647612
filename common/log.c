// SPDX-License-Identifier: MIT
/*
 * log.c - the daemons' diagnostic lines, journal-aware (log.h).
 *
 * A message is formatted into one buffer and written with one write(2),
 * so lines from threads (the verifier's) and from processes that share
 * stderr (vigild's appraisers) never interleave within a line. The
 * journal check runs once, in vlog_init: a program that later moves
 * stderr elsewhere calls it again. Nothing here allocates.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "log.h"

static const char *log_prog;
static bool log_journal, log_native;

void vlog_init(const char *prog)
{
	const char *js = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;
	int n = 0;

	log_prog = prog;
	log_journal = false;
	/* "DEV:INO", both decimal, nothing after */
	if (js && sscanf(js, "%ju:%ju%n", &dev, &ino, &n) == 2 && js[n] == '\0' &&
	    fstat(STDERR_FILENO, &st) == 0 &&
	    (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino)
		log_journal = true;
}

bool vlog_journal(void)
{
	return log_journal;
}

void vlog_native(bool on)
{
	log_native = on;
}

static const char *prio_text(int prio)
{
	static const char *const t[] = { "0", "1", "2", "3", "4", "5", "6", "7" };

	return prio >= 0 && prio <= 7 ? t[prio] : "6";
}

static size_t put(char *buf, size_t cap, size_t at, const char *s, size_t n)
{
	if (at >= cap)
		return at;
	if (n > cap - at)
		n = cap - at;
	memcpy(buf + at, s, n);
	return at + n;
}

size_t vlog_format(char *buf, size_t cap, bool journal, int prio, const char *prog,
		   const char *msg)
{
	char pre[80];
	size_t at = 0, plen;
	const char *p = msg;

	if (cap < 2)
		return 0;
	if (journal)
		plen = (size_t)snprintf(pre, sizeof(pre), "<%d>", prio < 0 || prio > 7 ? 6 : prio);
	else
		plen = (size_t)snprintf(pre, sizeof(pre), "%s: ", prog ? prog : "vigil");
	if (plen >= sizeof(pre))
		plen = sizeof(pre) - 1;
	cap--;		/* room for the final newline, always */
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		at = put(buf, cap, at, pre, plen);
		at = put(buf, cap, at, p, n);
		if (!nl || nl[1] == '\0')
			break;
		at = put(buf, cap, at, "\n", 1);
		p = nl + 1;
	}
	buf[at++] = '\n';
	return at;
}

void vlogv(int prio, const char *fmt, va_list ap)
{
	char msg[4096], line[8192];
	int saved = errno;
	size_t n, off = 0;

	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_native && log_journal && vjournal_enabled()) {
		const struct vjournal_field f[] = {
			{ "PRIORITY", prio_text(prio), (size_t)-1 },
			{ "SYSLOG_IDENTIFIER", log_prog ? log_prog : program_invocation_short_name, (size_t)-1 },
			{ "MESSAGE", msg, (size_t)-1 },
		};

		(void)vjournal_send(f, sizeof(f) / sizeof(f[0]));
		errno = saved;
		return;
	}
	n = vlog_format(line, sizeof(line), log_journal, prio,
			log_prog ? log_prog : program_invocation_short_name, msg);
	while (off < n) {
		ssize_t w = write(STDERR_FILENO, line + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved;
}

void vlog(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogv(prio, fmt, ap);
	va_end(ap);
}
