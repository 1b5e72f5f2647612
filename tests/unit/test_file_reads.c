// SPDX-License-Identifier: MIT
/*
 * test_file_reads.c - the library's whole-file readers after they moved
 * onto vigil/fileio.h (issue 18): each keeps its own limit, error code and
 * message (keys, policies, token files, the label configuration, key
 * files), and those that read pipes before still do. Also the policy's
 * number syntax now that its hex digits are vg_hex_digit().
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "vigil/auth.h"
#include "vigil/config.h"
#include "vigil/hmac_key.h"
#include "vigil/keyring.h"
#include "vigil/policy.h"

static char dir[] = "/tmp/vg-file-reads-XXXXXX";

static const char *in_dir(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void keyring_reads_report_path_and_errno(void **state)
{
	struct vg_keyring *kr;
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_keyring_new(&kr), 0);
	assert_int_equal(vg_keyring_add_file(kr, in_dir("absent.pem"), &d), -ENOENT);
	assert_non_null(strstr(d.msg, "absent.pem: "));
	memset(&d, 0, sizeof(d));
	/* a directory opens and fails at read(), as fread() did */
	assert_int_equal(vg_keyring_add_file(kr, dir, &d), -EISDIR);
	assert_non_null(strstr(d.msg, ": read: "));
	vg_keyring_free(kr);
}

static void policy_load_reads_a_pipe(void **state)
{
	static const char text[] = "measure func=BPRM_CHECK\ndont_measure fsmagic=0xEF53\n";
	struct vg_policy_error err = { 0 };
	struct vg_policy *p = NULL;
	char path[64];
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fds[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
	assert_int_equal(vg_policy_load_file(path, 0, &p, &err), 0);
	close(fds[0]);
	assert_int_equal(vg_policy_count(p), 2);
	assert_true(vg_policy_rule(p, 1)->fsmagic == 0xef53);
	vg_policy_unref(p);

	assert_int_equal(vg_policy_load_file(in_dir("absent.policy"), 0, &p, &err), -ENOENT);
	assert_string_equal(err.msg, strerror(ENOENT));
}

static void policy_numbers_take_hex_digits_of_either_case(void **state)
{
	static const struct {
		const char *text;
		int ret;
		uint64_t fsmagic;
	} cases[] = {
		{ "dont_measure fsmagic=0xAbCd", 0, 0xabcd },
		{ "dont_measure fsmagic=ffFF", 0, 0xffff },
		{ "dont_measure fsmagic=0xg1", -EINVAL, 0 },
		{ "dont_measure fsmagic=0x", -EINVAL, 0 },
		{ "dont_measure fsmagic=0x10000000000000000", -EINVAL, 0 },	/* -ERANGE inside */
		{ "measure uid=1a", -EINVAL, 0 },	/* base 10: a hex digit is no digit */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vg_policy_error err = { 0 };
		struct vg_policy *p = NULL;
		int r = vg_policy_parse(cases[i].text, strlen(cases[i].text), 0, &p, &err);

		if (cases[i].ret == 0) {
			assert_int_equal(r, 0);
			assert_true(vg_policy_rule(p, 0)->fsmagic == cases[i].fsmagic);
			vg_policy_unref(p);
		} else {
			/* the parser reports a bad number as -EINVAL, whatever the reason */
			assert_int_equal(r, -EINVAL);
		}
	}
}

static void token_file_limits_and_mode(void **state)
{
	char tok[VG_AUTH_TOKEN_LEN + 1], id[VG_AUTH_ID_LEN + 1], got[VG_AUTH_TOKEN_LEN + 1];
	char line[VG_AUTH_TOKEN_LEN + 2], big[300];
	struct vg_diag d = { 0 };

	(void)state;
	assert_int_equal(vg_auth_token_new(tok, id), 0);
	snprintf(line, sizeof(line), "%s\n", tok);
	write_file(in_dir("token"), line, strlen(line), 0600);
	assert_int_equal(vg_auth_token_read(in_dir("token"), got, &d), 0);
	assert_string_equal(got, tok);

	memset(big, 'a', sizeof(big));
	write_file(in_dir("big-token"), big, sizeof(big), 0600);
	assert_int_equal(vg_auth_token_read(in_dir("big-token"), got, &d), -EFBIG);
	assert_string_equal(d.msg, "larger than 256 bytes");

	write_file(in_dir("open-token"), line, strlen(line), 0644);
	assert_int_equal(vg_auth_token_read(in_dir("open-token"), got, &d), -EPERM);
	assert_non_null(strstr(d.msg, "chmod 600"));
}

static void config_reads_char_devices_to_its_limit(void **state)
{
	struct vg_config c;
	struct vg_diag d = { 0 };

	(void)state;
	vg_config_init(&c);
	assert_int_equal(vg_config_load(&c, "/dev/null", false, &d), 0);
	/* a character device has no size: read to one byte past 1 MiB */
	assert_int_equal(vg_config_load(&c, "/dev/zero", false, &d), -EFBIG);
	assert_string_equal(d.msg, "/dev/zero: larger than 1 MiB");
	assert_int_equal(vg_config_load(&c, in_dir("absent.conf"), true, &d), 1);
	vg_config_release(&c);
}

static void key_file_limit(void **state)
{
	static uint8_t big[VG_KEY_FILE_MAX + 1];
	struct vg_key_file kf;
	struct vg_diag d = { 0 };
	char want[512];

	(void)state;
	write_file(in_dir("big.key"), big, sizeof(big), 0600);
	assert_int_equal(vg_key_file_read(in_dir("big.key"), &kf, &d), -EBADMSG);
	snprintf(want, sizeof(want), "%s: larger than any key file (%d bytes)", in_dir("big.key"),
		 VG_KEY_FILE_MAX);
	assert_string_equal(d.msg, want);
	assert_int_equal(vg_key_file_read(in_dir("absent.key"), &kf, &d), -ENOENT);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const names[] = { "token", "big-token", "open-token", "big.key" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(in_dir(names[i]));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keyring_reads_report_path_and_errno),
		cmocka_unit_test(policy_load_reads_a_pipe),
		cmocka_unit_test(policy_numbers_take_hex_digits_of_either_case),
		cmocka_unit_test(token_file_limits_and_mode),
		cmocka_unit_test(config_reads_char_devices_to_its_limit),
		cmocka_unit_test(key_file_limit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
