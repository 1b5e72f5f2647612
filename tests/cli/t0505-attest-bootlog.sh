#!/usr/bin/env bash
# t0505: measured boot in remote attestation, end to end with swtpm. A real
# boot event log (Arch Linux, sha1+sha256, PCRs 0-8) is "booted": each of
# its records is extended into the swtpm with tpm2_pcrextend; vigil-agent
# serves it with --boot-log; vigil-verifier fetches it once per boot,
# replays it and checks it against the quoted PCRs 0-9 every round. The
# agent stays trusted; the log is not fetched again within a boot; a boot
# whose log has one record altered fails with boot.pcr_mismatch naming the
# PCR; a policy pinning other PCR values fails with boot.pcr_value, each
# differing PCR listed (issue 39: as Keylime lists them); a
# malformed log with boot.malformed naming the event; a measurement list
# whose boot_aggregate is not the boot log's with boot.aggregate; without a
# boot log everything is as before.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
L=$VECTORS/eventlog/tpm2-tools__event-arch-linux.bin
port() { vg_port; }
AP=$(port); VP=$(port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
VPID=
trap '_rc=$?; for p in ${VPID:-} ${AGENT_PID:-}; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

reboot() {
	kill $AGENT_PID; wait $AGENT_PID 2>/dev/null
	rm -f "$T/log"
	bash "$SRCDIR/scripts/swtpm.sh" reset "$TPMDIR"
}
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
start_agent() {	# [BOOTLOG]
	"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
		--boot-log "${1:-$T/boot.bin}" 2>>agent.err &
	AGENT_PID=$!
	for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
}
start_verifier() {
	"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
		--ek-ca "$TPMDIR/ek-ca.pem" 2>>verifier.err &
	VPID=$!
	for i in $(seq 600); do curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
}
field() { att_field "$1"; }
wait_for() { att_wait host1 "$@"; }	# STATE [FAILURE]: up to 15 s
rounds() { field rounds; }

check "the log's records extended into PCRs 0-9" vg_tpm_boot_extend "$L"
"$VIGIL" log boot replay --bank sha256 "$L" | grep -E '^PCR-0[0-9] ' >replayed
tpm2_pcrread sha256:0,1,2,3,4,5,6,7,8,9 | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.match(r"\s+(\d+)\s*:\s*0x([0-9A-Fa-f]+)", l)
    if m and m.group(2).strip("0"):
        print("PCR-%02d sha256:%s" % (int(m.group(1)), m.group(2).lower()))' >tpm.pcrs
check "the swtpm's non-zero PCRs 0-9 are the log's replay" cmp tpm.pcrs replayed

mkdir -p tree st
for f in a b; do echo "file $f" >tree/$f; done
measure "$T/tree/a" "$T/tree/b"
# boot_aggregate (sha256: PCRs 0-9) from the log's replay equals the list's first entry
agg=$("$VIGIL" log boot replay --bank sha256 --all "$L" | head -10 | python3 -c '
import hashlib, sys
print(hashlib.sha256(b"".join(bytes.fromhex(l.split(":")[1]) for l in sys.stdin)).hexdigest())')
check "the list's boot_aggregate is H(PCR 0-9) of the boot log" \
	grep -q " sha256:$agg boot_aggregate" <("$VIGIL" log show "$T/log")

cp "$L" boot.bin
start_agent
start_verifier
curl -s -H "$ATT_AHDR" -o served "127.0.0.1:$AP/v1/bootlog"
check "the agent serves the boot log byte for byte" cmp served "$L"
"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null
# allow the boot_aggregate of a boot with PCRs 0-9 all zero too (used below)
zero=$(python3 -c 'import hashlib; print(hashlib.sha256(bytes(320)).hexdigest())')
python3 - good.json "$zero" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1])); p["boot_aggregate"].append("sha256:" + sys.argv[2])
json.dump(p, open(sys.argv[1], "w"))
EOF
check "policy uploaded" "$VIGIL" attest policy set good good.json
check "registration" "$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy good
check "trusted: quoted PCRs 0-9 equal the boot log's replay" wait_for trusted
r0=$(rounds)
measure "$T/tree/a"
sleep 1.5
check "still trusted over more rounds" wait_for trusted
check "at least 5 more rounds" test "$(rounds)" -ge $((r0 + 5))
# the log is fetched and replayed once per boot: replaced mid-boot, nothing changes
head -c 100 "$L" >boot.bin
r0=$(rounds)
sleep 1.2
check "a log replaced within the boot is not fetched again: still trusted" wait_for trusted
check "... rounds go on" test "$(rounds)" -gt "$r0"
cp "$L" boot.bin

# reference policy pins a boot PCR
pcr0=$(grep '^PCR-00 ' replayed | cut -d: -f2)
pcr7=$(grep '^PCR-07 ' replayed | cut -d: -f2)
python3 - good.json pinbad.json '{"0": "sha256:'"$(printf '%063d1' 0)"'", "2": "sha256:'"$(printf '%063d2' 0)"'", "7": "sha256:'"$pcr7"'"}' <<'EOF'
import json, sys
p = json.load(open(sys.argv[1])); p["boot_pcrs"] = json.loads(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
EOF
"$VIGIL" attest policy set pinbad pinbad.json >/dev/null
check "policy pinning another PCR 0 assigned" "$VIGIL" attest policy assign host1 pinbad
check "pinned PCR 0 differs: failed boot.pcr_value" wait_for failed boot.pcr_value
check "... naming PCR 0 and the quoted value" grep -q "PCR 0: sha256:$pcr0 is not a value the policy allows" \
	<("$VIGIL" attest status host1 --history)
check "... and PCR 2, every pinned PCR that differs listed as Keylime lists them (PCR 7, pinned to its value, not)" \
	sh -c "'$VIGIL' attest status host1 --history | awk '\$2 == \"boot.pcr_value\"' >pv.txt &&
	       grep -q 'PCR 2: sha256:[0-9a-f]* is not a value the policy allows' pv.txt &&
	       ! grep -q 'PCR 7' pv.txt"
check_eq "... the round counted both" "$(att_field failure_count)" 2
python3 - good.json pingood.json '{"0": ["sha256:'"$(printf '%064d' 0)"'", "'"$pcr0"'"], "7": "sha256:'"$pcr7"'"}' <<'EOF'
import json, sys
p = json.load(open(sys.argv[1])); p["boot_pcrs"] = json.loads(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
EOF
"$VIGIL" attest policy set pingood pingood.json >/dev/null
check "the policy round-trips boot_pcrs" grep -q "\"boot_pcrs\"" <("$VIGIL" attest policy get pingood)
"$VIGIL" attest policy assign host1 pingood >/dev/null
check "PCR 0 and 7 pinned to their values: trusted" wait_for trusted
# policy create pins PCRs 0-7 from a known-good boot log
"$VIGIL" attest policy create --log "$T/log" --boot-log "$L" -o pinlog.json
check_eq "policy create --boot-log: PCRs 0-7 pinned" \
	"$(python3 -c 'import json,sys; print(",".join(sorted(json.load(open(sys.argv[1]))["boot_pcrs"])))' pinlog.json)" \
	"0,1,2,3,4,5,6,7"
"$VIGIL" attest policy set pinlog pinlog.json >/dev/null
"$VIGIL" attest policy assign host1 pinlog >/dev/null
check "... and the agent is trusted under it" wait_for trusted
"$VIGIL" attest policy assign host1 good >/dev/null
check "back to the unpinned policy: trusted" wait_for trusted

# a boot whose log has one record altered (a PCR 4 boot application digest)
"$VIGIL" log boot show --json "$L" | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = [e for e in d["events"] if e["pcr"] == 4 and e["type"] == "EV_EFI_BOOT_SERVICES_APPLICATION"][0]
b = bytearray(open(sys.argv[1], "rb").read())
at = e["offset"] + 12 + 2 + 20 + 2 + 5        # sha1 then sha256 digest: byte 5 of sha256
b[at] ^= 0x40
open("altered.bin", "wb").write(b)' "$L"
reboot
check "reboot: the log's records extended again" vg_tpm_boot_extend "$L"
measure "$T/tree/a" "$T/tree/b"
cp altered.bin boot.bin
start_agent
check "altered record: failed boot.pcr_mismatch" wait_for failed boot.pcr_mismatch
"$VIGIL" attest status host1 --history >hist
check "... naming PCR 4, the quoted and the replayed value" \
	grep -Eq "boot.pcr_mismatch .*PCR 4: the quote has sha256:[0-9a-f]{64}, the boot log \(25 events\) replays to sha256:[0-9a-f]{64}" hist
cp "$L" boot.bin
"$VIGIL" attest reactivate host1 >/dev/null
check "the right log, reactivated: fetched again, trusted" wait_for trusted
check_eq "the reboot was recognised" "$(field reboots)" 1

# a malformed log: the verifier restarts (its cache is per process) and fetches it once
kill $VPID; wait $VPID 2>/dev/null
python3 -c '
import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[69 + 8] = 7; open("boot.bin", "wb").write(b)' "$L"
start_verifier
check "malformed boot log: failed boot.malformed" wait_for failed boot.malformed
check "... naming event 1 at byte 69" grep -q "boot log: event 1 (byte 69): 7 digests" <("$VIGIL" attest status host1 --history)
cp "$L" boot.bin
"$VIGIL" attest reactivate host1 >/dev/null
check "restored: trusted" wait_for trusted

# no boot log: as before (PCRs 0-9 not extended, not checked)
reboot
measure "$T/tree/a"
start_agent "$T/no-such-boot-log"
check "no boot log after a reboot: trusted, as without measured boot" wait_for trusted
check_eq "the reboot was recognised" "$(field reboots)" 2

# a boot whose measurement list was started before the firmware's records
# were extended: its boot_aggregate (all-zero PCRs) is not the boot log's
reboot
measure "$T/tree/a"
check "the log's records extended after the list began" vg_tpm_boot_extend "$L"
start_agent
check "boot_aggregate not the boot log's: failed boot.aggregate" wait_for failed boot.aggregate
check "... naming both values" grep -Eq "boot.aggregate .*boot_aggregate sha256:$zero is not sha256:$agg" \
	<("$VIGIL" attest status host1 --history)
check "the verifier survived" kill -0 $VPID
