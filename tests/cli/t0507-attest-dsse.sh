#!/usr/bin/env bash
# t0507: DSSE-signed reference policies (--policy-key): Keylime's signed
# test policy verifies with its key and imports to the same policy as the
# unsigned one; its corrupted twin, another key, an unsigned policy and a
# tampered payload are refused (exit 1, naming the file); envelopes signed
# here with openssl (ECDSA and RSA, PAE per the DSSE spec) verify and
# give the same verdicts as the policy they wrap.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
att_auth
A=$VECTORS/attest
K=$VECTORS/evmctl/keys

check "Keylime's signed policy verifies with its key" \
	"$VIGIL" attest policy import --policy-key "$A/runtime-policy-pubkey.pub" \
	"$A/runtime-policy-test-signed.json" -o signed.json
"$VIGIL" attest policy import "$A/runtime-policy-test.json" -o plain.json
check "... and is the unsigned policy" cmp signed.json plain.json

"$VIGIL" attest policy import --policy-key "$A/runtime-policy-pubkey.pub" \
	"$A/runtime-policy-test-signed-bad.json" -o bad.json 2>err
check_eq "its corrupted twin is refused (exit 1)" "$?" 1
check "the message names the file and the reason" \
	grep -q "runtime-policy-test-signed-bad.json: DSSE: no signature verifies with a trusted key" err
check_rc 1 "nothing written" test -e bad.json

"$VIGIL" attest policy import --policy-key "$K/ecp256.pub.pem" "$A/runtime-policy-test-signed.json" 2>err >/dev/null
check_eq "another key: refused (exit 1)" "$?" 1
"$VIGIL" attest policy import --policy-key "$A/runtime-policy-pubkey.pub" "$A/runtime-policy-test.json" 2>err >/dev/null
check_eq "an unsigned policy when a key is required: refused (exit 1)" "$?" 1
check "... as unsigned" grep -q "not signed" err
"$VIGIL" attest policy import --policy-key "$K/ecp256.key.pem" "$A/runtime-policy-test-signed.json" 2>err >/dev/null
check_eq "a private key as --policy-key: usage error (exit 2)" "$?" 2
check "... naming the key file" grep -q "ecp256.key.pem:" err
"$VIGIL" attest policy import --policy-key missing.pem "$A/runtime-policy-test-signed.json" 2>/dev/null >/dev/null
check_eq "a missing key file: exit 2" "$?" 2

# a payload byte changed, signature kept
python3 - "$A/runtime-policy-test-signed.json" tampered.json <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1]))
body = base64.b64decode(e["payload"]).replace(b'"release": 0', b'"release": 1')
e["payload"] = base64.b64encode(body).decode()
json.dump(e, open(sys.argv[2], "w"))
PY
"$VIGIL" attest policy import --policy-key "$A/runtime-policy-pubkey.pub" tampered.json 2>/dev/null >/dev/null
check_eq "a tampered payload is refused (exit 1)" "$?" 1

# envelopes signed here, over a policy made from a measured tree
mkdir -p root/usr/bin
echo one >root/usr/bin/a; echo two >root/usr/bin/b
"$VIGIL" measure --log list --pcrs list.pcrs root/usr/bin/a root/usr/bin/b >/dev/null
"$VIGIL" attest policy create --log list -o pol.json
envelope() {	# KEY TYPE IN OUT
	python3 - "$2" "$3" pae.bin <<'PY'
import sys
t, body = sys.argv[1].encode(), open(sys.argv[2], "rb").read()
open(sys.argv[3], "wb").write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body))
PY
	openssl dgst -sha256 -sign "$1" -out sig.bin pae.bin
	python3 - "$2" "$3" sig.bin "$4" <<'PY'
import base64, json, sys
b64 = lambda p: base64.b64encode(open(p, "rb").read()).decode()
json.dump({"payloadType": sys.argv[1], "payload": b64(sys.argv[2]),
           "signatures": [{"keyid": "", "sig": b64(sys.argv[3])}]}, open(sys.argv[4], "w"))
PY
}
envelope "$K/ecp256.key.pem" application/vnd.vigil.refpolicy+json pol.json ec.json
envelope "$K/rsa2048.key.pem" application/vnd.keylime+json pol.json rsa.json
envelope "$K/ecp256.key.pem" text/plain pol.json text.json
check "ECDSA envelope: policy check passes with the certificate as key" \
	"$VIGIL" attest policy check --policy ec.json --policy-key "$K/ecp256.cert.pem" list
check "RSA envelope, Keylime's type, DER certificate" \
	"$VIGIL" attest policy check --policy rsa.json --policy-key "$K/rsa2048.cert.der" list
check "two keys given: either one" \
	"$VIGIL" attest policy check --policy rsa.json --policy-key "$K/ecp256.cert.pem" \
	--policy-key "$K/rsa2048.cert.pem" list
"$VIGIL" attest policy check --policy text.json --policy-key "$K/ecp256.cert.pem" list 2>err >/dev/null
check_eq "a signed envelope of another payloadType is not a policy (exit 2)" "$?" 2
check "... and says so" grep -q 'payloadType "text/plain"' err
echo changed >>root/usr/bin/b
"$VIGIL" measure --log list --pcrs list.pcrs root/usr/bin/b >/dev/null
"$VIGIL" attest policy check --policy ec.json --policy-key "$K/ecp256.cert.pem" list >out
check_eq "the signed policy judges as the policy it wraps: a changed file fails" "$?" 1
check "... naming it" grep -q "FAIL policy.digest entry=3 path=.*root/usr/bin/b" out

# the verifier with --policy-key: only signed policies upload, and a stored
# policy is checked again when loaded
VERIFIER=${VIGIL_VERIFIER_BIN:?}
port() { vg_port; }
VP=$(port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" --policy-key "$K/ecp256.cert.pem" 2>verifier.err &
VPID=$!
trap '_rc=$?; kill $VPID 2>/dev/null; (exit $_rc); vg_cleanup' EXIT
for i in $(seq 600); do curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
check "verifier: a signed policy uploads" "$VIGIL" attest policy set signed ec.json
"$VIGIL" attest policy set plain pol.json >out 2>&1
check_eq "verifier: an unsigned policy is refused (exit 2: a bad request)" "$?" 2
check "... saying it is not signed" grep -q "not signed" out
"$VIGIL" attest policy set rsa rsa.json >out 2>&1
check_eq "verifier: a policy signed by another key is refused (exit 2: a bad request)" "$?" 2
"$VIGIL" attest policy get signed >got.json
check "the signed policy reads back with its paths" grep -q "root/usr/bin/a" got.json
check_rc 2 "the refused ones were not stored" "$VIGIL" attest policy get plain
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$(port) --db "sqlite:$T/v2.db" --policy-key "$K/ecp256.key.pem" 2>err
check_eq "verifier: a private key as --policy-key exits 2" "$?" 2
check "... naming the file" grep -q "ecp256.key.pem" err
kill $VPID; wait $VPID 2>/dev/null
