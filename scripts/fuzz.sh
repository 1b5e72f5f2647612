#!/usr/bin/env bash
# scripts/fuzz.sh BUILD SECONDS [NAME...] - build tests/fuzz with clang and
# libFuzzer (-fsanitize=fuzzer,address,undefined) in BUILD, then run each
# harness (all, or the NAMEs given) for SECONDS, one process each
# ($FUZZ_JOBS > 1: that many libFuzzer jobs). What a run finds goes to
# BUILD/fuzz-corpus/NAME (the committed seeds in tests/fuzz/corpus/NAME are
# read, never written); a crash to BUILD/fuzz-artifacts/NAME/, to be kept as
# tests/fuzz/corpus/NAME/crash-* once the bug is fixed. Logs in
# BUILD/fuzz-logs/. Ends with one line per harness (executions, coverage)
# and exits 1 if any harness crashed.
set -u
B=$(realpath -m "${1:-build-fuzz}")
SECS=${2:-60}
shift 2 2>/dev/null || shift $#
SRC=$(cd "$(dirname "$0")/.." && pwd)
JOBS=${FUZZ_JOBS:-1}

if [ ! -f "$B/build.ninja" ]; then
	CC=clang CFLAGS="-fsanitize=fuzzer-no-link" meson setup "$B" \
		--buildtype=debugoptimized -Dfuzz=true -Dtests=false -Dwerror=false \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null || exit 2
fi
# only the harnesses (and what they link): the rest of the tree is not clang's business here
targets=$(ninja -C "$B" -t targets all | sed -n 's|^\(tests/fuzz/fuzz_[A-Za-z0-9_]*\): .*|\1|p' | sort -u)
ninja -C "$B" -j2 $targets >/dev/null || { ninja -C "$B" -j1 $targets; exit 2; }

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in "$B"/tests/fuzz/fuzz_*; do
		[ -f "$f" ] && [ -x "$f" ] && names+=("$(basename "$f" | sed 's/^fuzz_//')")
	done
fi

export VECTORS="$SRC/tests/vectors"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$B/fuzz-logs"
failed=0
summary=()
for n in "${names[@]}"; do
	exe="$B/tests/fuzz/fuzz_$n"
	corpus="$B/fuzz-corpus/$n"
	art="$B/fuzz-artifacts/$n"
	log="$B/fuzz-logs/$n.log"
	mkdir -p "$corpus" "$art"
	opts=(-max_total_time="$SECS" -print_final_stats=1 -artifact_prefix="$art/")
	[ -f "$SRC/tests/fuzz/$n.dict" ] && opts+=(-dict="$SRC/tests/fuzz/$n.dict")
	[ "$JOBS" -gt 1 ] && opts+=(-jobs="$JOBS" -workers="$JOBS")
	echo "fuzz: $n for ${SECS}s" >&2
	(cd "$B/fuzz-logs" && "$exe" "${opts[@]}" "$corpus" "$SRC/tests/fuzz/corpus/$n") >"$log" 2>&1
	rc=$?
	[ "$JOBS" -gt 1 ] && cat "$B"/fuzz-logs/fuzz-*.log >>"$log" 2>/dev/null
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	# slow-unit-* are reports, not failures (a paused or busy machine makes them)
	crashes=$(find "$art" -type f ! -name 'slow-unit-*' | wc -l)
	if [ $rc -eq 72 ] && [ "$crashes" -eq 0 ]; then
		# libFuzzer's exit status when a signal stopped the run: not a finding
		failed=1
		summary+=("$n: INTERRUPTED after ${execs:-?} execs (see $log)")
	elif [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
		failed=1
		summary+=("$n: CRASH (exit $rc, $crashes artifacts in $art; see $log)")
	else
		summary+=("$n: ${execs:-?} execs in ${SECS}s; ${done_line#*DONE   }")
	fi
done
printf '%s\n' "${summary[@]}"
exit $failed
