#!/usr/bin/env bash
# t0508: credentials on the attestation API (docs/api-auth.md), on loopback
# with swtpm. The verifier does not start without a credential scheme (nor
# with a token list others may read, or a malformed one); --create-token
# never writes over an existing path and lists only a hash. Against the
# verifier: no token, a malformed token, a token of another verifier, a
# token list with one hash altered get 401 on every route (never a
# verdict); a read token reads but gets 403 on every change (delete, clear
# the policy, upload a policy, reactivate, register), and the agent stays
# as it was; "/v1/agents/host1%00x" is 400, not host1. Against the agent:
# anonymous clients and the verifier's API tokens get 401 on every route,
# the agent does not start without a credential scheme, and a %00 in the
# path is 400. Token lists are read again on SIGHUP (a revoked token is 401
# at once, a broken list keeps the old one; at the agent, the verifier is
# then refused). --insecure-no-auth is said at start, in every status answer
# and by the CLI.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
AP=$(vg_port); VP=$(vg_port); VP2=$(vg_port); VP3=$(vg_port)
V=http://127.0.0.1:$VP
A=http://127.0.0.1:$AP
export VIGIL_VERIFIER=$V
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
# code METHOD URL [curl args]: the HTTP status; the body in $T/body, headers in $T/hdr
code() { local m=$1 u=$2; shift 2; curl -s --max-time 10 -D "$T/hdr" -o "$T/body" -w '%{http_code}' -X "$m" "$u" "$@"; }
up() { for i in $(seq 100); do curl -s "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

# ---- starting without a credential scheme ----
timeout 10 "$VERIFIER" --listen 127.0.0.1:$VP2 --db "sqlite:$T/x.db" --auth-tokens "$T/none" >out 2>&1
check_eq "verifier without a token list or --api-client-ca: exit 2" "$?" 2
check "... saying how to create the first admin token" grep -q -- "--create-token admin" out
check "... or --insecure-no-auth" grep -q -- "--insecure-no-auth" out
cp verifier-tokens loose && chmod 644 loose
timeout 10 "$VERIFIER" --listen 127.0.0.1:$VP2 --db "sqlite:$T/x.db" --auth-tokens "$T/loose" >out 2>&1
check_eq "a token list others may read: exit 2" "$?" 2
check "... naming the file and its mode" grep -q "loose: mode 0644" out
{ cat verifier-tokens; echo "admin 0123456z 00"; } >bad && chmod 600 bad
timeout 10 "$VERIFIER" --listen 127.0.0.1:$VP2 --db "sqlite:$T/x.db" --auth-tokens "$T/bad" >out 2>&1
check_eq "a malformed token list: exit 2" "$?" 2
check "... naming file and line" grep -q "bad: line 3: the id" out
echo "root 01234567 $(printf 'a%.0s' $(seq 64))" >bad
timeout 10 "$VERIFIER" --listen 127.0.0.1:$VP2 --db "sqlite:$T/x.db" --auth-tokens "$T/bad" >out 2>&1
check_eq "an unknown role: exit 2" "$?" 2
timeout 10 "$VERIFIER" --listen 127.0.0.1:$VP2 --db "sqlite:$T/x.db" --auth-tokens "$T/agent-tokens" >out 2>&1
check_eq "the agents' list (role verifier) as the verifier's: exit 2" "$?" 2

# ---- --create-token ----
echo precious >keep
check_rc 2 "create-token over an existing file: refused" \
	"$VERIFIER" --create-token admin "$T/keep" --auth-tokens "$T/more-tokens"
check_eq "... the file is as it was" "$(cat keep)" precious
ln -s /dev/null devlink
check_rc 2 "create-token onto a link to a device: refused" \
	"$VERIFIER" --create-token admin "$T/devlink" --auth-tokens "$T/more-tokens"
check "... /dev/null is still a device" test -c /dev/null
check_rc 2 "create-token role root: refused" \
	"$VERIFIER" --create-token root "$T/new.tok" --auth-tokens "$T/more-tokens"
check "admin.tok is 0600" test "$(stat -c %a admin.tok)" = 600
check "verifier-tokens is 0600" test "$(stat -c %a verifier-tokens)" = 600
check "the list holds no token, only hashes" sh -c "! grep -q \"\$(cut -d. -f3 '$T/admin.tok')\" '$T/verifier-tokens'"
check "the list holds sha256 of the token" grep -q "$(tr -d '\n' <admin.tok | sha256sum | cut -c1-64)" verifier-tokens
"$VERIFIER" --create-token admin "$T/other.tok" --auth-tokens "$T/other-tokens" >/dev/null 2>&1

# ---- the daemons ----
"$VIGIL" measure --log "$T/log" --tpm /etc/hostname >/dev/null 2>&1
mkdir -p st
timeout 10 "$AGENT" --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --auth-tokens "$T/none" >out 2>&1
check_eq "agent without a token list or --tls-client-ca: exit 2" "$?" 2
check "... saying what to do" grep -q -- "--insecure-no-auth" out
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--boot-log "$T/no-boot-log" 2>agent.err &
APID=$!
PIDS="$PIDS $APID"
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>verifier.err &
VPID=$!
PIDS="$PIDS $VPID"
up "$A/v1/identity"; up "$V/v1/agents"
"$VIGIL" attest policy create --log "$T/log" -o p.json >/dev/null
check "admin: policy upload" "$VIGIL" attest policy set p p.json
check "admin: registration (the verifier's token accepted by the agent)" \
	"$VIGIL" attest add host1 --agent "$A" --policy p
check "trusted" att_wait host1 trusted

# ---- the verifier's API, attacked ----
routes() {	# every route, with what a change would send
	echo "GET $V/v1/agents -"
	echo "GET $V/v1/agents/host1 -"
	echo "GET $V/v1/agents/host1/history -"
	echo "GET $V/v1/policies/p -"
	echo "DELETE $V/v1/agents/host1 -"
	echo "PUT $V/v1/agents/host1/policy {\"policy\":\"\"}"
	echo "POST $V/v1/agents/host1/reactivate {}"
	echo "PUT $V/v1/policies/p {\"vigil_refpolicy\":1,\"digests\":{}}"
	echo "POST $V/v1/agents {\"id\":\"h2\",\"url\":\"$A\"}"
}
attack() {	# WHO WANT-READ WANT-CHANGE [curl args]
	local who=$1 wr=$2 wc=$3 m u b want got bad=
	shift 3
	while read -r m u b; do
		want=$wc; [ "$m" = GET ] && want=$wr
		if [ "$b" = - ]; then got=$(code "$m" "$u" "$@"); else got=$(code "$m" "$u" "$@" --data-binary "$b"); fi
		[ "$got" = "$want" ] || bad="$bad $m ${u#$V}=$got"
		if [ "$want" = 401 ] && ! grep -qi "^WWW-Authenticate: Bearer" hdr; then bad="$bad $m ${u#$V}:no-WWW-Authenticate"; fi
	done < <(routes)
	check_eq "$who: every read $wr, every change $wc" "${bad:-none}" none
}
attack "no credential" 401 401
attack "a malformed token" 401 401 -H "Authorization: Bearer vg1.nothex"
attack "Basic credentials" 401 401 -H "Authorization: Basic YWRtaW46YWRtaW4="
attack "another verifier's admin token" 401 401 -H "Authorization: Bearer $(cat other.tok)"
attack "the agents' token (role verifier)" 401 401 -H "$ATT_AHDR"
attack "a read token" 200 403 -H "$ATT_RHDR"
check_eq "after all that, host1 is still trusted under policy p" \
	"$(att_field state) $(att_field policy)" "trusted p"
check "... and policy p still allows the log" "$VIGIL" attest policy get p
check_rc 2 "CLI with a read token: remove refused (exit 2, not a verdict)" \
	"$VIGIL" attest --token-file "$T/read.tok" remove host1
cp .out last
check "... saying why" grep -q "forbidden: read credential cannot change state (403)" last
check "CLI with a read token: status works" "$VIGIL" attest --token-file "$T/read.tok" status host1
check_rc 2 "CLI with another verifier's token: exit 2" env VIGIL_TOKEN_FILE="$T/other.tok" \
	"$VIGIL" attest status host1
cp .out last
check "... authentication failed (401)" grep -q "authentication failed (401)" last
check "... not printed as a verdict" sh -c "! grep -q '^FAIL' '$T/last'"
check_rc 2 "CLI without any credential: exit 2" env -u VIGIL_TOKEN_FILE "$VIGIL" attest status host1
cp .out last
check "... authentication failed (401)" grep -q "authentication failed (401)" last
chmod 644 read.tok
check_rc 2 "CLI with a token file others may read: refused" "$VIGIL" attest --token-file "$T/read.tok" status
cp .out last
check "... naming the file" grep -q "read.tok: mode 0644" last
chmod 600 read.tok

# ids are decoded strictly: a NUL does not end them
check_eq "GET /v1/agents/host1%00x: 400" "$(code GET "$V/v1/agents/host1%00x" -H "$ATT_HDR")" 400
check "... saying why" grep -q "control character" body
check_eq "DELETE /v1/agents/host1%00x: 400" "$(code DELETE "$V/v1/agents/host1%00x" -H "$ATT_HDR")" 400
check_eq "DELETE /v1/agents/host1%0a: 400" "$(code DELETE "$V/v1/agents/host1%0a" -H "$ATT_HDR")" 400
check_eq "PUT /v1/agents/host1%2Fx/policy (an encoded slash): 400" \
	"$(code PUT "$V/v1/agents/host1%2Fpolicy" -H "$ATT_HDR" --data-binary '{"policy":""}')" 400
check_eq "GET /v1/agents/host1%zz: 400" "$(code GET "$V/v1/agents/host1%zz" -H "$ATT_HDR")" 400
check_eq "host1 is still there and trusted" "$(att_field state)" trusted
check_eq "GET /v1/agents/host%31 (a plain character encoded): host1" \
	"$(code GET "$V/v1/agents/host%31" -H "$ATT_RHDR")" 200

# a token list altered: the admin line's hash changed by one digit
cp verifier-tokens tampered
python3 - tampered <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
r, i, h = lines[0].split()
h = h[:-1] + ("0" if h[-1] != "0" else "1")
lines[0] = " ".join((r, i, h))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
"$VERIFIER" --auth-tokens "$T/tampered" --listen 127.0.0.1:$VP2 --db "sqlite:$T/v2.db" 2>verifier2.err &
PIDS="$PIDS $!"
up "http://127.0.0.1:$VP2/v1/agents"
check_eq "tampered token list: the admin token is refused (401)" \
	"$(code DELETE "http://127.0.0.1:$VP2/v1/agents/host1" -H "$ATT_HDR")" 401
check_eq "... the read token still reads" "$(code GET "http://127.0.0.1:$VP2/v1/agents" -H "$ATT_RHDR")" 200
names_id_only() {
	grep -q "refused token $(cut -d. -f2 "$T/admin.tok")" "$T/verifier2.err" &&
		! grep -q "$(cut -d. -f3 "$T/admin.tok")" "$T/verifier2.err" "$T/verifier.err"
}
check "the verifier names refused tokens by id, never the secret" names_id_only

# ---- the agent, asked by others than its verifier ----
n20=00112233445566778899aabbccddeeff00112233
agent_routes() {
	echo "GET $A/v1/identity -"
	echo "GET $A/v1/quote?nonce=$n20&bank=sha256&mask=400 -"
	echo "GET $A/v1/log?offset=0 -"
	echo "GET $A/v1/bootlog -"
	echo "POST $A/v1/activate {}"
}
agent_attack() {	# WHO WANT [curl args]
	local who=$1 want=$2 m u b got bad=
	shift 2
	while read -r m u b; do
		if [ "$b" = - ]; then got=$(code "$m" "$u" "$@"); else got=$(code "$m" "$u" "$@" --data-binary "$b"); fi
		[ "$got" = "$want" ] || bad="$bad $m ${u#$A}=$got"
	done < <(agent_routes)
	check_eq "agent, $who: every route $want" "${bad:-none}" none
}
agent_attack "anonymous" 401
agent_attack "an admin token of the verifier's API" 401 -H "$ATT_HDR"
agent_attack "a malformed token" 401 -H "Authorization: Bearer x"
check_eq "agent, the verifier's token: a quote" \
	"$(code GET "$A/v1/quote?nonce=$n20&bank=sha256&mask=400" -H "$ATT_AHDR")" 200
check_eq "agent, the verifier's token: the list" "$(code GET "$A/v1/log?offset=0" -H "$ATT_AHDR")" 200
check_eq "agent, /v1/log%00x with the verifier's token: 400" \
	"$(code GET "$A/v1/log%00x?offset=0" -H "$ATT_AHDR")" 400
check "host1 is still trusted" att_wait host1 trusted

# ---- revocation: SIGHUP reads the lists again ----
logged() { for i in $(seq 50); do grep -q "$2" "$1" && return 0; sleep 0.1; done; return 1; }
grep -v '^read ' verifier-tokens >vt.new && cat vt.new >verifier-tokens
kill -HUP $VPID
check "verifier, SIGHUP: the list read again" logged verifier.err "SIGHUP: 1 token(s)"
check_eq "... the revoked read token: 401" "$(code GET "$V/v1/agents" -H "$ATT_RHDR")" 401
check_eq "... the admin token still: 200" "$(code GET "$V/v1/agents" -H "$ATT_HDR")" 200
echo "garbage" >>verifier-tokens
kill -HUP $VPID
check "verifier, SIGHUP with a broken list: said" logged verifier.err "line 2: expected ROLE ID SHA256HEX; the tokens listed before stay valid"
check_eq "... the tokens before stay valid" "$(code GET "$V/v1/agents" -H "$ATT_HDR")" 200
cat vt.new >verifier-tokens
cp agent-tokens agent-tokens.saved
: >agent-tokens
kill -HUP $APID
check "agent, SIGHUP (sent to the TPM process, passed on): the list read again" \
	logged agent.err "SIGHUP: 0 token(s)"
check "the verifier's token revoked at the agent: the agent is unreachable" \
	att_wait host1 unreachable agent.comm
says401() { "$VIGIL" attest status host1 | grep -q "refused our credential (HTTP 401)"; }
check "... saying the agent refused the verifier's credential" says401
cat agent-tokens.saved >agent-tokens
kill -HUP $APID
check "listed again: trusted" att_wait host1 trusted

# ---- --insecure-no-auth: said loudly ----
"$VERIFIER" --insecure-no-auth --listen 127.0.0.1:$VP3 --db "sqlite:$T/v3.db" 2>verifier3.err &
NPID=$!
PIDS="$PIDS $NPID"
sleep 0.3
up "http://127.0.0.1:$VP3/v1/agents"
check "--insecure-no-auth: a warning at start" grep -q "WARNING: --insecure-no-auth" verifier3.err
check_eq "... anyone may read" "$(code GET "http://127.0.0.1:$VP3/v1/agents")" 200
check "... every list answer says auth disabled" grep -q '"auth":"disabled"' body
env -u VIGIL_TOKEN_FILE VIGIL_VERIFIER=http://127.0.0.1:$VP3 "$VIGIL" attest status >out 2>err
check "... the CLI warns on stderr" grep -q "runs without authentication" err
timeout 10 "$VERIFIER" --insecure-no-auth $ATT_VAUTH --listen 127.0.0.1:$(vg_port) --db "sqlite:$T/v4.db" >out 2>&1
check_eq "--insecure-no-auth with --auth-tokens: exit 2 (one or the other)" "$?" 2
check "no daemon logged a sanitizer error" sh -c "! grep -qi 'sanitizer\|runtime error' '$T'/verifier*.err '$T/agent.err'"
