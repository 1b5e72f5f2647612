#!/usr/bin/env bash
# with-pg.sh BINARY [ARGS]: run a unit test binary with VIGIL_TEST_PG set to
# a throwaway PostgreSQL cluster (tests/lib-pg.sh), so that its PostgreSQL
# cases run instead of skipping. Without root it skips (the cluster runs as
# user postgres); with root, a cluster that cannot start is a failure, not
# a skip: CI must exercise PostgreSQL.
set -u
. "${SRCDIR:?}/tests/lib-pg.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (the throwaway cluster runs as user postgres)"
	exit 0
fi
D=$(mktemp -d /tmp/vigil-pg.XXXXXX)
chmod 755 "$D"
trap 'vg_pg_cleanup; rm -rf "$D"' EXIT
# the unix socket is enough here: no TCP port to collide with other tests
if ! VG_PG_LISTEN= vg_pg_start "$D/pg"; then
	echo "1..1"
	echo "not ok 1 - a throwaway PostgreSQL cluster starts (scripts/deps.sh installs postgresql)"
	exit 1
fi
VIGIL_TEST_PG=$VG_PG_URL "$@"
