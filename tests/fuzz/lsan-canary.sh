#!/usr/bin/env bash
# tests/fuzz/lsan-canary.sh CANARY - LeakSanitizer works where the CLI
# tests run vigil (private mount namespace, tmpfs, the tests' ASAN_OPTIONS),
# and also when reports go to files, as scripts/leakcheck.sh collects them.
# Without this, "the suite is leak-free" could mean "LSan never ran".
. "$SRCDIR/tests/lib.sh"
vg_init "$@"
C=$1

"$C" 2>err
rc=$?
check "a leak fails the process (exit $rc)" test $rc -ne 0
check "LeakSanitizer names the leak and where it was made" \
	grep -q "detected memory leaks" err
check "the report has the allocation's stack" grep -q "lsan_canary.c" err
check "no leak, no report" "$C" clean
LSAN_OPTIONS=log_path=$T/lsan "$C" 2>err2
check "with log_path (leakcheck.sh), the report goes to a file" \
	bash -c "grep -q 'detected memory leaks' $T/lsan.*"
check "vigil itself is built with ASan (LSan included)" \
	bash -c "ldd '$VIGIL' | grep -q libasan"
check "vigil runs leak-free here with detect_leaks=1" "$VIGIL" --help
