#!/usr/bin/env bash
# t0206: vigil log boot show|replay on real TCG boot event logs
# (tests/vectors/eventlog, SOURCES.md there). The PCRs replayed equal, for
# every bank, byte for byte, what tpm2_eventlog computes (its `pcrs:`
# section), except where tpm2_eventlog 5.4 is known wrong or fails; there
# they equal an independent replay (eventlog_oracle.py) and, where a
# project published the machine's real PCRs, those. Truncated and
# corrupted copies are refused naming the event index and byte offset.
. "$SRCDIR/tests/lib.sh"
vg_init
V=$VECTORS/eventlog
O="python3 $SRCDIR/tests/helpers/eventlog_oracle.py"
have_tools=; command -v tpm2_eventlog >/dev/null && have_tools=1

# where tpm2_eventlog 5.4 (Debian 12) cannot be the oracle:
#  - keylime binary_bios_measurements: a StartupLocality EV_NO_ACTION, which
#    5.4 extends into PCR 0 (tpm2-tools #3224, fixed by #3230 and #3242)
#  - thinkpad p511, ideapad1 (Windows): EV_NO_ACTION on PCR 0xffffffff,
#    5.4 refuses the log
#  - option_rom: 5.4 crashes; short_no_action: 5.4 refuses it
not_tools="keylime__binary_bios_measurements
python3-uefi-eventlog__thinkpad_p511.bin
python3-uefi-eventlog__ideapad1.bin
go-attestation__option_rom_eventlog
go-attestation__short_no_action_eventlog"

n_tools=0 n_oracle=0
for f in "$V"/*; do
	b=$(basename "$f")
	# Keylime's empty and bogus logs are there as logs that must NOT parse (t0521)
	case $b in *.pcrs|*.md|tpm2-tools__specid-vendordata.bin|keylime__binary_bios_measurements-bogus|\
		keylime__binary_bios_measurements-empty) continue ;; esac
	"$VIGIL" log boot replay "$f" 2>"$b.err" | sort >"$b.vigil"
	check_eq "$b: replay exits 0" "${PIPESTATUS[0]}" 0
	$O replay "$f" | sort >"$b.oracle"
	check "$b: replay equals the independent replay" cmp "$b.vigil" "$b.oracle"
	n_oracle=$((n_oracle + 1))
	if [ -n "$have_tools" ] && ! echo "$not_tools" | grep -qx "$b"; then
		$O tools "$f" | sort >"$b.tools"
		check "$b: replay equals tpm2_eventlog's pcrs, every bank" cmp "$b.vigil" "$b.tools"
		n_tools=$((n_tools + 1))
	fi
	"$VIGIL" log boot show "$f" >"$b.show"
	check_eq "$b: show lists every record" "$(grep -vc '^#' "$b.show")" "$($O count "$f")"
done
check "15 logs compared with tpm2_eventlog" test "$n_tools" -ge 15
check "20 logs compared with the independent replay" test "$n_oracle" -ge 20

# the known disagreements, pinned
f=$V/keylime__binary_bios_measurements
if [ -n "$have_tools" ]; then
	$O tools "$f" | sort >kl.tools
	check_eq "StartupLocality log: tpm2_eventlog 5.4 differs in PCR 0 only (sha1, sha256)" \
		"$(diff kl.tools keylime__binary_bios_measurements.vigil | grep -c '^[<>] PCR-00 ')" 4
	check_eq "... and nowhere else" "$(diff kl.tools keylime__binary_bios_measurements.vigil | grep -c '^[<>]')" 4
fi
check "StartupLocality 3 sets PCR 0's start value (vigil and the oracle agree)" \
	cmp keylime__binary_bios_measurements.vigil keylime__binary_bios_measurements.oracle
check "option ROM log: PCR 0-7 are the machine's (go-attestation's expected values)" \
	"$VIGIL" log boot replay --pcrs "$V/go-attestation__option_rom_eventlog.pcrs" \
	"$V/go-attestation__option_rom_eventlog"
check_eq "49-byte log with only a StartupLocality record: PCR 0 = 00..03" \
	"$("$VIGIL" log boot replay "$V/go-attestation__short_no_action_eventlog")" \
	"PCR-00 sha1:0000000000000000000000000000000000000003"
grep -q "EV_EVENT_TAG" python3-uefi-eventlog__thinkpad_p511.bin.show
check "Windows log: events named (EV_EVENT_TAG)" test $? -eq 0
"$VIGIL" log boot replay --bank sha1 --all "$V/python3-uefi-eventlog__thinkpad_p511.bin" >p511.sha1
check_eq "--all prints 24 PCRs" "$(wc -l <p511.sha1)" 24

# a Spec ID event whose eventSize leaves out vendorInfo: refused (tpm2_eventlog accepts it)
check_rc 2 "specid-vendordata: refused (exit 2)" "$VIGIL" log boot replay "$V/tpm2-tools__specid-vendordata.bin"
"$VIGIL" log boot show "$V/tpm2-tools__specid-vendordata.bin" 2>err
check "... naming event 0, byte 0 and the field" grep -q "event 0 (byte 0): Spec ID event: vendorInfoSize 4 runs past eventSize 37" err

# show: the header and named types; JSON with digests
A=$V/tpm2-tools__event-arch-linux.bin
"$VIGIL" log boot show "$A" >arch.show
check "show: crypto-agile header with both algorithms" grep -q "^# crypto-agile log .*algorithms: sha1/20 sha256/32; 25 events" arch.show
check "show: EV_SEPARATOR on PCR 7 named" grep -q "PCR-07 EV_SEPARATOR sha1:9069ca78e7450a285173431b3e52c5c25299e473 " arch.show
check "show: EV_EFI_VARIABLE_DRIVER_CONFIG named" grep -q " EV_EFI_VARIABLE_DRIVER_CONFIG " arch.show
"$VIGIL" log boot show --json "$A" >arch.json
check "show --json: one object per record, digests and data" python3 -c '
import json, sys
d = json.load(open("arch.json"))
assert d["format"] == "crypto-agile" and len(d["events"]) == 25
assert [a["algorithm"] for a in d["spec_id"]["algorithms"]] == ["sha1", "sha256"]
e = [e for e in d["events"] if e["type"] == "EV_SEPARATOR"][0]
assert e["digests"]["sha1"] == "9069ca78e7450a285173431b3e52c5c25299e473" and e["data"] == "00000000"
assert all(e["offset"] < f["offset"] for e, f in zip(d["events"], d["events"][1:]))'
"$VIGIL" log boot show --json "$V/tpm2-tools__event-uefi-sha1-log.bin" >sha1.json
check "show --json: a legacy SHA-1 log" python3 -c '
import json; d = json.load(open("sha1.json")); assert d["format"] == "sha1" and len(d["events"]) == 17'

# --pcrs: agreement and a mismatch naming the PCR
cp tpm2-tools__event-arch-linux.bin.vigil arch.pcrs
check "--pcrs with the log's own values: exit 0" "$VIGIL" log boot replay --pcrs arch.pcrs "$A"
sed 's/^PCR-04 sha256:./PCR-04 sha256:f/' arch.pcrs >arch-bad.pcrs
cmp -s arch.pcrs arch-bad.pcrs && sed -i 's/^PCR-04 sha256:./PCR-04 sha256:e/' arch-bad.pcrs
"$VIGIL" log boot replay --pcrs arch-bad.pcrs "$A" >/dev/null 2>err
check_eq "--pcrs with PCR 4 changed: exit 1" "$?" 1
check "... naming PCR 4 and both values" grep -q "PCR-04 sha256: expected .*, the log replays to " err

# truncated and corrupted copies
sz=$(stat -c %s "$A")
head -c $((sz - 7)) "$A" >trunc.bin
"$VIGIL" log boot replay trunc.bin >/dev/null 2>err
check_eq "truncated log: exit 2" "$?" 2
check "... naming the last event and its offset" grep -q "trunc.bin: event 24 (byte [0-9]*): eventSize .* runs past the end" err
head -c 1000 "$A" >trunc2.bin
"$VIGIL" log boot show trunc2.bin >/dev/null 2>err
check "cut inside an event's digests: refused naming the event" grep -Eq "event [0-9]+ \(byte [0-9]+\): digest .* truncated|eventSize" err
# the digest count of event 1 (offset 69: after the 32-byte header and 37-byte Spec ID) set to 3
python3 -c '
import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[69 + 8] = 3; open("count.bin", "wb").write(b)' "$A"
"$VIGIL" log boot replay count.bin >/dev/null 2>err
check_eq "3 digests where the header lists 2 algorithms: exit 2" "$?" 2
check "... naming event 1 at byte 69" grep -q "event 1 (byte 69): 3 digests, the Spec ID event lists 2 algorithms" err
python3 -c '
import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[69 + 12] = 0x77; open("alg.bin", "wb").write(b)' "$A"
"$VIGIL" log boot replay alg.bin >/dev/null 2>err
check "a digest of an algorithm the header does not list: refused" grep -q "event 1 (byte 69): digest algorithm 0x0077 is not in the Spec ID event" err
python3 -c '
import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[69 + 14] ^= 1; open("flip.bin", "wb").write(b)' "$A"
"$VIGIL" log boot replay --pcrs arch.pcrs flip.bin >/dev/null 2>err
check_eq "one digest bit flipped: parses, PCR 0 no longer matches (exit 1)" "$?" 1
check "... naming PCR 0 in sha1" grep -q "PCR-00 sha1: expected" err
: >empty.bin
check_rc 2 "empty file: refused" "$VIGIL" log boot show empty.bin
check_rc 2 "missing file: error" "$VIGIL" log boot show nonexistent.bin
check_rc 2 "--bank of a bank the log lacks: error" "$VIGIL" log boot replay --bank sha384 "$A"
check "--help" "$VIGIL" log boot --help
check_rc 2 "unknown subcommand" "$VIGIL" log boot frob "$A"
