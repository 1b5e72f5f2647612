#!/usr/bin/env bash
# t0089: `make demo` (scripts/demo.sh) on this build gives every step the
# answer it expects. README.md's first command, run as it is, but on this
# test's build; t0098 runs the README's other blocks. The demo makes its own
# mount namespace, tmpfs, ext4 image, swtpm and daemons, and stops them.
. "$SRCDIR/tests/lib.sh"
vg_init
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

timeout 600 bash "$SRCDIR/scripts/demo.sh" "$BUILD_ROOT" >demo.out 2>&1
rc=$?
check_eq "make demo: exit 0" "$rc" 0
check "make demo: every step gave the expected answer" \
	grep -aqx "demo: every step gave the expected answer" demo.out
if [ "$rc" -ne 0 ]; then
	# the step titles and what went wrong, without the binaries some steps print
	grep -a -E "== |UNEXPECTED|did not start|^vigild: " demo.out | tr -cd '[:print:]\n' |
		cut -c1-300 | sed 's/^/#   /'
fi
