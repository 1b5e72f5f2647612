/* SPDX-License-Identifier: MIT */
/*
 * swtpm.h - a private swtpm for a unit test group (scripts/swtpm.sh), in
 * $VIGIL_TESTDIR (privns.sh's tmpfs) or under @fallback. Started with
 * --watch on the test's pid, so a crashed test leaves no swtpm behind.
 */
#ifndef VIGIL_TEST_SWTPM_H
#define VIGIL_TEST_SWTPM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Start it in @dir (@dcap bytes, filled in). Return: 0 and its TCTI in @tcti, or -1. */
static inline int test_swtpm_start(const char *fallback, char *dir, size_t dcap, char *tcti,
				   size_t tcap)
{
	const char *t = getenv("VIGIL_TESTDIR"), *src = getenv("SRCDIR");
	char cmd[8192];
	FILE *f;

	snprintf(dir, dcap, "%s/tpm", t ? t : fallback);
	snprintf(cmd, sizeof(cmd), "bash %s/scripts/swtpm.sh start %s --watch %d", src ? src : ".",
		 dir, (int)getpid());
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(tcti, (int)tcap, f)) {
		pclose(f);
		return -1;
	}
	pclose(f);
	tcti[strcspn(tcti, "\n")] = 0;
	setenv("TSS2_LOG", "all+none", 1);	/* refusals in the tests are expected */
	return 0;
}

/* Stop the instance in @dir. Return: 0, or -1. */
static inline int test_swtpm_stop(const char *dir)
{
	const char *src = getenv("SRCDIR");
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "bash %s/scripts/swtpm.sh stop %s", src ? src : ".", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
