#!/usr/bin/env bash
# t0097: every CLI command that reports has --json, and its real output
# validates against docs/schemas/<command>.schema.json (JSON Schema 2020-12,
# python3-jsonschema), on success and on failure: hash, measure, label,
# appraise, scan --check and --explain, policy check and explain, log replay, attest policy check,
# log show --format json, log boot show|replay --json, attest quote-check,
# key show --json, status --json (a vigild on a tmpfs). The output without --json is unchanged
# (checked against the plain form). The schemas are strict: a mutated
# document (wrong type, a missing required key, an unknown key) fails.
# attest status --json is validated in t0511 (it needs a verifier).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
S=$SRCDIR/docs/schemas
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
IV=$VECTORS/imalog
EV=$VECTORS/eventlog
export VIGIL_CONFIG=/dev/null
# valid SCHEMA FILE [--lines]: FILE validates against docs/schemas/SCHEMA.schema.json
valid() { /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$S/$1.schema.json" "${@:3}" "$2"; }
# js WHAT SCHEMA WANT_RC [--lines] -- CMD...: run CMD (stdout to out.json), check its
# exit status and that its output validates
js() {
	local what=$1 schema=$2 want=$3 lines= rc
	shift 3
	[ "$1" = --lines ] && { lines=--lines; shift; }
	[ "$1" = -- ] && shift
	"$@" >out.json 2>err.txt; rc=$?
	check_eq "$what: exit $want" "$rc" "$want"
	check "$what: output validates ($schema)" valid "$schema" out.json $lines
}

check "every schema is a valid 2020-12 schema" /usr/bin/python3 -c '
import glob, json, sys, jsonschema
fs = glob.glob(sys.argv[1] + "/*.schema.json")
assert len(fs) >= 16, fs
for f in fs:
    jsonschema.Draft202012Validator.check_schema(json.load(open(f)))' "$S"

mkdir t && echo one >t/a && echo two >t/b && ln -s a t/link
# ---- hash ----
js "hash" hash 0 --lines -- "$VIGIL" hash --json t/a t/b
check_eq "hash: one line per file" "$(wc -l <out.json)" 2
check_eq "hash: the digest as without --json" \
	"$(/usr/bin/python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(d["algo"]+":"+d["digest"])' out.json)" \
	"$("$VIGIL" hash t/a | cut -d' ' -f1)"
js "hash, a missing file" hash 2 --lines -- "$VIGIL" hash --json t/a t/none
check "... its error is in the output" grep -q '"file":"t/none","error":' out.json
js "hash --write" hash 0 --lines -- "$VIGIL" hash --json --write --algo sha1 t/b
check "... written: true" grep -q '"written":true' out.json
check_eq "hash without --json is unchanged" "$("$VIGIL" hash t/a)" \
	"sha256:$(sha256sum t/a | cut -d' ' -f1)  t/a"

# ---- trust boot hash (the Authenticode vectors: tests/vectors/authenticode) ----
js "trust boot hash" trust-boot-hash 0 --lines -- "$VIGIL" trust boot hash --json \
	"$VECTORS/authenticode/small-signed.efi"
js "trust boot hash, no PE image" trust-boot-hash 2 --lines -- "$VIGIL" trust boot hash --json \
	"$VECTORS/authenticode/bad-truncated.efi"

# ---- measure ----
js "measure" measure 0 --lines -- "$VIGIL" measure --json --log "$T/mlog" t/a t/b
js "measure, a missing file" measure 2 --lines -- "$VIGIL" measure --json --log "$T/mlog" t/none t/a
check "... its error is in the output" grep -q '"file":"t/none","error":' out.json

# ---- label, appraise ----
js "label" label 0 -- "$VIGIL" label --json --hmac-key "$HK" t/a
js "label -r with a failure" label 1 -- "$VIGIL" label --json -r --hmac-key "$HK" t t/none
check "... counted with its reason" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["errors"] + d["failed"] >= 1, d' out.json
check "label without --json: the summary line as before" sh -c \
	"'$VIGIL' label --hmac-key '$HK' t/a | grep -q '^labeled 1 of 1 files'"
js "appraise, a labeled file" appraise 0 --lines -- "$VIGIL" appraise --json --hmac-key "$HK" t/a
echo changed >>t/a
js "appraise, a changed file" appraise 1 --lines -- "$VIGIL" appraise --json --hmac-key "$HK" t/a
js "appraise -r (per failing file, then the summary)" appraise 1 --lines -- \
	"$VIGIL" appraise --json -r --hmac-key "$HK" t
js "appraise, a missing file" appraise 2 --lines -- "$VIGIL" appraise --json --hmac-key "$HK" t/none

# ---- scan --check ----
"$VIGIL" scan --init -q -o db --hmac-key "$HK" t
js "scan --check, no change" scan-check 0 --lines -- "$VIGIL" scan --check db --json --hmac-key "$HK"
echo three >t/c; rm t/b; chmod 600 t/a
js "scan --check, changes" scan-check 1 --lines -- "$VIGIL" scan --check db --json --hmac-key "$HK"
check "... added, removed and changed lines" sh -c 'grep -q "\"added\"" out.json &&
	grep -q "\"removed\"" out.json && grep -q "\"changed\"" out.json'
check "... with old and new values" grep -q '"diff":{"mode":{"old":"0644","new":"0600"}' out.json
setfattr -n user.k -v 1 t/a
js "scan --update, changes" scan-check 1 --lines -- "$VIGIL" scan --update db --json --hmac-key "$HK"
js "scan --check after --update" scan-check 0 --lines -- "$VIGIL" scan --check db --json --hmac-key "$HK"
printf 'scan.group META = p+u+g\nscan.rule = /t META+s+growing\nscan.rule = !/t/x\n' >rules.conf
js "scan --explain, a rule" scan-explain 0 -- "$VIGIL" scan --explain /t/a --config rules.conf --json
js "scan --explain, excluded" scan-explain 0 -- "$VIGIL" scan --explain /t/x --config rules.conf --json
js "scan --explain, no rule" scan-explain 0 -- "$VIGIL" scan --explain /u --json

# ---- policy check ----
printf 'appraise func=BPRM_CHECK\nmeasure func=FILE_CHECK mask=MAY_READ\n' >good.pol
printf 'appraise func=BPRM_CHECK\nbogus rule\nmeasure func=NOPE\n' >bad.pol
printf 'appraise func=BPRM_CHECK\nmeasure func=MMAP_CHECK\n' >mmap.pol
js "policy check, valid" policy-check 0 -- "$VIGIL" policy check --json good.pol
check "... valid, 2 rules" grep -q '"valid":true,"rules":2' out.json
js "policy check, two bad rules" policy-check 2 -- "$VIGIL" policy check --json bad.pol
check_eq "... both listed" "$(grep -o '"severity":"error"' out.json | wc -l)" 2
js "policy check, a rule vigild cannot enforce" policy-check 2 -- "$VIGIL" policy check --json mmap.pol
js "policy check --accept-unenforced: a warning" policy-check 0 -- \
	"$VIGIL" policy check --json --accept-unenforced mmap.pol
check "... the warning" grep -q '"severity":"warning"' out.json
js "policy check --builtin" policy-check 0 -- "$VIGIL" policy check --json --kernel --builtin tcb
js "policy check, a missing file" policy-check 2 -- "$VIGIL" policy check --json none.pol
js "policy explain -v" policy-explain 0 -- "$VIGIL" policy explain --json -v --func BPRM_CHECK --builtin tcb
printf 'deny func=BPRM_CHECK path=/x\n' >deny.pol
js "policy explain, a denied access" policy-explain 1 -- \
	"$VIGIL" policy explain --json --func BPRM_CHECK --path /x deny.pol
check "... verdict deny" grep -q '"verdict":"deny"' out.json
check_eq "policy check without --json is unchanged" "$("$VIGIL" policy check good.pol)" \
	"good.pol: ok, 2 rules"

# ---- log replay ----
js "log replay" log-replay 0 -- "$VIGIL" log replay --json "$IV/embrave.binary_runtime_measurements"
js "log replay --pcrs, a match" log-replay 0 -- \
	"$VIGIL" log replay --json --pcrs "$IV/embrave.pcrs-sha1.txt" "$IV/embrave.binary_runtime_measurements"
check "... result match" grep -q '"result":"match"' out.json
printf 'PCR-10 %040d\n' 1 >wrong.pcrs
js "log replay --pcrs, a mismatch" log-replay 1 -- \
	"$VIGIL" log replay --json --pcrs wrong.pcrs "$IV/embrave.binary_runtime_measurements"
check "... result mismatch" grep -q '"result":"mismatch"' out.json
js "log replay, an entry whose template digest is wrong" log-replay 1 -- \
	"$VIGIL" log replay --json "$IV/bad-template-digest-keylime-BAD_SIGNATURES.ima"
check "... result invalid-entry" grep -q '"result":"invalid-entry"' out.json
check "log replay without --json is unchanged" sh -c "'$VIGIL' log replay \
	'$IV/embrave.binary_runtime_measurements' | grep -qx 'PCR-10 sha1:f38695bbd9479953543813fb13bb88235440504e'"

# ---- attest policy check ----
"$VIGIL" attest policy create --log "$T/mlog" -o ref.json >/dev/null
js "attest policy check, ok" attest-policy-check 0 -- \
	"$VIGIL" attest policy check --json --policy ref.json "$T/mlog"
echo evil >t/evil
"$VIGIL" measure --log "$T/mlog" t/evil >/dev/null 2>&1
js "attest policy check, a file outside the policy" attest-policy-check 1 -- \
	"$VIGIL" attest policy check --json --policy ref.json "$T/mlog"
check "... named" grep -q '"failure":"policy.not_in_policy"' out.json

# ---- log show, log boot show, key show ----
for l in embrave.binary_runtime_measurements ima-evm-utils-test_ascii_runtime_measurements \
	 keylime-KEYRINGS.ima ibmtss-imatest.log; do
	js "log show --format json $l" log-show 0 -- "$VIGIL" log show --format json "$IV/$l"
done
js "log show --format json, our own list" log-show 0 -- "$VIGIL" log show --format json "$T/mlog"
for l in go-attestation__crypto_agile_eventlog go-attestation__windows_gcp_shielded_vm.eventlog.bin \
	 go-attestation__option_rom_eventlog; do
	js "log boot show --json $l" log-boot-show 0 -- "$VIGIL" log boot show --json "$EV/$l"
done
js "log boot replay --json" log-boot-replay 0 -- \
	"$VIGIL" log boot replay --json "$EV/go-attestation__option_rom_eventlog"
js "log boot replay --json --pcrs, a match" log-boot-replay 0 -- "$VIGIL" log boot replay --json \
	--pcrs "$EV/go-attestation__option_rom_eventlog.pcrs" "$EV/go-attestation__option_rom_eventlog"
check "... result match" grep -q '"result":"match"' out.json
printf 'PCR-00 sha1:%040d\n' 1 >boot-wrong.pcrs
js "log boot replay --json --pcrs, a mismatch" log-boot-replay 1 -- "$VIGIL" log boot replay --json \
	--pcrs boot-wrong.pcrs "$EV/go-attestation__option_rom_eventlog"
check "... result mismatch" grep -q '"result":"mismatch"' out.json

# ---- attest quote-check (keylime's tpm2-tools quote over sha256 PCRs 15, 16, 22) ----
AV=$VECTORS/attest
qc() { "$VIGIL" attest quote-check --json --ak "$AV/ak.pub" --msg "$AV/quote.out" --sig "$AV/quotesig.out" \
	--pcrs "$AV/quotepcr.out" --nonce "$(od -An -tx1 "$AV/rand.out" | tr -d ' \n')" "$@"; }
js "attest quote-check, a good quote" attest-quote-check 0 -- qc --pcr-list sha256:15,16,22
js "attest quote-check, other PCRs asked" attest-quote-check 1 -- qc --pcr-list sha256:0,1
check "... quote.selection" grep -q '"failure":"quote.selection"' out.json

head -c 32 /dev/urandom >raw.key
printf 'a passphrase\n' >pass
"$VIGIL" key create --passphrase --passphrase-file pass --scrypt-logn 10 -o p.key >/dev/null 2>&1
js "key show --json, raw and passphrase keys" key-show 0 --lines -- "$VIGIL" key show --json raw.key p.key

# ---- status (a vigild on a tmpfs) ----
mkdir fs && mount -t tmpfs -o size=8m vigil-t0097 fs
printf 'appraise func=BPRM_CHECK\n' >vd.pol
if check "vigild starts" vd_start --policy vd.pol --watch "$T/fs" --hmac-key "$HK" --no-tpm; then
	js "status --json" status 0 -- "$VIGIL" status --control "$T/ctl" --json
	js "status --mode permissive --json" status 0 -- \
		"$VIGIL" status --control "$T/ctl" --mode permissive
	vd_stop
fi

# ---- the schemas are strict: mutated documents fail ----
mutate() { # WHAT SCHEMA PYTHON-EXPR-ON-d [--lines]: the valid document DOC.json, mutated, fails
	/usr/bin/python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).readline())
exec(sys.argv[2])
print(json.dumps(d))' "$2.doc" "$3" >mut.json
	check_rc 1 "$1: refused by the $2 schema" valid "$2" mut.json
}
"$VIGIL" hash --json t/c >hash.doc
"$VIGIL" scan --explain /t/a --config rules.conf --json >scan-explain.doc
"$VIGIL" policy check --json good.pol >policy-check.doc
"$VIGIL" log replay --json "$IV/embrave.binary_runtime_measurements" >log-replay.doc
"$VIGIL" attest policy check --json --policy ref.json "$T/mlog" >attest-policy-check.doc
for sc in hash policy-check log-replay attest-policy-check scan-explain; do
	check "$sc: the document mutated below is valid as it is" valid $sc $sc.doc
done
mutate "hash: digest a number" hash 'd["digest"] = 12'
mutate "hash: no algo" hash 'del d["algo"]'
mutate "hash: an unknown key" hash 'd["extra"] = 1'
mutate "policy check: valid a string" policy-check 'd["valid"] = "true"'
mutate "policy check: no diagnostics" policy-check 'del d["diagnostics"]'
mutate "policy check: valid without rules" policy-check 'del d["rules"]'
mutate "log replay: pcr as a string" log-replay 'd["pcrs"][0]["pcr"] = "10"'
mutate "log replay: an unknown result" log-replay 'd["result"] = "maybe"'
mutate "log replay: replayed but compared" log-replay 'd["compared"] = True'
mutate "attest policy check: fail without failure" attest-policy-check 'del d["failure"]'
mutate "attest policy check: entry negative" attest-policy-check 'd["entry"] = -1'
mutate "scan explain: an unknown attribute" scan-explain 'd["attributes"].append("atime")'
mutate "scan explain: rule without line" scan-explain 'del d["rule"]["line"]'
mutate "scan explain: an unknown selection" scan-explain 'd["selection"] = "first"'
