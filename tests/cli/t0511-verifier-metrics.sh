#!/usr/bin/env bash
# t0511: vigil-verifier's GET /metrics (issue 15, item 5), on loopback with
# swtpm: it needs a credential like every route (none: 401; read: 200), is
# text/plain; version=0.0.4, passes tests/helpers/prom_check.py, and counts
# what happened: rounds by result and failure type (a file outside the
# policy fails the agent: policy.not_in_policy), the round duration
# histogram, agents by state, API answers by status class (the 401 is
# counted as 4xx). `vigil attest status --json` (one agent, all, history)
# validates against docs/schemas/attest-status.schema.json.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start
AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
AP=$(vg_port); VP=$(vg_port)
V=http://127.0.0.1:$VP
A=http://127.0.0.1:$AP
export VIGIL_VERIFIER=$V
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
PC="/usr/bin/python3 $SRCDIR/tests/helpers/prom_check.py"
up() { for i in $(seq 100); do curl -s "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
# metrics FILE: GET /metrics with the read token into FILE; prints the status
metrics() { curl -s --max-time 10 -D hdr -o "$1" -w '%{http_code}' -H "$ATT_RHDR" "$V/metrics"; }
value() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

mkdir -p tree st
echo a >tree/a
"$VIGIL" measure --log "$T/log" --tpm "$T/tree/a" >/dev/null 2>&1
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--boot-log "$T/no-boot-log" 2>agent.err &
PIDS="$PIDS $!"
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>verifier.err &
PIDS="$PIDS $!"
up "$A/v1/identity"; up "$V/v1/agents"

check_eq "no credential: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$V/metrics")" 401
check_eq "POST with the admin token: 405" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$ATT_HDR" "$V/metrics")" 405
check_eq "read token: 200" "$(metrics m0.prom)" 200
check "text/plain; version=0.0.4" grep -qi '^content-type: text/plain; version=0.0.4' hdr
check "valid, with the families asked for" $PC m0.prom --require vigil_verifier_rounds_total \
	--require vigil_verifier_round_failures_total --require vigil_verifier_round_duration_seconds \
	--require vigil_verifier_agents --require vigil_verifier_http_requests_total
check_eq "no agent yet" "$(awk '/^vigil_verifier_agents/ {s += $2} END {print s}' m0.prom)" 0
check "the 401 is counted" test "$(value 'vigil_verifier_http_requests_total{code="4xx"}' m0.prom)" -ge 2

"$VIGIL" attest policy create --log "$T/log" -o p.json >/dev/null
"$VIGIL" attest policy set p p.json >/dev/null
"$VIGIL" attest add host1 --agent "$A" --policy p >/dev/null
check "trusted" att_wait host1 trusted
sleep 0.5
metrics m1.prom >/dev/null
check "valid" $PC m1.prom
check_eq "one agent, trusted" "$(value 'vigil_verifier_agents{state="trusted"}' m1.prom)" 1
check "rounds passed counted" test "$(value 'vigil_verifier_rounds_total{result="pass"}' m1.prom)" -ge 1
check "the duration histogram counts every round" test \
	"$(value vigil_verifier_round_duration_seconds_count m1.prom)" -ge \
	"$(value 'vigil_verifier_rounds_total{result="pass"}' m1.prom)"
check "2xx answers counted" test "$(value 'vigil_verifier_http_requests_total{code="2xx"}' m1.prom)" -ge 3

echo evil >tree/evil
"$VIGIL" measure --log "$T/log" --tpm "$T/tree/evil" >/dev/null 2>&1
check "a file outside the policy: failed" att_wait host1 failed policy.not_in_policy
metrics m2.prom >/dev/null
check "valid" $PC m2.prom
check_eq "the failed round, by result" "$(value 'vigil_verifier_rounds_total{result="fail"}' m2.prom)" 1
check_eq "... and by failure type" \
	"$(value 'vigil_verifier_round_failures_total{failure="policy.not_in_policy"}' m2.prom)" 1
check_eq "the agent is failed" "$(value 'vigil_verifier_agents{state="failed"}' m2.prom)" 1
check_eq "none trusted" "$(value 'vigil_verifier_agents{state="trusted"}' m2.prom)" 0

# ---- vigil attest status --json against its schema ----
AS="/usr/bin/python3 $SRCDIR/tests/helpers/json_validate.py $SRCDIR/docs/schemas/attest-status.schema.json"
"$VIGIL" attest status --json host1 >as1.json
check "attest status --json ID validates" $AS as1.json
"$VIGIL" attest status --json >as2.json
check "attest status --json (every agent) validates" $AS as2.json
"$VIGIL" attest status --json --history host1 >as3.json
check "attest status --json --history validates" $AS as3.json
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["rounds"]="1"; print(json.dumps(d))' \
	as1.json >as4.json
check_rc 1 "... and a mutated one (rounds a string) does not" $AS as4.json
