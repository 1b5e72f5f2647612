#!/usr/bin/env bash
# t0503: mutual TLS between vigil-verifier and vigil-agent: the agent serves
# HTTPS and answers only clients whose certificate chains to its client CA;
# the verifier checks the agent's certificate against its agent CA and
# presents its own. Registration and attestation work over it; no client
# certificate, one from another CA, plain HTTP and an untrusted agent
# certificate are refused. Operators: a certificate from --api-client-ca
# is an admin credential, one from --api-read-client-ca reads and gets 403
# on a change, one from another CA is refused.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

port() { vg_port; }
AP=$(port); VP=$(port); VP2=$(port)
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

ossl() { openssl "$@" >/dev/null 2>&1; }
mkca() {	# NAME
	ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key \
		-out $1.pem -days 2 -subj "/CN=$1"
}
mkcert() {	# NAME CA [SAN]
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key -out $1.csr -subj "/CN=$1"
	if [ -n "${3:-}" ]; then
		printf 'subjectAltName=%s\n' "$3" >$1.ext
		ossl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial -out $1.pem -days 2 -extfile $1.ext
	else
		ossl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial -out $1.pem -days 2
	fi
}
mkca ca; mkca rogue
mkcert agent ca IP:127.0.0.1
mkcert verifier ca
mkcert intruder rogue
mkcert api ca IP:127.0.0.1
mkcert operator ca
VP3=$(port)
check "certificates made" test -s agent.pem -a -s verifier.pem -a -s intruder.pem

"$VIGIL" measure --log "$T/log" --tpm /etc/hostname >/dev/null 2>&1
mkdir -p st
"$VIGIL_AGENT_BIN" --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--tls-cert agent.pem --tls-key agent.key --tls-client-ca ca.pem 2>agent.err &
PIDS="$PIDS $!"
"$VIGIL_VERIFIER_BIN" $ATT_VAUTH --listen 127.0.0.1:$VP --db "$T/v.db" --interval 200 --ek-ca "$TPMDIR/ek-ca.pem" \
	--agent-ca ca.pem --client-cert verifier.pem --client-key verifier.key 2>verifier.err &
PIDS="$PIDS $!"
"$VIGIL_VERIFIER_BIN" $ATT_VAUTH --listen 127.0.0.1:$VP2 --db "$T/v2.db" --interval 200 --agent-ca ca.pem \
	2>verifier2.err &
PIDS="$PIDS $!"
for i in $(seq 50); do
	curl -s --cacert ca.pem --cert verifier.pem --key verifier.key "https://127.0.0.1:$AP/v1/identity" \
		>/dev/null 2>&1 && curl -s "127.0.0.1:$VP/v1/agents" >/dev/null && break
	sleep 0.1
done

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check_eq "with the verifier's certificate: 200" \
	"$(code --cacert ca.pem --cert verifier.pem --key verifier.key https://127.0.0.1:$AP/v1/identity)" 200
check_eq "no client certificate: 401" "$(code --cacert ca.pem https://127.0.0.1:$AP/v1/identity)" 401
check_eq "client certificate of another CA: refused" \
	"$(code --cacert ca.pem --cert intruder.pem --key intruder.key https://127.0.0.1:$AP/v1/identity)" 401
check_rc 0 "plain HTTP to the TLS port fails" test "$(code http://127.0.0.1:$AP/v1/identity)" != 200
check_rc 0 "an agent certificate the client does not trust fails" \
	test "$(code --cacert rogue.pem https://127.0.0.1:$AP/v1/identity)" = 000

# a connection kept 12 s between two requests (--idle-timeout 30; a
# request's own deadline is 10 s), one refused for want of a credential
# closed at once; in the background while the rest runs
python3 - "$AP" >idle.out 2>&1 <<'PY' &
import http.client, socket, ssl, sys, time
port = int(sys.argv[1])
ctx = ssl.create_default_context(cafile="ca.pem")
ctx.load_cert_chain("verifier.pem", "verifier.key")
c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
c.request("GET", "/v1/identity"); r = c.getresponse(); r.read()
p1 = c.sock.getsockname()[1]
time.sleep(12)
try:
    c.request("GET", "/v1/identity"); r2 = c.getresponse(); r2.read()
    print("kept" if c.sock.getsockname()[1] == p1 and r2.status == 200 else "other", r.status, r2.status)
except Exception as e:
    print("closed", type(e).__name__)
ctx2 = ssl.create_default_context(cafile="ca.pem")
s = ctx2.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
s.settimeout(5)
s.sendall(b"GET /v1/identity HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
got = b""
try:
    while True:
        b = s.recv(4096)
        if not b:
            break
        got += b
    end = "closed"
except (socket.timeout, TimeoutError):
    end = "open"
except OSError:
    end = "closed"
print("refused", got.split(b"\r\n")[0].decode(errors="replace"))
print("after refusal:", end)
PY
IDLE=$!

"$VIGIL" attest policy create --log "$T/log" -o p.json >/dev/null
VIGIL_VERIFIER=http://127.0.0.1:$VP "$VIGIL" attest policy set p p.json >/dev/null
check "registration over mutual TLS" env VIGIL_VERIFIER=http://127.0.0.1:$VP \
	"$VIGIL" attest add host1 --agent https://127.0.0.1:$AP --policy p
ok=1
for i in $(seq 100); do
	VIGIL_VERIFIER=http://127.0.0.1:$VP "$VIGIL" attest status host1 >st.out 2>&1 && ok=0 && break
	sleep 0.1
done
check_eq "trusted over mutual TLS" "$ok" 0
check "rounds counted" grep -q "host1 trusted" st.out
# the agent's connection is kept between rounds (--agent-connections, the
# agent's --idle-timeout): rounds every 200 ms, one TLS handshake
metric() { curl -s -H "$ATT_RHDR" "http://127.0.0.1:$VP/metrics" | awk -v m="$1" '$1 ~ "^"m { n += $2 } END { print n + 0 }'; }
r0=$(metric vigil_verifier_rounds_total); c0=$(metric vigil_verifier_agent_connects_total)
sleep 2
r1=$(metric vigil_verifier_rounds_total); c1=$(metric vigil_verifier_agent_connects_total)
kept=$(metric vigil_verifier_agent_connections)
echo "# rounds $r0 -> $r1, connections made to the agent $c0 -> $c1, kept $kept"
check "rounds over TLS every 200 ms ($r0 -> $r1)" test $((r1 - r0)) -ge 4
check "... over the one connection kept open: no handshake meanwhile ($c0 -> $c1 made, $kept kept)" \
	test "$c1" -ge 1 -a "$c1" -le 2 -a "$c1" -eq "$c0" -a "$kept" -eq 1
VIGIL_VERIFIER=http://127.0.0.1:$VP2 "$VIGIL" attest add host1 --agent https://127.0.0.1:$AP >out 2>&1
check_eq "a verifier without a client certificate: refused (exit 1)" "$?" 1
check "typed agent.comm (the agent answered 401)" grep -q "FAIL agent.comm" out

# the settings of kept connections, refused with the flag named
"$VIGIL_AGENT_BIN" --listen 127.0.0.1:1 --state "$T/st" --idle-timeout 0 --insecure-no-auth >out 2>&1
check_eq "vigil-agent --idle-timeout 0: refused (exit 2)" "$?" 2
check "... naming it" grep -q -- "--idle-timeout 0: seconds, 1 to 3600" out
"$VIGIL_VERIFIER_BIN" --insecure-no-auth --listen 127.0.0.1:1 --db "$T/x.db" --agent-connections 0 >out 2>&1
check_eq "vigil-verifier --agent-connections 0: refused (exit 2)" "$?" 2
check "... naming it" grep -q -- "--agent-connections 0: a number of connections" out
(ulimit -n 2048; exec "$VIGIL_VERIFIER_BIN" --insecure-no-auth --listen 127.0.0.1:1 --db "$T/x.db" \
	--agent-connections 5000 >out 2>&1)
check_eq "--agent-connections beyond the descriptors allowed: refused (exit 2)" "$?" 2
check "... saying how many it needs" grep -q -- "--agent-connections 5000: needs 6296 file descriptors, RLIMIT_NOFILE allows 2048" out
check_rc 1 "... before it made a store" test -e "$T/x.db"

# the operators' API over mutual TLS
"$VIGIL_VERIFIER_BIN" --listen 127.0.0.1:$VP3 --db "$T/v3.db" --api-cert api.pem --api-key api.key \
	--api-client-ca ca.pem 2>verifier3.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s --cacert ca.pem https://127.0.0.1:$VP3/ >/dev/null 2>&1 && break; sleep 0.1; done
export VIGIL_VERIFIER=https://127.0.0.1:$VP3 VIGIL_VERIFIER_CACERT=$T/ca.pem
check "operator with a certificate: policy set over HTTPS" env VIGIL_VERIFIER_CERT=$T/operator.pem \
	VIGIL_VERIFIER_KEY=$T/operator.key "$VIGIL" attest policy set p p.json
check_rc 2 "operator without a certificate: refused" "$VIGIL" attest status
check_rc 2 "operator with another CA's certificate: refused" env VIGIL_VERIFIER_CERT=$T/intruder.pem \
	VIGIL_VERIFIER_KEY=$T/intruder.key "$VIGIL" attest status

# a second CA for read-only operators (--api-read-client-ca)
mkca readers
mkcert auditor readers
VP4=$(port)
"$VIGIL_VERIFIER_BIN" --listen 127.0.0.1:$VP4 --db "$T/v4.db" --api-cert api.pem --api-key api.key \
	--api-client-ca ca.pem --api-read-client-ca readers.pem 2>verifier4.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s --cacert ca.pem https://127.0.0.1:$VP4/ >/dev/null 2>&1 && break; sleep 0.1; done
export VIGIL_VERIFIER=https://127.0.0.1:$VP4
check "operator with an admin-CA certificate: policy set" env VIGIL_VERIFIER_CERT=$T/operator.pem \
	VIGIL_VERIFIER_KEY=$T/operator.key "$VIGIL" attest policy set p p.json
check "auditor with a read-CA certificate: status" env VIGIL_VERIFIER_CERT=$T/auditor.pem \
	VIGIL_VERIFIER_KEY=$T/auditor.key "$VIGIL" attest status
check "... and the policy" env VIGIL_VERIFIER_CERT=$T/auditor.pem \
	VIGIL_VERIFIER_KEY=$T/auditor.key "$VIGIL" attest policy get p
check_rc 2 "auditor: policy set refused" env VIGIL_VERIFIER_CERT=$T/auditor.pem \
	VIGIL_VERIFIER_KEY=$T/auditor.key "$VIGIL" attest policy set p p.json
cp .out last
check "... forbidden (403)" grep -q "forbidden: read credential cannot change state (403)" last
check_rc 2 "another CA's certificate: still refused" env VIGIL_VERIFIER_CERT=$T/intruder.pem \
	VIGIL_VERIFIER_KEY=$T/intruder.key "$VIGIL" attest status
wait "$IDLE"
echo "# $(tr '\n' ' ' <idle.out)"
check "vigil-agent kept a verifier's connection idle 12 s, the next request answered on it" \
	grep -qx "kept 200 200" idle.out
check "... and closed a connection at once after refusing it (401, no credential; so did the agent before)" \
	grep -qx "after refusal: closed" idle.out
