#!/usr/bin/env bash
# t0528: an EAR says only what the verifier proved of the identity
# (issue 39, item 2; docs/attest-ear.md "What instance-identity means").
# The agents are vigil-fleet-sim's: software keys laid out as a TPM's (an
# RSA EK with a certificate from the simulator's CA, an RSA AK), which the
# verifier cannot tell from a TPM by their evidence: a machine with no TPM
# at all. Every EAR is verified with an independent JOSE implementation
# (Debian's python3-jwcrypto, tests/helpers/ear_check.py), its claims read
# there.
#  - a verifier with --ek-ca (the simulator's CA): sim00000 registered
#    (MakeCredential / ActivateCredential), trusted: its EAR and the
#    stateless POST /v1/verify/evidence of its quote and AK are affirming
#    with instance-identity 2, the stateless one naming the agent;
#  - the stateless endpoint on sim00001's evidence (an AK no registration
#    proved, a quote over a list replayed in software): "valid" in JSON,
#    and its EAR has no instance-identity claim and is not affirming
#    ("none"), executables 2 as judged; a failing one is contraindicated;
#  - a verifier without --ek-ca: sim00002 registered (its AK proven to an
#    EK nothing vouches for) gets no instance-identity claim and "warning",
#    from GET /v1/agents/ID/ear and from the stateless endpoint alike.
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-attest.sh"
export VIGIL_CONFIG=/dev/null
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
VERIFIER=${VIGIL_VERIFIER_BIN:?}
SIM=${VIGIL_FLEET_SIM_BIN:?}
EC="/usr/bin/python3 $SRCDIR/tests/helpers/ear_check.py"
if ! /usr/bin/python3 -c 'import jwcrypto' 2>/dev/null; then
	echo "1..0 # SKIP needs python3-jwcrypto"
	exit 0
fi
att_auth
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; (exit $_rc); vg_cleanup' EXIT
up() { for i in $(seq 300); do curl -s -o /dev/null "$@" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
pj() { /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.key 2>/dev/null
openssl pkey -in ec.key -pubout -out ec.pub
SP=$(vg_port)
timeout 600 "$SIM" --agents 3 --port "$SP" --entries 3 --files 50 --ek-ca-out "$T/sim-ca.pem" \
	--policy-log "$T/sim.log" --tamper sim00001 >sim.out 2>sim.err &
PIDS="$PIDS $!"
S=http://127.0.0.1:$SP/a
check "the simulator serves 3 agents (software EK, certificate, AK)" up "$S/sim00000/v1/identity"
"$VIGIL" attest policy create --log "$T/sim.log" -o p.json >/dev/null

# verifier NAME [OPTIONS...]: on a store of its own; sets V (its URL)
verifier() {
	local p n=$1
	shift
	p=$(vg_port)
	timeout 600 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$p --db "sqlite:$T/$n.db" \
		--interval 500 --ear-key ec.key "$@" 2>>"verifier-$n.err" &
	PIDS="$PIDS $!"
	V=http://127.0.0.1:$p
	up -H "$ATT_RHDR" "$V/v1/agents" &&
		VIGIL_VERIFIER=$V "$VIGIL" attest policy set p p.json >/dev/null
}
register() {	# ID: registered with policy p, trusted
	VIGIL_VERIFIER=$V "$VIGIL" attest add "$1" --agent "$S/$1" --policy p >/dev/null &&
		VIGIL_VERIFIER=$V att_wait "$1" trusted
}
ear() {	# ID OUT: GET /v1/agents/ID/ear
	curl -s -o "$2" -w '%{http_code}' -H "$ATT_RHDR" "$V/v1/agents/$1/ear"
}
# stateless ID OUT: the agent's evidence now (a fresh nonce), POST /v1/verify/evidence with "ear"
stateless() {
	local n
	n=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	curl -s "$S/$1/v1/quote?nonce=$n&bank=sha256&mask=400" >q.json
	curl -s "$S/$1/v1/identity" >id.json
	curl -s "$S/$1/v1/log?offset=0" -o cur.log
	"$VIGIL" log convert --to ascii -o cur.ascii cur.log >/dev/null
	/usr/bin/python3 - "$n" <<'PY' >ev.json
import json, sys
print(json.dumps({"type": "tpm", "ear": True, "data": {
    "quote": json.load(open("q.json")), "nonce_hex": sys.argv[1], "hash_alg": "sha256",
    "tpm_ak": json.load(open("id.json"))["ak_pub"], "runtime_policy_name": "p",
    "ima_measurement_list": open("cur.ascii").read()}}))
PY
	curl -s -o "$2" -w '%{http_code}' -X POST -H "$ATT_RHDR" -H 'Content-Type: application/json' \
		--data-binary @ev.json "$V/v1/verify/evidence"
}
claims() { $EC verify ec.pub ES256 "$1" >"$1.claims"; }	# verified by jwcrypto, claims kept
sub() { pj "$1.claims" "next(iter(j['submods'].values())).get('$2')"; }
vec() { pj "$1.claims" "sorted(next(iter(j['submods'].values()))['ear.trustworthiness-vector'].items())"; }

# ---- with --ek-ca: a registered agent's AK is proven to a certified EK ----
check "a verifier with --ek-ca (the simulator's CA) and an EAR key" verifier a --ek-ca "$T/sim-ca.pem"
check "sim00000 registered and trusted" register sim00000
check_eq "its EAR: 200" "$(ear sim00000 a0.jwt)" 200
check "... verified by jwcrypto" claims a0.jwt
check_eq "... affirming" "$(sub a0.jwt ear.status)" affirming
check_eq "... instance-identity 2, executables 2" "$(vec a0.jwt)" \
	"[('executables', 2), ('instance-identity', 2)]"
check_eq "the stateless EAR of its quote and AK: 200" "$(stateless sim00000 s0.jwt)" 200
check "... verified by jwcrypto" claims s0.jwt
check_eq "... affirming, instance-identity 2 (the AK a registration proved)" \
	"$(sub s0.jwt ear.status) $(vec s0.jwt)" "affirming [('executables', 2), ('instance-identity', 2)]"
check_eq "... naming the agent whose AK it is" "$(sub s0.jwt vigil.agent-id)" sim00000

# ---- the stateless endpoint, an AK nobody proved: a software key, no TPM ----
check_eq "sim00001 (never registered): the stateless EAR, 200" "$(stateless sim00001 s1.jwt)" 200
cp ev.json ev1.json
check "... verified by jwcrypto" claims s1.jwt
check_eq "... not affirming: none" "$(sub s1.jwt ear.status)" none
check_eq "... no instance-identity claim; executables 2 as judged" "$(vec s1.jwt)" \
	"[('executables', 2)]"
check_eq "... no agent named" "$(sub s1.jwt vigil.agent-id)" None
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("ear"); json.dump(d, open(sys.argv[2], "w"))' \
	ev1.json ev1-json.json
check_eq "... while the JSON answer says the evidence is valid (as judged, not whose)" \
	"$(curl -s -X POST -H "$ATT_RHDR" -H 'Content-Type: application/json' --data-binary @ev1-json.json \
	   "$V/v1/verify/evidence" | python3 -c 'import json,sys; print(json.load(sys.stdin)["valid"])')" True
# its next quote measures changed files (--tamper): a failure is contraindicated whoever sent it
check_eq "sim00001 tampered: the stateless EAR, 200" "$(stateless sim00001 s1t.jwt)" 200
check "... verified by jwcrypto" claims s1t.jwt
check_eq "... contraindicated, no instance-identity claim" \
	"$(sub s1t.jwt ear.status) $(pj s1t.jwt.claims "'instance-identity' in next(iter(j['submods'].values()))['ear.trustworthiness-vector']")" \
	"contraindicated False"

# ---- without --ek-ca: the AK proven to an EK nothing vouches for ----
check "a verifier without --ek-ca" verifier b
check "sim00002 registered and trusted" register sim00002
check_eq "its EAR: 200" "$(ear sim00002 b2.jwt)" 200
check "... verified by jwcrypto" claims b2.jwt
check_eq "... warning, no instance-identity claim" "$(sub b2.jwt ear.status) $(vec b2.jwt)" \
	"warning [('executables', 2)]"
check_eq "the stateless EAR of its quote and AK: 200" "$(stateless sim00002 sb2.jwt)" 200
check "... verified by jwcrypto" claims sb2.jwt
check_eq "... warning, no instance-identity claim" "$(sub sb2.jwt ear.status) $(vec sb2.jwt)" \
	"warning [('executables', 2)]"
check_eq "... naming it" "$(sub sb2.jwt vigil.agent-id)" sim00002
check "the verifiers logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T'/verifier-*.err"
