#!/usr/bin/env bash
# t0537: a pushing agent behind a round-robin in front of two verifiers
# sharing one store (PostgreSQL, a throwaway cluster as t0517's,
# tests/lib-pg.sh; docs/attest-push.md): its state between requests is the
# store's, so any verifier answers any of its requests.
#  - an HTTPS round-robin (python, below: a layer-7 balancer) sends each
#    request to the next verifier in turn; the agent keeps one connection
#    to it (agent_push.c), so its registration's two steps land on the two
#    verifiers, and so do the nonce and the evidence of each push;
#  - it registers, and for 8 s every interval (1 s) is attested: rounds
#    grow by one an interval (at least 6 in 8 s: a loaded machine's slack),
#    both verifiers answer, no 409 anywhere;
#  - a second agent behind a second round-robin that holds its second
#    request (the activation) until told: the verifier that took the
#    first step is SIGKILLed, then the activation goes to the other, which
#    completes the registration, and the agent is trusted;
#  - the first agent is attested on by the verifier left.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-pg.sh"
vg_init
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "1..0 # SKIP needs swtpm and tpm2-tools (scripts/deps.sh)"
	trap - EXIT
	exit 0
fi
att_auth

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
PIDS= TPMS=
# TERM first: timeout passes it on to the verifier it runs
trap '_rc=$?; vg_pg_cleanup; for p in $PIDS; do kill $p 2>/dev/null; done; sleep 0.3;
      for p in $PIDS; do kill -9 $p 2>/dev/null; done; for p in $PIDS; do wait $p 2>/dev/null; done;
      for d in $TPMS; do bash "$SRCDIR/scripts/swtpm.sh" stop "$d" >/dev/null 2>&1; done;
      (exit $_rc); vg_cleanup' EXIT

TPMS="$T/tpm1 $T/tpm2"
TCTI1=$(bash "$SRCDIR/scripts/swtpm.sh" start "$T/tpm1" --watch $$) &&
	TCTI2=$(bash "$SRCDIR/scripts/swtpm.sh" start "$T/tpm2" --watch $$)
check "two swtpm instances" test -n "$TCTI1" -a -n "$TCTI2"
cat "$T/tpm1/ek-ca.pem" "$T/tpm2/ek-ca.pem" >ek-ca.pem

att_mkca ca
att_mkcert api ca IP:127.0.0.1
"$VERIFIER" --create-token agent "$T/p1.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1
"$VERIFIER" --create-token agent "$T/p2.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1
check "a certificate and two agent tokens" test -s api.pem -a -s p1.tok -a -s p2.tok

if ! vg_pg_start "$T/pg" 2>pg.err; then
	echo "not ok - a throwaway PostgreSQL cluster starts (scripts/deps.sh installs postgresql)"
	sed 's/^/#   /' pg.err
	exit 1
fi
vg_pg_psql -c "CREATE DATABASE push"
DB="postgresql:///push?host=$VG_PG_DIR&port=$VG_PG_PORT&user=postgres"

# two verifiers, one store
VA=$(vg_port) VB=$(vg_port)
verifier() {	# PORT NAME
	timeout 300 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$1 --db "$DB" \
		--interval 1000 --verifier-id "$2" --ek-ca ek-ca.pem --api-cert api.pem \
		--api-key api.key 2>"$2.err" &
}
verifier "$VA" va
PA=$!
verifier "$VB" vb
PB=$!
PIDS="$PIDS $PA $PB"
up() { for i in $(seq 100); do curl -s --cacert ca.pem -H "$ATT_RHDR" "$1/v1/agents" >/dev/null && return 0; sleep 0.1; done; return 1; }
check "verifier A serves" up https://127.0.0.1:$VA
check "verifier B serves" up https://127.0.0.1:$VB

# rr PORT LOG BACKENDS [HOLD_N RELEASE_FILE]: an HTTPS load balancer that sends each
# request to the next backend in turn (the next one that accepts when it refuses),
# as a layer-7 balancer does: the agent keeps its one connection to it, each request
# goes out on a connection of its own; request HOLD_N waits for RELEASE_FILE
cat >rr.py <<'EOF'
import os, socket, ssl, sys, threading, time
port, log, backends = int(sys.argv[1]), sys.argv[2], [int(p) for p in sys.argv[3].split(",")]
hold, release = (int(sys.argv[4]), sys.argv[5]) if len(sys.argv) > 5 else (0, "")
srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
srv_ctx.load_cert_chain("api.pem", "api.key")
cli_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
cli_ctx.load_verify_locations("ca.pem")
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(64)
n, lock = 0, threading.Lock()
def say(m):
    with open(log, "a") as f:
        f.write(m + "\n")
say("listening")
def message(s, buf, client):
    """One HTTP/1.1 message off s (Content-Length bodies only): (head, body, rest) or None."""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines, size, keep = head.split(b"\r\n"), 0, []
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        k = k.strip().lower()
        if k == b"content-length":
            size = int(v.strip())
        if client and k == b"expect":
            s.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            continue
        keep.append(line)
    while len(rest) < size:
        d = s.recv(65536)
        if not d:
            return None
        rest += d
    return b"\r\n".join(lines[:1] + keep), rest[:size], rest[size:]
def serve(c):
    global n
    buf = b""
    try:
        c = srv_ctx.wrap_socket(c, server_side=True)
        while True:
            m = message(c, buf, True)
            if m is None:
                break
            head, body, buf = m
            with lock:
                n += 1
                k = n
            if k == hold:
                say("req %d held" % k)
                while not os.path.exists(release):
                    time.sleep(0.05)
            answered = False
            for i in range(len(backends)):
                p = backends[(k - 1 + i) % len(backends)]
                try:
                    b = cli_ctx.wrap_socket(socket.create_connection(("127.0.0.1", p)),
                                            server_hostname="127.0.0.1")
                except OSError:
                    continue
                say("req %d -> %d" % (k, p))
                b.sendall(head + b"\r\n\r\n" + body)
                a = message(b, b"", False)
                b.close()
                if a is not None:
                    c.sendall(a[0] + b"\r\n\r\n" + a[1])
                    answered = True
                break
            if not answered:
                say("req %d: no backend" % k)
                break
    except (OSError, ssl.SSLError):
        pass
    c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
R1=$(vg_port) R2=$(vg_port)
python3 rr.py "$R1" rr1.log "$VA,$VB" &
PIDS="$PIDS $!"
python3 rr.py "$R2" rr2.log "$VA,$VB" 2 "$T/release" &
PIDS="$PIDS $!"
# listening before the agents start (a python slow to start under load: refused connections)
for i in $(seq 200); do grep -qs listening rr1.log && grep -qs listening rr2.log && break; sleep 0.1; done
check_eq "the two round-robins listen" "$(cat rr1.log rr2.log | grep -c listening)" 2
export VIGIL_VERIFIER=https://127.0.0.1:$VB VIGIL_VERIFIER_CACERT=$T/ca.pem

echo "file a" >a
VIGIL_TCTI=$TCTI1 "$VIGIL" measure --log "$T/log1" --tpm "$T/a" >/dev/null 2>&1
VIGIL_TCTI=$TCTI2 "$VIGIL" measure --log "$T/log2" --tpm "$T/a" >/dev/null 2>&1
pusher() {	# ID TCTI LOG PROXY_PORT
	mkdir -p "$T/st-$1"
	timeout 300 "$AGENT" --push "https://127.0.0.1:$4" --push-ca "$T/ca.pem" \
		--push-token-file "$T/$1.tok" --state "$T/st-$1" --log "$3" --id "$1" \
		--tcti "$2" --boot-log "$T/no-boot-log" 2>"agent-$1.err" &
}
pusher p1 "$TCTI1" "$T/log1" "$R1"
PIDS="$PIDS $!"

check "p1 registers through the round-robin and is trusted" att_wait p1 trusted
check_eq "... its registration: step 1 on A, step 2 on B" \
	"$(grep '^req' rr1.log | head -2 | tr '\n' ' ')" "req 1 -> $VA req 2 -> $VB "
# the verifiers' 4xx answers (a 409 of a nonce or registration unknown is one; the
# status of p1 asked before it was registered too)
x4() { curl -s --cacert ca.pem -H "$ATT_HDR" "https://127.0.0.1:$1/metrics" |
	awk '/^vigil_verifier_http_requests_total\{code="4xx"\}/ {print $2}'; }
x4a=$(x4 "$VA") x4b=$(x4 "$VB")
r0=$(att_field rounds p1)
c0=$(wc -l <rr1.log)
sleep 8
r1=$(att_field rounds p1)
c1=$(wc -l <rr1.log)
# 8 expected; 6 leaves a loaded machine (an agent's push taking longer than the interval) its slack
check "p1 attested every interval over 8 s, both verifiers answering (rounds $r0 -> $r1)" \
	test $((r1 - r0)) -ge 6
check_eq "... still trusted" "$(att_field state p1)" trusted
# a push is two requests (nonce, evidence), the registration was two: every nonce
# went to A, every evidence to B
check "... its requests alternate: odd ones (nonce) on A, even ones (evidence) on B" \
	awk -v a="$VA" -v b="$VB" -v from=$((c0 + 1)) -v to="$c1" 'NR >= from && NR <= to {
		n++; if ($4 != ($2 % 2 ? a : b)) bad++ } END { exit !(n >= 14 && !bad) }' rr1.log
# the agent logs a 409 as "refused: ..." (or, asked to retry, "not judged: ..."); not
# "409": the port in its URL may hold those digits
check_eq "no 409 in the agent's log: nothing refused, no push not judged" \
	"$(grep -c 'refused\|not judged' agent-p1.err)" 0
grep 'refused\|not judged' agent-p1.err | sed 's/^/#   /' 
check_eq "... nor a 4xx answer from A or B meanwhile" "$(x4 "$VA") $(x4 "$VB")" "$x4a $x4b"
check_eq "p1 is a push agent" "$(att_field mode p1)" push

# p2: its activation held while the verifier of its first step dies
pusher p2 "$TCTI2" "$T/log2" "$R2"
PIDS="$PIDS $!"
for i in $(seq 200); do grep -q "req 2 held" rr2.log && break; sleep 0.1; done
check_eq "p2's registration: step 1 on A, step 2 held" "$(grep '^req' rr2.log | tr '\n' ' ')" \
	"req 1 -> $VA req 2 held "
VPA=$(cat /proc/$PA/task/*/children)	# the verifier, under timeout
kill -9 $VPA
wait "$PA" 2>/dev/null
check_rc 1 "A killed (SIGKILL) between the two steps" kill -0 $VPA
touch "$T/release"
check "p2 registered and trusted" att_wait p2 trusted
check "... its step 2 went to B" grep -q "req 2 -> $VB" rr2.log
check "... the agent was told it is registered" grep -q "push: registered with" agent-p2.err
# (with the registration in A's memory, B refuses step 2 and the agent starts over)
check_eq "... by that first activation: no refusal, no registration started over" \
	"$(grep -c 'register: \|activate: ' agent-p2.err)" 0
check "B logged the registration" grep -q "p2 registered, pushing" vb.err
r2=$(att_field rounds p1)
sleep 4
check "p1 attested on by B alone (rounds $r2 -> $(att_field rounds p1))" \
	test $(($(att_field rounds p1) - r2)) -ge 3
check_eq "... still trusted" "$(att_field state p1)" trusted
check_rc 1 "no sanitizer report" grep -q "runtime error\|AddressSanitizer" vb.err agent-p1.err agent-p2.err
