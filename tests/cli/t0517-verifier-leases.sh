#!/usr/bin/env bash
# t0517: verifiers sharing one PostgreSQL database (a throwaway cluster,
# tests/lib-pg.sh) share the agents through leases (verifier/scheduler.c),
# against 6 real agents (swtpm + vigil-agent each, on loopback):
#  - bad --lease / --verifier-id are refused before the verifier serves;
#  - two verifiers: both run rounds, each at least 40% of them (a verifier
#    that ran more than its share lets the other claim first), and each
#    agent has one round per interval, not one per verifier (with both
#    attesting every agent, as before leases, each would have two);
#  - `vigil attest status --verifiers` lists both alive, with their load
#    (the JSON validates against attest-verifiers.schema.json);
#  - SIGKILL of one verifier: every agent it held a lease on is attested
#    again by the other within --interval + --lease (+ 2 s of slack), and
#    the dead one is listed dead;
#  - a verifier started with another id takes work again;
#  - every verifier killed for longer than --interval + --lease: the one
#    that comes back reports state.stale for the trusted agents nobody
#    attested (history and --on-fail), and attests them;
#  - one id: a verifier started under the id of one running is refused; a
#    killed one's successor under its id takes over once its beat is 5 s
#    old; two that run under one id all the same (one paused past 5 s):
#    the younger stops with exit 2, the elder goes on.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-pg.sh"
vg_init
att_auth
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "1..0 # SKIP needs swtpm and tpm2-tools (scripts/deps.sh)"
	trap - EXIT
	exit 0
fi
AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SW="$SRCDIR/scripts/swtpm.sh"
N=6
PIDS=
TPMS=
# TERM first: timeout passes it on to the daemon it runs (a KILL would orphan it)
trap '_rc=$?; vg_pg_cleanup; for p in $PIDS; do kill $p 2>/dev/null; done; sleep 0.5;
      for p in $PIDS; do kill -9 $p 2>/dev/null; done;
      for p in $PIDS; do wait $p 2>/dev/null; done;
      for d in $TPMS; do bash "$SW" stop "$d" >/dev/null 2>&1; done; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
up() { for i in $(seq ${2:-100}); do curl -s "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
# "ID ROUNDS STATE" of every agent, by id, from verifier $1
agents() {
	VIGIL_VERIFIER=$1 "$VIGIL" attest status --json 2>/dev/null | python3 -c '
import json, sys
for a in sorted(json.load(sys.stdin)["agents"], key=lambda a: a["id"]):
    print(a["id"], a["rounds"], a["state"])'
}
all_trusted() {	# URL SECONDS
	local i
	for i in $(seq $(($2 * 5))); do
		[ "$(agents "$1" | awk '$2 >= 1 && $3 == "trusted"' | wc -l)" -eq $N ] && return 0
		sleep 0.2
	done
	agents "$1" | sed 's/^/# /'
	return 1
}

if ! vg_pg_start "$T/pg" 2>pg.err; then
	echo "not ok 1 - a throwaway PostgreSQL cluster starts (scripts/deps.sh installs postgresql)"
	sed 's/^/#   /' pg.err
	exit 1
fi
vg_pg_psql -c "CREATE DATABASE fleet"
DB="postgresql:///fleet?host=$VG_PG_DIR&port=$VG_PG_PORT&user=postgres"
sql() { vg_pg_psql -d fleet -c "$1"; }

# ---- the agents: one swtpm each, each provisioned (an EK is one agent's: issue 39) ----
for i in $(seq $N); do
	TPMS="$TPMS $T/tpm$i"
	tcti=$(bash "$SW" start "$T/tpm$i" --watch $$) || { echo "not ok 1 - swtpm $i starts"; exit 1; }
	VIGIL_TCTI=$tcti "$VIGIL" measure --log "$T/log$i" --tpm /etc/hostname >/dev/null 2>&1
	mkdir -p "$T/st$i"
	AP[$i]=$(vg_port)
	VIGIL_TCTI=$tcti "$AGENT" $ATT_AAUTH --listen 127.0.0.1:${AP[$i]} --state "$T/st$i" \
		--log "$T/log$i" --id "h0$i" --boot-log "$T/no-boot-log" 2>"agent$i.err" &
	APID[$i]=$!
	PIDS="$PIDS $!"
done
for i in $(seq $N); do up "127.0.0.1:${AP[$i]}/v1/identity"; done
cat "$T"/tpm*/ek-ca.pem >"$T/ek-ca.pem"	# each TPM's own local CA
"$VIGIL" attest policy create --log "$T/log1" -o p.json >/dev/null
cat >hook.sh <<HOOK
#!/bin/sh
echo "\$VIGIL_AGENT \$VIGIL_FAILURE" >>"$T/hooks"
HOOK
chmod +x hook.sh
: >hooks

# ---- settings refused before the verifier serves ----
check_rc 2 "--lease not above --agent-timeout is refused" "$VERIFIER" $ATT_VAUTH \
	--listen 127.0.0.1:1 --db "sqlite:$T/x.db" --agent-timeout 5 --lease 5
check "... the message says why" grep -q -- "--lease 5: more than --agent-timeout (5 s)" <(
	"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:1 --db "sqlite:$T/x.db" --agent-timeout 5 \
		--lease 5 2>&1)
check_rc 2 "--verifier-id with a slash is refused" "$VERIFIER" $ATT_VAUTH \
	--listen 127.0.0.1:1 --db "sqlite:$T/x.db" --verifier-id a/b
check_rc 2 "--verifier-id of 64 characters is refused" "$VERIFIER" $ATT_VAUTH \
	--listen 127.0.0.1:1 --db "sqlite:$T/x.db" --verifier-id "$(printf 'v%.0s' $(seq 64))"
check_rc 2 "--lease 0 is refused" "$VERIFIER" $ATT_VAUTH \
	--listen 127.0.0.1:1 --db "sqlite:$T/x.db" --lease 0

# ---- two verifiers, one database ----
INTERVAL=1000 LEASE=4
# ID [NAME]: sets VPID[NAME] (the verifier's, not timeout's: SIGKILL is for
# it), TPID[NAME] (timeout's: its exit status is the verifier's), VURL[NAME];
# NAME is ID unless given, its log verifier-NAME.err
start_verifier() {
	local p t n=${2:-$1}
	p=$(vg_port)
	timeout 300 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$p --db "$DB" --verifier-id "$1" \
		--interval $INTERVAL --agent-timeout 2 --lease $LEASE --on-fail "$T/hook.sh" \
		--ek-ca "$T/ek-ca.pem" 2>>"verifier-$n.err" &
	t=$!
	PIDS="$PIDS $t"
	TPID[$n]=$t
	VURL[$n]=http://127.0.0.1:$p
	# a restart under an id waits until its predecessor's beat is 5 s old
	up "${VURL[$n]}/v1/agents" 300
	VPID[$n]=$(pgrep -o -P "$t")
	PIDS="$PIDS ${VPID[$n]}"
}
declare -A VPID TPID VURL
start_verifier va
start_verifier vb
export VIGIL_VERIFIER=${VURL[va]}
"$VIGIL" attest policy set p p.json >/dev/null
for i in $(seq $N); do
	"$VIGIL" attest add "h0$i" --agent "http://127.0.0.1:${AP[$i]}" --policy p >/dev/null
done
check "$N agents trusted (seen through va)" all_trusted "${VURL[va]}" 60
check "... and through vb" all_trusted "${VURL[vb]}" 10
rounds() { sql "SELECT id, rounds FROM agents ORDER BY id" | tr '|' ' '; }
ta=$(date +%s%N)
vrounds() { sql "SELECT id, rounds FROM verifiers ORDER BY id" | tr '|' ' '; }
rounds >r1
vrounds >v1
sleep 10
rounds >r2
vrounds >v2
win=$((($(date +%s%N) - ta) / 1000000))
join r1 r2 | awk '{ print $1, $3 - $2 }' >delta
sed "s/^/# rounds in $win ms: /" delta
# one verifier per round: at most the window / --interval + 1 each (two
# verifiers each attesting every agent would give about twice as many)
check "each agent: one round per interval, not one per verifier (at most $((win / INTERVAL + 1)))" \
	awk -v max=$((win / INTERVAL + 1)) '$2 > max { exit 1 } END { exit NR != '$N' }' delta
check "... and its rounds went on (at least 5 in 10 s)" awk '$2 < 5 { exit 1 }' delta
# the work is shared, not taken by whichever verifier has the most rounds
# running (each one's round threads claim the next due agent as they end):
# a verifier that ran more than its share lets the other claim first
join v1 v2 | awk '{ print $1, $3 - $2 }' >vdelta
sed "s/^/# verifier rounds in $win ms: /" vdelta
check "each verifier ran at least 40% of the rounds in the window" \
	awk '{ n[NR] = $2; t += $2 } END { exit !(NR == 2 && n[1] * 5 >= t * 2 && n[2] * 5 >= t * 2) }' vdelta
"$VIGIL" attest status --verifiers --json >ver.json
sed 's/^/# /' ver.json | grep -E '"(id|alive|rounds|running)"'
VS="/usr/bin/python3 $SRCDIR/tests/helpers/json_validate.py $SRCDIR/docs/schemas/attest-verifiers.schema.json"
check "status --verifiers --json validates against attest-verifiers.schema.json" $VS ver.json
check "both verifiers ran rounds (the work is shared)" python3 -c '
import json, sys
v = {x["id"]: x for x in json.load(open(sys.argv[1]))["verifiers"]}
sys.exit(not (v["va"]["rounds"] > 0 and v["vb"]["rounds"] > 0 and v["va"]["alive"] and v["vb"]["alive"]))' ver.json
check "... va answered (self)" python3 -c '
import json, sys; sys.exit(json.load(open(sys.argv[1]))["self"] != "va")' ver.json
"$VIGIL" attest status --verifiers >ver.txt
sed 's/^/# /' ver.txt
check "the text lists va alive, answering" grep -Eq '^va [^ ]+ pid=[0-9]+ alive \(beat [0-9]+ ms ago\) running=[0-9]+/16 rounds=[0-9]+ late=0 \(answering\)$' ver.txt
check "... and vb alive" grep -Eq '^vb [^ ]+ pid=[0-9]+ alive ' ver.txt
check_rc 2 "status --verifiers with an agent id is refused" "$VIGIL" attest status --verifiers h01
# an id already beating: refused before it serves, naming the id and who holds it
check_rc 2 "a third verifier with vb's id (vb running) is refused" "$VERIFIER" $ATT_VAUTH \
	--listen 127.0.0.1:1 --db "$DB" --verifier-id vb --ek-ca "$T/ek-ca.pem"
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:1 --db "$DB" --verifier-id vb --ek-ca "$T/ek-ca.pem" 2>dup.err
check "... saying vb is running, with its pid" grep -q -- "--verifier-id vb: a verifier running beats under this id (host [^,]*, pid ${VPID[vb]}," dup.err

# ---- SIGKILL of va: its agents are attested again by vb within interval + lease ----
# the agents' rounds, as the database has them, every 50 ms with its clock:
# the recovery time below is the database's, not our polling's
printf '%s\n' "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint, string_agg(id || ':' || rounds, ' ' ORDER BY id) FROM agents;" '\watch 0.05' |
	vg_pg_psql -d fleet >watch.txt 2>/dev/null &
WATCH=$!
PIDS="$PIDS $WATCH"
# va is made to hold a lease: h01's agent is stopped, so a round of h01
# waits for it (--agent-timeout 2 s) with the lease held, and vb is stopped,
# so that va is the one that claims h01. Catching va in a round of a
# running agent did not do: its rounds are short, and on a loaded machine
# 600 looks found none. va is stopped at a look that finds its lease (so
# that it releases nothing between our look and the kill), then killed.
kill -STOP "${VPID[vb]}" "${APID[1]}"
held=
for i in $(seq 300); do
	kill -STOP "${VPID[va]}"
	held=$(sql "SELECT string_agg(id, ' ') FROM agents WHERE lease_owner = 'va'")
	[[ " $held " == *" h01 "* ]] && break
	held=
	kill -CONT "${VPID[va]}"
	sleep 0.05
done
echo "# va held a lease of h01 at look $i"
kill -CONT "${VPID[vb]}"
t0=$(sql "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint")
kill -9 "${VPID[va]}"
kill -CONT "${APID[1]}"
check "va (pid ${VPID[va]}) is gone" sh -c "sleep 0.2; ! kill -0 ${VPID[va]} 2>/dev/null"
echo "# va killed holding the leases of: $held"
check "va held a lease when it was killed" test -n "$held"
export VIGIL_VERIFIER=${VURL[vb]}
sleep $((INTERVAL / 1000 + LEASE + 6))
kill $WATCH 2>/dev/null
recovered=$(python3 - "$t0" "$held" watch.txt <<'PY'
import sys
t0, held = int(sys.argv[1]), sys.argv[2].split()
rows = []
for line in open(sys.argv[3]):
    if "|" not in line:
        continue
    ms, agents = line.strip().split("|", 1)
    rows.append((int(ms), dict(x.split(":") for x in agents.split())))
base = [r for ms, r in rows if ms <= t0][-1]
for ms, r in rows:
    if ms > t0 and all(int(r[h]) > int(base[h]) for h in held):
        print(ms - t0)
        break
PY
)
echo "# every agent va held was attested again after ${recovered:-?} ms (--interval $INTERVAL ms, --lease $LEASE s)"
check "... each attested again by vb" test -n "$recovered"
check "... within --interval + --lease + 3 s" test "${recovered:-99999}" -le $((INTERVAL + LEASE * 1000 + 3000))
check "... and no agent of them was left failed or unreachable" all_trusted "${VURL[vb]}" 10
sleep 5
"$VIGIL" attest status --verifiers --json >ver2.json
check "va is listed dead (no heartbeat for 5 s), vb alive" python3 -c '
import json, sys
v = {x["id"]: x for x in json.load(open(sys.argv[1]))["verifiers"]}
sys.exit(not (not v["va"]["alive"] and v["vb"]["alive"]))' ver2.json

# ---- a verifier with another id takes work again ----
start_verifier vc
r0=$(curl -s -H "$ATT_RHDR" "${VURL[vc]}/v1/verifiers" | python3 -c '
import json, sys; print({x["id"]: x for x in json.load(sys.stdin)["verifiers"]}.get("vc", {}).get("rounds", 0))')
took=
for i in $(seq 100); do
	n=$(curl -s -H "$ATT_RHDR" "${VURL[vc]}/v1/verifiers" | python3 -c '
import json, sys; print({x["id"]: x for x in json.load(sys.stdin)["verifiers"]}.get("vc", {}).get("rounds", 0))')
	[ "$n" -gt 0 ] && { took=$n; break; }
	sleep 0.1
done
echo "# vc ran $took round(s) (from $r0)"
check "vc, started after va died, runs rounds (its heartbeat says so)" test -n "$took"

# ---- nobody attests for longer than interval + lease: the next verifier says stale ----
kill -9 "${VPID[vb]}" "${VPID[vc]}"
for i in $(seq 50); do kill -0 "${VPID[vb]}" 2>/dev/null || kill -0 "${VPID[vc]}" 2>/dev/null || break; sleep 0.1; done
sleep $((LEASE + INTERVAL / 1000 + 3))
: >hooks
start_verifier vd
export VIGIL_VERIFIER=${VURL[vd]}
for i in $(seq 100); do [ "$(grep -c ' state.stale$' hooks)" -ge $N ] && break; sleep 0.1; done
sed 's/^/# hook: /' hooks
check_eq "vd reports state.stale once for each trusted agent (--on-fail)" \
	"$(grep ' state.stale$' hooks | sort -u | wc -l) $(grep -c ' state.stale$' hooks)" "$N $N"
"$VIGIL" attest status --history h01 >hist
check "h01's history records state.stale" grep -q ' state.stale .*no verifier attested it' hist
check "... and the agents are attested again, trusted" all_trusted "${VURL[vd]}" 20
# ---- vd SIGKILLed and started again at once under its id: its last beat is
# fresh but stops (watched until it is 5 s old), so the new one takes the id
# over (and gives back the leases the dead one held, once a second old) ----
old_vd=${VPID[vd]}
kill -9 "$old_vd"
for i in $(seq 50); do kill -0 "$old_vd" 2>/dev/null || break; sleep 0.1; done
start_verifier vd
check "vd started again at once under its id: it serves" kill -0 "${VPID[vd]}"
check "... after seeing its predecessor's beat stop" grep -q -- "--verifier-id vd: the last heartbeat under this id (host [^,]*, pid $old_vd) stopped" verifier-vd.err
# watched until it is as old as a dead verifier's (5 s), not taken at its first pause
stopped=$(sed -n "s/.*under this id (host [^,]*, pid $old_vd) stopped \([0-9]*\) ms ago.*/\1/p" verifier-vd.err | tail -1)
echo "# vd took the id over when its predecessor's last beat was ${stopped:-?} ms old"
check "... once that beat was 5 s old (a dead verifier's), not before" test "${stopped:-0}" -ge 5000
check "... and the agents are trusted" all_trusted "${VURL[vd]}" 20

# ---- two verifiers under one id all the same: ve paused past 5 s (counted
# dead), a second ve takes the id over, ve resumes. Each reads the other's
# beat in its row; the younger stops (exit 2), the elder goes on ----
start_verifier ve
old_ve=${VPID[ve]}
for i in $(seq 100); do	# its first beat written (it comes after the API listens)
	[ "$(sql "SELECT pid FROM verifiers WHERE id = 've'")" = "$old_ve" ] && break
	sleep 0.1
done
kill -STOP "$old_ve"
start_verifier ve ve2
new_ve=${VPID[ve2]}
check "a second ve, ve paused: takes the id over once ve's beat is 5 s old" grep -q -- "--verifier-id ve: the last heartbeat under this id (host [^,]*, pid $old_ve) stopped" verifier-ve2.err
kill -CONT "$old_ve"
for i in $(seq 150); do kill -0 "${TPID[ve2]}" 2>/dev/null || break; sleep 0.1; done
wait "${TPID[ve2]}"
rc2=$?
sed 's/^/# ve2: /' verifier-ve2.err | grep -- '--verifier-id' || true
check_eq "ve resumed: the second ve (started after it) stops, exit 2" "$rc2" 2
check "... saying whose id it is (ve's pid, started before it)" grep -q -- "--verifier-id ve: another verifier beats under this id (host [^,]*, pid $old_ve, started [0-9]* ms before us): stopping" verifier-ve2.err
check "... ve goes on serving" kill -0 "$old_ve"
check "... and says so, once, naming the second's pid" test "$(grep -c -- "--verifier-id ve: another verifier beats under this id (host [^,]*, pid $new_ve, started [0-9]* ms after us): it stops, we go on" verifier-ve.err)" = 1
sleep 1.5
VIGIL_VERIFIER=${VURL[ve]} "$VIGIL" attest status --verifiers --json >ver3.json
check "... its row is ve's again (status --verifiers)" python3 -c '
import json, sys
v = {x["id"]: x for x in json.load(open(sys.argv[1]))["verifiers"]}
sys.exit(not (v["ve"]["alive"] and v["ve"]["pid"] == int(sys.argv[2])))' ver3.json "$old_ve"
check "the verifiers logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T'/verifier-*.err"
