// SPDX-License-Identifier: MIT
/*
 * driver.c - main() for a harness built without libFuzzer: replay a
 * corpus, then a fixed number of deterministic mutations of it, under
 * whatever sanitizers the build has (the ASan/UBSan build of `make test`).
 * It finds nothing new on purpose: it proves every committed seed and
 * regression input still passes, and shakes each a little, in seconds.
 * The real search is libFuzzer's (`make fuzz`).
 *
 *   fuzz_NAME [--runs N] [--seed S] [--max-len L] PATH...
 *
 * PATH is a file or a directory of files (dotfiles and README* skipped).
 * Every input is copied into a heap buffer of exactly its size, so that a
 * read one past the end is an ASan report. When an input crashes the
 * harness, it is written to $VG_FUZZ_ARTIFACTS (default .) as
 * crash-NAME-N and its origin printed, ready to be kept in corpus/NAME/.
 * Output is TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef VG_FUZZ_NAME
#define VG_FUZZ_NAME "fuzz"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

struct input {
	char *name;
	uint8_t *data;
	size_t size;
};

static struct input *inputs;
static size_t ninputs;

/* what is running now, for the crash report */
static const char *cur_origin;
static const uint8_t *cur_data;
static size_t cur_size;
static unsigned long cur_run;
static volatile sig_atomic_t dumped;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_%s: %s: %s\n", VG_FUZZ_NAME, what, strerror(errno));
	exit(2);
}

static void add_input(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	struct input *in;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	inputs = realloc(inputs, (ninputs + 1) * sizeof(*inputs));
	if (!inputs)
		die("realloc");
	in = &inputs[ninputs++];
	in->name = strdup(name);
	in->size = (size_t)st.st_size;
	in->data = malloc(in->size ? in->size : 1);
	if (!in->name || !in->data)
		die("malloc");
	while (got < in->size) {
		ssize_t n = read(fd, in->data + got, in->size - got);

		if (n <= 0)
			die(path);
		got += (size_t)n;
	}
	close(fd);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct input *)a)->name, ((const struct input *)b)->name);
}

static void add_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	size_t first = ninputs;

	if (stat(path, &st) < 0)
		die(path);
	if (!S_ISDIR(st.st_mode)) {
		add_input(path, path);
		return;
	}
	d = opendir(path);
	if (!d)
		die(path);
	while ((e = readdir(d))) {
		char p[4096];

		if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (stat(p, &st) < 0)
			die(p);
		if (S_ISREG(st.st_mode))
			add_input(p, p);
	}
	closedir(d);
	/* readdir order is the filesystem's: sort, so a seed means one sequence */
	qsort(inputs + first, ninputs - first, sizeof(*inputs), cmp_name);
}

static void dump_current(void)
{
	char path[4096];
	const char *dir = getenv("VG_FUZZ_ARTIFACTS");
	int fd;

	if (dumped || !cur_data)
		return;
	dumped = 1;
	snprintf(path, sizeof(path), "%s/crash-%s-%lu", dir && *dir ? dir : ".", VG_FUZZ_NAME,
		 cur_run);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, cur_data, cur_size) != (ssize_t)cur_size)
			path[0] = '\0';
		close(fd);
	}
	fprintf(stderr, "fuzz_%s: run %lu (%s, %zu bytes) crashed; input saved as %s\n",
		VG_FUZZ_NAME, cur_run, cur_origin, cur_size, fd >= 0 ? path : "(not saved)");
}

static void on_signal(int sig)
{
	dump_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void run_one(const char *origin, const uint8_t *data, size_t size)
{
	/* exactly sized, so an overread is caught */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		die("malloc");
	memcpy(copy, data, size);
	cur_origin = origin;
	cur_data = copy;
	cur_size = size;
	LLVMFuzzerTestOneInput(copy, size);
	cur_data = NULL;
	free(copy);
	cur_run++;
}

/* xorshift64*: the same seed gives the same mutations everywhere */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* One to four edits of the kinds that break length-prefixed formats. */
static size_t mutate(uint8_t *buf, size_t size, size_t cap)
{
	static const uint8_t interesting[] = { 0, 1, 2, 3, 4, 5, 6, 7, 9, 0x10, 0x14, 0x20,
					       0x7f, 0x80, 0xfe, 0xff };
	unsigned int edits = 1 + (unsigned int)below(4);

	for (unsigned int i = 0; i < edits; i++) {
		size_t pos = below(size);

		switch (below(9)) {
		case 0:		/* flip a bit */
			if (size)
				buf[pos] ^= (uint8_t)(1u << below(8));
			break;
		case 1:		/* random byte */
			if (size)
				buf[pos] = (uint8_t)rnd();
			break;
		case 2:		/* interesting byte, often at the front (type, version, algo) */
			if (size)
				buf[below(2) ? below(size < 10 ? size : 10) : pos] =
					interesting[below(sizeof(interesting))];
			break;
		case 3:		/* insert a byte */
			if (size < cap) {
				pos = below(size + 1);
				memmove(buf + pos + 1, buf + pos, size - pos);
				buf[pos] = (uint8_t)rnd();
				size++;
			}
			break;
		case 4:		/* delete a byte */
			if (size) {
				memmove(buf + pos, buf + pos + 1, size - pos - 1);
				size--;
			}
			break;
		case 5:		/* truncate */
			size = below(size + 1);
			break;
		case 6: {	/* duplicate a chunk */
			size_t len = below(size - pos + 1), to = below(size + 1);

			if (len && size + len <= cap) {
				memmove(buf + to + len, buf + to, size - to);
				memmove(buf + to, buf + (pos >= to ? pos + len : pos), len);
				size += len;
			}
			break;
		}
		case 7: {	/* a big-endian 16-bit length: the bytes that follow, +-1 */
			if (size >= 2) {
				pos = below(size - 1);
				size_t v = size - pos - 2 + below(3) - 1;

				buf[pos] = (uint8_t)(v >> 8);
				buf[pos + 1] = (uint8_t)v;
			}
			break;
		}
		case 8: {	/* splice: the tail of another input */
			const struct input *o = &inputs[below(ninputs)];
			size_t from = below(o->size + 1), len = o->size - from;

			pos = below(size + 1);
			if (pos + len > cap)
				len = cap - pos;
			memcpy(buf + pos, o->data + from, len);
			size = pos + len;
			break;
		}
		}
	}
	return size;
}

int main(int argc, char **argv)
{
	unsigned long runs = 0, seed = 1;
	size_t maxlen = 65536;
	uint8_t *buf;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = strtoul(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoul(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--max-len") == 0 && i + 1 < argc)
			maxlen = strtoul(argv[++i], NULL, 0);
		else if (strncmp(argv[i], "--", 2) == 0)
			break;
		else
			add_path(argv[i]);
	}
	if (i < argc || (ninputs == 0 && runs == 0)) {
		fprintf(stderr, "usage: fuzz_%s [--runs N] [--seed S] [--max-len L] PATH...\n",
			VG_FUZZ_NAME);
		return 2;
	}
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(dump_current);
	signal(SIGABRT, on_signal);
	signal(SIGSEGV, on_signal);
	signal(SIGBUS, on_signal);
	signal(SIGFPE, on_signal);
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);

	for (size_t k = 0; k < ninputs; k++)
		run_one(inputs[k].name, inputs[k].data, inputs[k].size);
	printf("%s %d - %s: %zu corpus inputs replayed\n", ninputs ? "ok" : "not ok", 1,
	       VG_FUZZ_NAME, ninputs);

	buf = malloc(maxlen);
	if (!buf)
		die("malloc");
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	for (unsigned long k = 0; k < runs; k++) {
		size_t size = 0;

		if (ninputs && below(16)) {
			const struct input *in = &inputs[below(ninputs)];

			size = in->size < maxlen ? in->size : maxlen;
			memcpy(buf, in->data, size);
			size = mutate(buf, size, maxlen);
		} else {	/* now and then, plain random bytes */
			size = below(maxlen < 512 ? maxlen + 1 : 513);
			for (size_t j = 0; j < size; j++)
				buf[j] = (uint8_t)rnd();
		}
		run_one("mutation", buf, size);
	}
	free(buf);
	printf("ok 2 - %s: %lu mutated inputs (seed %lu)\n", VG_FUZZ_NAME, runs, seed);
	printf("1..2\n");
	for (size_t k = 0; k < ninputs; k++) {
		free(inputs[k].name);
		free(inputs[k].data);
	}
	free(inputs);
	return ninputs ? 0 : 1;
}
