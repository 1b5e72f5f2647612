#!/usr/bin/env bash
# t0521: vigil's event-level measured-boot verdicts against Keylime's own,
# case by case. tests/vectors/attest/keylime-mb-verdicts.json holds what
# Keylime 9b1f6e6's "example" measured-boot policy said (recorded once by
# tests/vectors/attest/keylime_mb_record.py: Keylime cannot run here) on its
# own test logs (test/data/create-mb-policy), good and tampered (the logs
# tampered by tests/helpers/mb_tamper.py, made again here byte for byte), each
# judged by a reference state Keylime's create_mb_policy.py made. vigil
# imports that reference state (vigil attest policy import) and judges the
# same log (policy check --boot-log): the verdict must be Keylime's, and
# where Keylime names the event (EventNum), vigil names the same one.
# Exclusions, each with its reason, are listed below and reported.
# vendor_db (issue 39): a reference state whose vendor_db holds another
# certificate, or none (a reference state from before vendor_db), and a
# kernel verified by another vendor_db certificate, fail at the vendor_db
# authority event as Keylime's do (imported, vendor_db passed before).
. "$SRCDIR/tests/lib.sh"
vg_init

A=$VECTORS/attest
EL=$VECTORS/eventlog

# A case Keylime judges differently on purpose, and why (the test says so).
declare -A excluded=(
	[nosecureboot-none]="Keylime's example policy accepts one EV_NO_ACTION on PCR 0 (OnceTest) and fails this Fedora log at its second, the StartupLocality event (EventNum 1), whatever the reference state; vigil's parser checks StartupLocality (at most once, before PCR 0 is extended; it sets PCR 0's start for the replay) and the judge does not judge EV_NO_ACTION records, which extend no PCR"
)
# Cases compared by verdict only: the event Keylime names is one vigil does not judge.
declare -A verdict_only=(
	[nosecureboot-log-secureboot-refstate]="Keylime stops at the StartupLocality EV_NO_ACTION (EventNum 1, as in nosecureboot-none); vigil names the events the secure-boot reference state does not allow (S-CRTM, firmware, SecureBoot=0, keys...)"
)

for r in secureboot nosecureboot secureboot-other-vendor-db secureboot-no-vendor-db; do
	check "Keylime's $r reference state imports" \
		"$VIGIL" attest policy import "$A/keylime-mb-refstate-$r.json" -o "ref-$r.json"
done
check "the import has only a measured_boot section to judge by" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["measured_boot"]["secure_boot"] is True and not p["digests"], p.keys()' ref-secureboot.json

python3 - "$A/keylime-mb-verdicts.json" >cases <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["keylime_commit"].startswith("9b1f6e6"), d["keylime_commit"]
for c in d["cases"]:
    m = re.search(r"'EventNum': (\d+)", c["reason"])
    ev = m.group(1) if m else (str(c["event_changed"]) if c["keylime"] == "fail" and c["event_changed"] >= 0 else "-")
    print(c["case"], c["log"], c["tamper"], c["refstate"].replace("keylime-mb-refstate-", "").replace(".json", ""),
          c["keylime"], ev)
EOF
check "the vectors list 13 cases" test "$(wc -l <cases)" -eq 13

while read -r name log tamper ref kv ev; do
	case "$log" in
	keylime:*) lf=$EL/keylime__${log##*/} ;;	# Keylime's empty and bogus logs, copied
	*) lf=$name.bin
	   python3 "$SRCDIR/tests/helpers/mb_tamper.py" "$tamper" "$EL/$log" "$lf" >/dev/null ;;
	esac
	if [ -n "${excluded[$name]:-}" ]; then
		echo "# excluded: $name (Keylime: $kv): ${excluded[$name]}"
		"$VIGIL" attest policy check --policy "ref-$ref.json" --boot-log "$lf" >out 2>&1
		check_eq "excluded $name: vigil passes it (the difference documented above)" "$?" 0
		continue
	fi
	"$VIGIL" attest policy check --policy "ref-$ref.json" --boot-log "$lf" >out 2>&1
	rc=$?
	sed 's/^/#   /' out | head -5
	case "$kv" in
	pass) check_eq "$name: Keylime passes, vigil passes" "$rc" 0 ;;
	fail) check_eq "$name: Keylime fails, vigil fails" "$rc" 1
	      if [ -n "${verdict_only[$name]:-}" ]; then
		echo "# verdict only: $name: ${verdict_only[$name]}"
	      elif [ "$ev" != - ]; then
		check "$name: ... vigil names event $ev, as Keylime does" \
			grep -q "^FAIL boot.event entry=$ev " out
	      fi ;;
	error) check_eq "$name: Keylime cannot parse the log, vigil refuses it" "$rc" 1
	       check "$name: ... as boot.malformed" grep -q "^FAIL boot.malformed" out ;;
	esac
	if [ "$tamper" != none ]; then
		check "$name: the only failure is the tampered event's" \
			test "$(grep -c '^FAIL' out)" -eq 1
	fi
done <cases
