#!/usr/bin/env bash
# t0514: POST /v1/verify/evidence (issue 21): one round's evidence judged
# with no registered agent, in Keylime's request shape. First a real TPM's
# quote and its measurement list in Keylime's pull format
# (keylime-perf-tests: the quote, its AK, the nonce Keylime sent as text,
# 780 entries replaying to the quoted PCR 10): valid with a policy of the
# list, and each kind of bad evidence gives the typed failures a round
# gives. Then a swtpm agent: the stateless verdict on the agent's own
# evidence equals the verdict of its registered rounds (trusted, then the
# same three policy.not_in_policy failures). Credentials: a read token
# suffices, none is refused; what vigil would not enforce is refused (400).
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-attest.sh"
export VIGIL_CONFIG=/dev/null
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
VERIFIER=${VIGIL_VERIFIER_BIN:?}
S=$SRCDIR/docs/schemas
J=$VECTORS/attest/keylime-perf-tests__hw_quote_pcr0-16.json
LOG=$VECTORS/attest/perf_ima_log.txt
pj() { /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
valid() { /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$S/$1.schema.json" "$2"; }

att_auth
VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      [ -n "${TPMDIR:-}" ] && bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	2>verifier.err &
PIDS="$PIDS $!"
for i in $(seq 600); do
	curl -s -H "$ATT_RHDR" "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break
	sleep 0.1
done

# post NAME [HEADER]: POST evidence file NAME.json; the answer in NAME.out, the status printed
post() {
	curl -s -o "$1.out" -w '%{http_code}' -X POST -H "${2:-$ATT_RHDR}" \
		-H 'Content-Type: application/json' --data-binary "@$1.json" \
		"127.0.0.1:$VP/v1/verify/evidence"
}
# evidence OUT [KEY=JSON-VALUE...]: Keylime's request for the hardware quote, fields replaced
evidence() {
	/usr/bin/python3 - "$J" "$LOG" "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
data = {
    "quote": j["keylime_pull_format_quote"],
    "nonce": j["qualifying_data_ascii"],
    "hash_alg": "sha256",
    "tpm_ak": j["ak_tpm_b64_TPM2B_PUBLIC"],
    "tpm_ek": "unused",
    "tpm_policy": json.dumps({"mask": "0x1ffff"}),
    "runtime_policy": open("pol.json").read(),
    "ima_measurement_list": open(sys.argv[2]).read(),
}
for kv in sys.argv[4:]:
    k, v = kv.split("=", 1)
    if v == "DEL":
        data.pop(k, None)
    else:
        data[k] = json.loads(v)
json.dump({"type": "tpm", "data": data}, open(sys.argv[3], "w"))
PY
}

# ---- a real TPM's evidence in Keylime's pull format ----
check "a policy from the list" "$VIGIL" attest policy create --log "$LOG" -o pol.json
evidence good.json
check_eq "the hardware quote, its list, a policy of it: 200" "$(post good)" 200
check_eq "... valid" "$(pj good.out 'j["valid"]')" True
check_eq "... every entry judged" "$(pj good.out 'j["entries"]')" 780
check "... the answer validates against its schema" valid verify-evidence good.out
# (a small body: the refusal comes from the headers, before the body is read, and
# curl may lose an answer sent while it still uploads a large one)
printf '{"type": "tpm", "data": {}}' >small.json
check_eq "no credential: 401" "$(post small 'X-None: 1')" 401
check_eq "the admin token also may" "$(post good "$ATT_HDR")" 200

# another nonce: quote.nonce
evidence bad.json 'nonce="another nonce"'
check_eq "another nonce: judged (200)" "$(post bad)" 200
check_eq "... not valid, quote.nonce" "$(pj bad.out '(j["valid"], j["failures"][0]["type"])')" \
	"(False, 'quote.nonce')"
# a list entry altered (its file digest, not its template digest): log.entry_digest
/usr/bin/python3 -c 'import sys
l = open(sys.argv[1]).read().split("\n")
f = l[5].split(" ")
f[3] = f[3][:-1] + ("0" if f[3][-1] != "0" else "1")
l[5] = " ".join(f)
open("alt.log", "w").write("\n".join(l))' "$LOG"
evidence bad.json "ima_measurement_list=$(/usr/bin/python3 -c 'import json,sys; print(json.dumps(open("alt.log").read()))')"
post bad >/dev/null
check_eq "an altered entry: log.entry_digest at entry 5" \
	"$(pj bad.out '(j["valid"], j["failures"][0]["type"], j["failures"][0]["context"]["entry"])')" \
	"(False, 'log.entry_digest', 5)"
# the list cut short: it no longer reaches the quoted PCR 10
head -n 700 "$LOG" >short.log
evidence bad.json "ima_measurement_list=$(/usr/bin/python3 -c 'import json,sys; print(json.dumps(open("short.log").read()))')"
post bad >/dev/null
check_eq "a list cut short: log.pcr_mismatch" "$(pj bad.out 'j["failures"][-1]["type"]')" "log.pcr_mismatch"
# a policy without three of the files: three policy.not_in_policy, all listed
/usr/bin/python3 -c 'import json
p = json.load(open("pol.json"))
for k in sorted(p["digests"])[:3]:
    del p["digests"][k]
json.dump(p, open("pol3.json", "w"))'
evidence bad.json "runtime_policy=$(/usr/bin/python3 -c 'import json; print(json.dumps(open("pol3.json").read()))')"
post bad >/dev/null
check_eq "a policy missing three files: three failures, counted" \
	"$(pj bad.out '(j["valid"], j["failure_count"], sorted(set(f["type"] for f in j["failures"])))')" \
	"(False, 3, ['policy.not_in_policy'])"
# the policy by name, as the verifier holds it
"$VIGIL" attest policy set perf pol.json >/dev/null
evidence named.json 'runtime_policy=DEL' 'runtime_policy_name="perf"'
check_eq "the policy by name: valid" "$(post named >/dev/null; pj named.out 'j["valid"]')" True
evidence bad.json 'runtime_policy=DEL' 'runtime_policy_name="nosuch"'
check_eq "an unknown policy name: 404" "$(post bad)" 404
# Keylime's tpm_policy asks for PCRs: another set than quoted is quote.selection
evidence bad.json 'tpm_policy="{\"mask\": \"0x400\"}"'
post bad >/dev/null
check_eq "tpm_policy asking PCR 10 only of a 0-16 quote: quote.selection" \
	"$(pj bad.out 'j["failures"][0]["type"]')" "quote.selection"
# what vigil would not enforce, and malformed requests: 400 with the reason
evidence bad.json 'tpm_policy="{\"mask\": \"0x1ffff\", \"15\": [\"00\"]}"'
check_eq "pinned PCR values in tpm_policy: refused (400)" "$(post bad)" 400
check "... saying where to pin them" grep -q "boot_pcrs" bad.out
evidence bad.json 'mb_policy="accept-all"'
check_eq "an mb_policy that is no measured-boot reference state: refused (400)" "$(post bad)" 400
check "... naming mb_policy" grep -q "evidence: mb_policy: " bad.out
evidence bad.json 'quote=DEL'
check_eq "no quote: 400" "$(post bad)" 400
check "... naming it" grep -q 'missing parameter .*quote' bad.out
evidence bad.json 'tpm_ak="AAAA"'
check_eq "a bad AK: 400" "$(post bad)" 400
evidence bad.json 'quote="x:y"'
check_eq "a malformed Keylime quote: 400" "$(post bad)" 400
evidence bad.json 'runtime_policy="{\"digests\": 3}"'
check_eq "a malformed policy: 400" "$(post bad)" 400
printf '{"type": "tee", "data": {}}' >bad.json
check_eq "type tee: 400" "$(post bad)" 400
printf 'not json' >bad.json
check_eq "not JSON: 400" "$(post bad)" 400
check_eq "GET: 405" "$(curl -s -o /dev/null -w '%{http_code}' -H "$ATT_RHDR" 127.0.0.1:$VP/v1/verify/evidence)" 405
check "the verifier survived" kill -0 $(echo $PIDS | awk '{print $1}')

# ---- a swtpm agent: the stateless verdict equals its rounds' ----
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "# SKIP the agent part: needs swtpm and tpm2-tools"
	exit 0
fi
. "$SRCDIR/tests/lib-tpm.sh"
vg_tpm_start
# vg_tpm_start set its own trap: ours again, which also stops swtpm
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
AGENT=${VIGIL_AGENT_BIN:?}
AP=$(vg_port)
mkdir -p tree evil st
for f in a b c; do echo "file $f" >tree/$f; done
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
measure tree/a tree/b tree/c
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--boot-log "$T/no-boot-log" 2>agent.err &
PIDS="$PIDS $!"
for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null
"$VIGIL" attest policy set good good.json >/dev/null
check "registered" sh -c "'$VIGIL' attest add --agent http://127.0.0.1:$AP --policy good >/dev/null 2>&1"
check "its rounds: trusted" att_wait host1 trusted
# agent_evidence OUT: a fresh quote (PCR 10) and the whole list from the agent, as a request
agent_evidence() {
	local n
	n=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/quote?nonce=$n&bank=sha256&mask=400" >q.json
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/identity" >id.json
	curl -s -H "$ATT_AHDR" "127.0.0.1:$AP/v1/log?offset=0" -o cur.log
	"$VIGIL" log convert --to ascii -o cur.ascii cur.log >/dev/null
	/usr/bin/python3 - "$n" "$1" <<'PY'
import json, sys
data = {"quote": json.load(open("q.json")), "nonce_hex": sys.argv[1], "hash_alg": "sha256",
        "tpm_ak": json.load(open("id.json"))["ak_pub"], "runtime_policy_name": "good",
        "ima_measurement_list": open("cur.ascii").read()}
json.dump({"type": "tpm", "data": data}, open(sys.argv[2], "w"))
PY
}
agent_evidence ag.json
check_eq "the agent's own evidence, stateless: valid" "$(post ag >/dev/null; pj ag.out 'j["valid"]')" True
for f in x y z; do echo "evil $f" >evil/$f; done
measure evil/x evil/y evil/z
check "its rounds: failed, policy.not_in_policy" att_wait host1 failed policy.not_in_policy
"$VIGIL" attest status host1 --history --json >h
agent_evidence ag.json
post ag >/dev/null
check_eq "stateless on the same evidence: the same three failures, in log order" \
	"$(pj ag.out '[(f["type"], f["context"]["entry"], f["context"]["path"]) for f in j["failures"]]')" \
	"$(pj h '[(x["failure"], x["entry"], x["path"]) for x in j["history"][:3]]')"
check_eq "... counted" "$(pj ag.out 'j["failure_count"]')" 3
check "the verifier survived" kill -0 $(echo $PIDS | awk '{print $1}')
