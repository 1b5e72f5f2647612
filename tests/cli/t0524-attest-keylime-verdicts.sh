#!/usr/bin/env bash
# t0524: vigil's runtime verdicts against Keylime's own, case by case.
# tests/vectors/attest/keylime-ima-verdicts.json holds what Keylime's
# keylime/ima/ima.py (commit 9b1f6e6, run once with Debian's python3
# packages by tests/vectors/attest/record-keylime-ima.py, not in CI)
# says on every runtime case of the vectors: Keylime's test lists with its
# test policies, the keys learned from a keyring entry, the real lists
# (rust-keylime, keylime-perf-tests) with its test policy plain and
# DSSE-wrapped, keylime-tests' keylime_create_policy outputs, and the
# create-runtime-policy lists per digest algorithm. tests/helpers/keylime-verdicts.py
# runs `vigil attest policy check --json` on each and compares the verdict
# and the failing entries; it names the Keylime case of each line, and
# says where vigil is deliberately different (an entry that does not parse
# or was altered ends vigil's judgement). Exclusions and their reasons are
# in the JSON ("exclusions") and printed.
. "$SRCDIR/tests/lib.sh"
vg_init
python3 "$SRCDIR/tests/helpers/keylime-verdicts.py" "$VIGIL" "$VECTORS/attest" >res 2>err
check_eq "the comparison ran" "$?" 0
# one TAP line per case: passed through as this test's own checks
rm -f "$T/.out"
while IFS= read -r l; do
	case $l in
	"ok "*) _report 0 "${l#ok * - }" ;;
	"not ok "*) _report 1 "${l#not ok * - }" ;;
	"#"*) echo "$l" ;;
	esac
done <res
check "N of N: vigil agrees with Keylime on every case recorded" \
	sh -c "grep -q '^# agreement: \\([0-9]*\\) of \\1 ' res"
check "the recording names Keylime's commit" grep -q '"keylime_commit": "9b1f6e6a' \
	"$VECTORS/attest/keylime-ima-verdicts.json"
