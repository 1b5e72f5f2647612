#!/usr/bin/env bash
# t0520: the event-level measured-boot policy ("measured_boot",
# attest_mbpolicy.h) end to end with swtpm. Keylime's real Secure Boot log
# (RHEL 9: shim, GRUB, kernel, PCR 0-9 and 14) is "booted" into the swtpm
# (each record for PCRs 0-9 extended with tpm2_pcrextend), served by
# vigil-agent --boot-log and judged by vigil-verifier under a policy that
# `vigil attest policy create --boot-log --no-boot-pins` learnt from it:
# trusted. Then four tampered boots, each log made self-consistent
# (tests/helpers/mb_tamper.py recomputes the changed event's digests) and the
# swtpm's PCRs extended to match it, so the quote agrees with the log and
# only the event is wrong: Secure Boot off (SecureBoot=0), a kernel the
# policy does not list (another authenticode digest), a kernel signed by a
# key the policy does not allow (the vendor_db certificate that verified
# GRUB and the kernel is another one), a changed kernel command line. Each fails with boot.event naming the event, never
# boot.pcr_mismatch; the untampered log, rebooted into, is trusted again.
# PCR 14 (shim's MOK lists) is quoted and replayed too: a host that booted
# another MOK list and serves the original log is boot.pcr_mismatch.
# POST /v1/verify/evidence, sent the same evidence (the boot log as mb_log),
# gives the same verdicts; sent Keylime's reference state of the log as
# mb_policy (issue 39), it judges the events by it: valid for the good
# boot (beside a runtime policy without measured_boot, or alone), the same
# boot.event for each tampered boot.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
L=$VECTORS/eventlog/keylime__binary_bios_measurements-secureboot
AP=$(vg_port); VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
VPID=
trap '_rc=$?; for p in ${VPID:-} ${AGENT_PID:-}; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
start_agent() {	# BOOTLOG
	"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
		--boot-log "$1" 2>>agent.err &
	AGENT_PID=$!
	for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
}
# boot LOG [SERVED]: a new boot of LOG (the TPM reset, the log extended, a
# new measurement list), the agent serving LOG, or SERVED (a host that lies)
boot() {
	if [ -n "${AGENT_PID:-}" ]; then kill $AGENT_PID; wait $AGENT_PID 2>/dev/null; fi
	rm -f "$T/log"
	bash "$SRCDIR/scripts/swtpm.sh" reset "$TPMDIR" || return 1
	vg_tpm_boot_extend "$1" || return 1
	measure "$T/tree/a" || return 1
	start_agent "${2:-$1}"
}
wait_for() { att_wait host1 "$@"; }
pj() { /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# stateless OUT [MASK [DATA]]: the agent's evidence of now (quote of PCRs 0-10 and
# 14, or MASK; the list, the boot log) judged by POST /v1/verify/evidence under the
# policy "mb", no agent state used; DATA (JSON) replaces members of the request's
# data (null removes one)
stateless() {
	local n
	n=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/quote?nonce=$n&bank=sha256&mask=${2:-47ff}" >q.json
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/identity" >id.json
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/log?offset=0" -o cur.log
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/bootlog" -o cur.boot
	"$VIGIL" log convert --to ascii -o cur.ascii cur.log >/dev/null
	/usr/bin/python3 - "$n" "$1.json" "${3:-{\}}" <<'PY'
import base64, json, sys
data = {"quote": json.load(open("q.json")), "nonce_hex": sys.argv[1], "hash_alg": "sha256",
        "tpm_ak": json.load(open("id.json"))["ak_pub"], "runtime_policy_name": "mb",
        "ima_measurement_list": open("cur.ascii").read(),
        "mb_log": base64.b64encode(open("cur.boot", "rb").read()).decode()}
for k, v in json.loads(sys.argv[3]).items():
    if v is None:
        data.pop(k, None)
    else:
        data[k] = v
json.dump({"type": "tpm", "data": data}, open(sys.argv[2], "w"))
PY
	curl -s -o "$1.out" -w '%{http_code}' -X POST -H "$ATT_RHDR" \
		-H 'Content-Type: application/json' --data-binary "@$1.json" \
		"127.0.0.1:$VP/v1/verify/evidence" >"$1.code"
}

mkdir -p tree st
echo "file a" >tree/a
check "booted the Secure Boot log" boot "$L"
"$VIGIL" log boot replay --bank sha256 "$L" | grep -E '^PCR-0[0-9] ' >replayed
tpm2_pcrread sha256:0,1,2,3,4,5,6,7,8,9 | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.match(r"\s+(\d+)\s*:\s*0x([0-9A-Fa-f]+)", l)
    if m and m.group(2).strip("0"):
        print("PCR-%02d sha256:%s" % (int(m.group(1)), m.group(2).lower()))' >tpm.pcrs
check "the swtpm's PCRs 0-9 are the log's replay" cmp tpm.pcrs replayed

"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>>verifier.err &
VPID=$!
for i in $(seq 600); do curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done

# the policy: the list's files, every boot's boot_aggregate (each boot's is
# checked against its boot log: boot.aggregate), the boot log's events, no PCR pins
check "policy create --boot-log --no-boot-pins" "$VIGIL" attest policy create --log "$T/log" \
	--boot-log "$L" --no-boot-pins --exclude '^boot_aggregate$' -o mb.json
check_eq "... writes measured_boot and no boot_pcrs" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); m = p["measured_boot"]
print("boot_pcrs" in p, m["secure_boot"], len(m["kernel"]), len(m["db"]), len(m["kernel_cmdline"]))' mb.json)" \
	"False True 1 4 1"
check_rc 2 "--no-boot-pins without --boot-log is a usage error" \
	"$VIGIL" attest policy create --log "$T/log" --no-boot-pins -o /dev/null
check "policy create --boot-log --no-measured-boot" "$VIGIL" attest policy create --log "$T/log" \
	--boot-log "$L" --no-measured-boot --exclude '^boot_aggregate$' -o pins.json
check_eq "... writes boot_pcrs 0-7 and no measured_boot" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(sorted(p["boot_pcrs"]), "measured_boot" in p)' pins.json)" \
	"['0', '1', '2', '3', '4', '5', '6', '7'] False"
check_rc 2 "--no-measured-boot without --boot-log is a usage error" \
	"$VIGIL" attest policy create --log "$T/log" --no-measured-boot -o /dev/null
check_rc 2 "... and with --no-boot-pins (nothing left)" \
	"$VIGIL" attest policy create --boot-log "$L" --no-boot-pins --no-measured-boot -o /dev/null
"$VIGIL" attest policy create --log "$T/log" --boot-log "$L" -o pinned.json
check "by default the PCRs 0-7 stay pinned as well" python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); assert sorted(p["boot_pcrs"]) == list("01234567") and p["measured_boot"]' pinned.json
check "policy uploaded" "$VIGIL" attest policy set mb mb.json
check "the verifier keeps the section" grep -q '"measured_boot"' <("$VIGIL" attest policy get mb)
check "registration" "$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy mb
check "the known-good boot: trusted" wait_for trusted
stateless good
check_eq "POST /v1/verify/evidence on the same boot: valid" "$(pj good.out 'j["valid"]')" True
# Keylime's mb_policy (its reference state of this log, made by its create_mb_policy.py):
# judged as the measured_boot section, beside a runtime policy that has none, or alone
"$VIGIL" attest policy create --log "$T/log" --exclude '^boot_aggregate$' -o plain.json
"$VIGIL" attest policy set plain plain.json >/dev/null
REF=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' \
	"$VECTORS/attest/keylime-mb-refstate-secureboot.json")
MBP="{\"runtime_policy_name\": \"plain\", \"mb_policy\": $REF}"
MBA="{\"runtime_policy_name\": null, \"ima_measurement_list\": null, \"mb_policy\": $REF}"
stateless kl-good 47ff "$MBP"
check_eq "an mb_policy (Keylime's reference state) beside a policy without measured_boot: valid" \
	"$(pj kl-good.out 'j["valid"]')" True
stateless kl-alone 43ff "$MBA"
check_eq "... and alone (no runtime policy, PCRs 0-9 and 14 quoted, no list): valid" \
	"$(pj kl-alone.out 'j["valid"]')" True
# the pins alone: stateless evidence without a boot log passes (a measured_boot section fails it)
"$VIGIL" attest policy set pins pins.json >/dev/null
stateless pins-nolog 47ff '{"runtime_policy_name": "pins", "mb_log": null}'
check_eq "the pins-only policy: evidence without a boot log is valid" "$(pj pins-nolog.out 'j["valid"]')" True
stateless mb-nolog 47ff '{"mb_log": null}'
check_eq "... which a measured_boot policy fails: boot.event" \
	"$(pj mb-nolog.out '[f["type"] for f in j["failures"]]')" "['boot.event']"
stateless kl-none 47ff '{"runtime_policy_name": "plain"}'
check_eq "without it the same evidence has no event judged: valid too" \
	"$(pj kl-none.out 'j["valid"]')" True
stateless kl-bad 47ff '{"runtime_policy_name": "plain", "mb_policy": "accept-all"}'
check_eq "an mb_policy that is no reference state: 400" "$(cat kl-bad.code)" 400
check "... saying so of mb_policy" grep -q "mb_policy" kl-bad.out
r0=$(att_field rounds)
sleep 1.2
check "... over more rounds" test "$(att_field rounds)" -gt "$r0"

n=0
for c in secureboot-off kernel-unsigned kernel-foreign-key cmdline; do
	ev=$(python3 "$SRCDIR/tests/helpers/mb_tamper.py" "$c" "$L" "$c.bin") || { check "tamper $c" false; continue; }
	case $c in
	secureboot-off) what="event $ev EV_EFI_VARIABLE_DRIVER_CONFIG PCR 7: SecureBoot=0, the policy requires Secure Boot on" ;;
	kernel-unsigned) what="event $ev EV_EFI_BOOT_SERVICES_APPLICATION PCR 4: kernel sha256:[0-9a-f]{64} is not one the policy allows" ;;
	kernel-foreign-key) what="event $ev EV_EFI_VARIABLE_AUTHORITY PCR 7: an image was verified by vendor_db certificate [0-9a-f:sha]+, not an authority the policy allows" ;;
	cmdline) what="event $ev EV_IPL PCR 8: kernel command line \".* init=/bin/sh\" is not one the policy allows" ;;
	esac
	check "$c: booted (PCRs extended to match the tampered log)" boot "$T/$c.bin"
	check "$c: failed boot.event" wait_for failed boot.event
	"$VIGIL" attest status host1 --history >hist
	check "$c: ... naming the event: $what" grep -Eq "boot.event .*$what" hist
	check "$c: ... and not boot.pcr_mismatch (the quote matches the tampered log)" \
		sh -c "! grep -q 'boot.pcr_mismatch' hist"
	stateless "st-$c"
	check_eq "$c: POST /v1/verify/evidence on the same evidence: the same failure" \
		"$(pj "st-$c.out" '[(f["type"], f["context"]["entry"]) for f in j["failures"]]')" \
		"[('boot.event', $ev)]"
	stateless "kl-$c" 47ff "$MBP"
	check_eq "$c: ... judged by Keylime's mb_policy: the same failure" \
		"$(pj "kl-$c.out" '[(f["type"], f["context"]["entry"]) for f in j["failures"]]')" \
		"[('boot.event', $ev)]"
	n=$((n + 1))
	check "the untampered log, rebooted into" boot "$L"
	"$VIGIL" attest reactivate host1 >/dev/null
	check "$c: ... is trusted again" wait_for trusted
done
check_eq "four tampered boots judged" "$n" 4

# PCR 14 is proven too: shim extends it with the MOK lists, which the
# measured_boot section judges. A host whose shim measured another MOK list
# (a key of its own enrolled), and whose agent serves the original log, is
# boot.pcr_mismatch naming PCR 14; before PCR 14 was replayed it was
# trusted, the lie judged as the log said.
ev=$(python3 "$SRCDIR/tests/helpers/mb_tamper.py" mok-foreign "$L" mok.bin)
check_eq "the MokList event changed (index 30 of the log)" "$ev" 30
check "booted with another MOK list, the agent serving the original log" boot "$T/mok.bin" "$L"
check "... failed boot.pcr_mismatch" wait_for failed boot.pcr_mismatch
check "... naming PCR 14 and the two values" grep -Eq \
	"boot.pcr_mismatch .*PCR 14: the quote has sha256:[0-9a-f]{64}, the boot log \([0-9]+ events\) replays to sha256:" \
	<("$VIGIL" attest status host1 --history)
stateless st-mok
check_eq "POST /v1/verify/evidence on the same evidence: the same failure" \
	"$(pj st-mok.out '[f["type"] for f in j["failures"]]')" "['boot.pcr_mismatch']"
stateless st-no14 7ff
check_eq "... and a quote without PCR 14 cannot pass a measured_boot policy" \
	"$(pj st-no14.out '(j["valid"], [f["context"]["message"] for f in j["failures"]])')" \
	"(False, ['PCR 14 is not quoted: the MOK lists the measured_boot section judges cannot be checked'])"
check "the untampered log, rebooted into" boot "$L"
"$VIGIL" attest reactivate host1 >/dev/null
check "... is trusted again" wait_for trusted

# a boot whose agent serves no boot log cannot pass a policy that judges its events
kill $AGENT_PID; wait $AGENT_PID 2>/dev/null
rm -f "$T/log"
bash "$SRCDIR/scripts/swtpm.sh" reset "$TPMDIR"
measure "$T/tree/a"
start_agent "$T/no-such-boot-log"
check "no boot log under a measured_boot policy: failed boot.event" wait_for failed boot.event
check "... saying so" grep -q "no boot event log: the policy's measured_boot section judges its events" \
	<("$VIGIL" attest status host1 --history)
check "booted the Secure Boot log again" boot "$L"
"$VIGIL" attest reactivate host1 >/dev/null
check "the log served again: trusted" wait_for trusted

# a policy change is judged on the boot log the verifier already has (fetched again)
python3 - mb.json cmd.json <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["measured_boot"]["kernel_cmdline"] = ["ro quiet"]
json.dump(p, open(sys.argv[2], "w"))
EOF
"$VIGIL" attest policy set cmd cmd.json >/dev/null
"$VIGIL" attest policy assign host1 cmd >/dev/null
check "another command line allowed by a new policy: failed boot.event" wait_for failed boot.event
check "... naming GRUB's PCR 8 event" grep -Eq "boot.event .*EV_IPL PCR 8: kernel command line" \
	<("$VIGIL" attest status host1 --history)
"$VIGIL" attest policy assign host1 mb >/dev/null
"$VIGIL" attest reactivate host1 >/dev/null
check "back to the learnt policy: trusted" wait_for trusted
check "the verifier survived" kill -0 $VPID
check "the daemons logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T'/verifier.err '$T'/agent.err"
