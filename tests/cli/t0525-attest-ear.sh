#!/usr/bin/env bash
# t0525: verdicts as signed EARs (issue 21; docs/attest-ear.md). A swtpm
# agent, trusted, then with three files not in its policy (failed, three
# policy.not_in_policy). Its EAR (GET /v1/agents/ID/ear, and `vigil
# attest status ID --ear`) is verified with an independent JOSE
# implementation, Debian's python3-jwcrypto (tests/helpers/ear_check.py): the
# signature with the verifier's public key, the algorithm the key
# dictates, and the claims against the plain JSON status and history
# (state, AR4SI tier, failure_count, every failure in order) -- for an EC
# P-256 key (ES256), an RSA key (PS256) and an Ed25519 key (EdDSA), the
# verifier restarted on the same store with each. A JWT with one byte of
# its payload changed fails jwcrypto's verification; the EAR of the
# stateless POST /v1/verify/evidence on the agent's own evidence equals
# the registered agent's (status, vector, failures); a caller's nonce is
# eat_nonce; with no --ear-key an EAR is refused (501), and the JSON
# answers are unchanged.
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-attest.sh"
export VIGIL_CONFIG=/dev/null
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
VERIFIER=${VIGIL_VERIFIER_BIN:?}
AGENT=${VIGIL_AGENT_BIN:?}
S=$SRCDIR/docs/schemas
EC="/usr/bin/python3 $SRCDIR/tests/helpers/ear_check.py"
pj() { /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
valid() { /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$S/$1.schema.json" "$2"; }

if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "1..0 # SKIP needs swtpm and tpm2-tools"
	exit 0
fi
if ! /usr/bin/python3 -c 'import jwcrypto' 2>/dev/null; then
	echo "1..0 # SKIP needs python3-jwcrypto"
	exit 0
fi
att_auth
VP=$(vg_port)
AP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
. "$SRCDIR/tests/lib-tpm.sh"
vg_tpm_start
VPID=
PIDS=
trap '_rc=$?; for p in $VPID $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT

# the signing keys, and their public halves for the relying party
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.key 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null
openssl genpkey -algorithm ED25519 -out ed.key 2>/dev/null
for k in ec rsa ed; do openssl pkey -in $k.key -pubout -out $k.pub; done

# verifier [OPTIONS...]: (re)start the verifier on the same store, its EK CA swtpm's
# (an identity claim needs the AK proven to a certified EK: t0528 has the other cases)
verifier() {
	if [ -n "$VPID" ]; then
		kill "$VPID" 2>/dev/null
		wait "$VPID" 2>/dev/null
	fi
	timeout 600 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" \
		--interval 200 --ek-ca "$TPMDIR/ek-ca.pem" "$@" 2>>verifier.err &
	VPID=$!
	for i in $(seq 50); do
		curl -s -H "$ATT_RHDR" "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
# ear ID FILE [QUERY]: GET /v1/agents/ID/ear into FILE, the status printed
ear() {
	curl -s -o "$2" -w '%{http_code}' -H "$ATT_RHDR" "127.0.0.1:$VP/v1/agents/$1/ear${3:-}"
}

check "the verifier, no --ear-key" verifier
mkdir -p tree evil st
for f in a b c; do echo "file $f" >tree/$f; done
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
measure tree/a tree/b tree/c
timeout 600 "$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--boot-log "$T/no-boot-log" 2>agent.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null
"$VIGIL" attest policy set good good.json >/dev/null
check "registered" sh -c "'$VIGIL' attest add --agent http://127.0.0.1:$AP --policy good >/dev/null 2>&1"
check "its rounds: trusted" att_wait host1 trusted

# ---- no key: refused, with the reason ----
check_eq "no --ear-key: GET /v1/agents/host1/ear is 501" "$(ear host1 nokey.out)" 501
check "... saying which option is missing" grep -q -- "--ear-key" nokey.out
check_rc 2 "vigil attest status host1 --ear: an error (exit 2)" \
	sh -c "'$VIGIL' attest status host1 --ear >/dev/null 2>cli.err"
check "... naming --ear-key" grep -q -- "--ear-key" cli.err
check_eq "no credential: 401 before anything" \
	"$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$VP/v1/agents/host1/ear")" 401

# ---- trusted: ES256, then PS256 and EdDSA on the same store ----
"$VIGIL" attest status --json host1 >st.json
check_eq "status: failure_count 0 while trusted" "$(pj st.json 'j["failure_count"]')" 0
check "... the status validates against its schema" valid attest-status st.json
check "restarted with an EC P-256 --ear-key" verifier --ear-key ec.key
check "... the key process signs: the key named in its log" grep -q "EARs signed ES256" verifier.err
# the verifier (under timeout) and its children: a key process, with no --api-key
key_proc() {
	local v p
	for v in $(cat /proc/$VPID/task/*/children 2>/dev/null); do
		for p in $(cat /proc/$v/task/*/children 2>/dev/null); do
			[ "$(cat /proc/$p/comm 2>/dev/null)" = vigil-key ] && return 0
		done
	done
	return 1
}
check "... a key process (vigil-key) holds it, with no --api-key" key_proc
check_eq "GET /v1/agents/host1/ear: 200" "$(ear host1 t-ec.jwt)" 200
check "... an ES256 JWT that jwcrypto verifies, claims as the status says (affirming)" \
	sh -c "$EC verify ec.pub ES256 t-ec.jwt st.json >t-ec.claims"
check "... the signature is the key's: not with the RSA key" \
	sh -c "! $EC verify rsa.pub PS256 t-ec.jwt 2>/dev/null"
# one byte of the payload changed: jwcrypto refuses it (the check can fail)
/usr/bin/python3 - t-ec.jwt bad.jwt <<'PY'
import sys
h, p, s = open(sys.argv[1]).read().strip().split(".")
i = len(p) // 2
p = p[:i] + ("A" if p[i] != "A" else "B") + p[i + 1:]
open(sys.argv[2], "w").write(".".join((h, p, s)))
PY
check "a JWT with one payload byte changed: jwcrypto refuses it" \
	sh -c "! $EC verify ec.pub ES256 bad.jwt 2>bad.err"
check "... as a bad signature" grep -q "does not verify" bad.err
check_eq "unknown agent: 404" "$(ear nosuch x.out)" 404
check_eq "a nonce that is not one: 400" "$(ear host1 x.out '?nonce=short')" 400
check_eq "with ?nonce=: 200" "$(ear host1 n.jwt '?nonce=caller-nonce.0123456789')" 200
check "... eat_nonce is the caller's" \
	sh -c "$EC verify ec.pub ES256 n.jwt st.json '' caller-nonce.0123456789 >/dev/null"
check "vigil attest status host1 --ear --nonce: the same, from the CLI" \
	sh -c "'$VIGIL' attest status host1 --ear --nonce clinonce-42 >cli.jwt"
check "... verifies, with its nonce" \
	sh -c "$EC verify ec.pub ES256 cli.jwt st.json '' clinonce-42 >/dev/null"
check_rc 2 "--nonce without --ear: usage error" "$VIGIL" attest status host1 --nonce abcdefgh
check "restarted with an RSA --ear-key" verifier --ear-key rsa.key
check_eq "... the trusted agent's EAR: 200" "$(ear host1 t-rsa.jwt)" 200
"$VIGIL" attest status --json host1 >st.json
check "... PS256, verified by jwcrypto, claims as the status says" \
	sh -c "$EC verify rsa.pub PS256 t-rsa.jwt st.json >/dev/null"
check "restarted with an Ed25519 --ear-key" verifier --ear-key ed.key
check_eq "... the trusted agent's EAR: 200" "$(ear host1 t-ed.jwt)" 200
check "... EdDSA, verified by jwcrypto" sh -c "$EC verify ed.pub EdDSA t-ed.jwt st.json >/dev/null"

# ---- three files not in the policy: failed, three failures in the EAR ----
check "restarted with the RSA key" verifier --ear-key rsa.key
for f in x y z; do echo "evil $f" >evil/$f; done
measure evil/x evil/y evil/z
check "its rounds: failed, policy.not_in_policy" att_wait host1 failed policy.not_in_policy
"$VIGIL" attest status --json host1 >st.json
"$VIGIL" attest status --json --history host1 >hist.json
check_eq "status: failure_count 3" "$(pj st.json 'j["failure_count"]')" 3
check "... the status validates against its schema" valid attest-status st.json
check_eq "GET /v1/agents/host1/ear: 200" "$(ear host1 f-rsa.jwt)" 200
check "... PS256, jwcrypto verifies; contraindicated, count 3, the three failures as the history lists them" \
	sh -c "$EC verify rsa.pub PS256 f-rsa.jwt st.json hist.json >f-rsa.claims"
check_eq "... three policy.not_in_policy, with their paths" \
	"$(pj f-rsa.claims '[(f["id"], f["path"].split("/")[-1]) for f in j["submods"]["host1"]["vigil.failures"]]')" \
	"[('policy.not_in_policy', 'x'), ('policy.not_in_policy', 'y'), ('policy.not_in_policy', 'z')]"
check_eq "... executables 33 (unrecognized runtime), instance-identity 2" \
	"$(pj f-rsa.claims 'sorted(j["submods"]["host1"]["ear.trustworthiness-vector"].items())')" \
	"[('executables', 33), ('instance-identity', 2)]"
check "restarted with the EC key" verifier --ear-key ec.key
check_eq "... the failed agent's EAR: 200" "$(ear host1 f-ec.jwt)" 200
check "... ES256, jwcrypto verifies, the same three failures" \
	sh -c "$EC verify ec.pub ES256 f-ec.jwt st.json hist.json >/dev/null"

# ---- the stateless endpoint on the same evidence: the same EAR verdict ----
agent_evidence() {
	local n
	n=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/quote?nonce=$n&bank=sha256&mask=400" >q.json
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/identity" >id.json
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/log?offset=0" -o cur.log
	"$VIGIL" log convert --to ascii -o cur.ascii cur.log >/dev/null
	/usr/bin/python3 - "$n" "$1" "${2:-}" <<'PY'
import json, sys
data = {"quote": json.load(open("q.json")), "nonce_hex": sys.argv[1], "hash_alg": "sha256",
        "tpm_ak": json.load(open("id.json"))["ak_pub"], "runtime_policy_name": "good",
        "ima_measurement_list": open("cur.ascii").read()}
req = {"type": "tpm", "data": data}
if sys.argv[3]:
    req.update(json.loads(sys.argv[3]))
json.dump(req, open(sys.argv[2], "w"))
PY
}
# post NAME [HEADER]: POST NAME.json, the answer in NAME.out, the status printed
post() {
	curl -s -o "$1.out" -w '%{http_code}' -X POST -H "$ATT_RHDR" -H "${2:-X-None: 1}" \
		-H 'Content-Type: application/json' --data-binary "@$1.json" \
		"127.0.0.1:$VP/v1/verify/evidence"
}
agent_evidence ev.json '{"ear": true, "eat_nonce": "stateless-nonce-1"}'
check_eq "POST /v1/verify/evidence with \"ear\": true: 200" "$(post ev)" 200
check "... an ES256 EAR with the caller's eat_nonce" \
	sh -c "$EC verify ec.pub ES256 ev.out '' '' stateless-nonce-1 >ev.claims"
check "... equal to the registered agent's: status, vector, count, failures" \
	$EC same ev.out f-ec.jwt ec.pub
check_eq "... its policy: the named policy and its document's digest" \
	"$(pj ev.claims 'j["submods"]["evidence"]["ear.appraisal-policy-id"]')" \
	"$(pj f-rsa.claims 'j["submods"]["host1"]["ear.appraisal-policy-id"]')"
check_eq "... which is good.json's sha256" \
	"$(pj ev.claims 'j["submods"]["evidence"]["ear.appraisal-policy-id"]')" \
	"good@sha256:$(sha256sum good.json | cut -d' ' -f1)"
agent_evidence ev2.json
check_eq "Accept: application/eat+jwt asks for it too: 200" \
	"$(post ev2 'Accept: application/eat+jwt')" 200
check "... a verified EAR, no eat_nonce" sh -c "$EC verify ec.pub ES256 ev2.out >/dev/null"
check_eq "without either: the JSON answer, as before" \
	"$(post ev2 >/dev/null; pj ev2.out '(j["valid"], j["failure_count"])')" "(False, 3)"
agent_evidence ev3.json '{"ear": true, "eat_nonce": "bad nonce"}'
check_eq "an eat_nonce that is not one: 400" "$(post ev3)" 400
check "restarted without a key" verifier
no_key_proc() { ! key_proc; }
check "... no key process then" no_key_proc
agent_evidence ev.json '{"ear": true}'
check_eq "no --ear-key: an EAR from the stateless endpoint is 501" "$(post ev)" 501
check "the verifier survived" kill -0 "$VPID"

# ---- an --ear-key that cannot sign: refused at start, naming the option, the file and why ----
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa1024.key 2>/dev/null
echo "not a key" >notkey.pem
for k in rsa1024.key:"an RSA key of 1024 bits" notkey.pem:"not a PEM private key"; do
	f=${k%%:*} why=${k#*:}
	check_rc 2 "--ear-key $f: the verifier refuses to start (exit 2)" timeout 20 "$VERIFIER" $ATT_VAUTH \
		--listen 127.0.0.1:$(vg_port) --db "sqlite:$T/refused.db" --ear-key "$f"
	cp "$T/.out" refused.err
	check "... saying --ear-key $f: $why" grep -q -- "--ear-key $f: $why" refused.err
done

# ---- file names an unprivileged user on the host chooses ----
# One not UTF-8, one with a terminal escape: the verifier's status,
# history and EAR stay valid UTF-8 (decoded strictly, as Python's
# json.loads of the bytes does: a hook or relying party that parses them
# must not lose the failure they report). A "path" is the name itself
# when it is UTF-8 (JSON escapes the control character, \u001b), else in
# vigil's escaped form (vigil/text.h); a message escapes both.
check "restarted with the EC key" verifier --ear-key ec.key
printf 'nasty\n' >"evil/n$(printf '\377\376')"
printf 'nasty\n' >"evil/e$(printf '\033')[2J"
measure evil/n* evil/e*
"$VIGIL" attest reactivate host1 >/dev/null
five() { [ "$(att_field failure_count)" = 5 ]; }
for i in $(seq 150); do five && break; sleep 0.1; done
check "its next round counts five failures" five
strict() { /usr/bin/python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read())' "$1"; }
curl -s -H "$ATT_RHDR" "127.0.0.1:$VP/v1/agents/host1" -o st5.json
curl -s -H "$ATT_RHDR" "127.0.0.1:$VP/v1/agents/host1/history" -o hist5.json
check "GET /v1/agents/host1 is valid UTF-8 JSON" strict st5.json
check "GET /v1/agents/host1/history is valid UTF-8 JSON" strict hist5.json
check_eq "... the two names escaped" \
	"$(pj hist5.json 'sorted({f["path"].split("/")[-1] for f in j["history"]} - {"x", "y", "z"})')" \
	"['e\\x1b[2J', 'n\\\\xff\\\\xfe']"
no_raw() { ! grep -q "$(printf '\033')" "$@" && ! LC_ALL=C grep -q "$(printf '\377')" "$@"; }
check "... no raw escape or 0xff byte in either" no_raw st5.json hist5.json
check_eq "GET /v1/agents/host1/ear: 200" "$(ear host1 n-ec.jwt)" 200
"$VIGIL" attest status --json host1 >st.json
"$VIGIL" attest status --json --history host1 >hist.json
check "... jwcrypto verifies it, and its claims decode: five failures as the history lists them" \
	sh -c "$EC verify ec.pub ES256 n-ec.jwt st.json hist.json >n-ec.claims"
check_eq "... the escaped names in its claims, the messages naming them so" \
	"$(pj n-ec.claims '[(f["path"].split("/")[-1], f["message"].split("/")[-1]) for f in j["submods"]["host1"]["vigil.failures"]][-2:]')" \
	"[('n\\\\xff\\\\xfe', 'n\\\\xff\\\\xfe is not in the policy'), ('e\\x1b[2J', 'e\\\\x1b[2J is not in the policy')]"
