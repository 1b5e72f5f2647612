/* SPDX-License-Identifier: MIT */
/*
 * ima_template.h - the kernel's built-in IMA templates (builtin_templates[]
 * of security/integrity/ima/ima_template.c): name and field format. One
 * table for the measurement list codec (measure) and the policy parser's
 * template= (policy), which sit side by side in the layering.
 */
#ifndef VIGIL_IMA_TEMPLATE_H
#define VIGIL_IMA_TEMPLATE_H

#include <stddef.h>

struct vg_ima_template {
	const char *name;	/* "ima-ng" */
	const char *fmt;	/* "d-ng|n-ng" */
};

/* Number of built-in templates; index 0 is the original "ima" template. */
#define VG_IMA_TEMPLATES 8

/* The built-in templates, in the kernel's order. */
extern const struct vg_ima_template vg_ima_templates[VG_IMA_TEMPLATES];

#endif
