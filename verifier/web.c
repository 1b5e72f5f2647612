// SPDX-License-Identifier: MIT
/*
 * web.c - the operators' page (GET /ui/, /ui/app.js, /ui/app.css;
 * docs/web.md): which built-in file answers which endpoint. The page is
 * read-only and holds no data: its script asks the REST API with the
 * operator's read token, like any other client.
 *
 * The files (verifier/web/) are built into the binary by web/embed.py
 * rather than installed and read at run time: the page always matches the
 * API of the binary serving it (no stale copy under /usr/share after an
 * upgrade), there is no path to configure, and the network-facing process
 * opens no file after its sandbox is set (privsep.c: Landlock
 * would refuse it, and a path an attacker could swap is not there to
 * swap). The cost, about 20 KB of read-only data, is paid by every
 * verifier, used or not.
 *
 * Not here: the headers (rest.c sends the files with VF_WEB_CSP and the
 * common ones of http_reply_harden), the route table (vg_api_routes).
 */
#include <errno.h>

#include "web.h"

extern const uint8_t vf_web_index_html[], vf_web_app_js[], vf_web_app_css[];
extern const size_t vf_web_index_html_len, vf_web_app_js_len, vf_web_app_css_len;

int vf_web_file(enum vg_api_endpoint ep, struct vf_web_file *ret)
{
	switch (ep) {
	case VG_API_UI_PAGE:
		*ret = (struct vf_web_file){ "text/html; charset=utf-8", vf_web_index_html,
					     vf_web_index_html_len };
		return 0;
	case VG_API_UI_SCRIPT:
		*ret = (struct vf_web_file){ "text/javascript; charset=utf-8", vf_web_app_js,
					     vf_web_app_js_len };
		return 0;
	case VG_API_UI_STYLE:
		*ret = (struct vf_web_file){ "text/css; charset=utf-8", vf_web_app_css,
					     vf_web_app_css_len };
		return 0;
	default:
		return -ENOENT;
	}
}
