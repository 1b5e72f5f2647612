/* SPDX-License-Identifier: MIT */
/*
 * tcti.h - which TPM a program talks to. libvigil reads no environment:
 * the programs resolve --tcti (or a configuration file's tpm.tcti), then
 * $VIGIL_TCTI, and pass the result; NULL lets the library use
 * VG_TPM_TCTI_DEFAULT (device:/dev/tpmrm0).
 */
#ifndef VIGIL_COMMON_TCTI_H
#define VIGIL_COMMON_TCTI_H

#include <stdlib.h>

/* the software TPM the packages ship a unit for (vigil-swtpm.service) */
#define VG_SWTPM_TCTI "swtpm:path=/run/vigil-swtpm/sock"

/* Return: @opt when it names a TCTI, else $VIGIL_TCTI when set and not empty, else NULL. */
static inline const char *vg_prog_tcti(const char *opt)
{
	const char *env;

	if (opt && *opt)
		return opt;
	env = getenv("VIGIL_TCTI");
	return env && *env ? env : NULL;
}

#endif
