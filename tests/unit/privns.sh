#!/usr/bin/env bash
# Run a unit test binary in a private mount namespace with a fresh tmpfs
# in $VIGIL_TESTDIR, for tests that write security.* xattrs.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (security.* xattrs)"
	exit 0
fi
exec unshare -m --propagation private bash -c '
	d=$(mktemp -d /tmp/vigil-unit.XXXXXX)
	mount -t tmpfs -o size=64m vigil-unit "$d"
	export VIGIL_TESTDIR=$d
	"$@"; rc=$?
	umount -l "$d"; rmdir "$d"
	exit $rc' bash "$@"
