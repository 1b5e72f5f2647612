#!/usr/bin/env bash
# t0516: push mode (docs/attest-push.md). The whole test runs in a network
# namespace of its own; the pushing agents run in another one, joined to
# it by a veth pair with addresses the test gives (10.231.0.1 the
# verifier's side, 10.231.0.2 the agents'). The agents open every
# connection: they reach the verifier over HTTPS (its certificate checked
# against a CA), nothing reaches them (no socket listens there, and a
# pulled registration of that address fails). An agent with a client
# certificate and one with a token of role agent register (EK certificate
# against --ek-ca, credential activation) and are attested, trusted;
# their credentials may push only their own evidence: not read, not
# administer, not push for the other id. A used nonce is refused. A
# tampered pushing agent fails with the typed failure of the same tamper
# on a pulled agent; a pushing agent that goes silent (SIGSTOP) becomes
# stale (JSON, text, metric, one state.stale event and hook), and is
# trusted again, not stale, when it pushes again.
if [ -z "${VG_IN_NETNS:-}" ] && [ "$(id -u)" -eq 0 ]; then
	export VG_IN_NETNS=1
	exec unshare -n bash "$0" "$@"
fi
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "1..0 # SKIP needs swtpm and tpm2-tools (scripts/deps.sh)"
	exit 0
fi
ip link set lo up
att_auth

AGENT=${VIGIL_AGENT_BIN:?}
AGENT_TAMPER=${VIGIL_AGENT_TAMPER_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
PIDS= HOLD= TPMS=
trap '_rc=$?; for p in $PIDS; do kill -CONT $p 2>/dev/null; kill $p 2>/dev/null; done;
      [ -n "$HOLD" ] && kill $HOLD 2>/dev/null; wait 2>/dev/null;
      for d in $TPMS; do bash "$SRCDIR/scripts/swtpm.sh" stop "$d" >/dev/null 2>&1; done;
      (exit $_rc); vg_cleanup' EXIT

# three TPMs (UNIX sockets: the agents reach theirs from their namespace)
TPMS="$T/tpm1 $T/tpm2 $T/tpm3"	# stopped by the trap (the watch cannot once $T is gone)
tpm() { bash "$SRCDIR/scripts/swtpm.sh" start "$T/$1" --watch $$; }
TCTI1=$(tpm tpm1) && TCTI2=$(tpm tpm2) && TCTI3=$(tpm tpm3)
check "three swtpm instances" test -n "$TCTI1" -a -n "$TCTI2" -a -n "$TCTI3"
cat "$T/tpm1/ek-ca.pem" "$T/tpm2/ek-ca.pem" "$T/tpm3/ek-ca.pem" >ek-ca.pem

# the agents' namespace, held by a process of its own, and the veth pair
unshare -n sleep 3600 &
HOLD=$!
sleep 0.2
IN() { nsenter -t "$HOLD" -n "$@"; }
NS="nsenter -t $HOLD -n"	# in the background: nsenter becomes the agent (its PID is $!)
ip link add vgpush0 type veth peer name vgpush1 &&
	ip link set vgpush1 netns "$HOLD" &&
	ip addr add 10.231.0.1/24 dev vgpush0 && ip link set vgpush0 up &&
	IN ip addr add 10.231.0.2/24 dev vgpush1 && IN ip link set vgpush1 up && IN ip link set lo up
check_eq "veth pair between the two namespaces" "$?" 0

att_mkca ca; att_mkca agents; att_mkca rogue
att_mkcert api ca IP:10.231.0.1
att_mkcert h1 agents
att_mkcert h1fake rogue
"$VERIFIER" --create-token agent "$T/h2.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1
check "certificates and an agent token made" test -s api.pem -a -s h1.pem -a -s h2.tok

VP=$(vg_port); VPULL=$(vg_port); AP=$(vg_port)
"$VERIFIER" $ATT_VAUTH --listen 10.231.0.1:$VP --db "sqlite:$T/v.db" --interval 1000 \
	--ek-ca ek-ca.pem --api-cert api.pem --api-key api.key --push-client-ca agents.pem \
	--on-fail "echo \"\$VIGIL_AGENT \$VIGIL_FAILURE\" >>$T/hooks" 2>verifier.err &
PIDS="$PIDS $!"
export VIGIL_VERIFIER=https://10.231.0.1:$VP VIGIL_VERIFIER_CACERT=$T/ca.pem
for i in $(seq 100); do "$VIGIL" attest status >/dev/null 2>&1 && break; sleep 0.1; done
check "the verifier serves HTTPS on 10.231.0.1" "$VIGIL" attest status

# the agents' side: it reaches the verifier, nothing reaches it
check_eq "from the agents' namespace the verifier answers (401 without credential)" \
	"$(IN curl -s -o /dev/null -w '%{http_code}' --cacert ca.pem https://10.231.0.1:$VP/v1/agents)" 401

echo "file a" >a; echo "file b" >b
measure() { VIGIL_TCTI=$1 "$VIGIL" measure --log "$2" --tpm "${@:3}" >/dev/null 2>&1; }
measure "$TCTI1" "$T/log1" "$T/a" "$T/b"
measure "$TCTI2" "$T/log2" "$T/a"
check "measured into the pushing agents' TPMs" test -s log1 -a -s log2

: >tamper1
mkdir -p st1 st2 st3
$NS "$AGENT_TAMPER" --push https://10.231.0.1:$VP --push-ca ca.pem --push-cert h1.pem \
	--push-key h1.key --state "$T/st1" --log "$T/log1" --id h1 --tcti "$TCTI1" \
	--boot-log "$T/no-boot-log" --tamper-file "$T/tamper1" 2>agent1.err &
H1=$!
PIDS="$PIDS $H1"
$NS "$AGENT" --push https://10.231.0.1:$VP --push-ca ca.pem --push-token-file "$T/h2.tok" \
	--state "$T/st2" --log "$T/log2" --id h2 --tcti "$TCTI2" --boot-log "$T/no-boot-log" \
	2>agent2.err &
H2=$!
PIDS="$PIDS $H2"

check "h1 (client certificate) registers and is trusted" att_wait h1 trusted
check "h2 (token of role agent) registers and is trusted" att_wait h2 trusted
check_eq "h1 is a push agent" "$(att_field mode h1)" push
check_eq "... its 3 entries verified" "$(att_field log_entries h1)" 3
check_eq "... and not stale" "$(att_field stale h1)" False

check "nothing listens in the agents' namespace but on loopback" \
	test -z "$(IN ss -Htln | awk '$4 !~ /^127\.0\.0\.1:|^\[::1\]:/')"
check_rc 0 "a connection from outside to the agents' namespace fails" \
	test "$(curl -s -o /dev/null -w '%{http_code}' --connect-timeout 2 http://10.231.0.2:9002/v1/identity)" = 000
"$VIGIL" attest add h9 --agent http://10.231.0.2:9002 >pull.out 2>&1
check_eq "a pulled registration of the agents' address fails (exit 1)" "$?" 1
check "... the verifier cannot reach it (agent.comm)" grep -q "FAIL agent.comm" pull.out

# a policy for h1: judged from entry 0 again, trusted
"$VIGIL" attest policy create --log "$T/log1" -o p1.json >/dev/null &&
	"$VIGIL" attest policy set p1 p1.json >/dev/null
check "a policy assigned to the push agent h1" "$VIGIL" attest policy assign h1 p1
check "h1 trusted under its policy" att_wait h1 trusted
check_eq "... its policy is p1" "$(att_field policy h1)" p1

# what the agents' credentials may do: push their own evidence, nothing else
H1C="--cacert ca.pem --cert h1.pem --key h1.key"
H2H="Authorization: Bearer $(cat h2.tok)"
# an agent is two processes (the TPM's, the network's): both stopped, both continued
sig_agent() { kill -$1 $2 $(cat /proc/$2/task/*/children 2>/dev/null); }
code() { curl -s -o "$T/code.out" -w '%{http_code}' "$@"; }
check_eq "h1's certificate may not read the agent list (403)" \
	"$(code $H1C https://10.231.0.1:$VP/v1/agents)" 403
check_eq "h2's token may not read (403)" \
	"$(code --cacert ca.pem -H "$H2H" https://10.231.0.1:$VP/v1/agents/h2)" 403
check_eq "h2's token may not administer (403)" \
	"$(code --cacert ca.pem -H "$H2H" -X DELETE https://10.231.0.1:$VP/v1/agents/h1)" 403
check_eq "h2's token may not ask a nonce for h1 (403)" \
	"$(code --cacert ca.pem -H "$H2H" -X POST https://10.231.0.1:$VP/v1/push/h1/nonce)" 403
check "... refused as another credential's agent" grep -q "registered with another credential" code.out
check_eq "h1's certificate may not push evidence for h2 (403)" \
	"$(code $H1C -X POST -d '{}' https://10.231.0.1:$VP/v1/push/h2/evidence)" 403
check_eq "a certificate from another CA may not push (no credential: 401)" \
	"$(code --cacert ca.pem --cert h1fake.pem --key h1fake.key -X POST https://10.231.0.1:$VP/v1/push/h1/nonce)" 401
check_eq "the admin token may not push (403)" \
	"$(code --cacert ca.pem -H "$ATT_HDR" -X POST https://10.231.0.1:$VP/v1/push/h1/nonce)" 403
check_eq "h2's token may not register h1 again with its identity (403)" \
	"$(code --cacert ca.pem -H "$H2H" -X POST -d '{"ek_pub":"AA==","ak_pub":"AA=="}' https://10.231.0.1:$VP/v1/push/h1/register)" 403
check "h1 and h2 still trusted" att_wait h1 trusted
check "..." att_wait h2 trusted

# a nonce is used once: the second push of the same body is refused, unjudged
sig_agent STOP $H2
sleep 0.3
r0=$(att_field rounds h2)
nonce=$(curl -s --cacert ca.pem -H "$H2H" -X POST https://10.231.0.1:$VP/v1/push/h2/nonce |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["nonce"])')
check "a nonce handed out to h2's credential" test -n "$nonce"
printf '{"nonce":"%s","quote":"{}","log_offset":"0","log":""}' "$nonce" >push.json
code --cacert ca.pem -H "$H2H" -X POST --data-binary @push.json \
	https://10.231.0.1:$VP/v1/push/h2/evidence >first.code
check_eq "evidence pushed with it is judged (a malformed quote: 200, h2 failed)" "$(cat first.code)" 200
check "h2 failed with the typed failure of a malformed quote" att_wait h2 failed quote.malformed
r1=$(att_field rounds h2)
check_eq "the same push again: refused (409)" \
	"$(code --cacert ca.pem -H "$H2H" -X POST --data-binary @push.json https://10.231.0.1:$VP/v1/push/h2/evidence)" 409
check "... as a used nonce" grep -q "nonce unknown or already used" code.out
check_eq "... and nothing judged" "$(att_field rounds h2)" "$r1"
check_eq "a nonce never handed out: refused (409)" \
	"$(code --cacert ca.pem -H "$H2H" -X POST -d '{"nonce":"00112233445566778899","quote":"{}","log_offset":"0"}' https://10.231.0.1:$VP/v1/push/h2/evidence)" 409
sig_agent CONT $H2
"$VIGIL" attest reactivate h2 >/dev/null
check "h2 trusted again once reactivated" att_wait h2 trusted
: "$r0"

# the same tamper, pulled and pushed: the same typed failure
"$VIGIL" attest policy create --log "$T/log1" -o p3.json >/dev/null
measure "$TCTI3" "$T/log3" "$T/a" "$T/b"
"$VIGIL" attest policy create --log "$T/log3" -o p3.json >/dev/null &&
	"$VIGIL" attest policy set p3 p3.json >/dev/null
: >tamper3
"$AGENT_TAMPER" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st3" --log "$T/log3" --id p3 \
	--tcti "$TCTI3" --boot-log "$T/no-boot-log" --tamper-file "$T/tamper3" 2>agent3.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s "127.0.0.1:$AP/" >/dev/null 2>&1 && break; sleep 0.1; done
check "a pulled agent registers on the same verifier" "$VIGIL" attest add p3 \
	--agent http://127.0.0.1:$AP --policy p3
check "the pulled agent is trusted (pull mode as before)" att_wait p3 trusted
check_eq "... and is a pull agent" "$(att_field mode p3)" pull
same_tamper() {	# MODE FAILURE [MEASURE]
	echo "$1" >tamper1; echo "$1" >tamper3
	if [ -n "${3:-}" ]; then
		measure "$TCTI1" "$T/log1" "$T/b"; measure "$TCTI3" "$T/log3" "$T/b"
	fi
	check "$1: the pulled agent fails with $2" att_wait p3 failed "$2"
	check "$1: the pushing agent fails with $2" att_wait h1 failed "$2"
	# state.stale is an event of a loaded machine's timing, not a verdict on the evidence
	"$VIGIL" attest status p3 --history | awk '$2 != "state.stale"' | awk 'NR<=3 {print $2}' >hp3
	"$VIGIL" attest status h1 --history | awk '$2 != "state.stale"' | awk 'NR<=3 {print $2}' >hh1
	check "$1: the same newest history lines (failure ids) for both" cmp -s hp3 hh1
	: >tamper1; : >tamper3
	"$VIGIL" attest reactivate p3 >/dev/null; "$VIGIL" attest reactivate h1 >/dev/null
	check "$1: both trusted again once reactivated" att_wait h1 trusted
	check "..." att_wait p3 trusted
}
same_tamper wrong-nonce quote.nonce
same_tamper alter-log log.entry_digest measure
"$VIGIL" attest status h1 --history >hist1
check "h1's history names its failures" grep -q "log.entry_digest" hist1

# silence: h2 stopped becomes stale, once; it pushes again and is not
: >hooks
"$VIGIL" attest status h2 --history >hist2
n0=$(grep -c ' state.stale ' hist2)
sig_agent STOP $H2
check "a silent push agent becomes stale" sh -c 'for i in $(seq 100); do
	[ "$(VIGIL_VERIFIER='"$VIGIL_VERIFIER"' "$0" attest status --json h2 2>/dev/null |
	   python3 -c "import json,sys; print(json.load(sys.stdin)[\"stale\"])")" = True ] && exit 0
	sleep 0.1; done; exit 1' "$VIGIL"
"$VIGIL" attest status h2 >st2.txt
check "the text never shows it plainly trusted" grep -Eq '^h2 trusted \(stale [0-9]+ ms\)' st2.txt
# the metric is the stale watch's (every 0.5 s), the status's stale is computed when asked
stale_metric() {
	for i in $(seq 20); do
		curl -s --cacert ca.pem -H "$ATT_HDR" https://10.231.0.1:$VP/metrics >metrics.txt
		grep -q '^vigil_verifier_agents_stale 1$' metrics.txt && return 0
		sleep 0.1
	done
	return 1
}
check "the metric counts it (within the watch's 0.5 s)" stale_metric
sleep 2
check_eq "state.stale ran the hook once" "$(grep -c '^h2 state.stale$' hooks)" 1
"$VIGIL" attest status h2 --history >hist2
check_eq "... and is in h2's history once" "$(grep -c ' state.stale ' hist2)" $((n0 + 1))
"$VIGIL" attest status --json h2 >st2.json
check "status JSON valid against its schema" python3 "$SRCDIR/tests/helpers/json_validate.py" \
	"$SRCDIR/docs/schemas/attest-status.schema.json" st2.json
sig_agent CONT $H2
check "it pushes again: not stale" sh -c 'for i in $(seq 100); do
	[ "$(VIGIL_VERIFIER='"$VIGIL_VERIFIER"' "$0" attest status --json h2 2>/dev/null |
	   python3 -c "import json,sys; print(json.load(sys.stdin)[\"stale\"])")" = False ] && exit 0
	sleep 0.1; done; exit 1' "$VIGIL"
check "... and trusted" att_wait h2 trusted
check "h1 was never stale meanwhile" test "$(grep -c '^h1 state.stale$' hooks)" = 0
check "the verifier survived" kill -0 $(echo $PIDS | awk '{print $1}')
check_rc 1 "no sanitizer report" grep -q "runtime error\|AddressSanitizer" verifier.err agent1.err agent2.err
