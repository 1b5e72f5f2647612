#!/usr/bin/env bash
# Run every test of the build dir $1 with meson, then sum the individual
# TAP results of all tests into the closing line "N passed, M failed".
# A test that failed without printing any "not ok" counts as one failure.
set -u
B=${1:-build-asan}
meson test -C "$B" --print-errorlogs --num-processes "$(nproc)" "${@:2}"
rc=$?
python3 - "$B/meson-logs/testlog.json" <<'PY'
import json, re, sys
passed = failed = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout") or ""
    # a skipped check ("ok N - what # SKIP why") is not a pass
    ok = len(re.findall(r"^ok \d+(?!.*#\s*SKIP)", out, re.M))
    nok = len(re.findall(r"^not ok \d+", out, re.M))
    if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL") and nok == 0:
        nok = 1
    passed += ok
    failed += nok
print(f"{passed} passed, {failed} failed")
PY
exit $rc
