#!/usr/bin/env bash
# scripts/leakcheck.sh ASAN_BUILD [--valgrind RELEASE_BUILD]
#
# A leak pass over the CLI tests (suite 'cli' of ASAN_BUILD, as meson
# registered them, with their environment):
#  - default: LeakSanitizer. Every sanitizer report of every process goes
#    to a file (LSAN_OPTIONS=log_path=...), so a leak is found even where a
#    test ignores vigil's exit status;
#  - --valgrind: vigil of RELEASE_BUILD run under valgrind --leak-check=full
#    (definite and indirect leaks and memory errors are errors, exit 99).
# $LEAKCHECK_TESTS, a regular expression, picks tests by name, and
# $LEAKCHECK_SKIP leaves some out (with --valgrind, by default, t0001's
# >4 GiB files and the crash tests, far too slow under valgrind).
# Prints each test's TAP count and every report, and ends with
# "leakcheck: N tests, M with reports"; exits 1 if M > 0 or a test failed.
set -u
B=$(realpath "${1:?usage: leakcheck.sh ASAN_BUILD [--valgrind RELEASE_BUILD]}")
MODE=lsan
REL=
if [ "${2:-}" = "--valgrind" ]; then
	MODE=valgrind
	REL=$(realpath "${3:?--valgrind needs the release build dir}")
	command -v valgrind >/dev/null || { echo "leakcheck: valgrind missing (scripts/deps.sh)" >&2; exit 2; }
fi
D=$(mktemp -d /tmp/vigil-leakcheck.XXXXXX)
if [ $MODE = valgrind ]; then
	cat >"$D/vigil" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \\
	--errors-for-leak-kinds=definite,indirect --log-file=$D/report.vg.%p "$REL/cli/vigil" "\$@"
WRAP
	chmod +x "$D/vigil"
fi
meson introspect "$B" --tests >"$D/tests.json" || exit 2
python3 - "$D" "$MODE" <<'PY'
import json, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

d, mode = sys.argv[1], sys.argv[2]
only = re.compile(os.environ.get("LEAKCHECK_TESTS", ""))
# under valgrind, by default, not the >4 GiB hashing of t0001 nor the
# crash tests' hundreds of SIGKILLed restarts (hours there, minutes here)
skip = os.environ.get("LEAKCHECK_SKIP", r"^t0001-|crash|^t0205-" if mode == "valgrind" else "")
tests = [t for t in json.load(open(d + "/tests.json"))
         if any(s.endswith(":cli") for s in t["suite"]) and only.search(t["name"])
         and not (skip and re.search(skip, t["name"]))]

def run(t):
    env = dict(os.environ)
    env.update(t["env"])
    tag = re.sub(r"[^A-Za-z0-9_.-]", "_", t["name"])
    if mode == "valgrind":
        env["VIGIL"] = d + "/vigil"
        env.pop("ASAN_OPTIONS", None)
    else:
        env["LSAN_OPTIONS"] = "log_path=%s/report.%s" % (d, tag)
    p = subprocess.run(t["cmd"], env=env, cwd=t["workdir"] or None, capture_output=True,
                       text=True, errors="replace", timeout=3600)
    ok = len(re.findall(r"^ok \d+", p.stdout, re.M))
    nok = len(re.findall(r"^not ok \d+", p.stdout, re.M))
    if p.returncode and not nok:
        nok = 1
    return t["name"], ok, nok, p.stdout

with ThreadPoolExecutor(max_workers=2) as ex:
    results = list(ex.map(run, tests))

def text(f):
    return open(os.path.join(d, f), errors="replace").read()

# A report is an error report; other sanitizer notes (a process SIGKILLed
# while LSan stopped its threads: "Unable to get registers") are shown only.
logs = sorted(f for f in os.listdir(d) if f.startswith("report.") and
              os.path.getsize(os.path.join(d, f)) > 0)
reports = [f for f in logs if mode == "valgrind" or re.search(r"ERROR: |runtime error|definitely lost|ERROR SUMMARY: [1-9]", text(f))]
for f in logs:
    if f not in reports:
        print("note %s: %s" % (f, text(f).strip()[:200]))
bad = 0
for name, ok, nok, out in results:
    print("%-34s %4d ok %3d not ok" % (name, ok, nok))
    if nok:
        bad += 1
        for l in out.splitlines():
            if l.startswith("not ok") or l.startswith("#"):
                print("    " + l)
for f in reports:
    print("==== %s" % f)
    print(text(f)[:4000])
print("leakcheck (%s): %d tests, %d with reports, %d failing" % (mode, len(results), len(reports), bad))
sys.exit(1 if reports or bad else 0)
PY
rc=$?
[ $rc -eq 0 ] && rm -rf "$D" || echo "leakcheck: reports kept in $D"
exit $rc
