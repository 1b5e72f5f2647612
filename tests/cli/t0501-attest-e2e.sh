#!/usr/bin/env bash
# t0501: remote attestation end to end on loopback with swtpm: vigil measure
# extends the TPM, vigil-agent serves quotes and the log, vigil-verifier
# (SQLite) attests every 200 ms. Registration with EK-certificate chain and
# credential activation; a good agent stays trusted over many rounds; a
# forged AK, a bad EK certificate, a changed EK, a replayed quote, a wrong
# nonce, an altered entry, a truncated log, a file outside the policy and a
# reboot are each recognised with their typed failure, and the command and
# webhook actions fire.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
AGENT_TAMPER=${VIGIL_AGENT_TAMPER_BIN:?}	# the test build with --tamper-file
VERIFIER=${VIGIL_VERIFIER_BIN:?}
port() { vg_port; }
AP=$(port); VP=$(port); WP=$(port); AP2=$(port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
PIDS=
trap '_rc=$?; for p in $PIDS ${AGENT_PID:-}; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1;
      [ -n "${TPM2:-}" ] && bash "$SRCDIR/scripts/swtpm.sh" stop "$TPM2" >/dev/null 2>&1;
      (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

mkdir -p tree st
for f in a b c; do echo "file $f" >tree/$f; done
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
measure "$T/tree/a" "$T/tree/b" "$T/tree/c"
check "the measured log has 4 entries" test "$("$VIGIL" log show "$T/log" | wc -l)" -eq 4

# the shipped binary has no attacker simulation: --tamper-file is an unknown option
timeout 10 "$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" \
	--tamper-file "$T/tamper" >/dev/null 2>refused.err
check_eq "the shipped vigil-agent refuses --tamper-file (exit 2)" "$?" 2
check "... as an unknown option" grep -q "unrecognized option '--tamper-file'" refused.err
: >tamper
start_agent() {
	# no boot log here: swtpm's PCRs 0-9 are zero (t0505 covers boot logs)
	"$AGENT_TAMPER" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
		--boot-log "$T/no-boot-log" --tamper-file "$T/tamper" 2>>agent.err &
	AGENT_PID=$!
	for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
}
start_agent
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        open(sys.argv[2], "ab").write(self.rfile.read(n) + b"\n")
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' $WP "$T/webhook" &
PIDS="$PIDS $!"
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" --webhook http://127.0.0.1:$WP/hook \
	--on-fail "echo \"\$VIGIL_AGENT \$VIGIL_FAILURE \$VIGIL_PATH\" >>$T/hook" 2>verifier.err &
PIDS="$PIDS $!"
for i in $(seq 600); do
	curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break
	sleep 0.1
done

# field NAME of `vigil attest status --json host1`
field() { att_field "$1"; }
wait_for() { att_wait host1 "$@"; }	# STATE [FAILURE]: up to 15 s
rounds() { field rounds; }

check_eq "without a boot log the agent answers 404" \
	"$(curl -s -H "$ATT_AHDR" -o /dev/null -w '%{http_code}' "127.0.0.1:$AP/v1/bootlog")" 404
check "policy from the known-good log" "$VIGIL" attest policy create --log "$T/log" -o good.json
check "policy uploaded" "$VIGIL" attest policy set good good.json
"$VIGIL" attest add --agent http://127.0.0.1:$AP --policy good >out 2>&1
check_eq "registration with EK certificate chain and credential activation" "$?" 0
check "without an ID, the agent is registered under the id it says" grep -q "^registered host1 " out
check "trusted after the first round" wait_for trusted
check_eq "4 entries verified" "$(field log_entries)" 4
# a good agent stays trusted over many rounds while allowed files are measured again
r0=$(rounds)
for i in 1 2 3 4 5; do measure "$T/tree/a" "$T/tree/b"; sleep 0.3; done
sleep 1
check "still trusted after new allowed entries" wait_for trusted
check "at least 10 more rounds passed" test "$(rounds)" -ge $((r0 + 10))
check_eq "all 14 entries verified" "$(field log_entries)" 14

expect_fail() {	# NAME FAILURE: wait for it, then clear the tamper and reactivate
	check "$1: failed with $2" wait_for failed "$2"
	: >tamper
	"$VIGIL" attest reactivate host1 >/dev/null
	check "$1: trusted again after reactivation" wait_for trusted
}

echo wrong-nonce >tamper
expect_fail "wrong nonce" quote.nonce
echo replay-quote >tamper
expect_fail "replayed old quote" quote.nonce
echo alter-log >tamper
measure "$T/tree/c"
expect_fail "altered log entry" log.entry_digest
echo truncate-log >tamper
measure "$T/tree/c"
expect_fail "truncated log" log.pcr_mismatch
check_eq "the entries hidden by the attacks are verified now" "$(field log_entries)" 16

# registration attacks (the registered record stays as it is)
echo forge-ak >tamper
"$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy good >out 2>&1
check_eq "forged AK: registration refused (exit 1)" "$?" 1
check "forged AK: typed identity.credential" grep -q "FAIL identity.credential" out
echo wrong-ek-cert >tamper
"$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy good >out 2>&1
check_eq "wrong EK certificate: refused (exit 1)" "$?" 1
check "wrong EK certificate: typed identity.ek_cert" grep -q "FAIL identity.ek_cert" out
: >tamper
check "the registered agent is still trusted" wait_for trusted
# another TPM claiming the same agent id
TPM2=$T/tpm2
TCTI2=$(bash "$SRCDIR/scripts/swtpm.sh" start "$TPM2")
mkdir -p st2
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP2 --state "$T/st2" --log "$T/log" --id host1 --tcti "$TCTI2" 2>agent2.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s "127.0.0.1:$AP2/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
"$VIGIL" attest add host1 --agent http://127.0.0.1:$AP2 >out 2>&1
check_eq "another EK for a known id: refused (exit 1)" "$?" 1
check "changed EK: typed identity.ek_changed" grep -q "FAIL identity.ek_changed" out
# an operator-given id that is not the agent's: refused naming both, and not
# as a credential failure (it used to be "ActivateCredential: wrong answer")
"$VIGIL" attest add web7 --agent http://127.0.0.1:$AP >out 2>&1
check_eq "an id the agent does not have: refused (exit 2)" "$?" 2
check "the refusal names both ids" grep -q "registering 'web7', but the agent at http://127.0.0.1:$AP says it is 'host1'" out
check_rc 1 "the refusal is not a credential failure" grep -qi "credential" out
check_rc 2 "nothing registered under the wrong id" "$VIGIL" attest status web7

# a file outside the policy runs
echo "not allowed" >tree/evil
measure "$T/tree/evil"
check "file outside the policy: failed" wait_for failed policy.not_in_policy
"$VIGIL" attest status host1 --history >hist
check "history names the file and its digest" grep -q "policy.not_in_policy entry=16 path=$T/tree/evil digest=sha256:" hist
check_rc 1 "status exits 1 for a failed agent" "$VIGIL" attest status host1
"$VIGIL" attest status host1 >st.out 2>st.err
check "... and says, on stderr, how its rounds resume" \
	grep -q 'host1: failed, its rounds stopped; .*`vigil attest reactivate host1` resumes them' st.err
check_eq "... stdout is the one line" "$(wc -l <st.out)" 1
check "command hook ran" grep -q "host1 policy.not_in_policy $T/tree/evil" "$T/hook"
check "webhook got the notice" grep -Eq "\"failure\": *\"policy.not_in_policy\"" "$T/webhook"
check "failed agent is not polled" test "$(rounds)" = "$(sleep 0.6; rounds)"
# the operator allows it: a new policy, whole list judged again
"$VIGIL" attest policy create --log "$T/log" -o good2.json >/dev/null
"$VIGIL" attest policy set good2 good2.json >/dev/null
check "policy assigned" "$VIGIL" attest policy assign host1 good2
check "trusted under the new policy" wait_for trusted
check_eq "whole list verified again" "$(field log_entries)" 17

# the verifier restarts: its state is in SQLite, attestation goes on incrementally
VPID=$(echo $PIDS | awk '{print $2}')
kill $VPID; wait $VPID 2>/dev/null
PIDS=$(echo $PIDS | awk '{print $1, $3}')
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>>verifier.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
r0=$(rounds)
sleep 1
check "after a verifier restart: still trusted, rounds go on" test "$(rounds)" -gt "$r0"
check_eq "no entry verified twice" "$(field log_entries)" 17

# reboot: the agent stops, the TPM resets (orderly), a new boot writes a
# new log, the agent starts again; the verifier starts the replay over
kill $AGENT_PID; wait $AGENT_PID 2>/dev/null
check "an agent that stops answering is flagged: unreachable, agent.comm" \
	wait_for unreachable agent.comm
rm -f "$T/log"
check "orderly TPM reset" bash "$SRCDIR/scripts/swtpm.sh" reset "$TPMDIR"
start_agent
for i in $(seq 100); do [ "$(field reboots)" = 1 ] && break; sleep 0.1; done
check_eq "reboot recognised" "$(field reboots)" 1
measure "$T/tree/a"
sleep 1
check "trusted after the reboot" wait_for trusted
check_eq "new boot: 2 entries verified" "$(field log_entries)" 2
"$VIGIL" attest status host1 --history >hist
check "history records the reboot" grep -q "state.reboot" hist
# a power loss: the TPM restarts without TPM2_Shutdown, so its clock is not
# "safe" (it may have gone back): quote.unsafe, and the operator is told why
# and how the rounds resume
kill $AGENT_PID; wait $AGENT_PID 2>/dev/null
swtpm_ioctl --unix "$TPMDIR/sock.ctrl" -i >/dev/null
TPM2TOOLS_TCTI=$(bash "$SRCDIR/scripts/swtpm.sh" tcti "$TPMDIR") tpm2_startup -c >/dev/null 2>&1
rm -f "$T/log"
start_agent
measure "$T/tree/a"
check "a TPM restarted without TPM2_Shutdown: failed, quote.unsafe" wait_for failed quote.unsafe
"$VIGIL" attest status host1 >st.out 2>st.err
check "... the operator is told what it means" grep -q 'host1: its TPM was not shut down in order' st.err
check "... and how the rounds resume" grep -q '`vigil attest reactivate host1` resumes them' st.err
check "remove" "$VIGIL" attest remove host1
check_rc 2 "status of a removed agent: error" "$VIGIL" attest status host1
check "the verifier survived" kill -0 $(echo $PIDS | awk '{print $3}')
