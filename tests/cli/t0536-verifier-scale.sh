#!/usr/bin/env bash
# t0536: what a round and the scheduler cost the verifier (issue 44), on
# 40 simulated agents (vigil-fleet-sim) and SQLite:
#  - the rounds run on a pool of at most --max-rounds threads kept
#    between rounds: while 40 rounds a second run, the verifier's network
#    process makes no new thread (a thread per round, as before, made ~40
#    a second);
#  - a round's requests (quote, list) go over one connection kept alive,
#    kept for the agent's next rounds too, and a connection never carries
#    two agents' requests (the simulator's request log names each
#    request's peer address and port): not one new connection per request,
#    nor one per round;
#  - the scheduler asks the store only for the agents due soon, a few
#    columns each: with every agent attested and none due for ten minutes,
#    the network process reads almost nothing from the store process (the
#    listing of every whole agent row, every second and every 500 ms for
#    the push watch, read ~300 KB a second here);
#  - a round's row comes with its claim, its release with the next claim:
#    about 2 store requests a round, not 4 (vigil_verifier_store_requests_total);
#  - /metrics counts the agents by state in the database, reading no row;
#  - and every agent stays trusted, attested every interval.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
att_auth
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SIM=${VIGIL_FLEET_SIM_BIN:?}
N=40
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; sleep 0.5;
      for p in $PIDS; do kill -9 $p 2>/dev/null; done;
      for p in $PIDS; do wait $p 2>/dev/null; done; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
up() { for i in $(seq 300); do curl -s "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

SP=$(vg_port)
timeout 300 "$SIM" --agents $N --port "$SP" --entries 5 --files 200 --ek-ca-out "$T/sim-ca.pem" \
	--policy-log "$T/sim.log" --request-log "$T/requests" --threads 2 >sim.out 2>sim.err &
PIDS="$PIDS $!"
check "the simulator serves $N agents" up "http://127.0.0.1:$SP/a/sim00000/v1/identity"
"$VIGIL" attest policy create --log "$T/sim.log" -o p.json >/dev/null

start_verifier() {	# INTERVAL: sets VPID (the verifier's network process), V
	local p t
	p=$(vg_port)
	timeout 300 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$p --db "sqlite:$T/v.db" \
		--interval "$1" --max-rounds 4 --agent-timeout 3 --ek-ca "$T/sim-ca.pem" \
		2>>verifier.err &
	t=$!
	PIDS="$PIDS $t"
	V=http://127.0.0.1:$p
	up "$V/v1/agents"
	VPID=$(pgrep -o -P "$t")
	PIDS="$PIDS $VPID"
	export VIGIL_VERIFIER=$V
}
rounds() {
	curl -s -H "$ATT_RHDR" "$V/metrics" | awk '$1 ~ /^vigil_verifier_rounds_total/ { n += $2 } END { print n + 0 }'
}
store_requests() {	# the requests to the store process; none: the metric is missing
	curl -s -H "$ATT_RHDR" "$V/metrics" | awk '$1 == "vigil_verifier_store_requests_total" { print $2 }'
}
trusted() {
	"$VIGIL" attest status --json 2>/dev/null |
		python3 -c 'import json, sys; print(sum(a["state"] == "trusted" for a in json.load(sys.stdin)["agents"]))'
}
wait_trusted() {
	for i in $(seq 150); do [ "$(trusted)" = "$N" ] && return 0; sleep 0.2; done
	return 1
}

# ---- 40 agents at --interval 1000, 4 rounds at once ----
start_verifier 1000
"$VIGIL" attest policy set p p.json >/dev/null
seq 0 $((N - 1)) | xargs -P 4 -I{} sh -c '
	id=$(printf "sim%05d" {})
	curl -s -o /dev/null -w "%{http_code}\n" -H "$2" -H "Content-Type: application/json" \
		--data "{\"id\": \"$id\", \"url\": \"http://127.0.0.1:$3/a/$id\", \"policy\": \"p\"}" \
		"$1/v1/agents"' _ "$V" "$ATT_HDR" "$SP" >reg.txt
check_eq "$N agents registered (201 each)" "$(grep -c '^201$' reg.txt)" $N
check "... all trusted" wait_trusted
sleep 2
# the network process's threads, sampled every 2 ms for 3 s: those that
# were not there at the start were made meanwhile
ls "/proc/$VPID/task" | sort >tids0
t0=$(date +%s%3N)
q0=$(store_requests)
r0=$(rounds)
python3 - "/proc/$VPID/task" <<'PY' | sort -u >tids
import os, sys, time
seen, end = set(), time.monotonic() + 3
while time.monotonic() < end:
    seen.update(os.listdir(sys.argv[1]))
    time.sleep(0.002)
print("\n".join(seen))
PY
r1=$(rounds)
q1=$(store_requests)
t1=$(date +%s%3N)
made=$(comm -13 tids0 tids | wc -l)
echo "# $((r1 - r0)) rounds in 3 s, $made thread(s) made meanwhile, $(wc -l <tids0) at the start"
check "rounds ran meanwhile ($((r1 - r0)))" test $((r1 - r0)) -ge 60
check "no thread made for them ($made; a thread per round made one each)" test "$made" -le 2
check "... at most --max-rounds (4) round threads and the fixed ones ($(wc -l <tids0))" \
	test "$(wc -l <tids0)" -le 24
check "every agent still trusted" wait_trusted
# a round's store requests: its claim with its row (its release with the
# next claim), its commit; and the listing every 500 ms, whose share grows
# when a loaded machine runs fewer rounds (a round read its row, released
# it, claimed the next: 3.7 a round here before, 2.3 now)
echo "# $((q1 - q0)) store requests for $((r1 - r0)) rounds"
check "at most 3 store requests a round ($((q1 - q0)) for $((r1 - r0)) rounds; 4 before)" \
	test -n "$q0" -a -n "$q1" -a $(( q1 - q0 )) -le $(( (r1 - r0) * 3 ))
set -- $(awk -v a="$t0" -v b="$t1" '$2 >= a && $2 <= b && ($4 == "/v1/quote" || $4 == "/v1/log") {
		n++; if (!($3 in id)) { id[$3] = $1; c++ } else if (id[$3] != $1) shared++ }
	END { print n + 0, c + 0, shared + 0 }' "$T/requests")
echo "# $1 requests (quotes, lists) over $2 connections in those 3 s, $3 on another agent's connection"
check "a round's quote and list over one connection ($1 requests, $2 connections)" \
	test "$1" -ge 120 -a $(($2 * 18)) -le $(($1 * 10))
check "... and no connection used for two agents ($3 requests)" test "$3" -eq 0
# each agent's connection is kept between its rounds (agent_conns.c): the
# window's rounds, two or more per agent, come over at most one connection
# per agent; a connection per round made one for each
check "an agent's rounds over the one connection kept for it ($2 connections, $N agents, $((r1 - r0)) rounds)" \
	test "$2" -le "$N" -a $((r1 - r0)) -ge $((N + N / 2))

# ---- the same store, none due for ten minutes: the scheduler reads next to nothing ----
kill "$VPID"
for i in $(seq 100); do kill -0 "$VPID" 2>/dev/null || break; sleep 0.1; done
start_verifier 600000
check "... every agent attested once more, then due in 10 minutes" wait_trusted
sleep 3
c0=$(awk '$1 == "rchar:" { print $2 }' "/proc/$VPID/io")
sleep 3
c1=$(awk '$1 == "rchar:" { print $2 }' "/proc/$VPID/io")
echo "# the network process read $((c1 - c0)) bytes in 3 s with nothing due"
check "it read under 30 KB in 3 s ($((c1 - c0)) B; every row every 500 ms: ~1 MB)" \
	test $((c1 - c0)) -lt 30000
# the metrics count the agents by state in the database: a scrape reads no row
c0=$(awk '$1 == "rchar:" { print $2 }' "/proc/$VPID/io")
for i in 1 2 3 4 5; do rounds >/dev/null; done
c1=$(awk '$1 == "rchar:" { print $2 }' "/proc/$VPID/io")
echo "# the network process read $((c1 - c0)) bytes from the store for 5 scrapes of /metrics"
check "5 scrapes of /metrics read under 20 KB ($((c1 - c0)) B; every row of $N agents: ~58 KB each)" \
	test $((c1 - c0)) -lt 20000
check "the verifier is up" kill -0 "$VPID"
check "the verifier logged nothing from the sanitizers" sh -c "! grep -q Sanitizer verifier.err sim.err"
