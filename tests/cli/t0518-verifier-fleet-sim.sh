#!/usr/bin/env bash
# t0518: two verifiers on one PostgreSQL database (a throwaway cluster,
# tests/lib-pg.sh) attest 200 simulated agents (vigil-fleet-sim: each its
# own software EK with a certificate, RSA-2048 AK, PCR 10 and a list that
# grows by 5 entries per quote; registration and every round are the real
# ones, no shortcut in the verifier):
#  - all 200 registered (MakeCredential / ActivateCredential) and trusted;
#  - each agent attested by exactly one verifier per round: in the
#    simulator's log of every quote it served, no agent was quoted twice
#    within half an interval (two verifiers attesting every agent, as
#    before leases, would quote each twice per interval), and both
#    verifiers ran rounds (their heartbeats);
#  - SIGKILL of one verifier mid-run: every agent it held a lease on is
#    quoted again (by the other) within --interval + --lease + 2 s;
#  - a tampered agent fails with its typed failure (policy.digest),
#    recorded once.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-pg.sh"
vg_init
att_auth
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SIM=${VIGIL_FLEET_SIM_BIN:?}
N=200
INTERVAL=4000 LEASE=4
PIDS=
# TERM first: timeout passes it on to the daemon it runs (a KILL would orphan it)
trap '_rc=$?; vg_pg_cleanup; for p in $PIDS; do kill $p 2>/dev/null; done; sleep 0.5;
      for p in $PIDS; do kill -9 $p 2>/dev/null; done;
      for p in $PIDS; do wait $p 2>/dev/null; done; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
up() { for i in $(seq 300); do curl -s "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

if ! vg_pg_start "$T/pg" 2>pg.err; then
	echo "not ok 1 - a throwaway PostgreSQL cluster starts (scripts/deps.sh installs postgresql)"
	sed 's/^/#   /' pg.err
	exit 1
fi
vg_pg_psql -c "CREATE DATABASE fleet"
DB="postgresql:///fleet?host=$VG_PG_DIR&port=$VG_PG_PORT&user=postgres"
sql() { vg_pg_psql -d fleet -c "$1"; }

SP=$(vg_port)
timeout 600 "$SIM" --agents $N --port "$SP" --entries 5 --files 200 --ek-ca-out "$T/sim-ca.pem" \
	--policy-log "$T/sim.log" --quote-log "$T/quotes" --tamper sim00007 --threads 4 >sim.out 2>sim.err &
PIDS="$PIDS $!"
check "the simulator serves $N agents" up "http://127.0.0.1:$SP/a/sim00000/v1/identity"
"$VIGIL" attest policy create --log "$T/sim.log" -o p.json >/dev/null

start_verifier() {	# ID: sets VPID[ID] (the verifier's, not timeout's), VURL[ID]
	local p t
	p=$(vg_port)
	timeout 600 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$p --db "$DB" --verifier-id "$1" \
		--interval $INTERVAL --agent-timeout 3 --lease $LEASE \
		--ek-ca "$T/sim-ca.pem" 2>>"verifier-$1.err" &
	t=$!
	PIDS="$PIDS $t"
	VURL[$1]=http://127.0.0.1:$p
	up "${VURL[$1]}/v1/agents"
	VPID[$1]=$(pgrep -o -P "$t")
	PIDS="$PIDS ${VPID[$1]}"
}
declare -A VPID VURL
start_verifier va
start_verifier vb
export VIGIL_VERIFIER=${VURL[va]}
"$VIGIL" attest policy set p p.json >/dev/null

# ---- the real registration of each agent, eight at a time, half through each verifier ----
seq 0 $((N - 1)) | xargs -P 8 -I{} sh -c '
	id=$(printf "sim%05d" {}); v=$([ $(({} % 2)) -eq 0 ] && echo "$1" || echo "$2")
	code=$(curl -s -o /dev/null -w "%{http_code}" -H "$3" -H "Content-Type: application/json" \
		--data "{\"id\": \"$id\", \"url\": \"http://127.0.0.1:$4/a/$id\", \"policy\": \"p\"}" \
		"$v/v1/agents")
	echo "$id $code"' _ "${VURL[va]}" "${VURL[vb]}" "$ATT_HDR" "$SP" >reg.txt
check_eq "$N agents registered (201 each)" "$(awk '$2 == 201' reg.txt | wc -l)" $N
awk '$2 != 201' reg.txt | head -3 | sed 's/^/# /'

states() {
	"$VIGIL" attest status --json 2>/dev/null | python3 -c '
import collections, json, sys
c = collections.Counter(a["state"] + ("/" + a["last_failure"] if a["state"] == "failed" else "")
                        for a in json.load(sys.stdin)["agents"])
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'
}
echo "# registered after $SECONDS s"
want="failed/policy.digest=1 trusted=$((N - 1))"
for i in $(seq 240); do s=$(states); [ "$s" = "$want" ] && break; sleep 0.5; done
echo "# states after $SECONDS s: $s"
check_eq "every agent trusted but the tampered one, failed with policy.digest" "$s" "$want"
# the round judges every entry: its 5 new entries are 5 rows, of one round
"$VIGIL" attest status --history sim00007 | grep ' policy.digest ' >hist
check_eq "... its failure recorded by one round: 5 rows (its 5 new entries), one time" \
	"$(wc -l <hist) $(cut -d' ' -f1 hist | sort -u | wc -l)" "5 1"

# ---- one verifier per round: no agent quoted twice within half an interval ----
sleep $((INTERVAL * 3 / 1000))
gaps() {	# FROM_MS: "quotes agents min_gap_ms doubled" over the quote log since FROM_MS
	python3 - "$T/quotes" "$1" "$INTERVAL" <<'PY'
import collections, sys
q = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2 and int(f[1]) >= int(sys.argv[2]):
        q[f[0]].append(int(f[1]))
gaps = [b - a for t in q.values() for a, b in zip(sorted(t), sorted(t)[1:])]
print(sum(map(len, q.values())), len(q), min(gaps) if gaps else -1,
      sum(g < int(sys.argv[3]) // 2 for g in gaps))
PY
}
t_from=$(($(date +%s%N) / 1000000 - INTERVAL * 3))
read -r nq na mingap doubled <<<"$(gaps $t_from)"
echo "# last $((INTERVAL * 3)) ms: $nq quotes of $na agents, shortest gap between two quotes of one agent $mingap ms"
check "every agent quoted in the last 3 intervals (not the failed one: not polled)" test "$na" -ge $((N - 1))
check "no agent quoted twice within half an interval (one verifier per round)" test "$doubled" -eq 0
check "... and the gaps are an interval, not half of one (shortest >= $((INTERVAL / 2)) ms)" \
	test "$mingap" -ge $((INTERVAL / 2))
"$VIGIL" attest status --verifiers --json >ver.json
check "both verifiers ran rounds (the work is shared)" python3 -c '
import json, sys
v = {x["id"]: x for x in json.load(open(sys.argv[1]))["verifiers"]}
print("# rounds: va %d, vb %d" % (v["va"]["rounds"], v["vb"]["rounds"]))
sys.exit(not (v["va"]["rounds"] > 50 and v["vb"]["rounds"] > 50))' ver.json

# ---- SIGKILL of vb holding leases: its agents quoted again within interval + lease ----
held=
for i in $(seq 300); do
	kill -STOP "${VPID[vb]}"
	held=$(sql "SELECT string_agg(id, ' ') FROM agents WHERE lease_owner = 'vb'")
	[ -n "$held" ] && break
	kill -CONT "${VPID[vb]}"
	sleep 0.02
done
kill -9 "${VPID[vb]}"
tk=$(($(date +%s%N) / 1000000))
echo "# vb killed holding the leases of $(echo $held | wc -w) agent(s)"
check "vb held leases when it was killed" test -n "$held"
sleep $((INTERVAL / 1000 + LEASE + 4))
echo "$held" | tr ' ' '\n' >held.txt
rec=$(python3 - "$T/quotes" "$tk" held.txt <<'PY'
import sys
held = set(open(sys.argv[3]).read().split())
first = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2 and f[0] in held and int(f[1]) > int(sys.argv[2]):
        first.setdefault(f[0], int(f[1]))
print(max(first.values()) - int(sys.argv[2]) if len(first) == len(held) else -1)
PY
)
echo "# every agent vb held was quoted again $rec ms after the kill (--interval $INTERVAL ms, --lease $LEASE s)"
check "... each quoted again" test "$rec" -ge 0
check "... within --interval + --lease + 2 s" test "$rec" -le $((INTERVAL + LEASE * 1000 + 2000))
for i in $(seq 60); do s=$(states); [ "$s" = "$want" ] && break; sleep 0.5; done
check_eq "... and va alone attests them all: every agent trusted but the tampered one" "$s" "$want"
check "the verifiers logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T'/verifier-*.err '$T/sim.err'"
