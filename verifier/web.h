/* SPDX-License-Identifier: MIT */
/*
 * web.h - the files of the operators' page (docs/web.md), built into the
 * binary (web.c says why).
 */
#ifndef VIGIL_VERIFIER_WEB_H
#define VIGIL_VERIFIER_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "vigil/attest_api.h"

struct vf_web_file {
	const char *type;		/* Content-Type */
	const uint8_t *data;
	size_t len;
};

/*
 * The Content-Security-Policy of the page's files: its own script and
 * style only (no inline script or style, no eval), requests to this origin
 * only, never framed, no form posts, no <base>.
 */
#define VF_WEB_CSP "default-src 'none'; script-src 'self'; style-src 'self'; " \
	"connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; " \
	"frame-ancestors 'none'"

/* The file of endpoint @ep (VG_API_UI_*) into *@ret. Return: 0, -ENOENT (another endpoint). */
int vf_web_file(enum vg_api_endpoint ep, struct vf_web_file *ret);

#endif
