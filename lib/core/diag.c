// SPDX-License-Identifier: MIT
/*
 * diag.c - filling struct vg_diag. No allocation, so it works on the
 * -ENOMEM paths it reports.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "vigil/diag.h"

static void vset(struct vg_diag *d, int err, const char *fmt, va_list ap)
{
	d->err = err;
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
}

int vg_diag_set(struct vg_diag *d, int err, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return err;
	va_start(ap, fmt);
	vset(d, err, fmt, ap);
	va_end(ap);
	return err;
}

int vg_diag_ssl(struct vg_diag *d, int err, const char *fmt, ...)
{
	unsigned long e = ERR_get_error();
	va_list ap;

	ERR_clear_error();
	if (!d)
		return err;
	va_start(ap, fmt);
	vset(d, err, fmt, ap);
	va_end(ap);
	if (e) {
		size_t n = strlen(d->msg);
		const char *why = ERR_reason_error_string(e);

		snprintf(d->msg + n, sizeof(d->msg) - n, ": %s",
			 why ? why : "OpenSSL error");
	}
	return err;
}

void vg_ssl_clear(void)
{
	ERR_clear_error();
}
