// SPDX-License-Identifier: MIT
/*
 * cmd_hash.c - `vigil hash [--algo A] [--write] [--json] FILE...`
 *
 * Prints "ALGO:HEX  FILE" per file; --write also stores security.ima in
 * the form the kernel's fix mode and evmctl ima_hash write (01 for md5 and
 * sha1, 04 otherwise). --json: one JSON object per FILE instead
 * (docs/schemas/hash.schema.json), a failure included.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>

#include <json-c/json.h>

#include "cli.h"
#include "opts.h"
#include "vigil/xattr_ima.h"

static const char help[] =
	"usage: vigil hash [--algo ALGO] [--write] [--json] FILE...\n"
	"\n"
	"Print the digest of each FILE as 'ALGO:HEX  FILE'.\n"
	"  -a, --algo ALGO   kernel hash name (default sha256): sha1 sha224 sha256\n"
	"                    sha384 sha512 sm3 sha3-256 sha3-384 sha3-512 md5\n"
	"  -w, --write       store the digest in security.ima (01 for md5/sha1,\n"
	"                    04 digest-ng otherwise)\n"
	"  -j, --json        one JSON object per FILE: {file, algo, digest, written}\n"
	"                    or {file, error}\n"
	"Exit status: 0 all files hashed, 2 any error.\n";

/* one line: {file, algo, digest, written} or {file, error} */
static void put_json(const char *path, const struct vg_digest *dg, bool written, const char *err)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "file", cli_json_path(path));
	if (dg) {
		cli_json_add_digest(j, dg);
		json_object_object_add(j, "written", json_object_new_boolean(written));
	} else {
		json_object_object_add(j, "error", json_object_new_string(err ? err : "unknown"));
	}
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

int cmd_hash(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		CLI_OPT_ALGO('a'),
		{ "write", no_argument, 'w', 'w' },
		CLI_OPT_JSON('j'),
		CLI_OPT_HELP,
	};
	struct vg_hasher *h = NULL;
	struct cli_getopt g;
	struct cli_cfgargs cf = { .algo = VG_HASH_SHA256 };
	int c, rc = EXIT_OK;
	bool write = false;
	struct cli_outargs o = { 0 };
	const struct cli_groups gr = { .cfg = &cf, .out = &o };

	cli_getopt_init(&g, opts, sizeof(opts) / sizeof(opts[0]), &gr);
	while ((c = cli_getopt_next(&g, argc, argv)) != -1) {
		if (c == 'w') {
			write = true;
			continue;
		}
		return cli_opts_stop(help, c);
	}
	if (optind >= argc) {
		cli_err("no FILE given");
		return EXIT_ERROR;
	}
	if (vg_hasher_new(&h) < 0) {
		cli_err("out of memory");
		return EXIT_ERROR;
	}
	for (int i = optind; i < argc; i++) {
		const char *path = argv[i];
		struct vg_diag d = { 0 };
		struct vg_digest dg;
		char hex[2 * VG_HASH_MAX_DIGEST + 1];
		/* printing a digest takes any file, as sha256sum; labeling only regular ones */
		int fd = write ? cli_open_regular(path) : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			int e = errno;

			if (!write)
				cli_file_err(path, "%s", strerror(e));
			if (o.json)
				put_json(path, NULL, false, write ? "not a readable regular file"
								     : strerror(e));
			rc = EXIT_ERROR;
			continue;
		}
		if (write ? vg_label_ima_fd(h, fd, (unsigned int)cf.algo, NULL, &dg, &d) < 0
			  : vg_hasher_fd(h, fd, (unsigned int)cf.algo, &dg, NULL, &d) < 0) {
			cli_file_err(path, "%s", d.msg);
			if (o.json)
				put_json(path, NULL, false, d.msg);
			rc = EXIT_ERROR;
			close(fd);
			continue;
		}
		close(fd);
		if (o.json) {
			put_json(path, &dg, write, NULL);
			continue;
		}
		vg_hex_encode(dg.bytes, dg.len, hex);
		printf("%s:%s  ", vg_hash_name(dg.algo), hex);
		cli_put_path(stdout, path);
		putchar('\n');
	}
	vg_hasher_free(h);
	if (fflush(stdout) != 0) {
		cli_err("writing output: %s", strerror(errno));
		rc = EXIT_ERROR;
	}
	return rc;
}
