#!/usr/bin/env bash
# t0538: vigil-fleet-sim's modes for bench/fleet (issue 44), 20 agents each,
# SQLite, so that they do not rot:
#  - TLS: the simulator serves HTTPS (--tls-cert/--tls-key) and asks for
#    the verifier's client certificate (--tls-client-ca); the verifier
#    pulls every agent over https (--agent-ca, --client-cert) every
#    interval, and the simulator counts the handshakes it did;
#  - tampering on a signal: SIGUSR1 sets --tamper-on-signal K agents
#    tampering from their next quote; the quote log marks those quotes and
#    exactly those agents reach failed (policy.digest);
#  - push: a second simulator pushes 20 agents (--push, each its own client
#    certificate from --push-client-ca-out) to a verifier serving HTTPS:
#    all registered, judged every interval with no 409, all trusted.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
att_auth
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SIM=${VIGIL_FLEET_SIM_BIN:?}
N=20
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; sleep 0.5;
      for p in $PIDS; do kill -9 $p 2>/dev/null; done;
      for p in $PIDS; do wait $p 2>/dev/null; done; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

# a throwaway CA: the simulator's server certificate, the verifier's (client and API)
ossl() { openssl "$@" 2>/dev/null; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
	-subj /CN=t0538-ca -days 2
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
for n in sim verifier; do
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $n.key -out $n.csr -subj /CN=$n
	ossl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $n.pem -days 2 -extfile san.ext
done
check "a CA and two certificates made (openssl)" test -s sim.pem -a -s verifier.pem

rounds() {
	curl -s --cacert ca.pem -H "$ATT_RHDR" "$1/metrics" |
		awk '$1 ~ /^vigil_verifier_rounds_total/ { n += $2 } END { print n + 0 }'
}
states() {	# URL: "ID STATE FAILURE" a line
	curl -s --cacert ca.pem -H "$ATT_RHDR" "$1/v1/agents" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["agents"]:
    print(a["id"], a["state"], a.get("failure") or a.get("last_failure") or "-")'
}
wait_listed() {	# URL COUNT: that many agents listed
	for i in $(seq 150); do [ "$(states "$1" | wc -l)" -ge "$2" ] && return 0; sleep 0.2; done
	return 1
}
count_state() { states "$1" | awk -v s="$2" '$2 == s' | wc -l; }
wait_state() {	# URL STATE COUNT
	for i in $(seq 150); do [ "$(count_state "$1" "$2")" -ge "$3" ] && return 0; sleep 0.2; done
	return 1
}

# ---- 1. TLS pull ----
SP=$(vg_port)
timeout 120 "$SIM" --agents $N --port "$SP" --entries 5 --files 200 --ek-ca-out "$T/ek-ca.pem" \
	--policy-log "$T/sim.log" --quote-log "$T/qlog" --tls-cert sim.pem --tls-key sim.key \
	--tls-client-ca ca.pem --tamper-on-signal 2 >sim.out 2>sim.err &
TPID=$!
PIDS="$PIDS $TPID"
for i in $(seq 100); do [ -s sim.out ] && break; sleep 0.1; done
SIMPID=$(pgrep -o -P $TPID)	# the simulator, not its timeout: signals go to it
check "the simulator serves HTTPS" sh -c "curl -sf --cacert ca.pem --cert verifier.pem --key verifier.key \
	https://127.0.0.1:$SP/a/sim00000/v1/identity | grep -q ek_cert"
check "... and refuses a client without a certificate from --tls-client-ca" sh -c \
	"curl -s --cacert ca.pem https://127.0.0.1:$SP/a/sim00000/v1/identity | grep -q 'no client certificate'"
"$VIGIL" attest policy create --log "$T/sim.log" -o p.json >/dev/null

VP=$(vg_port)
V=http://127.0.0.1:$VP
timeout 120 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" --interval 1000 \
	--agent-timeout 5 --ek-ca "$T/ek-ca.pem" --agent-ca ca.pem --client-cert verifier.pem \
	--client-key verifier.key 2>verifier.err &
PIDS="$PIDS $!"
for i in $(seq 100); do curl -s "$V/v1/agents" >/dev/null && break; sleep 0.1; done
VIGIL_VERIFIER=$V "$VIGIL" attest policy set p p.json >/dev/null
seq 0 $((N - 1)) | xargs -P 4 -I{} sh -c '
	id=$(printf "sim%05d" {})
	curl -s -o /dev/null -w "%{http_code}\n" -H "$2" -H "Content-Type: application/json" \
		--data "{\"id\": \"$id\", \"url\": \"https://127.0.0.1:$3/a/$id\", \"policy\": \"p\"}" \
		"$1/v1/agents"' _ "$V" "$ATT_HDR" "$SP" >reg.txt
check_eq "$N agents registered over https (201 each)" "$(grep -c '^201$' reg.txt)" $N
check "... all trusted" wait_state "$V" trusted $N
r0=$(rounds "$V")
sleep 3
r1=$(rounds "$V")
check "rounds over https every interval ($((r1 - r0)) in 3 s)" test $((r1 - r0)) -ge $((2 * N))
kill -USR2 $SIMPID
sleep 0.3
set -- $(grep 'stats:' sim.out | tail -1 | sed 's/.*connections \([0-9]*\) tls_full \([0-9]*\) tls_resumed \([0-9]*\) requests \([0-9]*\).*/\1 \2 \3 \4/')
echo "# simulator: $1 connections, $2 full TLS handshakes, $3 resumed, $4 requests"
check "the simulator counted its TLS handshakes ($2 full + $3 resumed of $1 connections)" \
	test $(($2 + $3)) -ge $N -a $(($2 + $3)) -le "$1"

# ---- 2. tampering on a signal ----
kill -USR1 $SIMPID
check "two agents reach failed after SIGUSR1" wait_state "$V" failed 2
sleep 1
states "$V" | awk '$2 == "failed" { print $1 }' | sort >failed.txt
awk '$4 == "tampered" { print $1 }' "$T/qlog" | sort -u >tampered.txt
grep 'tampering from' sim.out | sed 's/.*(wall ms)://' | tr ' ' '\n' | grep . | sort >named.txt
echo "# failed: $(echo $(cat failed.txt)); tampered quotes from: $(echo $(cat tampered.txt)); named: $(echo $(cat named.txt))"
check_eq "exactly the agents whose tampered quotes the log marks failed" "$(cat failed.txt)" "$(cat tampered.txt)"
check_eq "... the two the simulator named at the signal" "$(cat failed.txt)" "$(cat named.txt)"
check "... with policy.digest" sh -c "states $V | awk '\$2 == \"failed\"' | grep -qv policy.digest && exit 1 || exit 0"
check_eq "the others stay trusted" "$(count_state "$V" trusted)" $((N - 2))

# ---- 3. push over TLS, each agent its client certificate ----
PP=$(vg_port)
PV=https://127.0.0.1:$PP
timeout 120 "$SIM" --agents $N --prefix push --push "$PV" --push-ca ca.pem --entries 5 --files 200 \
	--ek-ca-out "$T/ek-ca2.pem" --push-client-ca-out "$T/push-ca.pem" --push-log "$T/plog" \
	--push-threads 4 >psim.out 2>psim.err &
TPID=$!
PIDS="$PIDS $TPID"
for i in $(seq 100); do [ -s "$T/push-ca.pem" ] && [ -s "$T/ek-ca2.pem" ] && break; sleep 0.1; done
PSIMPID=$(pgrep -o -P $TPID)
timeout 120 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$PP --db "sqlite:$T/p.db" --interval 1000 \
	--ek-ca "$T/ek-ca2.pem" --api-cert verifier.pem --api-key verifier.key \
	--push-client-ca "$T/push-ca.pem" 2>pverifier.err &
PIDS="$PIDS $!"
for i in $(seq 100); do curl -s --cacert ca.pem "$PV/v1/agents" >/dev/null && break; sleep 0.1; done
curl -s --cacert ca.pem -X PUT -H "$ATT_HDR" -H "Content-Type: application/json" --data-binary @p.json \
	"$PV/v1/policies/p" >/dev/null
check "the $N pushing agents registered (each with its own certificate)" wait_listed "$PV" $N
for i in $(seq 0 $((N - 1))); do
	curl -s --cacert ca.pem -o /dev/null -w "%{http_code}\n" -X PUT -H "$ATT_HDR" \
		-H "Content-Type: application/json" --data '{"policy": "p"}' \
		"$PV/v1/agents/$(printf push%05d $i)/policy"
done >assign.txt
check_eq "a policy assigned to each" "$(grep -c '^200$' assign.txt)" $N
check "... all trusted" wait_state "$PV" trusted $N
sleep 1
t0=$(date +%s%3N)
sleep 4
t1=$(date +%s%3N)
python3 - "$T/plog" "$t0" "$t1" $N >judged.txt <<'PY'
import sys
per, codes = {}, {}
t0, t1 = int(sys.argv[2]), int(sys.argv[3])
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4 and t0 <= int(p[1]) <= t1:
        codes[p[2]] = codes.get(p[2], 0) + 1
        if p[2] == "200":
            per[p[0]] = per.get(p[0], 0) + 1
print(len(per), min(per.values()) if per else 0, codes.get("409", 0), sum(codes.values()))
PY
set -- $(cat judged.txt)
echo "# in 4 s: $1 agents judged, at least $2 pushes each, $3 answered 409, $4 pushes"
check_eq "every pushing agent judged in those 4 s" "$1" $N
check "... at least 3 times each (interval 1 s: $2)" test "$2" -ge 3
check_eq "... and no push answered 409" "$3" 0
kill -USR2 $PSIMPID
sleep 0.3
grep 'push:' psim.out | tail -1 | sed 's/^/# /'
# (a 409 "retry" is expected when a policy assignment restarts an agent's
# judgement while it pushes: the next challenge asks for entry 0)
check "the push simulator counted no failed push" sh -c \
	"grep 'push:' psim.out | tail -1 | grep -q ' failed 0 '"
check "nothing from the sanitizers" sh -c "! grep -q Sanitizer sim.err psim.err verifier.err pverifier.err"
