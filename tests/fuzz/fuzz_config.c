// SPDX-License-Identifier: MIT
/*
 * fuzz_config.c - vigil.conf (vg_config_parse) on any bytes.
 *
 * Properties: a text parses or is refused with "config:LINE: ..." and
 * nothing allocated is left behind (the ASan build checks leaks); a
 * parsed configuration answers selection queries without crashing.
 */
#include <string.h>

#include "fuzz.h"
#include "vigil/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_config c;
	struct vg_diag d = { 0 };
	int r;

	vg_config_init(&c);
	r = vg_config_parse(&c, (const char *)data, size, "config", &d);
	if (r < 0)
		FUZZ_CHECK(strncmp(d.msg, "config", 6) == 0);
	else {
		struct vg_scan_rule_info ri;

		(void)vg_config_select(&c, "/usr/bin/ls", 0xEF53, 0, 0, 0755, 4096);
		(void)vg_scan_rules_match(c.scan_rules, "/var/log/a.log", 14, 0100644, &ri);
	}
	vg_config_release(&c);
	return 0;
}
