// SPDX-License-Identifier: MIT
/*
 * bench/coldparts.c - what each step vigild adds to a first access costs
 * on this machine, timed alone (bench/cold-parts runs it):
 *   coldparts FILE N
 * FILE is a labeled file (security.ima, security.evm) of 4 KiB on the
 * filesystem under test. Each step is the same system call or
 * computation vigild's monitor or appraiser makes on a cold open
 * (daemon/events.c, daemon/worker.c), repeated N times; one line per
 * step: "name median_us p99_us". The hand-off is a descriptor sent over
 * a socketpair to a second process on the same CPU (as vigild places its
 * appraisers) and received there: the time from before the sendmsg() to
 * after the receiver's recvmsg() returns, read off one clock. It is timed
 * three ways: a datagram with the descriptor ("handoff"), the same
 * without it ("handoff_nofd": what passing the descriptor costs), and
 * over SOCK_SEQPACKET, vigild's socket type ("handoff_seqpacket").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static void report(const char *name, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%-22s %7.2f %7.2f\n", name, t[n / 2], t[n * 99 / 100]);
}

static void die(const char *what)
{
	fprintf(stderr, "coldparts: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s) < 0)
		die("sched_setaffinity");
}

/* Each step on its own: @fd open on FILE; @t room for @n samples. */
static void steps(const char *file, int fd, int n, double *t)
{
	char buf[4096], list[1024], val[1100];
	struct stat st;
	int gen;

#define STEP(name, expr)                                              \
	do {                                                          \
		for (int i = 0; i < n; i++) {                         \
			double t0 = now_us();                         \
			if ((expr) < 0)                               \
				die(name);                            \
			t[i] = now_us() - t0;                         \
		}                                                     \
		report(name, t, n);                                   \
	} while (0)

	STEP("fstat", fstat(fd, &st));
	STEP("F_SETSIG", fcntl(fd, F_SETSIG, SIGRTMIN + 1));
	/* a lease is taken on a fresh descriptor, as on the event's */
	for (int i = 0; i < n; i++) {
		int f = open(file, O_RDONLY);
		double t0;

		if (f < 0)
			die(file);
		t0 = now_us();
		if (fcntl(f, F_SETLEASE, F_RDLCK) < 0)
			die("F_SETLEASE");
		t[i] = now_us() - t0;
		close(f);
	}
	report("F_SETLEASE", t, n);
	STEP("getxattr_ima", fgetxattr(fd, "security.ima", val, sizeof(val)));
	STEP("listxattr", flistxattr(fd, list, sizeof(list)));
	STEP("getxattr_evm", fgetxattr(fd, "security.evm", val, sizeof(val)));
	STEP("GETVERSION", ioctl(fd, FS_IOC_GETVERSION, &gen));
	STEP("pread_4k", pread(fd, buf, sizeof(buf), 0));
	{
		EVP_MD_CTX *c = EVP_MD_CTX_new();
		const EVP_MD *md = EVP_sha256();
		unsigned char out[64];
		unsigned int ol;

		STEP("sha256_4k", (EVP_DigestInit_ex(c, md, NULL) == 1 &&
				      EVP_DigestUpdate(c, buf, sizeof(buf)) == 1 &&
				      EVP_DigestFinal_ex(c, out, &ol) == 1) ? 0 : -1);
		EVP_MD_CTX_free(c);
	}
	{
		EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
		OSSL_PARAM p[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
				   OSSL_PARAM_construct_end() };
		unsigned char key[32] = { 1 }, out[64];
		size_t ol;

		if (!c || EVP_MAC_init(c, key, sizeof(key), p) != 1)
			die("HMAC");
		/* the EVM HMAC: the xattr values and the inode's metadata (~120 bytes) */
		STEP("hmac_evm", (EVP_MAC_init(c, NULL, 0, NULL) == 1 &&
					 EVP_MAC_update(c, (unsigned char *)val, 34) == 1 &&
					 EVP_MAC_update(c, (unsigned char *)buf, 88) == 1 &&
					 EVP_MAC_final(c, out, &ol, sizeof(out)) == 1) ? 0 : -1);
		EVP_MAC_CTX_free(c);
		EVP_MAC_free(mac);
	}
}

/* The hand-off: a descriptor to a second process on the same CPU. */
static void handoff(int fd, int n, double *t, int type, const char *name)
{
	int sv[2];
	double *shared = mmap(NULL, sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t p;

	if (shared == MAP_FAILED || socketpair(AF_UNIX, type, 0, sv) < 0)
		die("socketpair");
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {	/* the receiver: recvmsg, stamp, close, answer */
		close(sv[0]);
		for (;;) {
			char c, cbuf[CMSG_SPACE(sizeof(int))];
			struct iovec iov = { .iov_base = &c, .iov_len = 1 };
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
					    .msg_controllen = sizeof(cbuf) };
			int got;

			if (recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC) <= 0)
				_exit(0);
			*shared = now_us();
			if (CMSG_FIRSTHDR(&m)) {
				memcpy(&got, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
				close(got);
			}
			if (write(sv[1], &c, 1) != 1)
				_exit(1);
		}
	}
	close(sv[1]);
	for (int i = 0; i < n; i++) {
		char c = 'x', cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov = { .iov_base = &c, .iov_len = 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		double t0;

		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &fd, sizeof(int));
		if (fd < 0) {
			m.msg_control = NULL;
			m.msg_controllen = 0;
		}
		t0 = now_us();
		if (sendmsg(sv[0], &m, 0) != 1 || read(sv[0], &c, 1) != 1)
			die("hand-off");
		t[i] = *shared - t0;
	}
	report(name, t, n);
	close(sv[0]);
	kill(p, SIGKILL);	/* a datagram socket has no end of file */
	waitpid(p, NULL, 0);
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[2]) : 0, fd;
	double *t;

	if (n < 100) {
		fprintf(stderr, "usage: coldparts FILE N (N >= 100)\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	t = calloc((size_t)n, sizeof(*t));
	if (fd < 0 || !t)
		die(argv[1]);
	pin(0);
	printf("%-22s %7s %7s\n", "step", "median", "p99");
	steps(argv[1], fd, n, t);
	handoff(fd, n, t, SOCK_DGRAM, "handoff");
	handoff(-1, n, t, SOCK_DGRAM, "handoff_nofd");
	handoff(fd, n, t, SOCK_SEQPACKET, "handoff_seqpacket");
	return 0;
}
