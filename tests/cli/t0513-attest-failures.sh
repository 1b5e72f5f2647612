#!/usr/bin/env bash
# t0513: every failure of a round, bounded, with a count (issue 21), and
# per-entry failures for policy digests vigil cannot check. Offline with
# `vigil attest policy check` (text and --json against its schema): three
# changed files are three failures in log order; 73 failures list the
# first 64 (VG_ATTEST_FAILURES_MAX) and count 73. A policy with digests of
# algorithms vigil does not know (Keylime's "sm3_256", a made-up "frob")
# imports and exports them; an entry whose only policy digests are such
# fails with policy.digest_unsupported naming the algorithm, an entry
# with a checkable digest beside one is judged by it, the others as
# always. Then a verifier round (swtpm, vigil-agent, vigil-verifier):
# three files outside the policy are three lines of the agent's history
# in log order, the agent's last message says 3 failures; after 67 more,
# a round lists 64 and says 70.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
S=$SRCDIR/docs/schemas
valid() { /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$S/$1.schema.json" "$2"; }
# jq-less: the value of a python expression over the JSON document in file $1 (as j)
pj() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- offline: every failure, in order, bounded ----
mkdir -p root many
for f in a b c d e; do echo "file $f" >root/$f; done
"$VIGIL" measure --log list --pcrs list.pcrs root/a root/b root/c root/d root/e >/dev/null
check "policy from the list" "$VIGIL" attest policy create --log list -o good.json
for f in b c e; do echo changed >>root/$f; done
"$VIGIL" measure --log list --pcrs list.pcrs root/b root/c root/e >/dev/null
"$VIGIL" attest policy check --policy good.json list >out
check_eq "three changed files: exit 1" "$?" 1
check_eq "three FAIL lines" "$(grep -c '^FAIL policy.digest ' out)" 3
check_eq "in log order, each with its entry and file" \
	"$(grep '^FAIL' out | sed -E 's/^FAIL policy.digest entry=([0-9]+) path=\S*root\/([a-e]) digest=sha256:[0-9a-f]{64}: .*/\1 \2/' | tr '\n' ' ')" \
	"6 b 7 c 8 e "
check "and the count" grep -qx "3 failures" out
"$VIGIL" attest policy check --json --policy good.json list >j
check_eq "--json: exit 1" "$?" 1
check "--json validates against its schema" valid attest-policy-check j
check_eq "--json: the first failure at the top, as before" "$(pj j '(j["failure"], j["entry"])')" \
	"('policy.digest', 6)"
check_eq "--json: failure_count 3" "$(pj j 'j["failure_count"]')" 3
check_eq "--json: failures lists the three entries" \
	"$(pj j '[(f["failure"], f["entry"], f["path"].rsplit("/",1)[1], f["digest"][:7]) for f in j["failures"]]')" \
	"[('policy.digest', 6, 'b', 'sha256:'), ('policy.digest', 7, 'c', 'sha256:'), ('policy.digest', 8, 'e', 'sha256:')]"
for i in $(seq 70); do echo "extra $i" >many/f$i; done
"$VIGIL" measure --log list --pcrs list.pcrs many/f* >/dev/null
"$VIGIL" attest policy check --policy good.json list >out
check_eq "73 failures: exit 1" "$?" 1
check_eq "the first 64 listed" "$(grep -c '^FAIL' out)" 64
check "and all 73 counted" grep -qx "73 failures, the first ones listed" out
check_eq "the last one listed is entry 69 (the 61st file outside the policy)" \
	"$(grep '^FAIL' out | tail -1 | sed -E 's/^FAIL (\S+) entry=([0-9]+) .*/\1 \2/')" "policy.not_in_policy 69"
"$VIGIL" attest policy check --json --policy good.json list >j
check "--json past the bound validates" valid attest-policy-check j
check_eq "--json past the bound: 64 listed, 73 counted" \
	"$(pj j '(len(j["failures"]), j["failure_count"], j["failures"][-1]["entry"])')" "(64, 73, 69)"
"$VIGIL" attest policy create --log list -o all.json >/dev/null
check "no failure: ok, no list" sh -c "'$VIGIL' attest policy check --json --policy all.json list | grep -q '^{\"result\":\"ok\",\"entries\":'"

# ---- file names that are not text: escaped in every report ----
# An unprivileged user names a file as it likes: here not UTF-8, and with
# a terminal escape. The text report shows both escaped (vigil/text.h), so
# nothing raw reaches a terminal; --json stays valid UTF-8 (decoded
# strictly), a "path" being the name itself when it is UTF-8 and escaped
# when not, and every message escaped.
mkdir -p odd
printf 'odd\n' >"odd/n$(printf '\377')"
printf 'odd\n' >"odd/e$(printf '\033')[2J"
"$VIGIL" measure --log odd.list --pcrs odd.pcrs odd/* >/dev/null
"$VIGIL" attest policy check --policy good.json odd.list >out
check_eq "two odd names: exit 1" "$?" 1
check_eq "... each FAIL line names it escaped, twice (path= and the message)" \
	"$(grep -o 'odd/[ne][^ ]*' out | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" \
	'2 odd/e\x1b[2J 2 odd/n\xff '
no_raw() { ! grep -q "$(printf '\033')" "$@" && ! LC_ALL=C grep -q "$(printf '\377')" "$@"; }
check "... and no raw escape or 0xff byte" no_raw out
"$VIGIL" attest policy check --json --policy good.json odd.list >j
strict() { /usr/bin/python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read())' "$1"; }
check "--json: valid UTF-8 JSON" strict j
check "... valid against its schema" valid attest-policy-check j
check_eq "--json: the names, and the messages naming them" \
	"$(pj j 'sorted((f["path"].rsplit("/",1)[1], f["message"].rsplit("/",1)[1]) for f in j["failures"] if "/odd/" in f["path"])')" \
	"[('e\\x1b[2J', 'e\\\\x1b[2J is not in the policy'), ('n\\\\xff', 'n\\\\xff is not in the policy')]"
"$VIGIL" log show --format json odd.list >lj
check "log show --format json of that list: valid UTF-8 JSON" strict lj
check_eq "... the names as the --json reports give them" \
	"$(pj lj 'sorted(f["value"].rsplit("/",1)[1] for e in j for f in e["fields"] if f["id"] == "n-ng" and "/odd/" in f["value"])')" \
	"['e\\x1b[2J', 'n\\\\xff']"

# ---- digests vigil cannot check ----
mkdir -p r2
for f in a b c d e; do echo "two $f" >r2/$f; done
"$VIGIL" measure --log list2 --pcrs list2.pcrs r2/a r2/b r2/c r2/d r2/e >/dev/null
"$VIGIL" attest policy create --log list2 -o base.json
python3 - base.json mixed.json <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
d = p["digests"]
k = {path.rsplit("/", 1)[1]: path for path in d if "/r2/" in path}
sm3 = "sm3_256:dca3d0b348447a494da13278a2451683e43314a2d2add09f9ee8e028676018dd"
d[k["a"]] = [sm3]                                   # only an uncheckable digest
d[k["b"]] = [sm3] + d[k["b"]]                       # uncheckable + the right sha256
d[k["c"]] = [sm3, "sha256:" + "00" * 32]            # uncheckable + a wrong sha256
d[k["d"]] = ["frob:00112233445566778899001122334455667788990011223344556677"]
json.dump(p, open(sys.argv[2], "w"))
EOF
check "a policy with sm3_256 and unknown digests imports" "$VIGIL" attest policy import mixed.json -o imp.json
check "the export keeps the sm3_256 digest" grep -q '"sm3_256:dca3d0b3' imp.json
check "and the unknown one" grep -q '"frob:00112233' imp.json
check "the export reads back the same" sh -c "'$VIGIL' attest policy import imp.json -o imp2.json && cmp imp.json imp2.json"
"$VIGIL" attest policy check --policy mixed.json list2 >out
check_eq "uncheckable entries fail: exit 1" "$?" 1
check_eq "three failures: a and d uncheckable, c judged by its sha256" \
	"$(grep '^FAIL' out | sed -E 's/^FAIL (\S+) entry=([0-9]+) path=\S*r2\/([a-e]) .*/\1 \2 \3/' | tr '\n' ' ')" \
	"policy.digest_unsupported 1 a policy.digest 3 c policy.digest_unsupported 4 d "
check "the failure names sm3_256" grep -q "^FAIL policy.digest_unsupported entry=1 .*: .*sm3_256, an algorithm vigil cannot compute" out
check "... and frob" grep -q "^FAIL policy.digest_unsupported entry=4 .*frob" out
check_rc 1 "b (a checkable digest beside) passes" grep -q "r2/b " out
"$VIGIL" attest policy check --json --policy mixed.json list2 >j
check "--json validates" valid attest-policy-check j
check_eq "--json: the typed failures" "$(pj j '[f["failure"] for f in j["failures"]]')" \
	"['policy.digest_unsupported', 'policy.digest', 'policy.digest_unsupported']"
echo '{"digests": {"/x": ["sha256:0011"]}}' >bad.json
check_rc 2 "a known algorithm with a wrong length is still refused" "$VIGIL" attest policy import bad.json
echo '{"digests": {}, "boot_pcrs": {"0": "frob:00112233445566778899001122334455667788"}}' >bad.json
check_rc 2 "an unknown algorithm in boot_pcrs is refused" "$VIGIL" attest policy import bad.json

# ---- a verifier round ----
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "# SKIP the verifier round: needs swtpm and tpm2-tools"
	exit 0
fi
. "$SRCDIR/tests/lib-tpm.sh"
att_auth
vg_tpm_start
AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
AP=$(vg_port); VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
mkdir -p tree st evil
for f in a b c; do echo "file $f" >tree/$f; done
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
measure tree/a tree/b tree/c
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--boot-log "$T/no-boot-log" 2>agent.err &
PIDS="$PIDS $!"
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>verifier.err &
PIDS="$PIDS $!"
for i in $(seq 600); do
	curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break
	sleep 0.1
done
"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null
"$VIGIL" attest policy set good good.json >/dev/null
check "registered" sh -c "'$VIGIL' attest add --agent http://127.0.0.1:$AP --policy good >/dev/null 2>&1"
check "trusted" att_wait host1 trusted
for f in x y z; do echo "evil $f" >evil/$f; done
measure evil/x evil/y evil/z
check "three files outside the policy: failed" att_wait host1 failed policy.not_in_policy
check "the last message counts them" sh -c "'$VIGIL' attest status --json host1 | grep -q '3 failures in this round'"
"$VIGIL" attest status host1 --history --json >h
check_eq "the history has the three, newest first, in log order" \
	"$(pj h '[(x["failure"], x["entry"], x["path"].rsplit("/",1)[1]) for x in j["history"][:3]]')" \
	"[('policy.not_in_policy', 4, 'x'), ('policy.not_in_policy', 5, 'y'), ('policy.not_in_policy', 6, 'z')]"
check "the history validates against its schema" valid attest-status h
for i in $(seq 67); do echo "more $i" >evil/m$i; done
measure evil/m*
"$VIGIL" attest reactivate host1 >/dev/null
for i in $(seq 150); do
	"$VIGIL" attest status --json host1 2>/dev/null | grep -q '70 failures in this round' && break
	sleep 0.1
done
check "70 failures: the last message counts all" sh -c "'$VIGIL' attest status --json host1 | grep -q '70 failures in this round, the first ones in the history'"
"$VIGIL" attest status host1 --history --json >h
check_eq "the round's 64 listed failures are the newest history lines, in log order" \
	"$(pj h '[x["entry"] for x in j["history"][:64]] == list(range(4, 68))')" True
check_eq "the line before them is the previous round's first" \
	"$(pj h '(j["history"][64]["entry"], "3 failures" in j["history"][64]["message"])')" "(4, True)"
check "the verifier survived" kill -0 $(echo $PIDS | awk '{print $2}')
