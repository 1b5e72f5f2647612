/* SPDX-License-Identifier: MIT */
/*
 * log.h - the daemons' diagnostic lines (vigild, vigil-agent,
 * vigil-verifier): one line per message on stderr, in one write(2).
 *
 * When stderr is the systemd journal ($JOURNAL_STREAM is "DEV:INO" and
 * names stderr's st_dev:st_ino, the check sd_journal_stream_fd(3) and
 * systemd.exec(5) document), each line starts with the kernel-style
 * priority prefix of sd-daemon.h (`<3>` error, `<4>` warning, `<6>`
 * info) and carries no program name (the journal records it). Otherwise
 * a line is `PROGRAM: MESSAGE`, as it always was. The audit trail and
 * anything a program prints for a tool to parse are not diagnostics and
 * do not come here.
 */
#ifndef VIGIL_COMMON_LOG_H
#define VIGIL_COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* syslog(3) / sd-daemon.h priorities */
enum vlog_prio { VLOG_ERR = 3, VLOG_WARNING = 4, VLOG_INFO = 6 };

/*
 * vlog_init - name the program (a static string, e.g. "vigild") and
 * decide once, from $JOURNAL_STREAM and fstat(2), whether stderr is the
 * journal. Messages logged before it carry program_invocation_short_name.
 */
void vlog_init(const char *prog);

/* Return: true when lines get priority prefixes (stderr is the journal). */
bool vlog_journal(void);

/*
 * vlog_native - with @on, and while stderr is the journal and vjournal_open
 * has connected (journal.h), send each message as a native journal entry
 * that is dropped, never waited for, when the journal is not reading: for
 * a thread that must not block (vigild's). The other daemons write their
 * stream as before.
 */
void vlog_native(bool on);

/* vlog - one message at @prio (VLOG_*): printf-style, no trailing newline. */
void vlog(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vlogv(int prio, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define vlog_err(...)  vlog(VLOG_ERR, __VA_ARGS__)
#define vlog_warn(...) vlog(VLOG_WARNING, __VA_ARGS__)
#define vlog_info(...) vlog(VLOG_INFO, __VA_ARGS__)

/*
 * vlog_format - the bytes vlog writes for @msg (pure, for tests): in
 * @buf, at most @cap bytes with the final newline; a message longer
 * than the buffer is cut. A message of several lines gets the prefix on
 * each. Return: the length written.
 */
size_t vlog_format(char *buf, size_t cap, bool journal, int prio, const char *prog,
		   const char *msg);

#endif
