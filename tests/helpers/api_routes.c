// SPDX-License-Identifier: MIT
/*
 * api_routes.c - prints the verifier's route table (vg_api_routes), one
 * "METHOD PATH ROLE" line per route, ROLE one of none, read, admin, agent: the
 * verifier's own word on what it serves, which t0515 compares with
 * docs/openapi.json (and then probes on a live verifier).
 */
#include <stdio.h>

#include "vigil/attest_api.h"
#include "vigil/auth.h"

int main(void)
{
	size_t n;
	const struct vg_api_route_def *r = vg_api_routes(&n);

	for (size_t i = 0; i < n; i++)
		printf("%s %s %s\n", r[i].method, r[i].path,
		       r[i].role ? vg_auth_role_name(r[i].role) : "none");
	return 0;
}
