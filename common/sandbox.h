/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - the one way a daemon's process confines itself, entered once
 * after every descriptor it needs is open and its libraries are
 * initialised, in this order, any failure fatal to the caller:
 *
 *   1. become an unprivileged user (when asked): no supplementary group,
 *      real, effective and saved ids the user's, no capability left,
 *      setuid(0) refused: each checked after the change;
 *   2. PR_SET_NO_NEW_PRIVS;
 *   3. Landlock with every right of the running kernel's ABI handled
 *      (filesystem rights of ABI 1-5; TCP bind and connect of ABI 4
 *      unless the process must reach ports nobody can list; the scopes of
 *      ABI 6: abstract unix sockets and signals outside the domain), and
 *      only what the spec allows: reads beneath some directories, a few
 *      files, /dev, TCP ports to bind or connect to;
 *   4. a libseccomp allow-list per process role whose default kills the
 *      process, with conditional allows and refusals (an errno instead
 *      of the kill) the role names.
 *
 * Which roles exist, and what each allows, is the program's: each program
 * declares its processes in one table (proc.h) and a role per sandboxed
 * process. This file knows no program.
 */
#ifndef VIGIL_COMMON_SANDBOX_H
#define VIGIL_COMMON_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A system call beside the allow-list: allowed on a condition, or refused with an errno. */
struct sandbox_rule {
	const char *name;		/* libseccomp's name; one this architecture lacks is skipped */
	int err;			/* 0: allowed when the condition holds; else refused with it */
	int arg;			/* -1: no condition; else this argument (0..5) ... */
	uint64_t value;			/* ... == @value, or */
	uint64_t mask;			/* non-zero: (argument & @mask) == @value (an int
					 * argument: 0xffffffff, as the kernel reads it) */
	bool ne;			/* instead: the argument != @value (vigild's appraiser:
					 * any descriptor but the fanotify group's) */
};

/* A process role's system calls: a shared base list, its own, its rules. */
struct sandbox_role {
	const char *name;
	const char *const *base;	/* NULL-terminated, or NULL */
	const char *const *allow;	/* NULL-terminated, or NULL */
	const struct sandbox_rule *rules;
	size_t nrules;
};

/*
 * The system directories a program reads to run (libraries, its
 * configuration, CA bundles, the resolver's files, /proc, /sys, /run):
 * a read_dirs list (NULL-terminated) for a process that reads nothing
 * else of the system.
 */
extern const char *const sandbox_system_dirs[];

/*
 * A process that serves and asks for HTTP (libmicrohttpd, libcurl, the
 * resolver, OpenSSL/GnuTLS, threads), reading files Landlock allows:
 * its calls, and its rules: socket(2) for IPv4, IPv6 and netlink (the
 * resolver's interface check) only, a new AF_UNIX socket refused
 * (EACCES: a local database's or daemon's socket cannot be reached;
 * Landlock does not govern connect(2) on a path; glibc's nscd lookup
 * goes on without it), any other family killing the process; the domain
 * compared in its low 32 bits, as the kernel reads an int (a domain
 * with high bits set is no way round); io_uring refused (ENOSYS: its
 * operations pass beside the filter), clone3 refused (ENOSYS: glibc then
 * uses clone, whose flags the filter sees) and clone only for a thread;
 * prctl only to set or read a thread's name.
 */
extern const char *const sandbox_http_calls[];
#define SANDBOX_HTTP_NRULES 9
extern const struct sandbox_rule sandbox_http_rules[SANDBOX_HTTP_NRULES];

struct sandbox {
	const char *name;		/* the process, in messages */
	bool become;			/* step 1, as @uid/@gid (never 0) */
	uid_t uid;
	gid_t gid;
	bool single_thread;		/* refuse (-EBUSY) when the process has more than one thread */

	bool landlock;			/* step 3 */
	bool landlock_optional;		/* a kernel without Landlock: go on (Return: 1) */
	const char *const *read_dirs;	/* NULL-terminated: read and execute beneath each */
	const char *except;		/* a directory whose ancestors in @read_dirs are left out */
	const char *const *read_files;	/* NULL-terminated: each may be read (files or directories) */
	bool dev;			/* /dev: read, write and ioctl its files (null, urandom, a tty) */
	bool self_exe;			/* our own executable readable (a sanitizer's symbolizer) */
	bool net_any;			/* TCP not handled: the process reaches ports it cannot list */
	const uint16_t *bind_ports, *connect_ports;	/* else: these only (0 ends each list) */

	const struct sandbox_role *seccomp;	/* step 4; NULL: none */
	void (*probe)(void);		/* test builds: called between steps 3 and 4 (a role
					 * that refuses open(2) hides Landlock's answer to
					 * sandbox_test_probe from a later probe) */
};

/*
 * sandbox_enter - confine the calling process as @sb says.
 * Return: 0; 1 when the kernel has no Landlock and @sb->landlock_optional
 * (the other steps applied); -errno with what failed in @msg (@cap bytes),
 * a container's system call filter named when it is the likely cause.
 */
int sandbox_enter(const struct sandbox *sb, char *msg, size_t cap);

/*
 * sandbox_test_probe - for test builds only (never called by a shipped
 * one): with $VG_TEST_PROBE_WRITE set, try to create a file in that
 * directory and say through vlog what happened ("PROG: probe: write DIR:
 * Permission denied" under Landlock, whatever the uid), the file removed
 * again; tests/cli/t0535 reads it as the process's Landlock state.
 */
void sandbox_test_probe(void);

/* Return: the running kernel's Landlock ABI version, or -errno. */
int sandbox_landlock_abi(void);

/*
 * What every role that runs the sanitizers' runtime adds to its list (its
 * report written, the process ended; the leak checker's stop of the
 * world at exit): NULL-terminated, empty in a build without sanitizers.
 */
extern const char *const sandbox_sanitizer_calls[];

#endif
