#!/usr/bin/env bash
# t0527: nothing outside the verifier holds it up (issue 39, item 3). A
# fleet of simulated agents (vigil-fleet-sim: each its own software EK and
# AK, the real registration and rounds), one in ten tampered so that it
# fails policy.digest from its second round on, against one verifier with
# a --webhook and an --on-fail command that takes 0.2 s each time.
# No round is late while they register at once (a new agent is due from
# when the verifier lists it). Once the fleet is settled (the tampered
# agents failed), the webhook
# endpoint goes silent (it accepts every connection, reads the notice and
# never answers) and the tampered agents are reactivated: they fail again,
# and over the next three intervals
#  - every round stays on time: no late round (the verifier's own count,
#    vigil_verifier_late_rounds_total) and no agent quoted later than an
#    interval + 1 s after its previous quote (the simulator's quote log);
#  - GET /v1/agents answers in under 100 ms, 9 times of 10 at least;
#  - the notices wait in the webhook's queue (pending, failed attempts,
#    none sent); once the endpoint answers every one arrives, once, and
#    the command ran once per failure;
#  - with --notify-queue 2 and the endpoint silent again, the failures of
#    the agents reactivated at once overflow it: dropped notices counted and
#    logged, rounds still on time;
#  - SIGTERM with the webhook silent: the verifier ends within 3 s.
# CI sizes (N=100, one in ten failing); bench/notices runs 1,000 with 100.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
att_auth
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SIM=${VIGIL_FLEET_SIM_BIN:?}
N=${VG_NOTICE_AGENTS:-100}
EVERY=10
F=$((N / EVERY))
INTERVAL=3000
PIDS= VPID= WPID=
trap '_rc=$?; for p in $VPID $WPID $PIDS; do kill $p 2>/dev/null; done; sleep 0.3;
      for p in $VPID $WPID $PIDS; do kill -9 $p 2>/dev/null; done;
      for p in $VPID $WPID $PIDS; do wait $p 2>/dev/null; done; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
up() { for i in $(seq 300); do curl -s -o /dev/null "$@" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
pj() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
metric() { awk -v k="$1" '$1 == k {print $2}' "$2"; }

# the webhook endpoint: "silent" accepts, reads and never answers; "answer" logs and answers 200
cat >hook_sink.py <<'PY'
import http.server, json, socketserver, sys, time
port, modef, logf = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if open(modef).read().strip() == "silent":
            time.sleep(3600)
            return
        with open(logf, "a") as f:
            f.write(json.dumps(json.loads(body)) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", port), H).serve_forever()
PY
echo answer >mode
: >notices.log
WP=$(vg_port)
python3 hook_sink.py "$WP" "$T/mode" "$T/notices.log" 2>sink.err &
WPID=$!

SP=$(vg_port)
timeout 900 "$SIM" --agents $N --port "$SP" --entries 5 --files 200 --ek-ca-out "$T/sim-ca.pem" \
	--policy-log "$T/sim.log" --quote-log "$T/quotes" --tamper-every $EVERY --threads 4 \
	>sim.out 2>sim.err &
PIDS="$PIDS $!"
check "the simulator serves $N agents ($F of them tampered)" up "http://127.0.0.1:$SP/a/sim00000/v1/identity"
"$VIGIL" attest policy create --log "$T/sim.log" -o p.json >/dev/null

VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
start_verifier() {	# [OPTIONS...]: sets VPID (the verifier's, not timeout's)
	local t
	timeout 900 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" \
		--interval $INTERVAL --agent-timeout 3 --ek-ca "$T/sim-ca.pem" \
		--webhook "http://127.0.0.1:$WP/notice" \
		--on-fail "sleep 0.2; echo \"\$VIGIL_AGENT \$VIGIL_FAILURE\" >>$T/hooks" \
		"$@" 2>>verifier.err &
	t=$!
	up -H "$ATT_RHDR" "$VIGIL_VERIFIER/v1/agents" || return 1
	VPID=$(pgrep -o -P "$t")
	PIDS="$PIDS $t"
}
check "the verifier, its webhook, a command taking 0.2 s" start_verifier
"$VIGIL" attest policy set p p.json >/dev/null
seq 0 $((N - 1)) | xargs -P 8 -I{} sh -c '
	id=$(printf "sim%05d" {})
	code=$(curl -s -o /dev/null -w "%{http_code}" -H "$1" -H "Content-Type: application/json" \
		--data "{\"id\": \"$id\", \"url\": \"http://127.0.0.1:$2/a/$id\", \"policy\": \"p\"}" \
		"$3/v1/agents")
	echo "$id $code"' _ "$ATT_HDR" "$SP" "$VIGIL_VERIFIER" >reg.txt
check_eq "$N agents registered (201 each)" "$(awk '$2 == 201' reg.txt | wc -l)" $N
tampered=$(seq $((EVERY - 1)) $EVERY $((N - 1)) | while read -r i; do printf 'sim%05d\n' "$i"; done)

states() {
	"$VIGIL" attest status --json 2>/dev/null | python3 -c '
import collections, json, sys
c = collections.Counter(a["state"] + ("/" + a["last_failure"] if a["state"] == "failed" else "")
                        for a in json.load(sys.stdin)["agents"])
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'
}
want="failed/policy.digest=$F trusted=$((N - F))"
for i in $(seq 240); do s=$(states); [ "$s" = "$want" ] && break; sleep 0.5; done
echo "# states after $SECONDS s: $s"
check_eq "every tampered agent failed policy.digest, the others trusted" "$s" "$want"

# ---- the webhook silent, the tampered agents fail again: three intervals ----
# the notices of the failures so far sent first
for i in $(seq 1200); do
	curl -s -H "$ATT_RHDR" "$VIGIL_VERIFIER/metrics" >m0.prom
	[ "$(metric 'vigil_verifier_notices_pending{target="hook"}' m0.prom)" = 0 ] &&
		[ "$(metric 'vigil_verifier_notices_pending{target="webhook"}' m0.prom)" = 0 ] && break
	sleep 0.1
done
check_eq "no round late while $N agents registered at once" \
	"$(metric vigil_verifier_late_rounds_total m0.prom)" 0
echo silent >mode
: >notices.log
: >hooks
t_from=$(($(date +%s%N) / 1000000))
echo "$tampered" | while read -r id; do "$VIGIL" attest reactivate "$id" >/dev/null; done
: >lat.txt
for i in $(seq 10); do
	curl -s -o /dev/null -w '%{time_total}\n' -H "$ATT_RHDR" "$VIGIL_VERIFIER/v1/agents" >>lat.txt
	sleep 0.9
done
t_to=$(($(date +%s%N) / 1000000))
s=$(states)
curl -s -H "$ATT_RHDR" "$VIGIL_VERIFIER/metrics" >m1.prom
check_eq "the reactivated agents failed again meanwhile" "$s" "$want"
echo "# GET /v1/agents: $(sort -n lat.txt | awk '{printf "%.0f ", $1 * 1000} END {print "ms"}')"
check "GET /v1/agents answers in under 100 ms (9 times of 10 at least) while notices wait" \
	test "$(awk '$1 < 0.1' lat.txt | wc -l)" -ge 9
check_eq "no round late meanwhile (vigil_verifier_late_rounds_total)" \
	"$(( $(metric vigil_verifier_late_rounds_total m1.prom) - $(metric vigil_verifier_late_rounds_total m0.prom) ))" 0
echo "$tampered" >tampered.txt
gaps() {	# FROM TO: "agents quoted, the longest gap (ms) between two quotes of one not tampered"
	python3 - "$T/quotes" "$1" "$2" "$T/tampered.txt" <<'PY'
import collections, sys
skip = set(open(sys.argv[4]).read().split())
q = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2 and int(sys.argv[2]) - 8000 <= int(f[1]) <= int(sys.argv[3]):
        q[f[0]].append(int(f[1]))
gaps = [b - a for i, t in q.items() if i not in skip for a, b in zip(sorted(t), sorted(t)[1:])
        if b >= int(sys.argv[2])]
print(len(q), max(gaps) if gaps else -1)
PY
}
sleep 2		# the simulator writes its quote log every second
read -r na maxgap <<<"$(gaps $t_from $t_to)"
echo "# quoted meanwhile: $na agents, the longest gap between two quotes of one agent $maxgap ms"
check "every agent not failed quoted meanwhile" test "$na" -ge $((N - F))
check "... each within an interval + 1 s of its previous quote (every round on time)" \
	test "$maxgap" -gt 0 -a "$maxgap" -le $((INTERVAL + 1000))
delta() { echo $(( $(metric "$1" m1.prom) - $(metric "$1" m0.prom) )); }
check "the webhook's notices wait: pending, attempts failed, none sent" \
	test "$(metric 'vigil_verifier_notices_pending{target="webhook"}' m1.prom)" -ge 1 -a \
	"$(delta 'vigil_verifier_notices_failed_total{target="webhook"}')" -ge 1 -a \
	"$(delta 'vigil_verifier_notices_sent_total{target="webhook"}')" -eq 0
q1=$(delta 'vigil_verifier_notices_queued_total{target="webhook"}')
check_eq "... every failure queued for it" "$q1" $F
check "the log says a notice was not delivered" \
	grep -q "webhook: notice of sim.* not delivered: .*timed out: no complete answer within --agent-timeout" verifier.err

# ---- the endpoint answers: every notice arrives, once ----
echo answer >mode
for i in $(seq 600); do
	[ "$(python3 -c 'import sys; print(sum(1 for l in open(sys.argv[1])))' notices.log)" -ge "$q1" ] && break
	sleep 0.1
done
python3 - notices.log <<'PY' >got.txt
import json, sys
for l in open(sys.argv[1]):
    n = json.loads(l)
    print(n["agent"], n["failure"])
PY
awk '{print $2}' got.txt | sort | uniq -c | sed 's/^ */# notices: /'
check_eq "once it answers, the $F policy.digest notices arrive, one per tampered agent" \
	"$(grep ' policy.digest$' got.txt | sort)" "$(echo "$tampered" | sed 's/$/ policy.digest/')"
curl -s -H "$ATT_RHDR" "$VIGIL_VERIFIER/metrics" >m2.prom
check "... every one sent, once: nothing pending or dropped" \
	test "$(( $(metric 'vigil_verifier_notices_sent_total{target="webhook"}' m2.prom) -
		$(metric 'vigil_verifier_notices_sent_total{target="webhook"}' m0.prom) ))" -eq "$q1" -a \
	"$(wc -l <notices.log)" -eq "$q1" -a \
	"$(metric 'vigil_verifier_notices_pending{target="webhook"}' m2.prom)" -eq 0 -a \
	"$(metric 'vigil_verifier_notices_dropped_total{target="webhook"}' m2.prom)" -eq 0
for i in $(seq 300); do [ "$(grep -c ' policy.digest$' hooks 2>/dev/null)" -ge $F ] && break; sleep 0.1; done
check_eq "the command ran once per failure" "$(grep ' policy.digest$' hooks | sort)" \
	"$(echo "$tampered" | sed 's/$/ policy.digest/')"
check "the metrics are valid Prometheus text" python3 "$SRCDIR/tests/helpers/prom_check.py" m2.prom \
	--require vigil_verifier_notices_queued_total --require vigil_verifier_notices_dropped_total

# ---- a queue of 2: the overflow is dropped, counted and said; rounds stay on time ----
echo silent >mode
kill "$VPID"
for i in $(seq 50); do kill -0 "$VPID" 2>/dev/null || break; sleep 0.1; done
check "restarted with --notify-queue 2" start_verifier --notify-queue 2
echo "$tampered" | while read -r id; do "$VIGIL" attest reactivate "$id" >/dev/null; done
for i in $(seq 240); do s=$(states); [ "$s" = "$want" ] && break; sleep 0.5; done
t_from=$(($(date +%s%N) / 1000000))
sleep $((INTERVAL * 2 / 1000))
t_to=$(($(date +%s%N) / 1000000))
curl -s -H "$ATT_RHDR" "$VIGIL_VERIFIER/metrics" >m3.prom
check_eq "the reactivated agents fail again" "$s" "$want"
d=$(metric 'vigil_verifier_notices_dropped_total{target="webhook"}' m3.prom)
check "the notices past the queue's 2 (and the one being sent) are dropped: $d counted" \
	test "$d" -ge $((F - 3))
check "... queued + dropped: every failure" \
	test "$(( $(metric 'vigil_verifier_notices_queued_total{target="webhook"}' m3.prom) + d ))" -ge $F
check "... and said in the log" grep -q "webhook: queue full (2 notices, --notify-queue): [0-9]* notice(s) dropped" verifier.err
check_eq "no round late meanwhile" "$(metric vigil_verifier_late_rounds_total m3.prom)" 0
sleep 2
read -r na maxgap <<<"$(gaps $t_from $t_to)"
check "... every round on time (longest gap $maxgap ms)" \
	test "$maxgap" -gt 0 -a "$maxgap" -le $((INTERVAL + 1000))

# ---- the stop does not wait for a silent webhook ----
t0=$(date +%s%N)
kill "$VPID"
for i in $(seq 100); do kill -0 "$VPID" 2>/dev/null || break; sleep 0.05; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "SIGTERM with notices waiting on a silent webhook: ended in ${ms} ms (under 3 s)" \
	test "$ms" -lt 3000
check "... saying what it left" grep -q "notice(s) not sent at the stop" verifier.err
check "the verifier logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T/verifier.err' '$T/sim.err'"
