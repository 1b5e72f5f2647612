#!/usr/bin/env bash
# t0526: an agent id is bound to what proved it (issue 39, item 1), on
# loopback with four swtpm TPMs (A, B, C, D) and real agents:
#  - pull: web1 registered on TPM A; the same TPM, as an agent saying it is
#    db1, is refused (403 identity.ek_bound, naming web1), nothing stored;
#    web1 is trusted again once its agent answers; after an operator removes
#    web1 the TPM enrolls as db1;
#  - push, a token of role agent: it registers p1 (TPM B); the same token
#    for another id on another TPM (C) is refused, 403 naming p1, by the
#    verifier and as the pushing agent is told; p1 is still trusted and
#    pushes on; another token registers C's identity (202: the binding is
#    the token's);
#  - push, a client certificate: it registers p3 (TPM D); the same
#    certificate for another id is refused, 403 naming p3;
#  - push, the EK: p1's TPM under a new token and another id is refused
#    (403 identity.ek_bound naming p1), and p1 pushes on.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "1..0 # SKIP needs swtpm and tpm2-tools (scripts/deps.sh)"
	exit 0
fi
att_auth
AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SW="$SRCDIR/scripts/swtpm.sh"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
PIDS= TPMS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      for d in $TPMS; do bash "$SW" stop "$d" >/dev/null 2>&1; done; (exit $_rc); vg_cleanup' EXIT
up() { for i in $(seq 600); do curl -s -o /dev/null "$@" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

declare -A TCTI
for t in A B C D; do
	TPMS="$TPMS $T/tpm$t"
	TCTI[$t]=$(bash "$SW" start "$T/tpm$t" --watch $$) || { echo "not ok 1 - swtpm $t starts"; exit 1; }
	VIGIL_TCTI=${TCTI[$t]} "$VIGIL" measure --log "$T/log$t" --tpm /etc/hostname >/dev/null 2>&1
done
cat "$T"/tpm?/ek-ca.pem >ek-ca.pem

# HTTPS for the pushing agents: the API's certificate, the agents' CA
att_mkca ca; att_mkca agents
att_mkcert api ca IP:127.0.0.1
att_mkcert c1 agents
for k in t1 t2; do
	"$VERIFIER" --create-token agent "$T/$k.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1
done
VP=$(vg_port)
export VIGIL_VERIFIER=https://127.0.0.1:$VP VIGIL_VERIFIER_CACERT=$T/ca.pem
timeout 600 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" --interval 500 \
	--ek-ca ek-ca.pem --api-cert api.pem --api-key api.key --push-client-ca agents.pem \
	2>verifier.err &
PIDS="$PIDS $!"
check "the verifier serves HTTPS, agents' tokens and certificates" up --cacert ca.pem \
	-H "$ATT_RHDR" "$VIGIL_VERIFIER/v1/agents"

# pull NAME TPM: a pulled agent on TPM, id NAME, its own state (AK) and port; sets AURL, APID
declare -A PORT
pull() {
	local p
	[ -n "${PORT[$1]:-}" ] || PORT[$1]=$(vg_port)
	p=${PORT[$1]}
	mkdir -p "$T/st-$1"
	VIGIL_TCTI=${TCTI[$2]} "$AGENT" $ATT_AAUTH --listen 127.0.0.1:$p --state "$T/st-$1" \
		--log "$T/log$2" --id "$1" --boot-log "$T/no-boot-log" 2>>"agent-$1.err" &
	APID=$!
	PIDS="$PIDS $APID"
	AURL=http://127.0.0.1:$p
	up "$AURL/"
}
# push NAME TPM CRED...: a pushing agent, id NAME, on TPM; sets PPID_
push() {
	local n=$1 t=$2
	shift 2
	mkdir -p "$T/st-$n"
	VIGIL_TCTI=${TCTI[$t]} "$AGENT" --push "$VIGIL_VERIFIER" --push-ca "$T/ca.pem" "$@" \
		--state "$T/st-$n" --log "$T/log$t" --id "$n" --boot-log "$T/no-boot-log" \
		2>>"agent-$n.err" &
	PPID_=$!
	PIDS="$PIDS $PPID_"
}
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
rounds() { att_field rounds "$1"; }
known() { "$VIGIL" attest status "$1" >/dev/null 2>&1; }	# 0 known, 2 no such agent
code() { curl -s -o "$T/code.out" -w '%{http_code}' --cacert ca.pem "$@"; }

# ---- pull: one TPM is one agent ----
pull web1 A
"$VIGIL" attest policy create --log "$T/logA" -o pA.json >/dev/null
"$VIGIL" attest policy set pA pA.json >/dev/null
check "web1 registered on TPM A" "$VIGIL" attest add web1 --agent "$AURL" --policy pA
check "... trusted" att_wait web1 trusted
stop "$APID"
pull db1 A
"$VIGIL" attest add db1 --agent "$AURL" --policy pA >add.out 2>&1
check_eq "TPM A as db1: refused (exit 1)" "$?" 1
sed 's/^/# /' add.out
check "... identity.ek_bound, naming web1" grep -q "FAIL identity.ek_bound.*registered as agent 'web1'" add.out
check_rc 2 "... db1 not stored" known db1
check_eq "... POST /v1/agents answers 403" \
	"$(code -H "$ATT_HDR" -H 'Content-Type: application/json' \
	   -d "{\"id\": \"db1\", \"url\": \"$AURL\"}" "$VIGIL_VERIFIER/v1/agents")" 403
stop "$APID"
pull web1 A
check "web1 trusted again once its agent answers" att_wait web1 trusted
r0=$(rounds web1)
sleep 1.5
check "... its rounds go on" test "$(rounds web1)" -gt "$r0"
stop "$APID"
check "an operator removes web1" "$VIGIL" attest remove web1
pull db1 A
check "... then TPM A enrolls as db1" "$VIGIL" attest add db1 --agent "$AURL" --policy pA
check "... trusted" att_wait db1 trusted
stop "$APID"

# ---- push: a token registers one id ----
push p1 B --push-token-file "$T/t1.tok"
P1=$PPID_
check "p1 registers with token t1 (TPM B) and is trusted" att_wait p1 trusted
"$VIGIL" attest policy create --log "$T/logB" -o pB.json >/dev/null
"$VIGIL" attest policy set pB pB.json >/dev/null
"$VIGIL" attest policy assign p1 pB >/dev/null
check "... under its policy" att_wait p1 trusted
# TPM C's identity, as its agent sends it (without the id it says: the path names it)
pull p2 C
id_c=$(curl -s -H "$ATT_AHDR" "$AURL/v1/identity" |
	python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("id", None); print(json.dumps(d))')
stop "$APID"
check "TPM C's identity read" test -n "$id_c"
T1H="Authorization: Bearer $(cat t1.tok)"
T2H="Authorization: Bearer $(cat t2.tok)"
check_eq "token t1 registering p2 (TPM C): 403" \
	"$(code -H "$T1H" -X POST -d "$id_c" "$VIGIL_VERIFIER/v1/push/p2/register")" 403
check "... naming p1" grep -q "this credential registered agent 'p1'" code.out
push p2 C --push-token-file "$T/t1.tok"
P2=$PPID_
for i in $(seq 100); do grep -q "push: register: refused" agent-p2.err && break; sleep 0.1; done
check "the pushing agent p2 (token t1) is told so" \
	grep -q "push: register: refused: this credential registered agent 'p1'" agent-p2.err
check_rc 2 "... p2 not stored" known p2
stop "$P2"
r0=$(rounds p1)
sleep 2
check "p1 still trusted, pushing on (rounds $r0 -> $(rounds p1))" \
	test "$(att_field state p1)" = trusted -a "$(rounds p1)" -gt "$r0"
check_eq "token t2 registering p2 with TPM C: 202 (the binding is the token's)" \
	"$(code -H "$T2H" -X POST -d "$id_c" "$VIGIL_VERIFIER/v1/push/p2/register")" 202

# ---- push: a client certificate registers one id ----
C1="--cert $T/c1.pem --key $T/c1.key"
push p3 D --push-cert "$T/c1.pem" --push-key "$T/c1.key"
P3=$PPID_
check "p3 registers with certificate c1 (TPM D) and is trusted" att_wait p3 trusted
check_eq "certificate c1 registering p4 (TPM C): 403" \
	"$(code $C1 -X POST -d "$id_c" "$VIGIL_VERIFIER/v1/push/p4/register")" 403
check "... naming p3" grep -q "this credential registered agent 'p3'" code.out
check_rc 2 "... p4 not stored" known p4
check "p3 still trusted" att_wait p3 trusted

# ---- push: p1's TPM under another token and id ----
stop "$P1"
push p5 B --push-token-file "$T/t2.tok"
P5=$PPID_
for i in $(seq 100); do grep -q "push: register: refused" agent-p5.err && break; sleep 0.1; done
check "TPM B as p5 (token t2): refused, identity.ek_bound naming p1" \
	grep -q "push: register: refused: this TPM's EK is registered as agent 'p1'" agent-p5.err
check_rc 2 "... p5 not stored" known p5
stop "$P5"
push p1 B --push-token-file "$T/t1.tok"
check "p1's agent back: trusted, pushing" att_wait p1 trusted
check "no sanitizer report" sh -c "! grep -q 'runtime error\|AddressSanitizer' '$T'/verifier.err '$T'/agent-*.err"
