// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
/*
 * bench/split_listener.c - the floor listener (noop_listener.c) in
 * vigild's shape, to tell what vigild's own code costs from what its
 * shape does: a monitor process reads the events and hands each
 * descriptor (SCM_RIGHTS over a SOCK_SEQPACKET pair) to a second process
 * placed on the monitor's CPU, which writes the allow to the group and
 * then replies; the monitor waits in epoll for both, as vigild's does.
 *   split_listener PATH          the hand-off alone
 *   split_listener PATH work     and vigild's system calls and crypto for
 *                                a cold open: fstat, F_SETSIG, F_SETLEASE
 *                                in the monitor; security.ima, the
 *                                listing, security.evm, the generation,
 *                                4 KiB of content, SHA-256 and an HMAC
 *                                in the second process
 * No checks, no policy, no cache, no privileges dropped: it allows all.
 * Prints "ready" on stderr when the mark is set.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

struct req {
	int answer_fd;	/* the event's number in the monitor: names it to the group */
};

/* The second process: the appraiser's part. */
static int appraiser(int fan, int sock, bool work)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *mc = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM p[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
			   OSSL_PARAM_construct_end() };
	unsigned char key[32] = { 1 };

	if (!md || !mc || EVP_MAC_init(mc, key, sizeof(key), p) != 1)
		return 1;
	for (;;) {
		char cbuf[CMSG_SPACE(sizeof(int))], buf[4096], list[1024], ima[1100], evm[1100];
		unsigned char out[64];
		unsigned int ol;
		size_t ml;
		struct req q;
		struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c;
		int fd, gen;

		if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(q))
			return 0;
		c = CMSG_FIRSTHDR(&m);
		if (!c || c->cmsg_type != SCM_RIGHTS)
			return 1;
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if (work) {
			ssize_t li = fgetxattr(fd, "security.ima", ima, sizeof(ima));
			ssize_t ll = flistxattr(fd, list, sizeof(list));
			ssize_t le = fgetxattr(fd, "security.evm", evm, sizeof(evm));
			ssize_t n;

			if (li < 0 || ll < 0 || le < 0 || ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
				return 1;
			n = pread(fd, buf, sizeof(buf), 0);
			if (n < 0 || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1 ||
			    EVP_DigestUpdate(md, buf, (size_t)n) != 1 || EVP_DigestFinal_ex(md, out, &ol) != 1 ||
			    EVP_MAC_init(mc, NULL, 0, NULL) != 1 || EVP_MAC_update(mc, (unsigned char *)ima, (size_t)li) != 1 ||
			    EVP_MAC_update(mc, (unsigned char *)&gen, sizeof(gen)) != 1 ||
			    EVP_MAC_final(mc, out, &ml, sizeof(out)) != 1)
				return 1;
		}
		struct fanotify_response r = { .fd = q.answer_fd, .response = FAN_ALLOW };

		if (write(fan, &r, sizeof(r)) < 0 || write(sock, &q, sizeof(q)) != (ssize_t)sizeof(q))
			return 1;
		close(fd);
	}
}

int main(int argc, char **argv)
{
	char buf[8192] __attribute__((aligned(8)));
	bool work = argc == 3 && strcmp(argv[2], "work") == 0;
	struct epoll_event ev[2];
	int fan, sv[2], ep, cpu = -1;
	pid_t child;

	if (argc != 2 && !work)
		return 2;
	fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				     FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM, AT_FDCWD, argv[1]) < 0) {
		perror("fanotify");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		return appraiser(fan, sv[1], work);
	}
	close(sv[1]);
	signal(SIGRTMIN + 1, SIG_IGN);	/* a lease break: the lease goes with the descriptor at the reply */
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev[0] = (struct epoll_event){ .events = EPOLLIN, .data.fd = fan };
	ev[1] = (struct epoll_event){ .events = EPOLLIN, .data.fd = sv[0] };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fan, &ev[0]) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev[1]) < 0)
		return 2;
	fprintf(stderr, "ready\n");
	for (;;) {
		int k = epoll_wait(ep, ev, 2, -1);

		for (int j = 0; j < k; j++) {
			if (ev[j].data.fd == sv[0]) {	/* a reply: the event is over */
				struct req q;

				if (recv(sv[0], &q, sizeof(q), 0) != (ssize_t)sizeof(q))
					return 1;
				close(q.answer_fd);
				continue;
			}
			ssize_t n = read(fan, buf, sizeof(buf));
			struct fanotify_event_metadata *m = (void *)buf;

			if (n <= 0)
				return 0;
			for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
				char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
				struct req q = { .answer_fd = m->fd };
				struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
				struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
						    .msg_controllen = sizeof(cbuf) };
				struct cmsghdr *c = CMSG_FIRSTHDR(&h);
				struct stat st;
				int now = sched_getcpu();

				if (m->fd < 0)
					continue;
				if (work && (fstat(m->fd, &st) < 0 || fcntl(m->fd, F_SETSIG, SIGRTMIN + 1) < 0))
					return 1;
				if (work)	/* refused while the file is open for writing: no matter here */
					(void)fcntl(m->fd, F_SETLEASE, F_RDLCK);
				if (now != cpu) {	/* vigild's place(): the appraiser on the monitor's CPU */
					cpu_set_t one;

					CPU_ZERO(&one);
					CPU_SET(now, &one);
					cpu = sched_setaffinity(child, sizeof(one), &one) == 0 ? now : -1;
				}
				c->cmsg_level = SOL_SOCKET;
				c->cmsg_type = SCM_RIGHTS;
				c->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(c), &m->fd, sizeof(int));
				if (sendmsg(sv[0], &h, 0) != (ssize_t)sizeof(q))
					return 1;
			}
		}
	}
}
