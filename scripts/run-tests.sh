#!/usr/bin/env bash
# Run every test of the build dir $1 with meson, then sum the individual
# TAP results of all tests into the closing line "N passed, M failed".
# A test that failed without printing any "not ok" counts as one failure.
#
# Every test ends what it started: each process a test starts inherits
# VG_SUITE_ID, set here, so after the suite any process that still has it
# in its environment was left behind by a test (a daemon not stopped, a
# gpg-agent, a swtpm). Each is named ("not ok - left running: PID
# COMMAND"), counted as a failure, and stopped by its PID.
set -u
B=${1:-build-asan}
VG_SUITE_ID=vg-suite-$$-$(date +%s%N)
export VG_SUITE_ID
meson test -C "$B" --print-errorlogs --num-processes "$(nproc)" "${@:2}"
rc=$?

# the processes that carry our mark, but for this script and its own children
left_running() {
	local f p
	for f in $(grep -lzx "VG_SUITE_ID=$VG_SUITE_ID" /proc/[0-9]*/environ 2>/dev/null); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" = $$ ] && continue
		[ "$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = $$ ] && continue
		echo "$p"
	done
}
left=$(left_running)
[ -n "$left" ] && sleep 2 && left=$(left_running)	# a daemon still on its way out
nleft=0
for p in $left; do
	cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)
	[ -n "$cmd" ] || continue
	echo "not ok - left running after the suite: $p $cmd"
	nleft=$((nleft + 1))
done
for p in $left; do kill "$p" 2>/dev/null; done
[ $nleft -gt 0 ] && rc=1

python3 - "$B/meson-logs/testlog.json" "$nleft" <<'PY'
import json, re, sys
passed, failed = 0, int(sys.argv[2])
shown = []	# the failed checks, with the diagnostics under each
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout") or ""
    # a skipped check ("ok N - what # SKIP why") is not a pass
    ok = len(re.findall(r"^ok \d+(?!.*#\s*SKIP)", out, re.M))
    nok = len(re.findall(r"^not ok \d+", out, re.M))
    if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL") and nok == 0:
        nok = 1
        shown.append(f"{t['name']}: {t['result']}, no check failed (exit {t.get('returncode')})")
    passed += ok
    failed += nok
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("not ok "):
            shown.append(f"{t['name']}: {l}")
            shown += [f"{t['name']}:   {d}" for d in lines[i + 1:i + 4] if d.startswith("#")]
# last, where a log's tail shows them: which checks failed, and why
if shown:
    print("the failed checks:")
    for l in shown[:16]:
        print("  " + l[:200])
    if len(shown) > 16:
        print(f"  ... and {len(shown) - 16} more lines (meson-logs/testlog.txt)")
print(f"{passed} passed, {failed} failed")
PY
exit $rc
