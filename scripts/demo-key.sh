# shellcheck shell=bash
# scripts/demo-key.sh - the demo's TPM part, sourced by scripts/demo.sh
# (uses its step/run/expect, $D, $SRC, $VIGIL and the labeled tree in
# $D/root): an EVM key sealed by swtpm to the boot PCRs, and the offline
# attack being caught.

step "the embedded TPM: swtpm with a fresh state and EK certificate (scripts/swtpm.sh)"
VIGIL_TCTI=$(bash "$SRC/scripts/swtpm.sh" start "$D/tpm") || { echo "demo: swtpm did not start"; exit 1; }
export VIGIL_TCTI TPM2TOOLS_TCTI=$VIGIL_TCTI TSS2_LOG=all+none
echo "VIGIL_TCTI=$VIGIL_TCTI"
run openssl verify -CAfile "$D/tpm/ek-ca.pem" \
	<(openssl x509 -inform der -in "$D/tpm/certs/ek-rsa2048.crt")

step "an EVM HMAC key sealed by the TPM to the boot state (PCRs 0-7)"
expect 0 "sealed; the file holds the sealed object, never the key" -- \
	"$VIGIL" key create --tpm --pcrs 0-7 -o "$D/sealed.key"
run "$VIGIL" key show "$D/sealed.key"
echo 'demo passphrase' >"$D/pass"
expect 0 "or derived from a passphrase (scrypt; salt, parameters, check value in the file)" -- \
	"$VIGIL" key create --passphrase --passphrase-file "$D/pass" -o "$D/pass.key"
sed "s|^key.hmac = .*|key.hmac = $D/sealed.key|" vigil.conf >sealed.conf
expect 0 "label the libraries with the sealed key" -- "$VIGIL" label -r -q --config sealed.conf root/usr/lib
expect 0 "all pass" -- "$VIGIL" appraise -r --config sealed.conf root/usr/lib

step "the attacker boots another system: the boot loader (PCR 4) differs"
run bash "$SRC/scripts/swtpm.sh" reset "$D/tpm"
run tpm2_pcrextend 4:sha1=$(printf evil | sha1sum | cut -c1-40),sha256=$(printf evil | sha256sum | cut -c1-64)
expect 2 "the TPM refuses to unseal, naming PCR 4" -- "$VIGIL" key unseal "$D/sealed.key"
expect 2 "so no HMAC label can be made with the real key" -- \
	"$VIGIL" evm --hmac-key "$D/sealed.key" root/usr/lib/lib3.so
echo "the attacker tampers anyway, relabeling with a key of their own:"
head -c 32 /dev/urandom >"$D/attacker.key"
run dd if=/dev/urandom of=root/usr/lib/lib3.so bs=1 count=1 seek=1 conv=notrunc status=none
run "$VIGIL" hash -w root/usr/lib/lib3.so
run "$VIGIL" evm --hmac-key "$D/attacker.key" root/usr/lib/lib3.so
run chmod 4755 root/usr/lib/lib4.so
run "$VIGIL" evm --hmac-key "$D/attacker.key" root/usr/lib/lib4.so
run setfattr -x security.evm root/usr/lib/lib5.so

step "the approved system boots again: PCRs back to the sealed values"
run bash "$SRC/scripts/swtpm.sh" reset "$D/tpm"
expect 0 "the key unseals" -- "$VIGIL" key unseal "$D/sealed.key"
expect 1 "appraisal with the sealed key catches every tampered file" -- \
	"$VIGIL" appraise -r --config sealed.conf root/usr/lib
# swtpm keeps running for the attestation part; demo.sh stops it at exit
