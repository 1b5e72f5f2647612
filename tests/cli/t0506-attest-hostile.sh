#!/usr/bin/env bash
# t0506: hostile peers on loopback, with swtpm. Against vigil-verifier's API:
# slowloris connections (dropped at --api-timeout while others are served),
# a 64 MiB body (413 at once, memory bounded; chunked: connection dropped),
# invalid JSON, wrong types and overlong ids (400 naming the problem). A
# malicious agent (a python proxy in front of a real one, so that it
# registers): garbage JSON, wrong types, a signature and a PCR value of the
# wrong size, a huge quote, a never-ending log, a huge log, a redirect; each
# a typed failure or agent.comm in its status within bounded time and
# memory, while an honest agent on the same verifier stays trusted. A
# malicious verifier against vigil-agent: nonces of the wrong size, unknown
# banks, absurd masks and offsets, garbage and huge bodies: 400/413, and
# the agent's TPM process stays up and answers the next good request.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
port() { vg_port; }
AP=$(port); VP=$(port); FP=$(port); AP2=$(port)
V=http://127.0.0.1:$VP
export VIGIL_VERIFIER=$V
PIDS=
TPM2=$T/tpm2
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPM2" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
# curl with the credential each side expects: the verifier's token to the agents, an admin token to the verifier
C() {
	local h=$ATT_HDR
	case "$*" in *127.0.0.1:$AP/*|*127.0.0.1:$AP2/*|*127.0.0.1:$FP/*) h=$ATT_AHDR ;; esac
	curl -s --max-time 10 -H "$h" "$@"
}

mkdir -p tree st
for f in a b; do echo "file $f" >tree/$f; done
"$VIGIL" measure --log "$T/log" --tpm "$T/tree/a" "$T/tree/b" >/dev/null 2>&1
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 2>agent.err &
AGENT_PID=$!
PIDS="$PIDS $AGENT_PID"
# ASan's quarantine would count freed buffers as the verifier's memory
ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=4 \
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--api-timeout 2 --api-max-conn 20 --agent-timeout 2 --max-log 4M --max-body 8M 2>verifier.err &
VPID=$!
PIDS="$PIDS $VPID"
for i in $(seq 100); do
	C "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && C "$V/v1/agents" >/dev/null 2>&1 && break
	sleep 0.1
done

# status FIELD [ID]
field() { att_field "$1" "${2:-host1}"; }
wait_for() { ATT_WAIT=100 att_wait "$@"; }	# ID STATE [FAILURE]: up to 10 s
hwm() { awk '/^VmHWM/ {print $2}' /proc/$VPID/status; }	# KiB
# code METHOD URL [curl args]: the HTTP status; the body in $T/${OUT:-body}
code() { local m=$1 u=$2; shift 2; C -o "$T/${OUT:-body}" -w '%{http_code}' -X "$m" "$u" "$@"; }

"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null
"$VIGIL" attest policy set good good.json >/dev/null
check "honest agent registered" "$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy good
check "honest agent trusted" wait_for host1 trusted

# ---- hostile clients of the verifier's API ----
cat >slowloris.py <<'PY'
import select, socket, sys, time
port, n, dur = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
req = b"GET /v1/agents HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100000
socks, opened, closed, held = [], {}, {}, 0
for i in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        socks.append(s); opened[s] = time.time()
    except OSError:
        pass
t0, pos = time.time(), 0
while time.time() - t0 < dur and len(closed) < len(socks):
    for s in socks:
        if s in closed:
            continue
        try:
            s.send(req[pos:pos + 1])          # a byte at a time, never the end of the headers
            r, _, _ = select.select([s], [], [], 0)
            if r and s.recv(100) == b"":
                raise OSError
        except OSError:
            closed[s] = time.time() - opened[s]
    pos += 1
    time.sleep(0.25)
longest = max(closed.values()) if closed else 0
held = sum(1 for v in closed.values() if v > 1)
print("%d opened, %d closed, %d held over 1 s, longest %.1f s" % (len(socks), len(closed), held, longest))
sys.exit(0 if len(closed) == len(socks) and held >= 1 and longest < float(sys.argv[4]) else 1)
PY
python3 slowloris.py $VP 30 8 4.5 >slow.out 2>&1 &
SLOW=$!
sleep 1
t0=$(date +%s%N)
check_eq "during slowloris: another client is served" "$(code GET "$V/v1/agents" --interface 127.0.0.2)" 200
check "... within 2 s" test $(( ($(date +%s%N) - t0) / 1000000 )) -lt 2000
wait $SLOW
check "slowloris: every connection dropped within the 2 s deadline (+2.5 s)" test $? -eq 0
sed 's/^/# /' slow.out
check_eq "after slowloris: served again from the same address" "$(code GET "$V/v1/agents")" 200

h0=$(hwm)
head -c $((64 << 20)) /dev/zero >big
t0=$(date +%s%N)
check_eq "64 MiB policy upload: 413" "$(code PUT "$V/v1/policies/big" --data-binary @big)" 413
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "... within 1 s (${ms} ms)" test $ms -lt 1000
check "... saying why" grep -q "too large" body
python3 - $VP "$ATT_HDR" >raw413.out 2>&1 <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"PUT /v1/policies/big HTTP/1.1\r\nHost: x\r\n" + sys.argv[2].encode() +
          b"\r\nContent-Length: 67108864\r\n\r\n")
t0, sent, ans = time.time(), 0, b""
try:
    while sent < 64 << 20:
        s.sendall(b"\0" * 65536); sent += 65536
except OSError:
    pass
try:
    ans = s.recv(4096)
except OSError:
    pass
print(ans.split(b"\r\n")[0].decode(errors="replace"), "after", sent >> 20, "MiB")
PY
check "a client that ignores the answer: 413, then the connection is closed" grep -q "413" raw413.out
sed 's/^/# /' raw413.out
head -c $((40 << 20)) /dev/zero | C -o /dev/null -X PUT -H "Transfer-Encoding: chunked" \
	--data-binary @- "$V/v1/policies/big" >/dev/null 2>&1
check_eq "chunked 40 MiB upload: not stored" "$(code GET "$V/v1/policies/big")" 404
h1=$(hwm)
check "verifier memory bounded by the limits ($(( (h1 - h0) >> 10 )) MiB more)" test $((h1 - h0)) -lt $((32 << 10))

bad() {	# WHAT METHOD URL BODY WANT-CODE MESSAGE-PATTERN
	local got
	got=$(code "$2" "$3" --data-binary "$4" -H "Content-Type: application/json")
	check_eq "$1: HTTP $5" "$got" "$5"
	check "$1: says $6" grep -q "$6" body
}
long=$(printf 'x%.0s' $(seq 200))
bad "register: not JSON" POST "$V/v1/agents" 'not json' 400 "not valid JSON"
bad "register: truncated JSON" POST "$V/v1/agents" '{"id": "h", "url":' 400 "not valid JSON"
bad "register: trailing garbage" POST "$V/v1/agents" '{"id":"h","url":"http://x"} {}' 400 "not valid JSON"
bad "register: id a number" POST "$V/v1/agents" '{"id": 5, "url": "http://x"}' 400 '\\"id\\" is not a string'
bad "register: id with a slash" POST "$V/v1/agents" '{"id": "a/b", "url": "http://x"}' 400 "A-Za-z0-9"
bad "register: 200-character id" POST "$V/v1/agents" "{\"id\": \"$long\", \"url\": \"http://x\"}" 400 "longer than 127"
bad "register: ftp url" POST "$V/v1/agents" '{"id": "h", "url": "ftp://x"}' 400 "http://HOST"
bad "register: array body" POST "$V/v1/agents" '[1, 2]' 400 "not a JSON object"
bad "register: empty body" POST "$V/v1/agents" '' 400 "empty body"
bad "status: 200-character id" GET "$V/v1/agents/$long" '' 400 "agent id: 1 to 127"
bad "status: id with a space" GET "$V/v1/agents/a%20b" '' 400 "agent id"
bad "policy assign: wrong type" PUT "$V/v1/agents/host1/policy" '{"policy": ["good"]}' 400 "is not a string"
bad "policy upload: garbage" PUT "$V/v1/policies/p1" '{"digests": 7}' 400 "not an object"
bad "policy name: overlong" PUT "$V/v1/policies/$long" '{}' 400 "policy name"
bad "unknown method" DELETE "$V/v1/policies/good" '' 405 "GET or PUT"
bad "unknown endpoint" GET "$V/v2/agents" '' 404 "no such endpoint"
check_eq "the verifier still answers" "$(code GET "$V/v1/agents/host1")" 200
check "the honest agent is still trusted" wait_for host1 trusted

# ---- a malicious agent ----
# a second host (its own swtpm and vigil-agent, id "evil", an empty log) behind a proxy
# that turns hostile after registration: the proof of ActivateCredential
# binds the agent id, so only a real TPM registers
TCTI2=$(bash "$SRCDIR/scripts/swtpm.sh" start "$TPM2")
mkdir -p st2
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP2 --state "$T/st2" --log "$T/log2" --id evil --tcti "$TCTI2" 2>agent2.err &
PIDS="$PIDS $!"
for i in $(seq 100); do C "127.0.0.1:$AP2/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
cat >fake.py <<'PY'
import base64, http.server, json, socketserver, sys, time, urllib.request
port, real, modef = int(sys.argv[1]), sys.argv[2], sys.argv[3]
auth = None   # the verifier's bearer token, passed on to the real agent
def fetch(path, body=None):
    h = {"Content-Type": "application/json"}
    if auth:
        h["Authorization"] = auth
    r = urllib.request.urlopen(urllib.request.Request(real + path, data=body, headers=h), timeout=5)
    return r.status, r.read()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def send(self, code, body, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        global auth
        auth = self.headers.get("Authorization")
        n = int(self.headers.get("Content-Length", 0))
        self.send(*fetch(self.path, self.rfile.read(n)))
    def do_GET(self):
        global auth
        auth = self.headers.get("Authorization")
        mode = open(modef).read().strip()
        if self.path.startswith("/v1/identity"):
            return self.send(*fetch(self.path))
        if self.path.startswith("/v1/quote"):
            if mode == "garbage":
                return self.send(200, b"{{{ not json")
            if mode == "types":
                return self.send(200, b'{"attest": 5, "sig": [], "pcrs": "x"}')
            if mode == "hugequote":
                return self.send(200, b'{"attest": "' + b"A" * (8 << 20) + b'"}')
            if mode == "redirect":
                return self.send(302, b"", extra=[("Location", real + self.path)])
            if mode == "endless":
                self.send_response(200)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                for i in range(100):
                    self.wfile.write(b" "); self.wfile.flush(); time.sleep(0.2)
                return
            code, body = fetch(self.path)
            q = json.loads(body)
            if mode == "sigsize":
                s = bytearray(base64.b64decode(q["sig"])); s[5] ^= 0x10
                q["sig"] = base64.b64encode(bytes(s)).decode()
            if mode == "pcrsize":
                q["pcrs"]["10"] = q["pcrs"]["10"][:-2]
            return self.send(code, json.dumps(q).encode())
        if self.path.startswith("/v1/log"):
            if mode == "hugelog":
                self.send_response(200)
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                try:
                    for i in range(1 << 14):
                        self.wfile.write(b"\0" * 65536)
                except OSError:
                    pass
                return
            return self.send(*fetch(self.path), ctype="application/octet-stream")
        self.send(404, b"{}")
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", port), H).serve_forever()
PY
echo honest >mode
python3 fake.py $FP http://127.0.0.1:$AP2 "$T/mode" 2>fake.err &
PIDS="$PIDS $!"
for i in $(seq 50); do C "127.0.0.1:$FP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
check "the proxy agent registers" "$VIGIL" attest add evil --agent http://127.0.0.1:$FP --policy good
check "... and is trusted while honest" wait_for evil trusted

hostile() {	# MODE STATE FAILURE MESSAGE-PATTERN
	local r0 t0 ms
	echo "$1" >mode
	t0=$(date +%s%N)
	check "evil agent, $1: $2 with $3" wait_for evil "$2" "$3"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	check "... within 6 s (${ms} ms)" test $ms -lt 6000
	field last_message evil >msg
	check "... saying $4" grep -qi -- "$4" msg
	sed 's/^/# /' msg
	check "... the verifier is up" kill -0 $VPID
	r0=$(field rounds)
	sleep 0.8
	check "... the honest agent is trusted, rounds go on" \
		test "$(field state)" = trusted -a "$(field rounds)" -gt "$r0"
	echo honest >mode
	"$VIGIL" attest reactivate evil >/dev/null 2>&1
	check "... trusted again once honest" wait_for evil trusted
}
"$VIGIL" attest status evil --json >/dev/null
h0=$(hwm)
hostile garbage failed quote.malformed "not valid JSON"
hostile types failed quote.malformed '"attest" is not a string'
hostile sigsize failed quote.malformed "TPMT_SIGNATURE"
hostile pcrsize failed quote.malformed "PCR 10 is not 32 bytes"
hostile redirect failed quote.malformed "HTTP 302"
hostile hugequote unreachable agent.comm "answer larger than 1048576"
hostile hugelog unreachable agent.comm "answer larger than 4194304"
hostile endless unreachable agent.comm "timeout\|timed out"
h1=$(hwm)
check "verifier memory bounded through all of it ($(( (h1 - h0) >> 10 )) MiB more)" test $((h1 - h0)) -lt $((32 << 10))
# a registration that hangs does not hold up the API (4 threads)
echo endless >mode
cat >hang.py <<'PY'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        time.sleep(30)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
HP=$(port)
python3 hang.py $HP &
PIDS="$PIDS $!"
sleep 0.3
t0=$(date +%s%N)
OUT=hang.body code POST "$V/v1/agents" -d "{\"id\":\"hang\",\"url\":\"http://127.0.0.1:$HP\"}" >hang.code &
HC=$!
sleep 0.3
check_eq "while a registration waits on a hung agent, the API answers" "$(code GET "$V/v1/agents")" 200
check "... at once" test $(( ($(date +%s%N) - t0) / 1000000 )) -lt 1500
wait $HC
check_eq "the hung registration: 502 after --agent-timeout" "$(cat hang.code)" 502
check "... typed agent.comm" grep -q "agent.comm" hang.body
{ sed 's/^/# /' hang.body; echo; }

# ---- a malicious verifier against the agent ----
A=http://127.0.0.1:$AP
n20=00112233445566778899aabbccddeeff00112233
agent_bad() {	# WHAT PATH-AND-QUERY WANT PATTERN
	check_eq "agent, $1: HTTP $3" "$(code GET "$A$2")" "$3"
	check "agent, $1: says $4" grep -q "$4" body
}
agent_bad "nonce of 1 byte" "/v1/quote?nonce=00&bank=sha256&mask=400" 400 "nonce must be 8 to 64"
agent_bad "nonce of 65 bytes" "/v1/quote?nonce=$(printf '00%.0s' $(seq 65))&bank=sha256&mask=400" 400 "nonce must be"
agent_bad "nonce not hex" "/v1/quote?nonce=zz112233445566778899&bank=sha256&mask=400" 400 "not hex"
agent_bad "odd nonce" "/v1/quote?nonce=0011223344556677889&bank=sha256&mask=400" 400 "nonce must be"
agent_bad "bank md5" "/v1/quote?nonce=$n20&bank=md5&mask=400" 400 "bank: sha1"
agent_bad "no bank" "/v1/quote?nonce=$n20&mask=400" 400 "are required"
agent_bad "mask 0" "/v1/quote?nonce=$n20&bank=sha256&mask=0" 400 "selects no PCR"
agent_bad "mask 2^24" "/v1/quote?nonce=$n20&bank=sha256&mask=1000000" 400 "1 to 6 hex"
agent_bad "mask -1" "/v1/quote?nonce=$n20&bank=sha256&mask=-1" 400 "not hex"
agent_bad "mask 0x400" "/v1/quote?nonce=$n20&bank=sha256&mask=0x400" 400 "not hex"
agent_bad "offset -1" "/v1/log?offset=-1" 400 "decimal digits"
agent_bad "offset abc" "/v1/log?offset=abc" 400 "decimal digits"
agent_bad "offset 2^64" "/v1/log?offset=18446744073709551616" 400 "larger than"
agent_bad "offset empty" "/v1/log?offset=" 400 "empty"
check_eq "agent, offset 2^63-1: an empty list" "$(code GET "$A/v1/log?offset=9223372036854775807")" 200
check_eq "... of 0 bytes" "$(stat -c %s body)" 0
check_eq "agent, activate with garbage: 400" "$(code POST "$A/v1/activate" --data-binary '{{{')" 400
check "... says why" grep -q "not valid JSON" body
check_eq "agent, activate with a non-base64 blob: 400" \
	"$(code POST "$A/v1/activate" --data-binary '{"id_object": "!!!!", "enc_secret": "AAAA"}')" 400
check_eq "agent, activate with a 600-byte blob: 400" \
	"$(code POST "$A/v1/activate" --data-binary "{\"id_object\": \"$(head -c 600 /dev/zero | base64 -w0)\", \"enc_secret\": \"AAAA\"}")" 400
check "... names the limit" grep -q "than 512 bytes" body
t0=$(date +%s%N)
check_eq "agent, 64 MiB activate body: 413" "$(code POST "$A/v1/activate" --data-binary @big)" 413
check "... within 1 s" test $(( ($(date +%s%N) - t0) / 1000000 )) -lt 1000
check_eq "agent, unknown endpoint: 404" "$(code GET "$A/v1/../../etc/passwd")" 404
check "the agent's TPM process is up" kill -0 $AGENT_PID
check_eq "and answers the next good quote request" \
	"$(code GET "$A/v1/quote?nonce=$n20&bank=sha256&mask=400")" 200
check "... with a quote" grep -q '"attest"' body
check "the honest agent is still trusted by the verifier" wait_for host1 trusted
check "the verifier logged no crash" sh -c "! grep -qi 'sanitizer\|runtime error' '$T/verifier.err' '$T/agent.err'"

# What else a verifier could get signed: nothing but quotes. The agent has
# no other operation with the AK (unknown routes: 404 above), and the AK is
# a restricted key: even a process that holds the TPM cannot make it sign
# a forged TPMS_ATTEST. Loaded from the agent's own blob under the EK:
kill $AGENT_PID; wait $AGENT_PID 2>/dev/null
python3 - st/ak.blob <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
n = int.from_bytes(b[:2], "big")
open("ak.pub", "wb").write(b[:2 + n])
open("ak.priv", "wb").write(b[2 + n:])
PY
tpm2_flushcontext -t >/dev/null 2>&1	# whatever the agent left loaded
tpm2_flushcontext -s >/dev/null 2>&1
tpm2_createek -c ek.ctx -G rsa >/dev/null 2>&1
tpm2_startauthsession --policy-session -S ps.ctx >/dev/null 2>&1
tpm2_policysecret -S ps.ctx -c e >/dev/null 2>&1
check "the agent's AK loads under the EK (tpm2_load)" \
	tpm2_load -C ek.ctx -u ak.pub -r ak.priv -c ak.ctx -P session:ps.ctx
tpm2_flushcontext ps.ctx >/dev/null 2>&1; tpm2_flushcontext -t >/dev/null 2>&1
printf 'any other message' >plain.msg
check "it signs a message that is not a TPM structure (tpm2_sign)" \
	tpm2_sign -c ak.ctx -g sha256 -o plain.sig plain.msg
printf '\377TCG\200\030a forged quote body' >forged.msg	# TPM_GENERATED_VALUE, TPM_ST_ATTEST_QUOTE
tpm2_sign -c ak.ctx -g sha256 -o forged.sig forged.msg 2>err; rc=$?
check "it refuses a forged TPMS_ATTEST" test $rc -ne 0
check "... the TPM's reason: no valid hash ticket (TPM_RC_TICKET)" grep -q "invalid ticket" err
check "... and nothing was written" test ! -s forged.sig
