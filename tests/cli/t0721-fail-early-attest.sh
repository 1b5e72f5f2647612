#!/usr/bin/env bash
# vigil-verifier and vigil-agent fail early and say why (issue 15, item
# 4): a CA, certificate or key file that does not parse, a --db URL with
# an unsupported scheme, a --listen port out of range or in use, an
# unreachable --tcti, a --state directory that cannot be written: exit 2
# naming the file (or address) and the problem, never READY=1 on a test
# notify socket, nothing left behind. Started well, each says READY=1
# (with a STATUS) only once it listens, and STOPPING=1 when it stops.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-notify.sh"
vg_init
vg_tpm_start
AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
trap '_rc=$?; nt_stop; for p in ${VPID:-} ${APID:-}; do kill $p 2>/dev/null; done; wait 2>/dev/null;
	bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
att_auth
nt_start
VP=$(vg_port); AP=$(vg_port)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout k.pem -out c.pem \
	-subj /CN=vigil-test -days 2 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout k2.pem -out c2.pem \
	-subj /CN=other -days 2 2>/dev/null
echo garbage >bad.pem
{ cat c.pem; echo '-----BEGIN CERTIFICATE-----'; echo 'bm90IGEgY2VydA=='; echo '-----END CERTIFICATE-----'; } >half.pem
mkdir st

never_ready() { sleep 0.2; ! nt_ready; }
# refused PROGRAM WHAT TEXT ARGS...: exit 2 saying TEXT, never ready
refused() {
	local prog=$1 what=$2 text=$3 rc
	shift 3
	nt_clear
	timeout -s KILL 30 "$prog" "$@" >/dev/null 2>err
	rc=$?
	check_eq "$what: exit 2" "$rc" 2
	check "$what: says '$text'" grep -qF -- "$text" err
	check "$what: never ready" never_ready
	[ "$rc" = 2 ] && grep -qF -- "$text" err || sed 's/^/#   /' err
}
v() { refused "$VERIFIER" "verifier: $1" "$2" $ATT_VAUTH --db "sqlite:$T/v.db" "${@:3}"; }
a() { refused "$AGENT" "agent: $1" "$2" $ATT_AAUTH "${@:3}"; }

# ---- vigil-verifier ----
v "bad --ek-ca" "--ek-ca $T/bad.pem: no PEM certificate in it" --listen 127.0.0.1:$VP --ek-ca "$T/bad.pem"
v "--ek-ca with a broken second certificate" "--ek-ca $T/half.pem: a malformed PEM certificate" \
	--listen 127.0.0.1:$VP --ek-ca "$T/half.pem"
v "missing --ek-ca" "--ek-ca $T/none.pem: cannot be read" --listen 127.0.0.1:$VP --ek-ca "$T/none.pem"
v "bad --agent-ca" "--agent-ca $T/bad.pem: no PEM certificate" --listen 127.0.0.1:$VP --agent-ca "$T/bad.pem"
v "bad --api-client-ca" "--api-client-ca $T/bad.pem: no PEM certificate" --listen 127.0.0.1:$VP \
	--api-cert "$T/c.pem" --api-key "$T/k.pem" --api-client-ca "$T/bad.pem"
v "bad --api-key" "--api-key $T/bad.pem: not an unencrypted PEM private key" --listen 127.0.0.1:$VP \
	--api-cert "$T/c.pem" --api-key "$T/bad.pem"
v "--api-key of another certificate" "--api-key $T/k2.pem: not the private key of the certificate $T/c.pem" \
	--listen 127.0.0.1:$VP --api-cert "$T/c.pem" --api-key "$T/k2.pem"
check "nothing was stored yet" test ! -e "$T/v.db"
refused "$VERIFIER" "verifier: --db mysql://" "--db: unsupported scheme 'mysql:'" $ATT_VAUTH \
	--listen 127.0.0.1:$VP --db mysql://user@db.example/vigil
check "... not opened as a SQLite file" sh -c "! ls -A '$T' | grep -q mysql"
v "port out of range" "--listen 127.0.0.1:70000: port out of range" --listen 127.0.0.1:70000
v "port 0" "--listen 127.0.0.1:0: port out of range" --listen 127.0.0.1:0
v "not ADDR:PORT" "--listen 8881: not ADDR:PORT" --listen 8881
v "not an IPv4 address" "--listen 1.2.3:99: '1.2.3' is not an IPv4 address" --listen 1.2.3:99

nt_clear
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" 2>verr &
VPID=$!
for _ in $(seq 100); do nt_ready && break; sleep 0.1; done
check "the verifier starts: READY=1 with a STATUS" grep -q "READY=1 | STATUS=listening on 127.0.0.1:$VP" "$NT_LOG"
check "... and it does listen" curl -s -o /dev/null -H "$ATT_HDR" "http://127.0.0.1:$VP/v1/agents"
nt_clear
kill -HUP $VPID
for _ in $(seq 50); do nt_ready && break; sleep 0.1; done
check "SIGHUP: RELOADING=1, then READY=1" \
	sh -c "head -1 '$NT_LOG' | grep -q 'RELOADING=1 | MONOTONIC_USEC=[0-9]' && tail -1 '$NT_LOG' | grep -q READY=1"
check "... the token list was read again" grep -q "SIGHUP: [0-9]* token(s) from" verr
check "... and it still answers" curl -sf -o /dev/null -H "$ATT_HDR" "http://127.0.0.1:$VP/v1/agents"
v "port in use" "--listen 127.0.0.1:$VP: port $VP in use" --listen 127.0.0.1:$VP
a "port in use" "--listen 127.0.0.1:$VP: port $VP in use" --listen 127.0.0.1:$VP --state "$T/st"
nt_clear
kill $VPID; wait $VPID; VPID=
check "the verifier stops: STOPPING=1" nt_has STOPPING=1

# ---- vigil-agent ----
a "port out of range" "--listen 127.0.0.1:65536: port out of range" --listen 127.0.0.1:65536 --state "$T/st"
a "bad --tls-cert" "--tls-cert $T/bad.pem: no PEM certificate" --listen 127.0.0.1:$AP --state "$T/st" \
	--tls-cert "$T/bad.pem" --tls-key "$T/k.pem"
a "bad --tls-key" "--tls-key $T/bad.pem: not an unencrypted PEM private key" --listen 127.0.0.1:$AP \
	--state "$T/st" --tls-cert "$T/c.pem" --tls-key "$T/bad.pem"
a "bad --tls-client-ca" "--tls-client-ca $T/bad.pem: no PEM certificate" --listen 127.0.0.1:$AP \
	--state "$T/st" --tls-cert "$T/c.pem" --tls-key "$T/k.pem" --tls-client-ca "$T/bad.pem"
a "missing --state" "--state $T/nost: no such directory" --listen 127.0.0.1:$AP --state "$T/nost"
mkdir ro; mount -t tmpfs -o ro,size=1m vigil-ro "$T/ro"
a "unwritable --state" "--state $T/ro: not writable" --listen 127.0.0.1:$AP --state "$T/ro"
a "unreachable --tcti" "TPM at TCTI 'swtpm:host=127.0.0.1,port=1' cannot be reached" \
	--listen 127.0.0.1:$AP --state "$T/st" --tcti swtpm:host=127.0.0.1,port=1
check "... nothing stored in the state directory" sh -c "[ -z \"\$(ls -A '$T/st')\" ]"
check "... nothing listens on its port" sh -c "! curl -s -o /dev/null http://127.0.0.1:$AP/"

nt_clear
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log /dev/null --id host1 2>aerr &
APID=$!
for _ in $(seq 150); do nt_ready && break; sleep 0.1; done
check "the agent starts: READY=1 once it listens" grep -q "READY=1 | STATUS=host1 listening on 127.0.0.1:$AP" "$NT_LOG"
check "... and it does listen" curl -s -o /dev/null -H "$ATT_AHDR" "http://127.0.0.1:$AP/v1/identity"
nt_clear
kill $APID; wait $APID; APID=
check "the agent stops: STOPPING=1" nt_has STOPPING=1
