#!/usr/bin/env bash
# t0519: agents whose endorsement key is ECC register and attest (issue
# 21), on swtpm, against vigil-verifier:
#  - swtpm's own ECC EK: NIST P-384, template H-3, its certificate in NV
#    0x01c00016 written by swtpm_setup and chained to swtpm's CA
#    (vigil-agent --ek-type ecc-p384);
#  - a NIST P-256 EK (template L-2) that this test provisions: the key made
#    by tpm2_createek -G ecc256, certified by a CA the test makes with
#    openssl, the certificate written to NV 0x01c0000a with tpm2-tools
#    (vigil-agent --ek-type ecc-p256);
#  each is registered (its certificate checked against --ek-ca, the
#  credential made by ECDH + KDFe and activated by the TPM) and trusted;
#  the P-256 agent against a verifier that knows only swtpm's CA is refused
#  (identity.ek_cert), and a bad --ek-type is refused before the agent serves.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start
AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export TPM2TOOLS_TCTI=$VIGIL_TCTI
up() { for i in $(seq 100); do curl -s "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

mkdir -p tree
echo "a file" >tree/a
"$VIGIL" measure --log "$T/log" --tpm "$T/tree/a" >/dev/null 2>&1
"$VIGIL" attest policy create --log "$T/log" -o p.json >/dev/null

check_rc 2 "--ek-type ecc-p521 is refused" "$AGENT" $ATT_AAUTH --listen 127.0.0.1:1 \
	--state "$T/x" --ek-type ecc-p521
check "... naming the types" grep -q "ecc-p521: rsa2048, ecc-p256 or ecc-p384" <(
	"$AGENT" $ATT_AAUTH --listen 127.0.0.1:1 --state "$T/x" --ek-type ecc-p521 2>&1)

# ---- the P-256 EK's certificate, provisioned ----
openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
openssl req -x509 -new -key ca.key -subj "/CN=vigil test EK CA" -days 30 -out ca256.pem 2>/dev/null
tpm2_createek -G ecc256 -c ek256.ctx -u ek256.pem -f pem >/dev/null 2>&1
tpm2_flushcontext -t >/dev/null 2>&1
openssl x509 -new -subj "/CN=vigil test EK P-256" -force_pubkey ek256.pem -CA ca256.pem \
	-CAkey ca.key -days 30 -outform der -out ek256.der 2>/dev/null
check "a P-256 EK certificate made for the TPM's L-2 EK" test -s ek256.der
tpm2_nvdefine 0x1c0000a -C o -s "$(stat -c %s ek256.der)" -a "ownerwrite|ownerread|authread|authwrite" >/dev/null 2>&1 &&
	tpm2_nvwrite 0x1c0000a -C o -i ek256.der >/dev/null 2>&1
check "... written to NV 0x01c0000a" sh -c "tpm2_nvreadpublic 0x1c0000a | grep -q 0x1c0000a"
cat "$TPMDIR/ek-ca.pem" ca256.pem >both-ca.pem

VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
timeout 300 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" --interval 300 \
	--ek-ca "$T/both-ca.pem" 2>verifier.err &
PIDS="$PIDS $!"
up "$VIGIL_VERIFIER/v1/agents"
"$VIGIL" attest policy set p p.json >/dev/null

# one agent at a time on the one swtpm
run_agent() {	# TYPE ID: registers it, leaves AGENT_PID
	local ap
	ap=$(vg_port)
	mkdir -p "$T/st-$1"
	"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$ap --state "$T/st-$1" --log "$T/log" --id "$2" \
		--boot-log "$T/no-boot-log" --ek-type "$1" 2>"agent-$1.err" &
	AGENT_PID=$!
	PIDS="$PIDS $AGENT_PID"
	up "127.0.0.1:$ap/v1/identity"
	AGENT_URL=http://127.0.0.1:$ap
}
ek_curve() {	# URL: the curve of the EK the agent says it has
	curl -s -H "$ATT_AHDR" "$1/v1/identity" | python3 -c '
import base64, json, subprocess, sys
d = json.load(sys.stdin)
open("ekpub.bin", "wb").write(base64.b64decode(d["ek_pub"]))
open("ekcert.der", "wb").write(base64.b64decode(d["ek_cert"]))'
	openssl x509 -inform der -in ekcert.der -noout -text | grep -o 'NIST CURVE: P-[0-9]*'
}

for t in ecc-p384:host384:P-384 ecc-p256:host256:P-256; do
	IFS=: read -r type id curve <<<"$t"
	run_agent "$type" "$id"
	check_eq "$type: the agent's EK certificate is for $curve" "$(ek_curve "$AGENT_URL")" "NIST CURVE: $curve"
	check "$type: registered (certificate under --ek-ca, credential activated)" \
		"$VIGIL" attest add "$id" --agent "$AGENT_URL" --policy p
	check "$type: trusted" att_wait "$id" trusted
	check "$type: its AK is kept apart from the RSA EK's" test -s "$T/st-$type/ak-$type.blob"
	r0=$(att_field rounds "$id")
	sleep 1.5
	check "$type: rounds go on" test "$(att_field rounds "$id")" -gt "$r0"
	kill "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
done

# ---- the P-256 agent against a verifier that knows only swtpm's CA ----
VP2=$(vg_port)
timeout 300 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP2 --db "sqlite:$T/v2.db" \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>verifier2.err &
PIDS="$PIDS $!"
up "http://127.0.0.1:$VP2/v1/agents"
run_agent ecc-p256 host256
VIGIL_VERIFIER=http://127.0.0.1:$VP2 "$VIGIL" attest add host256 --agent "$AGENT_URL" >add.out 2>&1
check_eq "P-256 EK whose certificate is not under --ek-ca: refused (exit 1, not trusted)" "$?" 1
sed 's/^/# /' add.out
check "... as identity.ek_cert" grep -q "identity.ek_cert" add.out
check "the daemons logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T'/verifier*.err '$T'/agent-*.err"
