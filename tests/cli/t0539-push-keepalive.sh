#!/usr/bin/env bash
# t0539: kept-alive API connections (docs/attest-push.md, "Connections").
#  - --api-idle-timeout and --api-connections: bad values refused naming
#    the option; more connections than the process may open refused naming
#    RLIMIT_NOFILE; the old --api-timeout still accepted;
#  - a plain client's connection (tests/helpers/keepalive.py): kept idle
#    past --api-timeout (1 s) up to --api-idle-timeout (4 s) and answered
#    again on it, closed past it; a request started on a kept connection
#    and never finished is still cut at --api-timeout; the connections are
#    counted in vigil_verifier_api_connections_total;
#  - vigil-agent --push (swtpm) over HTTPS: every exchange of several
#    pushes over one connection (one accepted, not two a push); after the
#    verifier closed it idle (the agent stopped past --api-idle-timeout),
#    the next push connects again and lands, nothing logged as an error.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
att_auth

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
KA="python3 $SRCDIR/tests/helpers/keepalive.py"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
PIDS= TPMS= APID=
trap '_rc=$?; for p in $APID $PIDS; do kill -CONT $p 2>/dev/null; kill $p 2>/dev/null; done;
      sleep 0.3; for p in $PIDS; do kill -9 $p 2>/dev/null; done; wait 2>/dev/null;
      for d in $TPMS; do bash "$SRCDIR/scripts/swtpm.sh" stop "$d" >/dev/null 2>&1; done;
      (exit $_rc); vg_cleanup' EXIT

# ---- the options' refusals ----
refused() {	# OPTION VALUE TEXT: exit 2, the message names the option and says TEXT
	local out rc
	out=$(timeout 20 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:1 --db "sqlite:$T/r.db" \
		"$1" "$2" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 2 ] && echo "$out" | grep -q -- "$1 $2: .*$3" ||
		{ echo "# rc $rc: $out"; return 1; }
}
check "--api-idle-timeout 0 refused" refused --api-idle-timeout 0 "seconds, 1 to 86400"
check "--api-idle-timeout 86401 refused" refused --api-idle-timeout 86401 "1 to 86400"
check "--api-idle-timeout 5s refused" refused --api-idle-timeout 5s "seconds"
check "--api-connections 0 refused" refused --api-connections 0 "a number of connections, 1 to 262144"
check "--api-connections -3 refused" refused --api-connections -3 "a number of connections"
check "--api-connections 262145 refused" refused --api-connections 262145 "1 to 262144"
out=$(ulimit -n 512 && timeout 20 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:1 \
	--db "sqlite:$T/r.db" --api-connections 4096 2>&1 >/dev/null)
check_eq "--api-connections 4096 with 512 descriptors: refused (2)" "$?" 2
check "... naming the option and RLIMIT_NOFILE" \
	grep -q -- "--api-connections 4096: needs about .* file descriptors.*RLIMIT_NOFILE" <<<"$out"

# ---- a plain client's kept connection ----
P=$(vg_port)
timeout 120 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$P --db "sqlite:$T/v1.db" \
	--api-timeout 1 --api-idle-timeout 4 2>v1.err &
PIDS="$PIDS $!"
up() { for i in $(seq 100); do curl -s ${2:-} -H "$ATT_RHDR" "$1/metrics" >/dev/null && return 0; sleep 0.1; done; return 1; }
check "a verifier with --api-timeout 1 --api-idle-timeout 4 serves" up http://127.0.0.1:$P
conns() {	# URL [CURL OPTIONS]: vigil_verifier_api_connections_total (this scrape's counted)
	curl -s ${2:-} -H "$ATT_RHDR" "$1/metrics" |
		awk '/^vigil_verifier_api_connections_total / {print $2}'
}
c0=$(conns http://127.0.0.1:$P)
check_eq "idle 2.5 s (past --api-timeout): answered again on the same connection" \
	"$($KA "$P" "$T/read.tok" idle 2.5)" kept
c1=$(conns http://127.0.0.1:$P)
check_eq "... one connection accepted for it (and one for this scrape)" "$((c1 - c0))" 2
check_eq "idle 5.5 s (past --api-idle-timeout): closed" "$($KA "$P" "$T/read.tok" idle 5.5)" closed
check_eq "half a request on a kept connection: cut at --api-timeout, not kept for the idle 4 s" \
	"$($KA "$P" "$T/read.tok" partial 3)" cut
check "vigil_verifier_api_connections (open now) in /metrics" \
	grep -q '^vigil_verifier_api_connections [0-9]' <(curl -s -H "$ATT_RHDR" "http://127.0.0.1:$P/metrics")

# ---- vigil-agent --push: one connection for several pushes ----
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "ok - # SKIP the pushing agent needs swtpm and tpm2-tools (scripts/deps.sh)"
	exit 0
fi
TPMS="$T/tpm1"
TCTI1=$(bash "$SRCDIR/scripts/swtpm.sh" start "$T/tpm1" --watch $$)
check "an swtpm instance" test -n "$TCTI1"
att_mkca ca
att_mkcert api ca IP:127.0.0.1
"$VERIFIER" --create-token agent "$T/p1.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1
check "an API certificate and an agent token" test -s api.pem -a -s p1.tok

V=$(vg_port)
timeout 200 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$V --db "sqlite:$T/v2.db" \
	--interval 1000 --ek-ca "$T/tpm1/ek-ca.pem" --api-cert api.pem --api-key api.key \
	--api-timeout 2 --api-idle-timeout 2 2>v2.err &
PIDS="$PIDS $!"
URL=https://127.0.0.1:$V
check "a verifier over HTTPS, --interval 1000, --api-timeout 2 --api-idle-timeout 2" up "$URL" "--cacert ca.pem"
export VIGIL_VERIFIER=$URL VIGIL_VERIFIER_CACERT=$T/ca.pem

echo "file a" >a
VIGIL_TCTI=$TCTI1 "$VIGIL" measure --log "$T/log1" --tpm "$T/a" >/dev/null 2>&1
mkdir -p "$T/st"
timeout 200 "$AGENT" --push "$URL" --push-ca "$T/ca.pem" --push-token-file "$T/p1.tok" \
	--state "$T/st" --log "$T/log1" --id p1 --tcti "$TCTI1" --boot-log "$T/no-boot-log" \
	2>agent.err &
PIDS="$PIDS $!"
TPID=$!
check "p1 registers and is trusted" att_wait p1 trusted
sleep 1
r0=$(att_field rounds p1)
c0=$(conns "$URL" "--cacert ca.pem")
sleep 5
r1=$(att_field rounds p1)
c1=$(conns "$URL" "--cacert ca.pem")
# the status query (vigil attest) and the scrape are a connection each
check "p1 pushed at least 3 times in 5 s (rounds $r0 -> $r1)" test $((r1 - r0)) -ge 3
check_eq "... over its one kept connection: no connection accepted but the two readers'" \
	"$((c1 - c0))" 2

# stopped past --api-idle-timeout: the verifier closes its connection
APID=$(ps -o pid= --ppid "$TPID" | tr -d ' ')
kill -STOP $APID $(ps -o pid= --ppid "$APID")
sleep 4
o0=$(curl -s --cacert ca.pem -H "$ATT_RHDR" "$URL/metrics" | awk '/^vigil_verifier_api_connections / {print $2}')
check_eq "stopped 4 s: the verifier closed its idle connection (open: only this scrape's)" "$o0" 1
r2=$(att_field rounds p1)
c2=$(conns "$URL" "--cacert ca.pem")
kill -CONT $APID $(ps -o pid= --ppid "$APID")
sleep 3
r3=$(att_field rounds p1)
c3=$(conns "$URL" "--cacert ca.pem")
check "p1 pushes again, judged (rounds $r2 -> $r3)" test $((r3 - r2)) -ge 1
check_eq "... over one new connection (and the two readers')" "$((c3 - c2))" 3
check_eq "... trusted" "$(att_field state p1)" trusted
check_eq "nothing logged as failed by the agent" \
	"$(grep -c 'push: \(nonce\|evidence\|register\|activate\|quote\):' agent.err)" 0
grep 'push: ' agent.err | grep -v 'registered\|pushing' | sed 's/^/#   /'
check_rc 1 "no sanitizer report" grep -q "runtime error\|AddressSanitizer" v1.err v2.err agent.err
