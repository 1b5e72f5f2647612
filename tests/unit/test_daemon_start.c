// SPDX-License-Identifier: MIT
/*
 * test_daemon_start.c - what the daemons share to start (common/):
 * notify.h speaks the sd_notify datagram protocol to a path and to an
 * abstract socket, and is silent without $NOTIFY_SOCKET; listen.h names
 * a port out of range, a port in use and a malformed address;
 * tls_files.h tells a certificate from garbage and a key from another
 * certificate's; vigild_ctl.h's reload answers decode to applied, or to
 * a refusal carrying the parse error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "listen.h"
#include "notify.h"
#include "tls_files.h"
#include "vigild_ctl.h"

/* A receiver bound at @name ('@' first: abstract). Return: its fd. */
static int receiver(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	size_t n = strlen(name);

	assert_true(s >= 0);
	memcpy(a.sun_path, name, n);
	if (name[0] == '@')
		a.sun_path[0] = 0;
	else
		unlink(name);
	assert_int_equal(bind(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)), 0);
	return s;
}

static void notify_sends_to_a_path_and_unsets_the_variable(void **state)
{
	char path[64], buf[256];
	int s;
	ssize_t n;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/vigil-notify-test.%d", (int)getpid());
	s = receiver(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(notify_open(), 1);
	assert_null(getenv("NOTIFY_SOCKET"));
	assert_int_equal(notify_send("READY=1\nSTATUS=%s", "ok"), 0);
	n = recv(s, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	assert_int_equal(n, 17);
	buf[n] = 0;
	assert_string_equal(buf, "READY=1\nSTATUS=ok");
	notify_close();
	close(s);
	unlink(path);
}

static void notify_sends_to_an_abstract_socket(void **state)
{
	char name[64], buf[64];
	int s;

	(void)state;
	snprintf(name, sizeof(name), "@vigil-notify-test.%d", (int)getpid());
	s = receiver(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(notify_open(), 1);
	assert_int_equal(notify_send("STOPPING=1"), 0);
	assert_int_equal(recv(s, buf, sizeof(buf), MSG_DONTWAIT), 10);
	notify_close();
	close(s);
}

static void notify_without_socket_is_silent(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(notify_open(), 0);
	assert_int_equal(notify_send("READY=1"), 0);
	assert_int_equal(notify_fd(), -1);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(notify_open(), -EINVAL);
	setenv("NOTIFY_SOCKET", "/nonexistent/vigil/notify", 1);
	assert_true(notify_open() < 0);
	unsetenv("NOTIFY_SOCKET");
}

static void listen_check_names_each_problem(void **state)
{
	struct sockaddr_in sa;
	char why[256];
	socklen_t len = sizeof(sa);
	int s;

	(void)state;
	assert_int_equal(listen_check("127.0.0.1:70000", &sa, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "port out of range"));
	assert_int_equal(listen_check("127.0.0.1:0", &sa, why, sizeof(why)), -ERANGE);
	assert_int_equal(listen_check("8881", &sa, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not ADDR:PORT"));
	assert_int_equal(listen_check("127.0.0.1:88x", &sa, why, sizeof(why)), -EINVAL);
	assert_int_equal(listen_check("localhost:8881", &sa, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not an IPv4 address"));
	/* a port someone listens on */
	s = socket(AF_INET, SOCK_STREAM, 0);
	sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 1), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	{
		char addr[32];

		snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned int)ntohs(sa.sin_port));
		assert_int_equal(listen_check(addr, &sa, why, sizeof(why)), -EADDRINUSE);
		assert_non_null(strstr(why, "in use"));
		close(s);
		assert_int_equal(listen_check(addr, &sa, why, sizeof(why)), 0);
	}
}

static void tls_files_tell_pem_from_garbage(void **state)
{
	char why[512], path[64];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/vigil-tls-test.%d", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("garbage\n", f);
	fclose(f);
	assert_int_equal(tls_certs_check(path, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "no PEM certificate"));
	assert_int_equal(tls_key_check(path, NULL, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "not an unencrypted PEM private key"));
	assert_true(tls_certs_check("/nonexistent/vigil.pem", why, sizeof(why)) < 0);
	unlink(path);
}

static void ctl_reload_answers_decode(void **state)
{
	json_object *o = vd_ctl_reload_result_encode(true, 3, "ab12", NULL), *d = NULL;
	const char *why = NULL;
	char buf[512];

	(void)state;
	snprintf(buf, sizeof(buf), "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	assert_string_equal(buf, "{\"reload\":\"applied\",\"policy_rules\":3,\"policy_sha256\":\"ab12\"}");
	json_object_put(o);
	assert_int_equal(vd_ctl_answer_decode(buf, &d, &why), 0);
	json_object_put(d);
	o = vd_ctl_reload_result_encode(false, 0, NULL, "pol:1:1: unknown func");
	snprintf(buf, sizeof(buf), "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	assert_int_equal(vd_ctl_answer_decode(buf, &d, &why), -EPERM);
	assert_string_equal(why, "pol:1:1: unknown func");
	json_object_put(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notify_sends_to_a_path_and_unsets_the_variable),
		cmocka_unit_test(notify_sends_to_an_abstract_socket),
		cmocka_unit_test(notify_without_socket_is_silent),
		cmocka_unit_test(listen_check_names_each_problem),
		cmocka_unit_test(tls_files_tell_pem_from_garbage),
		cmocka_unit_test(ctl_reload_answers_decode),
	};

	return cmocka_run_group_tests_name("daemon_start", tests, NULL, NULL);
}
