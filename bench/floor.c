// SPDX-License-Identifier: MIT
/*
 * bench/floor.c - the floor for whole-tree hashing: open, read to EOF
 * (1 MiB buffer), close every file of a NUL-separated list, on N threads,
 * without hashing. bench/tree builds and runs it beside vigil.
 *   floor THREADS LISTFILE
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *list;
static size_t list_len, next_off;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	char *buf = malloc(1 << 20);

	(void)arg;
	for (;;) {
		char *names[64];
		size_t n = 0;

		pthread_mutex_lock(&lock);
		while (n < 64 && next_off < list_len) {
			names[n++] = list + next_off;
			next_off += strlen(list + next_off) + 1;
		}
		pthread_mutex_unlock(&lock);
		if (!n)
			break;
		for (size_t i = 0; i < n; i++) {
			int fd = open(names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0)
				continue;
			while (read(fd, buf, 1 << 20) > 0)
				;
			close(fd);
		}
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int n = argc > 2 ? atoi(argv[1]) : 0;
	FILE *f;

	if (n < 1 || n > 64 || !(f = fopen(argv[2], "r"))) {
		fprintf(stderr, "usage: floor THREADS LISTFILE\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	list_len = (size_t)ftell(f);
	rewind(f);
	list = malloc(list_len + 1);
	if (!list || fread(list, 1, list_len, f) != list_len)
		return 2;
	list[list_len] = 0;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
